//! The layers themselves as readings: the same input peeled in different ways, ranked.
//!
//! Peeling guesses: text of hex digits may be hex or just text, an HTTP message may be what the
//! user wants to see or only its body, two CBOR maps back to back may be a sequence or one map
//! with trailing data. [`peel_readings`] peels the input several ways (every layer, fewer
//! layers, none, with and without splitting streams), drops the ways that give the same
//! payloads, and ranks the rest by how well their payloads decode ([`crate::codec::detect::detect()`]), so the
//! best reading goes first and every other is one choice away (the GUI's "treat as…", the CLI's
//! `--layers` and `--layer N`).
//!
//! A reading's confidence is the mean confidence of the best format reading of its first
//! [`SAMPLED`] payloads with bytes (of one cut short, its first MiB), less [`FAULT_PENALTY`] when peeling stopped at a fault. A
//! payload with a [`Verdict`](super::verdict::Verdict) (text its Content-Type names, encrypted TLS records) has no format
//! reading; it counts [`VERDICT_CONFIDENCE`], or [`GUESSED_TEXT_CONFIDENCE`] when only its
//! bytes call it text. When the input parses as a capture file, its
//! readings as a capture rank above the raw bytes whatever they score, even with no payload: a
//! pcap file read as CBOR is never the answer.
//! What this module does not do: force a layer that peeling does not find (choose a
//! [`PeelChoice`] with [`Split::Force`] and call [`peel`](super::peel) for that).

use super::payload::{Decoded, Payload};
use super::peel::{split_all, split_auto_beside, unwrapped, PeelChoice, Peeled, Split};
use super::tls::KeyLog;
use super::verdict::verdict;
use super::SharedBytes;
use crate::codec::detect::{detect_knowing, KnownDocument, Reading};
use crate::codec::{DecodeOptions, Format};
use crate::limits::Limits;

/// Payloads per reading whose formats are detected to score it.
pub const SAMPLED: usize = super::payload::KEPT_DOCS;
/// What a payload with a [`Verdict`](super::verdict::Verdict) counts towards its reading's confidence: as sure as a
/// complete JSON reading, since the sender's Content-Type or the TLS record layer says what it is.
pub const VERDICT_CONFIDENCE: u8 = 90;
/// What a payload counts that only its bytes call text (printable, read by no format): less
/// than a way of peeling further that reaches a data format (a JSON string holding base64 of
/// MessagePack is MessagePack, not the text of its base64), more than bytes no format claims.
pub const GUESSED_TEXT_CONFIDENCE: u8 = 60;
/// Taken off a reading's confidence when peeling it stopped at a fault.
pub const FAULT_PENALTY: i32 = 15;
/// Most layer depths tried (each depth is one more layer peeled).
const MAX_DEPTHS: usize = 8;
/// Where a reading ranks: after the readings the input's kind says come first (a capture read as
/// one, a HAR read as its exchanges), after those that split the gRPC bodies a Content-Type
/// announces, then by confidence.
type Rank = (bool, bool, std::cmp::Reverse<u8>);

/// Bytes of a payload cut short that are decoded to score it.
const CUT_SAMPLE: usize = 1 << 20;
/// Payload bytes of a capture up to which its fewer-layer readings are made (each reads the
/// capture again, with its own copy of every decompressed body).
const FEWER_LAYERS_OF_CAPTURES_UP_TO: usize = 64 << 20;
/// Most nodes the documents of one reading's [`LayerReading::detected`] hold together, past the
/// first payload's (whose documents are always kept). A payload whose documents would pass it is
/// scored and its documents dropped: a caller decodes it again if it goes on with it. Without
/// this, eight sampled payloads that each read as a million protobuf fields (about 200 bytes a
/// node) would hold 1.6 GB at once.
pub const KEPT_NODES: usize = 1_000_000;

