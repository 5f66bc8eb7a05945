//! The JSON encoder: serde_json's output byte for byte, with spans and fidelity notes.

use std::borrow::Cow;

use base64::Engine as _;

use super::scan_number;
use crate::codec::{
    Depth, EncodeError, EncodeOptions, Encoded, Format, NoteKind, Notes, Spans, Step, Stop,
};
use crate::model::{FloatWidth, Kind, NodeId, Segment, Span, SpanTreeBuilder, Value};

/// Encodes `value`; see the module docs of [`super`].
pub(super) fn encode(value: &Value, options: &EncodeOptions) -> Result<Encoded, EncodeError> {
    encode_with(value, options, Spans::On, Depth::ANY)
        .map(|(encoded, _)| encoded)
        .map_err(|stop| stop.unbounded(Format::Json))
}

/// How deep container map keys may nest in container map keys. Each such key is written as the
/// JSON text of its value, escaped as a string, and escaping doubles every `"` and `\` of the
/// text inside it: the output grows twofold per level (a 400-byte CBOR input of 36 levels
/// would be 2^36 bytes). Three levels cost at most eightfold.
const MAX_KEY_NESTING: usize = 3;

/// Encodes `value`, with the spans of the output unless `spans` is [`Spans::Off`]. The flag returned is `true`: the
/// JSON encoder places notes without spans too (the MessagePack and CBOR ones give up instead).
/// Nesting deeper than `depth` stops it with [`Stop::Deep`].
pub(crate) fn encode_with(
    value: &Value,
    options: &EncodeOptions,
    spans: Spans<'_>,
    depth: Depth,
) -> Result<(Encoded, bool), Stop> {
    encode_in_key(value, options, spans, 0, (0, depth))
}

/// [`encode_with`] of a value that is the map key of `key_depth` enclosing maps, written while
/// `nested.0` containers are open (of at most `nested.1`).
fn encode_in_key(
    value: &Value,
    options: &EncodeOptions,
    spans: Spans<'_>,
    key_depth: usize,
    nested: (usize, Depth),
) -> Result<(Encoded, bool), Stop> {
    let mut e = Encoder {
        out: Vec::new(),
        builder: spans.builder(value),
        notes: Notes::new(),
        canonical: options.canonical,
        pretty: options.pretty,
        level: 0,
        key_depth,
        spans: spans.on(),
        trail: Vec::new(),
        depth: nested.0,
        max_depth: nested.1 .0,
        deep: false,
    };
    if let Err(e2) = e.value(value, Segment::Root, None) {
        return Err(if e.deep { Stop::Deep } else { Stop::Error(e2) });
    }
    Ok((
        Encoded {
            format: Format::Json,
            bytes: e.out,
            spans: spans.finish(e.builder),
            notes: e.notes.into_vec(),
        },
        true,
    ))
}

struct Encoder<'v> {
    out: Vec<u8>,
    builder: SpanTreeBuilder,
    notes: Notes,
    canonical: bool,
    pretty: bool,
    /// Nesting level, for pretty indentation.
    level: usize,
    /// How many container map keys enclose this encoding (see [`MAX_KEY_NESTING`]).
    key_depth: usize,
    /// Whether nodes are recorded; without them, notes and errors take their path from `trail`.
    spans: bool,
    /// Without spans: the steps from the root to the value being written.
    trail: Vec<Step<'v>>,
    /// Containers and tags open (with those of the encodings this one is a map key in).
    depth: usize,
    /// How many may be open before the encoder stops ([`Depth`]).
    max_depth: usize,
    /// Set when it stopped for that: its error is [`Stop::Deep`].
    deep: bool,
}

/// How characters are written inside a string: 0 as is, else the escape letter (`u` for `\u00XX`).
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = b'u';
        c += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends the UTF-8 text `bytes` as a quoted JSON string, escaped as serde_json does.
#[inline]
pub(super) fn write_string(out: &mut Vec<u8>, bytes: &[u8]) {
    if any_escape(bytes) {
        write_escaped(out, bytes);
        return;
    }
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    out.extend_from_slice(bytes);
    out.push(b'"');
}

