//! The command line: `inspect`, `convert`, `infer-proto`, `compare`, `diff`, and no subcommand
//! to open the GUI.
//!
//! Raw flags are parsed by clap into [`Cli`], then each command resolves them and calls the
//! library; nothing here decodes or encodes by itself. Output goes to any `io::Write`, so the
//! integration tests see exactly what a user sees.
//!
//! Exit status: 0 ok, 1 the input could not be read or decoded (stderr says why, with the byte
//! offset and path), 2 usage. A closed pipe (`wirelens inspect big.json | head`) exits 0.

use std::borrow::Cow;
use std::fs;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

use clap::{Args, Parser, Subcommand};

use crate::capture::detect::{verdict, Verdict};
use crate::capture::tls::KeyLog;
use crate::capture::{
    peel_readings, Framing, LayerReading, PeelChoice, ReadingSummary, SharedBytes, Split,
};
use crate::codec::avro::registry::Registry;
use crate::codec::avro::AvroSchema;
use crate::codec::protobuf::schema::{Candidate, Schema};
use crate::codec::protobuf::wire::FieldReading;
use crate::codec::protobuf::MessageDescriptor;
use crate::codec::stream;
use crate::codec::{self, DecodeError, DecodeOptions, Document, FloatPolicy, Format};
use crate::files::write_atomically;
use crate::limits::Limits;
use crate::pipeline::{
    self, Decoded, Known, Layers, MessageChoice, MessageTypes, OpenError, OpenRequest, Opened,
    ProtobufType, ReadOutcome, ReadRequest, WriteError, WriteNote, WriteOptions, Written,
};
use crate::report::inspect;

mod arriving;
mod compare;
mod diff;
pub mod reference;
pub use compare::CompareArgs;
pub use diff::{DiffArgs, DiffSchemaArgs};

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
    fn limits(&self) -> Result<Limits, Failure> {
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

/// Options every command that reads a payload shares.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// The payload file, or `-` for standard input.
    #[arg(required = true)]
    pub input: Option<PathBuf>,
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

fn parse_layer(s: &str) -> Result<LayerArg, String> {
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
    /// The schema once loaded: peeling and reading the payload both use it.
    #[arg(skip)]
    pub loaded: OnceLock<Option<Schema>>,
    /// An Avro schema (.avsc): the writer's schema Avro payloads are read with, and the schema
    /// `--to avro` writes by (without it, one is inferred from the payload).
    #[arg(long, value_name = "FILE.avsc")]
    pub avro_schema: Option<PathBuf>,
    /// The Avro schema once read.
    #[arg(skip)]
    pub avro_loaded: OnceLock<Option<AvroSchema>>,
    /// An Avro reader's schema (.avsc): Avro payloads are read as this schema reads what the
    /// writer's schema wrote (the specification's schema resolution: promotions, defaults for
    /// added fields, dropped fields, aliases, enum defaults, union branches).
    #[arg(long, value_name = "FILE.avsc")]
    pub reader_schema: Option<PathBuf>,
    /// The reader's schema once read.
    #[arg(skip)]
    pub reader_loaded: OnceLock<Option<AvroSchema>>,
    /// Confluent Schema Registry schemas: a folder of `<id>.avsc`, `<id>.proto` and `<id>.json`
    /// files, or a JSON file of the registry's answers (GET /schemas). A payload that starts
    /// with a zero byte and an id found here is read by that schema, its framing peeled.
    #[arg(long, value_name = "DIR|FILE.json")]
    pub registry: Option<PathBuf>,
    /// The registry once read.
    #[arg(skip)]
    pub registry_loaded: OnceLock<Option<Registry>>,
}

/// The `--limit` help: every name [`Limits::set`] takes, so the list cannot fall behind it.
fn limit_help() -> String {
    let names: Vec<&str> = Limits::NAMES.iter().map(|(name, _)| *name).collect();
    format!(
        "Set a limit on what the input may cost (repeatable): {}; values are counts with an optional K/M/G suffix, or `none` (docs/limits.md)",
        names.join(", ")
    )
}

impl InputArgs {
    /// The limits the flags set (see [`LimitArgs`]).
    fn limits(&self) -> Result<Limits, Failure> {
        self.limits.limits()
    }
}

impl SchemaArgs {
    fn given(&self) -> bool {
        !self.protos.is_empty() || self.descriptor_set.is_some()
    }

    /// The schema the flags name, if any.
    fn load(&self) -> Result<Option<Schema>, Failure> {
        if let Some(schema) = self.loaded.get() {
            return Ok(schema.clone());
        }
        let schema = self.load_files()?;
        // A second caller on another thread would have loaded the same files.
        let _ = self.loaded.set(schema.clone());
        Ok(schema)
    }

    /// The Avro schema `--avro-schema` names, if any.
    fn avro(&self) -> Result<Option<AvroSchema>, Failure> {
        if let Some(schema) = self.avro_loaded.get() {
            return Ok(schema.clone());
        }
        let schema = self
            .avro_schema
            .as_deref()
            .map(AvroSchema::from_file)
            .transpose()
            .map_err(|e| Failure::Input(format!("error: {e}")))?;
        let _ = self.avro_loaded.set(schema.clone());
        Ok(schema)
    }

    /// The Avro reader's schema `--reader-schema` names, if any.
    fn reader(&self) -> Result<Option<&AvroSchema>, Failure> {
        if let Some(schema) = self.reader_loaded.get() {
            return Ok(schema.as_ref());
        }
        let schema = self
            .reader_schema
            .as_deref()
            .map(AvroSchema::from_file)
            .transpose()
            .map_err(|e| Failure::Input(format!("error: --reader-schema {e}")))?;
        Ok(self.reader_loaded.get_or_init(|| schema).as_ref())
    }

    /// The registry `--registry` names, if any.
    fn registry(&self) -> Result<Option<&Registry>, Failure> {
        if let Some(registry) = self.registry_loaded.get() {
            return Ok(registry.as_ref());
        }
        let registry = self
            .registry
            .as_deref()
            .map(Registry::load)
            .transpose()
            .map_err(|e| Failure::Input(format!("error: --registry {e}")))?;
        Ok(self.registry_loaded.get_or_init(|| registry).as_ref())
    }

    fn load_files(&self) -> Result<Option<Schema>, Failure> {
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

fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s)
        .ok_or_else(|| format!("unknown format `{s}` (expected json, msgpack, cbor or protobuf)"))
}

/// A failure with its exit status.
#[derive(Debug)]
pub enum Failure {
    /// The input could not be read or decoded (exit 1).
    Input(String),
    /// The command line asked for something impossible (exit 2).
    Usage(String),
    /// Writing output failed (exit 1).
    Io(io::Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Io(e)
    }
}

/// Parses the command line and runs it. Returns the process exit status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = match cli.command {
        Some(Command::Inspect(args)) => inspect_cmd(&args, &mut out),
        Some(Command::Convert(args)) => convert_cmd(&args, &mut out),
        Some(Command::InferProto(args)) => infer_proto_cmd(&args, &mut out),
        Some(Command::InferAvro(args)) => infer_avro_cmd(&args, &mut out),
        Some(Command::Compare(args)) => compare::compare_cmd(&args, &mut out),
        Some(Command::Diff(args)) => return diff::diff_main(&args, &mut out),
        Some(Command::DiffSchema(args)) => return diff::diff_schema_main(&args, &mut out),
        None => open_gui(cli.files),
    };
    let result = result.and_then(|()| out.flush().map_err(Failure::Io));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Io(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
        Err(Failure::Input(msg)) => {
            eprintln!("{msg}");
            ExitCode::from(1)
        }
        Err(Failure::Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

#[cfg(feature = "gui")]
fn open_gui(files: Vec<PathBuf>) -> Result<(), Failure> {
    crate::gui::run(files).map_err(|e| Failure::Input(format!("error: {e:#}")))
}

#[cfg(not(feature = "gui"))]
fn open_gui(_files: Vec<PathBuf>) -> Result<(), Failure> {
    Err(Failure::Usage(
        "this wirelens was built without the GUI; use a command (see --help)".into(),
    ))
}

/// The input's bytes and a name for messages.
struct Input {
    name: String,
    bytes: SharedBytes,
    hint: Option<Format>,
    /// The gRPC call a payload is a message of: its `:path` and whether it is the request.
    grpc: Option<(String, bool)>,
    /// What the payload is when it is no data format (text its Content-Type names, encrypted
    /// records): then no format is guessed.
    verdict: Option<Verdict>,
    /// What an Avro framing said of the payload (a container block, a single object).
    avro: Option<crate::codec::avro::Framed>,
    /// The protobuf message type a framing named (a schema registry's).
    message: Option<MessageDescriptor>,
}

fn read_input(path: &Path) -> Result<Input, Failure> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::Input(format!("error: cannot read standard input: {e}")))?;
        return Ok(Input::of(STDIN_NAME.into(), bytes, None));
    }
    let bytes = fs::read(path)
        .map_err(|e| Failure::Input(format!("error: cannot read {}: {e}", path.display())))?;
    Ok(Input::of(path.display().to_string(), bytes, hint_of(path)))
}

