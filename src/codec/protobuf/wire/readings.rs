//! The readings of one field's bytes (every type a VARINT, fixed or LEN value may be read as)
//! and the checks they rest on (does this look like a float someone wrote, like text, like packed
//! varints). The decoder in the parent module picks the chosen one; see its docs for the rules.

use super::super::varint::read as read_varint;
use super::WireReading;
use crate::model::{Float, Span, Value};

/// Number of significant decimal digits in the shortest round-trip form of a float.
fn significant_digits(text_exp: &str) -> usize {
    let mantissa = text_exp.split('e').next().unwrap_or("");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    digits.trim_start_matches('0').trim_end_matches('0').len()
}

/// Whether 32 bits look like a float someone wrote (see the module docs).
pub(super) fn looks_like_float32(bits: u32) -> bool {
    let exp = ((bits >> 23) & 0xff) as i32;
    if exp == 0 || exp == 0xff || (exp - 127).abs() > 32 {
        return false;
    }
    significant_digits(&format!("{:e}", f32::from_bits(bits))) <= 6
}

/// Whether 64 bits look like a double someone wrote (see the module docs).
pub(super) fn looks_like_float64(bits: u64) -> bool {
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 || exp == 0x7ff || (exp - 1023).abs() > 64 {
        return false;
    }
    significant_digits(&format!("{:e}", f64::from_bits(bits))) <= 12
}

/// Whether `data` reads as text: UTF-8 with at least 90 % printable characters.
pub(super) fn printable_text(data: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(data).ok()?;
    let mut total = 0usize;
    let mut bad = 0usize;
    for c in text.chars() {
        total += 1;
        if c.is_control() && !matches!(c, '\t' | '\n' | '\r') {
            bad += 1;
        }
    }
    (bad * 10 <= total).then_some(text)
}

/// The payload split exactly into varints, with the span of each (absolute offsets).
pub(super) fn packed_varints(bytes: &[u8], start: usize, end: usize) -> Option<Vec<(u64, Span)>> {
    let mut out = Vec::new();
    let mut pos = start;
    while pos < end {
        let (v, n) = read_varint(bytes, pos, end).ok()?;
        out.push((v, Span::new(pos, pos + n)));
        pos += n;
    }
    (!out.is_empty()).then_some(out)
}

/// The lengths of the identifiers and digests that travel as `bytes` fields: 8 (an OpenTelemetry
/// span id), 16 (a trace id, a UUID), 20 (SHA-1), 32 (SHA-256).
const ID_LENGTHS: [usize; 4] = [8, 16, 20, 32];

/// Whether `data`, which splits into the varints `packed`, looks like random bytes (an id or a
/// digest) rather than numbers someone packed (see the module docs of the parent): an id length,
/// at least a quarter of its bytes ≥ 0x80, at least a quarter of the varints longer than one
/// byte, and values spread over the range (their bit lengths differ by 7 or more), where packed
/// numbers of one kind (counts, timestamps, enum values) sit close together.
pub(super) fn looks_like_random_id(data: &[u8], packed: &[(u64, Span)]) -> bool {
    if !ID_LENGTHS.contains(&data.len()) || packed.is_empty() {
        return false;
    }
    let high = data.iter().filter(|&&b| b >= 0x80).count();
    let multi = packed.iter().filter(|(_, span)| span.len() > 1).count();
    let bits = |v: u64| 64 - v.leading_zeros().min(63);
    let most = packed.iter().map(|(v, _)| bits(*v)).max().unwrap_or(0);
    let least = packed.iter().map(|(v, _)| bits(*v)).min().unwrap_or(0);
    high * 4 >= data.len() && multi * 4 >= packed.len() && most - least >= 7
}

pub(super) fn u32_le(data: &[u8]) -> u32 {
    let mut b = [0u8; 4];
    for (d, s) in b.iter_mut().zip(data) {
        *d = *s;
    }
    u32::from_le_bytes(b)
}

pub(super) fn u64_le(data: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    for (d, s) in b.iter_mut().zip(data) {
        *d = *s;
    }
    u64::from_le_bytes(b)
}

/// Readings of a VARINT value.
pub(super) fn varint_readings(value: u64, flags: &str) -> Vec<WireReading> {
    let mut out = vec![reading("uint64", flags, Value::Int(i128::from(value)))];
    if value >= 1 << 63 {
        out.push(reading(
            "int64",
            flags,
            Value::Int(i128::from(value as i64)),
        ));
    }
    let zigzag = i128::from((value >> 1) as i64 ^ -((value & 1) as i64));
    out.push(reading("sint64 (zigzag)", flags, Value::Int(zigzag)));
    if value <= 1 {
        out.push(reading("bool", flags, Value::Bool(value == 1)));
    }
    out
}

