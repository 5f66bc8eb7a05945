//! Converting a large JSON, MessagePack or CBOR document without holding it whole:
//! [`transcode`].
//!
//! `convert` of a 50 MB JSON file used to decode the whole document into a [`Value`] with its
//! span tree (about 20 times the file) and then encode it. Most large documents are a few big
//! containers holding many small records, so the walk here writes the big containers itself (their
//! item counts from a first pass over their bytes) and hands every subtree of at most
//! [`CHUNK`] bytes to the ordinary decoder and encoder: without spans, a batch of runs of small
//! items at once on every core (a few chunks per thread held at a time), else one at a time.
//! The output is byte for
//! byte what [`super::encode_fast`] writes for the whole document, with the same notes (a test
//! holds the two together on every sample and corpus file): each chunk's notes are placed under
//! the chunk's path and grouped as one conversion groups them (by kind and path pattern, counts
//! added, the first occurrence's path and message kept).
//!
//! A MessagePack or CBOR document is walked the same way, its items found by their heads; a map
//! walked here must have text keys, as JSON's have. A CBOR tag is walked as one item with its
//! content (converted whole), and an indefinite length anywhere sends the document the ordinary
//! way.
//!
//! What it does not do: anything that needs the whole document at once. Canonical output (map
//! entries sorted), pretty JSON, protobuf, and a map with a repeated key at the level walked here
//! give `None`, and so does any input the decoder would refuse or stop on a limit: the caller then
//! converts the ordinary way, which reports the error with its partial document.

use crate::codec::json::{skip_plain, skip_ws};
use crate::codec::note::Notes;
use crate::codec::output::Output;
use crate::codec::{DecodeOptions, EncodeOptions, Encoded, Format};
use crate::limits::Limits;
use crate::model::{
    GraftRoot, Kind, NodeId, Path, PathSegment, Segment, Span, SpanTree, SpanTreeBuilder, Value,
};
use rayon::prelude::*;
use std::collections::HashSet;

/// Subtrees of at most this many bytes are decoded and encoded whole.
pub const CHUNK: usize = 64 << 10;

/// How far the walk goes between givings back of the input's pages (a mapped file's: see
/// [`Walk::passed`]).
const GIVE_BACK: usize = 4 << 20;

/// Runs of array items converted at once on the worker threads, per thread: enough to keep
/// every core busy, few enough that the runs' output held before it is placed stays small
/// (a few chunks per thread).
const RUNS_PER_THREAD: usize = 4;

/// `bytes` (one JSON text) written as `to` like [`super::encode_fast`] of its decoded value,
/// holding a few chunks of the document per thread at a time; `None` when the walk does not apply
/// (see the module docs) and the caller should convert the ordinary way.
pub fn transcode_json(
    bytes: &[u8],
    to: Format,
    options: &EncodeOptions,
    limits: &Limits,
) -> Option<Encoded> {
    transcode_in_chunks(bytes, Format::Json, to, options, limits, CHUNK)
}

/// [`transcode_json`] with another chunk size (tests walk tiny chunks to exercise the walk).
pub fn transcode_json_in_chunks(
    bytes: &[u8],
    to: Format,
    options: &EncodeOptions,
    limits: &Limits,
    chunk: usize,
) -> Option<Encoded> {
    transcode_in_chunks(bytes, Format::Json, to, options, limits, chunk)
}

/// `bytes` (one JSON, MessagePack or CBOR item) written as `to` like [`super::encode_fast`] of
/// its decoded value, walked as [`transcode_json`] walks JSON; `None` where the walk does not
/// apply.
pub fn transcode(
    bytes: &[u8],
    from: Format,
    to: Format,
    options: &EncodeOptions,
    limits: &Limits,
) -> Option<Encoded> {
    transcode_in_chunks(bytes, from, to, options, limits, CHUNK)
}

/// [`transcode`] with another chunk size.
pub fn transcode_in_chunks(
    bytes: &[u8],
    from: Format,
    to: Format,
    options: &EncodeOptions,
    limits: &Limits,
    chunk: usize,
) -> Option<Encoded> {
    transcode_walk(bytes, from, to, options, limits, chunk, None)?.run_whole(to)
}

/// What a walk with spans makes of its output besides the bytes' spans: a tree sharing `like`'s
/// shape where it has the same one, and the bytes held or sent to `sink` as they are written.
#[derive(Default)]
pub struct Spanned<'a> {
    /// The input's spans (from [`spans_in_chunks`]), whose shape the output's tree shares where
    /// it is the same.
    pub like: Option<&'a SpanTree>,
    /// Where the output's bytes go as they are written, every megabyte (a temporary file),
    /// instead of being held whole; `None`: held.
    pub sink: Option<&'a mut (dyn std::io::Write + 'static)>,
}

/// `bytes` (one JSON text, MessagePack or CBOR item) written as `to` like [`super::encode_like`] of
/// its decoded value: the same bytes and notes, and the output's spans, in a tree that shares
/// `out.like`'s shape where it has the same one. At most one chunk of the document is held as a
/// value at a time. `None` where the walk does not apply ([`transcode`]'s rules).
///
/// With a sink (`out.sink`), the output goes there as it is written instead of being held
/// whole: the [`Encoded`] given then has the spans and notes but no bytes, and the sink has all
/// of them (so a large document's columns are never whole in memory:
/// [`crate::mapped::Mapping::spill`]); `None` also when the sink could not be written, and what
/// it holds then is not the output.
pub fn transcode_with_spans(
    bytes: &[u8],
    from: Format,
    to: Format,
    options: &EncodeOptions,
    limits: &Limits,
    chunk: usize,
    out: Spanned<'_>,
) -> Option<Encoded> {
    let builder = match out.like {
        Some(tree) => SpanTreeBuilder::like(tree),
        None => SpanTreeBuilder::new(),
    };
    let mut walk = transcode_walk(bytes, from, to, options, limits, chunk, Some(builder))?;
    walk.out = Output::to(out.sink, Vec::new());
    walk.run_whole(to)
}

/// Whether `bytes` start with a map or an array of `from`, the documents the walk takes apart:
/// JSON's `{` or `[` (after a byte order mark and white space), a MessagePack map or array head,
/// a CBOR array or map head of definite length.
pub fn starts_with_container(bytes: &[u8], from: Format) -> bool {
    match from {
        Format::Json => {
            let text = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(bytes);
            let first = text.iter().find(|c| !c.is_ascii_whitespace());
            matches!(first, Some(b'{' | b'['))
        }
        Format::MessagePack => matches!(bytes.first(), Some(0x80..=0x9f | 0xdc..=0xdf)),
        Format::Cbor => matches!(bytes.first(), Some(0x80..=0x9b | 0xa0..=0xbb)),
        Format::Protobuf | Format::Avro => false,
    }
}

/// The transcoding walk, recording spans into `builder` if one is given, to be run; `None` for
/// output the walk does not write (protobuf, pretty JSON, canonical order) or input it does not
/// read.
fn transcode_walk<'a>(
    bytes: &'a [u8],
    from: Format,
    to: Format,
    options: &'a EncodeOptions,
    limits: &'a Limits,
    chunk: usize,
    builder: Option<SpanTreeBuilder>,
) -> Option<Walk<'a>> {
    let streams =
        matches!(to, Format::MessagePack | Format::Cbor) || (to == Format::Json && !options.pretty);
    if !streams || options.canonical || options.message.is_some() {
        return None;
    }
    Walk::new(bytes, from, to, options, limits, chunk, builder)
}

/// The span tree [`super::decode`] gives for `bytes` (one JSON text, MessagePack or CBOR item), made
/// without holding the document's value whole: the big containers' nodes are recorded by the
/// walk, every chunk's by decoding that chunk alone. `None` where the walk does not apply (see
/// the module docs): the caller decodes the ordinary way.
pub fn spans_in_chunks(
    bytes: &[u8],
    from: Format,
    limits: &Limits,
    chunk: usize,
) -> Option<SpanTree> {
    spans_walked(bytes, from, limits, chunk, None)
}

/// [`spans_in_chunks`], and `count` summed over the document's values as if it were applied
/// to the whole value: each chunk's value is counted as it is decoded, and each container the
/// walk lists itself adds `(0, 1)`. `count` must add up over a value's parts that way (one
/// per value, keys aside: [`Value::preorder`]).
pub fn spans_counting(
    bytes: &[u8],
    from: Format,
    limits: &Limits,
    chunk: usize,
    count: fn(&Value) -> (usize, usize),
) -> Option<(SpanTree, (usize, usize))> {
    let sum = std::rc::Rc::new(std::cell::Cell::new((0, 0)));
    let counting = Counting {
        count,
        sum: std::rc::Rc::clone(&sum),
    };
    let spans = spans_walked(bytes, from, limits, chunk, Some(counting))?;
    Some((spans, sum.get()))
}

fn spans_walked(
    bytes: &[u8],
    from: Format,
    limits: &Limits,
    chunk: usize,
    counting: Option<Counting>,
) -> Option<SpanTree> {
    // Reserved, not touched: pages of the streams count only once they are written.
    let builder = SpanTreeBuilder::with_capacity(bytes.len() / 4);
    let options = EncodeOptions::default();
    let mut walk = Walk::new(bytes, from, from, &options, limits, chunk, Some(builder))?;
    walk.reading = true;
    walk.counting = counting;
    walk.run_whole(from).map(|encoded| encoded.spans)
}

