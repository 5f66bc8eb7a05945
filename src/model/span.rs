//! [`Span`] and [`SpanTree`]: which bytes of one buffer belong to which node.
//!
//! A span is a half-open byte range `start..end` into one buffer: the starting offset is
//! inclusive, the ending offset exclusive. Every decoded node has one, and so does every node of
//! every re-encoded buffer; that is what links a tree row to its bytes in all formats.
//!
//! Nodes are stored in pre-order (a parent before its children, children in byte order), which
//! keeps lookups simple: the descendants of node `n` are exactly the ids `n+1 .. n.subtree_end`,
//! and the node under a byte offset is found by binary search over node start offsets followed by
//! a walk up to the innermost node that holds the offset ([`SpanTree::node_at`]), in
//! O(log n + depth).
//!
//! Each node splits its bytes into parts that a hex view colours differently ([`ByteRole`]):
//! the key (a map key, or a protobuf tag) that names it, its header (type markers, lengths, tags,
//! an opening quote or bracket), its value bytes, and structure (separators, closing quotes and
//! brackets, whitespace, break codes).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::path::{Path, PathSegment};
use super::value::{Kind, Value};

/// Half-open byte range `start..end` into one buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    /// First byte (inclusive).
    pub start: usize,
    /// One past the last byte (exclusive).
    pub end: usize,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        debug_assert!(start <= end, "span {start}..{end} is reversed");
        Span { start, end }
    }

    /// An empty span at `at`.
    pub fn empty(at: usize) -> Span {
        Span { start: at, end: at }
    }

    /// Number of bytes.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the span holds no byte.
    pub fn is_empty(&self) -> bool {
        self.start >= self.end
    }

    /// Whether `offset` lies inside.
    pub fn contains(&self, offset: usize) -> bool {
        self.start <= offset && offset < self.end
    }

    /// Whether `other` lies entirely inside (an empty span inside or at the edges counts).
    pub fn encloses(&self, other: &Span) -> bool {
        self.start <= other.start && other.end <= self.end
    }

    /// As a `Range<usize>`, for slicing.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// Index of a node in a [`SpanTree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The root node of a non-empty tree.
    pub const ROOT: NodeId = NodeId(0);

    /// As an index into [`SpanTree::nodes`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How a node's parent addresses it (the last segment of its [`Path`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Segment {
    /// The document root.
    Root,
    /// Item of an array at this position.
    Index(u32),
    /// Value of a map entry whose key is text; the text is `SpanTree::key_text(id)`.
    Key(u32),
    /// Value of a map entry whose key is not text; the key's summary is `SpanTree::key_text(id)`.
    OtherKey(u32),
}

/// What a byte is within the node that owns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ByteRole {
    /// Names the node: a map key, a protobuf tag.
    Key,
    /// Says what follows: a type marker, a length, a CBOR tag, an opening quote or bracket.
    Header,
    /// The value itself: digits, text, bytes, float bits.
    Value,
    /// Holds things together: separators, closing brackets and quotes, whitespace, break codes.
    Structure,
}

impl ByteRole {
    /// A lower-case word for the role.
    pub fn name(self) -> &'static str {
        match self {
            ByteRole::Key => "key",
            ByteRole::Header => "header",
            ByteRole::Value => "value",
            ByteRole::Structure => "structure",
        }
    }
}

/// One node: a value, with the bytes that hold it. [`SpanTree`] stores nodes packed and hands
/// out copies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Node {
    /// What the node holds.
    pub kind: Kind,
    /// How the parent addresses it.
    pub segment: Segment,
    /// The parent, `None` for the root.
    pub parent: Option<NodeId>,
    /// The bytes of the map key (or protobuf tag) that names this node, if any. They come before
    /// `span`.
    pub key: Option<Span>,
    /// All bytes of the value: header, payload and anything that closes it.
    pub span: Span,
    /// End of the header, which starts at `span.start` (type markers, tags, lengths, opening
    /// quote or bracket).
    pub header_end: usize,
    /// The payload: for a scalar its value bytes, for a container the bytes holding its items.
    pub payload: Span,
    /// One past the id of the last descendant.
    pub subtree_end: u32,
}

impl Node {
    /// The header bytes.
    pub fn header(&self) -> Span {
        Span::new(self.span.start, self.header_end)
    }

    /// All bytes attributed to the node, key included.
    pub fn extent(&self) -> Span {
        Span::new(self.key.map_or(self.span.start, |k| k.start), self.span.end)
    }
}

/// A maximal run of bytes that belong to one node in one role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// The bytes.
    pub span: Span,
    /// The node they belong to; `None` for bytes outside the root (leading/trailing whitespace).
    pub node: Option<NodeId>,
    /// Their role in that node.
    pub role: ByteRole,
}

/// The spans of every node of one decoded or encoded buffer. See the module docs.
///
/// A tree is two tables, 16 bytes a node each. Its *shape* says what each node is and where it
/// sits (kind, parent, subtree end, segment, and the key texts); its *offsets* say which bytes
/// hold it, with `u32` offsets and the header, payload and key lengths in a byte or two relative
/// to the span. Encodings of one value have one shape, so the app's columns share it
/// ([`SpanTreeBuilder::like`], [`SpanTree::share_shape`]) and each pays only its offsets. A node
/// whose offsets do not fit (an offset past 4 GiB, a header longer than 255 bytes, a key longer
/// than 65,535 or further than that before its value) is stored whole in a side table, so every
/// input works and typical ones pay 32 bytes a node, 16 when the shape is shared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpanTree {
    shape: Arc<Shape>,
    offsets: Vec<Offsets>,
    wide: HashMap<u32, Node>,
}

/// What each node of a tree is and where it sits, without its bytes. See [`SpanTree`].
#[derive(Debug, Clone, Default, PartialEq)]
struct Shape {
    links: Vec<Link>,
    keys: Vec<String>,
}

