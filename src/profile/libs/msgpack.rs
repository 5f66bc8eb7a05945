//! MessagePack: rmp-serde (serde over `rmpv::Value`, maps with field names) and rmpv's own codec.

use std::hint::black_box;

use super::{mismatch, Library};
use crate::profile::bench::Bencher;

fn read_rmpv(bytes: &[u8]) -> Result<rmpv::Value, String> {
    let mut rd = bytes;
    rmpv::decode::read_value(&mut rd).map_err(|e| format!("rmpv: {e}"))
}

/// rmp-serde: `to_vec_named`-style serialisation of an `rmpv::Value` through serde.
pub struct RmpSerde {
    value: rmpv::Value,
    bytes: Vec<u8>,
}

impl RmpSerde {
    pub fn new(msgpack: &[u8]) -> Result<RmpSerde, String> {
        let value = read_rmpv(msgpack)?;
        let bytes = rmp_serde::to_vec_named(&value).map_err(|e| format!("rmp-serde: {e}"))?;
        let back: rmpv::Value =
            rmp_serde::from_slice(&bytes).map_err(|e| format!("rmp-serde: {e}"))?;
        if back != value {
            return Err(mismatch(Library::RmpSerde));
        }
        Ok(RmpSerde { value, bytes })
    }
}

impl super::Adapter for RmpSerde {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        b.iter(|buf| {
            buf.clear();
            let mut ser = rmp_serde::Serializer::new(&mut *buf).with_struct_map();
            serde::Serialize::serialize(black_box(&self.value), &mut ser).is_ok()
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter(|_| rmp_serde::from_slice::<rmpv::Value>(black_box(&self.bytes)));
    }
}

/// rmpv's `write_value` / `read_value`.
pub struct Rmpv {
    value: rmpv::Value,
    bytes: Vec<u8>,
}

impl Rmpv {
    pub fn new(msgpack: &[u8]) -> Result<Rmpv, String> {
        let value = read_rmpv(msgpack)?;
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &value).map_err(|e| format!("rmpv: {e}"))?;
        if read_rmpv(&bytes)? != value {
            return Err(mismatch(Library::Rmpv));
        }
        Ok(Rmpv { value, bytes })
    }
}

impl super::Adapter for Rmpv {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        b.iter(|buf| {
            buf.clear();
            rmpv::encode::write_value(&mut *buf, black_box(&self.value)).is_ok()
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter(|_| {
            let mut rd: &[u8] = black_box(&self.bytes);
            rmpv::decode::read_value(&mut rd)
        });
    }
}