/// [`write_string`] of a [`Value::Text`]'s text: one kept in place is copied as its whole room,
/// a copy of fixed size, and the output cut back to its length.
#[inline(always)]
pub(super) fn write_text(out: &mut Vec<u8>, text: &crate::model::CompactText) {
    let Some((room, len)) = text.inline_room() else {
        write_string(out, text.as_bytes());
        return;
    };
    let bytes = room.get(..len).unwrap_or_default();
    if any_escape(bytes) {
        write_escaped(out, bytes);
        return;
    }
    let at = out.len();
    out.reserve(room.len() + 2);
    out.push(b'"');
    out.extend_from_slice(room);
    out.truncate(at + 1 + len);
    out.push(b'"');
}

/// [`write_string`] of text with bytes to escape: kept out of line, so the common plain text
/// costs its caller no more than the scan and the copy.
#[cold]
#[inline(never)]
fn write_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    // Eight bytes at a time up to one that needs escaping; the last few one by one.
    while let Some(word) = bytes
        .get(i..i + 8)
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
    {
        let mask = escapes(u64::from_le_bytes(word));
        if mask == 0 {
            i += 8;
            continue;
        }
        i += (mask.trailing_zeros() / 8) as usize;
        escape_at(out, bytes, &mut run, i);
        i += 1;
    }
    while i < bytes.len() {
        escape_at(out, bytes, &mut run, i);
        i += 1;
    }
    out.extend_from_slice(bytes.get(run..).unwrap_or_default());
    out.push(b'"');
}

/// Whether any byte of `bytes` needs escaping: whole words, the last one overlapping the one
/// before; below eight bytes, two overlapping halves (or, below four, the first, middle and last
/// bytes, padded with a letter), so a short key costs one test and no loop.
#[inline]
fn any_escape(bytes: &[u8]) -> bool {
    let n = bytes.len();
    let word = |at: usize| {
        bytes
            .get(at..)
            .and_then(|w| w.first_chunk::<8>())
            .map_or(0, |w| escapes_any(u64::from_le_bytes(*w)))
    };
    if n >= 8 {
        let mut found = 0;
        let mut i = 0;
        while i + 8 <= n {
            found |= word(i);
            i += 8;
        }
        if i < n {
            found |= word(n - 8);
        }
        return found != 0;
    }
    let half = |at: usize| {
        bytes
            .get(at..)
            .and_then(|w| w.first_chunk::<4>())
            .map_or(0, |w| u64::from(u32::from_le_bytes(*w)))
    };
    let packed = if n >= 4 {
        half(0) | half(n - 4) << 32
    } else {
        let byte = |at: usize| u64::from(bytes.get(at).copied().unwrap_or(b'A'));
        if n == 0 {
            return false;
        }
        byte(0) | byte(n / 2) << 8 | byte(n - 1) << 16 | 0x4141_4141_4100_0000
    };
    escapes_any(packed) != 0
}

/// Nonzero exactly when a byte of `word` is below 0x20, a quote or a backslash (which bytes,
/// [`escapes`] says): the classic tests for a byte below `n` and for a zero byte, whose borrows
/// can mark wrong bytes above a true one but never make a word without one nonzero.
#[inline]
fn escapes_any(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    (below(word, 0x20) | below(quote, 1) | below(backslash, 1)) & HIGH
}

/// If `bytes[at]` needs escaping: writes the bytes from `run` up to it and its escape, and moves
/// `run` past it.
#[inline]
fn escape_at(out: &mut Vec<u8>, bytes: &[u8], run: &mut usize, at: usize) {
    let Some(&c) = bytes.get(at) else {
        return;
    };
    let esc = ESCAPE[usize::from(c)];
    if esc == 0 {
        return;
    }
    out.extend_from_slice(bytes.get(*run..at).unwrap_or_default());
    *run = at + 1;
    if esc == b'u' {
        out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(c >> 4)],
            HEX[usize::from(c & 0xf)],
        ]);
    } else {
        out.extend_from_slice(&[b'\\', esc]);
    }
}

