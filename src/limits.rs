//! [`Limits`]: one value bounding everything an untrusted input can make wirelens do.
//!
//! wirelens opens whatever a user pastes or captures, so every input is hostile until read: a
//! 5-byte MessagePack header may claim four billion elements, a gzip body may expand a
//! thousandfold, a payload may nest a million levels deep. Each of those is bounded by one field
//! here, with a documented default that no real payload we know of reaches. The decoders
//! ([`crate::codec::DecodeOptions::limits`]) and the capture layer
//! ([`crate::capture::peel`], [`crate::capture::UnwrapOptions`],
//! [`crate::capture::pcap::PcapLimits`]) take their bounds from it; the CLI sets them with
//! `--max-depth` and `--limit NAME=VALUE` ([`Limits::set`] names them).
//!
//! What this module does not do: enforce anything. It only holds the numbers; each layer checks
//! its own. Some bounds need no number at all: no allocation is ever sized by a length header
//! before the bytes it announces are there, and no code recurses on input nesting.

use std::fmt;

/// Which limit stopped a decode, as an [`ErrorKind::Limit`](crate::codec::ErrorKind) error
/// names it, so a caller (and a test) knows which one without reading the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LimitName {
    /// [`Limits::max_depth`]: nesting of containers, tags, messages and groups.
    Depth,
    /// [`Limits::max_nodes`]: nodes of one decode.
    Nodes,
    /// [`Limits::max_protobuf_nodes`]: nodes of one schema-less protobuf decode.
    ProtobufNodes,
}

impl LimitName {
    /// The name `--limit NAME=N` takes (one of [`Limits::NAMES`]).
    pub fn name(self) -> &'static str {
        match self {
            LimitName::Depth => "depth",
            LimitName::Nodes => "nodes",
            LimitName::ProtobufNodes => "protobuf-nodes",
        }
    }
}