/// `bytes` (one JSON text, MessagePack or CBOR item whose root is a map) encoded as protobuf like
/// [`super::encode`] with `options`: the same bytes, spans and notes, with the message type
/// `options` names or one inferred from the document. The root's entries are read one at a
/// time, and a repeated field's items a run at a time, so a document that is a few big lists
/// of records is never held whole as a value. `None` where the walk does not apply (a root
/// that is no map, a schema that wraps values, an input the decoder would refuse): the caller
/// encodes the ordinary way.
///
/// With a `sink`, the output goes there as it is written, as [`transcode_with_spans`] sends
/// it: the [`Encoded`] given has no bytes; `None` also when the sink could not be written.
pub fn protobuf_in_chunks(
    bytes: &[u8],
    from: Format,
    options: &EncodeOptions,
    limits: &Limits,
    chunk: usize,
    sink: Option<&mut (dyn std::io::Write + 'static)>,
) -> Option<Result<Encoded, super::EncodeError>> {
    use super::protobuf::{dynamic, infer};
    let no_spans = EncodeOptions::default();
    // The node budget of the whole input, as the whole-document decode would have it.
    let limits = &limits.for_input(bytes.len());
    // The root's entries are listed once (a scan of the whole input) for both passes.
    let mut parts = RootWalk::new(bytes, from, &no_spans, limits, chunk)?;
    let (message, inferred) = match &options.message {
        // A top-level array is no message of a given type (the whole encode says why).
        Some(_) if parts.list => return None,
        Some(m) => (m.clone(), None),
        None => {
            let infer_options = infer::InferOptions::default();
            let message = infer::infer_in_parts(&mut parts, &infer_options)?
                .ok()?
                .message;
            // The encoding reads the document again, within the same node budget.
            parts.walk.nodes = parts.root_nodes;
            (message, Some(infer_options))
        }
    };
    // Room for about one node per 12 bytes of input: reserved, touched only as written.
    let nodes = bytes.len() / 12;
    match dynamic::encode_root_in_parts(&mut parts, &message, options, nodes, sink) {
        Ok(None) => None,
        Ok(Some(mut encoded)) => {
            if let Some(infer_options) = &inferred {
                encoded.notes.insert(0, infer::inferred_note(infer_options));
            }
            Some(Ok(encoded))
        }
        Err(e) => Some(Err(e)),
    }
}

/// A document's root map, read entry by entry from its bytes for [`RootParts`]; or its root
/// array, as the one entry `items`.
struct RootWalk<'a> {
    walk: Walk<'a>,
    keys: Vec<Value>,
    /// Where each entry's value starts and ends.
    values: Vec<(usize, usize)>,
    /// Whether the root is an array.
    list: bool,
    /// The nodes counted before any entry is read (the root map's own).
    root_nodes: usize,
    /// The lists walked item by item so far: where each starts, and its items' extents.
    lists: Vec<(usize, Vec<(usize, usize)>)>,
}

impl<'a> RootWalk<'a> {
    /// The root map of `bytes`: `None` when it is no map, a key is not text or repeats, or
    /// anything follows it.
    fn new(
        bytes: &'a [u8],
        from: Format,
        options: &'a EncodeOptions,
        limits: &'a Limits,
        chunk: usize,
    ) -> Option<RootWalk<'a>> {
        let mut walk = Walk::new(bytes, from, from, options, limits, chunk, None)?;
        walk.reading = true;
        let start = if from == Format::Json && bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
            3
        } else {
            0
        };
        let at = walk.skip_ws(start);
        if walk.container(at) == Some(false) {
            let end = walk.skip_value(at)?;
            if walk.skip_ws(end) != bytes.len() {
                return None;
            }
            return Some(RootWalk {
                root_nodes: walk.nodes,
                walk,
                keys: vec![Value::text("items")],
                values: vec![(at, end)],
                list: true,
                lists: Vec::new(),
            });
        }
        if walk.container(at) != Some(true) {
            return None;
        }
        let (entries, end) = walk.children(at, true)?;
        if walk.skip_ws(end) != bytes.len() {
            return None;
        }
        walk.let_go(at, end);
        walk.nodes = 1;
        let mut keys = Vec::with_capacity(entries.len());
        let mut values = Vec::with_capacity(entries.len());
        let mut seen = HashSet::with_capacity(entries.len());
        for &(key_at, value_end) in &entries {
            let (key, value_at) = walk.key(key_at)?;
            if !seen.insert(key.clone()) {
                return None;
            }
            keys.push(Value::Text(key));
            values.push((value_at, value_end));
        }
        Some(RootWalk {
            root_nodes: walk.nodes,
            walk,
            keys,
            values,
            list: false,
            lists: Vec::new(),
        })
    }
}

impl super::protobuf::RootParts for RootWalk<'_> {
    fn keys(&self) -> &[Value] {
        &self.keys
    }

    fn is_list(&self) -> bool {
        self.list
    }

    fn value(&mut self, i: usize) -> Option<Value> {
        let (at, end) = *self.values.get(i)?;
        let walk = &mut self.walk;
        let value = walk.read(&walk.b[at..end], 1, false);
        walk.passed(end);
        value
    }

    fn items(
        &mut self,
        i: usize,
        each: &mut super::protobuf::EachRun<'_>,
    ) -> Result<super::protobuf::Walked, super::EncodeError> {
        use super::protobuf::Walked;
        let Some(&(at, _)) = self.values.get(i) else {
            return Ok(Walked::GaveUp);
        };
        let walk = &mut self.walk;
        if walk.container(at) != Some(false) {
            return Ok(Walked::NotItems);
        }
        let listed = self.lists.iter().position(|(start, _)| *start == at);
        let items = match listed {
            Some(k) => std::mem::take(&mut self.lists[k].1),
            None => match walk.children(at, false) {
                Some((items, end)) => {
                    walk.let_go(at, end);
                    items
                }
                None => return Ok(Walked::GaveUp),
            },
        };
        if items.is_empty() {
            return Ok(Walked::NotItems);
        }
        walk.nodes += 1;
        if walk.nodes.saturating_add(items.len()) > walk.limits.max_nodes {
            return Ok(Walked::GaveUp);
        }
        let mut k = 0;
        while k < items.len() {
            let j = run_end(&items, k, walk.chunk).max(k + 1);
            let (start, end) = (items[k].0, items[j - 1].1);
            let read = if j - k >= 2 {
                walk.run_of(&items[k..j]).and_then(|bytes| {
                    let read = walk.read(&bytes, 2, true);
                    walk.run_bytes = bytes;
                    match read? {
                        Value::Array(values) => Some(values),
                        _ => None,
                    }
                })
            } else {
                walk.read(&walk.b[start..end], 2, false)
                    .map(|value| vec![value])
            };
            let Some(values) = read else {
                return Ok(Walked::GaveUp);
            };
            each(k, &values)?;
            walk.passed(end);
            k = j;
        }
        // Kept for the next pass over the same list (the encoding after the inference).
        match listed {
            Some(k) => self.lists[k].1 = items,
            None => self.lists.push((at, items)),
        }
        Ok(Walked::Items)
    }
}

/// Decodes `bytes` (a value `depth` containers deep in a document of which `nodes` nodes are
/// counted already, or with `wrapped`, an array of such values made around them: one level and
/// one node more) within what is left of `limits`. Gives the value and its nodes (the array made
/// around a run not counted); with a `builder`, the spans are added to it (which grafts them into
/// the document's tree: [`SpanTreeBuilder::graft`]) and it comes back. A JSON value read for its
/// spans alone (`builder`, and not `keep`) has nulls for containers.
fn decode_within(
    from: Format,
    limits: &Limits,
    nodes: usize,
    bytes: &[u8],
    (depth, wrapped): (usize, bool),
    builder: Option<SpanTreeBuilder>,
    keep: bool,
) -> Option<(Value, usize, Option<SpanTreeBuilder>)> {
    use super::{cbor, json, msgpack};
    let wrap = usize::from(wrapped);
    let mut limits = *limits;
    limits.max_depth = limits.depth().checked_sub(depth)? + wrap;
    limits.max_nodes = limits.max_nodes.checked_sub(nodes)? + wrap;
    let options = DecodeOptions {
        limits,
        ..DecodeOptions::default()
    };
    let with = |(value, nodes, b)| (value, nodes, Some(b));
    let without = |(value, nodes)| (value, nodes, None);
    // Without a builder, the decoders only count the nodes.
    let (value, nodes, builder) = match (from, builder) {
        (Format::Json, Some(b)) => with(json::value_into(bytes, &options, b, keep)?),
        (Format::MessagePack, Some(b)) => with(msgpack::value_into(bytes, &options, b)?),
        (Format::Cbor, Some(b)) => with(cbor::value_into(bytes, &options, b)?),
        (Format::Json, None) => without(json::value_and_nodes(bytes, &options)?),
        (Format::MessagePack, None) => without(msgpack::value_and_nodes(bytes, &options)?),
        (Format::Cbor, None) => without(cbor::value_and_nodes(bytes, &options)?),
        (Format::Protobuf | Format::Avro, _) => return None,
    };
    Some((value, nodes.checked_sub(wrap)?, builder))
}

/// What converting a run of array items on a worker thread needs of the walk: the input, the
/// formats and options, and the limits with the nodes counted before the batch.
#[derive(Clone, Copy)]
struct Chunker<'a> {
    b: &'a [u8],
    from: Format,
    to: Format,
    options: &'a EncodeOptions,
    limits: &'a Limits,
    nodes: usize,
}

impl Chunker<'_> {
    /// The items `items` of one array (at depth `depth`) converted as an array of their own,
    /// as [`Walk::run`] converts them, and the nodes they hold.
    fn convert_run(&self, items: &[(usize, usize)], depth: usize) -> Option<(Encoded, usize)> {
        let bytes = run_bytes(self.b, self.from, items, Vec::new())?;
        let (value, nodes, _) = decode_within(
            self.from,
            self.limits,
            self.nodes,
            &bytes,
            (depth, true),
            None,
            true,
        )?;
        let encoded = super::encode_fast(&value, self.to, self.options).ok()?;
        Some((encoded, nodes))
    }
}

/// The items `items` (whole items of one array of `b`, in order) as an array of their own of
/// format `from`, written into `bytes` (cleared first).
fn run_bytes(
    b: &[u8],
    from: Format,
    items: &[(usize, usize)],
    mut bytes: Vec<u8>,
) -> Option<Vec<u8>> {
    let (start, end) = (items.first()?.0, items.last()?.1);
    let inner = b.get(start..end)?;
    bytes.clear();
    // The header or brackets, five bytes at most: reserved with the items, so that no push
    // moves them to a buffer twice their size.
    bytes.reserve(inner.len() + 5);
    match from {
        Format::Json => {
            bytes.push(b'[');
            bytes.extend_from_slice(inner);
            bytes.push(b']');
        }
        from => {
            // MessagePack's `array 32`, CBOR's array with a four-byte length: five bytes
            // either way (`Walk::run` counts on it).
            let n = u32::try_from(items.len()).ok()?;
            bytes.push(if from == Format::Cbor { 0x9a } else { 0xdd });
            bytes.extend_from_slice(&n.to_be_bytes());
            bytes.extend_from_slice(inner);
        }
    }
    Some(bytes)
}

/// Where the run of items starting at `i` ends: as many as fit in `chunk` bytes (at least none).
fn run_end(items: &[(usize, usize)], i: usize, chunk: usize) -> usize {
    let mut j = i;
    let mut size = 0;
    while let Some(&(a, b)) = items.get(j) {
        if size + (b - a) > chunk {
            break;
        }
        size += b - a;
        j += 1;
    }
    j
}

