//! `wirelens convert`: a payload (or every payload, `--all`) written in another format.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};
use std::path::Path;

use super::arriving;
use super::{
    input_path, named_message, peel_input, read_payload_knowing, ConvertArgs, Failure, Input,
    Peeling, ReadPlan,
};
use crate::capture::pcap::CaptureSummary;
use crate::capture::verdict::Verdict;
use crate::codec::protobuf::MessageDescriptor;
use crate::codec::stream;
use crate::codec::{self, FloatPolicy, Format};
use crate::files::write_atomically;
use crate::limits::Limits;
use crate::pipeline::{
    self, Decoded, Known, Layers, ProtobufType, WriteError, WriteNote, WriteOptions, Written,
};

pub(super) fn convert_cmd(args: &ConvertArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let plan = args.input.read.resolve()?;
    let streams = args.all && args.to == Format::Json && plan.layers == Layers::Best;
    let whole = match arriving::open(input_path(&args.input)?, streams, args.stream)? {
        arriving::Source::Capture(capture) => {
            return arriving::convert_all(args, &plan, capture, out)
        }
        arriving::Source::Whole(whole) => whole,
    };
    if convert_streaming(args, &plan, &whole, out)?
        || convert_streaming_protobuf(args, &plan, &whole, out)?
    {
        return Ok(());
    }
    let mut peeling = peel_input(&whole, &plan)?;
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
    if !args.all && with_bytes > 1 && plan.pick.is_none() {
        return Err(Failure::Usage(format!(
            "the input holds {with_bytes} payloads; choose one with --pick N (see `wirelens inspect`) or use --all"
        )));
    }
    if !args.partial {
        if let Some(lost) = not_read_whole(peeling.opened.capture.as_ref()) {
            return Err(Failure::Input(format!(
                "error: the capture was not read whole ({lost}); raise the limit, or --partial converts what was read"
            )));
        }
    }
    if args.all {
        return convert_all(args, &plan, &whole, &mut peeling, out);
    }
    let chosen = &peeling.opened.payloads[peeling.chosen];
    if let Some(why) = cut_short(args, chosen, peeling.chosen + 1) {
        return Err(Failure::Input(format!("error: {why}")));
    }
    let input = peeling.chosen_input(&whole);
    let known = peeling.take_detected(peeling.chosen);
    let (mut bytes, notes) = convert_one(args, &plan, &input, known, args.pretty)?;
    for line in notes {
        eprintln!("{line}");
    }
    if args.to == Format::Json {
        bytes.push(b'\n');
    }
    write_output(args, &bytes, out)
}

/// Whether `convert` writes one payload, the input itself, with no layer or key log asked for
/// (`--raw` asks for none): what the streamed conversions need.
pub(super) fn one_payload_as_it_is(args: &ConvertArgs, plan: &ReadPlan) -> bool {
    !args.all
        && plan.pick.is_none_or(|n| n == 1)
        && matches!(plan.layers, Layers::Best | Layers::AsIs)
        && plan.keys.is_none()
}