/// Bounds on the work and memory one input may cost.
///
/// ```
/// use wirelens::limits::Limits;
///
/// let mut limits = Limits::default();
/// limits.set("depth", "64")?;
/// limits.set("decompressed", "16M")?;
/// assert_eq!(limits.max_depth, 64);
/// assert_eq!(limits.max_decompressed, 16 << 20);
/// # Ok::<(), wirelens::limits::LimitError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting of arrays, maps, tags, messages and groups a decoder accepts (the root
    /// container is depth 1). Default 512, at most [`Limits::DEPTH_CEILING`]. Name: `depth`.
    pub max_depth: usize,
    /// Most bytes one decompression (gzip, deflate, zstd, brotli) or hex-dump `*` expansion may
    /// produce, and all the decompressions of one input together (nested layers, the messages of
    /// a capture). Default 256 MiB. Name: `decompressed`.
    pub max_decompressed: usize,
    /// Most bytes a decompression may produce per compressed byte, once past
    /// [`Limits::ratio_floor`]. Default 1100 (deflate's own ceiling is about 1032:1, so only
    /// nested or crafted streams exceed it). All the decompressions of one input together may
    /// produce as many bytes per byte of that input. Name: `ratio`.
    pub max_ratio: usize,
    /// Output size below which the ratio is not checked (tiny inputs have large ratios). Default
    /// 1 MiB. Name: `ratio-floor`.
    pub ratio_floor: usize,
    /// Most transport layers peeled off one payload. Default 16. Name: `layers`.
    pub max_layers: usize,
    /// Payload bytes a pcap reassembly holds across all streams; beyond it data is dropped with a
    /// warning. Default 256 MiB. Name: `pcap-bytes`.
    pub max_pcap_bytes: usize,
    /// Packets read from one capture file; beyond it reading stops with a warning. Default 10
    /// million. Name: `pcap-packets`.
    pub max_pcap_packets: usize,
    /// Payloads kept from one capture; the rest are dropped with a warning. Default 100,000, or
    /// one per 2 KiB of a larger input ([`Limits::payloads_for`]). Name: `payloads`.
    pub max_payloads: usize,
    /// Tags the schema-less protobuf decoder may read while trying whether LEN payloads are
    /// nested messages. Once spent, the remaining payloads are read as text, packed numbers or
    /// bytes, so total work stays linear in the input. Default 16 million. Name: `protobuf-scan`.
    pub max_protobuf_scan: usize,
    /// Most nodes (values, entries' values, fields, messages, groups, packed elements) one
    /// decode may produce, in every format (JSON, MessagePack, CBOR, protobuf with a schema and
    /// schema-less). Past it decoding stops with an [`ErrorKind::Limit`](crate::codec::ErrorKind)
    /// error at the byte where it was reached, the nodes before it kept as the partial
    /// document. A node costs about 200 bytes decoded (its [`crate::model::Value`], its span
    /// node, its share of the vectors) and can take as little as one input byte (a MessagePack
    /// or CBOR small integer), so the input's size alone does not bound memory. Default 8 Mi
    /// (8,388,608; about 1.6 GiB at most), or one node per 4 bytes of an input larger than
    /// 32 MiB ([`Limits::nodes_for`]): real documents have far fewer nodes per byte (a 100 MB
    /// JSON file shaped like `canada.json`, a node every 13.5 bytes, has 7.5 million; one of
    /// API records, a node every 11.7 bytes, 8.5 million). A value set here is used as it is.
    /// Name: `nodes`.
    pub max_nodes: usize,
    /// Most nodes one schema-less protobuf decode may produce, on top of [`Limits::max_nodes`]
    /// (the smaller of the two applies). Detection reads every payload as schema-less protobuf,
    /// and almost any byte string reads as fields (a 20 MB stream of `x` is ten million fields
    /// of number 15), so this reading gets a tighter bound than the decoders that make nodes
    /// only of bytes that really are their format. Default 1 million (about 110 MB decoded), or one
    /// node per 8 bytes of a larger input ([`Limits::protobuf_nodes_for`]): a real message has
    /// longer fields than two bytes (a 9.3 MB OTLP trace batch reads as about 1.03 million
    /// schema-less nodes, 9 bytes each; its 1.16 million budget admits it), while 20 MB of `x`
    /// stops at 2.5 million nodes (`convert` peaks at about 240 MiB). A value set here is used
    /// as it is. Name: `protobuf-nodes`.
    pub max_protobuf_nodes: usize,
    /// Most bytes of one decoded header list (an HTTP/1.x message's header section, an HTTP/2
    /// header block), counted as HTTP/2's `SETTINGS_MAX_HEADER_LIST_SIZE` counts them: each
    /// field's name and value plus 32. HPACK lets a few bytes stand for a large field (an index
    /// into the dynamic table), so this bounds what a header block decodes to, not its size on
    /// the wire; it also bounds the HPACK dynamic table and a header block's bytes before
    /// decoding. Past it the fields are not kept (the block is still decoded, so the streams
    /// after it read). Default 1 MiB. Name: `header-list`.
    pub max_header_list: usize,
    /// Most fields of one header list (HTTP/1.x or HTTP/2); past it the fields are not kept.
    /// Default 10,000. Name: `headers`.
    pub max_headers: usize,
    /// Most HTTP/2 or WebSocket frames read from one direction of a connection; past it that
    /// direction stops with a warning. Default 1 million. Name: `frames`.
    pub max_frames: usize,
}

/// A node budget for an input of `len` bytes: `set` as it is, unless it is the `default`, which
/// grows to one node per `bytes_per_node` bytes of a large input.
fn grown(set: usize, default: usize, len: usize, bytes_per_node: usize) -> usize {
    if set == default {
        set.max(len / bytes_per_node)
    } else {
        set
    }
}

impl Limits {
    /// The default nesting limit.
    pub const DEFAULT_MAX_DEPTH: usize = 512;

    /// The default [`Limits::max_nodes`].
    pub const DEFAULT_MAX_NODES: usize = 8 << 20;

    /// The default [`Limits::max_payloads`].
    pub const DEFAULT_MAX_PAYLOADS: usize = 100_000;

    /// Input bytes per payload by which the default [`Limits::max_payloads`] grows: a capture
    /// larger than about 200 MB keeps one payload per 2 KiB (a 1 GB capture of API traffic holds
    /// about 200,000 messages, a request and a response every 5 KB).
    pub const BYTES_PER_PAYLOAD: usize = 2048;

    /// [`Limits::max_payloads`] for an input of `len` bytes: the default grows with a large
    /// capture (see [`Limits::BYTES_PER_PAYLOAD`]); any other value is used as it is.
    pub fn payloads_for(&self, len: usize) -> usize {
        grown(
            self.max_payloads,
            Limits::DEFAULT_MAX_PAYLOADS,
            len,
            Limits::BYTES_PER_PAYLOAD,
        )
    }

    /// The default [`Limits::max_decompressed`].
    pub const DEFAULT_MAX_DECOMPRESSED: usize = 256 << 20;

