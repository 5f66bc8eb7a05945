//! One entry point from whatever the user opened or pasted to the payloads in it: pcap files are
//! reassembled, text and HTTP layers peeled, gRPC bodies split into their messages.
//!
//! Every payload keeps its layer chain (provenance). A fault part-way keeps what was found before
//! it, with the error beside it.

use super::conn;
use super::grpcweb;
use super::http;
use super::layers::unwrap_keeping;
use super::payload::{Budget, CaptureError, Decoded, Layer, Payload};
use super::pcap;
use super::sequence::{self, Framing};
use super::shared::Backing;
use super::tls::KeyLog;
use super::SharedBytes;
use crate::codec::protobuf::framing::split_grpc_with;
use crate::codec::{json, DecodeOptions, Format};
use crate::limits::Limits;
use crate::model::Span;

/// The payloads found in an input, in stream order, and the fault that stopped the search early.
#[derive(Debug, Clone)]
pub struct Peeled {
    /// What was found.
    pub payloads: Vec<Payload>,
    /// Why the search stopped before the end, if it did.
    pub error: Option<CaptureError>,
    /// Notes on what was skipped or cut (pcap gaps, truncated packets).
    pub warnings: Vec<String>,
    /// What the capture carried, when the input was read as a pcap or pcapng file: says why a
    /// capture gives no payload ([`pcap::CaptureSummary::describe`]).
    pub capture: Option<pcap::CaptureSummary>,
    /// What the input may still expand to: the decompressions of splitting (compressed gRPC
    /// frames) draw on the same budget as the layers peeled before.
    pub(crate) budget: Budget,
}

impl Peeled {
    /// Nothing found yet, with `budget` to draw on.
    fn empty(budget: Budget) -> Peeled {
        Peeled {
            payloads: Vec::new(),
            error: None,
            warnings: Vec::new(),
            capture: None,
            budget,
        }
    }
}

/// Which layers to peel: what the GUI's "treat as…" and the CLI's `--layer` choose. The default
/// peels every layer it finds and splits streams where it is sure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeelChoice {
    /// Peel at most this many layers (0: the input as it is, not even a pcap file is opened;
    /// 1: a pcap's streams or one text/HTTP/compression layer; …). `None`: all of them.
    pub max_layers: Option<usize>,
    /// How payloads holding several messages are split.
    pub split: Split,
}

/// How payloads holding several messages (gRPC frames, JSON Lines, sequences, delimited
/// streams) become one payload per message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Split {
    /// Where a layer says so (an HTTP Content-Type) or the bytes leave no doubt.
    #[default]
    Auto,
    /// Never: each payload stays whole.
    Never,
    /// Every payload by this framing; a payload that does not fit it is an error.
    Force(Framing),
}

/// How to peel an input: which layers and splitting ([`PeelChoice`]), within which bounds, and
/// which TLS keys to decrypt a capture's connections with besides the key logs it carries.
#[derive(Debug, Clone, Copy, Default)]
pub struct PeelOptions<'a> {
    /// The layers to peel and how to split streams.
    pub choice: PeelChoice,
    /// Decompression, layers, pcap reassembly, payloads kept.
    pub limits: Limits,
    /// An NSS key log (`SSLKEYLOGFILE`) for the capture's TLS connections.
    pub keys: Option<&'a KeyLog>,
}

impl PeelOptions<'_> {
    /// Every layer, split where sure, within `limits`.
    pub fn within(limits: Limits) -> PeelOptions<'static> {
        PeelOptions {
            limits,
            ..PeelOptions::default()
        }
    }

    /// The layers `choice` allows, within the default limits.
    pub fn choosing(choice: PeelChoice) -> PeelOptions<'static> {
        PeelOptions {
            choice,
            ..PeelOptions::default()
        }
    }
}

/// Finds the payloads in `input`, peeling the layers `options` allow. Input held as
/// [`SharedBytes`] (a memory-mapped file) is not copied: a payload that no layer changed, and
/// every item split from it, is a view of its memory.
///
/// ```
/// use wirelens::capture::{peel, PeelChoice, PeelOptions};
///
/// let peeled = peel(
///     b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"a\":1}",
///     &PeelOptions::default(),
/// );
/// assert_eq!(peeled.payloads.len(), 1);
/// assert_eq!(peeled.payloads[0].bytes, b"{\"a\":1}");
///
/// let raw = PeelChoice { max_layers: Some(0), ..PeelChoice::default() };
/// let peeled = peel(b"gaNrZXkB", &PeelOptions::choosing(raw));
/// assert_eq!(peeled.payloads[0].bytes, b"gaNrZXkB");
/// assert!(peeled.payloads[0].layers.is_empty());
/// ```
pub fn peel(input: impl Into<SharedBytes>, options: &PeelOptions<'_>) -> Peeled {
    let limits = &options.limits;
    let input = input.into();
    split_all(
        unwrapped(
            &input,
            options.choice.max_layers,
            limits,
            options.keys,
            None,
        ),
        options.choice.split,
        limits,
        input.len(),
    )
}

/// The first half of peeling: pcap streams opened and text, HTTP and compression layers peeled
/// (at most `max_layers`), streams not split yet. JSON documents that are payloads go to `keep`.
pub(crate) fn unwrapped(
    input: &SharedBytes,
    max_layers: Option<usize>,
    limits: &Limits,
    given_keys: Option<&KeyLog>,
    keep: Option<&mut Decoded>,
) -> Peeled {
    let mut options = super::UnwrapOptions::from(limits);
    if let Some(n) = max_layers {
        options.max_layers = n.saturating_sub(usize::from(pcap::is_pcap(input)));
    }
    // One budget for every decompression in the input, the streams of a capture included.
    let mut budget = Budget::for_input(input.len(), &options);
    let mut out = Peeled::empty(budget);
    if max_layers == Some(0) {
        out.payloads.push(Payload {
            bytes: input.clone(),
            ..Payload::default()
        });
    } else if pcap::is_pcap(input) {
        read_capture(
            input,
            limits,
            given_keys,
            &options,
            &mut budget,
            keep,
            &mut out,
        );
    } else if let Some((frames, capture)) = (max_layers.is_none_or(|n| n > 1))
        .then(|| frames_as_capture(input, limits))
        .flatten()
    {
        // A `tshark -x` dump of link-layer frames is the capture it was printed from.
        read_extracted(capture, given_keys, &options, &mut budget, keep, &mut out);
        let mut detail = format!(
            "tshark -x, {} frames read as a capture",
            frames.frames.len()
        );
        if !frames.derived.is_empty() {
            detail.push_str(&format!(
                "; {} derived section(s) left out, made again from the frames",
                frames.derived.len()
            ));
        }
        let dump = Layer {
            name: "hex dump".to_string(),
            detail,
            span: Span::new(0, input.len()),
        };
        for p in &mut out.payloads {
            p.layers.insert(0, dump.clone());
        }
    } else {
        match unwrap_keeping(input, &options, &mut budget, keep) {
            Ok(found) => {
                out.warnings.extend(super::har::export_warnings(&found));
                out.payloads = found;
            }
            Err(e) => {
                out.payloads = e.extracted.clone();
                out.error = Some(e);
            }
        }
    }
    if max_layers.is_some() {
        strip_chosen_stops(&mut out);
    }
    out.budget = budget;
    out
}

