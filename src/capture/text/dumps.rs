//! Dumps with offsets, each read by its own line grammar.
//!
//! Every grammar accounts for every non-blank line of the text: a line is a data line of the
//! shape, one of its decorations (a `*` repeat line, a lone end offset, tshark's headers and
//! section titles), or it does not belong. A shape is taken when most of the data-like lines
//! (more than half) parse; then a line that does not parse, or an offset that does not follow from the
//! bytes before it, is an error naming the line ([`Verdict::Broken`]) instead of a shorter
//! result. Below half, the text is not that shape and the next one is tried.

use super::{Part, TextError, TextShape};

/// One line of the text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Line<'a> {
    /// 1-based, counted in the text as given (leading blank lines included).
    pub no: usize,
    /// Byte offset of the line's first character in the text.
    pub start: usize,
    /// The line without its `\n` or `\r\n`.
    pub text: &'a str,
}

/// The lines of `text`, blank ones included.
pub(super) fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0usize;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let body = raw.strip_suffix('\n').unwrap_or(raw);
        let body = body.strip_suffix('\r').unwrap_or(body);
        out.push(Line {
            no: i + 1,
            start,
            text: body,
        });
        start += raw.len();
    }
    out
}

/// What a grammar made of the whole text.
pub(super) enum Verdict {
    /// Not this shape.
    No,
    /// This shape: its payloads (one, or one per direction or packet), each with its detail.
    Yes(Vec<Part>),
    /// Clearly this shape, but a line breaks it.
    Broken(TextError),
}

fn broken(line: Line<'_>, flavour: &'static str, message: String) -> Verdict {
    Verdict::Broken(TextError {
        shape: TextShape::HexDump,
        flavour,
        line: line.no,
        offset: line.start,
        message,
    })
}

/// The longest line a dump grammar reads.
const MAX_DUMP_LINE: usize = 1024;

/// Tries every dump grammar in turn, most specific first.
pub(super) fn hex_dump(text: &str, max_output: usize) -> Verdict {
    // Every dump grammar writes short lines (an offset, at most 32 bytes, their characters): a
    // text with a line of thousands of characters is none of them, and is not walked (a
    // payload of 256 MiB of one character would be, grammar by grammar).
    if text.split('\n').any(|line| line.len() > MAX_DUMP_LINE) {
        return Verdict::No;
    }
    let lines = lines(text);
    for grammar in [follow_hex, hexdump_c, xxd, packet_bytes, od, word_dump] {
        match grammar(&lines, max_output) {
            Verdict::No => continue,
            done => return done,
        }
    }
    Verdict::No
}

/// How one line reads in a grammar.
enum Row<T> {
    /// Not data: blank, or a decoration the grammar knows.
    Skip,
    /// A data line.
    Data(T),
    /// A line the grammar knows but that holds no bytes (`*`, a lone end offset): it does not
    /// count as evidence for the shape.
    Mark(T),
    /// Not a line of this grammar, and why.
    Bad(String),
}