struct Walk<'a> {
    b: &'a [u8],
    /// JSON, MessagePack or CBOR.
    from: Format,
    to: Format,
    options: &'a EncodeOptions,
    limits: &'a Limits,
    chunk: usize,
    /// What the walk writes: held, or sent on to a sink every megabyte.
    out: Output<'a>,
    notes: Notes,
    /// Nodes so far, against the node limit.
    nodes: usize,
    /// Where the walk is.
    path: Vec<PathSegment>,
    /// The bytes of a run of items, reused.
    run_bytes: Vec<u8>,
    /// The spans being recorded, if any.
    spans: Option<Recording>,
    /// Whether the walk reads the input's own spans ([`spans_in_chunks`]) and writes nothing.
    reading: bool,
    /// While reading: a count of every value decoded (`Counting::count` of each chunk's value,
    /// plus one per container the walk lists itself), added up in `Counting::sum`.
    counting: Option<Counting>,
    /// JSON containers bigger than a chunk whose items were found while their parent's were
    /// listed, kept until the walk lists them (so their bytes are scanned once, not twice).
    listed: std::cell::RefCell<Listed>,
    /// Where the input's pages were last given back up to ([`Walk::passed`]).
    given_back: usize,
}

/// What [`spans_counting`] counts of the document's values: a count of one value and what is
/// below it, keys aside (two numbers, such as "of rarely used types" and "in all"), and the sum.
struct Counting {
    count: fn(&Value) -> (usize, usize),
    sum: std::rc::Rc<std::cell::Cell<(usize, usize)>>,
}

impl Counting {
    fn add(&self, (a, b): (usize, usize)) {
        let (x, y) = self.sum.get();
        self.sum.set((x + a, y + b));
    }
}

/// A span tree recorded as the walk goes, and where its next node goes.
struct Recording {
    builder: SpanTreeBuilder,
    /// The segment and key bytes of the node the walk records next.
    slot: (Segment, Option<Span>),
}

