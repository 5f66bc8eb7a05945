//! How a [`super::SpanTree`] keeps its nodes: two byte streams of variable-length records, one
//! record a node, in pre-order.
//!
//! A node's numbers are mostly small distances: a JSON field starts a few bytes after the node
//! before it, its header is a byte or two, its key is a short word just before it, its parent a
//! few ids back. So each record stores those distances as LEB128 varints (one byte up to 127) and
//! the few flags in a leading byte, which makes a typical node 3–4 bytes of offsets and 3 bytes
//! of shape where fixed-width fields took 16 each. What a record cannot know when it is written,
//! a container's end and subtree end (known only when the container closes), sits in side
//! tables indexed by the container's ordinal among the containers: two bytes or one each where
//! the number fits, which is nearly always, and a map for the rest ([`Narrow`]).
//!
//! Records are read by walking: every [`BLOCK`] nodes a mark says where that node's record starts
//! and what the walk needs to know there (the start offset before it, the containers before it),
//! so node `i` costs at most `BLOCK - 1` records decoded before it, and a cursor walking forward
//! (iteration, a node's children) decodes each record once. A block is 64 nodes: the marks then
//! cost well under a byte a node, and a node read alone costs a few hundred nanoseconds. The
//! binary search for the node at a byte offset decodes each probed block's first record rather
//! than keeping its offset in the mark.
//!
//! Every distance is stored as a wrapping difference, so any numbers round-trip exactly (an odd
//! node whose parts are out of order, an offset past 4 GiB): the common case is small, the odd
//! one costs up to ten bytes, and nothing is refused.

use std::collections::HashMap;

use super::{Node, Span};
use crate::model::value::{FloatWidth, Kind};

/// Nodes between two marks.
pub(super) const BLOCK: usize = 64;

/// Whether a cursor at node `at` reaches node `to` sooner from `to`'s block mark than by reading
/// forward (always when `to` is behind it).
fn jumps(at: usize, to: usize) -> bool {
    to < at || to - at > to % BLOCK
}

/// Appends `v` as an unsigned LEB128 varint.
fn put(out: &mut Vec<u8>, v: usize) {
    let mut v = v as u64;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads the varint at `*pos` and moves past it. The streams are this module's own, so a
/// truncated one (which cannot happen) reads as zeros rather than panicking.
#[inline]
fn get(bytes: &[u8], pos: &mut usize) -> usize {
    let mut v: u64 = 0;
    let mut shift = 0;
    loop {
        let b = bytes.get(*pos).copied().unwrap_or(0);
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 || shift >= 63 {
            return v as usize;
        }
        shift += 7;
    }
}

/// A key's length and its distance before the value (`gap`) in one number, when the gap is
/// under 3 and the length small enough to shift: one byte for a key of up to 31 bytes right
/// before its value (MessagePack, CBOR, protobuf) or one separator before it (JSON's colon).
#[inline]
fn key_code(len: usize, gap: usize) -> Option<usize> {
    (gap < 3 && len < usize::MAX >> 3).then_some(len << 2 | gap)
}

/// Appends a key's length and gap: their [`key_code`], or a code of 3 and both numbers in
/// full.
#[inline]
fn put_key(out: &mut Vec<u8>, len: usize, gap: usize) {
    match key_code(len, gap) {
        Some(code) => put(out, code),
        None => {
            put(out, 3);
            put(out, len);
            put(out, gap);
        }
    }
}

/// Reads what [`put_key`] wrote: the key's length and gap.
#[inline]
fn get_key(bytes: &[u8], pos: &mut usize) -> (usize, usize) {
    let code = get(bytes, pos);
    if code & 3 == 3 {
        (get(bytes, pos), get(bytes, pos))
    } else {
        (code >> 2, code & 3)
    }
}

fn byte(bytes: &[u8], pos: &mut usize) -> u8 {
    let b = bytes.get(*pos).copied().unwrap_or(0);
    *pos += 1;
    b
}

fn kind_code(kind: Kind) -> u8 {
    match kind {
        Kind::Null => 0,
        Kind::Undefined => 1,
        Kind::Bool => 2,
        Kind::Int => 3,
        Kind::Float(FloatWidth::F16) => 4,
        Kind::Float(FloatWidth::F32) => 5,
        Kind::Float(FloatWidth::F64) => 6,
        Kind::Decimal => 7,
        Kind::Text => 8,
        Kind::Bytes => 9,
        Kind::Array => 10,
        Kind::Map => 11,
        Kind::Simple => 12,
        Kind::Ext => 13,
        Kind::Timestamp => 14,
        Kind::Raw => 15,
    }
}

fn kind_of(code: u8) -> Kind {
    match code & 15 {
        0 => Kind::Null,
        1 => Kind::Undefined,
        2 => Kind::Bool,
        3 => Kind::Int,
        4 => Kind::Float(FloatWidth::F16),
        5 => Kind::Float(FloatWidth::F32),
        6 => Kind::Float(FloatWidth::F64),
        7 => Kind::Decimal,
        8 => Kind::Text,
        9 => Kind::Bytes,
        10 => Kind::Array,
        11 => Kind::Map,
        12 => Kind::Simple,
        13 => Kind::Ext,
        14 => Kind::Timestamp,
        _ => Kind::Raw,
    }
}

/// A number small enough for a side table's entry, or the entry's mark that the number is in
/// the table's map instead.
pub(super) trait Small: Copy + PartialEq + Into<usize> + TryFrom<usize> {
    /// The mark: the number is in the map.
    const WIDE: Self;
}

impl Small for u8 {
    const WIDE: u8 = u8::MAX;
}

impl Small for u16 {
    const WIDE: u16 = u16::MAX;
}

/// Numbers by ordinal (one per container), each in a `T` where it fits, which is nearly every
/// one (a container's length and tail, its count of nodes), and the rest exactly in a map.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Narrow<T> {
    small: Vec<T>,
    wide: HashMap<u32, usize>,
}

