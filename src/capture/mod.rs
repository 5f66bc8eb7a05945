//! From raw input bytes to payloads: detecting which format the bytes are in.
//!
//! Peeling transport layers (hex dumps, base64, HTTP, gRPC frames, pcap) will live here too; for
//! now the input is taken to be the payload itself.

pub mod detect;
pub mod pcap;

pub use detect::{detect, Reading};