/// The high bit of each byte of `word` that is below 0x20, a quote or a backslash (the bytes
/// [`ESCAPE`] marks), and no other bit: no carry crosses from one byte into the next.
fn escapes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // Per byte: (b & 0x7f) + 0x7f sets the high bit unless the low seven bits are zero; or-ing
    // `b` sets it for bytes with their own high bit. Zero bytes are those left clear.
    let zero = |x: u64| !(((x & LOW).wrapping_add(LOW)) | x) & HIGH;
    // Per byte: (b & 0x7f) + 0x60 has its high bit set unless b & 0x7f < 0x20.
    let below_space = !(((word & LOW).wrapping_add(ONES * 0x60)) | word) & HIGH;
    below_space | zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\')))
}

/// Appends the decimal digits of `n` (no allocation for the 64-bit range).
pub(super) fn write_int(out: &mut Vec<u8>, n: i128) {
    let Ok(m) = u64::try_from(n.unsigned_abs()) else {
        out.extend_from_slice(n.to_string().as_bytes());
        return;
    };
    if n < 0 {
        out.push(b'-');
    }
    write_u64(out, m);
}

/// Appends the decimal digits of `m`.
#[inline]
fn write_u64(out: &mut Vec<u8>, mut m: u64) {
    if m < 10 {
        out.push(b'0' + m as u8);
        return;
    }
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Powers of ten exact in a float64, for [`write_f64`].
const POW10: [f64; 9] = [1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8];
const POW10_INT: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Appends the finite float `x` as ryu (and so serde_json) writes it: its shortest round-trip
/// digits.
///
/// Most floats in documents are short decimals (`55.27`): when `x` is the float nearest to
/// `v / 10^k` for an integer `v` below 10^15 and `k` up to 8 (found by trying each `k`; the
/// division is exact arithmetic rounded once, as parsing the decimal rounds it), those digits are
/// the shortest ones: two decimals of at most 15 significant digits never round to the same
/// float64, so no shorter one can. Within 10^-4 ≤ |x| < 10^15 ryu writes them positionally,
/// as here (`v / 10^k`, a point, `v % 10^k` to `k` digits, or `.0` after a whole number). Any
/// other float goes to ryu.
pub(super) fn write_f64(out: &mut Vec<u8>, x: f64) {
    let a = x.abs();
    if (1e-4..1e15).contains(&a) {
        for (k, (&p, &pi)) in POW10.iter().zip(&POW10_INT).enumerate() {
            let y = a * p;
            if y >= 1e15 {
                break;
            }
            let v = (y + 0.5) as u64;
            if v as f64 / p != a {
                continue;
            }
            if x < 0.0 {
                out.push(b'-');
            }
            write_u64(out, v / pi);
            out.push(b'.');
            if k == 0 {
                out.push(b'0');
                return;
            }
            let frac = v % pi;
            let mut digits = [b'0'; 8];
            let mut f = frac;
            for d in digits[..k].iter_mut().rev() {
                *d = b'0' + (f % 10) as u8;
                f /= 10;
            }
            out.extend_from_slice(&digits[..k]);
            return;
        }
    }
    out.extend_from_slice(ryu::Buffer::new().format_finite(x).as_bytes());
}

/// A CBOR tag's name, if it is a well-known one.
fn tag_name(tag: u64) -> Option<&'static str> {
    Some(match tag {
        0 => "date/time text",
        1 => "epoch time",
        2 => "positive bignum",
        3 => "negative bignum",
        4 => "decimal fraction",
        5 => "bigfloat",
        21 => "expected base64url",
        22 => "expected base64",
        23 => "expected base16",
        24 => "embedded CBOR",
        32 => "URI",
        55799 => "self-describe CBOR",
        _ => return None,
    })
}

/// What a value is called in a note ("the number is written as is").
fn noun(v: &Value) -> &'static str {
    match v.untagged() {
        Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Decimal(_) => "number",
        Value::Text(_) => "text",
        Value::Bytes(_) => "byte string",
        Value::Array(_) => "array",
        Value::Map(_) => "map",
        _ => "value",
    }
}

pub(super) const TWO_POW_53: u128 = 1 << 53;

/// The note on an integer beyond ±2^53 (the plain path writes the same).
pub(super) fn beyond_2_53(n: i128) -> String {
    format!("integer {n} is beyond ±2^53; JavaScript readers will round it")
}

