//! Schema-guided protobuf: decode bytes with a message type into a value with spans, and encode
//! a value into a message type.

mod decode;
mod encode;

pub use decode::{decode, decode_stats, to_proto3_json, DecodeStats};
pub use encode::encode;
