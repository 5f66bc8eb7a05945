//! The MessagePack decoder: an explicit stack, spans for every node. See the parent module docs.

use super::{key_path_segment, parse_timestamp, TIMESTAMP_EXT};
use crate::codec::{DecodeError, DecodeOptions, Document, ErrorKind, Format, LimitName};
use crate::model::{Float, Kind, Path, PathSegment, Segment, Span, SpanTreeBuilder, Value};

/// Most item slots reserved up front for one container; more grow as items arrive.
const RESERVE_CAP: usize = 256;

/// A failure before it gets its path and partial document.
struct Fail {
    kind: ErrorKind,
    offset: usize,
    message: String,
}

impl Fail {
    fn new(kind: ErrorKind, offset: usize, message: String) -> Fail {
        Fail {
            kind,
            offset,
            message,
        }
    }
}

/// What one item's head says.
enum Head {
    /// A whole scalar: its value, node kind, header end and payload (which ends the item).
    Leaf {
        value: Value,
        kind: Kind,
        header_end: usize,
        payload: Span,
    },
    /// A container of `len` items (arrays) or entries (maps), whose header ends at `header_end`.
    Open {
        map: bool,
        len: usize,
        header_end: usize,
    },
}

/// An array or map being read.
struct Frame {
    map: bool,
    /// Items (arrays) or entries (maps) the header announced.
    len: usize,
    items: Vec<Value>,
    entries: Vec<(Value, Value)>,
    /// A map key read, waiting for its value, with its bytes.
    key: Option<(Value, Span)>,
    /// Whether the container has a node in the tree (it is not inside a map key).
    node: bool,
    /// Offset of its marker.
    start: usize,
}

impl Frame {
    /// A container whose marker is at `start`, announcing `len` items or entries with `left`
    /// bytes after its header.
    #[inline]
    fn new(map: bool, len: usize, node: bool, start: usize, left: usize) -> Frame {
        // Every item takes at least one byte: never reserve more than the bytes left, and at
        // most a small fixed number of slots, so that hundreds of nested containers claiming
        // billions of items cannot each reserve room for the whole input.
        let room = left.min(RESERVE_CAP);
        let (items, entries) = if map {
            (Vec::new(), Vec::with_capacity(len.min(room / 2)))
        } else {
            (Vec::with_capacity(len.min(room)), Vec::new())
        };
        Frame {
            map,
            len,
            items,
            entries,
            key: None,
            node,
            start,
        }
    }

    fn done(&self) -> usize {
        if self.map {
            self.entries.len()
        } else {
            self.items.len()
        }
    }

    fn is_complete(&self) -> bool {
        self.key.is_none() && self.done() >= self.len
    }

    fn into_value(self) -> Value {
        if self.map {
            Value::Map(self.entries)
        } else {
            Value::Array(self.items)
        }
    }

    /// What is read next in this container, in words (for end-of-input messages).
    fn next_item_words(&self) -> String {
        if self.map {
            let part = if self.key.is_some() { "value" } else { "key" };
            format!(
                "the {part} of entry {} of a map of {} entries",
                self.entries.len(),
                self.len
            )
        } else {
            format!(
                "item {} of an array of {} items",
                self.items.len(),
                self.len
            )
        }
    }
}

/// Where the next item goes.
struct Slot {
    /// `Some((segment, key span))` when the item gets a node.
    node: Option<(Segment, Option<Span>)>,
}

/// Decodes one MessagePack value that fills all of `bytes`, with the spans of every node.
///
/// # Errors
/// A [`DecodeError`] for malformed, truncated or invalid input, nesting deeper than
/// `options.limits.depth()`, or bytes after the value; see the module docs for offsets and paths.
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
    let (value, pos, builder) = read_into(bytes, options, builder).ok()?;
    let nodes = builder.len();
    (pos == bytes.len()).then_some((value, nodes, builder))
}

