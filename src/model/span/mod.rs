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

mod packed;

use packed::{Link, LinkCursor, Links, Offsets};

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
/// A tree is two packed tables. Its *shape* says what each node is and where it
/// sits (kind, parent, subtree end, segment, and the key texts); its *offsets* say which bytes
/// hold it. Each is a stream of variable-length records of small distances (a node's start from
/// the node before, its header and key lengths, its parent a few ids back), a few bytes a node
/// where fixed-width fields took 16 each; containers' ends sit in side tables. Encodings of one
/// value have one shape, so the app's columns share it ([`SpanTreeBuilder::like`],
/// [`SpanTree::share_shape`]) and each pays only its offsets. Any numbers fit, so no input is
/// refused. [`SpanTree::node`] unpacks a copy of one node, reading at most a block of records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpanTree {
    shape: Arc<Shape>,
    offsets: Box<Offsets>,
}

/// What each node of a tree is and where it sits, without its bytes. See [`SpanTree`].
#[derive(Debug, Clone, Default, PartialEq)]
struct Shape {
    links: Links,
    keys: Vec<String>,
}

/// `node`'s place; `opened`: it was opened as a container.
fn link_of(node: &Node, opened: bool) -> Link {
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
        opened,
    }
}

/// The segment a link names its node by.
fn segment_of(link: &Link) -> Segment {
    match link.tag {
        0 => Segment::Root,
        1 => Segment::Index(link.segment),
        2 => Segment::Key(link.segment),
        _ => Segment::OtherKey(link.segment),
    }
}

