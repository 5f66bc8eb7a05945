//! [`Value`]: the format-neutral, lossless data model every codec decodes into and encodes from.
//!
//! A `Value` keeps everything JSON, MessagePack and CBOR can say, so converting between formats
//! never has to guess: signed and unsigned 64-bit integers (and CBOR's negative range down to
//! −2^64) share one exact [`Value::Int`], wider integers are [`Value::BigInt`], floats remember
//! the width they had on the wire, text and bytes stay apart, maps keep their order, duplicate and
//! non-string keys, and CBOR tags, simple values and MessagePack ext types are kept as such.
//!
//! What this module does not do: know about bytes on the wire. Spans live in
//! [`crate::model::SpanTree`], beside the value.

use std::fmt;

use super::CompactText;
use num_bigint::BigInt;

mod debug;
pub use debug::DEBUG_DEPTH;

/// Smallest integer [`Value::Int`] holds: CBOR major type 1 reaches −2^64.
pub const INT_MIN: i128 = -(1i128 << 64);
/// Largest integer [`Value::Int`] holds: `u64::MAX`.
pub const INT_MAX: i128 = u64::MAX as i128;

/// Width of a binary floating-point number as it was (or will be) written on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FloatWidth {
    /// IEEE 754 binary16 (CBOR only).
    F16,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
}

impl FloatWidth {
    /// Bits of the format: 16, 32 or 64.
    pub fn bits(self) -> u32 {
        match self {
            FloatWidth::F16 => 16,
            FloatWidth::F32 => 32,
            FloatWidth::F64 => 64,
        }
    }

    /// The narrowest width that holds `v` exactly (NaN and infinities fit in binary16).
    pub fn narrowest_exact(v: f64) -> FloatWidth {
        if v.is_nan() || f64::from(half::f16::from_f64(v)) == v {
            FloatWidth::F16
        } else if f64::from(v as f32) == v {
            FloatWidth::F32
        } else {
            FloatWidth::F64
        }
    }

    /// Whether `v` survives a round trip through this width unchanged (NaN always does).
    pub fn holds(self, v: f64) -> bool {
        match self {
            FloatWidth::F64 => true,
            FloatWidth::F32 => v.is_nan() || f64::from(v as f32) == v,
            FloatWidth::F16 => v.is_nan() || f64::from(half::f16::from_f64(v)) == v,
        }
    }
}

/// A binary floating-point number with the width it had on the wire.
///
/// Equality is bitwise on the value (so NaN equals NaN and `-0.0` differs from `0.0`), which is
/// what "the same value" means when checking a lossless round trip.
#[derive(Debug, Clone, Copy)]
pub struct Float {
    /// The number, widened to f64 (exact for every width).
    pub value: f64,
    /// The width it was read from, or should be written at.
    pub width: FloatWidth,
}

impl Float {
    /// A float64.
    pub fn f64(value: f64) -> Float {
        Float {
            value,
            width: FloatWidth::F64,
        }
    }

    /// A float32.
    pub fn f32(value: f32) -> Float {
        Float {
            value: f64::from(value),
            width: FloatWidth::F32,
        }
    }

    /// A float16.
    pub fn f16(value: half::f16) -> Float {
        Float {
            value: f64::from(value),
            width: FloatWidth::F16,
        }
    }
}

impl PartialEq for Float {
    fn eq(&self, other: &Float) -> bool {
        self.width == other.width
            && (self.value.to_bits() == other.value.to_bits()
                || (self.value.is_nan() && other.value.is_nan()))
    }
}

/// A point in time as MessagePack's timestamp extension (type −1) carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z (may be negative).
    pub seconds: i64,
    /// Nanoseconds within the second, `0..1_000_000_000`.
    pub nanos: u32,
}

