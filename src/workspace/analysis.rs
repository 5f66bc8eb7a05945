//! The inspector's face of the [`pipeline`], as plain functions a worker thread
//! runs.
//!
//! [`open`] peels a [`Source`] into payloads the best-ranked way, as the CLI does, or as the
//! user's choice says ([`Layers`]: every layer, fewer, none; streams split or not); [`analyze`]
//! reads a payload
//! ([`pipeline::read`]: the message type, the format reading, the decoded document) and encodes
//! the value to every format, giving one [`Column`] per format with its bytes, spans, fidelity
//! notes and sizes. A payload that does not decode keeps its bytes, its partial document and the
//! error's offset and path.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::job::{JobContext, JobError};
use super::schemas::{ProtoMode, SchemaSet};
use super::source::Source;
use crate::capture::tls::KeyLog;
use crate::capture::verdict::{verdict, Verdict};
use crate::capture::{Payload, SharedBytes};
use crate::codec::protobuf::wire::FieldReading;
use crate::codec::{self, stream, DecodeOptions, Document, EncodeOptions, FidelityNote, Format};
use crate::limits::Limits;
use crate::model::{NodeId, NodeMap, Path, Span, SpanTree, Value};
use crate::pipeline::{
    self, Decoded, Known, Layers, MessageChoice, MessageTypes, OpenError, OpenRequest, Origin,
    ProtobufType, ReadRequest, WriteError, WriteNote, WriteOptions, WrittenTree,
};
use crate::profile::sizes::{self, Variant};

pub use crate::pipeline::Opened;

/// Peels `source` as `layers` says ([`pipeline::open`]): by default ([`Layers::Best`]) the
/// best-ranked way, as `inspect` and `convert` peel; or as a choice says (at most `max_layers`
/// layers, streams split automatically, never, or by a forced framing); or not at all
/// ([`Layers::AsIs`], "raw bytes").
///
/// Payloads that no layer changed are views of the source's bytes (of its memory map, for a
/// large file), not copies. A pcap or pcapng capture is read through [`Source::reader`]
/// ([`pipeline::open_capture_from`]): the app's memory holds its payloads, not the file.
///
/// `keys` decrypts a capture's TLS connections (besides the key logs the capture carries).
pub fn open(
    source: &Arc<Source>,
    layers: Layers,
    limits: &Limits,
    keys: Option<&KeyLog>,
    registry: Option<&crate::codec::avro::registry::Registry>,
) -> Result<Opened, OpenError> {
    open_watched(source, layers, limits, keys, registry, &mut |_| true)
}

/// [`open`], telling `watch` how many bytes of a capture have been read as reading goes on;
/// when it returns false, reading stops there and what was read so far is the answer, with a
/// warning first that says where it stopped and that the rest is not read.
pub fn open_watched(
    source: &Arc<Source>,
    layers: Layers,
    limits: &Limits,
    keys: Option<&KeyLog>,
    registry: Option<&crate::codec::avro::registry::Registry>,
    watch: &mut dyn FnMut(usize) -> bool,
) -> Result<Opened, OpenError> {
    open_walking(source, layers, limits, keys, registry, watch).map(|(opened, _)| opened)
}

/// [`open_watched`], with the readings ranking made of the payload it read as a skeleton (one of
/// [`READ_ON_DEMAND_FROM`] bytes or more that starts as a JSON, MessagePack or CBOR container),
/// by its index: hand them to [`analyze_payload_knowing`] and the payload's span tree is not
/// made a second time. Ranking decodes no such payload whole.
pub fn open_walking(
    source: &Arc<Source>,
    layers: Layers,
    limits: &Limits,
    keys: Option<&KeyLog>,
    registry: Option<&crate::codec::avro::registry::Registry>,
    watch: &mut dyn FnMut(usize) -> bool,
) -> Result<(Opened, Option<(usize, Known)>), OpenError> {
    let request = OpenRequest {
        layers,
        limits: *limits,
        keys,
        message: None,
        hint: source.hint(),
        registry,
        walk_from: READ_ON_DEMAND_FROM,
    };
    let whole = || SharedBytes::shared(source.clone());
    let unpeeled = match layers {
        Layers::AsIs => true,
        Layers::Peel(choice) => choice.max_layers == Some(0),
        Layers::Best | Layers::Reading(_) => false,
    };
    if unpeeled || !crate::capture::pcap::is_pcap(source.bytes()) {
        // Each payload is read when it is shown, a large one on demand: ranking's documents
        // are not kept for it.
        let mut opened = pipeline::open(&whole(), &request)?;
        let walked = opened.take_walked();
        return Ok((opened, walked));
    }
    let mut reader = Watched {
        inner: source.reader(),
        read: 0,
        watch,
        stopped: false,
    };
    // Bodies are read back from the file when looked at, through its handle (not its map).
    let backing: crate::capture::shared::Backing = source.clone();
    let mut opened = pipeline::open_capture_from(
        &mut reader,
        &request,
        Some(source.len()),
        whole,
        Some(backing),
    );
    if reader.stopped {
        opened.warnings.insert(
            0,
            format!(
                "reading stopped at byte {} of {}, as asked: the rest of the capture is not read, and connections still open there end where it stopped (open the file again to read it all)",
                reader.read,
                source.len()
            ),
        );
    }
    Ok((opened, None))
}

/// A reader that tells its watcher how far it has read, and ends (as a file would) when told.
struct Watched<'r, 'w> {
    inner: Box<dyn std::io::Read + Send + 'r>,
    read: usize,
    watch: &'w mut dyn FnMut(usize) -> bool,
    stopped: bool,
}

impl std::io::Read for Watched<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stopped || !(self.watch)(self.read) {
            self.stopped = true;
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        self.read += n;
        Ok(n)
    }
}

/// The user's choices for one payload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choice {
    /// Read the payload as this format instead of the best-detected one.
    pub format: Option<Format>,
    /// How protobuf is read and written.
    pub proto: ProtoMode,
    /// How the MessagePack and CBOR columns are written: `None` as the reference libraries
    /// write them (Python's msgpack and cbor2: floats at their width, keys in order), or a
    /// variant (shortest floats, canonical) to see what it would change byte by byte.
    pub encoding: Option<Variant>,
    /// The user's readings of fields of protobuf read without a schema (a field read as bytes,
    /// a message, packed fixed32…, at every occurrence); see [`FieldReading`]. While there is
    /// one, the payload is read as protobuf.
    pub field_readings: Vec<FieldReading>,
    /// The JSON column of a payload read as protobuf with a schema writes the `.proto` field
    /// names (`start_time_unix_nano`, `preserving_proto_field_name` in Python) instead of the
    /// JSON names protoc's `MessageToJson` writes by default (`startTimeUnixNano`). Either way
    /// the tree and paths keep the `.proto` names, so a selection links every column.
    pub proto_names: bool,
    /// Formats whose columns the view does not show: they are not encoded (their columns are
    /// [`Column::deferred`]) until they are shown ([`encode_deferred`]). The payload's own
    /// format is always read.
    pub hidden: Vec<Format>,
}

/// Compressed sizes of a column's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// Bytes as they are.
    pub raw: usize,
    /// gzip (level 6).
    pub gzip: usize,
    /// zstd (level 3).
    pub zstd: usize,
}

impl Sizes {
    /// Measures `bytes` (gzip and zstd side by side on the worker pool).
    pub fn of(bytes: &[u8]) -> Sizes {
        let (gzip, zstd) = rayon::join(
            || sizes::gzip_size(bytes).unwrap_or(0),
            || sizes::zstd_size(bytes).unwrap_or(0),
        );
        Sizes {
            raw: bytes.len(),
            gzip,
            zstd,
        }
    }
}

/// Where a column's decoding or encoding stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnError {
    /// The byte offset in the column's bytes (decode errors).
    pub offset: Option<usize>,
    /// The field path; `None` when the error is about no one node (a column left empty because
    /// the payload did not decode).
    pub path: Option<Path>,
    /// What went wrong, in a sentence.
    pub message: String,
}

impl std::fmt::Display for ColumnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let message = &self.message;
        match (self.offset, &self.path) {
            (Some(o), Some(p)) => write!(f, "error at byte {o} ({}): {message}", p.brief()),
            (Some(o), None) => write!(f, "error at byte {o}: {message}"),
            (None, Some(p)) => write!(f, "error at {}: {message}", p.brief()),
            (None, None) => f.write_str(message),
        }
    }
}

/// A column's tree: a value and which of the column's bytes hold each of its nodes.
///
/// The payload is decoded once. Its value is shared by the source column and by every column
/// whose encoder's spans line up with it node for node (JSON, MessagePack and CBOR always do); a
/// column keeps only its own bytes and span tree. Only an encoding that changed the tree's shape
/// (protobuf dropping a null, wrapping a list) is read back into a value of its own.
///
/// A large JSON, MessagePack or CBOR payload (from [`READ_ON_DEMAND_FROM`] bytes) is never held
/// as a value: its
/// span tree and every encoding are made a chunk at a time from its bytes, and a node's value
/// is read from the source's bytes when a view asks for it ([`ColumnValue::Read`]).
#[derive(Debug, Clone)]
pub struct ColumnDoc {
    /// What the bytes say.
    pub value: ColumnValue,
    /// Which bytes say it (shared, so the preview of an analysis and the analysis hold one).
    pub spans: Arc<SpanTree>,
}

