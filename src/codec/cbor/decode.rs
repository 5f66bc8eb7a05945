//! The CBOR decoder: bytes to a [`Value`] and its [`SpanTree`](crate::model::SpanTree), with an
//! explicit stack instead of recursion (see the parent module for the conventions).

use num_bigint::{BigInt, BigUint};

use super::scalar_layout;
use crate::codec::{DecodeError, DecodeOptions, Document, ErrorKind, Format, LimitName};
use crate::model::{
    CompactText, Float, NodeId, PathSegment, Segment, Span, SpanTreeBuilder, Value,
};

/// Most items reserved up front for one array or map, whatever its head claims.
const MAX_RESERVE: usize = 4096;

/// A failure before it is dressed up with path and partial document.
struct Fail {
    kind: ErrorKind,
    offset: usize,
    message: String,
}

fn fail<T>(kind: ErrorKind, offset: usize, message: String) -> Result<T, Fail> {
    Err(Fail {
        kind,
        offset,
        message,
    })
}

/// The items an open container has collected so far.
enum Items {
    Array(Vec<Value>),
    /// Entries, and the key read but still waiting for its value (with the key's bytes).
    Map(Vec<(Value, Value)>, Option<(Value, Span)>),
}

/// An open array or map.
struct Frame {
    items: Items,
    /// Items (arrays) or entries (maps) still to come; `None` for indefinite length.
    remaining: Option<u64>,
    /// Tags in front of the container, outermost first.
    tags: Vec<u64>,
    /// Offset of the first tag or of the head.
    start: usize,
    /// Its node, unless it is (inside) a map key, which produces no node.
    node: Option<NodeId>,
}

impl Frame {
    /// Takes a finished item: an array item, a map key or a map value.
    fn accept(&mut self, value: Value, span: Span) {
        match &mut self.items {
            Items::Array(items) => {
                items.push(value);
                self.remaining = self.remaining.map(|n| n.saturating_sub(1));
            }
            Items::Map(entries, pending) => match pending.take() {
                None => *pending = Some((value, span)),
                Some((key, _)) => {
                    entries.push((key, value));
                    self.remaining = self.remaining.map(|n| n.saturating_sub(1));
                }
            },
        }
    }

    fn into_value(self) -> Value {
        let v = match self.items {
            Items::Array(items) => Value::Array(items),
            Items::Map(entries, _) => Value::Map(entries),
        };
        wrap(v, &self.tags)
    }
}

/// Puts `tags` (outermost first) around `v`.
fn wrap(mut v: Value, tags: &[u64]) -> Value {
    for &t in tags.iter().rev() {
        v = Value::Tag(t, Box::new(v));
    }
    v
}

/// An item head: initial byte and argument.
struct Head {
    major: u8,
    ai: u8,
    /// The argument; `None` for additional information 31 (indefinite length or break).
    arg: Option<u64>,
    start: usize,
    end: usize,
}

/// A two-byte simple value below 32, which is not well-formed.
#[cold]
fn short_simple(head: &Head, n: u64) -> Fail {
    Fail {
        kind: ErrorKind::Syntax,
        offset: head.start,
        message: format!(
            "two-byte simple value {n} is not well-formed: simple values below 32 are written in \
             the initial byte"
        ),
    }
}

fn major_name(major: u8) -> &'static str {
    match major {
        0 => "unsigned integer",
        1 => "negative integer",
        2 => "byte string",
        3 => "text string",
        4 => "array",
        5 => "map",
        6 => "tag",
        _ => "simple value/float",
    }
}

struct Decoder<'a> {
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
    /// Most nodes the document may have ([`crate::limits::Limits::max_nodes`]).
    max_nodes: usize,
    stack: Vec<Frame>,
    /// Tags held by the open frames (tags have their own depth budget of `max_depth`).
    tag_depth: usize,
    builder: SpanTreeBuilder,
}

/// Decodes one CBOR data item from `bytes`, with the spans of every node.
///
/// Errors: [`ErrorKind::Syntax`] for input that is not well-formed, [`ErrorKind::Eof`] when it
/// ends inside an item, [`ErrorKind::Invalid`] for text that is not UTF-8, [`ErrorKind::Limit`]
/// past `options.limits.depth()` nested arrays and maps (or as many nested tags), and
/// [`ErrorKind::TrailingData`] when bytes follow the item (the partial document is then the
/// complete item).
pub fn decode(bytes: &[u8], options: &DecodeOptions) -> Result<Document, DecodeError> {
    decode_into(bytes, options, SpanTreeBuilder::new()).map(|(doc, _)| doc)
}

