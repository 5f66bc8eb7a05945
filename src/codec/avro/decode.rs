//! The Avro binary decoder: a datum and its schema to a [`Value`] and its spans.
//!
//! Avro bytes say nothing of their own structure: the schema drives every step. The decoder
//! follows the schema recursively; the data can nest only as deep as the schema does, except
//! through a recursive named type, where [`Limits::depth`](crate::limits::Limits::depth) stops it
//! (and [`super::decode`] runs it on a thread with a stack sized for that depth).
//!
//! What becomes of each type: records are maps keyed by field name (in schema order), enums
//! their symbol as text, fixed and bytes byte strings, a union the value of its branch (the
//! branch index is the node's header), `timestamp-*` logical types [`Value::Timestamp`],
//! `decimal` a [`Value::Decimal`] literal; other logical types are their underlying values.

use apache_avro::schema::{
    EnumSchema, FixedSchema, InnerDecimalSchema, RecordSchema, UnionSchema, UuidSchema,
};
use num_bigint::BigInt;

use super::schema::{type_name, AvroSchema, RawSchema};
use crate::codec::{DecodeError, Document, ErrorKind, Format, LimitName};
use crate::model::{Float, Kind, Segment, Span, SpanTreeBuilder, Timestamp, Value};

/// A failure, with what was decoded of the value it stopped in.
pub(super) struct Fail {
    pub kind: ErrorKind,
    pub offset: usize,
    pub message: String,
    /// The value being decoded when it stopped, with the items read so far.
    pub partial: Option<Value>,
}

fn fail<T>(kind: ErrorKind, offset: usize, message: impl Into<String>) -> Result<T, Fail> {
    Err(Fail {
        kind,
        offset,
        message: message.into(),
        partial: None,
    })
}

/// Where a node starts and how it is addressed.
#[derive(Clone, Copy)]
struct Place {
    segment: Segment,
    key: Option<Span>,
    /// Where the node's bytes start: before a union's branch index, or at `pos`.
    start: Option<usize>,
}

pub(super) struct Decoder<'a> {
    bytes: &'a [u8],
    pos: usize,
    schema: &'a AvroSchema,
    max_depth: usize,
    max_nodes: usize,
    depth: usize,
    pub(super) builder: SpanTreeBuilder,
}

