//! The protobuf schemas the user loaded, and how protobuf is read and written with them.
//!
//! Schemas come from `.proto` files (with include folders), descriptor sets, pasted `.proto`
//! text or pasted base64/hex descriptor sets. The [`ProtoMode`] says what protobuf means for the
//! current payload: a chosen message type, the best-ranked one, or no schema at all (read field by
//! field; written with an inferred schema). Nothing here decodes payloads.

use std::path::{Path, PathBuf};

use crate::capture::decode_text;
use crate::codec::avro::{AvroSchema, AvroSchemaError};
use crate::codec::protobuf::schema::{Ranking, Schema, SchemaError};
use crate::codec::protobuf::MessageDescriptor;
use crate::codec::DecodeOptions;
use crate::limits::Limits;

use super::errors::SchemaLoadError;

/// Where a loaded schema came from (persisted as paths, so it can be loaded again next run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaOrigin {
    /// `.proto` files with include folders, or a descriptor set file.
    Files {
        /// The `.proto` or descriptor set files.
        files: Vec<PathBuf>,
        /// Folders searched for imports.
        includes: Vec<PathBuf>,
    },
    /// Pasted `.proto` text.
    PastedProto,
    /// A pasted base64 or hex descriptor set.
    PastedDescriptorSet,
}

/// One loaded schema.
#[derive(Debug, Clone)]
pub struct LoadedSchema {
    /// Where it came from.
    pub origin: SchemaOrigin,
    /// A short label for lists.
    pub label: String,
    /// The compiled schema.
    pub schema: Schema,
}

/// One method of a loaded service, as the message picker lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    /// Its gRPC path, `/package.Service/Method`.
    pub path: String,
    /// The request type's full name.
    pub input: String,
    /// The response type's full name.
    pub output: String,
    /// The client sends a stream of requests.
    pub client_streaming: bool,
    /// The server answers with a stream of responses.
    pub server_streaming: bool,
}

/// How protobuf is read and written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ProtoMode {
    /// The best-ranked message type when a schema is loaded and one fits, else no schema.
    #[default]
    Auto,
    /// This message type (full name).
    Message(String),
    /// No schema: protobuf input is read field by field, other formats are written as protobuf
    /// with an inferred schema.
    SchemaLess,
}

impl ProtoMode {
    /// The label the app shows.
    pub fn label(&self) -> String {
        match self {
            ProtoMode::Auto => "best matching message type (or no schema)".into(),
            ProtoMode::Message(m) => format!("schema-guided: {m}"),
            ProtoMode::SchemaLess => "schema-less (written with an inferred schema)".into(),
        }
    }
}

/// The schemas loaded so far.
#[derive(Debug, Clone, Default)]
pub struct SchemaSet {
    /// In load order.
    pub loaded: Vec<LoadedSchema>,
    /// Avro schemas (`.avsc` files or pasted JSON), in load order: the last one (other than the
    /// reader's) is the writer's schema Avro payloads are read with and the Avro column is
    /// written by.
    pub avro: Vec<LoadedAvro>,
    /// The Avro reader's schema, when the user chose one of [`SchemaSet::avro`]: Avro is read
    /// as it reads what the writer's schema wrote.
    pub avro_reader: Option<AvroSchema>,
    /// Schemas by Confluent Schema Registry id (a registry folder or its JSON answers).
    pub registry: Option<crate::codec::avro::registry::Registry>,
}

/// One loaded Avro schema.
#[derive(Debug, Clone)]
pub struct LoadedAvro {
    /// The `.avsc` file, or `None` when pasted.
    pub file: Option<PathBuf>,
    /// A short label for lists: the file name and the schema's name.
    pub label: String,
    /// The parsed schema.
    pub schema: AvroSchema,
}

