//! Schema-less protobuf decoding.

use crate::codec::{DecodeError, DecodeOptions, Document, ErrorKind, Format};
use crate::model::Path;

/// Decodes any protobuf bytes without a schema.
pub fn decode(_bytes: &[u8], _options: &DecodeOptions) -> Result<Document, DecodeError> {
    Err(DecodeError {
        format: Format::Protobuf,
        kind: ErrorKind::Invalid,
        offset: 0,
        path: Path::root(),
        message: "schema-less protobuf decoding is not available yet".into(),
        partial: None,
    })
}