/// One way of peeling the input.
#[derive(Debug, Clone)]
pub struct LayerReading {
    /// The choice that gives this reading (hand it to [`peel`](super::peel) to peel it again).
    pub choice: PeelChoice,
    /// The payloads found this way.
    pub peeled: Peeled,
    /// 0–100: how well the payloads decode this way, relative to the other readings.
    pub confidence: u8,
    /// Why, in plain sentences.
    pub reasons: Vec<String>,
    /// The best format of the first payload with bytes, if any payload has bytes.
    pub format: Option<Format>,
    /// The format readings ([`crate::codec::detect::detect()`] without a hint beyond the payload's own) of the
    /// sampled payloads, by index into `peeled.payloads`, decoded documents included: a caller
    /// that goes on with one of them takes its documents instead of decoding the bytes again.
    /// Only the best reading (the first [`peel_readings`] returns) keeps them; for the others
    /// this is empty, so memory holds one reading's documents, not every reading's. Payloads
    /// past the first are left out once their documents would hold more than [`KEPT_NODES`]
    /// nodes in all.
    pub detected: Vec<(usize, Vec<Reading>)>,
}

impl LayerReading {
    /// How many payloads this way gives.
    pub fn payload_count(&self) -> usize {
        self.peeled.payloads.len()
    }

    /// The layer chain of the first payload with bytes (`hex → gzip`); `pcap` for a capture
    /// that gave no payload; else `raw bytes`.
    pub fn layers(&self) -> String {
        let none = || {
            self.peeled
                .capture
                .as_ref()
                .map_or("raw bytes", |c| c.format.name())
                .to_string()
        };
        self.peeled
            .payloads
            .iter()
            .find(|p| !p.bytes.is_empty())
            .or(self.peeled.payloads.first())
            .map_or_else(none, |p| p.provenance())
    }
}

/// Peels `input` every plausible way and ranks the readings, best first (ties keep the order
/// "every layer, split" → "every layer, unsplit" → fewer layers → none).
///
/// `options` carries the protobuf message type, if the user gave one, for the format readings;
/// `keys`, an NSS key log to decrypt a capture's TLS connections with besides the key logs it
/// carries. Input held as [`SharedBytes`] is not copied: every depth's payloads share (or slice)
/// it where no layer changed them.
///
/// ```
/// use wirelens::capture::peel_readings;
/// use wirelens::codec::{DecodeOptions, Format};
///
/// let readings = peel_readings(b"gaNrZXkB", &DecodeOptions::default(), None);
/// assert_eq!(readings[0].layers(), "base64");
/// assert_eq!(readings[0].format, Some(Format::MessagePack));
/// assert_eq!(readings.last().map(|r| r.layers()), Some("raw bytes".to_string()));
/// ```
pub fn peel_readings(
    input: impl Into<SharedBytes>,
    options: &DecodeOptions,
    keys: Option<&KeyLog>,
) -> Vec<LayerReading> {
    peel_readings_walking(input, options, keys, usize::MAX)
}

/// [`peel_readings`], reading a payload of `walk_from` bytes or more that starts as a JSON,
/// MessagePack or CBOR container as a skeleton rather than decoding it whole: its span tree is
/// made a chunk at a time, and its reading's document is that skeleton
/// ([`crate::codec::detect::Reading::skeleton`]). A face that reads such a payload on demand
/// (the app) takes it on; its value is never held whole.
pub fn peel_readings_walking(
    input: impl Into<SharedBytes>,
    options: &DecodeOptions,
    keys: Option<&KeyLog>,
    walk_from: usize,
) -> Vec<LayerReading> {
    let input = &input.into();
    let limits = &options.limits;
    // Each depth is unwrapped once; the split ways split a copy of the unsplit payloads, and JSON
    // documents decoded on the way are kept for detection.
    let mut decoded = Decoded {
        walk_from: (walk_from < usize::MAX).then_some(walk_from),
        ..Decoded::default()
    };
    let whole = unwrapped(input, None, limits, keys, Some(&mut decoded));
    let unsplit = split_all(whole, Split::Never, limits, input.len());
    // A large capture is not held twice (its hundreds of thousands of messages, each with its
    // layers and headers): it is read split only, as it ranks first anyway (a gRPC body left
    // whole ranks after one split into its messages).
    if unsplit.capture.is_some() && payload_bytes(&unsplit) > FEWER_LAYERS_OF_CAPTURES_UP_TO {
        let split = split_all(unsplit, Split::Auto, limits, input.len());
        let mut reading = score(PeelChoice::default(), split, options, &mut decoded);
        reading.reasons.push(format!(
            "the only reading: a capture with more than {} MiB of payloads is read with every layer, split, and not again unsplit or with fewer layers (--layer raw reads the file as it is)",
            FEWER_LAYERS_OF_CAPTURES_UP_TO >> 20
        ));
        return vec![reading];
    }
    let ways = distinct_ways(input, unsplit, limits, keys, &mut decoded);
    ranked(ways, options, &mut decoded)
}