/// A node's place in the tree, in 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Link {
    /// The parent's id, [`Link::NONE`] for the root.
    parent: u32,
    subtree_end: u32,
    /// The index or key id of the segment.
    segment: u32,
    kind: Kind,
    /// Segment tag: 0 root, 1 index, 2 key, 3 other key.
    tag: u8,
}

/// A node's bytes, in 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Offsets {
    /// `span.start`.
    start: u32,
    /// `span.end`.
    end: u32,
    /// `span.start - key.start`.
    key_back: u16,
    /// `key.end - key.start`.
    key_len: u16,
    /// `header_end - start`.
    header_len: u8,
    /// `payload.start - header_end`.
    payload_gap: u8,
    /// `end - payload.end`.
    payload_tail: u8,
    /// Has a key ([`Offsets::HAS_KEY`]), stored whole in `SpanTree::wide` ([`Offsets::WIDE`]).
    flags: u8,
}

const _: () = assert!(std::mem::size_of::<Link>() == 16);
const _: () = assert!(std::mem::size_of::<Offsets>() == 16);

impl Link {
    const NONE: u32 = u32::MAX;

    /// `node`'s place. Every node has one: ids and key ids are `u32` already.
    fn of(node: &Node) -> Link {
        let (tag, segment) = match node.segment {
            Segment::Root => (0, 0),
            Segment::Index(i) => (1, i),
            Segment::Key(k) => (2, k),
            Segment::OtherKey(k) => (3, k),
        };
        Link {
            parent: node.parent.map_or(Link::NONE, |p| p.0),
            subtree_end: node.subtree_end,
            segment,
            kind: node.kind,
            tag,
        }
    }

    fn parent(&self) -> Option<NodeId> {
        (self.parent != Link::NONE).then_some(NodeId(self.parent))
    }

    fn segment(&self) -> Segment {
        match self.tag {
            0 => Segment::Root,
            1 => Segment::Index(self.segment),
            2 => Segment::Key(self.segment),
            _ => Segment::OtherKey(self.segment),
        }
    }
}

impl Offsets {
    const HAS_KEY: u8 = 1;
    const WIDE: u8 = 2;
    /// The placeholder of a node kept in the side table.
    const WIDE_NODE: Offsets = Offsets {
        start: 0,
        end: 0,
        key_back: 0,
        key_len: 0,
        header_len: 0,
        payload_gap: 0,
        payload_tail: 0,
        flags: Offsets::WIDE,
    };

    /// `node`'s bytes packed, or `None` when one of its numbers does not fit.
    fn pack(node: &Node) -> Option<Offsets> {
        let small = |n: usize| u8::try_from(n).ok();
        let start = u32::try_from(node.span.start).ok()?;
        let (key_back, key_len, flags) = match node.key {
            Some(k) => (
                u16::try_from(node.span.start.checked_sub(k.start)?).ok()?,
                u16::try_from(k.len()).ok()?,
                Offsets::HAS_KEY,
            ),
            None => (0, 0, 0),
        };
        Some(Offsets {
            start,
            end: u32::try_from(node.span.end).ok()?,
            key_back,
            key_len,
            header_len: small(node.header_end.checked_sub(node.span.start)?)?,
            payload_gap: small(node.payload.start.checked_sub(node.header_end)?)?,
            payload_tail: small(node.span.end.checked_sub(node.payload.end)?)?,
            flags,
        })
    }

    fn is_wide(&self) -> bool {
        self.flags & Offsets::WIDE != 0
    }

    /// Where the node's extent starts (its key, else its value); not for a wide node.
    fn extent_start(&self) -> usize {
        self.start as usize - usize::from(self.key_back)
    }

    fn unpack(&self, link: &Link) -> Node {
        let start = self.start as usize;
        let end = self.end as usize;
        let header_end = start + usize::from(self.header_len);
        let key_start = self.extent_start();
        Node {
            kind: link.kind,
            segment: link.segment(),
            parent: link.parent(),
            key: (self.flags & Offsets::HAS_KEY != 0)
                .then(|| Span::new(key_start, key_start + usize::from(self.key_len))),
            span: Span::new(start, end),
            header_end,
            payload: Span::new(
                header_end + usize::from(self.payload_gap),
                end - usize::from(self.payload_tail),
            ),
            subtree_end: link.subtree_end,
        }
    }
}

impl SpanTree {
    /// This tree with `other`'s key texts, when the two have the same nodes apart from their
    /// keys' texts and kinds (the encoding of a copy of `other`'s value with renamed keys, such
    /// as protobuf fields under their JSON names, where bytes are written as text): paths then
    /// find the nodes by `other`'s keys. Gives the tree back unchanged when the nodes differ in
    /// any other way.
    pub fn with_keys_of(mut self, other: &SpanTree) -> Result<SpanTree, SpanTree> {
        let (mine, theirs) = (&self.shape.links, &other.shape.links);
        let same = mine.len() == theirs.len()
            && mine.iter().zip(theirs).all(|(a, b)| {
                a.parent == b.parent
                    && a.subtree_end == b.subtree_end
                    && a.tag == b.tag
                    && (a.tag != 1 || a.segment == b.segment)
            });
        if !same {
            return Err(self);
        }
        let links = mine
            .iter()
            .zip(theirs)
            .map(|(a, b)| Link {
                segment: b.segment,
                ..*a
            })
            .collect();
        for (i, node) in &mut self.wide {
            node.segment = theirs[*i as usize].segment();
        }
        self.shape = Arc::new(Shape {
            links,
            keys: other.shape.keys.clone(),
        });
        Ok(self)
    }

