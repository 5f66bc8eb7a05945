//! Per-library adapters: each library encodes and decodes its own dynamic value type.
//!
//! A service that serialises "a dict" works on its library's dynamic value (`serde_json::Value`,
//! `rmpv::Value`, a `DynamicMessage`, `apache_avro::types::Value`), so that is what is timed.
//! [`prepare`] builds a library's value from wirelens' [`Value`] *outside* the timed region
//! (through wirelens' encoding of the format, decoded by the library; Avro by the schema that
//! encoding was written with), encodes it once to get the library's own bytes, and checks
//! that those bytes decode back to an equal value: a broken path is reported, never timed. (When
//! the library's bytes are the very bytes its value was decoded from, by the same decoder, they
//! decode to that value without a second decode, which for a large payload costs a second value.)
//!
//! Timed operations ([`Adapter::encode`], [`Adapter::decode`]):
//! - encode: library value → bytes, into the bencher's preallocated buffer (cleared each call);
//! - decode: the library's own bytes → its value (dropped after the clock stops).
//!
//! "wirelens" is a library row too: its span-tracking codecs on [`Value`], which build a span
//! tree and allocate their output, so they are expected to be slower than plain serialisers.

mod avro;
mod cbor;
mod json;
mod msgpack;
mod protobuf;
mod wirelens;

use std::sync::Arc;

use serde::Serialize;

use super::bench::Bencher;
use crate::codec::avro::AvroSchema;
use crate::codec::protobuf::MessageDescriptor;
use crate::codec::Format;
use crate::model::Value;

/// A library that encodes and decodes one format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Library {
    /// wirelens' own span-tracking codecs (every format).
    Wirelens,
    /// `serde_json` with `serde_json::Value`.
    SerdeJson,
    /// `sonic-rs` (SIMD JSON) with `sonic_rs::Value`.
    SonicRs,
    /// `rmp-serde` over `rmpv::Value` (maps keyed by field names, as `to_vec_named` writes).
    RmpSerde,
    /// `rmpv`'s own reader and writer of `rmpv::Value`.
    Rmpv,
    /// `ciborium` with `ciborium::Value`.
    Ciborium,
    /// `cbor4ii` with `cbor4ii::core::Value`.
    Cbor4ii,
    /// `prost-reflect`'s `DynamicMessage` (prost's wire codec driven by a descriptor).
    ProstReflect,
    /// The Apache `apache-avro` crate's datum writer and reader on `apache_avro::types::Value`.
    ApacheAvro,
}

impl Library {
    /// Every library, grouped by format.
    pub const ALL: [Library; 9] = [
        Library::SerdeJson,
        Library::SonicRs,
        Library::RmpSerde,
        Library::Rmpv,
        Library::Ciborium,
        Library::Cbor4ii,
        Library::ProstReflect,
        Library::ApacheAvro,
        Library::Wirelens,
    ];

    /// The crate name as users know it.
    pub fn name(self) -> &'static str {
        match self {
            Library::Wirelens => "wirelens",
            Library::SerdeJson => "serde_json",
            Library::SonicRs => "sonic-rs",
            Library::RmpSerde => "rmp-serde",
            Library::Rmpv => "rmpv",
            Library::Ciborium => "ciborium",
            Library::Cbor4ii => "cbor4ii",
            Library::ProstReflect => "prost-reflect",
            Library::ApacheAvro => "apache-avro",
        }
    }

    /// The libraries that handle `format`, the most common one first, wirelens last.
    pub fn for_format(format: Format) -> &'static [Library] {
        match format {
            Format::Json => &[Library::SerdeJson, Library::SonicRs, Library::Wirelens],
            Format::MessagePack => &[Library::RmpSerde, Library::Rmpv, Library::Wirelens],
            Format::Cbor => &[Library::Ciborium, Library::Cbor4ii, Library::Wirelens],
            Format::Protobuf => &[Library::ProstReflect, Library::Wirelens],
            Format::Avro => &[Library::ApacheAvro, Library::Wirelens],
        }
    }

    /// The library the scaling sweep times for `format` (the most common one).
    pub fn reference(format: Format) -> Library {
        Library::for_format(format)[0]
    }
}

