//! Inferred Avro schemas: an `.avsc` that can carry any payload, so Avro can sit in every
//! side-by-side comparison when the user brings no schema.
//!
//! The value is observed whole first (every record of every list merged, as protobuf's inferrer
//! does), then one schema is written:
//!
//! - **Records.** An object whose keys are all Avro names (`[A-Za-z_][A-Za-z0-9_]*`) becomes a
//!   record with the fields in order of first appearance. The top-level record is named by
//!   [`InferOptions::name`] (`Payload`); nested ones by their key in UpperCamelCase
//!   (`shipping_address` → `ShippingAddress`), list items by the singular (`edges` → `Edge`),
//!   made unique with a number (`Item2`).
//! - **Maps** instead of a record where the keys are data: a key that is no Avro name (numbers,
//!   UUIDs, text with punctuation), a key that is not text (written as text, with a note), or the
//!   many-distinct-keys rule protobuf's inferrer uses. The values' shapes are merged.
//! - **Nullable.** A field missing from some records, or null in some, is `["null", T]` with
//!   `"default": null`; a place with nothing but nulls is `"null"`.
//! - **Scalars**: integers `long`; any float (or an integer past 64 bits, or a decimal literal)
//!   makes the place `double`; `boolean`, `string`, `bytes` (MessagePack ext data and raw
//!   protobuf fields too); timestamps `{"type": "long", "logicalType": "timestamp-micros"}`
//!   (`timestamp-nanos` when a value has digits past the microsecond). Kinds that conflict at one
//!   place become a union of them, `null` first.
//! - **Arrays** of the merged item type (an empty array's items are `"null"`).

use std::collections::HashSet;

use serde_json::{json, Map, Value as Json};

use super::schema::AvroSchema;
use crate::codec::shape::{is_identifier, map_like, singular, upper_camel, ObjShape, Shape};
use crate::codec::{FidelityNote, NoteKind};
use crate::model::{Path, Value};

/// How the schema is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InferOptions {
    /// The top-level record's name (when the top level is a record).
    pub name: String,
    /// The namespace of every named type, if any.
    pub namespace: Option<String>,
    /// Logical types for text that always holds one: `uuid` strings, and RFC 3339 text as
    /// `timestamp-micros` (or `-nanos`) longs.
    pub logical: bool,
}

impl Default for InferOptions {
    fn default() -> InferOptions {
        InferOptions {
            name: "Payload".into(),
            namespace: None,
            logical: false,
        }
    }
}

/// Why no schema could be inferred.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InferError {
    /// The name asked for the top-level record ([`InferOptions::name`]) is not an Avro name.
    #[error("{0:?} is not an Avro name ([A-Za-z_][A-Za-z0-9_]*)")]
    BadName(String),
    /// The schema written for the value does not parse (a namespace that is no Avro name, for
    /// one); the parser's words.
    #[error("{0}")]
    Unparsable(String),
}

/// The inferred schema for `value`: parsed, with its text (pretty JSON, what `infer-avro`
/// prints).
pub fn infer(value: &Value, options: &InferOptions) -> Result<AvroSchema, InferError> {
    if !is_identifier(&options.name) {
        return Err(InferError::BadName(options.name.clone()));
    }
    let mut shape = Shape::new();
    shape.observe(value);
    let mut writer = Writer {
        used: HashSet::new(),
        namespace: options.namespace.clone(),
        logical: options.logical,
    };
    let json = writer.type_of(&shape, &options.name, false);
    let mut text = String::new();
    write_schema(&json, 0, &mut text);
    AvroSchema::parse(&text, "the inferred schema").map_err(|e| InferError::Unparsable(e.message))
}

