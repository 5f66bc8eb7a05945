//! Schemas by Confluent Schema Registry id, read from files: the registry's own answers saved as
//! JSON, or a folder of `<id>.avsc` files.
//!
//! A Kafka record serialized with a registry starts with a zero byte and the 4-byte schema id
//! ([`super::framing::confluent`]). Those five bytes prove nothing on their own (any buffer may
//! start with a zero), so wirelens peels them only for an id the user's registry files know,
//! and reads the body by that schema: Avro by its schema, Protobuf after its message-index
//! list, JSON as JSON.
//!
//! What is read:
//! - a folder: `<id>.avsc` (an Avro schema), `<id>.proto` (Protobuf), `<id>.json` (a registry
//!   answer, below); a `.proto` file not named by an id is a file the others may import, by its
//!   name; other files are left alone;
//! - a JSON file: one registry answer with an `id` (`GET /subjects/{subject}/versions/{version}`)
//!   or an array of them (`GET /schemas`). An answer holds the schema as text in `schema`, and
//!   `schemaType` (`AVRO` when absent, `PROTOBUF`, `JSON`).
//!
//! A Protobuf schema's imports are found among its answer's `references` (each names the
//! import and the subject and version registered for it; the version `-1` or none is the
//! latest), then among the folder's `.proto` files, then among the well-known types.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::framing::RegistryKind;
use super::AvroSchema;

/// Most registry files read from one folder, and most answers in one file.
pub const MAX_SCHEMAS: usize = 100_000;

/// Largest registry file read, in bytes.
pub const MAX_FILE: u64 = 64 << 20;

/// One schema of the registry.
#[derive(Debug, Clone)]
pub struct RegistrySchema {
    /// The registry's id for it.
    pub id: u32,
    /// What kind of schema it is, which decides what follows the 5-byte header.
    pub kind: RegistryKind,
    /// The subject it was registered under, when the answer says.
    pub subject: Option<String>,
    /// The parsed schema, for Avro.
    pub avro: Option<AvroSchema>,
    /// For Protobuf, the schema (`.proto` text compiled as a file of its own, or a base64
    /// `FileDescriptorProto` as the registry also stores them) and the name of its file, or why
    /// it could not be read.
    pub proto: Option<Result<(crate::codec::protobuf::schema::Schema, String), String>>,
    /// Where it was read from.
    pub origin: String,
}

impl RegistrySchema {
    /// The message type a Confluent message-index path names in this Protobuf schema: the
    /// path's first index picks a top-level message of the file, each next one a message
    /// nested in it (`[0]` is the first top-level message).
    pub fn message(
        &self,
        indexes: &[i64],
    ) -> Result<crate::codec::protobuf::MessageDescriptor, MessageIndexError> {
        let id = self.id;
        let (schema, name) = match &self.proto {
            Some(Ok(found)) => found,
            Some(Err(e)) => return Err(MessageIndexError::Unread { id, why: e.clone() }),
            None => return Err(MessageIndexError::NotProtobuf { id }),
        };
        let file =
            schema
                .pool()
                .get_file_by_name(name)
                .ok_or_else(|| MessageIndexError::NoFile {
                    id,
                    file: name.clone(),
                })?;
        let at = |i: i64| usize::try_from(i).ok();
        let mut path = indexes.iter();
        let first = path.next().copied().unwrap_or(0);
        let mut message = at(first)
            .and_then(|i| file.messages().nth(i))
            .ok_or(MessageIndexError::NoTopLevel { id, index: first })?;
        for &i in path {
            message = at(i)
                .and_then(|i| message.child_messages().nth(i))
                .ok_or_else(|| MessageIndexError::NoNested {
                    parent: message.full_name().to_string(),
                    index: i,
                })?;
        }
        Ok(message)
    }
}