/// A library ready to be timed on one payload.
pub trait Adapter: Send + Sync {
    /// The library's own encoding of the payload (what decode reads).
    fn bytes(&self) -> &[u8];
    /// Times encoding the prepared value.
    fn encode(&self, b: &mut Bencher<'_>);
    /// Times decoding [`Adapter::bytes`].
    fn decode(&self, b: &mut Bencher<'_>);
    /// What the preparation's own calls took, where they were the timed routine's work on the
    /// same input (the warm-up of a slow routine; see [`Bencher::warmed`]).
    fn warmed(&self) -> Warmed {
        Warmed::default()
    }
    /// Drops the library's value once its encode is measured: the decode reads the bytes
    /// alone, and a large payload's value need not be held beside the values it decodes.
    /// Encoding after this fails the measurement.
    fn release_value(&self) {}
}

/// A library's value, held until its encode is measured ([`Adapter::release_value`]).
struct Held<V>(std::sync::Mutex<Option<V>>);

impl<V> Held<V> {
    fn new(value: V) -> Held<V> {
        Held(std::sync::Mutex::new(Some(value)))
    }

    /// Runs `measure` with the value, or fails the measurement if it was released.
    fn with(&self, b: &mut Bencher<'_>, measure: impl FnOnce(&mut Bencher<'_>, &V)) {
        let held = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match held.as_ref() {
            Some(value) => measure(b, value),
            None => b.fail("the library's value was released before its encode"),
        }
    }

    fn release(&self) {
        let value = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        drop(value);
    }
}

/// Seconds the preparation spent in one call of each timed routine; `None` where its call was
/// not the routine's (a library whose bytes differ from the ones it decoded, or that decodes
/// them with another reader than the timed one).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Warmed {
    /// Encoding the library's value.
    pub encode: Option<f64>,
    /// Decoding the library's bytes.
    pub decode: Option<f64>,
}

/// Runs `f`, returning its result and the seconds it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = std::time::Instant::now();
    let out = f();
    (out, t.elapsed().as_secs_f64())
}

/// What an adapter starts from: the value, wirelens' encoding of it in the format, and the schema
/// that encoding used: for protobuf its message type, for Avro its writer's schema.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The value (shared: wirelens' adapter times it in place rather than holding a copy).
    pub value: &'a Arc<Value>,
    /// wirelens' encoding of it in the adapter's format.
    pub bytes: &'a [u8],
    /// The protobuf message type of `bytes` (protobuf only).
    pub message: Option<&'a MessageDescriptor>,
    /// The Avro schema `bytes` were written with (Avro only).
    pub avro: Option<&'a AvroSchema>,
}

/// Why a library could not be prepared for timing: the row is reported, not timed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PrepareError {
    /// The library failed reading or writing the payload (or taking its schema).
    #[error("{}: {message}", .library.name())]
    Failed {
        /// The library.
        library: Library,
        /// What it said, after what it was doing.
        message: String,
    },
    /// The library's bytes do not decode back to the value it encoded.
    #[error("{}: its output does not decode back to the same value", .0.name())]
    Mismatch(Library),
    /// wirelens could not encode the value.
    #[error("wirelens: {0}")]
    Encode(#[from] crate::codec::EncodeError),
    /// wirelens encoded the value to other bytes than the caller's.
    #[error("wirelens: encoding the value twice gave different bytes")]
    NotRepeatable,
    /// No Avro schema could be inferred for the value (what the inference said).
    #[error(transparent)]
    AvroSchema(crate::codec::avro::infer::InferError),
    /// prost-reflect was given no message type.
    #[error("prost-reflect needs a message type")]
    NoMessageType,
    /// apache-avro was given no writer's schema.
    #[error("apache-avro needs the schema the bytes were written with")]
    NoAvroSchema,
    /// The library does not read or write the format.
    #[error("{} does not handle {}", .library.name(), .format.title())]
    Unsupported {
        /// The library.
        library: Library,
        /// The format asked for.
        format: Format,
    },
}

