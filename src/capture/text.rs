//! Text that carries bytes: hex in its many pasted shapes, dumps, base64, `data:` URLs.
//!
//! Engineers copy payloads out of terminals, debuggers and browsers; this module turns such text
//! back into the bytes, and says which shape it recognised so the layer chain can name it.
//!
//! Conventions: a shape is only accepted when the *whole* text (after trimming) matches it, and
//! texts shorter than 8 characters are left alone (too ambiguous). JSON is not handled here: the
//! caller ([`super::layers::unwrap`]) checks for JSON first so that `1234` stays a number.
//! Every parser is a single pass over the text (no recursion, no backtracking beyond one line);
//! output is bounded by the text's own length except for the `*` lines of `hexdump`, whose
//! expansion is capped by the caller's limit.
//!
//! Not handled: `od` output in octal or decimal (`-b`, `-d`), `xxd -b` bit dumps, `*` lines in a
//! dump without offsets (the repeat count is unknowable), base32/base85.

use base64::Engine;

/// Which textual shape the bytes were found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextShape {
    /// Hex digits, contiguous or separated (`0a0b`, `0a 0b`, `0a:0b`, a Wireshark hex stream).
    Hex,
    /// `0x0a, 0x0b`, optionally in `{…}` or `[…]` (C, Rust, Python arrays).
    HexArray,
    /// `\x0a\x0b` escapes.
    HexEscapes,
    /// A Python bytes literal `b'\x81\xa3key\x01'`.
    PythonBytes,
    /// A dump with offsets: `xxd`, `hexdump -C`, `od -tx1`, Wireshark's "Copy as Hex Dump".
    HexDump,
    /// Standard base64 (`+/`), padded or not, possibly wrapped over lines.
    Base64,
    /// URL-safe base64 (`-_`).
    Base64Url,
    /// A `data:` URL whose data is base64.
    DataUrlBase64,
    /// A `data:` URL whose data is percent-encoded.
    DataUrlPercent,
}

impl TextShape {
    /// The layer name shown to the user.
    pub fn name(self) -> &'static str {
        match self {
            TextShape::Hex => "hex",
            TextShape::HexArray => "hex array",
            TextShape::HexEscapes => "hex escapes",
            TextShape::PythonBytes => "Python bytes literal",
            TextShape::HexDump => "hex dump",
            TextShape::Base64 => "base64",
            TextShape::Base64Url => "base64url",
            TextShape::DataUrlBase64 => "data: URL (base64)",
            TextShape::DataUrlPercent => "data: URL (percent-encoded)",
        }
    }
}

/// Bytes recovered from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The shape they were written in.
    pub shape: TextShape,
    /// What more the text said, e.g. the media type of a `data:` URL, or the dump's flavour.
    pub detail: String,
}

/// Texts shorter than this (after trimming) are never decoded.
pub const MIN_LEN: usize = 8;

/// Recognises `text` as one of the [`TextShape`]s and decodes it.
///
/// `max_output` caps what a dump's `*` repeat lines may expand to. Returns `None` when the whole
/// text matches no shape.
///
/// ```
/// use wirelens::capture::text::{decode_text, TextShape};
///
/// let d = decode_text(b"0x81, 0xa3, 0x6b, 0x65", 1 << 20).expect("hex array");
/// assert_eq!(d.bytes, [0x81, 0xa3, 0x6b, 0x65]);
/// assert_eq!(d.shape, TextShape::HexArray);
/// ```
pub fn decode_text(text: &[u8], max_output: usize) -> Option<Decoded> {
    let text = std::str::from_utf8(text).ok()?;
    let t = text.trim();
    if t.len() < MIN_LEN {
        return None;
    }
    if let Some(d) = data_url(t) {
        return Some(d);
    }
    if let Some(d) = python_bytes(t) {
        return Some(d);
    }
    if let Some(bytes) = hex_escapes(t) {
        return Some(decoded(bytes, TextShape::HexEscapes, ""));
    }
    if let Some(bytes) = hex_array(t) {
        return Some(decoded(bytes, TextShape::HexArray, ""));
    }
    if let Some(bytes) = plain_hex(t) {
        return Some(decoded(bytes, TextShape::Hex, ""));
    }
    if let Some((bytes, flavour)) = hex_dump(t, max_output) {
        return Some(decoded(bytes, TextShape::HexDump, flavour));
    }
    base64_text(t)
}

