//! wirelens: a payload profiler and inspector.
//!
//! It answers two questions on a user's own data: *what would this API's payloads cost in JSON,
//! MessagePack or CBOR?* and *which byte is which field?* Every step is a plain function over
//! plain data:
//!
//! ```text
//! bytes ─► capture::detect ─► codec::decode ─► Document {value, spans} ─► codec::encode (each format)
//!          (ranked readings)   (spans on every node)                       └► Encoded {bytes, spans, notes}
//! ```
//!
//! - [`model`]: [`model::Value`] keeps everything each format can say; [`model::SpanTree`] says
//!   which bytes hold each node; [`model::Path`] names a node the same way in every format.
//! - [`codec`]: decoders and encoders for JSON, MessagePack and CBOR, all with byte spans, and the
//!   [`codec::FidelityNote`]s for what a target format cannot say.
//! - [`capture`]: which format the bytes are in, with reasons.
//! - [`pipeline`]: the path both faces take: an input's payloads ([`pipeline::open`]), one read
//!   ([`pipeline::read`]) and written as a format ([`pipeline::write()`]).
//! - [`profile`]: sizes, bytes per field, per-library timings, scaling and transfer estimates.
//! - [`report`]: the text reports the CLI prints.
//! - [`diff`]: two documents, in any formats, compared by meaning, with the bytes of each change.
//!
//! The GUI (`gui`, behind the default `gui` feature) and the CLI ([`cli`]) are thin faces over
//! this library; the core never depends on the GUI toolkit.
//!
//! # Example
//!
//! The same field, seen in two formats:
//!
//! ```
//! use wirelens::codec::{decode, encode, DecodeOptions, EncodeOptions, Format};
//! use wirelens::model::Path;
//!
//! let json = br#"{"user_id": 42, "roles": ["admin"]}"#;
//! let doc = decode(json, Format::Json, &DecodeOptions::default())?;
//! let packed = encode(&doc.value, Format::MessagePack, &EncodeOptions::default())?;
//!
//! let path = Path::parse("$.user_id")?;
//! let in_json = doc.spans.node(doc.spans.find(&path)[0]).span;
//! let in_msgpack = packed.spans.node(packed.spans.find(&path)[0]).span;
//! assert_eq!(&json[in_json.range()], b"42");
//! assert_eq!(&packed.bytes[in_msgpack.range()], &[42]); // a positive fixint
//! assert!(packed.bytes.len() < json.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod capture;
pub mod cli;
pub mod codec;
pub mod diff;
pub mod files;
#[cfg(feature = "gui")]
pub mod gui;
pub mod limits;
pub mod mapped;
pub mod model;
pub mod pipeline;
pub mod profile;
pub mod report;
pub mod workspace;