/// The value of `bytes` and its number of nodes, the spans only counted (a streaming walk's
/// reading, which needs the count for the node limit and no tree); `None` where [`decode`]
/// fails.
pub(crate) fn value_and_nodes(bytes: &[u8], options: &DecodeOptions) -> Option<(Value, usize)> {
    decode_into(bytes, options, SpanTreeBuilder::counting())
        .ok()
        .map(|(doc, nodes)| (doc.value, nodes))
}

/// The value of `bytes` and its number of nodes, its spans added to `builder` (which grafts
/// them where they belong in a bigger document: [`SpanTreeBuilder::graft`]); `None` where
/// [`decode`] fails.
pub(crate) fn value_into(
    bytes: &[u8],
    options: &DecodeOptions,
    builder: SpanTreeBuilder,
) -> Option<(Value, usize, SpanTreeBuilder)> {
    let mut d = Decoder::new(bytes, options, builder);
    let value = d.run().ok()?;
    let nodes = d.builder.len();
    (d.pos == bytes.len()).then_some((value, nodes, d.builder))
}

/// [`decode`] recording the spans into `builder`; the document and its number of nodes.
fn decode_into(
    bytes: &[u8],
    options: &DecodeOptions,
    builder: SpanTreeBuilder,
) -> Result<(Document, usize), DecodeError> {
    let mut d = Decoder::new(bytes, options, builder);
    match d.run() {
        Ok(value) => {
            let nodes = d.builder.len();
            let spans = std::mem::take(&mut d.builder).finish();
            let doc = Document {
                format: Format::Cbor,
                value,
                spans,
            };
            if d.pos < bytes.len() {
                return Err(DecodeError {
                    format: Format::Cbor,
                    kind: ErrorKind::TrailingData,
                    offset: d.pos,
                    path: crate::model::Path::root(),
                    message: format!(
                        "{} more bytes follow the complete data item that ends at byte {}",
                        bytes.len() - d.pos,
                        d.pos
                    ),
                    partial: Some(Box::new(doc)),
                });
            }
            Ok((doc, nodes))
        }
        Err(f) => Err(d.into_error(f)),
    }
}

