//! The numbers the data inspector shows for the bytes at an offset, as text.
//!
//! Kept apart from the drawing so the readings are plain functions over a byte slice: every
//! reading that needs more bytes than remain says "—" instead of reading past the end.

/// Shown for a reading that needs more bytes than remain (or that does not end in time).
pub const NONE: &str = "—";

/// Longest unsigned LEB128 varint accepted (a u64 needs at most 10 bytes).
const MAX_VARINT_LEN: usize = 10;

/// `N` bytes starting at `offset`, if they are all there.
fn take<const N: usize>(bytes: &[u8], offset: usize) -> Option<[u8; N]> {
    let end = offset.checked_add(N)?;
    bytes.get(offset..end)?.try_into().ok()
}

/// One row of the inspector: a plain label ("u16 LE") and its value as text.
pub type Reading = (&'static str, String);

/// The integer and float readings, in pairs (LE then BE) after the single-byte ones.
pub fn readings(bytes: &[u8], offset: usize) -> Vec<Reading> {
    let mut out = Vec::with_capacity(24);
    let show = |v: Option<String>| v.unwrap_or_else(|| NONE.to_string());
    let b = bytes.get(offset).copied();
    out.push(("u8", show(b.map(|x| x.to_string()))));
    out.push(("i8", show(b.map(|x| (x as i8).to_string()))));
    macro_rules! int {
        ($t:ty, $n:literal, $le:literal, $be:literal) => {{
            let raw = take::<$n>(bytes, offset);
            out.push(($le, show(raw.map(|r| <$t>::from_le_bytes(r).to_string()))));
            out.push(($be, show(raw.map(|r| <$t>::from_be_bytes(r).to_string()))));
        }};
    }
    int!(u16, 2, "u16 LE", "u16 BE");
    int!(i16, 2, "i16 LE", "i16 BE");
    int!(u32, 4, "u32 LE", "u32 BE");
    int!(i32, 4, "i32 LE", "i32 BE");
    int!(u64, 8, "u64 LE", "u64 BE");
    int!(i64, 8, "i64 LE", "i64 BE");
    let f16 = take::<2>(bytes, offset);
    out.push((
        "f16 LE",
        show(f16.map(|r| half::f16::from_le_bytes(r).to_f32().to_string())),
    ));
    out.push((
        "f16 BE",
        show(f16.map(|r| half::f16::from_be_bytes(r).to_f32().to_string())),
    ));
    macro_rules! float {
        ($t:ty, $n:literal, $le:literal, $be:literal) => {{
            let raw = take::<$n>(bytes, offset);
            out.push((
                $le,
                show(raw.map(|r| float_text(f64::from(<$t>::from_le_bytes(r))))),
            ));
            out.push((
                $be,
                show(raw.map(|r| float_text(f64::from(<$t>::from_be_bytes(r))))),
            ));
        }};
    }
    float!(f32, 4, "f32 LE", "f32 BE");
    float!(f64, 8, "f64 LE", "f64 BE");
    out
}

/// A float as a person reads it: plain for ordinary magnitudes, with an exponent for very small
/// or very large ones (so 5e-324 is not three hundred zeros wide).
pub fn float_text(x: f64) -> String {
    let magnitude = x.abs();
    if x == 0.0 || !x.is_finite() || (1e-6..1e16).contains(&magnitude) {
        x.to_string()
    } else {
        format!("{x:e}")
    }
}

/// An unsigned LEB128 varint at `offset`: its value and length in bytes. `None` if it does not
/// end within 10 bytes or the buffer, or does not fit in 64 bits.
pub fn varint(bytes: &[u8], offset: usize) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    for i in 0..MAX_VARINT_LEN {
        let b = *bytes.get(offset.checked_add(i)?)?;
        let bits = u64::from(b & 0x7f);
        if i == MAX_VARINT_LEN - 1 && bits > 1 {
            return None;
        }
        value |= bits << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// Zigzag-decodes a varint value (protobuf `sint64`).
pub fn zigzag(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

/// The varint and its zigzag reading as text, with the length.
pub fn varint_text(bytes: &[u8], offset: usize) -> (String, String) {
    match varint(bytes, offset) {
        Some((v, len)) => {
            let unit = if len == 1 { "byte" } else { "bytes" };
            (
                format!("{v} ({len} {unit})"),
                format!("{} ({len} {unit})", zigzag(v)),
            )
        }
        None => (NONE.to_string(), NONE.to_string()),
    }
}

/// The UTF-8 character starting at `offset`, or why there is none.
pub fn utf8_char(bytes: &[u8], offset: usize) -> Option<char> {
    let first = *bytes.get(offset)?;
    let len = match first {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    let end = offset.checked_add(len)?;
    let slice = bytes.get(offset..end)?;
    std::str::from_utf8(slice).ok()?.chars().next()
}

/// The UTF-8 reading as text: `'中' U+4E2D (3 bytes)`, or "invalid".
pub fn utf8_text(bytes: &[u8], offset: usize) -> String {
    match utf8_char(bytes, offset) {
        Some(c) => {
            let len = c.len_utf8();
            let unit = if len == 1 { "byte" } else { "bytes" };
            let shown = if c.is_control() || c.is_whitespace() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            };
            format!("'{shown}' U+{:04X} ({len} {unit})", u32::from(c))
        }
        None if offset < bytes.len() => "invalid".to_string(),
        None => NONE.to_string(),
    }
}

/// The byte at `offset` in binary, `0b1010_1100`.
pub fn binary_text(bytes: &[u8], offset: usize) -> String {
    match bytes.get(offset) {
        Some(b) => format!("{:04b}_{:04b}", b >> 4, b & 0x0f),
        None => NONE.to_string(),
    }
}

/// Parses an offset typed by the user: decimal (`1234`) or hex (`0x4d2`), with `_` allowed.
pub fn parse_offset(text: &str) -> Option<usize> {
    let t = text.trim().replace('_', "");
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        usize::from_str_radix(hex, 16).ok()
    } else {
        t.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(r: &[Reading], label: &str) -> String {
        r.iter()
            .find(|(l, _)| *l == label)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }

    #[test]
    fn integers_both_byte_orders() {
        let r = readings(&[1, 2, 3, 4], 0);
        assert_eq!(get(&r, "u32 LE"), "67305985");
        assert_eq!(get(&r, "u32 BE"), "16909060");
        assert_eq!(get(&r, "u16 BE"), "258");
        assert_eq!(get(&r, "u64 LE"), NONE);
        let r = readings(&[0xff, 0xfe], 0);
        assert_eq!(get(&r, "i8"), "-1");
        assert_eq!(get(&r, "i16 LE"), "-257");
    }

    #[test]
    fn floats() {
        let r = readings(&[0x00, 0x00, 0x80, 0x3f], 0);
        assert_eq!(get(&r, "f32 LE"), "1");
        // 0x3c00 is 1.0 in half precision.
        let r = readings(&[0x3c, 0x00], 0);
        assert_eq!(get(&r, "f16 BE"), "1");
    }

    #[test]
    fn varints_and_zigzag() {
        assert_eq!(varint(&[0xac, 0x02], 0), Some((300, 2)));
        assert_eq!(varint(&[0x80, 0x80], 0), None);
        assert_eq!(varint(&[0xff; 12], 0), None);
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(varint(&max, 0), Some((u64::MAX, 10)));
        assert_eq!(zigzag(3), -2);
        assert_eq!(zigzag(4), 2);
        assert_eq!(varint_text(&[0x03], 0).1, "-2 (1 byte)");
    }

    #[test]
    fn floats_far_from_one_get_an_exponent() {
        assert_eq!(float_text(1.5), "1.5");
        assert_eq!(float_text(-0.017593384), "-0.017593384");
        assert_eq!(float_text(5e-324), "5e-324");
        assert_eq!(float_text(2.6360696e19), "2.6360696e19");
        assert_eq!(float_text(f64::NAN), "NaN");
    }

    #[test]
    fn utf8_and_offsets() {
        let s = "a中".as_bytes();
        assert_eq!(utf8_char(s, 1), Some('中'));
        assert_eq!(utf8_text(s, 2), "invalid");
        assert_eq!(utf8_text(s, 9), NONE);
        assert_eq!(binary_text(&[0xac], 0), "1010_1100");
        assert_eq!(parse_offset("0x4d2"), Some(1234));
        assert_eq!(parse_offset(" 1_234 "), Some(1234));
        assert_eq!(parse_offset("zz"), None);
        // u8, i8; u16…i64 LE and BE (12); f16, f32, f64 LE and BE (6): all present, even past
        // the end.
        assert_eq!(readings(&[1], usize::MAX).len(), 20);
        assert!(readings(&[1], usize::MAX).iter().all(|(_, v)| v == NONE));
    }
}
