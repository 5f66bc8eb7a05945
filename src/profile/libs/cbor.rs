//! CBOR: ciborium and cbor4ii, each on its own `Value`.

use std::hint::black_box;

use cbor4ii::core::dec::Decode;
use cbor4ii::core::enc::Encode;
use cbor4ii::core::utils::{BufWriter, SliceReader};

use super::{timed, Held, Library, RoundTrip, Warmed};
use crate::profile::bench::Bencher;

/// ciborium on `ciborium::Value`.
pub struct Ciborium {
    value: Held<ciborium::Value>,
    bytes: Vec<u8>,
    warmed: Warmed,
    round_trip: RoundTrip,
}

impl Ciborium {
    pub fn new(cbor: &[u8]) -> Result<Ciborium, String> {
        let (value, decode) = timed(|| ciborium::from_reader::<ciborium::Value, _>(cbor));
        let value = value.map_err(|e| format!("ciborium: {e}"))?;
        let mut bytes = Vec::new();
        let (written, encode) = timed(|| ciborium::into_writer(&value, &mut bytes));
        written.map_err(|e| format!("ciborium: {e}"))?;
        let warmed = Warmed {
            encode: Some(encode),
            decode: (bytes == cbor).then_some(decode),
        };
        let round_trip = RoundTrip::new(&bytes, cbor, || Ok(bytes.clone()))?;
        Ok(Ciborium {
            value: Held::new(value),
            bytes,
            warmed,
            round_trip,
        })
    }
}

impl super::Adapter for Ciborium {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        self.value.with(b, |b, value| {
            b.iter(|buf| {
                buf.clear();
                ciborium::into_writer(black_box(value), &mut *buf).is_ok()
            })
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter_checked(
            |back| {
                self.round_trip.check(Library::Ciborium, back, |v| {
                    let mut out = Vec::new();
                    ciborium::into_writer(v, &mut out).map_err(|e| e.to_string())?;
                    Ok(out)
                })
            },
            |_| ciborium::from_reader::<ciborium::Value, _>(black_box(&self.bytes[..])),
        );
    }
    fn release_value(&self) {
        self.value.release();
    }
    fn warmed(&self) -> Warmed {
        self.warmed
    }
}

fn read_cbor4ii(bytes: &[u8]) -> Result<cbor4ii::core::Value, String> {
    cbor4ii::core::Value::decode(&mut SliceReader::new(bytes))
        .map_err(|e| format!("cbor4ii: {e:?}"))
}

/// cbor4ii on `cbor4ii::core::Value`.
pub struct Cbor4ii {
    value: Held<cbor4ii::core::Value>,
    bytes: Vec<u8>,
    warmed: Warmed,
    round_trip: RoundTrip,
}

impl Cbor4ii {
    pub fn new(cbor: &[u8]) -> Result<Cbor4ii, String> {
        let (value, decode) = timed(|| read_cbor4ii(cbor));
        let value = value?;
        let mut w = BufWriter::new(Vec::new());
        let (written, encode) = timed(|| value.encode(&mut w));
        written.map_err(|e| format!("cbor4ii: {e:?}"))?;
        let bytes = w.into_inner();
        let warmed = Warmed {
            encode: Some(encode),
            decode: (bytes == cbor).then_some(decode),
        };
        let round_trip = RoundTrip::new(&bytes, cbor, || Ok(bytes.clone()))?;
        Ok(Cbor4ii {
            value: Held::new(value),
            bytes,
            warmed,
            round_trip,
        })
    }
}

impl super::Adapter for Cbor4ii {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        self.value.with(b, |b, value| {
            b.iter(|buf| {
                // The writer owns its Vec: lend it the preallocated buffer and take it back.
                let mut w = BufWriter::new(std::mem::take(buf));
                w.clear();
                let ok = black_box(value).encode(&mut w).is_ok();
                *buf = w.into_inner();
                ok
            })
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter_checked(
            |back| {
                self.round_trip
                    .check(Library::Cbor4ii, back, |v: &cbor4ii::core::Value| {
                        let mut w = BufWriter::new(Vec::new());
                        v.encode(&mut w).map_err(|e| format!("{e:?}"))?;
                        Ok(w.into_inner())
                    })
            },
            |_| cbor4ii::core::Value::decode(&mut SliceReader::new(black_box(&self.bytes))),
        );
    }
    fn release_value(&self) {
        self.value.release();
    }
    fn warmed(&self) -> Warmed {
        self.warmed
    }
}
