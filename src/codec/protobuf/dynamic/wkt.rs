//! The well-known types (`google.protobuf.*`) by name, and the text forms their JSON uses
//! (durations, field-mask paths): what the decoder, the encoders and the JSON writers ask about
//! them. A leaf: how each type's bytes are read is `decode/wkt.rs`, and how they are written
//! `encode/wkt.rs`, each inside the module it builds on; this file names neither.

/// The well-known types read and written in their JSON form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WellKnown {
    Timestamp,
    Duration,
    FieldMask,
    Empty,
    /// `DoubleValue`, `Int32Value`…: one field 1 of a scalar type.
    Wrapper,
    Struct,
    /// `google.protobuf.Value`: null, number, text, bool, struct or list.
    Value,
    ListValue,
    Any,
}

impl WellKnown {
    /// The well-known type named `name` (a message's full name), if it is one.
    pub(super) fn of(name: &str) -> Option<WellKnown> {
        Some(match name {
            "google.protobuf.Timestamp" => WellKnown::Timestamp,
            "google.protobuf.Duration" => WellKnown::Duration,
            "google.protobuf.FieldMask" => WellKnown::FieldMask,
            "google.protobuf.Empty" => WellKnown::Empty,
            "google.protobuf.DoubleValue"
            | "google.protobuf.FloatValue"
            | "google.protobuf.Int64Value"
            | "google.protobuf.UInt64Value"
            | "google.protobuf.Int32Value"
            | "google.protobuf.UInt32Value"
            | "google.protobuf.BoolValue"
            | "google.protobuf.StringValue"
            | "google.protobuf.BytesValue" => WellKnown::Wrapper,
            "google.protobuf.Struct" => WellKnown::Struct,
            "google.protobuf.Value" => WellKnown::Value,
            "google.protobuf.ListValue" => WellKnown::ListValue,
            "google.protobuf.Any" => WellKnown::Any,
            _ => return None,
        })
    }
}

/// Whether the decoder reads `name` in its natural form (when its bytes are plain).
pub(super) fn is_wkt(name: &str) -> bool {
    WellKnown::of(name).is_some()
}

/// Well-known types whose JSON form is not a map of fields (an `Any` of one has `"value"`).
pub(super) fn is_wkt_json(name: &str) -> bool {
    !matches!(
        WellKnown::of(name),
        None | Some(WellKnown::Empty | WellKnown::Any)
    )
}

/// `seconds` and `nanos` as proto3 JSON text with the fewest fraction digits: `"1.5s"`,
/// `"-0.000001s"`.
pub(super) fn duration_text(seconds: i64, nanos: i32) -> String {
    let neg = seconds < 0 || nanos < 0;
    let s = seconds.unsigned_abs();
    let n = nanos.unsigned_abs();
    // Shortest exact fraction ("1.5s"), as the contract shows; proto3 JSON readers accept it.
    let frac = if n == 0 {
        String::new()
    } else {
        format!(".{n:09}").trim_end_matches('0').to_string()
    };
    format!("{}{s}{frac}s", if neg { "-" } else { "" })
}

/// `"1.5s"`, `"-0.000000001s"` into seconds and nanos (same sign).
pub(super) fn parse_duration(s: &str) -> Option<(i64, i32)> {
    let body = s.strip_suffix('s')?;
    let (neg, body) = match body.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, body),
    };
    let (whole, frac) = match body.split_once('.') {
        Some((w, f)) => (w, f),
        None => (body, ""),
    };
    if whole.is_empty()
        || !whole.bytes().all(|c| c.is_ascii_digit())
        || frac.len() > 9
        || !frac.bytes().all(|c| c.is_ascii_digit())
        || (body.contains('.') && frac.is_empty())
    {
        return None;
    }
    let secs: i64 = whole.parse().ok()?;
    if secs > 315_576_000_000 {
        return None;
    }
    let mut nanos: i32 = 0;
    for (i, c) in frac
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(9)
        .enumerate()
    {
        let _ = i;
        nanos = nanos * 10 + i32::from(c - b'0');
    }
    Some(if neg { (-secs, -nanos) } else { (secs, nanos) })
}

/// `fooBar` → `foo_bar` (a FieldMask path from its JSON form).
pub(super) fn snake_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_proto3_json_text() {
        assert_eq!(duration_text(1, 500_000_000), "1.5s");
        assert_eq!(duration_text(0, -1_000), "-0.000001s");
        assert_eq!(duration_text(-3, 0), "-3s");
        assert_eq!(duration_text(0, 1), "0.000000001s");
    }

    #[test]
    fn durations_and_masks_from_text() {
        assert_eq!(parse_duration("1.5s"), Some((1, 500_000_000)));
        assert_eq!(parse_duration("-0.000000001s"), Some((0, -1)));
        assert_eq!(parse_duration("3s"), Some((3, 0)));
        assert_eq!(parse_duration("1.s"), None);
        assert_eq!(parse_duration("1.5"), None);
        assert_eq!(parse_duration("1.0000000001s"), None);
        assert_eq!(snake_case("fooBar.bazQux"), "foo_bar.baz_qux");
    }
}
