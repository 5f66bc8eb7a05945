//! Whether a payload is a data format at all: the [`Verdict`] its layers give (text its sender
//! labelled, encrypted records, another protocol's messages, text by its bytes). A payload with
//! a verdict gets no format guess; which format the others are is
//! [`crate::codec::detect`]'s question.

use super::media::{media_file_type, text_media_type};
use super::payload::Payload;
use crate::codec::detect::detect;
use crate::codec::DecodeOptions;
use crate::model::Value;

/// What a payload is when it is no data format to decode: text its sender labelled as such,
/// encrypted records, or a datagram or stream of a protocol that is not a data format (DNS,
/// SIP…). A payload with a verdict gets no format guess: a CBOR or MessagePack "reading" of an
/// HTML page, a TLS stream or a DNS query is noise, however it scores.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// The protocol says the bytes are text: a text media type (`text/html`,
    /// `application/javascript`…), a WebSocket text message that is not JSON.
    Text {
        /// The media type, lower case, without parameters.
        media_type: String,
        /// What said so: "its Content-Type", "its WebSocket opcode".
        said_by: &'static str,
    },
    /// Encrypted records (TLS): nothing to decode without the keys.
    Encrypted {
        /// The protocol layer: `TLS 1.3`, or the `encrypted` meta value when no layer names it.
        protocol: String,
        /// What the records show without a key (the layer's detail), if known.
        detail: Option<String>,
    },
    /// The messages of a protocol that is not a data format (the meta entry `protocol`, set by
    /// the capture layer from the port and the bytes' shape), or a media file its Content-Type
    /// names ([`media_file_type`]).
    NotData {
        /// The protocol: `DNS`, `mDNS`, `SIP`, `QUIC`…; or the media type, `image/png`.
        protocol: String,
    },
    /// No bytes: a message without a body (a GET, a HEAD, a 204, a 101). An empty protobuf
    /// message reads every byte of nothing, but only a layer that names protobuf (gRPC, a
    /// Content-Type) makes that a reading rather than a guess.
    Empty,
}

impl Verdict {
    /// A short name for the reading: `text (text/html)`, `encrypted (TLS 1.3)`, `DNS`.
    pub fn name(&self) -> String {
        match self {
            Verdict::Text { media_type, .. } => format!("text ({media_type})"),
            Verdict::Encrypted { protocol, .. } => format!("encrypted ({protocol})"),
            Verdict::NotData { protocol } => format!("{protocol} (not a data payload)"),
            Verdict::Empty => "empty".to_string(),
        }
    }

    /// The sentence shown instead of a format reading.
    pub fn sentence(&self) -> String {
        match self {
            Verdict::Text {
                media_type,
                said_by,
            } => {
                format!("text ({media_type}), as {said_by} says; no data format is guessed")
            }
            Verdict::Encrypted {
                detail: Some(detail),
                ..
            } => format!("encrypted TLS records: {detail}"),
            Verdict::Encrypted { protocol, .. } => {
                format!("encrypted {protocol} records — give a key log to decrypt")
            }
            Verdict::NotData { protocol } if protocol.contains('/') => {
                format!("{protocol}, as its Content-Type says: a media file, not a data payload; no data format is guessed")
            }
            Verdict::NotData { protocol } => {
                format!("{protocol} messages: not a data payload, no data format is guessed")
            }
            Verdict::Empty => {
                "empty: 0 bytes (a message without a body), no data format is guessed".to_string()
            }
        }
    }

    /// Whether the payload is one a user converts: text is (as a string), encrypted records and
    /// other protocols' messages are not.
    pub fn is_data(&self) -> bool {
        matches!(self, Verdict::Text { .. })
    }

    /// Whether only the bytes say so (printable text that no format reads), not the sender
    /// (a Content-Type, a WebSocket opcode) or the protocol (TLS records): a guess, which a
    /// way of peeling further that reaches a data format outranks.
    pub fn is_guess(&self) -> bool {
        matches!(self, Verdict::Text { said_by, .. } if *said_by == BY_CONTENT)
    }
}