/// Reads every line with `parse`. `Err(None)`: not this shape (half of the data-like lines or
/// fewer parse) unless `sure`; `Err(Some(verdict))`: the shape, broken at a line.
fn judge<'a, T>(
    lines: &[Line<'a>],
    flavour: &'static str,
    sure: bool,
    mut parse: impl FnMut(Line<'a>) -> Row<T>,
) -> Result<Vec<(Line<'a>, T)>, Option<Verdict>> {
    let mut rows = Vec::new();
    let (mut good, mut bad) = (0usize, 0usize);
    let mut first_bad: Option<(Line<'a>, String)> = None;
    for &line in lines {
        if line.text.trim().is_empty() {
            continue;
        }
        match parse(line) {
            Row::Skip => {}
            Row::Data(t) => {
                good += 1;
                rows.push((line, t));
            }
            Row::Mark(t) => rows.push((line, t)),
            Row::Bad(why) => {
                bad += 1;
                if first_bad.is_none() {
                    first_bad = Some((line, why));
                }
            }
        }
    }
    let matched = sure || good > bad;
    if !matched || good == 0 {
        return Err(None);
    }
    match first_bad {
        Some((line, why)) => Err(Some(broken(line, flavour, why))),
        None => Ok(rows),
    }
}

/// Exactly two hex digits.
fn hex_byte(tok: &str) -> Option<u8> {
    match tok.as_bytes() {
        [hi, lo] => Some(super::hex_val(*hi)? << 4 | super::hex_val(*lo)?),
        _ => None,
    }
}

/// The leading run of hex digits of `s` (an offset), and the rest.
fn leading_hex(s: &str) -> (&str, &str) {
    let end = s
        .bytes()
        .position(|c| !c.is_ascii_hexdigit())
        .unwrap_or(s.len());
    (s.get(..end).unwrap_or(""), s.get(end..).unwrap_or(""))
}

fn first_token(s: &str) -> &str {
    token_within(s, 40)
}

/// The first whitespace-delimited token of `s`, cut at the first character that starts `max`
/// bytes or more into it: a line of megabytes without a blank (a JSON document on one line) is
/// not read to its end, nor copied whole into a message.
pub(super) fn token_within(s: &str, max: usize) -> &str {
    let s = s.trim_start();
    let end = s
        .char_indices()
        .find(|&(i, c)| c.is_whitespace() || i >= max)
        .map_or(s.len(), |(i, _)| i);
    &s[..end]
}

/// Bytes written as two-digit hex tokens separated by single spaces, read from the start of `s`
/// (at most `max`). Stops before a gap of two or more blanks, a tab or the end, and returns the
/// rest from there. A token that is not a byte where a byte must be (first, or after a single
/// space) is an error naming it; so is a byte past `max` after a single space.
fn byte_run(s: &str, max: usize) -> Result<(Vec<u8>, &str), String> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let tok = rest.get(..end).unwrap_or("");
        match hex_byte(tok) {
            Some(b) => out.push(b),
            None if tok.is_empty() => return Err("expected a hex byte, found nothing".into()),
            None => return Err(format!("expected a hex byte, found '{tok}'")),
        }
        rest = rest.get(end..).unwrap_or("");
        let mut chars = rest.chars();
        let single =
            matches!((chars.next(), chars.next()), (Some(' '), Some(c)) if !c.is_whitespace());
        if !single {
            return Ok((out, rest));
        }
        if out.len() >= max {
            return Err(format!(
                "more than {max} bytes where the line has room for {max}"
            ));
        }
        rest = rest.get(1..).unwrap_or("");
    }
}

/// Whether an ASCII column (trimmed) fits `bytes`: one character per byte (`mid_space`: plus
/// the blank Wireshark's follow-stream view puts after the eighth), allowing for blanks that
/// trimming took off its ends where the bytes there are spaces.
fn ascii_fits(ascii: &str, bytes: &[u8], mid_space: bool) -> bool {
    let n = bytes.len();
    let want = n + usize::from(mid_space && n > 8);
    let have = ascii.chars().count();
    let lead = bytes.iter().take_while(|&&b| b == b' ').count();
    let trail = bytes.iter().rev().take_while(|&&b| b == b' ').count();
    have <= want && have + lead + trail >= want
}

fn ascii_mismatch(ascii: &str, n: usize) -> String {
    format!("the ASCII column '{ascii}' does not match the {n} bytes before it")
}

// ---------------------------------------------------------------------------------------------
// Offsets

/// A data or decoration line of a dump with one offset counter.
struct Offsetted<'a> {
    /// The offset digits; `None` for a `*` line.
    offset: Option<&'a str>,
    /// The bytes (empty for a lone end offset or `*`).
    bytes: Vec<u8>,
    /// A lone offset with no bytes: the end of the dump.
    end: bool,
}

fn format_offset(value: usize, radix: u32, width: usize) -> String {
    match radix {
        8 => format!("{value:0width$o}"),
        10 => format!("{value:0width$}"),
        _ => format!("{value:0width$x}"),
    }
}

/// Where assembling stopped: the line and why.
type Fault<'a> = (Line<'a>, String);