/// A JSON, MessagePack or CBOR payload this large or larger is read on demand
/// ([`ColumnValue::Read`]) rather than held as a value.
pub const READ_ON_DEMAND_FROM: usize = 16 << 20;

/// A column's bytes this many or more are spilled to a temporary file and mapped from it
/// ([`crate::mapped::Mapping::spill`]): the large document's MessagePack, CBOR and protobuf
/// columns are then not held in the app's memory, and only the pages a view reads are.
pub const SPILL_FROM: usize = READ_ON_DEMAND_FROM;

/// `bytes` as a column holds them: spilled to a temporary file from [`SPILL_FROM`] bytes (kept
/// in memory when that fails: no temporary folder, a full disk).
fn column_bytes(bytes: Vec<u8>) -> SharedBytes {
    if bytes.len() >= SPILL_FROM {
        if let Ok(mapping) = crate::mapped::Mapping::spill(&bytes) {
            return SharedBytes::shared(mapping);
        }
    }
    bytes.into()
}

/// What a column's nodes hold.
#[derive(Debug, Clone)]
pub enum ColumnValue {
    /// The decoded value, whole.
    Whole(Arc<Value>),
    /// The source's bytes, read a node at a time when asked.
    Read {
        /// The source.
        source: Arc<OnDemand>,
        /// For a column whose tree does not share the source's shape (protobuf, which leaves
        /// nulls out): the source's node for each of its nodes ([`SpanTree::nodes_in`]).
        ids: Option<Arc<NodeMap>>,
    },
}

impl ColumnValue {
    /// Whether both are the one shared value (or read from the one source).
    pub fn is_shared_with(&self, other: &ColumnValue) -> bool {
        match (self, other) {
            (ColumnValue::Whole(a), ColumnValue::Whole(b)) => Arc::ptr_eq(a, b),
            (ColumnValue::Read { source: a, .. }, ColumnValue::Read { source: b, .. }) => {
                Arc::ptr_eq(a, b)
            }
            _ => false,
        }
    }
}

/// A payload read a node at a time: its format, bytes and span tree.
#[derive(Debug)]
pub struct OnDemand {
    /// The source's format.
    pub format: Format,
    /// The source's bytes.
    pub bytes: SharedBytes,
    /// The source's span tree.
    pub spans: Arc<SpanTree>,
    /// The limits the source was read within.
    pub limits: Limits,
}

impl OnDemand {
    /// The value of the source's node `id`, read from its bytes.
    pub fn value_of(&self, id: NodeId) -> Option<Value> {
        let span = self.spans.node(id).span;
        self.read(self.bytes.get(span.range())?)
    }

    /// The whole value (the source's bytes decoded again: a large document costs its value's
    /// memory while the result is held).
    pub fn whole(&self) -> Option<Value> {
        self.read(&self.bytes)
    }

    fn read(&self, bytes: &[u8]) -> Option<Value> {
        let options = DecodeOptions {
            limits: self.limits.for_input(self.bytes.len()),
            ..DecodeOptions::default()
        };
        codec::decode_value(bytes, self.format, &options).ok()
    }

    /// What a summary says of the tags around the container `id` (of kind `kind`): nothing for
    /// JSON and MessagePack, `"tag 4: "` for a CBOR array under tag 4, as the decoded value's
    /// summary says it. The tag heads are read with a stand-in empty container after them, so
    /// the container's items are never decoded; `None` if they do not read that way.
    fn tags_of(&self, id: NodeId, kind: crate::model::Kind) -> Option<String> {
        if self.format != Format::Cbor {
            return Some(String::new());
        }
        let start = self.spans.node(id).span.start;
        let mut at = start;
        while let Some(&head) = self.bytes.get(at).filter(|&&b| b >> 5 == 6) {
            at += match head & 0x1f {
                0..=23 => 1,
                24 => 2,
                25 => 3,
                26 => 5,
                27 => 9,
                _ => return None,
            };
        }
        if at == start {
            return Some(String::new());
        }
        let mut stand_in = self.bytes.get(start..at)?.to_vec();
        let empty = if kind == crate::model::Kind::Map {
            0xa0
        } else {
            0x80
        };
        stand_in.push(empty);
        let mut value = &self.read(&stand_in)?;
        let mut out = String::new();
        while let Value::Tag(t, inner) = value {
            out.push_str(&format!("tag {t}: "));
            value = inner;
        }
        matches!(value, Value::Array(_) | Value::Map(_)).then_some(out)
    }

    /// The source's node that the node `id` of `spans` (a column's tree of the same value) is:
    /// by `ids` when given, else the same id (the trees share a shape).
    fn node_for(&self, ids: Option<&NodeMap>, id: NodeId) -> Option<NodeId> {
        let source = match ids {
            Some(ids) => ids.get(id)?,
            None => id,
        };
        (source.index() < self.spans.len()).then_some(source)
    }
}

impl ColumnDoc {
    /// A decoded document as a column's tree.
    pub fn of(doc: Document) -> ColumnDoc {
        ColumnDoc {
            value: ColumnValue::Whole(Arc::new(doc.value)),
            spans: Arc::new(doc.spans),
        }
    }

    /// The value of node `id`: borrowed from the whole value, or read from the source's bytes.
    pub fn value_at(&self, id: NodeId) -> Option<Cow<'_, Value>> {
        match &self.value {
            ColumnValue::Whole(v) => self.spans.value_of(v, id).map(Cow::Borrowed),
            ColumnValue::Read { source, ids } => source
                .value_of(source.node_for(ids.as_deref(), id)?)
                .map(Cow::Owned),
        }
    }

    /// A one-line summary of node `id`'s value ([`Value::summary`]). A container read on demand
    /// is summed up from the tree (`map(8)`, `array(3)`), without reading its items.
    pub fn summary(&self, id: NodeId, max_chars: usize) -> Option<String> {
        if let ColumnValue::Read { source: r, ids } = &self.value {
            let source = r.node_for(ids.as_deref(), id)?;
            let kind = self.spans.kind(id);
            if kind.is_container() {
                // The source's items, as a shared value would count them (a protobuf column
                // leaves nulls out); a wrapper the column added counts its own.
                let n = if r.spans.kind(source) == kind {
                    r.spans.children(source).count()
                } else {
                    self.spans.children(id).count()
                };
                let what = if kind == crate::model::Kind::Map {
                    "map"
                } else {
                    "array"
                };
                // Every column shares the source's value, tags and all. Tag heads that do not
                // read as expected: the node's value, decoded.
                if let Some(tags) = r.tags_of(source, kind) {
                    return Some(format!("{tags}{what}({n})"));
                }
            }
        }
        self.value_at(id).map(|v| v.summary(max_chars))
    }

    /// The whole value: shared, or read from the source's bytes again.
    pub fn whole(&self) -> Option<Arc<Value>> {
        match &self.value {
            ColumnValue::Whole(v) => Some(Arc::clone(v)),
            ColumnValue::Read { source, .. } => source.whole().map(Arc::new),
        }
    }

    /// Whether the value is held whole (not read on demand).
    pub fn is_whole(&self) -> bool {
        matches!(self.value, ColumnValue::Whole(_))
    }
}

/// One format's view of the payload.
#[derive(Debug, Clone)]
pub struct Column {
    /// The format.
    pub format: Format,
    /// Whether this is the payload itself (not an encoding of it).
    pub is_source: bool,
    /// The bytes shown (the source column shares the payload's).
    pub bytes: SharedBytes,
    /// The value and the spans of `bytes` (`value.preorder()[i]` is span node `i`); partial
    /// when `error` is set; `None` when nothing could be decoded or encoded.
    pub document: Option<ColumnDoc>,
    /// What this format could not say.
    pub notes: Vec<FidelityNote>,
    /// Nodes a note is about (every node matching a note's path pattern).
    pub note_nodes: Vec<NodeId>,
    /// Sizes of `bytes`; `None` when nothing was encoded (an empty payload is still measured),
    /// and in a preview, while they are being measured (they are measured last).
    pub sizes: Option<Sizes>,
    /// Why decoding (source) or encoding stopped.
    pub error: Option<ColumnError>,
    /// For protobuf: the message type used, or that the schema was inferred.
    pub schema: Option<String>,
    /// The variant the column was written in (MessagePack and CBOR, when one was chosen).
    pub variant: Option<Variant>,
    /// Whether the column is still being encoded (in a preview of the analysis): it has no
    /// bytes and no error yet.
    pub pending: bool,
    /// Whether the column was not encoded because the view does not show it
    /// ([`Choice::hidden`]): it has no bytes until [`encode_deferred`] makes it.
    pub deferred: bool,
}

impl Column {
    /// Whether the column's compressed sizes are measured (once every column is shown): the
    /// source always (an empty payload too), an encoding when it succeeded.
    pub fn is_measured(&self) -> bool {
        !self.pending && !self.deferred && (self.is_source || self.error.is_none())
    }

