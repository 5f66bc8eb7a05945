//! Reading a command's input: the file or standard input, peeled to its payloads as the
//! arguments ask, and the payload a command works on read as the schema and the request say.

use std::fs;
use std::io::{self, Read};
use std::path::Path;

use super::{Failure, InputArgs, ReadPlan};
use crate::capture::verdict::{verdict, Verdict};
use crate::capture::{LayerReading, Payload, SharedBytes};
use crate::codec::detect::ReadingSummary;
use crate::codec::protobuf::schema::{Candidate, Schema};
use crate::codec::protobuf::MessageDescriptor;
use crate::codec::{DecodeError, Document, Format};
use crate::pipeline::{
    self, Known, MessageChoice, MessageTypes, OpenError, OpenRequest, Opened, Origin, ReadRequest,
};

/// A payload a command reads, and a name for messages: the input file as it is, or one payload
/// peeled from it.
pub(super) struct Input {
    pub(super) name: String,
    /// Its bytes and what its layers said of them (none for the input file as it is): the
    /// format hint, the gRPC call, an Avro framing, a message type a framing named.
    pub(super) payload: Payload,
    /// What the payload is when it is no data format (text its Content-Type names, encrypted
    /// records): then no format is guessed. Made once, from `payload`.
    pub(super) verdict: Option<Verdict>,
}

