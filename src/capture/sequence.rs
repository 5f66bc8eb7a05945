//! Several messages back to back in one payload: CBOR sequences (RFC 8742), MessagePack streams,
//! and protobuf streams with a varint or a 4-byte big-endian length before each message.
//!
//! None of these say "I am a stream" in their bytes, so finding one is a guess, and a wrong
//! guess cuts a real value into pieces. [`detect_framing`] is therefore conservative:
//! - a CBOR or MessagePack sequence is taken only when the whole payload is consumed by two or
//!   more complete values, every one a map or an array, and the payload is not itself one
//!   complete JSON, MessagePack or CBOR value (a valid single value is never split);
//! - a length-delimited protobuf stream is taken when the Content-Type says so
//!   (`delimited=true`), or when the lengths cover the payload exactly, there are at least two
//!   messages, each non-empty and each a complete protobuf message (with the user's message type
//!   when there is one), and the payload is not one complete value of JSON, MessagePack or CBOR,
//!   nor a protobuf message whose field numbers stay as small as the messages' own (read whole, a
//!   stream's lengths become tags and its fields land on numbers above 1000, or on 0);
//! - a Content-Type of `application/cbor-seq` splits without the map-or-array rule.
//!
//! The user can force a framing ([`split`]) when the guess is not made. Splitting is linear: each
//! item is decoded once to find where it ends, and the number of items is capped at
//! [`MAX_ITEMS`]. gRPC bodies have their own framing (flags, compression, trailers) and are split
//! by [`crate::codec::protobuf::framing::split_grpc`], not here.

use crate::codec::protobuf::framing;
use crate::codec::{self, DecodeOptions, ErrorKind, Format};
use crate::model::{Span, Value};

/// Most items one payload is split into.
pub const MAX_ITEMS: usize = framing::MAX_DELIMITED;

/// How a payload holding several messages marks where each ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Framing {
    /// gRPC / gRPC-Web: a flag byte and a 4-byte length before each message.
    Grpc,
    /// CBOR data items back to back (RFC 8742, `application/cbor-seq`).
    CborSeq,
    /// MessagePack values back to back (a MessagePack stream).
    MessagePackSeq,
    /// A varint length before each message (`writeDelimitedTo`).
    VarintDelimited,
    /// A 4-byte big-endian length before each message.
    U32Delimited,
}

impl Framing {
    /// Every framing, in the order detection tries them.
    pub const ALL: [Framing; 5] = [
        Framing::Grpc,
        Framing::CborSeq,
        Framing::MessagePackSeq,
        Framing::VarintDelimited,
        Framing::U32Delimited,
    ];

    /// The layer name shown to the user.
    pub fn name(self) -> &'static str {
        match self {
            Framing::Grpc => "gRPC frame",
            Framing::CborSeq => "CBOR sequence",
            Framing::MessagePackSeq => "MessagePack sequence",
            Framing::VarintDelimited => "varint-delimited",
            Framing::U32Delimited => "length-delimited (4-byte)",
        }
    }

    /// The word a user types to choose it (`--layer cbor-seq`).
    pub fn key(self) -> &'static str {
        match self {
            Framing::Grpc => "grpc",
            Framing::CborSeq => "cbor-seq",
            Framing::MessagePackSeq => "msgpack-seq",
            Framing::VarintDelimited => "varint-delimited",
            Framing::U32Delimited => "u32-delimited",
        }
    }

    /// The framing a [`Framing::key`] names.
    pub fn from_key(key: &str) -> Option<Framing> {
        Framing::ALL.into_iter().find(|f| f.key() == key)
    }

    /// The format of the items, when the framing implies one.
    pub fn item_format(self) -> Option<Format> {
        match self {
            Framing::Grpc | Framing::VarintDelimited => Some(Format::Protobuf),
            Framing::CborSeq => Some(Format::Cbor),
            Framing::MessagePackSeq => Some(Format::MessagePack),
            Framing::U32Delimited => None,
        }
    }
}

/// One item of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    /// The whole item, length prefix included.
    pub frame: Span,
    /// The item's own bytes.
    pub content: Span,
}

