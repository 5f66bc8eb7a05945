//! JSON (RFC 8259): a strict decoder that records the byte span of every node, and an encoder that
//! writes exactly what `serde_json::to_string` / `to_string_pretty` would, with spans and
//! [`FidelityNote`](super::FidelityNote)s for everything JSON cannot say.
//!
//! Why it exists: JSON is the format most payloads arrive in, and the one every other column is
//! compared against, so its reader must be exact (no silent rounding of numbers, no lost
//! duplicate keys) and its writer must match what the Rust ecosystem's reference writer produces
//! byte for byte.
//!
//! Conventions:
//! - Decoding accepts exactly RFC 8259 text, plus one leading UTF-8 byte order mark, which is
//!   skipped (spans stay offsets into the original bytes). Whitespace is space, tab, LF and CR.
//!   Invalid UTF-8 and lone UTF-16 surrogates in `\u` escapes are [`ErrorKind::Invalid`](super::ErrorKind).
//! - Numbers ([`parse_number`]): an integer literal becomes [`Value::Int`] (or [`Value::BigInt`]
//!   beyond its range); any other literal becomes a float64 when the float64 holds the literal as
//!   written (its shortest round-trip form has the same significant digits and exponent), else a
//!   [`Value::Decimal`] keeping the literal. `-0` becomes the float `-0.0`, as in serde_json.
//! - Spans: a string's header is its opening quote, its payload the (still escaped) bytes between
//!   the quotes, the closing quote is structure. Numbers and `true`/`false`/`null` have an empty
//!   header and the literal as payload. A container's header is its `[`/`{`, its payload runs to
//!   the closing bracket. A map key produces no node: its quoted bytes are the value node's `key`.
//! - Encoding writes the smallest text (or serde_json's pretty layout with
//!   [`EncodeOptions::pretty`](super::EncodeOptions)). The encoded span tree's node kinds are the
//!   kinds the JSON text holds (bytes, timestamps and ext data are text, `undefined` is null, all
//!   floats are float64), so decoding the output gives the same tree; the segments (and so the
//!   paths) are those of the source value.
//!
//! What it does not do: JSON5, comments, trailing commas, NaN/Infinity literals, other encodings
//! than UTF-8, or streaming several documents from one buffer.

mod decode;
mod encode;
mod plain;
mod validate;
pub(crate) use decode::skip_plain;
pub(crate) use encode::encode_with;
pub(crate) use plain::encode_plain;
pub(crate) use validate::is_json;

/// The offset of the first byte at or after `i` that is not JSON whitespace (space, tab, line
/// feed, carriage return: RFC 8259 allows no other). The decoder, the validator and the streaming
/// converter all skip whitespace with it.
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

use super::{DecodeError, DecodeOptions, Document, EncodeError, EncodeOptions, Encoded};
use crate::model::{Float, Value};

/// Decodes JSON text into a [`Document`] with the span of every node.
///
/// ```
/// # use wirelens::codec::{json, DecodeOptions};
/// # use wirelens::model::Value;
/// let doc = json::decode(br#"{"a":[1,2.5]}"#, &DecodeOptions::default()).expect("valid JSON");
/// assert_eq!(doc.value, Value::object([("a", Value::Array(vec![Value::Int(1), Value::f64(2.5)]))]));
/// assert_eq!(doc.spans.len(), 4);
/// ```
pub fn decode(bytes: &[u8], options: &DecodeOptions) -> Result<Document, DecodeError> {
    decode::decode(bytes, options)
}

/// The value of one JSON text and its number of nodes, without spans (for conversions, which
/// show none); `None` where [`decode`] fails.
pub(crate) fn value_and_nodes(bytes: &[u8], options: &DecodeOptions) -> Option<(Value, usize)> {
    decode::value_and_nodes(bytes, options)
}

pub(crate) use decode::value_into;

/// Encodes `value` as JSON text, with spans and notes for what JSON cannot say.
///
/// ```
/// # use wirelens::codec::{json, EncodeOptions};
/// # use wirelens::model::Value;
/// let v = Value::object([("a", Value::Bytes(vec![1, 2, 3]))]);
/// let out = json::encode(&v, &EncodeOptions::default()).expect("encodable");
/// assert_eq!(out.bytes, br#"{"a":"AQID"}"#);
/// assert_eq!(out.notes.len(), 1);
/// ```
pub fn encode(value: &Value, options: &EncodeOptions) -> Result<Encoded, EncodeError> {
    encode::encode(value, options)
}

/// The [`Value`] a JSON number literal stands for, or `None` if `literal` is not exactly one JSON
/// number (no surrounding whitespace).
///
/// An integer literal (no fraction, no exponent) is a [`Value::Int`], or a [`Value::BigInt`] beyond
/// `INT_MIN..=INT_MAX`; `-0` is the float `-0.0`. Any other literal is a float64 when the
/// correctly rounded float64 holds it as written, else a [`Value::Decimal`] with the literal.
///
/// ```
/// # use wirelens::codec::json::parse_number;
/// # use wirelens::model::Value;
/// assert_eq!(parse_number("1.50"), Some(Value::f64(1.5)));
/// assert_eq!(parse_number("1e400"), Some(Value::Decimal("1e400".into())));
/// assert_eq!(parse_number("01"), None);
/// ```
pub fn parse_number(literal: &str) -> Option<Value> {
    let b = literal.as_bytes();
    match scan_number(b, 0) {
        Ok(scan) if scan.end == b.len() => Some(scanned_value(&scan, literal)),
        _ => None,
    }
}

