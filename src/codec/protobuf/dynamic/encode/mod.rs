//! Schema-guided protobuf encoding, with spans.
//!
//! Why: a payload read from JSON, MessagePack or CBOR (or decoded from protobuf) is shown in the
//! user's message type byte by byte, so every written byte must be linked to the source value's
//! path. This module writes a [`Value`] as one message of a [`MessageDescriptor`], following the
//! proto3 JSON mapping's input rules (field names or their `json_name`, integers as numbers or
//! digit text, enums by name or number, bytes as base64 text, the well-known types' JSON forms),
//! and builds the [`SpanTree`](crate::model::SpanTree) of what it wrote.
//!
//! Conventions (see `/src/codec/protobuf/mod.rs` for the value contract):
//! - Known fields (and extensions, keyed `[full.name]`) are written in field-number order, as
//!   protoc and prost write them; entries keyed by a field number whose value is a
//!   [`RawField`](crate::model::RawField) are written byte-exactly after them, in their order.
//! - A field's node has the tag bytes as its key, the length varint (LEN) as header and the value
//!   bytes as payload. Packed repeated fields are one array node keyed by the tag; unpacked
//!   repeated and map fields are an array/map node without key whose items carry their own tags.
//!   A map entry's value node is keyed by the entry tag, entry length and the key field; the
//!   value field's tag (and length) is its header. Well-known types are one node whose header
//!   holds the wrapper bytes down to the inner value (`Int32Value`: length + inner tag).
//! - Paths come from the source value's keys (`$.userId` when the source said `userId`).
//!
//! How: the value is first converted into a tree of pieces whose sizes are known bottom-up (so
//! every length prefix is known before its content is written, without re-copying nested
//! buffers), then written in one pre-order pass that records the spans. A piece's bytes are
//! inline when short (tags, lengths, numbers) and borrowed from the value when they are its text
//! or bytes, so a field costs no allocation of its own; each message type's fields are looked up
//! once per encode ([`Table`]) and a source path is made only for an error or a note.
//!
//! What it does not do: decode (see `decode/`), or infer a schema (see `infer.rs`). It does
//! not reject two members of one oneof being set (the wire keeps the last one).

use std::rc::Rc;

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use prost_reflect::{
    EnumDescriptor, ExtensionDescriptor, FieldDescriptor, Kind as PKind, MessageDescriptor,
};

mod wkt;

use super::field::FieldFacts;
use super::wkt::{is_wkt_json, WellKnown};
use super::PerType;
use crate::codec::output::Output;
use crate::codec::protobuf::{RootParts, Walked};
use crate::codec::{EncodeError, EncodeOptions, Encoded, Format, NoteKind, Notes};
use crate::model::{
    FloatWidth, KeyMap, Kind, Path, PathSegment, RawField, Segment, Span, SpanTreeBuilder, Value,
    WireType,
};

/// Encodes `value` as one `message`.
///
/// The value is a map of field names (or json names, field numbers, `[extension.names]`) to
/// values, or for a well-known root type its JSON form (`"1.5s"` for a `Duration`).
pub fn encode(
    value: &Value,
    message: &MessageDescriptor,
    options: &EncodeOptions,
) -> Result<Encoded, EncodeError> {
    let mut enc = Encoder {
        // Sized for the value up front: a large document's span tree is not grown by doubling.
        builder: SpanTreeBuilder::with_capacity(value.node_count()),
        notes: Notes::new(),
        canonical: options.canonical,
        tables: PerType::new(),
    };
    let mut bytes = Output::held(Vec::new());
    if enc.stream_root(value, message, &mut bytes)? {
        // Grown as it was written: give back what the doubling left over.
        bytes.held.shrink_to_fit();
    } else {
        let root = enc.message_content(value, message, &Trail::ROOT)?;
        let out = Out::new(
            root.kind,
            Segment::Root,
            Bytes::new(),
            root.prefix,
            root.body,
            Bytes::new(),
        );
        bytes.held.reserve_exact(out.size);
        let mut builder = std::mem::take(&mut enc.builder);
        write(&out, &mut bytes, &mut builder);
        enc.builder = builder;
    }
    Ok(Encoded {
        format: Format::Protobuf,
        bytes: bytes.into_held(),
        spans: enc.builder.finish(),
        notes: enc.notes.into_vec(),
    })
}