impl<T> Default for Narrow<T> {
    fn default() -> Self {
        Narrow {
            small: Vec::new(),
            wide: HashMap::new(),
        }
    }
}

impl<T: Small> Narrow<T> {
    fn len(&self) -> usize {
        self.small.len()
    }

    /// The entry for `v`, and whether it goes to the map.
    #[inline(always)]
    fn entry(v: usize) -> (T, bool) {
        match T::try_from(v) {
            Ok(t) if t != T::WIDE => (t, false),
            _ => (T::WIDE, true),
        }
    }

    #[inline(always)]
    fn push(&mut self, v: usize) {
        let (t, wide) = Narrow::<T>::entry(v);
        if wide {
            self.wide.insert(self.small.len() as u32, v);
        }
        self.small.push(t);
    }

    #[inline]
    fn set(&mut self, ordinal: u32, v: usize) {
        let Some(e) = self.small.get_mut(ordinal as usize) else {
            return;
        };
        let (t, wide) = Narrow::<T>::entry(v);
        let was_wide = *e == T::WIDE;
        *e = t;
        if wide {
            self.wide.insert(ordinal, v);
        } else if was_wide {
            self.wide.remove(&ordinal);
        }
    }

    #[inline]
    fn get(&self, ordinal: u32) -> Option<usize> {
        let t = *self.small.get(ordinal as usize)?;
        if t == T::WIDE {
            self.wide.get(&ordinal).copied()
        } else {
            Some(t.into())
        }
    }

    /// The first `n` entries.
    fn prefix(&self, n: usize) -> Narrow<T> {
        let n = n.min(self.small.len());
        Narrow {
            small: self.small[..n].to_vec(),
            wide: self
                .wide
                .iter()
                .filter(|(&o, _)| (o as usize) < n)
                .map(|(&o, &v)| (o, v))
                .collect(),
        }
    }

    fn reserve(&mut self, n: usize) {
        self.small.reserve(n);
    }

    fn shrink_to_fit(&mut self) {
        self.small.shrink_to_fit();
        self.wide.shrink_to_fit();
    }

    fn heap_bytes(&self) -> usize {
        self.small.capacity() * std::mem::size_of::<T>() + self.wide.capacity() * (4 + 8 + 1)
    }
}

/// A node's place in the tree, unpacked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Link {
    /// The parent's id, [`Link::NONE`] for the root.
    pub parent: u32,
    pub subtree_end: u32,
    /// The index or key id of the segment.
    pub segment: u32,
    pub kind: Kind,
    /// Segment tag: 0 root, 1 index, 2 key, 3 other key.
    pub tag: u8,
    /// Opened as a container (its subtree end is in the side table).
    pub opened: bool,
}

impl Link {
    pub const NONE: u32 = u32::MAX;
}

