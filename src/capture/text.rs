//! Text that carries bytes: hex in its many pasted shapes, dumps, base64, `data:` URLs.
//!
//! Engineers copy payloads out of terminals, debuggers and browsers; this module turns such text
//! back into the bytes, and says which shape it recognised so the layer chain can name it.
//!
//! Shapes, tried in this order (first match wins):
//! - `data:` URLs, base64 or percent-encoded ([`TextShape::DataUrlBase64`],
//!   [`TextShape::DataUrlPercent`]);
//! - Python bytes literals `b'\x81\xa3key'` ([`TextShape::PythonBytes`]);
//! - `\x0a\x0b` escapes ([`TextShape::HexEscapes`]);
//! - `xxd -i` output (`unsigned char name[] = {…}; unsigned int name_len = N;`, the length
//!   checked against the array) and other arrays of `0x..` bytes: C, Rust, Python
//!   ([`TextShape::HexArray`]);
//! - Wireshark's Follow Stream as raw hex (tshark `-z follow,tcp,raw,N`): one payload per
//!   direction ([`TextShape::Hex`]);
//! - dumps with offsets ([`TextShape::HexDump`]), with the flavour in [`Decoded::detail`]:
//!   Wireshark's Follow TCP/HTTP Stream as a hex dump (tshark `-z follow,tcp,hex,N` with its
//!   header, or the data lines alone; the second node's lines indented, one payload per
//!   direction), `hexdump -C` (with `*` lines), `xxd` (and `xxd -a`'s `*` lines), `tshark -x`
//!   and Wireshark's "Copy as Hex Dump" (one payload per packet dump and per data source such
//!   as `Reassembled TCP (195 bytes):`), `od -tx1` with octal, hex or decimal offsets (and
//!   `*` lines, and `-tx1z`'s ASCII column);
//! - plain hex: `0a0b`, `0a 0b`, `0a:0b`, `xxd -p`, `od -An -tx1`, Wireshark's "Copy as a Hex
//!   Stream" ([`TextShape::Hex`]);
//! - base64 and base64url, padded or not, wrapped or not ([`TextShape::Base64`],
//!   [`TextShape::Base64Url`]).
//!
//! The all-lines rule: a dump is read whole or not at all. Every non-blank line must parse in
//! the shape's grammar (a data line, a `*` repeat line, a lone end offset, tshark's headers
//! and section titles), and every offset must follow from the bytes before it (a `*` line
//! repeats the line before it up to the next offset). When half of a text's lines or fewer
//! parse in a shape, the text is not that shape and the next is tried; when most do (or
//! tshark's `Follow:` header says so), a line that does not parse is an error naming the
//! line and why ([`TextError`], from [`decode_text_checked`]), never a shorter result. Arrays
//! and `xxd -i` output are held to the same rule once their declaration is recognised.
//!
//! Conventions: a shape is only accepted when the *whole* text (after trimming) matches it, and
//! texts shorter than 8 characters are left alone (too ambiguous). JSON is not handled here: the
//! caller ([`super::layers::unwrap`]) checks for JSON first so that `1234` stays a number.
//! Every parser is a single pass over the text (no recursion, no backtracking beyond one line);
//! output is bounded by the text's own length except for the `*` lines of dumps, whose
//! expansion is capped by the caller's limit (a dump that would pass it is not read as a dump).
//!
//! Not handled: `od` output in octal or decimal (`-b`, `-d`), 2-byte word dumps (`od -x`,
//! `hexdump` without `-C`: an error says why, their byte order is the dumping machine's),
//! `xxd -b` bit dumps, `xxd -e` little-endian groups (indistinguishable from `xxd -g4`), `*`
//! lines in a dump without offsets (the repeat count is unknowable), `tshark -P -x` packet
//! summary lines between the dumps, base32/base85.

mod dumps;

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
    /// A dump with offsets: `xxd`, `hexdump -C`, `od -tx1`, `tshark -x`, Wireshark's "Copy as
    /// Hex Dump" and its Follow Stream hex dump.
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
    /// The bytes: all of them, or the first payload when the text holds several (see
    /// [`Decoded::more`]).
    pub bytes: Vec<u8>,
    /// The shape they were written in.
    pub shape: TextShape,
    /// What more the text said, e.g. the media type of a `data:` URL, or the dump's flavour;
    /// for a text of several payloads, which one `bytes` is (`Wireshark follow-stream hex,
    /// node 0 (127.0.0.1:40932) → client side`).
    pub detail: String,
    /// The text's further payloads, in order, when it holds several that must not be joined:
    /// the second direction of a Wireshark follow-stream dump, the other packet dumps and data
    /// sources of `tshark -x` output. Empty for every other text.
    pub more: Vec<Part>,
}