impl<'a> Walk<'a> {
    /// A walk of `bytes`, recording spans into `builder` if one is given; `None` for an input
    /// format the walk does not read.
    fn new(
        bytes: &'a [u8],
        from: Format,
        to: Format,
        options: &'a EncodeOptions,
        limits: &'a Limits,
        chunk: usize,
        builder: Option<SpanTreeBuilder>,
    ) -> Option<Walk<'a>> {
        if matches!(from, Format::Protobuf | Format::Avro) {
            return None;
        }
        Some(Walk {
            b: bytes,
            from,
            to,
            options,
            limits,
            chunk,
            out: Output::held(Vec::new()),
            notes: Notes::new(),
            nodes: 0,
            path: Vec::new(),
            run_bytes: Vec::new(),
            spans: builder.map(|builder| Recording {
                builder,
                slot: (Segment::Root, None),
            }),
            reading: false,
            counting: None,
            listed: std::cell::RefCell::new(Vec::new()),
            given_back: 0,
        })
    }

    /// Walks the whole input: its one item (after a JSON byte order mark), and nothing after it
    /// but white space.
    fn run_whole(self, to: Format) -> Option<Encoded> {
        let start = if self.from == Format::Json && self.b.starts_with(&[0xEF, 0xBB, 0xBF]) {
            3
        } else {
            0
        };
        // The node budget of the whole input, as the whole-document decode would have it.
        let limits = self.limits.for_input(self.b.len());
        let limits = &limits;
        let mut walk = Walk { limits, ..self };
        // An output sent to a sink holds room for what it sends at a time already.
        if !walk.reading && !walk.out.has_sink() {
            // About the output's size, so that it is not moved as it grows: JSON (with room
            // for the newline the CLI adds) takes up to half as much again as the binary
            // formats, which take less than JSON. Pages not written are never touched.
            let len = walk.b.len();
            walk.out.held = Vec::with_capacity(match to {
                Format::Json if walk.from == Format::Json => len + 1,
                Format::Json => len + len / 2 + 1,
                _ => len,
            });
        }
        let at = walk.skip_ws(start);
        let end = walk.value(at, 0)?;
        if walk.skip_ws(end) != walk.b.len() {
            return None;
        }
        walk.out.flush(0);
        if walk.out.failed() {
            return None;
        }
        Some(Encoded {
            format: to,
            bytes: walk.out.into_held(),
            spans: walk
                .spans
                .map_or_else(SpanTree::default, |r| r.builder.finish()),
            notes: walk.notes.into_vec(),
        })
    }

    /// Writes the value starting at `at` (at depth `depth`, the number of containers around it);
    /// returns where it ends.
    fn value(&mut self, at: usize, depth: usize) -> Option<usize> {
        let Some(map) = self.container(at) else {
            let end = self.skip_value(at)?;
            self.whole(at, end, depth)?;
            return Some(end);
        };
        // A container's end is looked for within one chunk only: a bigger one is walked, and
        // listing its children finds its end (the document is scanned once, not twice).
        if let Some(end) = self.end_within(at, self.chunk) {
            self.whole(at, end, depth)?;
            return Some(end);
        }
        self.walk(at, map, depth)
    }

    /// Writes the value at `at..end` (at depth `depth`).
    fn value_in(&mut self, at: usize, end: usize, depth: usize) -> Option<()> {
        match self.container(at) {
            Some(map) if end - at > self.chunk => (self.walk(at, map, depth)? == end).then_some(()),
            _ => self.whole(at, end, depth),
        }
    }

    /// Writes the map (or array) at `at` item by item; returns where it ends.
    fn walk(&mut self, at: usize, map: bool, depth: usize) -> Option<usize> {
        if depth >= self.limits.depth() || self.nodes >= self.limits.max_nodes {
            return None;
        }
        self.nodes += 1;
        if let Some(counting) = &self.counting {
            counting.add((0, 1));
        }
        let (children, end) = self.children(at, map)?;
        // Listing the children read the whole container; its pages come back as its items are
        // read.
        self.let_go(at, end);
        // Each child is a node at least: a container over the node limit goes the ordinary
        // way (which reports the limit) before any of it is converted.
        if self.nodes.saturating_add(children.len()) > self.limits.max_nodes {
            return None;
        }
        let start = self.here(at);
        self.header(map, children.len())?;
        let header_end = if self.reading {
            self.head_end(at)?
        } else {
            self.written()
        };
        if let Some(rec) = &mut self.spans {
            let (segment, key) = rec.slot;
            let kind = if map { Kind::Map } else { Kind::Array };
            rec.builder.open(kind, segment, key, start, header_end);
        }
        if !map {
            let items = children;
            let mut i = 0;
            while i < items.len() {
                if let Some(&(_, done)) = i.checked_sub(1).and_then(|k| items.get(k)) {
                    self.passed(done);
                }
                // A run of small items, as many as fit one chunk, is converted as one.
                let j = run_end(&items, i, self.chunk);
                if j - i >= 2 && self.converts_only() {
                    i = self.runs_in_parallel(&items, i, depth + 1)?;
                    continue;
                }
                if i > 0 {
                    self.json_punctuation(b',');
                }
                if j - i >= 2 {
                    self.run(&items[i..j], i, depth + 1)?;
                    i = j;
                    continue;
                }
                let (a, b) = items[i];
                self.path.push(PathSegment::Index(i));
                self.slot(Segment::Index(u32::try_from(i).ok()?), None);
                self.value_in(a, b, depth + 1)?;
                self.path.pop();
                i += 1;
            }
        } else {
            let entries = children;
            let mut keys = HashSet::with_capacity(entries.len());
            for (i, &(key_at, value_end)) in entries.iter().enumerate() {
                self.passed(key_at);
                let key_end = self.skip_value(key_at)?;
                let (key, value_at) = self.key(key_at)?;
                if !keys.insert(key.clone()) {
                    // The encoder's duplicate-key note is about the whole map: convert whole.
                    return None;
                }
                if i > 0 {
                    self.json_punctuation(b',');
                }
                let key_span = if self.reading {
                    Span::new(key_at, key_end)
                } else {
                    let written =
                        super::encode_fast(&Value::Text(key.clone()), self.to, self.options)
                            .ok()?;
                    let k = self.written();
                    self.out.extend_from_slice(&written.bytes);
                    Span::new(k, self.written())
                };
                self.json_punctuation(b':');
                if let Some(rec) = &mut self.spans {
                    rec.slot = (rec.builder.key(&key), Some(key_span));
                }
                self.path.push(PathSegment::Key(key.into_string()));
                self.value_in(value_at, value_end, depth + 1)?;
                self.path.pop();
            }
        }
        self.json_punctuation(if map { b'}' } else { b']' });
        let written = self.written();
        if let Some(rec) = &mut self.spans {
            let (payload_end, end) = if self.reading {
                // JSON's items end at the closing bracket; MessagePack's at the last item.
                let close = usize::from(self.from == Format::Json);
                (end - close, end)
            } else {
                let close = usize::from(self.to == Format::Json);
                (written - close, written)
            };
            rec.builder.close(payload_end, end);
        }
        Some(end)
    }

    /// Converts the array items `items` (from index `first` of their array, at depth `depth`)
    /// as one array of their own and writes its items: one decode and one encode for many small
    /// records instead of one each.
    fn run(&mut self, items: &[(usize, usize)], first: usize, depth: usize) -> Option<()> {
        let start = items.first()?.0;
        let bytes = self.run_of(items)?;
        if self.reading {
            let prefix = if self.from == Format::Json { 1 } else { 5 };
            let root = GraftRoot::Dropped(u32::try_from(first).ok()?);
            let read = self.read_grafted(&bytes, depth, true, start.wrapping_sub(prefix), root);
            self.run_bytes = bytes;
            return read;
        }
        let mut head = Vec::with_capacity(9);
        write_header(&mut head, self.to, false, items.len())?;
        let shift = self.written().wrapping_sub(head.len());
        let root = GraftRoot::Dropped(u32::try_from(first).ok()?);
        let converted = self.convert(&bytes, depth, true, shift, root);
        self.run_bytes = bytes;
        let (encoded, grafted) = converted?;
        self.place_run(encoded, grafted, items.len(), first)
    }

    /// The walk is done with the input before `to`: when the input is a mapped file, the pages
    /// read since the last giving back are given back every [`GIVE_BACK`] bytes
    /// ([`crate::mapped::let_go`]), so a pass over a large document does not leave all of it
    /// resident; and the output held goes to the sink, if there is one, every megabyte
    /// ([`Output::send_when_full`]).
    fn passed(&mut self, to: usize) {
        // A second pass over the same input (protobuf's encoding after its inference) starts
        // again from the top.
        if to < self.given_back {
            self.given_back = 0;
        }
        if to - self.given_back >= GIVE_BACK {
            self.let_go(self.given_back, to);
            self.given_back = to;
        }
        self.out.send_when_full();
    }

    /// Gives back the pages of the input's `from..to` if it is a mapped file (the walk reads them
    /// again when it needs them).
    fn let_go(&self, from: usize, to: usize) {
        if let Some(bytes) = self.b.get(from..to) {
            crate::mapped::let_go(bytes);
        }
    }

    /// Whether the walk only converts: no spans recorded, nothing read or counted. Then runs of
    /// items are converted on the worker threads ([`Walk::runs_in_parallel`]).
    fn converts_only(&self) -> bool {
        !self.reading && self.spans.is_none() && self.counting.is_none()
    }

    /// Converts the runs of array items from `items[i]` on (each of two items or more), a
    /// batch of them at once on the worker threads, and writes them in order with their notes,
    /// as [`Walk::run`] would one by one; returns the index of the first item not written.
    ///
    /// Each run is decoded within the node budget left before the batch; the batch's nodes are
    /// then added up and checked against the limit, so a document over it still goes the
    /// ordinary way.
    fn runs_in_parallel(
        &mut self,
        items: &[(usize, usize)],
        i: usize,
        depth: usize,
    ) -> Option<usize> {
        let most = rayon::current_num_threads().max(1) * RUNS_PER_THREAD;
        let mut runs = Vec::with_capacity(most);
        let mut k = i;
        while runs.len() < most {
            let j = run_end(items, k, self.chunk);
            if j - k < 2 {
                break;
            }
            runs.push((k, j));
            k = j;
        }
        let chunker = Chunker {
            b: self.b,
            from: self.from,
            to: self.to,
            options: self.options,
            limits: self.limits,
            nodes: self.nodes,
        };
        let converted: Vec<Option<(Encoded, usize)>> = runs
            .par_iter()
            .map(|&(a, b)| chunker.convert_run(items.get(a..b)?, depth))
            .collect();
        for (&(a, b), run) in runs.iter().zip(converted) {
            let (encoded, nodes) = run?;
            self.nodes = self.nodes.checked_add(nodes)?;
            if self.nodes > self.limits.max_nodes {
                return None;
            }
            if a > 0 {
                self.json_punctuation(b',');
            }
            self.place_run(encoded, false, b - a, a)?;
        }
        Some(k)
    }

    /// Writes the items of `encoded`, the conversion of a run of `n` array items that starts at
    /// index `first` of its array, and places its notes under the array's path; `grafted`: its
    /// spans are in the recording already ([`Walk::convert`]).
    fn place_run(&mut self, encoded: Encoded, grafted: bool, n: usize, first: usize) -> Option<()> {
        // The items' bytes, without the array's header (and JSON's closing bracket).
        let mut head = Vec::with_capacity(9);
        write_header(&mut head, self.to, false, n)?;
        let tail = usize::from(self.to == Format::Json);
        let at = (head.len(), self.written());
        self.out.extend_from_slice(
            encoded
                .bytes
                .get(head.len()..encoded.bytes.len().checked_sub(tail)?)?,
        );
        if let Some(rec) = self.spans.as_mut().filter(|_| !grafted) {
            rec.replay(&encoded.spans, at, Some(first));
        }
        for mut note in encoded.notes {
            let Some((PathSegment::Index(k), rest)) = note.path.segments().split_first() else {
                // A note about the run's own array: not one the document would have.
                return None;
            };
            let mut segments = self.path.clone();
            segments.push(PathSegment::Index(first + k));
            segments.extend(rest.iter().cloned());
            note.path = Path::from_segments(segments);
            self.notes.merge(note);
        }
        Some(())
    }

    /// Decodes `bytes` (a value `depth` containers deep in the document, or with `wrapped`, an
    /// array of such values the walk made around them: one level and one node more) within what
    /// is left of the limits and counts its nodes.
    fn read(&mut self, bytes: &[u8], depth: usize, wrapped: bool) -> Option<Value> {
        let (value, nodes, _) = decode_within(
            self.from,
            self.limits,
            self.nodes,
            bytes,
            (depth, wrapped),
            None,
            true,
        )?;
        self.counted(&value, nodes, wrapped)?;
        Some(value)
    }

    /// Decodes `bytes` as [`Walk::read`] does, its spans added to the recording in place: each
    /// of its offsets shifted by `shift` (wrapping), its root placed as `root` says.
    fn read_grafted(
        &mut self,
        bytes: &[u8],
        depth: usize,
        wrapped: bool,
        shift: usize,
        root: GraftRoot,
    ) -> Option<()> {
        if self.spans.is_none() {
            return self.read(bytes, depth, wrapped).map(|_| ());
        }
        // The value is read for its spans; only what counts values needs it whole.
        let keep = self.counting.is_some();
        let (value, nodes) = self.grafting(shift, root, |walk, builder| {
            let (value, nodes, builder) = decode_within(
                walk.from,
                walk.limits,
                walk.nodes,
                bytes,
                (depth, wrapped),
                Some(builder),
                keep,
            )?;
            Some(((value, nodes), builder?))
        })?;
        self.counted(&value, nodes, wrapped)
    }

    /// Runs `work` with the recording's builder grafting a part in
    /// ([`SpanTreeBuilder::graft`]: offsets shifted by `shift`, the root placed as `root`
    /// says), and puts the builder back when `work` gives it back; `None` without a recording
    /// or when `work` fails (the walk then gives up, builder and all).
    fn grafting<T>(
        &mut self,
        shift: usize,
        root: GraftRoot,
        work: impl FnOnce(&Self, SpanTreeBuilder) -> Option<(T, SpanTreeBuilder)>,
    ) -> Option<T> {
        let mut rec = self.spans.take()?;
        rec.builder.graft(shift, root);
        let (out, mut builder) = work(self, rec.builder)?;
        builder.end_graft();
        rec.builder = builder;
        self.spans = Some(rec);
        Some(out)
    }

    /// Adds a value the walk read, of `nodes` nodes, to the node count (and to what `counting`
    /// counts); `wrapped`: an array the walk made around a run of items, no value of the
    /// document.
    fn counted(&mut self, value: &Value, nodes: usize, wrapped: bool) -> Option<()> {
        self.nodes += nodes;
        if let Some(counting) = &self.counting {
            let (odd, all) = (counting.count)(value);
            counting.add((odd, all.checked_sub(usize::from(wrapped))?));
        }
        Some(())
    }

    /// Decodes `bytes` as [`Walk::read`] does and encodes the value. When the walk records
    /// spans, the output's are added to the recording in place ([`SpanTreeBuilder::graft`]:
    /// each offset shifted by `shift`, the root placed as `root` says) and the flag is `true`;
    /// the spans of a value too deeply nested to be encoded on this stack come in the
    /// encoding's own tree instead, for [`Recording::replay`].
    fn convert(
        &mut self,
        bytes: &[u8],
        depth: usize,
        wrapped: bool,
        shift: usize,
        root: GraftRoot,
    ) -> Option<(Encoded, bool)> {
        let value = self.read(bytes, depth, wrapped)?;
        if self.spans.is_none() {
            return Some((
                super::encode_fast(&value, self.to, self.options).ok()?,
                false,
            ));
        }
        if !super::is_shallow(&value) {
            return Some((super::encode(&value, self.to, self.options).ok()?, false));
        }
        let encoded = self.grafting(shift, root, |walk, builder| {
            super::encode_grafted(&value, walk.to, walk.options, builder)
        })?;
        Some((encoded, true))
    }

    /// Decodes and encodes `at..end` as one document.
    fn whole(&mut self, at: usize, end: usize, depth: usize) -> Option<()> {
        let b = self.b;
        // The value goes where the walk's slot says.
        let root = self
            .spans
            .as_ref()
            .map_or(GraftRoot::Slot(Segment::Root, None), |rec| {
                GraftRoot::Slot(rec.slot.0, rec.slot.1)
            });
        if self.reading {
            return self.read_grafted(&b[at..end], depth, false, at, root);
        }
        let shift = self.written();
        let (encoded, grafted) = self.convert(&b[at..end], depth, false, shift, root)?;
        self.out.extend_from_slice(&encoded.bytes);
        if let Some(rec) = self.spans.as_mut().filter(|_| !grafted) {
            rec.replay(&encoded.spans, (0, shift), None);
        }
        for mut note in encoded.notes {
            let mut segments = self.path.clone();
            segments.extend(note.path.segments().iter().cloned());
            note.path = Path::from_segments(segments);
            self.notes.merge(note);
        }
        Some(())
    }

    /// The text key starting at `at` and where its value starts; `None` for a key that is no
    /// text.
    fn key(&self, at: usize) -> Option<(crate::model::CompactText, usize)> {
        let end = self.skip_value(at)?;
        let key = match super::decode(&self.b[at..end], self.from, &DecodeOptions::default()) {
            Ok(doc) => match doc.value {
                Value::Text(k) => k,
                _ => return None,
            },
            Err(_) => return None,
        };
        let value_at = match self.from {
            Format::Json => skip_ws(self.b, skip_ws(self.b, end) + 1),
            _ => end,
        };
        Some((key, value_at))
    }

    /// The items `items` (whole items of one array, in order) as an array of their own, in the
    /// walk's reused buffer (the caller puts it back in `run_bytes`).
    fn run_of(&mut self, items: &[(usize, usize)]) -> Option<Vec<u8>> {
        run_bytes(
            self.b,
            self.from,
            items,
            std::mem::take(&mut self.run_bytes),
        )
    }

    /// Where the node for the input's item at `at` starts: there when reading, else where the
    /// output goes on.
    fn here(&self, at: usize) -> usize {
        if self.reading {
            at
        } else {
            self.written()
        }
    }

    /// How many bytes of output there are: written to the sink, and held.
    fn written(&self) -> usize {
        self.out.len()
    }

    /// Where the header of the input's container at `at` ends.
    fn head_end(&self, at: usize) -> Option<usize> {
        match self.from {
            Format::Json => Some(at + 1),
            _ => self.head(at).map(|(_, end)| end),
        }
    }

    /// The head of the binary (MessagePack or CBOR) item at `at`, and where it ends.
    fn head(&self, at: usize) -> Option<(Head, usize)> {
        binary_head(self.from, self.b, at)
    }

    /// Writes JSON's `c` (a comma, colon or closing bracket) when the walk writes JSON.
    fn json_punctuation(&mut self, c: u8) {
        if !self.reading && self.to == Format::Json {
            self.out.held.push(c);
        }
    }

    /// Sets the segment and key bytes of the next node recorded.
    fn slot(&mut self, segment: Segment, key: Option<Span>) {
        if let Some(rec) = &mut self.spans {
            rec.slot = (segment, key);
        }
    }

    /// Where the input's next item starts from `at` (JSON's white space skipped).
    fn skip_ws(&self, at: usize) -> usize {
        match self.from {
            Format::Json => skip_ws(self.b, at),
            _ => at,
        }
    }

    /// Where the item starting at `at` ends.
    fn skip_value(&self, at: usize) -> Option<usize> {
        match self.from {
            Format::Json => skip_value(self.b, at),
            from => binary_skip_within(from, self.b, at, usize::MAX),
        }
    }

    /// Whether the item at `at` is a map (`Some(true)`), an array (`Some(false)`) or neither.
    fn container(&self, at: usize) -> Option<bool> {
        let c = *self.b.get(at)?;
        match self.from {
            Format::Json => match c {
                b'{' => Some(true),
                b'[' => Some(false),
                _ => None,
            },
            _ => match self.head(at)? {
                (Head::Map(_), _) => Some(true),
                (Head::Array(_), _) => Some(false),
                _ => None,
            },
        }
    }

    /// Where each item of the array at `at` starts and ends (for a map: where each key starts
    /// and its value ends), and where the array ends.
    fn children(&self, at: usize, map: bool) -> Option<(Vec<(usize, usize)>, usize)> {
        if self.from == Format::Json {
            let mut listed = self.listed.borrow_mut();
            if let Some(k) = listed.iter().position(|(start, ..)| *start == at) {
                let (_, items, end) = listed.swap_remove(k);
                return Some((items, end));
            }
            return children_listing(self.b, at, map, self.chunk, 0, &mut listed);
        }
        let (head, mut i) = self.head(at)?;
        let n = match head {
            Head::Map(n) | Head::Array(n) => n,
            Head::Leaf(_) | Head::Tag => return None,
        };
        let mut out = Vec::with_capacity(usize::try_from(n).ok()?.min(self.b.len() - i));
        for _ in 0..n {
            let start = i;
            i = self.skip_value(i)?;
            if map {
                i = self.skip_value(i)?;
            }
            out.push((start, i));
        }
        Some((out, i))
    }

    /// Where the item at `at` ends, when that is within `max` bytes of it.
    fn end_within(&self, at: usize, max: usize) -> Option<usize> {
        let end = match self.from {
            Format::Json => skip_value_within(self.b, at, max),
            from => binary_skip_within(from, self.b, at, max),
        }?;
        (end - at <= max).then_some(end)
    }

    /// Writes the header of an array or map of `n` items (nothing when reading).
    fn header(&mut self, map: bool, n: usize) -> Option<()> {
        if self.reading {
            return Some(());
        }
        write_header(&mut self.out.held, self.to, map, n)
    }
}