/// Where block `b`'s first record starts, and how many containers come before it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct LinkMark {
    pos: usize,
    containers: u32,
}

/// Every node's [`Link`], packed. Record: a head byte (kind: 4 bits, tag: 2, has a parent: 1,
/// opened: 1), the distance back to the parent, the segment (not for the root).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Links {
    bytes: Vec<u8>,
    marks: Vec<LinkMark>,
    /// Each opened node's count of nodes, itself and its descendants (its subtree end less
    /// its id), by ordinal.
    ends: Narrow<u16>,
    len: u32,
}

impl Links {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Containers opened so far.
    pub fn containers(&self) -> u32 {
        self.ends.len() as u32
    }

    /// Appends `link` as the next node. Inlined into the builder's one call, where most of each
    /// node's time goes.
    #[inline(always)]
    pub fn push(&mut self, link: &Link) {
        let i = self.len;
        if i as usize % BLOCK == 0 {
            self.marks.push(LinkMark {
                pos: self.bytes.len(),
                containers: self.containers(),
            });
        }
        let has_parent = link.parent != Link::NONE;
        let head = kind_code(link.kind)
            | (link.tag & 3) << 4
            | u8::from(has_parent) << 6
            | u8::from(link.opened) << 7;
        let back = i.wrapping_sub(link.parent);
        if has_parent && link.tag != 0 && back < 0x80 && link.segment < 0x80 {
            // The usual record, three one-byte fields, in one append.
            self.bytes
                .extend_from_slice(&[head, back as u8, link.segment as u8]);
            if link.opened {
                self.ends.push(link.subtree_end.wrapping_sub(i) as usize);
            }
            self.len += 1;
            return;
        }
        self.bytes.push(head);
        if has_parent {
            put(&mut self.bytes, i.wrapping_sub(link.parent) as usize);
        }
        if link.tag != 0 {
            put(&mut self.bytes, link.segment as usize);
        }
        if link.opened {
            self.ends.push(link.subtree_end.wrapping_sub(i) as usize);
        }
        self.len += 1;
    }

    /// Sets the subtree end of the container with ordinal `ordinal`, node `id`.
    pub fn set_end(&mut self, ordinal: u32, id: u32, subtree_end: u32) {
        self.ends
            .set(ordinal, subtree_end.wrapping_sub(id) as usize);
    }

    /// The subtree end of the container with ordinal `ordinal`, node `id`.
    pub fn end_of(&self, ordinal: u32, id: u32) -> Option<u32> {
        self.ends.get(ordinal).map(|n| id.wrapping_add(n as u32))
    }

    /// The first `len` nodes, of which `containers` are opened ones.
    pub fn prefix(&self, len: usize, cursor: &LinkCursor<'_>) -> Links {
        debug_assert_eq!(cursor.index, len);
        Links {
            bytes: self.bytes[..cursor.pos.min(self.bytes.len())].to_vec(),
            marks: self.marks[..len.div_ceil(BLOCK).min(self.marks.len())].to_vec(),
            ends: self.ends.prefix(cursor.containers as usize),
            len: len as u32,
        }
    }

    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.marks.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
            + self.marks.capacity() * std::mem::size_of::<LinkMark>()
            + self.ends.heap_bytes()
    }

    /// A cursor before node 0.
    pub fn cursor(&self) -> LinkCursor<'_> {
        LinkCursor {
            links: self,
            index: 0,
            pos: 0,
            containers: 0,
        }
    }

    /// A cursor where `at` says (taken from a cursor over these links).
    pub fn cursor_at(&self, at: LinkAt) -> LinkCursor<'_> {
        LinkCursor {
            links: self,
            index: at.index,
            pos: at.pos,
            containers: at.containers,
        }
    }

    /// Reserves room for about `nodes` more nodes.
    pub fn reserve(&mut self, nodes: usize) {
        self.bytes.reserve(nodes * 4);
        self.marks.reserve(nodes / BLOCK + 1);
    }

    /// Node `i`'s link.
    pub fn get(&self, i: usize) -> Link {
        let mut c = self.cursor();
        c.seek(i);
        c.next().unwrap_or(Link {
            parent: Link::NONE,
            subtree_end: i as u32 + 1,
            segment: 0,
            kind: Kind::Null,
            tag: 0,
            opened: false,
        })
    }
}