fn decoded(bytes: Vec<u8>, shape: TextShape, detail: &str) -> Decoded {
    Decoded {
        bytes,
        shape,
        detail: detail.to_string(),
    }
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Appends the bytes of an even-length run of hex digits; `None` if it is not one.
fn push_hex_pairs(digits: &[u8], out: &mut Vec<u8>) -> Option<()> {
    if digits.is_empty() || digits.len() % 2 != 0 {
        return None;
    }
    for pair in digits.chunks_exact(2) {
        let hi = hex_val(*pair.first()?)?;
        let lo = hex_val(*pair.get(1)?)?;
        out.push(hi << 4 | lo);
    }
    Some(())
}

/// `0a0b`, `0a 0b`, `0a:0b`, `0a-0b`, lines of `xxd -p`.
fn plain_hex(t: &str) -> Option<Vec<u8>> {
    // `00000000: 8aa2 …` is an xxd line, not colon-separated hex.
    if t.contains(':') && t.contains(char::is_whitespace) {
        return None;
    }
    let mut out = Vec::with_capacity(t.len() / 2);
    for token in t.split(|c: char| c.is_whitespace() || c == ':' || c == '-' || c == ',') {
        if token.is_empty() {
            continue;
        }
        push_hex_pairs(token.as_bytes(), &mut out)?;
    }
    (!out.is_empty()).then_some(out)
}

/// `0x0a, 0x0b`, `{0x0a, 0x0b}`, `[0x0a,0x0b]`, `unsigned char b[] = {0x0a, …};`.
fn hex_array(t: &str) -> Option<Vec<u8>> {
    let mut body = t.strip_suffix(';').unwrap_or(t).trim_end();
    // `{…}` wins over `[…]`: in `unsigned char p[] = {…}` the brackets belong to the name.
    if let Some(open) = body.find('{') {
        body = body.get(open + 1..)?.strip_suffix('}')?;
    } else if let Some(open) = body.find('[') {
        body = body.get(open + 1..)?.strip_suffix(']')?;
    }
    let mut out = Vec::with_capacity(body.len() / 4 + 1);
    for token in body.split(|c: char| c.is_whitespace() || c == ',') {
        if token.is_empty() {
            continue;
        }
        let digits = token
            .strip_prefix("0x")
            .or_else(|| token.strip_prefix("0X"))?;
        // Rust suffixes: 0x0au8, 0x0a_u8.
        let digits = digits
            .strip_suffix("u8")
            .map(|d| d.strip_suffix('_').unwrap_or(d))
            .unwrap_or(digits);
        if digits.is_empty() || digits.len() > 2 {
            return None;
        }
        let mut value = 0u8;
        for c in digits.bytes() {
            value = value << 4 | hex_val(c)?;
        }
        out.push(value);
    }
    (!out.is_empty()).then_some(out)
}

/// `\x0a\x0b` (whitespace between escapes allowed, nothing else).
fn hex_escapes(t: &str) -> Option<Vec<u8>> {
    if !t.starts_with("\\x") {
        return None;
    }
    let compact: Vec<u8> = t.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(compact.len() / 4);
    for chunk in compact.chunks(4) {
        match chunk {
            [b'\\', b'x' | b'X', hi, lo] => out.push(hex_val(*hi)? << 4 | hex_val(*lo)?),
            _ => return None,
        }
    }
    Some(out)
}

/// A Python bytes literal as `repr(bytes)` prints it: `b'\x81\xa3key\x01'`, or with double
/// quotes when the bytes hold a single quote. Several literals separated by whitespace (Python's
/// implicit concatenation, as in wrapped output) are joined.
fn python_bytes(t: &str) -> Option<Decoded> {
    if !(t.starts_with("b'") || t.starts_with("b\"")) {
        return None;
    }
    let s = t.as_bytes();
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        // Between literals: whitespace only.
        while s.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        if i >= s.len() {
            break;
        }
        if s.get(i) != Some(&b'b') {
            return None;
        }
        let quote = *s.get(i + 1)?;
        if quote != b'\'' && quote != b'"' {
            return None;
        }
        i += 2;
        loop {
            let c = *s.get(i)?;
            i += 1;
            if c == quote {
                break;
            }
            if c != b'\\' {
                if !(0x20..0x7f).contains(&c) {
                    return None;
                }
                out.push(c);
                continue;
            }
            let e = *s.get(i)?;
            i += 1;
            out.push(match e {
                b'x' => {
                    let hi = hex_val(*s.get(i)?)?;
                    let lo = hex_val(*s.get(i + 1)?)?;
                    i += 2;
                    hi << 4 | lo
                }
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'0' => 0,
                b'a' => 0x07,
                b'b' => 0x08,
                b'f' => 0x0c,
                b'v' => 0x0b,
                b'\\' | b'\'' | b'"' => e,
                _ => return None,
            });
        }
    }
    Some(decoded(out, TextShape::PythonBytes, ""))
}