pub(super) fn read_input(path: &Path) -> Result<Input, Failure> {
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
pub(super) const STDIN_NAME: &str = "<stdin>";

/// The format a file's extension names.
pub(super) fn hint_of(path: &Path) -> Option<Format> {
    path.extension()
        .and_then(|e| e.to_str())
        .and_then(Format::from_extension)
}

impl Input {
    /// An input of `bytes` as it was read, with the format its name suggests.
    pub(super) fn of(name: String, bytes: Vec<u8>, hint: Option<Format>) -> Input {
        Input {
            name,
            payload: Payload {
                bytes: bytes.into(),
                hint,
                ..Payload::default()
            },
            // Bytes the user opened as they are get no verdict (a payload without layers).
            verdict: None,
        }
    }

    /// Payload `p` of the input named `name` as an input of its own: its Content-Type (else the
    /// input's `hint`) as the format hint, and what its layers said of it.
    pub(super) fn payload(p: &Payload, name: &str, hint: Option<Format>) -> Input {
        let verdict = verdict(p);
        let mut payload = p.clone();
        payload.hint = p.hint.or(hint);
        Input {
            name: name.to_string(),
            payload,
            verdict,
        }
    }

    /// The payload's bytes.
    pub(super) fn bytes(&self) -> &SharedBytes {
        &self.payload.bytes
    }

    /// The format hint: the payload's Content-Type, else the input's name.
    pub(super) fn hint(&self) -> Option<Format> {
        self.payload.hint
    }
}

/// The payloads found in an input, and which one the command works on.
pub(super) struct Peeling {
    /// What the pipeline opened: the payloads, the layer readings when they were ranked (and
    /// which one is in use), what the capture carried, and the format readings ranking made.
    pub(super) opened: Opened,
    pub(super) chosen: usize,
    /// The capture's warnings, and the fault that stopped peeling after some payloads.
    pub(super) warnings: Vec<String>,
}

impl Peeling {
    /// The chosen payload as an input of its own (its Content-Type, if any, as the format hint).
    pub(super) fn chosen_input(&self, input: &Input) -> Input {
        self.input_for(self.chosen, input)
    }

    /// The format readings ranking made of payload `index`, if it made them (taken: a second
    /// call gives `None`).
    pub(super) fn take_detected(&mut self, index: usize) -> Option<Known> {
        self.opened.take_detected(index)
    }

    pub(super) fn input_for(&self, index: usize, input: &Input) -> Input {
        Input::payload(&self.opened.payloads[index], &input.name, input.hint())
    }

    /// Whether anything was peeled (so the user should be told where the payload came from).
    pub(super) fn peeled(&self) -> bool {
        let payloads = &self.opened.payloads;
        payloads.len() > 1 || payloads.iter().any(|p| !p.layers.is_empty())
    }
}

/// What peeling gave: payloads, or a capture that carries none.
pub(super) enum PeelOutcome {
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
pub(super) fn peel_input(input: &Input, plan: &ReadPlan) -> Result<Peeling, Failure> {
    match peel_input_or_nothing(input, plan)? {
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
pub(super) fn peel_input_or_nothing(
    input: &Input,
    plan: &ReadPlan,
) -> Result<PeelOutcome, Failure> {
    let message = if ranks_with_message(plan) {
        named_message(plan)?
    } else {
        None
    };
    let request = OpenRequest {
        layers: plan.layers,
        limits: plan.limits,
        keys: plan.keys.as_ref(),
        message,
        hint: input.hint(),
        registry: plan.registry.as_ref(),
        walk_from: usize::MAX,
    };
    let opened = pipeline::open(input.bytes(), &request).map_err(|e| match e {
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
    let chosen = match plan.pick {
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

/// Whether layer ranking reads payloads as the message type the user named: then protobuf is
/// decoded once, with the schema, and the command takes the ranking's documents.
pub(super) fn ranks_with_message(plan: &ReadPlan) -> bool {
    plan.message.is_some() && matches!(plan.from, None | Some(Format::Protobuf))
}

/// The message type named by `--message`, from the loaded schema.
pub(super) fn named_message(plan: &ReadPlan) -> Result<Option<MessageDescriptor>, Failure> {
    let (Some(schema), Some(name)) = (&plan.schema, &plan.message) else {
        return Ok(None);
    };
    message_in(schema, name).map(Some)
}

/// The message type `name` of `schema`, or the error naming what the schema has.
pub(super) fn message_in(schema: &Schema, name: &str) -> Result<MessageDescriptor, Failure> {
    schema
        .message(name)
        .map_err(|e| Failure::Input(format!("error: {e}")))
}

/// A payload read per the flags: the readings considered, the outcome of the chosen one, and the
/// protobuf message type used (with the ranking of the schema's types when the user named none).
pub(super) struct PayloadRead {
    /// Every reading considered, the chosen one first, without their documents.
    pub(super) readings: Vec<ReadingSummary>,
    pub(super) outcome: Result<Document, DecodeError>,
    pub(super) message: Option<MessageDescriptor>,
    /// Why `message` was chosen, when no `--message` named it and a gRPC method did.
    pub(super) message_reason: Option<String>,
    pub(super) ranking: Vec<Candidate>,
}

/// Decodes per `--from` (and the schema flags), or takes the best reading.
pub(super) fn read_payload(input: &Input, plan: &ReadPlan) -> Result<PayloadRead, Failure> {
    read_payload_knowing(input, plan, None)
}

/// [`read_payload`], given `known`: the format readings layer ranking already made of these
/// bytes, used instead of decoding again where they give the same outcome.
pub(super) fn read_payload_knowing(
    input: &Input,
    plan: &ReadPlan,
    known: Option<Known>,
) -> Result<PayloadRead, Failure> {
    // Text or encrypted records: nothing to guess unless a format was asked for.
    if let (None, Some(v)) = (plan.from, &input.verdict) {
        return Err(Failure::Input(format!(
            "error: {}: the payload is {}; read it as a format with --from",
            input.name,
            v.sentence()
        )));
    }
    let schema = plan.schema.as_ref();
    let call = input.payload.grpc_call();
    let origin = Origin::of(&input.payload, call.as_ref());
    let message = match (schema, &plan.message) {
        (Some(schema), Some(name)) => MessageChoice::Named(message_in(schema, name)?),
        _ => MessageChoice::Auto,
    }
    // A framing that names the type (a schema registry's) says what the bytes are.
    .or_framed(&origin);
    if matches!(message, MessageChoice::Named(_)) && !plan.field_readings.is_empty() {
        return Err(Failure::Usage(
            "--read chooses readings of protobuf read without a schema; with a message type the \
             schema says what each field is"
                .into(),
        ));
    }
    let request = ReadRequest {
        origin,
        format: plan.from,
        list_every_reading: false,
        message,
        field_readings: plan.field_readings.clone(),
        limits: plan.limits,
        known,
        skeleton: None,
        avro_schemas: plan.avro.as_slice(),
        avro_reader: plan.reader.as_ref(),
    };
    let types = schema.map(|s| s as &dyn MessageTypes);
    let read = pipeline::read(input.bytes(), request, types);
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

/// The payload file the flags name (clap requires it wherever it is needed).
pub(super) fn input_path(args: &InputArgs) -> Result<&Path, Failure> {
    args.input.as_deref().ok_or_else(|| {
        Failure::Usage("the payload file is missing (or `-` for standard input)".into())
    })
}
