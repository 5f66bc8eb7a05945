//! The command line's arguments as clap parses them: the commands, and the arguments every
//! command that reads an input shares ([`ReadArgs`], with [`SchemaArgs`] and [`LimitArgs`]),
//! and [`ReadPlan`], what they resolve to once.

use std::fs;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use super::{CompareArgs, DiffArgs, DiffSchemaArgs, Failure};
use crate::capture::tls::KeyLog;
use crate::capture::{Framing, PeelChoice, Split};
use crate::codec::avro::registry::Registry;
use crate::codec::avro::AvroSchema;
use crate::codec::protobuf::schema::Schema;
use crate::codec::protobuf::wire::FieldReading;
use crate::codec::{DecodeOptions, Format};
use crate::limits::Limits;
use crate::pipeline::Layers;

/// wirelens: see a payload in JSON, MessagePack and CBOR side by side, byte by byte.
#[derive(Debug, Parser)]
#[command(
    name = "wirelens",
    version,
    about,
    args_conflicts_with_subcommands = true,
    after_help = "Captured traffic (hex dumps, base64, HTTP, gRPC, pcap, sequences) is peeled to its payloads. `wirelens inspect FILE --layers` lists every way of peeling it, best first; `--layer N|raw|whole|grpc|cbor-seq|msgpack-seq|varint-delimited|u32-delimited` chooses one (inspect and convert)."
)]
pub struct Cli {
    /// What to do; without a command, the GUI opens.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Files to open in the GUI.
    pub files: Vec<PathBuf>,
}

/// A CLI command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show how the input was read, its tree of fields with byte ranges, and an annotated hex dump.
    Inspect(InspectArgs),
    /// Re-encode the input in another format.
    Convert(ConvertArgs),
    /// Print a .proto that can carry the input (JSON, MessagePack or CBOR).
    InferProto(InferProtoArgs),
    /// Print an Avro schema (.avsc) that can carry the input, as `--to avro` infers it.
    InferAvro(InferAvroArgs),
    /// Profile the inputs in every format and library: sizes, bytes per field, timings,
    /// scaling and transfer estimates (a terminal table, CSV with --csv).
    Compare(CompareArgs),
    /// Compare two payloads (any formats, captures peeled) by meaning: one line per change with
    /// its path and bytes; exit 0 same meaning, 1 different, 2 trouble.
    Diff(DiffArgs),
    /// Compare two versions of a protobuf message type for wire and JSON compatibility;
    /// exit 0 compatible, 1 not, 2 trouble.
    DiffSchema(DiffSchemaArgs),
}

/// `wirelens infer-proto`.
#[derive(Debug, Args)]
pub struct InferProtoArgs {
    /// The payload file (JSON, MessagePack or CBOR), or `-` for standard input.
    pub input: PathBuf,
    /// Read the input as this format instead of detecting it: json, msgpack, cbor.
    #[arg(long, value_parser = parse_format)]
    pub from: Option<Format>,
    /// Name of the top-level message.
    #[arg(long, default_value = "Payload")]
    pub message: String,
    /// Package of the .proto (none unless given).
    #[arg(long)]
    pub package: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub limits: LimitArgs,
}

/// `wirelens infer-avro`.
#[derive(Debug, Args)]
pub struct InferAvroArgs {
    /// The payload file (any format wirelens reads), or `-` for standard input.
    pub input: PathBuf,
    /// Read the input as this format instead of detecting it.
    #[arg(long, value_parser = parse_format)]
    pub from: Option<Format>,
    /// Name of the top-level record.
    #[arg(long, default_value = "Payload")]
    pub name: String,
    /// Namespace of every named type (none unless given).
    #[arg(long)]
    pub namespace: Option<String>,
    /// Logical types for text that always holds one: `uuid` strings, and RFC 3339 text as
    /// `timestamp-micros` (or `-nanos` for finer digits).
    #[arg(long)]
    pub infer_logical: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub limits: LimitArgs,
}

/// The limits on what an input may cost, as every command that reads one takes them.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Deepest nesting of arrays and maps accepted.
    #[arg(long, default_value_t = DecodeOptions::DEFAULT_MAX_DEPTH)]
    pub max_depth: usize,
    /// Limits on what the input may cost, each `NAME=VALUE` (the names of [`Limits::NAMES`]).
    #[arg(long = "limit", value_name = "NAME=VALUE", help = limit_help())]
    pub limits: Vec<String>,
}