/// `data:[<media type>][;base64],<data>`.
fn data_url(t: &str) -> Option<Decoded> {
    let rest = t
        .strip_prefix("data:")
        .or_else(|| t.strip_prefix("DATA:"))?;
    let (meta, data) = rest.split_once(',')?;
    let (media, is_base64) = match meta.strip_suffix(";base64") {
        Some(m) => (m, true),
        None => (meta, false),
    };
    let media = if media.is_empty() {
        "text/plain;charset=US-ASCII"
    } else {
        media
    };
    if is_base64 {
        let bytes = base64_bytes(data)?.0;
        Some(decoded(bytes, TextShape::DataUrlBase64, media))
    } else {
        let bytes = percent_decode(data)?;
        Some(decoded(bytes, TextShape::DataUrlPercent, media))
    }
}

fn percent_decode(data: &str) -> Option<Vec<u8>> {
    let s = data.as_bytes();
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        if c == b'%' {
            let hi = hex_val(*s.get(i + 1)?)?;
            let lo = hex_val(*s.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    Some(out)
}

/// The whole text as base64 or base64url, wrapped over lines or not.
fn base64_text(t: &str) -> Option<Decoded> {
    // A lone word of letters ("configuration") is far more likely text than base64.
    if t.len() < 20 && t.bytes().all(|c| c.is_ascii_alphabetic()) {
        let tail = t.get(1..).unwrap_or("");
        let word = t.bytes().all(|c| c.is_ascii_lowercase())
            || t.bytes().all(|c| c.is_ascii_uppercase())
            || tail.bytes().all(|c| c.is_ascii_lowercase());
        if word {
            return None;
        }
    }
    let (bytes, url) = base64_bytes(t)?;
    let shape = if url {
        TextShape::Base64Url
    } else {
        TextShape::Base64
    };
    Some(decoded(bytes, shape, ""))
}

/// Decodes base64 (standard or URL alphabet, padding optional, line breaks ignored). The second
/// value says whether the URL alphabet was used.
fn base64_bytes(t: &str) -> Option<(Vec<u8>, bool)> {
    let mut compact = Vec::with_capacity(t.len());
    let (mut std_chars, mut url_chars) = (false, false);
    for line in t.lines() {
        let line = line.trim();
        // Spaces inside a line mean prose, not a wrapped encoding.
        for c in line.bytes() {
            match c {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'=' => {}
                b'+' | b'/' => std_chars = true,
                b'-' | b'_' => url_chars = true,
                _ => return None,
            }
            compact.push(c);
        }
    }
    if std_chars && url_chars {
        return None;
    }
    // Padding only at the end.
    let unpadded_len = compact
        .iter()
        .rposition(|&c| c != b'=')
        .map_or(0, |p| p + 1);
    if unpadded_len == 0
        || compact.len() - unpadded_len > 2
        || compact.get(..unpadded_len)?.contains(&b'=')
        || unpadded_len % 4 == 1
    {
        return None;
    }
    let body = compact.get(..unpadded_len)?;
    // Lenient about trailing bits: some encoders leave them set.
    let alphabet = if url_chars {
        base64::alphabet::URL_SAFE
    } else {
        base64::alphabet::STANDARD
    };
    let engine = base64::engine::GeneralPurpose::new(
        &alphabet,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone),
    );
    let bytes = engine.decode(body).ok()?;
    Some((bytes, url_chars))
}

/// One line of a dump with offsets.
struct DumpLine<'a> {
    /// The offset digits, or `None` for a `*` repeat line.
    offset: Option<&'a str>,
    /// Byte groups in the hex column, each with whether a wide gap (two or more blanks) came
    /// before it.
    groups: Vec<(Vec<u8>, bool)>,
}

