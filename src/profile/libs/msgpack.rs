//! MessagePack: rmp-serde (serde over `rmpv::Value`, maps with field names) and rmpv's own codec.

use std::hint::black_box;

use super::{timed, Codec, Held, Library, PrepareError, RoundTrip, Warmed};
use crate::profile::bench::Bencher;

/// rmpv's bytes of a value: one way of writing each value, other bytes for another value.
pub(super) fn write_rmpv(value: &rmpv::Value) -> Result<Vec<u8>, PrepareError> {
    let mut out = Vec::new();
    Rmpv::write(value, &mut out).map_err(|e| PrepareError::failed(Library::Rmpv, e))?;
    Ok(out)
}

/// rmpv's `write_value` / `read_value`.
pub(super) struct Rmpv;

impl Codec for Rmpv {
    type Value = rmpv::Value;
    const LIBRARY: Library = Library::Rmpv;
    fn read(bytes: &[u8]) -> Result<rmpv::Value, String> {
        let mut rd = bytes;
        rmpv::decode::read_value(&mut rd).map_err(|e| e.to_string())
    }
    fn write(value: &rmpv::Value, out: &mut Vec<u8>) -> Result<(), String> {
        rmpv::encode::write_value(out, value).map_err(|e| e.to_string())
    }
}

/// rmp-serde: `to_vec_named`-style serialisation of an `rmpv::Value` through serde.
pub struct RmpSerde {
    value: Held<rmpv::Value>,
    bytes: Vec<u8>,
    encoded_in: f64,
    round_trip: RoundTrip,
}

impl RmpSerde {
    pub fn new(msgpack: &[u8]) -> Result<RmpSerde, PrepareError> {
        let value = Rmpv::read(msgpack).map_err(|e| PrepareError::failed(Library::Rmpv, e))?;
        let (bytes, encoded_in) = timed(|| rmp_serde::to_vec_named(&value));
        let bytes = bytes.map_err(|e| PrepareError::failed(Library::RmpSerde, e))?;
        // Always checked, through rmpv's writer: rmp-serde's serde path is what may not give
        // the value back (an ext written as an array would read back as one).
        let round_trip = RoundTrip::always(|| write_rmpv(&value))?;
        Ok(RmpSerde {
            value: Held::new(value),
            bytes,
            encoded_in,
            round_trip,
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
        b.iter_checked(
            |back| self.round_trip.check(Library::RmpSerde, back, write_rmpv),
            |_| rmp_serde::from_slice::<rmpv::Value>(black_box(&self.bytes)),
        );
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
