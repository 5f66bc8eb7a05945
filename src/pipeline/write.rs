//! The encode stage, once: how a payload that was read is written as a format.
//!
//! `convert` and the app's columns both call [`write()`], so a payload's bytes in a format are the
//! same whichever face writes them. It makes every choice of what is written:
//! - protobuf read with its message type and written as JSON is the proto3 JSON mapping (JSON
//!   names unless [`WriteOptions::proto_names`]), as protoc's `MessageToJson` writes it, by
//!   wirelens' one proto3 JSON writer: from the decoded value ([`proto3_json_of_value`]) or,
//!   where the value cannot say it, from the payload's bytes read for their JSON
//!   ([`to_proto3_json`], which also says what it refuses, with the field and byte offset);
//! - protobuf read without a schema repeats a field number once per occurrence, so in JSON,
//!   MessagePack, CBOR and Avro a repeated number becomes one key whose value is the array of its
//!   occurrences (JSON readers keep only the last of duplicate keys);
//! - protobuf output is written with the message type asked for, or one inferred from the value,
//!   and is refused when a schema is loaded but no type was named ([`ProtobufType`]);
//! - the variant (canonical, shortest floats), indenting, the Avro schema;
//! - what could not be said exactly, as typed [`WriteNote`]s.
//!
//! With [`WriteOptions::spans`] the output's tree comes too ([`WrittenTree`]): the encoder's
//! own spans where they line up with the value node for node, else the output read back.
//!
//! A document too large to hold decoded is written a chunk at a time instead, with the same
//! choices: [`write_streamed`] (JSON, MessagePack and CBOR, by `codec::stream`) and
//! [`write_proto3_streamed`] (protobuf to proto3 JSON, by `protobuf::dynamic::proto3_stream`),
//! each `None` where the walk does not apply; a test holds each to the whole document's output.
//! The app's on-demand columns of a payload read as a skeleton walk the same way with spans
//! (`workspace::analysis`), with [`WriteOptions::encode_options`].

use std::borrow::Cow;

use crate::codec::avro::AvroSchema;
use crate::codec::protobuf::dynamic::{
    proto3_json_of_value, to_proto3_json, to_proto3_json_streamed, Proto3JsonError,
    Proto3JsonOptions,
};
use crate::codec::protobuf::infer;
use crate::codec::protobuf::repeated::group_repeated_fields;
use crate::codec::protobuf::MessageDescriptor;
use crate::codec::{
    self, stream, DecodeOptions, Document, EncodeError, EncodeOptions, FidelityNote, FloatPolicy,
    Format, NoteKind,
};
use crate::limits::Limits;
use crate::model::{NodeId, Path, SpanTree, Value};

/// A payload that was read, as [`write()`] takes it.
#[derive(Debug, Clone)]
pub struct Decoded<'a> {
    /// The format it was read as.
    pub format: Format,
    /// Its value: borrowed where the caller keeps it, owned where it may be let go as it is
    /// written.
    pub value: Cow<'a, Value>,
    /// Its span tree in the payload, if the caller has it: an encoding with spans then shares
    /// its shape ([`codec::encode_like`]).
    pub spans: Option<&'a SpanTree>,
    /// The payload's bytes (read again for their proto3 JSON where the value cannot say it).
    pub bytes: &'a [u8],
    /// The message type protobuf was read with, if any.
    pub message: Option<&'a MessageDescriptor>,
}

/// Which message type protobuf output is written with.
#[derive(Debug, Clone, Copy, Default)]
pub enum ProtobufType<'a> {
    /// One inferred from the value (with a [`NoteKind::SchemaInferred`] note).
    #[default]
    Inferred,
    /// This one.
    Named(&'a MessageDescriptor),
    /// A schema is loaded but none of its types was named: which one to write is the user's
    /// choice, so protobuf output is refused ([`WriteError::MessageNotNamed`]).
    Unnamed,
}

/// How [`write()`] writes.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions<'a> {
    /// Indented JSON.
    pub pretty: bool,
    /// proto3 JSON keeps the `.proto` field names instead of their JSON names.
    pub proto_names: bool,
    /// Deterministic output (sorted keys, shortest floats).
    pub canonical: bool,
    /// How float widths are chosen.
    pub floats: FloatPolicy,
    /// The message type protobuf output is written with.
    pub protobuf: ProtobufType<'a>,
    /// The Avro schema Avro output is written by; `None` infers one.
    pub avro: Option<&'a AvroSchema>,
    /// Where the Avro schema is inferred: logical types for text that always holds one.
    pub avro_logical: bool,
    /// Give the output's tree ([`Written::tree`]).
    pub spans: bool,
    /// Bounds on every decode made while writing: a streamed input read a chunk at a time, the
    /// output read back for its tree.
    pub limits: Limits,
}