impl<'a> Decoder<'a> {
    pub(super) fn new(
        bytes: &'a [u8],
        schema: &'a AvroSchema,
        limits: &crate::limits::Limits,
    ) -> Decoder<'a> {
        Decoder {
            bytes,
            pos: 0,
            schema,
            max_depth: limits.depth(),
            max_nodes: limits.nodes_for(bytes.len()),
            depth: 0,
            builder: SpanTreeBuilder::new(),
        }
    }

    /// Decodes one datum of the schema's top-level type from the start of the bytes.
    pub(super) fn datum(&mut self) -> Result<Value, Fail> {
        let root = self.schema.root();
        let place = Place {
            segment: Segment::Root,
            key: None,
            start: None,
        };
        self.value(root, place)
    }

    pub(super) fn pos(&self) -> usize {
        self.pos
    }

    fn room(&self) -> Result<(), Fail> {
        if self.builder.len() >= self.max_nodes {
            return fail(
                ErrorKind::Limit(LimitName::Nodes),
                self.pos,
                crate::limits::Limits::nodes_message(self.max_nodes),
            );
        }
        Ok(())
    }

    /// A zigzag varint `long` (at most 10 bytes).
    fn long(&mut self) -> Result<i64, Fail> {
        let start = self.pos;
        let mut n: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.bytes.get(self.pos) else {
                return fail(
                    ErrorKind::Eof,
                    self.pos,
                    "the input ended inside a varint".to_string(),
                );
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return fail(
                    ErrorKind::Syntax,
                    start,
                    "a varint longer than a 64-bit long".to_string(),
                );
            }
            n |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(((n >> 1) as i64) ^ -((n & 1) as i64));
            }
        }
        fail(
            ErrorKind::Syntax,
            start,
            "a varint longer than 10 bytes".to_string(),
        )
    }

    fn int(&mut self) -> Result<i64, Fail> {
        let start = self.pos;
        let n = self.long()?;
        if i32::try_from(n).is_err() {
            return fail(
                ErrorKind::Invalid,
                start,
                format!("{n} is out of range for an Avro int"),
            );
        }
        Ok(n)
    }

    /// `n` bytes from here.
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Fail> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return fail(
                ErrorKind::Eof,
                self.pos,
                format!(
                    "{what} of {n} bytes runs past the end of the input ({} bytes left)",
                    self.bytes.len() - self.pos
                ),
            );
        };
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// A length prefix (a `long` that must be ≥ 0 and fit in what is left).
    fn length(&mut self, what: &str) -> Result<usize, Fail> {
        let start = self.pos;
        let n = self.long()?;
        usize::try_from(n).map_err(|_| Fail {
            kind: ErrorKind::Invalid,
            offset: start,
            message: format!("{what} has a negative length ({n})"),
            partial: None,
        })
    }

    fn leaf(&mut self, kind: Kind, place: Place, start: usize, payload_start: usize) {
        let node_start = place.start.unwrap_or(start);
        self.builder.leaf(
            kind,
            place.segment,
            place.key,
            Span::new(node_start, self.pos),
            payload_start,
            Span::new(payload_start, self.pos),
        );
    }

    /// One value of `schema` at the current position, its node added to the span tree; a
    /// failure carries what was read of it so far.
    fn value(&mut self, schema: &'a RawSchema, place: Place) -> Result<Value, Fail> {
        self.room()?;
        let start = self.pos;
        let Some(schema) = self.schema.resolve(schema) else {
            return fail(
                ErrorKind::Invalid,
                start,
                format!("the schema refers to a type it does not define ({schema:?})"),
            );
        };
        let value = match schema {
            RawSchema::Null => {
                self.leaf(Kind::Null, place, start, start);
                Value::Null
            }
            RawSchema::Boolean => {
                let b = self.take(1, "a boolean")?[0];
                if b > 1 {
                    return fail(
                        ErrorKind::Invalid,
                        start,
                        format!("a boolean byte must be 0 or 1, not {b}"),
                    );
                }
                self.leaf(Kind::Bool, place, start, start);
                Value::Bool(b == 1)
            }
            RawSchema::Int | RawSchema::Date | RawSchema::TimeMillis => {
                let n = self.int()?;
                self.leaf(Kind::Int, place, start, start);
                Value::Int(i128::from(n))
            }
            RawSchema::Long
            | RawSchema::TimeMicros
            | RawSchema::LocalTimestampMillis
            | RawSchema::LocalTimestampMicros
            | RawSchema::LocalTimestampNanos => {
                let n = self.long()?;
                self.leaf(Kind::Int, place, start, start);
                Value::Int(i128::from(n))
            }
            RawSchema::TimestampMillis | RawSchema::TimestampMicros | RawSchema::TimestampNanos => {
                self.timestamp(schema, place, start)?
            }
            RawSchema::Float => {
                let b = self.take(4, "a float")?;
                let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                self.leaf(
                    Kind::Float(crate::model::FloatWidth::F32),
                    place,
                    start,
                    start,
                );
                Value::Float(Float::f32(v))
            }
            RawSchema::Double => {
                let b = self.take(8, "a double")?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                self.leaf(
                    Kind::Float(crate::model::FloatWidth::F64),
                    place,
                    start,
                    start,
                );
                Value::Float(Float::f64(f64::from_le_bytes(a)))
            }
            RawSchema::Bytes
            | RawSchema::BigDecimal
            | RawSchema::Uuid(UuidSchema::Bytes)
            | RawSchema::Decimal(apache_avro::schema::DecimalSchema {
                inner: InnerDecimalSchema::Bytes,
                ..
            }) => self.bytes_value(schema, place, start)?,
            RawSchema::String | RawSchema::Uuid(UuidSchema::String) => self.string(place, start)?,
            RawSchema::Fixed(f)
            | RawSchema::Duration(f)
            | RawSchema::Uuid(UuidSchema::Fixed(f))
            | RawSchema::Decimal(apache_avro::schema::DecimalSchema {
                inner: InnerDecimalSchema::Fixed(f),
                ..
            }) => self.fixed_value(schema, f, place, start)?,
            RawSchema::Enum(e) => self.enum_value(e, place, start)?,
            RawSchema::Union(u) => return self.union_value(u, place, start),
            RawSchema::Record(r) => self.record(r, place, start)?,
            RawSchema::Array(a) => return self.blocks(&a.items, place, start, false),
            RawSchema::Map(m) => return self.blocks(&m.types, place, start, true),
            RawSchema::Ref { .. } => {
                return fail(
                    ErrorKind::Invalid,
                    start,
                    "a reference to a reference".to_string(),
                )
            }
        };
        Ok(value)
    }

    /// A timestamp: a `long` count of the schema's unit (millis, micros or nanos) since the
    /// epoch.
    fn timestamp(
        &mut self,
        schema: &'a RawSchema,
        place: Place,
        start: usize,
    ) -> Result<Value, Fail> {
        let n = self.long()?;
        let per_second: i64 = match schema {
            RawSchema::TimestampMillis => 1_000,
            RawSchema::TimestampMicros => 1_000_000,
            _ => 1_000_000_000,
        };
        let seconds = n.div_euclid(per_second);
        let nanos = (n.rem_euclid(per_second) * (1_000_000_000 / per_second)) as u32;
        self.leaf(Kind::Timestamp, place, start, start);
        Ok(Value::Timestamp(Timestamp { seconds, nanos }))
    }

    /// A `string`: UTF-8 text after its length.
    fn string(&mut self, place: Place, start: usize) -> Result<Value, Fail> {
        let n = self.length("a string")?;
        let header_end = self.pos;
        let data = self.take(n, "a string")?;
        let Ok(text) = std::str::from_utf8(data) else {
            return fail(
                ErrorKind::Invalid,
                header_end,
                "a string that is not UTF-8".to_string(),
            );
        };
        self.leaf(Kind::Text, place, start, header_end);
        Ok(Value::text(text))
    }

    /// `bytes` (and the logical types over it) after their length; a decimal's as its text.
    fn bytes_value(
        &mut self,
        schema: &'a RawSchema,
        place: Place,
        start: usize,
    ) -> Result<Value, Fail> {
        let n = self.length("a bytes value")?;
        let header_end = self.pos;
        let data = self.take(n, "a bytes value")?;
        self.leaf(
            if matches!(schema, RawSchema::Decimal(_)) {
                Kind::Decimal
            } else {
                Kind::Bytes
            },
            place,
            start,
            header_end,
        );
        Ok(match schema {
            RawSchema::Decimal(d) => Value::Decimal(decimal_text(data, d.scale)),
            _ => Value::Bytes(data.to_vec()),
        })
    }

    /// A `fixed` (and the logical types over it): its size in bytes; a decimal's as its text.
    fn fixed_value(
        &mut self,
        schema: &'a RawSchema,
        f: &FixedSchema,
        place: Place,
        start: usize,
    ) -> Result<Value, Fail> {
        let data = self.take(f.size, "a fixed value")?;
        let decimal = match schema {
            RawSchema::Decimal(d) => Some(d.scale),
            _ => None,
        };
        self.leaf(
            if decimal.is_some() {
                Kind::Decimal
            } else {
                Kind::Bytes
            },
            place,
            start,
            start,
        );
        Ok(match decimal {
            Some(scale) => Value::Decimal(decimal_text(data, scale)),
            None => Value::Bytes(data.to_vec()),
        })
    }

    /// An `enum`: the symbol its index names.
    fn enum_value(&mut self, e: &EnumSchema, place: Place, start: usize) -> Result<Value, Fail> {
        let i = self.long()?;
        let Some(symbol) = usize::try_from(i).ok().and_then(|i| e.symbols.get(i)) else {
            return fail(
                ErrorKind::Invalid,
                start,
                format!(
                    "enum {} has {} symbols; index {i} names none",
                    e.name.name(),
                    e.symbols.len()
                ),
            );
        };
        self.leaf(Kind::Text, place, start, start);
        Ok(Value::text(symbol.as_str()))
    }

    /// A union: the branch its index names, read as that branch's value (its node starting
    /// at the index).
    fn union_value(
        &mut self,
        u: &'a UnionSchema,
        place: Place,
        start: usize,
    ) -> Result<Value, Fail> {
        let i = self.long()?;
        let Some(branch) = usize::try_from(i).ok().and_then(|i| u.variants().get(i)) else {
            return fail(
                ErrorKind::Invalid,
                start,
                format!(
                    "the union has {} branches; index {i} names none",
                    u.variants().len()
                ),
            );
        };
        if matches!(self.schema.resolve(branch), Some(RawSchema::Union(_))) {
            return fail(
                ErrorKind::Invalid,
                start,
                "a union directly inside a union".to_string(),
            );
        }
        let inner = Place {
            start: Some(place.start.unwrap_or(start)),
            ..place
        };
        self.value(branch, inner)
    }

    /// A record: its fields in the schema's order; a failure carries the fields read so far.
    fn record(&mut self, r: &'a RecordSchema, place: Place, start: usize) -> Result<Value, Fail> {
        self.enter(start)?;
        let node_start = place.start.unwrap_or(start);
        self.builder
            .open(Kind::Map, place.segment, place.key, node_start, start);
        let mut fields = Vec::with_capacity(r.fields.len());
        for field in &r.fields {
            let segment = self.builder.key(&field.name);
            let child = Place {
                segment,
                key: None,
                start: None,
            };
            match self.value(&field.schema, child) {
                Ok(v) => fields.push((Value::text(field.name.as_str()), v)),
                Err(mut f) => {
                    if let Some(p) = f.partial.take() {
                        fields.push((Value::text(field.name.as_str()), p));
                    }
                    f.partial = Some(Value::Map(fields));
                    return Err(f);
                }
            }
        }
        self.builder.close(self.pos, self.pos);
        self.depth -= 1;
        Ok(Value::Map(fields))
    }

    fn enter(&mut self, at: usize) -> Result<(), Fail> {
        if self.depth >= self.max_depth {
            return fail(
                ErrorKind::Limit(LimitName::Depth),
                at,
                format!(
                    "nesting deeper than {} levels (limit depth, `--max-depth N` raises it)",
                    self.max_depth
                ),
            );
        }
        self.depth += 1;
        Ok(())
    }

    /// An array or map: blocks of items, each block a count (negative: followed by the
    /// block's byte size), ending with a count of 0.
    fn blocks(
        &mut self,
        items_schema: &'a RawSchema,
        place: Place,
        start: usize,
        is_map: bool,
    ) -> Result<Value, Fail> {
        self.enter(start)?;
        let what = if is_map { "map" } else { "array" };
        let mut items = Vec::new();
        let mut entries = Vec::new();
        let partial = |items: Vec<Value>, entries: Vec<(Value, Value)>| {
            if is_map {
                Value::Map(entries)
            } else {
                Value::Array(items)
            }
        };
        let node_start = place.start.unwrap_or(start);
        let mut opened = false;
        let mut index = 0u32;
        let payload_end;
        loop {
            let block_at = self.pos;
            let count = match self.block_count(what) {
                Ok(c) => c,
                Err(mut f) => {
                    if !opened {
                        return Err(f);
                    }
                    f.partial = Some(partial(items, entries));
                    return Err(f);
                }
            };
            if !opened {
                let kind = if is_map { Kind::Map } else { Kind::Array };
                // The first block's count is the header; an empty one's closing 0 is not.
                let header_end = if count == 0 { block_at } else { self.pos };
                self.builder
                    .open(kind, place.segment, place.key, node_start, header_end);
                opened = true;
            }
            if count == 0 {
                payload_end = block_at;
                break;
            }
            for _ in 0..count {
                let result = if is_map {
                    let key_start = self.pos;
                    let key = self.length("a map key").and_then(|n| {
                        let data = self.take(n, "a map key")?;
                        std::str::from_utf8(data).map_err(|_| Fail {
                            kind: ErrorKind::Invalid,
                            offset: key_start,
                            message: "a map key that is not UTF-8".into(),
                            partial: None,
                        })
                    });
                    match key {
                        Ok(key) => {
                            let segment = self.builder.key(key);
                            let child = Place {
                                segment,
                                key: Some(Span::new(key_start, self.pos)),
                                start: None,
                            };
                            self.value(items_schema, child)
                                .map(|v| entries.push((Value::text(key), v)))
                                .map_err(|mut f| {
                                    if let Some(p) = f.partial.take() {
                                        entries.push((Value::text(key), p));
                                    }
                                    f
                                })
                        }
                        Err(f) => Err(f),
                    }
                } else {
                    let child = Place {
                        segment: Segment::Index(index),
                        key: None,
                        start: None,
                    };
                    self.value(items_schema, child)
                        .map(|v| items.push(v))
                        .map_err(|mut f| {
                            if let Some(p) = f.partial.take() {
                                items.push(p);
                            }
                            f
                        })
                };
                if let Err(mut f) = result {
                    f.partial = Some(partial(items, entries));
                    return Err(f);
                }
                index = index.saturating_add(1);
            }
        }
        self.builder.close(payload_end, self.pos);
        self.depth -= 1;
        Ok(partial(items, entries))
    }

    /// A block's item count; a negative count is followed by the block's size in bytes.
    fn block_count(&mut self, what: &str) -> Result<u64, Fail> {
        let at = self.pos;
        let count = self.long()?;
        if count < 0 {
            let size = self.long()?;
            if size < 0 {
                return fail(
                    ErrorKind::Invalid,
                    at,
                    format!("an {what} block with a negative byte size ({size})"),
                );
            }
        }
        Ok(count.unsigned_abs())
    }
}