/// Why [`RegistrySchema::message`] found no message type for a message-index path; each names
/// the schema id or the message the path went through.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageIndexError {
    /// The Protobuf schema did not compile when the registry was read.
    #[error("schema id {id}: {why}")]
    Unread {
        /// The schema id.
        id: u32,
        /// Why it did not compile, as kept with the schema.
        why: String,
    },
    /// The schema is Avro or JSON Schema.
    #[error("schema id {id} is not a Protobuf schema")]
    NotProtobuf {
        /// The schema id.
        id: u32,
    },
    /// The schema's compiled pool lacks its own file.
    #[error("schema id {id}: no file {file}")]
    NoFile {
        /// The schema id.
        id: u32,
        /// The file's name.
        file: String,
    },
    /// The path's first index is past the file's top-level messages.
    #[error("schema id {id} has no top-level message {index}")]
    NoTopLevel {
        /// The schema id.
        id: u32,
        /// The index.
        index: i64,
    },
    /// A later index is past the nested messages of the message before it.
    #[error("{parent} has no nested message {index}")]
    NoNested {
        /// The full name of the message the path had reached.
        parent: String,
        /// The index.
        index: i64,
    },
}

/// Schemas by registry id.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    schemas: BTreeMap<u32, RegistrySchema>,
}

/// A registry schema as read, before it is compiled: its imports may be read after it.
#[derive(Debug)]
struct Entry {
    id: u32,
    kind: RegistryKind,
    subject: Option<String>,
    version: Option<i64>,
    /// `(import name, subject, version)` of each schema it refers to.
    references: Vec<(String, String, Option<i64>)>,
    text: String,
    origin: String,
}

/// What a registry folder or file gave, before compiling.
#[derive(Debug, Default)]
struct Read {
    entries: Vec<Entry>,
    /// `.proto` files of the folder not named by an id: `(file name, text)`.
    imports: Vec<(String, String)>,
}

/// Why a registry folder or file could not be loaded: each names the file at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The folder could not be listed.
    #[error("{}: cannot list the folder: {error}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// A schema file in a folder whose name is not its id.
    #[error("{origin}: a registry folder names each schema file by its id (e.g. 42.{ext})")]
    Unnumbered {
        /// The file.
        origin: String,
        /// Its extension (`avsc`, `proto`).
        ext: String,
    },
    /// A file that cannot be read, registry answers not as the registry writes them, or a
    /// schema that does not compile; the words name the file (and the schema id).
    #[error("{0}")]
    File(String),
    /// The folder or file held no schema.
    #[error(
        "{}: no schema found (a folder of <id>.avsc, <id>.proto or <id>.json files, or a JSON \
         file of the registry's answers)",
        path.display()
    )]
    Empty {
        /// The folder or file.
        path: PathBuf,
    },
}

impl Registry {
    /// Reads a folder of `<id>.avsc`/`<id>.proto`/`<id>.json` files, or one JSON file of
    /// registry answers. Errors name the file and what is wrong with it.
    pub fn load(path: &Path) -> Result<Registry, RegistryError> {
        let mut read = Read::default();
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|error| RegistryError::Folder {
                path: path.to_path_buf(),
                error,
            })?;
            let mut files: Vec<_> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            for file in files {
                let Some(stem) = file.file_stem().and_then(|s| s.to_str()) else {
                    continue;
                };
                let ext = file
                    .extension()
                    .and_then(|e| e.to_str())
                    .unwrap_or_default();
                if !matches!(ext, "avsc" | "proto" | "json") {
                    continue;
                }
                let id: Option<u32> = stem.parse().ok();
                let text = read_text(&file).map_err(RegistryError::File)?;
                let origin = file.display().to_string();
                match (ext, id) {
                    ("json", _) => read
                        .add_answers(&text, &origin, id)
                        .map_err(RegistryError::File)?,
                    ("proto", None) => {
                        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or(stem);
                        read.imports.push((name.to_string(), text));
                    }
                    (_, None) => {
                        return Err(RegistryError::Unnumbered {
                            origin,
                            ext: ext.to_string(),
                        })
                    }
                    ("avsc", Some(id)) => read
                        .add(Entry::of(id, RegistryKind::Avro, text, origin))
                        .map_err(RegistryError::File)?,
                    (_, Some(id)) => read
                        .add(Entry::of(id, RegistryKind::Protobuf, text, origin))
                        .map_err(RegistryError::File)?,
                }
            }
        } else {
            let text = read_text(path).map_err(RegistryError::File)?;
            read.add_answers(&text, &path.display().to_string(), None)
                .map_err(RegistryError::File)?;
        }
        let mut registry = Registry::default();
        for entry in &read.entries {
            registry.add(entry, &read).map_err(RegistryError::File)?;
        }
        if registry.schemas.is_empty() {
            return Err(RegistryError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(registry)
    }

    /// The schema with this id.
    pub fn get(&self, id: u32) -> Option<&RegistrySchema> {
        self.schemas.get(&id)
    }

    /// How many schemas it holds.
    pub fn len(&self) -> usize {
        self.schemas.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.schemas.is_empty()
    }

    /// Compiles `entry`, its imports found in `read`.
    fn add(&mut self, entry: &Entry, read: &Read) -> Result<(), String> {
        let (id, origin) = (entry.id, entry.origin.as_str());
        let avro = match entry.kind {
            RegistryKind::Avro => {
                let text = avro_with_references(entry, read)
                    .map_err(|e| format!("{origin}, schema id {id}: {e}"))?;
                Some(
                    AvroSchema::parse(&text, &format!("{origin}, schema id {id}"))
                        .map_err(|e| e.to_string())?,
                )
            }
            _ => None,
        };
        let proto = (entry.kind == RegistryKind::Protobuf).then(|| proto_schema(entry, read));
        self.schemas.insert(
            id,
            RegistrySchema {
                id,
                kind: entry.kind,
                subject: entry.subject.clone(),
                avro,
                proto,
                origin: origin.to_string(),
            },
        );
        Ok(())
    }
}

