//! Schema-less protobuf decoding: any protobuf bytes into a [`Value`] with a span per field, and
//! every plausible reading of each field beside the one chosen.
//!
//! # Why
//! Without a schema the wire format does not say what a field is: a VARINT may be an unsigned,
//! signed (two's complement or zigzag) integer, a bool or an enum; four fixed bytes a `fixed32`
//! or a `float`; a LEN payload a message, text, packed numbers or bytes. `protoc --decode_raw`
//! and protoscope pick one reading silently. This decoder picks one too (so the document reads
//! naturally), but lists the others in [`RawDocument::readings`]; nothing is a silent guess.
//!
//! # The value
//! A message is a [`Value::Map`] keyed by field number ([`Value::Int`] keys), entries in wire
//! order; a field that occurs several times appears several times. Values by the chosen reading:
//! - VARINT: [`Value::Int`], the unsigned reading. Alternatives: `int64` (two's complement, only
//!   for values ≥ 2^63), `sint64 (zigzag)`, `bool` (0 and 1).
//! - I32 / I64: `float` / `double` ([`Value::Float`] of width 32 / 64) when the bits look like a
//!   number someone wrote down — a normal float whose binary exponent lies within ±32 (float) or
//!   ±64 (double) and whose shortest round-trip decimal has at most 6 (float) or 12 (double)
//!   significant digits (`111.0`, `0.1`, `1.5e-3`); otherwise the `fixed32` / `fixed64` integer.
//!   Alternatives: the other one, and `sfixed32` / `sfixed64` when the signed reading is
//!   negative. Protoscope prints I64 as a double unless the exponent field is 0, and I32 as a
//!   float unless its exponent field is 0 or all ones; it therefore shows most random 64-bit
//!   hashes as absurd doubles (`-2.54e-72`) where we show the integer.
//! - LEN, in this order: a nested message ([`Value::Map`]) when the payload parses completely as
//!   fields with field numbers 1..=2^29−1, wire types 0–5, lengths inside the payload and matched
//!   group tags; else [`Value::Text`] when it is UTF-8 and at least 90 % of its characters are
//!   printable (controls other than tab, CR and LF count against it); else packed varints (an
//!   [`Value::Array`] of [`Value::Int`]) when it splits exactly into varints and does not look
//!   like a random id; else [`Value::Bytes`]. Random bytes end in a byte below 0x80 half the
//!   time and then split into varints too: an OpenTelemetry trace id read as 9 packed varints is
//!   a guess no one wants, and `protoc --decode_raw` shows it as bytes. So a payload of an id's
//!   length (8, 16, 20 or 32 bytes) reads as bytes, packed varints its first alternative, when it
//!   looks random: at least a quarter of its bytes ≥ 0x80, at least a quarter of its varints
//!   multi-byte, and their values spread (bit lengths 7 or more apart). Genuine packed fields
//!   (`[1, 2, 3, 300]`, a run of timestamps, small enum values) fail one of these. An empty payload is the empty text. Alternatives: every other of these that
//!   applies, plus `packed fixed32` / `packed float` (length a multiple of 4) and `packed fixed64`
//!   / `packed double` (multiple of 8), and always `bytes`. Protoscope's order is the same
//!   (message, then string, then hex bytes) but it has no packed reading; it shows packed fields
//!   as hex, and accepts messages whose end-group tags match nothing, which we do not.
//! - SGROUP … EGROUP: a [`Value::Map`] of the fields between the tags.
//!
//! Odd but readable data is kept and flagged in the reading labels: non-minimal varints and tags
//! ("non-minimal varint, 6 bytes"), field number 0 and field numbers above 2^29−1 (at the top
//! level; inside a LEN payload they rule out the message reading).
//!
//! # The user's readings
//! [`DecodeOptions::protobuf_readings`] (`--read '$.1[*].2=bytes'`, see [`FieldReading`]) names
//! the reading of a field at a pattern; every occurrence there is read so, the reading listed
//! first with `(chosen by --read)`, and a reading the bytes cannot have is an error at the field.
//!
//! # What is fatal
//! Anything after which the next field cannot be found: a varint or tag that runs past the end or
//! over 10 bytes, wire types 6 and 7, a length or fixed value past the end of its message, an
//! end-group tag that matches no open group, a group left open. The result is then a
//! [`DecodeError`] at the offending byte whose `partial` holds every field read before it (open
//! messages and groups closed with what they hold). We chose this over protoscope's way of
//! printing such a tail as hex inside the tree: the CLI prints the partial tree and the error
//! names the tail's offset, and a document never pretends an undecodable tail is a field.
//!
//! # Spans
//! A field's node has `key` = the tag bytes. VARINT/I32/I64: header empty, payload the value
//! bytes. LEN: header = the length varint, payload the content; a nested message is a map
//! container, packed numbers an array container whose elements are keyless leaves. A group is a
//! map container keyed by its start tag whose payload ends before the end tag; the end tag is
//! structure. Segments come from [`SpanTreeBuilder::segment_for_key`] with the `Int` field number.
//!
//! # Cost
//! No recursion over input nesting: an explicit stack, limited by
//! [`Limits::max_depth`](crate::limits::Limits) (the top-level message is depth 1; nested messages, groups and
//! packed arrays add one). Deciding whether a LEN payload is a message scans only its top level
//! (nested LEN payloads are skipped by their length and decided on their own when their parent is
//! read), and each payload is scanned once; so each byte is looked at a bounded number of times
//! per enclosing message: O(n · depth) in all. On top of that, the scans together read at most
//! [`Limits::max_protobuf_scan`](crate::limits::Limits) tags; once that budget is spent, the
//! remaining LEN payloads are not tried as messages (they read as text, packed numbers or bytes).
//! Memory: almost any byte string reads as fields (every two bytes of `xxxx` are one), so the
//! document may have at most [`Limits::max_protobuf_nodes`](crate::limits::Limits) nodes (or
//! [`Limits::max_nodes`](crate::limits::Limits), the bound of every decoder, if smaller); the
//! field that would pass it is a [`ErrorKind::Limit`] error at its tag, the fields before it the
//! partial document. [`decode`] builds only the chosen readings (about 240 bytes a node at the
//! peak); [`decode_raw`] keeps every reading too (about 580).
//!
//! # Reading values
//! A [`WireReading`]'s value is [`Value::Null`] where it would only repeat what the document
//! already holds or points at: the chosen reading of a message or group (the document has it at
//! the node), and the `bytes`, `string` and packed alternatives of payloads longer than
//! [`MAX_ALTERNATIVE_BYTES`] (the node's payload span gives them). For those long payloads, once
//! a message was chosen, the text and packed alternatives are not computed (only `bytes` is
//! listed), so that deep nesting stays linear.

