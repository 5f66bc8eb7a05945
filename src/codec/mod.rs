//! Decoding bytes into a [`Document`] and encoding a [`Value`] into any [`Format`].
//!
//! Every decoder here tracks byte spans: the result is the value *and* a [`SpanTree`] saying
//! which bytes hold each node. Every encoder produces the same for the bytes it writes, plus the
//! [`FidelityNote`]s for what the target format could not say.
//!
//! Decoders never recurse on input nesting (they keep an explicit stack and stop at
//! [`Limits::max_depth`]), never size an allocation by an untrusted length before the bytes
//! are there, and on failure return a [`DecodeError`] with the byte offset, the path and the
//! partial document decoded so far. Encoders recurse over the value, whose depth the decoders
//! bounded.

pub mod avro;
pub mod cbor;
pub mod detect;
pub mod json;
pub mod msgpack;
mod note;
pub(crate) mod output;
pub mod protobuf;
mod repeats;
pub(crate) mod shape;
pub mod stream;

use std::fmt;

pub use note::{FidelityNote, NoteKind, Notes};

pub use crate::limits::LimitName;
use crate::limits::Limits;
use crate::model::{Path, RawField, SpanTree, SpanTreeBuilder, Value};

/// A wire format wirelens decodes and encodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Format {
    /// JSON text (RFC 8259).
    Json,
    /// MessagePack.
    MessagePack,
    /// CBOR (RFC 8949).
    Cbor,
    /// Protocol Buffers, with a message type from the user's schema, or without one.
    Protobuf,
    /// Apache Avro binary datums, with the writer's schema (the user's, a container file's or a
    /// registry's) or, when writing, one inferred from the value.
    Avro,
}

impl Format {
    /// Every format, in the order the side-by-side view shows them.
    pub const ALL: [Format; 5] = [
        Format::Json,
        Format::MessagePack,
        Format::Cbor,
        Format::Protobuf,
        Format::Avro,
    ];

    /// The name used on the command line and in reports: `json`, `msgpack`, `cbor`, `protobuf`,
    /// `avro`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::MessagePack => "msgpack",
            Format::Cbor => "cbor",
            Format::Protobuf => "protobuf",
            Format::Avro => "avro",
        }
    }

    /// The name people write: `JSON`, `MessagePack`, `CBOR`.
    pub fn title(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::MessagePack => "MessagePack",
            Format::Cbor => "CBOR",
            Format::Protobuf => "Protobuf",
            Format::Avro => "Avro",
        }
    }

    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::MessagePack => "msgpack",
            Format::Cbor => "cbor",
            Format::Protobuf => "pb",
            Format::Avro => "avro",
        }
    }

    /// The format a file extension suggests (`json`, `msgpack`/`mpk`/`mp`, `cbor`).
    pub fn from_extension(ext: &str) -> Option<Format> {
        match ext.to_ascii_lowercase().as_str() {
            "json" | "geojson" => Some(Format::Json),
            "msgpack" | "mpk" | "mp" | "msgp" => Some(Format::MessagePack),
            "cbor" => Some(Format::Cbor),
            "pb" | "binpb" | "protobuf" | "proto3" => Some(Format::Protobuf),
            "avro" | "avrobin" => Some(Format::Avro),
            _ => None,
        }
    }

    /// Parses a name as [`Format::name`] writes it (also `messagepack`, `mp`).
    pub fn from_name(name: &str) -> Option<Format> {
        match name.to_ascii_lowercase().as_str() {
            "json" => Some(Format::Json),
            "msgpack" | "messagepack" | "mp" => Some(Format::MessagePack),
            "cbor" => Some(Format::Cbor),
            "protobuf" | "proto" | "pb" => Some(Format::Protobuf),
            "avro" => Some(Format::Avro),
            _ => None,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A decoded buffer: the value and the spans of its nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The format it was decoded from.
    pub format: Format,
    /// What the bytes say.
    pub value: Value,
    /// Which bytes say it.
    pub spans: SpanTree,
}

/// Settings for decoding.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecodeOptions {
    /// Bounds on what the input may cost; the decoders use [`Limits::max_depth`] (deepest nesting
    /// of arrays and maps accepted, the root container is depth 1),
    /// [`Limits::max_nodes`], [`Limits::max_protobuf_scan`] and [`Limits::max_protobuf_nodes`].
    pub limits: Limits,
    /// The protobuf message type to decode with; `None` decodes protobuf without a schema.
    pub message: Option<protobuf::MessageDescriptor>,
    /// Without a schema: the user's reading of fields at patterns (`--read '$.1[*].2=bytes'`),
    /// instead of the decoder's guess ([`protobuf::wire::FieldReading`]).
    pub protobuf_readings: Vec<protobuf::wire::FieldReading>,
    /// The Avro writer's schema; without one, Avro is not read (its bytes carry no types).
    pub avro: Option<avro::AvroSchema>,
    /// The Avro reader's schema: the data, decoded by the writer's schema, is read as this
    /// schema reads it (the specification's schema resolution; [`avro::resolved`]).
    pub avro_reader: Option<avro::AvroSchema>,
    /// Avro bytes that hold this many datums back to back (a container file's block), read as
    /// the array of them; `None`: one datum.
    pub avro_items: Option<u64>,
}