/// Reads [`Links`] forward from a node.
#[derive(Debug, Clone)]
pub(super) struct LinkCursor<'a> {
    links: &'a Links,
    /// The node `next` reads.
    index: usize,
    pos: usize,
    containers: u32,
}

/// Where a [`LinkCursor`] is, without the links it reads (for a builder that holds the links
/// it follows beside the place it has reached in them).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LinkAt {
    index: usize,
    pos: usize,
    containers: u32,
}

impl LinkCursor<'_> {
    /// Where the cursor is.
    pub fn at(&self) -> LinkAt {
        LinkAt {
            index: self.index,
            pos: self.pos,
            containers: self.containers,
        }
    }

    /// Moves so that `next` reads node `i`: forward from here within a block, else from the
    /// block's mark.
    pub fn seek(&mut self, i: usize) {
        if jumps(self.index, i) {
            let Some(mark) = self.links.marks.get(i / BLOCK) else {
                self.index = i;
                self.pos = usize::MAX;
                return;
            };
            self.index = i / BLOCK * BLOCK;
            self.pos = mark.pos;
            self.containers = mark.containers;
        }
        while self.index < i {
            self.skip();
        }
    }

    fn skip(&mut self) {
        let bytes = &self.links.bytes;
        let head = byte(bytes, &mut self.pos);
        if head & 64 != 0 {
            get(bytes, &mut self.pos);
        }
        if head & 48 != 0 {
            get(bytes, &mut self.pos);
        }
        if head & 128 != 0 {
            self.containers += 1;
        }
        self.index += 1;
    }

    /// The link of the node at the cursor, moving past it.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Link> {
        if self.index >= self.links.len() {
            return None;
        }
        let bytes = &self.links.bytes;
        let i = self.index as u32;
        let head = byte(bytes, &mut self.pos);
        let parent = if head & 64 != 0 {
            i.wrapping_sub(get(bytes, &mut self.pos) as u32)
        } else {
            Link::NONE
        };
        let tag = (head >> 4) & 3;
        let segment = if tag != 0 {
            get(bytes, &mut self.pos) as u32
        } else {
            0
        };
        let opened = head & 128 != 0;
        let subtree_end = if opened {
            let e = self.links.end_of(self.containers, i).unwrap_or(i + 1);
            self.containers += 1;
            e
        } else {
            i + 1
        };
        self.index += 1;
        Some(Link {
            parent,
            subtree_end,
            segment,
            kind: kind_of(head),
            tag,
            opened,
        })
    }
}

/// A node's bytes, unpacked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Bytes {
    pub key: Option<Span>,
    pub span: Span,
    pub header_end: usize,
    pub payload: Span,
}

impl Bytes {
    /// Where the node's extent starts: its key, else its value.
    pub fn extent_start(&self) -> usize {
        self.key.map_or(self.span.start, |k| k.start)
    }

    /// The node these bytes and `link` make.
    pub fn with(self, link: &Link) -> Node {
        Node {
            kind: link.kind,
            segment: match link.tag {
                0 => super::Segment::Root,
                1 => super::Segment::Index(link.segment),
                2 => super::Segment::Key(link.segment),
                _ => super::Segment::OtherKey(link.segment),
            },
            parent: (link.parent != Link::NONE).then_some(super::NodeId(link.parent)),
            key: self.key,
            span: self.span,
            header_end: self.header_end,
            payload: self.payload,
            subtree_end: link.subtree_end,
        }
    }
}

/// Where block `b`'s first record starts, the start offset of the node before it, and how
/// many containers come before it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct OffsetMark {
    pos: usize,
    prev_start: usize,
    containers: u32,
}

const HAS_KEY: u8 = 1;
const OPENED: u8 = 2;
const COMPACT: u8 = 4;
/// In a compact record: the header's length (0–7) in bits 3–5, the gap between header and
/// payload (0–1) in bit 6, a leaf's tail after its payload (0–1) in bit 7.
const GAP: u8 = 64;
const TAIL: u8 = 128;

/// Every node's bytes, packed. Record: a flags byte, the distance from the node before's start,
/// the header's and payload's distances when they are not compact, a leaf's length, and a
/// key's length and its distance before the value (one byte for most keys: [`key_code`]). A
/// container's length and tail are in the
/// side tables, set when it closes.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Offsets {
    bytes: Vec<u8>,
    marks: Vec<OffsetMark>,
    /// `end - start` of each container by ordinal.
    close_len: Narrow<u16>,
    /// `end - payload.end` of each container by ordinal.
    close_tail: Narrow<u8>,
    len: u32,
    last_start: usize,
}

