//! Structural diff: two [`Document`]s, in any formats, compared by meaning.
//!
//! [`diff`] walks both values side by side and lists what differs as [`Change`]s, each with its
//! [`Path`] and the bytes that hold it in both inputs (from the span trees):
//!
//! - **added** and **removed** map entries and array items;
//! - **changed** values of one kind (`12.5 → 13.0`);
//! - **changed types**: an integer against a float of the same number, bytes against text (with
//!   a note when the text is the bytes in base64), a timestamp against its RFC 3339 text, and,
//!   with [`DiffOptions::strict_widths`], a float32 against a float64 of the same number;
//! - **key order**: the same entries in another order, reported but not counted as a change
//!   unless [`DiffOptions::order`] asks.
//!
//! Arrays are aligned, not compared index by index: items are matched by an identity field
//! (a key pattern the user gives, such as `$.data[*].id`, or a key named `id` or ending in `_id`
//! that nearly every item has, with values that are unique), else by the longest common
//! subsequence of the items' meaning hashes, computed with a bound on the edit distance. Past
//! that bound the items are paired by index and [`Diff::notes`] says so.
//!
//! Meaning follows the converters' fidelity rules ([`crate::codec::FidelityNote`]): what one
//! format cannot say without a note (bytes in JSON, float widths in JSON, tags outside CBOR)
//! counts as a difference of type, except float widths, which only [`DiffOptions::strict_widths`]
//! counts, since JSON has none and every encoder may choose the shortest exact width. How the two
//! inputs' bytes differ while meaning the same (key order, float widths, integer widths) is
//! counted in [`Diff::encoding`].
//!
//! With a protobuf message type ([`DiffOptions::message`]), the comparison follows the proto3
//! JSON mapping: where the schema says a field is an integer, JSON text holding the number
//! (`"9007199254740993"`, as the mapping writes every 64-bit integer) is that number; a float
//! field's `1` or `"NaN"` is that float, an enum's number is its name, a timestamp's RFC 3339 text
//! is the instant, and a field's JSON name (`userId`) is the field (`user_id`). Such values count
//! in [`Diff::encoding`], not as changes. Bytes against base64 text stay a change of type with a
//! note. Two versions of a `.proto` are compared for compatibility by [`schema::diff_messages`].
//!
//! Everything is iterative: 500-deep documents and 100,000-item arrays need no deep stack.
//!
//! ```
//! use wirelens::codec::{decode, DecodeOptions, Format};
//! use wirelens::diff::{diff, ChangeKind, DiffOptions};
//!
//! let a = decode(br#"{"id": 5, "tags": ["x", "y"]}"#, Format::Json, &DecodeOptions::default())?;
//! let b = decode(br#"{"id": "5", "tags": ["y"]}"#, Format::Json, &DecodeOptions::default())?;
//! let d = diff(&a, &b, &DiffOptions::default());
//! let lines: Vec<String> = d.counted().map(|c| c.to_string()).collect();
//! assert_eq!(lines, [
//!     "t $.id: int 5 → text \"5\"  (A bytes 7..8, B bytes 7..10); the same number, as an integer and as text",
//!     "- $.tags[0]: \"x\"  (A bytes 19..22)",
//! ]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod align;
mod proto;
pub mod schema;

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};

use base64::Engine as _;

use self::proto::Ctx;
use crate::codec::protobuf::MessageDescriptor;
use crate::codec::Document;
use crate::model::{Kind, NodeId, Path, PathSegment, Span, SpanTree, Timestamp, Value};

/// What to compare and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffOptions {
    /// Identity fields of array items, as patterns: `$.data[*].id` matches the items of every
    /// array at `$.data` by their `id`. Arrays no pattern names use an evident identity field.
    pub keys: Vec<Path>,
    /// Paths to leave out of the comparison (patterns: `$.data[*].updated_at`).
    pub ignore: Vec<Path>,
    /// Count a different key order as a change.
    pub order: bool,
    /// Count a float of another width holding the same number as a change of type.
    pub strict_widths: bool,
    /// Most insertions plus deletions an unkeyed array is aligned for; past it, items are
    /// paired by index.
    pub max_edits: usize,
    /// The protobuf message type both documents are (the one a protobuf input was read with):
    /// values are compared as the proto3 JSON mapping writes them (see the module docs).
    pub message: Option<MessageDescriptor>,
}

impl Default for DiffOptions {
    fn default() -> DiffOptions {
        DiffOptions {
            keys: Vec::new(),
            ignore: Vec::new(),
            order: false,
            strict_widths: false,
            max_edits: 2_000,
            message: None,
        }
    }
}

impl DiffOptions {
    /// An identity-field pattern (`--key`) checked: a path pattern ending in an array's records
    /// and their field, like `$.data[*].id`. The error says where the text goes wrong.
    pub fn key_pattern(text: &str) -> Result<Path, PatternError> {
        let p = Self::ignore_pattern(text)?;
        match p.segments() {
            [.., PathSegment::AnyIndex | PathSegment::Index(_), PathSegment::Key(_)] => Ok(p),
            _ => Err(PatternError::NotRecordsField {
                text: text.to_string(),
            }),
        }
    }

    /// A pattern of paths to leave out (`--ignore`), like `$.data[*].updated_at`.
    pub fn ignore_pattern(text: &str) -> Result<Path, PatternError> {
        Path::parse(text).map_err(|e| PatternError::NotAPath {
            text: text.to_string(),
            at: e.at,
            message: e.message,
        })
    }