impl DecodeOptions {
    /// The default nesting limit.
    pub const DEFAULT_MAX_DEPTH: usize = Limits::DEFAULT_MAX_DEPTH;

    /// Default options with another nesting limit.
    pub fn with_max_depth(max_depth: usize) -> DecodeOptions {
        let mut options = DecodeOptions::default();
        options.limits.max_depth = max_depth;
        options
    }
}

/// The class of a decoding failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The bytes are not well-formed in this format.
    Syntax,
    /// The input ended in the middle of a value.
    Eof,
    /// Well-formed but not valid: invalid UTF-8 in text, a reserved value, a bad timestamp.
    Invalid,
    /// A limit was reached: which one ([`Limits::max_depth`], [`Limits::max_nodes`],
    /// [`Limits::max_protobuf_nodes`]).
    Limit(LimitName),
    /// A complete value was followed by more bytes.
    TrailingData,
}

/// Decoding failed: what, where (byte offset and path) and the partial document decoded so far.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// The format being decoded.
    pub format: Format,
    /// The class of failure.
    pub kind: ErrorKind,
    /// Offset of the offending byte in the input.
    pub offset: usize,
    /// Path of the node being decoded when it failed.
    pub path: Path,
    /// What was wrong, in a plain sentence.
    pub message: String,
    /// Everything decoded up to the failure, with open containers closed at `offset`.
    pub partial: Option<Box<Document>>,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error at byte {} ({}): {}: {}",
            self.offset,
            self.path.brief(),
            self.format.title(),
            self.message
        )
    }
}

impl std::error::Error for DecodeError {}

/// How encoders choose the width of floats.
///
/// The default is [`FloatPolicy::Keep`], because that is what the libraries people send these
/// formats with write: a JSON number with a fraction or exponent is a float64 to every JSON
/// library, and Python's `msgpack.packb`, `cbor2.dumps`, rmp-serde with `f64` and most others
/// write it as a float64 (`tests/fixtures/library-bytes/` holds their bytes, and a test checks
/// wirelens' default encodings against them). [`FloatPolicy::Shortest`] is the variant that
/// shows what narrowing would save.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FloatPolicy {
    /// The width the value had; where the format lacks it (float16 in MessagePack), the next wider
    /// one, with a note. What the reference libraries write.
    #[default]
    Keep,
    /// The narrowest width the format has that holds the value exactly (CBOR's preferred
    /// serialization, RFC 8949 §4.1; in MessagePack float32 when exact, else float64).
    Shortest,
}

/// Settings for encoding.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EncodeOptions {
    /// Deterministic output: map entries sorted (CBOR: core deterministic encoding, keys by
    /// bytewise order of their encodings; MessagePack likewise; JSON: by UTF-16 code units as in
    /// RFC 8785), floats shortest.
    pub canonical: bool,
    /// How float widths are chosen.
    pub floats: FloatPolicy,
    /// Indented output (JSON only: two spaces, one entry per line).
    pub pretty: bool,
    /// The protobuf message type to encode into; `None` infers one from the value (with a
    /// [`NoteKind::SchemaInferred`] note).
    pub message: Option<protobuf::MessageDescriptor>,
    /// The Avro schema to write by; `None` infers one from the value (with a
    /// [`NoteKind::SchemaInferred`] note).
    pub avro: Option<avro::AvroSchema>,
    /// Where the Avro schema is inferred: logical types for text that always holds one (UUIDs,
    /// RFC 3339 timestamps; [`avro::infer::InferOptions::logical`]).
    pub avro_logical: bool,
}