/// One more payload of a text that holds several ([`Decoded::more`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Which payload it is, as [`Decoded::detail`] says for the first.
    pub detail: String,
}

/// A text that is clearly one shape, but whose line `line` breaks it: it is not read at all
/// rather than read in part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message} (read as {flavour})")]
pub struct TextError {
    /// The shape the text was read as.
    pub shape: TextShape,
    /// Which kind of it, e.g. `xxd`, `tshark -x`, `Wireshark follow-stream hex`.
    pub flavour: &'static str,
    /// The line, 1-based, counted in the text as given.
    pub line: usize,
    /// Byte offset of that line's start in the text as given.
    pub offset: usize,
    /// What is wrong with it.
    pub message: String,
}

/// Texts shorter than this (after trimming) are never decoded.
pub const MIN_LEN: usize = 8;

/// Most bytes a shape's decoder reserves before it has read that the text is its shape: a large
/// payload that is no text (256 MiB of inflated zeros) is turned down without asking for memory
/// in proportion to it.
const UP_FRONT: usize = 1 << 20;

/// Recognises `text` as one of the [`TextShape`]s and decodes it.
///
/// `max_output` caps what a dump's `*` repeat lines may expand to. Returns `None` when the whole
/// text matches no shape, and also when it clearly is a shape but a line breaks it: call
/// [`decode_text_checked`] to learn which line. A text of several payloads (a follow-stream
/// dump's two directions) gives the first in [`Decoded::bytes`] and the others in
/// [`Decoded::more`].
///
/// ```
/// use wirelens::capture::text::{decode_text, TextShape};
///
/// let d = decode_text(b"0x81, 0xa3, 0x6b, 0x65", 1 << 20).expect("hex array");
/// assert_eq!(d.bytes, [0x81, 0xa3, 0x6b, 0x65]);
/// assert_eq!(d.shape, TextShape::HexArray);
/// ```
pub fn decode_text(text: &[u8], max_output: usize) -> Option<Decoded> {
    decode_text_checked(text, max_output).ok().flatten()
}

/// The link-layer frames of a `tshark -x` (or Wireshark "Copy as Hex Dump") text, to be read
/// as the capture they came from: each dump with no title or titled `Frame (N bytes):`. The
/// derived sections tshark prints after a frame (`Reassembled TCP`, `Uncompressed entity
/// body`, `De-chunked entity body`) are left out, since reading the frames makes them again;
/// a dump with a `Decrypted …` section, whose plaintext no frame holds, is not a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketFrames {
    /// The link type every frame has: 1 (Ethernet) or 101 (raw IP).
    pub linktype: u32,
    /// The frames, in the dump's order.
    pub frames: Vec<Vec<u8>>,
    /// The titles of the derived sections left out.
    pub derived: Vec<String>,
    /// The bytes of the `Reassembled TCP` sections: a capture read from the frames holds each
    /// of them in a stream when the dump holds every frame they were made of.
    pub reassembled: Vec<Vec<u8>>,
}

impl PacketFrames {
    /// The frames as a pcap file (microsecond timestamps one apart, in the dump's order).
    pub fn to_pcap(&self) -> Vec<u8> {
        let size: usize = self.frames.iter().map(|f| f.len() + 16).sum();
        let mut out = Vec::with_capacity(24 + size);
        out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&4u16.to_le_bytes());
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&262_144u32.to_le_bytes());
        out.extend_from_slice(&self.linktype.to_le_bytes());
        for (i, f) in self.frames.iter().enumerate() {
            let len = u32::try_from(f.len()).unwrap_or(u32::MAX);
            out.extend_from_slice(&0u32.to_le_bytes());
            out.extend_from_slice(&u32::try_from(i).unwrap_or(u32::MAX).to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(f);
        }
        out
    }
}

