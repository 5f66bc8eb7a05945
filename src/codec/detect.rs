//! Ranks the possible readings of a payload: which format it is, how sure we are, and why.
//!
//! Every format is tried with its real decoder; a reading that consumes all bytes beats one that
//! stops early (complete readings never score below 41, incomplete ones never above 40), and
//! plausibility decides between full readings (binary formats rarely decode fully by accident,
//! but short inputs can: `0x01` is valid in both MessagePack and CBOR). Each reading keeps its
//! decoded document or error, so nothing is decoded twice, and carries the reasons a user sees
//! ("consumed all 812 bytes as CBOR map(6)"). Whether a payload is data at all (text, encrypted
//! records) is decided before, from what its layers say ([`crate::capture::verdict`]).

use super::{DecodeError, DecodeOptions, Document, ErrorKind, Format};
use crate::model::Value;

/// A reading at or above this confidence is a claim: "these bytes are this format". Below it, the
/// bytes are reported as unknown (the readings are still listed). Random bytes stay below it in
/// at least 99% of cases (`tests/it/capture_detect.rs` measures this).
pub const CONFIDENT: u8 = 50;

/// The least a complete reading scores before the hint: above the 40 an incomplete one can reach
/// (39, or 40 when the hint names its format).
const COMPLETE_FLOOR: i32 = 41;

/// CBOR tags seen in real payloads: date/time (0, 1), bignums (2, 3), decimal and bigfloat (4, 5),
/// expected base64/base16 (21–23), embedded CBOR (24), URI, base64 and regex text (32–36), UUID
/// (37), sets and maps with any keys (258, 259), the self-describe tag (55799). Any other tag
/// counts as rarely used: random bytes decode to odd tags far more often than payloads do.
const COMMON_TAGS: &[u64] = &[
    0, 1, 2, 3, 4, 5, 21, 22, 23, 24, 32, 33, 34, 35, 36, 37, 258, 259, 55_799,
];

/// One way of reading the bytes.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The format tried.
    pub format: Format,
    /// 0–100: how plausible this reading is, relative to the others.
    pub confidence: u8,
    /// Why, in plain sentences.
    pub reasons: Vec<String>,
    /// The decoded document, or the error with its partial document.
    pub outcome: Result<Document, DecodeError>,
    /// Whether `outcome`'s document is a skeleton: the whole payload's span tree, made a chunk
    /// at a time, with a value that is only the root's keys (or items), each null. Only a
    /// reading made for a face that reads a large payload on demand has one
    /// ([`crate::capture::readings::peel_readings_walking`]).
    pub skeleton: bool,
}

impl Reading {
    /// Whether the whole input decoded.
    pub fn is_complete(&self) -> bool {
        self.outcome.is_ok()
    }

    /// What a report says of this reading, without its document.
    pub fn summary(&self) -> ReadingSummary {
        ReadingSummary {
            format: self.format,
            confidence: self.confidence,
            reasons: self.reasons.clone(),
            complete: self.is_complete(),
            cut_by_limit: cut_by_limit(&self.outcome),
            asked: false,
        }
    }

    /// The reading's summary, and its document handed on (or the error with its partial one).
    pub fn into_parts(self) -> (ReadingSummary, Result<Document, DecodeError>) {
        let summary = ReadingSummary {
            format: self.format,
            confidence: self.confidence,
            reasons: self.reasons,
            complete: self.outcome.is_ok(),
            cut_by_limit: cut_by_limit(&self.outcome),
            asked: false,
        };
        (summary, self.outcome)
    }
}

/// Whether a decode stopped at one of the user's limits (depth, nodes) rather than at bytes
/// that are not the format.
pub(crate) fn cut_by_limit(outcome: &Result<Document, DecodeError>) -> bool {
    matches!(outcome, Err(e) if matches!(e.kind, ErrorKind::Limit(_)))
}

/// One reading of a payload without its document: what the CLI's report and the app's
/// detection line list, once the chosen reading's document has gone on to be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadingSummary {
    /// The format.
    pub format: Format,
    /// 0–100.
    pub confidence: u8,
    /// Why.
    pub reasons: Vec<String>,
    /// Whether every byte decoded.
    pub complete: bool,
    /// Whether the decode stopped at a limit the user can raise (so far, it was this format).
    pub cut_by_limit: bool,
    /// Whether the user asked for this format (`--from`, the app's format choice) rather than
    /// detection choosing it; its reasons then say only how the decode went.
    pub asked: bool,
}