/// Encoded bytes with their spans and what the format could not say.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// The format written.
    pub format: Format,
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Which bytes hold each node, with the same paths as the source value.
    pub spans: SpanTree,
    /// What could not be said exactly.
    pub notes: Vec<FidelityNote>,
}

impl Encoded {
    /// Nothing written yet.
    pub(crate) fn empty(format: Format) -> Encoded {
        Encoded {
            format,
            bytes: Vec::new(),
            spans: SpanTree::default(),
            notes: Vec::new(),
        }
    }
}

/// How a container addresses the child being encoded: what encoders without spans keep to give
/// a note its path.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'v> {
    /// An array item.
    Index(usize),
    /// The value of a map entry with this key.
    Key(&'v Value),
}

impl Step<'_> {
    /// The path segment, as [`crate::model::SpanTreeBuilder::segment_for_key`] names keys.
    pub(crate) fn segment(self) -> crate::model::PathSegment {
        use crate::model::PathSegment;
        match self {
            Step::Index(i) => PathSegment::Index(i),
            Step::Key(Value::Text(s)) => PathSegment::Key(s.to_string()),
            Step::Key(other) => PathSegment::OtherKey(other.summary(48)),
        }
    }

    /// The path of the steps from the root.
    pub(crate) fn path(steps: &[Step<'_>]) -> Path {
        let mut path = Path::root();
        for step in steps {
            path.push(step.segment());
        }
        path
    }
}

/// Encoding failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot encode {} as {format}: {message}", .path.brief())]
pub struct EncodeError {
    /// The target format.
    pub format: Format,
    /// The node that could not be written.
    pub path: Path,
    /// Why.
    pub message: String,
}

/// Decodes `bytes` as `format`, with spans.
pub fn decode(
    bytes: &[u8],
    format: Format,
    options: &DecodeOptions,
) -> Result<Document, DecodeError> {
    match format {
        Format::Json => json::decode(bytes, options),
        Format::MessagePack => msgpack::decode(bytes, options),
        Format::Cbor => cbor::decode(bytes, options),
        Format::Protobuf => protobuf::decode(bytes, options),
        Format::Avro => avro::decode(bytes, options),
    }
}

/// Decodes `bytes` as `format` like [`decode`], for the value only: JSON is read without
/// building spans.
pub fn decode_value(
    bytes: &[u8],
    format: Format,
    options: &DecodeOptions,
) -> Result<Value, DecodeError> {
    if format == Format::Json {
        if let Some((value, _)) = json::value_and_nodes(bytes, options) {
            return Ok(value);
        }
    }
    decode(bytes, format, options).map(|doc| doc.value)
}

/// Encodes `value` as `format`, with spans and fidelity notes.
///
/// The encoders recurse over the value. A value nested deeper than [`SHALLOW`] levels is encoded
/// on a helper thread whose stack is sized by its nesting, so a deep value (up to
/// [`Limits::DEPTH_CEILING`] and beyond) cannot overflow the caller's stack, whichever thread
/// that is (a rayon worker, the GUI thread).
pub fn encode(
    value: &Value,
    format: Format,
    options: &EncodeOptions,
) -> Result<Encoded, EncodeError> {
    if let Some(own) = Own::of(format) {
        return shallow_or_deep(value, format, |depth| {
            own.encode(value, options, Spans::On, depth).map(|(e, _)| e)
        });
    }
    on_deep_stack(value, || encode_here(value, format, options))
}

