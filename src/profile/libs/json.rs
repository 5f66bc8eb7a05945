//! JSON: serde_json and sonic-rs, each on its own `Value`.

use std::hint::black_box;

use super::{mismatch, Library};
use crate::profile::bench::Bencher;

/// serde_json on `serde_json::Value`.
pub struct SerdeJson {
    value: serde_json::Value,
    bytes: Vec<u8>,
}

impl SerdeJson {
    pub fn new(json: &[u8]) -> Result<SerdeJson, String> {
        let value: serde_json::Value =
            serde_json::from_slice(json).map_err(|e| format!("serde_json: {e}"))?;
        let bytes = serde_json::to_vec(&value).map_err(|e| format!("serde_json: {e}"))?;
        let back: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| format!("serde_json: {e}"))?;
        if back != value {
            return Err(mismatch(Library::SerdeJson));
        }
        Ok(SerdeJson { value, bytes })
    }
}

impl super::Adapter for SerdeJson {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        b.iter(|buf| {
            buf.clear();
            serde_json::to_writer(&mut *buf, black_box(&self.value)).is_ok()
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter(|_| serde_json::from_slice::<serde_json::Value>(black_box(&self.bytes)));
    }
}

/// sonic-rs on `sonic_rs::Value`.
pub struct Sonic {
    value: sonic_rs::Value,
    bytes: Vec<u8>,
}

impl Sonic {
    pub fn new(json: &[u8]) -> Result<Sonic, String> {
        let value: sonic_rs::Value =
            sonic_rs::from_slice(json).map_err(|e| format!("sonic-rs: {e}"))?;
        let bytes = sonic_rs::to_vec(&value).map_err(|e| format!("sonic-rs: {e}"))?;
        let back: sonic_rs::Value =
            sonic_rs::from_slice(&bytes).map_err(|e| format!("sonic-rs: {e}"))?;
        if back != value {
            return Err(mismatch(Library::SonicRs));
        }
        Ok(Sonic { value, bytes })
    }
}

impl super::Adapter for Sonic {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        b.iter(|buf| {
            buf.clear();
            sonic_rs::to_writer(&mut *buf, black_box(&self.value)).is_ok()
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter(|_| sonic_rs::from_slice::<sonic_rs::Value>(black_box(&self.bytes)));
    }
}
