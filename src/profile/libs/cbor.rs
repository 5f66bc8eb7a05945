//! CBOR: ciborium and cbor4ii, each on its own `Value`.

use cbor4ii::core::dec::Decode;
use cbor4ii::core::enc::Encode;
use cbor4ii::core::utils::{BufWriter, SliceReader};

use super::{Codec, Library};

/// ciborium on `ciborium::Value`.
pub(super) struct Ciborium;

impl Codec for Ciborium {
    type Value = ciborium::Value;
    const LIBRARY: Library = Library::Ciborium;
    fn read(bytes: &[u8]) -> Result<ciborium::Value, String> {
        ciborium::from_reader(bytes).map_err(|e| e.to_string())
    }
    fn write(value: &ciborium::Value, out: &mut Vec<u8>) -> Result<(), String> {
        ciborium::into_writer(value, out).map_err(|e| e.to_string())
    }
}

/// cbor4ii on `cbor4ii::core::Value`.
pub(super) struct Cbor4ii;

impl Codec for Cbor4ii {
    type Value = cbor4ii::core::Value;
    const LIBRARY: Library = Library::Cbor4ii;
    fn read(bytes: &[u8]) -> Result<cbor4ii::core::Value, String> {
        cbor4ii::core::Value::decode(&mut SliceReader::new(bytes)).map_err(|e| format!("{e:?}"))
    }
    fn write(value: &cbor4ii::core::Value, out: &mut Vec<u8>) -> Result<(), String> {
        // The writer owns its Vec: lend it the buffer and take it back.
        let mut w = BufWriter::new(std::mem::take(out));
        let written = value.encode(&mut w);
        *out = w.into_inner();
        written.map_err(|e| format!("{e:?}"))
    }
}
