//! The Avro binary encoder: a [`Value`] written by a schema, with the spans of what it wrote
//! and notes for what the schema forced.
//!
//! The bytes are the ones the reference libraries write for the same schema and data (Python's
//! `fastavro` and Apache's `avro`; `tests/fixtures/library-bytes/avro/` holds theirs): arrays
//! and maps as one block with a positive count followed by the closing 0, strings and bytes with
//! a zigzag length, floats little-endian, a union's branch index before its value.
//!
//! A union's branch is the first one whose type is the value's own (an integer in `int` when it
//! fits, else `long`; text in `string`, else an enum with that symbol), else the first that can
//! hold it (an integer in a `double`), as `fastavro` chooses for the values wirelens decodes.

use apache_avro::schema::{
    ArraySchema, DecimalSchema, EnumSchema, FixedSchema, InnerDecimalSchema, MapSchema,
    RecordSchema, UnionSchema, UuidSchema,
};
use num_traits::ToPrimitive;

use super::schema::{type_name, AvroSchema, RawSchema};
use crate::codec::{EncodeError, Encoded, Format, NoteKind, Notes};
use crate::model::{
    Float, FloatWidth, Kind, Path, PathSegment, Segment, Span, SpanTreeBuilder, Value,
};

pub(super) struct Encoder<'s> {
    schema: &'s AvroSchema,
    out: Vec<u8>,
    builder: SpanTreeBuilder,
    notes: Notes,
    path: Vec<PathSegment>,
}

#[derive(Clone, Copy)]
struct Place {
    segment: Segment,
    key: Option<Span>,
    start: Option<usize>,
}

/// Encodes `value` as one datum of `schema`.
pub(super) fn encode(value: &Value, schema: &AvroSchema) -> Result<Encoded, EncodeError> {
    let mut e = Encoder {
        schema,
        out: Vec::new(),
        builder: SpanTreeBuilder::with_capacity(value.node_count()),
        notes: Notes::new(),
        path: Vec::new(),
    };
    let root = Place {
        segment: Segment::Root,
        key: None,
        start: None,
    };
    e.write(value, schema.root(), root)?;
    Ok(Encoded {
        format: Format::Avro,
        bytes: e.out,
        spans: e.builder.finish(),
        notes: e.notes.into_vec(),
    })
}