/// A stream that could not be split to its end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset}: {message}")]
pub struct SplitError {
    /// Where the bad item starts (or where the fault is inside it).
    pub offset: usize,
    /// What was wrong, naming the item (numbered from 1).
    pub message: String,
    /// The complete items before the fault.
    pub items_before: Vec<Item>,
}

/// Splits `bytes` into items by `framing` (not [`Framing::Grpc`]: gRPC frames carry flags and
/// compression; use `split_grpc`, which this function calls for it, keeping only the spans).
/// The items of a CBOR or MessagePack sequence are decoded within `options`' limits to find
/// where each ends.
pub fn split(
    bytes: &[u8],
    framing: Framing,
    options: &DecodeOptions,
) -> Result<Vec<Item>, SplitError> {
    match framing {
        Framing::CborSeq => values(bytes, Format::Cbor, options),
        Framing::MessagePackSeq => values(bytes, Format::MessagePack, options),
        Framing::VarintDelimited => varint_delimited(bytes),
        Framing::U32Delimited => u32_delimited(bytes),
        Framing::Grpc => crate::codec::protobuf::framing::split_grpc(bytes)
            .map(|frames| {
                frames
                    .iter()
                    .map(|f| Item {
                        frame: f.span,
                        content: f.payload,
                    })
                    .collect()
            })
            .map_err(|e| SplitError {
                offset: e.offset,
                message: e.message,
                items_before: Vec::new(),
            }),
    }
}

fn too_many(offset: usize, items: Vec<Item>) -> SplitError {
    SplitError {
        offset,
        message: format!("more than {MAX_ITEMS} items; the rest is not split"),
        items_before: items,
    }
}

/// Complete values of `format` back to back, each decoded within `options`.
fn values(bytes: &[u8], format: Format, options: &DecodeOptions) -> Result<Vec<Item>, SplitError> {
    values_where(bytes, format, options, |_| true)
}

/// [`values`], ending with an error at the first value whose first byte `starts` refuses
/// (before decoding it).
fn values_where(
    bytes: &[u8],
    format: Format,
    options: &DecodeOptions,
    starts: impl Fn(u8) -> bool,
) -> Result<Vec<Item>, SplitError> {
    let mut items = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        if items.len() >= MAX_ITEMS {
            return Err(too_many(pos, items));
        }
        let rest = bytes.get(pos..).unwrap_or(&[]);
        if rest.first().is_some_and(|&b| !starts(b)) {
            return Err(SplitError {
                offset: pos,
                message: format!(
                    "{} item {} (at byte {pos}) is no container",
                    format.title(),
                    items.len() + 1
                ),
                items_before: items,
            });
        }
        let end = match codec::decode(rest, format, options) {
            Ok(_) => bytes.len(),
            Err(e) if e.kind == ErrorKind::TrailingData && e.offset > 0 => pos + e.offset,
            Err(e) => {
                return Err(SplitError {
                    offset: pos + e.offset,
                    message: format!(
                        "{} item {} (at byte {pos}): {}",
                        format.title(),
                        items.len() + 1,
                        e.message
                    ),
                    items_before: items,
                })
            }
        };
        let span = Span::new(pos, end);
        items.push(Item {
            frame: span,
            content: span,
        });
        pos = end;
    }
    Ok(items)
}

/// Messages each behind a varint length (`writeDelimitedTo`), as the protobuf framing splits
/// them, at most [`framing::MAX_DELIMITED`] (equal to [`MAX_ITEMS`]): a run of zero bytes reads
/// as one empty message per byte, so the count is checked before each message is kept.
fn varint_delimited(bytes: &[u8]) -> Result<Vec<Item>, SplitError> {
    let item = |d: framing::Delimited| Item {
        frame: d.frame,
        content: d.message,
    };
    framing::varint_delimited_spans(bytes)
        .map(|found| found.into_iter().map(item).collect())
        .map_err(|e| SplitError {
            offset: e.offset,
            message: e.message,
            items_before: e.before.into_iter().map(item).collect(),
        })
}