/// What standard input is called in messages.
const STDIN_NAME: &str = "<stdin>";

/// The format a file's extension names.
fn hint_of(path: &Path) -> Option<Format> {
    path.extension()
        .and_then(|e| e.to_str())
        .and_then(Format::from_extension)
}

impl Input {
    /// An input of `bytes` as it was read, with the format its name suggests.
    fn of(name: String, bytes: Vec<u8>, hint: Option<Format>) -> Input {
        Input {
            name,
            bytes: bytes.into(),
            hint,
            grpc: None,
            verdict: None,
            avro: None,
            message: None,
        }
    }

    /// Payload `p` of the input named `name` as an input of its own: its Content-Type (else the
    /// input's `hint`) as the format hint, and what its layers said of it.
    fn payload(p: &crate::capture::Payload, name: &str, hint: Option<Format>) -> Input {
        Input {
            name: name.to_string(),
            bytes: p.bytes.clone(),
            hint: p.hint.or(hint),
            grpc: p.grpc_call(),
            verdict: verdict(p),
            avro: p.avro.clone(),
            message: p.message.clone(),
        }
    }
}

/// The payloads found in an input, and which one the command works on.
struct Peeling {
    /// What the pipeline opened: the payloads, the layer readings when they were ranked (and
    /// which one is in use), what the capture carried, and the format readings ranking made.
    opened: Opened,
    chosen: usize,
    /// The capture's warnings, and the fault that stopped peeling after some payloads.
    warnings: Vec<String>,
}

impl Peeling {
    /// The chosen payload as an input of its own (its Content-Type, if any, as the format hint).
    fn chosen_input(&self, input: &Input) -> Input {
        self.input_for(self.chosen, input)
    }

    /// The format readings ranking made of payload `index`, if it made them (taken: a second
    /// call gives `None`).
    fn take_detected(&mut self, index: usize) -> Option<Known> {
        self.opened.take_detected(index)
    }

    fn input_for(&self, index: usize, input: &Input) -> Input {
        Input::payload(&self.opened.payloads[index], &input.name, input.hint)
    }

    /// Whether anything was peeled (so the user should be told where the payload came from).
    fn peeled(&self) -> bool {
        let payloads = &self.opened.payloads;
        payloads.len() > 1 || payloads.iter().any(|p| !p.layers.is_empty())
    }
}

/// What peeling gave: payloads, or a capture that carries none.
enum PeelOutcome {
    Payloads(Box<Peeling>),
    /// A capture file without a payload: the sentence saying why ("3 packets, TCP handshake
    /// only, no application data"), and the warnings not already in it.
    Nothing {
        why: String,
        warnings: Vec<String>,
        readings: Vec<LayerReading>,
        reading: usize,
    },
}

/// Peels `input` as [`peel_input_or_nothing`] does; a capture without a payload is an error
/// saying why (`convert` has nothing to convert).
fn peel_input(input: &Input, args: &InputArgs) -> Result<Peeling, Failure> {
    match peel_input_or_nothing(input, args)? {
        PeelOutcome::Payloads(peeling) => Ok(*peeling),
        PeelOutcome::Nothing { why, .. } => Err(Failure::Input(format!(
            "error: {}: no payload to read: {why}",
            input.name
        ))),
    }
}