    /// The node at `path` in this column.
    pub fn resolve(&self, path: &Path) -> Option<NodeId> {
        self.document
            .as_ref()
            .and_then(|d| d.spans.find(path).first().copied())
    }

    /// The bytes of the node at `path` (key included).
    pub fn extent(&self, path: &Path) -> Option<Span> {
        let doc = self.document.as_ref()?;
        let id = self.resolve(path)?;
        Some(doc.spans.node(id).extent())
    }
}

/// One reading of the payload, without its document (the CLI's report lists the same).
pub use crate::codec::detect::ReadingSummary;

/// A message type's fit, from the loaded schemas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateSummary {
    /// Full name.
    pub message: String,
    /// 0–100.
    pub score: u8,
    /// Why.
    pub reasons: Vec<String>,
}

/// Everything the inspector shows for one payload.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// Every reading, most plausible first.
    pub readings: Vec<ReadingSummary>,
    /// The format the payload was read as.
    pub format: Format,
    /// Whether that was the user's choice rather than the best reading.
    pub overridden: bool,
    /// Ranked message types (empty without schemas).
    pub candidates: Vec<CandidateSummary>,
    /// The message type used for protobuf, if any.
    pub message: Option<String>,
    /// Problems with the user's choices (a message type no loaded schema has).
    pub warnings: Vec<String>,
    /// One column per format, the source first.
    pub columns: Vec<Column>,
    /// How long detection, decoding and encoding took.
    pub elapsed: Duration,
    /// What the payload is when it is no data format (text its Content-Type names, encrypted
    /// TLS records). Unless the user chose a format, nothing was guessed then: `readings` and
    /// `columns` are empty and `format` is only the payload's hint (or JSON).
    pub verdict: Option<Verdict>,
    /// For Avro read with a reader's schema: the two schemas and the rule for each field.
    pub avro_resolution: Option<pipeline::Resolution>,
    /// With it, the rule that read each node of the source column's tree.
    pub avro_rules: Option<Arc<crate::codec::avro::resolved::NodeRules>>,
}

impl Analysis {
    /// The column for `format`.
    pub fn column(&self, format: Format) -> Option<&Column> {
        self.columns.iter().find(|c| c.format == format)
    }

    /// For Avro read with a reader's schema: the rule that read the node at `path`, and whether
    /// it reads the value as written.
    pub fn avro_rule(&self, path: &Path) -> Option<(&str, bool)> {
        let rules = self.avro_rules.as_ref()?;
        let id = self.source()?.resolve(path)?;
        rules.rule(id)
    }

    /// The node at `path` as indented JSON, read from the JSON column's own bytes for it: the
    /// field names that column writes (for protobuf with a schema, protoc's JSON names unless
    /// [`Choice::proto_names`]). `None` when the JSON column has no such node.
    pub fn json_at(&self, path: &Path) -> Option<String> {
        let column = self.column(Format::Json)?;
        let doc = column.document.as_ref()?;
        let span = doc.spans.node(column.resolve(path)?).span;
        let bytes = column.bytes.get(span.range())?;
        let node = codec::decode(bytes, Format::Json, &DecodeOptions::default()).ok()?;
        let options = EncodeOptions {
            pretty: true,
            ..EncodeOptions::default()
        };
        let json = codec::encode(&node.value, Format::Json, &options).ok()?;
        String::from_utf8(json.bytes).ok()
    }

    /// The source column.
    pub fn source(&self) -> Option<&Column> {
        self.columns.iter().find(|c| c.is_source)
    }

    /// This analysis with `column` in place of its column of the same format.
    pub fn with_column(&self, column: Column) -> Analysis {
        let mut out = self.clone();
        if let Some(c) = out.columns.iter_mut().find(|c| c.format == column.format) {
            *c = column;
        }
        out
    }
}

/// [`analyze`] for a payload of a peeled source: a payload with a [`Verdict`] (text, encrypted
/// records) is not decoded unless the user chose a format; its analysis carries the verdict.
pub fn analyze_payload(
    payload: &Payload,
    choice: &Choice,
    schemas: &SchemaSet,
    limits: &Limits,
    ctx: &JobContext,
) -> Result<Analysis, JobError> {
    analyze_payload_previewing(payload, choice, schemas, limits, ctx, &|_| {})
}

/// [`analyze_payload`], handing `preview` the analysis as it fills in: the source column alone as
/// soon as it is decoded (the other columns say they are being encoded), then each encoding as it
/// is done, before the compressed sizes.
pub fn analyze_payload_previewing(
    payload: &Payload,
    choice: &Choice,
    schemas: &SchemaSet,
    limits: &Limits,
    ctx: &JobContext,
    preview: &(dyn Fn(Analysis) + Sync),
) -> Result<Analysis, JobError> {
    analyze_payload_knowing(
        payload,
        choice,
        schemas,
        limits,
        ctx,
        preview,
        HeadStart::default(),
    )
}

/// [`analyze_payload_previewing`], given the work `head` did before: the readings layer ranking
/// made of this payload as a skeleton ([`open_walking`]), whose span tree is taken instead of
/// being made again when the payload is read on demand as that format; the protobuf column
/// being written since the source was opened ([`prewrite_protobuf`]). What does not fit the
/// payload and the choices is let go.
pub fn analyze_payload_knowing(
    payload: &Payload,
    choice: &Choice,
    schemas: &SchemaSet,
    limits: &Limits,
    ctx: &JobContext,
    preview: &(dyn Fn(Analysis) + Sync),
    head: HeadStart,
) -> Result<Analysis, JobError> {
    let found = verdict(payload);
    if found.is_some() && choice.format.is_none() {
        return Ok(Analysis {
            readings: Vec::new(),
            format: payload.hint.unwrap_or(Format::Json),
            overridden: false,
            candidates: Vec::new(),
            message: None,
            warnings: Vec::new(),
            columns: Vec::new(),
            elapsed: Duration::ZERO,
            verdict: found,
            avro_resolution: None,
            avro_rules: None,
        });
    }
    let call = payload.grpc_call();
    let request = AnalysisRequest {
        bytes: &payload.bytes,
        origin: Origin::of(payload, call.as_ref()),
        choice,
        schemas,
        limits,
    };
    let shown = |mut partial: Analysis| {
        partial.verdict = found.clone();
        preview(partial)
    };
    let mut analysis = analyze_sized(request, ctx, &shown, READ_ON_DEMAND_FROM, head)?;
    analysis.verdict = found;
    Ok(analysis)
}

/// One payload to analyse: its bytes, what its layers said of it, and how the user wants it
/// read, with the schemas and limits to read it by.
#[derive(Clone, Copy)]
pub struct AnalysisRequest<'a> {
    /// The payload's bytes.
    pub bytes: &'a SharedBytes,
    /// What its layers said: when a loaded schema defines its gRPC call, the method's type is
    /// the best match; an Avro framing gives or names the writer's schema.
    pub origin: Origin<'a>,
    /// The user's choices: format, message type, field readings, hidden columns, variant.
    pub choice: &'a Choice,
    /// The loaded schemas.
    pub schemas: &'a SchemaSet,
    /// Bounds on every decode.
    pub limits: &'a Limits,
}

/// Detects, decodes and encodes one payload. Checks for cancel between steps.
pub fn analyze(request: AnalysisRequest<'_>, ctx: &JobContext) -> Result<Analysis, JobError> {
    analyze_previewing(request, ctx, &|_| {})
}

/// [`analyze`], handing `preview` the analysis as it fills in: with the source column alone as
/// soon as the payload is decoded, then again as each encoding is done, and once more when every
/// column is (before the compressed sizes, which are measured last).
pub fn analyze_previewing(
    request: AnalysisRequest<'_>,
    ctx: &JobContext,
    preview: &(dyn Fn(Analysis) + Sync),
) -> Result<Analysis, JobError> {
    analyze_sized(
        request,
        ctx,
        preview,
        READ_ON_DEMAND_FROM,
        HeadStart::default(),
    )
}