    /// All nodes in pre-order.
    pub fn nodes(&self) -> Nodes<'_> {
        Nodes {
            tree: self,
            next: 0,
            end: self.offsets.len() as u32,
        }
    }

    /// Memory the tree holds, in bytes (offsets, side table, and its shape with the key texts:
    /// a shape shared with other trees is counted by each of them), for measurements.
    pub fn heap_bytes(&self) -> usize {
        self.offsets.capacity() * std::mem::size_of::<Offsets>()
            + self.wide.capacity() * (std::mem::size_of::<(u32, Node)>() + 1)
            + self.shape.links.capacity() * std::mem::size_of::<Link>()
            + self.shape.keys.capacity() * std::mem::size_of::<String>()
            + self.shape.keys.iter().map(String::capacity).sum::<usize>()
    }

    /// Takes `other`'s shape when it is the same as this tree's (same nodes, kinds, segments and
    /// key texts: both hold the spans of one value), so the two keep one copy of it. Returns
    /// whether they share it.
    pub fn share_shape(&mut self, other: &SpanTree) -> bool {
        if Arc::ptr_eq(&self.shape, &other.shape) {
            return true;
        }
        if self.shape != other.shape {
            return false;
        }
        self.shape = Arc::clone(&other.shape);
        true
    }

    /// Whether this tree and `other` hold one shape ([`SpanTree::share_shape`]).
    pub fn shares_shape_with(&self, other: &SpanTree) -> bool {
        Arc::ptr_eq(&self.shape, &other.shape)
    }

    fn unpack(&self, index: usize) -> Node {
        unpack(&self.offsets, &self.wide, &self.shape.links, index)
    }

    /// Where node `index`'s extent starts (its key, else its value).
    fn extent_start(&self, index: usize) -> usize {
        let o = &self.offsets[index];
        if o.is_wide() {
            self.unpack(index).extent().start
        } else {
            o.extent_start()
        }
    }
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Whether the tree has no node (nothing was decoded).
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// One node.
    ///
    /// # Panics
    /// If `id` is not from this tree.
    pub fn node(&self, id: NodeId) -> Node {
        self.unpack(id.index())
    }

    /// The parent of `id` (`None` for the root), without unpacking the node.
    pub fn parent(&self, id: NodeId) -> Option<NodeId> {
        self.shape.links[id.index()].parent()
    }

    /// One past the id of `id`'s last descendant, without unpacking the node.
    pub fn subtree_end(&self, id: NodeId) -> u32 {
        self.shape.links[id.index()].subtree_end
    }

    /// What `id` holds, without unpacking the node.
    pub fn kind(&self, id: NodeId) -> Kind {
        self.shape.links[id.index()].kind
    }

    /// The root, if anything was decoded.
    pub fn root(&self) -> Option<NodeId> {
        (!self.offsets.is_empty()).then_some(NodeId::ROOT)
    }

    /// The key text (or non-text key summary) a [`Segment::Key`] or [`Segment::OtherKey`] refers to.
    pub fn key_text(&self, key: u32) -> &str {
        key_text(&self.shape.keys, key)
    }

    /// Direct children of `id`, in order.
    pub fn children(&self, id: NodeId) -> Children<'_> {
        Children {
            tree: self,
            next: id.0 + 1,
            end: self.subtree_end(id),
        }
    }

    /// The path segment by which `id`'s parent addresses it.
    pub fn path_segment(&self, id: NodeId) -> Option<PathSegment> {
        self.segment_path(self.shape.links[id.index()].segment())
    }

    /// The path segment `segment` stands for (`None` for [`Segment::Root`]).
    pub fn segment_path(&self, segment: Segment) -> Option<PathSegment> {
        segment_path(&self.shape.keys, segment)
    }

    /// The node `id` of `value`, the value this tree holds the spans of (`value.preorder()[id]`,
    /// found by walking down from the root instead of listing every node).
    pub fn value_of<'v>(&self, value: &'v Value, id: NodeId) -> Option<&'v Value> {
        let mut chain = Vec::new();
        let mut cur = id;
        while let Some(parent) = self.parent(cur) {
            chain.push((parent, cur));
            cur = parent;
        }
        let mut v = value;
        for &(parent, child) in chain.iter().rev() {
            v = match v.untagged() {
                Value::Array(items) => {
                    let i = match self.node(child).segment {
                        Segment::Index(i) => i as usize,
                        _ => self.children(parent).position(|c| c == child)?,
                    };
                    items.get(i)?
                }
                Value::Map(entries) => self.entry_value(entries, parent, child)?,
                _ => return None,
            };
        }
        Some(v)
    }

    /// The value of the map entry `child` of `parent` names, found by its key: the nth entry
    /// with that key when `child` is the nth sibling with it. By key rather than by position, so
    /// a tree that left entries out (a protobuf encoding does not write a null) still finds each
    /// node's value.
    fn entry_value<'v>(
        &self,
        entries: &'v [(Value, Value)],
        parent: NodeId,
        child: NodeId,
    ) -> Option<&'v Value> {
        let segment = self.node(child).segment;
        let names = |key: &Value| match (segment, key) {
            (Segment::Key(k), Value::Text(text)) => text == self.key_text(k),
            (Segment::OtherKey(k), key) if !matches!(key, Value::Text(_)) => {
                key.summary(48) == self.key_text(k)
            }
            _ => false,
        };
        match segment {
            Segment::Key(_) | Segment::OtherKey(_) => {
                let nth = self
                    .children(parent)
                    .take_while(|&c| c != child)
                    .filter(|&c| self.node(c).segment == segment)
                    .count();
                entries
                    .iter()
                    .filter(|(key, _)| names(key))
                    .nth(nth)
                    .map(|(_, v)| v)
            }
            _ => {
                let i = self.children(parent).position(|c| c == child)?;
                entries.get(i).map(|(_, v)| v)
            }
        }
    }

    /// The full path of `id`.
    pub fn path(&self, id: NodeId) -> Path {
        path(&self.shape, id)
    }

    /// Every node at `path` (several when a map repeats a key; `[*]` matches every index).
    pub fn find(&self, path: &Path) -> Vec<NodeId> {
        let Some(root) = self.root() else {
            return Vec::new();
        };
        let mut current = vec![root];
        for seg in path.segments() {
            let mut next = Vec::new();
            for &id in &current {
                for child in self.children(id) {
                    let matches = match (seg, self.node(child).segment) {
                        (PathSegment::Index(i), Segment::Index(j)) => *i == j as usize,
                        (PathSegment::AnyIndex, Segment::Index(_)) => true,
                        (PathSegment::Key(k), Segment::Key(j)) => self.key_text(j) == k,
                        (PathSegment::OtherKey(k), Segment::OtherKey(j)) => self.key_text(j) == k,
                        _ => false,
                    };
                    if matches {
                        next.push(child);
                    }
                }
            }
            current = next;
            if current.is_empty() {
                break;
            }
        }
        current
    }

    /// The innermost node holding byte `offset`, and the byte's role in it. `None` when no node
    /// holds it (whitespace around the root, or bytes past the end).
    pub fn node_at(&self, offset: usize) -> Option<(NodeId, ByteRole)> {
        let after = if self.wide.is_empty() {
            self.offsets.partition_point(|o| o.extent_start() <= offset)
        } else {
            let (mut lo, mut hi) = (0, self.offsets.len());
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if self.extent_start(mid) <= offset {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        let mut cur = after.checked_sub(1).map(|i| NodeId(i as u32));
        while let Some(id) = cur {
            let n = self.node(id);
            // The gap between a key and its value (a JSON colon) belongs to the map.
            if n.span.contains(offset) || n.key.is_some_and(|k| k.contains(offset)) {
                return Some((id, self.role_in(&n, offset)));
            }
            cur = n.parent;
        }
        None
    }

    fn role_in(&self, n: &Node, offset: usize) -> ByteRole {
        if n.key.is_some_and(|k| k.contains(offset)) {
            ByteRole::Key
        } else if n.header().contains(offset) {
            ByteRole::Header
        } else if !n.kind.is_container() && n.payload.contains(offset) {
            ByteRole::Value
        } else {
            ByteRole::Structure
        }
    }

    /// Splits `0..len` into maximal runs of one node and role, in order, covering every byte.
    /// Bytes past the root's end (trailing data) come out as structure owned by no node.
    pub fn runs(&self, len: usize) -> Vec<Run> {
        let mut out: Vec<Run> = Vec::new();
        let mut emit = |start: usize, end: usize, node: Option<NodeId>, role: ByteRole| {
            let end = end.min(len);
            if start >= end {
                return;
            }
            if let Some(last) = out.last_mut() {
                if last.node == node && last.role == role && last.span.end == start {
                    last.span.end = end;
                    return;
                }
            }
            out.push(Run {
                span: Span::new(start, end),
                node,
                role,
            });
        };
        let mut cursor = 0usize;
        // Containers whose payload we are inside, innermost last.
        let mut open: Vec<NodeId> = Vec::new();
        for (i, n) in self.nodes().enumerate() {
            let id = NodeId(i as u32);
            while let Some(&top) = open.last() {
                if Some(top) == n.parent {
                    break;
                }
                let t = self.node(top);
                emit(cursor, t.span.end, Some(top), ByteRole::Structure);
                cursor = cursor.max(t.span.end);
                open.pop();
            }
            let ext = n.extent();
            emit(cursor, ext.start, n.parent, ByteRole::Structure);
            cursor = cursor.max(ext.start);
            if let Some(k) = n.key {
                emit(k.start, k.end, Some(id), ByteRole::Key);
                // Between key and value (a JSON colon) belongs to the map.
                emit(k.end, n.span.start, n.parent, ByteRole::Structure);
            }
            emit(n.span.start, n.header_end, Some(id), ByteRole::Header);
            cursor = cursor.max(n.header_end);
            if n.kind.is_container() {
                open.push(id);
            } else {
                emit(cursor, n.payload.start, Some(id), ByteRole::Structure);
                emit(
                    n.payload.start.max(cursor),
                    n.payload.end,
                    Some(id),
                    ByteRole::Value,
                );
                emit(
                    n.payload.end.max(cursor),
                    n.span.end,
                    Some(id),
                    ByteRole::Structure,
                );
                cursor = cursor.max(n.span.end);
            }
        }
        while let Some(top) = open.pop() {
            let t = self.node(top);
            emit(cursor, t.span.end, Some(top), ByteRole::Structure);
            cursor = cursor.max(t.span.end);
        }
        emit(cursor, len, None, ByteRole::Structure);
        out
    }

    /// Checks the tree's invariants: spans inside `len`, header and payload inside the span,
    /// children inside their parent and in byte order, pre-order ids. Returns the first broken one.
    pub fn validate(&self, len: usize) -> Result<(), String> {
        for (i, n) in self.nodes().enumerate() {
            let here = || format!("node {i} ({})", self.path(NodeId(i as u32)));
            if n.span.start > n.span.end || n.span.end > len {
                return Err(format!("{}: span {} outside 0..{len}", here(), n.span));
            }
            if !(n.span.start <= n.header_end && n.header_end <= n.span.end) {
                return Err(format!(
                    "{}: header end {} outside span {}",
                    here(),
                    n.header_end,
                    n.span
                ));
            }
            if !n.span.encloses(&n.payload) || n.payload.start < n.header_end {
                return Err(format!(
                    "{}: payload {} outside span {}",
                    here(),
                    n.payload,
                    n.span
                ));
            }
            if let Some(k) = n.key {
                if k.end > n.span.start {
                    return Err(format!("{}: key {k} overlaps value {}", here(), n.span));
                }
            }
            if (n.subtree_end as usize) <= i || n.subtree_end as usize > self.offsets.len() {
                return Err(format!("{}: bad subtree end {}", here(), n.subtree_end));
            }
            match n.parent {
                None if i != 0 => return Err(format!("{}: no parent", here())),
                Some(p) => {
                    let pn = self.node(p);
                    if p.index() >= i || pn.subtree_end as usize <= i {
                        return Err(format!("{}: not in its parent's subtree", here()));
                    }
                    if !pn.payload.encloses(&n.extent()) {
                        return Err(format!(
                            "{}: extent {} outside parent payload {}",
                            here(),
                            n.extent(),
                            pn.payload
                        ));
                    }
                }
                None => {}
            }
            if i > 0 && self.extent_start(i - 1) > n.extent().start {
                return Err(format!("{}: starts before the node before it", here()));
            }
        }
        Ok(())
    }
}

/// Node `index` of the tables of a tree or of one being built.
fn unpack(offsets: &[Offsets], wide: &HashMap<u32, Node>, links: &[Link], index: usize) -> Node {
    let o = &offsets[index];
    if o.is_wide() {
        if let Some(n) = wide.get(&(index as u32)) {
            return *n;
        }
    }
    o.unpack(&links[index])
}

/// The text of key `key` of a shape's key table (`""` for an id it does not have).
fn key_text(keys: &[String], key: u32) -> &str {
    keys.get(key as usize).map_or("", String::as_str)
}

/// The path segment `segment` stands for, with the key texts of `keys`.
fn segment_path(keys: &[String], segment: Segment) -> Option<PathSegment> {
    match segment {
        Segment::Root => None,
        Segment::Index(i) => Some(PathSegment::Index(i as usize)),
        Segment::Key(k) => Some(PathSegment::Key(key_text(keys, k).to_string())),
        Segment::OtherKey(k) => Some(PathSegment::OtherKey(key_text(keys, k).to_string())),
    }
}

/// The full path of node `id` of `shape`.
fn path(shape: &Shape, id: NodeId) -> Path {
    let mut segments = Vec::new();
    let mut cur = Some(id);
    while let Some(c) = cur {
        let link = &shape.links[c.index()];
        segments.extend(segment_path(&shape.keys, link.segment()));
        cur = link.parent();
    }
    segments.reverse();
    Path::from_segments(segments)
}

/// Iterator over the children of a node.
#[derive(Debug, Clone)]
pub struct Children<'a> {
    tree: &'a SpanTree,
    next: u32,
    end: u32,
}

