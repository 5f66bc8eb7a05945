//! JSON: serde_json and sonic-rs, each on its own `Value`.

use std::hint::black_box;

use super::{timed, Held, Library, RoundTrip, Warmed};
use crate::profile::bench::Bencher;

/// serde_json on `serde_json::Value`.
pub struct SerdeJson {
    value: Held<serde_json::Value>,
    bytes: Vec<u8>,
    warmed: Warmed,
    round_trip: RoundTrip,
}

impl SerdeJson {
    pub fn new(json: &[u8]) -> Result<SerdeJson, String> {
        let (value, decode) = timed(|| serde_json::from_slice::<serde_json::Value>(json));
        let value = value.map_err(|e| format!("serde_json: {e}"))?;
        let (bytes, encode) = timed(|| serde_json::to_vec(&value));
        let bytes = bytes.map_err(|e| format!("serde_json: {e}"))?;
        let warmed = Warmed {
            encode: Some(encode),
            decode: (bytes == json).then_some(decode),
        };
        // serde_json writes each value its one way: its bytes are the value's canonical ones.
        let round_trip = RoundTrip::new(&bytes, json, || Ok(bytes.clone()))?;
        Ok(SerdeJson {
            value: Held::new(value),
            bytes,
            warmed,
            round_trip,
        })
    }
}

impl super::Adapter for SerdeJson {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        self.value.with(b, |b, value| {
            b.iter(|buf| {
                buf.clear();
                serde_json::to_writer(&mut *buf, black_box(value)).is_ok()
            })
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter_checked(
            |back| {
                self.round_trip.check(Library::SerdeJson, back, |v| {
                    serde_json::to_vec(v).map_err(|e| e.to_string())
                })
            },
            |_| serde_json::from_slice::<serde_json::Value>(black_box(&self.bytes)),
        );
    }
    fn release_value(&self) {
        self.value.release();
    }
    fn warmed(&self) -> Warmed {
        self.warmed
    }
}

/// sonic-rs on `sonic_rs::Value`.
pub struct Sonic {
    value: Held<sonic_rs::Value>,
    bytes: Vec<u8>,
    warmed: Warmed,
    round_trip: RoundTrip,
}

impl Sonic {
    pub fn new(json: &[u8]) -> Result<Sonic, String> {
        let (value, decode) = timed(|| sonic_rs::from_slice::<sonic_rs::Value>(json));
        let value = value.map_err(|e| format!("sonic-rs: {e}"))?;
        let (bytes, encode) = timed(|| sonic_rs::to_vec(&value));
        let bytes = bytes.map_err(|e| format!("sonic-rs: {e}"))?;
        let warmed = Warmed {
            encode: Some(encode),
            decode: (bytes == json).then_some(decode),
        };
        let round_trip = RoundTrip::new(&bytes, json, || Ok(bytes.clone()))?;
        Ok(Sonic {
            value: Held::new(value),
            bytes,
            warmed,
            round_trip,
        })
    }
}

impl super::Adapter for Sonic {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        self.value.with(b, |b, value| {
            b.iter(|buf| {
                buf.clear();
                sonic_rs::to_writer(&mut *buf, black_box(value)).is_ok()
            })
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter_checked(
            |back| {
                self.round_trip.check(Library::SonicRs, back, |v| {
                    sonic_rs::to_vec(v).map_err(|e| e.to_string())
                })
            },
            |_| sonic_rs::from_slice::<sonic_rs::Value>(black_box(&self.bytes)),
        );
    }
    fn release_value(&self) {
        self.value.release();
    }
    fn warmed(&self) -> Warmed {
        self.warmed
    }
}