impl LimitArgs {
    /// The limits the flags set: defaults, then `--max-depth`, then each `--limit` in order.
    pub(super) fn limits(&self) -> Result<Limits, Failure> {
        let mut limits = Limits::default();
        let depth = self.max_depth.to_string();
        for pair in std::iter::once(format!("depth={depth}")).chain(self.limits.iter().cloned()) {
            limits
                .set_pair(&pair)
                .map_err(|e| Failure::Usage(format!("error: {e}")))?;
        }
        Ok(limits)
    }
}

/// The payload file a command reads, and how to read it.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// The payload file, or `-` for standard input.
    #[arg(required = true)]
    pub input: Option<PathBuf>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub read: ReadArgs,
}

/// How to read an input, as every command that reads one takes it (`inspect`, `convert`,
/// `compare`, `diff`): parsed here, then resolved once by [`ReadArgs::resolve`] into the
/// limits, schemas, key log and way of peeling the run uses.
#[derive(Debug, Clone, Default, Args)]
pub struct ReadArgs {
    /// Read the input as this format instead of detecting it: json, msgpack, cbor, protobuf, avro (with --avro-schema).
    #[arg(long, value_parser = parse_format)]
    pub from: Option<Format>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub limits: LimitArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub schema: SchemaArgs,
    /// The Nth payload (from 1) of a capture holding several, as `inspect` lists them.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub pick: Option<u64>,
    /// Take the input as the payload itself: peel no layers (hex, base64, HTTP, pcap, gRPC).
    #[arg(long)]
    pub raw: bool,
    /// A TLS key log (NSS format, as SSLKEYLOGFILE writes it) to decrypt the capture's TLS
    /// connections with, besides any key log the capture carries (pcapng secrets blocks).
    #[arg(long, value_name = "FILE")]
    pub keylog: Option<PathBuf>,
    /// How to peel the input, instead of the best-ranked way: N (the Nth reading `inspect
    /// --layers` lists), `raw` (no layers), `whole` (every layer, streams left unsplit), or a
    /// framing to split every payload by: grpc, cbor-seq, msgpack-seq, varint-delimited,
    /// u32-delimited.
    #[arg(long, value_name = "N|raw|whole|FRAMING", value_parser = parse_layer, conflicts_with = "raw")]
    pub layer: Option<LayerArg>,
    /// Protobuf without a schema: read the field at PATTERN as READING, at every occurrence
    /// (`--read '$.1[*].2=bytes'`; patterns by field numbers, `$.1.2` or `${1}{2}`). READING is
    /// message, string, bytes, packed-varint, packed-sint64, packed-fixed32, packed-float,
    /// packed-fixed64, packed-double, uint64, int64, sint64, bool, fixed32, sfixed32, float,
    /// fixed64, sfixed64 or double. Repeatable.
    #[arg(long = "read", value_name = "PATTERN=READING", value_parser = FieldReading::parse)]
    pub read: Vec<FieldReading>,
}

/// What `--layer` chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerArg {
    /// The Nth layer reading (from 1), as `inspect --layers` lists them.
    Reading(usize),
    /// A way of peeling named outright.
    Choice(PeelChoice),
}

pub(super) fn parse_layer(s: &str) -> Result<LayerArg, String> {
    if let Ok(n) = s.parse::<usize>() {
        return if n == 0 {
            Err("layer readings are numbered from 1".into())
        } else {
            Ok(LayerArg::Reading(n))
        };
    }
    let choice = match s {
        "raw" => PeelChoice {
            max_layers: Some(0),
            split: Split::Never,
        },
        "whole" => PeelChoice {
            max_layers: None,
            split: Split::Never,
        },
        other => match Framing::from_key(other) {
            Some(f) => PeelChoice {
                max_layers: None,
                split: Split::Force(f),
            },
            None => {
                return Err(format!(
                    "unknown layer `{other}` (expected a number, raw, whole, grpc, cbor-seq, msgpack-seq, varint-delimited or u32-delimited)"
                ))
            }
        },
    };
    Ok(LayerArg::Choice(choice))
}