/// Messages each behind a 4-byte big-endian length.
fn u32_delimited(bytes: &[u8]) -> Result<Vec<Item>, SplitError> {
    let mut items = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        if items.len() >= MAX_ITEMS {
            return Err(too_many(pos, items));
        }
        let number = items.len() + 1;
        let Some(head) = bytes.get(pos..pos + 4) else {
            return Err(SplitError {
                offset: pos,
                message: format!(
                    "message {number} has only {} of the 4 length bytes",
                    bytes.len() - pos
                ),
                items_before: items,
            });
        };
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let start = pos + 4;
        let room = bytes.len() - start;
        if len > room {
            return Err(SplitError {
                offset: pos,
                message: format!(
                    "message {number} (at byte {pos}) says {len} bytes but only {room} follow"
                ),
                items_before: items,
            });
        }
        items.push(Item {
            frame: Span::new(pos, start + len),
            content: Span::new(start, start + len),
        });
        pos = start + len;
    }
    Ok(items)
}

/// What the payload's Content-Type (its `Content-Type` meta entry) says about framing.
pub fn framing_from_content_type(content_type: &str) -> Option<Framing> {
    let media = super::media::media_type(content_type);
    let delimited = super::media::parameter(content_type, "delimited")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    match media.as_str() {
        "application/cbor-seq" => Some(Framing::CborSeq),
        m if delimited && (m.contains("protobuf") || m.contains("proto")) => {
            Some(Framing::VarintDelimited)
        }
        _ => None,
    }
}

/// The framing `bytes` is guessed to have (see the module docs for the rules), with its items.
///
/// `hint` is the format a layer announced; a hint of another format rules a framing out.
/// `options` carries the protobuf message type, if the user gave one.
pub fn detect_framing(
    bytes: &[u8],
    hint: Option<Format>,
    options: &DecodeOptions,
) -> Option<(Framing, Vec<Item>)> {
    if bytes.len() < 4 {
        return None;
    }
    let whole_is_one = || {
        [Format::Json, Format::MessagePack, Format::Cbor]
            .iter()
            .any(|&f| codec::decode(bytes, f, options).is_ok())
    };
    let mut found: Option<(Framing, Vec<Item>)> = None;
    for framing in [Framing::CborSeq, Framing::MessagePackSeq] {
        let format = framing.item_format()?;
        if hint.is_some_and(|h| h != format) {
            continue;
        }
        // Only a map or an array (CBOR: perhaps tagged) can start an item that `container`
        // keeps: a text read as such a sequence (each ASCII byte a MessagePack integer) is
        // refused at its first byte, not after a hundred thousand decodes.
        let head = |b: u8| match format {
            Format::MessagePack => matches!(b, 0x80..=0x9f | 0xdc..=0xdf),
            _ => matches!(b, 0x80..=0xdb),
        };
        let Ok(items) = values_where(bytes, format, options, head) else {
            continue;
        };
        if items.len() < 2 || !items.iter().all(|i| container(bytes, i, format, options)) {
            continue;
        }
        // Both fit: the one the hint names, else CBOR (a MessagePack value is rarely also a
        // run of well-formed CBOR containers, and the reverse as rarely).
        if found.is_none() {
            found = Some((framing, items));
        }
    }
    if found.is_some() {
        return found.filter(|_| !whole_is_one());
    }
    if hint.is_some_and(|h| h != Format::Protobuf) {
        return None;
    }
    for framing in [Framing::VarintDelimited, Framing::U32Delimited] {
        let Ok(items) = split(bytes, framing, options) else {
            continue;
        };
        if items.len() < 2 {
            continue;
        }
        let mut largest = 0i128;
        let messages = items.iter().all(|i| {
            !i.content.is_empty()
                && bytes.get(i.content.range()).is_some_and(|m| {
                    !looks_like_text(m)
                        && codec::decode(m, Format::Protobuf, options).is_ok_and(|doc| {
                            largest = largest.max(largest_field(&doc.value));
                            true
                        })
                })
        });
        // Read whole, a stream often still parses (its lengths become tags), but its fields
        // then land on numbers real messages do not use.
        let limit = largest.max(UNUSUAL_FIELD);
        let whole_fits = codec::decode(bytes, Format::Protobuf, options).is_ok_and(|doc| {
            doc.value.as_map().is_some_and(|entries| {
                entries
                    .iter()
                    .all(|(k, _)| matches!(k, Value::Int(n) if (1..=limit).contains(n)))
            })
        });
        if messages && !whole_fits && !whole_is_one() {
            return Some((framing, items));
        }
    }
    None
}

