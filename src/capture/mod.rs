//! From raw input bytes to payloads: peeling transport layers, then detecting the format.
//!
//! [`unwrap`] peels what users paste or capture (hex dumps, base64, JSON strings holding escaped
//! payloads, raw HTTP with chunked and compressed bodies) down to [`Payload`]s, recording each
//! [`Layer`]; [`detect()`] then ranks the JSON/MessagePack/CBOR readings of a payload.

pub mod detect;
pub mod http;
pub mod layers;
pub mod pcap;
mod peel;
pub mod text;

pub use detect::{detect, Reading};
pub use layers::{unwrap, CaptureError, Layer, Payload, UnwrapOptions};
pub use peel::{peel, peel_with, Peeled};
pub use text::{decode_text, Decoded, TextShape};