impl Timestamp {
    /// RFC 3339 text in UTC, with as many fractional digits as needed (none, 3, 6 or 9).
    ///
    /// ```
    /// # use wirelens::model::Timestamp;
    /// let t = Timestamp { seconds: 1_700_000_000, nanos: 250_000_000 };
    /// assert_eq!(t.to_rfc3339(), "2023-11-14T22:13:20.250Z");
    /// ```
    pub fn to_rfc3339(&self) -> String {
        let days = self.seconds.div_euclid(86_400);
        let secs_of_day = self.seconds.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        let (hh, mm, ss) = (secs_of_day / 3600, secs_of_day / 60 % 60, secs_of_day % 60);
        let frac = if self.nanos == 0 {
            String::new()
        } else if self.nanos % 1_000_000 == 0 {
            format!(".{:03}", self.nanos / 1_000_000)
        } else if self.nanos % 1_000 == 0 {
            format!(".{:06}", self.nanos / 1_000)
        } else {
            format!(".{:09}", self.nanos)
        };
        if (0..=9999).contains(&y) {
            format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}{frac}Z")
        } else {
            format!("{y:+}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}{frac}Z")
        }
    }

    /// Parses RFC 3339 date-time text (`2023-11-14T22:13:20.25+01:00`); `None` if it is not one.
    pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
        let b = text.as_bytes();
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let s = text.get(r)?;
            if s.bytes().all(|c| c.is_ascii_digit()) && !s.is_empty() {
                s.parse().ok()
            } else {
                None
            }
        };
        if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[13] != b':' || b[16] != b':' {
            return None;
        }
        if !matches!(b[10], b'T' | b't' | b' ') {
            return None;
        }
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
            return None;
        }
        let mut i = 19;
        let mut nanos = 0u32;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                if i - start < 9 {
                    nanos = nanos * 10 + u32::from(b[i] - b'0');
                }
                i += 1;
            }
            let digits = i - start;
            if digits == 0 {
                return None;
            }
            for _ in digits..9 {
                nanos *= 10;
            }
        }
        let offset = match b.get(i)? {
            b'Z' | b'z' if i + 1 == b.len() => 0,
            sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
                let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
                let o = oh * 3600 + om * 60;
                if *sign == b'+' {
                    o
                } else {
                    -o
                }
            }
            _ => return None,
        };
        let days = days_from_civil(y, mo as u32, d as u32);
        let seconds = days * 86_400 + h * 3600 + mi * 60 + s - offset;
        Some(Timestamp { seconds, nanos })
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// A protobuf wire type: how a field's bytes are laid out on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WireType {
    /// 0: a varint.
    Varint,
    /// 1: eight little-endian bytes.
    I64,
    /// 2: a length-delimited byte string (message, string, bytes, packed repeated).
    Len,
    /// 3 and 4: a group, the bytes between its start and end tags.
    Group,
    /// 5: four little-endian bytes.
    I32,
}

impl WireType {
    /// The wire type a tag's low three bits name (`tag & 7`; the field number above them is
    /// ignored): 3 (a group's start) and 4 (its end) are both [`WireType::Group`]; 6 and 7 are
    /// none.
    pub fn of_tag(tag: u64) -> Option<WireType> {
        match tag & 7 {
            0 => Some(WireType::Varint),
            1 => Some(WireType::I64),
            2 => Some(WireType::Len),
            3 | 4 => Some(WireType::Group),
            5 => Some(WireType::I32),
            _ => None,
        }
    }

    /// The code a tag carries for this wire type (for a group, its start tag's 3).
    pub fn code(self) -> u64 {
        match self {
            WireType::Varint => 0,
            WireType::I64 => 1,
            WireType::Len => 2,
            WireType::Group => 3,
            WireType::I32 => 5,
        }
    }

    /// The name protoscope and the protobuf docs use: `VARINT`, `I64`, `LEN`, `SGROUP`, `I32`.
    pub fn name(self) -> &'static str {
        match self {
            WireType::Varint => "VARINT",
            WireType::I64 => "I64",
            WireType::Len => "LEN",
            WireType::Group => "SGROUP",
            WireType::I32 => "I32",
        }
    }
}

/// A protobuf field value that no schema explains, kept exactly as it was on the wire so that
/// re-encoding reproduces it (the way prost-reflect keeps unknown fields).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RawField {
    /// How the bytes were laid out.
    pub wire_type: WireType,
    /// The value bytes: the varint's bytes, the 4 or 8 fixed bytes, a LEN field's payload (without
    /// its length), or a group's contents (without its tags).
    pub data: Vec<u8>,
}