/// The ways of peeling `input` that give different payloads, `unsplit` (every layer, unsplit)
/// among them, in the order they keep on a tie: every layer, split → every layer, unsplit →
/// fewer layers, split → fewer layers, unsplit, deepest first → none.
fn distinct_ways(
    input: &SharedBytes,
    unsplit: Peeled,
    limits: &Limits,
    keys: Option<&KeyLog>,
    decoded: &mut Decoded,
) -> Vec<(PeelChoice, Peeled)> {
    // When nothing splits, the split reading is the unsplit one: held once, under the
    // default's name.
    let mut found: Vec<(PeelChoice, Peeled)> =
        match split_auto_beside(&unsplit, limits, input.len()) {
            Some(split) => vec![
                (PeelChoice::default(), split),
                (
                    PeelChoice {
                        max_layers: None,
                        split: Split::Never,
                    },
                    unsplit,
                ),
            ],
            None => vec![(PeelChoice::default(), unsplit)],
        };
    // The reading with every layer, unsplit (the last of `found` so far).
    let every = found.len() - 1;
    // Fewer layers, until peeling that many already gives everything.
    let mut seen: Vec<(PeelChoice, Peeled)> = Vec::new();
    // A capture read again at a lower depth decompresses every body and message again, each
    // within the input's whole budget: past this many payload bytes, only its raw reading is
    // added beside it (a permessage-deflate bomb of 256 MiB held twice over went past 512 MiB).
    let large_capture = found[every].1.capture.is_some()
        && payload_bytes(&found[every].1) > FEWER_LAYERS_OF_CAPTURES_UP_TO;
    for depth in 0..MAX_DEPTHS {
        if depth >= 1 && (har_in_one_step(&found[every].1) || large_capture) {
            // Every depth from 1 gives these payloads: not peeled again (a second copy of
            // every body of a large HAR); or the capture is too large to read twice.
            break;
        }
        let choice = PeelChoice {
            max_layers: Some(depth),
            split: Split::Never,
        };
        let unsplit = unwrapped(input, Some(depth), limits, keys, Some(&mut *decoded));
        let peeled = split_all(unsplit, Split::Never, limits, input.len());
        if same_payloads(&peeled, &found[every].1) {
            break;
        }
        if depth == 0 {
            seen.push((choice, peeled));
            continue;
        }
        let split = PeelChoice {
            max_layers: Some(depth),
            split: Split::Auto,
        };
        // The split ways go first; one that splits nothing is the unsplit reading itself.
        match split_auto_beside(&peeled, limits, input.len()) {
            Some(auto) => {
                seen.push((choice, peeled));
                found.push((split, auto));
            }
            None => found.push((split, peeled)),
        }
    }
    // The unsplit fewer-layer ways, deepest first, then none.
    seen.reverse();
    found.extend(seen);
    let mut distinct: Vec<(PeelChoice, Peeled)> = Vec::new();
    for (choice, peeled) in found {
        if !distinct.iter().any(|(_, p)| same_payloads(p, &peeled)) {
            distinct.push((choice, peeled));
        }
    }
    distinct
}