/// Readings of four fixed bytes, chosen first.
pub(super) fn i32_readings(bits: u32, flags: &str) -> Vec<WireReading> {
    let int = reading("fixed32", flags, Value::Int(i128::from(bits)));
    let float = reading(
        "float",
        flags,
        Value::Float(Float::f32(f32::from_bits(bits))),
    );
    let mut out = if looks_like_float32(bits) {
        vec![float, int]
    } else {
        vec![int, float]
    };
    if (bits as i32) < 0 {
        out.push(reading(
            "sfixed32",
            flags,
            Value::Int(i128::from(bits as i32)),
        ));
    }
    out
}

/// Readings of eight fixed bytes, chosen first.
pub(super) fn i64_readings(bits: u64, flags: &str) -> Vec<WireReading> {
    let int = reading("fixed64", flags, Value::Int(i128::from(bits)));
    let float = reading(
        "double",
        flags,
        Value::Float(Float::f64(f64::from_bits(bits))),
    );
    let mut out = if looks_like_float64(bits) {
        vec![float, int]
    } else {
        vec![int, float]
    };
    if (bits as i64) < 0 {
        out.push(reading(
            "sfixed64",
            flags,
            Value::Int(i128::from(bits as i64)),
        ));
    }
    out
}

pub(super) fn reading(label: &str, flags: &str, value: Value) -> WireReading {
    let mut text = String::with_capacity(label.len() + flags.len());
    text.push_str(label);
    text.push_str(flags);
    WireReading {
        label: text,
        value,
        chosen: false,
    }
}

/// What a LEN payload is read as.
pub(super) enum LenChoice {
    Message,
    Text(String),
    /// Packed numbers, each with its bytes.
    Packed(Vec<(Value, Span)>),
    Bytes,
}

/// Every reading of a LEN payload `data`, the chosen one (per `choice`) first.
pub(super) fn len_readings(
    data: &[u8],
    flags: &str,
    choice: &LenChoice,
    text: Option<&str>,
    packed: Option<&[(u64, Span)]>,
    long: bool,
) -> Vec<WireReading> {
    let is_message = matches!(choice, LenChoice::Message);
    let skip_alternatives = is_message && long;
    let alt = |v: Value| if long { Value::Null } else { v };
    let mut rs: Vec<WireReading> = Vec::new();
    let chosen_label = match &choice {
        LenChoice::Message => "message",
        LenChoice::Text(_) => "string",
        LenChoice::Packed(_) => "packed varints",
        LenChoice::Bytes => "bytes",
    };
    if is_message || data.is_empty() {
        rs.push(reading("message", flags, Value::Null));
    }
    if let Some(t) = text {
        rs.push(reading("string", flags, alt(Value::Text(t.into()))));
    }
    if let Some(p) = packed {
        let items = p.iter().map(|(v, _)| Value::Int(i128::from(*v))).collect();
        rs.push(reading("packed varints", flags, alt(Value::Array(items))));
    }
    if !skip_alternatives && !data.is_empty() {
        if data.len() % 4 == 0 {
            let words: Vec<u32> = data.chunks_exact(4).map(u32_le).collect();
            let ints = words.iter().map(|w| Value::Int(i128::from(*w))).collect();
            let floats = words
                .iter()
                .map(|w| Value::Float(Float::f32(f32::from_bits(*w))))
                .collect();
            rs.push(reading("packed fixed32", flags, alt(Value::Array(ints))));
            rs.push(reading("packed float", flags, alt(Value::Array(floats))));
        }
        if data.len() % 8 == 0 {
            let words: Vec<u64> = data.chunks_exact(8).map(u64_le).collect();
            let ints = words.iter().map(|w| Value::Int(i128::from(*w))).collect();
            let floats = words
                .iter()
                .map(|w| Value::Float(Float::f64(f64::from_bits(*w))))
                .collect();
            rs.push(reading("packed fixed64", flags, alt(Value::Array(ints))));
            rs.push(reading("packed double", flags, alt(Value::Array(floats))));
        }
    }
    rs.push(reading("bytes", flags, alt(Value::Bytes(data.to_vec()))));
    if let Some(i) = rs
        .iter()
        .position(|r| r.label.strip_prefix(chosen_label) == Some(flags))
    {
        let mut r = rs.remove(i);
        r.chosen = true;
        rs.insert(0, r);
    }
    rs
}
