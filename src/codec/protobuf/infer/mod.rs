//! Inferred protobuf schemas: a `.proto` that can carry a JSON/MessagePack/CBOR payload.
//!
//! Protobuf needs a schema to say anything; when the user brings none, this module writes one
//! from the payload itself so that Protobuf can still sit in every side-by-side comparison.
//! [`infer`] observes the whole value (every record of every list, merged), then writes a proto3
//! file: the `.proto` text, its `FileDescriptorProto`, a [`DescriptorPool`] and the top-level
//! [`MessageDescriptor`]. The text is compiled in-process with protox (well-known types
//! included), so the text, the descriptor and the pool always agree.
//!
//! What it does not do: guess meaning from text (an RFC 3339 string stays a `string`, a base64
//! string stays a `string`), recognise recursive structures (each nesting level gets its own
//! message), or encode anything itself ([`encode_inferred`] hands the value to the schema-guided
//! encoder).
//!
//! # Rules
//! - **Messages.** An object becomes a message; objects met at the same place (the records of a
//!   list, the same key in every record) are merged: the union of their keys, a key missing from
//!   some records is fine. Message types are declared flat at file level, the top-level one
//!   first, then depth first in field order. Nested types are named from their key in
//!   UpperCamelCase (`shipping_address` → `ShippingAddress`), from the singular for list items
//!   (`edges` → `Edge`), made unique with a number (`Parent2`) and distinct from every field name;
//!   two messages with identical fields share one type (the first name wins).
//! - **Field names** are the keys when they are identifiers (`user_id` and `placedAt` are kept
//!   as written). Otherwise every character other than an ASCII letter, digit or `_` becomes `_`,
//!   `f_` is prefixed when the result does not start with a letter or `_`, and
//!   `[json_name = "<original key>"]` keeps the key. Names that protoc's proto3 rule would find
//!   equal (compared in lowercase without underscores: `user_id`/`userId`) get `_2`, `_3`, …
//!   (with `json_name`).
//! - **Field numbers**: the 15 fields present in the most objects get 1–15 (one-byte tags), in
//!   order of first appearance; the others follow, in order of first appearance (19000–19999 are
//!   skipped).
//! - **Scalars**, the narrowest type that fits every value seen: `bool`; integers `int32` when
//!   all fit, else `int64`, `uint64` when one is above `i64::MAX`; `sint32`/`sint64` instead when
//!   more than a quarter are negative; integers that no 64-bit type holds → `double`. Floats are
//!   `float` when every one is a float32 (or float16) in the source, or a float64 that a float32
//!   holds exactly *and* whose shortest float32 text reads back as the same number (`24.5`,
//!   `0.25`, but not `26.1`, which is not a float32, nor `0.10000000149011612`, which is one but
//!   would print as `0.1`); otherwise `double`. Integers mixed with floats, and JSON decimals
//!   beyond float64 → `double`. Text → `string`; bytes (and MessagePack ext data, raw protobuf
//!   fields) → `bytes`; timestamps → `google.protobuf.Timestamp`. Nulls do not count, except that
//!   a place with nothing but nulls is a `google.protobuf.Value`; conflicting kinds (text here, a
//!   number there) → `google.protobuf.Value`. A CBOR tag is looked through.
//! - **Arrays** → `repeated`; of objects → `repeated` message. Items that protobuf cannot put in
//!   a repeated field get a wrapper: an array inside an array → `message XList { repeated T items
//!   = 1; }`, a map-like object → `message XMap { map<K, V> entries = 1; }`; items mixing kinds
//!   or holding a null → `repeated google.protobuf.Value`. An empty array →
//!   `repeated google.protobuf.Value` (nothing says what it holds).
//! - **Maps.** An object becomes `map<K, V>` instead of a message when its keys look like data:
//!   a key that is not text (K = the integer type or `bool` for integer or boolean keys), every
//!   key not an identifier (numbers, UUIDs, text with spaces or punctuation) or a hex string of
//!   16+ digits, or at least 8 distinct keys across at least 2 records, none of them in more
//!   than half of the records, with values of one kind. V follows the same rules as array
//!   items (wrappers for arrays and map-like objects, `google.protobuf.Value` for nulls).
//! - **The top level** must be a message ([`InferOptions::message`], `Payload` by default): an
//!   object whose keys are field names is that message. Anything else is wrapped, and
//!   [`wrap_for_inferred`] wraps the value the same way before encoding: an array →
//!   `message Payload { repeated Record items = 1; }` (`{"items": [...]}`), a map-like object →
//!   `message Payload { map<string, V> entries = 1; }` (`{"entries": {...}}`), a scalar or null →
//!   `message Payload { T value = 1; }` (`{"value": ...}`).
//! - The file is `inferred.proto`, proto3, in [`InferOptions::package`] when given; it imports
//!   `google/protobuf/struct.proto` and `google/protobuf/timestamp.proto` only when used.