/// Encodes `value` as `format` like [`encode`], without recording the spans of the output:
/// the bytes and notes are [`encode`]'s, [`Encoded::spans`] is empty. For callers that only
/// want the bytes (converting a file, timing an encode); JSON, MessagePack and CBOR skip the
/// span bookkeeping (a value that gets a note or an error is encoded again with it, since notes
/// are placed by the spans' paths), protobuf records spans and drops them.
pub fn encode_fast(
    value: &Value,
    format: Format,
    options: &EncodeOptions,
) -> Result<Encoded, EncodeError> {
    let Some(own) = Own::of(format) else {
        return on_deep_stack(value, || {
            let mut encoded = encode_here(value, format, options)?;
            encoded.spans = SpanTree::default();
            Ok(encoded)
        });
    };
    shallow_or_deep(value, format, |depth| {
        if let Some((bytes, notes)) = own.plain(value, options, depth) {
            return Ok(Encoded {
                bytes,
                notes,
                ..Encoded::empty(format)
            });
        }
        let mut encoded = match own.encode(value, options, Spans::Off, depth)? {
            (encoded, true) => encoded,
            (_, false) => own.encode(value, options, Spans::On, depth)?.0,
        };
        encoded.spans = SpanTree::default();
        Ok(encoded)
    })
}

/// Encodes `value` as `format` like [`encode`], for a value whose spans in another encoding
/// are `like`: the output's tree takes `like`'s shape where it has the same one (every
/// MessagePack, CBOR and JSON encoding of a value of JSON's types does), so the two trees keep one copy of it
/// ([`SpanTree::shares_shape_with`]) and the new one is never built whole first.
pub fn encode_like(
    value: &Value,
    format: Format,
    options: &EncodeOptions,
    like: &SpanTree,
) -> Result<Encoded, EncodeError> {
    if let Some(own) = Own::of(format) {
        return shallow_or_deep(value, format, |depth| {
            own.encode(value, options, Spans::Like(like), depth)
                .map(|(e, _)| e)
        });
    }
    on_deep_stack(value, || encode_here(value, format, options))
}

/// The formats whose encoders count their nesting as they go ([`Depth`]): JSON, MessagePack
/// and CBOR.
#[derive(Clone, Copy)]
enum Own {
    Json,
    MessagePack,
    Cbor,
}

impl Own {
    fn of(format: Format) -> Option<Own> {
        match format {
            Format::Json => Some(Own::Json),
            Format::MessagePack => Some(Own::MessagePack),
            Format::Cbor => Some(Own::Cbor),
            Format::Protobuf | Format::Avro => None,
        }
    }

    /// The format's plain path: the bytes of a value without spans, and its notes (JSON's on
    /// integers beyond ±2^53; the binary formats' plain values need none).
    fn plain(
        self,
        value: &Value,
        options: &EncodeOptions,
        depth: Depth,
    ) -> Option<(Vec<u8>, Vec<FidelityNote>)> {
        match self {
            Own::Json => json::encode_plain(value, options, depth),
            Own::MessagePack => {
                msgpack::encode_plain(value, options, depth).map(|b| (b, Vec::new()))
            }
            Own::Cbor => cbor::encode_plain(value, options, depth).map(|b| (b, Vec::new())),
        }
    }

    /// The format's `encode_with`.
    fn encode(
        self,
        value: &Value,
        options: &EncodeOptions,
        spans: Spans<'_>,
        depth: Depth,
    ) -> Result<(Encoded, bool), Stop> {
        match self {
            Own::Json => json::encode_with(value, options, spans, depth),
            Own::MessagePack => msgpack::encode_with(value, options, spans, depth),
            Own::Cbor => cbor::encode_with(value, options, spans, depth),
        }
    }
}

/// How deep an encoder may nest (containers and tags open at once) before it stops with
/// [`Stop::Deep`]: [`SHALLOW`] on the caller's stack, unbounded on a stack sized for the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Depth(pub(crate) usize);

impl Depth {
    /// No bound: the encoder runs on a stack sized for the value (or the caller takes the risk,
    /// as the formats' own `encode` functions always did).
    pub(crate) const ANY: Depth = Depth(usize::MAX);
}

/// Why an encoder with a [`Depth`] bound stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The value cannot be encoded.
    Error(EncodeError),
    /// The value nests deeper than the bound: it is to be encoded again on a deeper stack.
    Deep,
}

