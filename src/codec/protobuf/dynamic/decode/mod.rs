//! Schema-guided protobuf decoding, with spans.
//!
//! Walks the wire format itself (tags, varints, LEN, I32/I64, groups) with an explicit stack of
//! open messages, so nesting depth costs heap, not call stack, and stops at
//! [`Limits::max_depth`](crate::limits::Limits). The value follows the contract in [`crate::codec::protobuf`];
//! spans follow the protobuf span conventions (a field's tag is its node's key, a LEN length its
//! header).
//!
//! Decisions:
//! - A field whose wire type contradicts the schema is kept as an unknown field
//!   ([`Value::Raw`] under its number), as protoc's parser does. Any repeated scalar accepts both
//!   packed (LEN) and unpacked occurrences.
//! - A singular field that occurs several times gives several entries (the map repeats the key;
//!   protobuf readers keep the last). Each packed chunk is its own array entry; a run of
//!   contiguous unpacked occurrences is one array.
//! - Enum numbers the enum does not name stay integers, for open and closed enums alike
//!   (nothing is moved to unknown fields).
//! - Unknown fields inside a map entry are skipped (as prost does); a missing key or value reads
//!   as its default.
//! - Well-known types read naturally only when their bytes are the plain form (the expected
//!   fields, wire types and ranges); anything else decodes as the ordinary message, so nothing is
//!   lost. `Any` whose packed type is itself a well-known type, or not in the pool, keeps its
//!   `"value"` bytes. Field masks keep their paths as written, joined by commas.
//!
//! How each well-known type reads is in `decode/wkt.rs`; how it is written, `encode/wkt.rs`.
//!
//! For proto3 JSON, [`decode_for_json`] reads as protobuf's runtimes do before writing JSON: a
//! field whose wire type contradicts the schema is refused (with the field and offset), and
//! every well-known type but `Struct` and `ListValue` is read as its plain message (whose
//! occurrences merge field by field).
//!
//! Not done here: encoding (`encode/`), proto3 JSON (`proto3_value.rs` writes it from this
//! value).

use std::cell::Cell;
use std::rc::Rc;

use prost_reflect::{ExtensionDescriptor, FieldDescriptor, Kind as PKind, MessageDescriptor};

mod wkt;

use super::field::FieldFacts;
use super::wkt::is_wkt;
use super::PerType;
use crate::codec::{DecodeError, DecodeOptions, Document, ErrorKind, Format, LimitName};
use crate::model::{Float, Kind, RawField, Segment, Span, SpanTreeBuilder, Value, WireType};

/// Decodes `bytes` as one `message`.
pub fn decode(
    bytes: &[u8],
    message: &MessageDescriptor,
    options: &DecodeOptions,
) -> Result<Document, DecodeError> {
    let mut d = Decoder::new(bytes, options);
    match d.run(message) {
        Ok(()) => Ok(d.finish()),
        Err(f) => Err(d.fail(f)),
    }
}

/// The field tables of the message types met, kept from one [`decode_value`] to the next.
pub(super) struct Tables(PerType<Fields>);

impl Tables {
    pub(super) fn new() -> Tables {
        Tables(PerType::new())
    }
}

/// Decodes `bytes` as one `message` for its value alone (no spans are kept), with the field
/// tables of earlier calls: for the many small pieces of one payload. `None` where [`decode`]
/// fails.
pub(super) fn decode_value(
    bytes: &[u8],
    message: &MessageDescriptor,
    options: &DecodeOptions,
    tables: &mut Tables,
) -> Option<Value> {
    let mut d = Decoder::new(bytes, options);
    // Only counting builders see these tables, so the key segments they keep (all the same,
    // as a counting builder interns nothing) stay true.
    d.builder = SpanTreeBuilder::counting();
    std::mem::swap(&mut d.tables, &mut tables.0);
    let read = d.run(message);
    std::mem::swap(&mut d.tables, &mut tables.0);
    read.ok()?;
    Some(d.root.take().unwrap_or_else(|| Value::Map(Vec::new())))
}

/// Why [`decode_for_json`] refused a payload: the message type and field being read, the byte
/// offset and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Refusal {
    /// The full name of the message type being read.
    pub message: String,
    /// The field being read (`full.Message.field`, or `[full.extension]`), if any.
    pub field: Option<String>,
    pub offset: usize,
    pub reason: String,
}

/// Decodes `bytes` as one `message` for its proto3 JSON (no spans are kept), as protobuf's
/// runtimes read a payload before writing it: a field whose wire type contradicts the schema is
/// refused rather than kept as an unknown field, and nesting is bounded by
/// [`Limits::DEPTH_CEILING`](crate::limits::Limits::DEPTH_CEILING) alone (the writer has its own
/// limit, which it reports with the path).
pub(super) fn decode_for_json(
    bytes: &[u8],
    message: &MessageDescriptor,
    tables: &mut Tables,
) -> Result<Value, Refusal> {
    let mut options = DecodeOptions::default();
    options.limits.max_depth = crate::limits::Limits::DEPTH_CEILING;
    options.limits.max_nodes = usize::MAX;
    let mut d = Decoder::new(bytes, &options);
    d.strict = true;
    d.builder = SpanTreeBuilder::counting();
    std::mem::swap(&mut d.tables, &mut tables.0);
    let read = d.run(message);
    std::mem::swap(&mut d.tables, &mut tables.0);
    match read {
        Ok(()) => Ok(d.root.take().unwrap_or_else(|| Value::Map(Vec::new()))),
        Err(f) => Err(d.refusal(f, message)),
    }
}

/// What a decode found, for ranking message types.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeStats {
    /// Fields the message types name.
    pub known: usize,
    /// Fields known only as extensions.
    pub extensions: usize,
    /// Fields no type names.
    pub unknown: usize,
    /// Enum numbers the enum does not name.
    pub unknown_enums: usize,
}