impl SpanTree {
    /// This tree with `other`'s key texts, when the two have the same nodes apart from their
    /// keys' texts and kinds (the encoding of a copy of `other`'s value with renamed keys, such
    /// as protobuf fields under their JSON names, where bytes are written as text): paths then
    /// find the nodes by `other`'s keys. Gives the tree back unchanged when the nodes differ in
    /// any other way.
    pub fn with_keys_of(mut self, other: &SpanTree) -> Result<SpanTree, SpanTree> {
        let renamed = {
            let (mine, theirs) = (&self.shape.links, &other.shape.links);
            let (mut a, mut b) = (mine.cursor(), theirs.cursor());
            let mut links = Links::default();
            let mut same = mine.len() == theirs.len();
            while same {
                let (Some(x), Some(y)) = (a.next(), b.next()) else {
                    break;
                };
                same = x.parent == y.parent
                    && x.subtree_end == y.subtree_end
                    && x.tag == y.tag
                    && (x.tag != 1 || x.segment == y.segment);
                links.push(&Link {
                    segment: y.segment,
                    ..x
                });
            }
            same.then_some(links)
        };
        let Some(links) = renamed else {
            return Err(self);
        };
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
            cursor: NodeCursor::new(self),
            next: 0,
            end: self.offsets.len() as u32,
        }
    }

    /// Memory the tree holds, in bytes (offsets, and its shape with the key texts: a shape
    /// shared with other trees is counted by each of them), for measurements.
    pub fn heap_bytes(&self) -> usize {
        self.offsets.heap_bytes()
            + self.shape.links.heap_bytes()
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
        self.offsets.get(index).with(&self.shape.links.get(index))
    }

    fn link(&self, id: NodeId) -> Link {
        self.shape.links.get(id.index())
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Whether the tree has no node (nothing was decoded).
    pub fn is_empty(&self) -> bool {
        self.offsets.len() == 0
    }

    /// One node.
    ///
    /// # Panics
    /// If `id` is not from this tree.
    pub fn node(&self, id: NodeId) -> Node {
        assert!(id.index() < self.len(), "node {} of {}", id.0, self.len());
        self.unpack(id.index())
    }

    /// The parent of `id` (`None` for the root), without unpacking the node.
    pub fn parent(&self, id: NodeId) -> Option<NodeId> {
        let parent = self.link(id).parent;
        (parent != Link::NONE).then_some(NodeId(parent))
    }

    /// One past the id of `id`'s last descendant, without unpacking the node.
    pub fn subtree_end(&self, id: NodeId) -> u32 {
        self.link(id).subtree_end
    }

    /// What `id` holds, without unpacking the node.
    pub fn kind(&self, id: NodeId) -> Kind {
        self.link(id).kind
    }

    /// How `id`'s parent addresses it, without unpacking the node.
    pub fn segment(&self, id: NodeId) -> Segment {
        segment_of(&self.link(id))
    }

    /// The root, if anything was decoded.
    pub fn root(&self) -> Option<NodeId> {
        (!self.is_empty()).then_some(NodeId::ROOT)
    }

    /// The key text (or non-text key summary) a [`Segment::Key`] or [`Segment::OtherKey`] refers to.
    pub fn key_text(&self, key: u32) -> &str {
        key_text(&self.shape.keys, key)
    }

    /// Direct children of `id`, in order.
    pub fn children(&self, id: NodeId) -> Children<'_> {
        Children {
            links: self.shape.links.cursor(),
            next: id.0 + 1,
            end: self.subtree_end(id),
        }
    }

    /// For every node of this tree, the node of `other` at the same path (a tree of the same
    /// value in another encoding, which may leave nodes out): `None` when a node has no such
    /// node in `other`, or a container's counterpart is no container. One pass over both trees,
    /// so a tree of millions of nodes is matched in well under a second, unlike a [`SpanTree::find`]
    /// per node.
    pub fn nodes_in(&self, other: &SpanTree) -> Option<NodeMap> {
        self.nodes_in_order(other).or_else(|| {
            let ids = self.nodes_in_any_order(other)?;
            let mut map = NodeMap::default();
            for (i, &id) in ids.iter().enumerate() {
                map.push(i as u32, id);
            }
            Some(map)
        })
    }

    /// [`SpanTree::nodes_in`] when this tree's nodes come in `other`'s order (a subsequence of
    /// its pre-order, as an encoding that leaves nulls out but keeps the order writes them):
    /// both trees read once, forward. `None` at the first node out of order.
    fn nodes_in_order(&self, other: &SpanTree) -> Option<NodeMap> {
        self.nodes_in_order_from(other, 0)
    }

    /// [`SpanTree::nodes_in`] for a tree that wraps the other's value in one entry of its root
    /// (an inferred protobuf schema puts a top-level array in `items`): the root maps to the
    /// other's root, and so does that entry, whose subtree is matched to the other tree by
    /// path. `None` when the root has any other child.
    pub fn nodes_in_wrapped(&self, other: &SpanTree) -> Option<NodeMap> {
        let root = self.root()?;
        let mut children = self.children(root);
        let (_only, None) = (children.next()?, children.next()) else {
            return None;
        };
        self.nodes_in_order_from(other, 1)
    }

    /// [`SpanTree::nodes_in_order`] with this tree's node `top` standing for the other's root
    /// (the nodes before it, its ancestors, map to that root too).
    fn nodes_in_order_from(&self, other: &SpanTree, top: u32) -> Option<NodeMap> {
        let mut ids = NodeMap::default();
        // Both trees' links only (parents, segments, kinds): their offsets are not needed.
        let mut theirs = other.shape.links.cursor();
        let mut j = 0u32;
        let mut mine = self.shape.links.cursor();
        // This tree's open containers: their ids and where their counterparts' subtrees end.
        let mut open: Vec<(u32, u32)> = Vec::new();
        let mut i = 0u32;
        while let Some(link) = mine.next() {
            let at = i;
            i += 1;
            if at < top {
                ids.push(at, 0);
                continue;
            }
            while open.last().is_some_and(|&(id, _)| id != link.parent) {
                open.pop();
            }
            let is_top = at == top;
            let (parent, end) = match open.last() {
                Some(&(id, end)) => (ids.get(NodeId(id))?.0, end),
                None if is_top => (Link::NONE, other.len() as u32),
                None => return None,
            };
            let segment = segment_of(&link);
            let (found, t) = loop {
                let t = theirs.next()?;
                let k = j;
                j += 1;
                if k >= end {
                    return None;
                }
                let named = if is_top {
                    t.tag == 0
                } else {
                    self.same_segment(segment, other, segment_of(&t))
                };
                if t.parent == parent && named {
                    break (k, t);
                }
            };
            if link.kind.is_container() != t.kind.is_container() {
                return None;
            }
            ids.push(at, found);
            if link.subtree_end > at + 1 || link.kind.is_container() {
                open.push((at, t.subtree_end));
            }
        }
        ids.runs.shrink_to_fit();
        Some(ids)
    }

    /// Whether `mine` (a segment of this tree) and `theirs` (of `other`) name the same child.
    fn same_segment(&self, mine: Segment, other: &SpanTree, theirs: Segment) -> bool {
        match (mine, theirs) {
            (Segment::Root, Segment::Root) => true,
            (Segment::Index(a), Segment::Index(b)) => a == b,
            (Segment::Key(a), Segment::Key(b)) | (Segment::OtherKey(a), Segment::OtherKey(b)) => {
                self.key_text(a) == other.key_text(b)
            }
            _ => false,
        }
    }

    /// [`SpanTree::nodes_in`] by looking up each child among its counterpart's children.
    fn nodes_in_any_order(&self, other: &SpanTree) -> Option<Vec<u32>> {
        let mut ids = vec![u32::MAX; self.len()];
        let (Some(mine), Some(theirs)) = (self.root(), other.root()) else {
            return self.is_empty().then_some(ids);
        };
        ids[mine.index()] = theirs.0;
        let mut pending = vec![(mine, theirs)];
        let mut their_children: Vec<(NodeId, Segment)> = Vec::new();
        let mut by_key: HashMap<(bool, &str), NodeId> = HashMap::new();
        while let Some((mine, theirs)) = pending.pop() {
            if self.kind(mine).is_container() != other.kind(theirs).is_container() {
                return None;
            }
            if self.subtree_end(mine) == mine.0 + 1 {
                continue;
            }
            their_children.clear();
            their_children.extend(other.child_segments(theirs));
            // Keys are looked up in a table when there are many.
            let keyed = their_children.len() > 16;
            by_key.clear();
            if keyed {
                for &(id, segment) in &their_children {
                    match segment {
                        Segment::Key(k) => by_key.insert((false, other.key_text(k)), id),
                        Segment::OtherKey(k) => by_key.insert((true, other.key_text(k)), id),
                        _ => None,
                    };
                }
            }
            for (child, segment) in self.child_segments(mine) {
                let key = match segment {
                    Segment::Key(k) => Some((false, self.key_text(k))),
                    Segment::OtherKey(k) => Some((true, self.key_text(k))),
                    _ => None,
                };
                let found = match (segment, key) {
                    (Segment::Index(i), _) => their_children
                        .get(i as usize)
                        .filter(|(_, s)| *s == Segment::Index(i))
                        .map(|&(id, _)| id),
                    (_, Some(key)) if keyed => by_key.get(&key).copied(),
                    (_, Some((other_key, text))) => their_children
                        .iter()
                        .find(|(_, s)| match s {
                            Segment::Key(k) => !other_key && other.key_text(*k) == text,
                            Segment::OtherKey(k) => other_key && other.key_text(*k) == text,
                            _ => false,
                        })
                        .map(|&(id, _)| id),
                    _ => None,
                };
                let found = found?;
                ids[child.index()] = found.0;
                pending.push((child, found));
            }
        }
        Some(ids)
    }

    /// Direct children of `id` with the segments that name them, in order.
    fn child_segments(&self, id: NodeId) -> impl Iterator<Item = (NodeId, Segment)> + '_ {
        let mut children = self.children(id);
        std::iter::from_fn(move || {
            children
                .next_link()
                .map(|(child, link)| (child, segment_of(&link)))
        })
    }

    /// The nodes a tree view lists when `expanded(id, depth)` says which containers are open:
    /// the root, and the children of every listed container it opens, in pre-order, each with
    /// its depth. One forward walk over the shape that skips closed subtrees whole.
    pub fn listed(&self, mut expanded: impl FnMut(NodeId, u32) -> bool) -> Vec<(NodeId, u32)> {
        let mut rows = Vec::new();
        let mut links = self.shape.links.cursor();
        // Subtree ends of the open containers around the next node.
        let mut open: Vec<u32> = Vec::new();
        let mut i = 0u32;
        while (i as usize) < self.len() {
            while open.last().is_some_and(|&end| end <= i) {
                open.pop();
            }
            links.seek(i as usize);
            let Some(link) = links.next() else { break };
            let id = NodeId(i);
            let depth = open.len() as u32;
            rows.push((id, depth));
            let end = link.subtree_end.max(i + 1);
            if link.kind.is_container() && expanded(id, depth) {
                open.push(end);
                i += 1;
            } else {
                i = end;
            }
        }
        rows
    }

    /// The path segment by which `id`'s parent addresses it.
    pub fn path_segment(&self, id: NodeId) -> Option<PathSegment> {
        self.segment_path(self.segment(id))
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
                    let i = match self.segment(child) {
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
        let segment = self.segment(child);
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
                    .child_segments(parent)
                    .take_while(|&(c, _)| c != child)
                    .filter(|&(_, s)| s == segment)
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
        path_within(&self.shape, id, None)
    }

    /// Every node at `path` (several when a map repeats a key; `[*]` matches every index).
    pub fn find(&self, path: &Path) -> Vec<NodeId> {
        let Some(root) = self.root() else {
            return Vec::new();
        };
        let mut current = vec![root];
        // One cursor reads forward through the whole search: the nodes of each step come in
        // pre-order, and so do their children.
        let mut links = self.shape.links.cursor();
        for seg in path.segments() {
            let mut next = Vec::new();
            for &id in &current {
                links.seek(id.index());
                let Some(parent) = links.next() else {
                    continue;
                };
                let mut child = id.0 + 1;
                while child < parent.subtree_end {
                    links.seek(child as usize);
                    let Some(link) = links.next() else {
                        break;
                    };
                    let matches = match (seg, segment_of(&link)) {
                        (PathSegment::Index(i), Segment::Index(j)) => *i == j as usize,
                        (PathSegment::AnyIndex, Segment::Index(_)) => true,
                        (PathSegment::Key(k), Segment::Key(j)) => self.key_text(j) == k,
                        (PathSegment::OtherKey(k), Segment::OtherKey(j)) => self.key_text(j) == k,
                        _ => false,
                    };
                    if matches {
                        next.push(NodeId(child));
                    }
                    child = link.subtree_end.max(child + 1);
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
        self.holder(offset)
            .map(|(id, n)| (id, self.role_of(&n, offset)))
    }

    /// [`SpanTree::node_at`] for every byte of `start..start + out.len()`, into `out`, with one
    /// [`Finder`] walking forward: a row of a hex view costs a search and a few records, not a
    /// search per byte.
    pub fn nodes_at(&self, start: usize, out: &mut [Option<(NodeId, ByteRole)>]) {
        let mut finder = self.finder();
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = finder
                .at(start + i)
                .map(|(id, n)| (id, self.role_of(n, start + i)));
        }
    }

    /// A [`Finder`]: [`SpanTree::node_at`] for offsets asked in increasing order, walking the
    /// tree forward once instead of searching it for each.
    pub fn finder(&self) -> Finder<'_> {
        Finder {
            tree: self,
            cursor: NodeCursor::new(self),
            next: 0,
            ahead: None,
            stack: Vec::new(),
            last: None,
        }
    }

    /// The innermost node holding byte `offset`, unpacked.
    fn holder(&self, offset: usize) -> Option<(NodeId, Node)> {
        // Extent starts never decrease in pre-order: find the block holding the last node that
        // starts at or before `offset` by the blocks' first nodes, then walk that block.
        let block = self.offsets.blocks_from(offset).checked_sub(1)?;
        let mut cursor = self.offsets.cursor();
        cursor.seek(block * packed::BLOCK);
        let mut last = None;
        while let Some(b) = cursor.next() {
            if b.extent_start() > offset {
                break;
            }
            last = Some((cursor.index() - 1, b));
        }
        // The last node starting at or before `offset`, then its ancestors.
        let (index, bytes) = last?;
        let mut n = bytes.with(&self.shape.links.get(index));
        let mut id = NodeId(index as u32);
        loop {
            // The gap between a key and its value (a JSON colon) belongs to the map.
            if n.span.contains(offset) || n.key.is_some_and(|k| k.contains(offset)) {
                return Some((id, n));
            }
            let parent = n.parent.filter(|p| p.0 < id.0)?;
            id = parent;
            n = self.node(id);
        }
    }

    /// What byte `offset` is within `n`, the node that holds it (see [`SpanTree::node_at`]).
    pub fn role_of(&self, n: &Node, offset: usize) -> ByteRole {
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
    pub fn validate(&self, len: usize) -> Result<(), TreeError> {
        let mut previous_start = 0;
        for (i, n) in self.nodes().enumerate() {
            let at = || NodeAt {
                index: i,
                path: self.path(NodeId(i as u32)).to_string(),
            };
            let span = n.span;
            if span.start > span.end || span.end > len {
                return Err(TreeError::SpanOutside {
                    at: at(),
                    span,
                    len,
                });
            }
            if !(span.start <= n.header_end && n.header_end <= span.end) {
                let header_end = n.header_end;
                return Err(TreeError::HeaderOutside {
                    at: at(),
                    header_end,
                    span,
                });
            }
            if !span.encloses(&n.payload) || n.payload.start < n.header_end {
                let payload = n.payload;
                return Err(TreeError::PayloadOutside {
                    at: at(),
                    payload,
                    span,
                });
            }
            if let Some(key) = n.key {
                if key.end > span.start {
                    return Err(TreeError::KeyOverlaps {
                        at: at(),
                        key,
                        span,
                    });
                }
            }
            if (n.subtree_end as usize) <= i || n.subtree_end as usize > self.len() {
                let subtree_end = n.subtree_end;
                return Err(TreeError::BadSubtreeEnd {
                    at: at(),
                    subtree_end,
                });
            }
            match n.parent {
                None if i != 0 => return Err(TreeError::NoParent { at: at() }),
                Some(p) => {
                    let pn = self.node(p);
                    if p.index() >= i || pn.subtree_end as usize <= i {
                        return Err(TreeError::OutsideParentSubtree { at: at() });
                    }
                    if !pn.payload.encloses(&n.extent()) {
                        let (extent, payload) = (n.extent(), pn.payload);
                        return Err(TreeError::OutsideParent {
                            at: at(),
                            extent,
                            payload,
                        });
                    }
                }
                None => {}
            }
            if previous_start > n.extent().start {
                return Err(TreeError::OutOfOrder { at: at() });
            }
            previous_start = n.extent().start;
        }
        Ok(())
    }
}

/// The node [`SpanTree::validate`] found at fault: its id and its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAt {
    /// The node's id (its pre-order index).
    pub index: usize,
    /// The node's path from the root.
    pub path: String,
}

impl std::fmt::Display for NodeAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "node {} ({})", self.index, self.path)
    }
}