/// Joins the lines of one dump, checking that each offset follows from the bytes before it and
/// expanding `*` lines. `Ok(None)`: the `*` lines would expand past `max_output`.
fn assemble<'a>(
    rows: &[(Line<'a>, Offsetted<'a>)],
    radix: u32,
    max_output: usize,
) -> Result<Option<Vec<u8>>, Fault<'a>> {
    let mut out: Vec<u8> = Vec::new();
    let mut base: Option<usize> = None;
    let mut prev: Option<(usize, usize, usize)> = None; // start, length, line number
    let mut star: Option<Line<'a>> = None;
    let mut ended: Option<Line<'a>> = None;
    for (line, row) in rows {
        if let Some(end_line) = ended {
            return Err((
                *line,
                format!(
                    "line {} holds only an offset, which ends the dump, but more lines follow",
                    end_line.no
                ),
            ));
        }
        let Some(digits) = row.offset else {
            if prev.is_none() || star.is_some() {
                return Err((*line, "a * line must follow a line of bytes".into()));
            }
            star = Some(*line);
            continue;
        };
        let value = usize::from_str_radix(digits, radix).map_err(|_| {
            (
                *line,
                format!("offset '{digits}' is not a base-{radix} number"),
            )
        })?;
        let first = *base.get_or_insert(value);
        let Some(here) = value.checked_sub(first) else {
            return Err((
                *line,
                format!("offset {digits} comes before the dump's first offset"),
            ));
        };
        if let Some(star_line) = star.take() {
            let Some((start, n, no)) = prev else {
                return Err((star_line, "a * line must follow a line of bytes".into()));
            };
            if n == 0 || here < out.len() || (here - out.len()) % n != 0 {
                return Err((
                    *line,
                    format!(
                        "offset {digits} is not a whole number of repeats of the {n} bytes of \
                         line {no} (the * on line {})",
                        star_line.no
                    ),
                ));
            }
            if here > max_output {
                return Ok(None);
            }
            out.reserve(here - out.len());
            while out.len() < here {
                out.extend_from_within(start..start + n);
            }
        }
        if here != out.len() {
            let want = first.saturating_add(out.len());
            return Err((
                *line,
                format!(
                    "offset {digits} does not follow the {} bytes before it (expected {})",
                    out.len(),
                    format_offset(want, radix, digits.len())
                ),
            ));
        }
        if row.end {
            ended = Some(*line);
        } else {
            prev = Some((out.len(), row.bytes.len(), line.no));
            out.extend_from_slice(&row.bytes);
        }
        if out.len() > max_output {
            return Ok(None);
        }
    }
    if let Some(star_line) = star {
        return Err((
            star_line,
            "a * line must be followed by the offset it repeats up to".into(),
        ));
    }
    Ok(Some(out))
}

/// The verdict of a dump with one offset counter read in `radixes` (first that fits wins; if
/// none fits, the fault of the one that read furthest).
fn single<'a>(
    rows: &[(Line<'a>, Offsetted<'a>)],
    radixes: &[u32],
    flavour: &'static str,
    max_output: usize,
) -> Verdict {
    let mut worst: Option<Fault<'a>> = None;
    for &radix in radixes {
        match assemble(rows, radix, max_output) {
            Ok(Some(bytes)) if bytes.is_empty() => return Verdict::No,
            Ok(Some(bytes)) => {
                return Verdict::Yes(vec![Part {
                    bytes,
                    detail: flavour.to_string(),
                }])
            }
            Ok(None) => return Verdict::No,
            Err(fault) => {
                if worst.as_ref().is_none_or(|(l, _)| fault.0.no > l.no) {
                    worst = Some(fault);
                }
            }
        }
    }
    match worst {
        Some((line, why)) => broken(line, flavour, why),
        None => Verdict::No,
    }
}

// ---------------------------------------------------------------------------------------------
// hexdump -C, xxd, od