/// Peels `input` into payloads per `--raw` / `--layer` (by default the best-ranked layer
/// reading) and picks one per `--pick`, else the first with bytes. A capture file that gives no
/// payload is [`PeelOutcome::Nothing`], never the file's own bytes read as a payload.
fn peel_input_or_nothing(input: &Input, args: &InputArgs) -> Result<PeelOutcome, Failure> {
    let limits = args.limits()?;
    let message = if ranks_with_message(args) {
        named_message(args)?
    } else {
        None
    };
    let keys = read_keylog(args)?;
    let layers = match args.layer {
        _ if args.raw => Layers::AsIs,
        Some(LayerArg::Choice(choice)) => Layers::Peel(choice),
        Some(LayerArg::Reading(n)) => Layers::Reading(n - 1),
        None => Layers::Best,
    };
    let request = OpenRequest {
        layers,
        limits,
        keys: keys.as_ref(),
        message,
        hint: input.hint,
        registry: args.schema.registry()?,
    };
    let opened = pipeline::open(&input.bytes, &request).map_err(|e| match e {
        OpenError::NoSuchReading { asked, count } => Failure::Usage(format!(
            "--layer {}: the input has {count} layer reading(s) (see `wirelens inspect --layers`)",
            asked + 1
        )),
    })?;
    let mut warnings = opened.warnings.clone();
    if let Some(why) = &opened.nothing {
        // The skipped link types are in the sentence already.
        warnings.retain(|w| !why.contains(w.as_str()));
        warnings.dedup();
        return Ok(PeelOutcome::Nothing {
            why: why.clone(),
            warnings,
            readings: opened.readings,
            reading: opened.reading,
        });
    }
    match &opened.error {
        Some(e) if opened.fell_back => return Err(Failure::Input(e.to_string())),
        Some(e) => warnings.push(format!("{e} (the payloads before it are kept)")),
        None => {}
    }
    let chosen = match args.pick {
        Some(n) => {
            let i = usize::try_from(n - 1).unwrap_or(usize::MAX);
            if i >= opened.payloads.len() {
                return Err(Failure::Usage(format!(
                    "--pick {n}: the input holds {} payload(s)",
                    opened.payloads.len()
                )));
            }
            i
        }
        None => opened.default_payload(),
    };
    warnings.dedup();
    Ok(PeelOutcome::Payloads(Box::new(Peeling {
        opened,
        chosen,
        warnings,
    })))
}

/// The key log `--keylog` names, read.
fn read_keylog(args: &InputArgs) -> Result<Option<KeyLog>, Failure> {
    let Some(path) = &args.keylog else {
        return Ok(None);
    };
    let text = fs::read_to_string(path).map_err(|e| {
        Failure::Input(format!(
            "error: cannot read the key log {}: {e}",
            path.display()
        ))
    })?;
    KeyLog::parse(&text)
        .map(Some)
        .map_err(|e| Failure::Input(format!("error: {}: {e}", path.display())))
}

/// Whether layer ranking reads payloads as the message type the user named: then protobuf is
/// decoded once, with the schema, and the command takes the ranking's documents.
fn ranks_with_message(args: &InputArgs) -> bool {
    args.schema.message.is_some() && matches!(args.from, None | Some(Format::Protobuf))
}

/// The message type named by `--message`, from the loaded schema.
fn named_message(args: &InputArgs) -> Result<Option<MessageDescriptor>, Failure> {
    let (Some(schema), Some(name)) = (args.schema.load()?, &args.schema.message) else {
        return Ok(None);
    };
    message_in(&schema, name).map(Some)
}

/// The message type `name` of `schema`, or the error naming what the schema has.
fn message_in(schema: &Schema, name: &str) -> Result<MessageDescriptor, Failure> {
    schema
        .message(name)
        .map_err(|e| Failure::Input(format!("error: {e}")))
}

/// A payload read per the flags: the readings considered, the outcome of the chosen one, and the
/// protobuf message type used (with the ranking of the schema's types when the user named none).
struct PayloadRead {
    /// Every reading considered, the chosen one first, without their documents.
    readings: Vec<ReadingSummary>,
    outcome: Result<Document, DecodeError>,
    message: Option<MessageDescriptor>,
    /// Why `message` was chosen, when no `--message` named it and a gRPC method did.
    message_reason: Option<String>,
    ranking: Vec<Candidate>,
}

/// Decodes per `--from` (and the schema flags), or takes the best reading.
fn read_payload(input: &Input, args: &InputArgs) -> Result<PayloadRead, Failure> {
    read_payload_knowing(input, args, None)
}

/// [`read_payload`], given `known`: the format readings layer ranking already made of these
/// bytes, used instead of decoding again where they give the same outcome.
fn read_payload_knowing(
    input: &Input,
    args: &InputArgs,
    known: Option<Known>,
) -> Result<PayloadRead, Failure> {
    let schema = args.schema.load()?;
    let message = match (&schema, &args.schema.message, &input.message) {
        (Some(schema), Some(name), _) => MessageChoice::Named(message_in(schema, name)?),
        // A framing that names the type (a schema registry's) says what the bytes are.
        (_, _, Some(m)) => MessageChoice::Named(m.clone()),
        _ => MessageChoice::Auto,
    };
    if matches!(message, MessageChoice::Named(_)) && !args.read.is_empty() {
        return Err(Failure::Usage(
            "--read chooses readings of protobuf read without a schema; with a message type the \
             schema says what each field is"
                .into(),
        ));
    }
    let avro = args.schema.avro()?;
    let request = ReadRequest {
        hint: input.hint,
        grpc: input.grpc.as_ref(),
        verdict: input.verdict.clone(),
        format: args.from,
        format_reason: "chosen with --from",
        list_every_reading: false,
        message,
        field_readings: args.read.clone(),
        limits: args.limits()?,
        known,
        skeleton_from: None,
        avro_framed: input.avro.as_ref(),
        avro_schemas: avro.as_slice(),
        avro_reader: args.schema.reader()?,
    };
    let types = schema.as_ref().map(|s| s as &dyn MessageTypes);
    let read = match pipeline::read(&input.bytes, request, types) {
        ReadOutcome::Read(read) => *read,
        // Nothing to guess: the payload is text or encrypted records.
        ReadOutcome::Verdict(v) => {
            return Err(Failure::Input(format!(
                "error: {}: the payload is {}; read it as a format with --from",
                input.name,
                v.sentence()
            )))
        }
    };
    for w in &read.warnings {
        eprintln!("warning: {w}");
    }
    // The chosen reading first.
    let mut readings = read.readings;
    if read.chosen > 0 && read.chosen < readings.len() {
        let chosen = readings.remove(read.chosen);
        readings.insert(0, chosen);
    }
    Ok(PayloadRead {
        readings,
        outcome: read.outcome,
        message: read.message,
        message_reason: read.message_reason,
        ranking: read.ranking,
    })
}

