//! Loading protobuf schemas: `.proto` files (compiled in-process with protox, no `protoc`) and
//! binary `FileDescriptorSet`s, listing their message types, and ranking which message type a
//! buffer most likely is.
//!
//! What this module does not do: decode (see [`super::dynamic`]). Editions: protox 0.10 parses
//! proto2 and proto3 only and prost-reflect 0.16 loads no editions file, so a `.proto` that
//! declares an edition is compiled by the vendored protoc ([`super::editions::protoc`]) and an
//! editions descriptor set is lowered to proto2 first ([`super::editions`]); [`Schema::compiler`]
//! says which compiler made a schema. Every call into prost-reflect's pool is guarded: a panic
//! inside it is caught, without its message reaching stderr, and becomes an error. protox 0.10
//! also cannot parse extension-range declarations (`extensions 1 [declaration = {...}]`), used
//! by protobuf's newest `descriptor.proto`.
//!
//! Conventions: errors in `.proto` text read `file:line:column: message` (1-based line and
//! column, the column counted in characters); descriptor-set errors are a plain sentence.

use std::path::{Path, PathBuf};

use miette::Diagnostic;
use prost_reflect::{DescriptorPool, MessageDescriptor};

use super::dynamic::DecodeStats;
use super::editions::{self, protoc, EditionFile};
use crate::codec::{DecodeOptions, Document};

pub(crate) use super::error::quietly;
pub use super::error::SchemaError;

/// A set of message types: a descriptor pool and the files it was loaded from.
#[derive(Debug, Clone)]
pub struct Schema {
    pool: DescriptorPool,
    files: Vec<String>,
    /// The files that were editions, lowered to proto2 ([`super::editions`]).
    editions: Vec<EditionFile>,
    /// What compiled the `.proto` text (`None` for a descriptor set or a given pool).
    compiler: Option<String>,
}

/// One message type's fit for a buffer, from [`Schema::rank`].
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The message type.
    pub message: MessageDescriptor,
    /// 0 (nothing fits) to 100 (every field known, many of them).
    pub score: u8,
    /// Plain sentences saying what counted.
    pub reasons: Vec<String>,
}

/// The most message types [`Schema::rank`] tries.
pub const RANK_LIMIT: usize = 500;

/// One field as `inspect --list-types --message` lists it and the app shows it on a right-click: number, name, type, and for editions files
/// the resolved features that decide its encoding.
pub fn field_line(field: &prost_reflect::FieldDescriptor) -> String {
    use super::editions::Scope;
    use prost_reflect::{Cardinality, Kind};
    let kind = field.kind();
    let type_name = match &kind {
        Kind::Message(m) if field.is_map() => {
            let key = m.map_entry_key_field().kind();
            let value = m.map_entry_value_field().kind();
            format!("map<{}, {}>", kind_name(&key), kind_name(&value))
        }
        k => kind_name(k),
    };
    let mut words = vec![format!("{} {}:", field.number(), field.name())];
    match field.cardinality() {
        Cardinality::Repeated if !field.is_map() => words.push("repeated".into()),
        Cardinality::Required => words.push("required".into()),
        _ => {}
    }
    words.push(type_name);
    if field.is_group() {
        words.push("(group)".into());
    }
    if field.is_packed() {
        words.push("(packed)".into());
    }
    if let Some(f) = editions::field_features(field) {
        let mut shown = f.describe(Some(Scope::Field));
        if let Kind::Enum(e) = &kind {
            if let Some(ef) = editions::enum_features(e) {
                shown.push(' ');
                shown.push_str(&ef.describe(Some(Scope::Enum)));
            }
        }
        words.push(format!("[{shown}]"));
    }
    words.join(" ")
}

/// A field type as a `.proto` writes it: `int32`, `string`, or the full name of a message or
/// enum.
fn kind_name(kind: &prost_reflect::Kind) -> String {
    // prost-reflect's Debug writes exactly that.
    format!("{kind:?}")
}

