//! Captures read as they arrive: `inspect --no-tree --no-hex` and `convert --all` of a pcap or
//! pcapng capture larger than [`STREAM_FROM`] (or with `--stream`, or arriving on standard
//! input beyond that size) list or write each payload as soon as its connection ends, holding
//! neither the file nor the payloads ([`pipeline::open_capture_each`]).
//!
//! What changes for the user: payloads come in the order connections end, not by stream, and
//! the capture's warnings come after the list (they are known at its end).

use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;

use crate::capture::listing::payload_rank;
use crate::capture::Payload;
use crate::capture::StreamedCapture;
use crate::pipeline::{self, Layers, OpenRequest};
use crate::report::inspect;

use super::{
    hint_of, not_read_whole, AllWriter, ConvertArgs, Failure, Input, InspectArgs, ReadPlan,
    STDIN_NAME,
};

/// Captures larger than this are read as they arrive by the commands that can: the size from
/// which layer ranking reads a capture one way only (`capture::readings`), so the payloads are
/// the ones the whole file would give.
pub(super) const STREAM_FROM: usize = 64 << 20;

/// What a command reads: all of it in memory, or a capture read as it arrives.
pub(super) enum Source {
    Whole(Input),
    Capture(Arriving),
}

/// A capture read as it arrives.
pub(super) struct Arriving {
    /// What the input is (its name and the format its name suggests; no bytes), for the
    /// payloads read from it.
    input: Input,
    reader: Box<dyn Read>,
    /// The file's size, when it is a file.
    len: Option<usize>,
}

/// Opens `path` (`-`: standard input) for a command that `can` read a capture as it arrives:
/// as such a capture when it is one and either `forced` (`--stream`) or larger than
/// [`STREAM_FROM`]; else read whole ([`super::read_input`] when it `can` not). Standard input
/// is read up to [`STREAM_FROM`] bytes before that is decided. `--stream` on an input that is
/// not a capture is a usage error.
pub(super) fn open(path: &Path, can: bool, forced: bool) -> Result<Source, Failure> {
    if !can {
        return super::read_input(path).map(Source::Whole);
    }
    let opened = open_capture(path, forced)?;
    match &opened {
        Source::Whole(whole) if forced => Err(Failure::Usage(format!(
            "--stream reads a pcap or pcapng capture as it arrives; {} is not one",
            whole.name
        ))),
        _ => Ok(opened),
    }
}

/// [`open`] of a command that can read a capture as it arrives.
fn open_capture(path: &Path, forced: bool) -> Result<Source, Failure> {
    let head_len = if forced { 12 } else { STREAM_FROM + 1 };
    if path.as_os_str() == "-" {
        let cannot =
            |e: io::Error| Failure::Input(format!("error: cannot read standard input: {e}"));
        let mut stdin = io::stdin();
        let mut head = Vec::new();
        (&mut stdin)
            .take(head_len as u64)
            .read_to_end(&mut head)
            .map_err(cannot)?;
        let more = head.len() == head_len;
        if more && crate::capture::pcap::is_pcap(&head) {
            return Ok(Source::Capture(Arriving {
                input: Input::of(STDIN_NAME.into(), Vec::new(), None),
                reader: Box::new(io::BufReader::with_capacity(
                    1 << 20,
                    io::Cursor::new(head).chain(stdin),
                )),
                len: None,
            }));
        }
        stdin.read_to_end(&mut head).map_err(cannot)?;
        return Ok(Source::Whole(Input::of(STDIN_NAME.into(), head, None)));
    }
    let cannot =
        |e: io::Error| Failure::Input(format!("error: cannot read {}: {e}", path.display()));
    let mut file = fs::File::open(path).map_err(cannot)?;
    let len = file
        .metadata()
        .ok()
        .filter(fs::Metadata::is_file)
        .and_then(|m| usize::try_from(m.len()).ok());
    let mut head = Vec::new();
    (&mut file)
        .take(12)
        .read_to_end(&mut head)
        .map_err(cannot)?;
    let large = len.is_none_or(|n| n > STREAM_FROM);
    if crate::capture::pcap::is_pcap(&head) && (forced || large) {
        return Ok(Source::Capture(Arriving {
            input: Input::of(path.display().to_string(), Vec::new(), hint_of(path)),
            reader: Box::new(io::BufReader::with_capacity(
                1 << 20,
                io::Cursor::new(head).chain(file),
            )),
            len,
        }));
    }
    file.read_to_end(&mut head).map_err(cannot)?;
    Ok(Source::Whole(Input::of(
        path.display().to_string(),
        head,
        hint_of(path),
    )))
}