/// Drops the warnings that peeling stopped after a number of layers: the stop was chosen, so
/// it is not news.
fn strip_chosen_stops(out: &mut Peeled) {
    for p in &mut out.payloads {
        p.meta
            .retain(|k, v| !(k == "warning" && v.starts_with("stopped after")));
    }
}

/// A pcap or pcapng `input` read into `out`: each connection with both directions in view
/// (HTTP pairing, HTTP/2 streams), TLS decrypted with the key logs the capture carries (pcapng
/// Decryption Secrets Blocks) and `given_keys`.
fn read_capture(
    input: &SharedBytes,
    limits: &Limits,
    given_keys: Option<&KeyLog>,
    options: &super::UnwrapOptions,
    budget: &mut Budget,
    keep: Option<&mut Decoded>,
    out: &mut Peeled,
) {
    read_capture_with(
        &mut |each| pcap::extract_each(input, &pcap::PcapLimits::from(limits), each),
        given_keys,
        None,
        options,
        budget,
        keep,
        out,
    );
}

/// What reads a capture's streams and hands each on ([`pcap::extract_each`] of the file's
/// bytes, [`pcap::extract_each_from`] of a reader).
type Extract<'x> = dyn FnMut(&mut dyn FnMut(&mut pcap::Capture) -> bool) -> Result<pcap::Capture, CaptureError>
    + 'x;

/// [`read_capture`] of the streams `extract` hands on: whatever reads the file, the payloads
/// come out the same, in stream order.
fn read_capture_with(
    extract: &mut Extract<'_>,
    given_keys: Option<&KeyLog>,
    backing: Option<Backing>,
    options: &super::UnwrapOptions,
    budget: &mut Budget,
    keep: Option<&mut Decoded>,
    out: &mut Peeled,
) {
    // Each stream is read as soon as its connection is over and its bytes let go, so only the
    // connections open at once are held, whatever the size of the capture.
    let mut read = Read::new(given_keys, backing);
    let mut keep = keep;
    let extracted = extract(&mut |view| {
        // A capture read as it arrives may be longer than its reader first said.
        budget.grow_to(view.input_len, options);
        let found = read.stream(view, options, budget, keep.as_deref_mut());
        read.found.push(found);
        true
    });
    let capture = match extracted {
        Ok(capture) => capture,
        Err(mut e) => {
            read.finish(None, out);
            e.extracted = out.payloads.clone();
            out.error = Some(e);
            return;
        }
    };
    read.finish(Some(&capture), out);
}

/// [`peel`] of a pcap or pcapng capture read from `reader`: the same payloads in the same
/// (stream) order, the same warnings, error and summary as `peel` of the whole file gives, with
/// the file never held (a large file is read through its handle rather than kept in memory;
/// [`peel_capture_each`] also lets go of each payload). `len_hint` is the file's size when it
/// is known: the decompression budget and the payload limit are sized from it, or from the
/// bytes read when it is not. A choice of no layers at all reads no capture: [`peel`] the bytes.
///
/// `backing`, when the reader's bytes can be read again (a file), is where bodies are read back
/// from when they are looked at: a body the capture holds as it was sent (not undone from a
/// coding, dechunked or decrypted) is not held, only where it lies in the file, so the payloads
/// of a large capture take a fraction of its size. Their bytes read the same either way.
pub fn peel_capture_from(
    reader: &mut dyn std::io::Read,
    options: &PeelOptions<'_>,
    len_hint: Option<usize>,
    backing: Option<Backing>,
) -> Peeled {
    let limits = &options.limits;
    let mut unwrap = super::UnwrapOptions::from(limits);
    if let Some(n) = options.choice.max_layers {
        // The capture file is the first layer.
        unwrap.max_layers = n.saturating_sub(1);
    }
    let mut budget = Budget::for_input(len_hint.unwrap_or(0), &unwrap);
    let mut out = Peeled::empty(budget);
    let mut input_len = len_hint.unwrap_or(0);
    read_capture_with(
        &mut |each| {
            let read = pcap::extract_each_from(reader, &pcap::PcapLimits::from(limits), each);
            if let Ok(capture) = &read {
                input_len = input_len.max(capture.input_len);
            }
            read
        },
        options.keys,
        backing,
        &unwrap,
        &mut budget,
        None,
        &mut out,
    );
    if options.choice.max_layers.is_some() {
        strip_chosen_stops(&mut out);
    }
    out.budget = budget;
    split_all(out, options.choice.split, limits, input_len)
}

/// What [`peel_capture_each`] read beside the payloads it handed on.
#[derive(Debug, Default)]
pub struct StreamedCapture {
    /// The capture's warnings, then those of its streams in the order they were read.
    pub warnings: Vec<String>,
    /// What stopped the reading of the file (a broken record, a read error), after every
    /// payload before it was handed on.
    pub error: Option<CaptureError>,
    /// What the capture held, when it was read to its end.
    pub capture: Option<pcap::CaptureSummary>,
    /// How many payloads were handed on.
    pub payloads: usize,
    /// How many bytes of the file were read.
    pub input_len: usize,
}