/// [`analyze_previewing`], reading a JSON payload of `on_demand_from` bytes or more on demand
/// (tests read small payloads both ways and compare).
fn analyze_sized(
    request: AnalysisRequest<'_>,
    ctx: &JobContext,
    preview: &(dyn Fn(Analysis) + Sync),
    on_demand_from: usize,
    head: HeadStart,
) -> Result<Analysis, JobError> {
    let AnalysisRequest {
        bytes,
        origin,
        choice,
        schemas,
        limits,
    } = request;
    let started = Instant::now();
    let mut warnings = Vec::new();
    let message_choice = message_choice(&request, &mut warnings);
    // A large JSON, MessagePack or CBOR payload's tree is made a chunk at a time, without its
    // value.
    // Its protobuf column needs nothing from the tree (a walk of its own): it is written
    // meanwhile, on a thread of its own, and waited for when the columns are encoded (used only
    // if the payload is read as that format).
    let walked_as = pipeline::skeleton_format(
        bytes,
        choice.format,
        origin.hint,
        &choice.field_readings,
        on_demand_from,
    );
    let early = EarlyProtobuf::start(&request, walked_as, &message_choice, head.protobuf);
    ctx.report(0.05, "ranking message types and detecting the format");
    let avro_schemas = schemas.avro_schemas();
    // Ranking's skeleton stands for the walk only when it is of the format walked here.
    let known = head.known.filter(|k| {
        k.readings
            .iter()
            .any(|r| r.skeleton && Some(r.format) == walked_as)
    });
    let read = read_payload(&request, message_choice, walked_as, &avro_schemas, known);
    ctx.check()?;
    warnings.extend(read.warnings);
    let resolution = (read.format == Format::Avro)
        .then(|| {
            pipeline::avro_resolution(origin.avro, &avro_schemas, schemas.avro_reader.as_ref())
        })
        .flatten();
    let candidates = candidate_summaries(read.ranking);
    let message = read.message;
    let format = read.format;
    let message_name = message.as_ref().map(|m| m.full_name().to_string());
    let source_schema = (format == Format::Protobuf).then(|| {
        message_name
            .clone()
            .unwrap_or_else(|| "no schema (field numbers)".into())
    });
    let (document, error) = source_document(read.outcome, read.skeleton, format, bytes, limits);
    let complete = error.is_none();
    // (A partial document is the writer's, read by its own schema: no rules.)
    let avro_rules = resolution
        .as_ref()
        .zip(document.as_ref().filter(|_| complete))
        .and_then(|(r, doc)| r.node_rules(&doc.spans, bytes))
        .map(Arc::new);
    let writing = Writing {
        from: format,
        bytes,
        read_with: message.as_ref(),
        proto_names: choice.proto_names,
        encoding: choice.encoding,
        avro: schemas.avro_schema(),
    };
    let progress = Progress {
        analysis: Analysis {
            readings: read.readings,
            format,
            overridden: read.chosen != 0,
            candidates,
            message: message_name,
            warnings,
            columns: Vec::new(),
            elapsed: Duration::ZERO,
            verdict: None,
            avro_resolution: resolution,
            avro_rules,
        },
        source: source_column(format, bytes, document.clone(), error, source_schema),
        others: Format::ALL.into_iter().filter(|&f| f != format).collect(),
        started,
        preview,
        ctx,
    };
    let early = early.for_reading(format, message.as_ref());
    let source = document.as_ref().filter(|_| complete);
    let mut columns = progress.encode(source, &writing, early, choice, limits)?;
    // Compressed sizes last: every column is already shown, and compressing tens of megabytes
    // takes seconds.
    ctx.report(0.8, "measuring compressed sizes");
    measure_sizes(&mut columns, ctx)?;
    ctx.report(1.0, "done");
    let mut analysis = progress.analysis;
    analysis.columns = columns;
    analysis.elapsed = started.elapsed();
    Ok(analysis)
}

/// Reads the payload ([`pipeline::read`]) with `message` as the message type choice, every
/// reading listed, from its walk when it was walked as `skeleton`.
fn read_payload(
    request: &AnalysisRequest<'_>,
    message: MessageChoice,
    skeleton: Option<Format>,
    avro_schemas: &[crate::codec::avro::AvroSchema],
    known: Option<Known>,
) -> pipeline::Read {
    let AnalysisRequest {
        bytes,
        origin,
        choice,
        schemas,
        limits,
    } = *request;
    let read_request = ReadRequest {
        origin,
        format: choice.format,
        list_every_reading: true,
        message,
        field_readings: choice.field_readings.clone(),
        limits: *limits,
        known,
        skeleton,
        avro_schemas,
        avro_reader: schemas.avro_reader.as_ref(),
    };
    let types = (!schemas.is_empty()).then_some(schemas as &dyn MessageTypes);
    pipeline::read(bytes, read_request, types)
}

/// The ranked message types as the inspector lists them: name, score and reasons.
fn candidate_summaries(
    ranking: Vec<crate::codec::protobuf::schema::Candidate>,
) -> Vec<CandidateSummary> {
    ranking
        .into_iter()
        .map(|c| CandidateSummary {
            message: c.message.full_name().to_string(),
            score: c.score,
            reasons: c.reasons,
        })
        .collect()
}

/// The source column: the payload's bytes as read as `format`, its `document` (or the `error`
/// and partial document) and the message type it was read with (`schema`). Its compressed
/// sizes are measured last, with every column's.
fn source_column(
    format: Format,
    bytes: &SharedBytes,
    document: Option<ColumnDoc>,
    error: Option<ColumnError>,
    schema: Option<String>,
) -> Column {
    Column {
        format,
        is_source: true,
        // The payload's bytes, shared: for a large unpeeled file, its memory map.
        bytes: bytes.clone(),
        note_nodes: Vec::new(),
        notes: Vec::new(),
        sizes: None,
        error,
        schema,
        document,
        variant: None,
        pending: false,
        deferred: false,
    }
}

/// How the payload's protobuf bytes are to be read: as the framing's named type, as the type
/// the user chose (a warning when no loaded schema has it), ranked, or schema-less.
fn message_choice(request: &AnalysisRequest<'_>, warnings: &mut Vec<String>) -> MessageChoice {
    match &request.choice.proto {
        // A framing that names the type (a schema registry's) says what the bytes are.
        ProtoMode::Auto => MessageChoice::Auto.or_framed(&request.origin),
        ProtoMode::Message(name) => match request.schemas.message(name) {
            Some(m) => MessageChoice::Named(m),
            None => {
                warnings.push(format!("no loaded schema has the message type {name}"));
                MessageChoice::SchemaLess
            }
        },
        ProtoMode::SchemaLess => MessageChoice::SchemaLess,
    }
}

/// The source column's document: the decoded tree (read on demand when the payload was only
/// walked), or the partial document and the error of a payload that did not decode completely.
fn source_document(
    outcome: Result<Document, codec::DecodeError>,
    read_on_demand: bool,
    format: Format,
    bytes: &SharedBytes,
    limits: &Limits,
) -> (Option<ColumnDoc>, Option<ColumnError>) {
    match outcome {
        Ok(doc) if read_on_demand => {
            let spans = Arc::new(doc.spans);
            let read = OnDemand {
                format,
                bytes: bytes.clone(),
                spans: Arc::clone(&spans),
                limits: *limits,
            };
            let document = ColumnDoc {
                value: ColumnValue::Read {
                    source: Arc::new(read),
                    ids: None,
                },
                spans,
            };
            (Some(document), None)
        }
        Ok(doc) => (Some(ColumnDoc::of(doc)), None),
        Err(e) => (
            e.partial.map(|b| ColumnDoc::of(*b)),
            Some(ColumnError {
                offset: Some(e.offset),
                path: Some(e.path),
                message: e.message,
            }),
        ),
    }
}

/// Writes the protobuf column of `bytes` walked as `from` ([`stream::protobuf_in_chunks`]) on a
/// thread of its own.
fn spawn_protobuf(
    bytes: SharedBytes,
    from: Format,
    options: EncodeOptions,
    limits: Limits,
) -> Option<std::thread::JoinHandle<Walked>> {
    std::thread::Builder::new()
        .name("wirelens-protobuf".into())
        .spawn(move || {
            walk_to_column(bytes.len() >= SPILL_FROM, |sink| {
                stream::protobuf_in_chunks(&bytes, from, &options, &limits, stream::CHUNK, sink)
            })
        })
        .ok()
}

/// The protobuf column of a large source's whole bytes, being written since the source was
/// opened ([`prewrite_protobuf`]), while it is peeled and ranked.
#[derive(Debug)]
pub struct Prewritten {
    /// The bytes it is written from: the source's own.
    bytes: SharedBytes,
    /// The format they are walked as.
    from: Format,
    /// The limits it is written within.
    limits: Limits,
    /// The writing thread.
    handle: std::thread::JoinHandle<Walked>,
}

/// Starts writing the protobuf column of `source`'s whole bytes on a thread of its own, as an
/// analysis of them writes it, unless `hidden` has it: for a file of [`READ_ON_DEMAND_FROM`]
/// bytes or more that starts as a JSON, MessagePack or CBOR container (no capture), whose
/// payload is the file itself unless peeling finds layers in it. The column needs nothing that
/// peeling or ranking makes (an inferred schema, from the bytes), so it is written while they
/// run. An analysis takes it ([`HeadStart::protobuf`]) when its payload is those bytes, read as
/// that format, with no message type named and no variant chosen; otherwise it is let go.
pub fn prewrite_protobuf(
    source: &Arc<Source>,
    limits: &Limits,
    hidden: &[Format],
) -> Option<Prewritten> {
    if hidden.contains(&Format::Protobuf) || crate::capture::pcap::is_pcap(source.bytes()) {
        return None;
    }
    let bytes = SharedBytes::shared(source.clone());
    let from = pipeline::skeleton_format(&bytes, None, source.hint(), &[], READ_ON_DEMAND_FROM)?;
    let writing = Writing {
        from,
        bytes: &bytes,
        read_with: None,
        proto_names: false,
        encoding: None,
        avro: None,
    };
    let options = writing
        .options(Format::Protobuf, limits)
        .0
        .encode_options(Format::Protobuf)?;
    let handle = spawn_protobuf(bytes.clone(), from, options, *limits)?;
    Some(Prewritten {
        bytes,
        from,
        limits: *limits,
        handle,
    })
}