/// `inspect` of a capture without a payload: the warnings, the layer readings if asked for, and
/// the sentence saying why there is nothing (exit 0: the file was read).
fn inspect_nothing(
    args: &InspectArgs,
    whole: &Input,
    peeled: PeelOutcome,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let PeelOutcome::Nothing {
        why,
        warnings,
        readings,
        reading,
    } = peeled
    else {
        return Ok(());
    };
    writeln!(out, "input: {} ({} bytes)", whole.name, whole.bytes.len())?;
    for w in &warnings {
        writeln!(out, "warning: {w}")?;
    }
    if args.layers && !readings.is_empty() {
        inspect::write_layer_readings(out, &readings, Some(reading))?;
    }
    writeln!(out, "capture: {why}")?;
    writeln!(out, "payloads: none")?;
    Ok(())
}

/// Lines of a text payload `inspect` shows.
const TEXT_LINES: usize = 20;
/// Characters of one such line shown.
const TEXT_LINE_CHARS: usize = 200;

/// `inspect` of a payload with a verdict: the sentence instead of format readings, and for text
/// its first lines.
fn inspect_verdict(
    input: &Input,
    verdict: &Verdict,
    no_text: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    match verdict {
        Verdict::Text { .. } => {
            writeln!(
                out,
                "format: {} (read it as one with --from FORMAT)",
                verdict.sentence()
            )?;
            if no_text {
                return Ok(());
            }
            let text = String::from_utf8_lossy(&input.bytes);
            let total = text.lines().count();
            let shown = total.min(TEXT_LINES);
            writeln!(
                out,
                "
text (lines 1–{shown} of {total}):"
            )?;
            for line in text.lines().take(TEXT_LINES) {
                let cut: String = line.chars().take(TEXT_LINE_CHARS).collect();
                let more = if cut.len() < line.len() { " …" } else { "" };
                writeln!(out, "{cut}{more}")?;
            }
        }
        Verdict::Encrypted { .. } | Verdict::NotData { .. } => {
            writeln!(out, "format: {}", verdict.sentence())?
        }
    }
    Ok(())
}

/// The payload file the flags name (clap requires it wherever it is needed).
fn input_path(args: &InputArgs) -> Result<&Path, Failure> {
    args.input.as_deref().ok_or_else(|| {
        Failure::Usage("the payload file is missing (or `-` for standard input)".into())
    })
}

/// `inspect --list-types`: the schema's message types, then its services' methods.
fn list_types(args: &InspectArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let Some(schema) = args.input.schema.load()? else {
        return Err(Failure::Usage(
            "--list-types needs a schema: --proto FILE.proto or --descriptor-set FILE.pb".into(),
        ));
    };
    let mut messages: Vec<String> = schema
        .pool()
        .all_messages()
        .filter(|m| !m.is_map_entry())
        .map(|m| m.full_name().to_string())
        .collect();
    messages.sort();
    writeln!(out, "message types ({}):", messages.len())?;
    for name in &messages {
        writeln!(out, "  {name}")?;
    }
    let mut services: Vec<String> = schema
        .pool()
        .services()
        .map(|s| s.full_name().to_string())
        .collect();
    services.sort();
    writeln!(out, "services ({}):", services.len())?;
    for service in &services {
        writeln!(out, "  {service}")?;
    }
    let methods = schema.methods();
    writeln!(out, "methods ({}):", methods.len())?;
    for method in &methods {
        writeln!(out, "  {method}")?;
    }
    if let Some(compiler) = schema.compiler() {
        writeln!(out, "compiled by {compiler}")?;
    }
    if !schema.editions().is_empty() {
        writeln!(
            out,
            "editions files ({}, read as proto2 with their features):",
            schema.editions().len()
        )?;
        for file in schema.editions() {
            writeln!(out, "  {}: edition {}", file.name, file.edition)?;
        }
    }
    if let Some(name) = &args.input.schema.message {
        let message = schema
            .message(name)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        writeln!(
            out,
            "fields of {} ({}):",
            message.full_name(),
            message.fields().len()
        )?;
        for field in message.fields() {
            writeln!(
                out,
                "  {}",
                crate::codec::protobuf::schema::field_line(&field)
            )?;
        }
    }
    Ok(())
}

fn inspect_cmd(args: &InspectArgs, out: &mut dyn Write) -> Result<(), Failure> {
    if args.list_types {
        return list_types(args, out);
    }
    let a = &args.input;
    let streams = args.no_tree
        && args.no_hex
        && !args.layers
        && a.pick.is_none()
        && a.layer.is_none()
        && !a.raw;
    let whole = match arriving::open(input_path(a)?, streams, args.stream)? {
        arriving::Source::Capture(capture) => return arriving::inspect(args, capture, out),
        arriving::Source::Whole(whole) => whole,
    };
    let mut peeling = match peel_input_or_nothing(&whole, &args.input)? {
        PeelOutcome::Payloads(peeling) => *peeling,
        nothing => return inspect_nothing(args, &whole, nothing, out),
    };
    let input = peeling.chosen_input(&whole);
    let known = peeling.take_detected(peeling.chosen);
    writeln!(out, "input: {} ({} bytes)", whole.name, whole.bytes.len())?;
    for w in &peeling.warnings {
        writeln!(out, "warning: {w}")?;
    }
    if let Some(capture) = peeling
        .opened
        .capture
        .as_ref()
        .filter(|c| c.all_encrypted())
    {
        writeln!(out, "capture: {}", capture.describe())?;
    }
    if args.layers {
        let readings = if peeling.opened.readings.is_empty() {
            // --raw or a named --layer: rank anyway, to list them.
            let options = DecodeOptions {
                limits: args.input.limits()?,
                ..DecodeOptions::default()
            };
            peel_readings(&whole.bytes, &options, None)
        } else {
            Vec::new()
        };
        let (list, used) = if peeling.opened.readings.is_empty() {
            (&readings, None)
        } else {
            (&peeling.opened.readings, Some(peeling.opened.reading))
        };
        inspect::write_layer_readings(out, list, used)?;
    }
    if peeling.peeled() {
        writeln!(out, "payloads:")?;
        inspect::write_payloads(out, &peeling.opened.payloads, peeling.chosen)?;
        writeln!(
            out,
            "payload {} of {}:",
            peeling.chosen + 1,
            peeling.opened.payloads.len()
        )?;
        if args.layers {
            if let Some(p) = peeling.opened.payloads.get(peeling.chosen) {
                inspect::write_payload_layers(out, p)?;
            }
        }
    }
    inspect_payload(args, &input, known, out)
}