impl Entry {
    /// A schema from a folder's `<id>.<ext>` file: no subject, version or references.
    fn of(id: u32, kind: RegistryKind, text: String, origin: String) -> Entry {
        Entry {
            id,
            kind,
            subject: None,
            version: None,
            references: Vec::new(),
            text,
            origin,
        }
    }
}

impl Read {
    fn add(&mut self, entry: Entry) -> Result<(), String> {
        if self.entries.len() >= MAX_SCHEMAS {
            return Err(format!("{}: more than {MAX_SCHEMAS} schemas", entry.origin));
        }
        self.entries.push(entry);
        Ok(())
    }

    /// The schema registered under `subject` at `version` (the latest for none or `-1`).
    fn version_of(&self, subject: &str, version: Option<i64>) -> Option<&Entry> {
        let of_subject = self
            .entries
            .iter()
            .filter(|e| e.subject.as_deref() == Some(subject));
        match version.filter(|&v| v >= 0) {
            Some(v) => of_subject.into_iter().find(|e| e.version == Some(v)),
            None => of_subject.max_by_key(|e| e.version),
        }
    }

    /// One registry answer, or an array of them. `file_id` is the id a folder's file name
    /// gives, for an answer without one (`GET /schemas/ids/{id}`).
    fn add_answers(
        &mut self,
        text: &str,
        origin: &str,
        file_id: Option<u32>,
    ) -> Result<(), String> {
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("{origin}: not JSON: {e}"))?;
        let answers = match &json {
            serde_json::Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        for (i, answer) in answers.into_iter().enumerate() {
            let at = |what: &str| format!("{origin}: answer {}: {what}", i + 1);
            let Some(schema) = answer.get("schema").and_then(|s| s.as_str()) else {
                return Err(at(
                    "no \"schema\" text (a registry answer holds the schema as a string)",
                ));
            };
            let id = match answer.get("id") {
                Some(v) => v
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| at("\"id\" is not a schema id (0 to 4294967295)"))?,
                None => file_id.ok_or_else(|| {
                    at("no \"id\": save the answer as <id>.json in a registry folder, or add the id")
                })?,
            };
            let kind = match answer.get("schemaType").and_then(|t| t.as_str()) {
                None | Some("AVRO") => RegistryKind::Avro,
                Some("PROTOBUF") => RegistryKind::Protobuf,
                Some("JSON") => RegistryKind::Json,
                Some(other) => return Err(at(&format!("unknown schemaType {other:?}"))),
            };
            let subject = answer
                .get("subject")
                .and_then(|s| s.as_str())
                .map(str::to_string);
            let mut references = Vec::new();
            for r in answer
                .get("references")
                .and_then(|r| r.as_array())
                .into_iter()
                .flatten()
            {
                let text = |k: &str| r.get(k).and_then(|v| v.as_str()).map(str::to_string);
                let (Some(name), Some(subject)) = (text("name"), text("subject")) else {
                    return Err(at("a reference without a \"name\" and a \"subject\""));
                };
                references.push((name, subject, r.get("version").and_then(|v| v.as_i64())));
            }
            self.add(Entry {
                id,
                kind,
                subject,
                version: answer.get("version").and_then(|v| v.as_i64()),
                references,
                text: schema.to_string(),
                origin: origin.to_string(),
            })?;
        }
        Ok(())
    }
}