/// A decimal's unscaled two's-complement big-endian integer and scale, as a literal.
pub(super) fn decimal_text(unscaled: &[u8], scale: usize) -> String {
    let n = BigInt::from_signed_bytes_be(unscaled);
    let digits = n.magnitude().to_string();
    let sign = if n.sign() == num_bigint::Sign::Minus {
        "-"
    } else {
        ""
    };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let digits = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
    } else {
        digits
    };
    let (whole, fraction) = digits.split_at(digits.len() - scale);
    format!("{sign}{whole}.{fraction}")
}

/// Decodes `count` datums of `schema` filling all of `bytes` (a container file's block, once
/// decompressed): the document's root is the array of them.
pub(super) fn decode_run(
    bytes: &[u8],
    schema: &AvroSchema,
    count: u64,
    limits: &crate::limits::Limits,
) -> Result<Document, DecodeError> {
    let mut d = Decoder::new(bytes, schema, limits);
    d.builder.open(Kind::Array, Segment::Root, None, 0, 0);
    let mut items = Vec::new();
    let mut failed = None;
    for i in 0..count {
        let place = Place {
            segment: Segment::Index(u32::try_from(i).unwrap_or(u32::MAX)),
            key: None,
            start: None,
        };
        match d.room().and_then(|()| d.value(schema.root(), place)) {
            Ok(v) => items.push(v),
            Err(mut f) => {
                if let Some(p) = f.partial.take() {
                    items.push(p);
                }
                failed = Some(f);
                break;
            }
        }
    }
    let end = d.pos();
    let path = d.builder.current_path();
    let mut builder = std::mem::take(&mut d.builder);
    let doc = |builder: SpanTreeBuilder, items: Vec<Value>, at: usize| Document {
        format: Format::Avro,
        value: Value::Array(items),
        spans: builder.finish_partial(at),
    };
    if let Some(f) = failed {
        return Err(DecodeError {
            format: Format::Avro,
            kind: f.kind,
            offset: f.offset,
            path,
            message: f.message,
            partial: Some(Box::new(doc(builder, items, f.offset))),
        });
    }
    builder.close(end, end);
    if end != bytes.len() {
        return Err(DecodeError {
            format: Format::Avro,
            kind: ErrorKind::TrailingData,
            offset: end,
            path: crate::model::Path::root(),
            message: format!(
                "{count} datums end at byte {end}; {} bytes follow them",
                bytes.len() - end
            ),
            partial: Some(Box::new(doc(builder, items, end))),
        });
    }
    Ok(doc(builder, items, end))
}