impl ReadingSummary {
    /// Whether this reading says "these bytes are this format": it decoded every byte, reached
    /// [`CONFIDENT`], stopped only at a limit, or is the format the file name or Content-Type
    /// names (a failed reading scores 40 only then). A best reading that is not a claim means
    /// no known format fits (random bytes "read" as one MessagePack integer and a megabyte of
    /// leftovers).
    pub fn is_claim(&self) -> bool {
        self.complete
            || self.cut_by_limit
            || self.confidence >= CONFIDENT
            || i32::from(self.confidence) >= COMPLETE_FLOOR - 1
    }
}

/// Tries every format on `bytes` and returns the readings, most plausible first.
///
/// `hint` is a format suggested by the file name or the user's habits; it breaks ties.
///
/// ```
/// use wirelens::codec::detect::detect;
/// use wirelens::codec::{DecodeOptions, Format};
///
/// let readings = detect(br#"{"id": 7}"#, None, &DecodeOptions::default());
/// assert_eq!(readings[0].format, Format::Json);
/// assert!(readings[0].is_complete());
/// ```
pub fn detect(bytes: &[u8], hint: Option<Format>, options: &DecodeOptions) -> Vec<Reading> {
    detect_knowing(bytes, hint, options, Vec::new())
}

/// A document of the payload already made, handed to [`detect_knowing`] for its format's
/// reading.
#[derive(Debug)]
pub(crate) enum KnownDocument {
    /// Decoded whole (by peeling, with options that give the same outcome).
    Whole(Document),
    /// The whole payload's span tree with a skeleton value: the root's keys (or items), each
    /// null; and [`rare_values`] of the whole value, counted as it was read.
    Skeleton(Document, (usize, usize)),
}

impl KnownDocument {
    fn format(&self) -> Format {
        match self {
            KnownDocument::Whole(doc) | KnownDocument::Skeleton(doc, _) => doc.format,
        }
    }
}

/// The reading [`detect`] makes of `bytes` as `doc`'s format, from `doc` (a document made
/// elsewhere with these options).
pub(crate) fn reading_of(
    bytes: &[u8],
    hint: Option<Format>,
    options: &DecodeOptions,
    doc: Document,
) -> Reading {
    read_as(bytes, doc.format, hint, options, Ok(doc), None)
}

/// [`detect`], with some formats' documents already made (at most one per format).
pub(crate) fn detect_knowing(
    bytes: &[u8],
    hint: Option<Format>,
    options: &DecodeOptions,
    mut known: Vec<KnownDocument>,
) -> Vec<Reading> {
    // Avro is a reading only with the writer's schema: without one its bytes cannot be told
    // from noise, and it is left out rather than listed as a failure every time.
    let mut readings: Vec<Reading> = Format::ALL
        .iter()
        .filter(|&&format| format != Format::Avro || options.avro.is_some())
        .map(|&format| {
            let at = known.iter().position(|k| k.format() == format);
            let (outcome, rare) = match at.map(|i| known.swap_remove(i)) {
                Some(KnownDocument::Whole(doc)) => (Ok(doc), None),
                Some(KnownDocument::Skeleton(doc, rare)) => (Ok(doc), Some(rare)),
                None => (super::decode(bytes, format, options), None),
            };
            read_as(bytes, format, hint, options, outcome, rare)
        })
        .collect();
    order(&mut readings);
    readings
}

/// [`detect`], taking each format's reading from `known` where it holds one (readings made of
/// these bytes with this hint, and options that decode that format the same) rather than
/// decoding that format again.
pub(crate) fn detect_reusing(
    bytes: &[u8],
    hint: Option<Format>,
    options: &DecodeOptions,
    mut known: Vec<Reading>,
) -> Vec<Reading> {
    let mut readings: Vec<Reading> = Format::ALL
        .iter()
        .filter(|&&format| format != Format::Avro || options.avro.is_some())
        .map(
            |&format| match known.iter().position(|r| r.format == format) {
                Some(i) => known.swap_remove(i),
                None => {
                    let outcome = super::decode(bytes, format, options);
                    read_as(bytes, format, hint, options, outcome, None)
                }
            },
        )
        .collect();
    order(&mut readings);
    readings
}

/// Most plausible first; equal confidences in [`Format::ALL`] order.
fn order(readings: &mut [Reading]) {
    readings.sort_by_key(|r| {
        let rank = Format::ALL.iter().position(|&f| f == r.format);
        (std::cmp::Reverse(r.confidence), rank)
    });
}

/// Readings made by [`detect`] without a hint, turned into what `detect` gives with `hint`:
/// the hinted format's reading gains its bonus and reason, and the order is made again.
pub(crate) fn add_hint(readings: &mut [Reading], hint: Option<Format>) {
    let Some(hint) = hint else {
        return;
    };
    for r in readings.iter_mut().filter(|r| r.format == hint) {
        r.confidence = hinted(i32::from(r.confidence), r.outcome.is_ok()).clamp(0, 100) as u8;
        r.reasons.push(HINT_REASON.into());
    }
    order(readings);
}