/// A registry's Protobuf schema: `.proto` text, or the base64 of a serialized
/// `FileDescriptorProto` (what serializers register, and the registry gives with
/// `?format=serialized`). Its imports are found as the module docs say.
fn proto_schema(
    entry: &Entry,
    read: &Read,
) -> Result<(crate::codec::protobuf::schema::Schema, String), String> {
    use crate::codec::protobuf::schema::Schema;
    use base64::Engine;
    let (id, text) = (entry.id, entry.text.as_str());
    let name = format!("{id}.proto");
    let sources = proto_sources(entry, &name, read)?;
    let as_text = match Schema::from_proto_sources(&name, &sources) {
        Ok(schema) => return Ok((schema, name)),
        Err(e) => e.to_string(),
    };
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(text.trim()) else {
        return Err(format!("its .proto does not compile: {as_text}"));
    };
    let decode = |bytes: &[u8]| <prost_types::FileDescriptorProto as prost::Message>::decode(bytes);
    let file = decode(&bytes)
        .map_err(|e| format!("neither .proto text ({as_text}) nor a FileDescriptorProto ({e})"))?;
    let name = file.name.clone().unwrap_or(name);
    // The files it imports, registered the same way, before it (the farthest first).
    let mut files: Vec<_> = sources
        .iter()
        .skip(1)
        .rev()
        .filter_map(|(import, text)| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .ok()?;
            let mut file = decode(&bytes).ok()?;
            file.name = Some(import.clone());
            Some(file)
        })
        .collect();
    files.push(file);
    let set = prost_types::FileDescriptorSet { file: files };
    let schema = Schema::from_descriptor_set(&prost::Message::encode_to_vec(&set))
        .map_err(|e| format!("its FileDescriptorProto does not load: {e}"))?;
    Ok((schema, name))
}

/// `entry`'s Avro schema text with the named types its references stand for defined where it
/// first uses them: the registry stores a schema that uses a type registered under a subject of
/// its own by name alone, beside the reference (name, subject, version). The text as it is when
/// it has no references.
fn avro_with_references(entry: &Entry, read: &Read) -> Result<String, String> {
    if entry.references.is_empty() {
        return Ok(entry.text.clone());
    }
    let parse = |text: &str| {
        serde_json::from_str::<serde_json::Value>(text).map_err(|e| format!("not JSON: {e}"))
    };
    // Every schema the references reach, by the full name each defines.
    let mut defs: Vec<(String, serde_json::Value)> = Vec::new();
    let mut work: Vec<&Entry> = vec![entry];
    let mut seen = vec![entry.id];
    while let Some(at) = work.pop() {
        for (name, subject, version) in &at.references {
            let found = read.version_of(subject, *version).ok_or_else(|| {
                format!(
                    "its reference {name} names subject {subject} version {}, which the \
                     registry files do not hold",
                    version.map_or_else(|| "latest".to_string(), |v| v.to_string())
                )
            })?;
            if seen.contains(&found.id) {
                continue;
            }
            seen.push(found.id);
            let json = parse(&found.text)?;
            let full = json
                .as_object()
                .and_then(|o| full_name(o, ""))
                .unwrap_or_else(|| name.clone());
            defs.push((full, json));
            work.push(found);
        }
    }
    let mut json = parse(&entry.text)?;
    let mut defined = std::collections::HashSet::new();
    define_references(&mut json, "", &defs, &mut defined, 0);
    Ok(json.to_string())
}

