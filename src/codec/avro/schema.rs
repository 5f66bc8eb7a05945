//! An Avro schema as wirelens holds it: parsed by the Apache `apache-avro` crate, with its named
//! types looked up by full name, its Parsing Canonical Form and its CRC-64-AVRO fingerprint.

use std::collections::HashMap;
use std::fmt;
use std::path::Path as FsPath;
use std::sync::Arc;

use apache_avro::rabin::Rabin;
use apache_avro::schema::Name;
pub use apache_avro::Schema as RawSchema;

/// A parsed Avro schema (`.avsc`), cheap to clone.
#[derive(Clone)]
pub struct AvroSchema(Arc<Inner>);

struct Inner {
    root: RawSchema,
    names: HashMap<String, RawSchema>,
    text: String,
    canonical: String,
    fingerprint: u64,
    recursive: bool,
}

/// A schema that could not be read: what and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: not an Avro schema: {message}")]
pub struct AvroSchemaError {
    /// The file or the words naming where the text came from.
    pub origin: String,
    /// What is wrong, as the parser says it.
    pub message: String,
}

impl AvroSchema {
    /// Parses schema text (JSON: a type name, an object or a union array). `origin` names it in
    /// errors (a path, `--avro-schema`, "pasted schema").
    pub fn parse(text: &str, origin: &str) -> Result<AvroSchema, AvroSchemaError> {
        let fail = |message: String| AvroSchemaError {
            origin: origin.to_string(),
            message,
        };
        // The schema is the user's JSON: the parser is run so that a panic in it is an error.
        let parsed = crate::codec::protobuf::schema::quietly(|| RawSchema::parse_str(text))
            .map_err(|()| fail("the Avro schema parser failed on this text".into()))?
            .map_err(|e| fail(e.to_string()))?;
        AvroSchema::from_raw(parsed, text.to_string()).map_err(fail)
    }

    /// Reads and parses a `.avsc` file.
    pub fn from_file(path: &FsPath) -> Result<AvroSchema, AvroSchemaError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| AvroSchemaError {
            origin: origin.clone(),
            message: e.to_string(),
        })?;
        AvroSchema::parse(&text, &origin)
    }

    /// Wraps a parsed schema; `text` is the JSON it was read from (or written as).
    pub(crate) fn from_raw(root: RawSchema, text: String) -> Result<AvroSchema, String> {
        let mut names = HashMap::new();
        collect_names(&root, &mut names);
        let recursive = is_recursive(&root, &names);
        let canonical = root.canonical_form();
        let print = root.fingerprint::<Rabin>();
        let mut fp = [0u8; 8];
        if print.bytes.len() == 8 {
            fp.copy_from_slice(&print.bytes);
        }
        Ok(AvroSchema(Arc::new(Inner {
            root,
            names,
            text,
            canonical,
            fingerprint: u64::from_le_bytes(fp),
            recursive,
        })))
    }

    /// The top-level schema.
    pub fn root(&self) -> &RawSchema {
        &self.0.root
    }

    /// `schema`, or the named type it refers to.
    pub fn resolve<'s>(&'s self, schema: &'s RawSchema) -> Option<&'s RawSchema> {
        match schema {
            RawSchema::Ref { name } => self.0.names.get(&full_name(name)),
            other => Some(other),
        }
    }

    /// The named type (record, enum, fixed) with this full name (`namespace.name`).
    pub fn named(&self, full_name: &str) -> Option<&RawSchema> {
        self.0.names.get(full_name)
    }

    /// The text the schema was read from.
    pub fn text(&self) -> &str {
        &self.0.text
    }

    /// The Parsing Canonical Form (the specification's, as `apache-avro` writes it).
    pub fn canonical_form(&self) -> &str {
        &self.0.canonical
    }

    /// The CRC-64-AVRO (Rabin) fingerprint of the canonical form, as single-object encoding
    /// carries it (little-endian on the wire).
    pub fn fingerprint(&self) -> u64 {
        self.0.fingerprint
    }

    /// Whether a named type refers to itself (a linked list, a tree): values may then nest as
    /// deep as the data goes.
    pub fn is_recursive(&self) -> bool {
        self.0.recursive
    }

    /// The name people know the schema by: the top-level type's full name, or its type.
    pub fn title(&self) -> String {
        match self.root().name() {
            Some(name) => full_name(name),
            None => type_name(self.root()).to_string(),
        }
    }
}

impl fmt::Debug for AvroSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AvroSchema")
            .field("canonical", &self.0.canonical)
            .finish()
    }
}

impl PartialEq for AvroSchema {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.canonical == other.0.canonical
    }
}

impl Eq for AvroSchema {}

/// A name as the schema's references spell it: `namespace.name`.
pub(crate) fn full_name(name: &Name) -> String {
    name.fullname(None)
}

