//! Protocol Buffers: schemas, schema-guided and schema-less decoding with byte spans, encoding,
//! inferred schemas, and message framing.
//!
//! - [`schema`]: load `.proto` files (compiled in-process) or descriptor sets; list and rank
//!   message types.
//! - [`dynamic`]: decode bytes with a message type into a [`Value`] with a
//!   span per field, and encode a value into a message type (the proto3 JSON mapping's rules).
//! - [`editions`]: editions 2023 and 2024 (descriptor sets lowered to proto2, `.proto` text
//!   compiled by the vendored protoc), and each element's resolved features.
//! - [`wire`]: decode any protobuf bytes without a schema, keeping every plausible reading.
//! - [`infer`]: a `.proto` that can carry a JSON/MessagePack/CBOR payload.
//! - [`framing`]: split gRPC bodies and length-delimited streams into messages.
//! - [`repeated`]: group a schema-less message's repeated field numbers into arrays, for formats
//!   whose maps cannot repeat a key.
//!
//! # How a message becomes a `Value`
//! A message is a map whose keys are the field names as written in the `.proto`, in the order the
//! fields appear on the wire. Repeated fields are arrays, map fields maps (keys typed), enums
//! their value's name (the number when the enum does not name it), 64-bit integers `Int`,
//! `float` a float32, `bytes` bytes. Fields not on the wire are absent (no defaults are filled
//! in). Unknown fields are entries keyed by their field number (an `Int` key) whose value is a
//! [`RawField`](crate::model::RawField). Extensions are keyed `[full.name]`. Well-known types
//! read naturally: `Timestamp` as a timestamp, `Duration` as `"1.5s"` text, wrappers as their
//! inner value, `Struct`/`Value`/`ListValue` as maps, values and arrays, `Any` as a map with
//! `"@type"` and the packed message's fields (or its `"value"` bytes when the type is unknown).

pub mod dynamic;
pub mod editions;
mod error;
pub mod framing;
pub mod infer;
pub mod repeated;
pub mod schema;
mod varint;
pub mod wire;

/// What [`RootParts::items`] hands each run of items to: the index of the run's first item and
/// the items.
pub(crate) type EachRun<'a> = dyn FnMut(usize, &[Value]) -> Result<(), EncodeError> + 'a;

/// A document's root map held in parts by a caller that walks its bytes ([`crate::codec::stream`])
/// instead of holding its value whole: the keys, and each entry's value whole or, for an array,
/// its items a run at a time. Inferring a schema and encoding the root message both read it.
pub(crate) trait RootParts {
    /// The root map's keys, in order (distinct). A root that is an array is held as a map of
    /// one entry, `items` ([`RootParts::is_list`]), as the inferred schema wraps it.
    fn keys(&self) -> &[Value];
    /// Whether the root is an array, held as the one entry `items`.
    fn is_list(&self) -> bool;
    /// Entry `i`'s value; `None` when the walk gave up.
    fn value(&mut self, i: usize) -> Option<Value>;
    /// Entry `i`'s items, when it is a non-empty array: `each` gets every run of them with the
    /// index of the run's first item.
    fn items(&mut self, i: usize, each: &mut EachRun<'_>) -> Result<Walked, EncodeError>;
}

/// What [`RootParts::items`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Walked {
    /// Every item went to `each`.
    Items,
    /// The entry is no array, or an empty one: nothing went to `each`.
    NotItems,
    /// The walk gave up (an input the decoder would refuse, a limit): the caller works the
    /// ordinary way.
    GaveUp,
}

pub use prost_reflect::{DescriptorPool, MessageDescriptor};

use crate::codec::{DecodeError, DecodeOptions, Document, EncodeError, EncodeOptions, Encoded};
use crate::model::Value;

/// Decodes with `options.message` when given, else without a schema ([`wire::decode`]).
pub fn decode(bytes: &[u8], options: &DecodeOptions) -> Result<Document, DecodeError> {
    match &options.message {
        Some(message) => dynamic::decode(bytes, message, options),
        None => wire::decode(bytes, options),
    }
}

/// Encodes into `options.message` when given, else into a message type inferred from the value.
pub fn encode(value: &Value, options: &EncodeOptions) -> Result<Encoded, EncodeError> {
    match &options.message {
        Some(message) => dynamic::encode(value, message, options),
        None => infer::encode_inferred(value, options),
    }
}
