//! What peeling makes and what bounds it: a [`Payload`] with its [`Layer`]s, the
//! [`CaptureError`] that stops a layer, the [`UnwrapOptions`] and decompression [`Budget`] every
//! reader draws on. The ground floor of `capture`: every reader builds payloads from these, and
//! this module uses none of them.

use crate::codec::{DecodeOptions, Document, Format};
use crate::limits::Limits;
use crate::model::Span;

use super::SharedBytes;

/// One layer peeled off, outermost first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// What the layer was: "hex dump", "base64", "HTTP/1.1 response", "chunked", "gzip", …
    pub name: String,
    /// More about it, e.g. "Content-Type: application/msgpack", "xxd".
    pub detail: String,
    /// What it covered in its own input.
    pub span: Span,
}

/// The first layer of a payload a pasted snippet made, one per kind of snippet
/// (`capture::snippet`): cURL, fetch, Python `requests`, HTTPie.
pub(crate) const SNIPPET_LAYERS: &[&str] = &[
    "cURL command",
    "fetch call",
    "Python requests call",
    "HTTPie command",
];

/// A payload found in the input, with its provenance.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Payload {
    /// The payload bytes, all layers peeled: a view of the input when no layer changed it.
    pub bytes: SharedBytes,
    /// The layers peeled to reach it, outermost first.
    pub layers: Vec<Layer>,
    /// The format a layer announced (an HTTP Content-Type, a `data:` URL's media type).
    pub hint: Option<Format>,
    /// Facts gathered on the way: start line, headers, trailers, flags such as `grpc-body`.
    pub meta: super::Meta,
    /// Why the payload is cut short, when a layer or the capture knows it is: a body shorter
    /// than its framing says, a packet captured short, a TCP gap at its start or end. `None`:
    /// whole as far as the layers know. `convert` converts a cut payload only with `--partial`.
    pub cut: Option<String>,
    /// The protocol whose message this is, when that protocol is no data format (`DNS`, `SIP`,
    /// `QUIC`…), as the capture layer named it from the port and the bytes' shape
    /// ([`super::protocols`]).
    pub protocol: Option<String>,
    /// What an Avro framing said of the bytes (a container block: the header's schema and the
    /// block's datum count; single-object encoding: the schema's fingerprint).
    pub avro: Option<crate::codec::avro::Framed>,
    /// The protobuf message type a framing named (a schema registry's `.proto` and the
    /// message-index path of the Confluent framing).
    pub message: Option<crate::codec::protobuf::MessageDescriptor>,
}

/// Why peeling failed, and what had been found before the fault.
#[derive(Debug, Clone, thiserror::Error)]
#[error("error in {layer} at byte {offset}: {message}")]
pub struct CaptureError {
    /// The layer being peeled, e.g. "HTTP/1.1 response", "chunked", "gzip".
    pub layer: String,
    /// Offset of the fault in that layer's own input.
    pub offset: usize,
    /// What went wrong, in a plain sentence.
    pub message: String,
    /// Payloads found before the fault, and the partial one being peeled (marked with the meta
    /// entry `truncated = true` where it is cut short).
    pub extracted: Vec<Payload>,
}

/// Limits for [`unwrap`](super::unwrap).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnwrapOptions {
    /// Most bytes one decompression (or a dump's `*` expansion) may produce. Default 256 MiB.
    pub max_decompressed: usize,
    /// Most bytes a decompression may produce per compressed byte. Default 1100 (deflate's
    /// ceiling is about 1032:1, so only nested or crafted streams go past it).
    pub max_ratio: usize,
    /// Below this many output bytes the ratio is not checked (tiny inputs have large ratios).
    /// Default 1 MiB.
    pub ratio_floor: usize,
    /// Most layers peeled for one payload. Default 16.
    pub max_layers: usize,
    /// Deepest nesting of the JSON documents peeling decodes to tell JSON text from other text
    /// (a document that decodes is a payload), as [`Limits::max_depth`] bounds the decoders.
    /// Default 512.
    pub max_depth: usize,
    /// Most nodes of those JSON documents, as [`Limits::max_nodes`] bounds the decoders. Default
    /// 8 Mi.
    pub max_nodes: usize,
    /// Most decoded bytes of one header list (HTTP/1.x and HTTP/2), as
    /// [`Limits::max_header_list`] counts them. Default 1 MiB.
    pub max_header_list: usize,
    /// Most fields of one header list ([`Limits::max_headers`]). Default 10,000.
    pub max_headers: usize,
    /// Most HTTP/2 or WebSocket frames read per direction of a connection
    /// ([`Limits::max_frames`]). Default 1 million.
    pub max_frames: usize,
}

