//! wirelens' own span-tracking codecs, on [`Value`].

use std::hint::black_box;

use super::Source;
use crate::codec::{self, DecodeOptions, EncodeOptions, Format};
use crate::model::Value;
use crate::profile::bench::Bencher;

/// wirelens on [`Value`]: encode builds bytes, span tree and notes; decode builds a document.
pub struct Adapter {
    format: Format,
    value: Value,
    bytes: Vec<u8>,
    encode: EncodeOptions,
    decode: DecodeOptions,
}

impl Adapter {
    pub fn new(format: Format, source: Source<'_>) -> Result<Adapter, String> {
        let encode = EncodeOptions {
            message: source.message.cloned(),
            ..EncodeOptions::default()
        };
        let decode = DecodeOptions {
            message: source.message.cloned(),
            ..DecodeOptions::default()
        };
        // For protobuf the caller passes the value as its message type expects it (wrapped for
        // an inferred schema).
        let value = source.value.clone();
        let encoded =
            codec::encode(&value, format, &encode).map_err(|e| format!("wirelens: {e}"))?;
        if encoded.bytes != source.bytes {
            return Err("wirelens: encoding the value twice gave different bytes".into());
        }
        codec::decode(&encoded.bytes, format, &decode).map_err(|e| format!("wirelens: {e}"))?;
        Ok(Adapter {
            format,
            value,
            bytes: encoded.bytes,
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
        b.iter(|_| codec::encode(black_box(&self.value), self.format, &self.encode));
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter(|_| codec::decode(black_box(&self.bytes), self.format, &self.decode));
    }
}