/// Work on a payload done before its analysis starts, for the analysis to take instead of
/// doing it again.
#[derive(Debug, Default)]
pub struct HeadStart {
    /// The readings ranking made of the payload as a skeleton ([`open_walking`]).
    pub known: Option<Known>,
    /// The protobuf column of the source being written ([`prewrite_protobuf`]).
    pub protobuf: Option<Prewritten>,
}

/// The protobuf column written from the payload's own walk, on a thread of its own, while the
/// payload is read: used when the payload is read as the format it was walked as, with the
/// message type it was written with.
struct EarlyProtobuf {
    /// The writing thread (taken by the protobuf column's encoder).
    handle: std::sync::Mutex<Option<std::thread::JoinHandle<Walked>>>,
    /// The format the payload was walked as.
    from: Option<Format>,
    /// The message type it is written with (only one the user or the framing named).
    message: Option<crate::codec::protobuf::MessageDescriptor>,
}

impl EarlyProtobuf {
    /// Starts writing the protobuf column of a payload walked as `walked_as`, when the column
    /// is shown. Ranked message types read protobuf bytes; a JSON payload's protobuf column is
    /// written with a type only when the user named one.
    fn start(
        request: &AnalysisRequest<'_>,
        walked_as: Option<Format>,
        choice: &MessageChoice,
        prewritten: Option<Prewritten>,
    ) -> EarlyProtobuf {
        let message = match choice {
            MessageChoice::Named(m) => Some(m.clone()),
            _ => None,
        };
        let shown = !request.choice.hidden.contains(&Format::Protobuf);
        let handle = walked_as.filter(|_| shown).and_then(|from| {
            // Written since the source was opened, from these very bytes, as it would be here.
            let taken = prewritten.filter(|p| {
                p.from == from
                    && message.is_none()
                    && request.choice.encoding.is_none()
                    && p.limits == *request.limits
                    && p.bytes.len() == request.bytes.len()
                    && std::ptr::eq(p.bytes.as_ptr(), request.bytes.as_ptr())
            });
            if let Some(p) = taken {
                return Some(p.handle);
            }
            let writing = Writing {
                from,
                bytes: request.bytes,
                read_with: message.as_ref(),
                proto_names: false,
                encoding: request.choice.encoding,
                avro: None,
            };
            let options = writing
                .options(Format::Protobuf, request.limits)
                .0
                .encode_options(Format::Protobuf)?;
            spawn_protobuf(request.bytes.clone(), from, options, *request.limits)
        });
        EarlyProtobuf {
            handle: std::sync::Mutex::new(handle),
            from: walked_as,
            message,
        }
    }

    /// Whether the column is of use for a payload read as `format` with `message`.
    fn for_reading(
        self,
        format: Format,
        message: Option<&crate::codec::protobuf::MessageDescriptor>,
    ) -> EarlyColumn {
        EarlyColumn {
            usable: self.from == Some(format) && message == self.message.as_ref(),
            early: self,
        }
    }
}

/// An [`EarlyProtobuf`] and whether the analysis can use it.
struct EarlyColumn {
    /// The column being written.
    early: EarlyProtobuf,
    /// Written from the format and with the type the analysis reads with.
    usable: bool,
}

impl EarlyColumn {
    /// The written column, waited for (once; `None` after, or when it is of no use).
    fn take(&self) -> Option<Walked> {
        self.early
            .handle
            .lock()
            .ok()
            .and_then(|mut e| e.take())
            .and_then(|handle| handle.join().ok())
            .filter(|_| self.usable)
    }
}

/// The columns of one analysis as they are made, each shown as soon as it is encoded.
struct Progress<'a> {
    /// The analysis without its columns.
    analysis: Analysis,
    /// The source column.
    source: Column,
    /// The formats encoded, one column each after the source's.
    others: Vec<Format>,
    /// When the analysis started.
    started: Instant,
    /// Takes each preview.
    preview: &'a (dyn Fn(Analysis) + Sync),
    /// Cancel and progress.
    ctx: &'a JobContext,
}

impl Progress<'_> {
    /// Shows the source column and the encodings done so far (`slots`, one per other format),
    /// the rest pending, as a preview.
    fn show(&self, slots: &[Option<Column>]) {
        let mut columns = vec![self.source.clone()];
        columns.extend(
            slots
                .iter()
                .zip(&self.others)
                .map(|(slot, &target)| slot.clone().unwrap_or_else(|| pending(target))),
        );
        let mut analysis = self.analysis.clone();
        analysis.columns = columns;
        analysis.elapsed = self.started.elapsed();
        (self.preview)(analysis);
    }

    /// Encodes the complete `source` document to every other format, side by side on the
    /// worker pool, sharing the one decoded value; a hidden format's column is deferred. Returns
    /// every column, the source's first.
    fn encode(
        &self,
        source: Option<&ColumnDoc>,
        writing: &Writing<'_>,
        early: EarlyColumn,
        choice: &Choice,
        limits: &Limits,
    ) -> Result<Vec<Column>, JobError> {
        use rayon::prelude::*;
        let ctx = self.ctx;
        let encoded: std::sync::Mutex<Vec<Option<Column>>> =
            std::sync::Mutex::new(vec![None; self.others.len()]);
        self.show(&vec![None; self.others.len()]);
        // What decoding freed (the builder's doubling, the readings not chosen) goes back
        // before the encodings take their share.
        crate::profile::alloc::give_back_freed();
        ctx.report(0.3, "encoding the other formats");
        self.others
            .par_iter()
            .enumerate()
            .try_for_each(|(i, &target)| {
                ctx.check()?;
                let column = match source {
                    Some(_) if choice.hidden.contains(&target) => deferred(target),
                    Some(source) => {
                        let early = match target {
                            Format::Protobuf => early.take(),
                            _ => None,
                        };
                        let column = encode_column(source, target, writing, limits, early);
                        crate::profile::alloc::give_back_freed();
                        column
                    }
                    None => not_encoded(
                        target,
                        ColumnError {
                            offset: None,
                            path: None,
                            message: "not encoded: the payload did not decode completely".into(),
                        },
                    ),
                };
                let mut slots = encoded
                    .lock()
                    .map_err(|_| JobError::Failed("an encoder stopped".into()))?;
                slots[i] = Some(column);
                let n = slots.iter().filter(|s| s.is_some()).count();
                ctx.report(
                    0.3 + 0.5 * n as f32 / self.others.len() as f32,
                    &format!("encoded as {}", target.title()),
                );
                // Under the lock, so previews go out in the order the columns were done.
                self.show(&slots);
                Ok::<(), JobError>(())
            })?;
        let slots = encoded
            .into_inner()
            .map_err(|_| JobError::Failed("an encoder stopped".into()))?;
        let mut columns = vec![self.source.clone()];
        columns.extend(slots.into_iter().flatten());
        Ok(columns)
    }
}

/// Measures the compressed sizes of every column that has them, side by side on the worker
/// pool.
fn measure_sizes(columns: &mut [Column], ctx: &JobContext) -> Result<(), JobError> {
    use rayon::prelude::*;
    columns
        .par_iter_mut()
        .filter(|c| c.is_measured())
        .try_for_each(|c| {
            ctx.check()?;
            c.sizes = Some(Sizes::of(&c.bytes));
            Ok::<(), JobError>(())
        })
}

/// The column of `format` that [`analyze`] left deferred ([`Column::deferred`]), encoded
/// now from `analysis`'s source as the analysis would have (with `choice`'s variant and JSON
/// names, the message type it read with), its compressed sizes measured. `None` when the
/// source did not decode completely (no column of another format is made then).
pub fn encode_deferred(
    analysis: &Analysis,
    format: Format,
    choice: &Choice,
    schemas: &SchemaSet,
    limits: &Limits,
) -> Option<Column> {
    let source = analysis.source().filter(|c| c.error.is_none())?;
    let doc = source.document.as_ref()?;
    let message = analysis.message.as_deref().and_then(|m| schemas.message(m));
    let writing = Writing {
        from: analysis.format,
        bytes: &source.bytes,
        read_with: message.as_ref(),
        proto_names: choice.proto_names,
        encoding: choice.encoding,
        avro: schemas.avro_schema(),
    };
    let mut column = encode_column(doc, format, &writing, limits, None);
    if column.is_measured() {
        column.sizes = Some(Sizes::of(&column.bytes));
    }
    Some(column)
}

fn not_encoded(format: Format, error: ColumnError) -> Column {
    Column {
        error: Some(error),
        pending: false,
        ..pending(format)
    }
}

/// A column whose encoding is still running, in a preview.
fn pending(format: Format) -> Column {
    Column {
        format,
        is_source: false,
        bytes: SharedBytes::default(),
        document: None,
        notes: Vec::new(),
        note_nodes: Vec::new(),
        sizes: None,
        error: None,
        schema: None,
        variant: None,
        pending: true,
        deferred: false,
    }
}