impl Offsets {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Appends `node`'s bytes; an `opened` node's end and payload end are its closing numbers
    /// until [`Offsets::set_close`].
    #[inline(always)]
    pub fn push(&mut self, node: &Node, opened: bool) {
        if self.len as usize % BLOCK == 0 {
            self.marks.push(OffsetMark {
                pos: self.bytes.len(),
                prev_start: self.last_start,
                containers: self.close_len.len() as u32,
            });
        }
        let start = node.span.start;
        let header_len = node.header_end.wrapping_sub(start);
        let gap = node.payload.start.wrapping_sub(node.header_end);
        let tail = node.span.end.wrapping_sub(node.payload.end);
        let compact = header_len <= 7 && gap <= 1 && (opened || tail <= 1);
        let mut flags = if node.key.is_some() { HAS_KEY } else { 0 };
        if opened {
            flags |= OPENED;
        }
        if compact {
            flags |= COMPACT | (header_len as u8) << 3;
            if gap == 1 {
                flags |= GAP;
            }
            if !opened && tail == 1 {
                flags |= TAIL;
            }
        }
        let delta = start.wrapping_sub(self.last_start);
        if compact && delta < 0x80 && self.push_short(node, opened, flags, delta) {
            self.last_start = start;
            self.len += 1;
            return;
        }
        self.bytes.push(flags);
        put(&mut self.bytes, delta);
        if !compact {
            put(&mut self.bytes, header_len);
            put(&mut self.bytes, gap);
            if !opened {
                put(&mut self.bytes, tail);
            }
        }
        if !opened {
            put(&mut self.bytes, node.span.end.wrapping_sub(start));
        }
        if let Some(k) = node.key {
            put_key(
                &mut self.bytes,
                k.end.wrapping_sub(k.start),
                start.wrapping_sub(k.end),
            );
        }
        if opened {
            self.open_close(start, node);
        }
        self.last_start = start;
        self.len += 1;
    }

    /// The record of a compact node `delta` (below 0x80) after the one before, when each of its
    /// other distances also fits one byte: in one append of a fixed size, where byte by byte
    /// each took a capacity check. Returns whether it did.
    #[inline]
    fn push_short(&mut self, node: &Node, opened: bool, flags: u8, delta: usize) -> bool {
        let start = node.span.start;
        let len = node.span.end.wrapping_sub(start);
        // A key of up to 31 bytes and a gap under 3: its one-byte [`key_code`].
        let key = node.key.map(|k| {
            let (klen, gap) = (k.end.wrapping_sub(k.start), start.wrapping_sub(k.end));
            (klen < 32 && gap < 3).then_some((klen << 2 | gap) as u8)
        });
        let small = |v: usize| v < 0x80;
        match (opened, key) {
            (false, Some(Some(key))) if small(len) => {
                self.bytes
                    .extend_from_slice(&[flags, delta as u8, len as u8, key])
            }
            (false, None) if small(len) => {
                self.bytes
                    .extend_from_slice(&[flags, delta as u8, len as u8]);
            }
            (true, Some(Some(key))) => {
                self.bytes.extend_from_slice(&[flags, delta as u8, key]);
                self.open_close(start, node);
            }
            (true, None) => {
                self.bytes.extend_from_slice(&[flags, delta as u8]);
                self.open_close(start, node);
            }
            _ => return false,
        }
        true
    }

    /// A new container's closing numbers, as they stand until it closes.
    #[inline(always)]
    fn open_close(&mut self, start: usize, node: &Node) {
        self.close_len.push(node.span.end.wrapping_sub(start));
        self.close_tail
            .push(node.span.end.wrapping_sub(node.payload.end));
    }