/// What `inspect` says of one payload: how it reads (or what the protocol says it is), its
/// message type, and its tree and annotated hex unless they are left out.
fn inspect_payload(
    args: &InspectArgs,
    input: &Input,
    known: Option<Known>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    if let (None, Some(v)) = (args.input.from, &input.verdict) {
        return inspect_verdict(input, v, args.no_tree && args.no_hex, out);
    }
    let read = read_payload_knowing(input, &args.input, known)?;
    if args.input.from.is_none() && read.readings.first().is_some_and(|r| !r.is_claim()) {
        // No format read the bytes: that is the answer, not the least bad guess.
        inspect::write_no_known_format(out, &read.readings)?;
        if let Some(hint) = pipeline::unread_hint(&input.bytes, args.input.schema.registry()?) {
            writeln!(out, "  note: {hint}")?;
        }
        return Err(Failure::Input(format!(
            "error: {}: no known format reads these {} bytes (the best partial readings are listed above); --from FORMAT reads them as one",
            input.name,
            input.bytes.len()
        )));
    }
    inspect::write_readings(out, &read.readings)?;
    if let Some(message) = &read.message {
        match &read.message_reason {
            Some(why) => writeln!(out, "message type: {} ({why})", message.full_name())?,
            None => writeln!(out, "message type: {}", message.full_name())?,
        }
        // Editions schemas say how they were read: lowered, and by which compiler.
        if let Some(schema) = args.input.schema.load()? {
            if !schema.editions().is_empty() {
                let files: Vec<String> = schema
                    .editions()
                    .iter()
                    .map(|f| format!("{} (edition {})", f.name, f.edition))
                    .collect();
                let compiler = schema.compiler().map_or_else(
                    || "a descriptor set".to_string(),
                    |c| format!("compiled by {c}"),
                );
                writeln!(
                    out,
                    "schema: {compiler}; editions files read as proto2 with their features: {}",
                    files.join(", ")
                )?;
            }
        }
    }
    // A gRPC method's type is said above; no other type was tried.
    if !read.ranking.is_empty() && read.message_reason.is_none() {
        writeln!(out, "message types that fit, best first:")?;
        for c in read.ranking.iter().take(5) {
            writeln!(
                out,
                "  {} ({}%): {}",
                c.message.full_name(),
                c.score,
                c.reasons.join("; ")
            )?;
        }
    }
    let resolution = if read
        .readings
        .first()
        .is_some_and(|r| r.format == Format::Avro)
    {
        write_resolution(out, input, &args.input)?
    } else {
        None
    };
    let (doc, error) = match read.outcome {
        Ok(doc) => (Some(doc), None),
        Err(mut e) => (e.partial.take().map(|d| *d), Some(e)),
    };
    if let Some(doc) = &doc {
        if error.is_some() && !(args.no_tree && args.no_hex) {
            writeln!(out, "\npartial decode (up to the error):")?;
        }
        if !args.no_tree {
            writeln!(out, "\ntree:")?;
            // Read with a reader's schema: each node that is not read as written says its rule.
            // (A partial document is the writer's, read by its own schema: no rules.)
            let rules = resolution
                .as_ref()
                .filter(|_| error.is_none())
                .and_then(|r| r.node_rules(&doc.spans, &input.bytes));
            let note = |id| Some(rules.as_ref()?.changed(id)?.to_string());
            inspect::write_tree_with(out, doc, &note)?;
        }
        if !args.no_hex {
            writeln!(out, "\nannotated hex:")?;
            inspect::write_annotated_hex(out, &input.bytes, doc)?;
        }
    }
    match error {
        Some(e) => Err(Failure::Input(e.to_string())),
        None => Ok(()),
    }
}

/// With `--reader-schema`: which rule of the specification's schema resolution reads each place
/// of the reader's schema from what the writer's schema wrote. Gives the resolution back for the
/// tree's nodes.
fn write_resolution(
    out: &mut dyn Write,
    input: &Input,
    args: &InputArgs,
) -> Result<Option<pipeline::Resolution>, Failure> {
    let loaded = args.schema.avro()?;
    let found = pipeline::avro_resolution(
        input.avro.as_ref(),
        loaded.as_slice(),
        args.schema.reader()?,
    );
    let Some(resolution) = found else {
        return Ok(None);
    };
    match &resolution.rules {
        Ok(rules) => {
            writeln!(
                out,
                "schema resolution: written as {}, read as {}:",
                resolution.writer, resolution.reader
            )?;
            for (path, rule) in rules {
                writeln!(out, "  {path}: {rule}")?;
            }
        }
        Err(e) => writeln!(out, "schema resolution: {e}")?,
    }
    Ok(Some(resolution))
}

fn convert_cmd(args: &ConvertArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let a = &args.input;
    let streams = args.all && args.to == Format::Json && a.layer.is_none() && !a.raw;
    let whole = match arriving::open(input_path(a)?, streams, args.stream)? {
        arriving::Source::Capture(capture) => return arriving::convert_all(args, capture, out),
        arriving::Source::Whole(whole) => whole,
    };
    if convert_streaming(args, &whole, out)? || convert_streaming_protobuf(args, &whole, out)? {
        return Ok(());
    }
    let mut peeling = peel_input(&whole, &args.input)?;
    for w in &peeling.warnings {
        eprintln!("warning: {w}");
    }
    if args.all && args.to != Format::Json {
        return Err(Failure::Usage(
            "--all writes JSON Lines; use it with --to json".into(),
        ));
    }
    let with_bytes = peeling
        .opened
        .payloads
        .iter()
        .filter(|p| !p.bytes.is_empty())
        .count();
    if !args.all && with_bytes > 1 && args.input.pick.is_none() {
        return Err(Failure::Usage(format!(
            "the input holds {with_bytes} payloads; choose one with --pick N (see `wirelens inspect`) or use --all"
        )));
    }
    if !args.partial {
        if let Some(lost) = peeling.warnings.iter().find(|w| loses_bytes(w)) {
            return Err(Failure::Input(format!(
                "error: the capture was not read whole ({lost}); raise the limit, or --partial converts what was read"
            )));
        }
    }
    if args.all {
        return convert_all(args, &whole, &mut peeling, out);
    }
    let chosen = &peeling.opened.payloads[peeling.chosen];
    if let Some(why) = cut_short(args, chosen, peeling.chosen + 1) {
        return Err(Failure::Input(format!("error: {why}")));
    }
    let input = peeling.chosen_input(&whole);
    let known = peeling.take_detected(peeling.chosen);
    let (mut bytes, notes) = convert_one(args, &input, known, args.pretty)?;
    for line in notes {
        eprintln!("{line}");
    }
    if args.to == Format::Json {
        bytes.push(b'\n');
    }
    write_output(args, &bytes, out)
}