impl WriteOptions<'_> {
    /// The encoder's options for `format`: the protobuf message type only for protobuf, the
    /// Avro schema only for Avro. `None` when protobuf is asked for without a message type
    /// named where one must be ([`ProtobufType::Unnamed`]). The streamed conversions write with
    /// these too.
    pub fn encode_options(&self, format: Format) -> Option<EncodeOptions> {
        let message = match (format, self.protobuf) {
            (Format::Protobuf, ProtobufType::Unnamed) => return None,
            (Format::Protobuf, ProtobufType::Named(m)) => Some(m.clone()),
            _ => None,
        };
        Some(EncodeOptions {
            canonical: self.canonical,
            floats: self.floats,
            pretty: self.pretty,
            message,
            avro: self.avro.filter(|_| format == Format::Avro).cloned(),
            avro_logical: self.avro_logical,
        })
    }
}

/// Something written that does not say exactly what the payload had.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteNote {
    /// What the target format could not say as the value has it (the encoder's notes).
    Fidelity(FidelityNote),
    /// Protobuf read without a schema: a field number repeated in one message, written as one
    /// key whose value is the array of its occurrences ("field 2 occurs 3 times at $.1: written
    /// as an array").
    Grouped(String),
    /// proto3 JSON: a string field with `utf8_validation = NONE` whose bytes are not UTF-8,
    /// written with U+FFFD for each bad sequence (the sentence names the field and gives its
    /// bytes in base64).
    Repaired(String),
    /// Text whose bytes are not all UTF-8: this many invalid sequences are written as U+FFFD.
    NotUtf8 {
        /// How many.
        invalid: usize,
    },
}

impl WriteNote {
    /// The note as the app's columns list it: a [`FidelityNote`] placed at its path (the root
    /// where the note names no node).
    pub fn fidelity(&self) -> FidelityNote {
        let at_root = |kind, message: &str| FidelityNote {
            kind,
            path: Path::root(),
            count: 1,
            message: message.to_string(),
        };
        match self {
            WriteNote::Fidelity(note) => note.clone(),
            WriteNote::Grouped(message) => at_root(NoteKind::DuplicateKey, message),
            WriteNote::Repaired(message) => at_root(NoteKind::TextRepaired, message),
            WriteNote::NotUtf8 { .. } => at_root(NoteKind::TextRepaired, &self.to_string()),
        }
    }
}

impl std::fmt::Display for WriteNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteNote::Fidelity(note) => note.fmt(f),
            WriteNote::Grouped(message) | WriteNote::Repaired(message) => f.write_str(message),
            WriteNote::NotUtf8 { invalid } => write!(
                f,
                "the text is not all UTF-8; {invalid} invalid sequence(s) are written as U+FFFD"
            ),
        }
    }
}

/// The tree of what [`write()`] wrote.
#[derive(Debug, Clone)]
pub enum WrittenTree {
    /// The output's spans, node for node the value written: the [`Decoded`] value's own nodes
    /// (sharing its source tree's shape where it was given).
    Value(SpanTree),
    /// The output read back, where its shape is not the value's (a null protobuf does not
    /// write, repeated fields grouped into arrays, proto3 JSON). proto3 JSON of the source's
    /// shape takes the source's `.proto` keys in its tree and value, so a path selects the
    /// same field in every format.
    Read(Document),
}

/// What [`write()`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The format written.
    pub format: Format,
    /// The bytes (JSON without a final newline).
    pub bytes: Vec<u8>,
    /// What could not be said exactly, in the order it was found.
    pub notes: Vec<WriteNote>,
    /// The output's tree, with [`WriteOptions::spans`]; `None` without, or where the output
    /// does not read back within the limits.
    pub tree: Option<WrittenTree>,
}

