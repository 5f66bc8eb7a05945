//! Schema-guided protobuf decoding and encoding, with spans.

use super::MessageDescriptor;
use crate::codec::{
    DecodeError, DecodeOptions, Document, EncodeError, EncodeOptions, Encoded, ErrorKind, Format,
};
use crate::model::{Path, Value};

/// Decodes `bytes` as one `message`.
pub fn decode(
    _bytes: &[u8],
    message: &MessageDescriptor,
    _options: &DecodeOptions,
) -> Result<Document, DecodeError> {
    Err(DecodeError {
        format: Format::Protobuf,
        kind: ErrorKind::Invalid,
        offset: 0,
        path: Path::root(),
        message: format!("decoding {} is not available yet", message.full_name()),
        partial: None,
    })
}

/// Encodes `value` as one `message`.
pub fn encode(
    _value: &Value,
    message: &MessageDescriptor,
    _options: &EncodeOptions,
) -> Result<Encoded, EncodeError> {
    Err(EncodeError {
        format: Format::Protobuf,
        path: Path::root(),
        message: format!("encoding {} is not available yet", message.full_name()),
    })
}