/// Encodes the root message `message` from a document held in parts, as [`encode`] writes the
/// whole document's value: the same bytes, spans and notes. The items of a repeated field are
/// written a run at a time, as `parts` hands them over. `Ok(None)` when the walk gave up or
/// the root is a well-known type (written whole by [`encode`]).
///
/// With a `sink`, the bytes go there every megabyte as they are written, and the
/// [`Encoded`] given has none of them (as [`crate::codec::stream::transcode_with_spans`]);
/// `Ok(None)` also when the sink could not be written.
pub(crate) fn encode_root_in_parts(
    parts: &mut dyn RootParts,
    message: &MessageDescriptor,
    options: &EncodeOptions,
    nodes: usize,
    sink: Option<&mut (dyn std::io::Write + 'static)>,
) -> Result<Option<Encoded>, EncodeError> {
    let name = message.full_name();
    if is_wkt_json(name) || name == "google.protobuf.Any" {
        return Ok(None);
    }
    let mut enc = Encoder {
        builder: SpanTreeBuilder::with_capacity(nodes),
        notes: Notes::new(),
        canonical: options.canonical,
        tables: PerType::new(),
    };
    // The root's keys with placeholder values: which field each is, and the order they go in.
    let skeleton = Value::Map(
        parts
            .keys()
            .iter()
            .map(|k| (k.clone(), Value::Null))
            .collect(),
    );
    let entries = skeleton.as_map().unwrap_or_default();
    let path = &Trail::ROOT;
    let plan = enc.field_plan(&skeleton, message, path, false)?;
    let mut bytes = Output::to(sink, Vec::new());
    enc.builder.open(Kind::Map, Segment::Root, None, 0, 0);
    for (field, key, _) in enc.planned(&plan, path) {
        let Some(i) = entries.iter().position(|(k, _)| std::ptr::eq(k, key)) else {
            return Ok(None);
        };
        let seg = enc.builder.segment_for_key(key);
        let fpath = path.key(key);
        if field.list && !field.packed && !field.map {
            let start = bytes.len();
            let mut opened = false;
            let walked = parts.items(i, &mut |first, items| {
                if !opened {
                    enc.builder.open(Kind::Array, seg, None, start, start);
                    opened = true;
                }
                for (k, item) in items.iter().enumerate() {
                    let ipath = fpath.index(first + k);
                    let c = enc.list_item(&field, item, &ipath)?;
                    let out = wrap(&field, Segment::Index((first + k) as u32), c);
                    write(&out, &mut bytes, &mut enc.builder);
                }
                bytes.send_when_full();
                Ok(())
            })?;
            match walked {
                Walked::Items => {
                    enc.builder.close(bytes.len(), bytes.len());
                    continue;
                }
                Walked::GaveUp => return Ok(None),
                Walked::NotItems => {}
            }
        }
        let Some(value) = parts.value(i) else {
            return Ok(None);
        };
        if let Some(out) = enc.field(&field, seg, &value, &fpath)? {
            write(&out, &mut bytes, &mut enc.builder);
        }
        bytes.send_when_full();
    }
    enc.builder.close(bytes.len(), bytes.len());
    bytes.flush(0);
    if bytes.failed() {
        return Ok(None);
    }
    let mut bytes = bytes.into_held();
    bytes.shrink_to_fit();
    Ok(Some(Encoded {
        format: Format::Protobuf,
        bytes,
        spans: enc.builder.finish(),
        notes: enc.notes.into_vec(),
    }))
}

/// Bytes of a node's part: short ones (tags, lengths, varints, fixed-width numbers) inline,
/// text and bytes borrowed from the value being encoded, anything else owned. Most parts are
/// short, so most nodes allocate nothing of their own.
#[derive(Debug)]
enum Bytes<'v> {
    Inline([u8; Bytes::INLINE], u8),
    Borrowed(&'v [u8]),
    Owned(Vec<u8>),
}

impl<'v> Bytes<'v> {
    const INLINE: usize = 22;

    fn new() -> Bytes<'v> {
        Bytes::Inline([0; Bytes::INLINE], 0)
    }

    /// A copy of `bytes`, inline when they fit.
    fn copy(bytes: &[u8]) -> Bytes<'v> {
        let mut b = Bytes::new();
        b.extend(bytes);
        b
    }

    /// `n` as a minimal varint.
    fn varint(n: u64) -> Bytes<'v> {
        let mut b = Bytes::new();
        b.push_varint(n);
        b
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Inline(buf, n) => buf.get(..usize::from(*n)).unwrap_or_default(),
            Bytes::Borrowed(b) => b,
            Bytes::Owned(v) => v,
        }
    }

    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn extend(&mut self, more: impl AsRef<[u8]>) {
        let more = more.as_ref();
        if more.is_empty() {
            return;
        }
        if let Bytes::Inline(buf, n) = self {
            let at = usize::from(*n);
            if let Some(dst) = buf.get_mut(at..at + more.len()) {
                dst.copy_from_slice(more);
                *n += more.len() as u8;
                return;
            }
        }
        match self {
            Bytes::Owned(v) => v.extend_from_slice(more),
            other => {
                let mut v = Vec::with_capacity(other.len() + more.len());
                v.extend_from_slice(other.as_slice());
                v.extend_from_slice(more);
                *other = Bytes::Owned(v);
            }
        }
    }

    fn push_varint(&mut self, n: u64) {
        let (bytes, len) = crate::codec::protobuf::varint::bytes(n);
        self.extend(bytes.get(..len).unwrap_or_default());
    }
}

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for Bytes<'_> {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<Vec<u8>> for Bytes<'_> {
    fn from(v: Vec<u8>) -> Self {
        if v.len() <= Bytes::INLINE {
            Bytes::copy(&v)
        } else {
            Bytes::Owned(v)
        }
    }
}

/// A node to write: its key bytes (tag), header, body and trailing structure (a group's end tag).
#[derive(Debug)]
struct Out<'v> {
    kind: Kind,
    segment: Segment,
    key: Bytes<'v>,
    header: Bytes<'v>,
    body: Body<'v>,
    trailer: Bytes<'v>,
    /// All bytes, key to trailer.
    size: usize,
}

impl<'v> Out<'v> {
    fn new(
        kind: Kind,
        segment: Segment,
        key: Bytes<'v>,
        header: Bytes<'v>,
        body: Body<'v>,
        trailer: Bytes<'v>,
    ) -> Out<'v> {
        let size = key.len() + header.len() + body.size() + trailer.len();
        Out {
            kind,
            segment,
            key,
            header,
            body,
            trailer,
            size,
        }
    }
}

#[derive(Debug)]
enum Body<'v> {
    /// A scalar's value bytes.
    Leaf(Bytes<'v>),
    /// A container's items (with their total size).
    Children(Vec<Piece<'v>>, usize),
}

impl<'v> Body<'v> {
    fn size(&self) -> usize {
        match self {
            Body::Leaf(b) => b.len(),
            Body::Children(_, n) => *n,
        }
    }

    fn children(pieces: Vec<Piece<'v>>) -> Body<'v> {
        let n = pieces.iter().map(Piece::size).sum();
        Body::Children(pieces, n)
    }
}

#[derive(Debug)]
enum Piece<'v> {
    Node(Out<'v>),
    /// Bytes inside a container that belong to no child (an `Any`'s value tag and length).
    Gap(Bytes<'v>),
}

impl Piece<'_> {
    fn size(&self) -> usize {
        match self {
            Piece::Node(o) => o.size,
            Piece::Gap(g) => g.len(),
        }
    }
}

/// The entries of a message given as a map, by the field each is: known fields (field, source
/// key, value) sorted by number, then unknown raw fields in their order.
struct FieldPlan<'v> {
    known: Vec<(Rc<FieldInfo>, &'v Value, &'v Value)>,
    raws: Vec<(u32, &'v Value, &'v RawField)>,
}

/// What one value becomes inside its field: the node kind, the wire type of the field's tag,
/// header bytes after the field's own length (wrapper tags), the body, and whether it is the
/// field's default (for implicit presence).
struct Content<'v> {
    kind: Kind,
    wire: WireType,
    prefix: Bytes<'v>,
    body: Body<'v>,
    default: bool,
}

impl<'v> Content<'v> {
    /// A message-like body (a message, `Struct`, `ListValue`) of `pieces`.
    fn children(kind: Kind, pieces: Vec<Piece<'v>>) -> Content<'v> {
        Content {
            kind,
            wire: WireType::Len,
            prefix: Bytes::new(),
            body: Body::children(pieces),
            default: false,
        }
    }

    fn size(&self) -> usize {
        self.prefix.len() + self.body.size()
    }
}

/// A field or an extension, with what the encoder needs of it.
struct FieldInfo {
    /// Where the field's name comes from (made into text only for a note).
    name: Name,
    /// The facts both directions share.
    facts: FieldFacts,
}

impl std::ops::Deref for FieldInfo {
    type Target = FieldFacts;

    fn deref(&self) -> &FieldFacts {
        &self.facts
    }
}

impl FieldInfo {
    fn field(f: &FieldDescriptor) -> FieldInfo {
        FieldInfo {
            name: Name::Field(f.clone()),
            facts: FieldFacts::of_field(f),
        }
    }

