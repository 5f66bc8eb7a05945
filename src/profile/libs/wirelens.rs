//! wirelens' own span-tracking codecs, on [`Value`].

use std::hint::black_box;
use std::sync::Arc;

use super::{timed, PrepareError, Source, Warmed};
use crate::codec::{self, DecodeOptions, EncodeOptions, Format};
use crate::model::Value;
use crate::profile::bench::Bencher;

/// wirelens on [`Value`]: encode builds bytes, span tree and notes; decode builds a document.
pub struct Adapter {
    format: Format,
    value: Arc<Value>,
    bytes: Vec<u8>,
    encode: EncodeOptions,
    decode: DecodeOptions,
    encoded_in: f64,
}

impl Adapter {
    pub fn new(format: Format, source: Source<'_>) -> Result<Adapter, PrepareError> {
        // Avro is timed with the schema settled once (the one the caller's bytes were written
        // with, else the one inferred from the value), as a program that writes Avro has it.
        let avro = match (format, source.avro) {
            (Format::Avro, Some(schema)) => Some(schema.clone()),
            (Format::Avro, None) => Some(
                codec::avro::schema_for(source.value, &EncodeOptions::default())
                    .map_err(PrepareError::AvroSchema)?,
            ),
            _ => None,
        };
        let encode = EncodeOptions {
            message: source.message.cloned(),
            avro: avro.clone(),
            ..EncodeOptions::default()
        };
        let decode = DecodeOptions {
            message: source.message.cloned(),
            avro,
            ..DecodeOptions::default()
        };
        // For protobuf the caller passes the value as its message type expects it (wrapped for
        // an inferred schema).
        let value = Arc::clone(source.value);
        let (encoded, encoded_in) = timed(|| codec::encode(&value, format, &encode));
        let bytes = encoded?.bytes;
        if bytes != source.bytes {
            return Err(PrepareError::NotRepeatable);
        }
        // That the bytes decode is checked on the decode's first call (it is not timed twice).
        Ok(Adapter {
            encoded_in,
            format,
            value,
            bytes,
            encode,
            decode,
        })
    }
}

impl super::Adapter for Adapter {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        b.iter(|_| codec::encode(black_box(&*self.value), self.format, &self.encode));
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter_checked(
            |d: &Result<_, _>| d.as_ref().map(|_| ()).map_err(|e| format!("wirelens: {e}")),
            |_| codec::decode(black_box(&self.bytes), self.format, &self.decode),
        );
    }
    fn warmed(&self) -> Warmed {
        Warmed {
            encode: Some(self.encoded_in),
            decode: None,
        }
    }
}
