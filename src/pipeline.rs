//! The one path from an input's bytes to a decoded payload, behind both faces.
//!
//! The CLI (`cli`) and the app (`workspace`) ask the same two questions of every input, and
//! this module answers them once, with one set of rules:
//!
//! 1. [`open`]: which payloads does the input hold? The bytes as they are, peeled as a
//!    [`PeelChoice`] says, or peeled the best-ranked way ([`crate::capture::peel_readings`]) or
//!    the Nth. The answer ([`Opened`]) keeps the layer readings and the format readings ranking
//!    made of the payloads it sampled, documents included, so a payload is not decoded a second
//!    time.
//! 2. [`read`]: what is one payload? Which message type reads it (the one the user named, the
//!    gRPC method's, or the best-ranked type of the loaded schemas), which format reading is
//!    chosen (the best one, or the format the user asked for), and its decoded document or the
//!    error with its partial document. The document is handed on, never copied. A payload its
//!    layers call no data format at all (a [`Verdict`](crate::capture::verdict::Verdict): text,
//!    encrypted records) is not asked about unless the user names a format.
//!
//! 3. [`write()`]: how is the payload written as a format? proto3 JSON or plain, repeated
//!    protobuf fields grouped, the message type and Avro schema written with, the variant, the
//!    notes and, when asked, the output's tree. `convert` and the app's columns both write
//!    through it, so their bytes are the same.
//!
//! What each face adds is its own: the CLI turns a [`Read`] and a [`Written`] into output and
//! exit codes, the app shows the document and each format's [`Written`] as its columns.

use std::sync::Arc;

use crate::capture::pcap::CaptureSummary;
use crate::capture::tls::KeyLog;
use crate::capture::{
    peel, peel_capture_each, peel_capture_from, CaptureError, LayerReading, Payload, PeelChoice,
    PeelOptions, SharedBytes, StreamedCapture,
};
use crate::codec::detect::{
    add_hint, detect_knowing, detect_reusing, reading_of, KnownDocument, Reading, ReadingSummary,
};
use crate::codec::protobuf::schema::{Candidate, Ranking, Schema};
use crate::codec::protobuf::wire::FieldReading;
use crate::codec::protobuf::MessageDescriptor;
use crate::codec::{self, DecodeError, DecodeOptions, Document, Format};
use crate::limits::Limits;

pub mod write;
pub use write::{
    write, write_proto3_streamed, write_streamed, write_text, Decoded, ProtobufType, WriteError,
    WriteNote, WriteOptions, Written, WrittenTree,
};

/// How an input is peeled into payloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Layers {
    /// The bytes as they are: one payload, nothing peeled, nothing split.
    AsIs,
    /// Peeled as this choice says (every layer, at most N, streams split or not).
    Peel(PeelChoice),
    /// The best-ranked of the ways of peeling the input ([`crate::capture::peel_readings`]).
    Best,
    /// The Nth of those ways, from 0, best first.
    Reading(usize),
}

/// What [`open`] is asked to do.
#[derive(Debug, Clone)]
pub struct OpenRequest<'a> {
    /// How to peel.
    pub layers: Layers,
    /// Bounds on every step.
    pub limits: Limits,
    /// Keys that decrypt a capture's TLS connections (besides those the capture carries).
    pub keys: Option<&'a KeyLog>,
    /// The message type ranking the layer readings reads protobuf payloads with (the one the
    /// user named); their documents are then decoded with it.
    pub message: Option<MessageDescriptor>,
    /// The format the input's name suggests: given to every payload without a hint of its own
    /// (a Content-Type says more than a file name).
    pub hint: Option<Format>,
    /// Schemas by Confluent Schema Registry id: a payload that starts with a zero byte and an
    /// id this registry has is peeled of that framing ([`frame_by_registry`]).
    pub registry: Option<&'a crate::codec::avro::registry::Registry>,
    /// Ranking reads a payload of this many bytes or more that starts as a JSON, MessagePack or
    /// CBOR container ([`skeleton_format`]) as a skeleton ([`Read::skeleton`]): its span tree
    /// made a chunk at a time, never its value whole. [`Opened::take_walked`] hands it on to
    /// [`read`]. `usize::MAX` (as [`OpenRequest::new`] sets it): every payload decoded whole.
    pub walk_from: usize,
}

impl OpenRequest<'_> {
    /// A request to peel as `layers` says within `limits`, with nothing else.
    pub fn new(layers: Layers, limits: Limits) -> OpenRequest<'static> {
        OpenRequest {
            layers,
            limits,
            keys: None,
            message: None,
            hint: None,
            registry: None,
            walk_from: usize::MAX,
        }
    }
}

/// What [`open`] found.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The payloads, in stream order: at least one (the input's own bytes when nothing was
    /// peeled), except for a capture file that carries none (then [`Opened::nothing`] says why).
    pub payloads: Vec<Payload>,
    /// Each payload's exchange, made once ([`Opened::exchanges`]).
    exchanges: std::sync::OnceLock<Vec<crate::capture::Exchange>>,
    /// What the list says of all the payloads, made once ([`Opened::listing_summary`]).
    summary: std::sync::OnceLock<crate::capture::listing::ListingSummary>,
    /// The fault that stopped peeling early, if any.
    pub error: Option<CaptureError>,
    /// What was skipped or cut.
    pub warnings: Vec<String>,
    /// Whether the bytes were taken as they are, without peeling.
    pub raw: bool,
    /// Whether the one payload is the input's own bytes because peeling stopped at
    /// [`Opened::error`] before it found any.
    pub fell_back: bool,
    /// What the capture carried, when the input was read as a capture file.
    pub capture: Option<CaptureSummary>,
    /// Why a capture file gave no payload ("3 packets, TCP handshake only, no application
    /// data").
    pub nothing: Option<String>,
    /// The ways of peeling the input, best first, when they were ranked ([`Layers::Best`],
    /// [`Layers::Reading`]), without their documents; empty otherwise.
    pub readings: Vec<LayerReading>,
    /// Which of them gave the payloads.
    pub reading: usize,
    /// The format readings ranking made of the payloads it sampled, by payload index, documents
    /// included (see [`Opened::take_detected`]).
    detected: Vec<(usize, Vec<Reading>)>,
    /// The message type those readings decoded protobuf with.
    message: Option<MessageDescriptor>,
    /// The input's hint, and which payloads took it for want of their own (in order).
    hint: Option<Format>,
    hinted: Vec<usize>,
}

impl Opened {
    /// Each payload's exchange (method, status, URL, content type; what the list shows and its
    /// filter reads), made on first use and kept: call it on a worker to have it ready for a
    /// list of hundreds of thousands of payloads.
    pub fn exchanges(&self) -> &[crate::capture::Exchange] {
        self.exchanges
            .get_or_init(|| self.payloads.iter().map(Payload::exchange).collect())
    }

    /// The content types of the payloads with their counts, how many HAR entries they come
    /// from, their depth and the payload to start on: made on first use and kept, like
    /// [`Opened::exchanges`].
    pub fn listing_summary(&self) -> &crate::capture::listing::ListingSummary {
        self.summary
            .get_or_init(|| crate::capture::listing::ListingSummary {
                content_types: crate::capture::listing::content_types(self.exchanges()),
                har_entries: crate::capture::listing::har_entries(&self.payloads),
                deepest: self
                    .payloads
                    .iter()
                    .map(|p| p.layers.len())
                    .max()
                    .unwrap_or(0),
                default_payload: crate::capture::listing::default_payload(&self.payloads),
            })
    }

    /// The payload a command works on unless the user picks one
    /// ([`crate::capture::listing::default_payload`]: a gRPC message, then a body of a data
    /// media type, then other data; never encrypted records or another protocol's messages
    /// while a data payload has bytes).
    pub fn default_payload(&self) -> usize {
        crate::capture::listing::default_payload(&self.payloads)
    }

    /// The format readings layer ranking made of payload `index`, documents included, as
    /// [`read`] would make them with the payload's hint; taken (a second call gives `None`).
    /// Hand them to [`ReadRequest::known`] so the payload is not decoded again.
    pub fn take_detected(&mut self, index: usize) -> Option<Known> {
        let at = self.detected.iter().position(|(i, _)| *i == index)?;
        let mut readings = self.detected.swap_remove(at).1;
        // Ranking used the payload's own hint; the input's comes on top only without one.
        if self.hinted.binary_search(&index).is_ok() {
            add_hint(&mut readings, self.hint);
        }
        Some(Known {
            readings,
            message: self.message.clone(),
        })
    }