/// Appends `n` as a zigzag varint `long`.
pub(super) fn put_long(out: &mut Vec<u8>, n: i64) {
    let mut z = ((n << 1) ^ (n >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

impl<'s> Encoder<'s> {
    fn path(&self) -> Path {
        Path::from_segments(self.path.clone())
    }

    fn error(&self, message: String) -> EncodeError {
        EncodeError {
            format: Format::Avro,
            path: self.path(),
            message,
        }
    }

    fn note(&mut self, kind: NoteKind, message: impl FnOnce() -> String) {
        let path = self.path();
        self.notes.add(kind, path, message);
    }

    fn leaf(&mut self, kind: Kind, place: Place, start: usize, payload_start: usize) {
        let node_start = place.start.unwrap_or(start);
        self.builder.leaf(
            kind,
            place.segment,
            place.key,
            Span::new(node_start, self.out.len()),
            payload_start,
            Span::new(payload_start, self.out.len()),
        );
    }

    fn mismatch(&self, value: &Value, schema: &RawSchema) -> EncodeError {
        self.error(format!(
            "{} does not fit the schema's {}",
            value.summary(40),
            describe(schema)
        ))
    }

    /// Writes `value` as one datum of `schema` at `place`: a CBOR tag is dropped (noted) and
    /// each kind of schema has its own step.
    fn write(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        place: Place,
    ) -> Result<(), EncodeError> {
        let Some(schema) = self.schema.resolve(schema) else {
            return Err(self.error(format!("the schema has no type named by {schema:?}")));
        };
        if let Value::Tag(tag, inner) = value {
            if !matches!(schema, RawSchema::Union(_)) {
                self.note(NoteKind::TagDropped, || {
                    format!("CBOR tag {tag} has no Avro equivalent; the tagged value is written")
                });
            }
            return self.write(inner, schema, place);
        }
        let start = self.out.len();
        match schema {
            RawSchema::Null => match value {
                Value::Null => {}
                Value::Undefined | Value::Simple(_) => self.note(NoteKind::SimpleAsNull, || {
                    format!("{} written as Avro null", value.summary(20))
                }),
                other => return Err(self.mismatch(other, schema)),
            },
            RawSchema::Boolean => match value {
                Value::Bool(b) => self.out.push(u8::from(*b)),
                other => return Err(self.mismatch(other, schema)),
            },
            RawSchema::Int | RawSchema::Date | RawSchema::TimeMillis => match value {
                Value::Int(n) if i32::try_from(*n).is_ok() => put_long(&mut self.out, *n as i64),
                Value::Int(n) => {
                    return Err(self.error(format!("{n} is out of range for an Avro int")))
                }
                other => return Err(self.mismatch(other, schema)),
            },
            RawSchema::Long
            | RawSchema::TimeMicros
            | RawSchema::LocalTimestampMillis
            | RawSchema::LocalTimestampMicros
            | RawSchema::LocalTimestampNanos
            | RawSchema::TimestampMillis
            | RawSchema::TimestampMicros
            | RawSchema::TimestampNanos => return self.write_long(value, schema, place, start),
            RawSchema::Float => return self.write_float(value, schema, place, start),
            RawSchema::Double => return self.write_double(value, schema, place, start),
            RawSchema::Bytes
            | RawSchema::BigDecimal
            | RawSchema::Uuid(UuidSchema::Bytes)
            | RawSchema::Decimal(DecimalSchema {
                inner: InnerDecimalSchema::Bytes,
                ..
            }) => return self.write_bytes(value, schema, place, start),
            RawSchema::String | RawSchema::Uuid(UuidSchema::String) => {
                return self.write_string(value, schema, place, start)
            }
            RawSchema::Fixed(f)
            | RawSchema::Duration(f)
            | RawSchema::Uuid(UuidSchema::Fixed(f))
            | RawSchema::Decimal(DecimalSchema {
                inner: InnerDecimalSchema::Fixed(f),
                ..
            }) => return self.write_fixed(value, schema, f, place, start),
            RawSchema::Enum(e) => return self.write_enum(value, schema, e, place, start),
            RawSchema::Union(u) => return self.write_union(value, schema, u, place, start),
            RawSchema::Record(r) => return self.write_record(value, schema, r, place, start),
            RawSchema::Array(a) => return self.write_array(value, schema, a, place, start),
            RawSchema::Map(m) => return self.write_map(value, schema, m, place, start),
            RawSchema::Ref { .. } => {
                return Err(self.error("a reference to a reference".into()));
            }
        }
        let kind = match schema {
            RawSchema::Null => Kind::Null,
            RawSchema::Boolean => Kind::Bool,
            _ => Kind::Int,
        };
        self.leaf(kind, place, start, start);
        Ok(())
    }

    /// A `long` or one of its logical types: an integer, or a timestamp in the schema's unit
    /// (RFC 3339 text where the schema says timestamp stands for the instant it names).
    fn write_long(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        place: Place,
        start: usize,
    ) -> Result<(), EncodeError> {
        let parsed;
        let value = match (value, schema) {
            (
                Value::Text(t),
                RawSchema::TimestampMillis | RawSchema::TimestampMicros | RawSchema::TimestampNanos,
            ) => match crate::model::Timestamp::parse_rfc3339(t) {
                Some(ts) => {
                    self.note(NoteKind::TypeForced, || {
                        format!(
                            "RFC 3339 text written as a {}: the instant is kept, not \
                             its offset or how it was written",
                            describe(schema)
                        )
                    });
                    parsed = Value::Timestamp(ts);
                    &parsed
                }
                None => value,
            },
            _ => value,
        };
        let n = match value {
            Value::Int(n) => i64::try_from(*n).map_err(|_| {
                self.error(format!(
                    "{n} is out of range for an Avro long (64-bit signed)"
                ))
            })?,
            Value::Timestamp(t) => self.timestamp_units(t, schema)?,
            other => return Err(self.mismatch(other, schema)),
        };
        put_long(&mut self.out, n);
        let kind = if matches!(value, Value::Timestamp(_)) {
            Kind::Timestamp
        } else {
            Kind::Int
        };
        self.leaf(kind, place, start, start);
        Ok(())
    }

    /// A timestamp as a count of the schema's unit (millis, micros or nanos) since the epoch,
    /// noting digits the unit drops.
    fn timestamp_units(
        &mut self,
        t: &crate::model::Timestamp,
        schema: &RawSchema,
    ) -> Result<i64, EncodeError> {
        let per_second: i128 = match schema {
            RawSchema::TimestampMillis | RawSchema::LocalTimestampMillis => 1_000,
            RawSchema::TimestampNanos | RawSchema::LocalTimestampNanos => 1_000_000_000,
            _ => 1_000_000,
        };
        let unit = 1_000_000_000 / per_second;
        if i128::from(t.nanos) % unit != 0 {
            self.note(NoteKind::FloatWidth, || {
                format!(
                    "timestamp {} has more digits than the schema's {} keeps",
                    t.to_rfc3339(),
                    describe(schema)
                )
            });
        }
        let n = i128::from(t.seconds) * per_second + i128::from(t.nanos) / unit;
        i64::try_from(n).map_err(|_| {
            self.error(format!(
                "timestamp {} does not fit the schema's {}",
                t.to_rfc3339(),
                describe(schema)
            ))
        })
    }

    /// A `float`: a number rounded to 32 bits, noting what the rounding changed.
    fn write_float(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        place: Place,
        start: usize,
    ) -> Result<(), EncodeError> {
        let f = match value {
            Value::Float(Float {
                value,
                width: FloatWidth::F32 | FloatWidth::F16,
            }) => *value as f32,
            Value::Float(Float { value: d, .. }) => {
                let f = *d as f32;
                if f64::from(f).to_bits() != d.to_bits() && !d.is_nan() {
                    self.note(NoteKind::FloatWidth, || {
                        format!("float64 {d} rounded to the schema's float32")
                    });
                }
                f
            }
            Value::Int(n) => {
                let f = *n as f32;
                if f as i128 != *n {
                    self.note(NoteKind::IntegerPrecision, || {
                        format!("integer {n} rounded to the schema's float32")
                    });
                }
                f
            }
            other => return Err(self.mismatch(other, schema)),
        };
        self.out.extend_from_slice(&f.to_le_bytes());
        self.leaf(
            Kind::Float(crate::model::FloatWidth::F32),
            place,
            start,
            start,
        );
        Ok(())
    }

    /// A `double`: any number, noting integers and decimals it cannot hold exactly.
    fn write_double(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        place: Place,
        start: usize,
    ) -> Result<(), EncodeError> {
        let d = match value {
            Value::Float(f) => f.value,
            Value::Int(n) => {
                let d = *n as f64;
                if i64::try_from(*n).is_err() {
                    self.note(NoteKind::IntegerRange, || {
                        format!(
                            "integer {n} is past Avro's 64-bit long; written as a double \
                             ({d})"
                        )
                    });
                } else if d as i128 != *n {
                    self.note(NoteKind::IntegerPrecision, || {
                        format!("integer {n} rounded to the schema's double")
                    });
                }
                d
            }
            Value::BigInt(n) => {
                let d = n.to_f64().unwrap_or(f64::NAN);
                self.note(NoteKind::IntegerRange, || {
                    format!("integer {n} is past Avro's 64-bit long; written as a double")
                });
                d
            }
            Value::Decimal(text) => {
                let d = text.parse::<f64>().unwrap_or(f64::NAN);
                self.note(NoteKind::DecimalRounded, || {
                    format!("decimal {text} rounded to a double")
                });
                d
            }
            other => return Err(self.mismatch(other, schema)),
        };
        self.out.extend_from_slice(&d.to_le_bytes());
        self.leaf(
            Kind::Float(crate::model::FloatWidth::F64),
            place,
            start,
            start,
        );
        Ok(())
    }

    /// `bytes` (and the logical types over it): bytes, an extension's or raw field's data, or
    /// text as its UTF-8, after a zigzag length.
    fn write_bytes(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        place: Place,
        start: usize,
    ) -> Result<(), EncodeError> {
        let data: &[u8] = match value {
            Value::Bytes(b) => b,
            Value::Ext(t, b) => {
                let t = *t;
                self.note(NoteKind::ExtDropped, || {
                    format!("MessagePack extension type {t}: only its data is written")
                });
                b
            }
            Value::Raw(raw) => {
                let message = crate::codec::raw_field_note(raw);
                self.note(NoteKind::RawField, || message);
                &raw.data
            }
            Value::Text(t) => {
                self.note(NoteKind::TypeForced, || {
                    "text written as its UTF-8 bytes: the schema says bytes".into()
                });
                t.as_bytes()
            }
            other => return Err(self.mismatch(other, schema)),
        };
        let data = data.to_vec();
        put_long(&mut self.out, data.len() as i64);
        let header_end = self.out.len();
        self.out.extend_from_slice(&data);
        self.leaf(Kind::Bytes, place, start, header_end);
        Ok(())
    }

    /// A `string`: text, a timestamp as RFC 3339, or bytes that are UTF-8, after a zigzag
    /// length.
    fn write_string(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        place: Place,
        start: usize,
    ) -> Result<(), EncodeError> {
        let text: String = match value {
            Value::Text(t) => t.to_string(),
            Value::Timestamp(t) => {
                self.note(NoteKind::TimestampAsText, || {
                    "timestamp written as RFC 3339 text: the schema says string".into()
                });
                t.to_rfc3339()
            }
            Value::Bytes(b) => match std::str::from_utf8(b) {
                Ok(t) => {
                    self.note(NoteKind::TypeForced, || {
                        "bytes written as a string: the schema says string".into()
                    });
                    t.to_string()
                }
                Err(_) => {
                    return Err(
                        self.error("bytes that are not UTF-8 cannot be an Avro string".into())
                    )
                }
            },
            other => return Err(self.mismatch(other, schema)),
        };
        put_long(&mut self.out, text.len() as i64);
        let header_end = self.out.len();
        self.out.extend_from_slice(text.as_bytes());
        self.leaf(Kind::Text, place, start, header_end);
        Ok(())
    }

    /// A `fixed` (and the logical types over it): bytes of exactly its size, as they are.
    fn write_fixed(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        f: &FixedSchema,
        place: Place,
        start: usize,
    ) -> Result<(), EncodeError> {
        match value {
            Value::Bytes(b) if b.len() == f.size => {
                self.out.extend_from_slice(b);
                self.leaf(Kind::Bytes, place, start, start);
                Ok(())
            }
            Value::Bytes(b) => Err(self.error(format!(
                "{} bytes do not fit fixed {} of {} bytes",
                b.len(),
                f.name.name(),
                f.size
            ))),
            other => Err(self.mismatch(other, schema)),
        }
    }

    /// An `enum`: text that is one of its symbols, as the symbol's index.
    fn write_enum(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        e: &EnumSchema,
        place: Place,
        start: usize,
    ) -> Result<(), EncodeError> {
        let Value::Text(symbol) = value else {
            return Err(self.mismatch(value, schema));
        };
        let index = match e.symbols.iter().position(|s| s == symbol.as_str()) {
            Some(i) => i,
            None => {
                return Err(self.error(format!(
                    "{:?} is not a symbol of enum {}",
                    symbol.as_str(),
                    e.name.name()
                )))
            }
        };
        put_long(&mut self.out, index as i64);
        self.leaf(Kind::Text, place, start, start);
        Ok(())
    }

    /// A union: the index of the branch chosen for the value, then the value by that branch;
    /// the node starts at the index.
    fn write_union(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        u: &'s UnionSchema,
        place: Place,
        start: usize,
    ) -> Result<(), EncodeError> {
        let Some(index) = self.branch(value, u.variants()) else {
            return Err(self.error(format!(
                "{} fits no branch of the union {}",
                value.summary(40),
                describe(schema)
            )));
        };
        put_long(&mut self.out, index as i64);
        let inner = Place {
            start: Some(place.start.unwrap_or(start)),
            ..place
        };
        self.write(value, &u.variants()[index], inner)
    }

    /// A record: each field in the schema's order from the map's entry of that name (the
    /// first, if it repeats) or its default; entries with no field are noted, not written.
    fn write_record(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        r: &'s RecordSchema,
        place: Place,
        start: usize,
    ) -> Result<(), EncodeError> {
        let Value::Map(entries) = value else {
            return Err(self.mismatch(value, schema));
        };
        let node_start = place.start.unwrap_or(start);
        self.builder
            .open(Kind::Map, place.segment, place.key, node_start, start);
        for field in &r.fields {
            let mut found = entries
                .iter()
                .filter(|(k, _)| matches!(k, Value::Text(t) if t.as_str() == field.name));
            let entry = found.next();
            if found.next().is_some() {
                let name = field.name.clone();
                self.note(NoteKind::DuplicateKey, || {
                    format!("key {name:?} repeats; the first entry is written")
                });
            }
            let segment = self.builder.key(&field.name);
            self.path.push(PathSegment::Key(field.name.clone()));
            let child = Place {
                segment,
                key: None,
                start: None,
            };
            let result = match entry {
                Some((_, v)) => self.write(v, &field.schema, child),
                None => self.missing(field, child),
            };
            self.path.pop();
            result?;
        }
        for (k, _) in entries {
            let known = matches!(k, Value::Text(t) if r.lookup.contains_key(t.as_str()));
            if !known {
                let key = k.summary(40);
                self.path.push(PathSegment::Key(key.clone()));
                let record = r.name.name().to_string();
                self.note(NoteKind::FieldDropped, || {
                    format!("record {record} has no field {key}; it is not written")
                });
                self.path.pop();
            }
        }
        self.builder.close(self.out.len(), self.out.len());
        Ok(())
    }

    /// An array: one block of all the items (none for an empty array), then the closing 0.
    fn write_array(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        a: &'s ArraySchema,
        place: Place,
        start: usize,
    ) -> Result<(), EncodeError> {
        let Value::Array(items) = value else {
            return Err(self.mismatch(value, schema));
        };
        let node_start = place.start.unwrap_or(start);
        if !items.is_empty() {
            put_long(&mut self.out, items.len() as i64);
        }
        let header_end = self.out.len();
        self.builder.open(
            Kind::Array,
            place.segment,
            place.key,
            node_start,
            header_end,
        );
        for (i, item) in items.iter().enumerate() {
            self.path.push(PathSegment::Index(i));
            let child = Place {
                segment: Segment::Index(i as u32),
                key: None,
                start: None,
            };
            let result = self.write(item, &a.items, child);
            self.path.pop();
            result?;
        }
        let payload_end = self.out.len();
        self.out.push(0);
        self.builder.close(payload_end, self.out.len());
        Ok(())
    }

    /// A map: one block of all the entries (none for an empty map), keys as strings (others
    /// written as text, noted), then the closing 0.
    fn write_map(
        &mut self,
        value: &Value,
        schema: &'s RawSchema,
        m: &'s MapSchema,
        place: Place,
        start: usize,
    ) -> Result<(), EncodeError> {
        let Value::Map(entries) = value else {
            return Err(self.mismatch(value, schema));
        };
        let node_start = place.start.unwrap_or(start);
        if !entries.is_empty() {
            put_long(&mut self.out, entries.len() as i64);
        }
        let header_end = self.out.len();
        self.builder
            .open(Kind::Map, place.segment, place.key, node_start, header_end);
        for (k, v) in entries {
            let key = match k {
                Value::Text(t) => t.to_string(),
                other => {
                    let text = key_text(other);
                    let summary = other.summary(30);
                    self.note(NoteKind::NonTextKey, || {
                        format!("Avro map keys are strings: key {summary} written as {text:?}")
                    });
                    text
                }
            };
            let key_start = self.out.len();
            put_long(&mut self.out, key.len() as i64);
            self.out.extend_from_slice(key.as_bytes());
            let segment = self.builder.key(&key);
            self.path.push(PathSegment::Key(key));
            let child = Place {
                segment,
                key: Some(Span::new(key_start, self.out.len())),
                start: None,
            };
            let result = self.write(v, &m.types, child);
            self.path.pop();
            result?;
        }
        let payload_end = self.out.len();
        self.out.push(0);
        self.builder.close(payload_end, self.out.len());
        Ok(())
    }

    /// A record field the value has no entry for: its default, or null for a union that
    /// starts with null; else an error.
    fn missing(
        &mut self,
        field: &'s apache_avro::schema::RecordField,
        place: Place,
    ) -> Result<(), EncodeError> {
        let name = field.name.clone();
        if let Some(default) = &field.default {
            let value = default_value(default, self.schema, &field.schema);
            self.note(NoteKind::FieldMissing, || {
                format!("field {name} is missing; its default {default} is written")
            });
            // A union's default is for its first branch.
            if let Some(RawSchema::Union(u)) = self.schema.resolve(&field.schema) {
                let start = self.out.len();
                put_long(&mut self.out, 0);
                let inner = Place {
                    start: Some(start),
                    ..place
                };
                return self.write(&value, &u.variants()[0], inner);
            }
            return self.write(&value, &field.schema, place);
        }
        if let Some(RawSchema::Union(u)) = self.schema.resolve(&field.schema) {
            if let Some(i) = u
                .variants()
                .iter()
                .position(|v| matches!(v, RawSchema::Null))
            {
                self.note(NoteKind::FieldMissing, || {
                    format!("field {name} is missing; null is written")
                });
                let start = self.out.len();
                put_long(&mut self.out, i as i64);
                let inner = Place {
                    start: Some(start),
                    ..place
                };
                return self.write(&Value::Null, &u.variants()[i], inner);
            }
        }
        Err(self.error(format!(
            "field {name} is missing and the schema gives it no default"
        )))
    }

    /// The union branch for `value`: the first of its own type, else the first that holds it.
    fn branch(&self, value: &Value, variants: &'s [RawSchema]) -> Option<usize> {
        let value = match value {
            Value::Tag(_, inner) => inner,
            v => v,
        };
        let resolved: Vec<&RawSchema> = variants
            .iter()
            .map(|v| self.schema.resolve(v).unwrap_or(v))
            .collect();
        let exact = |s: &RawSchema| -> bool {
            match (value, s) {
                (Value::Null | Value::Undefined | Value::Simple(_), RawSchema::Null) => true,
                (Value::Bool(_), RawSchema::Boolean) => true,
                (Value::Int(n), RawSchema::Int) => i32::try_from(*n).is_ok(),
                (Value::Int(n), RawSchema::Long) => i64::try_from(*n).is_ok(),
                (Value::Float(f), RawSchema::Double) => f.width == FloatWidth::F64,
                (Value::Float(f), RawSchema::Float) => f.width != FloatWidth::F64,
                (Value::Text(_), RawSchema::String | RawSchema::Uuid(UuidSchema::String)) => true,
                (Value::Text(t), RawSchema::Enum(e)) => e.symbols.iter().any(|s| s == t.as_str()),
                (Value::Bytes(_) | Value::Ext(..) | Value::Raw(_), RawSchema::Bytes) => true,
                (Value::Bytes(b), RawSchema::Fixed(f)) => b.len() == f.size,
                (Value::Array(_), RawSchema::Array(_)) => true,
                (Value::Map(entries), RawSchema::Record(r)) => entries
                    .iter()
                    .all(|(k, _)| matches!(k, Value::Text(t) if r.lookup.contains_key(t.as_str()))),
                (Value::Map(_), RawSchema::Map(_)) => true,
                (
                    Value::Timestamp(_),
                    RawSchema::TimestampMicros
                    | RawSchema::TimestampMillis
                    | RawSchema::TimestampNanos,
                ) => true,
                _ => false,
            }
        };
        let loose = |s: &RawSchema| -> bool {
            matches!(
                (value, s),
                (
                    Value::Int(_),
                    RawSchema::Long | RawSchema::Float | RawSchema::Double
                ) | (Value::BigInt(_) | Value::Decimal(_), RawSchema::Double)
                    | (Value::Float(_), RawSchema::Double | RawSchema::Float)
                    | (Value::Timestamp(_), RawSchema::Long | RawSchema::String)
                    | (Value::Map(_), RawSchema::Record(_))
                    | (Value::Text(_), RawSchema::Bytes)
            )
        };
        resolved
            .iter()
            .position(|s| exact(s))
            .or_else(|| resolved.iter().position(|s| loose(s)))
    }
}

/// A map key that is not text, as the text Avro keeps: numbers and booleans as written, other
/// keys by their one-line summary.
fn key_text(key: &Value) -> String {
    match key {
        Value::Int(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Float(f) => crate::model::format_float(f.value),
        other => other.summary(60),
    }
}

/// A schema in words for messages: `long`, `record Order`, `union [null, string]`.
pub(super) fn describe(schema: &RawSchema) -> String {
    match schema {
        RawSchema::Record(r) => format!("record {}", r.name.name()),
        RawSchema::Enum(e) => format!("enum {}", e.name.name()),
        RawSchema::Fixed(f) => format!("fixed {} ({} bytes)", f.name.name(), f.size),
        RawSchema::Union(u) => {
            let branches: Vec<String> = u.variants().iter().map(describe).collect();
            format!("union [{}]", branches.join(", "))
        }
        RawSchema::Array(a) => format!("array of {}", describe(&a.items)),
        RawSchema::Map(m) => format!("map of {}", describe(&m.types)),
        RawSchema::Ref { name } => name.name().to_string(),
        RawSchema::TimestampMillis => "timestamp-millis long".into(),
        RawSchema::TimestampMicros => "timestamp-micros long".into(),
        RawSchema::TimestampNanos => "timestamp-nanos long".into(),
        other => type_name(other).to_string(),
    }
}

/// A field default (JSON, as the schema writes it) as the value it stands for under `schema`:
/// bytes and fixed defaults are strings of code points 0–255.
pub(super) fn default_value(
    json: &serde_json::Value,
    schema: &AvroSchema,
    field: &RawSchema,
) -> Value {
    let resolved = schema.resolve(field).unwrap_or(field);
    let target = match resolved {
        RawSchema::Union(u) => u
            .variants()
            .first()
            .map(|v| schema.resolve(v).unwrap_or(v))
            .unwrap_or(resolved),
        other => other,
    };
    match (json, target) {
        (serde_json::Value::String(s), RawSchema::Bytes | RawSchema::Fixed(_)) => {
            Value::Bytes(s.chars().map(|c| c as u32 as u8).collect())
        }
        (serde_json::Value::Number(n), RawSchema::Float | RawSchema::Double) => {
            let d = n.as_f64().unwrap_or(f64::NAN);
            if matches!(target, RawSchema::Float) {
                Value::Float(Float::f32(d as f32))
            } else {
                Value::Float(Float::f64(d))
            }
        }
        (serde_json::Value::Array(items), RawSchema::Array(a)) => Value::Array(
            items
                .iter()
                .map(|i| default_value(i, schema, &a.items))
                .collect(),
        ),
        (serde_json::Value::Object(map), RawSchema::Map(m)) => Value::Map(
            map.iter()
                .map(|(k, v)| (Value::text(k.as_str()), default_value(v, schema, &m.types)))
                .collect(),
        ),
        (serde_json::Value::Object(map), RawSchema::Record(r)) => Value::Map(
            r.fields
                .iter()
                .filter_map(|f| {
                    map.get(&f.name).map(|v| {
                        (
                            Value::text(f.name.as_str()),
                            default_value(v, schema, &f.schema),
                        )
                    })
                })
                .collect(),
        ),
        (serde_json::Value::Null, _) => Value::Null,
        (serde_json::Value::Bool(b), _) => Value::Bool(*b),
        (serde_json::Value::Number(n), _) => match n.as_i64() {
            Some(i) => Value::Int(i128::from(i)),
            None => Value::Float(Float::f64(n.as_f64().unwrap_or(f64::NAN))),
        },
        (serde_json::Value::String(s), _) => Value::text(s.as_str()),
        (serde_json::Value::Array(items), _) => Value::Array(
            items
                .iter()
                .map(|i| default_value(i, schema, field))
                .collect(),
        ),
        (serde_json::Value::Object(map), _) => Value::Map(
            map.iter()
                .map(|(k, v)| (Value::text(k.as_str()), default_value(v, schema, field)))
                .collect(),
        ),
    }
}