/// The first invariant [`SpanTree::validate`] found broken, and at which node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TreeError {
    /// The node's span is backwards or reaches past the buffer.
    #[error("{at}: span {span} outside 0..{len}")]
    SpanOutside {
        /// The node.
        at: NodeAt,
        /// Its span.
        span: Span,
        /// The buffer's length.
        len: usize,
    },
    /// The node's header ends outside its span.
    #[error("{at}: header end {header_end} outside span {span}")]
    HeaderOutside {
        /// The node.
        at: NodeAt,
        /// Where its header ends.
        header_end: usize,
        /// Its span.
        span: Span,
    },
    /// The node's payload is not inside its span after the header.
    #[error("{at}: payload {payload} outside span {span}")]
    PayloadOutside {
        /// The node.
        at: NodeAt,
        /// Its payload.
        payload: Span,
        /// Its span.
        span: Span,
    },
    /// The node's key does not end before its value starts.
    #[error("{at}: key {key} overlaps value {span}")]
    KeyOverlaps {
        /// The node.
        at: NodeAt,
        /// Its key's span.
        key: Span,
        /// Its value's span.
        span: Span,
    },
    /// The node's subtree ends at or before it, or after the tree.
    #[error("{at}: bad subtree end {subtree_end}")]
    BadSubtreeEnd {
        /// The node.
        at: NodeAt,
        /// The id its subtree ends before.
        subtree_end: u32,
    },
    /// A node other than the root has no parent.
    #[error("{at}: no parent")]
    NoParent {
        /// The node.
        at: NodeAt,
    },
    /// The node's id is not inside its parent's subtree.
    #[error("{at}: not in its parent's subtree")]
    OutsideParentSubtree {
        /// The node.
        at: NodeAt,
    },
    /// The node's bytes (key and value) are not inside its parent's payload.
    #[error("{at}: extent {extent} outside parent payload {payload}")]
    OutsideParent {
        /// The node.
        at: NodeAt,
        /// Its key and value together.
        extent: Span,
        /// Its parent's payload.
        payload: Span,
    },
    /// The node starts before the node before it in pre-order.
    #[error("{at}: starts before the node before it")]
    OutOfOrder {
        /// The node.
        at: NodeAt,
    },
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

/// The path of node `id` of `shape`; with a `graft`, its path within the part the graft adds:
/// up to the part's root (whose segment is the whole document's), or with the root left out, up
/// to its items (whose indexes it shifted).
fn path_within(shape: &Shape, id: NodeId, graft: Option<&Graft>) -> Path {
    let base = graft.map_or(0, |g| g.base);
    let mut segments = Vec::new();
    let mut cur = (id.0 >= base).then_some(id);
    while let Some(c) = cur {
        let link = shape.links.get(c.index());
        let up = (link.parent != Link::NONE && link.parent < c.0 && link.parent >= base)
            .then_some(NodeId(link.parent));
        let segment = match (up, graft.map(|g| g.root)) {
            (Some(_), _) | (None, None) => segment_of(&link),
            // The part's root: the part's own tree calls it the root.
            (None, Some(GraftRoot::Slot(..))) => Segment::Root,
            (None, Some(GraftRoot::Dropped(first))) => match segment_of(&link) {
                Segment::Index(n) => Segment::Index(n.wrapping_sub(first)),
                other => other,
            },
        };
        segments.extend(segment_path(&shape.keys, segment));
        cur = up;
    }
    segments.reverse();
    Path::from_segments(segments)
}

/// [`SpanTree::node_at`] for a run of offsets in increasing order ([`SpanTree::finder`]): it
/// reads the nodes in pre-order as far as the offset asked, keeping the last one read and its
/// open ancestors, so a walk over a buffer reads each node once. An offset before the last one
/// asked starts it again from the nearest mark.
#[derive(Debug, Clone)]
pub struct Finder<'a> {
    tree: &'a SpanTree,
    cursor: NodeCursor<'a>,
    /// The node `ahead` is, or the next to read.
    next: usize,
    /// The next node, read to see where it starts but not yet passed.
    ahead: Option<Node>,
    /// The last node passed and its ancestors, outermost first.
    stack: Vec<(NodeId, Node)>,
    last: Option<usize>,
}