impl Recording {
    /// Adds the nodes of `tree` (a chunk's, whose offset `from` is the document's `to`): its
    /// root in the walk's slot, or with `run`, the root left out (the array the walk made around
    /// a run of items, whose header may be longer than the document's array's: `from` is then
    /// past `to`) and its items numbered from `run`'s index on. Every node replayed lies at or
    /// after `from`.
    fn replay(&mut self, tree: &SpanTree, (from, to): (usize, usize), run: Option<usize>) {
        let at = |offset: usize| offset - from + to;
        let moved = |s: Span| Span::new(at(s.start), at(s.end));
        // The open containers: where their subtrees end, and their payload's and bytes' ends.
        let mut open: Vec<(u32, usize, usize)> = Vec::new();
        // The chunk's key numbers in the builder, each interned once (in the order first met,
        // as interning every key would number them).
        let mut keys: Vec<Option<Segment>> = Vec::new();
        for (i, node) in tree.nodes().enumerate() {
            let id = i as u32;
            while let Some(&(subtree_end, payload_end, end)) = open.last() {
                if subtree_end > id {
                    break;
                }
                open.pop();
                self.builder.close(payload_end, end);
            }
            if i == 0 && run.is_some() {
                continue;
            }
            let (segment, key) = if i == 0 {
                self.slot
            } else {
                let segment = match node.segment {
                    Segment::Key(k) => match keys.get(k as usize) {
                        Some(&Some(segment)) => segment,
                        _ => {
                            let segment = self.builder.key(tree.key_text(k));
                            let k = k as usize;
                            if keys.len() <= k {
                                keys.resize(k + 1, None);
                            }
                            keys[k] = Some(segment);
                            segment
                        }
                    },
                    Segment::OtherKey(k) => self.builder.other_key(tree.key_text(k)),
                    Segment::Index(n) if node.parent == Some(NodeId(0)) => match run {
                        Some(first) => Segment::Index(n + first as u32),
                        None => Segment::Index(n),
                    },
                    s => s,
                };
                (segment, node.key.map(moved))
            };
            let span = moved(node.span);
            if node.kind.is_container() || node.subtree_end > id + 1 {
                self.builder
                    .open(node.kind, segment, key, span.start, at(node.header_end));
                open.push((node.subtree_end, at(node.payload.end), span.end));
            } else {
                self.builder.leaf(
                    node.kind,
                    segment,
                    key,
                    span,
                    at(node.header_end),
                    moved(node.payload),
                );
            }
        }
        while let Some((_, payload_end, end)) = open.pop() {
            self.builder.close(payload_end, end);
        }
    }
}

/// The header of an array or map of `n` items in `to`, as the encoders write it.
fn write_header(out: &mut Vec<u8>, to: Format, map: bool, n: usize) -> Option<()> {
    match to {
        Format::Json => out.push(if map { b'{' } else { b'[' }),
        Format::MessagePack => {
            let (fix, w16, w32) = if map {
                (0x80, 0xde, 0xdf)
            } else {
                (0x90, 0xdc, 0xdd)
            };
            if n < 16 {
                out.push(fix | n as u8);
            } else if let Ok(n) = u16::try_from(n) {
                out.push(w16);
                out.extend_from_slice(&n.to_be_bytes());
            } else {
                out.push(w32);
                out.extend_from_slice(&u32::try_from(n).ok()?.to_be_bytes());
            }
        }
        Format::Cbor => {
            let major = if map { 0xa0 } else { 0x80 };
            let n = n as u64;
            if n < 24 {
                out.push(major | n as u8);
            } else if let Ok(n) = u8::try_from(n) {
                out.extend_from_slice(&[major | 24, n]);
            } else if let Ok(n) = u16::try_from(n) {
                out.push(major | 25);
                out.extend_from_slice(&n.to_be_bytes());
            } else if let Ok(n) = u32::try_from(n) {
                out.push(major | 26);
                out.extend_from_slice(&n.to_be_bytes());
            } else {
                out.push(major | 27);
                out.extend_from_slice(&n.to_be_bytes());
            }
        }
        Format::Protobuf | Format::Avro => return None,
    }
    Some(())
}

/// What a MessagePack or CBOR item's head says: a map or array of so many entries or items, a
/// scalar of so many bytes after its head, or (CBOR) a tag, which one item follows.
enum Head {
    Map(u64),
    Array(u64),
    Leaf(u64),
    Tag,
}

/// The head of the `from` (MessagePack or CBOR) item at `at`, and where the head ends.
fn binary_head(from: Format, b: &[u8], at: usize) -> Option<(Head, usize)> {
    match from {
        Format::Cbor => cbor_head(b, at),
        _ => msgpack_head(b, at),
    }
}

/// The head of the CBOR item at `at`; `None` past the end, for the reserved additional
/// information values, and for an indefinite length or a break (which the walk leaves to the
/// ordinary decode).
fn cbor_head(b: &[u8], at: usize) -> Option<(Head, usize)> {
    let c = *b.get(at)?;
    let be = |n: usize| -> Option<u64> {
        let bytes = b.get(at + 1..at + 1 + n)?;
        Some(bytes.iter().fold(0u64, |acc, &x| acc << 8 | u64::from(x)))
    };
    let (argument, end) = match c & 0x1f {
        info @ 0..=23 => (u64::from(info), at + 1),
        24 => (be(1)?, at + 2),
        25 => (be(2)?, at + 3),
        26 => (be(4)?, at + 5),
        27 => (be(8)?, at + 9),
        _ => return None,
    };
    let head = match c >> 5 {
        2 | 3 => Head::Leaf(argument),
        4 => Head::Array(argument),
        5 => Head::Map(argument),
        6 => Head::Tag,
        // Integers, simple values and floats: the head holds them.
        _ => Head::Leaf(0),
    };
    Some((head, end))
}

/// The head of the MessagePack item at `at`; `None` past the end or for the unused byte 0xc1.
fn msgpack_head(b: &[u8], at: usize) -> Option<(Head, usize)> {
    let c = *b.get(at)?;
    let be = |n: usize| -> Option<u64> {
        let bytes = b.get(at + 1..at + 1 + n)?;
        Some(bytes.iter().fold(0u64, |acc, &x| acc << 8 | u64::from(x)))
    };
    let head = match c {
        0x00..=0x7f | 0xc0 | 0xc2 | 0xc3 | 0xe0..=0xff => (Head::Leaf(0), at + 1),
        0x80..=0x8f => (Head::Map(u64::from(c & 0x0f)), at + 1),
        0x90..=0x9f => (Head::Array(u64::from(c & 0x0f)), at + 1),
        0xa0..=0xbf => (Head::Leaf(u64::from(c & 0x1f)), at + 1),
        0xc1 => return None,
        0xc4 | 0xd9 => (Head::Leaf(be(1)?), at + 2),
        0xc5 | 0xda => (Head::Leaf(be(2)?), at + 3),
        0xc6 | 0xdb => (Head::Leaf(be(4)?), at + 5),
        0xc7 => (Head::Leaf(be(1)? + 1), at + 2),
        0xc8 => (Head::Leaf(be(2)? + 1), at + 3),
        0xc9 => (Head::Leaf(be(4)? + 1), at + 5),
        0xca => (Head::Leaf(4), at + 1),
        0xcb => (Head::Leaf(8), at + 1),
        0xcc | 0xd0 => (Head::Leaf(1), at + 1),
        0xcd | 0xd1 => (Head::Leaf(2), at + 1),
        0xce | 0xd2 => (Head::Leaf(4), at + 1),
        0xcf | 0xd3 => (Head::Leaf(8), at + 1),
        0xd4..=0xd8 => (Head::Leaf(1 + (1u64 << (c - 0xd4))), at + 1),
        0xdc => (Head::Array(be(2)?), at + 3),
        0xdd => (Head::Array(be(4)?), at + 5),
        0xde => (Head::Map(be(2)?), at + 3),
        0xdf => (Head::Map(be(4)?), at + 5),
    };
    Some(head)
}