/// `convert` of a JSON document, or of a MessagePack or CBOR file (by its name, or `--from`),
/// with nothing to peel and no schema, streamed by [`stream::transcode`] so that a large file is
/// never held decoded. `false` when that does not apply (or the document needs the ordinary way:
/// an error to report, canonical or pretty output): then nothing was written and the caller
/// converts as usual.
pub(super) fn convert_streaming(
    args: &ConvertArgs,
    plan: &ReadPlan,
    whole: &Input,
    out: &mut dyn Write,
) -> Result<bool, Failure> {
    let plain =
        one_payload_as_it_is(args, plan) && plan.schema.is_none() && args.to != Format::Protobuf;
    let bytes = whole.bytes();
    let from = match (plan.from, whole.hint()) {
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
    let options = WriteOptions {
        limits: plan.limits,
        ..write_options(args, plan, None, args.pretty)
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
pub(super) fn convert_streaming_protobuf(
    args: &ConvertArgs,
    plan: &ReadPlan,
    whole: &Input,
    out: &mut dyn Write,
) -> Result<bool, Failure> {
    let protobuf = match plan.from {
        Some(format) => format == Format::Protobuf,
        None => whole.hint() == Some(Format::Protobuf),
    };
    let plain = protobuf
        && one_payload_as_it_is(args, plan)
        && args.to == Format::Json
        && plan.field_readings.is_empty()
        && plan.default_limits;
    if !plain {
        return Ok(false);
    }
    let Some(message) = named_message(plan)? else {
        return Ok(false);
    };
    let options = write_options(args, plan, Some(&message), args.pretty);
    let Some(written) = pipeline::write_proto3_streamed(whole.bytes(), &message, &options) else {
        return Ok(false);
    };
    report_notes(&written, &whole.name);
    let mut bytes = written.bytes;
    bytes.push(b'\n');
    write_output(args, &bytes, out)?;
    Ok(true)
}

/// How `convert` writes a payload read with `message`: its flags, and for `--to avro` the
/// schema `--avro-schema` names. With a schema loaded, protobuf is written as the type
/// `--message` names (the payload was read with it) and is refused without one.
pub(super) fn write_options<'a>(
    args: &ConvertArgs,
    plan: &'a ReadPlan,
    message: Option<&'a MessageDescriptor>,
    pretty: bool,
) -> WriteOptions<'a> {
    let avro = plan.avro.as_ref().filter(|_| args.to == Format::Avro);
    let protobuf = match message {
        _ if plan.schema.is_some() && plan.message.is_none() => ProtobufType::Unnamed,
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
pub(super) fn convert_all(
    args: &ConvertArgs,
    plan: &ReadPlan,
    whole: &Input,
    peeling: &mut Peeling,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let count = peeling.opened.payloads.len();
    let mut all = AllWriter::new(args, plan, out, Some(count));
    for i in 0..count {
        let known = peeling.take_detected(i);
        all.payload(&peeling.opened.payloads[i], i + 1, whole, known)?;
    }
    all.finish()
}

/// `convert --all`'s output: each payload's JSON line written as it comes, the ones that do not
/// convert named on stderr, the ones that are no data counted per kind.
pub(super) struct AllWriter<'a> {
    pub(super) args: &'a ConvertArgs,
    pub(super) plan: &'a ReadPlan,
    pub(super) lines: LineSink<'a>,
    /// How many payloads there are, when that is known before the first is written.
    pub(super) count: Option<usize>,
    pub(super) failed: usize,
    /// Payloads that are no data (encrypted records, DNS, SIP…): skipped, listed per kind.
    pub(super) skipped: Vec<(String, Vec<usize>)>,
    /// Note lines printed so far, and the notes and payloads beyond [`AllWriter::NOTE_LINES`]
    /// only counted.
    pub(super) notes_shown: usize,
    pub(super) notes_unshown: usize,
    pub(super) payloads_unshown: usize,
}

impl<'a> AllWriter<'a> {
    pub(super) fn new(
        args: &'a ConvertArgs,
        plan: &'a ReadPlan,
        out: &'a mut dyn Write,
        count: Option<usize>,
    ) -> AllWriter<'a> {
        AllWriter {
            args,
            plan,
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
    pub(super) fn notes(&mut self, number: usize, notes: Vec<String>) {
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
    pub(super) fn payload(
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
        // The payload's verdict is made once, here, and read from the input from then on.
        let input = Input::payload(p, &whole.name, whole.hint());
        if self.plan.from.is_none() {
            if let Some(v) = input.verdict.as_ref().filter(|v| !v.is_data()) {
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
            None => convert_one(args, self.plan, &input, known, false),
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
    pub(super) fn finish(self) -> Result<(), Failure> {
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
pub(super) struct LineSink<'o> {
    pub(super) path: Option<&'o Path>,
    pub(super) file: Option<io::BufWriter<crate::files::AtomicFile>>,
    pub(super) out: io::BufWriter<&'o mut dyn Write>,
    /// Lines written so far.
    pub(super) written: usize,
}

impl<'o> LineSink<'o> {
    pub(super) fn new(args: &'o ConvertArgs, out: &'o mut dyn Write) -> LineSink<'o> {
        LineSink {
            path: args.output.as_deref().filter(|p| p.as_os_str() != "-"),
            file: None,
            out: io::BufWriter::new(out),
            written: 0,
        }
    }

    pub(super) fn cannot_write(path: &Path, e: &io::Error) -> Failure {
        Failure::Input(format!("error: cannot write {}: {e}", path.display()))
    }

    /// The output, opened on first use.
    pub(super) fn writer(&mut self) -> Result<&mut dyn Write, Failure> {
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
    pub(super) fn line(&mut self, one: &[u8]) -> Result<(), Failure> {
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
    pub(super) fn finish(mut self) -> Result<(), Failure> {
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
pub(super) fn convert_text(
    args: &ConvertArgs,
    plan: &ReadPlan,
    input: &Input,
    pretty: bool,
) -> Result<(Vec<u8>, Vec<String>), Failure> {
    let options = write_options(args, plan, None, pretty);
    let written = pipeline::write_text(input.bytes(), args.to, &options)
        .map_err(|e| Failure::Input(format!("error: {e}")))?;
    let notes = note_lines(&written, &input.name);
    Ok((written.bytes, notes))
}

/// Why payload `p` (number `number`) should not be converted without `--partial`: a layer cut
/// it short.
pub(super) fn cut_short(
    args: &ConvertArgs,
    p: &crate::capture::Payload,
    number: usize,
) -> Option<String> {
    let why = p.cut.as_deref().filter(|_| !args.partial)?;
    Some(format!(
        "payload {number} ({} bytes via {}) was cut short ({why}); --partial converts it as far as it goes",
        p.bytes.len(),
        p.provenance()
    ))
}

/// Why a capture was not read whole, when it was not: payload data dropped at the
/// payload-bytes limit ([`CaptureSummary::dropped_from`]), so a conversion of "every payload"
/// would not be one. Bytes the traffic itself lost (a gap, a packet captured short) mark the
/// payloads they cut instead ([`cut_short`]).
pub(super) fn not_read_whole(capture: Option<&CaptureSummary>) -> Option<String> {
    let frame = capture?.dropped_from?;
    Some(format!(
        "payload data from frame {frame} on was dropped at the pcap-bytes limit"
    ))
}

/// Converts one payload per the flags; returns the bytes (JSON without a final newline) and the
/// notes on what it could not write exactly ([`note_lines`]).
pub(super) fn convert_one(
    args: &ConvertArgs,
    plan: &ReadPlan,
    input: &Input,
    known: Option<Known>,
    pretty: bool,
) -> Result<(Vec<u8>, Vec<String>), Failure> {
    if let (None, Some(Verdict::Text { .. })) = (plan.from, &input.verdict) {
        return convert_text(args, plan, input, pretty);
    }
    let read = read_payload_knowing(input, plan, known)?;
    drop(read.readings);
    drop(read.ranking);
    let doc = read.outcome.map_err(|e| Failure::Input(e.to_string()))?;
    // Only the bytes and notes are used: no spans of the output, and none of the source.
    let codec::Document { format, value, .. } = doc;
    let options = write_options(args, plan, read.message.as_ref(), pretty);
    let source = Decoded {
        format,
        value: Cow::Owned(value),
        spans: None,
        bytes: input.bytes(),
        message: read.message.as_ref(),
    };
    let written = pipeline::write(source, args.to, &options).map_err(write_failure)?;
    let notes = note_lines(&written, &input.name);
    Ok((written.bytes, notes))
}

/// The failure of a conversion that [`pipeline::write()`] refused.
pub(super) fn write_failure(e: WriteError) -> Failure {
    match e {
        WriteError::MessageNotNamed => Failure::Usage(
            "--to protobuf with a schema needs --message to say which message type to write".into(),
        ),
        e => Failure::Input(format!("error: {e}")),
    }
}

/// Prints what a conversion of `name` could not write exactly on stderr ([`note_lines`]).
pub(super) fn report_notes(written: &Written, name: &str) {
    for line in note_lines(written, name) {
        eprintln!("{line}");
    }
}

/// What a conversion of `name` could not write exactly, one note a line, and the nulls
/// written as a field's default summed up.
pub(super) fn note_lines(written: &Written, name: &str) -> Vec<String> {
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
pub(super) fn count_text(n: usize) -> String {
    crate::report::table::group(n as u64)
}

/// Writes converted bytes to `-o` (see [`write_atomically`]) or standard output (without `-o`, or
/// with `-o -`; never binary to a terminal).
pub(super) fn write_output(
    args: &ConvertArgs,
    bytes: &[u8],
    out: &mut dyn Write,
) -> Result<(), Failure> {
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