impl<'a> Decoder<'a> {
    /// A decoder at the start of `bytes`, recording spans into `builder`.
    fn new(bytes: &'a [u8], options: &DecodeOptions, builder: SpanTreeBuilder) -> Decoder<'a> {
        Decoder {
            bytes,
            pos: 0,
            max_depth: options.limits.depth(),
            max_nodes: options.limits.nodes_for(bytes.len()),
            stack: Vec::new(),
            tag_depth: 0,
            builder,
        }
    }

    /// Decodes the whole item; the value of the root.
    fn run(&mut self) -> Result<Value, Fail> {
        loop {
            let Some((mut value, mut start)) = self.item()? else {
                continue;
            };
            // Hand the finished item to its container; a definite container it completes is
            // itself a finished item for the one around it.
            loop {
                let end = self.pos;
                let Some(top) = self.stack.last_mut() else {
                    return Ok(value);
                };
                top.accept(value, Span::new(start, end));
                if top.remaining != Some(0) {
                    break;
                }
                let Some(frame) = self.stack.pop() else {
                    break;
                };
                (value, start) = self.close(frame, end, end);
            }
        }
    }

    /// Closes a popped frame: its node, its tag budget; its value and start.
    fn close(&mut self, frame: Frame, payload_end: usize, end: usize) -> (Value, usize) {
        if frame.node.is_some() {
            self.builder.close(payload_end, end);
        }
        self.tag_depth = self.tag_depth.saturating_sub(frame.tags.len());
        let start = frame.start;
        (frame.into_value(), start)
    }

    /// Fails when one more node would take the document past
    /// [`crate::limits::Limits::max_nodes`]; `start` is where the item starts.
    fn check_nodes(&self, start: usize) -> Result<(), Fail> {
        if self.builder.len() < self.max_nodes {
            return Ok(());
        }
        fail(
            ErrorKind::Limit(LimitName::Nodes),
            start,
            crate::limits::Limits::nodes_message(self.max_nodes),
        )
    }

    /// Segment and key span of the next item's node, or `None` when it gets no node (it is a map
    /// key, or inside one).
    fn slot(&mut self) -> Option<(Segment, Option<Span>)> {
        let Some(f) = self.stack.last() else {
            return Some((Segment::Root, None));
        };
        f.node?;
        match &f.items {
            Items::Array(items) => Some((
                Segment::Index(u32::try_from(items.len()).unwrap_or(u32::MAX)),
                None,
            )),
            Items::Map(_, None) => None,
            Items::Map(_, Some((key, span))) => {
                Some((self.builder.segment_for_key(key), Some(*span)))
            }
        }
    }

    /// The path segment of the item being read, for error paths.
    fn item_segment(&self) -> Option<PathSegment> {
        let f = self.stack.last()?;
        f.node?;
        match &f.items {
            Items::Array(items) => Some(PathSegment::Index(items.len())),
            Items::Map(_, None) => None,
            Items::Map(_, Some((Value::Text(s), _))) => Some(PathSegment::Key(s.to_string())),
            Items::Map(_, Some((key, _))) => Some(PathSegment::OtherKey(key.summary(48))),
        }
    }

    /// Reads the head at `at`.
    fn head(&self, at: usize) -> Result<Head, Fail> {
        let Some(&ib) = self.bytes.get(at) else {
            return fail(
                ErrorKind::Eof,
                at,
                "the input ends where a data item was expected".into(),
            );
        };
        let (major, ai) = (ib >> 5, ib & 0x1f);
        let (arg, end) = match ai {
            0..=23 => (Some(u64::from(ai)), at + 1),
            24..=27 => {
                let n = 1usize << (ai - 24);
                let Some(arg_bytes) = self.bytes.get(at + 1..at + 1 + n) else {
                    return fail(
                        ErrorKind::Eof,
                        at,
                        format!(
                            "the {n}-byte argument of the {} head 0x{ib:02x} runs past the end of \
                             the input ({} bytes left)",
                            major_name(major),
                            self.bytes.len() - at - 1
                        ),
                    );
                };
                let v = arg_bytes.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b));
                (Some(v), at + 1 + n)
            }
            28..=30 => {
                return fail(
                    ErrorKind::Syntax,
                    at,
                    format!(
                        "byte 0x{ib:02x} uses additional information {ai}, which is reserved \
                         (not well-formed)"
                    ),
                )
            }
            _ => (None, at + 1),
        };
        Ok(Head {
            major,
            ai,
            arg,
            start: at,
            end,
        })
    }

    /// A sentence for an input that ends where the next item should start.
    fn missing_item(&self) -> String {
        let Some(f) = self.stack.last() else {
            return "the input is empty: no data item".into();
        };
        match (&f.items, f.remaining) {
            (Items::Array(items), Some(n)) => format!(
                "the input ends inside an array after {} of its {} items",
                items.len(),
                (items.len() as u64).saturating_add(n)
            ),
            (Items::Map(entries, pending), Some(n)) => format!(
                "the input ends inside a map after {} of its {} entries{}",
                entries.len(),
                (entries.len() as u64).saturating_add(n),
                if pending.is_some() {
                    " (a key has no value)"
                } else {
                    ""
                }
            ),
            (Items::Array(_), None) => {
                "the input ends inside an indefinite-length array (no break byte 0xff)".into()
            }
            (Items::Map(..), None) => {
                "the input ends inside an indefinite-length map (no break byte 0xff)".into()
            }
        }
    }

    /// Reads one item. `Some((value, start))` when it is complete (a scalar, an empty definite
    /// container, or a container closed by a break), `None` when it opened a container.
    fn item(&mut self) -> Result<Option<(Value, usize)>, Fail> {
        let start = self.pos;
        if start >= self.bytes.len() {
            return fail(ErrorKind::Eof, start, self.missing_item());
        }
        let mut tags = Vec::new();
        let mut head = self.head(start)?;
        if head.major == 6 {
            head = self.tags(head, &mut tags)?;
        }
        let slot = self.slot();
        let (value, header_end, payload, end) = match head.major {
            0 | 1 => {
                let Some(arg) = head.arg else {
                    return Err(self.indefinite_integer(&head));
                };
                let n = if head.major == 0 {
                    i128::from(arg)
                } else {
                    -1 - i128::from(arg)
                };
                let he = scalar_layout(head.major, head.ai, head.start, head.end);
                (Value::Int(n), he, Span::new(he, head.end), head.end)
            }
            2 | 3 => {
                let (value, payload, end) = self.string_value(&head, &mut tags)?;
                (value, head.end, payload, end)
            }
            4 | 5 => return self.open(&head, tags, start, slot),
            _ => {
                let value = match (head.ai, head.arg) {
                    (20, _) => Value::Bool(false),
                    (21, _) => Value::Bool(true),
                    (22, _) => Value::Null,
                    (23, _) => Value::Undefined,
                    (24, Some(n)) if n < 32 => return Err(short_simple(&head, n)),
                    (25, Some(bits)) => Value::Float(Float::f16(half::f16::from_bits(bits as u16))),
                    (26, Some(bits)) => Value::Float(Float::f32(f32::from_bits(bits as u32))),
                    (27, Some(bits)) => Value::Float(Float::f64(f64::from_bits(bits))),
                    (_, Some(n)) => Value::Simple(n as u8),
                    (_, None) => return self.brk(&head, &tags).map(Some),
                };
                let he = scalar_layout(head.major, head.ai, head.start, head.end);
                (value, he, Span::new(he, head.end), head.end)
            }
        };
        if slot.is_some() {
            self.check_nodes(start)?;
        }
        self.pos = end;
        let value = wrap(value, &tags);
        if let Some((segment, key)) = slot {
            self.builder.leaf(
                value.kind(),
                segment,
                key,
                Span::new(start, end),
                header_end,
                payload,
            );
        }
        Ok(Some((value, start)))
    }

    /// The tags starting with `head` (major type 6), pushed on `tags`; the head of the item they
    /// tag.
    #[inline]
    fn tags(&mut self, mut head: Head, tags: &mut Vec<u64>) -> Result<Head, Fail> {
        while head.major == 6 {
            let Some(t) = head.arg else {
                return fail(
                    ErrorKind::Syntax,
                    head.start,
                    "byte 0xdf: a tag cannot have indefinite length (not well-formed)".into(),
                );
            };
            if self.tag_depth.saturating_add(tags.len()) >= self.max_depth {
                return fail(
                    ErrorKind::Limit(LimitName::Depth),
                    head.start,
                    format!(
                        "more than {} tags are nested here (the limit)",
                        self.max_depth
                    ),
                );
            }
            tags.push(t);
            if head.end >= self.bytes.len() {
                return fail(
                    ErrorKind::Eof,
                    head.end,
                    format!("the input ends after tag {t}, which must be followed by a data item"),
                );
            }
            head = self.head(head.end)?;
        }
        Ok(head)
    }

    /// An integer head with additional information 31, which integers cannot have.
    #[cold]
    fn indefinite_integer(&self, head: &Head) -> Fail {
        Fail {
            kind: ErrorKind::Syntax,
            offset: head.start,
            message: format!(
                "byte 0x{:02x}: an {} cannot have indefinite length (not well-formed)",
                self.bytes.get(head.start).copied().unwrap_or(0),
                major_name(head.major)
            ),
        }
    }

    /// A byte or text string item: text checked for UTF-8, a byte string under tag 2 or 3 as
    /// the bignum it holds (the tag taken off `tags`); with its payload span and end.
    #[inline]
    fn string_value(
        &mut self,
        head: &Head,
        tags: &mut Vec<u64>,
    ) -> Result<(Value, Span, usize), Fail> {
        if head.major == 3 {
            if let Some((body, payload, end)) = self.definite_body(head) {
                // Straight from the input: no byte vector made for the text.
                if let Some(text) = CompactText::inline_ascii(body) {
                    return Ok((Value::Text(text), payload, end));
                }
                return match std::str::from_utf8(body) {
                    Ok(s) => Ok((Value::Text(CompactText::new(s)), payload, end)),
                    Err(e) => fail(
                        ErrorKind::Invalid,
                        payload.start + e.valid_up_to(),
                        "text string is not valid UTF-8".into(),
                    ),
                };
            }
        }
        let (data, payload, end) = self.string(head)?;
        let value = if head.major == 3 {
            match String::from_utf8(data) {
                Ok(s) => Value::Text(s.into()),
                Err(e) => {
                    return fail(
                        ErrorKind::Invalid,
                        payload.start + e.utf8_error().valid_up_to(),
                        "text string is not valid UTF-8".into(),
                    )
                }
            }
        } else if matches!(tags.last(), Some(2 | 3)) {
            let magnitude = BigInt::from(BigUint::from_bytes_be(&data));
            let n = if tags.pop() == Some(2) {
                magnitude
            } else {
                -1 - magnitude
            };
            Value::bigint(n)
        } else {
            Value::Bytes(data)
        };
        Ok((value, payload, end))
    }

    /// The payload of a definite-length string whose head is `head`, its span and end; `None`
    /// for an indefinite one or one that runs past the input ([`Decoder::string`] says why).
    #[inline]
    fn definite_body(&self, head: &Head) -> Option<(&[u8], Span, usize)> {
        let len = usize::try_from(head.arg?).ok()?;
        let body = self.bytes.get(head.end..head.end.checked_add(len)?)?;
        let end = head.end + body.len();
        Some((body, Span::new(head.end, end), end))
    }

    /// A byte or text string (definite or indefinite) whose head is `head`: its bytes, payload
    /// span and end. An indefinite text's chunks are checked for UTF-8 one by one (a character
    /// must not span two); a definite text is left to the caller to check.
    fn string(&self, head: &Head) -> Result<(Vec<u8>, Span, usize), Fail> {
        let what = major_name(head.major);
        let text = head.major == 3;
        let left = |at: usize| self.bytes.len().saturating_sub(at);
        let check_utf8 = |chunk: &[u8], at: usize| -> Result<(), Fail> {
            match std::str::from_utf8(chunk) {
                Ok(_) => Ok(()),
                Err(e) => fail(
                    ErrorKind::Invalid,
                    at + e.valid_up_to(),
                    "text string is not valid UTF-8".into(),
                ),
            }
        };
        if let Some(len) = head.arg {
            let body = usize::try_from(len)
                .ok()
                .and_then(|n| self.bytes.get(head.end..head.end.checked_add(n)?));
            let Some(body) = body else {
                return fail(
                    ErrorKind::Eof,
                    head.start,
                    format!(
                        "{what} length {len} runs past the end of the input ({} bytes left)",
                        left(head.end)
                    ),
                );
            };
            // A definite text string is checked once, by the caller's `String::from_utf8`, whose
            // offsets are the same since the payload starts right after the head.
            let end = head.end + body.len();
            return Ok((body.to_vec(), Span::new(head.end, end), end));
        }
        let mut data = Vec::new();
        let mut at = head.end;
        loop {
            match self.bytes.get(at) {
                None => {
                    return fail(
                        ErrorKind::Eof,
                        at,
                        format!(
                            "the input ends inside an indefinite-length {what} (no break byte 0xff)"
                        ),
                    )
                }
                Some(0xff) => return Ok((data, Span::new(head.end, at), at + 1)),
                Some(&b) => {
                    let chunk = self.head(at)?;
                    if chunk.major != head.major || chunk.arg.is_none() {
                        let found = if chunk.major == head.major {
                            format!("another indefinite-length {what}")
                        } else {
                            format!("a {} (byte 0x{b:02x})", major_name(chunk.major))
                        };
                        return fail(
                            ErrorKind::Syntax,
                            at,
                            format!(
                                "a chunk of an indefinite-length {what} must be a definite-length \
                                 {what}, not {found}"
                            ),
                        );
                    }
                    let len = chunk.arg.unwrap_or(0);
                    let body = usize::try_from(len)
                        .ok()
                        .and_then(|n| self.bytes.get(chunk.end..chunk.end.checked_add(n)?));
                    let Some(body) = body else {
                        return fail(
                            ErrorKind::Eof,
                            at,
                            format!(
                                "{what} chunk length {len} runs past the end of the input ({} \
                                 bytes left)",
                                left(chunk.end)
                            ),
                        );
                    };
                    if text {
                        check_utf8(body, chunk.end)?;
                    }
                    data.extend_from_slice(body);
                    at = chunk.end + body.len();
                }
            }
        }
    }

    /// Opens an array or map; completes it at once when it is definite and empty.
    fn open(
        &mut self,
        head: &Head,
        tags: Vec<u64>,
        start: usize,
        slot: Option<(Segment, Option<Span>)>,
    ) -> Result<Option<(Value, usize)>, Fail> {
        let is_map = head.major == 5;
        if self.stack.len() >= self.max_depth {
            return fail(
                ErrorKind::Limit(LimitName::Depth),
                head.start,
                format!(
                    "arrays and maps are nested deeper than {} levels (the limit)",
                    self.max_depth
                ),
            );
        }
        // Every item takes at least one byte, so a count beyond the bytes left is a lie; and
        // since each open level could claim all of them, reserve no more than a page of items up
        // front (the vector grows as items actually arrive).
        let left = self.bytes.len().saturating_sub(head.end);
        let cap = head.arg.map_or(0, |n| {
            usize::try_from(n)
                .unwrap_or(usize::MAX)
                .min(left)
                .min(MAX_RESERVE)
        });
        let kind = if is_map {
            crate::model::Kind::Map
        } else {
            crate::model::Kind::Array
        };
        if slot.is_some() {
            self.check_nodes(start)?;
        }
        let node =
            slot.map(|(segment, key)| self.builder.open(kind, segment, key, start, head.end));
        let items = if is_map {
            Items::Map(Vec::with_capacity(cap / 2), None)
        } else {
            Items::Array(Vec::with_capacity(cap))
        };
        self.tag_depth = self.tag_depth.saturating_add(tags.len());
        let frame = Frame {
            items,
            remaining: head.arg,
            tags,
            start,
            node,
        };
        self.pos = head.end;
        if frame.remaining == Some(0) {
            return Ok(Some(self.close(frame, head.end, head.end)));
        }
        self.stack.push(frame);
        Ok(None)
    }

    /// A break byte: closes the innermost indefinite-length array or map.
    fn brk(&mut self, head: &Head, tags: &[u64]) -> Result<(Value, usize), Fail> {
        if let Some(t) = tags.last() {
            return fail(
                ErrorKind::Syntax,
                head.start,
                format!("a break byte 0xff follows tag {t}, which needs a data item"),
            );
        }
        match self.stack.last() {
            Some(f) if f.remaining.is_none() => {
                if let Items::Map(_, Some(_)) = f.items {
                    return fail(
                        ErrorKind::Syntax,
                        head.start,
                        "a break byte 0xff ends the map after a key that has no value".into(),
                    );
                }
            }
            _ => {
                return fail(
                    ErrorKind::Syntax,
                    head.start,
                    "a break byte 0xff stands outside any indefinite-length array, map or string"
                        .into(),
                )
            }
        }
        self.pos = head.end;
        match self.stack.pop() {
            Some(frame) => Ok(self.close(frame, head.start, head.end)),
            None => fail(ErrorKind::Syntax, head.start, "stray break byte".into()),
        }
    }

    /// Turns a failure into the public error, with the path and the partial document.
    fn into_error(mut self, f: Fail) -> DecodeError {
        let mut path = self.builder.current_path();
        if let Some(segment) = self.item_segment() {
            path.push(segment);
        }
        // Close the open containers with what they hold, innermost first.
        let mut carry: Option<Value> = None;
        while let Some(mut frame) = self.stack.pop() {
            if let Some(c) = carry.take() {
                match &mut frame.items {
                    Items::Array(items) => items.push(c),
                    // Without a pending key, the carried value was a key: the entry is incomplete.
                    Items::Map(entries, pending) => {
                        if let Some((key, _)) = pending.take() {
                            entries.push((key, c));
                        }
                    }
                }
            }
            carry = Some(frame.into_value());
        }
        let partial = carry.map(|value| {
            Box::new(Document {
                format: Format::Cbor,
                value,
                spans: self.builder.finish_partial(f.offset),
            })
        });
        DecodeError {
            format: Format::Cbor,
            kind: f.kind,
            offset: f.offset,
            path,
            message: f.message,
            partial,
        }
    }
}