/// Where the `from` (MessagePack or CBOR) item starting at `start` ends, by its heads only (the
/// decoder checks the rest when the item is converted); `None` once it runs past `max` bytes.
fn binary_skip_within(from: Format, b: &[u8], start: usize, max: usize) -> Option<usize> {
    let mut at = start;
    // Items still to skip; every item takes at least a byte, so the walk ends with the bytes.
    let mut pending: u64 = 1;
    while pending > 0 {
        pending -= 1;
        let (head, end) = binary_head(from, b, at)?;
        at = match head {
            Head::Leaf(n) => end.checked_add(usize::try_from(n).ok()?)?,
            Head::Array(n) => {
                pending = pending.checked_add(n)?;
                end
            }
            Head::Map(n) => {
                pending = pending.checked_add(n.checked_mul(2)?)?;
                end
            }
            Head::Tag => {
                pending = pending.checked_add(1)?;
                end
            }
        };
        if at > b.len() || at - start > max {
            return None;
        }
    }
    Some(at)
}

/// Where the string whose opening quote is at `at` ends (after its closing quote).
fn skip_string(b: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    loop {
        i = skip_plain(b, i);
        match *b.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// Where the value starting at `at` ends, by its brackets and quotes only: the decoder checks
/// the rest when the value is converted.
fn skip_value(b: &[u8], at: usize) -> Option<usize> {
    skip_value_within(b, at, usize::MAX)
}

/// [`skip_value`], giving up (`None`) once a container runs past `max` bytes (a string inside
/// it is scanned whole first).
fn skip_value_within(b: &[u8], at: usize, max: usize) -> Option<usize> {
    match *b.get(at)? {
        b'"' => skip_string(b, at),
        b'[' | b'{' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                if i - at > max {
                    return None;
                }
                match *b.get(i)? {
                    b'"' => {
                        i = skip_string(b, i)?;
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while let Some(&c) = b.get(i) {
                if matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                i += 1;
            }
            (i > at).then_some(i)
        }
    }
}

/// JSON containers found bigger than a chunk, with their items: where each starts, where each
/// of its items starts and ends, and where it ends.
type Listed = Vec<(usize, Vec<(usize, usize)>, usize)>;

/// How many levels of containers bigger than a chunk [`children_listing`] lists below the one
/// it was asked for; deeper ones are scanned again when the walk reaches them.
const LISTED_DEPTH: usize = 8;

/// Where each item of the JSON array opening at `at` starts and ends (for a map: where each key
/// starts and its value ends), checking the separators between them, and where it ends; the
/// container is `depth` levels below the one the walk asked for. A child container that runs past `chunk` bytes is listed the same way (up to
/// [`LISTED_DEPTH`] levels) and kept in `listed`, so the walk, which lists it next, does not
/// scan its bytes a second time.
fn children_listing(
    b: &[u8],
    at: usize,
    map: bool,
    chunk: usize,
    depth: usize,
    listed: &mut Listed,
) -> Option<(Vec<(usize, usize)>, usize)> {
    let value_end = |i: usize, listed: &mut Listed| -> Option<usize> {
        let c = *b.get(i)?;
        if depth >= LISTED_DEPTH || !matches!(c, b'[' | b'{') {
            return skip_value(b, i);
        }
        if let Some(end) = skip_value_within(b, i, chunk) {
            return Some(end);
        }
        let (items, end) = children_listing(b, i, c == b'{', chunk, depth + 1, listed)?;
        listed.push((i, items, end));
        Some(end)
    };
    let close = if map { b'}' } else { b']' };
    let mut out = Vec::new();
    let mut i = skip_ws(b, at + 1);
    if b.get(i) == Some(&close) {
        return Some((out, i + 1));
    }
    loop {
        let start = i;
        if map {
            if b.get(i) != Some(&b'"') {
                return None;
            }
            i = skip_ws(b, skip_string(b, i)?);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = skip_ws(b, i + 1);
        }
        let end = value_end(i, listed)?;
        out.push((start, end));
        i = skip_ws(b, end);
        match *b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            c if c == close => return Some((out, i + 1)),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode, encode_fast, encode_like, FloatPolicy};

    /// Each walk over a mapped document gives its pages back as it goes: after reading its
    /// spans, and after the two passes of its protobuf encoding, only a few of the file's
    /// megabytes are still resident, and what the walks made is what they make of bytes in
    /// memory.
    #[cfg(target_os = "linux")]
    #[test]
    fn walks_over_a_mapped_file_give_its_pages_back() -> std::io::Result<()> {
        use std::fmt::Write as _;
        let mut doc = String::from(r#"{"records": ["#);
        let mut i = 0u64;
        while doc.len() < 12 << 20 {
            if i > 0 {
                doc.push(',');
            }
            let _ = write!(
                doc,
                r#"{{"id": {i}, "name": "record {i}", "score": {}.5, "tags": ["a", "b{}"]}}"#,
                i % 1000,
                i % 7
            );
            i += 1;
        }
        doc.push_str("]}");
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("records.json");
        std::fs::write(&path, &doc)?;
        let mapping = crate::mapped::Mapping::map(&std::fs::File::open(&path)?)?;
        let bytes = mapping.bytes();
        let limits = Limits::default();
        let resident = || {
            mapping
                .resident_kib()
                .expect("the mapping in /proc/self/smaps")
        };
        // Read whole first (as a check of the walks' results), then given back.
        let whole_spans = spans_in_chunks(doc.as_bytes(), Format::Json, &limits, CHUNK);
        assert!(bytes.iter().filter(|&&b| b == b'{').count() > 100_000);
        assert!(
            resident() >= 12 << 10,
            "the whole file read: {} KiB",
            resident()
        );
        crate::mapped::let_go(bytes);

        let spans = spans_in_chunks(bytes, Format::Json, &limits, CHUNK);
        assert!(spans.is_some());
        assert!(spans == whole_spans, "the same spans from the mapped file");
        let most = 3 * (GIVE_BACK as u64 >> 10);
        assert!(
            resident() <= most,
            "{} KiB left after the spans",
            resident()
        );

        let options = EncodeOptions::default();
        // MessagePack written to a sink as it goes: the bytes and spans held whole, and no
        // more than a few megabytes of the file resident.
        let to_msgpack = |sink: Option<&mut (dyn std::io::Write + 'static)>| {
            let like = spans.as_ref();
            transcode_with_spans(
                bytes,
                Format::Json,
                Format::MessagePack,
                &options,
                &limits,
                CHUNK,
                Spanned { like, sink },
            )
        };
        let held = to_msgpack(None).expect("the walk applies");
        let mut sink = Vec::new();
        let streamed = to_msgpack(Some(&mut sink)).expect("the walk applies");
        assert!(sink.len() > 2 * GIVE_BACK, "written in several pieces");
        assert!(streamed.bytes.is_empty() && sink == held.bytes);
        assert!(streamed.spans == held.spans && streamed.notes == held.notes);
        assert!(
            resident() <= most,
            "{} KiB left after MessagePack",
            resident()
        );
        // A sink that fails gives no output.
        struct Full;
        impl std::io::Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::StorageFull.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        assert!(to_msgpack(Some(&mut Full)).is_none());

        // Protobuf's two passes over the mapped file, its output sent to a sink as it goes;
        // and the same walk of the bytes in memory, its output held.
        let mut sink = Vec::new();
        let to_protobuf = |bytes: &[u8], sink: Option<&mut (dyn std::io::Write + 'static)>| {
            protobuf_in_chunks(bytes, Format::Json, &options, &limits, CHUNK, sink)
        };
        let mapped = to_protobuf(bytes, Some(&mut sink));
        assert!(resident() <= most, "{} KiB left after protobuf", resident());
        let in_memory = to_protobuf(doc.as_bytes(), None);
        match (mapped, in_memory) {
            (Some(Ok(a)), Some(Ok(b))) => {
                assert!(sink.len() > crate::codec::output::SEND_EVERY);
                assert!(a.bytes.is_empty() && sink == b.bytes);
                assert!(a.spans == b.spans && a.notes == b.notes);
            }
            other => panic!("protobuf by the walk: {other:?}"),
        }
        assert!(to_protobuf(bytes, Some(&mut Full)).is_none());
        Ok(())
    }

    #[test]
    fn big_children_are_listed_once_with_the_items_a_second_scan_finds() {
        let doc = br#"{"a": [1, [2, 3, 4], {"k": [5, 6]}], "b": "x", "c": {"d": [7, 8, 9]}}"#;
        let mut listed = Vec::new();
        let (entries, end) =
            children_listing(doc, 0, true, 4, 0, &mut listed).expect("a well-formed document");
        assert_eq!(end, doc.len());
        assert_eq!(entries.len(), 3);
        // Every container over 4 bytes below the root is listed, inner ones before the one
        // around them, with the items that listing it on its own finds.
        let starts: Vec<u8> = listed.iter().map(|(at, ..)| doc[*at]).collect();
        assert_eq!(starts, b"[[{[[{".to_vec());
        for (at, items, end) in &listed {
            let alone =
                children_listing(doc, *at, doc[*at] == b'{', usize::MAX, 0, &mut Vec::new());
            assert_eq!(alone, Some((items.clone(), *end)), "container at {at}");
        }
        // Past the listing depth, containers are scanned, not listed.
        let deep = b"[[[[[[[[[[[[1, 2]]]]]]]]]]]]";
        let mut listed = Vec::new();
        children_listing(deep, 0, false, 1, 0, &mut listed).expect("a well-formed array");
        assert_eq!(listed.len(), LISTED_DEPTH);
    }

    /// The walk's bytes and notes against converting the whole document, for every chunk size
    /// from "every container walked" to "one chunk".
    fn same_as_whole(name: &str, bytes: &[u8]) -> usize {
        same_as_whole_from(name, bytes, Format::Json)
    }

    /// Every node of `tree`, its key segments as their text.
    fn nodes_of(tree: &SpanTree) -> Vec<(String, crate::model::Node)> {
        tree.nodes()
            .enumerate()
            .map(|(i, n)| {
                let segment = format!("{:?}", tree.path_segment(NodeId(i as u32)));
                let n = crate::model::Node {
                    segment: Segment::Root,
                    ..n
                };
                (segment, n)
            })
            .collect()
    }

    fn same_as_whole_from(name: &str, bytes: &[u8], from: Format) -> usize {
        let limits = Limits::default();
        let options = DecodeOptions::default();
        let Ok(doc) = decode(bytes, from, &options) else {
            for to in [Format::Json, Format::MessagePack, Format::Cbor] {
                let got =
                    transcode_in_chunks(bytes, from, to, &EncodeOptions::default(), &limits, 0);
                assert!(
                    got.is_none(),
                    "{name}: an input the decoder refuses was converted"
                );
            }
            assert!(
                spans_in_chunks(bytes, from, &limits, 0).is_none(),
                "{name}: an input the decoder refuses was given spans"
            );
            return 0;
        };
        let mut walked = 0;
        let want = nodes_of(&doc.spans);
        for chunk in [0, 16, 4096, CHUNK] {
            if let Some(tree) = spans_in_chunks(bytes, from, &limits, chunk) {
                assert_eq!(
                    nodes_of(&tree),
                    want,
                    "{name}, chunk {chunk}: the input's spans"
                );
                walked += 1;
            }
        }
        for to in [Format::Json, Format::MessagePack, Format::Cbor] {
            for floats in [FloatPolicy::Shortest, FloatPolicy::Keep] {
                let options = EncodeOptions {
                    floats,
                    ..EncodeOptions::default()
                };
                let want = encode_fast(&doc.value, to, &options).ok();
                let want_spanned = encode_like(&doc.value, to, &options, &doc.spans).ok();
                for chunk in [0, 16, 4096, CHUNK] {
                    let got = transcode_in_chunks(bytes, from, to, &options, &limits, chunk);
                    let spanned = transcode_with_spans(
                        bytes,
                        from,
                        to,
                        &options,
                        &limits,
                        chunk,
                        Spanned {
                            like: Some(&doc.spans),
                            sink: None,
                        },
                    );
                    assert_eq!(
                        got.is_some(),
                        spanned.is_some(),
                        "{name} as {to:?}, chunk {chunk}: walked with spans and without alike"
                    );
                    let (Some(got), Some(spanned)) = (got, spanned) else {
                        continue;
                    };
                    let want = want
                        .as_ref()
                        .expect("the walk wrote what the encoder refused");
                    assert!(
                        got.bytes == want.bytes,
                        "{name} as {to:?}, chunk {chunk}: bytes"
                    );
                    assert_eq!(
                        got.notes, want.notes,
                        "{name} as {to:?}, chunk {chunk}: notes"
                    );
                    let want_spanned = want_spanned.as_ref().expect("encoded with spans");
                    assert!(spanned.bytes == want.bytes, "{name}: bytes with spans");
                    assert_eq!(spanned.notes, want.notes, "{name}: notes with spans");
                    assert_eq!(
                        nodes_of(&spanned.spans),
                        nodes_of(&want_spanned.spans),
                        "{name} as {to:?}, chunk {chunk}: spans"
                    );
                    assert_eq!(
                        spanned.spans.shares_shape_with(&doc.spans),
                        want_spanned.spans.shares_shape_with(&doc.spans),
                        "{name} as {to:?}, chunk {chunk}: the shape shared"
                    );
                    walked += 1;
                }
            }
        }
        walked
    }

    /// Every JSON file of the samples, json-bench and JSONTestSuite's parsing tests.
    fn json_files() -> Vec<std::path::PathBuf> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in [
            "samples",
            "tests/data/json-bench",
            "tests/data/json-test-suite/test_parsing",
        ] {
            for entry in std::fs::read_dir(root.join(dir)).expect(dir) {
                let path = entry.expect("entry").path();
                if path.extension().is_some_and(|e| e == "json") {
                    files.push(path);
                }
            }
        }
        files
    }

    #[test]
    fn writes_what_the_encoder_writes_for_every_sample_and_corpus_file() {
        let files = json_files();
        let mut walked = 0;
        for path in &files {
            let bytes = std::fs::read(path).expect("file");
            walked += same_as_whole(&path.display().to_string(), &bytes);
        }
        assert!(
            files.len() > 300 && walked > 1000,
            "{} files, {walked} walks",
            files.len()
        );
    }

    /// The protobuf walk against encoding the whole document, as [`encode`] does it.
    fn protobuf_as_whole(name: &str, bytes: &[u8], from: Format, options: &EncodeOptions) -> usize {
        let limits = Limits::default();
        let Ok(doc) = decode(bytes, from, &DecodeOptions::default()) else {
            return 0;
        };
        let want = crate::codec::encode(&doc.value, Format::Protobuf, options);
        let mut walked = 0;
        for chunk in [0, 16, 4096, CHUNK] {
            match (
                protobuf_in_chunks(bytes, from, options, &limits, chunk, None),
                &want,
            ) {
                (None, _) => {}
                (Some(Ok(got)), Ok(want)) => {
                    assert!(got.bytes == want.bytes, "{name}, chunk {chunk}: bytes");
                    assert_eq!(got.notes, want.notes, "{name}, chunk {chunk}: notes");
                    assert_eq!(
                        nodes_of(&got.spans),
                        nodes_of(&want.spans),
                        "{name}, chunk {chunk}: spans"
                    );
                    walked += 1;
                }
                (Some(Err(got)), Err(want)) => {
                    assert_eq!(
                        (&got.path, &got.message),
                        (&want.path, &want.message),
                        "{name}, chunk {chunk}: the error"
                    );
                    walked += 1;
                }
                (Some(got), want) => panic!(
                    "{name}, chunk {chunk}: the walk gave {:?}, the whole encode {:?}",
                    got.map(|e| e.bytes.len()),
                    want.as_ref().map(|e| e.bytes.len())
                ),
            }
        }
        walked
    }

    #[test]
    fn protobuf_walk_writes_what_the_encoder_writes() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let files = json_files();
        let mut walked = 0;
        for path in &files {
            let bytes = std::fs::read(path).expect("file");
            let name = path.display().to_string();
            walked += protobuf_as_whole(&name, &bytes, Format::Json, &EncodeOptions::default());
        }
        let inferred = walked;
        // With the message types the samples come with, and a key the type does not have.
        for (proto, json, message) in [
            (
                "transactions.proto",
                "transactions-1k.json",
                "TransactionHistory",
            ),
            ("orders-api.proto", "orders-api.json", ""),
            ("user-profile.proto", "user-profile.json", ""),
        ] {
            let schema =
                crate::codec::protobuf::schema::Schema::load(root.join("samples").join(proto))
                    .expect("schema");
            let bytes = std::fs::read(root.join("samples").join(json)).expect("file");
            let names = schema.message_names();
            for name in names
                .iter()
                .filter(|n| message.is_empty() || n.ends_with(message))
            {
                let options = EncodeOptions {
                    message: schema.message(name).ok(),
                    ..EncodeOptions::default()
                };
                walked +=
                    protobuf_as_whole(&format!("{json} as {name}"), &bytes, Format::Json, &options);
                let mut extra = bytes.clone();
                let close = extra.iter().rposition(|&c| c == b'}').expect("a map");
                extra.splice(close..close, br#","not_a_field":[1,2]"#.iter().copied());
                walked += protobuf_as_whole(
                    &format!("{json}+ as {name}"),
                    &extra,
                    Format::Json,
                    &options,
                );
            }
        }
        // Every chunk size of every schema and sample is walked.
        assert!(
            files.len() > 300 && inferred >= 300 && walked - inferred >= 4 * 2 * 3,
            "{} files, {inferred} walks with an inferred schema, {walked} in all",
            files.len()
        );
    }

    /// MessagePack input: the samples, every item of the MessagePack test suite, each wrapped in
    /// an array and a map so that the walk steps over it, and every JSON file above written as
    /// MessagePack.
    /// Inputs of `format` (MessagePack or CBOR) to walk: the samples of that format, `items`
    /// (a test suite's, named `suite`) in one array, as the values of one map and each on its
    /// own, and every JSON file of the samples and json-bench encoded as `format`.
    fn binary_inputs(format: Format, suite: &str, items: Vec<Vec<u8>>) -> Vec<(String, Vec<u8>)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let extension = if format == Format::Cbor {
            "cbor"
        } else {
            "msgpack"
        };
        let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
        for entry in std::fs::read_dir(root.join("samples")).expect("samples") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == extension) {
                inputs.push((
                    path.display().to_string(),
                    std::fs::read(&path).expect("file"),
                ));
            }
        }
        // An array and a map with a four-byte count, and keys of short text.
        let (array_head, map_head, text_head) = if format == Format::Cbor {
            (0x9a, 0xba, 0x60)
        } else {
            (0xdd, 0xdf, 0xa0)
        };
        let count = (items.len() as u32).to_be_bytes();
        let mut array = vec![array_head];
        array.extend_from_slice(&count);
        let mut map = vec![map_head];
        map.extend_from_slice(&count);
        for (i, item) in items.iter().enumerate() {
            array.extend_from_slice(item);
            let key = format!("k{i}");
            map.push(text_head | key.len() as u8);
            map.extend_from_slice(key.as_bytes());
            map.extend_from_slice(item);
        }
        inputs.push((format!("{suite} as an array"), array));
        inputs.push((format!("{suite} as a map"), map));
        for (i, item) in items.into_iter().enumerate() {
            inputs.push((format!("{suite} item {i}"), item));
        }
        for dir in ["samples", "tests/data/json-bench"] {
            for entry in std::fs::read_dir(root.join(dir)).expect(dir) {
                let path = entry.expect("entry").path();
                if path.extension().is_some_and(|e| e == "json") {
                    let bytes = std::fs::read(&path).expect("file");
                    if let Ok(doc) = decode(&bytes, Format::Json, &DecodeOptions::default()) {
                        let encoded = encode_fast(&doc.value, format, &EncodeOptions::default())
                            .expect("encodes");
                        let name = format!("{} as {}", path.display(), format.title());
                        inputs.push((name, encoded.bytes));
                    }
                }
            }
        }
        inputs
    }

    #[test]
    fn walks_messagepack_as_the_whole_conversion_writes_it() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let suite = root.join("tests/data/msgpack-test-suite/dist/msgpack-test-suite.json");
        let suite: serde_json::Value =
            serde_json::from_slice(&std::fs::read(suite).expect("suite")).expect("JSON");
        let mut items = Vec::new();
        for cases in suite.as_object().expect("object").values() {
            for case in cases.as_array().expect("cases") {
                for hex in case["msgpack"].as_array().expect("encodings") {
                    let hex = hex.as_str().expect("hex");
                    let bytes: Vec<u8> = hex
                        .split('-')
                        .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
                        .collect();
                    items.push(bytes);
                }
            }
        }
        let inputs = binary_inputs(Format::MessagePack, "suite", items);
        let mut walked = 0;
        for (name, bytes) in &inputs {
            walked += same_as_whole_from(name, bytes, Format::MessagePack);
        }
        assert!(
            inputs.len() > 100 && walked > 500,
            "{} inputs, {walked} walks",
            inputs.len()
        );
        // Cut short, and with bytes after the item: declined.
        let (_, whole) = &inputs[0];
        let plain = EncodeOptions::default();
        let limits = Limits::default();
        let cut = &whole[..whole.len() - 1];
        assert!(
            transcode_in_chunks(cut, Format::MessagePack, Format::Json, &plain, &limits, 0)
                .is_none()
        );
        let mut more = whole.clone();
        more.push(0xc0);
        assert!(
            transcode_in_chunks(&more, Format::MessagePack, Format::Json, &plain, &limits, 0)
                .is_none()
        );
        // A map walked here with a key that is not text.
        let int_key = [0x81, 0x01, 0x91, 0x02];
        assert!(transcode_in_chunks(
            &int_key,
            Format::MessagePack,
            Format::Json,
            &plain,
            &limits,
            0
        )
        .is_none());
    }

    /// A CBOR document walks as MessagePack does: the samples, RFC 8949's appendix A vectors (in
    /// one array, as the values of one map, and each on its own: tags, floats of every width,
    /// simple values, indefinite lengths, which the walk leaves to the ordinary way), and every
    /// JSON file of the samples and json-bench as CBOR, at every chunk size.
    #[test]
    fn walks_cbor_as_the_whole_conversion_writes_it() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let vectors = root.join("tests/data/cbor-test-vectors/appendix_a.json");
        let vectors: serde_json::Value =
            serde_json::from_slice(&std::fs::read(vectors).expect("vectors")).expect("JSON");
        let items: Vec<Vec<u8>> = vectors
            .as_array()
            .expect("cases")
            .iter()
            .map(|case| {
                let hex = case["hex"].as_str().expect("hex");
                (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex byte"))
                    .collect()
            })
            .collect();
        let inputs = binary_inputs(Format::Cbor, "vectors", items);
        let mut walked = 0;
        for (name, bytes) in &inputs {
            walked += same_as_whole_from(name, bytes, Format::Cbor);
        }
        assert!(
            inputs.len() >= 100 && walked > 500,
            "{} inputs, {walked} walks",
            inputs.len()
        );
        // The big documents are walked, not declined.
        let twitter = inputs
            .iter()
            .find(|(name, _)| name.ends_with("twitter.json as CBOR"))
            .expect("twitter as CBOR");
        let limits = Limits::default();
        assert!(spans_in_chunks(&twitter.1, Format::Cbor, &limits, 4096).is_some());
        // An indefinite-length array, cut short, and bytes after the item: declined.
        let plain = EncodeOptions::default();
        for bytes in [
            &[0x9f, 0x01, 0xff][..],
            &[0x82, 0x01][..],
            &[0x81, 0x01, 0x01][..],
        ] {
            assert!(
                transcode_in_chunks(bytes, Format::Cbor, Format::Json, &plain, &limits, 0)
                    .is_none(),
                "{bytes:?}"
            );
        }
    }

    /// A MessagePack array at the root whose header is shorter than the one the walk puts
    /// around a run of its items (`array 32`, five bytes): a fixarray and an `array 16`, read
    /// and converted in runs of records.
    #[test]
    fn walks_a_root_array_with_a_short_header_in_runs() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let json = std::fs::read(root.join("samples/transactions-1k.json")).expect("sample");
        let doc = decode(&json, Format::Json, &DecodeOptions::default()).expect("JSON");
        let records = match &doc.value {
            Value::Map(entries) => entries
                .iter()
                .find_map(|(k, v)| match v {
                    Value::Array(items) if *k == Value::text("transactions") => Some(items),
                    _ => None,
                })
                .expect("transactions"),
            _ => panic!("the sample is a map"),
        };
        let plain = EncodeOptions::default();
        let limits = Limits::default();
        for (name, items) in [("fixarray", &records[..3]), ("array 16", &records[..])] {
            let list = Value::Array(items.to_vec());
            let bytes = encode_fast(&list, Format::MessagePack, &plain)
                .expect("encodes")
                .bytes;
            let item = encode_fast(&items[0], Format::MessagePack, &plain).expect("encodes");
            // Runs of two or three items each, and runs of many.
            for chunk in [item.bytes.len() * 5 / 2, 4096] {
                let tree = spans_in_chunks(&bytes, Format::MessagePack, &limits, chunk)
                    .unwrap_or_else(|| panic!("{name}, chunk {chunk}: walked"));
                let whole = decode(&bytes, Format::MessagePack, &DecodeOptions::default())
                    .expect("decodes");
                assert_eq!(nodes_of(&tree), nodes_of(&whole.spans), "{name}, {chunk}");
                let json = transcode_in_chunks(
                    &bytes,
                    Format::MessagePack,
                    Format::Json,
                    &plain,
                    &limits,
                    chunk,
                )
                .unwrap_or_else(|| panic!("{name}, chunk {chunk}: converted"));
                let want = encode_fast(&list, Format::Json, &plain).expect("encodes");
                assert!(json.bytes == want.bytes, "{name}, chunk {chunk}: JSON");
            }
        }
    }

    #[test]
    fn notes_of_many_chunks_are_grouped_as_one_conversion_groups_them() {
        let text = br#"{"a":[{"x":18446744073709551615,"b":1e400},{"x":18446744073709551616,"b":1.5}],"n":[1,2,3.25]}"#;
        assert!(same_as_whole("big numbers", text) > 0);
        let got = transcode_json_in_chunks(
            text,
            Format::MessagePack,
            &EncodeOptions::default(),
            &Limits::default(),
            0,
        )
        .expect("walked");
        assert!(!got.notes.is_empty());
    }

    #[test]
    fn deep_items_beside_shallow_ones_get_the_spans_and_notes_of_the_whole() {
        // Runs of items nested deeper than an encode on the walk's own stack goes (their spans
        // come in a tree of their own and are copied in) between runs of shallow ones (whose
        // spans the encoder adds in place), each holding numbers that get a note in MessagePack.
        let deep = |n: usize| {
            let mut s = "[".repeat(n);
            s.push_str("18446744073709551616");
            s.push_str(&"]".repeat(n));
            s
        };
        let shallow = r#"{"k":1e400,"v":[1,2]},{"k":18446744073709551616},[3,4.5]"#;
        let items = [
            shallow.to_string(),
            deep(crate::codec::SHALLOW + 6),
            shallow.to_string(),
            format!(r#"{{"d":{}}}"#, deep(crate::codec::SHALLOW)),
            shallow.to_string(),
        ];
        let text = format!(r#"{{"list":[{}],"tail":{}}}"#, items.join(","), deep(70));
        assert!(same_as_whole("deep and shallow items", text.as_bytes()) > 0);
        let doc = decode(text.as_bytes(), Format::Json, &DecodeOptions::default()).expect("JSON");
        let options = EncodeOptions::default();
        let want =
            encode_like(&doc.value, Format::MessagePack, &options, &doc.spans).expect("encoded");
        let limits = Limits::default();
        // Chunks that hold a run of a few items, not the list.
        for chunk in [150, 200, 300] {
            let source =
                spans_in_chunks(text.as_bytes(), Format::Json, &limits, chunk).expect("walked");
            assert_eq!(nodes_of(&source), nodes_of(&doc.spans), "chunk {chunk}");
            let got = transcode_with_spans(
                text.as_bytes(),
                Format::Json,
                Format::MessagePack,
                &options,
                &limits,
                chunk,
                Spanned {
                    like: Some(&source),
                    sink: None,
                },
            )
            .expect("walked");
            assert!(got.bytes == want.bytes, "chunk {chunk}: bytes");
            assert_eq!(got.notes, want.notes, "chunk {chunk}: notes");
            assert_eq!(nodes_of(&got.spans), nodes_of(&want.spans), "chunk {chunk}");
            let paths: Vec<String> = got.notes.iter().map(|n| n.path.to_string()).collect();
            assert!(
                paths.iter().any(|p| p.starts_with("$.list[3][0]"))
                    && paths.iter().any(|p| p == "$.list[1].k"),
                "notes inside deep and shallow items: {paths:?}"
            );
        }
    }

    #[test]
    fn walks_with_spans_stop_at_the_node_limit_where_the_whole_decode_does() {
        // Records in runs and alone, under a node limit just below, at and above the count.
        let records: Vec<String> = (0..40)
            .map(|i| format!(r#"{{"id":{i},"tags":["a","b"],"ship":{{"zip":{i}}}}}"#))
            .collect();
        let text = format!(r#"{{"n":40,"records":[{}]}}"#, records.join(","));
        let bytes = text.as_bytes();
        let all = decode(bytes, Format::Json, &DecodeOptions::default())
            .expect("JSON")
            .spans
            .len();
        for max_nodes in [all - 1, all, all + 1] {
            let limits = Limits {
                max_nodes,
                ..Limits::default()
            };
            let options = DecodeOptions {
                limits,
                ..DecodeOptions::default()
            };
            let whole = decode(bytes, Format::Json, &options).ok();
            assert_eq!(
                whole.is_some(),
                max_nodes >= all,
                "limit {max_nodes} of {all}"
            );
            for chunk in [16, 64, 200] {
                let source = spans_in_chunks(bytes, Format::Json, &limits, chunk);
                assert_eq!(
                    source.is_some(),
                    whole.is_some(),
                    "source spans, limit {max_nodes}, chunk {chunk}"
                );
                let column = transcode_with_spans(
                    bytes,
                    Format::Json,
                    Format::Cbor,
                    &EncodeOptions::default(),
                    &limits,
                    chunk,
                    Spanned {
                        like: source.as_ref(),
                        sink: None,
                    },
                );
                assert_eq!(
                    column.is_some(),
                    whole.is_some(),
                    "CBOR column, limit {max_nodes}, chunk {chunk}"
                );
                if let (Some(source), Some(doc)) = (&source, &whole) {
                    assert_eq!(nodes_of(source), nodes_of(&doc.spans));
                }
            }
        }
    }

    #[test]
    fn what_needs_the_whole_document_is_left_to_the_ordinary_way() {
        let limits = Limits::default();
        let plain = EncodeOptions::default();
        let dup = br#"{"a":[1,2,3],"a":[4,5,6]}"#;
        assert!(transcode_json_in_chunks(dup, Format::Cbor, &plain, &limits, 0).is_none());
        let canonical = EncodeOptions {
            canonical: true,
            ..EncodeOptions::default()
        };
        assert!(transcode_json_in_chunks(b"[1]", Format::Cbor, &canonical, &limits, 0).is_none());
        let pretty = EncodeOptions {
            pretty: true,
            ..EncodeOptions::default()
        };
        assert!(transcode_json_in_chunks(b"[1]", Format::Json, &pretty, &limits, 0).is_none());
        assert!(transcode_json_in_chunks(b"[1]", Format::Protobuf, &plain, &limits, 0).is_none());
        let shallow = Limits {
            max_depth: 2,
            ..Limits::default()
        };
        assert!(transcode_json_in_chunks(b"[[[1]]]", Format::Cbor, &plain, &shallow, 0).is_none());
        let few = Limits {
            max_nodes: 3,
            ..Limits::default()
        };
        assert!(transcode_json_in_chunks(b"[[1],[2]]", Format::Cbor, &plain, &few, 0).is_none());
        assert!(
            transcode_json_in_chunks(b"[[1],[2]] x", Format::Cbor, &plain, &limits, 0).is_none()
        );
    }
}