/// Where a number literal ends, whether it is an integer literal, and its decimal parts as
/// read on the way: the literal is `±digits × 10^exp10` while `significant` is at most 19.
#[derive(Debug, Clone, Copy)]
struct NumberScan {
    end: usize,
    is_int: bool,
    /// A leading `-`.
    neg: bool,
    /// The mantissa's digits as one integer, the point left out; meaningful only while
    /// `significant` is at most 19 (it wraps beyond).
    digits: u64,
    /// The mantissa's digits from the first non-zero one on, trailing zeros included.
    significant: usize,
    /// The power of ten `digits` is scaled by: the exponent less the fraction's digits
    /// (saturating far outside any float's range).
    exp10: i64,
}

/// Why a number literal is malformed: at which byte, and whether the input simply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumberError {
    /// The input ended at this offset in the middle of the number.
    Eof(usize),
    /// This byte is wrong; the text says what was expected.
    Bad(usize, &'static str),
}

/// Scans the JSON number grammar starting at `start`, reading its digits as it goes (one pass:
/// [`scanned_value`] needs no other look at the literal when it has 19 significant digits or
/// fewer); does not look at what follows it (a digit after a leading `0` is reported by the
/// caller).
fn scan_number(b: &[u8], start: usize) -> Result<NumberScan, NumberError> {
    let mut i = start;
    let neg = b.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    let mut digits = 0u64;
    // An integer part of `0` has no significant digit.
    let mut significant = match b.get(i) {
        Some(b'0') => {
            i += 1;
            0
        }
        Some(b'1'..=b'9') => {
            let first = i;
            i = digit_run(b, i, &mut digits);
            i - first
        }
        Some(_) => return Err(NumberError::Bad(i, "a digit")),
        None => return Err(NumberError::Eof(i)),
    };
    let mut is_int = true;
    let mut fraction = 0usize;
    if b.get(i) == Some(&b'.') {
        i += 1;
        is_int = false;
        let first = i;
        expect_digit(b, i, "a digit after the decimal point")?;
        if significant == 0 {
            // Zeros before the first significant digit scale, they do not count.
            while b.get(i) == Some(&b'0') {
                i += 1;
            }
        }
        let run = i;
        i = digit_run(b, i, &mut digits);
        significant += i - run;
        fraction = i - first;
    }
    let mut exponent = 0i64;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        is_int = false;
        let negative = b.get(i) == Some(&b'-');
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        expect_digit(b, i, "a digit in the exponent")?;
        while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            // Held far beyond any float's exponent, never overflowing.
            exponent = (exponent * 10 + i64::from(c - b'0')).min(1 << 40);
            i += 1;
        }
        if negative {
            exponent = -exponent;
        }
    }
    let fraction = i64::try_from(fraction).unwrap_or(1 << 40).min(1 << 40);
    Ok(NumberScan {
        end: i,
        is_int,
        neg,
        digits,
        significant,
        exp10: exponent - fraction,
    })
}

/// Fails unless a digit is at `i`; `what` says what was expected.
fn expect_digit(b: &[u8], i: usize, what: &'static str) -> Result<(), NumberError> {
    match b.get(i) {
        Some(c) if c.is_ascii_digit() => Ok(()),
        Some(_) => Err(NumberError::Bad(i, what)),
        None => Err(NumberError::Eof(i)),
    }
}

/// Reads the run of digits at `i` (possibly none) onto `acc` (`acc × 10^len + run`, wrapping
/// past 19 digits), eight at a time where it can; returns where the run ends.
///
/// While eight bytes are left, a word that is not all digits ends the run: its leading digits
/// are moved to the top of the word with `0`s below them, which writes the same number, and
/// read at once. Only the input's last seven bytes are read one by one.
#[inline]
fn digit_run(b: &[u8], mut i: usize, acc: &mut u64) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let Ok(eight) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let v = u64::from_le_bytes(eight);
        let flags = non_digits(v);
        if flags == 0 {
            *acc = acc
                .wrapping_mul(100_000_000)
                .wrapping_add(eight_digits_value(v));
            i += 8;
            continue;
        }
        // The first flagged byte is the first that is not a digit (see `non_digits`).
        let n = (flags.trailing_zeros() / 8) as usize;
        if n > 0 {
            let moved = v << (64 - 8 * n) | 0x3030_3030_3030_3030 >> (8 * n);
            *acc = acc
                .wrapping_mul(POW10[n])
                .wrapping_add(eight_digits_value(moved));
        }
        return i + n;
    }
    while let Some(&c) = b.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *acc = acc.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    i
}

/// The top bit of each of the 8 bytes in `v` that is not an ASCII digit, and perhaps of bytes
/// after such a byte, never before it: zero when all eight are digits. A byte below `0` sets its
/// top bit when `0x30` is taken from it, a byte above `9` when `0x46` is added to it (or, from
/// `0xba` on, already has it set and keeps it when `0x30` is taken); a borrow or carry into the
/// next byte up, the next in reading order, only comes from such a byte.
#[inline]
fn non_digits(v: u64) -> u64 {
    let below = v.wrapping_sub(0x3030_3030_3030_3030);
    let above = v.wrapping_add(0x4646_4646_4646_4646);
    (below | above) & 0x8080_8080_8080_8080
}

/// The number the 8 ASCII digits in `v` write, the first digit in the lowest byte: neighbouring
/// digits, then pairs, then fours are joined in parallel lanes (no lane overflows: 99, 9,999
/// and 99,999,999 are their largest values).
#[inline]
fn eight_digits_value(v: u64) -> u64 {
    let v = v - 0x3030_3030_3030_3030;
    let v = (v * 10 + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v * 100 + (v >> 16)) & 0x0000_ffff_0000_ffff;
    (v * 10_000 + (v >> 32)) & 0xffff_ffff
}