/// The frames of a `tshark -x` text whose dumps are Ethernet or raw IP frames
/// ([`PacketFrames`]); `None` for any other text.
pub fn packet_frames(text: &[u8]) -> Option<PacketFrames> {
    let text = std::str::from_utf8(text).ok()?;
    let lines = dumps::lines(text);
    let found = match dumps::packet_dumps(&lines) {
        Ok((_, found)) => found,
        // tcpdump's `-x`/`-xx`/`-X`/`-XX`: no titles, no derived sections.
        Err(_) => tcpdump_frames(text)?
            .into_iter()
            .map(|f| (None, f))
            .collect(),
    };
    let mut frames = Vec::new();
    let mut derived = Vec::new();
    let mut reassembled = Vec::new();
    for (title, bytes) in found {
        match title {
            None => frames.push(bytes),
            Some(t) if t.starts_with("Frame (") => frames.push(bytes),
            Some(t) if t.starts_with("Decrypted") => return None,
            Some(t) => {
                if t.starts_with("Reassembled TCP") {
                    reassembled.push(bytes);
                }
                derived.push(t.strip_suffix(':').unwrap_or(t).to_string());
            }
        }
    }
    let ethernet = |f: &Vec<u8>| {
        let ip = |at: usize, ethertype: u16| match ethertype {
            0x0800 => f.get(at).is_some_and(|b| b >> 4 == 4 && b & 0xf >= 5),
            0x86dd => f.get(at).is_some_and(|b| b >> 4 == 6),
            _ => false,
        };
        match f.get(12..14).map(|t| u16::from_be_bytes([t[0], t[1]])) {
            Some(0x8100 | 0x88a8) => f
                .get(16..18)
                .is_some_and(|t| ip(18, u16::from_be_bytes([t[0], t[1]]))),
            Some(t) => ip(14, t),
            None => false,
        }
    };
    let raw_ip = |f: &Vec<u8>| match f.first() {
        Some(b) if b >> 4 == 4 => b & 0xf >= 5 && f.len() >= 20,
        Some(b) if b >> 4 == 6 => f.len() >= 40,
        _ => false,
    };
    let linktype = if frames.is_empty() {
        return None;
    } else if frames.iter().all(ethernet) {
        1
    } else if frames.iter().all(raw_ip) {
        101
    } else {
        return None;
    };
    Some(PacketFrames {
        linktype,
        frames,
        derived,
        reassembled,
    })
}

/// Most packets read from one tcpdump printout.
const TCPDUMP_MAX_PACKETS: usize = 1 << 20;

/// The packets of a tcpdump printout with `-x`, `-xx`, `-X` or `-XX`: each packet's summary
/// line (`    1  2005-07-06 03:57:35.938066 IP 127.0.0.1.55920 > 127.0.0.1.80: Flags [S], …`,
/// with or without `--number`), then its bytes in indented rows of eight 16-bit groups, each
/// row opening with its offset (`\t0x0010:  7f00 0001 …`) and, with `-X`, the bytes as ASCII
/// after two blanks. `None` unless every row is where its offset says and every packet has
/// bytes: a text that only looks like this is left to the other shapes.
fn tcpdump_frames(text: &str) -> Option<Vec<Vec<u8>>> {
    let mut frames: Vec<Vec<u8>> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let indented = line.starts_with(char::is_whitespace);
        let row = line.trim_start();
        let offset = row
            .strip_prefix("0x")
            .and_then(|r| r.get(..5))
            .filter(|r| r.ends_with(':'))
            .and_then(|r| usize::from_str_radix(&r[..4], 16).ok());
        match (indented, offset) {
            (true, Some(offset)) => {
                // A row belongs to the packet its summary line opened.
                let frame = frames.last_mut().filter(|_| open)?;
                if offset != frame.len() || frame.len() > 0xffff {
                    return None;
                }
                // `0x0000:` and two blanks, then groups of four (or, last, two) hex digits one
                // blank apart; two blanks end them (the ASCII of `-X`).
                let groups = row.get(9..)?;
                let groups = groups.split("  ").next().unwrap_or("");
                let mut n = 0;
                for group in groups.split(' ').filter(|g| !g.is_empty()) {
                    if !matches!(group.len(), 2 | 4)
                        || !group.bytes().all(|b| b.is_ascii_hexdigit())
                    {
                        return None;
                    }
                    for pair in group.as_bytes().chunks(2) {
                        let hex = std::str::from_utf8(pair).ok()?;
                        frame.push(u8::from_str_radix(hex, 16).ok()?);
                        n += 1;
                    }
                }
                if n == 0 || n > 16 {
                    return None;
                }
            }
            // A summary line: not indented, or (`--number`) indented but with no offset; it
            // names its time or its number first.
            _ => {
                // (Both are short: a first token of 64 bytes or more is neither, and a line
                // without a blank is not read to its end.)
                let first = dumps::token_within(row, 64);
                // A frame number, or a time (`03:57:35.938066`, `-tttt`'s `2005-07-06`).
                let starts_packet = !first.is_empty()
                    && first.len() < 64
                    && first
                        .bytes()
                        .all(|b| b.is_ascii_digit() || matches!(b, b':' | b'.' | b'-'));
                if !starts_packet || frames.last().is_some_and(Vec::is_empty) {
                    return None;
                }
                if frames.len() >= TCPDUMP_MAX_PACKETS {
                    return None;
                }
                frames.push(Vec::new());
                open = true;
            }
        }
    }
    (!frames.is_empty() && frames.iter().all(|f| !f.is_empty())).then_some(frames)
}

