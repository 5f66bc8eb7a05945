//! `wirelens compare`: profile payloads in every format and library (see [`crate::profile`]).

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use clap::Args;

use super::{peel_input, read_input, read_payload_knowing, Failure, ReadArgs, ReadPlan};
use crate::codec::Format;
use crate::files::write_atomically;
use crate::profile::runtimes::{self, Runtime, RuntimeReport};
use crate::profile::sweep::Link;
use crate::profile::{run, run_runtimes, Event, Settings, Subject};
use crate::report::{csv, table, Mode};

/// `wirelens compare`.
#[derive(Debug, Args)]
#[command(
    mut_arg("from", |a| a.help("Read the inputs as this format instead of detecting it: json, msgpack, cbor, protobuf, avro (with --avro-schema)")),
    mut_arg("pick", |a| a.help("The Nth payload (from 1) of each capture holding several")),
    mut_arg("raw", |a| a.help("Take each input as the payload itself: peel no layers")),
    mut_arg("keylog", |a| a.help("A TLS key log (NSS format) to decrypt every capture's TLS connections with")),
    mut_arg("layer", |a| a.help("How to peel each input, as for `inspect --layer`")),
)]
pub struct CompareArgs {
    /// The payload files (each read like `inspect` reads its input).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// How every input is read.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Write one row per file × format × library here (CSV, atomically).
    #[arg(long, value_name = "OUT.csv")]
    pub csv: Option<PathBuf>,
    /// Write bytes per field path per format here (CSV, atomically).
    #[arg(long, value_name = "OUT.csv")]
    pub csv_fields: Option<PathBuf>,
    /// Write the whole report here (JSON, atomically).
    #[arg(long, value_name = "OUT.json")]
    pub json: Option<PathBuf>,
    /// A quick look: few samples, a small sweep (seconds, not minutes).
    #[arg(long, conflicts_with = "precise")]
    pub quick: bool,
    /// Run timing jobs one at a time, in turns, and time each one's tail (p99, p99.9) over two
    /// seconds of single calls spread over the run (slower, no interference between jobs).
    #[arg(long)]
    pub precise: bool,
    /// A link for the transfer estimates, NAME=BANDWIDTH,RTT (e.g. wifi=50mbit,15ms);
    /// repeatable, replaces the defaults (mobile, broadband, datacenter).
    #[arg(long = "link", value_name = "NAME=BW,RTT", value_parser = Link::parse)]
    pub links: Vec<Link>,
    /// Which runtimes' libraries to time on the same bytes: python (json, orjson, ujson,
    /// pydantic, msgpack, ormsgpack, cbor2, protobuf, fastavro, avro), node (JSON,
    /// @msgpack/msgpack, msgpackr, cbor-x, protobufjs, avsc), rust (always timed), or all. Default: every runtime installed here
    /// (`--runtime rust` times Rust alone). The interpreters are `python3` and `node`, or
    /// $WIRELENS_PYTHON and $WIRELENS_NODE; Node packages are found as `require` finds them,
    /// and in ./node_modules. A runtime or library not installed is reported, not fatal.
    #[arg(long = "runtime", value_name = "LIST", value_delimiter = ',', value_parser = parse_runtime)]
    pub runtimes: Vec<RuntimeArg>,
    /// Stop a runtime's harness after this many seconds (its results so far are kept).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub runtime_timeout: u64,
}

/// One name given to `--runtime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeArg {
    /// Rust: the main rows, always timed.
    Rust,
    /// Every runtime wirelens has a harness for.
    All,
    /// This one.
    Other(Runtime),
}

fn parse_runtime(s: &str) -> Result<RuntimeArg, String> {
    match s.trim() {
        "rust" => Ok(RuntimeArg::Rust),
        "all" => Ok(RuntimeArg::All),
        name => Runtime::parse(name)
            .map(RuntimeArg::Other)
            .ok_or_else(|| format!("unknown runtime {name:?}: python, node, rust or all")),
    }
}

/// The runtimes `--runtime` asks for besides Rust, each once, in report order.
pub fn runtimes_asked(args: &[RuntimeArg]) -> Vec<Runtime> {
    Runtime::ALL
        .into_iter()
        .filter(|r| {
            args.iter()
                .any(|a| *a == RuntimeArg::All || *a == RuntimeArg::Other(*r))
        })
        .collect()
}