/// A pcap or pcapng capture read from `reader` and peeled as [`peel`] peels it (every layer,
/// split where sure), the payloads of each connection handed to `each` as soon as that
/// connection is over and read: in the order connections end, not by stream index, and none
/// held after `each` returns. Neither the file nor its payloads are held, only the connections
/// open at once, so a capture of any size, or one arriving on standard input, is read in the
/// memory of its busiest moment (TLS connections wait for the end of the file, where every key
/// log it carries is known).
///
/// The decompression budget grows with the bytes read (from `len_hint`, the file's size, when
/// it is known). The payload-count limit applies only when it was set: with none held, the
/// default's reason is gone. `each` returns false to stop; then, as at that limit, the rest of
/// the file is not read.
pub fn peel_capture_each(
    reader: &mut dyn std::io::Read,
    options: &PeelOptions<'_>,
    len_hint: Option<usize>,
    each: &mut dyn FnMut(Vec<Payload>) -> bool,
) -> StreamedCapture {
    let limits = &options.limits;
    let unwrap = super::UnwrapOptions::from(limits);
    let mut budget = Budget::for_input(len_hint.unwrap_or(0), &unwrap);
    let max_payloads =
        (limits.max_payloads != Limits::DEFAULT_MAX_PAYLOADS).then_some(limits.max_payloads);
    let mut read = Read::new(options.keys, None);
    let mut out = StreamedCapture::default();
    let mut stream_warnings = Vec::new();
    let mut stopped = false;
    let extracted = pcap::extract_each_from(reader, &pcap::PcapLimits::from(limits), &mut |view| {
        if stopped {
            return false;
        }
        budget.grow_to(view.input_len, &unwrap);
        let (index, found, warnings) = read.stream(view, &unwrap, &mut budget, None);
        stream_warnings.extend(warnings);
        let mut split = Peeled::empty(budget);
        split_into(&mut split, found, options.choice.split, limits);
        budget = split.budget;
        stream_warnings.extend(split.warnings);
        if let Some(e) = split.error {
            stream_warnings.push(format!("stream {index}: {e}"));
        }
        let mut payloads = split.payloads;
        if let Some(max) = max_payloads {
            let room = max.saturating_sub(out.payloads);
            if payloads.len() > room {
                stream_warnings.push(format!(
                        "only the first {max} payloads are kept (limit payloads; `--limit payloads=N` raises it); the rest of the capture is not read"
                    ));
                payloads.truncate(room);
                stopped = true;
            }
        }
        out.payloads += payloads.len();
        if !payloads.is_empty() && !each(payloads) {
            stopped = true;
        }
        !stopped
    });
    match extracted {
        Ok(capture) => {
            let mut rest = Peeled::empty(budget);
            read.finish(Some(&capture), &mut rest);
            out.warnings.append(&mut rest.warnings);
            out.capture = rest.capture;
            out.input_len = capture.input_len;
        }
        Err(e) => out.error = Some(e),
    }
    out.warnings.append(&mut stream_warnings);
    out
}

/// The streams of a capture, read as [`pcap::extract_each`] hands them on, put back in stream
/// order at the end.
struct Read<'k> {
    given_keys: Option<&'k KeyLog>,
    /// The key log of the capture's own blocks and `given_keys`, once a stream needs it.
    keys: Option<Option<KeyLog>>,
    /// Per stream kept (not handed on): its index, its payloads, its warnings.
    found: Vec<(usize, Vec<Payload>, Vec<String>)>,
    /// Streams that a key log decrypted (no longer ones to give a key log for).
    decrypted: Vec<usize>,
    warnings: Vec<String>,
    /// Where the capture file can be read again ([`peel_capture_from`]).
    backing: Option<Backing>,
}

