//! MessagePack: rmp-serde (serde over `rmpv::Value`, maps with field names) and rmpv's own codec.

use std::hint::black_box;

use super::{timed, Held, Library, RoundTrip, Warmed};
use crate::profile::bench::Bencher;

/// rmpv's bytes of a value: one way of writing each value, other bytes for another value.
pub(super) fn write_rmpv(value: &rmpv::Value) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, value).map_err(|e| format!("rmpv: {e}"))?;
    Ok(out)
}

fn read_rmpv(bytes: &[u8]) -> Result<rmpv::Value, String> {
    let mut rd = bytes;
    rmpv::decode::read_value(&mut rd).map_err(|e| format!("rmpv: {e}"))
}

/// rmp-serde: `to_vec_named`-style serialisation of an `rmpv::Value` through serde.
pub struct RmpSerde {
    value: Held<rmpv::Value>,
    bytes: Vec<u8>,
    encoded_in: f64,
    round_trip: RoundTrip,
}

impl RmpSerde {
    pub fn new(msgpack: &[u8]) -> Result<RmpSerde, String> {
        let value = read_rmpv(msgpack)?;
        let (bytes, encoded_in) = timed(|| rmp_serde::to_vec_named(&value));
        let bytes = bytes.map_err(|e| format!("rmp-serde: {e}"))?;
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

/// rmpv's `write_value` / `read_value`.
pub struct Rmpv {
    value: Held<rmpv::Value>,
    bytes: Vec<u8>,
    warmed: Warmed,
    round_trip: RoundTrip,
}

impl Rmpv {
    pub fn new(msgpack: &[u8]) -> Result<Rmpv, String> {
        let (value, decode) = timed(|| read_rmpv(msgpack));
        let value = value?;
        let mut bytes = Vec::new();
        let (written, encode) = timed(|| rmpv::encode::write_value(&mut bytes, &value));
        written.map_err(|e| format!("rmpv: {e}"))?;
        let round_trip = RoundTrip::new(&bytes, msgpack, || Ok(bytes.clone()))?;
        let warmed = Warmed {
            encode: Some(encode),
            decode: (bytes == msgpack).then_some(decode),
        };
        Ok(Rmpv {
            value: Held::new(value),
            bytes,
            warmed,
            round_trip,
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
        b.iter_checked(
            |back| self.round_trip.check(Library::Rmpv, back, write_rmpv),
            |_| {
                let mut rd: &[u8] = black_box(&self.bytes);
                rmpv::decode::read_value(&mut rd)
            },
        );
    }
    fn release_value(&self) {
        self.value.release();
    }
    fn warmed(&self) -> Warmed {
        self.warmed
    }
}