    /// Decompressed bytes per input byte by which the default [`Limits::max_decompressed`] grows
    /// as the bound of all of one input's decompressions together: a 1 GB capture whose gzip
    /// bodies inflate to more than 256 MiB in all is read whole, each body still within
    /// 256 MiB.
    pub const DECOMPRESSED_PER_BYTE: usize = 4;

    /// The bound of all the decompressions of an input of `len` bytes together (each one alone
    /// stays within [`Limits::max_decompressed`]): the default grows to
    /// [`Limits::DECOMPRESSED_PER_BYTE`] bytes per input byte; any other value is used as it is.
    pub fn decompressed_total_for(max_decompressed: usize, len: usize) -> usize {
        if max_decompressed == Limits::DEFAULT_MAX_DECOMPRESSED {
            max_decompressed.max(len.saturating_mul(Limits::DECOMPRESSED_PER_BYTE))
        } else {
            max_decompressed
        }
    }

    /// The default [`Limits::max_protobuf_nodes`].
    pub const DEFAULT_MAX_PROTOBUF_NODES: usize = 1_000_000;

    /// Input bytes per node by which the default [`Limits::max_nodes`] grows: an input larger
    /// than 32 MiB gets one node per 4 bytes (100 MB of JSON: 25 million nodes), as a JSON
    /// node takes at least two bytes (`1,`) and real documents take 10 to 45.
    pub const BYTES_PER_NODE: usize = 4;

    /// [`Limits::max_nodes`] for an input of `len` bytes: the default grows with a large input
    /// (see [`Limits::BYTES_PER_NODE`]), so real documents of 100 MB and more decode, while a
    /// small hostile input still stops at 8 Mi nodes; any other value is used as it is.
    pub fn nodes_for(&self, len: usize) -> usize {
        grown(
            self.max_nodes,
            Limits::DEFAULT_MAX_NODES,
            len,
            Limits::BYTES_PER_NODE,
        )
    }

    /// Input bytes per node by which the default [`Limits::max_protobuf_nodes`] grows.
    pub const PROTOBUF_BYTES_PER_NODE: usize = 8;

    /// [`Limits::max_protobuf_nodes`] for an input of `len` bytes: the default grows to one node
    /// per [`Limits::PROTOBUF_BYTES_PER_NODE`] bytes of an input larger than 8 MB, so a real
    /// 100 MB message decodes without its schema; any other value is used as it is.
    pub fn protobuf_nodes_for(&self, len: usize) -> usize {
        grown(
            self.max_protobuf_nodes,
            Limits::DEFAULT_MAX_PROTOBUF_NODES,
            len,
            Limits::PROTOBUF_BYTES_PER_NODE,
        )
    }

    /// These limits for an input of `len` bytes: the node budgets as [`Limits::nodes_for`] and
    /// [`Limits::protobuf_nodes_for`] give them.
    pub fn for_input(&self, len: usize) -> Limits {
        Limits {
            max_nodes: self.nodes_for(len),
            max_protobuf_nodes: self.protobuf_nodes_for(len),
            ..*self
        }
    }

    /// The error message of a decode stopped by [`Limits::max_nodes`]: names the limit and how to
    /// raise it (the error itself carries the byte offset and the path).
    pub fn nodes_message(max_nodes: usize) -> String {
        format!(
            "the document reached the limit of {max_nodes} nodes (values, fields and messages; limit nodes, `--limit nodes=N` raises it); the nodes before this byte are kept"
        )
    }

    /// The error message of a schema-less protobuf decode stopped by
    /// [`Limits::max_protobuf_nodes`] (see [`Limits::nodes_message`]).
    pub fn protobuf_nodes_message(max_protobuf_nodes: usize) -> String {
        format!(
            "the schema-less reading reached the limit of {max_protobuf_nodes} nodes (fields and messages; limit protobuf-nodes, `--limit protobuf-nodes=N` raises it); the fields before this byte are kept"
        )
    }

    /// The node bound of a schema-less protobuf decode, which limit it is, and its message: the
    /// smaller of
    /// [`Limits::max_nodes`] and [`Limits::max_protobuf_nodes`].
    pub fn schemaless_nodes(&self) -> (usize, LimitName, String) {
        if self.max_protobuf_nodes < self.max_nodes {
            let n = self.max_protobuf_nodes;
            (
                n,
                LimitName::ProtobufNodes,
                Limits::protobuf_nodes_message(n),
            )
        } else {
            let n = self.max_nodes;
            (n, LimitName::Nodes, Limits::nodes_message(n))
        }
    }