impl Iterator for Children<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.next >= self.end {
            return None;
        }
        let id = NodeId(self.next);
        self.next = self.tree.subtree_end(id);
        Some(id)
    }
}

/// Iterator over every node of a [`SpanTree`] in pre-order, unpacked.
#[derive(Debug, Clone)]
pub struct Nodes<'a> {
    tree: &'a SpanTree,
    next: u32,
    end: u32,
}

impl Nodes<'_> {
    /// Node `i` of the tree, if it has one (whatever has been iterated).
    pub fn get(&self, i: usize) -> Option<Node> {
        (i < self.tree.offsets.len()).then(|| self.tree.unpack(i))
    }
}

impl Iterator for Nodes<'_> {
    type Item = Node;

    fn next(&mut self) -> Option<Node> {
        if self.next >= self.end {
            return None;
        }
        let n = self.tree.unpack(self.next as usize);
        self.next += 1;
        Some(n)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.end - self.next) as usize;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for Nodes<'_> {
    fn next_back(&mut self) -> Option<Node> {
        if self.next >= self.end {
            return None;
        }
        self.end -= 1;
        Some(self.tree.unpack(self.end as usize))
    }
}

impl ExactSizeIterator for Nodes<'_> {}

/// Builds a [`SpanTree`] in pre-order as a decoder or encoder walks its bytes.
///
/// Containers are opened with [`SpanTreeBuilder::open`] and closed with
/// [`SpanTreeBuilder::close`]; scalars are added whole with [`SpanTreeBuilder::leaf`]. The parent
/// of each new node is the innermost open container. [`SpanTreeBuilder::finish_partial`] closes
/// whatever is still open at an error offset, so a failed decode still yields the tree so far.
///
/// A builder made with [`SpanTreeBuilder::like`] expects the shape of another tree (an encoding
/// of the same value): while every node matches it, only offsets are stored, and the finished
/// tree shares that shape. At the first node or key that differs it copies the shape so far and
/// goes on with its own.
#[derive(Debug, Default)]
pub struct SpanTreeBuilder {
    offsets: Vec<Offsets>,
    wide: HashMap<u32, Node>,
    /// The links and key texts stored so far; empty while `like` is followed.
    shape: Shape,
    /// The shape every node so far matches, while the builder follows one.
    like: Option<Arc<Shape>>,
    /// How many key texts were interned (`shape.keys.len()` unless `like` is followed).
    keys: u32,
    open: Vec<NodeId>,
    interned: KeyMap<String, u32>,
}