/// [`decode`] recording the spans into `builder`; the document and its number of nodes.
fn decode_into(
    bytes: &[u8],
    options: &DecodeOptions,
    builder: SpanTreeBuilder,
) -> Result<(Document, usize), DecodeError> {
    let (root, pos, builder) = read_into(bytes, options, builder)?;
    let nodes = builder.len();
    let spans = builder.finish();
    if pos < bytes.len() {
        return Err(trailing_data(root, spans, pos, bytes.len()));
    }
    let doc = Document {
        format: Format::MessagePack,
        value: root,
        spans,
    };
    Ok((doc, nodes))
}

/// Reads the value at the start of `bytes`, recording its spans into `builder`: the value,
/// where it ends, and the builder.
fn read_into(
    bytes: &[u8],
    options: &DecodeOptions,
    mut builder: SpanTreeBuilder,
) -> Result<(Value, usize, SpanTreeBuilder), DecodeError> {
    let max_nodes = options.limits.nodes_for(bytes.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut pos = 0usize;
    let root = loop {
        if let Some(top) = stack.last_mut() {
            if top.node {
                pos = scalar_run(bytes, pos, top, &mut builder, max_nodes);
                if top.is_complete() {
                    let finished = stack.pop().map(|frame| {
                        builder.close(pos, pos);
                        let start = frame.start;
                        (frame.into_value(), start)
                    });
                    if let Some(value) = hand_up(&mut stack, &mut builder, finished, pos) {
                        break value;
                    }
                    continue;
                }
            }
        }
        let slot = next_slot(&stack, &mut builder);
        let item_start = pos;
        let fail = |f: Fail, stack: Vec<Frame>, builder: SpanTreeBuilder| {
            let mut path = builder.current_path();
            // Every failure comes before this item changes the stack, so it still says where
            // the item goes; the segment is only built here, never for items that decode.
            if let Some(seg) = item_path(&stack) {
                path.push(seg);
            }
            let at = f.offset;
            error(f, path, partial(stack, builder, at))
        };
        if pos >= bytes.len() {
            return Err(fail(end_of_input(&stack, pos), stack, builder));
        }
        let (head, end) = match read_head(bytes, pos) {
            Ok(h) => h,
            Err(f) => return Err(fail(f, stack, builder)),
        };
        if slot.node.is_some() && builder.len() >= max_nodes {
            return Err(fail(too_many_nodes(pos, max_nodes), stack, builder));
        }
        let mut finished: Option<(Value, usize)> = None;
        match head {
            Head::Leaf {
                value,
                kind,
                header_end,
                payload,
            } => {
                if let Some((segment, key)) = slot.node {
                    builder.leaf(kind, segment, key, Span::new(pos, end), header_end, payload);
                }
                pos = end;
                finished = Some((value, item_start));
            }
            Head::Open {
                map,
                len,
                header_end,
            } => {
                if stack.len() >= options.limits.depth() {
                    let f = too_deep(pos, options.limits.depth());
                    return Err(fail(f, stack, builder));
                }
                let node = slot.node.is_some();
                if let Some((segment, key)) = slot.node {
                    let kind = if map { Kind::Map } else { Kind::Array };
                    builder.open(kind, segment, key, pos, header_end);
                }
                let left = bytes.len().saturating_sub(header_end);
                let frame = Frame::new(map, len, node, pos, left);
                pos = header_end;
                if len == 0 {
                    if node {
                        builder.close(pos, pos);
                    }
                    finished = Some((frame.into_value(), item_start));
                } else {
                    stack.push(frame);
                }
            }
        }
        if let Some(value) = hand_up(&mut stack, &mut builder, finished, pos) {
            break value;
        }
    };
    Ok((root, pos, builder))
}

/// Reads the items of `top` (a container with nodes) from `pos` while they are scalars, each
/// with its node, without the general loop's bookkeeping for an item that may open a container;
/// returns where it stopped: at the container's end, at an item that opens a container (or a
/// map value after its key, which is then in `top.key`), or at the first item the general loop
/// must look at itself (one that is malformed, or the node limit reached), which it reads again
/// and reports. The items read are the general loop's, node for node.
#[inline]
fn scalar_run(
    bytes: &[u8],
    mut pos: usize,
    top: &mut Frame,
    builder: &mut SpanTreeBuilder,
    max_nodes: usize,
) -> usize {
    if !top.map {
        while top.items.len() < top.len && builder.len() < max_nodes {
            let Some((value, kind, header_end, payload)) = scalar(bytes, pos) else {
                break;
            };
            let end = payload.end;
            let index = u32::try_from(top.items.len()).unwrap_or(u32::MAX);
            let span = Span::new(pos, end);
            builder.leaf(kind, Segment::Index(index), None, span, header_end, payload);
            top.items.push(value);
            pos = end;
        }
        return pos;
    }
    while top.entries.len() < top.len {
        let (key, key_span) = match top.key.take() {
            Some(key) => key,
            None => match scalar(bytes, pos) {
                Some((value, _, _, payload)) => {
                    let span = Span::new(pos, payload.end);
                    pos = payload.end;
                    (value, span)
                }
                None => break,
            },
        };
        if builder.len() >= max_nodes {
            top.key = Some((key, key_span));
            break;
        }
        match scalar(bytes, pos) {
            Some((value, kind, header_end, payload)) => {
                let end = payload.end;
                let segment = builder.segment_for_key(&key);
                let span = Span::new(pos, end);
                builder.leaf(kind, segment, Some(key_span), span, header_end, payload);
                top.entries.push((key, value));
                pos = end;
            }
            None => {
                top.key = Some((key, key_span));
                break;
            }
        }
    }
    pos
}

/// The scalar at `pos`, as [`read_head`] reads it (its value, kind, header end and payload,
/// which ends the item), the most common markers read here at once; `None` for a container, and
/// for anything [`read_head`] reports as malformed.
#[inline(always)]
fn scalar(bytes: &[u8], pos: usize) -> Option<(Value, Kind, usize, Span)> {
    let m = *bytes.get(pos)?;
    let after = pos + 1;
    match m {
        0xa0..=0xbf => {
            let end = after + usize::from(m & 0x1f);
            let text = crate::model::CompactText::inline_ascii(bytes.get(after..end)?);
            let payload = Span::new(after, end);
            match text {
                Some(text) => Some((Value::Text(text), Kind::Text, after, payload)),
                None => head_scalar(bytes, pos),
            }
        }
        0xcc..=0xd3 => {
            let n = 1 << ((m - 0xcc) & 3);
            let value = Value::Int(fixed_int(m, bytes.get(after..after + n)?));
            Some((value, Kind::Int, after, Span::new(after, after + n)))
        }
        0xcb => match bytes.get(after..after + 8) {
            Some(&[a, b, c, d, e, f, g, h]) => Some((
                Value::f64(f64::from_be_bytes([a, b, c, d, e, f, g, h])),
                Kind::Float(crate::model::FloatWidth::F64),
                after,
                Span::new(after, after + 8),
            )),
            _ => None,
        },
        0x80..=0x9f | 0xdc..=0xdf => None,
        _ => match marker_value(m) {
            Some((value, kind)) => Some((value, kind, pos, Span::new(pos, after))),
            None => head_scalar(bytes, pos),
        },
    }
}

/// The value of an item that is its marker alone (a fixint, nil or a boolean), for [`scalar`]
/// and [`read_head`] alike.
#[inline(always)]
fn marker_value(m: u8) -> Option<(Value, Kind)> {
    match m {
        0x00..=0x7f => Some((Value::Int(i128::from(m)), Kind::Int)),
        0xe0..=0xff => Some((Value::Int(i128::from(m as i8)), Kind::Int)),
        0xc0 => Some((Value::Null, Kind::Null)),
        0xc2 => Some((Value::Bool(false), Kind::Bool)),
        0xc3 => Some((Value::Bool(true), Kind::Bool)),
        _ => None,
    }
}

/// [`scalar`] for the markers it leaves to [`read_head`].
#[inline(never)]
fn head_scalar(bytes: &[u8], pos: usize) -> Option<(Value, Kind, usize, Span)> {
    match read_head(bytes, pos) {
        Ok((
            Head::Leaf {
                value,
                kind,
                header_end,
                payload,
            },
            _,
        )) => Some((value, kind, header_end, payload)),
        _ => None,
    }
}

/// Hands a finished value (with its start) up to the container it belongs to, closing every
/// container that is now complete; returns the root value once it is whole.
#[inline(always)]
fn hand_up(
    stack: &mut Vec<Frame>,
    builder: &mut SpanTreeBuilder,
    mut finished: Option<(Value, usize)>,
    pos: usize,
) -> Option<Value> {
    while let Some((value, start)) = finished.take() {
        let Some(top) = stack.last_mut() else {
            return Some(value);
        };
        if !top.map {
            top.items.push(value);
        } else if let Some((key, _)) = top.key.take() {
            top.entries.push((key, value));
        } else {
            top.key = Some((value, Span::new(start, pos)));
        }
        if top.is_complete() {
            if let Some(frame) = stack.pop() {
                if frame.node {
                    builder.close(pos, pos);
                }
                let start = frame.start;
                finished = Some((frame.into_value(), start));
            }
        }
    }
    None
}

/// The input ends where an item should start: the root, or the next item of the innermost
/// container, in words.
#[cold]
fn end_of_input(stack: &[Frame], pos: usize) -> Fail {
    let message = match stack.last() {
        None => "the input is empty".to_string(),
        Some(top) => format!(
            "the input ends where {} should start",
            top.next_item_words()
        ),
    };
    Fail::new(ErrorKind::Eof, pos, message)
}

/// The item at `pos` would be one node more than the limit allows.
#[cold]
fn too_many_nodes(pos: usize, max_nodes: usize) -> Fail {
    Fail::new(
        ErrorKind::Limit(LimitName::Nodes),
        pos,
        crate::limits::Limits::nodes_message(max_nodes),
    )
}

/// The container at `pos` would nest deeper than `depth`.
#[cold]
fn too_deep(pos: usize, depth: usize) -> Fail {
    Fail::new(
        ErrorKind::Limit(LimitName::Depth),
        pos,
        format!("nesting goes deeper than the limit of {depth} containers"),
    )
}

/// Bytes after the complete value (which ends at `pos` of `len`): an error carrying the value.
#[cold]
fn trailing_data(
    value: Value,
    spans: crate::model::SpanTree,
    pos: usize,
    len: usize,
) -> DecodeError {
    let left = len - pos;
    let document = Document {
        format: Format::MessagePack,
        value,
        spans,
    };
    DecodeError {
        format: Format::MessagePack,
        kind: ErrorKind::TrailingData,
        offset: pos,
        path: Path::root(),
        message: format!(
            "{left} more byte{} follow{} the complete value",
            if left == 1 { "" } else { "s" },
            if left == 1 { "s" } else { "" }
        ),
        partial: Some(Box::new(document)),
    }
}

/// Where the next item goes, given the open containers.
fn next_slot(stack: &[Frame], builder: &mut SpanTreeBuilder) -> Slot {
    match stack.last() {
        None => Slot {
            node: Some((Segment::Root, None)),
        },
        Some(top) if !top.map => {
            let i = top.items.len();
            Slot {
                node: top
                    .node
                    .then(|| (Segment::Index(u32::try_from(i).unwrap_or(u32::MAX)), None)),
            }
        }
        Some(top) => match &top.key {
            None => Slot { node: None },
            Some((key, span)) => Slot {
                node: top
                    .node
                    .then(|| (builder.segment_for_key(key), Some(*span))),
            },
        },
    }
}

/// The path segment of the next item of the innermost container: `None` for the root and for
/// map keys.
fn item_path(stack: &[Frame]) -> Option<PathSegment> {
    let top = stack.last()?;
    if !top.map {
        return Some(PathSegment::Index(top.items.len()));
    }
    top.key.as_ref().map(|(key, _)| key_path_segment(key))
}

/// The partial document from the containers still open (`None` if nothing was read).
fn partial(mut stack: Vec<Frame>, builder: SpanTreeBuilder, at: usize) -> Option<Box<Document>> {
    let mut carried: Option<Value> = None;
    while let Some(mut frame) = stack.pop() {
        if let Some(v) = carried.take() {
            if !frame.map {
                frame.items.push(v);
            } else if let Some((key, _)) = frame.key.take() {
                frame.entries.push((key, v));
            }
            // Otherwise `v` was a key cut short: its entry is incomplete and left out.
        }
        // A key whose value never came is left out too.
        frame.key = None;
        carried = Some(frame.into_value());
    }
    let value = carried?;
    Some(Box::new(Document {
        format: Format::MessagePack,
        value,
        spans: builder.finish_partial(at),
    }))
}

fn error(f: Fail, path: Path, partial: Option<Box<Document>>) -> DecodeError {
    DecodeError {
        format: Format::MessagePack,
        kind: f.kind,
        offset: f.offset,
        path,
        message: f.message,
        partial,
    }
}

/// `n` bytes at `at`, or an end-of-input failure pointing at the item's marker `item`.
fn take(
    bytes: &[u8],
    item: usize,
    at: usize,
    n: usize,
    what: impl std::fmt::Display,
) -> Result<&[u8], Fail> {
    let left = bytes.len().saturating_sub(at);
    at.checked_add(n)
        .and_then(|end| bytes.get(at..end))
        .ok_or_else(|| {
            Fail::new(
                ErrorKind::Eof,
                item,
                format!(
                    "{what} runs past the end of the input ({left} byte{} left)",
                    plural(left)
                ),
            )
        })
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A big-endian unsigned number of `n` (1, 2, 4 or 8) bytes at `at`.
fn uint(
    bytes: &[u8],
    item: usize,
    at: usize,
    n: usize,
    what: impl std::fmt::Display,
) -> Result<u64, Fail> {
    take(bytes, item, at, n, what).map(be_uint)
}

/// The big-endian unsigned number `b` (at most 8 bytes).
#[inline]
fn be_uint(b: &[u8]) -> u64 {
    match *b {
        [x] => u64::from(x),
        [a, b] => u64::from(u16::from_be_bytes([a, b])),
        [a, b, c, d] => u64::from(u32::from_be_bytes([a, b, c, d])),
        [a, b, c, d, e, f, g, h] => u64::from_be_bytes([a, b, c, d, e, f, g, h]),
        _ => b.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)),
    }
}