/// The value of the literal `text` that [`scan_number`] read as `scan`: from the digits the scan
/// read when they settle it (an integer of 19 digits or fewer; a float whose correctly rounded
/// float64 integer arithmetic finds, with its exactness decided the same way), else from the
/// text, as [`text_number_value`] reads it. The two give the same value for every literal.
fn scanned_value(scan: &NumberScan, text: &str) -> Value {
    if scan.significant <= 19 {
        if scan.is_int {
            return match scan.digits {
                0 if scan.neg => Value::Float(Float::f64(-0.0)),
                d => {
                    let n = i128::from(d);
                    Value::Int(if scan.neg { -n } else { n })
                }
            };
        }
        if let Some((x, holds)) = float_of_parts(scan.digits, scan.exp10) {
            return if holds {
                Value::Float(Float::f64(if scan.neg { -x } else { x }))
            } else {
                Value::Decimal(text.to_string())
            };
        }
    }
    text_number_value(text, scan.is_int)
}

/// The value of a literal that [`scan_number`] accepted whole.
fn number_value(lit: &[u8], is_int: bool) -> Value {
    match std::str::from_utf8(lit) {
        Ok(text) => text_number_value(text, is_int),
        // Unreachable for scanned literals (ASCII only); keep the bytes' meaning anyway.
        Err(_) => Value::Decimal(String::from_utf8_lossy(lit).into_owned()),
    }
}

/// [`number_value`] of a literal already known to be text.
fn text_number_value(text: &str, is_int: bool) -> Value {
    let lit = text.as_bytes();
    if is_int {
        return int_value(lit, text);
    }
    let Ok(x) = text.parse::<f64>() else {
        return Value::Decimal(text.to_string());
    };
    if x.is_finite() && float_holds_literal(lit, x) {
        Value::Float(Float::f64(x))
    } else {
        Value::Decimal(text.to_string())
    }
}

/// An integer literal (optional `-`, digits).
fn int_value(lit: &[u8], text: &str) -> Value {
    let (neg, digits) = match lit.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, lit),
    };
    if digits == b"0" {
        return if neg {
            Value::Float(Float::f64(-0.0))
        } else {
            Value::Int(0)
        };
    }
    if digits.len() <= 38 {
        // 38 decimal digits always fit an i128.
        let mut n: i128 = 0;
        for &d in digits {
            n = n * 10 + i128::from(d - b'0');
        }
        return Value::int(if neg { -n } else { n });
    }
    match parse_digits(digits) {
        Some(n) => {
            let sign = if neg {
                num_bigint::Sign::Minus
            } else {
                num_bigint::Sign::Plus
            };
            Value::bigint(num_bigint::BigInt::from_biguint(sign, n))
        }
        None => Value::Decimal(text.to_string()),
    }
}

/// Decimal digits (at least one, ASCII `0`–`9` only) as a `BigUint`.
///
/// `BigUint::parse_bytes` takes time quadratic in the number of digits (a 400,000-digit literal
/// took a third of a second, ten times that would take half a minute), so long literals are split
/// in halves and joined as `high × 10^len(low) + low`, which num-bigint's Karatsuba/Toom-3
/// multiplication makes subquadratic. Recursion depth is log2(len / CHUNK).
fn parse_digits(digits: &[u8]) -> Option<num_bigint::BigUint> {
    const CHUNK: usize = 4096;
    if digits.len() <= CHUNK {
        return num_bigint::BigUint::parse_bytes(digits, 10);
    }
    let (high, low) = digits.split_at(digits.len() / 2);
    let scale = num_bigint::BigUint::from(10u32).pow(u32::try_from(low.len()).ok()?);
    Some(parse_digits(high)? * scale + parse_digits(low)?)
}

/// Whether the finite float64 `x`, the correctly rounded reading of the non-integer literal
/// `lit`, holds the literal as written: `x` printed with as many significant digits as the
/// literal has gives back the literal's digits and exponent.
///
/// So `0.1`, `1.50` and `-65.613616999999977` (a 17-digit printout of a float64, as C's `%.17g`
/// writes) are floats, while `9007199254740993.0` (2^53 + 1 reads as 2^53) and
/// `1.0000000000000000001` keep their text as [`Value::Decimal`].
fn float_holds_literal(lit: &[u8], x: f64) -> bool {
    let l = Normalised::of(lit);
    if x == 0.0 {
        // Zero is exact; a non-zero literal that reads as zero underflowed.
        return l.count == 0;
    }
    // Fast path: up to 15 significant digits always survive a trip through a normal float64
    // (DBL_DIG), so printing `x` with that many digits gives the literal's own digits.
    if l.count <= 15 && x.abs() >= f64::MIN_POSITIVE {
        return true;
    }
    if let Some(holds) = holds_by_integers(&l, x.abs()) {
        return holds;
    }
    holds_by_printing(&l, x)
}

/// [`float_holds_literal`] by printing `x` exactly with the literal's number of digits and
/// comparing: right for every literal, but a few thousand instructions.
fn holds_by_printing(l: &Normalised<'_>, x: f64) -> bool {
    use std::fmt::Write as _;
    /// More significant digits than the longest exact decimal expansion of a float64 (767).
    const MAX_DIGITS: usize = 800;
    if l.count > MAX_DIGITS {
        return false;
    }
    let mut printed = StackText {
        buf: [0; 832],
        len: 0,
    };
    if write!(printed, "{:.*e}", l.count.saturating_sub(1), x.abs()).is_err() {
        return false;
    }
    let p = Normalised::of(printed.buf.get(..printed.len).unwrap_or_default());
    l.count == p.count && l.exp == p.exp && l.digits().eq(p.digits())
}