/// A fast hash for interning map keys (the FxHash mixing step, 8 bytes at a time). Keys come from
/// the input, but a skewed input only slows interning down (collisions), it cannot break it;
/// SipHash's flooding resistance costs more than the whole rest of a JSON decode spends per key.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

/// A hash map on [`KeyHasher`], for keys that are short text.
pub(crate) type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

impl KeyHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl SpanTreeBuilder {
    /// An empty builder.
    pub fn new() -> SpanTreeBuilder {
        SpanTreeBuilder::default()
    }

    /// An empty builder with room for `nodes` nodes.
    pub fn with_capacity(nodes: usize) -> SpanTreeBuilder {
        let mut b = SpanTreeBuilder::default();
        b.offsets.reserve(nodes);
        b.shape.links.reserve(nodes);
        b
    }

    /// An empty builder that expects `tree`'s shape: for the spans of another encoding of the
    /// value `tree` holds the spans of. See the type's docs.
    pub fn like(tree: &SpanTree) -> SpanTreeBuilder {
        let mut b = SpanTreeBuilder::default();
        b.offsets.reserve(tree.len());
        b.like = Some(Arc::clone(&tree.shape));
        b
    }

    /// The shape of the nodes so far: the one followed, or the builder's own.
    fn current_shape(&self) -> &Shape {
        self.like.as_deref().unwrap_or(&self.shape)
    }

