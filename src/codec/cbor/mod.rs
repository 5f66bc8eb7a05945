//! CBOR (RFC 8949): decoding with byte spans, encoding with spans and fidelity notes, and
//! diagnostic notation.
//!
//! Why it exists: CBOR is one of the columns of the side-by-side view, so every byte of a CBOR
//! buffer must be linked to the node it belongs to, and any [`Value`](crate::model::Value) must be writable as CBOR
//! with its bytes linked back the same way.
//!
//! The decoder ([`decode`]) is strict about well-formedness (RFC 8949 §3 and appendix F):
//! reserved additional information 28–30, indefinite lengths on major types 0, 1 and 6, stray
//! "break" bytes, indefinite string chunks of the wrong type and two-byte simple values below 32
//! are all rejected as [`ErrorKind::Syntax`](super::ErrorKind::Syntax); text that is not UTF-8 is
//! [`ErrorKind::Invalid`](super::ErrorKind::Invalid). It does not recurse over nesting: arrays,
//! maps and tags live on an explicit stack, arrays and maps count toward
//! [`Limits::max_depth`](crate::limits::Limits), and tags have their own budget of the same
//! size (so a chain of a million tags is a clean `Limit` error, and no decoded [`Value`](crate::model::Value) is more
//! than `2 × max_depth` boxes deep — dropping, comparing and re-encoding it stays safe).
//!
//! What it does not do: check validity beyond UTF-8 (tag contents other than bignums are kept as
//! `Value::Tag` unchecked), keep the spelling of the input (indefinite lengths, non-shortest
//! heads and float widths other than through [`Float`](crate::model::Float) are not
//! remembered; a re-encode writes preferred serialization), or interpret tags other than 2 and 3.
//!
//! Conventions (shared by decoder and encoder, so decoding our own output yields an identical
//! [`SpanTree`](crate::model::SpanTree)):
//! - All tag heads in front of an item belong to that item's header; there is no node for a tag.
//! - A scalar whose value is its initial byte (integers 0..23 and −1..−24, simple values 0..23)
//!   has an empty header (apart from its tags) and that byte as payload. Other integers, floats
//!   and two-byte simple values: header = tags + initial byte, payload = the argument bytes.
//!   Strings: header = tags + initial byte + length bytes, payload = the string bytes (for an
//!   indefinite string: the chunks, heads included; the break byte is structure).
//! - Arrays and maps: header = tags + head; definite: payload ends where the last item ends;
//!   indefinite: payload ends at the break byte, which is structure.
//! - Map keys produce no node: their bytes are the value node's `key` span.
//!
//! The encoder ([`encode`]) writes shortest heads and definite lengths, and floats per
//! [`FloatPolicy`](super::FloatPolicy): by default at the width they had, which is byte for byte
//! what Python's `cbor2.dumps` writes for data read from JSON (tested on every sample and a corpus
//! in `tests/fixtures/library-bytes/`), or with `Shortest` the narrowest exact width, which makes
//! the whole RFC 8949 §4.1 preferred serialization; with `canonical` it writes the core
//! deterministic encoding (§4.2.1: map entries sorted by the bytewise order of their encoded keys,
//! shortest floats). Decisions for values CBOR cannot say as such:
//! - `Value::Simple(24..=31)` is not well-formed as a two-byte simple value and cannot come from a
//!   decoder; it is written as null with a [`NoteKind::SimpleAsNull`](super::NoteKind) note.
//!   `Value::Simple(20..=23)` is written as its one byte, which *is* false/true/null/undefined.
//! - `Value::Decimal` is written exactly as a decimal fraction, tag 4 `[exponent, mantissa]`
//!   (mantissa as integer or bignum), without a note. Only when the exponent does not fit a CBOR
//!   integer is it rounded to the nearest float64, with a `DecimalRounded` note.
//! - `Value::Timestamp` is tag 1 with integer seconds (no nanoseconds) or tag 0 with RFC 3339 text:
//!   the same meaning, no note. `Value::Ext` is written as its data bytes, with an `ExtDropped`
//!   note.

mod decode;
mod diag;
mod encode;

pub use decode::decode;
pub(crate) use decode::{value_and_nodes, value_into};
pub use diag::diagnostic;
pub use encode::encode;
pub(crate) use encode::encode_with;
mod plain;
pub(crate) use plain::encode_plain;

/// Where a scalar's header ends and its payload starts, by the span conventions above.
///
/// `head_start` is the item's initial byte (after any tags), `head_end` the end of its head
/// (initial byte and argument bytes).
fn scalar_layout(major: u8, ai: u8, head_start: usize, head_end: usize) -> usize {
    match major {
        // Integers, simple values and floats: the argument is the value.
        0 | 1 | 7 => {
            if ai < 24 {
                head_start
            } else {
                head_start + 1
            }
        }
        // Strings (and anything else): the head is header.
        _ => head_end,
    }
}

#[cfg(test)]
mod tests;