    /// The most [`Limits::max_depth`] can be raised to. The decoders never recurse, but a decoded
    /// [`crate::model::Value`] is dropped, cloned and compared recursively (derived traits;
    /// `Debug` stops at [`crate::model::DEBUG_DEPTH`]), about 0.5 KiB of stack per level: 1024
    /// levels (2048 with CBOR tags, which have their own budget) fit a 2 MiB thread stack, the
    /// smallest wirelens runs on (rayon workers).
    pub const DEPTH_CEILING: usize = 1024;

    /// The nesting limit the decoders apply: [`Limits::max_depth`], at most
    /// [`Limits::DEPTH_CEILING`].
    pub fn depth(&self) -> usize {
        self.max_depth.min(Limits::DEPTH_CEILING)
    }

    /// Every limit's name (as [`Limits::set`] takes it), its default and what it bounds, for help
    /// texts and docs/limits.md.
    pub const NAMES: [(&'static str, &'static str); 14] = [
        (
            "depth",
            "deepest nesting of containers, tags, messages and groups",
        ),
        ("decompressed", "most bytes one decompression may produce"),
        ("ratio", "most output bytes per compressed byte"),
        (
            "ratio-floor",
            "output size below which the ratio is not checked",
        ),
        ("layers", "most layers peeled off one payload"),
        ("pcap-bytes", "payload bytes a pcap reassembly holds"),
        ("pcap-packets", "packets read from one capture"),
        ("payloads", "payloads kept from one capture"),
        (
            "protobuf-scan",
            "tags read trying schema-less LEN fields as messages",
        ),
        (
            "nodes",
            "values, fields and messages one decode may produce",
        ),
        (
            "protobuf-nodes",
            "fields and messages one schema-less protobuf decode may produce",
        ),
        (
            "header-list",
            "decoded bytes of one HTTP header list (name + value + 32 per field)",
        ),
        ("headers", "fields of one HTTP header list"),
        (
            "frames",
            "HTTP/2 or WebSocket frames read per direction of a connection",
        ),
    ];

    /// How a warning or error names limit `name` (one of [`Limits::NAMES`]) and says how to
    /// raise it: `limit header-list; `--limit header-list=N` raises it`.
    pub fn hint(name: &str) -> String {
        format!("limit {name}; `--limit {name}=N` raises it")
    }

    /// Sets the limit called `name` (see [`Limits::NAMES`]) from `value`: a count, optionally with
    /// a binary suffix `K`, `M`, `G` (`16M` = 16 MiB), or `none` for no limit. The error says what
    /// was wrong.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), LimitError> {
        let n = parse_count(value).ok_or_else(|| LimitError::NotACount {
            name: name.to_string(),
            value: value.to_string(),
        })?;
        let Some(field) = self.field_mut(name) else {
            return Err(LimitError::UnknownName(name.to_string()));
        };
        *field = n;
        if self.max_depth > Limits::DEPTH_CEILING {
            let asked = self.max_depth;
            self.max_depth = Limits::DEPTH_CEILING;
            return Err(LimitError::AboveCeiling { asked });
        }
        Ok(())
    }

    /// The value of the limit called `name` (see [`Limits::NAMES`]), `usize::MAX` meaning none.
    pub fn get(&self, name: &str) -> Option<usize> {
        let mut copy = *self;
        copy.field_mut(name).map(|f| *f)
    }

    /// A count as [`Limits::set`] reads it back: `none`, `16M`, `64K`, `1G` or plain digits (a
    /// suffix only where it reads shorter: 16,000,000 stays digits, not `15625K`).
    pub fn count_text(n: usize) -> String {
        if n == usize::MAX {
            return "none".into();
        }
        for (shift, suffix) in [(30, "G"), (20, "M"), (10, "K")] {
            let unit = 1usize << shift;
            if n != 0 && n % unit == 0 && (suffix == "G" || n / unit < 1024) {
                return format!("{}{suffix}", n >> shift);
            }
        }
        n.to_string()
    }

    fn field_mut(&mut self, name: &str) -> Option<&mut usize> {
        Some(match name.to_ascii_lowercase().replace('_', "-").as_str() {
            "depth" | "max-depth" => &mut self.max_depth,
            "decompressed" => &mut self.max_decompressed,
            "ratio" => &mut self.max_ratio,
            "ratio-floor" => &mut self.ratio_floor,
            "layers" => &mut self.max_layers,
            "pcap-bytes" => &mut self.max_pcap_bytes,
            "pcap-packets" => &mut self.max_pcap_packets,
            "payloads" => &mut self.max_payloads,
            "protobuf-scan" => &mut self.max_protobuf_scan,
            "nodes" | "max-nodes" => &mut self.max_nodes,
            "protobuf-nodes" => &mut self.max_protobuf_nodes,
            "header-list" => &mut self.max_header_list,
            "headers" => &mut self.max_headers,
            "frames" => &mut self.max_frames,
            _ => return None,
        })
    }

    /// Sets a limit from `NAME=VALUE` text, as the CLI's `--limit` takes it.
    pub fn set_pair(&mut self, pair: &str) -> Result<(), LimitError> {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| LimitError::NotAPair(pair.to_string()))?;
        self.set(name.trim(), value.trim())
    }
}