    /// Stops following the expected shape: the builder's own shape becomes a copy of it as far
    /// as the nodes and keys so far go.
    fn diverge(&mut self) {
        let Some(like) = self.like.take() else {
            return;
        };
        let mut links = Vec::with_capacity(like.links.len());
        links.extend_from_slice(&like.links[..self.offsets.len()]);
        self.shape = Shape {
            links,
            keys: like.keys[..self.keys as usize].to_vec(),
        };
    }

    /// Stores `node` as node `index` (a new last node when `index` is the length). `settled`:
    /// its subtree end is final (not a container just opened).
    fn store(&mut self, index: usize, node: Node, settled: bool) {
        let link = Link::of(&node);
        if let Some(like) = &self.like {
            let fits = like.links.get(index).is_some_and(|l| {
                *l == link
                    || (!settled
                        && *l
                            == Link {
                                subtree_end: l.subtree_end,
                                ..link
                            })
            });
            if !fits {
                self.diverge();
            }
        }
        let offsets = match Offsets::pack(&node) {
            Some(o) => {
                if self.offsets.get(index).is_some_and(Offsets::is_wide) {
                    self.wide.remove(&(index as u32));
                }
                o
            }
            None => {
                self.wide.insert(index as u32, node);
                Offsets::WIDE_NODE
            }
        };
        let own = self.like.is_none();
        if index == self.offsets.len() {
            self.offsets.push(offsets);
            if own {
                self.shape.links.push(link);
            }
        } else {
            self.offsets[index] = offsets;
            if own {
                self.shape.links[index] = link;
            }
        }
    }

    fn unpack(&self, index: usize) -> Node {
        unpack(
            &self.offsets,
            &self.wide,
            &self.current_shape().links,
            index,
        )
    }

    /// The segment for a text map key.
    pub fn key(&mut self, text: &str) -> Segment {
        Segment::Key(self.intern(text))
    }

    /// The segment for a map key that is not text, by its one-line summary.
    pub fn other_key(&mut self, summary: &str) -> Segment {
        Segment::OtherKey(self.intern(summary))
    }

    /// The segment for a map entry with key `key`: [`Segment::Key`] for text, else
    /// [`Segment::OtherKey`] named by the key's summary. Decoders and encoders of every format use
    /// this, so one entry gets one path everywhere.
    pub fn segment_for_key(&mut self, key: &Value) -> Segment {
        match key {
            Value::Text(s) => self.key(s),
            other => {
                let summary = other.summary(48);
                self.other_key(&summary)
            }
        }
    }

    fn intern(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.interned.get(text) {
            return id;
        }
        let id = self.keys;
        if let Some(like) = &self.like {
            if like.keys.get(id as usize).is_none_or(|k| k != text) {
                self.diverge();
            }
        }
        if self.like.is_none() {
            self.shape.keys.push(text.to_string());
        }
        self.keys += 1;
        self.interned.insert(text.to_string(), id);
        id
    }

    /// Number of containers currently open.
    pub fn depth(&self) -> usize {
        self.open.len()
    }

    /// The innermost open container.
    pub fn current(&self) -> Option<NodeId> {
        self.open.last().copied()
    }

    /// Number of nodes so far.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Whether no node was added yet.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// Path of a node added so far.
    pub fn path(&self, id: NodeId) -> Path {
        path(self.current_shape(), id)
    }

    /// The path segment `segment` stands for, its key text as interned so far (`None` for
    /// [`Segment::Root`]).
    pub fn segment_path(&self, segment: Segment) -> Option<PathSegment> {
        segment_path(&self.current_shape().keys, segment)
    }

    /// Path of the place the next node would go (the innermost open container's path).
    pub fn current_path(&self) -> Path {
        self.current().map_or_else(Path::root, |id| self.path(id))
    }

    /// Adds a scalar: `span` is all its bytes, `header_end` where its header stops, `payload` its
    /// value bytes.
    pub fn leaf(
        &mut self,
        kind: Kind,
        segment: Segment,
        key: Option<Span>,
        span: Span,
        header_end: usize,
        payload: Span,
    ) -> NodeId {
        self.add(
            Node {
                kind,
                segment,
                parent: None,
                key,
                span,
                header_end,
                payload,
                subtree_end: 0,
            },
            true,
        )
    }

    /// Adds `node` as the next node, a child of the innermost open container; `settled` as for
    /// [`SpanTreeBuilder::store`].
    fn add(&mut self, mut node: Node, settled: bool) -> NodeId {
        let id = NodeId(self.offsets.len() as u32);
        node.parent = self.current();
        node.subtree_end = id.0 + 1;
        self.store(id.index(), node, settled);
        id
    }

    /// Opens a container whose header is `start..header_end`; its items follow.
    pub fn open(
        &mut self,
        kind: Kind,
        segment: Segment,
        key: Option<Span>,
        start: usize,
        header_end: usize,
    ) -> NodeId {
        let id = self.add(
            Node {
                kind,
                segment,
                parent: None,
                key,
                span: Span::new(start, header_end),
                header_end,
                payload: Span::empty(header_end),
                subtree_end: 0,
            },
            false,
        );
        self.open.push(id);
        id
    }