impl<'v> Encoder<'v> {
    /// Goes one container or tag deeper; past `max_depth`, stops (see [`Stop::Deep`]).
    #[inline]
    fn enter(&mut self) -> Result<(), EncodeError> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(crate::codec::stop_deep(&mut self.deep, Format::Json));
        }
        Ok(())
    }

    /// Records a note on node `id` (without spans: on the value being written).
    fn note(&mut self, kind: NoteKind, id: NodeId, message: impl FnOnce() -> String) {
        let path = self.error_path(id);
        self.notes.add(kind, path, message);
    }

    /// The path of node `id` (without spans: of the value being written).
    fn error_path(&self, id: NodeId) -> crate::model::Path {
        if self.spans {
            self.builder.path(id)
        } else {
            Step::path(&self.trail)
        }
    }

    fn open(
        &mut self,
        kind: Kind,
        segment: Segment,
        key: Option<Span>,
        start: usize,
        header_end: usize,
    ) -> NodeId {
        if self.spans {
            self.builder.open(kind, segment, key, start, header_end)
        } else {
            NodeId(0)
        }
    }

    fn close(&mut self, payload_end: usize, end: usize) {
        if self.spans {
            self.builder.close(payload_end, end);
        }
    }

    /// Adds a scalar node for the bytes from `start` to the end of the output.
    fn leaf(
        &mut self,
        kind: Kind,
        segment: Segment,
        key: Option<Span>,
        start: usize,
        quoted: bool,
    ) -> NodeId {
        let end = self.out.len();
        let (header_end, payload) = if quoted {
            (
                start + 1,
                Span::new(start + 1, end.saturating_sub(1).max(start + 1)),
            )
        } else {
            (start, Span::new(start, end))
        };
        if !self.spans {
            return NodeId(0);
        }
        self.builder.leaf(
            kind,
            segment,
            key,
            Span::new(start, end),
            header_end,
            payload,
        )
    }

    fn text_leaf(&mut self, s: &[u8], segment: Segment, key: Option<Span>) -> NodeId {
        let start = self.out.len();
        write_string(&mut self.out, s);
        self.leaf(Kind::Text, segment, key, start, true)
    }

    fn newline(&mut self) {
        self.out.push(b'\n');
        for _ in 0..self.level {
            self.out.extend_from_slice(b"  ");
        }
    }

    /// Writes one value as the item `segment` of the current container; returns its node.
    fn value(
        &mut self,
        v: &'v Value,
        segment: Segment,
        key: Option<Span>,
    ) -> Result<NodeId, EncodeError> {
        let start = self.out.len();
        let id = match v {
            Value::Null => {
                self.out.extend_from_slice(b"null");
                self.leaf(Kind::Null, segment, key, start, false)
            }
            Value::Undefined | Value::Simple(_) => {
                self.out.extend_from_slice(b"null");
                let id = self.leaf(Kind::Null, segment, key, start, false);
                self.note(NoteKind::SimpleAsNull, id, || match v {
                    Value::Simple(n) => format!("CBOR simple value {n} written as null"),
                    _ => "CBOR undefined written as null".to_string(),
                });
                id
            }
            Value::Bool(b) => {
                self.out
                    .extend_from_slice(if *b { b"true" as &[u8] } else { b"false" });
                self.leaf(Kind::Bool, segment, key, start, false)
            }
            Value::Int(n) => {
                let n = *n;
                write_int(&mut self.out, n);
                let id = self.leaf(Kind::Int, segment, key, start, false);
                if n.unsigned_abs() > TWO_POW_53 {
                    self.note(NoteKind::IntegerPrecision, id, || beyond_2_53(n));
                }
                id
            }
            Value::BigInt(n) => self.big_int(n, segment, key, start),
            Value::Float(f) => self.float(f, segment, key, start),
            Value::Decimal(d) => self.decimal(d, segment, key, start)?,
            Value::Text(s) => {
                write_text(&mut self.out, s);
                self.leaf(Kind::Text, segment, key, start, true)
            }
            Value::Bytes(_) | Value::Raw(_) | Value::Ext(..) | Value::Timestamp(_) => {
                self.as_text(v, segment, key)
            }
            Value::Tag(t, inner) => {
                self.enter()?;
                let id = self.value(inner, segment, key)?;
                self.depth -= 1;
                let t = *t;
                self.note(NoteKind::TagDropped, id, || {
                    let name = tag_name(t).map(|n| format!(" ({n})")).unwrap_or_default();
                    format!(
                        "CBOR tag {t}{name} dropped; the {} is written as is",
                        noun(inner)
                    )
                });
                id
            }
            Value::Array(items) => {
                self.enter()?;
                self.out.push(b'[');
                let id = self.open(Kind::Array, segment, key, start, start + 1);
                if !items.is_empty() {
                    self.level += 1;
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            self.out.push(b',');
                        }
                        if self.pretty {
                            self.newline();
                        }
                        if !self.spans {
                            self.trail.push(Step::Index(i));
                        }
                        self.value(
                            item,
                            Segment::Index(u32::try_from(i).unwrap_or(u32::MAX)),
                            None,
                        )?;
                        if !self.spans {
                            self.trail.pop();
                        }
                    }
                    self.level -= 1;
                    if self.pretty {
                        self.newline();
                    }
                }
                let close = self.out.len();
                self.out.push(b']');
                self.close(close, close + 1);
                self.depth -= 1;
                id
            }
            Value::Map(entries) => self.map(entries, segment, key, start)?,
        };
        Ok(id)
    }

    /// An integer past 64 bits, as its digits (noted: JavaScript readers round it).
    #[inline]
    fn big_int(
        &mut self,
        n: &num_bigint::BigInt,
        segment: Segment,
        key: Option<Span>,
        start: usize,
    ) -> NodeId {
        let text = n.to_string();
        self.out.extend_from_slice(text.as_bytes());
        let id = self.leaf(Kind::Int, segment, key, start, false);
        self.note(NoteKind::IntegerPrecision, id, || {
            // A literal of thousands of digits is named by its start and length.
            let shown = match text.get(..40) {
                Some(head) if text.len() > 48 => {
                    format!("{head}… ({} digits)", text.trim_start_matches('-').len())
                }
                _ => text.clone(),
            };
            format!("integer {shown} is beyond ±2^53; JavaScript readers will round it")
        });
        id
    }

    /// A float as its shortest round-trip digits (a narrower float noted as widened), or null
    /// (noted) for NaN and the infinities.
    #[inline]
    fn float(
        &mut self,
        f: &crate::model::Float,
        segment: Segment,
        key: Option<Span>,
        start: usize,
    ) -> NodeId {
        let x = f.value;
        if x.is_finite() {
            write_f64(&mut self.out, x);
            let id = self.leaf(Kind::Float(FloatWidth::F64), segment, key, start, false);
            if f.width != FloatWidth::F64 {
                let bits = f.width.bits();
                self.note(NoteKind::FloatWidth, id, || {
                    // Name the number as its own width would print it (float32 0.1, not
                    // 0.10000000149011612, which is what the JSON text shows).
                    let shown = match f.width {
                        FloatWidth::F16 => half::f16::from_f64(x).to_string(),
                        FloatWidth::F32 => ryu::Buffer::new().format_finite(x as f32).to_string(),
                        FloatWidth::F64 => crate::model::format_float(x),
                    };
                    format!(
                        "float{bits} {shown} written as a JSON number; readers will see float64"
                    )
                });
            }
            id
        } else {
            self.out.extend_from_slice(b"null");
            let id = self.leaf(Kind::Null, segment, key, start, false);
            self.note(NoteKind::NonFinite, id, || {
                format!(
                    "{} written as null; JSON has no NaN or Infinity",
                    crate::model::format_float(x)
                )
            });
            id
        }
    }

    /// A decimal literal as it is, when it is a JSON number.
    #[inline]
    fn decimal(
        &mut self,
        d: &str,
        segment: Segment,
        key: Option<Span>,
        start: usize,
    ) -> Result<NodeId, EncodeError> {
        let ok = matches!(scan_number(d.as_bytes(), 0), Ok(scan) if scan.end == d.len());
        if !ok {
            self.out.truncate(start);
            let id = self.leaf(Kind::Decimal, segment, key, start, false);
            return Err(EncodeError {
                format: Format::Json,
                path: self.error_path(id),
                message: format!("the decimal {d:?} is not a JSON number literal"),
            });
        }
        self.out.extend_from_slice(d.as_bytes());
        Ok(self.leaf(Kind::Decimal, segment, key, start, false))
    }

    /// Bytes, raw fields, MessagePack extensions and timestamps, which JSON has no type for:
    /// written as text (base64, or RFC 3339), noted.
    #[inline]
    fn as_text(&mut self, v: &'v Value, segment: Segment, key: Option<Span>) -> NodeId {
        match v {
            Value::Bytes(b) => {
                let id = self.text_leaf(
                    &base64::engine::general_purpose::STANDARD
                        .encode(b)
                        .into_bytes(),
                    segment,
                    key,
                );
                let n = b.len();
                self.note(NoteKind::BytesAsBase64, id, || {
                    format!("byte string of {n} bytes written as base64 text")
                });
                id
            }
            Value::Raw(raw) => {
                let id = self.text_leaf(
                    &base64::engine::general_purpose::STANDARD
                        .encode(&raw.data)
                        .into_bytes(),
                    segment,
                    key,
                );
                self.note(NoteKind::RawField, id, || {
                    format!(
                        "{} (written as base64 text)",
                        crate::codec::raw_field_note(raw)
                    )
                });
                id
            }
            Value::Ext(t, d) => {
                let id = self.text_leaf(
                    &base64::engine::general_purpose::STANDARD
                        .encode(d)
                        .into_bytes(),
                    segment,
                    key,
                );
                let (t, n) = (*t, d.len());
                self.note(NoteKind::ExtDropped, id, || {
                    format!("MessagePack ext type {t} dropped; its {n} data bytes are written as base64 text")
                });
                id
            }
            Value::Timestamp(ts) => {
                let text = ts.to_rfc3339();
                let id = self.text_leaf(text.as_bytes(), segment, key);
                self.note(NoteKind::TimestampAsText, id, || {
                    format!("timestamp {text} written as RFC 3339 text")
                });
                id
            }
            _ => unreachable!("only bytes, raw fields, extensions and timestamps are text"),
        }
    }

    /// Writes a map: keys converted to text, sorted when canonical, duplicates noted.
    fn map(
        &mut self,
        entries: &'v [(Value, Value)],
        segment: Segment,
        key: Option<Span>,
        start: usize,
    ) -> Result<NodeId, EncodeError> {
        self.enter()?;
        self.out.push(b'{');
        let id = self.open(Kind::Map, segment, key, start, start + 1);
        if !self.canonical && entries.iter().all(|(k, _)| matches!(k, Value::Text(_))) {
            // Text keys are written as they are, in order: no list of converted keys to build.
            let text = |k: &'v Value| match k {
                Value::Text(s) => s.as_bytes(),
                _ => &[],
            };
            let repeats = crate::codec::repeats::repeated(entries.len(), |i| {
                entries.get(i).map_or(&[][..], |(k, _)| text(k))
            });
            self.note_repeat(
                id,
                repeats
                    .first()
                    .and_then(|&i| entries.get(i))
                    .map(|(k, _)| text(k)),
            );
            self.entries(entries.len(), entries.iter().map(|(k, v)| (text(k), k, v)))?;
        } else {
            let mut list = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                let nested = (self.depth, Depth(self.max_depth));
                let text = match key_text(k, self.canonical, self.key_depth, nested) {
                    Ok(text) => text,
                    Err(Stop::Deep) => {
                        return Err(crate::codec::stop_deep(&mut self.deep, Format::Json));
                    }
                    Err(Stop::Error(mut e)) => {
                        if e.path.is_root() {
                            e.path = self.error_path(id);
                        }
                        return Err(e);
                    }
                };
                list.push((text, k, v));
            }
            if self.canonical {
                list.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            }
            let repeats = crate::codec::repeats::repeated(list.len(), |i| {
                list.get(i).map_or(&[][..], |(text, _, _)| text.as_bytes())
            });
            let first = repeats.first().and_then(|&i| list.get(i));
            self.note_repeat(id, first.map(|(text, _, _)| text.as_bytes()));
            let items = list.iter().map(|(text, k, v)| (text.as_bytes(), *k, *v));
            self.entries(list.len(), items)?;
        }
        let close = self.out.len();
        self.out.push(b'}');
        self.close(close, close + 1);
        self.depth -= 1;
        Ok(id)
    }

    /// Notes on map `id` that its key `repeated` (the first key that repeats) appears more than
    /// once.
    fn note_repeat(&mut self, id: NodeId, repeated: Option<&[u8]>) {
        if let Some(key) = repeated {
            let text = String::from_utf8_lossy(key).into_owned();
            self.note(NoteKind::DuplicateKey, id, || {
                format!("key {text:?} appears more than once in this map; most readers keep only one of the entries")
            });
        }
    }

    /// Writes a map's `len` entries: each key's text (UTF-8 bytes), the key, and its value.
    fn entries<'t>(
        &mut self,
        len: usize,
        items: impl Iterator<Item = (&'t [u8], &'v Value, &'v Value)>,
    ) -> Result<(), EncodeError> {
        if len == 0 {
            return Ok(());
        }
        self.level += 1;
        for (i, (text, k, v)) in items.enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            if self.pretty {
                self.newline();
            }
            let key_start = self.out.len();
            match k {
                // The same bytes as `text`, copied from where the key keeps them.
                Value::Text(s) => write_text(&mut self.out, s),
                _ => write_string(&mut self.out, text),
            }
            let key_span = Span::new(key_start, self.out.len());
            self.out.push(b':');
            if self.pretty {
                self.out.push(b' ');
            }
            let seg = if self.spans {
                self.builder.segment_for_key(k)
            } else {
                self.trail.push(Step::Key(k));
                Segment::Root
            };
            let child = self.value(v, seg, Some(key_span))?;
            if !matches!(k, Value::Text(_)) {
                self.non_text_key(k, child, text);
            }
            if !self.spans {
                self.trail.pop();
            }
        }
        self.level -= 1;
        if self.pretty {
            self.newline();
        }
        Ok(())
    }

    /// Notes that map key `k` was written as the string `text`.
    #[cold]
    fn non_text_key(&mut self, k: &Value, child: NodeId, text: &[u8]) {
        let summary = k.summary(48);
        let kind = k.kind();
        let text = String::from_utf8_lossy(text).into_owned();
        self.note(NoteKind::NonTextKey, child, || {
            format!("{kind} map key {summary} written as the string {text:?}")
        });
    }
}