/// What an encoder returns as it stops for depth, having raised its `deep` flag: a placeholder
/// error (the caller sees the flag and encodes the value again on a deeper stack, see
/// [`Stop::Deep`]).
pub(crate) fn stop_deep(deep: &mut bool, format: Format) -> EncodeError {
    *deep = true;
    EncodeError {
        format,
        path: Path::root(),
        message: String::new(),
    }
}

impl From<EncodeError> for Stop {
    fn from(e: EncodeError) -> Stop {
        Stop::Error(e)
    }
}

impl Stop {
    /// The error, where the encoder ran without a bound (it never stops for depth then).
    pub(crate) fn unbounded(self, format: Format) -> EncodeError {
        match self {
            Stop::Error(e) => e,
            Stop::Deep => EncodeError {
                format,
                path: Path::root(),
                message: "nested deeper than the encoder was allowed to go".into(),
            },
        }
    }
}

/// Runs `work` with the [`SHALLOW`] bound here; if the value turns out deeper, again without a
/// bound on a thread with a stack sized for its nesting. The encoders count their nesting as
/// they write, so the common shallow value is not walked first to measure it.
fn shallow_or_deep(
    value: &Value,
    format: Format,
    work: impl Fn(Depth) -> Result<Encoded, Stop> + Sync,
) -> Result<Encoded, EncodeError> {
    match work(Depth(SHALLOW)) {
        Ok(encoded) => Ok(encoded),
        Err(Stop::Error(e)) => Err(e),
        Err(Stop::Deep) => {
            let stack =
                (1usize << 20).saturating_add(nesting(value).saturating_mul(STACK_PER_LEVEL));
            on_stack("wirelens-encode", stack, || {
                work(Depth::ANY).map_err(|stop| stop.unbounded(format))
            })
        }
    }
}

/// Whether and how an encoder records the spans of its output.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Spans<'a> {
    /// The bytes only.
    Off,
    /// The spans, in a tree of their own.
    On,
    /// The spans, in a tree expected to have this one's shape ([`encode_like`]).
    Like(&'a SpanTree),
    /// The spans, added to the builder held here, which grafts them into a bigger document's
    /// tree ([`encode_grafted`]); the encoder takes it and puts it back when it succeeds.
    Graft(&'a std::sync::Mutex<SpanTreeBuilder>),
}

impl Spans<'_> {
    /// Whether spans are recorded.
    pub(crate) fn on(self) -> bool {
        !matches!(self, Spans::Off)
    }

    /// The builder for the spans of `value`'s encoding. With spans, it has room for every node
    /// at once: a large document's tree is not grown by doubling (which briefly held twice the
    /// tree, for each of the app's encoders at once).
    pub(crate) fn builder(self, value: &Value) -> SpanTreeBuilder {
        match self {
            Spans::Off => SpanTreeBuilder::new(),
            Spans::On => SpanTreeBuilder::with_capacity(value.node_count()),
            Spans::Like(tree) => SpanTreeBuilder::like(tree),
            Spans::Graft(held) => held
                .lock()
                .map(|mut b| std::mem::take(&mut *b))
                .unwrap_or_default(),
        }
    }

    /// The tree of the spans `builder` recorded; with [`Spans::Graft`], the builder goes back
    /// where it came from and the tree is empty.
    pub(crate) fn finish(self, builder: SpanTreeBuilder) -> SpanTree {
        match self {
            Spans::Graft(held) => {
                if let Ok(mut b) = held.lock() {
                    *b = builder;
                }
                SpanTree::default()
            }
            _ => builder.finish(),
        }
    }
}

/// Encodes `value` (nested at most [`SHALLOW`] levels: [`is_shallow`]) as `format` like
/// [`encode`], its spans added to `builder`, which grafts them into a bigger document's tree
/// ([`SpanTreeBuilder::graft`]): the bytes and notes, with empty spans, and the builder. `None`
/// where [`encode`] fails, or for a format whose encoder does not graft (protobuf, Avro).
pub(crate) fn encode_grafted(
    value: &Value,
    format: Format,
    options: &EncodeOptions,
    builder: SpanTreeBuilder,
) -> Option<(Encoded, SpanTreeBuilder)> {
    let own = Own::of(format)?;
    let held = std::sync::Mutex::new(builder);
    let (encoded, _) = own
        .encode(value, options, Spans::Graft(&held), Depth(SHALLOW))
        .ok()?;
    Some((encoded, held.into_inner().ok()?))
}