/// The full name a named type's JSON object defines (`namespace.name`), in namespace `ns`.
fn full_name(json: &serde_json::Map<String, serde_json::Value>, ns: &str) -> Option<String> {
    let name = json.get("name")?.as_str()?;
    let namespace = json.get("namespace").and_then(|n| n.as_str()).unwrap_or(ns);
    Some(if name.contains('.') || namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}.{name}")
    })
}

/// Replaces the first use of each of `defs`' names in `json` (a schema, in namespace `ns`) by
/// its definition, walking only the places that hold a type; `defined` holds the names defined
/// so far. As deep as the schema's JSON, which its parser has bounded.
fn define_references(
    json: &mut serde_json::Value,
    ns: &str,
    defs: &[(String, serde_json::Value)],
    defined: &mut std::collections::HashSet<String>,
    depth: usize,
) {
    use serde_json::Value;
    if depth > 256 {
        return;
    }
    match json {
        Value::String(name) => {
            let qualified = if name.contains('.') || ns.is_empty() {
                name.clone()
            } else {
                format!("{ns}.{name}")
            };
            let found = [qualified, name.clone()]
                .into_iter()
                .find_map(|n| defs.iter().find(|(full, _)| *full == n));
            if let Some((full, def)) = found {
                if defined.insert(full.clone()) {
                    let mut def = def.clone();
                    define_references(&mut def, ns, defs, defined, depth + 1);
                    *json = def;
                }
            }
        }
        Value::Array(branches) => {
            for b in branches {
                define_references(b, ns, defs, defined, depth + 1);
            }
        }
        Value::Object(map) => {
            let inner_ns = match full_name(map, ns) {
                Some(full) => {
                    defined.insert(full.clone());
                    full.rsplit_once('.')
                        .map_or(String::new(), |(n, _)| n.to_string())
                }
                None => ns.to_string(),
            };
            for key in ["type", "items", "values"] {
                if let Some(v) = map.get_mut(key) {
                    define_references(v, &inner_ns, defs, defined, depth + 1);
                }
            }
            if let Some(Value::Array(fields)) = map.get_mut("fields") {
                for field in fields {
                    if let Some(t) = field.get_mut("type") {
                        define_references(t, &inner_ns, defs, defined, depth + 1);
                    }
                }
            }
        }
        _ => {}
    }
}

/// `entry`'s text as `name` and every file it imports, directly or not, by its import name:
/// its references' schemas, then the folder's `.proto` files. A reference no schema answers
/// is an error naming it.
fn proto_sources(entry: &Entry, name: &str, read: &Read) -> Result<Vec<(String, String)>, String> {
    let mut sources = vec![(name.to_string(), entry.text.clone())];
    let mut work: Vec<&Entry> = vec![entry];
    while let Some(at) = work.pop() {
        for (import, subject, version) in &at.references {
            if sources.iter().any(|(n, _)| n == import) {
                continue;
            }
            let found = read.version_of(subject, *version).ok_or_else(|| {
                format!(
                    "schema id {}: its reference {import} names subject {subject} version {}, \
                     which the registry files do not hold",
                    at.id,
                    version.map_or_else(|| "latest".to_string(), |v| v.to_string())
                )
            })?;
            sources.push((import.clone(), found.text.clone()));
            work.push(found);
        }
    }
    for (file, text) in &read.imports {
        if !sources.iter().any(|(n, _)| n == file) {
            sources.push((file.clone(), text.clone()));
        }
    }
    Ok(sources)
}