    /// Closes the innermost open container: its items end at `payload_end`, its bytes at `end`.
    pub fn close(&mut self, payload_end: usize, end: usize) -> Option<NodeId> {
        let id = self.open.pop()?;
        let subtree_end = self.offsets.len() as u32;
        let mut n = self.unpack(id.index());
        n.payload.end = payload_end.max(n.payload.start);
        n.span.end = end.max(n.payload.end);
        n.subtree_end = subtree_end;
        self.store(id.index(), n, true);
        Some(id)
    }

    /// Widens a node's header (a CBOR tag or similar seen late); used by encoders that learn the
    /// header length after writing it.
    pub fn set_header_end(&mut self, id: NodeId, header_end: usize) {
        let mut n = self.unpack(id.index());
        n.header_end = header_end;
        n.payload.start = n.payload.start.max(header_end);
        n.payload.end = n.payload.end.max(n.payload.start);
        n.span.end = n.span.end.max(n.payload.end);
        let settled = !self.open.contains(&id);
        self.store(id.index(), n, settled);
    }

    /// The finished tree. Every container must have been closed.
    pub fn finish(mut self) -> SpanTree {
        debug_assert!(self.open.is_empty(), "containers left open");
        while !self.open.is_empty() {
            let end = self
                .offsets
                .len()
                .checked_sub(1)
                .map_or(0, |last| self.unpack(last).span.end);
            self.close(end, end);
        }
        self.into_tree()
    }

    /// The tree so far, with every open container closed at `at` (where decoding stopped).
    pub fn finish_partial(mut self, at: usize) -> SpanTree {
        while !self.open.is_empty() {
            self.close(at, at);
        }
        self.into_tree()
    }