/// Field numbers above this are rare in real messages (most schemas number fields from 1 up).
const UNUSUAL_FIELD: i128 = 1000;

/// The largest top-level field number of a schema-less protobuf reading.
fn largest_field(value: &Value) -> i128 {
    value.as_map().map_or(0, |entries| {
        entries
            .iter()
            .filter_map(|(k, _)| match k {
                Value::Int(n) => Some(*n),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    })
}

/// Whether item `i` of `bytes` decodes as a map or an array of `format`.
fn container(bytes: &[u8], i: &Item, format: Format, options: &DecodeOptions) -> bool {
    let Some(b) = bytes.get(i.content.range()) else {
        return false;
    };
    match codec::decode(b, format, options) {
        Ok(doc) => matches!(doc.value.untagged(), Value::Map(_) | Value::Array(_)),
        Err(_) => false,
    }
}

/// Printable ASCII only: such bytes are text, whatever else they parse as.
fn looks_like_text(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|&c| c.is_ascii_graphic() || c.is_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::protobuf::framing::varint_delimited;

    #[test]
    fn cbor_sequence_of_maps_splits_and_a_single_value_does_not() {
        // {"a":1} {"a":2} as CBOR.
        let seq = b"\xa1\x61\x61\x01\xa1\x61\x61\x02";
        let (framing, items) =
            detect_framing(seq, None, &DecodeOptions::default()).expect("a sequence");
        assert_eq!(framing, Framing::CborSeq);
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].content, Span::new(4, 8));
        // Items past the node limit are not decoded whole, so nothing splits.
        let mut tight = DecodeOptions::default();
        tight.limits.max_nodes = 1;
        assert!(detect_framing(seq, None, &tight).is_none());
        let e = split(seq, Framing::CborSeq, &tight).expect_err("item 1 past the limit");
        assert!(e.message.contains("limit of 1 nodes"), "{}", e.message);
        // One CBOR array holding both maps is one value.
        let one = b"\x82\xa1\x61\x61\x01\xa1\x61\x61\x02";
        assert!(detect_framing(one, None, &DecodeOptions::default()).is_none());
        // Integers back to back are not taken as a sequence without being told.
        assert!(detect_framing(b"\x01\x02\x03\x04", None, &DecodeOptions::default()).is_none());
        assert_eq!(
            split(
                b"\x01\x02\x03\x04",
                Framing::CborSeq,
                &DecodeOptions::default()
            )
            .map(|v| v.len()),
            Ok(4)
        );
    }

    #[test]
    fn delimited_protobuf_streams() {
        let mut stream = varint_delimited(b"\x08\x96\x01\x12\x02hi");
        stream.extend(varint_delimited(b"\x08\x01"));
        let (framing, items) =
            detect_framing(&stream, None, &DecodeOptions::default()).expect("a stream");
        assert_eq!(framing, Framing::VarintDelimited);
        assert_eq!(items[1].content, Span::new(9, 11));
        let mut u32s = 7u32.to_be_bytes().to_vec();
        u32s.extend(b"\x08\x96\x01\x12\x02hi");
        u32s.extend(2u32.to_be_bytes());
        u32s.extend(b"\x08\x01");
        let items = split(&u32s, Framing::U32Delimited, &DecodeOptions::default()).expect("frames");
        assert_eq!(items[1].frame, Span::new(11, 17));
        let e = split(
            &u32s[..15],
            Framing::U32Delimited,
            &DecodeOptions::default(),
        )
        .expect_err("cut");
        assert_eq!((e.offset, e.items_before.len()), (11, 1));
    }

    #[test]
    fn content_types() {
        assert_eq!(
            framing_from_content_type("application/cbor-seq"),
            Some(Framing::CborSeq)
        );
        assert_eq!(
            framing_from_content_type("application/x-protobuf; delimited=true"),
            Some(Framing::VarintDelimited)
        );
        assert_eq!(framing_from_content_type("application/x-protobuf"), None);
        assert_eq!(
            Framing::from_key("msgpack-seq"),
            Some(Framing::MessagePackSeq)
        );
    }
}