mod schema;

use std::borrow::Cow;

use prost_reflect::{DescriptorPool, MessageDescriptor};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};

use crate::codec::protobuf::{RootParts, Walked};
use crate::codec::{EncodeError, EncodeOptions, Encoded, FidelityNote, Format, NoteKind};
use crate::model::{Path, Value};

use crate::codec::shape::{self, Shape};
use schema::Schema;

/// The name of the inferred file inside its pool.
pub const FILE_NAME: &str = "inferred.proto";

/// Settings for [`infer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InferOptions {
    /// Name of the top-level message (`Payload` by default); must be an identifier.
    pub message: String,
    /// The `package` of the file (dotted identifiers), if any.
    pub package: Option<String>,
}

impl Default for InferOptions {
    fn default() -> InferOptions {
        InferOptions {
            message: "Payload".into(),
            package: None,
        }
    }
}

/// An inferred schema: the `.proto` text and the same schema compiled.
#[derive(Debug, Clone)]
pub struct Inferred {
    /// The `.proto` text.
    pub proto: String,
    /// The compiled file (without source info).
    pub file: prost_types::FileDescriptorProto,
    /// The file with the well-known types it imports.
    pub pool: DescriptorPool,
    /// The top-level message.
    pub message: MessageDescriptor,
}

/// Inferring failed: the options were not usable, or (a bug) the written text did not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot infer a protobuf schema: {message}")]
pub struct InferError {
    /// Why, in a plain sentence.
    pub message: String,
}

/// Infers a proto3 schema that can carry `value` (see the module docs for the rules).
pub fn infer(value: &Value, options: &InferOptions) -> Result<Inferred, InferError> {
    infer_schema(value, options).map(|(inferred, _)| inferred)
}

/// `value` as the inferred top-level message expects it: unchanged for an object whose keys are
/// field names (and no arrays of arrays or maps of lists inside); otherwise wrapped as the module
/// docs say (`{"items": [...]}`, `{"entries": {...}}`, `{"value": ...}`, and the same for nested
/// wrapper messages).
pub fn wrap_for_inferred(value: &Value) -> Cow<'_, Value> {
    let schema = build_schema(value, &InferOptions::default().message);
    wrap_with(&schema, value)
}

fn wrap_with<'a>(schema: &Schema, value: &'a Value) -> Cow<'a, Value> {
    if schema.wraps() {
        Cow::Owned(schema.rewrite(value))
    } else {
        Cow::Borrowed(value)
    }
}

/// Encodes `value` into a message type inferred from it (default [`InferOptions`]), after
/// [`wrap_for_inferred`], with a [`NoteKind::SchemaInferred`] note at `$` first.
pub fn encode_inferred(value: &Value, options: &EncodeOptions) -> Result<Encoded, EncodeError> {
    let infer_options = InferOptions::default();
    let (inferred, schema) = infer_schema(value, &infer_options).map_err(|e| EncodeError {
        format: Format::Protobuf,
        path: Path::root(),
        message: e.message,
    })?;
    let wrapped = wrap_with(&schema, value);
    let mut encoded = super::dynamic::encode(&wrapped, &inferred.message, options)?;
    encoded.notes.insert(0, inferred_note(&infer_options));
    Ok(encoded)
}