impl Written {
    /// The nulls written to protobuf fields without presence, as their default: how many in
    /// all, and the first one's path. A reader cannot tell them from 0 or "".
    pub fn nulls_as_default(&self) -> Option<(usize, &Path)> {
        let mut nulls = self.notes.iter().filter_map(|n| match n {
            WriteNote::Fidelity(n) if n.kind == NoteKind::NullAsDefault => Some(n),
            _ => None,
        });
        let first = nulls.next()?;
        Some((
            first.count + nulls.map(|n| n.count).sum::<usize>(),
            &first.path,
        ))
    }
}

/// Why [`write()`] wrote nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// Protobuf output with a schema loaded and none of its types named.
    #[error("protobuf with a schema is written as a message type that is named")]
    MessageNotNamed,
    /// The encoder could not write a node.
    #[error(transparent)]
    Encode(EncodeError),
    /// The payload does not read as its message type for proto3 JSON, or has no proto3 JSON
    /// form (the error names the field and the byte offset).
    #[error(transparent)]
    Proto3Json(Proto3JsonError),
}

/// Writes `source` as `format`, as `options` say (see the module docs for every choice made).
pub fn write(
    source: Decoded<'_>,
    format: Format,
    options: &WriteOptions<'_>,
) -> Result<Written, WriteError> {
    if let (Format::Json, Format::Protobuf, Some(message)) = (format, source.format, source.message)
    {
        return proto3_json(source, message, options);
    }
    let encode_options = options
        .encode_options(format)
        .ok_or(WriteError::MessageNotNamed)?;
    let mut notes = Vec::new();
    // Protobuf read without a schema repeats a field number once per occurrence; the other
    // formats' maps get one key per field, its occurrences an array.
    let groups =
        source.format == Format::Protobuf && source.message.is_none() && format != Format::Protobuf;
    let (value, grouped) = if groups {
        let (grouped, said) = group_repeated_fields(source.value.into_owned());
        let changed = !said.is_empty();
        notes.extend(said.into_iter().map(WriteNote::Grouped));
        (Cow::Owned(grouped), changed)
    } else {
        (source.value, false)
    };
    let encoded = match (options.spans, source.spans) {
        (false, _) => codec::encode_fast(&value, format, &encode_options),
        // The source's value: its tree's shape is shared where the output's is the same.
        (true, Some(like)) if !grouped => codec::encode_like(&value, format, &encode_options, like),
        // Grouped fields are not the source's shape: the encoder's own spans.
        (true, _) => codec::encode(&value, format, &encode_options),
    }
    .map_err(WriteError::Encode)?;
    notes.extend(encoded.notes.into_iter().map(WriteNote::Fidelity));
    let tree = options.spans.then(|| {
        let spans = encoded.spans;
        let lines_up = if grouped {
            false
        } else if format == Format::Protobuf {
            // A protobuf encoding may leave nodes out (a null is not written): its tree still
            // fits the value when its nodes are found in it by path.
            spans_fit(&spans, |id| {
                spans
                    .value_of(&value, id)
                    .map(|v| v.untagged().kind().is_container())
            })
        } else {
            spans.len() == value.node_count()
        };
        if lines_up {
            return Some(WrittenTree::Value(spans));
        }
        // The Avro schema the bytes were written by: the given one, or the one inferred from
        // the value (as the encoder inferred it).
        let avro = match format {
            Format::Avro => encode_options
                .avro
                .clone()
                .or_else(|| codec::avro::schema_for(&value, &encode_options).ok()),
            _ => None,
        };
        // The message type the bytes were written with: the named one, or the inferred one.
        let read_with = match (format, encode_options.message) {
            (Format::Protobuf, Some(m)) => Some(m),
            (Format::Protobuf, None) => infer::infer(&value, &infer::InferOptions::default())
                .ok()
                .map(|i| i.message),
            _ => None,
        };
        let read_options = DecodeOptions {
            message: read_with,
            avro,
            limits: options.limits,
            ..DecodeOptions::default()
        };
        codec::decode(&encoded.bytes, format, &read_options)
            .ok()
            .map(WrittenTree::Read)
    });
    Ok(Written {
        format,
        bytes: encoded.bytes,
        notes,
        tree: tree.flatten(),
    })
}