/// The integer a uint (`0xcc`–`0xcf`) or int (`0xd0`–`0xd3`) marker `m` writes in the
/// big-endian bytes `b` (1, 2, 4 or 8 of them).
#[inline]
fn fixed_int(m: u8, b: &[u8]) -> i128 {
    let v = be_uint(b);
    if m < 0xd0 {
        return i128::from(v);
    }
    // Sign-extend the n-byte two's complement number.
    let shift = 64 - 8 * b.len() as u32;
    i128::from(((v << shift) as i64) >> shift)
}

/// A length header of `n` bytes at `at`, as usize (saturating: such a length never fits anyway).
fn length(bytes: &[u8], item: usize, at: usize, n: usize, what: &str) -> Result<usize, Fail> {
    // The words are formatted only when the length is cut short.
    let v = uint(bytes, item, at, n, format_args!("the length of the {what}"))?;
    Ok(usize::try_from(v).unwrap_or(usize::MAX))
}

/// Reads the head of the item at `pos` (and, for scalars, the whole item). Returns it with the
/// offset where the item (or the container's header) ends.
#[inline(always)]
fn read_head(bytes: &[u8], pos: usize) -> Result<(Head, usize), Fail> {
    let Some(&m) = bytes.get(pos) else {
        return Err(Fail::new(
            ErrorKind::Eof,
            pos,
            "the input ends where an item should start".into(),
        ));
    };
    let after = pos + 1;
    match m {
        0xc1 => Err(Fail::new(
            ErrorKind::Syntax,
            pos,
            "0xc1 is never used".into(),
        )),
        0x80..=0x8f => open(true, usize::from(m & 0x0f), after),
        0x90..=0x9f => open(false, usize::from(m & 0x0f), after),
        0xdc | 0xdd => {
            let n = if m == 0xdc { 2 } else { 4 };
            let len = length(bytes, pos, after, n, "array")?;
            open(false, len, after + n)
        }
        0xde | 0xdf => {
            let n = if m == 0xde { 2 } else { 4 };
            let len = length(bytes, pos, after, n, "map")?;
            open(true, len, after + n)
        }
        0xa0..=0xbf | 0xd9..=0xdb => read_str(bytes, pos, m),
        0xc4..=0xc6 => {
            let n = 1 << (m - 0xc4);
            let len = length(bytes, pos, after, n, "binary")?;
            let header_end = after + n;
            let (b, payload) = fixed(
                bytes,
                pos,
                header_end,
                len,
                &format_args!("binary length {len}"),
            )?;
            leaf(Value::Bytes(b.to_vec()), Kind::Bytes, header_end, payload)
        }
        0xc7..=0xc9 | 0xd4..=0xd8 => read_ext(bytes, pos, m),
        0xca | 0xcb => read_float(bytes, pos, m),
        0xcc..=0xcf => {
            let n = 1 << (m - 0xcc);
            let (b, payload) = fixed(bytes, pos, after, n, &format_args!("uint{}", n * 8))?;
            leaf(Value::Int(fixed_int(m, b)), Kind::Int, after, payload)
        }
        0xd0..=0xd3 => {
            let n = 1 << (m - 0xd0);
            let (b, payload) = fixed(bytes, pos, after, n, &format_args!("int{}", n * 8))?;
            leaf(Value::Int(fixed_int(m, b)), Kind::Int, after, payload)
        }
        // Every other marker (fixints, nil, booleans) is the whole item.
        _ => match marker_value(m) {
            Some((value, kind)) => marker_only(pos, value, kind),
            None => Err(Fail::new(
                ErrorKind::Syntax,
                pos,
                format!("0x{m:02x} is not a MessagePack marker"),
            )),
        },
    }
}