impl Finder<'_> {
    /// The innermost node holding byte `offset`, unpacked (as [`SpanTree::node_at`]).
    pub fn at(&mut self, offset: usize) -> Option<(NodeId, &Node)> {
        // The block holding the last node that starts at or before `offset`: read from its
        // first node when that is ahead of the walk (or the walk would have to go back).
        let block = self.tree.offsets.blocks_from(offset).saturating_sub(1);
        if self.last.is_none_or(|last| offset < last) || block * packed::BLOCK > self.next {
            self.restart(block);
        }
        self.last = Some(offset);
        loop {
            if self.ahead.is_none() {
                if self.next >= self.tree.len() {
                    break;
                }
                let Some(n) = self.cursor.read(self.next) else {
                    break;
                };
                self.ahead = Some(n);
            }
            let Some(n) = self.ahead.filter(|n| n.extent().start <= offset) else {
                break;
            };
            let id = NodeId(self.next as u32);
            while self
                .stack
                .last()
                .is_some_and(|(_, top)| top.subtree_end <= id.0)
            {
                self.stack.pop();
            }
            self.stack.push((id, n));
            self.ahead = None;
            self.next += 1;
        }
        self.stack
            .iter()
            .rev()
            .find(|(_, n)| n.span.contains(offset) || n.key.is_some_and(|k| k.contains(offset)))
            .map(|(id, n)| (*id, n))
    }

    /// The path of `id`, a node [`Finder::at`] just gave, from the ancestors it keeps.
    pub fn path(&self, id: NodeId) -> Path {
        let Some(upto) = self.stack.iter().position(|(i, _)| *i == id) else {
            return self.tree.path(id);
        };
        let whole = self.stack[..=upto]
            .first()
            .is_some_and(|(_, n)| n.parent.is_none());
        if !whole {
            return self.tree.path(id);
        }
        Path::from_segments(
            self.stack[..=upto]
                .iter()
                .filter_map(|(_, n)| self.tree.segment_path(n.segment))
                .collect(),
        )
    }

    /// Starts again so that the next node read is the first of block `block`, with its
    /// ancestors on the stack.
    fn restart(&mut self, block: usize) {
        self.stack.clear();
        self.ahead = None;
        let first = block * packed::BLOCK;
        // The ancestors of the block's first node, outermost first.
        let mut chain = Vec::new();
        let mut up = (first < self.tree.len())
            .then(|| self.tree.parent(NodeId(first as u32)))
            .flatten();
        while let Some(p) = up {
            chain.push((p, self.tree.node(p)));
            up = self.tree.parent(p).filter(|q| q.0 < p.0);
        }
        chain.reverse();
        self.stack = chain;
        self.next = first;
    }
}

/// Iterator over the children of a node.
#[derive(Debug, Clone)]
pub struct Children<'a> {
    links: LinkCursor<'a>,
    next: u32,
    end: u32,
}

impl Children<'_> {
    /// The next child and its link, moving past its subtree.
    fn next_link(&mut self) -> Option<(NodeId, Link)> {
        if self.next >= self.end {
            return None;
        }
        let id = NodeId(self.next);
        self.links.seek(self.next as usize);
        let Some(link) = self.links.next() else {
            self.next = self.end;
            return None;
        };
        self.next = link.subtree_end.max(self.next + 1);
        Some((id, link))
    }
}

impl Iterator for Children<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        self.next_link().map(|(id, _)| id)
    }
}

/// For each node of one tree, a node of another ([`SpanTree::nodes_in`]), kept as runs of
/// consecutive ids that map to consecutive ids: a tree that leaves a few nodes out of the
/// other's order costs a run per gap, not four bytes a node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeMap {
    /// The first id of each run and the id it maps to, by first id.
    runs: Vec<(u32, u32)>,
    /// One past the last id mapped.
    len: u32,
}

impl NodeMap {
    /// Maps `id` (the next id: ids are pushed in order from 0) to `to`.
    fn push(&mut self, id: u32, to: u32) {
        debug_assert_eq!(id, self.len, "ids pushed in order");
        let continues = self
            .runs
            .last()
            .is_some_and(|&(first, start)| start.wrapping_add(id - first) == to);
        if !continues {
            self.runs.push((id, to));
        }
        self.len = id + 1;
    }

    /// The node `id` maps to.
    pub fn get(&self, id: NodeId) -> Option<NodeId> {
        if id.0 >= self.len {
            return None;
        }
        let run = self.runs.partition_point(|&(first, _)| first <= id.0);
        let (first, start) = *self.runs.get(run.checked_sub(1)?)?;
        Some(NodeId(start.wrapping_add(id.0 - first)))
    }

    /// How many ids are mapped.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no id is mapped.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of heap held.
    pub fn heap_bytes(&self) -> usize {
        self.runs.capacity() * std::mem::size_of::<(u32, u32)>()
    }
}

/// Reads whole nodes of a tree, its two streams side by side, forward from where it is.
#[derive(Debug, Clone)]
struct NodeCursor<'a> {
    links: LinkCursor<'a>,
    offsets: packed::OffsetCursor<'a>,
}

impl<'a> NodeCursor<'a> {
    fn new(tree: &'a SpanTree) -> NodeCursor<'a> {
        NodeCursor {
            links: tree.shape.links.cursor(),
            offsets: tree.offsets.cursor(),
        }
    }

    /// Node `i`, unpacked; reading forward is cheap.
    fn read(&mut self, i: usize) -> Option<Node> {
        self.links.seek(i);
        self.offsets.seek(i);
        Some(self.offsets.next()?.with(&self.links.next()?))
    }
}

/// Iterator over every node of a [`SpanTree`] in pre-order, unpacked.
#[derive(Debug, Clone)]
pub struct Nodes<'a> {
    tree: &'a SpanTree,
    cursor: NodeCursor<'a>,
    next: u32,
    end: u32,
}

impl Nodes<'_> {
    /// Node `i` of the tree, if it has one (whatever has been iterated).
    pub fn get(&self, i: usize) -> Option<Node> {
        (i < self.tree.len()).then(|| self.tree.unpack(i))
    }
}

impl Iterator for Nodes<'_> {
    type Item = Node;

    fn next(&mut self) -> Option<Node> {
        if self.next >= self.end {
            return None;
        }
        let n = self.cursor.read(self.next as usize)?;
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
    offsets: Offsets,
    /// The links and key texts stored so far; empty while `like` is followed.
    shape: Shape,
    /// The shape every node so far matches, while the builder follows one.
    like: Option<Arc<Shape>>,
    /// Where the next node's link is in `like`.
    like_at: packed::LinkAt,
    /// How many key texts were interned (`shape.keys.len()` unless `like` is followed).
    keys: u32,
    open: Vec<Open>,
    interned: KeyMap<Box<[u8]>, u32>,
    /// Counts nodes without keeping them ([`SpanTreeBuilder::counting`]).
    counting: bool,
    counted: u32,
    /// The last short text key seen in each of [`KEY_CACHE`] slots (by a hash of its
    /// [`crate::model::CompactText::inline_words`]) and its number: a map's keys come back in
    /// every record, and a hit costs one comparison instead of a hash-map lookup.
    key_cache: Vec<([u64; 3], u32)>,
    /// For each short key text by number (plus one; 0 before any), the short key text met
    /// right after it last time and its number: [`SpanTreeBuilder::text_key`]'s first guess.
    follows: Vec<([u64; 3], u32)>,
    /// The number (plus one) of the last short key text met, 0 before any.
    last_key: usize,
    /// The part of the document being added in place, if any ([`SpanTreeBuilder::graft`]).
    graft: Option<Graft>,
    /// Nodes [`SpanTreeBuilder::len`] leaves out: while a part is grafted, the nodes before it
    /// (less one, wrapping, for a root left out, which the part counts).
    uncounted: usize,
}

