//! Apache Avro: binary datums read and written by a schema, with spans.
//!
//! Avro bytes carry no types, names or lengths of records: without the writer's schema they
//! cannot be told from noise, so wirelens reads Avro only with a schema — the user's `.avsc`,
//! a container file's header, or one found by a framing's fingerprint or registry id — and says
//! so instead of guessing. Schemas are parsed by the Apache `apache-avro` crate
//! ([`AvroSchema`]); the decoder ([`decode`]) and encoder ([`encode`]) are wirelens' own, since
//! they keep the bytes of every node. Without a schema, [`encode`] writes with one inferred
//! from the value ([`infer::infer`]).

pub mod compat;
pub mod container;
mod decode;
mod encode;
pub mod framing;
pub mod infer;
pub mod registry;
pub mod resolve;
pub mod resolved;
mod schema;

use infer::InferError;
pub use schema::{AvroSchema, AvroSchemaError, RawSchema};

use crate::codec::{DecodeError, DecodeOptions, Document, EncodeError, Encoded, ErrorKind};
use crate::codec::{EncodeOptions, Format};
use crate::model::{Path, Value};

/// What a framing around Avro bytes said about them: a container file's header gives the
/// writer's schema and each block's datum count; single-object encoding names the schema by its
/// fingerprint, for the face to find among the schemas the user loaded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Framed {
    /// The writer's schema, when the framing carries it (a container's header).
    pub schema: Option<AvroSchema>,
    /// How many datums the bytes hold back to back (a container block); `None`: one.
    pub items: Option<u64>,
    /// The CRC-64-AVRO fingerprint of the writer's schema, when the framing names it so.
    pub fingerprint: Option<u64>,
}

/// Stack for decoding a recursive schema's data, per level of nesting.
const STACK_PER_LEVEL: usize = 16 << 10;

/// Decodes one Avro datum filling `bytes`, by the schema in `options.avro`.
///
/// Errors: [`ErrorKind::Invalid`] without a schema (Avro cannot be read without one), for an
/// out-of-range union or enum index, a negative length, text that is not UTF-8;
/// [`ErrorKind::Eof`] when the bytes end inside the datum; [`ErrorKind::TrailingData`] when
/// bytes follow it (the partial document is the complete datum); [`ErrorKind::Limit`] past the
/// nesting or node limits.
pub fn decode(bytes: &[u8], options: &DecodeOptions) -> Result<Document, DecodeError> {
    let Some(schema) = &options.avro else {
        return Err(DecodeError {
            format: Format::Avro,
            kind: ErrorKind::Invalid,
            offset: 0,
            path: Path::root(),
            message: "Avro needs the writer's schema: its bytes carry no types, so without one \
                      they cannot be told from noise (give an .avsc: --avro-schema FILE)"
                .into(),
            partial: None,
        });
    };
    on_deep_stack(schema, &options.limits, || {
        let written = match options.avro_items {
            Some(count) => decode::decode_run(bytes, schema, count, &options.limits),
            None => decode::decode_datum(bytes, schema, &options.limits),
        };
        match &options.avro_reader {
            Some(reader) => read_by(
                written?,
                bytes,
                schema,
                reader,
                options.avro_items.is_some(),
            ),
            None => written,
        }
    })
}

/// The writer's document as the `reader` schema reads it ([`resolved::read_with`]); a reader
/// that cannot read what the writer wrote is an error naming the field and the rule, with the
/// writer's document as the partial one.
fn read_by(
    written: Document,
    bytes: &[u8],
    writer: &AvroSchema,
    reader: &AvroSchema,
    run: bool,
) -> Result<Document, DecodeError> {
    let fail = |message: String, written: Document| DecodeError {
        format: Format::Avro,
        kind: ErrorKind::Invalid,
        offset: 0,
        path: Path::root(),
        message,
        partial: Some(Box::new(written)),
    };
    let plan = match resolve::plan(writer.root(), reader.root()) {
        Ok(p) => p,
        Err(e) => {
            return Err(fail(
                format!(
                    "the reader's schema {} cannot read what {} wrote: {e}",
                    reader.title(),
                    writer.title()
                ),
                written,
            ))
        }
    };
    resolved::read_with(&written, bytes, &plan, reader, run)
        .map_err(|e| fail(e.to_string(), written))
}

/// Runs `work` here, or for a recursive schema (whose data nests as deep as the depth limit
/// lets it) on a thread with a stack sized for that depth. A schema that is not recursive nests
/// its data no deeper than its own text, which JSON's parser already bounded.
fn on_deep_stack(
    schema: &AvroSchema,
    limits: &crate::limits::Limits,
    work: impl Fn() -> Result<Document, DecodeError> + Sync,
) -> Result<Document, DecodeError> {
    if !schema.is_recursive() {
        return work();
    }
    let stack = (1usize << 20).saturating_add(limits.depth().saturating_mul(STACK_PER_LEVEL));
    crate::codec::on_stack("wirelens-avro", stack, work)
}

/// Decodes `count` datums of `options.avro` one after another, filling `bytes` (a container
/// file's block once decompressed), as one document whose root is the array of them: [`decode`]
/// with [`DecodeOptions::avro_items`] set (a reader's schema applies as there).
pub fn decode_run(
    bytes: &[u8],
    count: u64,
    options: &DecodeOptions,
) -> Result<Document, DecodeError> {
    decode(
        bytes,
        &DecodeOptions {
            avro_items: Some(count),
            ..options.clone()
        },
    )
}

/// Encodes `value` as one Avro datum of `options.avro`, or of a schema inferred from the value
/// (with a [`crate::codec::NoteKind::SchemaInferred`] note first).
pub fn encode(value: &Value, options: &EncodeOptions) -> Result<Encoded, EncodeError> {
    match &options.avro {
        Some(schema) => encode::encode(value, schema),
        None => {
            let schema = infer::infer(value, &infer_options(options)).map_err(|e| EncodeError {
                format: Format::Avro,
                path: Path::root(),
                message: e.to_string(),
            })?;
            let mut encoded = encode::encode(value, &schema)?;
            encoded.notes.insert(0, infer::inferred_note(&schema));
            Ok(encoded)
        }
    }
}

/// The schema [`encode`] writes `value` with: `options.avro`, or the inferred one.
pub fn schema_for(value: &Value, options: &EncodeOptions) -> Result<AvroSchema, InferError> {
    match &options.avro {
        Some(schema) => Ok(schema.clone()),
        None => infer::infer(value, &infer_options(options)),
    }
}

/// How [`encode`] infers a schema under `options`.
fn infer_options(options: &EncodeOptions) -> infer::InferOptions {
    infer::InferOptions {
        logical: options.avro_logical,
        ..infer::InferOptions::default()
    }
}

#[cfg(test)]
mod tests;