    fn extension(f: &ExtensionDescriptor) -> FieldInfo {
        FieldInfo {
            name: Name::Extension(f.clone()),
            facts: FieldFacts::of_extension(f),
        }
    }

    /// The kind a value of this field is written as: a loose string's bytes as bytes.
    fn kind_for(&self, v: &Value) -> &PKind {
        if self.loose_utf8 && matches!(v.untagged(), Value::Bytes(_)) {
            &PKind::Bytes
        } else {
            &self.kind
        }
    }
}

/// How a [`FieldInfo`] is named in notes.
enum Name {
    Field(FieldDescriptor),
    /// `[full.name]`.
    Extension(ExtensionDescriptor),
    /// An unknown field, by its number.
    Number,
}

impl FieldInfo {
    fn name(&self) -> String {
        match &self.name {
            Name::Field(f) => f.name().to_string(),
            Name::Extension(e) => format!("[{}]", e.full_name()),
            Name::Number => self.number.to_string(),
        }
    }
}

/// A message type's fields by name (and JSON name) and by number, made once per type in an
/// encode.
struct Table {
    desc: MessageDescriptor,
    /// By each field's JSON name and its own name (UTF-8 bytes: a key kept in place is read
    /// as bytes without a UTF-8 check).
    by_name: KeyMap<Box<[u8]>, Rc<FieldInfo>>,
    /// Sorted by number.
    by_number: Vec<Rc<FieldInfo>>,
}

impl Table {
    fn new(desc: &MessageDescriptor) -> Table {
        let mut by_number: Vec<Rc<FieldInfo>> = desc
            .fields()
            .map(|f| Rc::new(FieldInfo::field(&f)))
            .collect();
        by_number.sort_by_key(|f| f.number);
        let mut by_name = KeyMap::default();
        // A field's own name wins over another field's JSON name, as in prost-reflect's lookup.
        for f in &by_number {
            if let Name::Field(d) = &f.name {
                by_name.insert(d.json_name().as_bytes().into(), Rc::clone(f));
            }
        }
        for f in &by_number {
            if let Name::Field(d) = &f.name {
                by_name.insert(d.name().as_bytes().into(), Rc::clone(f));
            }
        }
        Table {
            desc: desc.clone(),
            by_name,
            by_number,
        }
    }

    /// The field numbered `n`, or the extension of that number.
    fn number(&self, n: u32) -> Option<Rc<FieldInfo>> {
        match self.by_number.binary_search_by_key(&n, |f| f.number) {
            Ok(i) => self.by_number.get(i).cloned(),
            Err(_) => self
                .desc
                .get_extension(n)
                .map(|e| Rc::new(FieldInfo::extension(&e))),
        }
    }
}

struct Encoder {
    builder: SpanTreeBuilder,
    notes: Notes,
    canonical: bool,
    /// The field tables of the message types met so far.
    tables: PerType<Table>,
}

/// Appends `n` as a minimal varint (argument order of this file's callers).
fn varint(n: u64, out: &mut Vec<u8>) {
    crate::codec::protobuf::varint::put(out, n);
}

fn tag<'v>(number: u32, wire: WireType) -> Bytes<'v> {
    Bytes::varint((u64::from(number) << 3) | wire.code())
}

fn len_prefix<'v>(n: usize) -> Bytes<'v> {
    Bytes::varint(n as u64)
}

fn path_segment(key: &Value) -> PathSegment {
    match key {
        Value::Text(s) => PathSegment::Key(s.to_string()),
        other => PathSegment::OtherKey(other.summary(48)),
    }
}

/// Where the encoder is in the source value: borrowed steps, made into a [`Path`] only for an
/// error or a note.
struct Trail<'a> {
    parent: Option<&'a Trail<'a>>,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Root,
    /// The value of the map entry with this key.
    Key(&'a Value),
    Index(usize),
}

impl<'a> Trail<'a> {
    const ROOT: Trail<'static> = Trail {
        parent: None,
        step: Step::Root,
    };

    /// The value of this one's entry `key`.
    fn key(&'a self, key: &'a Value) -> Trail<'a> {
        Trail {
            parent: Some(self),
            step: Step::Key(key),
        }
    }

    /// This one's item `i`.
    fn index(&'a self, i: usize) -> Trail<'a> {
        Trail {
            parent: Some(self),
            step: Step::Index(i),
        }
    }

    fn to_path(&self) -> Path {
        let mut steps = Vec::new();
        let mut at = Some(self);
        while let Some(t) = at {
            match t.step {
                Step::Root => {}
                Step::Key(k) => steps.push(path_segment(k)),
                Step::Index(i) => steps.push(PathSegment::Index(i)),
            }
            at = t.parent;
        }
        steps.reverse();
        Path::from_segments(steps)
    }
}

impl std::fmt::Display for Trail<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.to_path().fmt(f)
    }
}

/// A value described for an error message: `text "abc"`, `integer 5`, `a map with 2 entries`.
fn describe(v: &Value) -> String {
    match v.untagged() {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("bool {b}"),
        Value::Int(_) | Value::BigInt(_) => format!("integer {}", v.summary(40)),
        Value::Float(_) | Value::Decimal(_) => format!("number {}", v.summary(40)),
        Value::Text(_) => format!("text {}", v.summary(40)),
        Value::Bytes(b) => format!("bytes ({} bytes)", b.len()),
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Map(m) => format!("a map with {} entries", m.len()),
        other => format!("{} {}", other.kind(), other.summary(40)),
    }
}

/// The proto name of a scalar kind, for messages.
fn kind_name(kind: &PKind) -> String {
    match kind {
        PKind::Double => "double".into(),
        PKind::Float => "float".into(),
        PKind::Int32 => "int32".into(),
        PKind::Int64 => "int64".into(),
        PKind::Uint32 => "uint32".into(),
        PKind::Uint64 => "uint64".into(),
        PKind::Sint32 => "sint32".into(),
        PKind::Sint64 => "sint64".into(),
        PKind::Fixed32 => "fixed32".into(),
        PKind::Fixed64 => "fixed64".into(),
        PKind::Sfixed32 => "sfixed32".into(),
        PKind::Sfixed64 => "sfixed64".into(),
        PKind::Bool => "bool".into(),
        PKind::String => "string".into(),
        PKind::Bytes => "bytes".into(),
        PKind::Message(m) => m.full_name().to_string(),
        PKind::Enum(e) => e.full_name().to_string(),
    }
}

/// Range of an integer kind.
fn int_range(kind: &PKind) -> Option<(i128, i128)> {
    match kind {
        PKind::Int32 | PKind::Sint32 | PKind::Sfixed32 => {
            Some((i128::from(i32::MIN), i128::from(i32::MAX)))
        }
        PKind::Int64 | PKind::Sint64 | PKind::Sfixed64 => {
            Some((i128::from(i64::MIN), i128::from(i64::MAX)))
        }
        PKind::Uint32 | PKind::Fixed32 => Some((0, i128::from(u32::MAX))),
        PKind::Uint64 | PKind::Fixed64 => Some((0, i128::from(u64::MAX))),
        _ => None,
    }
}