/// A column of `format` that was not encoded, saying why.
pub(crate) fn not_encoded_because(format: Format, why: &str) -> Column {
    not_encoded(
        format,
        ColumnError {
            offset: None,
            path: None,
            message: format!("not encoded: {why}"),
        },
    )
}

/// The column of a format the view does not show: not encoded until it is.
fn deferred(format: Format) -> Column {
    Column {
        pending: false,
        deferred: true,
        ..pending(format)
    }
}

/// How the other columns write the source's value: what [`pipeline::write()`] is given besides
/// the value, and the user's choices for every column.
#[derive(Clone, Copy)]
struct Writing<'a> {
    /// The format the source was read as.
    from: Format,
    /// The payload's bytes (proto3 JSON that the value cannot say is read from them).
    bytes: &'a [u8],
    /// The message type the source was read with: protobuf is written as it (else one is
    /// inferred), and protobuf read with it is written as its proto3 JSON.
    read_with: Option<&'a crate::codec::protobuf::MessageDescriptor>,
    /// The proto3 JSON keeps the `.proto` field names (the user's choice).
    proto_names: bool,
    /// The MessagePack and CBOR variant, if not as the reference libraries write them.
    encoding: Option<Variant>,
    /// The Avro column's schema; `None` infers one from the value.
    avro: Option<&'a crate::codec::avro::AvroSchema>,
}

impl<'a> Writing<'a> {
    /// How `format` is written (with its tree, read back within `limits` where it must be),
    /// and the variant among the options.
    fn options(&self, format: Format, limits: &Limits) -> (WriteOptions<'a>, Option<Variant>) {
        let variant = self.encoding.filter(|v| v.applies_to(format));
        let encoding = variant.map_or_else(EncodeOptions::default, Variant::options);
        let options = WriteOptions {
            pretty: false,
            proto_names: self.proto_names,
            canonical: encoding.canonical,
            floats: encoding.floats,
            protobuf: match self.read_with {
                Some(m) => ProtobufType::Named(m),
                None => ProtobufType::Inferred,
            },
            avro: self.avro,
            avro_logical: false,
            spans: true,
            limits: *limits,
        };
        (options, variant)
    }

    /// What [`pipeline::write()`] writes: `value`, whose tree in the source is `spans`.
    fn source(&self, value: &'a Value, spans: &'a SpanTree) -> Decoded<'a> {
        Decoded {
            format: self.from,
            value: Cow::Borrowed(value),
            spans: Some(spans),
            bytes: self.bytes,
            message: self.read_with,
        }
    }
}

/// Encodes the source's value as `format`, as `writing` says: from the whole value, or for a
/// payload read on demand, a chunk at a time from its bytes.
///
/// `walked` is the column already written by a walk of the source's bytes (the protobuf
/// column of a payload read on demand, written while its tree was made), if it was.
fn encode_column(
    source: &ColumnDoc,
    format: Format,
    writing: &Writing<'_>,
    limits: &Limits,
    walked: Option<Walked>,
) -> Column {
    match &source.value {
        ColumnValue::Whole(value) => encode_whole(value, &source.spans, format, writing, limits),
        ColumnValue::Read { source, .. } => {
            encode_on_demand(source, format, writing, limits, walked)
        }
    }
}

/// A column written by a walk of the source's bytes, with its bytes as the column holds them
/// (the `Encoded` has none): `None` where the walk does not apply.
type Walked = Option<Result<(codec::Encoded, SharedBytes), codec::EncodeError>>;