    /// The format readings ranking made of the payload it read as a skeleton
    /// ([`OpenRequest::walk_from`]), with its index, as [`Opened::take_detected`] gives them;
    /// every other payload's documents are let go ([`Opened::forget_detected`]). The span tree
    /// of a large payload is made once, and its reading goes on to [`read`] instead of walking
    /// the payload again.
    pub fn take_walked(&mut self) -> Option<(usize, Known)> {
        let index = self
            .detected
            .iter()
            .find(|(_, readings)| readings.iter().any(|r| r.skeleton))
            .map(|(i, _)| *i);
        let walked = index.and_then(|i| Some((i, self.take_detected(i)?)));
        self.forget_detected();
        walked
    }

    /// Lets go of the documents layer ranking decoded, for a face that reads each payload its
    /// own way when it is shown (the app reads a large one as a skeleton, on demand): held,
    /// a 50 MB JSON document's value and spans would stay beside the source.
    pub fn forget_detected(&mut self) {
        self.detected = Vec::new();
    }
}

/// Why [`open`] could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpenError {
    /// [`Layers::Reading`] asked for a way of peeling the input does not have.
    NoSuchReading {
        /// The reading asked for, from 0.
        asked: usize,
        /// How many there are.
        count: usize,
    },
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::NoSuchReading { asked, count } => write!(
                f,
                "layer reading {} asked for: the input has {count} layer reading(s)",
                asked + 1
            ),
        }
    }
}

impl std::error::Error for OpenError {}

/// Peels `bytes` into payloads as `request` says.
///
/// Payloads that no layer changed are views of `bytes` (of a large file's memory map), not
/// copies. A capture file without a payload gives none, with [`Opened::nothing`] saying why;
/// anything else gives at least one payload.
pub fn open(bytes: &SharedBytes, request: &OpenRequest<'_>) -> Result<Opened, OpenError> {
    let limits = request.limits;
    let as_is = || Payload {
        message: None,
        avro: None,
        bytes: bytes.clone(),
        layers: Vec::new(),
        hint: None,
        meta: Default::default(),
        cut: None,
        protocol: None,
    };
    let mut readings = Vec::new();
    let mut reading = 0;
    let peeled = match request.layers {
        Layers::AsIs => {
            return Ok(Opened {
                exchanges: std::sync::OnceLock::new(),
                summary: std::sync::OnceLock::new(),
                payloads: vec![Payload {
                    hint: request.hint,
                    ..as_is()
                }],
                error: None,
                warnings: Vec::new(),
                raw: true,
                fell_back: false,
                capture: None,
                nothing: None,
                readings,
                reading,
                detected: Vec::new(),
                message: None,
                hint: request.hint,
                hinted: request.hint.map(|_| 0).into_iter().collect(),
            })
        }
        Layers::Peel(choice) => peel(
            bytes.clone(),
            &PeelOptions {
                choice,
                limits,
                keys: request.keys,
            },
        ),
        Layers::Best | Layers::Reading(_) => {
            let options = DecodeOptions {
                limits,
                message: request.message.clone(),
                ..DecodeOptions::default()
            };
            readings = crate::capture::readings::peel_readings_walking(
                bytes.clone(),
                &options,
                request.keys,
                request.walk_from,
            );
            if let Layers::Reading(n) = request.layers {
                if n >= readings.len() {
                    return Err(OpenError::NoSuchReading {
                        asked: n,
                        count: readings.len(),
                    });
                }
                reading = n;
            }
            match readings.get(reading) {
                Some(r) => r.peeled.clone(),
                None => peel(bytes.clone(), &PeelOptions::within(limits)),
            }
        }
    };
    // The chosen reading's documents go on to be read; the other readings' are only listed.
    let mut detected = Vec::new();
    for (i, r) in readings.iter_mut().enumerate() {
        let mine = std::mem::take(&mut r.detected);
        if i == reading {
            detected = mine;
        }
    }
    Ok(opened_of(
        peeled, request, readings, reading, detected, as_is,
    ))
}

/// [`open`] of a pcap or pcapng capture read from `reader` with [`Layers::Peel`]'s choice (the
/// default peel for any other `request.layers`): what `open` of the whole file gives, without
/// holding the file ([`peel_capture_from`]). The app reads a capture file this way, through
/// the file's handle, so its memory holds the payloads and not the file. `len_hint` is the
/// file's size when it is known; `whole` gives the file's bytes, asked for only when a broken
/// capture gave no payload and the input's own bytes stand in for one (as in `open`).
/// `backing` reads the file again at any offset: bodies are read back from it when looked at
/// instead of held (see [`peel_capture_from`]).
pub fn open_capture_from(
    reader: &mut dyn std::io::Read,
    request: &OpenRequest<'_>,
    len_hint: Option<usize>,
    whole: impl FnOnce() -> SharedBytes,
    backing: Option<crate::capture::shared::Backing>,
) -> Opened {
    let choice = match request.layers {
        Layers::Peel(choice) => choice,
        _ => PeelChoice::default(),
    };
    let peeled = peel_capture_from(
        reader,
        &PeelOptions {
            choice,
            limits: request.limits,
            keys: request.keys,
        },
        len_hint,
        backing,
    );
    let as_is = || Payload {
        bytes: whole(),
        ..Payload::default()
    };
    opened_of(peeled, request, Vec::new(), 0, Vec::new(), as_is)
}

/// The [`Opened`] of what peeling found: a capture without a payload says why, anything else
/// without one is `as_is()` (its own bytes); then the registry framing and the input's hint.
fn opened_of(
    peeled: crate::capture::Peeled,
    request: &OpenRequest<'_>,
    readings: Vec<LayerReading>,
    reading: usize,
    mut detected: Vec<(usize, Vec<Reading>)>,
    as_is: impl FnOnce() -> Payload,
) -> Opened {
    let mut payloads = peeled.payloads;
    let mut nothing = None;
    let mut fell_back = false;
    if payloads.is_empty() {
        // A capture without a payload says so; anything else is its own bytes.
        match (&peeled.capture, &peeled.error) {
            (Some(capture), None) => nothing = Some(capture.describe()),
            (_, error) => {
                fell_back = error.is_some();
                payloads.push(as_is());
            }
        }
    }
    if let Some(registry) = request.registry {
        for (i, p) in payloads.iter_mut().enumerate() {
            if frame_by_registry(p, registry) {
                // Readings of the framed bytes are not the body's.
                detected.retain(|(j, _)| *j != i);
            }
        }
    }
    let mut hinted = Vec::new();
    for (i, p) in payloads.iter_mut().enumerate() {
        if p.hint.is_none() && request.hint.is_some() {
            p.hint = request.hint;
            hinted.push(i);
        }
    }
    let mut warnings = peeled.warnings;
    warnings.dedup();
    Opened {
        exchanges: std::sync::OnceLock::new(),
        summary: std::sync::OnceLock::new(),
        payloads,
        error: peeled.error,
        warnings,
        raw: false,
        fell_back,
        capture: peeled.capture,
        nothing,
        readings,
        reading,
        detected,
        message: request.message.clone(),
        hint: request.hint,
        hinted,
    }
}

/// [`open`] of a pcap or pcapng capture read from `reader` as it arrives (a file of any size,
/// `tcpdump -w -` on standard input), for a face that shows or writes each payload once and
/// keeps none: the payloads of each connection are given to `each` as soon as that connection
/// is over (in the order connections end), peeled as the default reading of a large capture
/// peels them (every layer, split where sure; [`peel_capture_each`]), with the
/// request's registry framing and hint. `request.layers` and `request.message` are not used:
/// there is one reading, and no ranking. `len_hint` is the file's size when it is known.
/// `each` returns false to stop.
pub fn open_capture_each(
    reader: &mut dyn std::io::Read,
    request: &OpenRequest<'_>,
    len_hint: Option<usize>,
    each: &mut dyn FnMut(Vec<Payload>) -> bool,
) -> StreamedCapture {
    let options = PeelOptions {
        choice: PeelChoice::default(),
        limits: request.limits,
        keys: request.keys,
    };
    let mut streamed = peel_capture_each(reader, &options, len_hint, &mut |mut payloads| {
        for p in &mut payloads {
            if let Some(registry) = request.registry {
                frame_by_registry(p, registry);
            }
            if p.hint.is_none() {
                p.hint = request.hint;
            }
        }
        each(payloads)
    });
    streamed.warnings.dedup();
    streamed
}