/// The field a path names in a value read as `message` (`$.events[0].time_unix_nano`: field
/// `time_unix_nano` of `SpanEvent`), through nested messages, repeated items and map values;
/// `None` for the root, a path that leaves the schema, or an extension.
pub fn field_at(
    message: &MessageDescriptor,
    path: &crate::model::Path,
) -> Option<prost_reflect::FieldDescriptor> {
    use crate::model::PathSegment;
    use prost_reflect::Kind;
    let mut message = message.clone();
    let mut field: Option<prost_reflect::FieldDescriptor> = None;
    // Set after a map field: the next key is a map key, and its value is the map's value field.
    let mut in_map: Option<prost_reflect::FieldDescriptor> = None;
    for segment in path.segments() {
        match segment {
            PathSegment::Index(_) | PathSegment::AnyIndex => continue,
            PathSegment::Key(name) | PathSegment::OtherKey(name) => {
                let next = match in_map.take() {
                    Some(map) => match map.kind() {
                        Kind::Message(entry) => entry.map_entry_value_field(),
                        _ => return None,
                    },
                    None => message.get_field_by_name(name)?,
                };
                if let Kind::Message(m) = next.kind() {
                    if next.is_map() {
                        in_map = Some(next.clone());
                    } else {
                        message = m;
                    }
                }
                field = Some(next);
            }
        }
    }
    field
}

/// Whether `bytes` are a `FileDescriptorSet` (`protoc -o`, `buf build -o`), whatever the file is
/// called: they start with field 1 as bytes, build a descriptor pool, and name at least one
/// file, each named `*.proto`. A protobuf payload whose field 1 happens to hold bytes does not
/// build a pool of `.proto` files.
///
/// ```
/// use wirelens::codec::protobuf::schema::is_descriptor_set;
///
/// // One file, `a.proto`, with no types.
/// assert!(is_descriptor_set(&[0x0a, 0x09, 0x0a, 0x07, b'a', b'.', b'p', b'r', b'o', b't', b'o']));
/// assert!(!is_descriptor_set(&[0x0a, 0x03, b'a', b'b', b'c']));
/// assert!(!is_descriptor_set(b"{\"a\":1}"));
/// ```
pub fn is_descriptor_set(bytes: &[u8]) -> bool {
    if bytes.first() != Some(&0x0a) {
        return false;
    }
    Schema::from_set(bytes, None).is_ok_and(|schema| {
        !schema.files.is_empty() && schema.files.iter().all(|f| f.ends_with(".proto"))
    })
}

impl Schema {
    /// A schema from an existing pool.
    pub fn from_pool(pool: DescriptorPool) -> Schema {
        let files = pool.files().map(|f| f.name().to_string()).collect();
        Schema {
            pool,
            files,
            editions: Vec::new(),
            compiler: None,
        }
    }

    /// A schema from a descriptor set, editions files lowered, with the compiler that made it.
    fn from_set(bytes: &[u8], compiler: Option<String>) -> Result<Schema, SchemaError> {
        let (pool, editions) = decode_pool(bytes)?;
        Ok(Schema {
            editions,
            compiler,
            ..Schema::from_pool(pool)
        })
    }

    /// The files that declared an edition (lowered to proto2 to load), in load order.
    pub fn editions(&self) -> &[EditionFile] {
        &self.editions
    }

    /// What compiled the schema's `.proto` text: `protox 0.10` for proto2 and proto3, `protoc
    /// 36.2 (protoc-bin-vendored)` for editions files; `None` for a descriptor set.
    pub fn compiler(&self) -> Option<&str> {
        self.compiler.as_deref()
    }