/// [`float_holds_literal`] in integer arithmetic, for the literals of 16 to 19 significant
/// digits that most JSON writers produce (`%.17g`, shortest round trips): `None` when it cannot
/// tell (the numbers do not fit 128 bits, an exact tie, or all nines, whose rounding may carry
/// into the next decade), and the caller prints instead.
///
/// The literal is `L = D × 10^k` with `D` its `n` significant digits, and `x = m × 2^e` (positive,
/// finite) is its correctly rounded reading. Printed with `n` significant digits, `x` rounds to
/// the grid of `10^k` (its decade is `L`'s unless `D` is all nines), so it gives back `D` exactly
/// when `2·|x − L| < 10^k`. Both sides are scaled to integers by `5^max(−k, 0)` and a power of two.
fn holds_by_integers(l: &Normalised<'_>, x: f64) -> Option<bool> {
    let n = u32::try_from(l.count).ok()?;
    holds_by_parts(l.small?, n, l.exp.checked_sub(i64::from(n))?, x)
}

/// [`holds_by_integers`] of the literal `d × 10^k`, where `d` has `n` digits and no trailing
/// zero.
fn holds_by_parts(d: u64, n: u32, k: i64, x: f64) -> Option<bool> {
    if d == *POW10.get(usize::try_from(n).ok()?)? - 1 {
        return None;
    }
    let (m, e) = float_parts(x);
    let pow5 = |p: i64| usize::try_from(p).ok().and_then(|p| POW5.get(p).copied());
    let t = e.min(k);
    let a = shl(mul(m, pow5((-k).max(0))?)?, e - t)?;
    let unit = shl(pow5(k.max(0))?, k - t)?;
    let b = mul(unit, u128::from(d))?;
    let twice = a.abs_diff(b).checked_mul(2)?;
    (twice != unit).then_some(twice < unit)
}

/// The positive finite float64 `x` as `m × 2^e` (`m` below 2^53).
fn float_parts(x: f64) -> (u128, i64) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let fraction = u128::from(bits & ((1u64 << 52) - 1));
    if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    }
}

/// `a × b`, `None` on overflow: one machine multiplication when both fit 64 bits, as they do
/// for every literal of 19 digits or fewer within `10^±22`.
#[inline]
fn mul(a: u128, b: u128) -> Option<u128> {
    match (u64::try_from(a), u64::try_from(b)) {
        (Ok(a), Ok(b)) => Some(u128::from(a) * u128::from(b)),
        _ => a.checked_mul(b),
    }
}

/// `v << by`, when no bit is lost.
fn shl(v: u128, by: i64) -> Option<u128> {
    let by = u32::try_from(by).ok()?;
    (by < v.leading_zeros()).then(|| v << by)
}

/// The non-integer literal `d × 10^k` (`d` of at most 19 digits) as its correctly rounded
/// float64 and whether that float holds the literal as written ([`float_holds_literal`]), found
/// in integer arithmetic from the digits [`scan_number`] read: `None` where this cannot tell
/// (powers of ten beyond `10^±22`, an exact tie, 128-bit overflow), and the caller reads the
/// text instead.
fn float_of_parts(mut d: u64, mut k: i64) -> Option<(f64, bool)> {
    if d == 0 {
        return Some((0.0, true));
    }
    // Trailing zeros say nothing about exactness (`1.50` is `1.5`).
    while d % 10 == 0 {
        d /= 10;
        k += 1;
    }
    let p = *POW10F.get(usize::try_from(k.unsigned_abs()).ok()?)?;
    let x = if k < 0 { d as f64 / p } else { d as f64 * p };
    if d < POW10[15] {
        // Both factors are exact, so one float operation rounds correctly (Clinger's fast
        // path); and up to 15 significant digits survive a trip through a normal float64
        // (DBL_DIG): every float here is normal (at least 10^-22).
        return Some((x, true));
    }
    if k < 0 {
        // Decimal fractions, the literals JSON writers produce (`%.17g`, shortest round trips).
        if let Some(settled) = settle_fraction(d, k.unsigned_abs(), x) {
            return Some(settled);
        }
    }
    let x = nearest_f64(d, k)?;
    Some((x, holds_by_parts(d, d.ilog10() + 1, k, x)?))
}

/// [`float_of_parts`] of the literal `L = d × 10^−q` (`d` without trailing zeros, `q` at most
/// 22), starting from `x`, the float division of `d` (rounded) by `10^q`, which is within about
/// one unit in the last place of `L`: one exact comparison of `x` with `L` says both whether `x`
/// is the float nearest `L` (else the next float towards `L` is tried) and whether it holds the
/// literal as written. `None` where this cannot tell (an exact tie, 128-bit overflow).
///
/// With `x = m × 2^e`, `x × 10^q = m × 5^q × 2^(e+q)`, and `d` is compared with it as integers
/// scaled by a power of two. In those units the gap from `x` to the next float up is `5^q` (also
/// scaled) and a step of `L`'s last digit is the scale itself. `x` is the nearest float when
/// twice the distance is below the gap towards `L` (half the gap below a power of two), and it
/// holds the literal when twice the distance is below one step: then `x` printed with `d`'s
/// number of digits rounds back to `d` (a power of ten cannot be `d`, so `x` printing in another
/// decade never rounds to `d`).
fn settle_fraction(d: u64, q: u64, mut x: f64) -> Option<(f64, bool)> {
    let pow5 = *POW5.get(usize::try_from(q).ok()?)?;
    let q = i64::try_from(q).ok()?;
    for _ in 0..3 {
        let (m, e) = float_parts(x);
        let scaled = mul(m, pow5)?;
        // x × 10^q = scaled × 2^−s.
        let s = -(e + q);
        let (a, b, step, gap) = if s >= 0 {
            (scaled, shl(u128::from(d), s)?, shl(1, s)?, pow5)
        } else {
            (shl(scaled, -s)?, u128::from(d), 1, shl(pow5, -s)?)
        };
        let above = a > b;
        let twice = a.abs_diff(b).checked_mul(2)?;
        // Below a power of two the float below is half a gap away.
        let towards = if above && m == 1 << 52 {
            twice.checked_mul(2)?
        } else {
            twice
        };
        match towards.cmp(&gap) {
            std::cmp::Ordering::Less => {
                return match twice.cmp(&step) {
                    std::cmp::Ordering::Less => Some((x, true)),
                    std::cmp::Ordering::Greater => Some((x, false)),
                    std::cmp::Ordering::Equal => None,
                };
            }
            std::cmp::Ordering::Equal => return None,
            std::cmp::Ordering::Greater => {
                let bits = x.to_bits();
                x = f64::from_bits(if above { bits - 1 } else { bits + 1 });
            }
        }
    }
    None
}

