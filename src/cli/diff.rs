//! `wirelens diff`: two payloads, in any formats, compared by meaning (see [`crate::diff`]).
//!
//! Exit status, as diff(1) gives it: 0 the payloads mean the same, 1 they differ, 2 trouble
//! (an input that cannot be read or decoded, bad flags, an output that cannot be written).

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{
    parse_format, peel_input, read_input, read_payload_knowing, Failure, ReadArgs, ReadPlan,
};
use crate::capture::SharedBytes;
use crate::codec::{Document, Format};
use crate::diff::{diff, ChangeKind, Diff, DiffOptions};
use crate::files::write_atomically;

/// `wirelens diff`.
#[derive(Debug, Args)]
#[command(
    mut_arg("from", |a| a.help("Read A (and B, unless --from-b) as this format: json, msgpack, cbor, protobuf, avro (with --avro-schema)")),
    mut_arg("pick", |a| a.help("The Nth payload (from 1) of A when it is a capture holding several")),
    mut_arg("raw", |a| a.help("Take both inputs as the payloads themselves: peel no layers")),
    mut_arg("keylog", |a| a.help("A TLS key log (NSS format) to decrypt both captures' TLS connections with")),
    mut_arg("layer", |a| a.help("How to peel both inputs, as for `inspect --layer`")),
)]
pub struct DiffArgs {
    /// The first payload (A), read like `inspect` reads its input; `-` for standard input.
    pub a: PathBuf,
    /// The second payload (B).
    pub b: PathBuf,
    /// How both inputs are read (B's format and payload can be chosen apart).
    #[command(flatten)]
    pub read: ReadArgs,
    /// Read B as this format.
    #[arg(long, value_parser = parse_format)]
    pub from_b: Option<Format>,
    /// The Nth payload (from 1) of B (default: --pick).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub pick_b: Option<u64>,
    /// The identity field of an array's records, as a pattern (`$.data[*].id`); repeatable.
    /// Without one, a key named `id` or ending in `_id` that nearly every record has is used.
    #[arg(long = "key", value_name = "PATTERN")]
    pub keys: Vec<String>,
    /// Leave this path out of the comparison (a pattern: `$.data[*].updated_at`); repeatable.
    #[arg(long = "ignore", value_name = "PATTERN")]
    pub ignore: Vec<String>,
    /// Count a different key order (or record order) as a change.
    #[arg(long)]
    pub order: bool,
    /// Count a float of another width holding the same number (float32 vs float64) as a change.
    #[arg(long)]
    pub strict_widths: bool,
    /// Most insertions plus deletions an array without identity field is aligned for; past it,
    /// its items are compared by index.
    #[arg(long, value_name = "N", default_value_t = DiffOptions::default().max_edits)]
    pub max_edits: usize,
    /// Write the changes here as JSON (atomically).
    #[arg(long, value_name = "OUT.json")]
    pub json: Option<PathBuf>,
    /// Write the changes here as CSV (atomically): kind, path, a_value, b_value, a_start,
    /// a_end, b_start, b_end.
    #[arg(long, value_name = "OUT.csv")]
    pub csv: Option<PathBuf>,
}

impl DiffArgs {
    /// How A is read, and how B is: the same but for `--from-b` and `--pick-b`.
    fn plans(&self) -> Result<(ReadPlan, ReadPlan), Failure> {
        let a = self.read.resolve()?;
        let b = ReadPlan {
            from: self.from_b.or(a.from),
            pick: self.pick_b.or(a.pick),
            ..a.clone()
        };
        Ok((a, b))
    }