/// Whether `value` is nested at most [`SHALLOW`] levels: encoded on the caller's stack.
pub(crate) fn is_shallow(value: &Value) -> bool {
    nesting_within(value, SHALLOW)
}

/// Runs `work` here, or for a value nested deeper than [`SHALLOW`] on a thread with a stack
/// sized for it.
fn on_deep_stack(
    value: &Value,
    work: impl Fn() -> Result<Encoded, EncodeError> + Sync,
) -> Result<Encoded, EncodeError> {
    if nesting_within(value, SHALLOW) {
        return work();
    }
    let stack = (1usize << 20).saturating_add(nesting(value).saturating_mul(STACK_PER_LEVEL));
    on_stack("wirelens-encode", stack, work)
}

/// Runs `work` on a thread named `name` with `stack` bytes of stack, waiting for it (a panic
/// in it goes on here); where no thread is to be had, here.
pub(crate) fn on_stack<T: Send>(name: &str, stack: usize, work: impl Fn() -> T + Sync) -> T {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name(name.into())
            .stack_size(stack)
            .spawn_scoped(scope, &work);
        match worker {
            Ok(handle) => match handle.join() {
                Ok(result) => result,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(_) => work(),
        }
    })
}

/// Nesting (containers and tags) up to which [`encode`] runs on the caller's stack: well inside
/// a 256 KiB stack at every optimisation level we build with.
pub const SHALLOW: usize = 64;

/// Stack given to the encoding thread per level of nesting (measured frames are under 1 KiB at
/// opt-level 1; unoptimised builds use several times that).
const STACK_PER_LEVEL: usize = 8 << 10;

/// Deepest nesting of containers and tags in `value`, without recursion.
fn nesting(value: &Value) -> usize {
    nesting_up_to(value, usize::MAX)
}

/// Whether `value` nests no deeper than `limit`, without recursion.
fn nesting_within(value: &Value, limit: usize) -> bool {
    nesting_up_to(value, limit) <= limit
}

/// The nesting of `value` (the depth of its deepest node, the root at 0), or the first depth
/// past `limit` found. Only containers and tags go on the stack: scalars, the bulk of most
/// values, only count for the depth of their parent's items.
fn nesting_up_to(value: &Value, limit: usize) -> usize {
    let is_nest = |v: &Value| matches!(v, Value::Array(_) | Value::Map(_) | Value::Tag(..));
    let mut deepest = 0;
    let mut stack = Vec::new();
    if is_nest(value) {
        stack.push((value, 0usize));
    }
    while let Some((v, d)) = stack.pop() {
        let inner = d + 1;
        let mut children = 0usize;
        let mut child = |c| {
            children += 1;
            if is_nest(c) {
                stack.push((c, inner));
            }
        };
        match v {
            Value::Array(items) => items.iter().for_each(&mut child),
            Value::Map(entries) => {
                for (k, val) in entries {
                    child(k);
                    child(val);
                }
            }
            Value::Tag(_, inner_value) => child(inner_value),
            _ => {}
        }
        if children > 0 {
            deepest = deepest.max(inner);
        }
        if deepest > limit {
            return deepest;
        }
    }
    deepest
}

fn encode_here(
    value: &Value,
    format: Format,
    options: &EncodeOptions,
) -> Result<Encoded, EncodeError> {
    match format {
        Format::Json => json::encode(value, options),
        Format::MessagePack => msgpack::encode(value, options),
        Format::Cbor => cbor::encode(value, options),
        Format::Protobuf => protobuf::encode(value, options),
        Format::Avro => avro::encode(value, options),
    }
}

/// The note for a protobuf field without a schema written to a format that cannot keep its wire
/// type.
pub(crate) fn raw_field_note(raw: &RawField) -> String {
    format!(
        "protobuf field of wire type {} ({} bytes) has no schema meaning; its raw bytes are written",
        raw.wire_type.name(),
        raw.data.len()
    )
}