/// The wire bytes of an integer already checked to be in its kind's range.
fn int_bytes(kind: &PKind, n: i128) -> (WireType, Bytes<'static>) {
    let mut out = Bytes::new();
    let wire = match kind {
        PKind::Int32 | PKind::Int64 => {
            out.push_varint(n as i64 as u64);
            WireType::Varint
        }
        PKind::Uint32 | PKind::Uint64 => {
            out.push_varint(n as u64);
            WireType::Varint
        }
        PKind::Sint32 => {
            let v = n as i32;
            out.push_varint(u64::from(((v << 1) ^ (v >> 31)) as u32));
            WireType::Varint
        }
        PKind::Sint64 => {
            let v = n as i64;
            out.push_varint(((v << 1) ^ (v >> 63)) as u64);
            WireType::Varint
        }
        PKind::Fixed32 | PKind::Sfixed32 => {
            out.extend((n as u32).to_le_bytes());
            WireType::I32
        }
        _ => {
            out.extend((n as u64).to_le_bytes());
            WireType::I64
        }
    };
    (wire, out)
}

/// Integer text as the JSON mapping allows it: optional minus, digits.
fn parse_int_text(s: &str) -> Option<Result<i128, ()>> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(s.parse::<i128>().map_err(|_| ()))
}

/// Standard or URL-safe base64, padded or not.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let config =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    let standard = GeneralPurpose::new(&base64::alphabet::STANDARD, config);
    let url = GeneralPurpose::new(&base64::alphabet::URL_SAFE, config);
    standard.decode(s).or_else(|_| url.decode(s)).ok()
}

/// A varint field `number` with value `n`, or nothing at the default 0.
fn implicit_varint(number: u32, n: u64, out: &mut Vec<u8>) {
    if n != 0 {
        out.extend_from_slice(tag(number, WireType::Varint).as_slice());
        varint(n, out);
    }
}

impl Encoder {
    /// The field table of `desc`, made on first use.
    fn table(&mut self, desc: &MessageDescriptor) -> Rc<Table> {
        self.tables.get(desc, Table::new)
    }

    fn error(&self, path: &Trail<'_>, message: String) -> EncodeError {
        EncodeError {
            format: Format::Protobuf,
            path: path.to_path(),
            message,
        }
    }

    fn expected(&self, path: &Trail<'_>, what: &str, v: &Value) -> EncodeError {
        self.error(path, format!("expected {what}, found {}", describe(v)))
    }