/// [`decode_text`], saying why a text that clearly is a shape could not be read: `Ok(None)`
/// when the text matches no shape, `Err` naming the line that breaks the shape it matched.
///
/// ```
/// use wirelens::capture::text::decode_text_checked;
///
/// let dump = "00000000: 0102 0304 0506 0708  ........\n\
///             00000008: 0a0b zz0d  ....\n\
///             0000000c: 0e0f  ..\n";
/// let e = decode_text_checked(dump.as_bytes(), 1 << 20).expect_err("line 2 is broken");
/// assert_eq!(e.line, 2);
/// assert_eq!(e.offset, 40); // line 1 is 39 characters and its newline
/// assert_eq!(e.to_string(), "line 2: expected hex digits in pairs, found 'zz0d' (read as xxd)");
/// ```
pub fn decode_text_checked(text: &[u8], max_output: usize) -> Result<Option<Decoded>, TextError> {
    let Ok(text) = std::str::from_utf8(text) else {
        return Ok(None);
    };
    let t = text.trim();
    if t.len() < MIN_LEN {
        return Ok(None);
    }
    if let Some(d) = data_url(t) {
        return Ok(Some(d));
    }
    if let Some(d) = python_bytes(t) {
        return Ok(Some(d));
    }
    if let Some(bytes) = hex_escapes(t) {
        return Ok(Some(decoded(bytes, TextShape::HexEscapes, "")));
    }
    if let Some(d) = xxd_include(text)? {
        return Ok(Some(d));
    }
    if let Some(bytes) = hex_array(t) {
        return Ok(Some(decoded(bytes, TextShape::HexArray, "")));
    }
    match dumps::follow_raw(text) {
        dumps::Verdict::Yes(parts) => return Ok(several(parts, TextShape::Hex)),
        dumps::Verdict::Broken(e) => return Err(e),
        dumps::Verdict::No => {}
    }
    // Dumps before plain hex: a dump line without its ASCII column (`0000  45 00 00 3c`), or
    // whose ASCII column looks like hex, is all hex digits too, offsets included.
    match dumps::hex_dump(text, max_output) {
        dumps::Verdict::Yes(parts) => return Ok(several(parts, TextShape::HexDump)),
        dumps::Verdict::Broken(e) => return Err(e),
        dumps::Verdict::No => {}
    }
    if let Some(bytes) = plain_hex(t) {
        return Ok(Some(decoded(bytes, TextShape::Hex, "")));
    }
    Ok(base64_text(t))
}

/// The first part as the [`Decoded`], the others in [`Decoded::more`].
fn several(parts: Vec<Part>, shape: TextShape) -> Option<Decoded> {
    let mut parts = parts.into_iter();
    let first = parts.next()?;
    Some(Decoded {
        bytes: first.bytes,
        shape,
        detail: first.detail,
        more: parts.collect(),
    })
}