/// Why [`Limits::set`] or [`Limits::set_pair`] refused a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitError {
    /// `--limit` text without `=`.
    NotAPair(String),
    /// A value that is no count.
    NotACount {
        /// The limit's name as given.
        name: String,
        /// The value as given.
        value: String,
    },
    /// A name that is none of [`Limits::NAMES`].
    UnknownName(String),
    /// A depth above [`Limits::DEPTH_CEILING`] (the ceiling is set instead).
    AboveCeiling {
        /// The depth asked for.
        asked: usize,
    },
}

impl std::fmt::Display for LimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LimitError::NotAPair(pair) => write!(f, "--limit takes NAME=VALUE, not {pair:?}"),
            LimitError::NotACount { name, value } => write!(
                f,
                "limit {name}: {value:?} is not a count (e.g. 512, 64K, 16M, 1G or none)"
            ),
            LimitError::UnknownName(name) => {
                let names: Vec<&str> = Limits::NAMES.iter().map(|(n, _)| *n).collect();
                write!(
                    f,
                    "unknown limit {name:?}; the limits are {}",
                    names.join(", ")
                )
            }
            LimitError::AboveCeiling { asked } => write!(
                f,
                "limit depth: {asked} is above the ceiling of {} levels",
                Limits::DEPTH_CEILING
            ),
        }
    }
}

impl std::error::Error for LimitError {}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: Limits::DEFAULT_MAX_DEPTH,
            max_decompressed: Limits::DEFAULT_MAX_DECOMPRESSED,
            max_ratio: 1100,
            ratio_floor: 1 << 20,
            max_layers: 16,
            max_pcap_bytes: 256 << 20,
            max_pcap_packets: 10_000_000,
            max_payloads: Limits::DEFAULT_MAX_PAYLOADS,
            max_protobuf_scan: 16_000_000,
            max_nodes: Limits::DEFAULT_MAX_NODES,
            max_protobuf_nodes: Limits::DEFAULT_MAX_PROTOBUF_NODES,
            max_header_list: 1 << 20,
            max_headers: 10_000,
            max_frames: 1_000_000,
        }
    }
}

impl fmt::Display for Limits {
    /// `depth=512 decompressed=268435456 …`, in [`Limits::NAMES`] order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values = [
            self.max_depth,
            self.max_decompressed,
            self.max_ratio,
            self.ratio_floor,
            self.max_layers,
            self.max_pcap_bytes,
            self.max_pcap_packets,
            self.max_payloads,
            self.max_protobuf_scan,
            self.max_nodes,
            self.max_protobuf_nodes,
            self.max_header_list,
            self.max_headers,
            self.max_frames,
        ];
        for (i, ((name, _), value)) in Limits::NAMES.iter().zip(values).enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{name}={value}")?;
        }
        Ok(())
    }
}