    /// The body of one message (or a well-known type's JSON form) of type `desc`.
    fn message_content<'v>(
        &mut self,
        v: &'v Value,
        desc: &MessageDescriptor,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        let v = v.untagged();
        match WellKnown::of(desc.full_name()) {
            Some(wkt) => self.well_known(wkt, v, desc, path),
            None => self.fields_content(v, desc, path),
        }
    }

    /// The body of an ordinary message of type `desc`: its fields.
    fn fields_content<'v>(
        &mut self,
        v: &'v Value,
        desc: &MessageDescriptor,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        let pieces = self.message_fields(v, desc, path, false)?;
        Ok(Content::children(Kind::Map, pieces))
    }

    /// The fields of a message given as a map; `skip_type` leaves out an `Any`'s `"@type"`.
    fn message_fields<'v>(
        &mut self,
        v: &'v Value,
        desc: &MessageDescriptor,
        path: &Trail<'_>,
        skip_type: bool,
    ) -> Result<Vec<Piece<'v>>, EncodeError> {
        let plan = self.field_plan(v, desc, path, skip_type)?;
        let mut pieces = Vec::with_capacity(plan.known.len() + plan.raws.len());
        for (field, key, value) in self.planned(&plan, path) {
            let seg = self.builder.segment_for_key(key);
            let fpath = path.key(key);
            if let Some(out) = self.field(&field, seg, value, &fpath)? {
                pieces.push(Piece::Node(out));
            }
        }
        for (number, key, raw) in plan.raws {
            let seg = self.builder.segment_for_key(key);
            pieces.push(Piece::Node(raw_out(number, seg, raw)));
        }
        Ok(pieces)
    }

    /// Which field each entry of a message given as a map is (notes for the entries that are
    /// none), in the order they are written: by field number, then unknown raw fields.
    fn field_plan<'v>(
        &mut self,
        v: &'v Value,
        desc: &MessageDescriptor,
        path: &Trail<'_>,
        skip_type: bool,
    ) -> Result<FieldPlan<'v>, EncodeError> {
        let Some(entries) = v.as_map() else {
            return Err(self.expected(path, &format!("a map for {}", desc.full_name()), v));
        };
        let table = self.table(desc);
        // (field, source key, value), then raw entries in their order.
        let mut known: Vec<(Rc<FieldInfo>, &Value, &Value)> = Vec::with_capacity(entries.len());
        let mut raws: Vec<(u32, &Value, &RawField)> = Vec::new();
        for (key, value) in entries {
            let key = key.untagged();
            if skip_type && key.as_str() == Some("@type") {
                continue;
            }
            let field = match key {
                Value::Text(name) => {
                    let bytes = name.as_bytes();
                    if let Some(ext) = (bytes.first() == Some(&b'['))
                        .then(|| name.strip_prefix('[').and_then(|n| n.strip_suffix(']')))
                        .flatten()
                        .and_then(|n| desc.get_extension_by_full_name(n))
                    {
                        Some(Rc::new(FieldInfo::extension(&ext)))
                    } else {
                        table.by_name.get(bytes).cloned()
                    }
                }
                Value::Int(n) => u32::try_from(*n).ok().and_then(|n| {
                    if let Value::Raw(_) = value {
                        return Some(Rc::new(FieldInfo {
                            name: Name::Number,
                            facts: FieldFacts {
                                number: n,
                                kind: PKind::Bytes,
                                list: false,
                                map: false,
                                packed: false,
                                group: false,
                                presence: true,
                                implicit: false,
                                loose_utf8: false,
                            },
                        }));
                    }
                    table.number(n)
                }),
                _ => None,
            };
            let Some(field) = field else {
                let key_text = match key {
                    Value::Text(s) => format!("{s:?}"),
                    other => other.summary(40),
                };
                let name = desc.full_name().to_string();
                self.notes
                    .add(NoteKind::FieldDropped, path.key(key).to_path(), || {
                        format!("key {key_text} has no field in {name}; dropped")
                    });
                continue;
            };
            if let Value::Raw(raw) = value {
                if (1..=536_870_911).contains(&field.number) {
                    raws.push((field.number, key, raw));
                    continue;
                }
            }
            known.push((field, key, value));
        }
        known.sort_by_key(|(f, _, _)| f.number);
        Ok(FieldPlan { known, raws })
    }

    /// The known fields of `plan` in order, noting a field that is given more than once. (Their
    /// segments are made as each is written, so keys are interned in byte order, as a decoder
    /// of the bytes interns them.)
    fn planned<'v>(
        &mut self,
        plan: &FieldPlan<'v>,
        path: &Trail<'_>,
    ) -> Vec<(Rc<FieldInfo>, &'v Value, &'v Value)> {
        let known = &plan.known;
        let mut out = Vec::with_capacity(known.len());
        // Sorted by number (stably), the entries of one field are a run.
        let (mut run_end, mut count) = (0, 0);
        for (i, (field, key, value)) in known.iter().enumerate() {
            if i == run_end {
                count = known[i..]
                    .iter()
                    .take_while(|(f, _, _)| f.number == field.number)
                    .count();
                run_end = i + count;
            }
            if count > 1 && !field.list && !field.map {
                let (name, n) = (field.name(), field.number);
                self.notes.add(NoteKind::DuplicateKey, path.to_path(), || {
                    format!(
                        "field {name} (number {n}) is given {count} times; readers keep the last"
                    )
                });
            }
            out.push((Rc::clone(field), *key, *value));
        }
        out
    }

    /// Writes a plain message at the root straight into `bytes`, one field at a time, and the
    /// items of a repeated message or text field one at a time: the root has no length to know
    /// first, so only one field's (one item's) nodes are held at once instead of the whole
    /// document's. `false` (nothing written) for a root that is a well-known type.
    fn stream_root(
        &mut self,
        value: &Value,
        desc: &MessageDescriptor,
        bytes: &mut Output<'_>,
    ) -> Result<bool, EncodeError> {
        let v = value.untagged();
        let name = desc.full_name();
        if is_wkt_json(name) || name == "google.protobuf.Any" {
            return Ok(false);
        }
        let path = &Trail::ROOT;
        let plan = self.field_plan(v, desc, path, false)?;
        self.builder.open(Kind::Map, Segment::Root, None, 0, 0);
        for (field, key, value) in self.planned(&plan, path) {
            let seg = self.builder.segment_for_key(key);
            let fpath = path.key(key);
            match value.as_array() {
                Some(items) if field.list && !field.packed && !field.map && !items.is_empty() => {
                    let start = bytes.len();
                    self.builder.open(Kind::Array, seg, None, start, start);
                    for (i, item) in items.iter().enumerate() {
                        let ipath = fpath.index(i);
                        let c = self.list_item(&field, item, &ipath)?;
                        let out = wrap(&field, Segment::Index(i as u32), c);
                        write(&out, bytes, &mut self.builder);
                    }
                    self.builder.close(bytes.len(), bytes.len());
                }
                _ => {
                    if let Some(out) = self.field(&field, seg, value, &fpath)? {
                        write(&out, bytes, &mut self.builder);
                    }
                }
            }
        }
        for (number, key, raw) in plan.raws {
            let seg = self.builder.segment_for_key(key);
            write(&raw_out(number, seg, raw), bytes, &mut self.builder);
        }
        self.builder.close(bytes.len(), bytes.len());
        Ok(true)
    }

    /// What an item of the repeated `field` becomes; an error when it is not of the field's
    /// type.
    fn list_item<'v>(
        &mut self,
        field: &FieldInfo,
        item: &'v Value,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        match self.single(field.kind_for(item), item, path, false)? {
            Some(c) => Ok(c),
            None => Err(self.expected(path, &kind_name(&field.kind), item)),
        }
    }

    /// One field's node (singular, repeated or map); `None` when nothing is written.
    fn field<'v>(
        &mut self,
        field: &FieldInfo,
        seg: Segment,
        v: &'v Value,
        path: &Trail<'_>,
    ) -> Result<Option<Out<'v>>, EncodeError> {
        if matches!(v.untagged(), Value::Null) && !field.presence {
            self.null_as_default(field, path);
        }
        if field.map {
            return self.map_field(field, seg, v, path);
        }
        if field.list {
            if matches!(v, Value::Null) {
                return Ok(None);
            }
            let Some(items) = v.as_array() else {
                return Err(self.expected(
                    path,
                    &format!("an array for repeated {}", kind_name(&field.kind)),
                    v,
                ));
            };
            if items.is_empty() {
                return Ok(None);
            }
            let mut children = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let ipath = path.index(i);
                let iseg = Segment::Index(i as u32);
                let c = self.list_item(field, item, &ipath)?;
                if field.packed {
                    children.push(Piece::Node(Out::new(
                        c.kind,
                        iseg,
                        Bytes::new(),
                        c.prefix,
                        c.body,
                        Bytes::new(),
                    )));
                } else {
                    children.push(Piece::Node(wrap(field, iseg, c)));
                }
            }
            let (key, header) = if field.packed {
                let body_size: usize = children.iter().map(Piece::size).sum();
                (tag(field.number, WireType::Len), len_prefix(body_size))
            } else {
                (Bytes::new(), Bytes::new())
            };
            return Ok(Some(Out::new(
                Kind::Array,
                seg,
                key,
                header,
                Body::children(children),
                Bytes::new(),
            )));
        }
        let Some(c) = self.single(field.kind_for(v), v, path, true)? else {
            return Ok(None);
        };
        if c.default && !field.presence {
            let what = v.summary(40);
            let implicit = field.implicit;
            self.notes.add(NoteKind::PresenceLost, path.to_path(), || {
                if implicit {
                    format!(
                        "field {path} has implicit presence (editions) and is {what}, its \
                         default, so it is not written: a reader cannot tell {what} from unset"
                    )
                } else {
                    format!(
                        "proto3 field {path} is {what}, its default, and is not written: a \
                         reader cannot tell {what} from unset"
                    )
                }
            });
            return Ok(None);
        }
        Ok(Some(wrap(field, seg, c)))
    }

    /// Notes a null that a field without presence cannot hold: the reader sees its default.
    fn null_as_default(&mut self, field: &FieldInfo, path: &Trail<'_>) {
        let default = if field.map {
            "an empty map"
        } else if field.list {
            "an empty list"
        } else {
            match &field.kind {
                // These two read null as a value of their own.
                PKind::Message(m) if m.full_name() == "google.protobuf.Value" => return,
                PKind::Enum(e) if e.full_name() == "google.protobuf.NullValue" => return,
                PKind::String => "\"\"",
                PKind::Bytes => "empty bytes",
                PKind::Bool => "false",
                PKind::Enum(_) => "the enum's first value",
                PKind::Message(_) => "an unset message",
                _ => "0",
            }
        };
        self.notes.add(NoteKind::NullAsDefault, path.to_path(), || {
            format!(
                "null written as the field's default, {default}: a protobuf reader cannot tell \
                 it from {default} (an `optional` field would keep it as unset)"
            )
        });
    }

    /// A map field: a map node whose entries' value nodes are keyed by entry tag, length and key.
    fn map_field<'v>(
        &mut self,
        field: &FieldInfo,
        seg: Segment,
        v: &'v Value,
        path: &Trail<'_>,
    ) -> Result<Option<Out<'v>>, EncodeError> {
        if matches!(v, Value::Null) {
            return Ok(None);
        }
        let PKind::Message(entry) = &field.kind else {
            return Err(self.error(path, "map field without an entry type".into()));
        };
        let Some(entries) = v.as_map() else {
            return Err(self.expected(path, "a map", v));
        };
        if entries.is_empty() {
            return Ok(None);
        }
        let key_field = FieldInfo::field(&entry.map_entry_key_field());
        let value_field = FieldInfo::field(&entry.map_entry_value_field());
        let mut order: Vec<usize> = (0..entries.len()).collect();
        let mut typed_keys = Vec::with_capacity(entries.len());
        for (k, _) in entries {
            typed_keys.push(self.map_key(&key_field.kind, k.untagged(), path)?);
        }
        if self.canonical {
            order.sort_by(|&a, &b| typed_keys[a].0.cmp(&typed_keys[b].0));
        }
        let mut distinct = std::collections::HashSet::with_capacity(typed_keys.len());
        for (sort_key, _) in &typed_keys {
            if !distinct.insert(sort_key.as_str()) {
                let key = sort_key.clone();
                self.notes.add(NoteKind::DuplicateKey, path.to_path(), || {
                    format!("map key {key:?} is given more than once; readers keep the last entry")
                });
            }
        }
        let mut children = Vec::with_capacity(entries.len());
        for i in order {
            let (k, v) = (&entries[i].0, &entries[i].1);
            let (_, kc) = &typed_keys[i];
            let kseg = self.builder.segment_for_key(k.untagged());
            let vpath = path.key(k.untagged());
            let Some(vc) = self.single(&value_field.kind, v, &vpath, false)? else {
                return Err(self.expected(&vpath, &kind_name(&value_field.kind), v));
            };
            // The key field, unless at its default under implicit presence.
            let mut key_bytes = Bytes::new();
            if !kc.default || key_field.presence {
                key_bytes.extend(tag(1, kc.wire));
                if kc.wire == WireType::Len {
                    key_bytes.extend(len_prefix(kc.size()));
                }
                key_bytes.extend(&kc.prefix);
                if let Body::Leaf(b) = &kc.body {
                    key_bytes.extend(b);
                }
            }
            let mut header = Bytes::new();
            let write_value = !vc.default || value_field.presence;
            if write_value {
                header.extend(tag(2, vc.wire));
                if vc.wire == WireType::Len {
                    header.extend(len_prefix(vc.size()));
                }
            }
            header.extend(&vc.prefix);
            let body = if write_value {
                vc.body
            } else {
                Body::Leaf(Bytes::new())
            };
            let entry_len = key_bytes.len() + header.len() + body.size();
            let mut key = tag(field.number, WireType::Len);
            key.extend(len_prefix(entry_len));
            key.extend(key_bytes);
            children.push(Piece::Node(Out::new(
                vc.kind,
                kseg,
                key,
                header,
                body,
                Bytes::new(),
            )));
        }
        Ok(Some(Out::new(
            Kind::Map,
            seg,
            Bytes::new(),
            Bytes::new(),
            Body::children(children),
            Bytes::new(),
        )))
    }

    /// A map key converted to the key field's type: a sort key and its encoding.
    fn map_key<'v>(
        &mut self,
        kind: &PKind,
        k: &Value,
        path: &Trail<'_>,
    ) -> Result<(String, Content<'v>), EncodeError> {
        let kpath = path.key(k);
        match kind {
            PKind::String => {
                let text = match k {
                    Value::Text(s) => s.to_string(),
                    Value::Int(_) | Value::Bool(_) => {
                        let s = k.summary(64);
                        self.notes.add(NoteKind::NonTextKey, kpath.to_path(), || {
                            format!("map key {s} is written as text \"{s}\"")
                        });
                        s
                    }
                    other => return Err(self.expected(&kpath, "a text map key", other)),
                };
                let c = Content {
                    default: text.is_empty(),
                    ..leaf(Kind::Text, WireType::Len, text.clone().into_bytes())
                };
                Ok((text, c))
            }
            PKind::Bool => {
                let b = match k {
                    Value::Bool(b) => *b,
                    Value::Text(s) if s == "true" => true,
                    Value::Text(s) if s == "false" => false,
                    other => return Err(self.expected(&kpath, "a bool map key", other)),
                };
                Ok((
                    u8::from(b).to_string(),
                    Content {
                        default: !b,
                        ..leaf(Kind::Bool, WireType::Varint, Bytes::copy(&[u8::from(b)]))
                    },
                ))
            }
            _ => {
                let n = match k {
                    Value::Int(n) => *n,
                    Value::Text(s) => match parse_int_text(s) {
                        Some(Ok(n)) => n,
                        _ => {
                            return Err(self.expected(
                                &kpath,
                                &format!("a {} map key", kind_name(kind)),
                                k,
                            ))
                        }
                    },
                    other => {
                        return Err(self.expected(
                            &kpath,
                            &format!("a {} map key", kind_name(kind)),
                            other,
                        ))
                    }
                };
                let c = self.integer(kind, &Value::Int(n), &kpath)?;
                // Sort key: offset so that text order is numeric order.
                Ok((format!("{:040}", n - i128::from(i64::MIN)), c))
            }
        }
    }

    /// One value of a field's type; `None` for null where null means "not set".
    fn single<'v>(
        &mut self,
        kind: &PKind,
        v: &'v Value,
        path: &Trail<'_>,
        null_is_unset: bool,
    ) -> Result<Option<Content<'v>>, EncodeError> {
        let v = v.untagged();
        if let Value::Null = v {
            match kind {
                PKind::Message(m) if m.full_name() == "google.protobuf.Value" => {}
                PKind::Enum(e) if e.full_name() == "google.protobuf.NullValue" => {
                    return Ok(Some(Content {
                        default: true,
                        ..leaf(Kind::Null, WireType::Varint, Bytes::copy(&[0]))
                    }))
                }
                _ if null_is_unset => return Ok(None),
                _ => return Err(self.expected(path, &kind_name(kind), v)),
            }
        }
        let c = match kind {
            PKind::Message(m) => {
                let mut c = self.message_content(v, m, path)?;
                c.wire = WireType::Len;
                c
            }
            PKind::Enum(e) => self.enumeration(e, v, path)?,
            PKind::Bool => match v {
                Value::Bool(b) => Content {
                    default: !*b,
                    ..leaf(Kind::Bool, WireType::Varint, Bytes::copy(&[u8::from(*b)]))
                },
                other => return Err(self.expected(path, "bool (true or false)", other)),
            },
            PKind::String => match v {
                Value::Text(s) => Content {
                    default: s.is_empty(),
                    ..leaf(Kind::Text, WireType::Len, Bytes::Borrowed(s.as_bytes()))
                },
                other => return Err(self.expected(path, "string (text)", other)),
            },
            PKind::Bytes => {
                let b = match v {
                    Value::Bytes(b) => Bytes::Borrowed(b),
                    Value::Ext(t, d) => {
                        let (t, n) = (*t, d.len());
                        self.notes.add(NoteKind::ExtDropped, path.to_path(), || {
                            format!("MessagePack ext type {t} dropped; its {n} data bytes are written as bytes")
                        });
                        Bytes::Borrowed(d)
                    }
                    Value::Raw(r) if r.wire_type == crate::model::WireType::Len => {
                        Bytes::Borrowed(&r.data)
                    }
                    Value::Text(s) => match decode_base64(s) {
                        Some(b) => b.into(),
                        None => return Err(self.expected(path, "bytes (bytes or base64 text)", v)),
                    },
                    other => {
                        return Err(self.expected(path, "bytes (bytes or base64 text)", other))
                    }
                };
                Content {
                    default: b.is_empty(),
                    ..leaf(Kind::Bytes, WireType::Len, b)
                }
            }
            PKind::Double | PKind::Float => self.float(kind, v, path)?,
            _ => self.integer(kind, v, path)?,
        };
        Ok(Some(c))
    }

    fn integer<'v>(
        &mut self,
        kind: &PKind,
        v: &Value,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        let name = kind_name(kind);
        let (lo, hi) = int_range(kind).unwrap_or((0, 0));
        let expected = || format!("{name} (a number)");
        let n: i128 = match v {
            Value::Int(n) => *n,
            Value::BigInt(_) => {
                return Err(self.error(
                    path,
                    format!("integer {} is out of range for {name}", v.summary(60)),
                ))
            }
            Value::Float(f) => {
                let x = f.value;
                if !x.is_finite() || x.fract() != 0.0 {
                    return Err(self.error(
                        path,
                        format!(
                            "expected {name} (an integer), found number {} with a fractional part",
                            v.summary(40)
                        ),
                    ));
                }
                if x.abs() >= 1e38 {
                    return Err(self.error(
                        path,
                        format!("number {} is out of range for {name}", v.summary(40)),
                    ));
                }
                x as i128
            }
            Value::Text(s) => match parse_int_text(s) {
                Some(Ok(n)) => n,
                Some(Err(())) => {
                    return Err(self.error(path, format!("integer {s} is out of range for {name}")))
                }
                None => return Err(self.expected(path, &expected(), v)),
            },
            other => return Err(self.expected(path, &expected(), other)),
        };
        if n < lo || n > hi {
            return Err(self.error(path, format!("integer {n} is out of range for {name}")));
        }
        let (wire, bytes) = int_bytes(kind, n);
        Ok(Content {
            default: n == 0,
            ..leaf(Kind::Int, wire, bytes)
        })
    }

    fn float<'v>(
        &mut self,
        kind: &PKind,
        v: &'v Value,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        let name = kind_name(kind);
        let x: f64 = match v {
            Value::Float(f) => f.value,
            Value::Int(n) => {
                let x = *n as f64;
                if x as i128 != *n {
                    let (n, name) = (*n, name.clone());
                    self.notes
                        .add(NoteKind::IntegerPrecision, path.to_path(), || {
                            format!(
                                "integer {n} is beyond ±2^53; the {name} field rounds it to {x}"
                            )
                        });
                }
                x
            }
            Value::BigInt(_) | Value::Decimal(_) => v.summary(400).parse().unwrap_or(f64::NAN),
            Value::Text(s) => match s.as_str() {
                "NaN" => f64::NAN,
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                other => match other.parse::<f64>() {
                    Ok(x) if x.is_finite() => x,
                    _ => return Err(self.expected(path, &format!("{name} (a number)"), v)),
                },
            },
            other => return Err(self.expected(path, &format!("{name} (a number)"), other)),
        };
        if let PKind::Float = kind {
            let y = x as f32;
            if x.is_finite() && !y.is_finite() {
                return Err(self.error(
                    path,
                    format!("number {} is beyond the range of float", v.summary(40)),
                ));
            }
            if !FloatWidth::F32.holds(x) {
                let (from, to) = (v.summary(40), crate::model::format_float(f64::from(y)));
                self.notes.add(NoteKind::FloatWidth, path.to_path(), || {
                    format!("{from} narrows to float32 {to} in a float field")
                });
            }
            Ok(Content {
                default: y.to_bits() == 0,
                ..leaf(
                    Kind::Float(FloatWidth::F32),
                    WireType::I32,
                    Bytes::copy(&y.to_le_bytes()),
                )
            })
        } else {
            Ok(Content {
                default: x.to_bits() == 0,
                ..leaf(
                    Kind::Float(FloatWidth::F64),
                    WireType::I64,
                    Bytes::copy(&x.to_le_bytes()),
                )
            })
        }
    }

    fn enumeration<'v>(
        &mut self,
        e: &EnumDescriptor,
        v: &'v Value,
        path: &Trail<'_>,
    ) -> Result<Content<'v>, EncodeError> {
        let expected = || format!("{} (a value name or number)", e.full_name());
        let (number, named) = match v {
            Value::Text(s) => match e.get_value_by_name(s) {
                Some(ev) => (ev.number(), true),
                None => match parse_int_text(s).and_then(Result::ok) {
                    Some(n) => match i32::try_from(n) {
                        Ok(n) => (n, e.get_value(n).is_some()),
                        Err(_) => return Err(self.expected(path, &expected(), v)),
                    },
                    None => {
                        return Err(
                            self.error(path, format!("{} has no value named {s:?}", e.full_name()))
                        )
                    }
                },
            },
            Value::Int(n) => match i32::try_from(*n) {
                Ok(n) => (n, e.get_value(n).is_some()),
                Err(_) => {
                    return Err(self.error(
                        path,
                        format!("integer {n} is out of range for enum {}", e.full_name()),
                    ))
                }
            },
            other => return Err(self.expected(path, &expected(), other)),
        };
        let mut bytes = Vec::with_capacity(10);
        varint(i64::from(number) as u64, &mut bytes);
        let kind = if named { Kind::Text } else { Kind::Int };
        Ok(Content {
            default: number == 0,
            ..leaf(kind, WireType::Varint, bytes)
        })
    }
}