    /// Compiles `.proto` files in-process. Imports are looked up in `include_dirs` (in order),
    /// then in the roots each file's imports imply (the nearest folder at or above the file's
    /// own that holds an imported name), then in each file's own folder; the well-known types
    /// are bundled.
    ///
    /// Each file is named as protoc names it: by its path relative to the first include folder
    /// that holds it (`-I api` and `api/google/api/http.proto`, or its absolute path, are both
    /// `google/api/http.proto`), so a file that others import is compiled once. With include
    /// folders given, a file outside all of them is an error (protoc's "does not reside within
    /// any path"); without any, a file is named by its file name. A path that exists nowhere is
    /// looked up as an import name in the include folders, and otherwise is "no such file".
    pub fn from_proto_files(
        files: &[impl AsRef<Path>],
        include_dirs: &[impl AsRef<Path>],
    ) -> Result<Schema, SchemaError> {
        // Canonical folders, so absolute and relative spellings of a path compare equal.
        let mut includes: Vec<PathBuf> = Vec::new();
        for d in include_dirs {
            let d = d.as_ref();
            let canonical = d.canonicalize().map_err(|e| {
                SchemaError::Other(format!(
                    "include folder {}: {}",
                    d.display(),
                    no_such_file(&e)
                ))
            })?;
            if !includes.contains(&canonical) {
                includes.push(canonical);
            }
        }
        let given_includes = includes.len();
        let mut opened: Vec<PathBuf> = Vec::new();
        for f in files {
            let f = f.as_ref();
            let path = match f.canonicalize() {
                Ok(path) => path,
                Err(e) => match includes
                    .iter()
                    .take(given_includes)
                    .map(|d| d.join(f))
                    .find(|p| f.is_relative() && p.is_file())
                {
                    // An import name (`google/api/http.proto`) found in an include folder.
                    Some(path) => path,
                    None => {
                        return Err(SchemaError::Other(format!(
                            "{}: {}",
                            f.display(),
                            no_such_file(&e)
                        )))
                    }
                },
            };
            if given_includes > 0
                && !includes
                    .iter()
                    .take(given_includes)
                    .any(|d| path.starts_with(d))
            {
                let folders: Vec<String> = include_dirs
                    .iter()
                    .map(|d| d.as_ref().display().to_string())
                    .collect();
                return Err(SchemaError::Other(format!(
                    "{}: File does not reside within any path specified using --proto_path (-I): {}; give an -I folder that holds it",
                    f.display(),
                    folders.join(", ")
                )));
            }
            // The roots its imports imply, as buf finds them: `import "acme/common/types.proto"`
            // in `proto/acme/orders/v1/orders.proto` makes `proto/` a root when the import is
            // there. They come before the file's own folder, so the file is named from the root
            // (`acme/orders/v1/orders.proto`) as the files importing it name it.
            let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
            for root in implied_roots(&path).into_iter().chain([parent]) {
                if !includes.contains(&root) {
                    includes.push(root);
                }
            }
            opened.push(path);
        }
        check_imports(&opened, &includes)?;
        if opened.iter().any(|f| protoc::file_declares_edition(f)) {
            return Schema::with_protoc(&opened, &includes);
        }
        let mut compiler = protox::Compiler::new(&includes).map_err(|e| proto_error(&e, None))?;
        compiler.include_imports(true);
        for f in &opened {
            if let Err(e) = compiler.open_file(f) {
                // An import that declares an edition: protox stops at its first word.
                if e.to_string().contains("found 'edition'") {
                    return Schema::with_protoc(&opened, &includes);
                }
                return Err(proto_error(&e, None));
            }
        }
        let pool = quietly(|| compiler.descriptor_pool())
            .map_err(|()| SchemaError::Other(PANICKED.into()))?;
        Ok(Schema {
            compiler: Some(PROTOX.into()),
            ..Schema::from_pool(pool)
        })
    }