mod read_as;
mod readings;
#[cfg(test)]
mod tests;

pub use read_as::{field_of_node, pattern, FieldReading, FieldReadingError, ReadAs};

use super::varint::{len as varint_len, read as read_varint, VarintError};
use crate::codec::{DecodeError, DecodeOptions, Document, ErrorKind, Format, LimitName};
use crate::model::{
    Kind, NodeId, Path, PathSegment, Segment, Span, SpanTreeBuilder, Value, WireType,
};
use readings::{
    i32_readings, i64_readings, len_readings, looks_like_random_id, packed_varints, printable_text,
    reading, u32_le, u64_le, varint_readings, LenChoice,
};
#[cfg(test)]
use readings::{looks_like_float32, looks_like_float64};

/// The largest field number protobuf allows: 2^29 − 1.
pub const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// Payloads longer than this get [`Value::Null`] as the value of their non-chosen readings.
pub const MAX_ALTERNATIVE_BYTES: usize = 1024;

/// One way to read a field's bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct WireReading {
    /// The type it is read as: `uint64`, `int64`, `sint64 (zigzag)`, `bool`, `fixed32`,
    /// `sfixed32`, `float`, `fixed64`, `sfixed64`, `double`, `message`, `group`, `string`,
    /// `packed varints`, `packed fixed32`, `packed float`, `packed fixed64`, `packed double`,
    /// `bytes`; followed by flags in parentheses (non-minimal varint, invalid field number).
    pub label: String,
    /// The value read (see the module docs for when it is [`Value::Null`]).
    pub value: Value,
    /// Whether this is the reading the document shows.
    pub chosen: bool,
}

/// Every plausible reading of one field node, the chosen one first.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeReadings {
    /// The field's node in the document's span tree.
    pub node: NodeId,
    /// The wire type of its tag.
    pub wire_type: WireType,
    /// Its field number.
    pub field: u64,
    /// The readings, the chosen one first.
    pub readings: Vec<WireReading>,
}

/// A schema-less decode: the document and, per field node, its readings.
#[derive(Debug, Clone, PartialEq)]
pub struct RawDocument {
    /// The value by the chosen readings, with spans.
    pub document: Document,
    /// The readings of every field node, in node order.
    pub readings: Vec<NodeReadings>,
}

/// Decodes any protobuf bytes without a schema; the document by the chosen readings.
///
/// Only the chosen readings are built: the alternatives [`decode_raw`] lists are neither computed
/// nor kept, so a payload of ten million fields costs its document and no more.
pub fn decode(bytes: &[u8], options: &DecodeOptions) -> Result<Document, DecodeError> {
    let mut decoder = Decoder::new(bytes, options);
    decoder.keep_readings = false;
    decoder.run().map(|raw| raw.document)
}

/// Decodes any protobuf bytes without a schema, with every plausible reading of each field.
pub fn decode_raw(bytes: &[u8], options: &DecodeOptions) -> Result<RawDocument, DecodeError> {
    Decoder::new(bytes, options).run()
}

/// Work done deciding LEN payloads (for tests of the linear bound).
#[derive(Debug, Default, Clone, Copy)]
struct Work {
    /// Payloads scanned as candidate messages.
    trial_parses: usize,
    /// Tags read by those scans.
    trial_fields: usize,
}

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