/// A scalar held entirely by its marker byte at `pos`.
#[inline]
fn marker_only(pos: usize, value: Value, kind: Kind) -> Result<(Head, usize), Fail> {
    let after = pos + 1;
    Ok((
        Head::Leaf {
            value,
            kind,
            header_end: pos,
            payload: Span::new(pos, after),
        },
        after,
    ))
}

/// The payload of a scalar: `n` bytes after its header ending at `header_end` (the item's
/// marker at `pos`), with their span.
#[inline]
fn fixed<'b>(
    bytes: &'b [u8],
    pos: usize,
    header_end: usize,
    n: usize,
    what: &dyn std::fmt::Display,
) -> Result<(&'b [u8], Span), Fail> {
    let b = take(bytes, pos, header_end, n, what)?;
    Ok((b, Span::new(header_end, header_end + n)))
}

/// A scalar whose payload ends the item.
#[inline]
fn leaf(value: Value, kind: Kind, header_end: usize, payload: Span) -> Result<(Head, usize), Fail> {
    Ok((
        Head::Leaf {
            value,
            kind,
            header_end,
            payload,
        },
        payload.end,
    ))
}

/// A container's header, which ends at `header_end`.
#[inline]
fn open(map: bool, len: usize, header_end: usize) -> Result<(Head, usize), Fail> {
    Ok((
        Head::Open {
            map,
            len,
            header_end,
        },
        header_end,
    ))
}

