//! `wirelens inspect`: the report of what a payload is, byte by byte.

use std::io::Write;

use super::arriving;
use super::{
    input_path, peel_input_or_nothing, read_payload_knowing, Failure, Input, InspectArgs,
    PeelOutcome, ReadPlan,
};
use crate::capture::peel_readings;
use crate::capture::verdict::Verdict;
use crate::codec::{DecodeOptions, Format};
use crate::pipeline::{self, Known, Layers};
use crate::report::inspect;

/// `inspect` of a capture without a payload: the warnings, the layer readings if asked for, and
/// the sentence saying why there is nothing (exit 0: the file was read).
pub(super) fn inspect_nothing(
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
    writeln!(out, "input: {} ({} bytes)", whole.name, whole.bytes().len())?;
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
pub(super) const TEXT_LINES: usize = 20;
/// Characters of one such line shown.
pub(super) const TEXT_LINE_CHARS: usize = 200;

/// `inspect` of a payload with a verdict: the sentence instead of format readings, and for text
/// its first lines.
pub(super) fn inspect_verdict(
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
            let text = String::from_utf8_lossy(input.bytes());
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
        Verdict::Encrypted { .. } | Verdict::NotData { .. } | Verdict::Empty => {
            writeln!(out, "format: {}", verdict.sentence())?
        }
    }
    Ok(())
}

/// `inspect --list-types`: the schema's message types, then its services' methods.
pub(super) fn list_types(plan: &ReadPlan, out: &mut dyn Write) -> Result<(), Failure> {
    let Some(schema) = &plan.schema else {
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
    if let Some(name) = &plan.message {
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

pub(super) fn inspect_cmd(args: &InspectArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let plan = args.input.read.resolve()?;
    if args.list_types {
        return list_types(&plan, out);
    }
    let streams = args.no_tree
        && args.no_hex
        && !args.layers
        && plan.pick.is_none()
        && plan.layers == Layers::Best;
    let whole = match arriving::open(input_path(&args.input)?, streams, args.stream)? {
        arriving::Source::Capture(capture) => return arriving::inspect(args, &plan, capture, out),
        arriving::Source::Whole(whole) => whole,
    };
    let mut peeling = match peel_input_or_nothing(&whole, &plan)? {
        PeelOutcome::Payloads(peeling) => *peeling,
        nothing => return inspect_nothing(args, &whole, nothing, out),
    };
    let input = peeling.chosen_input(&whole);
    let known = peeling.take_detected(peeling.chosen);
    writeln!(out, "input: {} ({} bytes)", whole.name, whole.bytes().len())?;
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
                limits: plan.limits,
                ..DecodeOptions::default()
            };
            peel_readings(whole.bytes(), &options, None)
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
    inspect_payload(args, &plan, &input, known, out)
}

/// What `inspect` says of one payload: how it reads (or what the protocol says it is), its
/// message type, and its tree and annotated hex unless they are left out.
pub(super) fn inspect_payload(
    args: &InspectArgs,
    plan: &ReadPlan,
    input: &Input,
    known: Option<Known>,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    if let (None, Some(v)) = (plan.from, &input.verdict) {
        return inspect_verdict(input, v, args.no_tree && args.no_hex, out);
    }
    let read = read_payload_knowing(input, plan, known)?;
    if plan.from.is_none() && read.readings.first().is_some_and(|r| !r.is_claim()) {
        // No format read the bytes: that is the answer, not the least bad guess.
        inspect::write_no_known_format(out, &read.readings)?;
        if let Some(hint) = pipeline::unread_hint(input.bytes(), plan.registry.as_ref()) {
            writeln!(out, "  note: {hint}")?;
        }
        return Err(Failure::Input(format!(
            "error: {}: no known format reads these {} bytes (the best partial readings are listed above); --from FORMAT reads them as one",
            input.name,
            input.bytes().len()
        )));
    }
    inspect::write_readings(out, &read.readings)?;
    if let Some(message) = &read.message {
        match &read.message_reason {
            Some(why) => writeln!(out, "message type: {} ({why})", message.full_name())?,
            None => writeln!(out, "message type: {}", message.full_name())?,
        }
        // Editions schemas say how they were read: lowered, and by which compiler.
        if let Some(schema) = &plan.schema {
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
        write_resolution(out, input, plan)?
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
                .and_then(|r| r.node_rules(&doc.spans, input.bytes()));
            let note = |id| Some(rules.as_ref()?.changed(id)?.to_string());
            inspect::write_tree_with(out, doc, &note)?;
        }
        if !args.no_hex {
            writeln!(out, "\nannotated hex:")?;
            inspect::write_annotated_hex(out, input.bytes(), doc)?;
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
pub(super) fn write_resolution(
    out: &mut dyn Write,
    input: &Input,
    plan: &ReadPlan,
) -> Result<Option<pipeline::Resolution>, Failure> {
    let found = pipeline::avro_resolution(
        input.payload.avro.as_ref(),
        plan.avro.as_slice(),
        plan.reader.as_ref(),
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