impl<'k> Read<'k> {
    fn new(given_keys: Option<&'k KeyLog>, backing: Option<Backing>) -> Read<'k> {
        Read {
            given_keys,
            backing,
            keys: None,
            found: Vec::new(),
            decrypted: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Reads the one stream `view` holds: its index, payloads and warnings.
    fn stream(
        &mut self,
        view: &pcap::Capture,
        options: &super::UnwrapOptions,
        budget: &mut Budget,
        keep: Option<&mut Decoded>,
    ) -> (usize, Vec<Payload>, Vec<String>) {
        let index = view.first_stream;
        // TLS streams are handed on at the end, when every key log of the file is known; only
        // they need one.
        let tls = view.stream(index).is_some_and(|s| {
            s.directions
                .iter()
                .any(|d| super::tls::looks_like_tls(d.contiguous()))
        });
        if tls && self.keys.is_none() {
            self.keys = Some(keys_of(view, self.given_keys, &mut self.warnings));
        }
        let keys = if tls {
            self.keys.as_ref().and_then(Option::as_ref)
        } else {
            None
        };
        let backing = self.backing.as_ref();
        let (found, warnings) = conn::stream(view, index, keys, backing, options, budget, keep);
        if found.iter().any(|p| p.meta_value("tls").is_some()) {
            self.decrypted.push(index);
        }
        (index, found, warnings)
    }

    /// Everything read into `out` in stream order, with the capture's own warnings first and
    /// its summary (when it was read to its end).
    fn finish(mut self, capture: Option<&pcap::Capture>, out: &mut Peeled) {
        self.found.sort_by_key(|(index, _, _)| *index);
        if let Some(capture) = capture {
            out.warnings.extend(capture.warnings.iter().cloned());
            if self.keys.is_none() {
                self.keys = Some(keys_of(capture, self.given_keys, &mut self.warnings));
            }
            let mut summary = pcap::summary(capture);
            summary.key_log = self.keys.as_ref().is_some_and(Option::is_some);
            summary.tls.retain(|(i, _)| !self.decrypted.contains(i));
            out.capture = Some(summary);
        }
        out.warnings.append(&mut self.warnings);
        out.payloads
            .reserve(self.found.iter().map(|(_, found, _)| found.len()).sum());
        for (_, found, warnings) in self.found {
            out.payloads.extend(found);
            out.warnings.extend(warnings);
        }
        if let Some(capture) = capture {
            // Streams handed on early saw the packet count so far (and, read from a reader, the
            // bytes so far): the capture layer says the whole file's.
            let layer = pcap::capture_layer(capture);
            for p in &mut out.payloads {
                if let Some(first) = p.layers.first_mut() {
                    if first.name == layer.name && first.span.start == layer.span.start {
                        first.detail.clone_from(&layer.detail);
                        first.span = layer.span;
                    }
                }
            }
        }
    }
}

/// The key log of `capture`'s own Decryption Secrets Blocks merged with `given`; `None` when
/// there is neither. A malformed block is a warning.
fn keys_of(
    capture: &pcap::Capture,
    given: Option<&KeyLog>,
    warnings: &mut Vec<String>,
) -> Option<KeyLog> {
    let mut keys = match capture.tls_key_log() {
        Ok(k) => k,
        Err(e) => {
            warnings.push(format!("the capture's TLS key log is not read: {e}"));
            KeyLog::default()
        }
    };
    if let Some(given) = given {
        keys.merge(given.clone());
    }
    // A key log the user gave is tried even when it holds no session, so the warning says so.
    (!keys.is_empty() || given.is_some()).then_some(keys)
}

/// The frames of a `tshark -x` dump ([`super::text::packet_frames`]) and the capture they make,
/// when that capture holds every `Reassembled TCP` section of the dump: a dump of some frames
/// only (`tshark -x -Y 'frame.number == 6'`) keeps more in its derived sections than its
/// frames rebuild, and is read dump by dump instead.
fn frames_as_capture(
    input: &[u8],
    limits: &Limits,
) -> Option<(super::text::PacketFrames, pcap::Capture)> {
    let frames = super::text::packet_frames(input)?;
    let capture = pcap::extract(&frames.to_pcap(), &pcap::PcapLimits::from(limits)).ok()?;
    let holds = |section: &[u8]| {
        capture.streams.iter().any(|s| {
            s.directions
                .iter()
                .any(|d| section.is_empty() || d.bytes.windows(section.len()).any(|w| w == section))
        })
    };
    frames
        .reassembled
        .iter()
        .all(|r| holds(r))
        .then_some((frames, capture))
}

/// A capture read into `out` (see [`read_capture`]).
fn read_extracted(
    capture: pcap::Capture,
    given_keys: Option<&KeyLog>,
    options: &super::UnwrapOptions,
    budget: &mut Budget,
    mut keep: Option<&mut Decoded>,
    out: &mut Peeled,
) {
    out.warnings.extend(capture.warnings.iter().cloned());
    out.capture = Some(pcap::summary(&capture));
    let mut keys = match capture.tls_key_log() {
        Ok(k) => k,
        Err(e) => {
            out.warnings
                .push(format!("the capture's TLS key log is not read: {e}"));
            KeyLog::default()
        }
    };
    if let Some(given) = given_keys {
        keys.merge(given.clone());
    }
    // A key log the user gave is tried even when it holds no session, so the warning says so.
    let keys = (!keys.is_empty() || given_keys.is_some()).then_some(keys);
    if let Some(summary) = &mut out.capture {
        summary.key_log = keys.is_some();
    }
    for index in 0..capture.streams.len() {
        let (found, warnings) = conn::stream(
            &capture,
            index,
            keys.as_ref(),
            None,
            options,
            budget,
            keep.as_deref_mut(),
        );
        // A decrypted TLS stream is no longer one to give a key log for.
        if found.iter().any(|p| p.meta_value("tls").is_some()) {
            if let Some(summary) = &mut out.capture {
                summary.tls.retain(|(i, _)| *i != index);
            }
        }
        out.payloads.extend(found);
        out.warnings.extend(warnings);
    }
}

/// The second half of peeling: every payload of `out` split per `split`, then at most
/// [`Limits::max_payloads`] kept.
///
/// Compressed gRPC frames are decompressed within [`Limits::unwrap_options`], drawing on what is
/// left of the input's decompression budget ([`Peeled::budget`]).
///
/// `input_len` is the size of the input peeled: the default payload limit grows with it
/// ([`Limits::payloads_for`]).
pub(crate) fn split_all(
    mut out: Peeled,
    split: Split,
    limits: &Limits,
    input_len: usize,
) -> Peeled {
    let found = std::mem::take(&mut out.payloads);
    split_into(&mut out, found, split, limits);
    keep_within_payload_limit(&mut out, limits, input_len);
    // A payload's facts and layers are complete: the room kept for more is let go (hundreds of
    // thousands of payloads are held at once from a large capture).
    for p in &mut out.payloads {
        p.meta.shrink_to_fit();
        p.layers.shrink_to_fit();
    }
    out
}

/// Each of `found` split per `split` into `out`, drawing on its budget; the first splitting
/// error is `out`'s error, the others are warnings.
fn split_into(out: &mut Peeled, found: Vec<Payload>, split: Split, limits: &Limits) {
    let options = super::UnwrapOptions::from(limits);
    // Splitting decodes JSON lines and sequence items, and tries protobuf framings.
    let decode = DecodeOptions {
        limits: *limits,
        ..DecodeOptions::default()
    };
    let mut budget = out.budget;
    let mut gunzip = |raw: &[u8]| {
        http::decompress_within("gzip", raw, &options, &mut budget).map_err(|e| e.to_string())
    };
    out.payloads.reserve(found.len());
    for payload in found {
        let split = match split {
            Split::Never => Ok(vec![payload]),
            Split::Auto => split_auto_unread(payload, &decode, &mut gunzip),
            Split::Force(framing) => split_framed(payload, framing, true, &decode, &mut gunzip),
        };
        match split {
            Ok(parts) => out.payloads.extend(parts),
            Err((e, parts)) => {
                out.payloads.extend(parts);
                keep_error(out, e);
            }
        }
    }
    out.budget = budget;
}

/// A splitting error kept in `out`: the first as its error, the others as warnings.
fn keep_error(out: &mut Peeled, e: CaptureError) {
    if out.error.is_none() {
        out.error = Some(e);
    } else {
        out.warnings.push(e.to_string());
    }
}

/// At most [`Limits::payloads_for`] `input_len` payloads kept in `out`, with a warning when
/// some are dropped.
fn keep_within_payload_limit(out: &mut Peeled, limits: &Limits, input_len: usize) {
    let max_payloads = limits.payloads_for(input_len);
    if out.payloads.len() > max_payloads {
        out.warnings.push(format!(
            "{} payloads found; only the first {max_payloads} are kept (limit payloads; `--limit payloads=N` raises it)",
            out.payloads.len(),
        ));
        out.payloads.truncate(max_payloads);
    }
}

/// What [`split_all`] with [`Split::Auto`] makes of `unsplit` (a reading [`split_all`] gave with
/// [`Split::Never`]), or `None` when no payload splits: then the two readings are the same, and
/// the payloads are not held twice (a capture's hundreds of thousands of messages, each with its
/// layers and headers). Each payload is split from a copy, one at a time.
pub(crate) fn split_auto_beside(
    unsplit: &Peeled,
    limits: &Limits,
    input_len: usize,
) -> Option<Peeled> {
    let options = super::UnwrapOptions::from(limits);
    let decode = DecodeOptions {
        limits: *limits,
        ..DecodeOptions::default()
    };
    let mut budget = unsplit.budget;
    let mut gunzip = |raw: &[u8]| {
        http::decompress_within("gzip", raw, &options, &mut budget).map_err(|e| e.to_string())
    };
    let mut changed: Vec<(usize, Vec<Payload>)> = Vec::new();
    let mut errors: Vec<CaptureError> = Vec::new();
    for (i, p) in unsplit.payloads.iter().enumerate() {
        match split_auto_unread(p.clone(), &decode, &mut gunzip) {
            Ok(parts) if matches!(parts.as_slice(), [one] if unchanged(one, p)) => {}
            Ok(parts) => changed.push((i, parts)),
            Err((e, parts)) => {
                changed.push((i, parts));
                errors.push(e);
            }
        }
    }
    if changed.is_empty() && errors.is_empty() {
        return None;
    }
    let mut out = Peeled {
        payloads: Vec::with_capacity(unsplit.payloads.len() + changed.len()),
        error: unsplit.error.clone(),
        warnings: unsplit.warnings.clone(),
        capture: unsplit.capture.clone(),
        budget,
    };
    let mut changed = changed.into_iter().peekable();
    for (i, p) in unsplit.payloads.iter().enumerate() {
        match changed.next_if(|(at, _)| *at == i) {
            Some((_, parts)) => out.payloads.extend(parts),
            None => out.payloads.push(p.clone()),
        }
    }
    for e in errors {
        keep_error(&mut out, e);
    }
    keep_within_payload_limit(&mut out, limits, input_len);
    Some(out)
}

/// Whether splitting gave `before` back as it was (its bytes the same view, not read).
fn unchanged(after: &Payload, before: &Payload) -> bool {
    after.bytes.same_view(&before.bytes)
        && after.layers == before.layers
        && after.hint == before.hint
        && after.meta == before.meta
        && after.cut == before.cut
        && after.protocol == before.protocol
        && after.avro == before.avro
        && after.message == before.message
}

/// How a compressed gRPC frame is decompressed (within the input's budget, see [`split_all`]).
type Gunzip<'a> = dyn FnMut(&[u8]) -> Result<Vec<u8>, String> + 'a;

/// [`split_auto`], which reads lazy bytes (a HAR's base64, a body left in the capture file) only
/// for a look: the parts that are views of them (the whole body, or each gRPC message or item
/// of it) stay unread, so a large input's bodies are not all held at once.
#[allow(clippy::result_large_err)]
fn split_auto_unread(
    payload: Payload,
    options: &DecodeOptions,
    gunzip: &mut Gunzip,
) -> Result<Vec<Payload>, (CaptureError, Vec<Payload>)> {
    if !payload.bytes.is_unmade() {
        return split_auto(payload, options, gunzip);
    }
    let lazy = payload.bytes.clone();
    lazy.peek(|made| {
        let probe = Payload {
            bytes: made.clone(),
            ..payload
        };
        // A part that is a view of the bytes (the whole, an item, a gRPC message) stays a view
        // of the lazy bytes, made when it is looked at; one decoded from them is what it is.
        let unread = |parts: &mut Vec<Payload>| {
            for part in parts {
                if let Some(range) = part.bytes.range_in(made) {
                    part.bytes = lazy.slice(range);
                }
            }
        };
        match split_auto(probe, options, gunzip) {
            Ok(mut parts) => {
                unread(&mut parts);
                Ok(parts)
            }
            Err((e, mut parts)) => {
                unread(&mut parts);
                Err((e, parts))
            }
        }
    })
}

/// One payload split the way [`Split::Auto`] does: gRPC bodies, JSON Lines, then the framings
/// [`sequence::detect_framing`] is sure of (or the Content-Type names), each read within
/// `options`.
#[allow(clippy::result_large_err)]
fn split_auto(
    payload: Payload,
    options: &DecodeOptions,
    gunzip: &mut Gunzip,
) -> Result<Vec<Payload>, (CaptureError, Vec<Payload>)> {
    if payload.meta_value("grpc-body") == Some("true") || looks_like_grpc(&payload.bytes) {
        return split_grpc_body(payload, gunzip);
    }
    let mut lines = split_json_lines(payload, options);
    if lines.len() != 1 {
        return Ok(lines);
    }
    let Some(payload) = lines.pop() else {
        return Ok(lines);
    };
    let announced = payload
        .meta
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .and_then(|(_, v)| sequence::framing_from_content_type(v));
    if let Some(framing) = announced {
        // The sender said so: a payload that does not fit is an error, with the items before.
        return split_framed(payload, framing, true, options, gunzip);
    }
    Ok(
        match sequence::detect_framing(&payload.bytes, payload.hint, options) {
            Some((framing, items)) => framed(&payload, framing, &items),
            None => vec![payload],
        },
    )
}

/// `payload` split by `framing` (items decoded within `options`). On a fault: the error (naming
/// the layer and offset) and the items before it, then the rest of the bytes as one payload
/// marked cut ([`Payload::cut`]). Unless `strict`, a payload that does not fit stays whole and no error is
/// given.
#[allow(clippy::result_large_err)]
fn split_framed(
    payload: Payload,
    framing: Framing,
    strict: bool,
    options: &DecodeOptions,
    gunzip: &mut Gunzip,
) -> Result<Vec<Payload>, (CaptureError, Vec<Payload>)> {
    if framing == Framing::Grpc {
        let mut payload = payload;
        payload.meta.push(("grpc-body", "true"));
        return split_grpc_body(payload, gunzip);
    }
    match sequence::split(&payload.bytes, framing, options) {
        Ok(items) => Ok(framed(&payload, framing, &items)),
        Err(_) if !strict => Ok(vec![payload]),
        Err(e) => {
            let mut parts = framed(&payload, framing, &e.items_before);
            let rest_from = e.items_before.last().map_or(0, |i| i.frame.end);
            let mut rest = payload.clone();
            rest.bytes = payload.bytes.slice(rest_from..payload.bytes.len());
            rest.layers.push(Layer {
                name: framing.name().into(),
                detail: format!("bytes {rest_from}.. not split: {}", e.message),
                span: Span::new(rest_from, payload.bytes.len()),
            });
            rest.cut = Some(format!("{}: {}", framing.name(), e.message));
            parts.push(rest);
            let error = CaptureError {
                layer: framing.name().into(),
                offset: e.offset,
                message: e.message,
                extracted: parts.clone(),
            };
            Err((error, parts))
        }
    }
}

/// One payload per item, each with a layer "CBOR sequence: item 3 of 10" and its span.
fn framed(payload: &Payload, framing: Framing, items: &[sequence::Item]) -> Vec<Payload> {
    let count = items.len();
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let mut p = Payload {
                message: None,
                avro: None,
                bytes: payload.bytes.slice(item.content.range()),
                layers: payload.layers.clone(),
                hint: framing.item_format().or(payload.hint),
                meta: payload.meta.clone(),
                cut: payload.cut.clone(),
                protocol: payload.protocol.clone(),
            };
            p.layers.push(Layer {
                name: framing.name().into(),
                detail: format!("item {} of {count}", i + 1),
                span: item.frame,
            });
            p
        })
        .collect()
}

/// NDJSON / JSON Lines (text that is not one JSON document, but whose every non-blank line is)
/// as one payload per line; anything else as it is.
fn split_json_lines(payload: Payload, options: &DecodeOptions) -> Vec<Payload> {
    let Ok(text) = std::str::from_utf8(&payload.bytes) else {
        return vec![payload];
    };
    let mut lines = Vec::new();
    let mut start = 0usize;
    for line in text.split_inclusive('\n') {
        let span = Span::new(start, start + line.len());
        start = span.end;
        if !line.trim().is_empty() {
            lines.push(span);
        }
    }
    let line_bytes = |span: &Span| payload.bytes[span.range()].trim_ascii().to_vec();
    // Lines first: a pretty-printed document fails on its first line, so a large JSON file is not
    // decoded again here; the whole text is tried only when every line is JSON on its own.
    if lines.len() < 2
        || !lines
            .iter()
            .all(|span| json::is_json(&line_bytes(span), &options.limits))
        || json::is_json(&payload.bytes, &options.limits)
    {
        return vec![payload];
    }
    let count = lines.len();
    lines
        .iter()
        .enumerate()
        .map(|(i, span)| {
            let mut p = payload.clone();
            p.layers.push(Layer {
                name: "JSON Lines".into(),
                detail: format!("line {} of {count}", i + 1),
                span: *span,
            });
            p.hint = Some(Format::Json);
            p.bytes = line_bytes(span).into();
            p
        })
        .collect()
}

/// A gRPC body (marked by its HTTP layer, or bytes that are exactly a run of gRPC frames) as one
/// payload per message; anything else as it is. A gRPC-Web trailers frame is no payload: its
/// text goes to every message's meta (`grpc-web trailers`) and to the last message's layer
/// detail; a body of trailers only gives one empty payload with a `gRPC-Web trailers` layer.
#[allow(clippy::result_large_err)]
fn split_grpc_body(
    payload: Payload,
    gunzip: &mut Gunzip,
) -> Result<Vec<Payload>, (CaptureError, Vec<Payload>)> {
    let marked = payload.meta_value("grpc-body") == Some("true");
    if !marked && !looks_like_grpc(&payload.bytes) {
        return Ok(vec![payload]);
    }
    let (frames, fault) = match split_grpc_with(&payload.bytes, &mut *gunzip) {
        Ok(frames) => (frames, None),
        Err(_) if !marked => return Ok(vec![payload]),
        Err(mut e) => (std::mem::take(&mut e.frames_before), Some(e)),
    };
    let trailers: Vec<String> = frames
        .iter()
        .filter(|f| f.trailers)
        .map(|f| {
            String::from_utf8_lossy(&f.data)
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("; ")
        })
        .collect();
    let trailers = trailers.join("; ");
    let count = frames.iter().filter(|f| !f.trailers).count();
    let mut parts: Vec<Payload> = Vec::with_capacity(count.max(1));
    let mut trailer_span = None;
    for f in frames {
        if f.trailers {
            trailer_span = Some(f.span);
            continue;
        }
        let mut p = payload.clone();
        let number = parts.len() + 1;
        let mut detail = format!("message {number} of {count}");
        if f.compressed {
            detail.push_str(", gzip-compressed");
        }
        if number == count && !trailers.is_empty() {
            detail.push_str(&format!(", then trailers {trailers}"));
        }
        p.layers.push(Layer {
            name: "gRPC frame".into(),
            detail,
            span: f.span,
        });
        if !trailers.is_empty() {
            p.meta.push(("grpc-web trailers", trailers.clone()));
        }
        p.hint = Some(Format::Protobuf);
        // A message sent as it is is a view of the body, not a copy.
        p.bytes = if f.compressed {
            f.data.into()
        } else {
            payload.bytes.slice(f.payload.range())
        };
        parts.push(p);
    }
    if let (0, Some(span)) = (count, trailer_span) {
        let mut p = payload.clone();
        p.layers.push(Layer {
            name: "gRPC-Web trailers".into(),
            detail: trailers.clone(),
            span,
        });
        p.meta.push(("grpc-web trailers", trailers));
        p.bytes = SharedBytes::default();
        parts.push(p);
    }
    let Some(e) = fault else {
        return Ok(parts);
    };
    let rest_from = parts
        .iter()
        .filter_map(|p| p.layers.last().map(|l| l.span.end))
        .max()
        .unwrap_or(0);
    let mut rest = payload.clone();
    rest.bytes = payload.bytes.slice(rest_from..payload.bytes.len());
    rest.layers.push(Layer {
        name: "gRPC frame".into(),
        detail: format!("bytes {rest_from}.. not split: {}", e.message),
        span: Span::new(rest_from, payload.bytes.len()),
    });
    rest.cut = Some(format!("gRPC frame: {}", e.message));
    rest.meta.push(("error", format!("gRPC frame {}", e)));
    parts.push(rest);
    let error = CaptureError {
        layer: "gRPC frame".into(),
        offset: e.offset,
        message: e.message,
        extracted: parts.clone(),
    };
    Err((error, parts))
}

/// Whether `bytes` is exactly a run of gRPC frames (see [`grpcweb::is_grpc_frames`]).
fn looks_like_grpc(bytes: &[u8]) -> bool {
    grpcweb::is_grpc_frames(bytes)
}

/// A payload's media type ([`Payload::media_type`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaType {
    /// Lower case, without parameters: `text/html`.
    pub name: String,
    /// Whether a HAR export's `mimeType` said it, rather than a Content-Type header.
    pub from_export: bool,
}