fn leaf<'v>(kind: Kind, wire: WireType, bytes: impl Into<Bytes<'v>>) -> Content<'v> {
    Content {
        kind,
        wire,
        prefix: Bytes::new(),
        body: Body::Leaf(bytes.into()),
        default: false,
    }
}

/// A field occurrence: tag as key; length (LEN) and prefix as header; a group's end tag after.
fn wrap<'v>(field: &FieldInfo, seg: Segment, c: Content<'v>) -> Out<'v> {
    if field.group {
        return Out::new(
            c.kind,
            seg,
            tag(field.number, WireType::Group),
            c.prefix,
            c.body,
            end_group_tag(field.number),
        );
    }
    if c.wire == WireType::Len {
        return len_node(field.number, seg, c);
    }
    let mut header = Bytes::new();
    header.extend(c.prefix);
    Out::new(
        c.kind,
        seg,
        tag(field.number, c.wire),
        header,
        c.body,
        Bytes::new(),
    )
}

/// A LEN occurrence of field `number`: tag as key; length and prefix as header.
fn len_node<'v>(number: u32, seg: Segment, c: Content<'v>) -> Out<'v> {
    let mut header = len_prefix(c.size());
    header.extend(c.prefix);
    Out::new(
        c.kind,
        seg,
        tag(number, WireType::Len),
        header,
        c.body,
        Bytes::new(),
    )
}