/// Peels the Confluent Schema Registry framing off `payload` when its first five bytes are the
/// zero magic byte and an id `registry` has: the body is read by that schema (Avro), after its
/// message-index list (Protobuf, listed in the layer), or as JSON. Five bytes prove nothing
/// alone, so an id the registry lacks leaves the payload as it is. A framing that breaks after a
/// known id (a message-index list that runs past the end) is told in a warning, the payload
/// left whole. Returns whether the payload was changed.
pub fn frame_by_registry(
    payload: &mut Payload,
    registry: &crate::codec::avro::registry::Registry,
) -> bool {
    use crate::codec::avro::framing::{confluent, RegistryKind};
    let head = payload
        .bytes
        .peek(|b| b.get(..5).map(|h| [h[0], h[1], h[2], h[3], h[4]]));
    let Some([0, a, b, c, d]) = head else {
        return false;
    };
    if payload.avro.is_some() {
        return false;
    }
    let id = u32::from_be_bytes([a, b, c, d]);
    let Some(schema) = registry.get(id) else {
        return false;
    };
    let framed = match confluent(&payload.bytes, schema.kind) {
        Ok(f) => f,
        Err(e) => {
            payload.meta.push((
                "warning".to_string(),
                format!(
                    "schema id {id} is in the registry ({}), but {e}",
                    schema.origin
                ),
            ));
            return false;
        }
    };
    let (format, kind) = match schema.kind {
        RegistryKind::Avro => (Format::Avro, "Avro"),
        RegistryKind::Protobuf => (Format::Protobuf, "Protobuf"),
        RegistryKind::Json => (Format::Json, "JSON Schema"),
    };
    let mut detail = format!("schema id {id}, {kind}");
    if let Some(subject) = &schema.subject {
        detail.push_str(&format!(", subject {subject}"));
    }
    if schema.kind == RegistryKind::Protobuf {
        let path: Vec<String> = framed.indexes.iter().map(i64::to_string).collect();
        detail.push_str(&format!(", message index path [{}]", path.join(", ")));
        match schema.message(&framed.indexes) {
            Ok(m) => {
                detail.push_str(&format!(": {}", m.full_name()));
                payload.message = Some(m);
            }
            Err(e) => payload.meta.push(("warning".to_string(), e.to_string())),
        }
    }
    payload.layers.push(crate::capture::Layer {
        name: "Confluent Schema Registry framing".to_string(),
        detail,
        span: crate::model::Span::new(framed.header.start, framed.header.end),
    });
    payload.bytes = payload.bytes.slice(framed.body);
    payload.hint = Some(format);
    if let Some(avro) = &schema.avro {
        payload.avro = Some(crate::codec::avro::Framed {
            schema: Some(avro.clone()),
            ..Default::default()
        });
    }
    true
}

/// What to say of bytes no format reads that start as Confluent Schema Registry framing does
/// (a zero byte, then a 4-byte schema id): the framing is peeled only for an id a registry the
/// user gave holds, and Avro, which such payloads often are, is never guessed without its schema.
pub fn unread_hint(
    bytes: &[u8],
    registry: Option<&crate::codec::avro::registry::Registry>,
) -> Option<String> {
    let [0, a, b, c, d, ..] = *bytes else {
        return None;
    };
    let id = u32::from_be_bytes([a, b, c, d]);
    Some(match registry {
        None => format!(
            "the bytes start as Confluent Schema Registry framing does (a zero byte, then schema \
             id {id}); with --registry DIR|FILE.json, an id it holds is read by its schema (Avro \
             is never guessed without one)"
        ),
        Some(r) => format!(
            "the bytes start as Confluent Schema Registry framing does, with schema id {id}, \
             which the registry given ({} schemas) does not hold",
            r.len()
        ),
    })
}

/// The message types a face has loaded: one schema (the CLI's `--proto` /
/// `--descriptor-set`), or several (the app's schema list).
pub trait MessageTypes {
    /// The message type of one side of a gRPC call (`path` is `/package.Service/Method`), when
    /// a loaded schema defines the service.
    fn grpc_message(&self, path: &str, request: bool) -> Option<MessageDescriptor>;
    /// Every message type that reads `bytes` (each decode within `limits`), best first, with
    /// `bytes` read as the best of them ([`Ranking::best`]).
    fn rank(&self, bytes: &[u8], limits: &Limits) -> Ranking;
}

impl MessageTypes for Schema {
    fn grpc_message(&self, path: &str, request: bool) -> Option<MessageDescriptor> {
        Schema::grpc_message(self, path, request)
    }

    fn rank(&self, bytes: &[u8], limits: &Limits) -> Ranking {
        let options = DecodeOptions {
            limits: *limits,
            ..DecodeOptions::default()
        };
        Schema::rank_reading(self, bytes, &options)
    }
}

/// Which message type protobuf is read and written with.
#[derive(Debug, Clone, Default)]
pub enum MessageChoice {
    /// The gRPC method's type when a loaded schema defines the call, else the best-ranked type
    /// (none when no type reads the payload, or no schema is loaded).
    #[default]
    Auto,
    /// The type the user named (the face found it in its schemas).
    Named(MessageDescriptor),
    /// None: protobuf is read by field numbers, as if no schema were loaded.
    SchemaLess,
}

impl MessageChoice {
    /// This choice, with the message type a framing named (a schema registry's) standing for
    /// [`MessageChoice::Auto`]: the framing says what the bytes are. A type the user named, or
    /// none, stays.
    pub fn or_framed(self, origin: &Origin<'_>) -> MessageChoice {
        match (self, origin.message) {
            (MessageChoice::Auto, Some(m)) => MessageChoice::Named(m.clone()),
            (choice, _) => choice,
        }
    }
}

/// Format readings already made of a payload (by layer ranking), documents included.
#[derive(Debug)]
pub struct Known {
    /// The readings, as [`crate::codec::detect::detect()`] gives them with the payload's hint.
    pub readings: Vec<Reading>,
    /// The message type they were decoded with.
    pub message: Option<MessageDescriptor>,
}

/// What the layers peeled off a payload said about it: the format a layer announced, the gRPC
/// call it is a message of, and what an Avro framing said of its writer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Origin<'a> {
    /// The format the payload's Content-Type or name suggests (it breaks ties).
    pub hint: Option<Format>,
    /// The gRPC call the payload is a message of: its `:path`, and whether it is the request.
    pub grpc: Option<&'a (String, bool)>,
    /// What an Avro framing said: a container header's schema and block count, or a
    /// single-object fingerprint.
    pub avro: Option<&'a crate::codec::avro::Framed>,
    /// The protobuf message type a framing named (a registry schema's message-index path).
    pub message: Option<&'a MessageDescriptor>,
}

impl<'a> Origin<'a> {
    /// What `payload`'s layers said; `grpc` is [`crate::capture::Payload::grpc_call`]'s answer,
    /// held by the caller.
    pub fn of(payload: &'a crate::capture::Payload, grpc: Option<&'a (String, bool)>) -> Self {
        Origin {
            hint: payload.hint,
            grpc,
            avro: payload.avro.as_ref(),
            message: payload.message.as_ref(),
        }
    }

    /// Only a format hint.
    pub fn hinted(hint: Option<Format>) -> Origin<'static> {
        Origin {
            hint,
            ..Origin::default()
        }
    }
}