impl Default for UnwrapOptions {
    fn default() -> Self {
        UnwrapOptions::from(&Limits::default())
    }
}

impl From<&Limits> for UnwrapOptions {
    /// The capture layer's bounds for peeling text, HTTP and compression layers.
    fn from(limits: &Limits) -> UnwrapOptions {
        UnwrapOptions {
            max_decompressed: limits.max_decompressed,
            max_ratio: limits.max_ratio,
            ratio_floor: limits.ratio_floor,
            max_layers: limits.max_layers,
            max_depth: limits.max_depth,
            max_nodes: limits.max_nodes,
            max_header_list: limits.max_header_list,
            max_headers: limits.max_headers,
            max_frames: limits.max_frames,
        }
    }
}

impl UnwrapOptions {
    /// How peeling decodes JSON: within [`UnwrapOptions::max_depth`] and
    /// [`UnwrapOptions::max_nodes`], so a lower limit the user set holds while peeling too.
    pub(crate) fn json_options(&self) -> DecodeOptions {
        DecodeOptions {
            limits: Limits {
                max_depth: self.max_depth,
                max_nodes: self.max_nodes,
                ..Limits::default()
            },
            ..DecodeOptions::default()
        }
    }

    /// The most bytes `compressed` input bytes may expand to.
    pub fn decompression_limit(&self, compressed: usize) -> usize {
        compressed
            .saturating_mul(self.max_ratio)
            .max(self.ratio_floor)
            .min(self.max_decompressed)
    }

    /// Which limit sets [`UnwrapOptions::decompression_limit`] of `compressed` bytes, and how to
    /// raise it: `limit ratio; `--limit ratio=N` raises it` (or `decompressed`).
    pub fn decompression_hint(&self, compressed: usize) -> String {
        let by_ratio = compressed
            .saturating_mul(self.max_ratio)
            .max(self.ratio_floor);
        Limits::hint(if by_ratio < self.max_decompressed {
            "ratio"
        } else {
            "decompressed"
        })
    }
}

/// What one input may still expand to across all its decompressions: nested layers (`gzip, gzip`,
/// gzip inside hex inside gzip) and every HTTP message of a capture draw from one budget, so the
/// limits of [`UnwrapOptions`] bound the whole input, not each layer alone. The total is
/// [`UnwrapOptions::decompression_limit`] of the input's own size: at most `max_decompressed`
/// bytes, and (past `ratio_floor`) at most `max_ratio` bytes per input byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    /// Decompressed bytes still allowed.
    pub(crate) left: usize,
    /// Decompressed bytes allowed in all.
    pub(crate) total: usize,
}

impl Budget {
    /// The budget of an input of `len` bytes.
    pub(crate) fn for_input(len: usize, options: &UnwrapOptions) -> Budget {
        let cap = Limits::decompressed_total_for(options.max_decompressed, len);
        let total = len
            .saturating_mul(options.max_ratio)
            .max(options.ratio_floor)
            .min(cap);
        Budget { left: total, total }
    }

    /// The budget of an input that has grown to `len` bytes (a capture read as it arrives):
    /// what [`Budget::for_input`] gives `len` more than it gave before is added to what is left.
    pub(crate) fn grow_to(&mut self, len: usize, options: &UnwrapOptions) {
        let grown = Budget::for_input(len, options);
        if grown.total > self.total {
            self.left = self.left.saturating_add(grown.total - self.total);
            self.total = grown.total;
        }
    }