fn end_group_tag<'v>(number: u32) -> Bytes<'v> {
    Bytes::varint((u64::from(number) << 3) | 4)
}

/// An unknown field written back as it was read.
fn raw_out(number: u32, seg: Segment, raw: &RawField) -> Out<'_> {
    let (header, trailer) = match raw.wire_type {
        WireType::Len => (len_prefix(raw.data.len()), Bytes::new()),
        WireType::Group => (Bytes::new(), end_group_tag(number)),
        _ => (Bytes::new(), Bytes::new()),
    };
    Out::new(
        Kind::Raw,
        seg,
        tag(number, raw.wire_type),
        header,
        Body::Leaf(Bytes::Borrowed(&raw.data)),
        trailer,
    )
}

/// Writes `out` and records its node (pre-order).
fn write(out: &Out<'_>, buf: &mut Output<'_>, b: &mut SpanTreeBuilder) {
    let key_start = buf.len();
    buf.extend_from_slice(&out.key);
    let key = (!out.key.is_empty()).then(|| Span::new(key_start, buf.len()));
    let start = buf.len();
    buf.extend_from_slice(&out.header);
    let header_end = buf.len();
    match &out.body {
        Body::Leaf(bytes) => {
            buf.extend_from_slice(bytes);
            let payload = Span::new(header_end, buf.len());
            buf.extend_from_slice(&out.trailer);
            b.leaf(
                out.kind,
                out.segment,
                key,
                Span::new(start, buf.len()),
                header_end,
                payload,
            );
        }
        Body::Children(pieces, _) => {
            b.open(out.kind, out.segment, key, start, header_end);
            for p in pieces {
                match p {
                    Piece::Node(o) => write(o, buf, b),
                    Piece::Gap(g) => buf.extend_from_slice(g),
                }
            }
            let payload_end = buf.len();
            buf.extend_from_slice(&out.trailer);
            b.close(payload_end, buf.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_tags() {
        let mut v = Vec::new();
        varint(300, &mut v);
        assert_eq!(v, [0xac, 0x02]);
        assert_eq!(tag(1, WireType::Varint).as_slice(), [0x08]);
        assert_eq!(tag(16, WireType::Len).as_slice(), [0x82, 0x01]);
        assert_eq!(tag(2, WireType::Group).as_slice(), [0x13]);
        assert_eq!(end_group_tag(2).as_slice(), [0x14]);
    }

    #[test]
    fn integers_by_kind() {
        assert_eq!(int_bytes(&PKind::Int32, -1).1.len(), 10);
        assert_eq!(int_bytes(&PKind::Sint32, -1).1.as_slice(), [0x01]);
        assert_eq!(int_bytes(&PKind::Sint64, 1).1.as_slice(), [0x02]);
        assert_eq!(
            int_bytes(&PKind::Sfixed32, -2).1.as_slice(),
            [0xfe, 0xff, 0xff, 0xff]
        );
        assert_eq!(int_bytes(&PKind::Fixed64, 1).0, WireType::I64);
        assert_eq!(parse_int_text("-12"), Some(Ok(-12)));
        assert_eq!(parse_int_text("1.5"), None);
        assert_eq!(parse_int_text("-"), None);
        assert_eq!(parse_int_text(&"9".repeat(60)), Some(Err(())));
    }

    #[test]
    fn durations_masks_and_base64() {
        assert_eq!(decode_base64("AAEC/w=="), Some(vec![0, 1, 2, 255]));
        assert_eq!(decode_base64("AAEC_w"), Some(vec![0, 1, 2, 255]));
        assert_eq!(decode_base64("!!"), None);
    }

    #[test]
    fn bytes_stay_inline_until_they_outgrow_it() {
        let mut b = Bytes::varint(300);
        assert_eq!(b.as_slice(), [0xac, 0x02]);
        b.extend([7u8; Bytes::INLINE - 2]);
        assert!(matches!(b, Bytes::Inline(_, 22)));
        b.extend([9u8]);
        assert!(matches!(&b, Bytes::Owned(v) if v.len() == Bytes::INLINE + 1));
        assert_eq!(b.get(..3), Some(&[0xac, 0x02, 7][..]));
        assert_eq!(b.last(), Some(&9));
        let text = "borrowed";
        let mut c = Bytes::Borrowed(text.as_bytes());
        assert_eq!(c.len(), 8);
        c.extend(b"!");
        assert_eq!(c.as_slice(), b"borrowed!");
        assert!(Bytes::from(Vec::new()).is_empty());
        assert!(matches!(Bytes::from(vec![1; 40]), Bytes::Owned(_)));
    }

    #[test]
    fn sizes_are_known_before_writing() {
        let inner = Out::new(
            Kind::Int,
            Segment::Index(0),
            Bytes::copy(&[0x08]),
            Bytes::new(),
            Body::Leaf(Bytes::copy(&[0x01])),
            Bytes::new(),
        );
        let outer = Out::new(
            Kind::Map,
            Segment::Root,
            Bytes::new(),
            Bytes::copy(&[0x02]),
            Body::children(vec![Piece::Gap(Bytes::copy(&[0xaa])), Piece::Node(inner)]),
            Bytes::copy(&[0xbb]),
        );
        assert_eq!(outer.size, 5);
        let mut buf = Output::held(Vec::new());
        let mut b = SpanTreeBuilder::new();
        write(&outer, &mut buf, &mut b);
        assert_eq!(buf.held, [0x02, 0xaa, 0x08, 0x01, 0xbb]);
        let t = b.finish();
        t.validate(buf.len()).expect("valid tree");
        assert_eq!(t.node(crate::model::NodeId(0)).payload, Span::new(1, 4));
        assert_eq!(t.node(crate::model::NodeId(1)).key, Some(Span::new(2, 3)));
    }
}