impl PrepareError {
    /// `library` failed with `message`.
    fn failed(library: Library, message: impl std::fmt::Display) -> PrepareError {
        PrepareError::Failed {
            library,
            message: message.to_string(),
        }
    }
}

/// Prepares `library` for `format` on `source`: converts, encodes once, checks the round trip.
pub fn prepare(
    library: Library,
    format: Format,
    source: Source<'_>,
) -> Result<Box<dyn Adapter>, PrepareError> {
    let adapter: Box<dyn Adapter> = match (library, format) {
        (Library::Wirelens, f) => Box::new(wirelens::Adapter::new(f, source)?),
        (Library::SerdeJson, Format::Json) => {
            Box::new(Plain::<json::SerdeJson>::new(source.bytes)?)
        }
        (Library::SonicRs, Format::Json) => Box::new(Plain::<json::Sonic>::new(source.bytes)?),
        (Library::RmpSerde, Format::MessagePack) => {
            Box::new(Plain::<msgpack::RmpSerde>::new(source.bytes)?)
        }
        (Library::Rmpv, Format::MessagePack) => {
            Box::new(Plain::<msgpack::Rmpv>::new(source.bytes)?)
        }
        (Library::Ciborium, Format::Cbor) => Box::new(Plain::<cbor::Ciborium>::new(source.bytes)?),
        (Library::Cbor4ii, Format::Cbor) => Box::new(Plain::<cbor::Cbor4ii>::new(source.bytes)?),
        (Library::ProstReflect, Format::Protobuf) => {
            let message = source.message.ok_or(PrepareError::NoMessageType)?;
            Box::new(protobuf::Prost::new(source.bytes, message)?)
        }
        (Library::ApacheAvro, Format::Avro) => {
            let schema = source.avro.ok_or(PrepareError::NoAvroSchema)?;
            Box::new(avro::ApacheAvro::new(source.bytes, schema)?)
        }
        (library, format) => return Err(PrepareError::Unsupported { library, format }),
    };
    Ok(adapter)
}

/// A library's own codec of its own dynamic value: the two operations timed.
trait Codec: 'static {
    /// The library's dynamic value.
    type Value: Send;
    /// The row it is.
    const LIBRARY: Library;
    /// Reads `bytes` as the library does.
    fn read(bytes: &[u8]) -> Result<Self::Value, String>;
    /// Writes `value` after what `out` holds, as the library does.
    fn write(value: &Self::Value, out: &mut Vec<u8>) -> Result<(), String>;
    /// Whether the value timed is read from wirelens' bytes by [`Codec::read`] itself (the
    /// default), which then warms the decode up when the library writes the same bytes back;
    /// otherwise by [`Codec::prepare`].
    const READS_ITS_INPUT: bool = true;
    /// Reads the value timed from wirelens' bytes `input`: [`Codec::read`] unless
    /// [`Codec::READS_ITS_INPUT`] is false.
    fn prepare(input: &[u8]) -> Result<Self::Value, String> {
        Self::read(input)
    }
    /// Whether every round trip is checked, even when the library writes wirelens' bytes back
    /// (its writer is what may lose the value).
    const ALWAYS_CHECKED: bool = false;
    /// The value's canonical bytes for the round-trip check (see [`RoundTrip`]): the library's
    /// own writer by default.
    fn canonical(value: &Self::Value) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        Self::write(value, &mut out)?;
        Ok(out)
    }
}

/// A library timed through its [`Codec`]: its value read from the bytes wirelens wrote (that
/// read warms the decode up when the library writes the same bytes back), its own bytes written
/// once (warming the encode up), and each timed decode checked against the value's canonical
/// bytes when the library's own bytes differ from wirelens' (or always, as the codec says).
struct Plain<C: Codec> {
    value: Held<C::Value>,
    bytes: Vec<u8>,
    warmed: Warmed,
    round_trip: RoundTrip,
    codec: std::marker::PhantomData<fn() -> C>,
}

