//! The JSON decoder: one pass over the bytes with an index, an explicit stack of open containers
//! (no recursion over input nesting), spans recorded as it goes.

use super::{number_value, scan_number, scanned_value, NumberError};
use crate::codec::{DecodeError, DecodeOptions, Document, ErrorKind, Format, LimitName};
use crate::model::{CompactText, Kind, PathSegment, Segment, Span, SpanTreeBuilder, Value};

/// Decodes one JSON text. See the module docs of [`super`] for the rules.
pub(super) fn decode(bytes: &[u8], options: &DecodeOptions) -> Result<Document, DecodeError> {
    let mut p = Parser::new(bytes, options, SpanTreeBuilder::new());
    match p.run() {
        Ok(value) => {
            let end = p.i;
            p.skip_ws();
            let doc = Document {
                format: Format::Json,
                value,
                spans: p.builder.finish(),
            };
            if p.i < bytes.len() {
                let at = p.i;
                let (kind, what) = match describe(bytes, at) {
                    Found::Invalid(byte) => (
                        ErrorKind::Invalid,
                        format!("invalid UTF-8 (byte 0x{byte:02x})"),
                    ),
                    Found::Char(c) => (ErrorKind::TrailingData, c),
                };
                return Err(DecodeError {
                    format: Format::Json,
                    kind,
                    offset: at,
                    path: crate::model::Path::root(),
                    message: {
                        let n = bytes.len() - at;
                        let s = if n == 1 { " follows" } else { "s follow" };
                        format!("the value ends at byte {end} but {n} more byte{s}, starting with {what}")
                    },
                    partial: Some(Box::new(doc)),
                });
            }
            Ok(doc)
        }
        Err(fail) => Err(p.into_error(fail)),
    }
}

/// The value of one JSON text and its number of nodes, without spans: what [`decode`] gives
/// when it succeeds, for a conversion that shows no spans. `None` where [`decode`] fails (the
/// caller decodes again with spans to report the error).
pub(super) fn value_and_nodes(bytes: &[u8], options: &DecodeOptions) -> Option<(Value, usize)> {
    let mut p = Parser::new(bytes, options, SpanTreeBuilder::counting());
    let value = p.run().ok()?;
    p.skip_ws();
    (p.i == bytes.len()).then(|| (value, p.builder.len()))
}

/// The value of one JSON text and its number of nodes, its spans added to `builder` (which
/// grafts them where they belong in a bigger document: [`SpanTreeBuilder::graft`]); `None` where
/// [`decode`] fails. Without `keep`, a container's value is a null: for a caller that wants the
/// spans only, which the decode then gives without making a vector for every container.
pub(crate) fn value_into(
    bytes: &[u8],
    options: &DecodeOptions,
    builder: SpanTreeBuilder,
    keep: bool,
) -> Option<(Value, usize, SpanTreeBuilder)> {
    let mut p = Parser::new(bytes, options, builder);
    p.keep = keep;
    let value = p.run().ok()?;
    p.skip_ws();
    (p.i == bytes.len()).then(|| {
        let nodes = p.builder.len();
        (value, nodes, p.builder)
    })
}

/// A container being decoded, with what it holds so far.
enum Frame {
    /// An array; its items so far are `Parser::items[start..]`.
    Array(usize),
    /// A map, whose entries so far are `Parser::entries[start..]`, and the key (with its quoted
    /// bytes) of the entry being read.
    Map {
        entries: usize,
        key: CompactText,
        key_span: Span,
    },
}

/// Why decoding stopped, before the path and partial document are attached.
struct Fail {
    kind: ErrorKind,
    offset: usize,
    message: String,
    /// Whether the failure is inside the item being read (its segment joins the path) rather than
    /// between items of the innermost container.
    in_item: bool,
}

impl Fail {
    fn item(kind: ErrorKind, offset: usize, message: String) -> Fail {
        Fail {
            kind,
            offset,
            message,
            in_item: true,
        }
    }

    fn between(kind: ErrorKind, offset: usize, message: String) -> Fail {
        Fail {
            kind,
            offset,
            message,
            in_item: false,
        }
    }
}

/// A byte where something else was expected, as words for an error message.
enum Found {
    /// A readable description such as `'}'`, `byte 0x0c` or `'é'`.
    Char(String),
    /// The byte starts no valid UTF-8 sequence.
    Invalid(u8),
}