    /// Compiles `files` (canonical paths, each inside one of `includes`) with protoc.
    fn with_protoc(files: &[PathBuf], includes: &[PathBuf]) -> Result<Schema, SchemaError> {
        let names: Vec<String> = files
            .iter()
            .map(|f| {
                includes
                    .iter()
                    .find_map(|d| f.strip_prefix(d).ok())
                    .unwrap_or(f)
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        let compiled = protoc::compile(&names, includes)?;
        Schema::from_set(&compiled.set, Some(compiled.compiler))
    }

    /// Compiles pasted `.proto` text named `name`; it may import only the well-known types.
    pub fn from_proto_source(name: &str, text: &str) -> Result<Schema, SchemaError> {
        Schema::from_proto_sources(name, &[(name.to_string(), text.to_string())])
    }

    /// Compiles the `.proto` text named `name` among `sources` (`(name, text)`: the file and the
    /// files it imports, by the names its imports give), and the well-known types.
    pub fn from_proto_sources(
        name: &str,
        sources: &[(String, String)],
    ) -> Result<Schema, SchemaError> {
        let text = sources
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_str())
            .ok_or_else(|| SchemaError::Other(format!("{name}: no such source")))?;
        if sources.iter().any(|(_, t)| protoc::declares_edition(t)) {
            return Schema::sources_with_protoc(name, sources);
        }
        let resolver = SourceResolver {
            files: sources.to_vec(),
        };
        let mut chain = protox::file::ChainFileResolver::new();
        chain.add(resolver);
        chain.add(protox::file::GoogleFileResolver::new());
        let mut compiler = protox::Compiler::with_file_resolver(chain);
        compiler.include_imports(true);
        compiler.open_file(name).map_err(|e| {
            // The text of the file the error is in, for its line and column.
            let at = e.file().unwrap_or(name);
            let source = sources.iter().find(|(n, _)| n == at);
            proto_error(
                &e,
                source
                    .map(|(n, t)| (n.as_str(), t.as_str()))
                    .or(Some((name, text))),
            )
        })?;
        let pool = quietly(|| compiler.descriptor_pool())
            .map_err(|()| SchemaError::Other(PANICKED.into()))?;
        Ok(Schema {
            compiler: Some(PROTOX.into()),
            ..Schema::from_pool(pool)
        })
    }

    /// Compiles pasted editions text (and the sources it imports) with protoc, from a
    /// temporary folder.
    fn sources_with_protoc(
        name: &str,
        sources: &[(String, String)],
    ) -> Result<Schema, SchemaError> {
        let dir = tempfile::tempdir()
            .map_err(|e| SchemaError::Other(format!("cannot make a temporary folder: {e}")))?;
        for (file, text) in sources {
            let relative = Path::new(file);
            if relative.is_absolute()
                || relative
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)))
            {
                return Err(SchemaError::Other(format!(
                    "{file}: a pasted file's name must be a relative path without `..`"
                )));
            }
            let path = dir.path().join(relative);
            let written = path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&path, text));
            written
                .map_err(|e| SchemaError::Other(format!("cannot write {file} for protoc: {e}")))?;
        }
        let compiled = protoc::compile(&[name.to_string()], &[dir.path().to_path_buf()])?;
        Schema::from_set(&compiled.set, Some(compiled.compiler))
    }

    /// Loads a binary `FileDescriptorSet` (`protoc -o`, `.pb`/`.desc`/`.binpb`/`.protoset`).
    ///
    /// prost-reflect 0.16 can panic while describing an error in some sets (an index out of
    /// bounds in its error labels); that panic is caught and reported as an error.
    pub fn from_descriptor_set(bytes: &[u8]) -> Result<Schema, SchemaError> {
        Schema::from_set(bytes, None)
    }

    /// Loads a schema file: `.proto` text (compiled, imports from its folder) or a descriptor set
    /// (any other extension). A file that is neither gives a clear error.
    pub fn load(path: impl AsRef<Path>) -> Result<Schema, SchemaError> {
        let path = path.as_ref();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        if ext == "proto" {
            return Schema::from_proto_files(&[path], &[] as &[&Path]);
        }
        let bytes = std::fs::read(path)
            .map_err(|e| SchemaError::Other(format!("cannot read {}: {e}", path.display())))?;
        match Schema::from_set(&bytes, None) {
            Ok(schema) if !schema.files.is_empty() => Ok(schema),
            Ok(_) => Err(SchemaError::Other(format!(
                "{} holds no file descriptors; expected a FileDescriptorSet (protoc -o) or a .proto file",
                path.display()
            ))),
            Err(e) => {
                let looks_like_text = std::str::from_utf8(&bytes).is_ok_and(|t| {
                    t.contains("syntax") || t.contains("message ") || t.contains("package ")
                });
                if looks_like_text && !matches!(ext.as_str(), "pb" | "desc" | "binpb" | "protoset")
                {
                    Schema::from_proto_files(&[path], &[] as &[&Path])
                } else {
                    Err(SchemaError::Other(format!(
                        "{} is not a FileDescriptorSet (protoc -o): {e}",
                        path.display()
                    )))
                }
            }
        }
    }

    /// The descriptor pool.
    pub fn pool(&self) -> &DescriptorPool {
        &self.pool
    }

    /// Names of the files loaded (imports included), in dependency order.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// Full names of every message type, sorted.
    pub fn message_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .pool
            .all_messages()
            .map(|m| m.full_name().to_string())
            .collect();
        names.sort();
        names
    }

    /// A message type by full name (`pkg.Outer.Inner`, a leading dot allowed) or by a short name
    /// that only one type has (`Inner`, `Outer.Inner`). An unknown name lists close matches.
    pub fn message(&self, name: &str) -> Result<MessageDescriptor, SchemaError> {
        let name = name.strip_prefix('.').unwrap_or(name);
        if let Some(m) = self.pool.get_message_by_name(name) {
            return Ok(m);
        }
        let suffix = format!(".{name}");
        let matches: Vec<MessageDescriptor> = self
            .pool
            .all_messages()
            .filter(|m| m.full_name().ends_with(&suffix))
            .collect();
        match matches.len() {
            1 => return Ok(matches[0].clone()),
            0 => {}
            _ => {
                let mut names: Vec<&str> = matches.iter().map(|m| m.full_name()).collect();
                names.sort_unstable();
                return Err(SchemaError::Other(format!(
                    "message name {name} is ambiguous: {}",
                    names.join(", ")
                )));
            }
        }
        let lower = name.to_ascii_lowercase();
        let mut close: Vec<(usize, String)> = self
            .pool
            .all_messages()
            .filter_map(|m| {
                let full = m.full_name().to_ascii_lowercase();
                let short = m.name().to_ascii_lowercase();
                let d = levenshtein(&short, &lower).min(levenshtein(&full, &lower));
                (d <= 3 || full.contains(&lower)).then(|| (d, m.full_name().to_string()))
            })
            .collect();
        close.sort();
        close.truncate(5);
        if close.is_empty() {
            Err(SchemaError::Other(format!(
                "no message type named {name} in the schema ({} types)",
                self.pool.all_messages().len()
            )))
        } else {
            let names: Vec<String> = close.into_iter().map(|(_, n)| n).collect();
            Err(SchemaError::Other(format!(
                "no message type named {name}; did you mean {}?",
                names.join(", ")
            )))
        }
    }

    /// The message type of one side of a gRPC call: `path` is the call's HTTP/2 `:path`
    /// (`/package.Service/Method`), `request` picks the method's input type, else its output.
    /// `None` when the schema defines no such service or method.
    ///
    /// ```
    /// use wirelens::codec::protobuf::schema::Schema;
    ///
    /// let schema = Schema::from_proto_source(
    ///     "svc.proto",
    ///     "syntax = \"proto3\"; package p; message Q { int32 id = 1; } message R { string name = 1; }\n\
    ///      service S { rpc Get(Q) returns (R); }",
    /// )
    /// .expect("compiles");
    /// assert_eq!(schema.grpc_message("/p.S/Get", true).map(|m| m.full_name().to_string()), Some("p.Q".into()));
    /// assert_eq!(schema.grpc_message("/p.S/Get", false).map(|m| m.full_name().to_string()), Some("p.R".into()));
    /// assert!(schema.grpc_message("/p.S/Put", true).is_none());
    /// ```
    pub fn grpc_message(&self, path: &str, request: bool) -> Option<MessageDescriptor> {
        let (service, method) = path.strip_prefix('/')?.split_once('/')?;
        let service = self.pool.get_service_by_name(service)?;
        let method = service.methods().find(|m| m.name() == method)?;
        Some(if request {
            method.input()
        } else {
            method.output()
        })
    }

    /// Every service and its methods: `package.Service/Method (Input) returns (Output)`, with
    /// `stream` where a side streams. Sorted.
    pub fn methods(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .pool
            .services()
            .flat_map(|s| {
                let service = s.full_name().to_string();
                s.methods()
                    .map(|m| {
                        let side = |streaming: bool, msg: MessageDescriptor| {
                            if streaming {
                                format!("stream {}", msg.full_name())
                            } else {
                                msg.full_name().to_string()
                            }
                        };
                        format!(
                            "{service}/{} ({}) returns ({})",
                            m.name(),
                            side(m.is_client_streaming(), m.input()),
                            side(m.is_server_streaming(), m.output())
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        out.sort();
        out
    }

    /// Decodes `bytes` with every message type (at most [`RANK_LIMIT`]) and ranks those that
    /// read it: every byte consumed and valid (else skipped), no unknown fields, known enum
    /// numbers, and more known fields score higher. Best first.
    pub fn rank(&self, bytes: &[u8], options: &DecodeOptions) -> Vec<Candidate> {
        self.rank_reading(bytes, options).candidates
    }

    /// [`Schema::rank`], keeping the best candidate's reading: `bytes` decoded as that type with
    /// `options`, as [`crate::codec::decode`] reads it, so the type picked is not decoded again.
    pub fn rank_reading(&self, bytes: &[u8], options: &DecodeOptions) -> Ranking {
        let mut out: Vec<(Candidate, usize)> = Vec::new();
        let mut best: Option<Document> = None;
        for message in self.pool.all_messages().take(RANK_LIMIT) {
            if message.is_map_entry() {
                continue;
            }
            let Some((doc, stats)) = super::dynamic::decode_counting(bytes, &message, options)
            else {
                continue;
            };
            let candidate = (scored(bytes.len(), message, &stats), stats.known);
            if out.iter().all(|other| ranks_first(&candidate, other)) {
                best = Some(doc);
            }
            out.push(candidate);
        }
        out.sort_by(|a, b| {
            if ranks_first(a, b) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        });
        Ranking {
            candidates: out.into_iter().map(|(c, _)| c).collect(),
            best,
        }
    }
}

/// Message types ranked for a buffer, from [`Schema::rank_reading`].
#[derive(Debug, Clone, Default)]
pub struct Ranking {
    /// Best first.
    pub candidates: Vec<Candidate>,
    /// The buffer read as the first candidate; `None` when there is none.
    pub best: Option<Document>,
}

/// A message type that read a buffer of `len` bytes with `stats`, scored.
fn scored(len: usize, message: MessageDescriptor, stats: &DecodeStats) -> Candidate {
    let bad = stats.unknown + stats.unknown_enums;
    let total = stats.known + stats.extensions + bad;
    let mut reasons = vec![format!("all {len} bytes read")];
    let known = stats.known + stats.extensions;
    let score = if let Some(share) = (80 * known).checked_div(total) {
        reasons.push(format!("{known} known fields"));
        if stats.extensions > 0 {
            reasons.push(format!("{} of them extensions", stats.extensions));
        }
        if stats.unknown > 0 {
            reasons.push(format!("{} unknown fields", stats.unknown));
        }
        if stats.unknown_enums > 0 {
            reasons.push(format!("{} unknown enum numbers", stats.unknown_enums));
        }
        (share + known.min(20)) as u8
    } else {
        reasons.push("no fields".into());
        1
    };
    Candidate {
        message,
        score,
        reasons,
    }
}

/// Whether candidate `a` (with its count of fields the type names) ranks before `b`: the higher
/// score, then more named fields, then the full name in order (names are unique in a pool).
fn ranks_first((a, a_known): &(Candidate, usize), (b, b_known): &(Candidate, usize)) -> bool {
    b.score
        .cmp(&a.score)
        .then(b_known.cmp(a_known))
        .then_with(|| a.message.full_name().cmp(b.message.full_name()))
        .is_lt()
}

/// The compiler [`Schema::compiler`] names for proto2 and proto3 text.
const PROTOX: &str = "protox 0.10";

/// What an error says when prost-reflect panicked.
const PANICKED: &str =
    "not a FileDescriptorSet prost-reflect 0.16 can read (it failed while checking it)";

/// Decodes a descriptor set into a pool, editions files lowered to proto2 first, turning a
/// panic inside prost-reflect into an error.
fn decode_pool(bytes: &[u8]) -> Result<(DescriptorPool, Vec<EditionFile>), SchemaError> {
    if let Some((file, syntax)) = editions::unknown_syntax(bytes) {
        return Err(SchemaError::Other(format!(
            "not a valid FileDescriptorSet: {file} has syntax \"{syntax}\" (known: proto2, proto3, editions)"
        )));
    }
    let (lowered, editions) = if editions::has_editions(bytes) {
        let (set, files) = quietly(|| editions::lower_set(bytes))
            .map_err(|()| SchemaError::Other(PANICKED.into()))?
            .map_err(|e| SchemaError::Other(format!("editions descriptor set: {e}")))?;
        (Some(set), files)
    } else {
        (None, Vec::new())
    };
    let set = lowered.as_deref().unwrap_or(bytes);
    match quietly(|| DescriptorPool::decode(set)) {
        Ok(Ok(pool)) => Ok((pool, editions)),
        Ok(Err(e)) => Err(SchemaError::Other(format!(
            "not a valid FileDescriptorSet: {e}"
        ))),
        Err(()) => Err(SchemaError::Other(PANICKED.into())),
    }
}

/// Serves one in-memory `.proto` file to protox.
struct SourceResolver {
    /// `(name, text)` of each file it holds.
    files: Vec<(String, String)>,
}

impl protox::file::FileResolver for SourceResolver {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        match self.files.iter().find(|(n, _)| n == name) {
            Some((name, text)) => protox::file::File::from_source(name, text),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// A protox error as `file:line:column: message` when it points into a file.
fn proto_error(e: &protox::Error, source: Option<(&str, &str)>) -> SchemaError {
    let message = e.to_string();
    let offset = e
        .labels()
        .and_then(|mut labels| labels.next())
        .map(|l| l.offset());
    let file = e.file().map(str::to_string);
    if let (Some(offset), Some(file)) = (offset, file.clone()) {
        let text = match source {
            Some((name, text)) if name == file => Some(text.to_string()),
            _ => e.source_code().and_then(|sc| {
                let span = miette::SourceSpan::from(0..0);
                sc.read_span(&span, 0, usize::MAX)
                    .ok()
                    .and_then(|c| String::from_utf8(c.data().to_vec()).ok())
            }),
        };
        if let Some(text) = text {
            let (line, column) = line_column(&text, offset);
            return SchemaError::Proto {
                file,
                line,
                column,
                message,
            };
        }
    }
    match file {
        Some(f) if !message.contains(&f) => SchemaError::Other(format!("{f}: {message}")),
        _ => SchemaError::Other(message),
    }
}

/// "no such file" for a missing path, the system's words for any other failure.
/// The most of a `.proto` file read for its imports (a schema file is far smaller).
const IMPORT_SCAN_LIMIT: u64 = 4 << 20;

/// The names a `.proto` file's text imports (`import "a/b.proto";`, also `public` and `weak`),
/// in order. Comments are skipped; an import split over lines is not seen (protox still
/// reports it if it is missing).
fn import_names(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut in_block_comment = false;
    for line in text.lines() {
        let mut line = line.trim();
        if in_block_comment {
            match line.find("*/") {
                Some(end) => {
                    in_block_comment = false;
                    line = line[end + 2..].trim();
                }
                None => continue,
            }
        }
        if line.starts_with("/*") && !line.contains("*/") {
            in_block_comment = true;
            continue;
        }
        let Some(rest) = line.strip_prefix("import") else {
            continue;
        };
        if !rest.starts_with(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
            continue;
        }
        let rest = rest.trim_start();
        let rest = rest
            .strip_prefix("public")
            .or_else(|| rest.strip_prefix("weak"))
            .unwrap_or(rest)
            .trim_start();
        let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        if let Some(end) = rest[1..].find(quote) {
            names.push(&rest[1..1 + end]);
        }
    }
    names
}

/// The folders a `.proto` file's imports imply as roots: for each import, the nearest folder
/// at or above the file's own that holds it (canonical).
/// A file that cannot be read implies none (the compiler then says why).
fn implied_roots(path: &Path) -> Vec<PathBuf> {
    use std::io::Read;
    let mut text = String::new();
    let read =
        std::fs::File::open(path).and_then(|f| f.take(IMPORT_SCAN_LIMIT).read_to_string(&mut text));
    if read.is_err() {
        return Vec::new();
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    for name in import_names(&text) {
        if Path::new(name).is_absolute() {
            continue;
        }
        let holder = path
            .ancestors()
            .skip(1)
            .find(|folder| folder.join(name).is_file());
        if let Some(root) = holder.and_then(|f| f.canonicalize().ok()) {
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
    }
    roots
}

/// The most files [`check_imports`] follows, and the most folders [`folder_holding`] looks in.
const IMPORT_CHECK_LIMIT: usize = 2_000;

/// Follows the imports of `files` through `includes` (the well-known types are built in) and
/// names the first import no folder holds, with a folder near the importing file that does.
fn check_imports(files: &[PathBuf], includes: &[PathBuf]) -> Result<(), SchemaError> {
    use std::io::Read;
    let mut queue: Vec<PathBuf> = files.to_vec();
    let mut seen: std::collections::HashSet<PathBuf> = queue.iter().cloned().collect();
    while let Some(path) = queue.pop() {
        if seen.len() > IMPORT_CHECK_LIMIT {
            break;
        }
        let mut text = String::new();
        let read = std::fs::File::open(&path)
            .and_then(|f| f.take(IMPORT_SCAN_LIMIT).read_to_string(&mut text));
        if read.is_err() {
            continue;
        }
        for name in import_names(&text) {
            if name.starts_with("google/protobuf/") || Path::new(name).is_absolute() {
                continue;
            }
            match includes.iter().map(|d| d.join(name)).find(|p| p.is_file()) {
                Some(found) => {
                    if seen.insert(found.clone()) {
                        queue.push(found);
                    }
                }
                None => {
                    return Err(SchemaError::MissingImport {
                        file: path.clone(),
                        import: name.to_string(),
                        searched: includes.to_vec(),
                        nearby: folder_holding(&path, name),
                    })
                }
            }
        }
    }
    Ok(())
}

/// A folder near `file` such that `folder/import` is a file: where a user's missing import most
/// likely is. The file's own folder is searched first, then its parent's and its grandparent's
/// (each at most four levels down, nearest levels first), so the nearest copy wins.
fn folder_holding(file: &Path, import: &str) -> Option<PathBuf> {
    let mut looked = 0;
    for top in file.ancestors().skip(1).take(3) {
        let mut level: Vec<PathBuf> = vec![top.to_path_buf()];
        for _ in 0..=4 {
            let mut next = Vec::new();
            for dir in level {
                looked += 1;
                if looked > IMPORT_CHECK_LIMIT {
                    return None;
                }
                if dir.join(import).is_file() {
                    return Some(dir);
                }
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for e in entries.flatten() {
                    let hidden = e.file_name().to_string_lossy().starts_with('.');
                    if !hidden && e.file_type().is_ok_and(|t| t.is_dir()) {
                        next.push(e.path());
                    }
                }
            }
            next.sort();
            level = next;
        }
    }
    None
}

fn no_such_file(e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        "no such file".into()
    } else {
        e.to_string()
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// Edit distance, for "did you mean".
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quietly_turns_a_panic_into_an_error() {
        assert_eq!(quietly(|| 3), Ok(3));
        let caught: Result<u8, ()> = quietly(|| panic!("inside prost-reflect"));
        assert_eq!(caught, Err(()));
        // Nested calls keep the outer one quiet.
        assert_eq!(quietly(|| quietly(|| 1).ok()), Ok(Some(1)));
    }

    #[test]
    fn import_names_are_read_as_protoc_writes_them() {
        let text = "syntax = \"proto3\";\n// import \"commented.proto\";\n/* import \"block.proto\";\n   still */\nimport \"a/b.proto\";\nimport public 'c.proto';\n  import weak \"d/e.proto\" ;\nimportant = 1;\nmessage M {}\n";
        assert_eq!(import_names(text), ["a/b.proto", "c.proto", "d/e.proto"]);
    }

    #[test]
    fn line_column_counts_from_one() {
        assert_eq!(line_column("ab\ncd\n", 4), (2, 2));
        assert_eq!(line_column("x", 0), (1, 1));
    }

    #[test]
    fn pasted_source_compiles_and_finds_short_names() {
        let s = Schema::from_proto_source(
            "a.proto",
            "syntax = \"proto3\";\npackage p;\nimport \"google/protobuf/timestamp.proto\";\nmessage Outer { message Inner { int32 x = 1; } google.protobuf.Timestamp t = 1; }\n",
        )
        .expect("compiles");
        assert_eq!(
            s.message("Inner").expect("short").full_name(),
            "p.Outer.Inner"
        );
        assert_eq!(s.message(".p.Outer").expect("full").full_name(), "p.Outer");
        let err = s.message("Outr").expect_err("unknown").to_string();
        assert!(err.contains("did you mean p.Outer"), "{err}");
    }

    #[test]
    fn errors_point_at_line_and_column() {
        let err = Schema::from_proto_source(
            "bad.proto",
            "syntax = \"proto3\";\nmessage M {\n  Missing m = 1;\n}\n",
        )
        .expect_err("unknown type");
        let text = err.to_string();
        assert!(text.starts_with("bad.proto:3:3: "), "{text}");
    }
}