/// What a hint adds to its format's confidence, and the reason it gives.
const HINT_BONUS: i32 = 5;
const HINT_REASON: &str = "the file name, Content-Type or framing names it";

/// A score with the hint's bonus. A complete reading gains [`HINT_BONUS`]. A failed one takes
/// the top of the failed readings' range, 40 (never a complete reading's): when no format reads
/// the bytes whole, the one the file name or Content-Type names is the error the user asked
/// about (a truncated `.msgpack` file whose first bytes also start some protobuf field is still
/// a MessagePack file cut short).
fn hinted(score: i32, complete: bool) -> i32 {
    if complete {
        score + HINT_BONUS
    } else {
        COMPLETE_FLOOR - 1
    }
}

/// `outcome` read as `format`: its confidence and reasons. With `rare`, the document's value is
/// only its root's skeleton ([`KnownDocument::Skeleton`]) and `rare` is [`rare_values`] of the
/// whole value.
fn read_as(
    bytes: &[u8],
    format: Format,
    hint: Option<Format>,
    options: &DecodeOptions,
    outcome: Result<Document, DecodeError>,
    rare: Option<(usize, usize)>,
) -> Reading {
    let mut reasons = Vec::new();
    let mut score: i32 = match &outcome {
        Ok(doc) => {
            let what = describe(&doc.value);
            reasons.push(match format {
                Format::Json => format!("valid JSON: {what}, all {} bytes", bytes.len()),
                _ => format!(
                    "consumed all {} bytes as {} {what}",
                    bytes.len(),
                    format.title()
                ),
            });
            let mut s = match format {
                // Text that parses as JSON is JSON: binary formats almost never look like text.
                Format::Json => 90,
                // With the user's message type, a full decode is strong evidence.
                Format::Protobuf if options.message.is_some() => 75,
                // Avro is read only with the user's schema, and every byte fit it.
                Format::Avro => 75,
                // Without a schema, protobuf's wire format accepts many byte strings.
                Format::Protobuf => {
                    reasons.push("read without a schema".into());
                    40 - unusual_fields(&doc.value, &mut reasons)
                }
                _ => 60,
            };
            // JSON has no rarely used types: its values are not counted.
            let rare = match (format, rare) {
                (Format::Json, _) => (0, 0),
                (_, Some(rare)) => rare,
                (_, None) => rare_values(&doc.value),
            };
            s += plausibility(&doc.value, format, rare, &mut reasons);
            if bytes.len() < 4 && format != Format::Json {
                s -= 20;
                reasons.push("too short to be sure".into());
            }
            // Whatever the penalties, a reading that consumed every byte stays above every
            // reading that did not (those score at most 40); below the floor, scores are
            // squeezed into 41–49 so they still order the complete readings.
            if s < COMPLETE_FLOOR {
                COMPLETE_FLOOR + s.max(0) * 9 / COMPLETE_FLOOR
            } else {
                s
            }
        }
        Err(e) => {
            let consumed = e.offset.min(bytes.len());
            // Up to 29 for the share of the input read: a failed reading scores at most 39, so
            // a hinted one (raised to 40 by `hinted`) comes first among them.
            let frac = if bytes.is_empty() {
                0
            } else {
                (consumed * 29 / bytes.len()) as i32
            };
            if e.kind == ErrorKind::TrailingData {
                reasons.push(format!(
                    "a complete {} value in bytes 0..{}, then {} more bytes",
                    format.title(),
                    e.offset,
                    bytes.len().saturating_sub(e.offset)
                ));
                10 + frac
            } else if matches!(e.kind, ErrorKind::Limit(_)) {
                // Every byte read was valid; a limit (nesting, values) stopped the reading, not
                // the bytes, so it ranks as a complete value followed by more.
                reasons.push(format!(
                    "cut short at byte {} by a limit: {}",
                    e.offset, e.message
                ));
                10 + frac
            } else {
                reasons.push(format!("stopped at byte {}: {}", e.offset, e.message));
                frac
            }
        }
    };
    if hint == Some(format) {
        score = hinted(score, outcome.is_ok());
        reasons.push(HINT_REASON.into());
    }
    Reading {
        format,
        confidence: score.clamp(0, 100) as u8,
        reasons,
        outcome,
        skeleton: rare.is_some(),
    }
}