/// The note [`encode_inferred`] puts first.
pub(crate) fn inferred_note(options: &InferOptions) -> FidelityNote {
    FidelityNote {
        kind: NoteKind::SchemaInferred,
        path: Path::root(),
        count: 1,
        message: format!(
            "no .proto given; encoded with an inferred schema (message {})",
            options.message
        ),
    }
}

/// The schema [`infer`] gives for the document whose root map `parts` holds, read a run of
/// items at a time; `None` when the walk gave up, or when the schema wraps values (the value
/// would have to be rewritten whole: see [`wrap_for_inferred`]).
pub(crate) fn infer_in_parts(
    parts: &mut dyn RootParts,
    options: &InferOptions,
) -> Option<Result<Inferred, InferError>> {
    let mut shape = Shape::new();
    if parts.is_list() {
        observe_part(parts, 0, &mut shape)?;
    } else {
        let obj = shape.object.get_or_insert_with(Box::default);
        obj.records += 1;
        let keys = parts.keys().to_vec();
        for (i, key) in keys.iter().enumerate() {
            let field = obj.held(key);
            observe_part(parts, i, &mut field.shape)?;
        }
    }
    let schema = schema::build(&shape, &options.message);
    // A top-level array is wrapped in `items` (the parts hold it so); any other wrapping
    // rewrites values inside the document, which the parts cannot.
    let wraps = if parts.is_list() {
        !schema.wraps_only_top_list()
    } else {
        schema.wraps()
    };
    if wraps {
        return None;
    }
    Some(compile_schema(schema, options).map(|(inferred, _)| inferred))
}

/// Observes entry `i` of `parts` into `at`: an array's items a run at a time, anything else
/// whole. `None` when the walk gave up.
fn observe_part(parts: &mut dyn RootParts, i: usize, at: &mut Shape) -> Option<()> {
    let walked = parts
        .items(i, &mut |_, items| {
            let arr = at.array.get_or_insert_with(|| {
                Box::new(shape::ArrShape {
                    count: 1,
                    items: Shape::new(),
                })
            });
            for item in items {
                arr.items.observe(item);
            }
            Ok(())
        })
        .ok()?;
    match walked {
        Walked::Items => Some(()),
        Walked::GaveUp => None,
        Walked::NotItems => {
            at.observe(&parts.value(i)?);
            Some(())
        }
    }
}

fn build_schema(value: &Value, message: &str) -> Schema {
    let mut shape = Shape::new();
    shape.observe(value);
    schema::build(&shape, message)
}

fn infer_schema(value: &Value, options: &InferOptions) -> Result<(Inferred, Schema), InferError> {
    compile_schema(build_schema(value, &options.message), options)
}

/// Whether the message and package names of `options` are usable.
fn check_names(options: &InferOptions) -> Result<(), InferError> {
    if !is_identifier(&options.message) {
        return Err(InferError {
            message: format!(
                "message name {:?} is not an identifier (letters, digits and _, not starting with a digit)",
                options.message
            ),
        });
    }
    if let Some(package) = &options.package {
        if !package.split('.').all(is_identifier) {
            return Err(InferError {
                message: format!("package {package:?} is not dotted identifiers"),
            });
        }
    }
    Ok(())
}

/// `schema` compiled, with its `.proto` text.
fn compile_schema(
    schema: Schema,
    options: &InferOptions,
) -> Result<(Inferred, Schema), InferError> {
    check_names(options)?;
    let proto = schema.render(options.package.as_deref());
    let pool = compile(&proto)?;
    let file = pool
        .get_file_by_name(FILE_NAME)
        .map(|f| prost_types::FileDescriptorProto {
            source_code_info: None,
            ..f.file_descriptor_proto().clone()
        })
        .ok_or_else(|| InferError {
            message: format!("{FILE_NAME} is missing from the compiled pool"),
        })?;
    let full_name = match &options.package {
        Some(package) => format!("{package}.{}", options.message),
        None => options.message.clone(),
    };
    let message = pool
        .get_message_by_name(&full_name)
        .ok_or_else(|| InferError {
            message: format!("message {full_name} is missing from the compiled pool"),
        })?;
    Ok((
        Inferred {
            proto,
            file,
            pool,
            message,
        },
        schema,
    ))
}