/// The Avro writer's schema for a payload and how many datums it holds: a container header's
/// own schema; for a single-object fingerprint, the schema of `loaded` that has it; else the
/// last of `loaded` (the one the user gave last). A fingerprint no loaded schema has is
/// [`AvroWriterError::UnknownFingerprint`] (the bytes are not read as Avro then: a schema that
/// is not the writer's would read them wrong).
pub fn avro_writer(
    framed: Option<&crate::codec::avro::Framed>,
    loaded: &[crate::codec::avro::AvroSchema],
) -> Result<(Option<crate::codec::avro::AvroSchema>, Option<u64>), AvroWriterError> {
    let Some(framed) = framed else {
        return Ok((loaded.last().cloned(), None));
    };
    if let Some(schema) = &framed.schema {
        return Ok((Some(schema.clone()), framed.items));
    }
    match framed.fingerprint {
        Some(fp) => match loaded.iter().rev().find(|s| s.fingerprint() == fp) {
            Some(schema) => Ok((Some(schema.clone()), framed.items)),
            None => Err(AvroWriterError::UnknownFingerprint {
                fingerprint: fp,
                loaded: loaded
                    .iter()
                    .map(|s| (s.title(), s.fingerprint()))
                    .collect(),
            }),
        },
        None => Ok((loaded.last().cloned(), framed.items)),
    }
}

/// Why [`avro_writer`] found no writer's schema for a payload; the message is the warning the
/// payload's reading shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AvroWriterError {
    /// A single-object header names a schema by a fingerprint that no loaded schema has.
    #[error(
        "the Avro single-object header names the schema with fingerprint {fingerprint:#018x} \
         (CRC-64-AVRO of its canonical form), and no loaded schema has it{}",
        loaded_list(loaded)
    )]
    UnknownFingerprint {
        /// The CRC-64-AVRO fingerprint the header names.
        fingerprint: u64,
        /// Each loaded schema's title and fingerprint, in the order loaded.
        loaded: Vec<(String, u64)>,
    },
}