/// Describes the character at `at` (which must be in bounds to say anything useful).
fn describe(b: &[u8], at: usize) -> Found {
    let Some(&c) = b.get(at) else {
        return Found::Char("the end of the input".into());
    };
    if c < 0x80 {
        return Found::Char(if c.is_ascii_graphic() || c == b' ' {
            format!("'{}'", char::from(c))
        } else {
            format!("byte 0x{c:02x}")
        });
    }
    let tail = b.get(at..b.len().min(at + 4)).unwrap_or_default();
    let valid = match std::str::from_utf8(tail) {
        Ok(s) => s,
        Err(e) => {
            std::str::from_utf8(tail.get(..e.valid_up_to()).unwrap_or_default()).unwrap_or("")
        }
    };
    match valid.chars().next() {
        Some(ch) => Found::Char(format!("'{ch}' (U+{:04X})", u32::from(ch))),
        None => Found::Invalid(c),
    }
}

struct Parser<'a> {
    b: &'a [u8],
    /// The whole input as text when it is valid UTF-8 (checked once, in one fast pass), so each
    /// string is sliced out of it instead of being validated again.
    text: Option<&'a str>,
    i: usize,
    builder: SpanTreeBuilder,
    stack: Vec<Frame>,
    /// Items of the open arrays, innermost last (see [`Frame::Array`]).
    items: Vec<Value>,
    /// Entries of the open maps, innermost last (see [`Frame::Map`]).
    entries: Vec<(Value, Value)>,
    max_depth: usize,
    /// Most nodes the document may have ([`crate::limits::Limits::max_nodes`]).
    max_nodes: usize,
    /// The unescaped text of the string being read, when it has escapes: one buffer for every
    /// such string of the document (its text is copied out once whole), so that reading
    /// escapes neither grows a new buffer string by string nor shrinks one to fit.
    scratch: String,
    /// Whether containers are made into values; without, the decode gives the spans and a null
    /// for each container (every check made all the same).
    keep: bool,
}

