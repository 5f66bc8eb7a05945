//! From raw input bytes to payloads: peeling transport layers, and what the layers say a
//! payload is.
//!
//! [`unwrap`] peels what users paste or capture (hex dumps, base64, JSON strings holding escaped
//! payloads, raw HTTP with chunked and compressed bodies) down to [`Payload`]s, recording each
//! [`Layer`]; [`peel`] adds pcap files and splits streams ([`sequence`], [`grpcweb`]) into one
//! payload per message; [`verdict`] says which payloads are no data format (text, encrypted
//! records), and [`peel_readings`] ranks the ways of peeling the input itself (which layers to
//! take off) by how their payloads read ([`crate::codec::detect`] ranks a payload's formats).
//! [`websocket`] reads one direction of a WebSocket connection (after its HTTP upgrade) into
//! messages, inflating permessage-deflate. [`protocols`] names the datagrams and streams of
//! protocols that are no data format (DNS, SIP, QUIC…), so none is guessed as one.

mod conn;
pub mod grpcweb;
pub mod har;
pub mod http;
pub mod http2;
pub mod layers;
pub mod listing;
pub mod media;
pub mod meta;
mod payload;
pub mod pcap;
mod peel;
pub mod protocols;
pub mod readings;
pub mod sequence;
pub mod shared;
pub mod snippet;
pub mod text;
pub mod tls;
pub mod verdict;
pub mod websocket;
pub mod work;

pub use layers::{unwrap, CaptureError, Layer, Payload, UnwrapOptions};
pub use listing::{Exchange, PayloadFilter, Query, QueryError};
pub use meta::Meta;
pub use peel::{
    peel, peel_capture_each, peel_capture_from, MediaType, PeelChoice, PeelOptions, Peeled, Split,
    StreamedCapture,
};
pub use readings::{peel_readings, LayerReading};
pub use sequence::Framing;
pub use shared::SharedBytes;
pub use text::{decode_text, decode_text_checked, Decoded, TextError, TextShape};
