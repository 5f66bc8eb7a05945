//! Inferred protobuf schemas.

use crate::codec::{EncodeError, EncodeOptions, Encoded, Format};
use crate::model::{Path, Value};

/// Encodes `value` into a message type inferred from it.
pub fn encode_inferred(_value: &Value, _options: &EncodeOptions) -> Result<Encoded, EncodeError> {
    Err(EncodeError {
        format: Format::Protobuf,
        path: Path::root(),
        message: "encoding without a schema is not available yet".into(),
    })
}