/// A column written by `walk` (a walk of the source's bytes, given where to send its output
/// as it goes, or `None` to hold it). A `large` document's column goes to a temporary file as
/// it is made, and is mapped from it ([`crate::mapped::Spill`]), so it is never whole in
/// memory. When that file cannot be made or written, the walk is made again holding its
/// output; when the walk itself gives up (it does not apply), it is not made again.
fn walk_to_column(
    large: bool,
    walk: impl Fn(
        Option<&mut (dyn std::io::Write + 'static)>,
    ) -> Option<Result<codec::Encoded, codec::EncodeError>>,
) -> Walked {
    if let Some(mut file) = large.then(crate::mapped::Spill::new).and_then(Result::ok) {
        match walk(Some(&mut file)) {
            Some(Ok(encoded)) => {
                if let Ok(mapping) = file.map() {
                    return Some(Ok((encoded, SharedBytes::shared(mapping))));
                }
            }
            Some(Err(e)) => return Some(Err(e)),
            None if !file.failed() => return None,
            None => {}
        }
    }
    walk(None).map(|r| {
        r.map(|mut encoded| {
            let bytes = column_bytes(std::mem::take(&mut encoded.bytes));
            (encoded, bytes)
        })
    })
}

/// Encodes a payload read on demand as `format` without holding its value: MessagePack and
/// CBOR by [`stream::transcode_with_spans`] (their trees share the source's shape), protobuf by
/// [`stream::protobuf_in_chunks`]. Where the walk does not apply (a map whose keys repeat, a
/// canonical variant, a schema that wraps values), the value is decoded whole for this one
/// encoding and let go after it.
fn encode_on_demand(
    read: &Arc<OnDemand>,
    format: Format,
    writing: &Writing<'_>,
    limits: &Limits,
    walked: Option<Walked>,
) -> Column {
    let (write_options, variant) = writing.options(format, limits);
    let Some(options) = write_options.encode_options(format) else {
        return not_encoded_because(format, "no message type to write protobuf with");
    };
    let (bytes, from, chunk) = (&read.bytes[..], read.format, stream::CHUNK);
    let large = bytes.len() >= SPILL_FROM;
    let walked = match (walked, format) {
        (Some(walked), _) => walked,
        (None, Format::Protobuf) => walk_to_column(large, |sink| {
            stream::protobuf_in_chunks(bytes, from, &options, limits, chunk, sink)
        }),
        (None, _) => walk_to_column(large, |sink| {
            let out = stream::Spanned {
                like: Some(&*read.spans),
                sink,
            };
            stream::transcode_with_spans(bytes, from, format, &options, limits, chunk, out).map(Ok)
        }),
    };
    let (mut encoded, written) = match walked {
        Some(Ok(walked)) => walked,
        Some(Err(e)) => {
            return not_encoded(
                format,
                ColumnError {
                    offset: None,
                    path: Some(e.path),
                    message: e.message,
                },
            )
        }
        None => return encode_whole_once(read, format, writing, limits),
    };
    let spans = std::mem::take(&mut encoded.spans);
    // MessagePack and CBOR have the source's shape; protobuf, which leaves nulls out, is
    // matched to the source node by node.
    let ids = if spans.shares_shape_with(&read.spans) {
        None
    } else {
        // A top-level array is wrapped in `items` by an inferred schema.
        let wraps = format == Format::Protobuf
            && read.spans.root().map(|r| read.spans.kind(r)) == Some(crate::model::Kind::Array);
        let ids = if wraps {
            spans.nodes_in_wrapped(&read.spans)
        } else {
            spans.nodes_in(&read.spans)
        };
        match ids {
            Some(ids) => Some(Arc::new(ids)),
            None => return encode_whole_once(read, format, writing, limits),
        }
    };
    let document = ColumnDoc {
        value: ColumnValue::Read {
            source: Arc::clone(read),
            ids,
        },
        spans: Arc::new(spans),
    };
    let notes = encoded.notes.into_iter().map(WriteNote::Fidelity).collect();
    column_of(format, written, notes, Some(document), writing, variant)
}

/// [`encode_whole`] of a payload read on demand: its value decoded for this encoding. The
/// column reads its nodes from the source again when its tree fits the source's.
fn encode_whole_once(
    read: &Arc<OnDemand>,
    format: Format,
    writing: &Writing<'_>,
    limits: &Limits,
) -> Column {
    let Some(value) = read.whole().map(Arc::new) else {
        return not_encoded(
            format,
            ColumnError {
                offset: None,
                path: None,
                message: "not encoded: the payload did not decode again".into(),
            },
        );
    };
    let mut column = encode_whole(&value, &read.spans, format, writing, limits);
    if let Some(doc) = &mut column.document {
        let shared = matches!(&doc.value, ColumnValue::Whole(v) if Arc::ptr_eq(v, &value));
        let ids = if doc.spans.shares_shape_with(&read.spans) {
            Some(None)
        } else {
            doc.spans
                .nodes_in(&read.spans)
                .map(|ids| Some(Arc::from(ids)))
        };
        if let (true, Some(ids)) = (shared, ids) {
            doc.value = ColumnValue::Read {
                source: Arc::clone(read),
                ids,
            };
        }
    }
    column
}

/// Encodes `value` (whose spans in the source are `source_spans`) as `format`, as `writing`
/// says, by [`pipeline::write()`]. The column's tree is the shared value with the encoder's own
/// spans when they line up with it node for node ([`WrittenTree::Value`], sharing the source
/// tree's shape when it is the same: JSON, MessagePack and CBOR of one value are); otherwise (a
/// protobuf encoding can wrap or drop what the source had; grouped repeated fields are arrays
/// the source does not have; proto3 JSON) the bytes read back, within `limits`, as the
/// source's own decode was.
fn encode_whole(
    value: &Arc<Value>,
    source_spans: &SpanTree,
    format: Format,
    writing: &Writing<'_>,
    limits: &Limits,
) -> Column {
    let (options, variant) = writing.options(format, limits);
    let written = match pipeline::write(writing.source(value, source_spans), format, &options) {
        Ok(written) => written,
        Err(WriteError::Encode(e)) => {
            return not_encoded(
                format,
                ColumnError {
                    offset: None,
                    path: Some(e.path),
                    message: e.message,
                },
            )
        }
        Err(e) => return not_encoded_because(format, &e.to_string()),
    };
    let document = match written.tree {
        Some(WrittenTree::Value(spans)) => Some(ColumnDoc {
            value: ColumnValue::Whole(Arc::clone(value)),
            spans: Arc::new(spans),
        }),
        Some(WrittenTree::Read(doc)) => Some(ColumnDoc::of(doc)),
        None => None,
    };
    column_of(
        format,
        column_bytes(written.bytes),
        written.notes,
        document,
        writing,
        variant,
    )
}

/// A column of `bytes` written as `format`, with what could not be written exactly and its
/// tree.
fn column_of(
    format: Format,
    bytes: SharedBytes,
    written_notes: Vec<WriteNote>,
    document: Option<ColumnDoc>,
    writing: &Writing<'_>,
    variant: Option<Variant>,
) -> Column {
    let schema = (format == Format::Protobuf).then(|| match writing.read_with {
        Some(m) => m.full_name().to_string(),
        None => "inferred schema (message Payload)".to_string(),
    });
    // The encoder's notes first, each found in the tree by its path; the others (grouped
    // fields, repaired text) name no node.
    let (encoder, others): (Vec<&WriteNote>, Vec<&WriteNote>) = written_notes
        .iter()
        .partition(|n| matches!(n, WriteNote::Fidelity(_)));
    let notes: Vec<FidelityNote> = encoder
        .into_iter()
        .chain(others)
        .map(WriteNote::fidelity)
        .collect();
    let note_nodes = match &document {
        Some(doc) => {
            let mut ids: Vec<NodeId> = written_notes
                .iter()
                .filter_map(|n| match n {
                    WriteNote::Fidelity(n) => Some(n),
                    _ => None,
                })
                .flat_map(|n| doc.spans.find(&n.path.pattern()))
                .collect();
            ids.sort();
            ids.dedup();
            ids
        }
        None => Vec::new(),
    };
    Column {
        format,
        is_source: false,
        sizes: None,
        bytes,
        document,
        notes,
        note_nodes,
        error: None,
        schema,
        variant,
        pending: false,
        deferred: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::sizes::Variant;

    #[test]
    fn large_columns_are_spilled_to_a_mapped_file_and_read_the_same() {
        let big: Vec<u8> = (0..SPILL_FROM).map(|i| (i % 253) as u8).collect();
        let held = column_bytes(big.clone());
        assert!(
            crate::mapped::is_mapped(&held),
            "a column of {SPILL_FROM} bytes is mapped"
        );
        assert_eq!(held, big[..]);
        let small = column_bytes(big[..SPILL_FROM - 1].to_vec());
        assert!(!crate::mapped::is_mapped(&small));
        assert_eq!(small, big[..SPILL_FROM - 1]);
    }

    #[test]
    fn a_walk_to_a_column_is_made_once() {
        use std::cell::Cell;
        let encoded = |bytes: Vec<u8>| codec::Encoded {
            format: Format::MessagePack,
            bytes,
            spans: SpanTree::default(),
            notes: Vec::new(),
        };
        let output: Vec<u8> = (0..3 * crate::codec::output::SEND_EVERY)
            .map(|i| (i % 251) as u8)
            .collect();
        // A large column: written to the file as it is made, then mapped; walked once.
        let walks = Cell::new(0);
        let made = walk_to_column(true, |sink| {
            walks.set(walks.get() + 1);
            let sink = sink.expect("a large column's walk is given the file");
            for piece in output.chunks(1000) {
                sink.write_all(piece).ok()?;
            }
            Some(Ok(encoded(Vec::new())))
        });
        let Some(Ok((_, bytes))) = made else {
            panic!("written: {made:?}");
        };
        assert_eq!(walks.get(), 1);
        assert!(crate::mapped::is_mapped(&bytes) && bytes == output[..]);
        // A small one is held, as the walk wrote it.
        let made = walk_to_column(false, |sink| {
            assert!(sink.is_none());
            Some(Ok(encoded(output[..10].to_vec())))
        });
        let Some(Ok((_, bytes))) = made else {
            panic!("held: {made:?}");
        };
        assert!(!crate::mapped::is_mapped(&bytes) && bytes == output[..10]);
        // A walk that gives up on its own (its file was fine) is not made again, nor is one
        // that finds an error.
        let error = codec::EncodeError {
            format: Format::MessagePack,
            path: crate::model::Path::root(),
            message: "no".into(),
        };
        for gives in [None, Some(Err(error))] {
            walks.set(0);
            let made = walk_to_column(true, |_| {
                walks.set(walks.get() + 1);
                gives.clone()
            });
            assert_eq!(walks.get(), 1, "{gives:?}");
            assert_eq!(made.is_none(), gives.is_none());
        }
    }

    /// Everything a column shows, its values read node by node.
    fn shown(column: &Column) -> String {
        let mut out = format!(
            "{:?} bytes {} notes {:?} note nodes {:?} error {:?} schema {:?} variant {:?}\n",
            column.format,
            column.bytes.len(),
            column.notes,
            column.note_nodes,
            column.error,
            column.schema,
            column.variant
        );
        out.push_str(&format!("{:?}\n", &column.bytes[..]));
        if let Some(doc) = &column.document {
            for (i, node) in doc.spans.nodes().enumerate() {
                let id = NodeId(i as u32);
                let value = doc.value_at(id);
                let leaf = value.as_ref().filter(|v| !v.kind().is_container());
                out.push_str(&format!(
                    "{} {node:?} {:?} {:?}\n",
                    doc.spans.path(id),
                    doc.summary(id, 40),
                    leaf
                ));
            }
        }
        out
    }

    /// The analysis of `bytes` read on demand, peeled as the app peels a large source with
    /// ranking walking the payload ([`OpenRequest::walk_from`], here from 0 bytes) and the
    /// analysis taking ranking's skeleton: `None` when ranking did not walk it.
    fn from_ranking(
        bytes: &SharedBytes,
        hint: Format,
        choice: &Choice,
        schemas: &SchemaSet,
    ) -> Option<Analysis> {
        let limits = Limits::default();
        let mut open_request = OpenRequest::new(Layers::Best, limits);
        open_request.walk_from = 0;
        open_request.hint = Some(hint);
        let mut opened = pipeline::open(bytes, &open_request).expect("opens");
        let (0, known) = opened.take_walked()? else {
            return None;
        };
        let request = AnalysisRequest {
            bytes,
            origin: Origin::hinted(Some(hint)),
            choice,
            schemas,
            limits: &limits,
        };
        let head = HeadStart {
            known: Some(known),
            protobuf: None,
        };
        let ctx = JobContext::unwatched();
        Some(analyze_sized(request, &ctx, &|_| {}, 0, head).expect("analysed"))
    }

    /// A payload read on demand shows what the same payload decoded whole shows, in every
    /// column: bytes, notes, trees, and every node's value and summary.
    #[test]
    fn read_on_demand_shows_what_the_whole_value_shows() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for name in [
            "orders-api.json",
            "transactions-1k.json",
            "iot-metrics.json",
            "risk-batch.json",
            "order-graphql.json",
            "user-profile.json",
        ] {
            files.push(root.join("samples").join(name));
        }
        for name in ["twitter.json", "citm_catalog.json", "canada.json"] {
            files.push(root.join("tests/data/json-bench").join(name));
        }
        let mut schemas = SchemaSet::default();
        let proto = std::fs::read_to_string(root.join("samples").join("transactions.proto"))
            .expect("schema");
        schemas
            .load_proto_source("transactions.proto", &proto)
            .expect("compiles");
        let limits = Limits::default();
        let ctx = JobContext::unwatched();
        let (mut on_demand, mut binary_sources, mut walked) = (0, 0, 0);
        // A top-level array of records, as many APIs answer.
        let records = std::fs::read(root.join("samples/transactions-1k.json")).expect("file");
        let records: serde_json::Value = serde_json::from_slice(&records).expect("JSON");
        let list = serde_json::to_vec(&records["transactions"]).expect("JSON");
        // What the encoders write notes for or cannot write alike: integers past 2^64, decimals
        // past float64, escapes, nulls, empty containers, a key that is no identifier.
        let odd: Vec<String> = (0..300)
            .map(|i| {
                format!(
                    r#"{{"id":{i},"big":{},"dec":{},"s":"a\"b\\c\u00e9\n{i}","n":null,"e":[],"o":{{}},"x-y":[{i},{{"z":1}}]}}"#,
                    if i % 3 == 0 { "12345678901234567890123" } else { "7" },
                    if i % 7 == 0 { "1e400" } else { "0.1" },
                )
            })
            .collect();
        let odd = format!(r#"{{"items":[{}],"meta":{{"k":[]}}}}"#, odd.join(","));
        let mut inputs: Vec<(String, Vec<u8>)> = vec![
            ("a top-level array".into(), list),
            ("odd values".into(), odd.into_bytes()),
        ];
        for path in &files {
            inputs.push((
                path.display().to_string(),
                std::fs::read(path).expect("file"),
            ));
        }
        // The same documents as MessagePack and as CBOR, and the samples of both (extensions,
        // tags, binary, integer keys and the rest among them); each with the format its file
        // name would suggest.
        let mut all: Vec<(String, Vec<u8>, Format)> = Vec::new();
        for (name, bytes) in &inputs {
            let doc = codec::decode(bytes, Format::Json, &DecodeOptions::default()).expect("JSON");
            let options = EncodeOptions::default();
            for to in [Format::MessagePack, Format::Cbor] {
                let encoded = codec::encode_fast(&doc.value, to, &options).expect("encodes");
                all.push((format!("{name} as {}", to.title()), encoded.bytes, to));
            }
        }
        for (name, bytes) in inputs {
            all.push((name, bytes, Format::Json));
        }
        for name in [
            "edge-cases.msgpack",
            "transactions-1k.msgpack",
            "user-profile.msgpack",
            "edge-cases.cbor",
            "iot-metrics.cbor",
            "transactions-1k.cbor",
        ] {
            let path = root.join("samples").join(name);
            let format = Format::from_extension(name.rsplit('.').next().unwrap_or_default())
                .expect("a format");
            all.push((name.into(), std::fs::read(path).expect("file"), format));
        }
        for (name, bytes, hint) in &all {
            let bytes = SharedBytes::from(bytes.clone());
            for encoding in [None, Some(Variant::Canonical)] {
                for with_schema in [false, true] {
                    let choice = Choice {
                        encoding,
                        ..Choice::default()
                    };
                    let schemas = if with_schema {
                        schemas.clone()
                    } else {
                        SchemaSet::default()
                    };
                    let run = |from| {
                        let request = AnalysisRequest {
                            bytes: &bytes,
                            origin: Origin::hinted(Some(*hint)),
                            choice: &choice,
                            schemas: &schemas,
                            limits: &limits,
                        };
                        analyze_sized(request, &ctx, &|_| {}, from, HeadStart::default())
                            .expect("analysed")
                    };
                    let (whole, read) = (run(usize::MAX), run(0));
                    let name = format!("{name} {encoding:?} schema {with_schema}");
                    // Peeled as the app peels, the payload walked by ranking: the analysis
                    // takes ranking's skeleton and shows what it shows having walked it itself.
                    if let Some(taken) = from_ranking(&bytes, *hint, &choice, &schemas) {
                        assert_eq!(taken.readings, read.readings, "{name}: walked readings");
                        let columns =
                            |a: &Analysis| a.columns.iter().map(shown).collect::<Vec<_>>();
                        assert!(columns(&taken) == columns(&read), "{name}: walked columns");
                        walked += 1;
                    }
                    assert_eq!(whole.columns.len(), read.columns.len(), "{name}");
                    let decoded = |a: &Analysis| a.source().is_some_and(|s| s.error.is_none());
                    assert!(decoded(&whole) && decoded(&read), "{name}: decodes");
                    let top_list = whole
                        .source()
                        .and_then(|c| c.document.as_ref())
                        .and_then(|d| d.spans.root().map(|r| d.spans.kind(r)))
                        == Some(crate::model::Kind::Array);
                    for (w, r) in whole.columns.iter().zip(&read.columns) {
                        if top_list && w.format == Format::Protobuf {
                            wrapped_list_reads_the_source((&bytes, read.format), w, r, &name);
                            on_demand += 1;
                            continue;
                        }
                        let (sw, sr) = (shown(w), shown(r));
                        let first = sw.lines().zip(sr.lines()).find(|(a, b)| a != b);
                        assert!(
                            sw == sr,
                            "{name}: {:?}: first difference {first:?}",
                            w.format
                        );
                        // A column the encoder refused has no tree, in both.
                        let Some(doc) = r.document.as_ref() else {
                            continue;
                        };
                        on_demand += usize::from(!doc.is_whole());
                        if r.is_source && r.format != Format::Json && !doc.is_whole() {
                            binary_sources += 1;
                        }
                        if r.is_source {
                            // Profiling and diff take the whole value: read again, the same.
                            let whole_doc = w.document.as_ref().expect("a tree");
                            assert_eq!(doc.whole(), whole_doc.whole(), "{name}: whole value");
                        }
                    }
                    assert_eq!(whole.readings, read.readings, "{name}: readings");
                }
            }
        }
        assert!(on_demand > 100, "{on_demand} columns read on demand");
        // Every JSON input at least, four ways each.
        assert!(
            walked >= 4 * 11,
            "{walked} analyses took ranking's skeleton"
        );
        // Every MessagePack and CBOR input, four ways each.
        let binary = all.iter().filter(|(_, _, f)| *f != Format::Json).count();
        assert_eq!(
            binary_sources,
            4 * binary,
            "MessagePack and CBOR sources read on demand"
        );
    }

    /// A column left deferred and encoded later is the column the full analysis made: for
    /// JSON, MessagePack, CBOR and protobuf sources, with and without a schema (protobuf's JSON
    /// names, grouped repeated fields), in a variant.
    #[test]
    fn deferred_columns_are_what_the_analysis_writes() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let mut schemas = SchemaSet::default();
        let proto = std::fs::read_to_string(root.join("transactions.proto")).expect("schema");
        schemas
            .load_proto_source("transactions.proto", &proto)
            .expect("compiles");
        let (limits, ctx) = (Limits::default(), JobContext::unwatched());
        let mut deferred = 0;
        for name in [
            "transactions-1k.json",
            "transactions-1k.pb",
            "transactions-1k.msgpack",
            "iot-metrics.cbor",
            "user-profile.pb",
        ] {
            let bytes = SharedBytes::from(std::fs::read(root.join(name)).expect("file"));
            for (encoding, schemas) in [
                (None, schemas.clone()),
                (Some(Variant::Canonical), schemas.clone()),
                (None, SchemaSet::default()),
            ] {
                let run = |choice: &Choice| {
                    let request = AnalysisRequest {
                        bytes: &bytes,
                        origin: Origin::default(),
                        choice,
                        schemas: &schemas,
                        limits: &limits,
                    };
                    analyze_sized(request, &ctx, &|_| {}, 0, HeadStart::default())
                        .expect("analysed")
                };
                let all = Choice {
                    encoding,
                    ..Choice::default()
                };
                let hidden = Choice {
                    hidden: Format::ALL.to_vec(),
                    ..all.clone()
                };
                let (full, some) = (run(&all), run(&hidden));
                for column in some.columns.iter().filter(|c| !c.is_source) {
                    assert!(column.deferred, "{name}: {:?} deferred", column.format);
                    let made = encode_deferred(&some, column.format, &hidden, &schemas, &limits)
                        .expect("the source decoded");
                    let want = full.column(column.format).expect("the full column");
                    assert_eq!(
                        shown(&made),
                        shown(want),
                        "{name} {encoding:?}: {:?}",
                        column.format
                    );
                    assert_eq!(made.sizes, want.sizes, "{name}: {:?} sizes", column.format);
                    deferred += 1;
                }
            }
        }
        assert_eq!(deferred, 5 * 4 * 3);
    }

    /// The protobuf column of a top-level array (wrapped in `items` by the inferred schema):
    /// the same bytes, notes and tree as the whole value's, its nodes read from the source at
    /// their paths without `items` (the whole value's column reads its own bytes back instead,
    /// since its paths are not the source's).
    fn wrapped_list_reads_the_source(
        (source, format): (&[u8], Format),
        whole: &Column,
        read: &Column,
        name: &str,
    ) {
        assert!(whole.bytes == read.bytes, "{name}: protobuf bytes");
        assert_eq!(whole.notes, read.notes, "{name}: protobuf notes");
        let (w, r) = (
            whole.document.as_ref().expect("a tree"),
            read.document.as_ref().expect("a tree"),
        );
        assert!(
            !r.is_whole(),
            "{name}: the protobuf column reads the source"
        );
        let nodes = |t: &SpanTree| t.nodes().map(|n| format!("{n:?}")).collect::<Vec<_>>();
        assert_eq!(nodes(&w.spans), nodes(&r.spans), "{name}: protobuf tree");
        let doc = codec::decode(source, format, &DecodeOptions::default()).expect("decodes");
        for i in 0..r.spans.len() {
            let id = NodeId(i as u32);
            let path = r.spans.path(id);
            let segments = path.segments();
            let at = Path::from_segments(segments.get(1..).unwrap_or_default().to_vec());
            let want = doc.spans.find(&at)[0];
            let want = doc.spans.value_of(&doc.value, want).expect("a value");
            if !want.kind().is_container() {
                assert_eq!(r.value_at(id).as_deref(), Some(want), "{name}: {path}");
            }
        }
    }
}
