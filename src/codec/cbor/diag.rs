//! CBOR diagnostic notation (RFC 8949 §8) of a [`Value`], as the encoder would write it.

use std::fmt::Write;

use super::encode::decimal_parts;
use crate::model::{Value, INT_MAX, INT_MIN};

/// The RFC 8949 §8 diagnostic notation of what [`encode`](super::encode) writes for `value`:
/// `[1, {"a": h'0102'}]`, `1(1363896240)`, `simple(16)`, `undefined`, `NaN`, `1.0e+300`.
///
/// Floats are written with their shortest round-trip digits in the style of RFC 8949 appendix A
/// (`1.5`, `100000.0`, `1.0e+300`, `5.960464477539063e-8`), without width indicators; bignums as
/// their decimal digits; indefinite lengths never appear (the value does not keep them). Values
/// CBOR cannot say are shown as written: a decimal as `4([exponent, mantissa])`, a timestamp as
/// `1(seconds)` or `0("RFC 3339")`, a MessagePack extension as its data bytes, simple values
/// 24..31 as `null`.
pub fn diagnostic(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Raw(raw) => write_value(out, &Value::Bytes(raw.data.clone())),
        Value::Null => out.push_str("null"),
        Value::Undefined => out.push_str("undefined"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::BigInt(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Float(f) => out.push_str(&float_text(f.value)),
        Value::Decimal(text) => match decimal_parts(text) {
            Some((m, e)) if i128::try_from(&e).is_ok_and(|e| (INT_MIN..=INT_MAX).contains(&e)) => {
                let _ = write!(out, "4([{e}, {m}])");
            }
            _ => out.push_str(&float_text(text.parse().unwrap_or(f64::NAN))),
        },
        Value::Text(s) => write_text(out, s),
        Value::Bytes(b) | Value::Ext(_, b) => write_bytes(out, b),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, k);
                out.push_str(": ");
                write_value(out, v);
            }
            out.push('}');
        }
        Value::Tag(t, inner) => {
            let _ = write!(out, "{t}(");
            write_value(out, inner);
            out.push(')');
        }
        Value::Simple(n @ 20..=23) => out.push_str(match n {
            20 => "false",
            21 => "true",
            22 => "null",
            _ => "undefined",
        }),
        Value::Simple(24..=31) => out.push_str("null"),
        Value::Simple(n) => {
            let _ = write!(out, "simple({n})");
        }
        Value::Timestamp(ts) => {
            if ts.nanos == 0 {
                let _ = write!(out, "1({})", ts.seconds);
            } else {
                out.push_str("0(");
                write_text(out, &ts.to_rfc3339());
                out.push(')');
            }
        }
    }
}

/// A float in the appendix A style: `1.0`, `-0.0`, `1.0e+300`, `5.960464477539063e-8`, `NaN`.
fn float_text(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let s = ryu::Buffer::new().format_finite(v).to_string();
    match s.split_once('e') {
        None => s,
        Some((m, e)) => {
            let m = if m.contains('.') {
                m.to_string()
            } else {
                format!("{m}.0")
            };
            let sign = if e.starts_with('-') { "" } else { "+" };
            format!("{m}e{sign}{e}")
        }
    }
}

fn write_text(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_bytes(out: &mut String, b: &[u8]) {
    out.push_str("h'");
    for x in b {
        let _ = write!(out, "{x:02x}");
    }
    out.push('\'');
}