/// The verdict on a payload, from what its layers recorded: meta `encrypted` (a TLS stream),
/// meta `protocol` (a protocol that is no data format), a WebSocket text message that is not
/// JSON, or a `Content-Type` naming a text media type ([`text_media_type`]). `None`: read its
/// format.
pub fn verdict(payload: &Payload) -> Option<Verdict> {
    if let Some(protocol) = &payload.protocol {
        return Some(Verdict::NotData {
            protocol: protocol.clone(),
        });
    }
    if is_empty_message(payload) {
        return Some(Verdict::Empty);
    }
    if let Some(what) = payload.meta_value("encrypted") {
        let layer = payload
            .layers
            .iter()
            .rev()
            .find(|l| l.name.starts_with(what));
        return Some(Verdict::Encrypted {
            protocol: layer.map_or_else(|| what.to_string(), |l| l.name.clone()),
            detail: layer.map(|l| l.detail.clone()).filter(|d| !d.is_empty()),
        });
    }
    // A text message is text: JSON, the one data format written as text, is read as JSON (the
    // layer hints it), anything else is shown as the text it is.
    if payload.meta_value("websocket opcode") == Some("text")
        && !payload
            .bytes
            .peek(|b| crate::codec::json::is_json(b, &crate::limits::Limits::default()))
    {
        return Some(Verdict::Text {
            media_type: "text/plain".to_string(),
            said_by: "its WebSocket opcode (text)",
        });
    }
    let Some(media) = payload.media_type() else {
        return text_by_bytes(payload);
    };
    let content_type = media.name.as_str();
    if content_type == "application/dns-message" {
        // DNS over HTTPS: the body is a DNS message, as a datagram on port 53 would be.
        return Some(Verdict::NotData {
            protocol: "DNS".to_string(),
        });
    }
    if content_type == "application/octet-stream" {
        // "Some bytes": no word on what they are, so their content may say it is text.
        return text_by_bytes(payload);
    }
    if let Some(media) = media_file_type(content_type) {
        // An image, a sound, a video, a font: a file format of its own, not a data payload.
        return Some(Verdict::NotData { protocol: media });
    }
    text_media_type(content_type).map(|media_type| Verdict::Text {
        media_type,
        said_by: if media.from_export {
            "its media type"
        } else {
            "its Content-Type"
        },
    })
}

/// Whether `payload` is a message a capture layer found without a body (bytes the user opened
/// as a file are read as they are, an empty file included), with no layer naming protobuf or
/// Avro, the formats that read nothing as a value (gRPC's empty message is its method's type;
/// an Avro container's block of null datums takes no bytes).
fn is_empty_message(payload: &Payload) -> bool {
    use crate::codec::Format;
    payload.bytes.is_empty()
        && !payload.layers.is_empty()
        && !matches!(payload.hint, Some(Format::Protobuf | Format::Avro))
        && payload.avro.is_none()
        && payload.grpc_call().is_none()
        && !payload.layers.iter().any(|l| l.name.starts_with("gRPC"))
}

/// The most bytes [`text_by_bytes`] tries the formats on: past that, printable UTF-8 is text.
const TEXT_DETECT_MAX: usize = 1 << 20;

/// A payload a capture layer found (a TCP or UDP stream, decrypted TLS records, a body) that
/// nothing labelled (or labelled `application/octet-stream`), whose bytes are printable UTF-8 (tabs and line ends allowed), that is not
/// JSON and that no format reads: text, by its bytes. Without this, "ping" over TLS or a
/// line-based protocol is "no known format" with CBOR and MessagePack scraps below it. Bytes
/// the user opened as a file get no such verdict: an invalid JSON document is better told
/// where it fails.
fn text_by_bytes(payload: &Payload) -> Option<Verdict> {
    if payload.layers.is_empty() || payload.hint.is_some() || payload.bytes.is_empty() {
        return None;
    }
    // A gRPC message is its method's message type, whatever its bytes look like.
    if payload.grpc_call().is_some() || payload.layers.iter().any(|l| l.name.starts_with("gRPC")) {
        return None;
    }
    // A glance: bytes left in a file to be read back when looked at stay there.
    payload.bytes.peek(|bytes| text_by_content(bytes))
}

/// [`text_by_bytes`] of the bytes themselves.
fn text_by_content(bytes: &[u8]) -> Option<Verdict> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{c}'))
    {
        return None;
    }
    let first = text.trim_start().chars().next()?;
    if matches!(first, '{' | '[' | '"') {
        // Meant as JSON, even where it fails: its reading says where.
        return None;
    }
    let limits = crate::limits::Limits::default();
    if bytes.len() <= TEXT_DETECT_MAX {
        if crate::codec::json::is_json(bytes, &limits) {
            return None;
        }
        // A structure (a map, an array, a message) that reads every byte outranks text; one
        // CBOR or MessagePack string whose header byte happens to be a letter does not
        // ("GOODDATA" is CBOR bytes(7) only by accident).
        let options = DecodeOptions::default();
        let structured = detect(bytes, None, &options).first().is_some_and(|r| {
            r.summary().is_claim()
                && r.outcome
                    .as_ref()
                    .is_ok_and(|d| matches!(d.value, Value::Map(_) | Value::Array(_)))
        });
        if structured {
            return None;
        }
    }
    Some(Verdict::Text {
        media_type: "text/plain".to_string(),
        said_by: BY_CONTENT,
    })
}

/// Who says a payload is text when nothing labels it: its bytes ([`text_by_content`]).
const BY_CONTENT: &str = "its content (printable UTF-8, unlabelled, read by no format)";