/// Powers of ten a float64 holds exactly.
const POW10F: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The float64 nearest `d × 10^k` (`d` non-zero, of at most 19 digits, `k` within ±22), as a
/// correct parser rounds it; `None` on an exact tie between two floats or when the integers do
/// not fit.
///
/// When `d` is below 2^53 both factors are exact and one float operation rounds correctly
/// (Clinger's fast path). Otherwise that operation, on `d` rounded, is within about one unit in
/// the last place, and the float whose rounding interval holds the literal is found among it
/// and its neighbours by exact comparisons with the midpoints between them.
fn nearest_f64(d: u64, k: i64) -> Option<f64> {
    let p = *POW10F.get(usize::try_from(k.unsigned_abs()).ok()?)?;
    let mut x = if k < 0 { d as f64 / p } else { d as f64 * p };
    if d <= 1 << 53 {
        return Some(x);
    }
    for _ in 0..3 {
        // `x`'s rounding interval runs from the midpoint below it to the one above it.
        match cmp_midpoint(d, k, x)? {
            std::cmp::Ordering::Greater => x = f64::from_bits(x.to_bits() + 1),
            std::cmp::Ordering::Equal => return None,
            std::cmp::Ordering::Less => {
                let below = f64::from_bits(x.to_bits() - 1);
                match cmp_midpoint(d, k, below)? {
                    std::cmp::Ordering::Less => x = below,
                    std::cmp::Ordering::Equal => return None,
                    std::cmp::Ordering::Greater => return Some(x),
                }
            }
        }
    }
    None
}

/// `d × 10^k` against the midpoint between the positive normal float64 `x` and the next float
/// up, exactly: that midpoint is `(2m + 1) × 2^(e−1)` for `x = m × 2^e`.
fn cmp_midpoint(d: u64, k: i64, x: f64) -> Option<std::cmp::Ordering> {
    let (m, e) = float_parts(x);
    let mid = 2 * m + 1;
    let pow5 = *POW5.get(usize::try_from(k.unsigned_abs()).ok()?)?;
    // Both sides as integers times powers of two, then scaled to the same power.
    let (a, a2, b, b2) = if k >= 0 {
        (mul(u128::from(d), pow5)?, k, mid, e - 1)
    } else {
        // d / (5^q × 2^q) against mid × 2^(e−1): times 5^q × 2^q on both sides.
        (u128::from(d), 0, mul(mid, pow5)?, e - 1 - k)
    };
    let t = a2.min(b2);
    Some(shl(a, a2 - t)?.cmp(&shl(b, b2 - t)?))
}

/// `10^p` for every `p` whose power fits a `u64`.
const POW10: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// `5^p` for every `p` whose power fits a `u128`.
const POW5: [u128; 56] = {
    let mut t = [1u128; 56];
    let mut i = 1;
    while i < 56 {
        t[i] = t[i - 1] * 5;
        i += 1;
    }
    t
};

/// A fixed buffer to print one float into (longest: 800 digits, a point and an exponent).
struct StackText {
    buf: [u8; 832],
    len: usize,
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let slot = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// A number literal as `0.d1d2…dn × 10^exp` with `d1` and `dn` non-zero (`count` = n; zero has
/// `count` 0). Borrowed, no allocation; read in one pass.
struct Normalised<'a> {
    /// Mantissa bytes without sign: digits and at most one `.`.
    mantissa: &'a [u8],
    /// Leading zero digits to skip.
    lead: usize,
    /// Number of significant digits.
    count: usize,
    /// Decimal exponent of the point before the first significant digit (saturating).
    exp: i64,
    /// `d1d2…dn` as an integer, when it fits a `u64`.
    small: Option<u64>,
}