#[cfg(test)]
mod nesting_tests {
    use super::*;

    /// Every node's depth, the plain way: what [`nesting`] must agree with.
    fn reference(value: &Value) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(value, 0usize)];
        while let Some((v, d)) = stack.pop() {
            deepest = deepest.max(d);
            match v {
                Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
                Value::Map(entries) => {
                    for (k, val) in entries {
                        stack.push((k, d + 1));
                        stack.push((val, d + 1));
                    }
                }
                Value::Tag(_, inner) => stack.push((inner, d + 1)),
                _ => {}
            }
        }
        deepest
    }

    #[test]
    fn nesting_counts_every_node() {
        let nested = |n: usize, leaf: Value| {
            (0..n).fold(leaf, |v, i| {
                if i % 3 == 0 {
                    Value::Array(vec![Value::Int(1), v])
                } else if i % 3 == 1 {
                    Value::Map(vec![(Value::text("k"), v)])
                } else {
                    Value::Tag(7, Box::new(v))
                }
            })
        };
        let cases = [
            Value::Int(1),
            Value::Array(vec![]),
            Value::Array(vec![Value::Int(1)]),
            Value::Array(vec![Value::Array(vec![])]),
            Value::Map(vec![(Value::Array(vec![Value::Null]), Value::Int(2))]),
            nested(5, Value::Null),
            nested(70, Value::Array(vec![])),
            nested(200, Value::text("x")),
        ];
        for v in &cases {
            assert_eq!(nesting(v), reference(v), "{}", v.summary(60));
            for limit in [0, 1, 3, SHALLOW] {
                assert_eq!(nesting_within(v, limit), reference(v) <= limit);
            }
        }
    }
}

#[cfg(test)]
mod like_tests {
    use super::*;

    /// Samples decoded and encoded as each format: an encoding made like the source's tree has
    /// the tree a plain encode makes, holding the source's shape instead of a copy wherever the
    /// shapes are the same (the edge cases' MessagePack extensions and non-text keys make other
    /// shapes in JSON and CBOR).
    #[test]
    fn encodings_like_the_source_share_its_shape_and_have_the_same_spans() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let samples = [
            ("order-graphql.json", Format::Json),
            ("iot-metrics.cbor", Format::Cbor),
            ("edge-cases.msgpack", Format::MessagePack),
            ("transactions-1k.json", Format::Json),
        ];
        let mut shared = 0;
        for (name, from) in samples {
            let bytes = std::fs::read(dir.join(name)).expect("sample");
            let doc = decode(&bytes, from, &DecodeOptions::default()).expect("decodes");
            for to in [Format::Json, Format::MessagePack, Format::Cbor] {
                let options = EncodeOptions::default();
                let plain = encode(&doc.value, to, &options).expect("encodes");
                let like = encode_like(&doc.value, to, &options, &doc.spans).expect("encodes");
                assert_eq!(like.bytes, plain.bytes, "{name} as {to:?}");
                assert_eq!(like.spans, plain.spans, "{name} as {to:?}");
                // Shared exactly when the shapes are the same.
                let same_shape = plain.spans.clone().share_shape(&doc.spans);
                assert_eq!(
                    like.spans.shares_shape_with(&doc.spans),
                    same_shape,
                    "{name} as {to:?}"
                );
                shared += usize::from(same_shape);
            }
        }
        assert_eq!(
            shared, 10,
            "every encoding but the edge cases' JSON and CBOR"
        );
    }
}

#[cfg(test)]
mod plain_tests {
    use super::*;