/// `bytes`, one JSON, MessagePack or CBOR document read as `from`, written as `format` as
/// [`write()`] writes its value, a chunk at a time: the document is never held decoded (a 50 MB
/// JSON file converts in about twice its size). `None` where the walk does not apply, and
/// nothing was written: the bytes do not start with a map or an array, JSON that is a HAR
/// export (its entries are payloads to peel), protobuf output (written whole, by a message
/// type), or what the walk declines (pretty or canonical output, a repeated key at a walked
/// level, an error to report with its partial document).
pub fn write_streamed(
    bytes: &[u8],
    from: Format,
    format: Format,
    options: &WriteOptions<'_>,
) -> Option<Written> {
    let har = from == Format::Json
        && crate::capture::har::looks_like_har(
            bytes.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(bytes),
        );
    if format == Format::Protobuf || har || !stream::starts_with_container(bytes, from) {
        return None;
    }
    let encode_options = options.encode_options(format)?;
    let encoded = stream::transcode(bytes, from, format, &encode_options, &options.limits)?;
    Some(Written {
        format,
        bytes: encoded.bytes,
        notes: encoded.notes.into_iter().map(WriteNote::Fidelity).collect(),
        tree: None,
    })
}

/// `bytes`, protobuf read as `message`, written as its proto3 JSON a piece at a time: at most
/// one small piece of the payload is decoded at once, each written from its value as [`write()`]
/// writes the whole (each piece is read within the proto3 JSON reading's own limits, so a
/// caller with limits of its own calls [`write()`]). `None` where the walk does not
/// apply (pretty output, two members of one `oneof` in a walked message, a piece neither
/// writer reads), and nothing was written.
pub fn write_proto3_streamed(
    bytes: &[u8],
    message: &MessageDescriptor,
    options: &WriteOptions<'_>,
) -> Option<Written> {
    if options.pretty {
        return None;
    }
    let json = Proto3JsonOptions {
        proto_names: options.proto_names,
        pretty: false,
    };
    Some(Written {
        format: Format::Json,
        bytes: to_proto3_json_streamed(bytes, message, json)?,
        notes: Vec::new(),
        tree: None,
    })
}

/// A payload that is text (the protocol says so), written as one string in `format`: the text
/// is the value, no format is guessed under it. Bytes that are not UTF-8 are replaced, with a
/// [`WriteNote::NotUtf8`]. Protobuf output writes the string in an inferred message type.
pub fn write_text(
    bytes: &[u8],
    format: Format,
    options: &WriteOptions<'_>,
) -> Result<Written, WriteError> {
    let text = String::from_utf8_lossy(bytes);
    let mut notes = Vec::new();
    if let Cow::Owned(_) = &text {
        let invalid = text
            .chars()
            .filter(|&c| c == char::REPLACEMENT_CHARACTER)
            .count();
        notes.push(WriteNote::NotUtf8 { invalid });
    }
    let value = Value::text(text.as_ref());
    let options = WriteOptions {
        protobuf: ProtobufType::Inferred,
        ..options.clone()
    };
    let mut written = write(
        Decoded {
            format: Format::Json,
            value: Cow::Owned(value),
            spans: None,
            bytes,
            message: None,
        },
        format,
        &options,
    )?;
    notes.append(&mut written.notes);
    written.notes = notes;
    Ok(written)
}

/// Protobuf read as `message`, written as its proto3 JSON: from the value where it can say it,
/// else from the payload's bytes read again for their JSON ([`to_proto3_json`], the same
/// writer, which reports what it refuses). With spans, the text is read back for its tree.
///
/// The bytes are read again where the value does not say what the JSON needs (the list is
/// `proto3_json_of_value`'s):
/// - a field whose wire type contradicts the schema (the value keeps it as an unknown field):
///   the payload is refused, with the field and its byte offset;
/// - a well-known type other than `Struct` and `ListValue` that occurs more than once (its
///   natural form does not say which fields each occurrence set), a `Value` that may be a plain
///   message: the bytes are read with every well-known type as its plain message, which merges
///   as protobuf merges it;
/// - what has no JSON form (a `Timestamp` out of range, an `Any` of a type not in the schema…):
///   the error names the JSON path, the field and its byte offset;
/// - a string field with `utf8_validation = NONE` that is not UTF-8: the repaired text comes
///   with one note per field.
fn proto3_json(
    source: Decoded<'_>,
    message: &MessageDescriptor,
    options: &WriteOptions<'_>,
) -> Result<Written, WriteError> {
    let json = Proto3JsonOptions {
        proto_names: options.proto_names,
        pretty: options.pretty,
    };
    let Decoded {
        value,
        spans: source_spans,
        bytes,
        ..
    } = source;
    let (text, value, notes) = match proto3_json_of_value(&value, message, json) {
        Some(text) => (text, Some(value), Vec::new()),
        None => {
            // What the value cannot say (a string repaired with a note, a well-known type that
            // occurs twice, a refusal's byte offset; see `proto3_json_of_value`). Without a tree
            // to make, the value is let go first, so the two are never held at once.
            let value = options.spans.then_some(value);
            let written = to_proto3_json(bytes, message, json).map_err(WriteError::Proto3Json)?;
            let notes = written.notes.into_iter().map(WriteNote::Repaired).collect();
            (written.text, value, notes)
        }
    };
    let tree = match value {
        Some(value) if options.spans => {
            read_proto3_json(text.as_bytes(), &value, source_spans, options.limits)
        }
        _ => None,
    };
    Ok(Written {
        format: Format::Json,
        bytes: text.into_bytes(),
        notes,
        tree,
    })
}