/// Where protobuf message types and the Avro schema come from.
#[derive(Debug, Clone, Default, Args)]
pub struct SchemaArgs {
    /// A .proto file to compile (repeatable); imports are found beside it and in -I folders.
    #[arg(long = "proto", value_name = "FILE.proto")]
    pub protos: Vec<PathBuf>,
    /// A folder to look for imported .proto files in (repeatable).
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub includes: Vec<PathBuf>,
    /// A binary FileDescriptorSet (protoc -o, buf build).
    #[arg(long, value_name = "FILE.pb", conflicts_with = "protos")]
    pub descriptor_set: Option<PathBuf>,
    /// The message type of the payload (full name, or a short name only one type has). Without
    /// it, the best-matching type of the schema is used and the ranking is shown.
    #[arg(long, value_name = "pkg.Name")]
    pub message: Option<String>,
    /// An Avro schema (.avsc): the writer's schema Avro payloads are read with, and the schema
    /// `--to avro` writes by (without it, one is inferred from the payload).
    #[arg(long, value_name = "FILE.avsc")]
    pub avro_schema: Option<PathBuf>,
    /// An Avro reader's schema (.avsc): Avro payloads are read as this schema reads what the
    /// writer's schema wrote (the specification's schema resolution: promotions, defaults for
    /// added fields, dropped fields, aliases, enum defaults, union branches).
    #[arg(long, value_name = "FILE.avsc")]
    pub reader_schema: Option<PathBuf>,
    /// Confluent Schema Registry schemas: a folder of `<id>.avsc`, `<id>.proto` and `<id>.json`
    /// files, or a JSON file of the registry's answers (GET /schemas). A payload that starts
    /// with a zero byte and an id found here is read by that schema, its framing peeled.
    #[arg(long, value_name = "DIR|FILE.json")]
    pub registry: Option<PathBuf>,
}

/// The `--limit` help: every name [`Limits::set`] takes, so the list cannot fall behind it.
pub(super) fn limit_help() -> String {
    let names: Vec<&str> = Limits::NAMES.iter().map(|(name, _)| *name).collect();
    format!(
        "Set a limit on what the input may cost (repeatable): {}; values are counts with an optional K/M/G suffix, or `none` (docs/limits.md)",
        names.join(", ")
    )
}

impl Default for LimitArgs {
    fn default() -> LimitArgs {
        LimitArgs {
            max_depth: DecodeOptions::DEFAULT_MAX_DEPTH,
            limits: Vec::new(),
        }
    }
}

impl SchemaArgs {
    /// The protobuf schema the flags name, if any, compiled or read.
    fn protobuf(&self) -> Result<Option<Schema>, Failure> {
        let schema = if let Some(set) = &self.descriptor_set {
            let bytes = fs::read(set).map_err(|e| {
                Failure::Input(format!("error: cannot read {}: {e}", set.display()))
            })?;
            Schema::from_descriptor_set(&bytes)
        } else if !self.protos.is_empty() {
            Schema::from_proto_files(&self.protos, &self.includes)
        } else {
            if self.message.is_some() {
                return Err(Failure::Usage(
                    "--message needs a schema: --proto FILE.proto or --descriptor-set FILE.pb"
                        .into(),
                ));
            }
            return Ok(None);
        };
        schema
            .map(Some)
            .map_err(|e| Failure::Input(format!("error: {e}")))
    }

    /// The Avro schema at `path`, if given; `flag` names it in the error.
    fn avro(path: Option<&Path>, flag: &str) -> Result<Option<AvroSchema>, Failure> {
        path.map(AvroSchema::from_file)
            .transpose()
            .map_err(|e| Failure::Input(format!("error: {flag}{e}")))
    }

    /// The registry `--registry` names, if any.
    fn registry(&self) -> Result<Option<Registry>, Failure> {
        self.registry
            .as_deref()
            .map(Registry::load)
            .transpose()
            .map_err(|e| Failure::Input(format!("error: --registry {e}")))
    }
}

