//! placeholder
use super::{DecodeError, DecodeOptions, Document, EncodeError, EncodeOptions, Encoded};
use crate::model::Value;

/// Decodes.
pub fn decode(_bytes: &[u8], _options: &DecodeOptions) -> Result<Document, DecodeError> {
    unimplemented!()
}

/// Encodes.
pub fn encode(_value: &Value, _options: &EncodeOptions) -> Result<Encoded, EncodeError> {
    unimplemented!()
}