/// Whether `convert` writes one payload, the input itself, with no layer or key log asked for:
/// what the streamed conversions need.
fn one_payload_as_it_is(args: &ConvertArgs) -> bool {
    let a = &args.input;
    !args.all && a.pick.is_none_or(|n| n == 1) && a.layer.is_none() && a.keylog.is_none()
}

/// `convert` of a JSON document, or of a MessagePack or CBOR file (by its name, or `--from`),
/// with nothing to peel and no schema, streamed by [`stream::transcode`] so that a large file is
/// never held decoded. `false` when that does not apply (or the document needs the ordinary way:
/// an error to report, canonical or pretty output): then nothing was written and the caller
/// converts as usual.
fn convert_streaming(
    args: &ConvertArgs,
    whole: &Input,
    out: &mut dyn Write,
) -> Result<bool, Failure> {
    let a = &args.input;
    let plain = one_payload_as_it_is(args) && !a.schema.given() && args.to != Format::Protobuf;
    let bytes = &whole.bytes;
    let from = match (a.from, whole.hint) {
        (Some(Format::MessagePack), _) | (None, Some(Format::MessagePack)) => Format::MessagePack,
        (Some(Format::Cbor), _) | (None, Some(Format::Cbor)) => Format::Cbor,
        (None | Some(Format::Json), None | Some(Format::Json)) => Format::Json,
        _ => return Ok(false),
    };
    // A map or an array first (a JSON string may hold a payload to peel; `write_streamed` also
    // leaves a HAR, whose entries are peeled, to the ordinary way).
    if !plain || !stream::starts_with_container(bytes, from) {
        return Ok(false);
    }
    let limits = a.limits()?;
    let avro = avro_to_write(args);
    let options = WriteOptions {
        limits,
        ..write_options(args, avro.as_ref(), None, args.pretty)
    };
    let Some(written) = pipeline::write_streamed(bytes, from, args.to, &options) else {
        return Ok(false);
    };
    report_notes(&written, &whole.name);
    let mut bytes = written.bytes;
    if args.to == Format::Json {
        bytes.push(b'\n');
    }
    write_output(args, &bytes, out)?;
    Ok(true)
}

/// `convert --to json` of a protobuf payload with the message type named, read as protobuf
/// (`--from protobuf`, or a `.pb` file) with nothing to peel and no limit set: the proto3 JSON
/// written by [`pipeline::write_proto3_streamed`], which holds one small piece of the payload
/// decoded at a time (prost-reflect reads each piece within its own limits; limits the user sets
/// are applied by the ordinary way). `false` when that does not apply or the walk declines:
/// nothing was written and the caller converts as usual (which reports any error).
fn convert_streaming_protobuf(
    args: &ConvertArgs,
    whole: &Input,
    out: &mut dyn Write,
) -> Result<bool, Failure> {
    let a = &args.input;
    let protobuf = match a.from {
        Some(format) => format == Format::Protobuf,
        None => whole.hint == Some(Format::Protobuf),
    };
    let plain = protobuf
        && one_payload_as_it_is(args)
        && args.to == Format::Json
        && a.read.is_empty()
        && a.limits.limits.is_empty()
        && a.limits.max_depth == DecodeOptions::DEFAULT_MAX_DEPTH;
    if !plain {
        return Ok(false);
    }
    let Some(message) = named_message(a)? else {
        return Ok(false);
    };
    let options = write_options(args, None, Some(&message), args.pretty);
    let Some(written) = pipeline::write_proto3_streamed(&whole.bytes, &message, &options) else {
        return Ok(false);
    };
    report_notes(&written, &whole.name);
    let mut bytes = written.bytes;
    bytes.push(b'\n');
    write_output(args, &bytes, out)?;
    Ok(true)
}

/// The Avro schema `convert --to avro` writes by (`--avro-schema`), if any.
fn avro_to_write(args: &ConvertArgs) -> Option<AvroSchema> {
    if args.to == Format::Avro {
        // Read (and reported) when the payload was read; a schema that fails here failed there.
        args.input.schema.avro().ok().flatten()
    } else {
        None
    }
}

/// How `convert` writes a payload read with `message`: its flags, and `avro` (see
/// [`avro_to_write`]). With a schema loaded, protobuf is written as the type `--message` names
/// (the payload was read with it) and is refused without one.
fn write_options<'a>(
    args: &ConvertArgs,
    avro: Option<&'a AvroSchema>,
    message: Option<&'a MessageDescriptor>,
    pretty: bool,
) -> WriteOptions<'a> {
    let protobuf = match message {
        _ if args.input.schema.given() && args.input.schema.message.is_none() => {
            ProtobufType::Unnamed
        }
        Some(m) => ProtobufType::Named(m),
        None => ProtobufType::Inferred,
    };
    WriteOptions {
        pretty,
        proto_names: args.proto_names,
        canonical: args.canonical,
        floats: if args.shortest_floats {
            FloatPolicy::Shortest
        } else {
            FloatPolicy::Keep
        },
        protobuf,
        avro,
        avro_logical: args.infer_logical,
        spans: false,
        limits: Limits::default(),
    }
}

/// `convert --all`: one JSON line per payload with bytes, in order. A payload that does not
/// convert (or was cut short, without `--partial`) is named on stderr with its number and
/// reason and left out; the others are still written, and the command then fails.
fn convert_all(
    args: &ConvertArgs,
    whole: &Input,
    peeling: &mut Peeling,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let count = peeling.opened.payloads.len();
    let mut all = AllWriter::new(args, out, Some(count));
    for i in 0..count {
        let known = peeling.take_detected(i);
        all.payload(&peeling.opened.payloads[i], i + 1, whole, known)?;
    }
    all.finish()
}

/// `convert --all`'s output: each payload's JSON line written as it comes, the ones that do not
/// convert named on stderr, the ones that are no data counted per kind.
struct AllWriter<'a> {
    args: &'a ConvertArgs,
    lines: LineSink<'a>,
    /// How many payloads there are, when that is known before the first is written.
    count: Option<usize>,
    failed: usize,
    /// Payloads that are no data (encrypted records, DNS, SIP…): skipped, listed per kind.
    skipped: Vec<(String, Vec<usize>)>,
    /// Note lines printed so far, and the notes and payloads beyond [`AllWriter::NOTE_LINES`]
    /// only counted.
    notes_shown: usize,
    notes_unshown: usize,
    payloads_unshown: usize,
}

