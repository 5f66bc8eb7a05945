//! The command line: `inspect`, `convert`, `infer-proto`, `compare`, `diff`, and no subcommand
//! to open the GUI.
//!
//! Raw flags are parsed by clap into [`Cli`], then each command resolves them and calls the
//! library; nothing here decodes or encodes by itself. Output goes to any `io::Write`, so the
//! integration tests see exactly what a user sees.
//!
//! Exit status: 0 ok, 1 the input could not be read or decoded (stderr says why, with the byte
//! offset and path), 2 usage. A closed pipe (`wirelens inspect big.json | head`) exits 0.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

mod args;
mod arriving;
mod compare;
mod convert;
mod diff;
mod infer;
mod input;
mod inspect;
pub mod reference;
pub use compare::CompareArgs;
pub use diff::{DiffArgs, DiffSchemaArgs};

use args::parse_format;
pub use args::{
    Cli, Command, ConvertArgs, InferAvroArgs, InferProtoArgs, InputArgs, InspectArgs, LayerArg,
    LimitArgs, ReadArgs, ReadPlan, SchemaArgs,
};
use convert::{convert_cmd, not_read_whole, AllWriter};
use infer::{infer_avro_cmd, infer_proto_cmd};
use input::{
    hint_of, input_path, named_message, peel_input, peel_input_or_nothing, read_input,
    read_payload, read_payload_knowing, Input, PeelOutcome, Peeling, STDIN_NAME,
};
use inspect::{inspect_cmd, inspect_payload};

/// A failure with its exit status.
#[derive(Debug)]
#[non_exhaustive]
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