impl ReadArgs {
    /// Resolves the flags once, before any input is read: the limits parsed, each schema
    /// compiled or read, the key log read and the way of peeling chosen. An error names the
    /// flag or file at fault.
    pub fn resolve(&self) -> Result<ReadPlan, Failure> {
        let limits = self.limits.limits()?;
        let schema = self.schema.protobuf()?;
        let avro = SchemaArgs::avro(self.schema.avro_schema.as_deref(), "")?;
        let reader = SchemaArgs::avro(self.schema.reader_schema.as_deref(), "--reader-schema ")?;
        let registry = self.schema.registry()?;
        let keys = self.keylog.as_deref().map(read_keylog).transpose()?;
        let layers = match self.layer {
            _ if self.raw => Layers::AsIs,
            Some(LayerArg::Choice(choice)) => Layers::Peel(choice),
            Some(LayerArg::Reading(n)) => Layers::Reading(n - 1),
            None => Layers::Best,
        };
        Ok(ReadPlan {
            from: self.from,
            limits,
            default_limits: self.limits.limits.is_empty()
                && self.limits.max_depth == DecodeOptions::DEFAULT_MAX_DEPTH,
            schema,
            message: self.schema.message.clone(),
            avro,
            reader,
            registry,
            keys,
            pick: self.pick,
            layers,
            field_readings: self.read.clone(),
        })
    }
}

/// The key log at `path`, read.
fn read_keylog(path: &Path) -> Result<KeyLog, Failure> {
    let text = fs::read_to_string(path).map_err(|e| {
        Failure::Input(format!(
            "error: cannot read the key log {}: {e}",
            path.display()
        ))
    })?;
    KeyLog::parse(&text).map_err(|e| Failure::Input(format!("error: {}: {e}", path.display())))
}

/// How a command reads its inputs: [`ReadArgs`] resolved once.
#[derive(Debug, Clone)]
pub struct ReadPlan {
    /// The format `--from` names.
    pub from: Option<Format>,
    /// The limits `--max-depth` and `--limit` set over the defaults.
    pub limits: Limits,
    /// Whether no limit flag was given (the defaults hold).
    pub default_limits: bool,
    /// The protobuf schema `--proto` or `--descriptor-set` names.
    pub schema: Option<Schema>,
    /// The message type `--message` names (looked up when it is used: `--list-types` reports an
    /// unknown one differently).
    pub message: Option<String>,
    /// The Avro writer's schema `--avro-schema` names.
    pub avro: Option<AvroSchema>,
    /// The Avro reader's schema `--reader-schema` names.
    pub reader: Option<AvroSchema>,
    /// The schema registry `--registry` names.
    pub registry: Option<Registry>,
    /// The TLS key log `--keylog` names.
    pub keys: Option<KeyLog>,
    /// The payload `--pick` chooses (from 1).
    pub pick: Option<u64>,
    /// How to peel the input (`--raw`, `--layer`, else the best-ranked way).
    pub layers: Layers,
    /// The schema-less protobuf readings `--read` asks for.
    pub field_readings: Vec<FieldReading>,
}

/// `wirelens inspect`.
#[derive(Debug, Args)]
#[command(mut_arg("input", |a| a.required(false).required_unless_present("list_types")))]
pub struct InspectArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    /// Leave out the tree.
    #[arg(long)]
    pub no_tree: bool,
    /// Leave out the annotated hex dump.
    #[arg(long)]
    pub no_hex: bool,
    /// List every way of peeling the input (layer readings), best first, with confidence and
    /// reasons; choose one with --layer N. Also the chosen payload's layers one by one, with
    /// what they carried (an HTTP/2 stream's frames, WebSocket control frames, headers).
    #[arg(long)]
    pub layers: bool,
    /// List the schema's message types and every service method
    /// (`pkg.Service/Method (Input) returns (Output)`), then stop; no payload file is needed.
    #[arg(long)]
    pub list_types: bool,
    /// Read a pcap or pcapng capture as it arrives, listing each connection's payloads when it
    /// ends and keeping none (with --no-tree --no-hex; the default for captures over 64 MiB and
    /// for a capture on standard input beyond that). Every layer is peeled, as the app peels,
    /// without ranking other readings (`--layers` needs the whole file).
    #[arg(long, requires_all = ["no_tree", "no_hex"], conflicts_with_all = ["layers", "pick", "layer", "raw"])]
    pub stream: bool,
}

