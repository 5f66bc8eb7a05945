//! The proto3 JSON mapping of a payload read with its schema, as protoc's `MessageToJson` writes
//! it: [`to_proto3_json`] reads the bytes as protobuf's runtimes read them before writing JSON
//! (`decode_for_json`: a field whose wire type contradicts the schema, a payload cut short or
//! malformed, a checked string that is not UTF-8 are refused, each with the field and byte
//! offset) and writes the value with wirelens' one writer (`proto3_value.rs`, whose module docs
//! list every rule, what is refused and the notes).
//!
//! prost-reflect is not used to write JSON: its serializer is the tests' oracle (the text is its
//! text wherever it writes one). Where wirelens refuses a payload, the error names the message
//! type, the field (`package.Message.field`) and the byte offset, and for what has no JSON form
//! (a `Timestamp` out of range…) the JSON path too; the offset of such a value is its field's
//! tag (the first occurrence, where occurrences merge).
//!
//! Not done here: the decoded value with spans (`decode/`), which reads a `utf8_validation =
//! NONE` string that is not UTF-8 as bytes.

use prost_reflect::{Kind as PKind, MessageDescriptor};

use super::decode::{decode_for_json, Tables};
use super::proto3_stream::fields;
use super::proto3_value::{Failure, Proto3Json, Proto3JsonOptions, Step, Writer};

/// The proto3 JSON mapping of `bytes` read as `message`: lowerCamelCase field names (each
/// field's `json_name`) unless [`Proto3JsonOptions::proto_names`]. The payload is read as
/// protobuf's runtimes read it before writing JSON (see the module docs); what they refuse is
/// refused here, saying what and where.
pub fn to_proto3_json(
    bytes: &[u8],
    message: &MessageDescriptor,
    options: Proto3JsonOptions,
) -> Result<Proto3Json, Proto3JsonError> {
    let value =
        decode_for_json(bytes, message, &mut Tables::new()).map_err(|r| Proto3JsonError::Read {
            message: message.full_name().to_string(),
            within: r.field.unwrap_or(r.message),
            offset: r.offset,
            reason: r.reason,
        })?;
    let mut out = Vec::new();
    let notes = Writer::new(message, options)
        .write(&value, message, true, &mut out)
        .map_err(|f| write_error(f, bytes, message))?;
    let text = String::from_utf8(out)?;
    Ok(Proto3Json { text, notes })
}

/// Why [`to_proto3_json`] wrote no JSON, saying where: the field (`package.Message.field`) and
/// the byte offset in the payload.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Proto3JsonError {
    /// The payload does not read as the message type (cut short, a malformed tag or length, a
    /// field whose wire type contradicts the schema, a string that is not UTF-8).
    #[error("cannot read {message}: {reason} (in {within}, at byte {offset})")]
    Read {
        /// The message type's full name.
        message: String,
        /// The field being read (`package.Message.field`, `[package.extension]`), or the
        /// message type being read between fields.
        within: String,
        /// Where in the payload.
        offset: usize,
        /// What is wrong there.
        reason: String,
    },
    /// The payload read, but has no proto3 JSON form (a well-known type out of its range, an
    /// `Any` of a type not in the schema, a number JSON cannot write in a
    /// `google.protobuf.Value`, messages nested past `MAX_DEPTH`).
    #[error("cannot write {message} as proto3 JSON: {reason} (at {path}, in {within}, at byte {offset})")]
    Write {
        /// The message type's full name.
        message: String,
        /// The JSON path of the value (`$.a.b[2]`).
        path: String,
        /// The innermost field on the path (`package.Message.field`), or the message type.
        within: String,
        /// Where in the payload: the tag of the field on the path (its first occurrence, where
        /// occurrences merge).
        offset: usize,
        /// What has no JSON form.
        reason: String,
    },
    /// The JSON written is not UTF-8.
    #[error(transparent)]
    NotUtf8(#[from] std::string::FromUtf8Error),
}

/// The error for a [`Failure`] of writing `bytes` read as `message`.
fn write_error(failure: Failure, bytes: &[u8], message: &MessageDescriptor) -> Proto3JsonError {
    let name = message.full_name().to_string();
    match failure {
        Failure::Refused(r) => Proto3JsonError::Write {
            within: r.field.unwrap_or_else(|| name.clone()),
            offset: locate(bytes, message, &r.steps),
            message: name,
            path: r.path,
            reason: r.reason,
        },
        Failure::Reread(what) => Proto3JsonError::Write {
            within: name.clone(),
            message: name,
            path: "$".into(),
            offset: 0,
            reason: format!("wirelens cannot write what it read ({what})"),
        },
    }
}

/// The offset in `bytes`, read as `desc`, of the tag of the field the path `steps` ends in:
/// each field's first occurrence (the `Index`th for an item of a repeated message field),
/// going no further than a field that is not a message, an `Any` or a malformed message.
fn locate(bytes: &[u8], desc: &MessageDescriptor, steps: &[Step]) -> usize {
    let mut found = 0;
    let mut base = 0;
    let mut slice = bytes;
    let mut desc = desc.clone();
    let mut i = 0;
    while let Some(Step::Field(number)) = steps.get(i) {
        if desc.full_name() == "google.protobuf.Any" && *number > 2 {
            break;
        }
        let Some(occurrences) = fields(slice) else {
            break;
        };
        let index = match steps.get(i + 1) {
            Some(Step::Index(k)) => {
                i += 1;
                *k
            }
            _ => 0,
        };
        let mut matching = occurrences.iter().filter(|o| o.number == *number);
        let Some(o) = matching.clone().nth(index).or_else(|| matching.next()) else {
            break;
        };
        found = base + o.start;
        i += 1;
        let kind = desc
            .get_field(*number)
            .map(|f| f.kind())
            .or_else(|| desc.get_extension(*number).map(|e| e.kind()));
        match (kind, slice.get(o.value..o.end)) {
            (Some(PKind::Message(m)), Some(inner)) if o.wire == 2 => {
                base += o.value;
                slice = inner;
                desc = m;
            }
            _ => break,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::protobuf::schema::Schema;

    fn message(source: &str, name: &str) -> MessageDescriptor {
        let schema = Schema::from_proto_source("t.proto", source).expect("compiles");
        schema.message(name).expect("type")
    }

    #[test]
    fn a_payload_cut_short_names_the_field_and_the_offset() {
        let m = message(
            "syntax = \"proto3\"; package t; message M { string s = 1; }",
            "t.M",
        );
        // Field 1 says 5 bytes follow; none do.
        let err =
            to_proto3_json(&[0x0a, 0x05], &m, Proto3JsonOptions::default()).expect_err("cut short");
        assert_eq!(
            err.to_string(),
            "cannot read t.M: length 5 of field 1 runs past the end of the input (0 bytes \
             left) (in t.M.s, at byte 1)"
        );
    }
}