impl<'a> Normalised<'a> {
    fn of(lit: &'a [u8]) -> Normalised<'a> {
        let unsigned = lit.strip_prefix(b"-").unwrap_or(lit);
        let (mut total, mut lead, mut trail) = (0usize, 0usize, 0usize);
        let mut int_digits = None;
        let mut split = unsigned.len();
        // The significant digits so far; wraps only when there are more than 19 of them, and
        // then `small` is `None` below.
        let mut d: u64 = 0;
        for (i, &c) in unsigned.iter().enumerate() {
            match c {
                b'0' => {
                    if total == lead {
                        lead += 1;
                    } else {
                        trail += 1;
                    }
                    total += 1;
                }
                b'1'..=b'9' => {
                    // Zeros between significant digits count once a digit follows them.
                    let scale = POW10.get(trail + 1).copied().unwrap_or(0);
                    d = d.wrapping_mul(scale).wrapping_add(u64::from(c - b'0'));
                    total += 1;
                    trail = 0;
                }
                b'.' => int_digits = Some(i),
                _ => {
                    split = i;
                    break;
                }
            }
        }
        let (mantissa, exponent) = unsigned.split_at(split);
        let mut e: i64 = 0;
        let mut neg_e = false;
        for &c in exponent.iter().skip(1) {
            match c {
                b'-' => neg_e = true,
                b'+' => {}
                d => e = e.saturating_mul(10).saturating_add(i64::from(d - b'0')),
            }
        }
        if neg_e {
            e = -e;
        }
        if total == lead {
            return Normalised {
                mantissa,
                lead,
                count: 0,
                exp: 0,
                small: Some(0),
            };
        }
        let int_digits = int_digits.unwrap_or(mantissa.len());
        // Value = 0.(digits after the lead) × 10^(int_digits − lead + e).
        let exp = i64::try_from(int_digits)
            .unwrap_or(i64::MAX)
            .saturating_sub(i64::try_from(lead).unwrap_or(i64::MAX))
            .saturating_add(e);
        let count = total - lead - trail;
        Normalised {
            mantissa,
            lead,
            count,
            exp,
            small: (count <= 19).then_some(d),
        }
    }

    fn digits(&self) -> impl Iterator<Item = u8> + '_ {
        self.mantissa
            .iter()
            .copied()
            .filter(u8::is_ascii_digit)
            .skip(self.lead)
            .take(self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;

    fn num(s: &str) -> Value {
        parse_number(s).unwrap_or_else(|| panic!("{s} is a JSON number"))
    }

    /// A xorshift64 generator from `state` (not zero): the tests' reproducible random numbers.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// Asserts that the one-pass reading of `lit` is what reading its text gives, floats bit
    /// for bit; returns whether both are floats.
    fn assert_same_reading(lit: &str, one_pass: &Value, text: &Value) -> bool {
        match (one_pass, text) {
            (Value::Float(a), Value::Float(b)) => {
                assert_eq!(a.value.to_bits(), b.value.to_bits(), "{lit}");
                true
            }
            (a, b) => {
                assert_eq!(a, b, "{lit}");
                false
            }
        }
    }

    #[test]
    fn integers() {
        assert_eq!(num("0"), Value::Int(0));
        assert_eq!(num("-0"), Value::f64(-0.0));
        assert_eq!(
            num("-9223372036854775808"),
            Value::Int(-9223372036854775808)
        );
        assert_eq!(num("18446744073709551615"), Value::Int(u64::MAX.into()));
        assert_eq!(num("-18446744073709551616"), Value::Int(-(1i128 << 64)));
        assert_eq!(
            num("18446744073709551616"),
            Value::BigInt(Box::new(BigInt::from(1u128 << 64)))
        );
        let long = "1".repeat(60);
        assert_eq!(
            num(&long),
            Value::BigInt(Box::new(long.parse::<BigInt>().expect("digits")))
        );
        assert_eq!(
            num(&format!("-{long}")),
            Value::BigInt(Box::new(-long.parse::<BigInt>().expect("digits")))
        );
    }

    #[test]
    fn long_integers_split_and_join_exactly() {
        // Crosses the split threshold several times, with zeros at the joins.
        let mut digits = String::from("9");
        for k in 0..20_000 {
            digits.push(char::from(b'0' + (k * 7 % 10) as u8));
        }
        digits.push_str(&"0".repeat(5000));
        let expected: BigInt = digits.parse().expect("digits");
        assert_eq!(num(&digits), Value::BigInt(Box::new(expected.clone())));
        assert_eq!(
            num(&format!("-{digits}")),
            Value::BigInt(Box::new(-expected))
        );
    }

    #[test]
    fn literals_normalise_in_one_pass() {
        let cases: [(&str, usize, i64, Option<u64>); 7] = [
            ("0.00120e3", 2, 1, Some(12)),
            ("-100.5", 4, 3, Some(1005)),
            ("10203000", 5, 8, Some(10203)),
            ("0.0", 0, 0, Some(0)),
            ("-0e-5", 0, 0, Some(0)),
            ("1.5E-2", 2, -1, Some(15)),
            ("12345678901234567890123", 23, 23, None),
        ];
        for (lit, count, exp, small) in cases {
            let l = Normalised::of(lit.as_bytes());
            assert_eq!((l.count, l.exp, l.small), (count, exp, small), "{lit}");
            let digits: String = l.digits().map(char::from).collect();
            if let Some(d) = small {
                assert_eq!(
                    digits,
                    if count == 0 {
                        String::new()
                    } else {
                        d.to_string()
                    }
                );
            }
        }
    }

    /// The integer check agrees with printing wherever it answers, on literals around float64s
    /// of every magnitude: their 16- to 19-digit printouts and those printouts one digit off.
    #[test]
    fn the_integer_check_agrees_with_printing() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let (mut answered, mut checked) = (0, 0);
        for _ in 0..20_000 {
            let x = f64::from_bits(next() & 0x7fef_ffff_ffff_ffff);
            if x == 0.0 || !x.is_finite() {
                continue;
            }
            for digits in 16..=19usize {
                let printed = format!("{:.*e}", digits - 1, x);
                let mut lits = vec![printed.clone()];
                // The same literal with its last digit moved by one either way.
                let (mantissa, exponent) = printed.split_once('e').expect("exponent");
                let last = mantissa.bytes().last().expect("digit");
                for step in [1u8, 9] {
                    let moved = b'0' + (last - b'0' + step) % 10;
                    let mut m = mantissa.as_bytes().to_vec();
                    *m.last_mut().expect("digit") = moved;
                    lits.push(format!(
                        "{}e{exponent}",
                        String::from_utf8(m).expect("ascii")
                    ));
                }
                for lit in lits {
                    let y: f64 = lit.parse().expect("a float");
                    if y == 0.0 || !y.is_finite() {
                        continue;
                    }
                    let l = Normalised::of(lit.as_bytes());
                    checked += 1;
                    if let Some(holds) = holds_by_integers(&l, y) {
                        answered += 1;
                        assert_eq!(holds, holds_by_printing(&l, y), "{lit}");
                    }
                }
            }
        }
        // Most magnitudes are out of 128-bit reach; the ones JSON writers use are not.
        assert!(answered > 1_000, "answered {answered} of {checked}");
        for lit in [
            "-65.613616999999977",
            "0.30000000000000004",
            "123.456789012345678",
        ] {
            let y: f64 = lit.parse().expect("a float");
            let l = Normalised::of(lit.as_bytes());
            assert_eq!(
                holds_by_integers(&l, y.abs()),
                Some(holds_by_printing(&l, y)),
                "{lit}"
            );
        }
    }

    /// The one-pass reading ([`scanned_value`]) gives what reading the text gives
    /// ([`text_number_value`]: the standard library's parser, then the exactness check) for
    /// literals of every shape: integers, 1 to 22 digits with the point anywhere, exponents near
    /// and far, leading and trailing zeros, and the 15- to 17-digit printouts of random floats
    /// with their last digit moved; floats compared bit for bit.
    #[test]
    fn one_pass_reading_agrees_with_reading_the_text() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut lits: Vec<String> = Vec::new();
        for _ in 0..60_000 {
            let r = next();
            let n = 1 + (r % 22) as usize;
            let mut digits: String = (0..n)
                .map(|i| {
                    let v = (next() % 10) as u8;
                    char::from(b'0' + if i == 0 { v.max(1) } else { v })
                })
                .collect();
            if r >> 8 & 7 == 0 {
                digits.push_str("000");
            }
            let mantissa = match r >> 11 & 3 {
                0 => digits.clone(),
                1 => format!("0.{}{digits}", "0".repeat((r >> 13 & 7) as usize)),
                _ => {
                    let at = 1 + (r >> 16) as usize % digits.len();
                    let (a, b) = digits.split_at(at);
                    if b.is_empty() {
                        format!("{a}.0")
                    } else {
                        format!("{a}.{b}")
                    }
                }
            };
            let exponent = match r >> 20 & 7 {
                0..=2 => String::new(),
                3 => format!("e{}", (r >> 24) % 700),
                4 => format!("e-{}", (r >> 24) % 700),
                _ => format!(
                    "e{}{}",
                    if r >> 23 & 1 == 0 { "-" } else { "+" },
                    (r >> 24) % 40
                ),
            };
            let sign = if r >> 40 & 1 == 0 { "" } else { "-" };
            lits.push(format!("{sign}{mantissa}{exponent}"));
        }
        for _ in 0..20_000 {
            let x = f64::from_bits(next() & 0x7fef_ffff_ffff_ffff);
            let near = f64::from(next() as u32) / 1024.0 * x.signum();
            for y in [x, near, near / 1e7] {
                for digits in 15..=17usize {
                    let printed = format!("{:.*e}", digits - 1, y);
                    let (m, e) = printed.split_once('e').expect("exponent");
                    let last = m.bytes().last().expect("digit");
                    let moved = char::from(b'0' + (last - b'0' + 1) % 10);
                    lits.push(format!("{}{moved}e{e}", &m[..m.len() - 1]));
                    lits.push(printed);
                }
                lits.push(ryu::Buffer::new().format(y).to_string());
                lits.push(format!("{y}"));
            }
        }
        let (mut settled, mut floats) = (0, 0);
        for lit in &lits {
            let scan = scan_number(lit.as_bytes(), 0).expect("a number literal");
            assert_eq!(scan.end, lit.len(), "{lit}");
            // Inside a document, where the digit runs are read by whole words up to the byte
            // that ends them, digits after it included.
            for follow in [",", "]", " 12345678"] {
                let padded = format!("{lit}{follow}12345678901234567");
                let inside = scan_number(padded.as_bytes(), 0).expect("a number literal");
                assert_eq!(
                    (inside.end, inside.digits, inside.significant, inside.exp10),
                    (scan.end, scan.digits, scan.significant, scan.exp10),
                    "{padded}"
                );
            }
            let one_pass = scanned_value(&scan, lit);
            let text = text_number_value(lit, scan.is_int);
            floats += usize::from(assert_same_reading(lit, &one_pass, &text));
            if !scan.is_int && scan.significant <= 19 {
                settled += usize::from(float_of_parts(scan.digits, scan.exp10).is_some());
            }
        }
        // Most literals of 19 digits or fewer are settled without the text; the rest of the
        // corpus goes the other way, so both readings are compared on many.
        assert!(settled > 60_000, "settled {settled} of {}", lits.len());
        assert!(floats > 100_000, "floats {floats}");
    }