/// Decodes one datum of `schema` filling all of `bytes`.
pub(super) fn decode_datum(
    bytes: &[u8],
    schema: &AvroSchema,
    limits: &crate::limits::Limits,
) -> Result<Document, DecodeError> {
    let mut d = Decoder::new(bytes, schema, limits);
    let result = d.datum();
    let end = d.pos();
    let builder = std::mem::take(&mut d.builder);
    match result {
        Ok(value) if end == bytes.len() => Ok(Document {
            format: Format::Avro,
            value,
            spans: builder.finish(),
        }),
        Ok(value) => {
            let spans = builder.finish();
            let doc = Document {
                format: Format::Avro,
                value,
                spans,
            };
            Err(DecodeError {
                format: Format::Avro,
                kind: ErrorKind::TrailingData,
                offset: end,
                path: crate::model::Path::root(),
                message: format!(
                    "the datum ({}) ends at byte {end}; {} bytes follow it",
                    match (type_name(schema.root()), schema.title()) {
                        (kind, title) if kind == title => title,
                        (kind, title) => format!("{kind} {title}"),
                    },
                    bytes.len() - end
                ),
                partial: Some(Box::new(doc)),
            })
        }
        Err(f) => {
            let path = builder.current_path();
            let spans = builder.finish_partial(f.offset);
            Err(DecodeError {
                format: Format::Avro,
                kind: f.kind,
                offset: f.offset,
                path,
                message: f.message,
                partial: f.partial.map(|value| {
                    Box::new(Document {
                        format: Format::Avro,
                        value,
                        spans,
                    })
                }),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_written_with_their_scale() {
        assert_eq!(decimal_text(&[0x30, 0x39], 2), "123.45");
        assert_eq!(decimal_text(&[0xcf, 0xc7], 2), "-123.45");
        assert_eq!(decimal_text(&[0x05], 3), "0.005");
        assert_eq!(decimal_text(&[0x05], 0), "5");
    }
}