/// The runtimes whose interpreter answers [`runtimes::probe`] within `timeout`, and a report
/// (no rows, its `error` saying why) for each of the others.
pub fn installed_runtimes(timeout: std::time::Duration) -> (Vec<Runtime>, Vec<RuntimeReport>) {
    let programs: Vec<(Runtime, String)> = Runtime::ALL
        .into_iter()
        .map(|r| (r, r.default_program()))
        .collect();
    let (found, absent) = runtimes::probe_installed(&programs, timeout, &|r| {
        format!(
            "`--runtime {}` asks for it, `--runtime rust` for Rust alone",
            r.name()
        )
    });
    (found.into_iter().map(|(r, _)| r).collect(), absent)
}

/// Decodes one input into a subject to profile.
fn subject(plan: &ReadPlan, path: &std::path::Path) -> Result<Subject, Failure> {
    let whole = read_input(path)?;
    let mut peeling = peel_input(&whole, plan)?;
    for w in &peeling.warnings {
        eprintln!("warning: {}: {w}", whole.name);
    }
    let input = peeling.chosen_input(&whole);
    // What layer ranking read of the payload, so it is not decoded again.
    let known = peeling.take_detected(peeling.chosen);
    let read = read_payload_knowing(&input, plan, known)?;
    let doc = read
        .outcome
        .map_err(|e| Failure::Input(format!("{}: {e}", whole.name)))?;
    // The schema counts as given when the user named the type, or the input was protobuf read
    // with it; otherwise protobuf gets an inferred schema.
    let message = if plan.message.is_some() || doc.format == Format::Protobuf {
        read.message
    } else {
        None
    };
    Ok(Subject {
        name: whole.name,
        value: doc.value.into(),
        message,
    })
}

/// Runs `wirelens compare`.
pub fn compare_cmd(args: &CompareArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let plan = args.read.resolve()?;
    let subjects = args
        .inputs
        .iter()
        .map(|p| subject(&plan, p))
        .collect::<Result<Vec<_>, _>>()?;
    let mode = if args.quick {
        Mode::Quick
    } else if args.precise {
        Mode::Precise
    } else {
        Mode::Standard
    };
    let mut settings = Settings::new(mode);
    if !args.links.is_empty() {
        settings.links = args.links.clone();
    }
    let bar = indicatif::ProgressBar::new(0);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed_precise} {wide_msg}")
    {
        bar.set_style(style);
    }
    let cancel = AtomicBool::new(false);
    // The parallel modes count jobs; the precise mode's jobs all finish in its last round, so
    // its bar counts turns.
    let on_event = |event: Event| match event {
        Event::Started { total, label, .. } if mode != Mode::Precise => {
            bar.set_length(total as u64);
            bar.set_message(label);
        }
        Event::Measured { done, total, .. } if mode != Mode::Precise => {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
        Event::Turn { done, total, label } => {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(label);
        }
        Event::Started { .. } | Event::Measured { .. } | Event::Prepared { .. } => {}
    };
    let mut report = run(&subjects, &settings, &cancel, &on_event);
    let timeout = std::time::Duration::from_secs(args.runtime_timeout);
    // No --runtime: every runtime that answers a quick probe; the others are listed as not
    // found (with why) and not run.
    let (runtimes, absent) = if args.runtimes.is_empty() {
        bar.set_message("looking for Python and Node…");
        installed_runtimes(timeout.min(runtimes::PROBE_TIMEOUT))
    } else {
        (runtimes_asked(&args.runtimes), Vec::new())
    };
    if !runtimes.is_empty() {
        bar.set_length(0);
        bar.set_position(0);
        run_runtimes(
            &subjects,
            &mut report,
            &runtimes,
            &settings.bench,
            timeout,
            &cancel,
            &|label| bar.set_message(label.to_string()),
        );
    }
    if !absent.is_empty() {
        for file in &mut report.files {
            file.runtimes.extend(absent.iter().cloned());
            file.runtimes.sort_by_key(|r| r.runtime);
        }
    }
    bar.finish_and_clear();
    table::write_report(out, &report)?;
    let write = |path: &PathBuf, bytes: Result<Vec<u8>, String>| -> Result<(), Failure> {
        let bytes = bytes.map_err(|e| Failure::Input(format!("error: {e}")))?;
        write_atomically(path, &bytes)
            .map_err(|e| Failure::Input(format!("error: cannot write {}: {e}", path.display())))
    };
    if let Some(path) = &args.csv {
        write(path, csv::timings_csv(&report).map_err(|e| e.to_string()))?;
    }
    if let Some(path) = &args.csv_fields {
        write(path, csv::fields_csv(&report).map_err(|e| e.to_string()))?;
    }
    if let Some(path) = &args.json {
        write(
            path,
            serde_json::to_vec_pretty(&report).map_err(|e| e.to_string()),
        )?;
    }
    Ok(())
}
