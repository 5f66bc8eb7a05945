//! JSON: serde_json and sonic-rs, each on its own `Value`.

use super::{Codec, Library};

/// serde_json on `serde_json::Value`. It writes each value its one way, so its bytes are the
/// value's canonical ones.
pub(super) struct SerdeJson;

impl Codec for SerdeJson {
    type Value = serde_json::Value;
    const LIBRARY: Library = Library::SerdeJson;
    fn read(bytes: &[u8]) -> Result<serde_json::Value, String> {
        serde_json::from_slice(bytes).map_err(|e| e.to_string())
    }
    fn write(value: &serde_json::Value, out: &mut Vec<u8>) -> Result<(), String> {
        serde_json::to_writer(out, value).map_err(|e| e.to_string())
    }
}

/// sonic-rs on `sonic_rs::Value`.
pub(super) struct Sonic;

impl Codec for Sonic {
    type Value = sonic_rs::Value;
    const LIBRARY: Library = Library::SonicRs;
    fn read(bytes: &[u8]) -> Result<sonic_rs::Value, String> {
        sonic_rs::from_slice(bytes).map_err(|e| e.to_string())
    }
    fn write(value: &sonic_rs::Value, out: &mut Vec<u8>) -> Result<(), String> {
        sonic_rs::to_writer(out, value).map_err(|e| e.to_string())
    }
}