/// proto3 JSON `text` read back for its tree. Where it has the source's shape the tree and
/// value take the source's keys (so a path selects the same field in every column); where the
/// mapping changed the shape (a well-known type written as a string, a default left out) they
/// keep the JSON's own.
fn read_proto3_json(
    text: &[u8],
    source: &Value,
    source_spans: Option<&SpanTree>,
    limits: Limits,
) -> Option<WrittenTree> {
    let read_options = DecodeOptions {
        limits,
        ..DecodeOptions::default()
    };
    let Document {
        value: mut json,
        spans,
        format,
    } = codec::decode(text, Format::Json, &read_options).ok()?;
    let spans = match source_spans {
        Some(source_spans) => match spans.with_keys_of(source_spans) {
            Ok(spans) => {
                // The same shape: the value takes the source's keys too, so that a node's value
                // is found by the keys its tree now has.
                keys_from(&mut json, source, 0);
                spans
            }
            Err(spans) => spans,
        },
        None => spans,
    };
    Some(WrittenTree::Read(Document {
        format,
        value: json,
        spans,
    }))
}

/// Gives `json`'s map keys the keys `source` has at the same places (entry by entry, where the
/// two have the same shape: [`SpanTree::with_keys_of`] checked it). Recursive, within the depth
/// the decoder already held both to.
fn keys_from(json: &mut Value, source: &Value, depth: usize) {
    if depth > Limits::default().depth().max(1024) {
        return;
    }
    match (json, source.untagged()) {
        (Value::Map(mine), Value::Map(theirs)) if mine.len() == theirs.len() => {
            for ((key, item), (their_key, their_item)) in mine.iter_mut().zip(theirs) {
                *key = their_key.clone();
                keys_from(item, their_item, depth + 1);
            }
        }
        (Value::Array(mine), Value::Array(theirs)) if mine.len() == theirs.len() => {
            for (item, their_item) in mine.iter_mut().zip(theirs) {
                keys_from(item, their_item, depth + 1);
            }
        }
        _ => {}
    }
}

