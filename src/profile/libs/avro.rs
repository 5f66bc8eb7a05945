//! Avro: the Apache `apache-avro` crate on its `types::Value`, by the schema wirelens' Avro bytes
//! were written with.
//!
//! The crate's datum writer and reader (`GenericDatumWriter`, `GenericDatumReader`, what 0.22
//! recommends over the deprecated `to_avro_datum` and `from_avro_datum`) are built once per
//! timed routine, outside the clock, as a service that writes Avro keeps them: a call is one
//! datum written or read. The writer checks the value against the schema before it writes, as
//! it does by default.
//!
//! The crate holds an Avro map in a `HashMap`, so it writes a map's entries in an order of its
//! own, new for each map it decodes: its bytes of a payload with a map of two or more entries
//! are wirelens' bytes in another order (the same size, the same data), and its round trip is
//! checked on the values (maps compared by key, [`canonical`]), not on its bytes.

use std::hint::black_box;

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value as AvroValue;
use apache_avro::writer::datum::GenericDatumWriter;

use super::{timed, Held, Library, PrepareError, RoundTrip, Warmed};
use crate::codec::avro::AvroSchema;
use crate::profile::bench::Bencher;

/// What the crate said, as the profiler reports it.
fn failed(what: &str, e: apache_avro::Error) -> PrepareError {
    PrepareError::failed(Library::ApacheAvro, format!("{what}: {e}"))
}

/// The crate's datum writer by `schema`.
fn writer(schema: &AvroSchema) -> Result<GenericDatumWriter<'_>, PrepareError> {
    GenericDatumWriter::builder(schema.root())
        .build()
        .map_err(|e| failed("the schema", e))
}

/// The crate's datum reader by `schema`.
fn reader(schema: &AvroSchema) -> Result<GenericDatumReader<'_>, PrepareError> {
    GenericDatumReader::builder(schema.root())
        .build()
        .map_err(|e| failed("the schema", e))
}

/// Reads one datum filling `bytes`: bytes left after it are an error (the datum is all of them).
fn read_all(reader: &GenericDatumReader<'_>, bytes: &[u8]) -> Result<AvroValue, PrepareError> {
    let mut rest = bytes;
    let value = reader
        .read_value(&mut rest)
        .map_err(|e| failed("reading", e))?;
    if rest.is_empty() {
        Ok(value)
    } else {
        let ends = format!(
            "the datum ends at byte {} of {}",
            bytes.len() - rest.len(),
            bytes.len()
        );
        Err(PrepareError::failed(Library::ApacheAvro, ends))
    }
}

/// The crate's bytes of `value`.
fn write(writer: &GenericDatumWriter<'_>, value: &AvroValue) -> Result<Vec<u8>, PrepareError> {
    let mut out = Vec::new();
    writer
        .write_value_ref(&mut out, value)
        .map_err(|e| failed("writing", e))?;
    Ok(out)
}

/// Bytes that are equal for equal values and differ for others: the value's tree with each map's
/// entries in key order, its leaves as the crate debug-prints them (which tells every scalar,
/// logical type and NaN apart). What the round trip compares, since the crate's own bytes put a
/// map's entries in hash order.
fn canonical(value: &AvroValue) -> Vec<u8> {
    fn put(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    fn walk(value: &AvroValue, out: &mut Vec<u8>) {
        match value {
            AvroValue::Map(entries) => {
                out.push(b'M');
                let mut sorted: Vec<_> = entries.iter().collect();
                sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
                out.extend_from_slice(&(sorted.len() as u64).to_le_bytes());
                for (key, item) in sorted {
                    put(out, key.as_bytes());
                    walk(item, out);
                }
            }
            AvroValue::Array(items) => {
                out.push(b'A');
                out.extend_from_slice(&(items.len() as u64).to_le_bytes());
                for item in items {
                    walk(item, out);
                }
            }
            AvroValue::Record(fields) => {
                out.push(b'R');
                out.extend_from_slice(&(fields.len() as u64).to_le_bytes());
                for (name, item) in fields {
                    put(out, name.as_bytes());
                    walk(item, out);
                }
            }
            AvroValue::Union(branch, item) => {
                out.push(b'U');
                out.extend_from_slice(&branch.to_le_bytes());
                walk(item, out);
            }
            leaf => {
                out.push(b'S');
                put(out, format!("{leaf:?}").as_bytes());
            }
        }
    }
    let mut out = Vec::new();
    walk(value, &mut out);
    out
}

/// apache-avro on `apache_avro::types::Value`.
pub struct ApacheAvro {
    schema: AvroSchema,
    value: Held<AvroValue>,
    bytes: Vec<u8>,
    warmed: Warmed,
    round_trip: RoundTrip,
}

impl ApacheAvro {
    /// Reads `avro` (wirelens' datum) by `schema`, the one it was written with, and writes the
    /// value back with the crate.
    pub fn new(avro: &[u8], schema: &AvroSchema) -> Result<ApacheAvro, PrepareError> {
        let (value, decode) = {
            let reader = reader(schema)?;
            timed(|| read_all(&reader, avro))
        };
        let value = value?;
        let writer = writer(schema)?;
        let (bytes, encode) = timed(|| write(&writer, &value));
        let bytes = bytes?;
        let warmed = Warmed {
            encode: Some(encode),
            decode: (bytes == avro).then_some(decode),
        };
        let round_trip = RoundTrip::new(&bytes, avro, || Ok(canonical(&value)))?;
        drop(writer);
        Ok(ApacheAvro {
            schema: schema.clone(),
            value: Held::new(value),
            bytes,
            warmed,
            round_trip,
        })
    }
}

impl super::Adapter for ApacheAvro {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        let writer = match writer(&self.schema) {
            Ok(w) => w,
            Err(e) => return b.fail(e.to_string()),
        };
        self.value.with(b, |b, value| {
            b.iter_checked(
                |written: &Result<usize, apache_avro::Error>| {
                    written
                        .as_ref()
                        .map(|_| ())
                        .map_err(|e| format!("apache-avro: writing: {e}"))
                },
                |buf| {
                    buf.clear();
                    writer.write_value_ref(&mut *buf, black_box(value))
                },
            )
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        let reader = match reader(&self.schema) {
            Ok(r) => r,
            Err(e) => return b.fail(e.to_string()),
        };
        b.iter_checked(
            |back| {
                self.round_trip.check(Library::ApacheAvro, back, |v| {
                    Ok::<_, PrepareError>(canonical(v))
                })
            },
            |_| reader.read_value(&mut black_box(&self.bytes[..])),
        );
    }
    fn release_value(&self) {
        self.value.release();
    }
    fn warmed(&self) -> Warmed {
        self.warmed
    }
}