/// Scores the ways of peeling and ranks them, best first (a sort that keeps their order on a
/// tie). Only the best reading keeps its documents.
fn ranked(
    ways: Vec<(PeelChoice, Peeled)>,
    options: &DecodeOptions,
    decoded: &mut Decoded,
) -> Vec<LayerReading> {
    let order = Order::of(&ways);
    // Only the best reading keeps its documents (ties: the first), so at most two readings'
    // documents are held at a time.
    let mut readings: Vec<LayerReading> = Vec::with_capacity(ways.len());
    let mut best: Option<(usize, Rank)> = None;
    for (choice, peeled) in ways {
        let mut reading = if order.is_har && choice.max_layers == Some(0) && !from_har(&peeled) {
            raw_har(choice, peeled, options)
        } else {
            score(choice, peeled, options, decoded)
        };
        if order.is_capture && reading.peeled.capture.is_none() {
            reading
                .reasons
                .push("ranked after the readings as a capture: the input is a capture file".into());
        }
        if order.is_har && !from_har(&reading.peeled) {
            reading.reasons.push(
                "ranked after the readings as an export: the input is a HAR or a request snippet"
                    .into(),
            );
        }
        match best {
            Some((_, top)) if order.rank(&reading) >= top => reading.detected.clear(),
            _ => {
                if let Some(previous) = best.and_then(|(i, _)| readings.get_mut(i)) {
                    previous.detected.clear();
                }
                best = Some((readings.len(), order.rank(&reading)));
            }
        }
        readings.push(reading);
    }
    readings.sort_by_key(|r| order.rank(r));
    readings
}

/// What the input's readings say about the order they rank in, whatever they score.
struct Order {
    /// A capture file is read as a capture: the readings that opened it go before those that
    /// did not (the raw bytes).
    is_capture: bool,
    /// Likewise a HAR file (or a pasted cURL/fetch snippet) is read as the exchanges it holds,
    /// not as one JSON document or text.
    is_har: bool,
    /// Some reading leaves no gRPC body whole (it splits them, or has none).
    any_split: bool,
}

impl Order {
    fn of(ways: &[(PeelChoice, Peeled)]) -> Order {
        Order {
            is_capture: ways.iter().any(|(_, p)| p.capture.is_some()),
            is_har: ways.iter().any(|(_, p)| from_har(p)),
            any_split: ways.iter().any(|(_, p)| !unsplit_grpc(p)),
        }
    }

    /// Where `r` ranks among the readings.
    fn rank(&self, r: &LayerReading) -> Rank {
        (
            (self.is_capture && r.peeled.capture.is_none())
                || (self.is_har && !from_har(&r.peeled)),
            self.any_split && unsplit_grpc(&r.peeled),
            std::cmp::Reverse(r.confidence),
        )
    }
}

/// Whether `p` holds the exchanges of a HAR file or a request snippet.
fn from_har(p: &Peeled) -> bool {
    p.payloads.iter().any(super::har::is_export_payload)
}

/// Whether `p` leaves whole a body whose Content-Type says gRPC. Such a body is gRPC frames: a
/// reading that leaves it whole goes after one that splits it, whatever they score (a frame
/// cut by a limit costs the splitting reading its fault penalty, not the protocol's word).
fn unsplit_grpc(p: &Peeled) -> bool {
    p.payloads.iter().any(|p| {
        p.meta_value("grpc-body") == Some("true")
            && !p.layers.iter().any(|l| l.name.starts_with("gRPC frame"))
    })
}

/// Whether `whole` (every layer, unsplit) is a HAR's bodies that no layer was peeled from: then
/// peeling one layer, the HAR, gives the same payloads, and so does every depth after it.
fn har_in_one_step(whole: &Peeled) -> bool {
    whole.error.is_none()
        && whole.capture.is_none()
        && !whole.payloads.is_empty()
        && whole.payloads.iter().all(|p| {
            p.layers.len() <= 2
                && p.layers
                    .first()
                    .is_some_and(|l| l.name.starts_with(super::har::ENTRY_LAYER))
        })
}