fn read_text(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.len() > MAX_FILE {
        return Err(format!(
            "{}: {} bytes, more than a registry file holds ({MAX_FILE})",
            path.display(),
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message-index path that names no message type says which schema id it was read by.
    #[test]
    fn message_index_errors_name_the_schema_id() {
        let mut schema = RegistrySchema {
            id: 7,
            kind: RegistryKind::Avro,
            subject: None,
            avro: None,
            proto: None,
            origin: "7.avsc".into(),
        };
        let err = schema.message(&[0]).expect_err("Avro");
        assert_eq!(err, MessageIndexError::NotProtobuf { id: 7 });
        assert_eq!(err.to_string(), "schema id 7 is not a Protobuf schema");
        schema.proto = Some(Err("7.proto:1:1: expected syntax".into()));
        assert_eq!(
            schema.message(&[0]).expect_err("not compiled").to_string(),
            "schema id 7: 7.proto:1:1: expected syntax"
        );
    }

    /// A schema file not named by its id, and a folder with no schema, are told in the words
    /// `--registry` and the app have always shown.
    #[test]
    fn load_errors_name_the_file_at_fault() {
        let dir = tempfile::tempdir().expect("temp dir");
        let err = Registry::load(dir.path()).expect_err("empty");
        assert!(matches!(err, RegistryError::Empty { .. }));
        assert_eq!(
            err.to_string(),
            format!(
                "{}: no schema found (a folder of <id>.avsc, <id>.proto or <id>.json files, or a \
                 JSON file of the registry's answers)",
                dir.path().display()
            )
        );
        let file = dir.path().join("orders.avsc");
        std::fs::write(&file, "\"long\"").expect("write");
        let err = Registry::load(dir.path()).expect_err("no id");
        assert_eq!(
            err.to_string(),
            format!(
                "{}: a registry folder names each schema file by its id (e.g. 42.avsc)",
                file.display()
            )
        );
    }

    #[test]
    fn folders_and_answers_are_read_by_id() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join("7.avsc"),
            r#"{"type":"record","name":"A","fields":[]}"#,
        )
        .expect("write");
        std::fs::write(dir.path().join("8.json"), r#"{"schema": "\"long\""}"#).expect("write");
        std::fs::write(
            dir.path().join("answers.json"),
            r#"[{"subject":"t-value","version":1,"id":9,"schemaType":"PROTOBUF","schema":"syntax = \"proto3\"; message M {}"},
                {"id":10,"schemaType":"JSON","schema":"{}"}]"#,
        )
        .expect("write");
        std::fs::write(dir.path().join("notes.txt"), "left alone").expect("write");
        let r = Registry::load(dir.path()).expect("loads");
        assert_eq!(r.len(), 4);
        assert_eq!(r.get(7).map(|s| s.kind), Some(RegistryKind::Avro));
        assert_eq!(
            r.get(8)
                .and_then(|s| s.avro.as_ref())
                .map(|a| a.canonical_form().to_string()),
            Some("\"long\"".to_string())
        );
        let nine = r.get(9).expect("id 9");
        assert_eq!(
            (nine.kind, nine.subject.as_deref()),
            (RegistryKind::Protobuf, Some("t-value"))
        );
        assert_eq!(r.get(10).map(|s| s.kind), Some(RegistryKind::Json));

        // An answer without an id outside a folder cannot be placed.
        let lone = dir.path().join("lone.json");
        std::fs::write(&lone, r#"{"schema": "\"int\""}"#).expect("write");
        let err = Registry::load(&lone).expect_err("no id");
        assert!(err.to_string().contains("answer 1: no \"id\""), "{err}");
        std::fs::remove_file(&lone).expect("removed");
        // A broken schema names its file and id.
        std::fs::write(dir.path().join("11.avsc"), "{\"type\": \"nothing\"}").expect("write");
        let err = Registry::load(dir.path()).expect_err("bad schema");
        assert!(err.to_string().contains("11.avsc, schema id 11"), "{err}");
    }

    /// An Avro schema that uses types registered under other subjects gets their definitions
    /// where it first uses them, through a chain of references and by short name in its
    /// namespace; a later use stays a name.
    #[test]
    fn avro_references_define_the_types_they_name() {
        let answers = serde_json::json!([
            {"id": 1, "subject": "geo.Point", "version": 1,
             "schema": r#"{"type":"record","name":"Point","namespace":"geo","fields":[{"name":"x","type":"double"}]}"#},
            {"id": 2, "subject": "shop.Address", "version": 1,
             "schema": r#"{"type":"record","name":"Address","namespace":"shop","fields":[{"name":"at","type":"geo.Point"}]}"#,
             "references": [{"name": "geo.Point", "subject": "geo.Point", "version": 1}]},
            {"id": 3, "subject": "shipments-value", "version": 1,
             "schema": r#"{"type":"record","name":"Shipment","namespace":"shop","fields":[{"name":"to","type":"Address"},{"name":"back","type":["null","Address"]}]}"#,
             "references": [{"name": "shop.Address", "subject": "shop.Address", "version": -1}]}
        ]);
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("answers.json");
        std::fs::write(&file, answers.to_string()).expect("write");
        let r = Registry::load(&file).expect("loads");
        let schema = r.get(3).and_then(|s| s.avro.as_ref()).expect("Avro");
        assert_eq!(
            schema.canonical_form(),
            r#"{"name":"shop.Shipment","type":"record","fields":[{"name":"to","type":{"name":"shop.Address","type":"record","fields":[{"name":"at","type":{"name":"geo.Point","type":"record","fields":[{"name":"x","type":"double"}]}}]}},{"name":"back","type":["null","shop.Address"]}]}"#
        );
        // A reference no answer holds is named.
        let mut broken = answers.clone();
        broken[2]["references"][0]["version"] = serde_json::json!(9);
        std::fs::write(&file, broken.to_string()).expect("write");
        let err = Registry::load(&file).expect_err("no version 9");
        assert!(
            err.to_string().contains(
                "schema id 3: its reference shop.Address names subject shop.Address version 9"
            ),
            "{err}"
        );
    }

    /// A `.proto` schema's imports: a folder's `.proto` file by its name, or the schema an
    /// answer's reference names by subject and version (the latest for -1).
    #[test]
    fn protobuf_imports_are_found_in_the_folder_and_by_reference() {
        let dir = tempfile::tempdir().expect("temp dir");
        let money = "syntax = \"proto3\"; package shop; message Money { int64 cents = 1; }";
        let invoice = "syntax = \"proto3\"; package shop; import \"shop/money.proto\"; \
                       message Invoice { Money total = 1; }";
        std::fs::write(
            dir.path().join("money.proto"),
            money.replace("cents", "units"),
        )
        .expect("write");
        std::fs::write(
            dir.path().join("3.proto"),
            invoice.replace("shop/money.proto", "money.proto"),
        )
        .expect("write");
        let r = Registry::load(dir.path()).expect("loads");
        let m = r.get(3).expect("id 3").message(&[0]).expect("a message");
        assert_eq!(m.full_name(), "shop.Invoice");
        let total = m.get_field_by_name("total").expect("field");
        let money_type = total.kind();
        let money_type = money_type.as_message().expect("a message field");
        assert!(money_type.get_field_by_name("units").is_some());

        let answers = |version: i64| {
            serde_json::json!([
                {"id": 1, "subject": "shop/money.proto", "version": 1, "schemaType": "PROTOBUF",
                 "schema": money.replace("cents", "old_cents")},
                {"id": 2, "subject": "shop/money.proto", "version": 2, "schemaType": "PROTOBUF",
                 "schema": money},
                {"id": 4, "subject": "invoices-value", "version": 1, "schemaType": "PROTOBUF",
                 "schema": invoice,
                 "references": [{"name": "shop/money.proto", "subject": "shop/money.proto",
                                 "version": version}]}
            ])
            .to_string()
        };
        let file = dir.path().join("answers.json");
        for (version, field) in [(1, "old_cents"), (2, "cents"), (-1, "cents")] {
            std::fs::write(&file, answers(version)).expect("write");
            let r = Registry::load(&file).expect("loads");
            let m = r.get(4).expect("id 4").message(&[0]).expect("a message");
            let total = m.get_field_by_name("total").expect("field").kind();
            let money_type = total.as_message().expect("a message field");
            assert!(
                money_type.get_field_by_name(field).is_some(),
                "version {version}"
            );
        }
        // A reference the files do not answer is named.
        std::fs::write(&file, answers(3)).expect("write");
        let r = Registry::load(&file).expect("loads");
        let err = r
            .get(4)
            .expect("id 4")
            .message(&[0])
            .expect_err("no version 3")
            .to_string();
        assert!(
            err.contains("its reference shop/money.proto names subject shop/money.proto version 3"),
            "{err}"
        );
    }
}