impl<'a> AllWriter<'a> {
    fn new(args: &'a ConvertArgs, out: &'a mut dyn Write, count: Option<usize>) -> AllWriter<'a> {
        AllWriter {
            args,
            lines: LineSink::new(args, out),
            count,
            failed: 0,
            skipped: Vec::new(),
            notes_shown: 0,
            notes_unshown: 0,
            payloads_unshown: 0,
        }
    }

    /// Note lines printed, each naming its payload, before the rest are only counted: a
    /// capture's thousands of payloads would each add a few.
    const NOTE_LINES: usize = 20;

    /// The notes on payload `number`, printed while there is room, else counted.
    fn notes(&mut self, number: usize, notes: Vec<String>) {
        if notes.is_empty() {
            return;
        }
        if self.notes_shown >= AllWriter::NOTE_LINES {
            self.notes_unshown += notes.len();
            self.payloads_unshown += 1;
            return;
        }
        for line in notes {
            if self.notes_shown < AllWriter::NOTE_LINES {
                let line = line.strip_prefix("note: ").unwrap_or(&line);
                eprintln!("note: payload {number}: {line}");
                self.notes_shown += 1;
            } else {
                self.notes_unshown += 1;
            }
        }
    }

    /// Payload `p`, number `number` of the input `whole`, converted and written (or skipped, or
    /// named on stderr); `known` is what ranking read of it.
    fn payload(
        &mut self,
        p: &crate::capture::Payload,
        number: usize,
        whole: &Input,
        known: Option<Known>,
    ) -> Result<(), Failure> {
        let args = self.args;
        if p.bytes.is_empty() {
            return Ok(());
        }
        if args.input.from.is_none() {
            if let Some(v) = verdict(p).filter(|v| !v.is_data()) {
                let name = v.name();
                match self.skipped.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, list)) => list.push(number),
                    None => self.skipped.push((name, vec![number])),
                }
                return Ok(());
            }
        }
        let converted = match cut_short(args, p, number) {
            Some(why) => Err(Failure::Input(format!("error: {why}"))),
            None => {
                let input = Input::payload(p, &whole.name, whole.hint);
                convert_one(args, &input, known, false)
            }
        };
        match converted {
            Ok((one, notes)) => {
                self.notes(number, notes);
                self.lines.line(&one)
            }
            Err(Failure::Input(why)) => {
                self.failed += 1;
                match self.count {
                    Some(count) => eprintln!("payload {number} of {count}: {why}"),
                    None => eprintln!("payload {number}: {why}"),
                }
                Ok(())
            }
            Err(other) => Err(other),
        }
    }

    /// The notes on what was skipped, then the output put in place; an error when a payload
    /// did not convert.
    fn finish(self) -> Result<(), Failure> {
        if self.notes_unshown > 0 {
            eprintln!(
                "note: {} more note(s) on {} more payload(s) are not shown (`--pick N` converts one payload and shows all of its notes)",
                count_text(self.notes_unshown),
                count_text(self.payloads_unshown)
            );
        }
        for (name, list) in &self.skipped {
            let shown: Vec<String> = list.iter().take(10).map(usize::to_string).collect();
            let more = if list.len() > 10 { ", …" } else { "" };
            eprintln!(
                "note: {} payload(s) skipped, {name}: no data format to convert (payloads {}{more}; --pick N --from FORMAT reads one anyway)",
                list.len(),
                shown.join(", ")
            );
        }
        if self.failed == 0 {
            return self.lines.finish();
        }
        let written = if self.lines.written == 0 {
            "nothing was written"
        } else {
            self.lines.finish()?;
            "the others were written"
        };
        Err(Failure::Input(format!(
            "error: {} payload(s) did not convert (see above); {written}",
            self.failed
        )))
    }
}

/// Where `convert --all` writes each JSON line as soon as it is made (the lines of a large
/// capture are not all held at once): standard output, or a file that replaces the path
/// (`files::AtomicFile`) once every payload is done, and is not created when no line is.
struct LineSink<'o> {
    path: Option<&'o Path>,
    file: Option<io::BufWriter<crate::files::AtomicFile>>,
    out: io::BufWriter<&'o mut dyn Write>,
    /// Lines written so far.
    written: usize,
}

impl<'o> LineSink<'o> {
    fn new(args: &'o ConvertArgs, out: &'o mut dyn Write) -> LineSink<'o> {
        LineSink {
            path: args.output.as_deref().filter(|p| p.as_os_str() != "-"),
            file: None,
            out: io::BufWriter::new(out),
            written: 0,
        }
    }

    fn cannot_write(path: &Path, e: &io::Error) -> Failure {
        Failure::Input(format!("error: cannot write {}: {e}", path.display()))
    }

    /// The output, opened on first use.
    fn writer(&mut self) -> Result<&mut dyn Write, Failure> {
        let Some(path) = self.path else {
            return Ok(&mut self.out);
        };
        if self.file.is_none() {
            let file = crate::files::AtomicFile::create(path)
                .map_err(|e| LineSink::cannot_write(path, &e))?;
            self.file = Some(io::BufWriter::new(file));
        }
        match &mut self.file {
            Some(file) => Ok(file),
            None => Ok(&mut self.out),
        }
    }

    /// Writes `one` and a newline.
    fn line(&mut self, one: &[u8]) -> Result<(), Failure> {
        let path = self.path;
        let writer = self.writer()?;
        writer
            .write_all(one)
            .and_then(|()| writer.write_all(b"\n"))
            .map_err(|e| match path {
                Some(path) => LineSink::cannot_write(path, &e),
                None => Failure::from(e),
            })?;
        self.written += 1;
        Ok(())
    }

    /// Flushes standard output, or puts the file in place of the path (an empty one when no
    /// line was written).
    fn finish(mut self) -> Result<(), Failure> {
        let Some(path) = self.path else {
            self.out.flush()?;
            return Ok(());
        };
        self.writer()?;
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        file.into_inner()
            .map_err(|e| LineSink::cannot_write(path, e.error()))?
            .commit()
            .map_err(|e| LineSink::cannot_write(path, &e))
    }
}