impl Payload {
    /// The value of the first `meta` entry named `key`.
    pub fn meta_value(&self, key: &str) -> Option<&str> {
        self.meta.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The payload's media type, lower case without parameters (`application/json`): from its
    /// innermost Content-Type (a multipart part's own comes after its message's), else a HAR
    /// entry's `mimeType` (a cached response whose headers have none). The one place a payload's
    /// media type is read from its layers' words.
    pub fn media_type(&self) -> Option<MediaType> {
        let (key, value) = self.meta.iter().rev().find(|(k, _)| {
            k.eq_ignore_ascii_case("content-type") || k.eq_ignore_ascii_case("mime-type")
        })?;
        let name = super::media::media_type(value);
        (!name.is_empty()).then(|| MediaType {
            name,
            from_export: key.eq_ignore_ascii_case("mime-type"),
        })
    }

    /// The gRPC call this payload is a message of, when an HTTP/2 layer said so: the call's
    /// `:path` (`/package.Service/Method`) and whether the payload is the request.
    pub fn grpc_call(&self) -> Option<(String, bool)> {
        let path = self.meta_value("grpc-method")?;
        let request = self.meta_value("grpc-direction") != Some("response");
        Some((path.to_string(), request))
    }

    /// What the payload is in the conversation it came from, when a layer said: `gRPC request
    /// /pkg.Svc/Get, stream 1, client→server`, `HTTP response 304 to HEAD`. `None` for input
    /// that is not a captured exchange.
    pub fn headline(&self) -> Option<String> {
        let direction = self.meta_value("direction");
        let mut parts: Vec<String> = Vec::new();
        if let Some((path, request)) = self.grpc_call() {
            parts.push(format!(
                "gRPC {} {path}",
                if request { "request" } else { "response" }
            ));
            if !request {
                if let Some(status) = self.meta_value("grpc-status") {
                    parts.push(format!("grpc-status {status}"));
                }
            }
        } else if let Some(stream) = self.meta_value("http2 stream") {
            let what = match (self.meta_value(":method"), self.meta_value(":status")) {
                (Some(m), _) => format!(
                    "HTTP/2 request {m} {}",
                    self.meta_value(":path").unwrap_or("")
                ),
                (None, Some(s)) => format!("HTTP/2 response {s}"),
                _ => "HTTP/2 message".to_string(),
            };
            parts.push(what.trim_end().to_string());
            parts.push(format!("h2 stream {stream}"));
        }
        if self.grpc_call().is_some() {
            if let Some(stream) = self.meta_value("http2 stream") {
                parts.push(format!("h2 stream {stream}"));
            }
        }
        if let Some(d) = direction {
            parts.push(d.to_string());
        }
        (!parts.is_empty()
            && (self.meta_value("http2 stream").is_some() || self.grpc_call().is_some()))
        .then(|| parts.join(", "))
    }

    /// The layer chain in one line: `pcap → TCP … → HTTP/1.1 response → gzip`, or `raw bytes`.
    pub fn provenance(&self) -> String {
        if self.layers.is_empty() {
            "raw bytes".into()
        } else {
            self.layers
                .iter()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
                .join(" → ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::protobuf::framing::grpc_frame;
    use std::sync::Arc;

    /// Every capture file under `dir`, recursively.
    /// Every capture the tests hold (recorded, third-party, crafted), sorted: its path, its
    /// bytes, and the key log beside it, if any.
    fn capture_fixtures() -> Vec<(std::path::PathBuf, Vec<u8>, Option<KeyLog>)> {
        let root = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/capture"
        ));
        let mut files = Vec::new();
        captures_under(root, &mut files);
        files.sort();
        assert!(files.len() >= 40, "{} captures found", files.len());
        files
            .into_iter()
            .map(|file| {
                let bytes = std::fs::read(&file).expect("a fixture");
                let keys = std::fs::read_to_string(file.with_extension("keylog"))
                    .ok()
                    .and_then(|t| KeyLog::parse(&t).ok());
                (file, bytes, keys)
            })
            .collect()
    }

    fn captures_under(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                captures_under(&path, out);
            } else if path
                .extension()
                .is_some_and(|e| e == "pcap" || e == "pcapng")
            {
                out.push(path);
            }
        }
    }