    /// A list of patterns typed on one line, split at the commas outside brackets (`$.a[*].id,
    /// $.b[*].id`), each checked with `check`; empty items are skipped. The first bad pattern is
    /// the error.
    pub fn patterns(
        text: &str,
        check: fn(&str) -> Result<Path, PatternError>,
    ) -> Result<Vec<Path>, PatternError> {
        let mut items = Vec::new();
        let (mut depth, mut quote, mut start) = (0usize, None, 0);
        for (i, c) in text.char_indices() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '[') => depth += 1,
                (None, ']') => depth = depth.saturating_sub(1),
                (None, ',') if depth == 0 => {
                    items.push(&text[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(&text[start..]);
        items
            .into_iter()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(check)
            .collect()
    }
}

/// Why [`DiffOptions::key_pattern`] or [`DiffOptions::ignore_pattern`] refused a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatternError {
    /// Not a path pattern: the character where it goes wrong, and why.
    NotAPath {
        /// The pattern as given.
        text: String,
        /// The character offset where it goes wrong.
        at: usize,
        /// What is wrong there.
        message: String,
    },
    /// A path pattern, but not one of an array's records and their field (`--key`).
    NotRecordsField {
        /// The pattern as given.
        text: String,
    },
}

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PatternError::NotAPath { text, at, message } => write!(
                f,
                "{text}: not a path pattern (at character {at}: {message})"
            ),
            PatternError::NotRecordsField { text } => write!(
                f,
                "{text}: expected an array's records and their field, like $.data[*].id"
            ),
        }
    }
}

impl std::error::Error for PatternError {}

/// What sort of difference a [`Change`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ChangeKind {
    /// Only B has it.
    Added,
    /// Only A has it.
    Removed,
    /// Both have a value of the same kind, and the values differ.
    Changed,
    /// The values are of different kinds (or float widths, with `strict_widths`).
    TypeChanged,
    /// The same entries (or keyed records) in another order.
    Order,
}

impl ChangeKind {
    /// The one-character marker the CLI prints: `+`, `-`, `~`, `t`, `o`.
    pub fn marker(self) -> char {
        match self {
            ChangeKind::Added => '+',
            ChangeKind::Removed => '-',
            ChangeKind::Changed => '~',
            ChangeKind::TypeChanged => 't',
            ChangeKind::Order => 'o',
        }
    }

    /// A lower-case word for tables: `added`, `removed`, `changed`, `type`, `order`.
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Changed => "changed",
            ChangeKind::TypeChanged => "type",
            ChangeKind::Order => "order",
        }
    }
}

/// One side of a change: what the value is there and which bytes hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    /// The value's kind.
    pub kind: Kind,
    /// A one-line summary (`12.5`, `"x"`, `{…}`).
    pub summary: String,
    /// Its bytes in that input (the key included for added and removed entries), when known.
    pub span: Option<Span>,
}

/// One difference between the two documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What sort of difference.
    pub kind: ChangeKind,
    /// Where: the path in A (in B for an addition).
    pub path: Path,
    /// The path in B when it is not `path` (an item that moved to another index).
    pub b_path: Option<Path>,
    /// The value in A (`None` for an addition).
    pub a: Option<Side>,
    /// The value in B (`None` for a removal).
    pub b: Option<Side>,
    /// More about it (`the text is the bytes in base64`).
    pub note: Option<String>,
}

impl fmt::Display for Change {
    /// `~ $.data[3].amount: 12.5 → 13  (A bytes 120..124, B bytes 98..99)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind.marker(), self.path.brief())?;
        if let Some(b) = &self.b_path {
            write!(f, " (B {})", b.brief())?;
        }
        let typed = self.kind == ChangeKind::TypeChanged;
        let side = |s: &Side| {
            if typed {
                format!("{} {}", s.kind, s.summary)
            } else {
                s.summary.clone()
            }
        };
        match (&self.a, &self.b) {
            (Some(a), Some(b)) => write!(f, ": {} → {}", side(a), side(b))?,
            (Some(a), None) => write!(f, ": {}", side(a))?,
            (None, Some(b)) => write!(f, ": {}", side(b))?,
            (None, None) => {}
        }
        let spans: Vec<String> = [("A", &self.a), ("B", &self.b)]
            .iter()
            .filter_map(|(name, s)| {
                s.as_ref()
                    .and_then(|s| s.span)
                    .map(|sp| format!("{name} bytes {sp}"))
            })
            .collect();
        if !spans.is_empty() {
            write!(f, "  ({})", spans.join(", "))?;
        }
        if let Some(note) = &self.note {
            write!(f, "; {note}")?;
        }
        Ok(())
    }
}

/// How the bytes of two inputs differ where their meaning is the same.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EncodingDiff {
    /// Maps whose entries (or arrays whose keyed records) come in another order.
    pub key_order: usize,
    /// Floats holding the same number at another width (counted when `strict_widths` is off).
    pub float_widths: usize,
    /// Integers of the same value written in a different number of bytes (both inputs binary:
    /// MessagePack, CBOR or protobuf).
    pub int_widths: usize,
    /// Integers one input writes as JSON text where the schema says the field is an integer
    /// (proto3 JSON writes every 64-bit integer so).
    pub int_texts: usize,
    /// Other values in a form of the proto3 JSON mapping the schema reads as the other input's
    /// value: floats written as integers or as `"NaN"`, enums as numbers, timestamps as text.
    pub json_forms: usize,
    /// Entries one input names by the field's JSON name (`userId`) and the other by its name
    /// in the `.proto` (`user_id`).
    pub field_names: usize,
}

impl EncodingDiff {
    /// The differences present, in words: `key order`, `float widths`, `integer widths`.
    pub fn words(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.key_order > 0 {
            out.push("key order");
        }
        if self.float_widths > 0 {
            out.push("float widths");
        }
        if self.int_widths > 0 {
            out.push("integer widths");
        }
        if self.int_texts > 0 {
            out.push("integers as JSON text");
        }
        if self.json_forms > 0 {
            out.push("other proto3 JSON forms");
        }
        if self.field_names > 0 {
            out.push("field names (JSON names and .proto names)");
        }
        out
    }
}