    fn options(&self) -> Result<DiffOptions, Failure> {
        let keys = self
            .keys
            .iter()
            .map(|k| DiffOptions::key_pattern(k).map_err(|e| Failure::Usage(format!("--key {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let ignore = self
            .ignore
            .iter()
            .map(|i| {
                DiffOptions::ignore_pattern(i).map_err(|e| Failure::Usage(format!("--ignore {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(DiffOptions {
            keys,
            ignore,
            order: self.order,
            strict_widths: self.strict_widths,
            max_edits: self.max_edits,
            message: None,
        })
    }
}

/// One input, decoded.
struct Side {
    /// The file name, with the payload's number when it came out of a capture of several.
    label: String,
    bytes: usize,
    payload: SharedBytes,
    doc: Document,
    /// The protobuf message type it was read with.
    message: Option<crate::codec::protobuf::MessageDescriptor>,
}

fn read_side(path: &std::path::Path, plan: &ReadPlan) -> Result<Side, Failure> {
    let whole = read_input(path)?;
    let mut peeling = peel_input(&whole, plan)?;
    for w in &peeling.warnings {
        eprintln!("warning: {}: {w}", whole.name);
    }
    let input = peeling.chosen_input(&whole);
    // What layer ranking read of the payload, so it is not decoded again.
    let known = peeling.take_detected(peeling.chosen);
    let read = read_payload_knowing(&input, plan, known)?;
    let message = read.message.clone();
    let doc = read
        .outcome
        .map_err(|e| Failure::Input(format!("error: {}: {e}", whole.name)))?;
    let label = if peeling.opened.payloads.len() > 1 {
        format!(
            "{} (payload {} of {})",
            whole.name,
            peeling.chosen + 1,
            peeling.opened.payloads.len()
        )
    } else {
        whole.name.clone()
    };
    Ok(Side {
        label,
        bytes: input.bytes().len(),
        payload: input.bytes().clone(),
        doc,
        message,
    })
}

/// `1234567` as `1,234,567`.
fn grouped(n: usize) -> String {
    crate::report::table::group(n as u64)
}

/// The summary line when the meaning is the same: both sizes and where the bytes differ.
fn same_line(d: &Diff, a: &Side, b: &Side, identical: bool) -> String {
    d.same_meaning_line((a.doc.format, a.bytes), (b.doc.format, b.bytes), identical)
}

fn json_bytes(d: &Diff, a: &Side, b: &Side, summary: &str) -> Result<Vec<u8>, serde_json::Error> {
    let side = |s: Option<&crate::diff::Side>| {
        s.map(|s| {
            serde_json::json!({
                "kind": s.kind.to_string(),
                "value": s.summary,
                "start": s.span.map(|sp| sp.start),
                "end": s.span.map(|sp| sp.end),
            })
        })
    };
    let changes: Vec<serde_json::Value> = d
        .changes
        .iter()
        .map(|c| {
            serde_json::json!({
                "kind": c.kind.name(),
                "counted": d.order_counts || c.kind != ChangeKind::Order,
                "path": c.path.to_string(),
                "b_path": c.b_path.as_ref().map(ToString::to_string),
                "a": side(c.a.as_ref()),
                "b": side(c.b.as_ref()),
                "note": c.note,
            })
        })
        .collect();
    let input = |s: &Side| {
        serde_json::json!({
            "name": s.label,
            "format": s.doc.format.name(),
            "bytes": s.bytes,
        })
    };
    let report = serde_json::json!({
        "same_meaning": d.same_meaning(),
        "summary": summary,
        "a": input(a),
        "b": input(b),
        "changes": changes,
        "encoding": {
            "key_order": d.encoding.key_order,
            "float_widths": d.encoding.float_widths,
            "int_widths": d.encoding.int_widths,
            "int_texts": d.encoding.int_texts,
            "json_forms": d.encoding.json_forms,
            "field_names": d.encoding.field_names,
        },
        "notes": d.notes,
    });
    serde_json::to_vec_pretty(&report)
}

/// Runs `wirelens diff`: Ok(true) when the payloads mean the same.
fn diff_cmd(args: &DiffArgs, out: &mut dyn Write) -> Result<bool, Failure> {
    if args.a.as_os_str() == "-" && args.b.as_os_str() == "-" {
        return Err(Failure::Usage(
            "only one of A and B can be standard input (-)".into(),
        ));
    }
    let mut options = args.options()?;
    let (plan_a, plan_b) = args.plans()?;
    let a = read_side(&args.a, &plan_a)?;
    let b = read_side(&args.b, &plan_b)?;
    // The schema the comparison follows: the message type a protobuf input was read with,
    // else the one --message names (two JSON inputs of a protobuf API).
    let read_with = |s: &Side| (s.doc.format == Format::Protobuf).then(|| s.message.clone());
    options.message = match read_with(&a).flatten().or(read_with(&b).flatten()) {
        Some(m) => Some(m),
        None => super::named_message(&plan_a)?,
    };
    let d = diff(&a.doc, &b.doc, &options);
    let identical = a.doc.format == b.doc.format && a.payload[..] == b.payload[..];
    let summary = if d.same_meaning() {
        same_line(&d, &a, &b, identical)
    } else {
        d.summary()
    };
    writeln!(
        out,
        "A: {}: {}, {} bytes",
        a.label,
        a.doc.format.title(),
        grouped(a.bytes)
    )?;
    writeln!(
        out,
        "B: {}: {}, {} bytes",
        b.label,
        b.doc.format.title(),
        grouped(b.bytes)
    )?;
    for c in d.counted() {
        writeln!(out, "{c}")?;
    }
    for n in &d.notes {
        writeln!(out, "note: {n}")?;
    }
    writeln!(out, "{summary}")?;
    if let Some(path) = &args.csv {
        let bytes = crate::diff::to_csv(&d)
            .map_err(|e| Failure::Input(format!("error: cannot write {}: {e}", path.display())))?;
        write_atomically(path, &bytes)
            .map_err(|e| Failure::Input(format!("error: cannot write {}: {e}", path.display())))?;
    }
    if let Some(path) = &args.json {
        let bytes = json_bytes(&d, &a, &b, &summary)
            .map_err(|e| Failure::Input(format!("error: cannot write {}: {e}", path.display())))?;
        write_atomically(path, &bytes)
            .map_err(|e| Failure::Input(format!("error: cannot write {}: {e}", path.display())))?;
    }
    Ok(d.same_meaning())
}

/// Runs `wirelens diff` and gives its exit status (0 same meaning, 1 different, 2 trouble).
pub fn diff_main(args: &DiffArgs, out: &mut dyn Write) -> ExitCode {
    status(diff_cmd(args, out).and_then(|same| out.flush().map(|()| same).map_err(Failure::Io)))
}

/// The exit status of a command that answers yes (0) or no (1), or failed (2, with its message).
fn status(result: Result<bool, Failure>) -> ExitCode {
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        // A reader that stopped early (`wirelens diff a b | head`) saw the changes it wanted.
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::from(1),
        Err(Failure::Io(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(Failure::Input(msg)) => {
            eprintln!("{msg}");
            ExitCode::from(2)
        }
        Err(Failure::Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

/// `wirelens diff-schema`.
#[derive(Debug, Args)]
pub struct DiffSchemaArgs {
    /// The old version's .proto file, descriptor set, or Avro schema (`.avsc`: both versions
    /// are then Avro schemas, compared by the specification's resolution rules).
    #[arg(long = "proto-a", visible_alias = "old", value_name = "OLD")]
    pub proto_a: PathBuf,
    /// The new version's .proto file, descriptor set or `.avsc`.
    #[arg(long = "proto-b", visible_alias = "new", value_name = "NEW")]
    pub proto_b: PathBuf,
    /// A folder to look for imported .proto files in (repeatable; each file's own folder is
    /// searched too).
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub includes: Vec<PathBuf>,
    /// The message type to compare (full name, or a short name only one type has); protobuf
    /// only.
    #[arg(long, value_name = "pkg.Name")]
    pub message: Option<String>,
}

/// Whether `path` names an Avro schema file.
fn is_avsc(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("avsc"))
}

/// `diff-schema` of two Avro schemas: each change with what it breaks, then the backward,
/// forward and full verdicts; Ok(true) when fully compatible.
fn diff_avro_schemas(args: &DiffSchemaArgs, out: &mut dyn Write) -> Result<bool, Failure> {
    use crate::codec::avro::{compat, AvroSchema};
    let load = |path: &PathBuf| {
        AvroSchema::from_file(path).map_err(|e| Failure::Input(format!("error: {e}")))
    };
    let (old, new) = (load(&args.proto_a)?, load(&args.proto_b)?);
    let comparison = compat::compare(old.root(), new.root());
    for c in &comparison.changes {
        let mut line = format!("{}: {}", c.path, c.what);
        match (&c.backward, &c.forward) {
            (None, None) => line.push_str(" [compatible both ways]"),
            (b, f) => {
                if let Some(b) = b {
                    line.push_str(&format!(" [breaks backward: {}]", b.reason));
                }
                if let Some(f) = f {
                    line.push_str(&format!(" [breaks forward: {}]", f.reason));
                }
            }
        }
        writeln!(out, "{line}")?;
    }
    if comparison.changes.is_empty() {
        writeln!(out, "no changes")?;
    }
    writeln!(out, "backward (new reads old): {}", comparison.backward)?;
    writeln!(out, "forward (old reads new): {}", comparison.forward)?;
    writeln!(out, "full: {}", comparison.full())?;
    Ok(comparison.full().is_compatible())
}

/// Runs `wirelens diff-schema`: Ok(true) when every change is compatible (Avro: both ways).
fn diff_schema_cmd(args: &DiffSchemaArgs, out: &mut dyn Write) -> Result<bool, Failure> {
    use crate::diff::schema::{diff_messages, load_version, summary, worst, Verdict};
    match (is_avsc(&args.proto_a), is_avsc(&args.proto_b)) {
        (true, true) => return diff_avro_schemas(args, out),
        (false, false) => {}
        _ => {
            return Err(Failure::Usage(
                "diff-schema compares two .proto versions or two .avsc versions, not one of each"
                    .into(),
            ))
        }
    }
    let Some(message) = &args.message else {
        return Err(Failure::Usage(
            "diff-schema of .proto files needs --message to say which type to compare".into(),
        ));
    };
    let load = |path: &PathBuf| {
        load_version(path, &args.includes, message)
            .map_err(|e| Failure::Input(format!("error: {e}")))
    };
    let (old, new) = (load(&args.proto_a)?, load(&args.proto_b)?);
    let changes = diff_messages(&old, &new);
    for c in &changes {
        writeln!(out, "{c}")?;
    }
    writeln!(out, "{}", summary(&changes))?;
    Ok(worst(&changes) == Verdict::Compatible)
}

/// Runs `wirelens diff-schema` and gives its exit status (0 compatible, 1 not, 2 trouble).
pub fn diff_schema_main(args: &DiffSchemaArgs, out: &mut dyn Write) -> ExitCode {
    status(diff_schema_cmd(args, out).and_then(|ok| out.flush().map(|()| ok).map_err(Failure::Io)))
}