/// The end of [`AvroWriterError::UnknownFingerprint`]'s message: the loaded schemas with their
/// fingerprints, or what to load when there are none.
fn loaded_list(loaded: &[(String, u64)]) -> String {
    match loaded.len() {
        0 => "; load the writer's .avsc".to_string(),
        _ => format!(
            " (loaded: {})",
            loaded
                .iter()
                .map(|(title, fp)| format!("{title} {fp:#018x}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// How the Avro reader's schema reads what the writer's schema wrote: both schemas' names and
/// the rule of the specification's schema resolution for each place of the reader's schema
/// ([`crate::codec::avro::resolve::Plan::rules`]), or why it cannot read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    /// The writer's schema's name.
    pub writer: String,
    /// The reader's schema's name.
    pub reader: String,
    /// The writer's and the reader's schema text, as given.
    pub texts: [String; 2],
    /// `(place, rule)` for each place, or the broken rule.
    pub rules: Result<Vec<(String, String)>, String>,
    /// The plan those rules are read by, when the reader's schema can read the writer's.
    plan: Option<Arc<crate::codec::avro::resolve::Plan>>,
    /// The payload is a run of datums (a container block), the plan applying to each.
    run: bool,
}

impl Resolution {
    /// Which rule read each node of `spans`, the tree of the payload's `bytes` read with the
    /// reader's schema; `None` when the reader's schema cannot read the writer's.
    pub fn node_rules(
        &self,
        spans: &crate::model::SpanTree,
        bytes: &[u8],
    ) -> Option<crate::codec::avro::resolved::NodeRules> {
        let plan = self.plan.as_ref()?;
        Some(crate::codec::avro::resolved::node_rules(
            spans, bytes, plan, self.run,
        ))
    }
}

/// The [`Resolution`] of a payload read with `reader`: its writer's schema is found as
/// [`avro_writer`] finds it. `None` without a reader's or a writer's schema.
pub fn avro_resolution(
    framed: Option<&crate::codec::avro::Framed>,
    loaded: &[crate::codec::avro::AvroSchema],
    reader: Option<&crate::codec::avro::AvroSchema>,
) -> Option<Resolution> {
    let reader = reader?;
    let (Some(writer), _) = avro_writer(framed, loaded).ok()? else {
        return None;
    };
    let plan = crate::codec::avro::resolve::plan(writer.root(), reader.root());
    Some(Resolution {
        writer: writer.title(),
        reader: reader.title(),
        texts: [writer.text().to_string(), reader.text().to_string()],
        rules: plan
            .as_ref()
            .map(|plan| plan.rules())
            .map_err(|e| e.to_string()),
        plan: plan.ok().map(Arc::new),
        run: framed.is_some_and(|f| f.items.is_some()),
    })
}

/// What [`read`] is asked to do with one payload.
#[derive(Debug, Default)]
pub struct ReadRequest<'a> {
    /// What the payload's layers said of it: its format hint (it breaks ties), its gRPC call,
    /// an Avro framing (see [`avro_writer`]) and a message type a framing named (it stands for
    /// [`MessageChoice::Auto`], see [`MessageChoice::or_framed`]).
    pub origin: Origin<'a>,
    /// Read as this format instead of the best reading (its reading is marked
    /// [`ReadingSummary::asked`]).
    pub format: Option<Format>,
    /// With `format`: list every format's reading too (the app's reading picker), rather than
    /// decode only the one asked for (a command that uses one).
    pub list_every_reading: bool,
    /// Which message type (a type the payload's framing named stands for
    /// [`MessageChoice::Auto`]).
    pub message: MessageChoice,
    /// The user's readings of fields of protobuf read without a schema. While there is one, the
    /// payload is read as protobuf without a message type unless the user named one (then
    /// these are left out, with a warning: the schema says what each field is).
    pub field_readings: Vec<FieldReading>,
    /// Bounds on every decode.
    pub limits: Limits,
    /// Readings already made of these bytes, used where they give the same outcome.
    pub known: Option<Known>,
    /// Read a JSON, MessagePack or CBOR payload of this many bytes or more without its value (see
    /// [`Read::skeleton`]): the format [`skeleton_format`] gave the face, which decides it once
    /// (the app, to start the work such a payload needs early). It stands only if detection or
    /// the format asked for reads the payload as that format.
    pub skeleton: Option<Format>,
    /// The Avro schemas the user loaded, the default last: with a writer's schema (one of
    /// these, or a container header's), Avro is one of the readings.
    pub avro_schemas: &'a [crate::codec::avro::AvroSchema],
    /// The Avro reader's schema: Avro is read as it reads the writer's data.
    pub avro_reader: Option<&'a crate::codec::avro::AvroSchema>,
}

/// What [`read`] made of a payload.
///
/// A payload its layers call no data format (a [`Verdict`](crate::capture::verdict::Verdict):
/// text, encrypted records) is not read unless a format is asked for: the faces check
/// [`verdict`](crate::capture::verdict::verdict) before they ask.
#[derive(Debug)]
pub struct Read {
    /// The format readings considered, most plausible first (with [`ReadRequest::format`] and
    /// not [`ReadRequest::list_every_reading`], only the one asked for).
    pub readings: Vec<ReadingSummary>,
    /// Which of them was decoded: the first, unless the user asked for another format.
    pub chosen: usize,
    /// The format read.
    pub format: Format,
    /// The decoded document, or the error with its partial document.
    pub outcome: Result<Document, DecodeError>,
    /// Whether the document is a skeleton: its span tree is the whole payload's, but its value
    /// holds only the root's keys (or items), each null. Values are read from the payload's
    /// bytes by span as they are needed. Only for a large JSON, MessagePack or CBOR payload
    /// ([`ReadRequest::skeleton`], [`skeleton_format`]).
    pub skeleton: bool,
    /// The message type protobuf was read with (and is written with), if any.
    pub message: Option<MessageDescriptor>,
    /// Why that type, when a gRPC method decided it: "the request of /pkg.Service/Method".
    pub message_reason: Option<String>,
    /// The message types that read the payload, best first (the gRPC method's type alone when
    /// it decided; empty when the user named one or no schema is loaded).
    pub ranking: Vec<Candidate>,
    /// What the user asked for that was not done, and why.
    pub warnings: Vec<String>,
}

/// Reads one payload as `request` says, with the message types of `types` (none without a
/// schema): each payload is decoded once per format, and the chosen document handed on.
pub fn read(
    bytes: &SharedBytes,
    mut request: ReadRequest<'_>,
    types: Option<&dyn MessageTypes>,
) -> Read {
    let mut warnings = Vec::new();
    let mut field_readings = std::mem::take(&mut request.field_readings);
    let choice = std::mem::take(&mut request.message).or_framed(&request.origin);
    let MessagePick {
        message,
        reason: message_reason,
        ranking,
        read: ranked,
    } = pick_message(
        bytes,
        &request,
        choice,
        types,
        &mut field_readings,
        &mut warnings,
    );
    let (avro, avro_items) = match avro_writer(request.origin.avro, request.avro_schemas) {
        Ok(found) => found,
        Err(why) => {
            warnings.push(why.to_string());
            (None, None)
        }
    };
    let options = DecodeOptions {
        limits: request.limits,
        protobuf_readings: field_readings,
        message: message.clone(),
        avro,
        avro_items,
        avro_reader: request.avro_reader.cloned(),
    };
    // A reading the user chose for a field is one of protobuf: a reading that fails shows its
    // error rather than another format taking the payload.
    // A framing that carries the writer's schema (a container block, a registry id) says the
    // bytes are Avro: no other reading is chosen over it, whatever it scores.
    let framed_avro =
        request.origin.avro.is_some_and(|f| f.schema.is_some()) && options.avro.is_some();
    let wanted = match request.format {
        None if !options.protobuf_readings.is_empty() => Some(Format::Protobuf),
        None if framed_avro => Some(Format::Avro),
        f => f,
    };
    // The ranking's reading is protobuf read with the options' type (no field readings: a
    // ranked type leaves them out).
    let ranked = ranked.filter(|_| options.protobuf_readings.is_empty());
    let known = known_readings(request.known.take(), &options);
    if let (Some(format), false) = (request.format, request.list_every_reading) {
        // A skeleton is no whole document: that format is decoded.
        let mut known: Vec<Reading> = known
            .map(KnownReadings::into_readings)
            .unwrap_or_default()
            .into_iter()
            .filter(|r| !r.skeleton)
            .collect();
        if let Some(doc) = ranked.filter(|_| format == Format::Protobuf) {
            known.push(reading_of(bytes, request.origin.hint, &options, doc));
        }
        let (summary, outcome) = read_as(bytes, format, known, &options);
        return Read {
            readings: vec![summary],
            chosen: 0,
            format,
            outcome,
            skeleton: false,
            message,
            message_reason,
            ranking,
            warnings,
        };
    }
    let (readings, skeleton_of) = every_reading(bytes, &request, &options, known, ranked, wanted);
    let mut summaries: Vec<ReadingSummary> = readings.iter().map(Reading::summary).collect();
    let chosen = wanted
        .and_then(|f| readings.iter().position(|r| r.format == f))
        .unwrap_or(0);
    // Every format is tried, so there is a reading; its document is handed on (never copied)
    // and the others are let go.
    let (format, walked, outcome) = match readings.into_iter().nth(chosen) {
        Some(r) => (r.format, r.skeleton, r.outcome),
        None => {
            let format = wanted.unwrap_or(Format::Json);
            (format, false, codec::decode(bytes, format, &options))
        }
    };
    if let Some(asked) = summaries
        .get_mut(chosen)
        .filter(|_| request.format.is_some())
    {
        asked.asked = true;
    }
    Read {
        readings: summaries,
        chosen,
        format,
        skeleton: (walked || skeleton_of == Some(format)) && outcome.is_ok(),
        outcome,
        message,
        message_reason,
        ranking,
        warnings,
    }
}

/// Every format's reading of `bytes` for [`read`], most plausible first, reusing the readings
/// `known` holds and the ranked type's reading `ranked`; and the format read as a skeleton,
/// when one was (a large JSON, MessagePack or CBOR payload, if `request` asks for it and the
/// format `wanted` allows it).
fn every_reading(
    bytes: &SharedBytes,
    request: &ReadRequest<'_>,
    options: &DecodeOptions,
    known: Option<KnownReadings>,
    ranked: Option<Document>,
    wanted: Option<Format>,
) -> (Vec<Reading>, Option<Format>) {
    let hint = request.origin.hint;
    match known {
        Some(KnownReadings::Every(readings)) => (readings, None),
        Some(KnownReadings::Partly(mut readings)) => {
            if let Some(doc) =
                ranked.filter(|_| readings.iter().all(|r| r.format != Format::Protobuf))
            {
                readings.push(reading_of(bytes, hint, options, doc));
            }
            (detect_reusing(bytes, hint, options, readings), None)
        }
        None => {
            let skeleton_doc = request
                .skeleton
                .filter(|&f| wanted.is_none_or(|w| w == f) && options.protobuf_readings.is_empty())
                .and_then(|format| codec::detect::skeleton(bytes, format, options));
            let skeleton_of = skeleton_doc.as_ref().map(|(doc, _)| doc.format);
            let known = skeleton_doc
                .map(|(doc, rare)| KnownDocument::Skeleton(doc, rare))
                .into_iter()
                .chain(ranked.map(KnownDocument::Whole))
                .collect();
            (detect_knowing(bytes, hint, options, known), skeleton_of)
        }
    }
}

/// The message type [`read`] reads protobuf with, why (when a gRPC method decided it), and the
/// ranking of the loaded types.
struct MessagePick {
    message: Option<MessageDescriptor>,
    reason: Option<String>,
    ranking: Vec<Candidate>,
    /// The payload read as `message` by the ranking, which decoded it with that type already.
    read: Option<Document>,
}

/// Picks the message type as `choice` says: the one named (the field readings are then left
/// out, with a warning), none, the type of the gRPC call `request` names when a loaded schema
/// defines it, or the best of `types` ranked on `bytes`. Fields read the user's way, or a
/// format other than protobuf asked for, are read without a schema.
fn pick_message(
    bytes: &SharedBytes,
    request: &ReadRequest<'_>,
    choice: MessageChoice,
    types: Option<&dyn MessageTypes>,
    field_readings: &mut Vec<FieldReading>,
    warnings: &mut Vec<String>,
) -> MessagePick {
    let reads_protobuf = matches!(request.format, None | Some(Format::Protobuf));
    let none = || MessagePick {
        message: None,
        reason: None,
        ranking: Vec::new(),
        read: None,
    };
    match (choice, types) {
        (MessageChoice::Named(m), _) => {
            if !field_readings.is_empty() {
                warnings.push(format!(
                    "the field readings are not used: the message type {} says what each \
                     field is",
                    m.full_name()
                ));
                field_readings.clear();
            }
            MessagePick {
                message: Some(m),
                ..none()
            }
        }
        (MessageChoice::SchemaLess, _) | (MessageChoice::Auto, None) => none(),
        // Fields read the user's way are read without a schema.
        (MessageChoice::Auto, Some(_)) if !field_readings.is_empty() => none(),
        (MessageChoice::Auto, Some(_)) if !reads_protobuf => none(),
        (MessageChoice::Auto, Some(types)) => {
            let method = request
                .origin
                .grpc
                .and_then(|(path, req)| Some((path, *req, types.grpc_message(path, *req)?)));
            match method {
                // The schema defines the call: its type, without trying every other.
                Some((path, req, m)) => {
                    let side = if req { "request" } else { "response" };
                    let candidate = Candidate {
                        message: m.clone(),
                        score: 100,
                        reasons: vec![format!("the {side} type of the gRPC method {path}")],
                    };
                    MessagePick {
                        message: Some(m),
                        reason: Some(format!("the {side} of {path}")),
                        ranking: vec![candidate],
                        read: None,
                    }
                }
                None => {
                    let Ranking { candidates, best } = types.rank(bytes, &request.limits);
                    let message = candidates
                        .first()
                        .filter(|c| c.score > 0)
                        .map(|c| c.message.clone());
                    MessagePick {
                        read: best.filter(|_| message.is_some()),
                        message,
                        reason: None,
                        ranking: candidates,
                    }
                }
            }
        }
    }
}

/// Readings made elsewhere of a payload that stand for a read's options.
enum KnownReadings {
    /// Every reading detection would make.
    Every(Vec<Reading>),
    /// The readings of the formats the read's options decode as they were decoded; the others
    /// are decoded again.
    Partly(Vec<Reading>),
}

impl KnownReadings {
    fn into_readings(self) -> Vec<Reading> {
        match self {
            KnownReadings::Every(readings) | KnownReadings::Partly(readings) => readings,
        }
    }
}

/// The readings made elsewhere that stand for these `options`. Every one when they were decoded
/// with the same message type and no field readings, with the Avro one when there is a writer's
/// schema (readings made without it lack it), and no reader's schema is set (readings made
/// before were never read with one). Else those of the formats these differences leave alone:
/// JSON, MessagePack and CBOR; protobuf with the same message type and no field readings; Avro
/// with a writer's schema and no reader's.
fn known_readings(known: Option<Known>, options: &DecodeOptions) -> Option<KnownReadings> {
    let known = known.filter(|k| !k.readings.is_empty())?;
    let same_protobuf = known.message == options.message && options.protobuf_readings.is_empty();
    let same_avro = options.avro_reader.is_none();
    let has_avro = known.readings.iter().any(|r| r.format == Format::Avro);
    if same_protobuf && same_avro && (options.avro.is_none() || has_avro) {
        return Some(KnownReadings::Every(known.readings));
    }
    let readings: Vec<Reading> = known
        .readings
        .into_iter()
        .filter(|r| match r.format {
            Format::Protobuf => same_protobuf,
            Format::Avro => same_avro && options.avro.is_some(),
            Format::Json | Format::MessagePack | Format::Cbor => true,
        })
        .collect();
    (!readings.is_empty()).then_some(KnownReadings::Partly(readings))
}

/// Reads `bytes` as `format` alone (a reading of `known` as that format when there is one):
/// its summary, marked asked, and its outcome.
fn read_as(
    bytes: &SharedBytes,
    format: Format,
    mut known: Vec<Reading>,
    options: &DecodeOptions,
) -> (ReadingSummary, Result<Document, DecodeError>) {
    let found = known
        .iter()
        .position(|r| r.format == format)
        .map(|i| known.swap_remove(i));
    let outcome = match found {
        Some(r) => r.outcome,
        None => codec::decode(bytes, format, options),
    };
    let reasons = match &outcome {
        Ok(_) => Vec::new(),
        Err(e) => vec![format!("stopped at byte {}: {}", e.offset, e.message)],
    };
    let summary = ReadingSummary {
        format,
        confidence: 100,
        reasons,
        complete: outcome.is_ok(),
        cut_by_limit: crate::codec::detect::cut_by_limit(&outcome),
        asked: true,
    };
    (summary, outcome)
}

/// The format to read `bytes` as a skeleton ([`Read::skeleton`], [`ReadRequest::skeleton`]), if
/// the walk applies: at least `from` bytes that start
/// as a JSON map or array, a MessagePack map or array head, or a CBOR array or map head of
/// definite length, read as the best reading or as that format, and no field readings (which
/// ask for protobuf). A head that is both a MessagePack and a CBOR one (0x80–0x9b) is read as
/// MessagePack unless `hint` or `format` says CBOR. A face that starts work early on such a
/// payload asks this first; the work is for this format, and stands only if the payload is read
/// as it.
pub fn skeleton_format(
    bytes: &[u8],
    format: Option<Format>,
    hint: Option<Format>,
    field_readings: &[FieldReading],
    from: usize,
) -> Option<Format> {
    if bytes.len() < from || !field_readings.is_empty() {
        return None;
    }
    let cbor_wanted =
        format == Some(Format::Cbor) || (format.is_none() && hint == Some(Format::Cbor));
    let found = codec::detect::container_format(bytes, cbor_wanted)?;
    format.is_none_or(|f| f == found).then_some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::detect::detect;
    use crate::model::Value;

    #[test]
    fn an_unknown_fingerprint_says_which_schemas_are_loaded() {
        let none = AvroWriterError::UnknownFingerprint {
            fingerprint: 0x1234,
            loaded: Vec::new(),
        };
        assert_eq!(
            none.to_string(),
            "the Avro single-object header names the schema with fingerprint 0x0000000000001234 \
             (CRC-64-AVRO of its canonical form), and no loaded schema has it; load the \
             writer's .avsc"
        );
        let two = AvroWriterError::UnknownFingerprint {
            fingerprint: 1,
            loaded: vec![("a.A".into(), 2), ("long".into(), 0xff)],
        };
        assert!(two
            .to_string()
            .ends_with("has it (loaded: a.A 0x0000000000000002, long 0x00000000000000ff)"));
    }

    #[test]
    fn registry_framing_is_peeled_only_for_a_known_id() {
        use crate::codec::avro::registry::Registry;
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join("5.proto"),
            "syntax = \"proto3\"; message M {}",
        )
        .expect("write");
        std::fs::write(dir.path().join("6.avsc"), "\"long\"").expect("write");
        let registry = Registry::load(dir.path()).expect("registry");
        let payload = |bytes: &[u8]| Payload {
            bytes: bytes.into(),
            ..Payload::default()
        };
        // Protobuf: the message-index list [1, 0] (count 2, then 1 and 0, zigzag) is part of
        // the framing; the body is the message.
        let mut p = payload(&[0, 0, 0, 0, 5, 4, 2, 0, 0x08, 0x01]);
        assert!(frame_by_registry(&mut p, &registry));
        assert_eq!(p.bytes, [0x08, 0x01]);
        assert_eq!(p.hint, Some(Format::Protobuf));
        assert_eq!(
            p.layers[0].detail,
            "schema id 5, Protobuf, message index path [1, 0]"
        );
        assert_eq!((p.layers[0].span.start, p.layers[0].span.end), (0, 8));
        // Avro: the body is read by the registry's schema.
        let mut p = payload(&[0, 0, 0, 0, 6, 0x54]);
        assert!(frame_by_registry(&mut p, &registry));
        assert_eq!(p.hint, Some(Format::Avro));
        let framed = p
            .avro
            .as_ref()
            .and_then(|a| a.schema.as_ref())
            .expect("schema");
        assert_eq!(framed.canonical_form(), "\"long\"");
        // An id the registry lacks, and a payload that does not start with zero: left alone.
        for bytes in [&[0u8, 0, 0, 0, 7, 1][..], &[1, 0, 0, 0, 6, 1]] {
            let mut p = payload(bytes);
            assert!(!frame_by_registry(&mut p, &registry));
            assert_eq!(p.bytes, bytes);
            assert!(p.layers.is_empty() && p.meta.is_empty());
        }
        // A known id whose index list runs past the end: told, the payload kept whole.
        let mut p = payload(&[0, 0, 0, 0, 5, 20, 2]);
        assert!(!frame_by_registry(&mut p, &registry));
        assert_eq!(p.bytes.len(), 7);
        let (_, warning) = p.meta.get(0).expect("a warning");
        assert!(
            warning.starts_with("schema id 5 is in the registry"),
            "{warning}"
        );
    }

    const SCHEMA: &str = r#"syntax = "proto3";
package t;
message Point { int32 x = 1; int32 y = 2; }
message Name { string text = 1; }
service Geo { rpc Find(Name) returns (Point); }
"#;
    /// `t.Point {x: 1, y: 2}`.
    const POINT: &[u8] = &[0x08, 0x01, 0x10, 0x02];

    fn schema() -> Schema {
        Schema::from_proto_source("geo.proto", SCHEMA).expect("the schema compiles")
    }

    fn read_ok(bytes: &[u8], request: ReadRequest<'_>, types: Option<&dyn MessageTypes>) -> Read {
        read(&SharedBytes::from(bytes.to_vec()), request, types)
    }

    #[test]
    fn the_best_reading_is_decoded_and_every_reading_listed() {
        let bytes = br#"{"id": 7, "tags": ["a"]}"#;
        let read = read_ok(bytes, ReadRequest::default(), None);
        let expected = detect(bytes, None, &DecodeOptions::default());
        let formats: Vec<Format> = read.readings.iter().map(|r| r.format).collect();
        let detected: Vec<Format> = expected.iter().map(|r| r.format).collect();
        assert_eq!(formats, detected);
        assert_eq!((read.chosen, read.format), (0, Format::Json));
        let doc = read.outcome.expect("decodes");
        let whole = codec::decode(bytes, Format::Json, &DecodeOptions::default()).expect("JSON");
        assert_eq!(doc.value, whole.value);
        assert!(!read.skeleton);
        assert!(read.message.is_none() && read.ranking.is_empty());
    }

    #[test]
    fn a_format_asked_for_is_the_only_one_decoded_unless_every_reading_is_listed() {
        let bytes = br#"{"id": 7}"#;
        let one = read_ok(
            bytes,
            ReadRequest {
                format: Some(Format::Cbor),
                ..ReadRequest::default()
            },
            None,
        );
        assert_eq!(one.readings.len(), 1);
        assert_eq!(one.format, Format::Cbor);
        let error = one.outcome.expect_err("JSON text is no CBOR item");
        assert!(one.readings[0].asked);
        assert_eq!(
            one.readings[0].reasons,
            vec![format!(
                "stopped at byte {}: {}",
                error.offset, error.message
            )]
        );
        let every = read_ok(
            bytes,
            ReadRequest {
                format: Some(Format::Cbor),
                list_every_reading: true,
                ..ReadRequest::default()
            },
            None,
        );
        // Every format but Avro, which is a reading only with a schema.
        assert_eq!(every.readings.len(), Format::ALL.len() - 1);
        assert_eq!(every.readings[every.chosen].format, Format::Cbor);
        assert_ne!(every.chosen, 0, "JSON reads best");
        assert_eq!(every.format, Format::Cbor);
        assert!(every.outcome.is_err());
        let asked: Vec<bool> = every.readings.iter().map(|r| r.asked).collect();
        assert_eq!(asked.iter().filter(|a| **a).count(), 1);
        assert!(asked[every.chosen], "the reading asked for says so");
    }

    /// Readings made elsewhere are handed on, not decoded again, when they were made with the
    /// message type the read uses; otherwise the protobuf reading is made again, and the other
    /// formats' stand.
    #[test]
    fn known_readings_are_used_where_the_read_decodes_their_format_the_same() {
        let made_of = br#"{"made": "elsewhere"}"#;
        let bytes = br#"{"made": "here"}"#;
        let known = || detect(made_of, None, &DecodeOptions::default());
        let used = read_ok(
            bytes,
            ReadRequest {
                known: Some(Known {
                    readings: known(),
                    message: None,
                }),
                skeleton: skeleton_format(bytes, None, None, &[], 0),
                ..ReadRequest::default()
            },
            None,
        );
        assert!(!used.skeleton, "known readings are whole documents");
        let value = |r: Read| r.outcome.expect("decodes").value;
        let of = |b: &[u8]| {
            codec::decode(b, Format::Json, &DecodeOptions::default())
                .expect("JSON")
                .value
        };
        assert_eq!(value(used), of(made_of));
        let point = schema().message("t.Point").expect("a type");
        let partly = read_ok(
            bytes,
            ReadRequest {
                known: Some(Known {
                    readings: known(),
                    message: Some(point.clone()),
                }),
                ..ReadRequest::default()
            },
            None,
        );
        let summaries = |b: &[u8]| {
            detect(b, None, &DecodeOptions::default())
                .iter()
                .map(Reading::summary)
                .collect::<Vec<_>>()
        };
        let of_format = |readings: &[ReadingSummary], format| {
            readings.iter().find(|r| r.format == format).cloned()
        };
        let protobuf = of_format(&partly.readings, Format::Protobuf);
        assert_eq!(protobuf, of_format(&summaries(bytes), Format::Protobuf));
        let json = of_format(&partly.readings, Format::Json);
        assert_eq!(json, of_format(&summaries(made_of), Format::Json));
        assert_eq!(value(partly), of(made_of));

        // Readings of the same bytes, made again only in part, are what detection makes.
        let again = read_ok(
            bytes,
            ReadRequest {
                known: Some(Known {
                    readings: detect(bytes, None, &DecodeOptions::default()),
                    message: Some(point),
                }),
                ..ReadRequest::default()
            },
            None,
        );
        assert_eq!(again.readings, summaries(bytes));
    }

    #[test]
    fn the_message_type_is_named_or_the_grpc_methods_or_the_best_ranked() {
        let schema = schema();
        let types = Some(&schema as &dyn MessageTypes);
        let ranked = read_ok(POINT, ReadRequest::default(), types);
        assert_eq!(
            ranked.message.as_ref().map(|m| m.full_name().to_string()),
            Some("t.Point".into())
        );
        assert_eq!(ranked.ranking[0].message.full_name(), "t.Point");
        assert!(ranked.message_reason.is_none());
        assert_eq!(ranked.format, Format::Protobuf);

        let call = ("/t.Geo/Find".to_string(), true);
        let by_method = read_ok(
            POINT,
            ReadRequest {
                origin: Origin {
                    grpc: Some(&call),
                    ..Origin::default()
                },
                ..ReadRequest::default()
            },
            types,
        );
        let name = |r: &Read| r.message.as_ref().map(|m| m.full_name().to_string());
        assert_eq!(name(&by_method), Some("t.Name".into()));
        assert_eq!(
            by_method.message_reason.as_deref(),
            Some("the request of /t.Geo/Find")
        );
        assert_eq!(by_method.ranking.len(), 1, "no other type is tried");
        assert_eq!(by_method.ranking[0].score, 100);

        let named = read_ok(
            POINT,
            ReadRequest {
                origin: Origin {
                    grpc: Some(&call),
                    ..Origin::default()
                },
                message: MessageChoice::Named(schema.message("t.Point").expect("a type")),
                ..ReadRequest::default()
            },
            types,
        );
        assert_eq!(name(&named), Some("t.Point".into()));
        assert!(named.ranking.is_empty() && named.message_reason.is_none());

        let schema_less = read_ok(
            POINT,
            ReadRequest {
                message: MessageChoice::SchemaLess,
                ..ReadRequest::default()
            },
            types,
        );
        assert!(schema_less.message.is_none() && schema_less.ranking.is_empty());

        // JSON asked for: protobuf types are not ranked against the bytes.
        let as_json = read_ok(
            br#"{"x": 1}"#,
            ReadRequest {
                format: Some(Format::Json),
                ..ReadRequest::default()
            },
            types,
        );
        assert!(as_json.message.is_none() && as_json.ranking.is_empty());
    }

    /// Message types whose ranking hands on a reading of its own making, to tell it from a
    /// decode made again.
    struct MarkedRanking(Schema);

    impl MessageTypes for MarkedRanking {
        fn grpc_message(&self, _: &str, _: bool) -> Option<MessageDescriptor> {
            None
        }

        fn rank(&self, bytes: &[u8], limits: &Limits) -> Ranking {
            let mut ranking = MessageTypes::rank(&self.0, bytes, limits);
            if let Some(doc) = ranking.best.as_mut() {
                doc.value = Value::text("made by the ranking");
            }
            ranking
        }
    }

    /// The type ranking picks is not decoded again: the reading it made is the payload's, in
    /// the listing of every format, with the format asked for, and beside readings known before.
    #[test]
    fn the_ranked_types_reading_is_the_payloads() {
        let schema = schema();
        let plain = read_ok(
            POINT,
            ReadRequest::default(),
            Some(&schema as &dyn MessageTypes),
        );
        let point = schema.message("t.Point").expect("a type");
        let options = DecodeOptions {
            message: Some(point),
            ..DecodeOptions::default()
        };
        let decoded = codec::decode(POINT, Format::Protobuf, &options).expect("reads");
        assert_eq!(plain.outcome.as_ref().ok(), Some(&decoded));

        let marked = MarkedRanking(schema.clone());
        let types = Some(&marked as &dyn MessageTypes);
        let mark = Value::text("made by the ranking");
        let value = |r: Read| r.outcome.expect("reads").value;
        assert_eq!(value(read_ok(POINT, ReadRequest::default(), types)), mark);
        let asked = ReadRequest {
            format: Some(Format::Protobuf),
            ..ReadRequest::default()
        };
        assert_eq!(value(read_ok(POINT, asked, types)), mark);
        let known = ReadRequest {
            known: Some(Known {
                readings: detect(POINT, None, &DecodeOptions::default()),
                message: None,
            }),
            format: Some(Format::Protobuf),
            list_every_reading: true,
            ..ReadRequest::default()
        };
        assert_eq!(value(read_ok(POINT, known, types)), mark);
    }

    /// A message type a framing named (a schema registry's) is read with when the user named
    /// none; one the user named, or none, stands.
    #[test]
    fn a_type_a_framing_named_stands_unless_the_user_chose_one() {
        let schema = schema();
        let types = Some(&schema as &dyn MessageTypes);
        let framed = schema.message("t.Name").expect("a type");
        let origin = Origin {
            message: Some(&framed),
            ..Origin::default()
        };
        let name = |r: &Read| r.message.as_ref().map(|m| m.full_name().to_string());
        let auto = read_ok(
            POINT,
            ReadRequest {
                origin,
                ..ReadRequest::default()
            },
            types,
        );
        assert_eq!(name(&auto), Some("t.Name".into()));
        assert!(auto.ranking.is_empty(), "no type is ranked");
        let named = read_ok(
            POINT,
            ReadRequest {
                origin,
                message: MessageChoice::Named(schema.message("t.Point").expect("a type")),
                ..ReadRequest::default()
            },
            types,
        );
        assert_eq!(name(&named), Some("t.Point".into()));
        let schema_less = read_ok(
            POINT,
            ReadRequest {
                origin,
                message: MessageChoice::SchemaLess,
                ..ReadRequest::default()
            },
            types,
        );
        assert_eq!(name(&schema_less), None);
    }

    #[test]
    fn field_readings_read_without_a_schema_and_give_way_to_a_named_type() {
        let schema = schema();
        let types = Some(&schema as &dyn MessageTypes);
        let readings = vec![FieldReading::parse("$.1=fixed64").expect("a reading")];
        let auto = read_ok(
            POINT,
            ReadRequest {
                field_readings: readings.clone(),
                ..ReadRequest::default()
            },
            types,
        );
        assert!(auto.message.is_none(), "the user reads the fields");
        assert_eq!(auto.format, Format::Protobuf);
        let error = auto.outcome.expect_err("field 1 is a varint");
        assert!(error.message.contains("fixed64"), "{}", error.message);

        let named = read_ok(
            POINT,
            ReadRequest {
                field_readings: readings,
                message: MessageChoice::Named(schema.message("t.Point").expect("a type")),
                ..ReadRequest::default()
            },
            types,
        );
        assert!(named.outcome.is_ok());
        assert_eq!(named.warnings.len(), 1, "{:?}", named.warnings);
        assert!(named.warnings[0].contains("t.Point"));
    }

    /// Ranking asked to walk large payloads reads one as a skeleton and never decodes it whole;
    /// its readings go on to `read`, which lists what detection lists and takes the skeleton.
    #[test]
    fn ranking_walks_a_large_payload_and_read_takes_its_skeleton() {
        let text = br#"{"a": [1, 2, {"b": "c"}], "d": null, "e": 1.5}"#;
        let bytes = SharedBytes::from(text.to_vec());
        let whole = codec::decode(text, Format::Json, &DecodeOptions::default()).expect("JSON");
        let mut request = OpenRequest::new(Layers::Best, Limits::default());
        request.walk_from = text.len();
        let mut opened = open(&bytes, &request).expect("opens");
        let (index, known) = opened.take_walked().expect("walked");
        assert_eq!(index, 0);
        assert!(opened.take_walked().is_none(), "taken once");
        let walked: Vec<Format> = known
            .readings
            .iter()
            .filter(|r| r.skeleton)
            .map(|r| r.format)
            .collect();
        assert_eq!(walked, [Format::Json]);
        let every = |known| ReadRequest {
            list_every_reading: true,
            known,
            ..ReadRequest::default()
        };
        let plain = read_ok(text, every(None), None);
        let read = read_ok(text, every(Some(known)), None);
        assert!(read.skeleton && !plain.skeleton);
        assert_eq!(read.readings, plain.readings);
        let doc = read.outcome.expect("decodes");
        assert_eq!(doc.spans, whole.spans);
        assert_eq!(
            doc.value,
            Value::Map(vec![
                (Value::text("a"), Value::Null),
                (Value::text("d"), Value::Null),
                (Value::text("e"), Value::Null),
            ])
        );
        // A format asked for alone is decoded whole, not taken from a skeleton.
        let mut opened = open(&bytes, &request).expect("opens");
        let (_, known) = opened.take_walked().expect("walked");
        let asked = ReadRequest {
            format: Some(Format::Json),
            known: Some(known),
            ..ReadRequest::default()
        };
        let read = read_ok(text, asked, None);
        assert!(!read.skeleton);
        assert_eq!(read.outcome.expect("decodes").value, whole.value);
        // Not asked to walk: nothing is.
        let mut opened =
            open(&bytes, &OpenRequest::new(Layers::Best, Limits::default())).expect("opens");
        assert!(opened.take_walked().is_none());
    }

    #[test]
    fn a_large_json_payload_reads_as_a_skeleton_with_the_whole_span_tree() {
        let bytes = br#"{"a": [1, 2, {"b": "c"}], "d": null, "e": 1.5}"#;
        let request = |from| ReadRequest {
            skeleton: skeleton_format(bytes, None, None, &[], from),
            ..ReadRequest::default()
        };
        let whole = codec::decode(bytes, Format::Json, &DecodeOptions::default()).expect("JSON");
        let read = read_ok(bytes, request(bytes.len()), None);
        assert!(read.skeleton);
        let doc = read.outcome.expect("decodes");
        assert_eq!(doc.spans, whole.spans);
        let keys: Vec<(Value, Value)> = ["a", "d", "e"]
            .into_iter()
            .map(|k| (Value::text(k), Value::Null))
            .collect();
        assert_eq!(doc.value, Value::Map(keys));
        // Smaller than the threshold, or read as another format: the whole value.
        let small = read_ok(bytes, request(bytes.len() + 1), None);
        assert!(!small.skeleton);
        assert_eq!(small.outcome.expect("decodes").value, whole.value);
        assert_eq!(
            skeleton_format(bytes, None, None, &[], 1),
            Some(Format::Json)
        );
        assert_eq!(
            skeleton_format(bytes, Some(Format::Cbor), None, &[], 1),
            None
        );
        assert_eq!(skeleton_format(b"  7", None, None, &[], 1), None);
        let one_map = [0x81, 0xa1, b'a', 0x01];
        assert_eq!(
            skeleton_format(&one_map, None, None, &[], 1),
            Some(Format::MessagePack)
        );
        assert_eq!(
            skeleton_format(&one_map, None, Some(Format::Cbor), &[], 1),
            Some(Format::Cbor)
        );
        assert_eq!(
            skeleton_format(&[0xa1, 0x61, b'a', 0x01], None, None, &[], 1),
            Some(Format::Cbor)
        );
    }

    #[test]
    fn open_peels_as_asked_and_hands_on_rankings_documents() {
        let input = SharedBytes::from(b"gaNrZXkB".to_vec());
        let limits = Limits::default();
        let as_is = open(&input, &OpenRequest::new(Layers::AsIs, limits)).expect("opens");
        assert!(as_is.raw && as_is.readings.is_empty());
        assert_eq!(as_is.payloads.len(), 1);
        assert_eq!(as_is.payloads[0].bytes, b"gaNrZXkB");

        let mut request = OpenRequest::new(Layers::Best, limits);
        request.hint = Some(Format::Cbor);
        let mut best = open(&input, &request).expect("opens");
        assert_eq!(best.readings[0].layers(), "base64");
        let chosen = best.default_payload();
        let payload = best.payloads[chosen].clone();
        assert_eq!(payload.bytes, [0x81, 0xA3, b'k', b'e', b'y', 0x01]);
        assert_eq!(payload.hint, Some(Format::Cbor), "the input's hint");
        let known = best.take_detected(chosen).expect("ranking read it");
        let fresh = detect(&payload.bytes, payload.hint, &DecodeOptions::default());
        let summaries = |r: &[Reading]| r.iter().map(Reading::summary).collect::<Vec<_>>();
        assert_eq!(
            summaries(&known.readings),
            summaries(&fresh),
            "as with the hint"
        );
        assert!(best.take_detected(chosen).is_none(), "taken once");

        let count = best.readings.len();
        let missing = open(&input, &OpenRequest::new(Layers::Reading(count), limits));
        assert_eq!(
            missing.err(),
            Some(OpenError::NoSuchReading {
                asked: count,
                count
            })
        );
        let last = open(
            &input,
            &OpenRequest::new(Layers::Reading(count - 1), limits),
        )
        .expect("opens");
        assert_eq!(last.reading, count - 1);
        assert_eq!(
            last.payloads[0].bytes, b"gaNrZXkB",
            "the raw bytes come last"
        );
    }
}