/// The result of [`diff`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    /// Every difference found, in document order of A (key-order changes included whether or
    /// not they count; see [`Diff::counted`]).
    pub changes: Vec<Change>,
    /// Whether key-order changes count (the options' `order`).
    pub order_counts: bool,
    /// Encoding differences where the meaning is the same.
    pub encoding: EncodingDiff,
    /// Remarks on how the comparison was made (arrays too different to align, matched by
    /// index; arrays matched by an identity field).
    pub notes: Vec<String>,
    /// The identity fields found evident (no key pattern named them), as key patterns that
    /// would name them (`$.data[*].id`), in the order first met.
    pub evident_keys: Vec<Path>,
}

impl Diff {
    /// The changes that count: all but key order, unless the options asked for it.
    pub fn counted(&self) -> impl Iterator<Item = &Change> {
        self.changes
            .iter()
            .filter(move |c| self.order_counts || c.kind != ChangeKind::Order)
    }

    /// Whether the two documents mean the same (no change counts).
    pub fn same_meaning(&self) -> bool {
        self.counted().next().is_none()
    }

    /// How many counted changes are of `kind`.
    pub fn count(&self, kind: ChangeKind) -> usize {
        self.counted().filter(|c| c.kind == kind).count()
    }

    /// The summary line of two inputs that mean the same: both formats and sizes, and how
    /// their bytes differ: `same meaning (JSON 1,234 bytes, MessagePack 890 bytes; differ in:
    /// key order, float widths)`; `identical`: the two inputs are the same bytes.
    pub fn same_meaning_line(
        &self,
        a: (crate::codec::Format, usize),
        b: (crate::codec::Format, usize),
        identical: bool,
    ) -> String {
        let group = |n: usize| crate::report::table::group(n as u64);
        let sizes = format!(
            "{} {} bytes, {} {} bytes",
            a.0.title(),
            group(a.1),
            b.0.title(),
            group(b.1)
        );
        let words = self.encoding.words();
        let tail = if identical {
            "; identical bytes".to_string()
        } else if !words.is_empty() {
            format!("; differ in: {}", words.join(", "))
        } else if a.0 == b.0 {
            "; differ in: layout (whitespace, escapes or length encodings)".to_string()
        } else {
            String::new()
        };
        format!("same meaning ({sizes}{tail})")
    }

    /// `3 changes: 1 changed, 1 added, 1 removed; same key order`, or `same meaning`.
    pub fn summary(&self) -> String {
        let total = self.counted().count();
        if total == 0 {
            return "same meaning".into();
        }
        let mut parts = Vec::new();
        for kind in [
            ChangeKind::Changed,
            ChangeKind::TypeChanged,
            ChangeKind::Added,
            ChangeKind::Removed,
            ChangeKind::Order,
        ] {
            let n = self.count(kind);
            if n > 0 {
                let word = match kind {
                    ChangeKind::TypeChanged => "type changed",
                    ChangeKind::Order => "in another order",
                    other => other.name(),
                };
                parts.push(format!("{n} {word}"));
            }
        }
        let order = if self.encoding.key_order == 0 {
            "same key order".to_string()
        } else if self.order_counts {
            format!("key order differs in {}", self.encoding.key_order)
        } else {
            format!(
                "key order differs in {} (not counted; --order counts it)",
                self.encoding.key_order
            )
        };
        format!(
            "{total} change{}: {}; {order}",
            if total == 1 { "" } else { "s" },
            parts.join(", ")
        )
    }
}

/// A decoded document, borrowed: what [`diff_refs`] compares (the app's columns share their
/// value and span tree rather than own a [`Document`]).
#[derive(Debug, Clone, Copy)]
pub struct DocRef<'a> {
    /// The format it was decoded from.
    pub format: crate::codec::Format,
    /// What the bytes say.
    pub value: &'a Value,
    /// Which bytes say it.
    pub spans: &'a SpanTree,
}

impl<'a> From<&'a Document> for DocRef<'a> {
    fn from(d: &'a Document) -> DocRef<'a> {
        DocRef {
            format: d.format,
            value: &d.value,
            spans: &d.spans,
        }
    }
}

/// The changes as CSV, one row each (key-order changes included): kind, path, a_value,
/// b_value, a_start, a_end, b_start, b_end (byte offsets; empty where a side has no bytes).
/// What `wirelens diff --csv` and the app's export write.
pub fn to_csv(d: &Diff) -> Result<Vec<u8>, ::csv::Error> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record([
        "kind", "path", "a_value", "b_value", "a_start", "a_end", "b_start", "b_end",
    ])?;
    for c in &d.changes {
        let cell = |s: Option<&Side>, end: bool| {
            s.and_then(|s| s.span).map_or(String::new(), |sp| {
                if end { sp.end } else { sp.start }.to_string()
            })
        };
        let value = |s: Option<&Side>| s.map_or(String::new(), |s| s.summary.clone());
        w.write_record([
            c.kind.name().to_string(),
            c.path.to_string(),
            value(c.a.as_ref()),
            value(c.b.as_ref()),
            cell(c.a.as_ref(), false),
            cell(c.a.as_ref(), true),
            cell(c.b.as_ref(), false),
            cell(c.b.as_ref(), true),
        ])?;
    }
    w.into_inner()
        .map_err(|e| ::csv::Error::from(e.into_error()))
}

/// Compares `a` with `b` (see the module docs).
pub fn diff(a: &Document, b: &Document, options: &DiffOptions) -> Diff {
    diff_refs(a.into(), b.into(), options)
}

/// [`diff`] of two borrowed documents.
pub fn diff_refs(a: DocRef<'_>, b: DocRef<'_>, options: &DiffOptions) -> Diff {
    let root = Ctx::root(options.message.as_ref());
    let hashes_a = meaning_hashes(a.value, options, &root);
    let hashes_b = meaning_hashes(b.value, options, &root);
    let mut walk = Walk {
        options,
        a_tree: a.spans,
        b_tree: b.spans,
        hashes_a,
        hashes_b,
        binary: a.format != crate::codec::Format::Json && b.format != crate::codec::Format::Json,
        out: Diff {
            changes: Vec::new(),
            order_counts: options.order,
            encoding: EncodingDiff::default(),
            notes: Vec::new(),
            evident_keys: Vec::new(),
        },
    };
    let mut stack = vec![Task::Compare(Pair {
        a: a.value,
        b: b.value,
        a_node: a.spans.root(),
        b_node: b.spans.root(),
        path: Path::root(),
        b_path: None,
        ctx: root,
    })];
    while let Some(task) = stack.pop() {
        match task {
            Task::Compare(pair) => walk.compare(pair, &mut stack),
            Task::Report(kind, pair) => walk.push(kind, &pair, None),
        }
    }
    walk.out
}