    /// No overall bound (each decompression is still bounded on its own).
    pub(crate) fn unlimited() -> Budget {
        Budget {
            left: usize::MAX,
            total: usize::MAX,
        }
    }
}

/// JSON documents decoded while peeling (to tell JSON text from other text) that turned out to be
/// payloads, kept so that detection can take them instead of decoding the same bytes again.
#[derive(Debug, Default)]
pub(crate) struct Decoded {
    /// Each document with its bytes and the nesting limit it was decoded within.
    pub(super) docs: Vec<(SharedBytes, Document, usize)>,
    /// Payloads of this many bytes or more that start as a JSON, MessagePack or CBOR container
    /// are not decoded whole for detection: their span tree is made a chunk at a time, as a
    /// skeleton document ([`Decoded::skeleton`]). `None`: every payload is decoded whole.
    pub(super) walk_from: Option<usize>,
}

impl Decoded {
    /// The JSON document of exactly `bytes`, if peeling decoded one and `options` would give the
    /// same outcome: a nesting limit at least as deep as the one peeling used, and room for every
    /// node of the document (a lower node limit stops the decode instead).
    pub(crate) fn take_json(&mut self, bytes: &[u8], options: &DecodeOptions) -> Option<Document> {
        let i = self.docs.iter().position(|(b, doc, depth)| {
            b == bytes
                && options.limits.depth() >= *depth
                && options.limits.max_nodes >= doc.spans.len()
        })?;
        Some(self.docs.swap_remove(i).1)
    }

    /// Whether a payload of `len` bytes is read as a skeleton if it can be, not decoded whole
    /// (peeling then only checks that JSON text is JSON, and keeps no document of it).
    pub(crate) fn walks(&self, len: usize) -> bool {
        self.walk_from.is_some_and(|from| len >= from)
    }

    /// The skeleton document of `bytes` ([`crate::codec::detect::KnownDocument::Skeleton`]) when
    /// they are walked ([`Decoded::walks`]) and start as a JSON, MessagePack or CBOR container
    /// (CBOR's first where `hint` says CBOR, as the app's analysis walks them); `None` when the
    /// walk does not apply (detection then decodes them whole, and reports what is wrong).
    pub(crate) fn skeleton(
        &self,
        bytes: &[u8],
        hint: Option<Format>,
        options: &DecodeOptions,
    ) -> Option<crate::codec::detect::KnownDocument> {
        if !self.walks(bytes.len()) || !options.protobuf_readings.is_empty() {
            return None;
        }
        let format = crate::codec::detect::container_format(bytes, hint == Some(Format::Cbor))?;
        let (doc, rare) = crate::codec::detect::skeleton(bytes, format, options)?;
        Some(crate::codec::detect::KnownDocument::Skeleton(doc, rare))
    }
}

/// How many JSON documents peeling keeps in a [`Decoded`]: as many as detection samples
/// (`readings::SAMPLED`).
pub(crate) const KEPT_DOCS: usize = 8;

/// `inner`, found under the layers of `outer`: layers and meta of both, outer first.
pub(crate) fn nest(outer: &Payload, inner: Payload) -> Payload {
    let mut layers = outer.layers.clone();
    layers.extend(inner.layers);
    let mut meta = outer.meta.clone();
    meta.extend(&inner.meta);
    Payload {
        bytes: inner.bytes,
        layers,
        hint: inner.hint.or(outer.hint),
        meta,
        // Cut outside is cut inside: the inner layer's own reason is the nearer one.
        cut: inner.cut.or_else(|| outer.cut.clone()),
        protocol: inner.protocol.or_else(|| outer.protocol.clone()),
        avro: inner.avro.or_else(|| outer.avro.clone()),
        message: inner.message.or_else(|| outer.message.clone()),
    }
}