/// `512`, `64K`, `16M`, `1G` (binary multiples), `none` (no limit).
fn parse_count(text: &str) -> Option<usize> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") || text.eq_ignore_ascii_case("unlimited") {
        return Some(usize::MAX);
    }
    let (digits, shift) = match text.as_bytes().last()?.to_ascii_uppercase() {
        b'K' => (&text[..text.len() - 1], 10),
        b'M' => (&text[..text.len() - 1], 20),
        b'G' => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    let n: usize = digits.trim().replace('_', "").parse().ok()?;
    n.checked_mul(1usize.checked_shl(shift)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_reads_back_as_it_was_set() {
        let mut l = Limits::default();
        for (name, _) in Limits::NAMES {
            let text = Limits::count_text(l.get(name).expect("a named limit"));
            let mut again = Limits::default();
            again.set(name, &text).expect("its own text is valid");
            assert_eq!(again.get(name), l.get(name), "{name}: {text}");
        }
        l.set("nodes", "none").expect("valid");
        assert_eq!(Limits::count_text(l.get("nodes").expect("named")), "none");
        assert_eq!(Limits::count_text(16 << 20), "16M");
        assert_eq!(Limits::count_text(1100), "1100");
        assert_eq!(Limits::count_text(16_000_000), "16000000");
        assert_eq!(Limits::count_text(2048 << 20), "2G");
        assert_eq!(Limits::count_text(0), "0");
        assert_eq!(l.get("no-such-limit"), None);
    }

    #[test]
    fn the_default_node_budget_grows_with_the_input_and_a_set_one_does_not() {
        let l = Limits::default();
        assert_eq!(l.nodes_for(1 << 20), Limits::DEFAULT_MAX_NODES);
        assert_eq!(l.nodes_for(100_000_000), 25_000_000);
        let grown = l.for_input(100_000_000);
        assert_eq!(grown.max_nodes, 25_000_000);
        // The schema-less budget grows by one node per 8 bytes: real protobuf has longer fields
        // than the two bytes garbage reads as.
        assert_eq!(grown.max_protobuf_nodes, 12_500_000);
        assert_eq!(
            l.for_input(4_000_000).max_protobuf_nodes,
            Limits::DEFAULT_MAX_PROTOBUF_NODES
        );
        assert_eq!(grown.max_depth, l.max_depth);
        let mut set = Limits::default();
        set.set("nodes", "1M").expect("valid");
        assert_eq!(set.nodes_for(100_000_000), 1 << 20);
        set.set("protobuf-nodes", "5").expect("valid");
        assert_eq!(set.for_input(100_000_000).max_protobuf_nodes, 5);
    }

    #[test]
    fn defaults_match_the_layers_own_defaults() {
        use crate::capture::pcap::PcapLimits;
        use crate::capture::UnwrapOptions;
        let l = Limits::default();
        assert_eq!(UnwrapOptions::from(&l), UnwrapOptions::default());
        assert_eq!(PcapLimits::from(&l), PcapLimits::default());
        assert_eq!(l.max_depth, 512);
    }

    #[test]
    fn counts_take_binary_suffixes() {
        assert_eq!(parse_count("512"), Some(512));
        assert_eq!(parse_count("64k"), Some(64 * 1024));
        assert_eq!(parse_count("16M"), Some(16 * 1024 * 1024));
        assert_eq!(parse_count("1G"), Some(1 << 30));
        assert_eq!(parse_count("1_000"), Some(1000));
        assert_eq!(parse_count("none"), Some(usize::MAX));
        assert_eq!(parse_count(""), None);
        assert_eq!(parse_count("M"), None);
        assert_eq!(parse_count("-1"), None);
        assert_eq!(parse_count("99999999999999999999G"), None);
    }

    #[test]
    fn set_names_every_limit_and_rejects_others() {
        let mut l = Limits::default();
        for (i, (name, _)) in Limits::NAMES.iter().enumerate() {
            l.set(name, &(i + 1).to_string()).expect(name);
        }
        assert_eq!(l.to_string(), "depth=1 decompressed=2 ratio=3 ratio-floor=4 layers=5 pcap-bytes=6 pcap-packets=7 payloads=8 protobuf-scan=9 nodes=10 protobuf-nodes=11 header-list=12 headers=13 frames=14");
        let err = l.set("colour", "1").expect_err("unknown");
        assert_eq!(err, LimitError::UnknownName("colour".into()));
        let text = err.to_string();
        assert!(
            text.contains("unknown limit") && text.contains("depth"),
            "{text}"
        );
        let err = l.set_pair("depth").expect_err("no =");
        assert!(matches!(err, LimitError::NotAPair(_)), "{err}");
        assert!(err.to_string().contains("NAME=VALUE"), "{err}");
        let err = l.set_pair("depth=lots").expect_err("not a count");
        assert!(matches!(err, LimitError::NotACount { .. }), "{err}");
        assert!(err.to_string().contains("not a count"), "{err}");
        let err = l.set("depth", "100000").expect_err("too deep");
        assert_eq!(err, LimitError::AboveCeiling { asked: 100_000 });
        assert_eq!(l.max_depth, Limits::DEPTH_CEILING);
    }
}