/// What is left to do: compare two values, or report a change found while matching their
/// parents' items (kept in the queue so that changes come out in document order).
enum Task<'v> {
    Compare(Pair<'v>),
    Report(ChangeKind, Pair<'v>),
}

/// Two values to compare, with their nodes and paths.
struct Pair<'v> {
    a: &'v Value,
    b: &'v Value,
    a_node: Option<NodeId>,
    b_node: Option<NodeId>,
    path: Path,
    b_path: Option<Path>,
    /// What the schema says about the two values.
    ctx: Ctx,
}

struct Walk<'o, 't> {
    options: &'o DiffOptions,
    a_tree: &'t SpanTree,
    b_tree: &'t SpanTree,
    hashes_a: HashMap<*const Value, u64>,
    hashes_b: HashMap<*const Value, u64>,
    binary: bool,
    out: Diff,
}

/// A one-line summary: containers as `{…}` and `[…]`, scalars as [`Value::summary`] gives them.
fn brief(v: &Value) -> String {
    match v.untagged() {
        Value::Map(m) if m.is_empty() => "{}".into(),
        Value::Map(_) => "{…}".into(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Array(_) => "[…]".into(),
        _ => v.summary(40),
    }
}

/// The children nodes of `node`, when they line up with the value's `count` children.
fn child_nodes(tree: &SpanTree, node: Option<NodeId>, count: usize) -> Vec<Option<NodeId>> {
    let ids: Vec<NodeId> = match node {
        Some(n) if n.index() < tree.len() => tree.children(n).collect(),
        _ => Vec::new(),
    };
    if ids.len() == count {
        ids.into_iter().map(Some).collect()
    } else {
        vec![None; count]
    }
}

fn key_segment(key: &Value) -> PathSegment {
    match key {
        Value::Text(s) => PathSegment::Key(s.to_string()),
        other => PathSegment::OtherKey(other.summary(48)),
    }
}

impl<'v> Walk<'_, '_> {
    fn ignored(&self, path: &Path) -> bool {
        self.options.ignore.iter().any(|p| p.contains(path))
    }

    fn side(&self, tree: &SpanTree, v: &Value, node: Option<NodeId>, whole: bool) -> Side {
        let span = node.filter(|n| n.index() < tree.len()).map(|n| {
            let node = tree.node(n);
            if whole {
                node.extent()
            } else {
                node.span
            }
        });
        Side {
            kind: v.kind(),
            summary: brief(v),
            span,
        }
    }

    fn push(&mut self, kind: ChangeKind, pair: &Pair<'v>, note: Option<String>) {
        let whole = kind != ChangeKind::Changed && kind != ChangeKind::TypeChanged;
        let a =
            (kind != ChangeKind::Added).then(|| self.side(self.a_tree, pair.a, pair.a_node, whole));
        let b = (kind != ChangeKind::Removed)
            .then(|| self.side(self.b_tree, pair.b, pair.b_node, whole));
        let (path, b_path) = match kind {
            ChangeKind::Added => (
                pair.b_path.clone().unwrap_or_else(|| pair.path.clone()),
                None,
            ),
            _ => (pair.path.clone(), pair.b_path.clone()),
        };
        self.out.changes.push(Change {
            kind,
            path,
            b_path,
            a,
            b,
            note,
        });
    }

    fn hash_a(&self, v: &Value) -> u64 {
        self.hashes_a
            .get(&(v as *const Value))
            .copied()
            .unwrap_or(0)
    }

    fn hash_b(&self, v: &Value) -> u64 {
        self.hashes_b
            .get(&(v as *const Value))
            .copied()
            .unwrap_or(0)
    }

    fn compare(&mut self, pair: Pair<'v>, stack: &mut Vec<Task<'v>>) {
        if self.ignored(&pair.path) {
            return;
        }
        let same = self.hash_a(pair.a) == self.hash_b(pair.b);
        let (ua, ub) = (pair.a.untagged(), pair.b.untagged());
        if tags(pair.a) != tags(pair.b) {
            self.push(
                ChangeKind::TypeChanged,
                &pair,
                Some("the CBOR tags differ".into()),
            );
            return;
        }
        if !pair.ctx.is_none() {
            let na = pair.ctx.normalize(ua);
            let nb = pair.ctx.normalize(ub);
            if na.is_some() || nb.is_some() {
                self.schema_forms(&pair, same, na, nb);
                return;
            }
        }
        match (ua, ub) {
            (Value::Map(ma), Value::Map(mb)) => self.maps(&pair, ma, mb, stack),
            (Value::Array(xa), Value::Array(xb)) => self.arrays(&pair, xa, xb, stack),
            (Value::Float(fa), Value::Float(fb)) => {
                let same_number = fa.value.to_bits() == fb.value.to_bits()
                    || (fa.value.is_nan() && fb.value.is_nan());
                if !same_number {
                    self.push(ChangeKind::Changed, &pair, None);
                } else if fa.width != fb.width {
                    if self.options.strict_widths {
                        self.push(
                            ChangeKind::TypeChanged,
                            &pair,
                            Some("the same number at another width".into()),
                        );
                    } else {
                        self.out.encoding.float_widths += 1;
                    }
                }
            }
            (Value::Int(_), Value::Int(_)) if same => {
                if self.binary {
                    if let (Some(na), Some(nb)) = (pair.a_node, pair.b_node) {
                        if na.index() < self.a_tree.len()
                            && nb.index() < self.b_tree.len()
                            && self.a_tree.node(na).span.len() != self.b_tree.node(nb).span.len()
                        {
                            self.out.encoding.int_widths += 1;
                        }
                    }
                }
            }
            _ if same => {}
            _ => {
                if ua.kind() == ub.kind() {
                    self.push(ChangeKind::Changed, &pair, None);
                } else {
                    let note = type_note(ua, ub);
                    self.push(ChangeKind::TypeChanged, &pair, note);
                }
            }
        }
    }

    /// Two values of which one (or both) the schema reads in another form (`na`, `nb`: the
    /// canonical forms, with their names); `same`: their canonical forms mean the same.
    fn schema_forms(
        &mut self,
        pair: &Pair<'v>,
        same: bool,
        na: Option<(Value, &'static str)>,
        nb: Option<(Value, &'static str)>,
    ) {
        let form = na.as_ref().or(nb.as_ref()).map_or("", |n| n.1);
        let va = na.as_ref().map_or(pair.a.untagged(), |n| &n.0);
        let vb = nb.as_ref().map_or(pair.b.untagged(), |n| &n.0);
        if same {
            if pair.a.untagged().kind() == pair.b.untagged().kind() {
                // Both written the same way (two JSON texts of one number).
            } else if form == "integers as JSON text" {
                self.out.encoding.int_texts += 1;
            } else {
                self.out.encoding.json_forms += 1;
            }
        } else if va.kind() == vb.kind() {
            self.push(
                ChangeKind::Changed,
                pair,
                Some(format!("read with the schema ({form})")),
            );
        } else {
            let note = type_note(va, vb);
            self.push(ChangeKind::TypeChanged, pair, note);
        }
    }

    fn maps(
        &mut self,
        pair: &Pair<'v>,
        ma: &'v [(Value, Value)],
        mb: &'v [(Value, Value)],
        stack: &mut Vec<Task<'v>>,
    ) {
        let nodes_a = child_nodes(self.a_tree, pair.a_node, ma.len());
        let nodes_b = child_nodes(self.b_tree, pair.b_node, mb.len());
        let ctx = &pair.ctx;
        let mut in_b: HashMap<u64, Vec<usize>> = HashMap::new();
        for (j, (k, _)) in mb.iter().enumerate().rev() {
            in_b.entry(ctx_key_hash(ctx, k)).or_default().push(j);
        }
        let mut matched_b = vec![false; mb.len()];
        let mut order: Vec<usize> = Vec::new();
        let mut children = Vec::new();
        for (i, (k, va)) in ma.iter().enumerate() {
            let seg = key_segment(k);
            let path = pair.path.child(seg.clone());
            match in_b.get_mut(&ctx_key_hash(ctx, k)).and_then(Vec::pop) {
                Some(j) => {
                    matched_b[j] = true;
                    order.push(j);
                    // B names the entry its own way when the schema matched another key
                    // (`userId` for `user_id`).
                    let kb = &mb[j].0;
                    let b_path = if kb != k {
                        self.out.encoding.field_names += 1;
                        Some(
                            pair.b_path
                                .as_ref()
                                .unwrap_or(&pair.path)
                                .child(key_segment(kb)),
                        )
                    } else {
                        pair.b_path.as_ref().map(|p| p.child(seg))
                    };
                    children.push(Task::Compare(Pair {
                        a: va,
                        b: &mb[j].1,
                        a_node: nodes_a[i],
                        b_node: nodes_b[j],
                        path,
                        b_path,
                        ctx: ctx.entry(k),
                    }));
                }
                None => {
                    if !self.ignored(&path) {
                        children.push(Task::Report(
                            ChangeKind::Removed,
                            Pair {
                                a: va,
                                b: va,
                                a_node: nodes_a[i],
                                b_node: None,
                                path,
                                b_path: None,
                                ctx: Ctx::None,
                            },
                        ));
                    }
                }
            }
        }
        for (j, (k, vb)) in mb.iter().enumerate() {
            if matched_b[j] {
                continue;
            }
            let seg = key_segment(k);
            let path = pair.b_path.as_ref().unwrap_or(&pair.path).child(seg);
            if self.ignored(&path) {
                continue;
            }
            children.push(Task::Report(
                ChangeKind::Added,
                Pair {
                    a: vb,
                    b: vb,
                    a_node: None,
                    b_node: nodes_b[j],
                    path: path.clone(),
                    b_path: Some(path),
                    ctx: Ctx::None,
                },
            ));
        }
        if order.windows(2).any(|w| w[0] > w[1]) {
            self.out.encoding.key_order += 1;
            let before: Vec<String> = ma.iter().map(|(k, _)| key_label(k)).collect();
            let after: Vec<String> = mb.iter().map(|(k, _)| key_label(k)).collect();
            self.push(
                ChangeKind::Order,
                pair,
                Some(format!(
                    "key order {} → {}",
                    cut_list(&before),
                    cut_list(&after)
                )),
            );
        }
        // Children in reverse so that the stack pops them in A's order.
        stack.extend(children.into_iter().rev());
    }

    /// Compares two arrays' items: matched items are compared, the others reported removed or
    /// added, in A's order (an addition after the A item matched just before it).
    fn arrays(
        &mut self,
        pair: &Pair<'v>,
        xa: &'v [Value],
        xb: &'v [Value],
        stack: &mut Vec<Task<'v>>,
    ) {
        let item_ctx = pair.ctx.item();
        let pairs = self.match_items(pair, xa, xb, &item_ctx);
        let queued = self.queue_items(pair, (xa, xb), &pairs, item_ctx);
        let b_base = pair.b_path.as_ref().unwrap_or(&pair.path);
        let mut later = Vec::new();
        for (_, q) in queued {
            match q {
                Queued::Removed(i, v, a_node) => {
                    let path = pair.path.child(PathSegment::Index(i));
                    if !self.ignored(&path) {
                        later.push(Task::Report(
                            ChangeKind::Removed,
                            Pair {
                                a: v,
                                b: v,
                                a_node,
                                b_node: None,
                                path,
                                b_path: None,
                                ctx: Ctx::None,
                            },
                        ));
                    }
                }
                Queued::Added(j, v, b_node) => {
                    let path = b_base.child(PathSegment::Index(j));
                    if !self.ignored(&path) {
                        later.push(Task::Report(
                            ChangeKind::Added,
                            Pair {
                                a: v,
                                b: v,
                                a_node: None,
                                b_node,
                                path: path.clone(),
                                b_path: Some(path),
                                ctx: Ctx::None,
                            },
                        ));
                    }
                }
                Queued::Pair(p) => later.push(Task::Compare(p)),
            }
        }
        // The stack is popped from the end: queued in order, pushed reversed.
        stack.extend(later.into_iter().rev());
    }

    /// The matched (a, b) index pairs of two arrays' items, increasing in a: by the items'
    /// identity field when they have one (a new order is a change; an evident key is noted),
    /// else the longest run of equal items with the gaps between paired, or, when the arrays
    /// differ in too many places, by index (noted).
    fn match_items(
        &mut self,
        pair: &Pair<'v>,
        xa: &'v [Value],
        xb: &'v [Value],
        item_ctx: &Ctx,
    ) -> Vec<(usize, usize)> {
        if let Some((field, why)) = self.identity(&pair.path, xa, xb, item_ctx) {
            let pairs = self.match_by_key(&field, xa, xb, item_ctx);
            if pairs.windows(2).any(|w| w[0].1 > w[1].1) {
                self.out.encoding.key_order += 1;
                self.push(
                    ChangeKind::Order,
                    pair,
                    Some(format!("records in another order (matched by {field})")),
                );
            }
            if why == Why::Evident {
                let note = format!("{}: records matched by `{field}`", pair.path.brief());
                if !self.out.notes.contains(&note) {
                    self.out.notes.push(note);
                }
                let key = pair
                    .path
                    .pattern()
                    .child(PathSegment::AnyIndex)
                    .child(PathSegment::Key(field.clone()));
                if !self.out.evident_keys.contains(&key) {
                    self.out.evident_keys.push(key);
                }
            }
            return pairs;
        }
        let ha: Vec<u64> = xa.iter().map(|v| self.hash_a(v)).collect();
        let hb: Vec<u64> = xb.iter().map(|v| self.hash_b(v)).collect();
        match align::lcs(&ha, &hb, self.options.max_edits) {
            Some(matched) => pair_gaps(&matched, xa.len(), xb.len()),
            None => {
                self.out.notes.push(format!(
                    "{}: arrays of {} and {} items differ in more than {} places; items compared by index",
                    pair.path.brief(),
                    xa.len(),
                    xb.len(),
                    self.options.max_edits
                ));
                (0..xa.len().min(xb.len())).map(|i| (i, i)).collect()
            }
        }
    }

    /// The arrays' items in the order they are compared or reported: each with the A index it
    /// goes at, the matched `pairs` as pairs to compare, the other items of A as removed and of
    /// B as added (after the A item matched just before it).
    fn queue_items(
        &self,
        pair: &Pair<'v>,
        (xa, xb): (&'v [Value], &'v [Value]),
        pairs: &[(usize, usize)],
        item_ctx: Ctx,
    ) -> Vec<(usize, Queued<'v>)> {
        let nodes_a = child_nodes(self.a_tree, pair.a_node, xa.len());
        let nodes_b = child_nodes(self.b_tree, pair.b_node, xb.len());
        let b_base = pair.b_path.as_ref().unwrap_or(&pair.path);
        let mut matched_a = vec![false; xa.len()];
        let mut matched_b = vec![false; xb.len()];
        let mut children = Vec::with_capacity(pairs.len());
        for &(i, j) in pairs {
            matched_a[i] = true;
            matched_b[j] = true;
            let path = pair.path.child(PathSegment::Index(i));
            let b_path = if i != j || pair.b_path.is_some() {
                Some(b_base.child(PathSegment::Index(j)))
            } else {
                None
            };
            children.push(Pair {
                a: &xa[i],
                b: &xb[j],
                a_node: nodes_a[i],
                b_node: nodes_b[j],
                path,
                b_path,
                ctx: item_ctx.clone(),
            });
        }
        // Removals and additions interleave with the matched items in A's order.
        let mut queued: Vec<(usize, Queued<'v>)> = Vec::new();
        for (i, v) in xa.iter().enumerate() {
            if !matched_a[i] {
                queued.push((i, Queued::Removed(i, v, nodes_a[i])));
            }
        }
        for (j, v) in xb.iter().enumerate() {
            if !matched_b[j] {
                // Place an addition after the A item matched just before it.
                let anchor = pairs
                    .partition_point(|&(_, pj)| pj < j)
                    .checked_sub(1)
                    .map_or(0, |k| pairs[k].0 + 1);
                queued.push((anchor, Queued::Added(j, v, nodes_b[j])));
            }
        }
        for (k, child) in children.into_iter().enumerate() {
            queued.push((pairs[k].0, Queued::Pair(child)));
        }
        queued.sort_by_key(|(at, q)| (*at, q.rank()));
        queued
    }

    /// The identity field of the items of the array at `path`, and why it was chosen.
    fn identity(
        &self,
        path: &Path,
        xa: &[Value],
        xb: &[Value],
        item_ctx: &Ctx,
    ) -> Option<(String, Why)> {
        let pattern = path.pattern();
        for key in &self.options.keys {
            let segs = key.segments();
            if let [prefix @ .., PathSegment::AnyIndex | PathSegment::Index(_), PathSegment::Key(field)] =
                segs
            {
                if Path::from_segments(prefix.to_vec()).pattern() == pattern {
                    return Some((field.clone(), Why::Given));
                }
            }
        }
        if xa.len() + xb.len() < 2 {
            return None;
        }
        let first = xa.first().or(xb.first())?.as_map()?;
        let mut best: Option<(String, usize)> = None;
        for (k, _) in first {
            // With a schema, a key is judged by its field's name: JSON's `userId` is `user_id`.
            let canonical = item_ctx.key(k);
            let Some(name) = canonical.as_ref().unwrap_or(k).as_str() else {
                continue;
            };
            if name != "id" && !name.ends_with("_id") {
                continue;
            }
            let field_ctx = item_ctx.entry(k);
            let have = |items: &[Value]| {
                let mut seen = std::collections::HashSet::new();
                let mut n = 0usize;
                for item in items {
                    if let Some(v) = entry_named(item, name, item_ctx) {
                        if !seen.insert(ctx_value_hash(&field_ctx, v)) {
                            return None;
                        }
                        n += 1;
                    }
                }
                Some(n)
            };
            let (Some(na), Some(nb)) = (have(xa), have(xb)) else {
                continue;
            };
            // "Most": at least nine items in ten on both sides.
            if na * 10 >= xa.len() * 9
                && nb * 10 >= xb.len() * 9
                && best.as_ref().is_none_or(|(_, n)| na + nb > *n)
            {
                best = Some((name.to_string(), na + nb));
            }
        }
        best.map(|(name, _)| (name, Why::Evident))
    }

    /// Items paired by the value of `field`; items without it are paired by index among
    /// themselves.
    fn match_by_key(
        &self,
        field: &str,
        xa: &[Value],
        xb: &[Value],
        item_ctx: &Ctx,
    ) -> Vec<(usize, usize)> {
        let field_ctx = item_ctx.entry(&Value::text(field));
        let mut in_b: HashMap<u64, usize> = HashMap::new();
        let mut keyless_b = Vec::new();
        for (j, item) in xb.iter().enumerate() {
            match entry_named(item, field, item_ctx) {
                Some(v) => {
                    in_b.entry(ctx_value_hash(&field_ctx, v)).or_insert(j);
                }
                None => keyless_b.push(j),
            }
        }
        let mut keyless_b = keyless_b.into_iter();
        let mut pairs = Vec::new();
        for (i, item) in xa.iter().enumerate() {
            let j = match entry_named(item, field, item_ctx) {
                Some(v) => in_b.remove(&ctx_value_hash(&field_ctx, v)),
                None => keyless_b.next(),
            };
            if let Some(j) = j {
                pairs.push((i, j));
            }
        }
        pairs
    }
}

/// The value of `item`'s entry `field`. With a schema (`ctx` an item's message type), a key
/// names the field by its name or its JSON name, so `user_id` finds `userId` and back.
fn entry_named<'a>(item: &'a Value, field: &str, ctx: &Ctx) -> Option<&'a Value> {
    if let Some(v) = item.get(field) {
        return Some(v);
    }
    if ctx.is_none() {
        return None;
    }
    let wanted = ctx.key(&Value::text(field))?;
    item.as_map()?
        .iter()
        .find(|(k, _)| ctx.key(k).as_ref() == Some(&wanted))
        .map(|(_, v)| v)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    Given,
    Evident,
}

enum Queued<'v> {
    /// An item of A only: its index, value and node.
    Removed(usize, &'v Value, Option<NodeId>),
    /// An item of B only: its index, value and node.
    Added(usize, &'v Value, Option<NodeId>),
    /// Matched items, to compare.
    Pair(Pair<'v>),
}

impl Queued<'_> {
    fn rank(&self) -> u8 {
        match self {
            Queued::Removed(..) => 0,
            Queued::Added(..) => 1,
            Queued::Pair(_) => 2,
        }
    }
}

/// Adds to the LCS matches the items in each gap between them, paired by position, so that a
/// record whose one field changed is compared field by field rather than removed and re-added.
fn pair_gaps(matched: &[(usize, usize)], na: usize, nb: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(matched.len());
    let (mut pa, mut pb) = (0usize, 0usize);
    for &(i, j) in matched.iter().chain(std::iter::once(&(na, nb))) {
        let gap = (i - pa).min(j - pb);
        out.extend((0..gap).map(|k| (pa + k, pb + k)));
        if i < na && j < nb {
            out.push((i, j));
        }
        pa = i + 1;
        pb = j + 1;
    }
    out
}

/// The CBOR tags over a value, outermost first.
fn tags(v: &Value) -> Vec<u64> {
    let mut out = Vec::new();
    let mut cur = v;
    while let Value::Tag(t, inner) = cur {
        out.push(*t);
        cur = inner;
    }
    out
}

fn key_label(k: &Value) -> String {
    match k {
        Value::Text(s) => s.to_string(),
        other => other.summary(20),
    }
}

fn cut_list(items: &[String]) -> String {
    if items.len() > 8 {
        format!("{}, … ({} keys)", items[..8].join(", "), items.len())
    } else {
        items.join(", ")
    }
}

/// Why two values of different kinds may still be the same data, in words.
fn type_note(a: &Value, b: &Value) -> Option<String> {
    let b64 = |bytes: &[u8], text: &str| {
        let engines = [
            &base64::engine::general_purpose::STANDARD,
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        engines
            .iter()
            .any(|e| e.decode(text).is_ok_and(|d| d == bytes))
    };
    match (a, b) {
        (Value::Bytes(x), Value::Text(t)) | (Value::Text(t), Value::Bytes(x)) if b64(x, t) => {
            Some("the text is the bytes in base64 (JSON has no byte strings)".into())
        }
        (Value::Int(n), Value::Float(f)) | (Value::Float(f), Value::Int(n))
            if *n as f64 == f.value =>
        {
            Some("the same number, as an integer and as a float".into())
        }
        (Value::Int(n), Value::Text(t)) | (Value::Text(t), Value::Int(n))
            if t.parse::<i128>() == Ok(*n) =>
        {
            Some("the same number, as an integer and as text".into())
        }
        (Value::Timestamp(ts), Value::Text(t)) | (Value::Text(t), Value::Timestamp(ts))
            if Timestamp::parse_rfc3339(t) == Some(*ts) =>
        {
            Some("the same instant, as a timestamp and as RFC 3339 text".into())
        }
        _ => None,
    }
}

/// Hash of a key of a map in context `ctx` (in its canonical form: see [`Ctx::key`]).
fn ctx_key_hash(ctx: &Ctx, k: &Value) -> u64 {
    match ctx.key(k) {
        Some(canonical) => key_hash(&canonical),
        None => key_hash(k),
    }
}

/// Hash of an identity field's value in context `ctx` (in its canonical form: see
/// [`Ctx::normalize`]).
fn ctx_value_hash(ctx: &Ctx, v: &Value) -> u64 {
    match ctx.normalize(v) {
        Some((canonical, _)) => key_hash(&canonical),
        None => key_hash(v),
    }
}

/// Hash of a map key (keys are almost always scalars; a container key is hashed in full).
fn key_hash(k: &Value) -> u64 {
    scalar_hash(k, false).unwrap_or_else(|| {
        let options = DiffOptions::default();
        meaning_hashes(k, &options, &Ctx::None)
            .get(&(k as *const Value))
            .copied()
            .unwrap_or(0)
    })
}

fn finish(h: impl Hash) -> u64 {
    let mut s = DefaultHasher::new();
    h.hash(&mut s);
    s.finish()
}

/// The meaning hash of a scalar, `None` for a container (or a tagged value).
fn scalar_hash(v: &Value, strict_widths: bool) -> Option<u64> {
    Some(match v {
        Value::Null => finish(0u8),
        Value::Undefined => finish(1u8),
        Value::Bool(b) => finish((2u8, b)),
        Value::Int(n) => finish((3u8, n)),
        Value::BigInt(n) => finish((4u8, n.to_string())),
        Value::Float(f) => {
            let bits = if f.value.is_nan() {
                f64::NAN.to_bits()
            } else {
                f.value.to_bits()
            };
            if strict_widths {
                finish((5u8, bits, f.width))
            } else {
                finish((5u8, bits))
            }
        }
        Value::Decimal(d) => finish((6u8, d)),
        Value::Text(s) => finish((7u8, s)),
        Value::Bytes(b) => finish((8u8, b)),
        Value::Simple(s) => finish((9u8, s)),
        Value::Ext(t, d) => finish((10u8, t, d)),
        Value::Timestamp(t) => finish((11u8, t)),
        Value::Raw(r) => finish((12u8, r)),
        Value::Array(_) | Value::Map(_) | Value::Tag(..) => return None,
    })
}

/// The meaning hash of every value under `root` (map keys excluded), by address. Equal
/// hashes mean equal meaning: maps hash without their order unless `order` is set, floats
/// without their width unless `strict_widths` is set, and values at ignored paths are left out.
///
/// With a schema (`ctx` at the root), values hash in their canonical form ([`Ctx::normalize`])
/// and keys as their fields ([`Ctx::key`]).
fn meaning_hashes(root: &Value, options: &DiffOptions, ctx: &Ctx) -> HashMap<*const Value, u64> {
    enum Step<'a> {
        Enter(&'a Value, Option<PathSegment>, Ctx),
        Exit(&'a Value, bool, Ctx),
    }
    let mut out: HashMap<*const Value, u64> = HashMap::new();
    let mut path = Path::root();
    let mut stack = vec![Step::Enter(root, None, ctx.clone())];
    let check_ignore = !options.ignore.is_empty();
    while let Some(step) = stack.pop() {
        match step {
            Step::Enter(v, seg, ctx) => {
                let has_seg = seg.is_some();
                if let Some(s) = seg {
                    path.push(s);
                }
                if check_ignore && options.ignore.iter().any(|p| p.contains(&path)) {
                    if has_seg {
                        path.pop();
                    }
                    continue;
                }
                let canonical = if ctx.is_none() {
                    None
                } else {
                    ctx.normalize(v.untagged()).map(|(n, _)| n)
                };
                if let Some(h) = scalar_hash(canonical.as_ref().unwrap_or(v), options.strict_widths)
                {
                    out.insert(v as *const Value, h);
                    if has_seg {
                        path.pop();
                    }
                    continue;
                }
                stack.push(Step::Exit(v, has_seg, ctx.clone()));
                match v.untagged() {
                    Value::Array(items) => {
                        let item_ctx = ctx.item();
                        for (i, item) in items.iter().enumerate().rev() {
                            let seg = check_ignore.then_some(PathSegment::Index(i));
                            stack.push(Step::Enter(item, seg, item_ctx.clone()));
                        }
                    }
                    Value::Map(entries) => {
                        for (k, val) in entries.iter().rev() {
                            let seg = check_ignore.then(|| key_segment(k));
                            stack.push(Step::Enter(val, seg, ctx.entry(k)));
                        }
                    }
                    _ => {}
                }
            }
            Step::Exit(v, has_seg, ctx) => {
                let untagged = v.untagged();
                let mut h = match untagged {
                    Value::Array(items) => {
                        let mut s = DefaultHasher::new();
                        20u8.hash(&mut s);
                        for item in items {
                            if let Some(ih) = out.get(&(item as *const Value)) {
                                ih.hash(&mut s);
                            }
                        }
                        s.finish()
                    }
                    Value::Map(entries) => {
                        let mut s = DefaultHasher::new();
                        21u8.hash(&mut s);
                        let mut sum = 0u64;
                        for (k, val) in entries {
                            if let Some(vh) = out.get(&(val as *const Value)) {
                                let eh = finish((ctx_key_hash(&ctx, k), vh));
                                if options.order {
                                    eh.hash(&mut s);
                                } else {
                                    sum = sum.wrapping_add(eh);
                                }
                            }
                        }
                        sum.hash(&mut s);
                        s.finish()
                    }
                    other => scalar_hash(other, options.strict_widths).unwrap_or(0),
                };
                for t in tags(v).iter().rev() {
                    h = finish((22u8, t, h));
                }
                out.insert(v as *const Value, h);
                if has_seg {
                    path.pop();
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