/// One datum, in any format. See the module docs for what each variant keeps.
///
/// `Debug` prints what `#[derive(Debug)]` would, down to [`DEBUG_DEPTH`] levels of nesting.
#[derive(Clone, PartialEq, Default)]
pub enum Value {
    /// JSON `null`, MessagePack nil, CBOR null.
    #[default]
    Null,
    /// CBOR `undefined` (simple value 23).
    Undefined,
    /// A boolean.
    Bool(bool),
    /// An integer in [`INT_MIN`]`..=`[`INT_MAX`] (−2^64 … 2^64−1): every integer MessagePack
    /// and CBOR write without a tag. Use [`Value::int`] to build one from any `i128`.
    Int(i128),
    /// An integer outside [`Value::Int`]'s range: CBOR bignums (tags 2 and 3) and long JSON
    /// integer literals. Boxed, as it is rare, so that every `Value` stays 32 bytes.
    BigInt(Box<BigInt>),
    /// A binary float with its wire width.
    Float(Float),
    /// A decimal number literal from JSON text that no float64 holds as written: beyond its range
    /// (`1e400`), or with more significant digits than it keeps. The text is kept exactly.
    Decimal(String),
    /// UTF-8 text, in place when short ([`CompactText`]).
    Text(CompactText),
    /// A byte string.
    Bytes(Vec<u8>),
    /// An ordered sequence.
    Array(Vec<Value>),
    /// Key/value entries in their wire order; keys may repeat and may be any value.
    Map(Vec<(Value, Value)>),
    /// A CBOR tag (other than the bignum tags 2 and 3, which become [`Value::BigInt`]).
    Tag(u64, Box<Value>),
    /// A CBOR simple value other than false, true, null and undefined.
    Simple(u8),
    /// A MessagePack extension value other than the timestamp (type −1).
    Ext(i8, Vec<u8>),
    /// A MessagePack timestamp (extension type −1), or a `google.protobuf.Timestamp`.
    Timestamp(Timestamp),
    /// A protobuf field the schema does not describe, as it was on the wire. Its map key is the
    /// field number. Boxed, as [`Value::BigInt`].
    Raw(Box<RawField>),
}

// Every node of a document is a `Value` (a map entry two): rare wide variants are boxed.
const _: () = assert!(std::mem::size_of::<Value>() == 32);

impl Value {
    /// An integer from any `i128`, as [`Value::Int`] when it fits its range, else [`Value::BigInt`].
    pub fn int(n: i128) -> Value {
        if (INT_MIN..=INT_MAX).contains(&n) {
            Value::Int(n)
        } else {
            Value::BigInt(Box::new(BigInt::from(n)))
        }
    }

    /// An integer from a `BigInt`, as [`Value::Int`] when it fits its range.
    pub fn bigint(n: BigInt) -> Value {
        match i128::try_from(&n) {
            Ok(small) if (INT_MIN..=INT_MAX).contains(&small) => Value::Int(small),
            _ => Value::BigInt(Box::new(n)),
        }
    }

    /// A text value.
    pub fn text(s: impl Into<CompactText>) -> Value {
        Value::Text(s.into())
    }

    /// A float64 value.
    pub fn f64(v: f64) -> Value {
        Value::Float(Float::f64(v))
    }