/// The format whose container `bytes` start with, as [`skeleton`] walks them: JSON's `{` or
/// `[`, else a MessagePack or CBOR container head. A MessagePack fixmap or fixarray head is also
/// a CBOR array head (0x80–0x9b): MessagePack's unless `cbor_first`.
pub(crate) fn container_format(bytes: &[u8], cbor_first: bool) -> Option<Format> {
    let order = if cbor_first {
        [Format::Json, Format::Cbor, Format::MessagePack]
    } else {
        [Format::Json, Format::MessagePack, Format::Cbor]
    };
    order
        .into_iter()
        .find(|&f| super::stream::starts_with_container(bytes, f))
}

/// A payload's span tree as `format`, made a chunk at a time without its value, in a document
/// whose value is the root's skeleton: its keys (or items) with null values; with the count of
/// its values of rarely used types ([`rare_values`]), which is all detection's reading needs
/// besides. `None` when the walk does not apply (the ordinary decode then reports what is
/// wrong).
pub(crate) fn skeleton(
    bytes: &[u8],
    format: Format,
    options: &DecodeOptions,
) -> Option<(Document, (usize, usize))> {
    let limits = &options.limits;
    // JSON has no rarely used types to count.
    let (spans, rare) = match format {
        Format::Json => (
            super::stream::spans_in_chunks(bytes, format, limits, super::stream::CHUNK)?,
            (0, 0),
        ),
        _ => {
            super::stream::spans_counting(bytes, format, limits, super::stream::CHUNK, rare_values)?
        }
    };
    let root = spans.root()?;
    let value = match spans.kind(root) {
        crate::model::Kind::Map => Value::Map(
            spans
                .children(root)
                .map(|child| {
                    let key = match spans.segment(child) {
                        crate::model::Segment::Key(k) => Value::text(spans.key_text(k)),
                        _ => Value::Null,
                    };
                    (key, Value::Null)
                })
                .collect(),
        ),
        _ => Value::Array(vec![Value::Null; spans.children(root).count()]),
    };
    let document = Document {
        format,
        value,
        spans,
    };
    Some((document, rare))
}

/// A penalty for a schema-less protobuf reading whose top-level field numbers are above 1000:
/// schemas number fields from 1 up, while bytes of another kind (or a length-delimited stream
/// read whole) parse to scattered large numbers.
fn unusual_fields(value: &Value, reasons: &mut Vec<String>) -> i32 {
    let large = value.as_map().map_or(0, |entries| {
        entries
            .iter()
            .filter(|(k, _)| matches!(k, Value::Int(n) if *n > 1000))
            .count()
    });
    if large == 0 {
        return 0;
    }
    reasons.push(format!("{large} field number(s) above 1000"));
    10
}

/// Adjusts a full reading's score by how much the value looks like real data of that format:
/// a container at the top, text keys, and few of its values (`odd` of `total`, from
/// [`rare_values`]) of rarely used types.
fn plausibility(
    value: &Value,
    format: Format,
    (odd, total): (usize, usize),
    reasons: &mut Vec<String>,
) -> i32 {
    let mut s = 0;
    let top = value.untagged();
    if matches!(top, Value::Map(_) | Value::Array(_)) {
        s += 10;
    }
    if let Some(entries) = top.as_map() {
        if !entries.is_empty() && entries.iter().all(|(k, _)| matches!(k, Value::Text(_))) {
            s += 10;
            reasons.push("map keys are all text".into());
        }
    }
    if format != Format::Json && odd > 0 {
        let penalty = (odd * 30 / total.max(1)) as i32 + 5;
        s -= penalty;
        reasons.push(format!("{odd} of {total} values are rarely used types"));
    }
    s
}

/// How many of `value`'s values (keys aside, a tag and its content as one) are of rarely used
/// types (CBOR simple values, undefined, uncommon tags; MessagePack extensions), and how many
/// values there are.
pub(crate) fn rare_values(value: &Value) -> (usize, usize) {
    let mut odd = 0usize;
    let mut total = 0usize;
    for v in value.preorder() {
        total += 1;
        if matches!(v, Value::Simple(_) | Value::Undefined | Value::Ext(..))
            || matches!(v, Value::Tag(t, inner) if !COMMON_TAGS.contains(t)
                // Decimal fractions and bigfloats are [exponent, mantissa].
                || (matches!(t, 4 | 5) && !matches!(**inner, Value::Array(_))))
        {
            odd += 1;
        }
    }
    (odd, total)
}

fn describe(v: &Value) -> String {
    match v.untagged() {
        Value::Map(m) if m.iter().all(|(k, _)| matches!(k, Value::Int(_))) && !m.is_empty() => {
            format!("message of {} fields", m.len())
        }
        Value::Map(m) => format!("map of {}", m.len()),
        Value::Array(a) => format!("array of {}", a.len()),
        other => other.kind().to_string(),
    }
}