/// `00000000  81 a3 6b 65 79 01 02 03  04 05 06 07 08 09 0a 0b  |..key...........|`, `*`, and
/// a lone end offset. The `|ASCII|` column may be missing (then nothing may follow the bytes).
fn hexdump_c(lines: &[Line<'_>], max_output: usize) -> Verdict {
    const FLAVOUR: &str = "hexdump -C";
    let rows = judge(lines, FLAVOUR, false, |line| {
        let t = line.text.trim_end();
        if t.trim() == "*" {
            return Row::Mark(Offsetted {
                offset: None,
                bytes: Vec::new(),
                end: false,
            });
        }
        let (offset, rest) = leading_hex(t);
        if offset.len() < 4 {
            return Row::Bad(format!(
                "expected an offset in hex digits, found '{}'",
                first_token(t)
            ));
        }
        if rest.is_empty() {
            return Row::Mark(Offsetted {
                offset: Some(offset),
                bytes: Vec::new(),
                end: true,
            });
        }
        let Some(rest) = rest.strip_prefix("  ") else {
            return Row::Bad("expected two blanks after the offset".into());
        };
        let (mut bytes, mut rest) = match byte_run(rest, 8) {
            Ok(r) => r,
            Err(why) => return Row::Bad(why),
        };
        if bytes.len() == 8 {
            if let Some(second) = rest
                .strip_prefix("  ")
                .filter(|r| !r.starts_with([' ', '|']))
            {
                match byte_run(second, 8) {
                    Ok((more, r)) => {
                        bytes.extend(more);
                        rest = r;
                    }
                    Err(why) => return Row::Bad(why),
                }
            }
        }
        let rest = rest.trim();
        if !rest.is_empty() {
            let Some(ascii) = rest.strip_prefix('|').and_then(|r| r.strip_suffix('|')) else {
                return Row::Bad(format!("expected the |ASCII| column, found '{rest}'"));
            };
            if !ascii_fits(ascii, &bytes, false) {
                return Row::Bad(ascii_mismatch(ascii, bytes.len()));
            }
        }
        Row::Data(Offsetted {
            offset: Some(offset),
            bytes,
            end: false,
        })
    });
    match rows {
        Ok(rows) => single(&rows, &[16], FLAVOUR, max_output),
        Err(v) => v.unwrap_or(Verdict::No),
    }
}

/// `00000000: 81a3 6b65 7901                           ..key.`, any group size, and the `*`
/// lines of `xxd -a`.
fn xxd(lines: &[Line<'_>], max_output: usize) -> Verdict {
    const FLAVOUR: &str = "xxd";
    let rows = judge(lines, FLAVOUR, false, |line| {
        let t = line.text.trim_end();
        if t.trim() == "*" {
            return Row::Mark(Offsetted {
                offset: None,
                bytes: Vec::new(),
                end: false,
            });
        }
        let (offset, rest) = leading_hex(t);
        let Some(rest) = rest.strip_prefix(": ").filter(|_| offset.len() >= 4) else {
            return Row::Bad(format!(
                "expected an offset and ':', found '{}'",
                first_token(t)
            ));
        };
        let (hex, ascii) = rest.split_once("  ").unwrap_or((rest, ""));
        let mut bytes = Vec::with_capacity(16);
        for group in hex.split(' ') {
            if super::push_hex_pairs(group.as_bytes(), &mut bytes).is_none() {
                return Row::Bad(format!("expected hex digits in pairs, found '{group}'"));
            }
        }
        let ascii = ascii.trim();
        if !ascii.is_empty() && !ascii_fits(ascii, &bytes, false) {
            return Row::Bad(ascii_mismatch(ascii, bytes.len()));
        }
        Row::Data(Offsetted {
            offset: Some(offset),
            bytes,
            end: false,
        })
    });
    match rows {
        Ok(rows) => single(&rows, &[16], FLAVOUR, max_output),
        Err(v) => v.unwrap_or(Verdict::No),
    }
}

/// `od -tx1` (octal offsets by default, hex with `-Ax`, decimal with `-Ad`): the offset, then
/// ` hh` per byte; `*` lines; a lone end offset; `od -tx1z`'s `>ASCII<` column.
fn od(lines: &[Line<'_>], max_output: usize) -> Verdict {
    const FLAVOUR: &str = "od";
    let rows = judge(lines, FLAVOUR, false, |line| {
        let t = line.text.trim_end();
        if t.trim() == "*" {
            return Row::Mark(Offsetted {
                offset: None,
                bytes: Vec::new(),
                end: false,
            });
        }
        let (offset, rest) = leading_hex(t);
        if offset.len() < 4 {
            return Row::Bad(format!("expected an offset, found '{}'", first_token(t)));
        }
        if rest.is_empty() {
            return Row::Mark(Offsetted {
                offset: Some(offset),
                bytes: Vec::new(),
                end: true,
            });
        }
        let Some(rest) = rest
            .strip_prefix(' ')
            .filter(|r| !r.starts_with(char::is_whitespace))
        else {
            return Row::Bad("expected one blank after the offset".into());
        };
        let (bytes, rest) = match byte_run(rest, usize::MAX) {
            Ok(r) => r,
            Err(why) => return Row::Bad(why),
        };
        let rest = rest.trim();
        if !rest.is_empty() {
            let Some(ascii) = rest.strip_prefix('>').and_then(|r| r.strip_suffix('<')) else {
                return Row::Bad(format!("unexpected '{rest}' after the bytes"));
            };
            if !ascii_fits(ascii, &bytes, false) {
                return Row::Bad(ascii_mismatch(ascii, bytes.len()));
            }
        }
        Row::Data(Offsetted {
            offset: Some(offset),
            bytes,
            end: false,
        })
    });
    match rows {
        Ok(rows) => single(&rows, &[8, 16, 10], FLAVOUR, max_output),
        Err(v) => v.unwrap_or(Verdict::No),
    }
}

/// `od -x` and plain `hexdump`: 2-byte words in the byte order of the machine that made the
/// dump, which the text does not say. Recognised only to say so.
fn word_dump(lines: &[Line<'_>], _max_output: usize) -> Verdict {
    const FLAVOUR: &str = "2-byte word dump";
    let rows = judge(lines, FLAVOUR, false, |line| {
        let t = line.text.trim();
        if t == "*" {
            return Row::Mark(());
        }
        let mut tokens = t.split_whitespace();
        // od and hexdump print 7-digit offsets; shorter first tokens are more likely plain hex
        // in 2-byte groups.
        let offset = tokens.next().unwrap_or("");
        if offset.len() < 7 || !offset.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Row::Bad("expected an offset".into());
        }
        let mut any = false;
        for tok in tokens {
            if tok.len() != 4 || !tok.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Row::Bad(format!("expected a 4-digit word, found '{tok}'"));
            }
            any = true;
        }
        if any {
            Row::Data(())
        } else {
            Row::Mark(())
        }
    });
    match rows {
        Ok(rows) => match rows.first() {
            Some((line, ())) => broken(
                *line,
                FLAVOUR,
                "this looks like `od -x` or `hexdump` output: 2-byte words in the dumping \
                 machine's byte order, which the text does not say; dump bytes instead \
                 (`xxd`, `hexdump -C` or `od -tx1`)"
                    .into(),
            ),
            None => Verdict::No,
        },
        Err(v) => v.unwrap_or(Verdict::No),
    }
}

// ---------------------------------------------------------------------------------------------
// Wireshark and tshark packet bytes

/// A line of packet bytes.
enum Packet<'a> {
    /// `Reassembled TCP (195 bytes):` and the like: a new data source; the count if it parses.
    Title(&'a str, Option<usize>),
    /// Offset, gap after it (blanks), bytes.
    Data(&'a str, usize, Vec<u8>),
}

/// `tshark -x` and Wireshark's "Copy → …as Hex Dump": `0000  45 00 00 3c …   E..<…`, 16 bytes a
/// line, dumps separated by blank lines or by data source titles (`Frame (74 bytes):`,
/// `Reassembled TCP (195 bytes):`, `Decrypted TLS (…):`). Each dump is its own payload: they
/// are different packets, or the same bytes seen at different layers.
fn packet_bytes(lines: &[Line<'_>], _max_output: usize) -> Verdict {
    match packet_dumps(lines) {
        Ok((flavour, dumps)) => {
            let count = dumps.len();
            let parts: Vec<Part> = dumps
                .into_iter()
                .enumerate()
                .map(|(i, (title, bytes))| {
                    let detail = match (count, title) {
                        (1, None) => flavour.to_string(),
                        (_, None) => format!("{flavour}, dump {} of {count}", i + 1),
                        (_, Some(text)) => format!(
                            "{flavour}, dump {} of {count}: {}",
                            i + 1,
                            text.strip_suffix(':').unwrap_or(text)
                        ),
                    };
                    Part { bytes, detail }
                })
                .collect();
            if parts.iter().all(|p| p.bytes.is_empty()) {
                return Verdict::No;
            }
            Verdict::Yes(parts)
        }
        Err(v) => v,
    }
}

/// The dumps of a `tshark -x` text, each with its data source title (`Frame (74 bytes):`) if it
/// has one; and the flavour. A text that is not this shape, or is and breaks, is the verdict.
#[allow(clippy::type_complexity)]
pub(super) fn packet_dumps<'a>(
    lines: &[Line<'a>],
) -> Result<(&'static str, Vec<(Option<&'a str>, Vec<u8>)>), Verdict> {
    // Blank lines end a dump; `judge` skips them, so they are found again by line number.
    let rows = judge(lines, "tshark -x", false, |line| {
        let t = line.text.trim_end();
        if let Some(title) = t.strip_suffix("):") {
            if let Some((name, count)) = title.rsplit_once(" (") {
                if !name.is_empty() && !name.starts_with(char::is_whitespace) {
                    let count = count.strip_suffix(" bytes").and_then(|c| c.parse().ok());
                    return Row::Mark(Packet::Title(t, count));
                }
            }
        }
        let (offset, rest) = leading_hex(t);
        let gap = rest.len() - rest.trim_start().len();
        if offset.len() < 4 || gap < 2 || !rest.starts_with("  ") {
            return Row::Bad(format!(
                "expected an offset of 4 hex digits and two blanks, found '{}'",
                first_token(t)
            ));
        }
        let (bytes, rest) = match byte_run(rest.trim_start(), usize::MAX) {
            Ok(r) => r,
            Err(why) => return Row::Bad(why),
        };
        let ascii = rest.trim();
        if !ascii.is_empty() && !ascii_fits(ascii, &bytes, false) {
            return Row::Bad(ascii_mismatch(ascii, bytes.len()));
        }
        Row::Data(Packet::Data(offset, gap, bytes))
    });
    let rows = match rows {
        Ok(rows) => rows,
        Err(v) => return Err(v.unwrap_or(Verdict::No)),
    };
    let flavour = match rows.iter().find_map(|(_, r)| match r {
        Packet::Data(_, gap, _) => Some(*gap),
        Packet::Title(..) => None,
    }) {
        Some(3) => "Wireshark",
        _ => "tshark -x",
    };
    // Split into dumps: a title or a blank line before a line starts a new one.
    struct Dump<'a> {
        title: Option<(Line<'a>, &'a str, Option<usize>)>,
        rows: Vec<(Line<'a>, Offsetted<'a>)>,
    }
    let mut dumps: Vec<Dump<'_>> = Vec::new();
    let mut last_no = 0usize;
    for (line, row) in rows {
        let after_blank = line.no > last_no + 1;
        last_no = line.no;
        match row {
            Packet::Title(text, count) => dumps.push(Dump {
                title: Some((line, text, count)),
                rows: Vec::new(),
            }),
            Packet::Data(offset, _, bytes) => {
                // A blank line after bytes starts the next dump; a title's dump takes the
                // lines under it.
                if dumps
                    .last()
                    .is_none_or(|d| after_blank && !d.rows.is_empty())
                {
                    dumps.push(Dump {
                        title: None,
                        rows: Vec::new(),
                    });
                }
                if let Some(d) = dumps.last_mut() {
                    d.rows.push((
                        line,
                        Offsetted {
                            offset: Some(offset),
                            bytes,
                            end: false,
                        },
                    ));
                }
            }
        }
    }
    let mut out = Vec::with_capacity(dumps.len());
    for dump in &dumps {
        let bytes = match assemble(&dump.rows, 16, usize::MAX) {
            Ok(b) => b.unwrap_or_default(),
            Err((line, why)) => return Err(broken(line, flavour, why)),
        };
        if let Some((line, text, want)) = dump.title {
            if want != Some(bytes.len()) {
                return Err(broken(
                    line,
                    flavour,
                    format!(
                        "'{text}', but the dump under it holds {} bytes",
                        bytes.len()
                    ),
                ));
            }
        }
        out.push((dump.title.map(|(_, text, _)| text), bytes));
    }
    Ok((flavour, out))
}

// ---------------------------------------------------------------------------------------------
// Wireshark's Follow Stream

/// A header line of tshark's `-z follow,…` output.
enum Header<'a> {
    Rule,
    Follow(&'a str),
    Filter,
    Node(usize, &'a str),
}

fn follow_header(t: &str) -> Option<Header<'_>> {
    let t = t.trim();
    if t.len() >= 10 && t.bytes().all(|c| c == b'=') {
        return Some(Header::Rule);
    }
    if let Some(what) = t.strip_prefix("Follow: ") {
        return Some(Header::Follow(what.trim()));
    }
    if t.starts_with("Filter: ") {
        return Some(Header::Filter);
    }
    let rest = t.strip_prefix("Node ")?;
    let (n, addr) = rest.split_once(": ")?;
    Some(Header::Node(n.parse().ok()?, addr.trim()))
}

/// The node of a follow-stream line: Wireshark marks the second node's data by indenting it
/// (tshark with a tab, the Qt dialog with four blanks).
fn node_of(text: &str) -> (usize, &str) {
    let body = text.trim_start();
    (usize::from(body.len() != text.len()), body)
}

/// What the header said.
#[derive(Default)]
struct FollowHeader<'a> {
    /// `tcp,hex`, `http,raw`, …
    follow: Option<&'a str>,
    nodes: [Option<&'a str>; 2],
}

fn read_header<'a>(lines: &[Line<'a>]) -> FollowHeader<'a> {
    let mut h = FollowHeader::default();
    for line in lines {
        match follow_header(line.text) {
            Some(Header::Follow(f)) => h.follow = Some(f),
            Some(Header::Node(n, addr)) => {
                if let Some(slot) = h.nodes.get_mut(n) {
                    *slot = Some(addr);
                }
            }
            _ => {}
        }
    }
    h
}