/// The raw reading of a HAR (the file as one JSON document), which ranks after the HAR's own
/// readings whatever it scores: validated, not decoded, so a 100 MB HAR is not also held as a
/// 100 MB document while the readings are ranked. Choosing it (`--layer raw`, "raw bytes")
/// decodes it as any payload.
fn raw_har(choice: PeelChoice, peeled: Peeled, options: &DecodeOptions) -> LayerReading {
    let valid = peeled.payloads.len() == 1
        && peeled
            .payloads
            .first()
            .is_some_and(|p| crate::codec::json::is_json(&p.bytes, &options.limits));
    let (confidence, format, reason) = if valid {
        (
            100,
            Some(Format::Json),
            "the file is valid JSON, one document (validated, not decoded: it reads as a HAR)",
        )
    } else {
        (0, None, "the file is not one JSON document")
    };
    LayerReading {
        choice,
        peeled,
        confidence,
        reasons: vec![reason.to_string()],
        format,
        detected: Vec::new(),
    }
}

/// Whether a layer marked the payload cut short.
fn is_cut(p: &super::Payload) -> bool {
    p.cut.is_some()
}

/// Nodes a format reading's document holds (the partial one of an error).
fn document_nodes(reading: &Reading) -> usize {
    match &reading.outcome {
        Ok(doc) => doc.spans.len(),
        Err(e) => e.partial.as_ref().map_or(0, |doc| doc.spans.len()),
    }
}

/// The bytes of all of `peeled`'s payloads together.
fn payload_bytes(peeled: &Peeled) -> usize {
    peeled.payloads.iter().map(|p| p.bytes.len()).sum()
}

fn same_payloads(a: &Peeled, b: &Peeled) -> bool {
    a.payloads.len() == b.payloads.len()
        && a.payloads
            .iter()
            .zip(&b.payloads)
            .all(|(x, y)| x.bytes == y.bytes)
}

/// What the sampled payloads of one reading read best as, added up as they are scored.
struct Tally {
    /// Their confidences, added.
    total: i32,
    /// The best format of the first payload a format reads.
    format: Option<Format>,
    /// What each sampled payload read best as: a format's name, or a verdict's, and how often.
    formats: Vec<(String, usize)>,
    /// The format readings handed on, by payload index (see [`LayerReading::detected`]).
    detected: Vec<(usize, Vec<Reading>)>,
    /// The nodes of the documents in `detected`, and of those dropped for holding too many.
    kept_nodes: usize,
}

impl Tally {
    fn count_as(&mut self, name: String) {
        match self.formats.iter_mut().find(|(f, _)| *f == name) {
            Some((_, n)) => *n += 1,
            None => self.formats.push((name, 1)),
        }
    }