    /// Reading a capture stream by stream, each as its connection closes, gives what reading
    /// all its streams first gives: the same payloads in the same order, the same warnings, the
    /// same summary; on every capture the tests hold (recorded, third-party, crafted).
    #[test]
    fn captures_read_stream_by_stream_as_when_read_whole() {
        let limits = Limits::default();
        let options = super::super::UnwrapOptions::from(&limits);
        for (file, bytes, keys) in capture_fixtures() {
            let input = SharedBytes::from(bytes.clone());
            let streamed = unwrapped(&input, None, &limits, keys.as_ref(), None);
            let Ok(capture) = pcap::extract(&bytes, &pcap::PcapLimits::from(&limits)) else {
                // A broken file: what was read before the fault is read all the same.
                let e = streamed.error.as_ref().expect("an error");
                assert_eq!(e.extracted, streamed.payloads, "{}", file.display());
                continue;
            };
            let mut budget = Budget::for_input(bytes.len(), &options);
            let mut whole = Peeled::empty(budget);
            read_extracted(
                capture,
                keys.as_ref(),
                &options,
                &mut budget,
                None,
                &mut whole,
            );
            let name = file.display();
            assert!(streamed.error.is_none(), "{name}");
            assert_eq!(streamed.payloads.len(), whole.payloads.len(), "{name}");
            for (a, b) in streamed.payloads.iter().zip(&whole.payloads) {
                assert_eq!(a, b, "{name}");
            }
            let mut a = streamed.warnings.clone();
            let mut b = whole.warnings.clone();
            a.sort();
            b.sort();
            assert_eq!(a, b, "{name}");
            assert_eq!(streamed.capture, whole.capture, "{name}");
        }
    }