/// One payload per node, node 0 first, each named after its node and side.
fn follow_parts(
    kind: &str,
    header: &FollowHeader<'_>,
    streams: [Vec<u8>; 2],
    seen: [bool; 2],
) -> Vec<Part> {
    let mut parts = Vec::new();
    for (node, bytes) in streams.into_iter().enumerate() {
        if !seen.get(node).copied().unwrap_or(false) {
            continue;
        }
        let side = if node == 0 { "client" } else { "server" };
        let addr = header
            .nodes
            .get(node)
            .copied()
            .flatten()
            .map(|a| format!(" ({a})"))
            .unwrap_or_default();
        parts.push(Part {
            bytes,
            detail: format!("Wireshark follow-stream {kind}, node {node}{addr} → {side} side"),
        });
    }
    parts
}

/// Wireshark's Follow TCP/HTTP Stream as a hex dump (tshark `-z follow,tcp,hex,N` or the
/// dialog's "Show as Hex Dump"): `00000000  50 4f 53 54 20 2f 20 48  54 54 50 2f 31 2e 31 0d
/// POST / H TTP/1.1.`, the second node's lines indented, each node with its own offsets.
fn follow_hex(lines: &[Line<'_>], _max_output: usize) -> Verdict {
    const FLAVOUR: &str = "Wireshark follow-stream hex";
    let header = read_header(lines);
    if header.follow.is_some_and(|f| !f.ends_with(",hex")) {
        return Verdict::No;
    }
    let rows = judge(lines, FLAVOUR, header.follow.is_some(), |line| {
        if follow_header(line.text).is_some() {
            return Row::Skip;
        }
        let (node, body) = node_of(line.text.trim_end());
        let (offset, rest) = leading_hex(body);
        let Some(rest) = rest.strip_prefix("  ").filter(|_| offset.len() == 8) else {
            return Row::Bad(format!(
                "expected an 8-digit offset and two blanks, found '{}'",
                first_token(body)
            ));
        };
        let (first, after) = match byte_run(rest, 8) {
            Ok(r) => r,
            Err(why) => return Row::Bad(why),
        };
        // The ASCII column follows the bytes, and holds a blank after its eighth character; a
        // line of exactly eight bytes leaves "second half or ASCII column?" to the column's
        // length.
        let mut tried_second: Option<String> = None;
        if first.len() == 8 {
            if let Some(second) = after.strip_prefix("  ").filter(|r| !r.starts_with(' ')) {
                match byte_run(second, 8) {
                    Ok((more, tail)) => {
                        let ascii = tail.trim();
                        let mut all = first.clone();
                        all.extend(more);
                        if !ascii.is_empty() && ascii_fits(ascii, &all, true) {
                            return Row::Data((node, offset, all));
                        }
                        tried_second = Some(ascii_mismatch(ascii, all.len()));
                    }
                    Err(why) => tried_second = Some(why),
                }
            }
        }
        let ascii = after.trim();
        if !ascii.is_empty() && ascii_fits(ascii, &first, true) {
            return Row::Data((node, offset, first));
        }
        Row::Bad(tried_second.unwrap_or_else(|| ascii_mismatch(ascii, first.len())))
    });
    let rows = match rows {
        Ok(rows) => rows,
        Err(v) => return v.unwrap_or(Verdict::No),
    };
    let mut streams: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let mut bases: [Option<usize>; 2] = [None, None];
    let mut seen = [false; 2];
    for (line, (node, digits, bytes)) in rows {
        let (Some(out), Some(base), Some(seen)) = (
            streams.get_mut(node),
            bases.get_mut(node),
            seen.get_mut(node),
        ) else {
            continue;
        };
        *seen = true;
        let Ok(value) = usize::from_str_radix(digits, 16) else {
            return broken(line, FLAVOUR, format!("offset '{digits}' is not a number"));
        };
        let first = *base.get_or_insert(value);
        if value.checked_sub(first) != Some(out.len()) {
            return broken(
                line,
                FLAVOUR,
                format!(
                    "offset {digits} does not follow the {} bytes node {node} sent before it \
                     (expected {:08X})",
                    out.len(),
                    first.saturating_add(out.len())
                ),
            );
        }
        out.extend_from_slice(&bytes);
    }
    Verdict::Yes(follow_parts("hex", &header, streams, seen))
}

/// Wireshark's Follow Stream as raw hex (tshark `-z follow,tcp,raw,N`): one line of hex per
/// segment, the second node's lines indented by a tab. Taken with tshark's header, or without
/// it when both nodes' lines are there (unindented and tab-indented) and every line is hex.
pub(super) fn follow_raw(text: &str) -> Verdict {
    const FLAVOUR: &str = "Wireshark follow-stream raw";
    let lines = lines(text);
    let header = read_header(&lines);
    let sure = header.follow.is_some_and(|f| f.ends_with(",raw"));
    if header.follow.is_some() && !sure {
        return Verdict::No;
    }
    let mut streams: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let mut seen = [false; 2];
    for line in &lines {
        if line.text.trim().is_empty() || (sure && follow_header(line.text).is_some()) {
            continue;
        }
        let t = line.text.trim_end();
        let node = usize::from(t.starts_with('\t'));
        let digits = t.trim_start();
        let (Some(out), Some(seen)) = (streams.get_mut(node), seen.get_mut(node)) else {
            continue;
        };
        let indent_ok = node == 1 || digits.len() == t.len();
        if !indent_ok || super::push_hex_pairs(digits.as_bytes(), out).is_none() {
            if !sure {
                return Verdict::No;
            }
            return Verdict::Broken(TextError {
                shape: TextShape::Hex,
                flavour: FLAVOUR,
                line: line.no,
                offset: line.start,
                message: format!(
                    "expected a line of hex digits in pairs (the second node's indented by a \
                     tab), found '{}'",
                    first_token(t)
                ),
            });
        }
        *seen = true;
    }
    // Without the header, only both nodes' lines tell this from plain hex.
    let both = seen.iter().all(|&s| s);
    if !seen.iter().any(|&s| s) || !(sure || both) {
        return Verdict::No;
    }
    Verdict::Yes(follow_parts("raw", &header, streams, seen))
}
