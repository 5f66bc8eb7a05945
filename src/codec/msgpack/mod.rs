//! MessagePack: decoding with byte spans, and encoding with spans and fidelity notes.
//!
//! Why it exists: wirelens shows a payload in every format side by side, byte by byte. This
//! codec turns MessagePack bytes into a [`Value`] plus a [`SpanTree`](crate::model::SpanTree)
//! saying which bytes hold each node, and writes any [`Value`] as the smallest MessagePack with
//! the same tree for the bytes it wrote, noting ([`NoteKind`](super::NoteKind)) whatever
//! MessagePack cannot say.
//!
//! Decoding ([`decode`]):
//! - every marker of the spec; `0xc1` is a syntax error; str must be valid UTF-8;
//! - integers become [`Value::Int`], float32/float64 keep their width, ext type −1 with 4, 8 or 12
//!   data bytes and nanoseconds ≤ 999,999,999 becomes [`Value::Timestamp`]; any other ext
//!   (including a malformed timestamp) stays [`Value::Ext`] with its data;
//! - map keys may be any value, containers included; a key produces no node of its own, its bytes
//!   are the value node's `key` span;
//! - no recursion over the input: an explicit stack, bounded by
//!   [`Limits::max_depth`](crate::limits::Limits) (containers inside map keys count too);
//!   no allocation sized by a length header beyond the bytes actually left.
//!
//! Errors: `offset` is the first byte of the item whose bytes are missing or wrong (its marker)
//! when the item's own header or payload is cut short, the input length when an item is missing
//! entirely, the bad byte itself for invalid UTF-8 and `0xc1`. `path` is the path of the item
//! being read; while a map *key* is read it is the map's path (a key has no path of its own).
//! `partial` holds every complete item read so far, open containers closed with what they hold
//! (an entry whose key was read but not its value is left out); it is `None` only when the
//! root item itself failed, so nothing at all was decoded.
//!
//! Encoding ([`encode`]): the smallest marker for every integer, string, binary, array and map,
//! and floats at the width they had ([`FloatPolicy::Keep`](crate::codec::FloatPolicy::Keep), the
//! default: a float16 becomes a float32, with a note), or narrowed to float32 where that is exact
//! under [`FloatPolicy::Shortest`](crate::codec::FloatPolicy::Shortest). The default is byte for
//! byte what Python's `msgpack.packb` writes for the same data (tested on every sample and a
//! corpus in `tests/fixtures/library-bytes/`). Integers outside MessagePack's 64-bit
//! range become decimal text, CBOR undefined and simple values become nil, CBOR tags 0 and 1
//! (date-times) become the timestamp extension, other tags are dropped (their content is kept),
//! decimals become the nearest float64 (or float32 under [`FloatPolicy::Shortest`](crate::codec::FloatPolicy::Shortest) when that is
//! exact) — each with a note. A map key whose encoded bytes repeat an earlier key's is written
//! and noted as a duplicate (this catches equal keys of any type, and also keys that only became
//! equal on the wire, such as null and undefined). Non-text keys are named by the *source* key's
//! summary, so paths match the source value in every format. With `canonical`, map entries are
//! sorted by the bytes of their encoded keys (stably) and floats are shortest.
//!
//! Span conventions (shared by every codec): a scalar whose value is its one marker byte (fixint,
//! nil, true, false) has an empty header and that byte as payload; other scalars have the marker
//! plus length bytes (plus the ext type byte) as header and the value bytes as payload;
//! containers have the marker plus length as header and end where their last item ends.
//!
//! What it does not do: stream, or decode a sequence of several top-level values (bytes after the
//! first value are [`ErrorKind::TrailingData`](super::ErrorKind)).

mod decode;
mod encode;

pub use decode::decode;
pub(crate) use decode::{value_and_nodes, value_into};
pub use encode::encode;
pub(crate) use encode::encode_with;
mod plain;
pub(crate) use plain::encode_plain;

use crate::model::{PathSegment, Timestamp, Value};

/// The MessagePack extension type of timestamps.
const TIMESTAMP_EXT: i8 = -1;

/// The path segment [`SpanTreeBuilder::segment_for_key`](crate::model::SpanTreeBuilder) gives a
/// map entry with key `key`, for error and note paths built without a tree.
fn key_path_segment(key: &Value) -> PathSegment {
    match key {
        Value::Text(s) => PathSegment::Key(s.to_string()),
        other => PathSegment::OtherKey(other.summary(48)),
    }
}

/// Reads timestamp extension data (4, 8 or 12 bytes); `None` when the length is another or the
/// nanoseconds exceed 999,999,999.
fn parse_timestamp(data: &[u8]) -> Option<Timestamp> {
    let ts = match *data {
        [a, b, c, d] => Timestamp {
            seconds: i64::from(u32::from_be_bytes([a, b, c, d])),
            nanos: 0,
        },
        [a, b, c, d, e, f, g, h] => {
            let v = u64::from_be_bytes([a, b, c, d, e, f, g, h]);
            Timestamp {
                // The lower 34 bits: always below 2^34, so the cast is exact.
                seconds: (v & ((1 << 34) - 1)) as i64,
                nanos: (v >> 34) as u32,
            }
        }
        [a, b, c, d, e, f, g, h, i, j, k, l] => Timestamp {
            nanos: u32::from_be_bytes([a, b, c, d]),
            seconds: i64::from_be_bytes([e, f, g, h, i, j, k, l]),
        },
        _ => return None,
    };
    (ts.nanos <= 999_999_999).then_some(ts)
}

/// The data bytes of a timestamp in its smallest form.
pub(super) fn timestamp_data(ts: Timestamp) -> Vec<u8> {
    let secs = ts.seconds;
    if ts.nanos == 0 && (0..1 << 32).contains(&secs) {
        (secs as u32).to_be_bytes().to_vec()
    } else if (0..1 << 34).contains(&secs) && ts.nanos < 1 << 30 {
        ((u64::from(ts.nanos) << 34) | secs as u64)
            .to_be_bytes()
            .to_vec()
    } else {
        let mut d = ts.nanos.to_be_bytes().to_vec();
        d.extend_from_slice(&secs.to_be_bytes());
        d
    }
}

/// A timestamp from float epoch seconds (CBOR tag 1), if it is finite and in range.
pub(super) fn epoch_float(v: f64) -> Option<Timestamp> {
    if !v.is_finite() {
        return None;
    }
    let floor = v.floor();
    // i64 covers ±9.2e18; stay well inside so the cast is exact.
    if !(-9.0e18..9.0e18).contains(&floor) {
        return None;
    }
    let mut seconds = floor as i64;
    let mut nanos = ((v - floor) * 1e9).round() as u32;
    if nanos >= 1_000_000_000 {
        seconds += 1;
        nanos -= 1_000_000_000;
    }
    Some(Timestamp { seconds, nanos })
}

#[cfg(test)]
mod tests;