/// A payload the protocol says is text, written as one string (JSON's string, MessagePack's and
/// CBOR's text; [`pipeline::write_text`]).
fn convert_text(
    args: &ConvertArgs,
    input: &Input,
    pretty: bool,
) -> Result<(Vec<u8>, Vec<String>), Failure> {
    let avro = avro_to_write(args);
    let options = write_options(args, avro.as_ref(), None, pretty);
    let written = pipeline::write_text(&input.bytes, args.to, &options)
        .map_err(|e| Failure::Input(format!("error: {e}")))?;
    let notes = note_lines(&written, &input.name);
    Ok((written.bytes, notes))
}

/// Why payload `p` (number `number`) should not be converted without `--partial`: a layer cut
/// it short.
fn cut_short(args: &ConvertArgs, p: &crate::capture::Payload, number: usize) -> Option<String> {
    let why = p.cut.as_deref().filter(|_| !args.partial)?;
    Some(format!(
        "payload {number} ({} bytes via {}) was cut short ({why}); --partial converts it as far as it goes",
        p.bytes.len(),
        p.provenance()
    ))
}

/// Whether a capture warning says the capture was not read whole: data dropped at the
/// payload-bytes limit (`capture::pcap`'s `State::over_budget` wording, which the CLI tests hold
/// it to), so a conversion of "every payload" would not be. Bytes the traffic itself lost (a
/// gap, a packet captured short) mark the payloads they cut instead ([`cut_short`]).
fn loses_bytes(warning: &str) -> bool {
    warning.contains("later payload data is dropped")
}

/// Converts one payload per the flags; returns the bytes (JSON without a final newline) and the
/// notes on what it could not write exactly ([`note_lines`]).
fn convert_one(
    args: &ConvertArgs,
    input: &Input,
    known: Option<Known>,
    pretty: bool,
) -> Result<(Vec<u8>, Vec<String>), Failure> {
    if let (None, Some(Verdict::Text { .. })) = (args.input.from, &input.verdict) {
        return convert_text(args, input, pretty);
    }
    let read = read_payload_knowing(input, &args.input, known)?;
    drop(read.readings);
    drop(read.ranking);
    let doc = read.outcome.map_err(|e| Failure::Input(e.to_string()))?;
    // Only the bytes and notes are used: no spans of the output, and none of the source.
    let codec::Document { format, value, .. } = doc;
    let avro = avro_to_write(args);
    let options = write_options(args, avro.as_ref(), read.message.as_ref(), pretty);
    let source = Decoded {
        format,
        value: Cow::Owned(value),
        spans: None,
        bytes: &input.bytes,
        message: read.message.as_ref(),
    };
    let written = pipeline::write(source, args.to, &options).map_err(write_failure)?;
    let notes = note_lines(&written, &input.name);
    Ok((written.bytes, notes))
}

/// The failure of a conversion that [`pipeline::write()`] refused.
fn write_failure(e: WriteError) -> Failure {
    match e {
        WriteError::MessageNotNamed => Failure::Usage(
            "--to protobuf with a schema needs --message to say which message type to write".into(),
        ),
        e => Failure::Input(format!("error: {e}")),
    }
}

/// Prints what a conversion of `name` could not write exactly on stderr ([`note_lines`]).
fn report_notes(written: &Written, name: &str) {
    for line in note_lines(written, name) {
        eprintln!("{line}");
    }
}

/// What a conversion of `name` could not write exactly, one note a line, and the nulls
/// written as a field's default summed up.
fn note_lines(written: &Written, name: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for note in &written.notes {
        match note {
            WriteNote::NotUtf8 { .. } => lines.push(format!("note: {name}: {note}")),
            _ => lines.push(format!("note: {note}")),
        }
    }
    if let Some((count, first)) = written.nulls_as_default() {
        lines.push(format!(
            "note: {} null(s) in all written as the field's default (first at {}): the reader cannot tell them from 0/\"\"",
            count_text(count),
            first.brief()
        ));
    }
    lines
}

/// `n` with thousands separators: 1,254.
fn count_text(n: usize) -> String {
    crate::report::table::group(n as u64)
}

/// Writes converted bytes to `-o` (see [`write_atomically`]) or standard output (without `-o`, or
/// with `-o -`; never binary to a terminal).
fn write_output(args: &ConvertArgs, bytes: &[u8], out: &mut dyn Write) -> Result<(), Failure> {
    match args.output.as_deref().filter(|p| p.as_os_str() != "-") {
        Some(path) => write_atomically(path, bytes)
            .map_err(|e| Failure::Input(format!("error: cannot write {}: {e}", path.display()))),
        None => {
            if args.to != Format::Json && io::stdout().is_terminal() {
                return Err(Failure::Usage(format!(
                    "not writing binary {} to a terminal; use -o FILE or redirect the output",
                    args.to.title()
                )));
            }
            out.write_all(bytes)?;
            Ok(())
        }
    }
}

/// The payload a schema is inferred from (`infer-avro`, `infer-proto`): read as `inspect` reads
/// it, without a schema.
fn read_for_inference(
    path: &std::path::Path,
    from: Option<Format>,
    limits: &LimitArgs,
) -> Result<Document, Failure> {
    let input = read_input(path)?;
    let input_args = InputArgs {
        input: Some(path.to_path_buf()),
        from,
        limits: limits.clone(),
        schema: SchemaArgs::default(),
        pick: None,
        raw: false,
        keylog: None,
        read: Vec::new(),
        layer: None,
    };
    read_payload(&input, &input_args)?
        .outcome
        .map_err(|e| Failure::Input(e.to_string()))
}

fn infer_avro_cmd(args: &InferAvroArgs, out: &mut dyn Write) -> Result<(), Failure> {
    use crate::codec::avro::infer::{infer, InferOptions};
    let doc = read_for_inference(&args.input, args.from, &args.limits)?;
    let options = InferOptions {
        name: args.name.clone(),
        namespace: args.namespace.clone(),
        logical: args.infer_logical,
    };
    let schema = infer(&doc.value, &options).map_err(|e| Failure::Input(format!("error: {e}")))?;
    out.write_all(schema.text().as_bytes())?;
    out.write_all(b"\n")?;
    Ok(())
}

fn infer_proto_cmd(args: &InferProtoArgs, out: &mut dyn Write) -> Result<(), Failure> {
    use crate::codec::protobuf::infer::{infer, InferOptions};
    let doc = read_for_inference(&args.input, args.from, &args.limits)?;
    let options = InferOptions {
        message: args.message.clone(),
        package: args.package.clone(),
    };
    let inferred =
        infer(&doc.value, &options).map_err(|e| Failure::Input(format!("error: {e}")))?;
    out.write_all(inferred.proto.as_bytes())?;
    Ok(())
}