/// Decodes `bytes` as `message`, as [`decode`] does, and counts known and unknown fields: for
/// ranking message types, where the best one's document is then the payload's reading. `None`
/// where [`decode`] fails (without the partial document its error would carry).
pub fn decode_counting(
    bytes: &[u8],
    message: &MessageDescriptor,
    options: &DecodeOptions,
) -> Option<(Document, DecodeStats)> {
    let mut d = Decoder::new(bytes, options);
    d.run(message).ok()?;
    let stats = d.stats;
    Some((d.finish(), stats))
}

/// A failure before the partial document is assembled.
struct Failure {
    kind: ErrorKind,
    offset: usize,
    /// The step below the open node that the failure is in ([`Segment::Root`] for none), turned
    /// into a path segment only when the error is reported.
    segment: Segment,
    message: String,
}

/// Where a finished value goes in the frame below it.
#[derive(Debug, Clone)]
enum Attach {
    Root,
    /// An entry of the message (or struct) with this key.
    Entry(Value),
    /// An item of the open run: an array item (`None`) or a map entry (`Some(key)`).
    Run(Option<Value>),
    /// An item of a `ListValue`.
    Item,
}

/// What [`Decoder::try_wkt`] did.
enum Wkt {
    /// Read as one leaf node with this value.
    Leaf(Value),
    /// Pushed its own frame (an `Any` with a known type, a `Value` holding a struct or list).
    Pushed,
    /// Not in its plain form: decode as the ordinary message.
    Plain,
}

/// How a frame's fields become its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Message,
    /// `google.protobuf.Struct`: field 1's entries are the frame's own entries.
    Struct,
    /// `google.protobuf.ListValue`: field 1's items are the frame's own items.
    List,
}

/// Contiguous occurrences of one repeated (or map) field.
struct Run {
    number: u32,
    key: Value,
    is_map: bool,
    items: Vec<Value>,
    /// The map keys of `items` (empty unless `is_map`).
    keys: Vec<Value>,
    last_end: usize,
}

impl Run {
    /// The frame entry the run becomes.
    fn into_entry(self) -> (Value, Value) {
        let v = if self.is_map {
            Value::Map(self.keys.into_iter().zip(self.items).collect())
        } else {
            Value::Array(self.items)
        };
        (self.key, v)
    }
}

/// One open message.
struct Frame {
    fields: Rc<Fields>,
    mode: Mode,
    /// End of the message's bytes (for a group, of the enclosing message's).
    limit: usize,
    /// Where the node ends and decoding resumes after the message (LEN messages).
    resume: usize,
    /// The field number of the group this frame is, if it is one.
    group: Option<u32>,
    /// Where the frame's entries start on [`Decoder::entries`].
    start: usize,
    items: Vec<Value>,
    run: Option<Run>,
    attach: Attach,
}

/// What the schema says about one field, worked out once per message type and field number in
/// a decode (extensions: at each occurrence).
struct Field {
    /// The entry's key: the field's name, or `[full.name]` for an extension.
    key: Value,
    /// The key interned in the span tree, once it was first needed.
    segment: Cell<Option<Segment>>,
    extension: bool,
    /// The facts both directions share.
    facts: FieldFacts,
}

impl std::ops::Deref for Field {
    type Target = FieldFacts;

    fn deref(&self) -> &FieldFacts {
        &self.facts
    }
}

impl Field {
    fn new(field: &FieldDescriptor) -> Field {
        Field {
            key: Value::text(field.name()),
            segment: Cell::new(None),
            extension: false,
            facts: FieldFacts::of_field(field),
        }
    }

    fn extension(e: &ExtensionDescriptor) -> Field {
        Field {
            key: Value::Text(format!("[{}]", e.full_name()).into()),
            segment: Cell::new(None),
            extension: true,
            facts: FieldFacts::of_extension(e),
        }
    }
}

/// A message type's fields by number, and how the decoder reads the type.
struct Fields {
    desc: MessageDescriptor,
    /// Sorted by number.
    by_number: Vec<Rc<Field>>,
    /// A well-known type that may read in its natural form ([`Decoder::try_wkt`]).
    wkt: bool,
    mode: Mode,
}

impl Fields {
    fn new(desc: &MessageDescriptor) -> Fields {
        let mut by_number: Vec<Rc<Field>> =
            desc.fields().map(|f| Rc::new(Field::new(&f))).collect();
        by_number.sort_by_key(|f| f.number);
        let name = desc.full_name();
        Fields {
            desc: desc.clone(),
            by_number,
            wkt: is_wkt(name),
            mode: match name {
                "google.protobuf.Struct" => Mode::Struct,
                "google.protobuf.ListValue" => Mode::List,
                _ => Mode::Message,
            },
        }
    }

    /// The field numbered `number`, or the extension of that number.
    fn get(&self, number: u32) -> Option<Rc<Field>> {
        // Fields numbered 1, 2, 3… in order are found at their position.
        let at = (number as usize).wrapping_sub(1);
        if let Some(f) = self.by_number.get(at).filter(|f| f.number == number) {
            return Some(Rc::clone(f));
        }
        if let Ok(i) = self.by_number.binary_search_by_key(&number, |f| f.number) {
            return self.by_number.get(i).cloned();
        }
        let e = self.desc.get_extension(number)?;
        Some(Rc::new(Field::extension(&e)))
    }
}

/// One field of a message read without descending into it.
#[derive(Debug, Clone, Copy)]
struct Flat {
    number: u32,
    wire: WireType,
    tag_start: usize,
    /// Start of the value bytes (after a LEN's length).
    start: usize,
    end: usize,
    varint: u64,
}

/// Where one message's node sits: `start..content` is its header (a length; for a map value the
/// value's tag and length), `content..limit` its bytes, `resume` where the node ends and reading
/// goes on; `segment` and `key` are its place in the tree, `path_seg` its segment in error paths.
#[derive(Debug, Clone, Copy)]
struct MessageNode {
    segment: Segment,
    key: Option<Span>,
    start: usize,
    content: usize,
    limit: usize,
    resume: usize,
    path_seg: Segment,
}