    /// Decimal fractions of 15 to 19 significant digits at the magnitudes JSON carries
    /// (coordinates, amounts, measurements), as `%.17g` and fixed-point writers print them and
    /// with their last digit moved by 1 to 9: the one-comparison reading ([`settle_fraction`])
    /// answers nearly all of them, and gives the float and exactness that reading the text
    /// gives, bit for bit.
    #[test]
    fn fractions_settle_in_one_comparison() {
        let mut next = xorshift(0x853c_49e6_748f_ea9b);
        let (mut settled, mut holding, mut eligible) = (0usize, 0usize, 0usize);
        for _ in 0..30_000 {
            let r = next();
            // 10^-8 to 10^8, both signs, every mantissa.
            let magnitude = 10f64.powi((r % 17) as i32 - 8);
            let y = (f64::from_bits(0x3ff0_0000_0000_0000 | next() >> 12) - 1.0) * magnitude;
            let y = if r >> 40 & 1 == 0 { y } else { -y };
            if y == 0.0 {
                continue;
            }
            for digits in 15..=19usize {
                let printed = format!("{:.*e}", digits - 1, y);
                let (m, e) = printed.split_once('e').expect("exponent");
                let exp: i32 = e.parse().expect("exponent");
                let mut lits = vec![printed.clone()];
                let last = m.bytes().last().expect("digit") - b'0';
                for step in 1..=9u8 {
                    let moved = char::from(b'0' + (last + step) % 10);
                    lits.push(format!("{}{moved}e{exp}", &m[..m.len() - 1]));
                }
                // The same literals written without an exponent, as `%.17g` writes these.
                let fixed: Vec<String> = lits
                    .iter()
                    .filter_map(|lit| {
                        let x: f64 = lit.parse().ok()?;
                        let decimals = usize::try_from(digits as i32 - 1 - exp).ok()?;
                        let text = format!("{:.*}", decimals, x);
                        // Only where that text has the literal's digits.
                        let same: String = lit.split('e').next()?.replace(['.', '-'], "");
                        text.replace(['.', '-'], "")
                            .trim_start_matches('0')
                            .starts_with(same.trim_start_matches('0'))
                            .then_some(text)
                    })
                    .collect();
                lits.extend(fixed);
                for lit in &lits {
                    let scan = scan_number(lit.as_bytes(), 0).expect("a number literal");
                    let one_pass = scanned_value(&scan, lit);
                    let text = text_number_value(lit, scan.is_int);
                    assert_same_reading(lit, &one_pass, &text);
                    let (mut d, mut k) = (scan.digits, scan.exp10);
                    while d % 10 == 0 {
                        d /= 10;
                        k += 1;
                    }
                    if scan.significant <= 19 && d >= POW10[15] && (-22..0).contains(&k) {
                        eligible += 1;
                        let q = k.unsigned_abs();
                        let x = d as f64 / POW10F[q as usize];
                        if let Some((x, holds)) = settle_fraction(d, q, x) {
                            settled += 1;
                            holding += usize::from(holds);
                            let want = if holds {
                                Value::f64(if scan.neg { -x } else { x })
                            } else {
                                Value::Decimal(lit.clone())
                            };
                            assert_eq!(text, want, "{lit}");
                        }
                    }
                }
            }
        }
        // Just below a power of two the float below is half as far: literals of 17 to 19
        // digits either side of the midpoint between `2^j` and that float,
        // `(2^54 − 1) × 2^(j−54)`, written exactly as `digits × 10^−(54−j)`.
        for j in -12i32..=20 {
            let scale = u32::try_from(54 - j).expect("positive");
            let exact = ((num_bigint::BigUint::from(1u8) << 54u32) - 1u8)
                * num_bigint::BigUint::from(5u8).pow(scale);
            let text = exact.to_string();
            for digits in 17..=19usize {
                let head: u64 = text[..digits].parse().expect("digits");
                let point = i64::try_from(text.len()).expect("short") - i64::from(scale) - 1;
                for d in head.saturating_sub(3)..=head + 3 {
                    let d = d.to_string();
                    let lit = format!("{}.{}e{point}", &d[..1], &d[1..]);
                    let scan = scan_number(lit.as_bytes(), 0).expect("a number literal");
                    let (one_pass, text) =
                        (scanned_value(&scan, &lit), text_number_value(&lit, false));
                    assert_same_reading(&lit, &one_pass, &text);
                }
            }
        }
        assert!(
            eligible > 500_000 && settled * 100 > eligible * 99,
            "settled {settled} of {eligible}"
        );
        // Both answers are common: the printouts hold, most moved digits do not.
        assert!(
            holding > settled / 10 && holding < settled / 10 * 9,
            "{holding} of {settled}"
        );
    }