/// A string (fixstr or str 8/16/32, marker `m` at `pos`): UTF-8 text after its length.
#[inline]
fn read_str(bytes: &[u8], pos: usize, m: u8) -> Result<(Head, usize), Fail> {
    let after = pos + 1;
    let (n, len) = match m {
        0xd9 => (1, length(bytes, pos, after, 1, "string")?),
        0xda => (2, length(bytes, pos, after, 2, "string")?),
        0xdb => (4, length(bytes, pos, after, 4, "string")?),
        _ => (0, usize::from(m & 0x1f)),
    };
    let header_end = after + n;
    let (b, payload) = fixed(
        bytes,
        pos,
        header_end,
        len,
        &format_args!("string length {len}"),
    )?;
    if let Some(text) = crate::model::CompactText::inline_ascii(b) {
        return leaf(Value::Text(text), Kind::Text, header_end, payload);
    }
    match std::str::from_utf8(b) {
        Ok(s) => leaf(Value::Text(s.into()), Kind::Text, header_end, payload),
        Err(e) => Err(not_utf8(bytes, header_end, e)),
    }
}

/// A string whose bytes (from `header_end`) are not UTF-8: where and why.
#[cold]
fn not_utf8(bytes: &[u8], header_end: usize, e: std::str::Utf8Error) -> Fail {
    let bad = header_end + e.valid_up_to();
    let byte = bytes.get(bad).copied().unwrap_or(0);
    let what = if e.error_len().is_some() {
        "starts no valid character"
    } else {
        "starts a character the string ends inside"
    };
    Fail::new(
        ErrorKind::Invalid,
        bad,
        format!("string is not valid UTF-8: byte 0x{byte:02x} at offset {bad} {what}"),
    )
}