/// Whether every node of `spans` (sampled: at most 512, evenly spread, and the last) is found
/// in the written value by its path, a container where the tree has one, so the output's tree
/// is the value's with its own spans (an encoding that wrapped the value does not fit).
/// `is_container` says, for a node of `spans`, whether its value there is a container (`None`:
/// no value there).
fn spans_fit(spans: &SpanTree, is_container: impl Fn(NodeId) -> Option<bool>) -> bool {
    let n = spans.len();
    if n == 0 {
        return false;
    }
    let step = (n / 512).max(1);
    (0..n).step_by(step).chain(std::iter::once(n - 1)).all(|i| {
        let id = NodeId(i as u32);
        is_container(id) == Some(spans.kind(id).is_container())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::protobuf::schema::Schema;

    const PROFILE: &str = r#"syntax = "proto3";
package t;
message Profile {
  uint64 user_id = 1;
  string name = 2;
  repeated string roles = 3;
}"#;

    fn profile() -> MessageDescriptor {
        Schema::from_proto_source("t.proto", PROFILE)
            .and_then(|s| s.message("t.Profile"))
            .expect("the schema compiles")
    }

    fn decoded(bytes: &[u8], format: Format, message: Option<&MessageDescriptor>) -> Document {
        let options = DecodeOptions {
            message: message.cloned(),
            ..DecodeOptions::default()
        };
        codec::decode(bytes, format, &options).expect("decodes")
    }

    fn source<'a>(
        doc: &'a Document,
        bytes: &'a [u8],
        message: Option<&'a MessageDescriptor>,
    ) -> Decoded<'a> {
        Decoded {
            format: doc.format,
            value: Cow::Borrowed(&doc.value),
            spans: Some(&doc.spans),
            bytes,
            message,
        }
    }

    // user_id 7, name "a", roles "x" and "y".
    const PROFILE_BYTES: &[u8] = &[
        0x08, 0x07, 0x12, 0x01, b'a', 0x1a, 0x01, b'x', 0x1a, 0x01, b'y',
    ];

    #[test]
    fn protobuf_with_its_type_is_proto3_json_and_without_it_grouped() {
        let message = profile();
        let doc = decoded(PROFILE_BYTES, Format::Protobuf, Some(&message));
        let options = WriteOptions {
            spans: true,
            ..WriteOptions::default()
        };
        let written = write(
            source(&doc, PROFILE_BYTES, Some(&message)),
            Format::Json,
            &options,
        )
        .expect("writes");
        assert_eq!(
            String::from_utf8_lossy(&written.bytes),
            r#"{"userId":"7","name":"a","roles":["x","y"]}"#
        );
        // Read back, with the source's `.proto` keys where the shapes match.
        let Some(WrittenTree::Read(tree)) = &written.tree else {
            panic!("read back: {:?}", written.tree);
        };
        let path = Path::parse("$.user_id").expect("path");
        assert_eq!(tree.spans.find(&path).len(), 1);

        let doc = decoded(PROFILE_BYTES, Format::Protobuf, None);
        let written =
            write(source(&doc, PROFILE_BYTES, None), Format::Json, &options).expect("writes");
        assert_eq!(
            String::from_utf8_lossy(&written.bytes),
            r#"{"1":7,"2":"a","3":["x","y"]}"#
        );
        assert!(
            written
                .notes
                .iter()
                .any(|n| matches!(n, WriteNote::Grouped(s) if s.contains("field 3"))),
            "{:?}",
            written.notes
        );
        assert!(matches!(written.tree, Some(WrittenTree::Read(_))));
        // Without spans, no tree, the same bytes.
        let plain = write(
            source(&doc, PROFILE_BYTES, None),
            Format::Json,
            &WriteOptions::default(),
        )
        .expect("writes");
        assert_eq!((plain.bytes, plain.tree.is_none()), (written.bytes, true));
    }

    #[test]
    fn protobuf_output_needs_a_named_type_where_a_schema_is_loaded() {
        let json = br#"{"user_id": null, "name": null, "roles": ["r"]}"#;
        let doc = decoded(json, Format::Json, None);
        let unnamed = WriteOptions {
            protobuf: ProtobufType::Unnamed,
            ..WriteOptions::default()
        };
        assert!(matches!(
            write(source(&doc, json, None), Format::Protobuf, &unnamed).err(),
            Some(WriteError::MessageNotNamed)
        ));
        // Other formats are written as ever.
        assert!(write(source(&doc, json, None), Format::Cbor, &unnamed).is_ok());
        let message = profile();
        let named = WriteOptions {
            protobuf: ProtobufType::Named(&message),
            spans: true,
            ..WriteOptions::default()
        };
        let written = write(source(&doc, json, None), Format::Protobuf, &named).expect("writes");
        assert_eq!(written.bytes, [0x1a, 0x01, b'r']);
        // Two nulls written as their fields' defaults, summed; the tree is the value's.
        let (count, first) = written.nulls_as_default().expect("nulls");
        assert_eq!(
            (count, first.brief().to_string()),
            (2, "$.user_id".to_string())
        );
        assert!(matches!(written.tree, Some(WrittenTree::Value(_))));
    }

    #[test]
    fn text_is_one_string_and_bytes_that_are_not_utf8_are_noted() {
        let written =
            write_text(b"ok \xff\xfe", Format::Json, &WriteOptions::default()).expect("writes");
        assert_eq!(
            String::from_utf8_lossy(&written.bytes),
            "\"ok \u{fffd}\u{fffd}\""
        );
        assert_eq!(written.notes, [WriteNote::NotUtf8 { invalid: 2 }]);
        let fine = write_text(b"ok", Format::MessagePack, &WriteOptions::default()).expect("ok");
        assert_eq!((fine.bytes, fine.notes), (b"\xa2ok".to_vec(), Vec::new()));
    }
}