/// Whether a varint of `len` bytes holding `value` could have been shorter.
fn non_minimal(value: u64, len: usize) -> bool {
    len > varint_len(value)
}

/// A field's tag as read: its number, wire type and bytes, and what is odd about it.
struct Tag {
    field: u64,
    /// The wire type's number (`tag & 7`): 3 and 4, a group's start and end, are one
    /// [`WireType::Group`].
    code: u64,
    wire_type: WireType,
    /// The tag's bytes (the key's span).
    key_span: Span,
    /// Flags for the field's readings (" (non-minimal tag, 2 bytes)", …).
    flags: String,
}

/// One message or group being read.
struct Frame {
    /// Its key in the parent (`Int` field number); `Null` for the top level.
    key: Value,
    /// Where its bytes end: a message's payload end; for a group the end of the enclosing
    /// message (the group ends at its end tag).
    end: usize,
    /// The group's field number, for groups.
    group: Option<u64>,
    /// The entries read so far.
    entries: Vec<(Value, Value)>,
}

struct Decoder<'a> {
    bytes: &'a [u8],
    max_depth: usize,
    /// Tags scans may still read (see [`crate::limits::Limits::max_protobuf_scan`]).
    scan_budget: usize,
    /// Most nodes the document may have, the limit that is, and the error message naming it
    /// (see [`crate::limits::Limits::schemaless_nodes`]).
    max_nodes: (usize, LimitName, String),
    builder: SpanTreeBuilder,
    stack: Vec<Frame>,
    /// Whether the alternative readings are built and kept ([`decode_raw`]) or only the chosen
    /// value ([`decode`]).
    keep_readings: bool,
    readings: Vec<NodeReadings>,
    work: Work,
    /// The span-tree segments of field numbers below [`SEGMENT_CACHE`], interned once.
    segments: Vec<Option<Segment>>,
    /// The user's readings ([`DecodeOptions::protobuf_readings`]).
    read_as: Vec<FieldReading>,
}

/// Field numbers whose segments [`Decoder::segment_of`] keeps (most messages use small ones).
const SEGMENT_CACHE: u64 = 256;

impl<'a> Decoder<'a> {
    /// The span-tree segment of field number `field`: its text, interned.
    fn segment_of(&mut self, field: u64) -> Segment {
        let key = Value::Int(i128::from(field));
        if field >= SEGMENT_CACHE {
            return self.builder.segment_for_key(&key);
        }
        let at = field as usize;
        if let Some(Some(seg)) = self.segments.get(at) {
            return *seg;
        }
        let seg = self.builder.segment_for_key(&key);
        if self.segments.len() <= at {
            self.segments.resize(at + 1, None);
        }
        if let Some(slot) = self.segments.get_mut(at) {
            *slot = Some(seg);
        }
        seg
    }