impl SchemaSet {
    /// Loads `.proto` files or one descriptor set file (`Schema::load` for a single file).
    pub fn load_files(
        &mut self,
        files: &[PathBuf],
        includes: &[PathBuf],
    ) -> Result<&LoadedSchema, SchemaError> {
        let schema = match files {
            [] => return Err(SchemaError::Other("no schema file given".into())),
            [one] if includes.is_empty() => Schema::load(one),
            _ => {
                // The app's folders are where to look, not a fence: a file outside them adds
                // its own folder (the CLI's `-I` keeps protoc's rule).
                let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
                let mut folders = includes.to_vec();
                for file in files {
                    let Some(parent) = file
                        .canonicalize()
                        .ok()
                        .and_then(|f| f.parent().map(Path::to_path_buf))
                    else {
                        continue;
                    };
                    if !folders.iter().any(|d| parent.starts_with(canon(d))) {
                        folders.push(parent);
                    }
                }
                Schema::from_proto_files(files, &folders)
            }
        }?;
        let label = files
            .iter()
            .map(|f| {
                f.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join(", ")
            + &editions_suffix(&schema);
        Ok(self.push(LoadedSchema {
            origin: SchemaOrigin::Files {
                files: files.to_vec(),
                includes: includes.to_vec(),
            },
            label,
            schema,
        }))
    }

    /// Loads pasted text: `.proto` source, or a descriptor set as base64 or hex. The error says
    /// why neither worked (the `.proto` compiler's message, with its line, when the text looks
    /// like `.proto`).
    pub fn load_pasted(&mut self, text: &str) -> Result<&LoadedSchema, SchemaLoadError> {
        let looks_like_proto = text.contains("message ")
            || text.contains("syntax")
            || text.contains("package ")
            || text.contains("enum ")
            || text.contains("edition");
        if looks_like_proto {
            let schema =
                Schema::from_proto_source("pasted.proto", text).map_err(SchemaLoadError::Proto)?;
            return Ok(self.push(LoadedSchema {
                origin: SchemaOrigin::PastedProto,
                label: format!("pasted .proto{}", editions_suffix(&schema)),
                schema,
            }));
        }
        let decoded =
            decode_text(text.as_bytes(), 64 * 1024 * 1024).ok_or(SchemaLoadError::NotASchema)?;
        let schema = Schema::from_descriptor_set(&decoded.bytes).map_err(|source| {
            SchemaLoadError::NotADescriptorSet {
                detail: decoded.detail.clone(),
                source,
            }
        })?;
        Ok(self.push(LoadedSchema {
            origin: SchemaOrigin::PastedDescriptorSet,
            label: format!("pasted descriptor set{}", editions_suffix(&schema)),
            schema,
        }))
    }

    /// Loads `.proto` source that came with a name (a bundled sample), labelled with it.
    pub fn load_proto_source(
        &mut self,
        name: &str,
        text: &str,
    ) -> Result<&LoadedSchema, SchemaLoadError> {
        let schema = Schema::from_proto_source(name, text).map_err(SchemaLoadError::Proto)?;
        Ok(self.push(LoadedSchema {
            origin: SchemaOrigin::PastedProto,
            label: name.to_string(),
            schema,
        }))
    }

    /// Loads an Avro schema file (`.avsc`).
    pub fn load_avro_file(&mut self, path: &Path) -> Result<&LoadedAvro, AvroSchemaError> {
        let schema = AvroSchema::from_file(path)?;
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        Ok(self.push_avro(LoadedAvro {
            file: Some(path.to_path_buf()),
            label: format!("{name} ({})", schema.title()),
            schema,
        }))
    }

    /// Loads pasted Avro schema text (JSON).
    pub fn load_avro_text(&mut self, text: &str) -> Result<&LoadedAvro, AvroSchemaError> {
        let schema = AvroSchema::parse(text, "the pasted Avro schema")?;
        Ok(self.push_avro(LoadedAvro {
            file: None,
            label: format!("pasted .avsc ({})", schema.title()),
            schema,
        }))
    }

    fn push_avro(&mut self, s: LoadedAvro) -> &LoadedAvro {
        // The same schema loaded again moves to the end (it becomes the one in use).
        self.avro.retain(|a| a.schema != s.schema);
        self.avro.push(s);
        let last = self.avro.len() - 1;
        &self.avro[last]
    }

    /// The Avro schema in use: the last loaded (other than the reader's).
    pub fn avro_schema(&self) -> Option<&AvroSchema> {
        self.avro
            .iter()
            .rev()
            .map(|a| &a.schema)
            .find(|s| self.avro_reader.as_ref() != Some(*s))
    }

    /// The loaded Avro schemas a writer may have used, the default (last loaded) last: every
    /// one but the reader's.
    pub fn avro_schemas(&self) -> Vec<AvroSchema> {
        self.avro
            .iter()
            .map(|a| a.schema.clone())
            .filter(|s| self.avro_reader.as_ref() != Some(s))
            .collect()
    }

    fn push(&mut self, s: LoadedSchema) -> &LoadedSchema {
        self.loaded.push(s);
        let last = self.loaded.len() - 1;
        &self.loaded[last]
    }

    /// Whether no schema is loaded.
    pub fn is_empty(&self) -> bool {
        self.loaded.is_empty() && self.avro.is_empty() && self.registry.is_none()
    }

    /// Every message type's full name, sorted, without duplicates.
    pub fn message_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .loaded
            .iter()
            .flat_map(|s| s.schema.message_names())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Every service method of the loaded schemas, sorted by gRPC path, without duplicates: the
    /// picker offers each one's request and response type.
    pub fn methods(&self) -> Vec<Method> {
        let mut methods: Vec<Method> = self
            .loaded
            .iter()
            .flat_map(|s| s.schema.pool().services())
            .flat_map(|service| {
                service
                    .methods()
                    .map(|m| Method {
                        path: format!("/{}/{}", service.full_name(), m.name()),
                        input: m.input().full_name().to_string(),
                        output: m.output().full_name().to_string(),
                        client_streaming: m.is_client_streaming(),
                        server_streaming: m.is_server_streaming(),
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        methods.sort_by(|a, b| a.path.cmp(&b.path));
        methods.dedup_by(|a, b| a.path == b.path);
        methods
    }

    /// The message type named `name` (full name) from the latest schema that has it.
    pub fn message(&self, name: &str) -> Option<MessageDescriptor> {
        self.loaded
            .iter()
            .rev()
            .find_map(|s| s.schema.message(name).ok())
    }

    /// The message type of one side of a gRPC call (`path` is `/package.Service/Method`), from the
    /// latest schema that defines the service.
    pub fn grpc_message(&self, path: &str, request: bool) -> Option<MessageDescriptor> {
        self.loaded
            .iter()
            .rev()
            .find_map(|s| s.schema.grpc_message(path, request))
    }

    /// Every loaded schema's message types ranked for `bytes` (each decode within `limits`),
    /// best first.
    pub fn rank(&self, bytes: &[u8], limits: &Limits) -> Ranking {
        let options = DecodeOptions {
            limits: *limits,
            ..DecodeOptions::default()
        };
        let rankings: Vec<Ranking> = self
            .loaded
            .iter()
            .map(|s| s.schema.rank_reading(bytes, &options))
            .collect();
        // The first candidate of the schema whose best scores highest (the first of those
        // that tie, as the stable sort below keeps them) is the first of all.
        let top = |r: &Ranking| r.candidates.first().map(|c| c.score);
        let first = rankings
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i, top(r)?)))
            .fold(None, |best: Option<(usize, u8)>, (i, score)| match best {
                Some((_, s)) if s >= score => best,
                _ => Some((i, score)),
            });
        let mut best = None;
        let mut all = Vec::new();
        for (i, ranking) in rankings.into_iter().enumerate() {
            if first.is_some_and(|(f, _)| f == i) {
                best = ranking.best;
            }
            all.extend(ranking.candidates);
        }
        all.sort_by_key(|c| std::cmp::Reverse(c.score));
        Ranking {
            candidates: all,
            best,
        }
    }
}

impl crate::pipeline::MessageTypes for SchemaSet {
    fn grpc_message(&self, path: &str, request: bool) -> Option<MessageDescriptor> {
        SchemaSet::grpc_message(self, path, request)
    }

    fn rank(&self, bytes: &[u8], limits: &Limits) -> Ranking {
        SchemaSet::rank(self, bytes, limits)
    }
}

/// What a schema label adds for editions files: the editions, and the compiler when text was
/// compiled (protoc, not protox); nothing for proto2 and proto3.
fn editions_suffix(schema: &Schema) -> String {
    if schema.editions().is_empty() {
        return String::new();
    }
    let mut editions: Vec<&str> = schema
        .editions()
        .iter()
        .map(|f| f.edition.as_str())
        .collect();
    editions.dedup();
    let editions = editions.join(", ");
    match schema.compiler() {
        Some(c) => format!(" (edition {editions}, compiled by {c})"),
        None => format!(" (edition {editions})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROTO: &str = "syntax = \"proto3\";\npackage demo;\nmessage Point { int32 x = 1; int32 y = 2; }\nmessage Name { string text = 1; }\n";

    #[test]
    fn pasted_proto_lists_its_messages_and_ranks_them() -> Result<(), SchemaLoadError> {
        let mut set = SchemaSet::default();
        set.load_pasted(PROTO)?;
        assert_eq!(set.message_names(), vec!["demo.Name", "demo.Point"]);
        // x = 3 (field 1 varint), y = 4 (field 2 varint): only Point has two varint fields.
        let bytes = [0x08, 0x03, 0x10, 0x04];
        let ranked = set.rank(&bytes, &Limits::default());
        assert_eq!(
            ranked.candidates.first().map(|c| c.message.full_name()),
            Some("demo.Point")
        );
        let point = set.message("demo.Point").expect("loaded");
        assert_eq!(ranked.best, Some(read_as(&bytes, point)));
        assert!(set.message("demo.Nope").is_none());
        assert!(set.message("demo.Nope").is_none());
        Ok(())
    }

    /// `bytes` read as `message`, as the pipeline reads protobuf with a message type.
    fn read_as(bytes: &[u8], message: MessageDescriptor) -> crate::codec::Document {
        let options = DecodeOptions {
            message: Some(message),
            ..DecodeOptions::default()
        };
        crate::codec::decode(bytes, crate::codec::Format::Protobuf, &options).expect("reads")
    }

    #[test]
    fn the_ranking_keeps_the_reading_of_the_first_candidate_of_all_schemas() {
        let mut set = SchemaSet::default();
        set.load_pasted("syntax = \"proto3\";\npackage a;\nmessage One { int32 x = 1; }\n")
            .expect("first schema");
        set.load_pasted(PROTO).expect("second schema");
        set.load_pasted(
            "syntax = \"proto3\";\npackage z;\nmessage Pair { int32 x = 1; int32 y = 2; }\n",
        )
        .expect("third schema");
        // Two varint fields: a.One knows one, demo.Point and z.Pair both; the tie goes to the
        // schema loaded first.
        let bytes = [0x08, 0x03, 0x10, 0x04];
        let ranked = set.rank(&bytes, &Limits::default());
        let names: Vec<&str> = ranked
            .candidates
            .iter()
            .map(|c| c.message.full_name())
            .collect();
        assert_eq!(names[..2], ["demo.Point", "z.Pair"]);
        let point = set.message("demo.Point").expect("loaded");
        assert_eq!(ranked.best, Some(read_as(&bytes, point)));
        let none = set.rank(&[0xff], &Limits::default());
        assert!(none.candidates.is_empty() && none.best.is_none());
    }

    #[test]
    fn a_pasted_hex_descriptor_set_loads() -> Result<(), SchemaLoadError> {
        let mut first = SchemaSet::default();
        first.load_pasted(PROTO)?;
        let pool = first.loaded[0].schema.pool().encode_to_vec();
        let hex: String = pool.iter().map(|b| format!("{b:02x}")).collect();
        let mut set = SchemaSet::default();
        set.load_pasted(&hex)?;
        assert_eq!(set.loaded[0].origin, SchemaOrigin::PastedDescriptorSet);
        assert!(set.message_names().contains(&"demo.Point".to_string()));
        Ok(())
    }

    #[test]
    fn pasted_editions_text_is_compiled_by_protoc_and_says_so() -> Result<(), SchemaLoadError> {
        let mut set = SchemaSet::default();
        let loaded = set.load_pasted(
            "edition = \"2023\";\npackage e;\nmessage P { int32 x = 1 [features.field_presence = IMPLICIT]; }\n",
        )?;
        assert!(
            loaded
                .label
                .starts_with("pasted .proto (edition 2023, compiled by protoc 36."),
            "{}",
            loaded.label
        );
        assert!(set.message("e.P").is_some());
        Ok(())
    }

    #[test]
    fn bad_proto_text_says_where() {
        let mut set = SchemaSet::default();
        let err = set
            .load_pasted("syntax = \"proto3\";\nmessage A { int32 x = ; }\n")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("pasted.proto"), "{err}");
        assert!(set.is_empty());
    }
}