    /// Values with and without what needs a note, in every format the plain paths cover.
    fn values() -> Vec<Value> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let mut values: Vec<Value> = [
            ("order-graphql.json", Format::Json),
            ("iot-metrics.cbor", Format::Cbor),
            ("edge-cases.msgpack", Format::MessagePack),
            ("edge-cases.cbor", Format::Cbor),
            ("risk-batch.json", Format::Json),
            ("transactions-1k.json", Format::Json),
        ]
        .into_iter()
        .map(|(name, from)| {
            let bytes = std::fs::read(dir.join(name)).expect("sample");
            decode(&bytes, from, &DecodeOptions::default())
                .expect("decodes")
                .value
        })
        .collect();
        let many: Vec<(Value, Value)> = (0..40)
            .map(|i| (Value::text(format!("k{i}").as_str()), Value::Int(i)))
            .collect();
        let mut repeated = many.clone();
        repeated.push((Value::text("k3"), Value::Null));
        // Ids beyond 2^53 at several paths, two of one pattern (one note counting both).
        let status = |id: i128| Value::object([("id", Value::Int(id)), ("n", Value::Int(1))]);
        values.push(Value::object([
            (
                "statuses",
                Value::Array(vec![status(1 << 60), status(7), status(-(1 << 61))]),
            ),
            ("meta", Value::object([("max_id", Value::Int(1 << 55))])),
        ]));
        values.push(Value::Int(1 << 54));
        values.extend([
            Value::Map(many),
            Value::Map(repeated),
            Value::object([("a", Value::Null), ("a", Value::Bool(true))]),
            Value::Map(vec![(Value::Int(1), Value::Null)]),
            Value::Array(vec![
                Value::Int(-(1 << 60)),
                Value::Int(1 << 54),
                Value::Int(-33),
                Value::f64(-0.0),
                Value::f64(1e300),
                Value::Float(crate::model::Float::f32(0.1)),
                Value::Float(crate::model::Float::f16(half::f16::from_f64(0.5))),
                Value::text("tab\there \"quoted\" é"),
                Value::Bytes(vec![1, 2, 3]),
                Value::Tag(1, Box::new(Value::Int(5))),
                Value::Undefined,
            ]),
        ]);
        values
    }

    /// The plain path writes exactly what the full encoders write, bytes and notes, for every
    /// value it takes.
    #[test]
    fn plain_bytes_are_the_full_encoders_bytes() {
        let shortest = EncodeOptions {
            floats: FloatPolicy::Shortest,
            ..EncodeOptions::default()
        };
        let (mut plain, mut noted) = (0, 0);
        for value in values() {
            for format in [Format::Json, Format::MessagePack, Format::Cbor] {
                for options in [&EncodeOptions::default(), &shortest] {
                    let own = Own::of(format).expect("own encoder");
                    let full = own.encode(&value, options, Spans::On, Depth::ANY);
                    let Some((bytes, notes)) = own.plain(&value, options, Depth::ANY) else {
                        continue;
                    };
                    plain += 1;
                    let Ok((full, _)) = full else {
                        panic!("{format:?}: the plain path took a value the encoder refuses");
                    };
                    assert_eq!(bytes, full.bytes, "{format:?} {}", value.summary(60));
                    assert_eq!(notes, full.notes, "{format:?} {}", value.summary(60));
                    noted += usize::from(!notes.is_empty());
                    let fast = encode_fast(&value, format, options).expect("encodes");
                    assert_eq!((fast.bytes, fast.notes), (bytes, notes));
                }
            }
        }
        assert!(plain >= 12, "the plain path took {plain} encodings");
        // JSON of the ids beyond 2^53, with both float policies.
        assert!(noted >= 2, "the plain path noted {noted} encodings");
    }

    /// A value deeper than the bound gives up on the plain path and in the encoders, and is
    /// encoded all the same.
    #[test]
    fn deep_values_are_encoded_past_the_bound() {
        let deep = (0..SHALLOW + 5).fold(Value::Int(1), |v, i| {
            if i % 2 == 0 {
                Value::Array(vec![v])
            } else {
                Value::object([("k", v)])
            }
        });
        for format in [Format::Json, Format::MessagePack, Format::Cbor] {
            let own = Own::of(format).expect("own encoder");
            let options = EncodeOptions::default();
            assert!(own.plain(&deep, &options, Depth(SHALLOW)).is_none());
            assert!(matches!(
                own.encode(&deep, &options, Spans::On, Depth(SHALLOW)),
                Err(Stop::Deep)
            ));
            let (bounded, _) = own.plain(&deep, &options, Depth::ANY).expect("plain");
            assert_eq!(
                encode_fast(&deep, format, &options).expect("fast").bytes,
                bounded
            );
            assert_eq!(
                encode(&deep, format, &options).expect("full").bytes,
                bounded
            );
        }
    }
}