    /// Sets the closing numbers of the container with ordinal `ordinal`, which starts at `start`.
    #[inline]
    pub fn set_close(&mut self, ordinal: u32, start: usize, payload_end: usize, end: usize) {
        self.close_len.set(ordinal, end.wrapping_sub(start));
        self.close_tail.set(ordinal, end.wrapping_sub(payload_end));
    }

    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.marks.shrink_to_fit();
        self.close_len.shrink_to_fit();
        self.close_tail.shrink_to_fit();
    }

    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
            + self.marks.capacity() * std::mem::size_of::<OffsetMark>()
            + self.close_len.heap_bytes()
            + self.close_tail.heap_bytes()
    }

    /// A cursor before node 0.
    pub fn cursor(&self) -> OffsetCursor<'_> {
        OffsetCursor {
            offsets: self,
            index: 0,
            pos: 0,
            prev_start: 0,
            containers: 0,
        }
    }

    /// Node `i`'s bytes.
    pub fn get(&self, i: usize) -> Bytes {
        let mut c = self.cursor();
        c.seek(i);
        c.next().unwrap_or(Bytes {
            key: None,
            span: Span::empty(0),
            header_end: 0,
            payload: Span::empty(0),
        })
    }

    /// Reserves room for about `bytes` more record bytes and `nodes` more nodes, of which
    /// `containers` containers.
    pub fn reserve(&mut self, bytes: usize, nodes: usize, containers: usize) {
        self.bytes.reserve(bytes);
        self.marks.reserve(nodes / BLOCK + 1);
        self.close_len.reserve(containers);
        self.close_tail.reserve(containers);
    }

    /// Bytes of records so far.
    pub fn record_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Containers so far.
    pub fn containers(&self) -> u32 {
        self.close_len.len() as u32
    }

    /// The number of blocks whose first node's extent starts at or before `offset` (extent
    /// starts never decrease in pre-order).
    pub fn blocks_from(&self, offset: usize) -> usize {
        self.marks.partition_point(|m| {
            let mut first = OffsetCursor {
                offsets: self,
                index: 0,
                pos: m.pos,
                prev_start: m.prev_start,
                containers: m.containers,
            };
            first.next().is_some_and(|b| b.extent_start() <= offset)
        })
    }
}

/// Reads [`Offsets`] forward from a node.
#[derive(Debug, Clone)]
pub(super) struct OffsetCursor<'a> {
    offsets: &'a Offsets,
    index: usize,
    pos: usize,
    prev_start: usize,
    containers: u32,
}

impl OffsetCursor<'_> {
    /// The node `next` reads.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Moves so that `next` reads node `i` (as [`LinkCursor::seek`]).
    pub fn seek(&mut self, i: usize) {
        if jumps(self.index, i) {
            let Some(mark) = self.offsets.marks.get(i / BLOCK) else {
                self.index = i;
                self.pos = usize::MAX;
                return;
            };
            self.index = i / BLOCK * BLOCK;
            self.pos = mark.pos;
            self.prev_start = mark.prev_start;
            self.containers = mark.containers;
        }
        while self.index < i {
            self.next();
        }
    }

    /// The bytes of the node at the cursor, moving past it.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Bytes> {
        if self.index >= self.offsets.len() {
            return None;
        }
        let o = self.offsets;
        let bytes = &o.bytes;
        let flags = byte(bytes, &mut self.pos);
        let start = self.prev_start.wrapping_add(get(bytes, &mut self.pos));
        let opened = flags & OPENED != 0;
        let (header_len, gap, tail) = if flags & COMPACT != 0 {
            (
                usize::from((flags >> 3) & 7),
                usize::from(flags & GAP != 0),
                usize::from(flags & TAIL != 0),
            )
        } else {
            let h = get(bytes, &mut self.pos);
            let g = get(bytes, &mut self.pos);
            let t = if opened { 0 } else { get(bytes, &mut self.pos) };
            (h, g, t)
        };
        let header_end = start.wrapping_add(header_len);
        let payload_start = header_end.wrapping_add(gap);
        let (payload_end, end) = if opened {
            let ordinal = self.containers;
            self.containers += 1;
            match (o.close_len.get(ordinal), o.close_tail.get(ordinal)) {
                (Some(len), Some(t)) => {
                    let end = start.wrapping_add(len);
                    (end.wrapping_sub(t), end)
                }
                _ => (header_end, header_end),
            }
        } else {
            let end = start.wrapping_add(get(bytes, &mut self.pos));
            (end.wrapping_sub(tail), end)
        };
        let key = (flags & HAS_KEY != 0).then(|| {
            let (len, back) = get_key(bytes, &mut self.pos);
            let key_end = start.wrapping_sub(back);
            Span {
                start: key_end.wrapping_sub(len),
                end: key_end,
            }
        });
        self.prev_start = start;
        self.index += 1;
        Some(Bytes {
            key,
            span: Span { start, end },
            header_end,
            payload: Span {
                start: payload_start,
                end: payload_end,
            },
        })
    }
}