/// Schema JSON as people write it: two-space indent, each object's keys in the order the
/// specification lists them (`type`, `name`, `namespace`, `fields`, …), not alphabetical.
fn write_schema(json: &Json, indent: usize, out: &mut String) {
    const ORDER: [&str; 8] = [
        "name",
        "type",
        "namespace",
        "logicalType",
        "items",
        "values",
        "fields",
        "default",
    ];
    let pad = |n: usize, out: &mut String| out.extend(std::iter::repeat_n(' ', n));
    match json {
        Json::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by_key(|k| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
            out.push_str("{\n");
            for (i, key) in keys.iter().enumerate() {
                pad(indent + 2, out);
                out.push_str(&Json::String((*key).clone()).to_string());
                out.push_str(": ");
                write_schema(&map[*key], indent + 2, out);
                out.push_str(if i + 1 < keys.len() { ",\n" } else { "\n" });
            }
            pad(indent, out);
            out.push('}');
        }
        Json::Array(items) if items.iter().any(|i| i.is_object() || i.is_array()) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                pad(indent + 2, out);
                write_schema(item, indent + 2, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            pad(indent, out);
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The note an encoding with an inferred schema starts with.
pub(crate) fn inferred_note(schema: &AvroSchema) -> FidelityNote {
    FidelityNote {
        kind: NoteKind::SchemaInferred,
        path: Path::root(),
        count: 1,
        message: format!(
            "no .avsc given; encoded with an inferred schema ({})",
            schema.title()
        ),
    }
}

struct Writer {
    used: HashSet<String>,
    namespace: Option<String>,
    logical: bool,
}

impl Writer {
    /// A name not used yet: `hint`, else `hint2`, `hint3`…
    fn unique(&mut self, hint: &str) -> String {
        let mut name = hint.to_string();
        let mut n = 2;
        while !self.used.insert(name.clone()) {
            name = format!("{hint}{n}");
            n += 1;
        }
        name
    }

    fn type_of(&mut self, shape: &Shape, hint: &str, missing: bool) -> Json {
        let mut branches: Vec<Json> = Vec::new();
        if shape.bools > 0 {
            branches.push(json!("boolean"));
        }
        let floaty = shape.floats > 0 || shape.decimals > 0 || shape.ints.huge || {
            shape.ints.count > 0
                && (shape.ints.min < i128::from(i64::MIN) || shape.ints.max > i128::from(i64::MAX))
        };
        if floaty {
            branches.push(json!("double"));
        } else if shape.ints.count > 0 {
            branches.push(json!("long"));
        }
        // With logical types, text that is always an RFC 3339 timestamp is one.
        let text_timestamps = self.logical
            && shape.texts > 0
            && shape.timestamp_texts == shape.texts
            && !floaty
            && shape.ints.count == 0;
        if !floaty && shape.ints.count == 0 && (shape.timestamps > 0 || text_timestamps) {
            let unit = if shape.timestamp_nanos || (text_timestamps && shape.timestamp_text_nanos) {
                "timestamp-nanos"
            } else {
                "timestamp-micros"
            };
            branches.push(json!({"type": "long", "logicalType": unit}));
        }
        // Timestamps beside other numbers cannot share their `long`/`double`: they are written
        // as RFC 3339 text (with a note).
        let timestamps_as_text = shape.timestamps > 0 && (floaty || shape.ints.count > 0);
        if timestamps_as_text || (shape.texts > 0 && !text_timestamps) {
            if self.logical
                && shape.texts > 0
                && shape.uuid_texts == shape.texts
                && !timestamps_as_text
            {
                branches.push(json!({"type": "string", "logicalType": "uuid"}));
            } else {
                branches.push(json!("string"));
            }
        }
        if shape.bytes > 0 {
            branches.push(json!("bytes"));
        }
        if let Some(array) = &shape.array {
            let item_hint = singular(hint);
            let item_hint = if item_hint == hint {
                format!("{hint}Item")
            } else {
                item_hint
            };
            let items = self.type_of(&array.items, &item_hint, false);
            branches.push(json!({"type": "array", "items": items}));
        }
        if let Some(object) = &shape.object {
            branches.push(self.object(object, hint));
        }
        let nullable = shape.nulls > 0 || missing;
        match (branches.len(), nullable) {
            (0, _) => json!("null"),
            (1, false) => branches.remove(0),
            (_, true) => {
                branches.insert(0, json!("null"));
                Json::Array(branches)
            }
            (_, false) => Json::Array(branches),
        }
    }

    fn object(&mut self, object: &ObjShape, hint: &str) -> Json {
        let names_fit = object
            .fields
            .iter()
            .all(|f| f.key.as_str().is_some_and(is_identifier));
        if !names_fit || map_like(object) {
            let values = object.merged_values();
            let value_hint = format!("{hint}Value");
            let values = self.type_of(&values, &value_hint, false);
            return json!({"type": "map", "values": values});
        }
        let name = self.unique(hint);
        let mut fields = Vec::with_capacity(object.fields.len());
        for field in &object.fields {
            let key = field.key.as_str().unwrap_or_default();
            let missing = field.seen < object.records;
            let child_hint = upper_camel(key);
            let ty = self.type_of(&field.shape, &child_hint, missing);
            let mut f = Map::new();
            f.insert("name".into(), json!(key));
            // A field that is only ever null is `"null"`; it needs the default as much as a
            // `["null", T]` does when some records leave it out.
            let nullable = ty == json!("null")
                || matches!(&ty, Json::Array(b) if b.first() == Some(&json!("null")));
            f.insert("type".into(), ty);
            if nullable {
                f.insert("default".into(), Json::Null);
            }
            fields.push(Json::Object(f));
        }
        let mut record = Map::new();
        record.insert("type".into(), json!("record"));
        record.insert("name".into(), json!(name));
        if let Some(ns) = &self.namespace {
            record.insert("namespace".into(), json!(ns));
        }
        record.insert("fields".into(), Json::Array(fields));
        Json::Object(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema_of(json_text: &str) -> Json {
        let doc =
            crate::codec::json::decode(json_text.as_bytes(), &Default::default()).expect("json");
        let schema = infer(&doc.value, &InferOptions::default()).expect("infers");
        serde_json::from_str(schema.text()).expect("json text")
    }

    #[test]
    fn records_merge_and_missing_fields_are_nullable() {
        let s = schema_of(
            r#"[{"id": 1, "name": "a", "tags": ["x"]}, {"id": 2, "price": 2.5, "tags": []}]"#,
        );
        assert_eq!(s["type"], "array");
        let item = &s["items"];
        assert_eq!(item["name"], "PayloadItem");
        let fields: Vec<(&str, &Json)> = item["fields"]
            .as_array()
            .expect("test value")
            .iter()
            .map(|f| (f["name"].as_str().expect("test value"), &f["type"]))
            .collect();
        assert_eq!(fields[0], ("id", &json!("long")));
        assert_eq!(fields[1], ("name", &json!(["null", "string"])));
        assert_eq!(fields[2].1, &json!({"type": "array", "items": "string"}));
        assert_eq!(fields[3], ("price", &json!(["null", "double"])));
    }

    #[test]
    fn a_field_only_ever_null_gets_a_default_for_records_that_leave_it_out() {
        let text = r#"[{"_": null}, {}]"#;
        let s = schema_of(text);
        let field = &s["items"]["fields"][0];
        assert_eq!(field["type"], "null");
        assert_eq!(field["default"], Json::Null);
        assert!(field.as_object().expect("field").contains_key("default"));
        let doc = crate::codec::json::decode(text.as_bytes(), &Default::default()).expect("json");
        let schema = infer(&doc.value, &InferOptions::default()).expect("infers");
        let written = super::super::encode::encode(&doc.value, &schema)
            .expect("the second record takes the default");
        // Two records in one block, then the end of the array; `null` takes no bytes.
        assert_eq!(written.bytes, [4, 0]);
    }

    #[test]
    fn logical_types_only_where_asked_and_only_where_every_text_fits() {
        let with = |text: &str| {
            let doc =
                crate::codec::json::decode(text.as_bytes(), &Default::default()).expect("json");
            let options = InferOptions {
                logical: true,
                ..InferOptions::default()
            };
            let schema = infer(&doc.value, &options).expect("infers");
            let json: Json = serde_json::from_str(schema.text()).expect("json text");
            json["fields"][0]["type"].clone()
        };
        let uuid = r#"{"v": "123e4567-e89b-12d3-a456-426614174000"}"#;
        assert_eq!(with(uuid), json!({"type": "string", "logicalType": "uuid"}));
        assert_eq!(schema_of(uuid)["fields"][0]["type"], "string");
        assert_eq!(
            with(r#"{"v": "2024-01-02T03:04:05.123456789+01:00"}"#),
            json!({"type": "long", "logicalType": "timestamp-nanos"})
        );
        // One text that is not a timestamp keeps them all text; a null makes a union.
        assert_eq!(
            with(r#"{"w": [{"v": "2024-01-02T03:04:05Z"}, {"v": "soon"}]}"#)["items"]["fields"][0]
                ["type"],
            "string"
        );
        assert_eq!(
            with(r#"{"v": ["2024-01-02T03:04:05Z", null]}"#)["items"],
            json!(["null", {"type": "long", "logicalType": "timestamp-micros"}])
        );
    }

    #[test]
    fn keys_that_are_data_make_a_map() {
        let s = schema_of(r#"{"counts": {"2024-01-01": 3, "2024-01-02": 4}}"#);
        assert_eq!(
            s["fields"][0]["type"],
            json!({"type": "map", "values": "long"})
        );
    }

    #[test]
    fn conflicting_kinds_make_a_union() {
        let s = schema_of(r#"{"v": [1, "a", null, true]}"#);
        assert_eq!(
            s["fields"][0]["type"]["items"],
            json!(["null", "boolean", "long", "string"])
        );
    }
}