    /// A map from `(key, value)` pairs with text keys, in the given order.
    pub fn object<'a>(entries: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
        Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (Value::text(k), v))
                .collect(),
        )
    }

    /// The kind of value, in the words the tree view and the CLI use.
    pub fn kind(&self) -> Kind {
        match self {
            Value::Null => Kind::Null,
            Value::Undefined => Kind::Undefined,
            Value::Bool(_) => Kind::Bool,
            Value::Int(_) | Value::BigInt(_) => Kind::Int,
            Value::Float(f) => Kind::Float(f.width),
            Value::Decimal(_) => Kind::Decimal,
            Value::Text(_) => Kind::Text,
            Value::Bytes(_) => Kind::Bytes,
            Value::Array(_) => Kind::Array,
            Value::Map(_) => Kind::Map,
            Value::Tag(_, inner) => inner.kind(),
            Value::Simple(_) => Kind::Simple,
            Value::Ext(_, _) => Kind::Ext,
            Value::Timestamp(_) => Kind::Timestamp,
            Value::Raw(_) => Kind::Raw,
        }
    }

    /// The value under any CBOR tags.
    pub fn untagged(&self) -> &Value {
        let mut v = self;
        while let Value::Tag(_, inner) = v {
            v = inner;
        }
        v
    }

    /// Text of a text value (under any tags).
    pub fn as_str(&self) -> Option<&str> {
        match self.untagged() {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// Entries of a map value (under any tags).
    pub fn as_map(&self) -> Option<&[(Value, Value)]> {
        match self.untagged() {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Items of an array value (under any tags).
    pub fn as_array(&self) -> Option<&[Value]> {
        match self.untagged() {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The value of the first entry whose key is the text `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// Depth of the deepest nesting (a scalar has depth 0, `[[1]]` depth 2).
    pub fn depth(&self) -> usize {
        let mut max = 0;
        let mut stack = vec![(self, 0usize)];
        while let Some((v, d)) = stack.pop() {
            max = max.max(d);
            match v {
                Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
                Value::Map(entries) => {
                    for (k, val) in entries {
                        stack.push((k, d + 1));
                        stack.push((val, d + 1));
                    }
                }
                Value::Tag(_, inner) => stack.push((inner, d)),
                _ => {}
            }
        }
        max
    }

    /// How many nodes a [`crate::model::SpanTree`] of this value has: every value except map
    /// keys, a tagged value counted once (the tag is part of the node). Counted without listing
    /// them.
    pub fn node_count(&self) -> usize {
        // Items are counted where their container is taken off the stack; only containers go
        // on it, so the scalars, most of a document, are not each pushed and popped.
        let nests = |v: &&Value| matches!(v.untagged(), Value::Array(_) | Value::Map(_));
        let mut n = 1;
        let mut stack = vec![self];
        while let Some(v) = stack.pop() {
            match v.untagged() {
                Value::Array(items) => {
                    n += items.len();
                    stack.extend(items.iter().filter(nests));
                }
                Value::Map(entries) => {
                    n += entries.len();
                    stack.extend(entries.iter().map(|(_, val)| val).filter(nests));
                }
                _ => {}
            }
        }
        n
    }

    /// The values that get a node in a [`crate::model::SpanTree`], in the tree's pre-order: every
    /// value except map keys, with tagged values counted once (the tag is part of the node). So
    /// `value.preorder()[i]` is what node `i` of a decoded or encoded tree holds.
    pub fn preorder(&self) -> Vec<&Value> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(v) = stack.pop() {
            out.push(v);
            match v.untagged() {
                Value::Array(items) => stack.extend(items.iter().rev()),
                Value::Map(entries) => stack.extend(entries.iter().rev().map(|(_, val)| val)),
                _ => {}
            }
        }
        out
    }

    /// A one-line summary for tree views: `42`, `"alice"`, `24.5 (f32)`, `map(6)`, `bytes(16)`…
    /// Long text is cut to about `max_chars` characters.
    pub fn summary(&self, max_chars: usize) -> String {
        let cut = |s: &str| -> String {
            if s.chars().count() > max_chars {
                let mut out: String = s.chars().take(max_chars).collect();
                out.push('…');
                out
            } else {
                s.to_string()
            }
        };
        match self {
            Value::Null => "null".into(),
            Value::Undefined => "undefined".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(n) => n.to_string(),
            Value::BigInt(n) => cut(&n.to_string()),
            Value::Float(f) => match f.width {
                FloatWidth::F64 => format_float(f.value),
                w => format!("{} (f{})", format_float(f.value), w.bits()),
            },
            Value::Decimal(d) => cut(d),
            Value::Text(s) => format!("{:?}", cut(s)),
            Value::Bytes(b) => {
                let hex: String = b
                    .iter()
                    .take(max_chars / 2)
                    .map(|x| format!("{x:02x}"))
                    .collect();
                let more = if b.len() > max_chars / 2 { "…" } else { "" };
                format!("bytes({}) {hex}{more}", b.len())
            }
            Value::Array(a) => format!("array({})", a.len()),
            Value::Map(m) => format!("map({})", m.len()),
            Value::Tag(t, inner) => format!("tag {t}: {}", inner.summary(max_chars)),
            Value::Simple(s) => format!("simple({s})"),
            Value::Ext(t, d) => format!("ext {t} ({} bytes)", d.len()),
            Value::Timestamp(t) => t.to_rfc3339(),
            Value::Raw(r) => {
                let hex: String = r
                    .data
                    .iter()
                    .take(max_chars / 2)
                    .map(|x| format!("{x:02x}"))
                    .collect();
                let more = if r.data.len() > max_chars / 2 {
                    "…"
                } else {
                    ""
                };
                format!(
                    "raw {} ({} bytes) {hex}{more}",
                    r.wire_type.name(),
                    r.data.len()
                )
            }
        }
    }
}

/// A float as text: shortest round-trip digits, `NaN`, `Infinity`, `-Infinity`.
pub fn format_float(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        ryu::Buffer::new().format_finite(v).to_string()
    }
}

/// What sort of value a node holds, independent of format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// null / nil.
    Null,
    /// CBOR undefined.
    Undefined,
    /// true / false.
    Bool,
    /// An integer of any size.
    Int,
    /// A binary float of this width.
    Float(FloatWidth),
    /// An exact decimal literal.
    Decimal,
    /// UTF-8 text.
    Text,
    /// A byte string.
    Bytes,
    /// An array.
    Array,
    /// A map.
    Map,
    /// A CBOR simple value.
    Simple,
    /// A MessagePack extension.
    Ext,
    /// A timestamp.
    Timestamp,
    /// Protobuf wire data without a schema.
    Raw,
}

impl Kind {
    /// Whether values of this kind hold other values.
    pub fn is_container(self) -> bool {
        matches!(self, Kind::Array | Kind::Map)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Kind::Null => "null",
            Kind::Undefined => "undefined",
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::Float(FloatWidth::F16) => "float16",
            Kind::Float(FloatWidth::F32) => "float32",
            Kind::Float(FloatWidth::F64) => "float64",
            Kind::Decimal => "decimal",
            Kind::Text => "text",
            Kind::Bytes => "bytes",
            Kind::Array => "array",
            Kind::Map => "map",
            Kind::Simple => "simple",
            Kind::Ext => "ext",
            Kind::Timestamp => "timestamp",
            Kind::Raw => "raw",
        };
        f.write_str(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_normalises_to_bigint_outside_range() {
        assert_eq!(Value::int(INT_MAX), Value::Int(INT_MAX));
        assert!(matches!(Value::int(INT_MAX + 1), Value::BigInt(_)));
        assert!(matches!(Value::int(INT_MIN - 1), Value::BigInt(_)));
        assert_eq!(Value::bigint(BigInt::from(-5)), Value::Int(-5));
    }

    #[test]
    fn float_equality_is_bitwise_and_width_aware() {
        assert_eq!(Value::f64(f64::NAN), Value::f64(f64::NAN));
        assert_ne!(Value::f64(0.0), Value::f64(-0.0));
        assert_ne!(Value::f64(1.5), Value::Float(Float::f32(1.5)));
    }

    #[test]
    fn narrowest_width() {
        assert_eq!(FloatWidth::narrowest_exact(1.5), FloatWidth::F16);
        assert_eq!(FloatWidth::narrowest_exact(100000.0), FloatWidth::F32);
        assert_eq!(FloatWidth::narrowest_exact(1.1), FloatWidth::F64);
        assert_eq!(FloatWidth::narrowest_exact(f64::INFINITY), FloatWidth::F16);
    }

    #[test]
    fn rfc3339_round_trips() {
        for (secs, nanos, text) in [
            (0, 0, "1970-01-01T00:00:00Z"),
            (-1, 0, "1969-12-31T23:59:59Z"),
            (1_700_000_000, 123_456_789, "2023-11-14T22:13:20.123456789Z"),
            (951_782_400, 0, "2000-02-29T00:00:00Z"),
            (253_402_300_799, 0, "9999-12-31T23:59:59Z"),
        ] {
            let t = Timestamp {
                seconds: secs,
                nanos,
            };
            assert_eq!(t.to_rfc3339(), text);
            assert_eq!(Timestamp::parse_rfc3339(text), Some(t));
        }
        assert_eq!(
            Timestamp::parse_rfc3339("1970-01-01T01:00:00+01:00"),
            Some(Timestamp {
                seconds: 0,
                nanos: 0
            })
        );
        assert_eq!(Timestamp::parse_rfc3339("yesterday"), None);
        assert_eq!(Timestamp::parse_rfc3339("2023-13-01T00:00:00Z"), None);
    }

    #[test]
    fn preorder_skips_keys_and_folds_tags() {
        let v = Value::object([
            ("a", Value::Tag(1, Box::new(Value::Int(5)))),
            ("b", Value::Array(vec![Value::Null, Value::Bool(true)])),
        ]);
        let order: Vec<String> = v.preorder().iter().map(|v| v.summary(10)).collect();
        assert_eq!(order, ["map(2)", "tag 1: 5", "array(2)", "null", "true"]);
    }

    #[test]
    fn depth_counts_nesting() {
        let v = Value::Array(vec![Value::Array(vec![Value::Int(1)])]);
        assert_eq!(v.depth(), 2);
        assert_eq!(Value::Null.depth(), 0);
    }
}