    /// Scores payload `i`, `p`: by its verdict when it has one, else by the best of its format
    /// readings.
    fn add(&mut self, i: usize, p: &Payload, options: &DecodeOptions, decoded: &mut Decoded) {
        if let Some(v) = verdict(p) {
            // Nothing to decode: no format readings, and no JSON document kept for it.
            let _ = decoded.take_json(&p.bytes, options);
            self.total += i32::from(if v.is_guess() {
                GUESSED_TEXT_CONFIDENCE
            } else {
                VERDICT_CONFIDENCE
            });
            self.count_as(v.name());
            self.detected.push((i, Vec::new()));
            return;
        }
        // A payload a layer cut short (a decompression bomb stopped at its limit, a body a TCP
        // gap cut) reads as incomplete however much of it is decoded: its first bytes score it,
        // not the limit's worth of them.
        let sliced = is_cut(p) && p.bytes.len() > CUT_SAMPLE;
        let bytes = if sliced {
            p.bytes.slice(0..CUT_SAMPLE)
        } else {
            p.bytes.clone()
        };
        let json = decoded.take_json(&bytes, options);
        // A large payload's reading is its skeleton when it was walked (never while sliced).
        let known = json
            .map(KnownDocument::Whole)
            .or_else(|| decoded.skeleton(&bytes, p.hint, options));
        // A container block is read by its header's schema: Avro is one of its readings.
        let framed_options;
        let options = match p
            .avro
            .as_ref()
            .and_then(|a| Some((a.schema.clone()?, a.items)))
        {
            Some((schema, items)) => {
                framed_options = DecodeOptions {
                    avro: Some(schema),
                    avro_items: items,
                    ..options.clone()
                };
                &framed_options
            }
            None => options,
        };
        let readings = detect_knowing(&bytes, p.hint, options, known.into_iter().collect());
        if let Some(best) = readings.first() {
            // A JSON document that is one string is text in quotes: the reading that peels the
            // string (and whatever it holds) is as likely, and one that reaches a data format
            // in it more so.
            let quoted_text = best.format == Format::Json
                && best
                    .outcome
                    .as_ref()
                    .is_ok_and(|d| matches!(d.value, crate::model::Value::Text(_)));
            let confidence = if quoted_text {
                best.confidence.min(GUESSED_TEXT_CONFIDENCE)
            } else {
                best.confidence
            };
            self.total += i32::from(confidence);
            self.format = self.format.or(Some(best.format));
            self.count_as(best.format.name().to_string());
        }
        if sliced {
            // Readings of the first bytes only are not the payload's: none is handed on, so it
            // is read whole if it is shown.
            return;
        }
        let nodes: usize = readings.iter().map(document_nodes).sum();
        self.kept_nodes = self.kept_nodes.saturating_add(nodes);
        if self.detected.is_empty() || self.kept_nodes <= KEPT_NODES {
            self.detected.push((i, readings));
        }
    }

    /// The reason that says what the `sampled` payloads of `peeled` read best as, and their
    /// mean `confidence`.
    fn reason(&self, peeled: &Peeled, sampled: usize, confidence: i32) -> String {
        let count = peeled.payloads.len();
        let with_bytes = peeled
            .payloads
            .iter()
            .filter(|p| !p.bytes.is_empty())
            .count();
        let what: Vec<String> = match self.formats.as_slice() {
            [(f, _)] => vec![f.clone()],
            _ => self
                .formats
                .iter()
                .map(|(f, n)| format!("{f} ×{n}"))
                .collect(),
        };
        let some = if with_bytes < count {
            " with bytes"
        } else {
            ""
        };
        let subject = if with_bytes == 1 {
            "the payload".to_string()
        } else if sampled < with_bytes {
            format!("the first {sampled} of {with_bytes} payloads{some}")
        } else {
            format!("all {with_bytes} payloads{some}")
        };
        format!(
            "{subject} read best as {} (mean {confidence}%)",
            what.join(", ")
        )
    }
}

/// Scores one way of peeling by the format readings of its first payloads (see the module's
/// documentation).
fn score(
    choice: PeelChoice,
    peeled: Peeled,
    options: &DecodeOptions,
    decoded: &mut Decoded,
) -> LayerReading {
    let mut reasons = Vec::new();
    let sampled: Vec<_> = peeled
        .payloads
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.bytes.is_empty())
        .take(SAMPLED)
        .collect();
    let mut tally = Tally {
        total: 0,
        format: None,
        formats: Vec::new(),
        detected: Vec::with_capacity(sampled.len()),
        kept_nodes: 0,
    };
    for &(i, p) in &sampled {
        tally.add(i, p, options, decoded);
    }
    let mut confidence = match i32::try_from(sampled.len()) {
        Ok(n) if n > 0 => tally.total / n,
        _ => {
            reasons.push(match &peeled.capture {
                Some(capture) => format!("no payload bytes: {}", capture.describe()),
                None => "no payload bytes".to_string(),
            });
            0
        }
    };
    if !sampled.is_empty() {
        reasons.push(tally.reason(&peeled, sampled.len(), confidence));
    }
    if let Some(e) = &peeled.error {
        confidence -= FAULT_PENALTY;
        reasons.push(format!("peeling stopped: {e}"));
    }
    LayerReading {
        choice,
        peeled,
        confidence: confidence.clamp(0, 100) as u8,
        reasons,
        format: tally.format,
        detected: tally.detected,
    }
}