/// Reads the capture `reader` gives (`len` bytes, when known; its name and hint in `input`) per
/// `args`, giving each payload and its number (from 1, in the order connections end) to
/// `each`, which returns false to stop (an output that cannot be written).
fn read(
    reader: &mut dyn Read,
    len: Option<usize>,
    input: &Input,
    plan: &ReadPlan,
    each: &mut dyn FnMut(Payload, usize) -> bool,
) -> Result<StreamedCapture, Failure> {
    let request = OpenRequest {
        layers: Layers::Best,
        limits: plan.limits,
        keys: plan.keys.as_ref(),
        message: None,
        hint: input.hint(),
        registry: plan.registry.as_ref(),
        walk_from: usize::MAX,
    };
    let mut number = 0usize;
    Ok(pipeline::open_capture_each(
        reader,
        &request,
        len,
        &mut |payloads| {
            payloads.into_iter().all(|p| {
                number += 1;
                each(p, number)
            })
        },
    ))
}

/// The capture's warnings, then the fault that ended it early; an error when it ended before
/// the first payload.
fn warnings(streamed: &StreamedCapture, whole: &Input) -> Result<Vec<String>, Failure> {
    let mut warnings = streamed.warnings.clone();
    if let Some(e) = &streamed.error {
        if streamed.payloads == 0 {
            return Err(Failure::Input(format!("error: {}: {e}", whole.name)));
        }
        warnings.push(format!("{e} (the payloads before it are kept)"));
    }
    Ok(warnings)
}

/// `inspect --no-tree --no-hex` of a capture read as it arrives: each payload listed as its
/// connection ends, then the capture's warnings, then how the payload `inspect` would choose
/// reads (the first of the best kind, as [`crate::capture::listing::default_payload`] ranks).
pub(super) fn inspect(
    args: &InspectArgs,
    plan: &ReadPlan,
    mut capture: Arriving,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let whole = &capture.input;
    match capture.len {
        Some(len) => writeln!(out, "input: {} ({len} bytes)", whole.name)?,
        None => writeln!(out, "input: {}", whole.name)?,
    }
    writeln!(
        out,
        "note: the capture is read as it arrives: each connection's payloads are listed when it ends, none is kept"
    )?;
    writeln!(out, "payloads:")?;
    let mut failed = None;
    let mut chosen: Option<(u8, usize, Payload)> = None;
    let streamed = read(
        &mut capture.reader,
        capture.len,
        whole,
        plan,
        &mut |p, number| {
            if let Err(e) = inspect::write_payload_line(out, number, &p, false) {
                failed = Some(e);
                return false;
            }
            let rank = payload_rank(&p);
            if chosen.as_ref().is_none_or(|(best, _, _)| rank < *best) {
                chosen = Some((rank, number, p));
            }
            true
        },
    )?;
    if let Some(e) = failed {
        return Err(Failure::from(e));
    }
    if capture.len.is_none() {
        writeln!(out, "read: {} bytes", streamed.input_len)?;
    }
    let summary = streamed
        .capture
        .as_ref()
        .filter(|c| streamed.payloads == 0 || c.all_encrypted())
        .map(|c| c.describe());
    let mut warnings = warnings(&streamed, whole)?;
    if let Some(why) = summary.as_ref().filter(|_| streamed.payloads == 0) {
        // The skipped link types are in the sentence already.
        warnings.retain(|w| !why.contains(w.as_str()));
    }
    for w in warnings {
        writeln!(out, "warning: {w}")?;
    }
    if let Some(why) = summary {
        writeln!(out, "capture: {why}")?;
    }
    let Some((_, number, p)) = chosen else {
        writeln!(out, "payloads: none")?;
        return Ok(());
    };
    writeln!(out, "payload {number} of {}:", streamed.payloads)?;
    let input = Input::payload(&p, &whole.name, whole.hint());
    drop(p);
    super::inspect_payload(args, plan, &input, None, out)
}

/// `convert --all --to json` of a capture read as it arrives: each payload's line written as its
/// connection ends. A capture not read whole (a limit dropped data) fails at the end without
/// `--partial`, the file output then not put in place.
pub(super) fn convert_all(
    args: &ConvertArgs,
    plan: &ReadPlan,
    mut capture: Arriving,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let mut all = AllWriter::new(args, plan, out, None);
    let mut failed = None;
    let whole = &capture.input;
    let streamed = read(
        &mut capture.reader,
        capture.len,
        whole,
        plan,
        &mut |p, number| match all.payload(&p, number, whole, None) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        },
    )?;
    if let Some(e) = failed {
        return Err(e);
    }
    let warnings = warnings(&streamed, whole)?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    if streamed.payloads == 0 {
        let why = streamed
            .capture
            .as_ref()
            .map_or_else(|| "no payload".to_string(), |c| c.describe());
        return Err(Failure::Input(format!(
            "error: {}: no payload to read: {why}",
            whole.name
        )));
    }
    if !args.partial {
        if let Some(lost) = not_read_whole(streamed.capture.as_ref()) {
            let written = if args.output.as_deref().is_some_and(|p| p.as_os_str() != "-") {
                "the output file was not written"
            } else {
                "the lines above were written"
            };
            return Err(Failure::Input(format!(
                "error: the capture was not read whole ({lost}); {written}; raise the limit, or --partial converts what was read"
            )));
        }
    }
    all.finish()
}
