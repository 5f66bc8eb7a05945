//! MessagePack: rmp-serde (serde over `rmpv::Value`, maps with field names) and rmpv's own codec.

use std::hint::black_box;

use super::{mismatch, timed, Held, Library, Warmed};
use crate::profile::bench::Bencher;

fn read_rmpv(bytes: &[u8]) -> Result<rmpv::Value, String> {
    let mut rd = bytes;
    rmpv::decode::read_value(&mut rd).map_err(|e| format!("rmpv: {e}"))
}

/// rmp-serde: `to_vec_named`-style serialisation of an `rmpv::Value` through serde.
pub struct RmpSerde {
    value: Held<rmpv::Value>,
    bytes: Vec<u8>,
    encoded_in: f64,
}

impl RmpSerde {
    pub fn new(msgpack: &[u8]) -> Result<RmpSerde, String> {
        let value = read_rmpv(msgpack)?;
        let (bytes, encoded_in) = timed(|| rmp_serde::to_vec_named(&value));
        let bytes = bytes.map_err(|e| format!("rmp-serde: {e}"))?;
        let back: rmpv::Value =
            rmp_serde::from_slice(&bytes).map_err(|e| format!("rmp-serde: {e}"))?;
        if back != value {
            return Err(mismatch(Library::RmpSerde));
        }
        Ok(RmpSerde {
            value: Held::new(value),
            bytes,
            encoded_in,
        })
    }
}

impl super::Adapter for RmpSerde {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        self.value.with(b, |b, value| {
            b.iter(|buf| {
                buf.clear();
                let mut ser = rmp_serde::Serializer::new(&mut *buf).with_struct_map();
                serde::Serialize::serialize(black_box(value), &mut ser).is_ok()
            })
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter(|_| rmp_serde::from_slice::<rmpv::Value>(black_box(&self.bytes)));
    }
    fn release_value(&self) {
        self.value.release();
    }
    /// The value was read with rmpv, not with the timed rmp-serde reader: no decode warm-up.
    fn warmed(&self) -> Warmed {
        Warmed {
            encode: Some(self.encoded_in),
            decode: None,
        }
    }
}

/// rmpv's `write_value` / `read_value`.
pub struct Rmpv {
    value: Held<rmpv::Value>,
    bytes: Vec<u8>,
    warmed: Warmed,
}

impl Rmpv {
    pub fn new(msgpack: &[u8]) -> Result<Rmpv, String> {
        let (value, decode) = timed(|| read_rmpv(msgpack));
        let value = value?;
        let mut bytes = Vec::new();
        let (written, encode) = timed(|| rmpv::encode::write_value(&mut bytes, &value));
        written.map_err(|e| format!("rmpv: {e}"))?;
        if bytes != msgpack && read_rmpv(&bytes)? != value {
            return Err(mismatch(Library::Rmpv));
        }
        let warmed = Warmed {
            encode: Some(encode),
            decode: (bytes == msgpack).then_some(decode),
        };
        Ok(Rmpv {
            value: Held::new(value),
            bytes,
            warmed,
        })
    }
}

impl super::Adapter for Rmpv {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        self.value.with(b, |b, value| {
            b.iter(|buf| {
                buf.clear();
                rmpv::encode::write_value(&mut *buf, black_box(value)).is_ok()
            })
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter(|_| {
            let mut rd: &[u8] = black_box(&self.bytes);
            rmpv::decode::read_value(&mut rd)
        });
    }
    fn release_value(&self) {
        self.value.release();
    }
    fn warmed(&self) -> Warmed {
        self.warmed
    }
}