/// An extension (fixext or ext 8/16/32, marker `m` at `pos`): its type and data, a timestamp
/// when the type is -1 and the data one.
#[inline]
fn read_ext(bytes: &[u8], pos: usize, m: u8) -> Result<(Head, usize), Fail> {
    let after = pos + 1;
    let (n, len) = match m {
        0xc7 => (1, length(bytes, pos, after, 1, "ext")?),
        0xc8 => (2, length(bytes, pos, after, 2, "ext")?),
        0xc9 => (4, length(bytes, pos, after, 4, "ext")?),
        _ => (0, 1usize << (m - 0xd4)),
    };
    let type_at = after + n;
    let ty = take(bytes, pos, type_at, 1, "the ext type byte")?
        .first()
        .map_or(0, |&t| t as i8);
    let header_end = type_at + 1;
    let (data, payload) = fixed(
        bytes,
        pos,
        header_end,
        len,
        &format_args!("ext length {len}"),
    )?;
    match (ty == TIMESTAMP_EXT)
        .then(|| parse_timestamp(data))
        .flatten()
    {
        Some(ts) => leaf(Value::Timestamp(ts), Kind::Timestamp, header_end, payload),
        None => leaf(
            Value::Ext(ty, data.to_vec()),
            Kind::Ext,
            header_end,
            payload,
        ),
    }
}

/// A float32 (`0xca`) or float64 (`0xcb`) at `pos`.
#[inline]
fn read_float(bytes: &[u8], pos: usize, m: u8) -> Result<(Head, usize), Fail> {
    let after = pos + 1;
    if m == 0xca {
        let (b, payload) = fixed(bytes, pos, after, 4, &"float32")?;
        let v = uint(b, pos, 0, 4, "float32")?;
        let f = f32::from_bits(u32::try_from(v).unwrap_or(0));
        leaf(
            Value::Float(Float::f32(f)),
            Kind::Float(crate::model::FloatWidth::F32),
            after,
            payload,
        )
    } else {
        let (b, payload) = fixed(bytes, pos, after, 8, &"float64")?;
        let v = uint(b, pos, 0, 8, "float64")?;
        leaf(
            Value::f64(f64::from_bits(v)),
            Kind::Float(crate::model::FloatWidth::F64),
            after,
            payload,
        )
    }
}