fn parse_dump_line(line: &str) -> Option<DumpLine<'_>> {
    let line = line.trim_end();
    if line.trim() == "*" {
        return Some(DumpLine {
            offset: None,
            groups: Vec::new(),
        });
    }
    let (first, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let offset = first.strip_suffix(':').unwrap_or(first);
    if offset.len() < 4 || !offset.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    // hexdump -C puts the ASCII column between bars.
    let rest = rest.split('|').next().unwrap_or("");
    let mut groups = Vec::new();
    let mut gap = 0usize;
    let mut token_start = None;
    let bytes = rest.as_bytes();
    for i in 0..=bytes.len() {
        let c = bytes.get(i).copied();
        match (c, token_start) {
            (Some(b' ' | b'\t'), None) => gap += if c == Some(b'\t') { 2 } else { 1 },
            (Some(b' ' | b'\t') | None, Some(start)) => {
                let mut out = Vec::new();
                if push_hex_pairs(bytes.get(start..i)?, &mut out).is_none() {
                    break; // the ASCII column begins
                }
                groups.push((out, gap >= 2 && !groups.is_empty()));
                token_start = None;
                gap = if c == Some(b'\t') { 2 } else { 1 };
            }
            (Some(_), None) => token_start = Some(i),
            _ => {}
        }
    }
    Some(DumpLine {
        offset: Some(offset),
        groups,
    })
}

/// Takes groups until `count` bytes are reached exactly.
fn take_exact(groups: &[(Vec<u8>, bool)], count: usize, out: &mut Vec<u8>) -> Option<usize> {
    let mut taken = 0usize;
    for (bytes, _) in groups {
        if taken == count {
            break;
        }
        taken = taken.checked_add(bytes.len())?;
        out.extend_from_slice(bytes);
    }
    (taken == count).then_some(taken)
}

/// Takes groups up to the first wide gap, except a gap at `mid` bytes (the middle gap of
/// `hexdump -C` lines and some Wireshark dumps), for lines whose length no next offset tells.
fn take_until_gap(groups: &[(Vec<u8>, bool)], mid: Option<usize>, out: &mut Vec<u8>) -> usize {
    let mut taken = 0usize;
    for (bytes, wide) in groups {
        if *wide && Some(taken) != mid {
            break;
        }
        taken += bytes.len();
        out.extend_from_slice(bytes);
    }
    taken
}

/// Where a wide gap falls inside the first `count` bytes of a line.
fn gap_position(groups: &[(Vec<u8>, bool)], count: usize) -> Option<usize> {
    let mut taken = 0usize;
    for (bytes, wide) in groups {
        if taken >= count {
            break;
        }
        if *wide && taken > 0 {
            return Some(taken);
        }
        taken += bytes.len();
    }
    None
}

/// A dump with an offset on every line: `xxd`, `hexdump -C` (with `*` lines), `od -tx1`
/// (octal offsets), Wireshark's "Copy as Hex Dump". The ASCII column is dropped; line lengths
/// come from the offsets, and the last line stops at the gap before its ASCII column.
fn hex_dump(t: &str, max_output: usize) -> Option<(Vec<u8>, &'static str)> {
    let lines: Vec<DumpLine<'_>> = t
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(parse_dump_line)
        .collect::<Option<_>>()?;
    let first = lines.first()?.offset?;
    let flavour = if t.contains('|') {
        "hexdump -C"
    } else if first.len() == 8 && t.lines().next()?.contains(": ") {
        "xxd"
    } else if first.len() == 4 {
        "Wireshark"
    } else {
        "od"
    };
    let radixes: &[u32] = if flavour == "od" { &[8, 16] } else { &[16, 8] };
    for &radix in radixes {
        if let Some(bytes) = resolve_dump(&lines, radix, max_output) {
            if !bytes.is_empty() {
                return Some((bytes, flavour));
            }
        }
    }
    None
}