/// A part of a document decoded or encoded on its own whose nodes a builder adds as they come,
/// at their place in the whole ([`SpanTreeBuilder::graft`]).
#[derive(Debug, Clone, Copy)]
struct Graft {
    /// Added (wrapping) to each of the part's offsets.
    shift: usize,
    /// Nodes before the part.
    base: u32,
    /// Containers open around the part.
    depth: usize,
    root: GraftRoot,
    /// Whether the part's root came (added, or left out).
    rooted: bool,
}

/// What becomes of the root of a part added with [`SpanTreeBuilder::graft`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum GraftRoot {
    /// It is added with this segment and these key bytes (the whole document's).
    Slot(Segment, Option<Span>),
    /// It is left out: an array made around a run of items. Its items become items of the
    /// innermost open container, numbered from this index on.
    Dropped(u32),
}

/// Slots in [`SpanTreeBuilder`]'s cache of short key texts.
const KEY_CACHE: usize = 64;

/// An open container: its id, its ordinal among containers, and what closing it needs.
#[derive(Debug, Clone, Copy)]
struct Open {
    id: NodeId,
    ordinal: u32,
    start: usize,
    payload_start: usize,
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
        b.offsets.reserve(nodes * 5, nodes, nodes / 4);
        b.shape.links.reserve(nodes);
        b
    }

    /// A builder that only counts nodes and keeps nothing (its tree is empty): for a decode whose
    /// caller wants the value and the node count, not the spans (a conversion). Keys are not
    /// interned and paths are not kept, so an error's path from it is the root's.
    pub(crate) fn counting() -> SpanTreeBuilder {
        SpanTreeBuilder {
            counting: true,
            ..SpanTreeBuilder::default()
        }
    }

    /// An empty builder that expects `tree`'s shape: for the spans of another encoding of the
    /// value `tree` holds the spans of. See the type's docs.
    pub fn like(tree: &SpanTree) -> SpanTreeBuilder {
        let mut b = SpanTreeBuilder::default();
        let o = &tree.offsets;
        b.offsets.reserve(
            o.record_bytes() + o.record_bytes() / 8,
            o.len(),
            o.containers() as usize,
        );
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
        let cursor = like.links.cursor_at(self.like_at);
        let mut links = like.links.prefix(self.offsets.len(), &cursor);
        links.reserve(like.links.len().saturating_sub(self.offsets.len()));
        self.shape = Shape {
            links,
            keys: like.keys[..self.keys as usize].to_vec(),
        };
    }

    /// The segment for a text map key.
    pub fn key(&mut self, text: &str) -> Segment {
        Segment::Key(self.intern(text.as_bytes()))
    }

    /// The segment for a map key of text `text`: [`SpanTreeBuilder::key`] without checking the
    /// text again.
    pub fn text_key(&mut self, text: &crate::model::CompactText) -> Segment {
        if self.counting {
            // A counting builder interns nothing (see `intern`): no cache to look in or fill.
            return Segment::Key(0);
        }
        let Some(words) = text.inline_words() else {
            return Segment::Key(self.intern(text.as_bytes()));
        };
        // Records list their keys in one order: the key after the last one is most often the
        // one that came after it before.
        let after = self.last_key;
        if let Some(&(cached, id)) = self.follows.get(after) {
            if cached == words && id != u32::MAX {
                self.last_key = id as usize + 1;
                return Segment::Key(id);
            }
        }
        let mixed = (words[0] ^ words[1].rotate_left(21) ^ words[2].rotate_left(42))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = (mixed >> 58) as usize % KEY_CACHE;
        let id = match self.key_cache.get(slot) {
            Some(&(cached, id)) if cached == words && id != u32::MAX => id,
            _ => {
                let id = self.intern(text.as_bytes());
                if self.key_cache.is_empty() {
                    self.key_cache = vec![([0; 3], u32::MAX); KEY_CACHE];
                }
                if let Some(entry) = self.key_cache.get_mut(slot) {
                    *entry = (words, id);
                }
                id
            }
        };
        // One entry per key text interned (and one for the start): as many as `keys`.
        if self.follows.len() <= after {
            self.follows.resize(after + 1, ([0; 3], u32::MAX));
        }
        if let Some(entry) = self.follows.get_mut(after) {
            *entry = (words, id);
        }
        self.last_key = id as usize + 1;
        Segment::Key(id)
    }

    /// The segment for a map key that is not text, by its one-line summary.
    pub fn other_key(&mut self, summary: &str) -> Segment {
        Segment::OtherKey(self.intern(summary.as_bytes()))
    }

    /// The segment for a map entry with key `key`: [`Segment::Key`] for text, else
    /// [`Segment::OtherKey`] named by the key's summary. Decoders and encoders of every format use
    /// this, so one entry gets one path everywhere.
    pub fn segment_for_key(&mut self, key: &Value) -> Segment {
        match key {
            Value::Text(s) => self.text_key(s),
            other => {
                let summary = other.summary(48);
                self.other_key(&summary)
            }
        }
    }

    /// The number of the key text `text` (UTF-8), numbering it if it is new.
    fn intern(&mut self, text: &[u8]) -> u32 {
        if self.counting {
            return 0;
        }
        if let Some(&id) = self.interned.get(text) {
            return id;
        }
        let id = self.keys;
        if let Some(like) = &self.like {
            if like
                .keys
                .get(id as usize)
                .is_none_or(|k| k.as_bytes() != text)
            {
                self.diverge();
            }
        }
        if self.like.is_none() {
            self.shape
                .keys
                .push(String::from_utf8_lossy(text).into_owned());
        }
        self.keys += 1;
        self.interned.insert(text.into(), id);
        id
    }

    /// Number of containers currently open.
    pub fn depth(&self) -> usize {
        self.open.len()
    }

    /// The innermost open container.
    pub fn current(&self) -> Option<NodeId> {
        self.open.last().map(|o| o.id)
    }

    /// Number of nodes so far; while a part of a document is grafted in (the crate's streaming
    /// walks do that), the part's nodes so far, its root counted even when it is left out.
    pub fn len(&self) -> usize {
        if self.counting {
            self.counted as usize
        } else {
            self.offsets.len().wrapping_sub(self.uncounted)
        }
    }

    /// Adds the nodes of a part of the document decoded or encoded on its own, as its decoder or
    /// encoder gives them, until [`SpanTreeBuilder::end_graft`]: the part's offsets shifted by
    /// `shift` (wrapping: an offset `o` of the part is `o + shift` in the whole), its root placed
    /// as `root` says, inside the innermost open container. While the part is added,
    /// [`SpanTreeBuilder::len`] counts its nodes only, so the decoder's node limit applies to the
    /// part. The tree is the one copying the part's own finished tree in would make, without
    /// building that tree.
    pub(crate) fn graft(&mut self, shift: usize, root: GraftRoot) {
        debug_assert!(self.graft.is_none(), "a graft inside a graft");
        self.uncounted = self.offsets.len();
        self.graft = Some(Graft {
            shift,
            base: self.offsets.len() as u32,
            depth: self.open.len(),
            root,
            rooted: false,
        });
    }

    /// Ends the part begun by [`SpanTreeBuilder::graft`]. Every container it opened must have
    /// been closed.
    pub(crate) fn end_graft(&mut self) {
        debug_assert!(
            self.graft.is_none_or(|g| g.depth == self.open.len()),
            "a grafted part left open"
        );
        self.graft = None;
        self.uncounted = 0;
    }

    /// Whether no node was added yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Path of a node added so far; while a part of a document is grafted in (the crate's
    /// streaming walks do that), its path within the part (as the part's own tree would give
    /// it).
    pub fn path(&self, id: NodeId) -> Path {
        path_within(self.current_shape(), id, self.graft.as_ref())
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
        if self.counting {
            return self.count(None);
        }
        self.add::<false>(Node {
            kind,
            segment,
            parent: None,
            key,
            span,
            header_end,
            payload,
            subtree_end: 0,
        })
    }

    /// Adds `node` as the next node, a child of the innermost open container; `OPENED`: a
    /// container, closed later by [`SpanTreeBuilder::close`]. A constant, so that a scalar's
    /// and a container's records each get code of their own, without the other's branches.
    fn add<const OPENED: bool>(&mut self, mut node: Node) -> NodeId {
        let opened = OPENED;
        debug_assert!(!self.counting, "leaf and open count before adding");
        if self.graft.is_some() {
            if let Some(left_out) = self.grafted(&mut node) {
                return left_out;
            }
        }
        let id = NodeId(self.offsets.len() as u32);
        node.parent = self.current();
        node.subtree_end = id.0 + 1;
        let link = link_of(&node, opened);
        if let Some(like) = &self.like {
            let mut cursor = like.links.cursor_at(self.like_at);
            // An opened container's subtree end is compared when it closes.
            let fits = cursor.next().is_some_and(|l| {
                l == Link {
                    subtree_end: if opened {
                        l.subtree_end
                    } else {
                        link.subtree_end
                    },
                    ..link
                }
            });
            if fits {
                self.like_at = cursor.at();
            } else {
                self.diverge();
            }
        }
        if self.like.is_none() {
            self.shape.links.push(&link);
        }
        let ordinal = self.offsets.containers();
        self.offsets.push(&node, opened);
        if opened {
            self.open.push(Open {
                id,
                ordinal,
                start: node.span.start,
                payload_start: node.payload.start,
            });
        }
        id
    }

    /// Places `node`, the next node of a grafted part ([`SpanTreeBuilder::graft`]), in the
    /// whole: its offsets shifted, and as the part's root or one of its items, the segment and
    /// key the graft gives. Returns the id to give back for a root left out, which is not added.
    /// Kept out of `add`, whose every other caller does not graft.
    #[inline(never)]
    fn grafted(&mut self, node: &mut Node) -> Option<NodeId> {
        let g = self.graft.as_mut()?;
        let shift = g.shift;
        let at = |o: usize| o.wrapping_add(shift);
        let moved = |s: Span| Span {
            start: at(s.start),
            end: at(s.end),
        };
        node.span = moved(node.span);
        node.header_end = at(node.header_end);
        node.payload = moved(node.payload);
        node.key = node.key.map(moved);
        if self.open.len() == g.depth {
            match g.root {
                GraftRoot::Slot(segment, key) if !g.rooted => {
                    g.rooted = true;
                    node.segment = segment;
                    node.key = key;
                }
                GraftRoot::Dropped(_) if !g.rooted => {
                    // Left out; its close is left out too (see `close`). The part counts it.
                    g.rooted = true;
                    self.uncounted = self.uncounted.wrapping_sub(1);
                    return Some(self.current().unwrap_or(NodeId::ROOT));
                }
                GraftRoot::Dropped(first) => {
                    if let Segment::Index(n) = node.segment {
                        node.segment = Segment::Index(n.wrapping_add(first));
                    }
                }
                GraftRoot::Slot(..) => {}
            }
        }
        None
    }

    /// A counting builder's next node ([`SpanTreeBuilder::counting`]): counted, and with
    /// `opened` (where it starts and its items start), opened as a container. Kept out of `add`
    /// so that a decode that only counts does not pay for a call that moves a whole node.
    #[inline]
    fn count(&mut self, opened: Option<(usize, usize)>) -> NodeId {
        let id = NodeId(self.counted);
        self.counted = self.counted.saturating_add(1);
        if let Some((start, payload_start)) = opened {
            self.open.push(Open {
                id,
                ordinal: 0,
                start,
                payload_start,
            });
        }
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
        if self.counting {
            return self.count(Some((start, header_end)));
        }
        self.add::<true>(Node {
            kind,
            segment,
            parent: None,
            key,
            span: Span::new(start, header_end),
            header_end,
            payload: Span::empty(header_end),
            subtree_end: 0,
        })
    }

    /// Closes the innermost open container: its items end at `payload_end`, its bytes at `end`.
    #[inline]
    pub fn close(&mut self, payload_end: usize, end: usize) -> Option<NodeId> {
        if self.counting {
            return self.open.pop().map(|open| open.id);
        }
        if self.graft.is_some() {
            return self.close_grafted(payload_end, end);
        }
        self.close_at(payload_end, end)
    }

    /// [`SpanTreeBuilder::close`] in a grafted part: its offsets shifted, and a left-out root's
    /// close left out.
    #[inline(never)]
    fn close_grafted(&mut self, payload_end: usize, end: usize) -> Option<NodeId> {
        let g = self.graft?;
        if self.open.len() == g.depth {
            // The grafted part's root, left out (only a left-out root closes here).
            return self.current();
        }
        self.close_at(payload_end.wrapping_add(g.shift), end.wrapping_add(g.shift))
    }

    /// Closes the innermost open container at these (the whole document's) offsets.
    fn close_at(&mut self, payload_end: usize, end: usize) -> Option<NodeId> {
        let open = self.open.pop()?;
        let subtree_end = self.offsets.len() as u32;
        let payload_end = payload_end.max(open.payload_start);
        let end = end.max(payload_end);
        self.offsets
            .set_close(open.ordinal, open.start, payload_end, end);
        if let Some(like) = &self.like {
            if like.links.end_of(open.ordinal, open.id.0) != Some(subtree_end) {
                self.diverge();
            }
        }
        if self.like.is_none() {
            self.shape
                .links
                .set_end(open.ordinal, open.id.0, subtree_end);
        }
        Some(open.id)
    }

    /// The finished tree. Every container must have been closed.
    pub fn finish(mut self) -> SpanTree {
        debug_assert!(self.open.is_empty(), "containers left open");
        while !self.open.is_empty() {
            let end = self
                .offsets
                .len()
                .checked_sub(1)
                .map_or(0, |last| self.offsets.get(last).span.end);
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
    /// the room the builder left (a finished tree never grows).
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
            offsets: Box::new(self.offsets),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_numbers_do_not_depend_on_the_order_keys_come_in() {
        // Records in one order, then others: reordered, a key left out, a new key, a key
        // repeated, a long key (kept on the heap), and the first order again.
        let orders: [&[&str]; 6] = [
            &["id", "user", "amount", "ship", "city"],
            &["id", "user", "amount", "ship", "city"],
            &["user", "id", "ship", "amount"],
            &["id", "zip", "amount", "amount", "city"],
            &["a key long enough to be kept on the heap", "id", "user"],
            &["id", "user", "amount", "ship", "city"],
        ];
        let mut fast = SpanTreeBuilder::new();
        let mut plain = SpanTreeBuilder::new();
        for order in orders {
            for key in order {
                let text = crate::model::CompactText::from(*key);
                let Segment::Key(id) = fast.text_key(&text) else {
                    panic!("a text key");
                };
                assert_eq!(Segment::Key(id), plain.key(key), "{key}");
                assert_eq!(
                    segment_path(&fast.shape.keys, Segment::Key(id)),
                    Some(PathSegment::Key((*key).to_string()))
                );
            }
        }
        assert_eq!(fast.keys, 7);
    }

    #[test]
    fn grafted_parts_make_the_tree_of_the_whole() {
        // `{"a":[1,{"b":2}],"c":[3,4,5]}`, built from the root map, a part decoded on its own
        // for `a`'s value, and a run of `c`'s items decoded as an array of their own.
        let text = br#"{"a":[1,{"b":2}],"c":[3,4,5]}"#;
        let options = crate::codec::DecodeOptions::default();
        let whole = crate::codec::decode(text, crate::codec::Format::Json, &options)
            .expect("JSON")
            .spans;
        let mut b = SpanTreeBuilder::new();
        b.open(Kind::Map, Segment::Root, None, 0, 1);
        let a = b.key("a");
        b.graft(5, GraftRoot::Slot(a, Some(Span::new(1, 4))));
        assert_eq!(b.len(), 0, "a graft counts its own nodes");
        let (_, nodes, mut b) =
            crate::codec::json::value_into(br#"[1,{"b":2}]"#, &options, b, true).expect("part");
        assert_eq!(nodes, 4);
        b.end_graft();
        let c = b.key("c");
        b.open(Kind::Array, c, Some(Span::new(17, 20)), 21, 22);
        b.leaf(
            Kind::Int,
            Segment::Index(0),
            None,
            Span::new(22, 23),
            22,
            Span::new(22, 23),
        );
        // `[4,5]`: its `4` at 1 is the document's at 24; the array is left out.
        b.graft(23, GraftRoot::Dropped(1));
        b.open(Kind::Array, Segment::Root, None, 0, 1);
        assert_eq!(b.len(), 1, "the left-out root is counted");
        let four = b.leaf(
            Kind::Int,
            Segment::Index(0),
            None,
            Span::new(1, 2),
            1,
            Span::new(1, 2),
        );
        assert_eq!(b.path(four).to_string(), "$[0]", "a path within the part");
        b.leaf(
            Kind::Int,
            Segment::Index(1),
            None,
            Span::new(3, 4),
            3,
            Span::new(3, 4),
        );
        b.close(4, 5);
        assert_eq!(b.len(), 3);
        b.end_graft();
        assert_eq!(b.path(four).to_string(), "$.c[1]", "the path in the whole");
        b.close(27, 28);
        b.close(28, 29);
        let tree = b.finish();
        assert_eq!(tree, whole);
        assert_eq!(tree.len(), 9);
    }

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

    /// A small deterministic generator (SplitMix64), so a failure names its seed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }

        /// A distance: mostly a few bytes, sometimes hundreds, now and then past 4 GiB.
        fn distance(&mut self) -> usize {
            match self.below(20) {
                0 => (self.below(1 << 33) + (1 << 32)) as usize,
                1..=3 => self.below(100_000) as usize,
                _ => self.below(12) as usize,
            }
        }
    }

    /// Builds a random tree the way decoders do, and the nodes it must hold, unpacked.
    fn random_tree(seed: u64) -> (SpanTree, Vec<Node>) {
        let mut rng = Rng(seed);
        let mut b = SpanTreeBuilder::new();
        let mut want: Vec<Node> = Vec::new();
        let mut open: Vec<(usize, u32)> = Vec::new();
        let mut at = rng.distance();
        let kinds = [
            Kind::Null,
            Kind::Bool,
            Kind::Int,
            Kind::Float(crate::model::FloatWidth::F32),
            Kind::Text,
            Kind::Bytes,
            Kind::Raw,
            Kind::Ext,
        ];
        let root = b.open(Kind::Map, Segment::Root, None, at, at + 1);
        want.push(b_node(
            None,
            root,
            Kind::Map,
            Segment::Root,
            None,
            at,
            at + 1,
        ));
        open.push((0, 0));
        at += 1;
        for _ in 0..rng.below(600) + 1 {
            let action = rng.below(6);
            if action == 1 && open.len() > 1 {
                let (id, _) = open.pop().expect("open");
                let payload_end = at + rng.distance();
                let end = payload_end + rng.distance();
                b.close(payload_end, end);
                let n = &mut want[id];
                n.payload.end = payload_end;
                n.span.end = end;
                n.subtree_end = b.len() as u32;
                at = end;
                continue;
            }
            let (parent, children) = open.last().copied().unwrap_or((0, 0));
            let parent_id = Some(NodeId(parent as u32));
            let is_map = want[parent].kind == Kind::Map;
            let (segment, key) = if is_map {
                let key_start = at + rng.distance();
                let key_end = key_start + rng.distance();
                at = key_end + rng.distance();
                let name = format!("k{}", rng.below(40));
                (b.key(&name), Some(Span::new(key_start, key_end)))
            } else {
                at += rng.distance();
                (Segment::Index(children), None)
            };
            if let Some(top) = open.last_mut() {
                top.1 += 1;
            }
            match action {
                0 if open.len() < 12 => {
                    let kind = if rng.below(2) == 0 {
                        Kind::Map
                    } else {
                        Kind::Array
                    };
                    let header_end = at + rng.distance();
                    let id = b.open(kind, segment, key, at, header_end);
                    want.push(b_node(parent_id, id, kind, segment, key, at, header_end));
                    open.push((id.index(), 0));
                    at = header_end;
                }
                _ => {
                    let kind = kinds[rng.below(kinds.len() as u64) as usize];
                    let header_end = at + rng.distance();
                    let payload_start = header_end + rng.distance();
                    let payload = Span::new(payload_start, payload_start + rng.distance());
                    let end = payload.end + rng.distance();
                    let id = b.leaf(kind, segment, key, Span::new(at, end), header_end, payload);
                    let mut n = b_node(parent_id, id, kind, segment, key, at, header_end);
                    n.payload = payload;
                    n.span.end = end;
                    want.push(n);
                    at = end;
                }
            }
        }
        while let Some((id, _)) = open.pop() {
            at += rng.distance();
            b.close(at, at + 1);
            let n = &mut want[id];
            n.payload.end = at.max(n.payload.start);
            n.span.end = at + 1;
            n.subtree_end = b.len() as u32;
            at += 1;
        }
        (b.finish(), want)
    }

    /// The node just added as `id` under `parent`, as the builder was told it (a container
    /// still open).
    fn b_node(
        parent: Option<NodeId>,
        id: NodeId,
        kind: Kind,
        segment: Segment,
        key: Option<Span>,
        start: usize,
        header_end: usize,
    ) -> Node {
        Node {
            kind,
            segment,
            parent,
            key,
            span: Span::new(start, header_end),
            header_end,
            payload: Span::empty(header_end),
            subtree_end: id.0 + 1,
        }
    }

    /// The innermost node holding `offset`, found by looking at every node.
    fn node_at_by_scan(want: &[Node], offset: usize) -> Option<NodeId> {
        let mut best = None;
        for (i, n) in want.iter().enumerate() {
            if n.span.contains(offset) || n.key.is_some_and(|k| k.contains(offset)) {
                best = Some(NodeId(i as u32));
            }
        }
        best
    }

    #[test]
    fn packed_trees_give_back_every_number_they_were_given() {
        for seed in 0..300 {
            let (tree, want) = random_tree(seed);
            assert_eq!(tree.len(), want.len(), "seed {seed}");
            let all: Vec<Node> = tree.nodes().collect();
            assert_eq!(all, want, "seed {seed}: iterated");
            let back: Vec<Node> = tree.nodes().rev().collect();
            assert!(back.iter().rev().eq(want.iter()), "seed {seed}: backwards");
            for (i, n) in want.iter().enumerate() {
                let id = NodeId(i as u32);
                assert_eq!(tree.node(id), *n, "seed {seed}: node {i}");
                assert_eq!(tree.parent(id), n.parent, "seed {seed}: parent of {i}");
                assert_eq!(tree.segment(id), n.segment, "seed {seed}: segment of {i}");
                let children: Vec<NodeId> = tree.children(id).collect();
                let expected: Vec<NodeId> = (0..want.len())
                    .filter(|&c| want[c].parent == Some(id))
                    .map(|c| NodeId(c as u32))
                    .collect();
                assert_eq!(children, expected, "seed {seed}: children of {i}");
            }
            tree.validate(usize::MAX).expect("valid");
            // Every byte boundary a node has, and the bytes beside it.
            let mut rng = Rng(seed ^ 0xabc);
            for n in want.iter().take(200) {
                for offset in [n.span.start, n.span.end, n.header_end, n.payload.end]
                    .into_iter()
                    .chain(n.key.map(|k| k.start))
                    .flat_map(|o| [o.saturating_sub(1), o, o + 1])
                    .chain(std::iter::once(rng.below(1 << 34) as usize))
                {
                    assert_eq!(
                        tree.node_at(offset).map(|x| x.0),
                        node_at_by_scan(&want, offset),
                        "seed {seed}: offset {offset}"
                    );
                }
            }
            // A finder asked every boundary in order (and once going back) says what each
            // lookup says, and gives the same paths.
            let mut finder = tree.finder();
            let mut offsets: Vec<usize> = want
                .iter()
                .flat_map(|n| [n.extent().start, n.header_end, n.payload.end, n.span.end])
                .flat_map(|o| [o, o + 1])
                .collect();
            offsets.sort_unstable();
            offsets.push(offsets.len() / 2);
            for &o in &offsets {
                let got = finder.at(o).map(|(id, n)| (id, *n));
                assert_eq!(
                    got.map(|x| x.0),
                    tree.node_at(o).map(|x| x.0),
                    "seed {seed}: finder at {o}"
                );
                if let Some((id, n)) = got {
                    assert_eq!(n, tree.node(id), "seed {seed}: finder's node {}", id.0);
                    assert_eq!(
                        finder.path(id),
                        tree.path(id),
                        "seed {seed}: path of {}",
                        id.0
                    );
                }
            }
            // A run of bytes looked up at once says what each byte's own lookup says.
            for n in want.iter().take(100) {
                let from = n.key.map_or(n.span.start, |k| k.start).saturating_sub(3);
                let mut run = [None; 40];
                tree.nodes_at(from, &mut run);
                for (i, got) in run.iter().enumerate() {
                    assert_eq!(
                        *got,
                        tree.node_at(from + i),
                        "seed {seed}: byte {}",
                        from + i
                    );
                }
            }
            // An encoding with the same shape shares it and keeps its own bytes.
            let mut like = SpanTreeBuilder::like(&tree);
            let mut again = SpanTreeBuilder::new();
            for b in [&mut like, &mut again] {
                rebuild(b, &tree, 0);
            }
            let (like, again) = (like.finish(), again.finish());
            assert!(
                like.shares_shape_with(&tree),
                "seed {seed}: shape not shared"
            );
            assert_eq!(like, again, "seed {seed}: like differs from a plain build");
            assert!(like.nodes().eq(tree.nodes()), "seed {seed}: rebuilt nodes");
        }
    }

    /// Adds node `id` of `tree` and its subtree to `b`, as the same calls made it.
    fn rebuild(b: &mut SpanTreeBuilder, tree: &SpanTree, id: u32) {
        let n = tree.node(NodeId(id));
        let segment = match n.segment {
            Segment::Key(k) => b.key(tree.key_text(k)),
            other => other,
        };
        if n.kind.is_container() {
            b.open(n.kind, segment, n.key, n.span.start, n.header_end);
            for child in tree.children(NodeId(id)) {
                rebuild(b, tree, child.0);
            }
            b.close(n.payload.end, n.span.end);
        } else {
            b.leaf(n.kind, segment, n.key, n.span, n.header_end, n.payload);
        }
    }

    #[test]
    fn a_typical_document_packs_in_about_a_dozen_bytes_a_node() {
        // 2,000 records like an orders API's JSON: `{"id":1234,"name":"abc","tags":[1,2]}`.
        let mut b = SpanTreeBuilder::new();
        b.open(Kind::Array, Segment::Root, None, 0, 1);
        let mut at = 1;
        for i in 0..2000u32 {
            b.open(Kind::Map, Segment::Index(i), None, at, at + 1);
            at += 1;
            for (name, len) in [("id", 4), ("name", 5)] {
                let k = b.key(name);
                let key = Span::new(at, at + name.len() + 2);
                let start = key.end + 1;
                b.leaf(
                    Kind::Int,
                    k,
                    Some(key),
                    Span::new(start, start + len),
                    start,
                    Span::new(start, start + len),
                );
                at = start + len + 1;
            }
            let k = b.key("tags");
            b.open(Kind::Array, k, Some(Span::new(at, at + 6)), at + 7, at + 8);
            one_byte_int(&mut b, 0, at + 8);
            one_byte_int(&mut b, 1, at + 10);
            b.close(at + 11, at + 12);
            at += 12;
            b.close(at, at + 1);
            at += 2;
        }
        b.close(at, at + 1);
        let t = b.finish();
        t.validate(at + 1).expect("valid");
        let per_node = t.heap_bytes() as f64 / t.len() as f64;
        assert!(per_node < 12.0, "{per_node:.1} bytes a node");
    }

    #[test]
    fn numbers_of_any_size_are_kept() {
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

    /// `nodes_in` matches every node to the node at its path, in order or not, and refuses a
    /// tree with a node the other has not or of another kind.
    #[test]
    fn nodes_are_matched_by_path() {
        let tree = |json: &str| {
            crate::codec::decode(
                json.as_bytes(),
                crate::codec::Format::Json,
                &crate::codec::DecodeOptions::default(),
            )
            .expect("JSON")
            .spans
        };
        let full = tree(r#"{"a":1,"b":null,"c":{"d":[1,2,{"x":null}],"e":null},"f":[]}"#);
        let cases = [
            (r#"{"a":1,"c":{"d":[1,2,{}]},"f":[]}"#, true),
            (r#"{"c":{"d":[1,2,{"x":0}]},"a":1}"#, false),
            (r#"{"f":[],"b":null,"a":1}"#, false),
            (
                r#"{"a":1,"b":null,"c":{"d":[1,2,{"x":null}],"e":null},"f":[]}"#,
                true,
            ),
        ];
        for (json, in_order) in cases {
            let part = tree(json);
            let ids = part.nodes_in(&full).expect(json);
            assert_eq!(part.nodes_in_order(&full).is_some(), in_order, "{json}");
            let any = part.nodes_in_any_order(&full).expect(json);
            assert_eq!(ids.len(), part.len(), "{json}");
            for (i, &id) in any.iter().enumerate() {
                let mine = NodeId(i as u32);
                assert_eq!(ids.get(mine), Some(NodeId(id)), "{json}: node {i}");
                let path = part.path(mine);
                assert_eq!(full.find(&path), vec![NodeId(id)], "{json}: {path}");
            }
            assert_eq!(ids.get(NodeId(part.len() as u32)), None);
        }
        for json in [r#"{"a":[1]}"#, r#"{"z":1}"#, r#"{"d":[1,2,3]}"#, r#"[1]"#] {
            assert_eq!(tree(json).nodes_in(&full), None, "{json}");
        }
        // A tree that wraps the other's value in its root's one entry.
        let list = tree(r#"[{"a":1,"b":null},{"a":2}]"#);
        let wrapped = tree(r#"{"items":[{"a":1},{"a":2}]}"#);
        let ids = wrapped.nodes_in_wrapped(&list).expect("wrapped");
        assert_eq!(wrapped.nodes_in(&list), None);
        for (path, want) in [("$", "$"), ("$.items", "$"), ("$.items[1].a", "$[1].a")] {
            let mine = wrapped.find(&Path::parse(path).expect("path"))[0];
            let want = list.find(&Path::parse(want).expect("path"))[0];
            assert_eq!(ids.get(mine), Some(want), "{path}");
        }
        let two = tree(r#"{"items":[{"a":1}],"more":1}"#);
        assert_eq!(two.nodes_in_wrapped(&list), None);
    }
}