impl<C: Codec> Plain<C> {
    fn new(input: &[u8]) -> Result<Plain<C>, PrepareError> {
        let named = |e: String| PrepareError::failed(C::LIBRARY, e);
        let (value, decode) = timed(|| C::prepare(input));
        let value = value.map_err(named)?;
        let mut bytes = Vec::new();
        let (written, encode) = timed(|| C::write(&value, &mut bytes));
        written.map_err(named)?;
        let warmed = Warmed {
            encode: Some(encode),
            decode: (C::READS_ITS_INPUT && bytes == input).then_some(decode),
        };
        let canonical = || C::canonical(&value).map_err(named);
        let round_trip = if C::ALWAYS_CHECKED {
            RoundTrip::always(canonical)?
        } else {
            RoundTrip::new(&bytes, input, || Ok(bytes.clone()))?
        };
        Ok(Plain {
            value: Held::new(value),
            bytes,
            warmed,
            round_trip,
            codec: std::marker::PhantomData,
        })
    }
}

impl<C: Codec> Adapter for Plain<C> {
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    fn encode(&self, b: &mut Bencher<'_>) {
        self.value.with(b, |b, value| {
            b.iter(|buf| {
                buf.clear();
                C::write(std::hint::black_box(value), buf).is_ok()
            })
        });
    }
    fn decode(&self, b: &mut Bencher<'_>) {
        b.iter_checked(
            |back| self.round_trip.check(C::LIBRARY, back, C::canonical),
            |_| C::read(std::hint::black_box(&self.bytes)),
        );
    }
    fn release_value(&self) {
        self.value.release();
    }
    fn warmed(&self) -> Warmed {
        self.warmed
    }
}

/// The round trip of a library whose value was decoded from other bytes than the ones it writes
/// (wirelens' encoding, not its own): its first decode of its own bytes, in the decode job, must
/// be its value again, compared through `canonical`, a writer that gives equal values equal
/// bytes and other values other bytes (the library's own writer, or another one where that is
/// what is being checked). Checking there, not while preparing, keeps one of the library's
/// values of the payload at a time: the one being encoded, then the one each decode builds
/// (two at once were 600 MB for a 9 MB protobuf batch's JSON in serde_json).
struct RoundTrip {
    /// Hash of the value's canonical bytes; `None`: the library decoded its own bytes, nothing
    /// to check.
    expected: Option<u64>,
}

impl RoundTrip {
    /// The check of a value whose canonical bytes `canonical` writes, due when `own` (the
    /// library's bytes) differ from `from` (the bytes it decoded the value from).
    fn new(
        own: &[u8],
        from: &[u8],
        canonical: impl FnOnce() -> Result<Vec<u8>, PrepareError>,
    ) -> Result<RoundTrip, PrepareError> {
        let expected = if own == from {
            None
        } else {
            Some(hash(&canonical()?))
        };
        Ok(RoundTrip { expected })
    }

    /// The check of a value whose canonical bytes `canonical` writes, whatever bytes it came
    /// from.
    fn always(
        canonical: impl FnOnce() -> Result<Vec<u8>, PrepareError>,
    ) -> Result<RoundTrip, PrepareError> {
        Ok(RoundTrip {
            expected: Some(hash(&canonical()?)),
        })
    }

    /// Checks a decode's output written by `canonical`.
    fn check<V, E: std::fmt::Display, W: std::fmt::Display>(
        &self,
        library: Library,
        decoded: &Result<V, E>,
        canonical: impl FnOnce(&V) -> Result<Vec<u8>, W>,
    ) -> Result<(), String> {
        let Some(expected) = self.expected else {
            return Ok(());
        };
        let value = decoded
            .as_ref()
            .map_err(|e| format!("{}: {e}", library.name()))?;
        let written = canonical(value).map_err(|e| e.to_string())?;
        if hash(&written) == expected {
            Ok(())
        } else {
            Err(PrepareError::Mismatch(library).to_string())
        }
    }
}

fn hash(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests;