struct Decoder<'a> {
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
    builder: SpanTreeBuilder,
    stack: Vec<Frame>,
    /// The entries of every open frame, each frame's above the one below it (only the top frame
    /// adds entries), so a finished message's map is allocated once at its exact size.
    entries: Vec<(Value, Value)>,
    /// The field tables of the message types met so far.
    tables: PerType<Fields>,
    root: Option<Value>,
    stats: DecodeStats,
    /// Most nodes the document may have ([`crate::limits::Limits::max_nodes`]), checked before
    /// each field and each packed element (a map entry or an `Any` adds up to three nodes).
    max_nodes: usize,
    /// Refuse a field whose wire type contradicts the schema ([`decode_for_json`]).
    strict: bool,
    /// The number of the field being read in the top frame (0 between fields), for
    /// [`Refusal::field`].
    reading: u32,
}

fn fail<T>(
    kind: ErrorKind,
    offset: usize,
    segment: Segment,
    message: String,
) -> Result<T, Failure> {
    Err(Failure {
        kind,
        offset,
        segment,
        message,
    })
}

/// Reads a varint at `pos` below `limit`: the value and the offset after it.
fn read_varint(
    bytes: &[u8],
    pos: usize,
    limit: usize,
) -> Result<(u64, usize), (ErrorKind, String)> {
    use crate::codec::protobuf::varint::{read, VarintError};
    read(bytes, pos, limit)
        .map(|(v, n)| (v, pos + n))
        .map_err(|e| match e {
            VarintError::Eof if limit >= bytes.len() => (
                ErrorKind::Eof,
                "varint runs past the end of the input".into(),
            ),
            VarintError::Eof => (
                ErrorKind::Syntax,
                "varint runs past the end of the enclosing message".into(),
            ),
            VarintError::Overflow => (ErrorKind::Syntax, "varint is longer than 64 bits".into()),
            VarintError::TooLong => (ErrorKind::Syntax, "varint is longer than 10 bytes".into()),
        })
}

/// The wire type a field of `kind` is written with.
fn expected_wire(kind: &PKind, is_group: bool) -> WireType {
    match kind {
        PKind::Double | PKind::Fixed64 | PKind::Sfixed64 => WireType::I64,
        PKind::Float | PKind::Fixed32 | PKind::Sfixed32 => WireType::I32,
        PKind::String | PKind::Bytes => WireType::Len,
        PKind::Message(_) if is_group => WireType::Group,
        PKind::Message(_) => WireType::Len,
        _ => WireType::Varint,
    }
}