fn is_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Resolves [`FILE_NAME`] to the generated text.
struct Generated(String);

impl FileResolver for Generated {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        if name == FILE_NAME {
            File::from_source(name, &self.0)
        } else {
            Err(protox::Error::file_not_found(name))
        }
    }
}

fn compile(proto: &str) -> Result<DescriptorPool, InferError> {
    let mut resolver = ChainFileResolver::new();
    resolver.add(Generated(proto.to_string()));
    resolver.add(GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true);
    compiler.open_file(FILE_NAME).map_err(|e| InferError {
        message: format!("the inferred .proto does not compile: {e}\n{proto}"),
    })?;
    Ok(compiler.descriptor_pool())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Float;

    fn proto_of(value: &Value) -> String {
        infer(value, &InferOptions::default())
            .expect("infers")
            .proto
    }

    #[test]
    fn flat_object() {
        let v = Value::object([
            ("id", Value::Int(7)),
            ("name", Value::text("x")),
            ("score", Value::Float(Float::f64(0.5))),
            ("big", Value::Int(1 << 40)),
            ("neg", Value::Int(-1)),
        ]);
        assert_eq!(
            proto_of(&v),
            "syntax = \"proto3\";\n\nmessage Payload {\n  int32 id = 1;\n  string name = 2;\n  \
             float score = 3;\n  int64 big = 4;\n  sint32 neg = 5;\n}\n"
        );
        assert!(matches!(wrap_for_inferred(&v), Cow::Borrowed(_)));
    }

    #[test]
    fn top_level_wrappers() {
        let scalar = Value::text("hi");
        assert!(proto_of(&scalar).contains("message Payload {\n  string value = 1;\n}"));
        assert_eq!(
            wrap_for_inferred(&scalar).into_owned(),
            Value::object([("value", Value::text("hi"))])
        );
        let records = Value::Array(vec![Value::object([("a", Value::Bool(true))])]);
        let text = proto_of(&records);
        assert!(text.contains("message Payload {\n  repeated Record items = 1;\n}"));
        assert!(text.contains("message Record {\n  bool a = 1;\n}"));
        assert_eq!(
            wrap_for_inferred(&records).into_owned(),
            Value::object([("items", records.clone())])
        );
    }

    #[test]
    fn nested_wrappers_are_rewritten() {
        let grid = Value::object([(
            "grid",
            Value::Array(vec![
                Value::Array(vec![Value::Int(1), Value::Int(2)]),
                Value::Array(vec![Value::Int(3)]),
            ]),
        )]);
        let inferred = infer(&grid, &InferOptions::default()).expect("infers");
        assert_eq!(
            inferred.proto,
            "syntax = \"proto3\";\n\nmessage Payload {\n  repeated GridList grid = 1;\n}\n\n\
             message GridList {\n  repeated int32 items = 1;\n}\n"
        );
        let items = |v: Vec<i128>| {
            Value::object([(
                "items",
                Value::Array(v.into_iter().map(Value::Int).collect()),
            )])
        };
        assert_eq!(
            wrap_for_inferred(&grid).into_owned(),
            Value::object([(
                "grid",
                Value::Array(vec![items(vec![1, 2]), items(vec![3])])
            )])
        );
    }

    #[test]
    fn bad_options_are_errors() {
        let v = Value::object([]);
        let bad = InferOptions {
            message: "1x".into(),
            package: None,
        };
        assert!(infer(&v, &bad).is_err());
        let bad = InferOptions {
            message: "X".into(),
            package: Some("a..b".into()),
        };
        assert!(infer(&v, &bad).is_err());
    }

    #[test]
    fn encode_inferred_reports_the_encoder_result() {
        // Whatever the schema-guided encoder does, a schema is inferred first; when it succeeds
        // the first note says so.
        let v = Value::object([("a", Value::Int(1))]);
        if let Ok(encoded) = encode_inferred(&v, &EncodeOptions::default()) {
            assert_eq!(encoded.notes[0].kind, NoteKind::SchemaInferred);
            assert_eq!(
                encoded.notes[0].message,
                "no .proto given; encoded with an inferred schema (message Payload)"
            );
        }
    }
}