/// The type's word in a schema: `record`, `long`, `union`…
pub(crate) fn type_name(schema: &RawSchema) -> &'static str {
    match schema {
        RawSchema::Null => "null",
        RawSchema::Boolean => "boolean",
        RawSchema::Int | RawSchema::Date | RawSchema::TimeMillis => "int",
        RawSchema::Long
        | RawSchema::TimeMicros
        | RawSchema::TimestampMillis
        | RawSchema::TimestampMicros
        | RawSchema::TimestampNanos
        | RawSchema::LocalTimestampMillis
        | RawSchema::LocalTimestampMicros
        | RawSchema::LocalTimestampNanos => "long",
        RawSchema::Float => "float",
        RawSchema::Double => "double",
        RawSchema::Bytes | RawSchema::BigDecimal => "bytes",
        RawSchema::String => "string",
        RawSchema::Array(_) => "array",
        RawSchema::Map(_) => "map",
        RawSchema::Union(_) => "union",
        RawSchema::Record(_) => "record",
        RawSchema::Enum(_) => "enum",
        RawSchema::Fixed(_) | RawSchema::Duration(_) => "fixed",
        RawSchema::Decimal(d) => match d.inner {
            apache_avro::schema::InnerDecimalSchema::Bytes => "bytes",
            apache_avro::schema::InnerDecimalSchema::Fixed(_) => "fixed",
        },
        RawSchema::Uuid(u) => match u {
            apache_avro::schema::UuidSchema::Bytes => "bytes",
            apache_avro::schema::UuidSchema::String => "string",
            apache_avro::schema::UuidSchema::Fixed(_) => "fixed",
        },
        RawSchema::Ref { .. } => "reference",
    }
}

/// Every named type under `schema`, by full name (no recursion into references).
fn collect_names(root: &RawSchema, names: &mut HashMap<String, RawSchema>) {
    let mut stack = vec![root];
    while let Some(schema) = stack.pop() {
        if let Some(name) = schema.name() {
            if !matches!(schema, RawSchema::Ref { .. }) {
                names.insert(full_name(name), schema.clone());
            }
        }
        children(schema, &mut stack);
    }
}

/// The schemas directly inside `schema`.
fn children<'s>(schema: &'s RawSchema, out: &mut Vec<&'s RawSchema>) {
    match schema {
        RawSchema::Array(a) => out.push(&a.items),
        RawSchema::Map(m) => out.push(&m.types),
        RawSchema::Union(u) => out.extend(u.variants()),
        RawSchema::Record(r) => out.extend(r.fields.iter().map(|f| &f.schema)),
        _ => {}
    }
}

/// Whether a reference can be reached from inside the type it names.
fn is_recursive(root: &RawSchema, names: &HashMap<String, RawSchema>) -> bool {
    // A reference inside the schema names an earlier-defined type; the schema is recursive
    // when following references from some named type leads back to it.
    for (name, schema) in names {
        let mut seen = std::collections::HashSet::new();
        let mut stack = Vec::new();
        children(schema, &mut stack);
        while let Some(s) = stack.pop() {
            match s {
                RawSchema::Ref { name: r } => {
                    let r = full_name(r);
                    if &r == name {
                        return true;
                    }
                    if seen.insert(r.clone()) {
                        if let Some(target) = names.get(&r) {
                            children(target, &mut stack);
                        }
                    }
                }
                other => children(other, &mut stack),
            }
        }
    }
    let _ = root;
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_the_specifications_crc_64_avro() {
        // The specification's empty-input value and the fingerprint of `"int"` that other
        // implementations print (Java's SchemaNormalization.parsingFingerprint64).
        let int = AvroSchema::parse("\"int\"", "test").expect("parses");
        assert_eq!(int.canonical_form(), "\"int\"");
        assert_eq!(int.fingerprint(), 0x7275_d51a_3f39_5c8f);
    }

    #[test]
    fn recursive_schemas_are_told_apart() {
        let list = r#"{"type":"record","name":"Node","fields":[
            {"name":"value","type":"long"},
            {"name":"next","type":["null","Node"]}]}"#;
        assert!(AvroSchema::parse(list, "t")
            .expect("test value")
            .is_recursive());
        let flat = r#"{"type":"record","name":"R","fields":[
            {"name":"a","type":{"type":"record","name":"A","fields":[]}},
            {"name":"b","type":"A"}]}"#;
        assert!(!AvroSchema::parse(flat, "t")
            .expect("test value")
            .is_recursive());
    }

    #[test]
    fn bad_text_is_an_error_naming_its_origin() {
        let err = AvroSchema::parse("{\"type\":\"record\"}", "orders.avsc").expect_err("fails");
        assert_eq!(err.origin, "orders.avsc");
        assert!(err
            .to_string()
            .starts_with("orders.avsc: not an Avro schema"));
    }
}
