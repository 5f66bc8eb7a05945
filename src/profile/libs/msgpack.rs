//! MessagePack: rmp-serde (serde over `rmpv::Value`, maps with field names) and rmpv's own codec.

use super::{Codec, Library};

/// rmpv's `write_value` / `read_value`; its bytes are one way of writing each value, other
/// bytes for another value.
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
pub(super) struct RmpSerde;

impl Codec for RmpSerde {
    type Value = rmpv::Value;
    const LIBRARY: Library = Library::RmpSerde;
    fn read(bytes: &[u8]) -> Result<rmpv::Value, String> {
        rmp_serde::from_slice(bytes).map_err(|e| e.to_string())
    }
    fn write(value: &rmpv::Value, out: &mut Vec<u8>) -> Result<(), String> {
        let mut ser = rmp_serde::Serializer::new(out).with_struct_map();
        serde::Serialize::serialize(value, &mut ser).map_err(|e| e.to_string())
    }
    /// The value is read with rmpv, which keeps every MessagePack type (rmp-serde's reader is
    /// the one timed, so it makes no decode warm-up).
    const READS_ITS_INPUT: bool = false;
    fn prepare(input: &[u8]) -> Result<rmpv::Value, String> {
        Rmpv::read(input)
    }
    /// Always checked, through rmpv's writer: rmp-serde's serde path is what may not give the
    /// value back (an ext written as an array would read back as one).
    const ALWAYS_CHECKED: bool = true;
    fn canonical(value: &rmpv::Value) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        Rmpv::write(value, &mut out)?;
        Ok(out)
    }
}