    #[test]
    fn floats_and_decimals() {
        assert_eq!(num("1.0"), Value::f64(1.0));
        assert_eq!(num("1.50"), Value::f64(1.5));
        assert_eq!(num("1e2"), Value::f64(100.0));
        assert_eq!(num("1E+2"), Value::f64(100.0));
        assert_eq!(num("-0.0"), Value::f64(-0.0));
        assert_eq!(num("0e10"), Value::f64(0.0));
        assert_eq!(num("5e-324"), Value::f64(5e-324));
        assert_eq!(num("1.7976931348623157e308"), Value::f64(f64::MAX));
        assert_eq!(num("0.1"), Value::f64(0.1));
        assert_eq!(
            num("123.456789012345678"),
            Value::Decimal("123.456789012345678".into())
        );
        assert_eq!(
            num("2.2250738585072014e-308"),
            Value::f64(f64::MIN_POSITIVE)
        );
        assert_eq!(num("0.30000000000000004"), Value::f64(0.1 + 0.2));
        // 17-digit printouts (C's %.17g, as in canada.json) and exact expansions are the float.
        assert_eq!(
            num("-65.613616999999977"),
            Value::f64(-65.613_616_999_999_98)
        );
        assert_eq!(num("0.1000000000000000055511151231257827"), Value::f64(0.1));
        for d in [
            "1e400",
            "-1e400",
            "9007199254740993.0",
            "0.1000000000000000000001",
            "1e-400",
            "123.456e-789",
        ] {
            assert_eq!(num(d), Value::Decimal(d.into()), "{d}");
        }
    }

    #[test]
    fn slow_path_agrees_with_fast_path() {
        // Literals of 16+ digits that are exactly the shortest form are floats.
        for x in [0.1 + 0.2, 1.0 / 3.0, std::f64::consts::PI, 1e-310, 2.5e-320] {
            let text = ryu::Buffer::new().format_finite(x).to_string();
            assert_eq!(num(&text), Value::f64(x), "{text}");
            // Padding with zeros keeps it a float.
            let (mantissa, exp) = text.split_at(text.find('e').unwrap_or(text.len()));
            let dot = if mantissa.contains('.') { "" } else { "." };
            let padded = format!("{mantissa}{dot}000{exp}");
            assert_eq!(num(&padded), Value::f64(x), "{padded}");
        }
    }

    #[test]
    fn rejects_bad_grammar() {
        for bad in [
            "", "-", "01", "+1", ".5", "1.", "1e", "1e+", "0x10", "1 ", " 1", "--1", "1.5.2",
        ] {
            assert_eq!(parse_number(bad), None, "{bad:?}");
        }
    }
}