/// The text a map key is written as: text as is; numbers, booleans and null as their JSON text;
/// bytes as base64; anything else as its compact JSON encoding.
/// `key_depth` container keys enclose this one; past [`MAX_KEY_NESTING`] a container key is an
/// error (its path is the root: the caller names the map).
fn key_text(
    k: &Value,
    canonical: bool,
    key_depth: usize,
    nested: (usize, Depth),
) -> Result<Cow<'_, str>, Stop> {
    Ok(match k {
        Value::Text(s) => Cow::Borrowed(s.as_str()),
        Value::Int(n) => Cow::Owned(n.to_string()),
        Value::BigInt(n) => Cow::Owned(n.to_string()),
        Value::Decimal(d) => Cow::Borrowed(d.as_str()),
        Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        Value::Null => Cow::Borrowed("null"),
        Value::Float(f) => Cow::Owned(crate::model::format_float(f.value)),
        Value::Bytes(b) => Cow::Owned(base64::engine::general_purpose::STANDARD.encode(b)),
        Value::Tag(_, inner) => key_text(inner, canonical, key_depth, nested)?,
        other => {
            if key_depth >= MAX_KEY_NESTING {
                return Err(Stop::Error(EncodeError {
                    format: Format::Json,
                    path: crate::model::Path::root(),
                    message: format!(
                        "a {} map key inside {key_depth} levels of map keys that are containers: JSON writes each as escaped text, doubling its size per level, so at most {MAX_KEY_NESTING} levels are written",
                        other.kind()
                    ),
                }));
            }
            let options = EncodeOptions {
                canonical,
                ..EncodeOptions::default()
            };
            let bytes = encode_in_key(other, &options, Spans::Off, key_depth + 1, nested)?
                .0
                .bytes;
            Cow::Owned(String::from_utf8_lossy(&bytes).into_owned())
        }
    })
}

#[cfg(test)]
#[path = "encode_tests.rs"]
mod tests;