fn resolve_dump(lines: &[DumpLine<'_>], radix: u32, max_output: usize) -> Option<Vec<u8>> {
    let offsets: Vec<Option<usize>> = lines
        .iter()
        .map(|l| match l.offset {
            Some(d) => usize::from_str_radix(d, radix).ok().map(Some),
            None => Some(None),
        })
        .collect::<Option<_>>()?;
    let base = (*offsets.first()?)?;
    let mut out: Vec<u8> = Vec::new();
    let mut mid: Option<usize> = None;
    let mut i = 0;
    while let Some(line) = lines.get(i) {
        let Some(offset) = offsets.get(i).copied().flatten() else {
            return None; // a `*` not after a data line
        };
        if offset != base.checked_add(out.len())? {
            return None;
        }
        let line_start = out.len();
        let next = offsets.get(i + 1).copied();
        match next {
            Some(Some(next_offset)) => {
                let count = next_offset.checked_sub(offset)?;
                take_exact(&line.groups, count, &mut out)?;
                if mid.is_none() {
                    mid = gap_position(&line.groups, count);
                }
                i += 1;
            }
            Some(None) => {
                // A data line, then `*`: it repeats up to the offset after the star.
                let n = take_until_gap(&line.groups, mid, &mut out);
                let after = offsets.get(i + 2).copied().flatten();
                let repeat_to = after?.checked_sub(base)?;
                if n == 0 || repeat_to < out.len() || (repeat_to - out.len()) % n != 0 {
                    return None;
                }
                if repeat_to > max_output {
                    return None;
                }
                out.reserve(repeat_to - out.len());
                while out.len() < repeat_to {
                    out.extend_from_within(line_start..line_start + n);
                }
                i += 2;
            }
            None => {
                take_until_gap(&line.groups, mid, &mut out);
                i += 1;
            }
        }
        if out.len() > max_output {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> Option<(Vec<u8>, TextShape)> {
        decode_text(text.as_bytes(), 1 << 20).map(|d| (d.bytes, d.shape))
    }

    #[test]
    fn hex_shapes() {
        let want = vec![0x0a, 0x0b, 0x0c, 0x0d];
        assert_eq!(bytes("0a0b0c0d"), Some((want.clone(), TextShape::Hex)));
        assert_eq!(
            bytes(" 0a 0b\n0c 0d "),
            Some((want.clone(), TextShape::Hex))
        );
        assert_eq!(bytes("0A-0B-0C-0D"), Some((want.clone(), TextShape::Hex)));
        assert_eq!(
            bytes("{0x0a, 0x0b, 0x0c, 0x0d}"),
            Some((want.clone(), TextShape::HexArray))
        );
        assert_eq!(
            bytes("\\x0a\\x0b\\x0c\\x0d"),
            Some((want, TextShape::HexEscapes))
        );
        assert_eq!(bytes("0x0a, 0x0b, 0x100"), None, "0x100 is no byte");
        assert_eq!(bytes("\\x0a\\x0b\\x0"), None, "cut escape");
        assert_eq!(bytes("0a0b0c0"), None, "short and odd");
    }

    #[test]
    fn python_literals() {
        assert_eq!(
            bytes(r"b'\x81\xa3key\x01'"),
            Some((
                vec![0x81, 0xa3, b'k', b'e', b'y', 1],
                TextShape::PythonBytes
            ))
        );
        assert_eq!(
            bytes("b'abcd' b'efgh'"),
            Some((b"abcdefgh".to_vec(), TextShape::PythonBytes))
        );
        assert_eq!(bytes(r"b'\x81\xa3key"), None, "unterminated");
        assert_eq!(bytes(r"b'\q123456'"), None, "unknown escape");
    }

    #[test]
    fn base64_rules() {
        assert_eq!(
            bytes("gaNrZXkB"),
            Some((vec![0x81, 0xa3, b'k', b'e', b'y', 1], TextShape::Base64))
        );
        assert_eq!(
            bytes("gaNr\nZXkB\n"),
            Some((vec![0x81, 0xa3, b'k', b'e', b'y', 1], TextShape::Base64))
        );
        assert_eq!(
            bytes("_-_-_-_-"),
            Some((
                vec![0xff, 0xef, 0xfe, 0xff, 0xef, 0xfe],
                TextShape::Base64Url
            ))
        );
        assert_eq!(bytes("gaNr ZXkB"), None, "space inside a line");
        assert_eq!(bytes("gaN=rZXkB"), None, "padding in the middle");
        assert_eq!(bytes("ab+c_def"), None, "mixed alphabets");
        assert_eq!(bytes("abcdefghi"), None, "a word");
    }

    #[test]
    fn dumps() {
        let xxd = "00000000: 0102 0304 0506 0708 090a 0b0c 0d0e 0f10  ................\n\
                   00000010: 6162                                     ab\n";
        let (b, shape) = bytes(xxd).expect("xxd");
        assert_eq!(shape, TextShape::HexDump);
        assert_eq!(b.len(), 18);
        assert_eq!(b.get(16..), Some(&b"ab"[..]));

        // A dump whose offsets do not match its bytes is rejected.
        let bad = "00000000: 0102 0304\n00000010: 0506\n";
        assert_eq!(bytes(bad), None);

        // A `*` repeats the line before it up to the next offset.
        assert_eq!(
            bytes("00000000  01 02\n*\n00000008\n"),
            Some((vec![1, 2, 1, 2, 1, 2, 1, 2], TextShape::HexDump))
        );
        // A `*` with nothing to repeat, or a repeat that does not fit the next offset.
        assert_eq!(bytes("*\n00000000  01 02 03 04\n"), None);
        assert_eq!(bytes("00000000  01 02\n*\n00000009\n"), None);
    }
}