fn decoded(bytes: Vec<u8>, shape: TextShape, detail: &str) -> Decoded {
    Decoded {
        bytes,
        shape,
        detail: detail.to_string(),
        more: Vec::new(),
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
    // Grown as the hex is read: a text that is not hex asks for nothing up front.
    let mut out = Vec::with_capacity((t.len() / 2).min(UP_FRONT));
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
    let out = array_bytes(body).ok()?;
    (!out.is_empty()).then_some(out)
}

/// The bytes of an array body (`0x0a, 0x0b`, Rust suffixes allowed); on a token that is not a
/// byte, its position in `body` and the token.
fn array_bytes(body: &str) -> Result<Vec<u8>, (usize, &str)> {
    let mut out = Vec::with_capacity((body.len() / 4 + 1).min(UP_FRONT));
    let mut pos = 0usize;
    for token in body.split_inclusive(|c: char| c.is_whitespace() || c == ',') {
        let at = pos;
        pos += token.len();
        let token = token.trim_end_matches(|c: char| c.is_whitespace() || c == ',');
        if token.is_empty() {
            continue;
        }
        let byte = token
            .strip_prefix("0x")
            .or_else(|| token.strip_prefix("0X"))
            .map(|digits| {
                // Rust suffixes: 0x0au8, 0x0a_u8.
                digits
                    .strip_suffix("u8")
                    .map(|d| d.strip_suffix('_').unwrap_or(d))
                    .unwrap_or(digits)
            })
            .filter(|digits| !digits.is_empty() && digits.len() <= 2)
            .and_then(|digits| {
                digits
                    .bytes()
                    .try_fold(0u8, |value, c| Some(value << 4 | hex_val(c)?))
            });
        match byte {
            Some(b) => out.push(b),
            None => return Err((at, token)),
        }
    }
    Ok(out)
}

/// `xxd -i` output: `unsigned char name[] = { 0x86, … };` then `unsigned int name_len = 98;`.
/// Once the `_len` line is there the text is this shape: a token that is not a byte, or a
/// length that is not the array's, is an error.
fn xxd_include(text: &str) -> Result<Option<Decoded>, TextError> {
    const FLAVOUR: &str = "xxd -i";
    let t = text.trim_end();
    let Some((array, tail)) = t.rsplit_once("};") else {
        return Ok(None);
    };
    let Some(len_decl) = tail.trim().strip_prefix("unsigned int ") else {
        return Ok(None);
    };
    let Some((lhs, rhs)) = len_decl.strip_suffix(';').and_then(|d| d.split_once('=')) else {
        return Ok(None);
    };
    let Some(len_name) = lhs.trim().strip_suffix("_len") else {
        return Ok(None);
    };
    let Some(open) = array.find('{') else {
        return Ok(None);
    };
    let head = array.get(..open).unwrap_or("");
    let body = array.get(open + 1..).unwrap_or("");
    let Some(name) = head
        .trim_end()
        .strip_suffix('=')
        .map(str::trim_end)
        .and_then(|h| h.strip_suffix("[]"))
        .and_then(|h| h.rsplit(char::is_whitespace).next())
    else {
        return Ok(None);
    };
    // Where things are, for errors: line numbers and offsets in `text`.
    let error_at = |at: usize, message: String| {
        let before = text.get(..at).unwrap_or("");
        let line_start = before.rfind('\n').map_or(0, |p| p + 1);
        TextError {
            shape: TextShape::HexArray,
            flavour: FLAVOUR,
            line: before.matches('\n').count() + 1,
            offset: line_start,
            message,
        }
    };
    let len_at = array.len() + 2 + (tail.len() - tail.trim_start().len());
    if name != len_name {
        return Err(error_at(
            len_at,
            format!("the length is of '{len_name}', but the array is '{name}'"),
        ));
    }
    let bytes = array_bytes(body).map_err(|(at, token)| {
        error_at(
            open + 1 + at,
            format!("'{token}' is not a byte (0x00 to 0xff)"),
        )
    })?;
    let Ok(want) = rhs.trim().parse::<usize>() else {
        return Err(error_at(
            len_at,
            format!("'{}' is not a length", rhs.trim()),
        ));
    };
    if want != bytes.len() {
        return Err(error_at(
            len_at,
            format!(
                "{len_name}_len says {want} bytes, but the array holds {}",
                bytes.len()
            ),
        ));
    }
    Ok(Some(decoded(
        bytes,
        TextShape::HexArray,
        &format!("{FLAVOUR} {name}"),
    )))
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
    let mut compact = Vec::with_capacity(t.len().min(UP_FRONT));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A line's first token is read up to a blank or `max` bytes, cut between characters: a
    /// document on one line is neither read to its end nor taken for a dump.
    #[test]
    fn first_tokens_are_read_within_a_bound() {
        assert_eq!(dumps::token_within("  0x0000:  4500 0014", 64), "0x0000:");
        assert_eq!(
            dumps::token_within("03:57:35.938066\tIP", 64),
            "03:57:35.938066"
        );
        assert_eq!(dumps::token_within("", 64), "");
        assert_eq!(dumps::token_within("abcdef", 4), "abcd");
        // The cut is between characters: one that starts before the bound is kept whole.
        assert_eq!(dumps::token_within("abcé", 4), "abcé");
        assert_eq!(dumps::token_within("abcdé", 4), "abcd");
        let line = format!("{{\"n\":[{}]}}", "1,".repeat(100_000) + "1");
        assert_eq!(dumps::token_within(&line, 64).len(), 64);
        assert!(packet_frames(line.as_bytes()).is_none());
        assert!(tcpdump_frames(&line).is_none());
    }

    #[test]
    fn tcpdump_printouts_give_their_packets() {
        // `-X` with `--number`: rows of groups and the ASCII column; a short last row.
        let x = "    1  03:57:35.938066 IP 127.0.0.1.55920 > 127.0.0.1.80: Flags [S], length 0\n\
                 \t0x0000:  4500 0014 0001 0000 4006 0000 7f00 0001  E.......@.......\n\
                 \t0x0010:  7f00 0001                                ....\n\
                     2  03:57:35.938122 IP 127.0.0.1.80 > 127.0.0.1.55920: Flags [S.], length 0\n\
                 \t0x0000:  4500 0014 0002 0000 4006 0000 7f00 0001  E.......@.......\n\
                 \t0x0010:  7f00 0001 ab                             .....\n";
        let frames = tcpdump_frames(x).expect("a printout");
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].len(), 20);
        assert_eq!(frames[1].len(), 21);
        assert_eq!(frames[1][20], 0xab);
        // `-x` without `--number` or ASCII, `-tttt` times.
        let plain = "2005-07-06 03:57:35.938066 IP 10.0.0.1 > 10.0.0.2: ICMP echo request\n\
                     \t0x0000:  4500 0014\n";
        assert_eq!(tcpdump_frames(plain), Some(vec![vec![0x45, 0, 0, 0x14]]));
        // A row out of place, a summary without bytes, a row before any summary: not this shape.
        let skipped = "1 x\n\t0x0000:  4500\n\t0x0020:  4500\n";
        assert_eq!(tcpdump_frames(skipped), None);
        assert_eq!(tcpdump_frames("1 x\n2 y\n\t0x0000:  4500\n"), None);
        assert_eq!(tcpdump_frames("\t0x0000:  4500\n"), None);
        assert_eq!(tcpdump_frames("1 x\n\t0x0000:  45zz\n"), None);
        assert_eq!(tcpdump_frames("plain words\n"), None);
    }

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
        assert_eq!(bytes("Zhbatmcaaaaa"), None, "a capitalised word");
        assert_eq!(bytes("ZhbatmcaaaaA").map(|b| b.1), Some(TextShape::Base64));
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

    fn checked(text: &str) -> Result<Option<Decoded>, TextError> {
        decode_text_checked(text.as_bytes(), 1 << 20)
    }

    const ABC: &[u8] = b"abcdefghijklmnopqrs";

    #[test]
    fn od_offsets_in_every_radix() {
        // Printed by `printf abcdefghijklmnopqrs | od -Ax -tx1z` and `| od -Ad -tx1`.
        let hex = "000000 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 6e 6f 70  >abcdefghijklmnop<\n\
                   000010 71 72 73                                         >qrs<\n\
                   000013\n";
        let dec = "0000000 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 6e 6f 70\n\
                   0000016 71 72 73\n\
                   0000019\n";
        for text in [hex, dec] {
            let d = checked(text).expect("reads").expect("a dump");
            assert_eq!((d.bytes.as_slice(), d.detail.as_str()), (ABC, "od"));
        }
    }

    #[test]
    fn word_dumps_are_refused_with_the_reason() {
        // `printf abcdefghijklmnopqrs | od -x`: words in this machine's byte order.
        let text = "0000000 6261 6463 6665 6867 6a69 6c6b 6e6d 706f\n\
                    0000020 7271 0073\n\
                    0000023\n";
        let e = checked(text).expect_err("word dump");
        assert_eq!((e.line, e.offset), (1, 0));
        assert!(e.message.contains("byte order"), "{}", e.message);
    }

    #[test]
    fn xxd_autoskip_star_lines() {
        // `(head -c 48 /dev/zero; printf xy) | xxd -a`.
        let text = "00000000: 0000 0000 0000 0000 0000 0000 0000 0000  ................\n\
                    *\n\
                    00000030: 7879                                     xy\n";
        let mut want = vec![0u8; 48];
        want.extend_from_slice(b"xy");
        let d = checked(text).expect("reads").expect("a dump");
        assert_eq!((d.bytes, d.detail.as_str()), (want, "xxd"));
    }

    #[test]
    fn follow_line_of_eight_bytes_whose_ascii_looks_like_hex() {
        // "ab cd ef" is 61 62 20 63 64 20 65 66; its ASCII column reads like three more bytes.
        let want = b"ab cd ef".to_vec();
        for text in [
            "00000000  61 62 20 63 64 20 65 66                           ab cd ef\n",
            "00000000  61 62 20 63 64 20 65 66  ab cd ef\n",
        ] {
            let d = checked(text).expect("reads").expect("a dump");
            assert_eq!(d.bytes, want, "{text:?}");
            assert_eq!(
                d.detail,
                "Wireshark follow-stream hex, node 0 → client side"
            );
        }
    }

    #[test]
    fn follow_dialog_indents_the_server_by_four_blanks() {
        // The Qt dialog's layout: lower-case hex, the second node's lines after four blanks.
        let text = "00000000  47 45 54 20 2f 20 48 54  54 50 2f 31 2e 31 0d 0a  GET / HT TP/1.1..\n\
                    \x20   00000000  48 54 54 50 2f 31 2e 31  20 32 30 34 0d 0a 0d 0a  HTTP/1.1  204....\n\
                    00000010  0d 0a                                             ..\n";
        let d = checked(text).expect("reads").expect("a dump");
        assert_eq!(d.bytes, b"GET / HTTP/1.1\r\n\r\n");
        assert_eq!(d.more.len(), 1);
        let server = d.more.first().expect("server");
        assert_eq!(server.bytes, b"HTTP/1.1 204\r\n\r\n");
        assert_eq!(
            server.detail,
            "Wireshark follow-stream hex, node 1 → server side"
        );
    }

    #[test]
    fn follow_raw_without_header_needs_both_nodes() {
        let both = "474554202f20485454502f312e310d0a0d0a\n\t485454502f312e3120323034\n";
        let d = checked(both).expect("reads").expect("hex");
        assert_eq!(d.shape, TextShape::Hex);
        assert_eq!(d.bytes, b"GET / HTTP/1.1\r\n\r\n");
        assert_eq!(
            d.more.first().map(|p| p.bytes.as_slice()),
            Some(&b"HTTP/1.1 204"[..])
        );
        // One node's lines only: plain hex lines, joined as before.
        let one = "474554202f20\n485454502f31\n";
        let d = checked(one).expect("reads").expect("hex");
        assert_eq!(
            (d.bytes.as_slice(), d.more.len()),
            (&b"GET / HTTP/1"[..], 0)
        );
    }

    #[test]
    fn tshark_title_must_count_its_bytes() {
        let text = "Reassembled TCP (5 bytes):\n0000  68 65 6c 6c 6f 21                                 hello!\n";
        let e = checked(text).expect_err("6 bytes, not 5");
        assert_eq!((e.line, e.offset), (1, 0));
        assert_eq!(
            e.message,
            "'Reassembled TCP (5 bytes):', but the dump under it holds 6 bytes"
        );
    }

    #[test]
    fn prose_with_a_stray_offset_is_not_a_dump() {
        // One line of a shape among more lines of prose is not that shape, and no error.
        let text = "see the dump below\n00000000: 0102 0304  ....\nit was cut off here\n";
        assert_eq!(checked(text), Ok(None));
    }
}