/// `wirelens convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub input: InputArgs,
    /// The format to write: json, msgpack, cbor, protobuf, avro.
    #[arg(long, value_parser = parse_format)]
    pub to: Format,
    /// Write here instead of standard output (`-`: standard output). A file is replaced
    /// atomically (through a symlink, its target); a FIFO or device is written in place.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Indent JSON output.
    #[arg(long)]
    pub pretty: bool,
    /// Protobuf with a schema to JSON: write field names as in the .proto (`start_time`)
    /// instead of their lowerCamelCase JSON names (`startTime`, protoc's default). Either is
    /// read on input.
    #[arg(long)]
    pub proto_names: bool,
    /// Deterministic output: sorted map keys, shortest floats (CBOR core deterministic encoding).
    #[arg(long)]
    pub canonical: bool,
    /// Write every float in the shortest width that holds it exactly (CBOR preferred
    /// serialization: 537.25 as a float16, a float32 in MessagePack) instead of the width it had,
    /// which is what Python's msgpack and cbor2 and most libraries write.
    #[arg(long)]
    pub shortest_floats: bool,
    /// With --to avro and no --avro-schema: infer logical types for text that always holds
    /// one (`uuid` strings; RFC 3339 text as `timestamp-micros`, or `-nanos` for finer digits).
    #[arg(long)]
    pub infer_logical: bool,
    /// Keep each float's width: the default now; accepted so that older scripts still run.
    #[arg(long, hide = true, conflicts_with = "shortest_floats")]
    pub keep_float_width: bool,
    /// Convert every payload of a capture (JSON Lines; with --to json only). A payload that
    /// does not convert is reported on stderr with its number and left out; the exit status is
    /// then 1.
    #[arg(long, conflicts_with = "pick")]
    pub all: bool,
    /// Convert payloads a transport layer cut short (a truncated chunk or body, a packet cut by
    /// the capture's snap length, a gap in a TCP stream) as far as they go, instead of failing.
    #[arg(long)]
    pub partial: bool,
    /// Read a pcap or pcapng capture as it arrives, writing each connection's payloads when it
    /// ends and keeping none (with --all; the default for captures over 64 MiB and for a capture
    /// on standard input beyond that). Every layer is peeled, as the app peels, without ranking
    /// other readings.
    #[arg(long, requires = "all", conflicts_with_all = ["layer", "raw"])]
    pub stream: bool,
}

pub(super) fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s)
        .ok_or_else(|| format!("unknown format `{s}` (expected json, msgpack, cbor or protobuf)"))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// The plan `wirelens inspect FILE ARGS…` resolves to.
    fn plan(args: &[&str]) -> Result<ReadPlan, Failure> {
        let line = ["wirelens", "inspect", "payload.bin"].iter().chain(args);
        match Cli::try_parse_from(line).expect("the flags parse").command {
            Some(Command::Inspect(a)) => a.input.read.resolve(),
            other => panic!("not inspect: {other:?}"),
        }
    }

    #[test]
    fn read_flags_resolve_once_into_what_the_run_uses() {
        let default = plan(&[]).expect("resolves");
        assert_eq!(default.layers, Layers::Best);
        assert!(default.default_limits && default.limits == Limits::default());
        assert!(default.schema.is_none() && default.keys.is_none() && default.avro.is_none());
        assert_eq!(plan(&["--raw"]).expect("resolves").layers, Layers::AsIs);
        assert_eq!(
            plan(&["--layer", "2"]).expect("resolves").layers,
            Layers::Reading(1)
        );
        let grpc = plan(&["--layer", "grpc"]).expect("resolves").layers;
        assert!(matches!(grpc, Layers::Peel(c) if c.split == Split::Force(Framing::Grpc)));
        let limited = plan(&["--max-depth", "9", "--limit", "payloads=5"]).expect("resolves");
        assert!(!limited.default_limits);
        assert_eq!(limited.limits.max_depth, 9);
        assert_eq!(limited.limits.get("payloads"), Some(5));
    }

    #[test]
    fn a_flag_that_cannot_be_resolved_is_named_before_any_input_is_read() {
        let message = |r: Result<ReadPlan, Failure>| match r {
            Err(Failure::Usage(m) | Failure::Input(m)) => m,
            Err(Failure::Io(e)) => panic!("io: {e}"),
            Ok(_) => panic!("resolved"),
        };
        let missing = message(plan(&["--keylog", "/nonexistent/keys.log"]));
        assert!(missing.contains("cannot read the key log"), "{missing}");
        let unnamed = message(plan(&["--message", "pkg.T"]));
        assert!(unnamed.contains("--message needs a schema"), "{unnamed}");
        let reader = message(plan(&["--reader-schema", "/nonexistent/r.avsc"]));
        assert!(reader.contains("--reader-schema"), "{reader}");
        let limit = message(plan(&["--limit", "nonsense=1"]));
        assert!(limit.contains("nonsense"), "{limit}");
    }
}