/// Bytes that end a fast run inside a string: `"`, `\` and control characters.
fn is_special(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The bytes of `x` (8 bytes of a string, the first in the lowest byte) that are `"`, `\` or
/// below 0x20, each marked by its top bit: exactly up to and including the first such byte (a
/// borrow only runs from a marked byte upwards, so bytes above it may be marked falsely).
/// `trailing_zeros() / 8` of a non-zero mask is where the first one is.
#[inline]
fn special_mask(x: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(LO) & !v & HI;
    let below_space = x.wrapping_sub(LO * 0x20) & !x & HI;
    below_space | zero(x ^ (LO * u64::from(b'"'))) | zero(x ^ (LO * u64::from(b'\\')))
}

/// From `i` inside a string, eight bytes at a time: where the first `"`, `\` or control byte
/// is when it comes before the input's last seven bytes, else where the eight-byte steps
/// stopped (the caller reads on byte by byte from there). The decoder's string reading and the
/// streaming walk's string skip both go through it.
#[inline(always)]
pub(crate) fn skip_plain(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let Ok(arr) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let mask = special_mask(u64::from_le_bytes(arr));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i
}

impl<'a> Parser<'a> {
    fn new(bytes: &'a [u8], options: &DecodeOptions, builder: SpanTreeBuilder) -> Parser<'a> {
        Parser {
            b: bytes,
            text: std::str::from_utf8(bytes).ok(),
            i: 0,
            builder,
            stack: Vec::new(),
            items: Vec::new(),
            entries: Vec::new(),
            max_depth: options.limits.depth(),
            max_nodes: options.limits.nodes_for(bytes.len()),
            scratch: String::new(),
            keep: true,
        }
    }
    fn skip_ws(&mut self) {
        self.i = super::skip_ws(self.b, self.i);
    }

    /// The whole decode: a loop reading one value at a time, never recursing.
    fn run(&mut self) -> Result<Value, Fail> {
        if self.b.starts_with(&[0xEF, 0xBB, 0xBF]) {
            self.i = 3;
        }
        self.skip_ws();
        'value: loop {
            // Read one value at self.i (whitespace already skipped).
            let (segment, key_span) = self.position();
            let start = self.i;
            let Some(&c) = self.b.get(start) else {
                return Err(self.no_value(start));
            };
            let starts_value = matches!(
                c,
                b'[' | b'{' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
            );
            if starts_value && self.builder.len() >= self.max_nodes {
                return Err(self.too_many_nodes(start));
            }
            let mut value = match c {
                b'[' | b'{' => {
                    if self.stack.len() >= self.max_depth {
                        return Err(self.too_deep(start));
                    }
                    let is_array = c == b'[';
                    let kind = if is_array { Kind::Array } else { Kind::Map };
                    self.builder.open(kind, segment, key_span, start, start + 1);
                    self.i += 1;
                    self.skip_ws();
                    let close = if is_array { b']' } else { b'}' };
                    if self.b.get(self.i) == Some(&close) {
                        self.i += 1;
                        self.builder.close(self.i - 1, self.i);
                        if is_array {
                            Value::Array(Vec::new())
                        } else {
                            Value::Map(Vec::new())
                        }
                    } else if is_array {
                        self.stack.push(Frame::Array(self.items.len()));
                        continue 'value;
                    } else {
                        self.stack.push(Frame::Map {
                            entries: self.entries.len(),
                            key: CompactText::default(),
                            key_span: Span::empty(start),
                        });
                        self.read_key()?;
                        continue 'value;
                    }
                }
                b'"' => self.text_leaf(segment, key_span, start)?,
                b'-' | b'0'..=b'9' => {
                    let value = self.number()?;
                    let span = Span::new(start, self.i);
                    self.builder
                        .leaf(value.kind(), segment, key_span, span, start, span);
                    value
                }
                b't' | b'f' | b'n' => self.literal_leaf(c, segment, key_span, start)?,
                _ => return Err(self.unexpected(start, "a value", true)),
            };
            // A value is complete: attach it to its container and read what follows, closing
            // containers until one continues with another item.
            loop {
                let is_array = match self.stack.last_mut() {
                    None => return Ok(value),
                    Some(Frame::Array(_)) => {
                        self.items.push(value);
                        true
                    }
                    Some(Frame::Map { key, .. }) => {
                        let text = std::mem::take(key);
                        self.entries.push((Value::Text(text), value));
                        false
                    }
                };
                self.skip_ws();
                let at = self.i;
                match self.b.get(at) {
                    Some(b',') => {
                        self.i += 1;
                        self.skip_ws();
                        if !is_array {
                            self.read_key()?;
                        }
                        continue 'value;
                    }
                    Some(b']') if is_array => {}
                    Some(b'}') if !is_array => {}
                    _ => return Err(self.no_item_end(at, is_array)),
                }
                self.i += 1;
                self.builder.close(at, self.i);
                value = match self.stack.pop() {
                    // One allocation of the exact size per container: items wait on one shared
                    // stack instead of in vectors that grow by doubling.
                    Some(Frame::Array(start)) if self.keep => {
                        Value::Array(take_from(&mut self.items, start))
                    }
                    Some(Frame::Map { entries, .. }) if self.keep => {
                        Value::Map(take_from(&mut self.entries, entries))
                    }
                    Some(Frame::Array(start)) => {
                        self.items.truncate(start);
                        Value::Null
                    }
                    Some(Frame::Map { entries, .. }) => {
                        self.entries.truncate(entries);
                        Value::Null
                    }
                    None => Value::Null,
                };
            }
        }
    }

    /// Where the value about to be read goes: its segment (the root, an array index, a map
    /// key) and its key's span.
    #[inline(always)]
    fn position(&mut self) -> (Segment, Option<Span>) {
        match self.stack.last() {
            None => (Segment::Root, None),
            Some(Frame::Array(start)) => (
                Segment::Index(
                    u32::try_from(self.items.len().saturating_sub(*start)).unwrap_or(u32::MAX),
                ),
                None,
            ),
            Some(Frame::Map { key, key_span, .. }) => (self.builder.text_key(key), Some(*key_span)),
        }
    }

    /// Reads the string at `start` as a text leaf.
    #[inline(always)]
    fn text_leaf(
        &mut self,
        segment: Segment,
        key_span: Option<Span>,
        start: usize,
    ) -> Result<Value, Fail> {
        let (text, close) = self.string().map_err(|mut f| {
            f.in_item = true;
            f
        })?;
        self.builder.leaf(
            Kind::Text,
            segment,
            key_span,
            Span::new(start, close + 1),
            start + 1,
            Span::new(start + 1, close),
        );
        Ok(Value::Text(text))
    }

    /// Reads `true`, `false` or `null` (first byte `c`) at `start` as a leaf.
    #[inline]
    fn literal_leaf(
        &mut self,
        c: u8,
        segment: Segment,
        key_span: Option<Span>,
        start: usize,
    ) -> Result<Value, Fail> {
        let (lit, value): (&[u8], Value) = match c {
            b't' => (b"true", Value::Bool(true)),
            b'f' => (b"false", Value::Bool(false)),
            _ => (b"null", Value::Null),
        };
        self.literal(lit)?;
        let span = Span::new(start, self.i);
        self.builder
            .leaf(value.kind(), segment, key_span, span, start, span);
        Ok(value)
    }

    /// The input ends at `start`, where a value was expected.
    #[cold]
    fn no_value(&self, start: usize) -> Fail {
        let what = if self.stack.is_empty() && self.builder.is_empty() {
            "the input holds no JSON value"
        } else {
            "the input ends where a value was expected"
        };
        Fail::item(ErrorKind::Eof, start, what.into())
    }

    /// The value at `start` would take the document past its node bound.
    #[cold]
    fn too_many_nodes(&self, start: usize) -> Fail {
        Fail::item(
            ErrorKind::Limit(LimitName::Nodes),
            start,
            crate::limits::Limits::nodes_message(self.max_nodes),
        )
    }

    /// The container at `start` would nest past the depth limit.
    #[cold]
    fn too_deep(&self, start: usize) -> Fail {
        Fail::item(
            ErrorKind::Limit(LimitName::Depth),
            start,
            format!(
                "nesting goes deeper than the limit of {} levels",
                self.max_depth
            ),
        )
    }

    /// After an item, `at` holds neither a comma nor the container's close (or the input ends).
    #[cold]
    fn no_item_end(&self, at: usize, is_array: bool) -> Fail {
        if at < self.b.len() {
            let expected = if is_array {
                "',' or ']' after an array item"
            } else {
                "',' or '}' after a map entry"
            };
            return self.unexpected(at, expected, false);
        }
        let what = if is_array {
            "the input ends inside an array; expected ',' or ']'"
        } else {
            "the input ends inside a map; expected ',' or '}'"
        };
        Fail::between(ErrorKind::Eof, at, what.into())
    }

    /// An error for an unexpected byte at `at` (invalid UTF-8 is [`ErrorKind::Invalid`]).
    fn unexpected(&self, at: usize, expected: &str, in_item: bool) -> Fail {
        let (kind, message) = match describe(self.b, at) {
            Found::Invalid(byte) => (
                ErrorKind::Invalid,
                format!("expected {expected} but found invalid UTF-8 (byte 0x{byte:02x})"),
            ),
            Found::Char(found) => (
                ErrorKind::Syntax,
                format!("expected {expected} but found {found}"),
            ),
        };
        Fail {
            kind,
            offset: at,
            message,
            in_item,
        }
    }

    /// Reads `"key"` and the `:` after it (whitespace skipped before and after) into the map on
    /// top of the stack.
    fn read_key(&mut self) -> Result<(), Fail> {
        let start = self.i;
        match self.b.get(start) {
            Some(b'"') => {}
            Some(_) => return Err(self.unexpected(start, "a string key", false)),
            None => {
                return Err(Fail::between(
                    ErrorKind::Eof,
                    start,
                    "the input ends inside a map; expected a string key".into(),
                ))
            }
        }
        let (text, close) = self.string()?;
        self.skip_ws();
        let at = self.i;
        match self.b.get(at) {
            Some(b':') => {}
            Some(_) => {
                let mut f = self.unexpected(at, "':' after a map key", false);
                f.message = format!("{} (key {text:?})", f.message);
                return Err(f);
            }
            None => {
                return Err(Fail::between(
                    ErrorKind::Eof,
                    at,
                    format!("the input ends after the map key {text:?}; expected ':'"),
                ))
            }
        }
        self.i += 1;
        self.skip_ws();
        if let Some(Frame::Map { key, key_span, .. }) = self.stack.last_mut() {
            *key = text;
            *key_span = Span::new(start, close + 1);
        }
        Ok(())
    }

    /// Reads `true`, `false` or `null` at `self.i`.
    fn literal(&mut self, lit: &[u8]) -> Result<(), Fail> {
        let start = self.i;
        if self.b.get(start..start + lit.len()) != Some(lit) {
            let word = String::from_utf8_lossy(lit);
            for (k, &want) in lit.iter().enumerate() {
                match self.b.get(start + k) {
                    Some(&got) if got == want => {}
                    Some(_) => {
                        return Err(self.unexpected(
                            start + k,
                            &format!("the literal {word}"),
                            true,
                        ))
                    }
                    None => {
                        return Err(Fail::item(
                            ErrorKind::Eof,
                            start + k,
                            format!("the input ends inside the literal {word}"),
                        ))
                    }
                }
            }
        }
        self.i = start + lit.len();
        Ok(())
    }

    /// Reads a number at `self.i`.
    fn number(&mut self) -> Result<Value, Fail> {
        let start = self.i;
        let scan = match scan_number(self.b, start) {
            Ok(scan) => scan,
            Err(NumberError::Eof(at)) => {
                return Err(Fail::item(
                    ErrorKind::Eof,
                    at,
                    "the input ends inside a number".into(),
                ))
            }
            Err(NumberError::Bad(at, what)) => {
                let mut f = self.unexpected(at, what, true);
                f.message = format!("{} in a number", f.message);
                return Err(f);
            }
        };
        if self.b.get(scan.end).is_some_and(u8::is_ascii_digit) {
            // Only possible right after a leading `0`.
            return Err(Fail::item(
                ErrorKind::Syntax,
                scan.end,
                "a number must not have leading zeros".into(),
            ));
        }
        self.i = scan.end;
        // The input was checked to be UTF-8 once, so the literal is sliced as text, not checked again.
        Ok(match self.text.and_then(|t| t.get(start..scan.end)) {
            Some(text) => scanned_value(&scan, text),
            None => number_value(self.b.get(start..scan.end).unwrap_or_default(), scan.is_int),
        })
    }

    /// Reads a string whose opening quote is at `self.i`; returns its text and the offset of the
    /// closing quote, and leaves `self.i` after it. A string without escapes is copied once,
    /// straight from the input (in place when it is short): no `String` is made for it.
    fn string(&mut self) -> Result<(CompactText, usize), Fail> {
        let b = self.b;
        let mut i = self.i + 1;
        let mut run_start = i;
        let mut escaped = false;
        loop {
            i = skip_plain(b, i);
            let Some(&c) = b.get(i) else {
                return Err(Fail::between(
                    ErrorKind::Eof,
                    b.len(),
                    "the input ends inside a string".into(),
                ));
            };
            if !is_special(c) {
                i += 1;
                continue;
            }
            let run = match self.text.and_then(|t| t.get(run_start..i)) {
                Some(run) => run,
                None => text_run(b, run_start, i)?,
            };
            match c {
                b'"' => {
                    let text = if escaped {
                        self.scratch.push_str(run);
                        CompactText::new(&self.scratch)
                    } else {
                        CompactText::new(run)
                    };
                    self.i = i + 1;
                    return Ok((text, i));
                }
                b'\\' => {
                    if !std::mem::replace(&mut escaped, true) {
                        self.scratch.clear();
                    }
                    self.scratch.push_str(run);
                    let (ch, next) = escape(b, i)?;
                    self.scratch.push(ch);
                    i = next;
                    run_start = i;
                }
                _ => {
                    return Err(Fail::between(
                        ErrorKind::Syntax,
                        i,
                        format!(
                            "control character U+{:04X} must be escaped inside a string",
                            c
                        ),
                    ))
                }
            }
        }
    }

    /// Turns a failure into the public error, with the path and the partial document.
    fn into_error(mut self, fail: Fail) -> DecodeError {
        let mut path = self.builder.current_path();
        if fail.in_item {
            match self.stack.last() {
                None => {}
                Some(Frame::Array(start)) => {
                    path.push(PathSegment::Index(self.items.len().saturating_sub(*start)));
                }
                Some(Frame::Map { key, .. }) => path.push(PathSegment::Key(key.to_string())),
            }
        }
        // Close the open containers with what they hold, innermost first. A map's pending key
        // without a value is dropped.
        let mut value: Option<Value> = None;
        while let Some(mut frame) = self.stack.pop() {
            if let Some(child) = value.take() {
                match &mut frame {
                    Frame::Array(_) => self.items.push(child),
                    Frame::Map { key, .. } => {
                        let text = std::mem::take(key);
                        self.entries.push((Value::Text(text), child));
                    }
                }
            }
            value = Some(match frame {
                Frame::Array(start) => Value::Array(take_from(&mut self.items, start)),
                Frame::Map { entries, .. } => Value::Map(take_from(&mut self.entries, entries)),
            });
        }
        let partial = if self.builder.is_empty() {
            None
        } else {
            Some(Box::new(Document {
                format: Format::Json,
                value: value.unwrap_or_default(),
                spans: self.builder.finish_partial(fail.offset),
            }))
        };
        DecodeError {
            format: Format::Json,
            kind: fail.kind,
            offset: fail.offset,
            path,
            message: fail.message,
            partial,
        }
    }
}

/// The items of `stack` from `start` on, moved into a vector of exactly their number (one
/// allocation and one copy; a drain collected item by item cost twice as much).
fn take_from<T>(stack: &mut Vec<T>, start: usize) -> Vec<T> {
    stack.split_off(start.min(stack.len()))
}

/// The text of the bytes `start..end` of a string, checked to be UTF-8.
fn text_run(b: &[u8], start: usize, end: usize) -> Result<&str, Fail> {
    let bytes = b.get(start..end).unwrap_or_default();
    std::str::from_utf8(bytes).map_err(|e| {
        let at = start + e.valid_up_to();
        let byte = b.get(at).copied().unwrap_or_default();
        let message = if e.error_len().is_none() {
            format!("truncated UTF-8 sequence inside a string (byte 0x{byte:02x})")
        } else {
            format!("invalid UTF-8 inside a string (byte 0x{byte:02x})")
        };
        Fail::between(ErrorKind::Invalid, at, message)
    })
}

/// Four hex digits at `at` as a number.
fn hex4(b: &[u8], at: usize, escape_at: usize) -> Result<u32, Fail> {
    let mut n = 0u32;
    for k in 0..4 {
        let d = match b.get(at + k) {
            Some(c @ b'0'..=b'9') => c - b'0',
            Some(c @ b'a'..=b'f') => c - b'a' + 10,
            Some(c @ b'A'..=b'F') => c - b'A' + 10,
            Some(_) => {
                let found = match describe(b, at + k) {
                    Found::Char(c) => c,
                    Found::Invalid(byte) => format!("invalid UTF-8 (byte 0x{byte:02x})"),
                };
                return Err(Fail::between(
                    ErrorKind::Syntax,
                    escape_at,
                    format!("invalid \\u escape: expected four hex digits but found {found}"),
                ));
            }
            None => {
                return Err(Fail::between(
                    ErrorKind::Eof,
                    b.len(),
                    "the input ends inside a \\u escape".into(),
                ))
            }
        };
        n = n * 16 + u32::from(d);
    }
    Ok(n)
}

/// Decodes the escape whose backslash is at `at`; returns the character and the offset after it.
fn escape(b: &[u8], at: usize) -> Result<(char, usize), Fail> {
    let Some(&k) = b.get(at + 1) else {
        return Err(Fail::between(
            ErrorKind::Eof,
            b.len(),
            "the input ends inside an escape".into(),
        ));
    };
    let simple = match k {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => return unicode_escape(b, at),
        _ => {
            let found = match describe(b, at + 1) {
                Found::Char(c) => c,
                Found::Invalid(byte) => format!("invalid UTF-8 (byte 0x{byte:02x})"),
            };
            return Err(Fail::between(
                ErrorKind::Syntax,
                at,
                format!("invalid escape: a backslash followed by {found}"),
            ));
        }
    };
    Ok((simple, at + 2))
}

/// Where the `\uXXXX` escape (with its low surrogate, if any) at `at` ends, if it is valid.
pub(super) fn unicode_escape_end(b: &[u8], at: usize) -> Option<usize> {
    unicode_escape(b, at).ok().map(|(_, end)| end)
}

/// Decodes `\uXXXX` (and a following `\uXXXX` low surrogate) at `at`.
fn unicode_escape(b: &[u8], at: usize) -> Result<(char, usize), Fail> {
    let hi = hex4(b, at + 2, at)?;
    let lone = |what: String| Fail::between(ErrorKind::Invalid, at, what);
    match hi {
        0xD800..=0xDBFF => {
            let next = at + 6;
            match (b.get(next), b.get(next + 1)) {
                (Some(b'\\'), Some(b'u')) => {}
                (None, _) | (Some(b'\\'), None) => {
                    return Err(Fail::between(
                        ErrorKind::Eof,
                        b.len(),
                        "the input ends after a high surrogate escape".into(),
                    ))
                }
                _ => {
                    return Err(lone(format!(
                        "\\u{hi:04X} is a high surrogate not followed by a \\u low surrogate escape"
                    )))
                }
            }
            let lo = hex4(b, next + 2, next)?;
            if !(0xDC00..=0xDFFF).contains(&lo) {
                return Err(lone(format!(
                    "\\u{hi:04X} is a high surrogate followed by \\u{lo:04X}, which is not a low surrogate"
                )));
            }
            let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
            let ch =
                char::from_u32(cp).ok_or_else(|| lone(format!("U+{cp:X} is not a character")))?;
            Ok((ch, next + 6))
        }
        0xDC00..=0xDFFF => Err(lone(format!("\\u{hi:04X} is a lone low surrogate"))),
        _ => {
            let ch =
                char::from_u32(hi).ok_or_else(|| lone(format!("U+{hi:04X} is not a character")))?;
            Ok((ch, at + 6))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ByteRole, Float, NodeId, Path};

    fn doc(text: &str) -> Document {
        decode(text.as_bytes(), &DecodeOptions::default()).expect("valid JSON")
    }

    /// The mask finds the first `"`, `\` or control byte of 8, wherever it is and whatever
    /// fills the others (every byte value, one at a time, before a second special byte and among
    /// plain ones below and above 0x80).
    #[test]
    fn the_mask_finds_the_first_special_byte() {
        let special = |c: u8| c == b'"' || c == b'\\' || c < 0x20;
        for fill in [b'a', 0xC3, 0x7F, b' '] {
            for at in 0..8 {
                for c in 0..=255u8 {
                    let mut bytes = [fill; 8];
                    bytes[at] = c;
                    if at < 7 {
                        bytes[7] = b'"';
                    }
                    let first = bytes.iter().position(|&b| special(b));
                    let mask = special_mask(u64::from_le_bytes(bytes));
                    let found = (mask != 0).then(|| (mask.trailing_zeros() / 8) as usize);
                    assert_eq!(found, first, "{bytes:02x?}");
                }
            }
        }
    }

    /// (start, header_end, payload start, payload end, end) of node `i`.
    fn parts(d: &Document, i: u32) -> (usize, usize, usize, usize, usize) {
        let n = d.spans.node(NodeId(i));
        (
            n.span.start,
            n.header_end,
            n.payload.start,
            n.payload.end,
            n.span.end,
        )
    }

    #[test]
    fn span_conventions() {
        let d = doc(r#" {"s":"a\nb", "n":-1.5,"t":true, "l":[null]} "#);
        d.spans.validate(45).expect("valid spans");
        // Map: header `{`, payload up to `}`, end after it.
        assert_eq!(parts(&d, 0), (1, 2, 2, 43, 44));
        // String: header is the opening quote, payload the escaped bytes, closing quote structure.
        assert_eq!(parts(&d, 1), (6, 7, 7, 11, 12));
        assert_eq!(d.spans.node(NodeId(1)).key, Some(Span::new(2, 5)));
        // Number and literal: empty header, the literal is the payload.
        assert_eq!(parts(&d, 2), (18, 18, 18, 22, 22));
        assert_eq!(parts(&d, 3), (27, 27, 27, 31, 31));
        // Array: `[`, items, `]`.
        assert_eq!(parts(&d, 4), (37, 38, 38, 42, 43));
        assert_eq!(parts(&d, 5), (38, 38, 38, 42, 42));
        assert_eq!(d.spans.path(NodeId(5)).to_string(), "$.l[0]");
        assert_eq!(d.spans.node_at(11), Some((NodeId(1), ByteRole::Structure)));
        assert_eq!(d.spans.node_at(6), Some((NodeId(1), ByteRole::Header)));
        assert_eq!(d.spans.node_at(0), None);
    }

    #[test]
    fn whitespace_is_only_space_tab_lf_cr() {
        assert_eq!(
            doc(" \t\r\n[ \t\r\n1 \t\r\n] \t\r\n").value,
            Value::Array(vec![Value::Int(1)])
        );
        for bad in ["\u{c}1", "[1\u{b}]", "\u{a0}1", "1\u{0}"] {
            assert!(
                decode(bad.as_bytes(), &DecodeOptions::default()).is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn escapes_and_keys() {
        let d = doc(r#"{"k\u00e9\"":"\ud83d\ude00\/\b\f\n\r\t\\","":0}"#);
        assert_eq!(
            d.value,
            Value::Map(vec![
                (Value::text("ké\""), Value::text("😀/\u{8}\u{c}\n\r\t\\")),
                (Value::text(""), Value::Int(0)),
            ])
        );
        assert_eq!(d.spans.path(NodeId(1)).to_string(), "$[\"ké\\\"\"]");
        // Long plain runs take the 8-byte fast path; specials at every position are still found.
        for pos in 0..17 {
            let mut s = "x".repeat(17);
            s.insert(pos, '\u{1}');
            let text = format!("\"{s}\"");
            let e = decode(text.as_bytes(), &DecodeOptions::default()).expect_err("control");
            assert_eq!(e.offset, pos + 1);
        }
    }

    /// Strings with escapes share one buffer: each one's text is its own, whatever an earlier
    /// (longer) one left there, and a plain string between them is untouched.
    #[test]
    fn every_escaped_string_has_its_own_text() {
        let long = r"\u00e9".repeat(40);
        let d = doc(&format!(
            r#"["{long}", "a\nb", "plain", {{"k\t": "\u4e07x"}}, "c\""]"#
        ));
        assert_eq!(
            d.value,
            Value::Array(vec![
                Value::text("é".repeat(40)),
                Value::text("a\nb"),
                Value::text("plain"),
                Value::Map(vec![(Value::text("k\t"), Value::text("万x"))]),
                Value::text("c\""),
            ])
        );
    }

    #[test]
    fn minus_zero_is_a_float_like_serde_json() {
        assert_eq!(doc("-0").value, Value::Float(Float::f64(-0.0)));
        assert_eq!(doc("0").value, Value::Int(0));
        assert_eq!(doc("[-0.0]").value, Value::Array(vec![Value::f64(-0.0)]));
    }

    #[test]
    fn spans_alone_are_the_spans_of_the_whole_decode() {
        let texts: [&[u8]; 7] = [
            br#"{"a":[1,{"b":[true,null,"x"]}],"c":{},"d":[]}"#,
            br#"[[[[1]]],{"k":"a long text that is kept on the heap, not in place"}]"#,
            br#"{"a":[1,2,}"#,
            br#"[1,2] 3"#,
            br#"{"a":1,"a":2}"#,
            br#"[1e400,-0,18446744073709551616]"#,
            br#"["\ud800"]"#,
        ];
        let options = DecodeOptions::default();
        for text in texts {
            let whole = decode(text, &options);
            let alone = value_into(text, &options, SpanTreeBuilder::new(), false);
            assert_eq!(
                whole.is_ok(),
                alone.is_some(),
                "{}",
                String::from_utf8_lossy(text)
            );
            if let (Ok(doc), Some((value, nodes, builder))) = (whole, alone) {
                assert_eq!(builder.finish(), doc.spans);
                assert_eq!(nodes, doc.spans.len());
                if doc.value.kind().is_container() {
                    assert_eq!(value, Value::Null, "a container's value is not made");
                }
            }
        }
    }

    #[test]
    fn errors_name_the_item_being_read() {
        let e = decode(br#"{"a":{"b":[tru"#, &DecodeOptions::default()).expect_err("bad");
        assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 14));
        assert_eq!(e.path, Path::parse("$.a.b[0]").expect("path"));
        let p = e.partial.expect("partial");
        assert_eq!(
            p.value,
            Value::object([("a", Value::object([("b", Value::Array(vec![]))]))])
        );
        p.spans.validate(14).expect("partial spans");
        assert_eq!(p.spans.len(), 3);
    }
}
