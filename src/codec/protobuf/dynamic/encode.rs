//! Schema-guided protobuf encoding, with spans.

use crate::codec::protobuf::MessageDescriptor;
use crate::codec::{EncodeError, EncodeOptions, Encoded, Format};
use crate::model::{Path, Value};

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