    /// A reader that gives at most 7 bytes a call, as a pipe may: records straddle reads.
    struct Trickle<'a>(&'a [u8]);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(7).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// The outermost layer says how much of the file was read when the stream was handed on:
    /// the rest of a payload is what the comparison holds.
    fn without_capture_layer(mut p: Payload) -> Payload {
        if let Some(first) = p.layers.first_mut() {
            if first.name.starts_with("pcap") {
                first.detail.clear();
                first.span = Span::empty(0);
            }
        }
        p
    }

    /// A capture peeled from a reader (the app's way with a file, which it does not hold) gives
    /// exactly what peeling the whole file gives: the same payloads in the same order, layers
    /// and all, the same warnings in the same order, the same fault and the same summary; on
    /// every capture the tests hold, read a few bytes at a time, with the file's size known and
    /// not (standard input), and with the file to read bodies back from (then bodies sent as
    /// they are are left in it, and read the same).
    #[test]
    fn a_capture_peeled_from_a_reader_is_the_whole_file_peeled() {
        let (mut compared, mut read_back) = (0, 0);
        let mut kinds: Vec<String> = Vec::new();
        for (file, bytes, keys) in capture_fixtures() {
            let options = PeelOptions {
                keys: keys.as_ref(),
                ..PeelOptions::default()
            };
            let name = file.display();
            let whole = peel(bytes.clone(), &options);
            // A chosen stop counts the capture file as the first layer, as `peel` does.
            let one = PeelOptions {
                choice: PeelChoice {
                    max_layers: Some(1),
                    ..PeelChoice::default()
                },
                ..options
            };
            let read = peel_capture_from(&mut Trickle(&bytes), &one, Some(bytes.len()), None);
            assert_eq!(read.payloads, peel(bytes.clone(), &one).payloads, "{name}");
            let file: Backing = Arc::new(bytes.to_vec());
            for (hint, backing) in [
                (Some(bytes.len()), None),
                (None, None),
                (Some(bytes.len()), Some(file)),
            ] {
                let backed = backing.is_some();
                let read = peel_capture_from(&mut Trickle(&bytes), &options, hint, backing);
                if backed {
                    for p in read.payloads.iter().filter(|p| p.bytes.is_unmade()) {
                        read_back += 1;
                        for l in &p.layers {
                            let kind = l.name.split(' ').next().unwrap_or("");
                            if !kinds.contains(&kind.to_string()) {
                                kinds.push(kind.to_string());
                            }
                        }
                    }
                }
                assert_eq!(read.payloads, whole.payloads, "{name} {hint:?} {backed}");
                assert_eq!(read.warnings, whole.warnings, "{name} {hint:?}");
                assert_eq!(read.capture, whole.capture, "{name} {hint:?}");
                let fault = |p: &Peeled| {
                    p.error
                        .as_ref()
                        .map(|e| (e.to_string(), e.extracted.clone()))
                };
                assert_eq!(fault(&read), fault(&whole), "{name} {hint:?}");
            }
            compared += 1;
        }
        assert!(compared >= 40, "{compared} captures compared");
        assert!(
            read_back >= 100,
            "only {read_back} bodies were left in the file to be read back"
        );
        // Bodies as sent, dechunked, undone from a content coding, HTTP/2 DATA, gRPC messages in
        // it, a raw TCP run and a datagram.
        for kind in [
            "HTTP/1.1", "chunked", "gzip", "HTTP/2", "gRPC", "TCP", "UDP",
        ] {
            assert!(kinds.iter().any(|k| k == kind), "{kind} not in {kinds:?}");
        }
    }

    /// A capture read from a reader, each connection's payloads handed on as it ends and none
    /// kept, gives what peeling the whole file in memory gives: the same payloads (put back in
    /// stream order), the same warnings, the same summary; on every capture the tests hold,
    /// read through a reader that gives a few bytes at a time.
    #[test]
    fn captures_read_from_a_reader_give_what_the_whole_file_gives() {
        let mut compared = 0;
        for (file, bytes, keys) in capture_fixtures() {
            let options = PeelOptions {
                keys: keys.as_ref(),
                ..PeelOptions::default()
            };
            let name = file.display();
            let whole = peel(bytes.clone(), &options);
            let mut groups: Vec<Vec<Payload>> = Vec::new();
            let streamed = peel_capture_each(
                &mut Trickle(&bytes),
                &options,
                Some(bytes.len()),
                &mut |found| {
                    groups.push(found);
                    true
                },
            );
            if let Some(e) = &whole.error {
                if e.layer.starts_with("pcap") {
                    // A broken file: the same fault, after the same payloads.
                    let s = streamed.error.as_ref().expect("the same fault");
                    assert_eq!((s.offset, &s.message), (e.offset, &e.message), "{name}");
                    continue;
                }
            }
            assert!(streamed.error.is_none(), "{name}: {:?}", streamed.error);
            let stream_of = |g: &Vec<Payload>| {
                g.first()
                    .and_then(|p| p.meta_value("stream"))
                    .and_then(|v| v.parse::<usize>().ok())
            };
            groups.sort_by_key(stream_of);
            let got: Vec<Payload> = groups
                .into_iter()
                .flatten()
                .map(without_capture_layer)
                .collect();
            let want: Vec<Payload> = whole
                .payloads
                .into_iter()
                .map(without_capture_layer)
                .collect();
            assert_eq!(streamed.payloads, got.len(), "{name}");
            assert_eq!(got.len(), want.len(), "{name}");
            for (a, b) in got.iter().zip(&want) {
                assert_eq!(a, b, "{name}");
            }
            let mut a = streamed.warnings.clone();
            let mut b = whole.warnings.clone();
            if let Some(e) = &whole.error {
                b.push(e.to_string());
                a = a
                    .into_iter()
                    .map(|w| match w.split_once(": ") {
                        Some((stream, rest)) if stream.starts_with("stream ") => rest.to_string(),
                        _ => w,
                    })
                    .collect();
            }
            a.sort();
            b.sort();
            a.dedup();
            b.dedup();
            assert_eq!(a, b, "{name}");
            assert_eq!(streamed.capture, whole.capture, "{name}");
            assert_eq!(streamed.input_len, bytes.len(), "{name}");
            compared += 1;
        }
        assert!(compared >= 40, "{compared} captures compared");
    }

    #[test]
    fn a_grpc_body_becomes_one_payload_per_message() {
        let mut body = grpc_frame(b"\x08\x01", false);
        body.extend(grpc_frame(b"\x08\x02", false));
        let peeled = peel(&body, &PeelOptions::default());
        assert_eq!(peeled.payloads.len(), 2);
        assert_eq!(peeled.payloads[1].bytes, b"\x08\x02");
        assert_eq!(peeled.payloads[1].provenance(), "gRPC frame");
        assert_eq!(peeled.payloads[1].hint, Some(Format::Protobuf));
        assert_eq!(peeled.payloads[1].layers[0].span, Span::new(7, 14));
    }

    #[test]
    fn json_lines_become_one_payload_per_line() {
        let peeled = peel(
            b"{\"id\":1}\n\n{\"id\":2}\r\n[3]\n",
            &PeelOptions::default(),
        );
        let bodies: Vec<&[u8]> = peeled.payloads.iter().map(|p| p.bytes.as_slice()).collect();
        assert_eq!(bodies, [&b"{\"id\":1}"[..], b"{\"id\":2}", b"[3]"]);
        assert_eq!(peeled.payloads[1].layers[0].detail, "line 2 of 3");
        assert_eq!(peeled.payloads[1].layers[0].span, Span::new(10, 20));
        // One JSON document over several lines stays one payload.
        assert_eq!(
            peel(b"{\n\"id\": 1\n}\n", &PeelOptions::default())
                .payloads
                .len(),
            1
        );
    }

    #[test]
    fn plain_payloads_pass_through() {
        let peeled = peel(b"\x82\xa1a\x01\xa1b\x02", &PeelOptions::default());
        assert_eq!(peeled.payloads.len(), 1);
        assert_eq!(peeled.payloads[0].bytes, b"\x82\xa1a\x01\xa1b\x02");
        assert!(peeled.error.is_none());
        assert!(!looks_like_grpc(b"\x00\x00\x00\x00\x05abc"));
    }
}