    fn new(bytes: &'a [u8], options: &DecodeOptions) -> Decoder<'a> {
        Decoder {
            bytes,
            max_depth: options.limits.depth().max(1),
            scan_budget: options.limits.max_protobuf_scan,
            max_nodes: options.limits.for_input(bytes.len()).schemaless_nodes(),
            builder: SpanTreeBuilder::new(),
            stack: Vec::new(),
            keep_readings: true,
            readings: Vec::new(),
            work: Work::default(),
            segments: Vec::new(),
            read_as: options.protobuf_readings.clone(),
        }
    }

    /// The user's reading of field `field` of the innermost open message, if one names it.
    fn forced(&self, field: u64) -> Option<ReadAs> {
        if self.read_as.is_empty() {
            return None;
        }
        let outer = || {
            self.stack.iter().skip(1).map(|f| match f.key {
                Value::Int(n) => u64::try_from(n).unwrap_or(0),
                _ => 0,
            })
        };
        self.read_as
            .iter()
            .find(|r| r.matches(outer(), field))
            .map(|r| r.read_as)
    }

    /// `rs` with the user's reading `read_as` of value `value` first and chosen (only that one
    /// when the alternatives are not kept).
    fn force(&self, rs: &mut Vec<WireReading>, read_as: ReadAs, flags: &str, value: Value) {
        if !self.keep_readings {
            rs.clear();
        }
        let label = read_as.label();
        rs.retain(|r| r.label.strip_prefix(label) != Some(flags));
        for r in rs.iter_mut() {
            r.chosen = false;
        }
        let mut r = reading(label, &format!("{flags} (chosen by --read)"), value);
        r.chosen = true;
        rs.insert(0, r);
    }

    fn run(mut self) -> Result<RawDocument, DecodeError> {
        let mut field_path = None;
        match self.read_all(&mut field_path) {
            Ok(value) => Ok(RawDocument {
                document: Document {
                    format: Format::Protobuf,
                    value,
                    spans: self.builder.finish(),
                },
                readings: self.readings,
            }),
            Err(f) => {
                let path = match field_path {
                    Some(field) => self
                        .builder
                        .current_path()
                        .child(PathSegment::OtherKey(field.to_string())),
                    None => self.builder.current_path(),
                };
                Err(self.error(f, path))
            }
        }
    }

    /// The error with the partial document: every open frame closed with what it holds.
    fn error(mut self, f: Fail, path: Path) -> DecodeError {
        let mut carried: Option<(Value, Value)> = None;
        while let Some(mut frame) = self.stack.pop() {
            if let Some(entry) = carried.take() {
                frame.entries.push(entry);
            }
            carried = Some((frame.key, Value::Map(frame.entries)));
        }
        let partial = carried.map(|(_, value)| {
            Box::new(Document {
                format: Format::Protobuf,
                value,
                spans: self.builder.finish_partial(f.offset),
            })
        });
        DecodeError {
            format: Format::Protobuf,
            kind: f.kind,
            offset: f.offset,
            path,
            message: f.message,
            partial,
        }
    }

    /// Reads the whole input as one message. `field_path` is set to the segment of the field
    /// being read, for the error path.
    fn read_all(&mut self, field_path: &mut Option<u64>) -> Result<Value, Fail> {
        let len = self.bytes.len();
        self.builder
            .open(Kind::Map, crate::model::Segment::Root, None, 0, 0);
        self.stack.push(Frame {
            key: Value::Null,
            end: len,
            group: None,
            entries: Vec::new(),
        });
        let mut pos = 0usize;
        loop {
            *field_path = None;
            let Some(top) = self.stack.last() else {
                return Ok(Value::Null);
            };
            let end = top.end;
            if pos >= end {
                if let Some(value) = self.end_frame(pos)? {
                    return Ok(value);
                }
                continue;
            }
            let tag = self.read_tag(pos, end, field_path)?;
            pos = tag.key_span.end;
            pos = match tag.code {
                0 => self.read_varint_field(tag, pos, end)?,
                1 | 5 => self.read_fixed_field(tag, pos, end)?,
                2 => self.read_len_field(tag, pos, end)?,
                3 => self.open_group(tag, pos, end)?,
                _ => {
                    self.close_group(&tag, pos)?;
                    *field_path = None;
                    pos
                }
            };
        }
    }

    /// The frame on top ends at `pos` (its message's end): a group without its end tag fails;
    /// else the frame closes, and the value is returned when it was the top level.
    fn end_frame(&mut self, pos: usize) -> Result<Option<Value>, Fail> {
        let Some(top) = self.stack.last() else {
            return Ok(None);
        };
        if let Some(g) = top.group {
            return Err(Fail::new(
                ErrorKind::Eof,
                pos,
                format!(
                    "the group of field {g} has no end-group tag before byte {}",
                    top.end
                ),
            ));
        }
        self.builder.close(pos, pos);
        Ok(self.pop_frame())
    }

    /// Reads the field tag at `pos`, with what is odd about it (a non-minimal varint, a field
    /// number out of range) as flags for its readings; `field_path` is set to its field number
    /// once that is read.
    fn read_tag(
        &mut self,
        pos: usize,
        end: usize,
        field_path: &mut Option<u64>,
    ) -> Result<Tag, Fail> {
        self.check_nodes(pos, 1)?;
        let (tag, tag_len) = read_varint(self.bytes, pos, end).map_err(|e| match e {
            VarintError::Eof => Fail::new(
                ErrorKind::Eof,
                pos,
                format!(
                    "a field tag runs past the end of its message ({} bytes left)",
                    end - pos
                ),
            ),
            VarintError::Overflow | VarintError::TooLong => Fail::new(
                ErrorKind::Syntax,
                pos,
                "a field tag is longer than 10 bytes or overflows 64 bits".into(),
            ),
        })?;
        let field = tag >> 3;
        let code = tag & 7;
        *field_path = Some(field);
        let mut flags = String::new();
        if non_minimal(tag, tag_len) {
            flags.push_str(&format!(" (non-minimal tag, {tag_len} bytes)"));
        }
        if field == 0 {
            flags.push_str(" (field number 0 is not valid)");
        } else if field > MAX_FIELD_NUMBER {
            flags.push_str(&format!(
                " (field number {field} is above the maximum 536870911)"
            ));
        }
        let Some(wire_type) = WireType::of_tag(code) else {
            return Err(Fail::new(
                ErrorKind::Syntax,
                pos,
                format!(
                    "field {field} has wire type {code}, which protobuf does not define; the rest cannot be read"
                ),
            ));
        };
        Ok(Tag {
            field,
            code,
            wire_type,
            key_span: Span::new(pos, pos + tag_len),
            flags,
        })
    }

    /// The key a field's entry has in its message: its number.
    fn key_of(tag: &Tag) -> Value {
        Value::Int(i128::from(tag.field))
    }

    /// Reads a VARINT field's value at `pos`; returns where reading goes on.
    fn read_varint_field(&mut self, mut tag: Tag, pos: usize, end: usize) -> Result<usize, Fail> {
        let field = tag.field;
        let (v, n) = read_varint(self.bytes, pos, end)
            .map_err(|e| varint_fail(e, pos, end, &format!("the VARINT value of field {field}")))?;
        if non_minimal(v, n) {
            tag.flags
                .push_str(&format!(" (non-minimal varint, {n} bytes)"));
        }
        let span = Span::new(pos, pos + n);
        let mut rs = if self.keep_readings {
            varint_readings(v, &tag.flags)
        } else {
            vec![reading("", "", Value::Int(i128::from(v)))]
        };
        if let Some(r) = self.forced(field) {
            let value = forced_fixed(r, WireType::Varint, v)
                .map_err(|why| forced_fail(r, field, span.start, &why))?;
            self.force(&mut rs, r, &tag.flags, value);
        }
        self.add_leaf(&tag, span, rs);
        Ok(span.end)
    }

    /// Reads an I64 or I32 field's value at `pos`; returns where reading goes on.
    fn read_fixed_field(&mut self, tag: Tag, pos: usize, end: usize) -> Result<usize, Fail> {
        let field = tag.field;
        let wide = tag.code == 1;
        let width = if wide { 8 } else { 4 };
        let left = end - pos;
        if left < width {
            return Err(Fail::new(
                ErrorKind::Eof,
                pos,
                format!(
                    "the {width} value bytes of field {field} run past the end of its message ({left} bytes left)"
                ),
            ));
        }
        let span = Span::new(pos, pos + width);
        let data = self.bytes.get(span.range()).unwrap_or(&[]);
        let bits = if wide {
            u64_le(data)
        } else {
            u64::from(u32_le(data))
        };
        let mut rs = if wide {
            i64_readings(bits, &tag.flags)
        } else {
            i32_readings(u32_le(data), &tag.flags)
        };
        if let Some(r) = self.forced(field) {
            let value = forced_fixed(r, tag.wire_type, bits)
                .map_err(|why| forced_fail(r, field, span.start, &why))?;
            self.force(&mut rs, r, &tag.flags, value);
        }
        self.add_leaf(&tag, span, rs);
        Ok(span.end)
    }

    /// Reads a LEN field's length at `pos`, then its payload (see [`Self::read_len`]); returns
    /// where reading goes on.
    fn read_len_field(&mut self, mut tag: Tag, pos: usize, end: usize) -> Result<usize, Fail> {
        let field = tag.field;
        let len_start = pos;
        let (n, n_len) = read_varint(self.bytes, pos, end)
            .map_err(|e| varint_fail(e, pos, end, &format!("the length of field {field}")))?;
        let pos = pos + n_len;
        let left = end - pos;
        let Some(payload_len) = usize::try_from(n).ok().filter(|&n| n <= left) else {
            return Err(Fail::new(
                ErrorKind::Eof,
                len_start,
                format!(
                    "length {n} of field {field} runs past the end of its message ({left} bytes left)"
                ),
            ));
        };
        if non_minimal(n, n_len) {
            tag.flags
                .push_str(&format!(" (non-minimal length, {n_len} bytes)"));
        }
        let payload = Span::new(pos, pos + payload_len);
        self.read_len(&tag, len_start, payload)
    }

    /// A start-group tag opens a group that ends at its end-group tag; returns where reading
    /// goes on (its first field).
    fn open_group(&mut self, tag: Tag, pos: usize, end: usize) -> Result<usize, Fail> {
        let field = tag.field;
        self.check_depth(tag.key_span.start, field)?;
        let segment = self.segment_of(field);
        let node = self
            .builder
            .open(Kind::Map, segment, Some(tag.key_span), pos, pos);
        if self.keep_readings {
            self.readings.push(NodeReadings {
                node,
                wire_type: tag.wire_type,
                field,
                readings: vec![WireReading {
                    label: format!("group{}", tag.flags),
                    value: Value::Null,
                    chosen: true,
                }],
            });
        }
        self.stack.push(Frame {
            key: Self::key_of(&tag),
            end,
            group: Some(field),
            entries: Vec::new(),
        });
        Ok(pos)
    }

    /// An end-group tag closes the group open on top, which must be the same field's.
    fn close_group(&mut self, tag: &Tag, pos: usize) -> Result<(), Fail> {
        let field = tag.field;
        let open = self.stack.last().and_then(|f| f.group);
        if open != Some(field) {
            let message = match open {
                Some(g) => format!(
                    "an end-group tag for field {field} does not match the open group of field {g}"
                ),
                None => format!("an end-group tag for field {field} has no open group"),
            };
            return Err(Fail::new(ErrorKind::Syntax, tag.key_span.start, message));
        }
        self.builder.close(tag.key_span.start, pos);
        self.pop_frame();
        Ok(())
    }

    /// Pops the innermost frame into its parent; returns the value when it was the top level.
    fn pop_frame(&mut self) -> Option<Value> {
        let frame = self.stack.pop()?;
        let value = Value::Map(frame.entries);
        match self.stack.last_mut() {
            Some(parent) => {
                parent.entries.push((frame.key, value));
                None
            }
            None => Some(value),
        }
    }

    fn check_depth(&self, offset: usize, field: u64) -> Result<(), Fail> {
        if self.stack.len() >= self.max_depth {
            return Err(Fail::new(
                ErrorKind::Limit(LimitName::Depth),
                offset,
                format!(
                    "field {field} nests deeper than the limit of {} levels",
                    self.max_depth
                ),
            ));
        }
        Ok(())
    }

    /// Fails when `more` nodes would take the document past its node bound
    /// ([`crate::limits::Limits::schemaless_nodes`]).
    fn check_nodes(&self, offset: usize, more: usize) -> Result<(), Fail> {
        if self.builder.len().saturating_add(more) <= self.max_nodes.0 {
            return Ok(());
        }
        Err(Fail::new(
            ErrorKind::Limit(self.max_nodes.1),
            offset,
            self.max_nodes.2.clone(),
        ))
    }

    /// Adds a VARINT, I64 or I32 field's value over `span` as a leaf, its first reading the
    /// chosen one.
    fn add_leaf(&mut self, tag: &Tag, span: Span, mut rs: Vec<WireReading>) {
        let segment = self.segment_of(tag.field);
        let value = rs.first().map_or(Value::Null, |r| r.value.clone());
        if let Some(first) = rs.first_mut() {
            first.chosen = true;
        }
        let node = self.builder.leaf(
            value.kind(),
            segment,
            Some(tag.key_span),
            span,
            span.start,
            span,
        );
        if self.keep_readings {
            self.readings.push(NodeReadings {
                node,
                wire_type: tag.wire_type,
                field: tag.field,
                readings: rs,
            });
        }
        if let Some(top) = self.stack.last_mut() {
            top.entries.push((Self::key_of(tag), value));
        }
    }

    /// Whether `start..end` parses completely as fields (top level only; see the module docs).
    fn scan_message(&mut self, start: usize, end: usize) -> bool {
        self.work.trial_parses += 1;
        let bytes = self.bytes;
        let mut pos = start;
        let mut groups: Vec<u64> = Vec::new();
        while pos < end {
            self.work.trial_fields += 1;
            // Out of budget: no more message readings, so the payload is text, packed or bytes.
            let Some(left) = self.scan_budget.checked_sub(1) else {
                return false;
            };
            self.scan_budget = left;
            let Ok((tag, n)) = read_varint(bytes, pos, end) else {
                return false;
            };
            pos += n;
            let field = tag >> 3;
            if field == 0 || field > MAX_FIELD_NUMBER {
                return false;
            }
            let skip = match tag & 7 {
                0 => match read_varint(bytes, pos, end) {
                    Ok((_, n)) => n,
                    Err(_) => return false,
                },
                1 => 8,
                2 => match read_varint(bytes, pos, end) {
                    Ok((len, n)) => {
                        match usize::try_from(len).ok().and_then(|l| l.checked_add(n)) {
                            Some(s) => s,
                            None => return false,
                        }
                    }
                    Err(_) => return false,
                },
                3 => {
                    groups.push(field);
                    0
                }
                4 => {
                    if groups.pop() != Some(field) {
                        return false;
                    }
                    0
                }
                5 => 4,
                _ => return false,
            };
            if skip > end - pos {
                return false;
            }
            pos += skip;
        }
        groups.is_empty()
    }

    /// Reads a LEN field whose payload is `payload` (length varint from `len_start`); returns
    /// where reading goes on (the payload's start when it is read as a message).
    fn read_len(&mut self, tag: &Tag, len_start: usize, payload: Span) -> Result<usize, Fail> {
        let (field, key_span) = (tag.field, tag.key_span);
        let data = self.bytes.get(payload.range()).unwrap_or(&[]);
        let (choice, mut rs) = self.len_choice(data, payload, field, &tag.flags)?;
        let header_end = payload.start;
        let segment = self.segment_of(field);
        match choice {
            LenChoice::Message => {
                self.check_depth(key_span.start, field)?;
                if let Some(r) = rs.first_mut() {
                    r.value = Value::Null;
                }
                let node =
                    self.builder
                        .open(Kind::Map, segment, Some(key_span), len_start, header_end);
                self.push_readings(node, field, rs);
                self.stack.push(Frame {
                    key: Self::key_of(tag),
                    end: payload.end,
                    group: None,
                    entries: Vec::new(),
                });
                return Ok(payload.start);
            }
            LenChoice::Packed(items) => {
                self.push_packed(tag, len_start, payload, rs, &items)?;
            }
            LenChoice::Text(t) => {
                let value = Value::Text(t.into());
                if let Some(r) = rs.first_mut() {
                    r.value = value.clone();
                }
                self.push_len_leaf(tag, len_start, payload, rs, value);
            }
            LenChoice::Bytes => {
                let value = Value::Bytes(data.to_vec());
                if let Some(r) = rs.first_mut() {
                    r.value = value.clone();
                }
                self.push_len_leaf(tag, len_start, payload, rs, value);
            }
        }
        Ok(payload.end)
    }

    /// How a LEN payload is read (a message when it parses as one, else text, packed varints
    /// or bytes; or as the user forced field `field`), with its readings, the chosen first.
    fn len_choice(
        &mut self,
        data: &'a [u8],
        payload: Span,
        field: u64,
        flags: &str,
    ) -> Result<(LenChoice, Vec<WireReading>), Fail> {
        let long = data.len() > MAX_ALTERNATIVE_BYTES;
        let is_message = !data.is_empty() && self.scan_message(payload.start, payload.end);
        let skip_alternatives = is_message && long;
        let text = if skip_alternatives {
            None
        } else {
            printable_text(data)
        };
        let packed = if skip_alternatives {
            None
        } else {
            packed_varints(self.bytes, payload.start, payload.end)
        };
        let forced = match self.forced(field) {
            Some(r) => Some((
                r,
                forced_len(r, data, payload.start, is_message)
                    .map_err(|why| forced_fail(r, field, payload.start, &why))?,
            )),
            None => None,
        };
        let mut choice = if data.is_empty() {
            LenChoice::Text(String::new())
        } else if is_message {
            LenChoice::Message
        } else if let Some(t) = text {
            LenChoice::Text(t.to_string())
        } else if let Some(p) = packed.as_ref().filter(|p| !looks_like_random_id(data, p)) {
            LenChoice::Packed(
                p.iter()
                    .map(|(v, span)| (Value::Int(i128::from(*v)), *span))
                    .collect(),
            )
        } else {
            LenChoice::Bytes
        };
        let mut rs: Vec<WireReading> = Vec::new();
        if self.keep_readings {
            rs = len_readings(data, flags, &choice, text, packed.as_deref(), long);
        }
        if let Some((r, forced_choice)) = forced {
            choice = forced_choice;
            let value = match &choice {
                LenChoice::Message => Value::Null,
                LenChoice::Text(t) => Value::Text(t.into()),
                LenChoice::Packed(items) => {
                    Value::Array(items.iter().map(|(v, _)| v.clone()).collect())
                }
                LenChoice::Bytes => Value::Bytes(data.to_vec()),
            };
            self.force(&mut rs, r, flags, value);
        }
        Ok((choice, rs))
    }

    /// Keeps a LEN node's readings, when readings are kept.
    fn push_readings(&mut self, node: NodeId, field: u64, readings: Vec<WireReading>) {
        if self.keep_readings {
            self.readings.push(NodeReadings {
                node,
                wire_type: WireType::Len,
                field,
                readings,
            });
        }
    }

    /// Adds a LEN field read as packed varints: an array of `items` over its length (from
    /// `len_start`) and payload.
    fn push_packed(
        &mut self,
        tag: &Tag,
        len_start: usize,
        payload: Span,
        mut rs: Vec<WireReading>,
        items: &[(Value, Span)],
    ) -> Result<(), Fail> {
        let (field, key_span) = (tag.field, tag.key_span);
        self.check_depth(key_span.start, field)?;
        self.check_nodes(key_span.start, items.len().saturating_add(1))?;
        let values: Vec<Value> = items.iter().map(|(v, _)| v.clone()).collect();
        if let Some(r) = rs.first_mut() {
            r.value = Value::Array(values.clone());
        }
        let segment = self.segment_of(field);
        let node = self.builder.open(
            Kind::Array,
            segment,
            Some(key_span),
            len_start,
            payload.start,
        );
        for (i, (v, item)) in items.iter().enumerate() {
            let seg = crate::model::Segment::Index(u32::try_from(i).unwrap_or(u32::MAX));
            self.builder
                .leaf(v.kind(), seg, None, *item, item.start, *item);
        }
        self.builder.close(payload.end, payload.end);
        self.push_readings(node, field, rs);
        if let Some(top) = self.stack.last_mut() {
            top.entries.push((Self::key_of(tag), Value::Array(values)));
        }
        Ok(())
    }

    /// Adds a LEN field read as text or bytes: a leaf over its length and payload.
    fn push_len_leaf(
        &mut self,
        tag: &Tag,
        len_start: usize,
        payload: Span,
        rs: Vec<WireReading>,
        value: Value,
    ) {
        let segment = self.segment_of(tag.field);
        let node = self.builder.leaf(
            value.kind(),
            segment,
            Some(tag.key_span),
            Span::new(len_start, payload.end),
            payload.start,
            payload,
        );
        self.push_readings(node, tag.field, rs);
        if let Some(top) = self.stack.last_mut() {
            top.entries.push((Self::key_of(tag), value));
        }
    }
}

/// The error for a user's reading the field's bytes cannot have.
fn forced_fail(read_as: ReadAs, field: u64, offset: usize, why: &str) -> Fail {
    Fail::new(
        ErrorKind::Invalid,
        offset,
        format!("--read {}: field {field} {why}", read_as.name()),
    )
}

/// The value of a VARINT (`bits` its value), I32 or I64 field (`bits` its little-endian bytes)
/// read as `read_as`, or why it cannot be.
fn forced_fixed(read_as: ReadAs, wire: WireType, bits: u64) -> Result<Value, String> {
    use crate::model::Float;
    if read_as.wire_type() != wire {
        return Err(format!(
            "has wire type {}, which {} does not read",
            wire.name(),
            read_as.name()
        ));
    }
    Ok(match read_as {
        ReadAs::Uint64 | ReadAs::Fixed64 => Value::Int(i128::from(bits)),
        ReadAs::Int64 | ReadAs::Sfixed64 => Value::Int(i128::from(bits as i64)),
        ReadAs::Sint64 => Value::Int(i128::from((bits >> 1) as i64 ^ -((bits & 1) as i64))),
        ReadAs::Bool if bits <= 1 => Value::Bool(bits == 1),
        ReadAs::Bool => return Err(format!("is the varint {bits}, not a bool (0 or 1)")),
        ReadAs::Fixed32 => Value::Int(i128::from(bits as u32)),
        ReadAs::Sfixed32 => Value::Int(i128::from(bits as u32 as i32)),
        ReadAs::Float => Value::Float(Float::f32(f32::from_bits(bits as u32))),
        ReadAs::Double => Value::Float(Float::f64(f64::from_bits(bits))),
        _ => return Err(format!("cannot be read as {}", read_as.name())),
    })
}

/// What a LEN payload `data` (at `start`) is read as under `read_as`, or why it cannot be.
fn forced_len(
    read_as: ReadAs,
    data: &[u8],
    start: usize,
    is_message: bool,
) -> Result<LenChoice, String> {
    use crate::model::Float;
    let chunks = |width: usize, read: &dyn Fn(&[u8]) -> Value| {
        if data.len() % width != 0 {
            return Err(format!(
                "has {} bytes, not a multiple of {width}",
                data.len()
            ));
        }
        Ok(LenChoice::Packed(
            data.chunks_exact(width)
                .enumerate()
                .map(|(i, c)| {
                    let at = start + i * width;
                    (read(c), Span::new(at, at + width))
                })
                .collect(),
        ))
    };
    let varints = |zigzag: bool| {
        let items = packed_varints(data, 0, data.len()).ok_or("does not split into varints")?;
        Ok(LenChoice::Packed(
            items
                .into_iter()
                .map(|(v, span)| {
                    let value = if zigzag {
                        i128::from((v >> 1) as i64 ^ -((v & 1) as i64))
                    } else {
                        i128::from(v)
                    };
                    (
                        Value::Int(value),
                        Span::new(start + span.start, start + span.end),
                    )
                })
                .collect(),
        ))
    };
    match read_as {
        ReadAs::Message if is_message || data.is_empty() => Ok(LenChoice::Message),
        ReadAs::Message => Err("does not parse as a message (its bytes are not fields)".into()),
        ReadAs::String => std::str::from_utf8(data)
            .map(|t| LenChoice::Text(t.to_string()))
            .map_err(|e| format!("is not UTF-8 (byte {} of its payload)", e.valid_up_to())),
        ReadAs::Bytes => Ok(LenChoice::Bytes),
        ReadAs::PackedVarint => varints(false),
        ReadAs::PackedSint64 => varints(true),
        ReadAs::PackedFixed32 => chunks(4, &|c| Value::Int(i128::from(u32_le(c)))),
        ReadAs::PackedFloat => chunks(4, &|c| Value::Float(Float::f32(f32::from_bits(u32_le(c))))),
        ReadAs::PackedFixed64 => chunks(8, &|c| Value::Int(i128::from(u64_le(c)))),
        ReadAs::PackedDouble => chunks(8, &|c| Value::Float(Float::f64(f64::from_bits(u64_le(c))))),
        other => Err(format!(
            "has wire type LEN, which {} does not read",
            other.name()
        )),
    }
}

fn varint_fail(e: VarintError, pos: usize, end: usize, what: &str) -> Fail {
    match e {
        VarintError::Eof => Fail::new(
            ErrorKind::Eof,
            pos,
            format!(
                "{what} runs past the end of its message ({} bytes left)",
                end - pos
            ),
        ),
        VarintError::Overflow | VarintError::TooLong => Fail::new(
            ErrorKind::Syntax,
            pos,
            format!("{what} is a varint longer than 10 bytes or beyond 64 bits"),
        ),
    }
}

/// Like [`decode_raw`], also returning the work counters (for tests of the linear bound).
#[cfg(test)]
fn decode_counting(
    bytes: &[u8],
    options: &DecodeOptions,
) -> (Result<RawDocument, DecodeError>, Work) {
    let mut d = Decoder::new(bytes, options);
    let mut field_path = None;
    let r = d.read_all(&mut field_path);
    let work = d.work;
    let out = match r {
        Ok(value) => Ok(RawDocument {
            document: Document {
                format: Format::Protobuf,
                value,
                spans: d.builder.finish(),
            },
            readings: d.readings,
        }),
        Err(f) => Err(d.error(f, Path::root())),
    };
    (out, work)
}