    /// The tree: with the followed shape when it has every node and key, else its own, without
    /// the room the builder's doubling left (a finished tree never grows).
    fn into_tree(mut self) -> SpanTree {
        let whole = self.like.as_ref().is_some_and(|like| {
            like.links.len() == self.offsets.len() && like.keys.len() == self.keys as usize
        });
        if !whole {
            self.diverge();
        }
        let shape = self.like.take().unwrap_or_else(|| {
            self.shape.links.shrink_to_fit();
            self.shape.keys.shrink_to_fit();
            Arc::new(std::mem::take(&mut self.shape))
        });
        self.offsets.shrink_to_fit();
        SpanTree {
            shape,
            offsets: self.offsets,
            wide: self.wide,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds item `index` of the open array: a one-byte integer at `at`.
    fn one_byte_int(b: &mut SpanTreeBuilder, index: u32, at: usize) {
        b.leaf(
            Kind::Int,
            Segment::Index(index),
            None,
            Span::new(at, at + 1),
            at,
            Span::new(at, at + 1),
        );
    }

    /// `{"a":[1,2]}` as JSON, built by hand.
    fn sample() -> SpanTree {
        let mut b = SpanTreeBuilder::new();
        b.open(Kind::Map, Segment::Root, None, 0, 1);
        let a = b.key("a");
        b.open(Kind::Array, a, Some(Span::new(1, 4)), 5, 6);
        one_byte_int(&mut b, 0, 6);
        one_byte_int(&mut b, 1, 8);
        b.close(9, 10);
        b.close(10, 11);
        b.finish()
    }

    /// `{KEY:[1,2,…]}` with `items` items as MessagePack (`81 a1 61 92 01 02` for `{"a":[1,2]}`),
    /// built by hand into `b`; with key `a` and two items it has `sample`'s shape.
    fn msgpack_into(b: &mut SpanTreeBuilder, key: &str, items: u32) {
        b.open(Kind::Map, Segment::Root, None, 0, 1);
        let k = b.key(key);
        b.open(Kind::Array, k, Some(Span::new(1, 3)), 3, 4);
        for i in 0..items {
            one_byte_int(b, i, 4 + i as usize);
        }
        let end = 4 + items as usize;
        b.close(end, end);
        b.close(end, end);
    }

    /// `{"a":[1,2]}` as MessagePack, built by hand: `sample`'s shape.
    fn sample_msgpack() -> SpanTree {
        let mut b = SpanTreeBuilder::new();
        msgpack_into(&mut b, "a", 2);
        b.finish()
    }

    #[test]
    fn a_builder_like_another_tree_shares_its_shape_until_a_node_differs() {
        let json = sample();
        let mut b = SpanTreeBuilder::like(&json);
        msgpack_into(&mut b, "a", 2);
        let shared = b.finish();
        assert!(shared.shares_shape_with(&json));
        assert_eq!(shared, sample_msgpack());

        // Another key, one item more or less, a tree cut short: each is the tree a builder of
        // its own makes, and none shares the expected shape.
        let cases: [(&str, u32, Option<usize>); 4] = [
            ("b", 2, None),
            ("a", 3, None),
            ("a", 1, None),
            ("a", 2, Some(5)),
        ];
        for (key, items, cut) in cases {
            let build = |mut b: SpanTreeBuilder| match cut {
                Some(at) => {
                    b.open(Kind::Map, Segment::Root, None, 0, 1);
                    let k = b.key(key);
                    b.open(Kind::Array, k, Some(Span::new(1, 3)), 3, 4);
                    one_byte_int(&mut b, 0, 4);
                    b.finish_partial(at)
                }
                None => {
                    msgpack_into(&mut b, key, items);
                    b.finish()
                }
            };
            let followed = build(SpanTreeBuilder::like(&json));
            let own = build(SpanTreeBuilder::new());
            assert_eq!(followed, own, "{key} with {items} items, cut at {cut:?}");
            assert!(!followed.shares_shape_with(&json));
            followed.validate(16).expect("valid");
            assert_eq!(followed.path(NodeId(2)).to_string(), format!("$.{key}[0]"));
        }
    }

    #[test]
    fn trees_of_one_value_share_their_shape_and_keep_their_own_bytes() {
        let json = sample();
        let mut packed = sample_msgpack();
        assert!(!packed.shares_shape_with(&json));
        assert!(packed.share_shape(&json));
        assert!(packed.shares_shape_with(&json));
        packed.validate(6).expect("valid");
        assert_eq!(packed.node(NodeId(1)).key, Some(Span::new(1, 3)));
        assert_eq!(packed.node(NodeId(3)).span, Span::new(5, 6));
        assert_eq!(json.node(NodeId(3)).span, Span::new(8, 9));
        assert_eq!(packed.path(NodeId(3)).to_string(), "$.a[1]");
        assert_eq!(packed.node_at(2), Some((NodeId(1), ByteRole::Key)));

        // Another shape (an array of one item) is not taken.
        let mut b = SpanTreeBuilder::new();
        b.open(Kind::Array, Segment::Root, None, 0, 1);
        one_byte_int(&mut b, 0, 1);
        b.close(2, 2);
        let mut other = b.finish();
        assert!(!other.share_shape(&json));
        assert_eq!(other.len(), 2);
        assert_eq!(other.kind(NodeId::ROOT), Kind::Array);
    }

    #[test]
    fn lookup_by_offset_finds_innermost_node_and_role() {
        let t = sample();
        t.validate(11).expect("valid tree");
        let role = |o| t.node_at(o).map(|(id, r)| (t.path(id).to_string(), r));
        assert_eq!(role(0), Some(("$".into(), ByteRole::Header)));
        assert_eq!(role(2), Some(("$.a".into(), ByteRole::Key)));
        assert_eq!(role(4), Some(("$".into(), ByteRole::Structure)));
        assert_eq!(role(5), Some(("$.a".into(), ByteRole::Header)));
        assert_eq!(role(6), Some(("$.a[0]".into(), ByteRole::Value)));
        assert_eq!(role(7), Some(("$.a".into(), ByteRole::Structure)));
        assert_eq!(role(8), Some(("$.a[1]".into(), ByteRole::Value)));
        assert_eq!(role(10), Some(("$".into(), ByteRole::Structure)));
        assert_eq!(role(11), None);
    }

    #[test]
    fn runs_cover_every_byte_in_order() {
        let t = sample();
        let runs = t.runs(12);
        let mut at = 0;
        for r in &runs {
            assert_eq!(r.span.start, at);
            at = r.span.end;
            for o in r.span.range() {
                assert_eq!(
                    t.node_at(o).map(|x| x.1).unwrap_or(ByteRole::Structure),
                    r.role,
                    "byte {o}"
                );
            }
        }
        assert_eq!(at, 12);
        assert_eq!(runs.last().map(|r| r.node), Some(None));
    }

    #[test]
    fn find_by_path() {
        let t = sample();
        let hits = t.find(&Path::parse("$.a[1]").expect("path"));
        assert_eq!(hits.len(), 1);
        assert_eq!(t.node(hits[0]).span, Span::new(8, 9));
        assert_eq!(t.find(&Path::parse("$.a[*]").expect("path")).len(), 2);
        assert!(t.find(&Path::parse("$.b").expect("path")).is_empty());
    }

    #[test]
    fn nodes_are_packed_in_32_bytes_and_wide_ones_kept_whole() {
        assert_eq!(
            std::mem::size_of::<Link>() + std::mem::size_of::<Offsets>(),
            32
        );
        // A node past 4 GiB, one with a 300-byte header and one with a 70,000-byte key: each is
        // kept exactly, beside packed ones.
        let far = 5usize << 30;
        let mut b = SpanTreeBuilder::new();
        b.open(Kind::Map, Segment::Root, None, 0, 300);
        let k = b.key("long");
        b.leaf(
            Kind::Text,
            k,
            Some(Span::new(300, 70_300)),
            Span::new(70_301, 70_305),
            70_302,
            Span::new(70_302, 70_304),
        );
        let k = b.key("far");
        b.leaf(
            Kind::Int,
            k,
            Some(Span::new(70_305, 70_310)),
            Span::new(far, far + 9),
            far + 1,
            Span::new(far + 1, far + 9),
        );
        b.close(far + 9, far + 10);
        let t = b.finish();
        t.validate(far + 10).expect("valid");
        assert_eq!(t.node(NodeId(0)).header_end, 300);
        assert_eq!(t.node(NodeId(0)).span, Span::new(0, far + 10));
        assert_eq!(t.node(NodeId(1)).key, Some(Span::new(300, 70_300)));
        assert_eq!(t.node(NodeId(1)).payload, Span::new(70_302, 70_304));
        assert_eq!(t.node(NodeId(2)).span, Span::new(far, far + 9));
        assert_eq!(t.node(NodeId(2)).parent, Some(NodeId::ROOT));
        assert_eq!(t.node_at(far + 3).map(|x| x.0), Some(NodeId(2)));
        assert_eq!(t.node_at(70_303), Some((NodeId(1), ByteRole::Value)));
        assert_eq!(t.node_at(500), Some((NodeId(1), ByteRole::Key)));
        assert_eq!(t.path(NodeId(2)).to_string(), "$.far");
    }

    #[test]
    fn partial_tree_closes_open_containers() {
        let mut b = SpanTreeBuilder::new();
        b.open(Kind::Array, Segment::Root, None, 0, 1);
        one_byte_int(&mut b, 0, 1);
        let t = b.finish_partial(3);
        t.validate(3).expect("valid");
        assert_eq!(t.node(NodeId::ROOT).span, Span::new(0, 3));
    }
}