/// A field's type as a `.proto` spells it (a message or enum by its full name).
fn kind_name(kind: &PKind) -> String {
    match kind {
        PKind::Message(m) => m.full_name().to_string(),
        PKind::Enum(e) => e.full_name().to_string(),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn is_packable(kind: &PKind) -> bool {
    !matches!(kind, PKind::String | PKind::Bytes | PKind::Message(_))
}

/// The value of a scalar of `kind` whose value bytes are `data` (a varint already read as `v`),
/// and whether it is an enum number the enum does not name (those stay integers). Fails only
/// for a string that is not UTF-8.
fn scalar(kind: &PKind, v: u64, data: &[u8]) -> Result<(Value, bool), std::str::Utf8Error> {
    let le32 = || {
        data.get(..4)
            .and_then(|d| <[u8; 4]>::try_from(d).ok())
            .unwrap_or_default()
    };
    let le64 = || {
        data.get(..8)
            .and_then(|d| <[u8; 8]>::try_from(d).ok())
            .unwrap_or_default()
    };
    let value = match kind {
        PKind::Int32 => Value::Int(i128::from(v as i32)),
        PKind::Int64 => Value::Int(i128::from(v as i64)),
        PKind::Uint32 => Value::Int(i128::from(v as u32)),
        PKind::Uint64 => Value::Int(i128::from(v)),
        PKind::Sint32 => {
            let n = v as u32;
            Value::Int(i128::from(((n >> 1) as i32) ^ -((n & 1) as i32)))
        }
        PKind::Sint64 => Value::Int(i128::from(((v >> 1) as i64) ^ -((v & 1) as i64))),
        PKind::Bool => Value::Bool(v != 0),
        PKind::Fixed32 => Value::Int(i128::from(u32::from_le_bytes(le32()))),
        PKind::Sfixed32 => Value::Int(i128::from(i32::from_le_bytes(le32()))),
        PKind::Float => Value::Float(Float::f32(f32::from_le_bytes(le32()))),
        PKind::Fixed64 => Value::Int(i128::from(u64::from_le_bytes(le64()))),
        PKind::Sfixed64 => Value::Int(i128::from(i64::from_le_bytes(le64()))),
        PKind::Double => Value::Float(Float::f64(f64::from_le_bytes(le64()))),
        PKind::Bytes => Value::Bytes(data.to_vec()),
        PKind::String => Value::text(std::str::from_utf8(data)?),
        PKind::Enum(e) => {
            let n = v as i32;
            return Ok(match e.get_value(n) {
                Some(ev) => (Value::text(ev.name()), false),
                None => (Value::Int(i128::from(n)), true),
            });
        }
        PKind::Message(_) => Value::Map(Vec::new()),
    };
    Ok((value, false))
}

/// The default of a scalar of `kind` (for a map entry without its key or value).
fn default_of(kind: &PKind) -> Value {
    match kind {
        PKind::Bool => Value::Bool(false),
        PKind::Float => Value::Float(Float::f32(0.0)),
        PKind::Double => Value::f64(0.0),
        PKind::String => Value::text(""),
        PKind::Bytes => Value::Bytes(Vec::new()),
        PKind::Enum(e) => Value::text(e.default_value().name()),
        PKind::Message(_) => Value::Map(Vec::new()),
        _ => Value::Int(0),
    }
}

impl<'a> Decoder<'a> {
    fn new(bytes: &'a [u8], options: &DecodeOptions) -> Decoder<'a> {
        Decoder {
            bytes,
            pos: 0,
            max_depth: options.limits.depth().max(1),
            max_nodes: options.limits.nodes_for(bytes.len()),
            builder: SpanTreeBuilder::new(),
            stack: Vec::new(),
            entries: Vec::new(),
            tables: PerType::new(),
            root: None,
            stats: DecodeStats::default(),
            strict: false,
            reading: 0,
        }
    }

    /// `f` as a [`Refusal`] that names the message type and field being read (the root type
    /// `root` when no frame is open).
    fn refusal(&self, f: Failure, root: &MessageDescriptor) -> Refusal {
        let desc = self.stack.last().map_or(root, |top| &top.fields.desc);
        let field = (self.reading != 0).then(|| {
            if let Some(field) = desc.get_field(self.reading) {
                format!("{}.{}", desc.full_name(), field.name())
            } else if let Some(ext) = desc.get_extension(self.reading) {
                format!("[{}]", ext.full_name())
            } else {
                format!("{}.{}", desc.full_name(), self.reading)
            }
        });
        Refusal {
            message: desc.full_name().to_string(),
            field,
            offset: f.offset,
            reason: f.message,
        }
    }

    /// The field table of `desc`, made on first use.
    fn fields_of(&mut self, desc: &MessageDescriptor) -> Rc<Fields> {
        self.tables.get(desc, Fields::new)
    }

    /// The span-tree segment of `field`'s entries, interned once per field.
    fn field_segment(&mut self, field: &Field) -> Segment {
        if let Some(s) = field.segment.get() {
            return s;
        }
        let s = self.builder.segment_for_key(&field.key);
        field.segment.set(Some(s));
        s
    }

    /// Opens a frame for a message whose fields start at `self.entries`' end.
    fn push_frame(
        &mut self,
        fields: Rc<Fields>,
        limit: usize,
        resume: usize,
        group: Option<u32>,
        mode: Mode,
        attach: Attach,
    ) {
        self.stack.push(Frame {
            fields,
            mode,
            limit,
            resume,
            group,
            start: self.entries.len(),
            items: Vec::new(),
            run: None,
            attach,
        });
    }

    /// Adds an entry to the top frame (dropped when no frame is open).
    fn push_entry(&mut self, key: Value, value: Value) {
        if !self.stack.is_empty() {
            self.entries.push((key, value));
        }
    }

    /// Closes the top frame's run into an entry, if it has one; the run's end.
    fn end_run(&mut self) -> Option<usize> {
        let run = self.stack.last_mut()?.run.take()?;
        let end = run.last_end;
        self.entries.push(run.into_entry());
        Some(end)
    }

    /// The value of `frame`, just popped: its run closed, its entries taken off the stack.
    fn frame_value(&mut self, frame: &mut Frame) -> Value {
        if let Some(run) = frame.run.take() {
            self.entries.push(run.into_entry());
        }
        let start = frame.start.min(self.entries.len());
        match frame.mode {
            Mode::List => {
                self.entries.truncate(start);
                Value::Array(std::mem::take(&mut frame.items))
            }
            // One allocation and one copy, where a drain was collected entry by entry.
            _ => Value::Map(self.entries.split_off(start)),
        }
    }

    /// Turns a failure into the error with the partial document.
    /// The document read, once [`Decoder::run`] has succeeded.
    fn finish(mut self) -> Document {
        let value = self.root.take().unwrap_or_else(|| Value::Map(Vec::new()));
        Document {
            format: Format::Protobuf,
            value,
            spans: self.builder.finish(),
        }
    }

    fn fail(mut self, f: Failure) -> DecodeError {
        let mut path = self.builder.current_path();
        if let Some(seg) = self.builder.segment_path(f.segment) {
            path.push(seg);
        }
        while let Some(mut frame) = self.stack.pop() {
            let v = self.frame_value(&mut frame);
            self.attach(frame.attach, v, f.offset);
        }
        let value = self.root.take().unwrap_or_else(|| Value::Map(Vec::new()));
        let spans = self.builder.finish_partial(f.offset);
        DecodeError {
            format: Format::Protobuf,
            kind: f.kind,
            offset: f.offset,
            path,
            message: f.message,
            partial: Some(Box::new(Document {
                format: Format::Protobuf,
                value,
                spans,
            })),
        }
    }

    /// Puts a finished value where it belongs in the top frame.
    fn attach(&mut self, attach: Attach, v: Value, end: usize) {
        match attach {
            Attach::Root => self.root = Some(v),
            Attach::Entry(k) => self.push_entry(k, v),
            Attach::Run(k) => {
                if let Some(run) = self.stack.last_mut().and_then(|t| t.run.as_mut()) {
                    if run.is_map {
                        run.keys.push(k.unwrap_or_default());
                    }
                    run.items.push(v);
                    run.last_end = end;
                }
            }
            Attach::Item => {
                if let Some(top) = self.stack.last_mut() {
                    top.items.push(v);
                }
            }
        }
    }

    fn check_depth(&self, at: usize, segment: Segment) -> Result<(), Failure> {
        if self.builder.depth() >= self.max_depth {
            return fail(
                ErrorKind::Limit(LimitName::Depth),
                at,
                segment,
                format!("nesting deeper than {} levels", self.max_depth),
            );
        }
        Ok(())
    }

    /// Fails at `at` when the document already has [`Decoder::max_nodes`] nodes.
    fn check_nodes(&self, at: usize, segment: Segment) -> Result<(), Failure> {
        if self.builder.len() < self.max_nodes {
            return Ok(());
        }
        fail(
            ErrorKind::Limit(LimitName::Nodes),
            at,
            segment,
            crate::limits::Limits::nodes_message(self.max_nodes),
        )
    }

    fn varint(&self, pos: usize, limit: usize, seg: Segment) -> Result<(u64, usize), Failure> {
        read_varint(self.bytes, pos, limit).map_err(|(kind, message)| Failure {
            kind,
            offset: pos.min(self.bytes.len()),
            segment: seg,
            message,
        })
    }

    /// Reads the value bytes of a field of wire type `wire` whose tag ended at `pos`:
    /// (varint value, header end, value start, value end).
    fn field_body(
        &self,
        wire: WireType,
        number: u32,
        pos: usize,
        limit: usize,
        seg: Segment,
    ) -> Result<(u64, usize, usize), Failure> {
        let place = if limit >= self.bytes.len() {
            "the input"
        } else {
            "the enclosing message"
        };
        let eof = if limit >= self.bytes.len() {
            ErrorKind::Eof
        } else {
            ErrorKind::Syntax
        };
        let left = limit.saturating_sub(pos);
        match wire {
            WireType::Varint => {
                let (v, end) = self.varint(pos, limit, seg)?;
                Ok((v, pos, end))
            }
            WireType::I32 | WireType::I64 => {
                let n = if wire == WireType::I32 { 4 } else { 8 };
                if left < n {
                    return fail(
                        eof,
                        pos,
                        seg,
                        format!("field {number} needs {n} bytes but {place} has {left} left"),
                    );
                }
                Ok((0, pos, pos + n))
            }
            WireType::Len => {
                let (len, start) = self.varint(pos, limit, seg)?;
                let left = limit.saturating_sub(start);
                if len > left as u64 {
                    return fail(
                        eof,
                        pos,
                        seg,
                        format!(
                            "length {len} of field {number} runs past the end of {place} ({left} bytes left)"
                        ),
                    );
                }
                Ok((len, start, start + len as usize))
            }
            WireType::Group => {
                let end = self.skip_group(number, pos, limit, seg)?;
                Ok((0, pos, end))
            }
        }
    }

    /// Finds the end tag of the group `number` whose contents start at `pos`; returns the offset
    /// of that end tag. Nested groups are counted, not recursed into.
    fn skip_group(
        &self,
        number: u32,
        pos: usize,
        limit: usize,
        seg: Segment,
    ) -> Result<usize, Failure> {
        let mut open = vec![number];
        let mut p = pos;
        loop {
            let tag_start = p;
            if p >= limit {
                let kind = if limit >= self.bytes.len() {
                    ErrorKind::Eof
                } else {
                    ErrorKind::Syntax
                };
                return fail(kind, p, seg, format!("group {number} has no end tag"));
            }
            let (tag, next) = self.varint(p, limit, seg)?;
            p = next;
            let n = (tag >> 3) as u32;
            match tag & 7 {
                4 => {
                    if open.last() != Some(&n) {
                        return fail(
                            ErrorKind::Syntax,
                            tag_start,
                            seg,
                            format!("end tag of group {n} does not close the open group"),
                        );
                    }
                    open.pop();
                    if open.is_empty() {
                        return Ok(tag_start);
                    }
                }
                3 => {
                    if open.len() >= self.max_depth {
                        return fail(
                            ErrorKind::Limit(LimitName::Depth),
                            tag_start,
                            seg,
                            format!("groups nested deeper than {} levels", self.max_depth),
                        );
                    }
                    open.push(n);
                }
                w => {
                    let Some(wire) = WireType::of_tag(w) else {
                        return fail(
                            ErrorKind::Syntax,
                            tag_start,
                            seg,
                            format!("invalid wire type {w}"),
                        );
                    };
                    let (_, _, end) = self.field_body(wire, n, p, limit, seg)?;
                    p = end;
                }
            }
        }
    }

    /// The fields of `start..end` without descending into them; `None` if they are not
    /// well-formed or hold a group.
    fn flat(&self, start: usize, end: usize) -> Option<Vec<Flat>> {
        let mut out = Vec::new();
        let mut p = start;
        while p < end {
            let (tag, next) = read_varint(self.bytes, p, end).ok()?;
            let wire = WireType::of_tag(tag)?;
            let number = u32::try_from(tag >> 3).ok()?;
            if number == 0 || wire == WireType::Group {
                return None;
            }
            let (varint, vstart, vend) = match wire {
                WireType::Varint => {
                    let (v, e) = read_varint(self.bytes, next, end).ok()?;
                    (v, next, e)
                }
                WireType::I32 => (0, next, next.checked_add(4)?),
                WireType::I64 => (0, next, next.checked_add(8)?),
                _ => {
                    let (len, s) = read_varint(self.bytes, next, end).ok()?;
                    let e = s.checked_add(usize::try_from(len).ok()?)?;
                    (len, s, e)
                }
            };
            if vend > end {
                return None;
            }
            out.push(Flat {
                number,
                wire,
                tag_start: p,
                start: vstart,
                end: vend,
                varint,
            });
            p = vend;
        }
        Some(out)
    }

    fn run(&mut self, message: &MessageDescriptor) -> Result<(), Failure> {
        let len = self.bytes.len();
        let root = MessageNode {
            segment: Segment::Root,
            key: None,
            start: 0,
            content: 0,
            limit: len,
            resume: len,
            path_seg: Segment::Root,
        };
        self.begin_message(message, root, Attach::Root)?;
        self.main_loop()
    }

    /// Starts a message field (or the root) at `node`: a well-known type reads naturally,
    /// anything else pushes a frame.
    fn begin_message(
        &mut self,
        desc: &MessageDescriptor,
        node: MessageNode,
        attach: Attach,
    ) -> Result<(), Failure> {
        let fields = self.fields_of(desc);
        // Read for proto3 JSON, well-known types are their plain messages, which merge
        // exactly as protobuf's runtimes merge them; the writer puts them in their JSON form.
        if fields.wkt && !self.strict {
            match self.try_wkt(desc, &node, &attach)? {
                Wkt::Leaf(done) => {
                    self.attach(attach, done, node.resume);
                    self.pos = node.resume;
                    return Ok(());
                }
                Wkt::Pushed => return Ok(()),
                Wkt::Plain => {}
            }
        }
        self.check_depth(node.start, node.path_seg)?;
        let kind = if fields.mode == Mode::List {
            Kind::Array
        } else {
            Kind::Map
        };
        self.builder
            .open(kind, node.segment, node.key, node.start, node.content);
        let mode = fields.mode;
        self.push_frame(fields, node.limit, node.resume, None, mode, attach);
        self.pos = node.content;
        Ok(())
    }

    /// End of the tag varint starting at `tag_start` (the start of what follows it).
    fn len_start(&self, tag_start: usize) -> usize {
        match read_varint(self.bytes, tag_start, self.bytes.len()) {
            Ok((_, e)) => e,
            Err(_) => tag_start,
        }
    }

    /// Finishes the top frame: closes its run and node, attaches its value below.
    fn finish_frame(&mut self, payload_end: usize, end: usize) {
        let Some(mut frame) = self.stack.pop() else {
            return;
        };
        if let Some(run) = &frame.run {
            let e = run.last_end;
            self.builder.close(e, e);
        }
        let v = self.frame_value(&mut frame);
        self.builder.close(payload_end, end);
        self.attach(frame.attach, v, end);
        self.pos = end;
    }

    /// Closes the top frame's run, value and node, if it has one.
    fn close_run(&mut self) {
        if let Some(e) = self.end_run() {
            self.builder.close(e, e);
        }
    }

    fn main_loop(&mut self) -> Result<(), Failure> {
        loop {
            let Some(top) = self.stack.last() else {
                return Ok(());
            };
            let limit = top.limit;
            let pos = self.pos;
            self.reading = 0;
            if pos >= limit {
                if let Some(g) = top.group {
                    let kind = if limit >= self.bytes.len() {
                        ErrorKind::Eof
                    } else {
                        ErrorKind::Syntax
                    };
                    return fail(
                        kind,
                        pos,
                        Segment::Root,
                        format!("group {g} has no end tag"),
                    );
                }
                let resume = top.resume;
                self.finish_frame(limit, resume);
                continue;
            }
            let (tag, after_tag) = self.varint(pos, limit, Segment::Root)?;
            let wire_bits = tag & 7;
            let Ok(number) = u32::try_from(tag >> 3) else {
                return fail(
                    ErrorKind::Syntax,
                    pos,
                    Segment::Root,
                    format!("field number {} is too large", tag >> 3),
                );
            };
            if number == 0 || number > 536_870_911 {
                return fail(
                    ErrorKind::Syntax,
                    pos,
                    Segment::Root,
                    format!("field number {number} is not valid"),
                );
            }
            if wire_bits == 4 {
                if top.group == Some(number) {
                    self.close_run();
                    self.finish_frame(pos, after_tag);
                    continue;
                }
                return fail(
                    ErrorKind::Syntax,
                    pos,
                    Segment::Root,
                    format!("end tag of group {number} without a matching start tag"),
                );
            }
            let Some(wire) = WireType::of_tag(tag) else {
                return fail(
                    ErrorKind::Syntax,
                    pos,
                    Segment::Root,
                    format!("invalid wire type {wire_bits} in field {number}"),
                );
            };
            let mode = top.mode;
            let info = top.fields.get(number);
            self.reading = number;
            if top.run.as_ref().is_some_and(|r| r.number != number) {
                self.close_run();
            }
            self.check_nodes(pos, Segment::Root)?;
            let tag_span = Span::new(pos, after_tag);
            match info {
                Some(info) => self.read_known(info, wire, tag_span, limit, mode)?,
                None => self.read_unknown(number, wire, tag_span, limit)?,
            }
        }
    }

    fn read_unknown(
        &mut self,
        number: u32,
        wire: WireType,
        tag: Span,
        limit: usize,
    ) -> Result<(), Failure> {
        self.close_run();
        let key = Value::Int(i128::from(number));
        let seg = self.builder.segment_for_key(&key);
        let (_, vstart, vend) = self.field_body(wire, number, tag.end, limit, seg)?;
        let mut end = vend;
        if wire == WireType::Group {
            // Past the end tag.
            end = self.varint(vend, limit, seg)?.1;
        }
        let data = self.bytes.get(vstart..vend).unwrap_or_default().to_vec();
        self.builder.leaf(
            Kind::Raw,
            seg,
            Some(tag),
            Span::new(tag.end, end),
            vstart,
            Span::new(vstart, vend),
        );
        self.stats.unknown += 1;
        let v = Value::Raw(Box::new(RawField {
            wire_type: wire,
            data,
        }));
        match self.stack.last_mut() {
            Some(top) if top.mode == Mode::List => top.items.push(v),
            _ => self.push_entry(key, v),
        }
        self.pos = end;
        Ok(())
    }

    fn read_known(
        &mut self,
        info: Rc<Field>,
        wire: WireType,
        tag: Span,
        limit: usize,
        mode: Mode,
    ) -> Result<(), Failure> {
        let expected = expected_wire(&info.kind, info.group);
        let packed = info.list && wire == WireType::Len && is_packable(&info.kind);
        if wire != expected && !packed {
            if self.strict {
                let seg = self.field_segment(&info);
                return fail(
                    ErrorKind::Invalid,
                    tag.start,
                    seg,
                    format!(
                        "field {} has wire type {} where its type ({}) is written as {}",
                        info.number,
                        wire.name(),
                        kind_name(&info.kind),
                        expected.name()
                    ),
                );
            }
            return self.read_unknown(info.number, wire, tag, limit);
        }
        if info.extension {
            self.stats.extensions += 1;
        } else {
            self.stats.known += 1;
        }
        // Struct's fields and ListValue's values belong to the frame itself.
        let direct = (mode == Mode::Struct || mode == Mode::List) && info.number == 1;
        if packed {
            self.close_run();
            return self.read_packed(&info, tag, limit);
        }
        let (attach, segment) = if direct {
            if mode == Mode::List {
                let i = self.stack.last().map_or(0, |t| t.items.len()) as u32;
                (Attach::Item, Segment::Index(i))
            } else {
                // Struct entries: the segment comes from the entry's key, below.
                (Attach::Entry(Value::Null), Segment::Root)
            }
        } else if info.list || info.map {
            self.run_item(&info, tag)?
        } else {
            let seg = self.field_segment(&info);
            (Attach::Entry(info.key.clone()), seg)
        };
        if info.map || (direct && mode == Mode::Struct) {
            return self.read_map_entry(&info, tag, limit, direct);
        }
        // Errors name the item or the field; a Struct's entry is named by its key, below.
        let path_seg = segment;
        let (v, hdr, vend) = self.field_body(wire, info.number, tag.end, limit, path_seg)?;
        match &info.kind {
            PKind::Message(m) if wire == WireType::Group => {
                self.begin_group(m, info.number, segment, tag, limit, attach)
            }
            PKind::Message(m) => {
                let _ = v;
                let node = MessageNode {
                    segment,
                    key: Some(tag),
                    start: tag.end,
                    content: hdr,
                    limit: vend,
                    resume: vend,
                    path_seg,
                };
                self.begin_message(m, node, attach)
            }
            kind => {
                let data = self.bytes.get(hdr..vend).unwrap_or_default();
                let (value, unknown_enum) = match scalar(kind, v, data) {
                    Ok(read) => read,
                    // utf8_validation = NONE: the bytes as they are.
                    Err(_) if info.loose_utf8 => (Value::Bytes(data.to_vec()), false),
                    Err(e) => {
                        return fail(
                            ErrorKind::Invalid,
                            hdr + e.valid_up_to(),
                            path_seg,
                            format!("string field {} is not valid UTF-8", info.key.summary(48)),
                        );
                    }
                };
                if unknown_enum {
                    self.stats.unknown_enums += 1;
                }
                self.builder.leaf(
                    value.kind(),
                    segment,
                    Some(tag),
                    Span::new(tag.end, vend),
                    hdr,
                    Span::new(hdr, vend),
                );
                self.attach(attach, value, vend);
                self.pos = vend;
                Ok(())
            }
        }
    }

    /// Where the next item of the repeated or map field `info` goes: the top frame's run of it,
    /// opened here (with its array or map node) when the run open is of another field or none.
    #[inline]
    fn run_item(&mut self, info: &Field, tag: Span) -> Result<(Attach, Segment), Failure> {
        let need_new = self
            .stack
            .last()
            .is_none_or(|t| t.run.as_ref().is_none_or(|r| r.number != info.number));
        if need_new {
            let seg = self.field_segment(info);
            self.check_depth(tag.start, seg)?;
            let kind = if info.map { Kind::Map } else { Kind::Array };
            self.builder.open(kind, seg, None, tag.start, tag.start);
            if let Some(top) = self.stack.last_mut() {
                top.run = Some(Run {
                    number: info.number,
                    key: info.key.clone(),
                    is_map: info.map,
                    items: Vec::new(),
                    keys: Vec::new(),
                    last_end: tag.start,
                });
            }
        }
        let i = self
            .stack
            .last()
            .and_then(|t| t.run.as_ref())
            .map_or(0, |r| r.items.len()) as u32;
        Ok((Attach::Run(None), Segment::Index(i)))
    }

    /// Opens the group field `number` of type `m` whose start tag is `tag`: its fields run to
    /// its end tag, within the enclosing message's `limit`.
    #[inline]
    fn begin_group(
        &mut self,
        m: &MessageDescriptor,
        number: u32,
        segment: Segment,
        tag: Span,
        limit: usize,
        attach: Attach,
    ) -> Result<(), Failure> {
        self.check_depth(tag.end, segment)?;
        self.builder
            .open(Kind::Map, segment, Some(tag), tag.end, tag.end);
        let fields = self.fields_of(m);
        self.push_frame(fields, limit, limit, Some(number), Mode::Message, attach);
        self.pos = tag.end;
        Ok(())
    }

    fn read_packed(&mut self, info: &Field, tag: Span, limit: usize) -> Result<(), Failure> {
        let seg = self.field_segment(info);
        let (_, start, end) = self.field_body(WireType::Len, info.number, tag.end, limit, seg)?;
        self.check_depth(tag.start, seg)?;
        self.builder
            .open(Kind::Array, seg, Some(tag), tag.end, start);
        let mut items = Vec::new();
        let mut p = start;
        let wire = expected_wire(&info.kind, false);
        while p < end {
            let item_seg = Segment::Index(items.len() as u32);
            let body = self
                .check_nodes(p, item_seg)
                .and_then(|()| self.field_body(wire, info.number, p, end, item_seg));
            let (v, s, e) = match body {
                Ok(x) => x,
                Err(f) => {
                    self.push_entry(info.key.clone(), Value::Array(items));
                    return Err(f);
                }
            };
            let data = self.bytes.get(s..e).unwrap_or_default();
            // Packable kinds are never text, so this cannot fail.
            let (value, unknown_enum) = scalar(&info.kind, v, data).unwrap_or_default();
            if unknown_enum {
                self.stats.unknown_enums += 1;
            }
            self.builder.leaf(
                value.kind(),
                item_seg,
                None,
                Span::new(p, e),
                p,
                Span::new(p, e),
            );
            items.push(value);
            p = e;
        }
        self.builder.close(end, end);
        self.push_entry(info.key.clone(), Value::Array(items));
        self.pos = end;
        Ok(())
    }

    /// The entry type of the map field `info` and the fields of its entry whose tag is `tag`,
    /// read flat, with where they start and end.
    #[inline]
    fn map_entry_fields(
        &self,
        info: &Field,
        tag: Span,
        limit: usize,
    ) -> Result<(MessageDescriptor, Vec<Flat>, usize, usize), Failure> {
        let path_seg = Segment::Root;
        let (_, content, end) =
            self.field_body(WireType::Len, info.number, tag.end, limit, path_seg)?;
        let Some(entry) = info.kind.as_message().cloned() else {
            return fail(
                ErrorKind::Invalid,
                tag.start,
                path_seg,
                "map field without an entry type".into(),
            );
        };
        let Some(fields) = self.flat(content, end) else {
            return fail(
                ErrorKind::Syntax,
                content,
                path_seg,
                format!("map entry of {} is not well-formed", info.key.summary(48)),
            );
        };
        Ok((entry, fields, content, end))
    }

    /// The key of a map entry from its key field `f`, of `kind`.
    #[inline]
    fn map_key(&self, kind: &PKind, f: &Flat) -> Result<Value, Failure> {
        let data = self.bytes.get(f.start..f.end).unwrap_or_default();
        match scalar(kind, f.varint, data) {
            Ok((key, _)) => Ok(key),
            Err(e) => fail(
                ErrorKind::Invalid,
                f.start + e.valid_up_to(),
                Segment::Root,
                "map key is not valid UTF-8".into(),
            ),
        }
    }

    /// The scalar value of a map entry from its value field `f`, of `kind`; errors name the
    /// entry by `entry_path`.
    #[inline]
    fn map_value(
        &mut self,
        value_field: &FieldDescriptor,
        f: &Flat,
        entry_path: Segment,
    ) -> Result<Value, Failure> {
        let data = self.bytes.get(f.start..f.end).unwrap_or_default();
        let (v, unknown_enum) = match scalar(&value_field.kind(), f.varint, data) {
            Ok(read) => read,
            // utf8_validation = NONE: the bytes as they are.
            Err(_) if FieldFacts::of_field(value_field).loose_utf8 => {
                (Value::Bytes(data.to_vec()), false)
            }
            Err(e) => {
                return fail(
                    ErrorKind::Invalid,
                    f.start + e.valid_up_to(),
                    entry_path,
                    "map value is not valid UTF-8".into(),
                );
            }
        };
        if unknown_enum {
            self.stats.unknown_enums += 1;
        }
        Ok(v)
    }

    /// One map entry (or a `Struct`'s entry when `direct`).
    fn read_map_entry(
        &mut self,
        info: &Field,
        tag: Span,
        limit: usize,
        direct: bool,
    ) -> Result<(), Failure> {
        let (entry, fields, content, end) = self.map_entry_fields(info, tag, limit)?;
        let key_fd = entry.map_entry_key_field();
        let val_fd = entry.map_entry_value_field();
        let key_kind = key_fd.kind();
        let val_kind = val_fd.kind();
        let kw = expected_wire(&key_kind, false);
        let vw = expected_wire(&val_kind, false);
        let kf = fields
            .iter()
            .rev()
            .find(|f| f.number == 1 && f.wire == kw)
            .copied();
        let vf_index = fields.iter().rposition(|f| f.number == 2 && f.wire == vw);
        let vf = vf_index.and_then(|i| fields.get(i)).copied();
        let map_key = match kf {
            Some(f) => self.map_key(&key_kind, &f)?,
            None => default_of(&key_kind),
        };
        let segment = self.builder.segment_for_key(&map_key);
        let entry_path = segment;
        // The key span runs to the value field's tag when only key fields come before it.
        let key_end = match (vf_index, vf) {
            (Some(i), Some(f)) if fields.iter().take(i).all(|g| g.number == 1) => f.tag_start,
            _ => content,
        };
        let key_span = Some(Span::new(tag.start, key_end));
        let attach = if direct {
            Attach::Entry(map_key)
        } else {
            Attach::Run(Some(map_key))
        };
        match (&val_kind, vf) {
            (PKind::Message(m), Some(f)) => {
                let m = m.clone();
                let node = MessageNode {
                    segment,
                    key: key_span,
                    start: key_end,
                    content: f.start,
                    limit: f.end,
                    resume: end,
                    path_seg: entry_path,
                };
                self.begin_message(&m, node, attach)
            }
            (kind, f) => {
                let (value, header_end, payload) = match f {
                    Some(f) => (
                        self.map_value(&val_fd, &f, entry_path)?,
                        f.start,
                        Span::new(f.start, f.end),
                    ),
                    None => (
                        if direct {
                            Value::Null
                        } else {
                            default_of(kind)
                        },
                        end,
                        Span::empty(end),
                    ),
                };
                self.builder.leaf(
                    value.kind(),
                    segment,
                    key_span,
                    Span::new(key_end, end),
                    header_end.max(key_end),
                    payload,
                );
                self.attach(attach, value, end);
                self.pos = end;
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Timestamp;

    fn pool() -> prost_reflect::DescriptorPool {
        prost_reflect::DescriptorPool::global()
    }

    #[test]
    fn zigzag_and_widths() {
        assert_eq!(
            scalar(&PKind::Sint32, 3, &[]).expect("a number").0,
            Value::Int(-2)
        );
        assert_eq!(
            scalar(&PKind::Sint64, 4, &[]).expect("a number").0,
            Value::Int(2)
        );
        assert_eq!(
            scalar(&PKind::Int32, u64::MAX, &[]).expect("a number").0,
            Value::Int(-1),
            "negative int32 is sign-extended to 10 bytes"
        );
        assert_eq!(
            scalar(&PKind::Float, 0, &1.5f32.to_le_bytes())
                .expect("a number")
                .0,
            Value::Float(Float::f32(1.5))
        );
    }

    #[test]
    fn timestamp_root_is_a_leaf() {
        let m = pool()
            .get_message_by_name("google.protobuf.Timestamp")
            .expect("bundled");
        let doc = decode(
            &[0x08, 0x96, 0x01, 0x10, 0x05],
            &m,
            &DecodeOptions::default(),
        )
        .expect("decodes");
        assert_eq!(
            doc.value,
            Value::Timestamp(Timestamp {
                seconds: 150,
                nanos: 5
            })
        );
        assert_eq!(doc.spans.len(), 1);
        doc.spans.validate(5).expect("valid");
    }

    #[test]
    fn unknown_fields_are_raw_under_their_number() {
        let m = pool()
            .get_message_by_name("google.protobuf.Empty")
            .expect("bundled");
        // Not plain Empty, so it decodes as a message with one unknown field.
        let doc = decode(&[0x08, 0x01], &m, &DecodeOptions::default()).expect("decodes");
        assert_eq!(
            doc.value,
            Value::Map(vec![(
                Value::Int(1),
                Value::Raw(Box::new(RawField {
                    wire_type: WireType::Varint,
                    data: vec![1]
                }))
            )])
        );
        doc.spans.validate(2).expect("valid");
    }

    #[test]
    fn bad_wire_type_is_syntax() {
        let m = pool()
            .get_message_by_name("google.protobuf.FileDescriptorSet")
            .expect("bundled");
        let err = decode(&[0x0f], &m, &DecodeOptions::default()).expect_err("wire type 7");
        assert_eq!(err.kind, ErrorKind::Syntax);
        assert_eq!(err.offset, 0);
        assert!(err.partial.is_some());
    }
}
