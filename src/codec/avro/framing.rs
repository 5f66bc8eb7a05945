//! How a single Avro datum is framed on the wire, and the zigzag varint reader shared with the
//! container-file parser.
//!
//! Two framings are recognised:
//!
//! * Avro's own [single-object encoding]: the two bytes `C3 01`, the 8-byte little-endian
//!   CRC-64-AVRO ([`crc64_avro`]) fingerprint of the writer schema's Parsing Canonical Form, then
//!   the datum ([`single_object`]).
//! * The Confluent Schema Registry wire format: a zero magic byte, a 4-byte big-endian schema id,
//!   then (for Protobuf) a list of message indexes, then the payload ([`confluent`]).
//!
//! Nothing here allocates a size read from the input: the only allocation is the Protobuf index
//! list, which grows one entry per index actually read.
//!
//! [single-object encoding]: https://avro.apache.org/docs/1.12.0/specification/#single-object-encoding

use std::ops::Range;

use thiserror::Error;

/// The longest encoding of a 64-bit varint: 10 groups of 7 bits.
pub const MAX_VARINT_LEN: usize = 10;

/// Why a zigzag varint could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum VarintError {
    /// The input ends inside the varint (or before its first byte).
    #[error("varint starting at byte {at} is cut short by the end of the input at byte {len}")]
    Truncated {
        /// Offset of the varint's first byte.
        at: usize,
        /// Length of the input.
        len: usize,
    },
    /// More than [`MAX_VARINT_LEN`] bytes have their continuation bit set.
    #[error("varint starting at byte {at} is longer than {MAX_VARINT_LEN} bytes")]
    Overlong {
        /// Offset of the varint's first byte.
        at: usize,
    },
    /// The 10th byte carries bits beyond the 64th.
    #[error("varint starting at byte {at} does not fit in 64 bits")]
    Overflow {
        /// Offset of the varint's first byte.
        at: usize,
    },
}

impl VarintError {
    /// Where the varint starts.
    pub fn offset(&self) -> usize {
        match self {
            VarintError::Truncated { at, .. }
            | VarintError::Overlong { at }
            | VarintError::Overflow { at } => *at,
        }
    }
}

/// Reads an Avro `long` (a zigzag-encoded little-endian base-128 varint) at offset `at`.
///
/// Returns the decoded value and the offset just past the varint. Encodings longer than
/// [`MAX_VARINT_LEN`] bytes, or whose 10th byte has bits beyond the 64th, are rejected; so is
/// an `at` at or past the end of the input.
pub fn read_long(bytes: &[u8], at: usize) -> Result<(i64, usize), VarintError> {
    let mut raw: u64 = 0;
    for i in 0..MAX_VARINT_LEN {
        let Some(&b) = bytes.get(at.saturating_add(i)) else {
            return Err(VarintError::Truncated {
                at,
                len: bytes.len(),
            });
        };
        if i == MAX_VARINT_LEN - 1 && b > 1 {
            return Err(if b & 0x80 != 0 {
                VarintError::Overlong { at }
            } else {
                VarintError::Overflow { at }
            });
        }
        raw |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let value = ((raw >> 1) as i64) ^ -((raw & 1) as i64);
            return Ok((value, at + i + 1));
        }
    }
    // Unreachable in practice: the 10th byte either ends the varint or is rejected above.
    Err(VarintError::Overlong { at })
}

/// The CRC-64-AVRO fingerprint of empty input (the spec's `EMPTY` constant).
pub const CRC64_AVRO_EMPTY: u64 = 0xc15d_213a_a4d7_a795;

const CRC64_TABLE: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut fp = i as u64;
        let mut j = 0;
        while j < 8 {
            fp = (fp >> 1) ^ (CRC64_AVRO_EMPTY & (fp & 1).wrapping_neg());
            j += 1;
        }
        table[i] = fp;
        i += 1;
    }
    table
};

/// The 64-bit Rabin fingerprint ("CRC-64-AVRO") of `data`, as defined in the Avro
/// specification's section on schema fingerprints.
///
/// Applied to a schema's Parsing Canonical Form this gives the fingerprint that single-object
/// encoding stores, little-endian, after the `C3 01` marker.
pub fn crc64_avro(data: &[u8]) -> u64 {
    data.iter().fold(CRC64_AVRO_EMPTY, |fp, &b| {
        (fp >> 8) ^ CRC64_TABLE[((fp ^ u64::from(b)) & 0xff) as usize]
    })
}

/// The two marker bytes that open an Avro single-object encoded datum.
pub const SINGLE_OBJECT_MARKER: [u8; 2] = [0xC3, 0x01];

/// A datum in Avro single-object encoding, as found by [`single_object`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SingleObject {
    /// CRC-64-AVRO fingerprint of the writer schema's canonical form (stored little-endian).
    pub fingerprint: u64,
    /// The 10-byte header: marker and fingerprint.
    pub header: Range<usize>,
    /// The Avro binary datum that follows the header (may be empty).
    pub body: Range<usize>,
}

/// Recognises Avro single-object encoding: `C3 01`, an 8-byte little-endian fingerprint,
/// then the datum.
///
/// Returns `None` when the input is shorter than the 10-byte header or does not start with the
/// marker. Like any two-byte magic, a match is a hint, not a proof.
pub fn single_object(bytes: &[u8]) -> Option<SingleObject> {
    let (marker, rest) = bytes.split_first_chunk::<2>()?;
    if *marker != SINGLE_OBJECT_MARKER {
        return None;
    }
    let (fp, _) = rest.split_first_chunk::<8>()?;
    Some(SingleObject {
        fingerprint: u64::from_le_bytes(*fp),
        header: 0..10,
        body: 10..bytes.len(),
    })
}

/// Which kind of schema a Confluent Schema Registry id refers to; it decides what follows the
/// 5-byte header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RegistryKind {
    /// An Avro binary datum follows the header.
    Avro,
    /// A message-index list follows the header, then the Protobuf message.
    Protobuf,
    /// JSON text follows the header.
    Json,
}

/// A payload in the Confluent Schema Registry wire format, as parsed by [`confluent`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confluent {
    /// The schema id (big-endian on the wire).
    pub id: u32,
    /// Everything before the body: the magic byte, the id and, for Protobuf, the index list.
    pub header: Range<usize>,
    /// For Protobuf, the path of message indexes into the `.proto` file (`[0]` for the first
    /// top-level message, which the wire format writes as a single zero byte); empty for Avro
    /// and JSON.
    pub indexes: Vec<i64>,
    /// The serialized datum, message or JSON text.
    pub body: Range<usize>,
}

/// Why a payload is not in the Confluent wire format.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum FramingError {
    /// Fewer than the 5 header bytes.
    #[error("Confluent framing needs at least 5 bytes (magic and schema id), the input has {len}")]
    TooShort {
        /// Length of the input.
        len: usize,
    },
    /// The first byte is not the zero magic byte.
    #[error("Confluent framing starts with magic byte 0, found {found:#04x} at byte 0")]
    BadMagic {
        /// The byte found at offset 0.
        found: u8,
    },
    /// A varint of the Protobuf message-index list is malformed.
    #[error("Protobuf message-index list: {what}: {source}")]
    Varint {
        /// Which varint: the count or an index.
        what: &'static str,
        /// The underlying varint error, with its offset.
        source: VarintError,
    },
    /// The message-index count is negative, or larger than the bytes left could hold.
    #[error(
        "Protobuf message-index count {count} at byte {at} is impossible: \
         {remaining} bytes remain after it"
    )]
    BadIndexCount {
        /// The decoded count.
        count: i64,
        /// Offset of the count varint.
        at: usize,
        /// Bytes left after the count varint.
        remaining: usize,
    },
    /// A message index is negative.
    #[error("Protobuf message index {index} at byte {at} is negative")]
    NegativeIndex {
        /// The decoded index.
        index: i64,
        /// Offset of the index varint.
        at: usize,
    },
}

/// Cheap check for the Confluent wire format: a zero first byte and at least 5 bytes.
///
/// This proves nothing on its own — any buffer starting with a zero byte passes (a zero-length
/// varint, a big-endian length prefix, padding…). Use it only to decide whether to *try*
/// [`confluent`], ideally together with outside knowledge (a Kafka topic known to use a schema
/// registry, a schema id that resolves).
pub fn looks_confluent(bytes: &[u8]) -> bool {
    bytes.len() >= 5 && bytes[0] == 0
}

/// Parses the Confluent Schema Registry wire format: magic byte `0`, 4-byte big-endian schema
/// id, then for Protobuf the message-index list (zigzag varint count, then that many zigzag
/// varint indexes; a count of 0 means `[0]`), then the body.
pub fn confluent(bytes: &[u8], kind: RegistryKind) -> Result<Confluent, FramingError> {
    let Some((head, _)) = bytes.split_first_chunk::<5>() else {
        return Err(FramingError::TooShort { len: bytes.len() });
    };
    if head[0] != 0 {
        return Err(FramingError::BadMagic { found: head[0] });
    }
    let id = u32::from_be_bytes([head[1], head[2], head[3], head[4]]);
    let mut pos = 5;
    let mut indexes = Vec::new();
    if kind == RegistryKind::Protobuf {
        let (count, after) = read_long(bytes, pos).map_err(|source| FramingError::Varint {
            what: "index count",
            source,
        })?;
        let remaining = bytes.len() - after;
        // Every index takes at least one byte, so a count beyond the bytes left is impossible.
        if count < 0 || count as u64 > remaining as u64 {
            return Err(FramingError::BadIndexCount {
                count,
                at: pos,
                remaining,
            });
        }
        pos = after;
        if count == 0 {
            indexes.push(0);
        }
        for _ in 0..count {
            let (index, after) = read_long(bytes, pos).map_err(|source| FramingError::Varint {
                what: "message index",
                source,
            })?;
            if index < 0 {
                return Err(FramingError::NegativeIndex { index, at: pos });
            }
            indexes.push(index);
            pos = after;
        }
    }
    Ok(Confluent {
        id,
        header: 0..pos,
        indexes,
        body: pos..bytes.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zigzag(v: i64) -> Vec<u8> {
        let mut n = ((v << 1) ^ (v >> 63)) as u64;
        let mut out = Vec::new();
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return out;
            }
            out.push(b | 0x80);
        }
    }

    #[test]
    fn read_long_round_trips() {
        for v in [
            0,
            -1,
            1,
            63,
            -64,
            64,
            300,
            -300,
            i32::MAX as i64,
            i32::MIN as i64,
            i64::MAX,
            i64::MIN,
        ] {
            let mut buf = vec![0xAA];
            buf.extend(zigzag(v));
            let (got, end) = read_long(&buf, 1).expect("valid varint");
            assert_eq!(got, v);
            assert_eq!(end, buf.len());
        }
        assert_eq!(zigzag(i64::MIN).len(), 10);
        assert_eq!(read_long(&[0x02], 0), Ok((1, 1)));
        assert_eq!(read_long(&[0x03], 0), Ok((-2, 1)));
    }

    #[test]
    fn read_long_rejects_bad_input() {
        assert_eq!(
            read_long(&[], 0),
            Err(VarintError::Truncated { at: 0, len: 0 })
        );
        assert_eq!(
            read_long(&[0x80, 0x80], 0),
            Err(VarintError::Truncated { at: 0, len: 2 })
        );
        assert_eq!(
            read_long(&[1], 5),
            Err(VarintError::Truncated { at: 5, len: 1 })
        );
        assert_eq!(
            read_long(&[0], usize::MAX),
            Err(VarintError::Truncated {
                at: usize::MAX,
                len: 1
            })
        );
        let mut eleven = vec![0xFF; 10];
        eleven.push(0x01);
        assert_eq!(read_long(&eleven, 0), Err(VarintError::Overlong { at: 0 }));
        let mut overflow = vec![0xFF; 9];
        overflow.push(0x02);
        assert_eq!(
            read_long(&overflow, 0),
            Err(VarintError::Overflow { at: 0 })
        );
        // A padded but 10-byte encoding of 0 is accepted (it is not overlong).
        let mut padded = vec![0x80; 9];
        padded.push(0x00);
        assert_eq!(read_long(&padded, 0), Ok((0, 10)));
    }

    #[test]
    fn crc64_known_values() {
        assert_eq!(crc64_avro(b""), CRC64_AVRO_EMPTY);
        // From the Avro test suite (share/test/data/schema-tests.txt): canonical "int" → its
        // Rabin fingerprint, written as a signed long.
        assert_eq!(crc64_avro(br#""int""#) as i64, 8247732601305521295);
        assert_eq!(crc64_avro(br#""null""#) as i64, 7195948357588979594);
    }

    #[test]
    fn crc64_matches_apache_avro() {
        use apache_avro::rabin::Rabin;
        use apache_avro::Schema;
        let schemas = [
            r#""int""#,
            r#""string""#,
            r#"{"type":"array","items":"long"}"#,
            r#"{"type":"map","values":["null","double"]}"#,
            r#"{"type":"enum","name":"Suit","symbols":["SPADES","HEARTS"]}"#,
            r#"{"type":"fixed","name":"md5","size":16}"#,
            r#"{"type":"record","name":"ns.User","doc":"ignored","fields":[
                {"name":"name","type":"string","default":"x"},
                {"name":"age","type":["null","int"]},
                {"name":"tags","type":{"type":"array","items":"string"}}]}"#,
        ];
        for text in schemas {
            let schema = Schema::parse_str(text).expect("schema parses");
            let canonical = schema.canonical_form();
            let theirs = schema.fingerprint::<Rabin>().bytes;
            let ours = crc64_avro(canonical.as_bytes());
            assert_eq!(theirs, ours.to_le_bytes().to_vec(), "{canonical}");
        }
    }

    #[test]
    fn single_object_from_apache_avro() {
        use apache_avro::rabin::Rabin;
        use apache_avro::types::Value;
        use apache_avro::{GenericSingleObjectWriter, Schema};
        let schema = Schema::parse_str(
            r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"},{"name":"b","type":"string"}]}"#,
        )
        .expect("schema parses");
        let mut writer = GenericSingleObjectWriter::new_with_capacity(&schema, 64).expect("writer");
        let value = Value::Record(vec![
            ("a".into(), Value::Long(-7)),
            ("b".into(), Value::String("hi".into())),
        ]);
        let mut out = Vec::new();
        writer.write_value(value, &mut out).expect("write");
        let so = single_object(&out).expect("recognised");
        assert_eq!(so.header, 0..10);
        assert_eq!(so.body, 10..out.len());
        assert_eq!(
            so.fingerprint.to_le_bytes().to_vec(),
            schema.fingerprint::<Rabin>().bytes
        );
        assert_eq!(
            so.fingerprint,
            crc64_avro(schema.canonical_form().as_bytes())
        );
        assert_eq!(&out[10..], &[0x0D, 0x04, b'h', b'i']);
        assert!(single_object(&out[..9]).is_none());
        assert!(single_object(&[0xC3, 0x02, 0, 0, 0, 0, 0, 0, 0, 0]).is_none());
        assert!(single_object(&[]).is_none());
    }

    #[test]
    fn confluent_avro_and_json() {
        let bytes = [0, 0, 0, 1, 0x2A, 0x02, 0x04];
        let c = confluent(&bytes, RegistryKind::Avro).expect("framed");
        assert_eq!(c.id, 298);
        assert_eq!(c.header, 0..5);
        assert_eq!(c.body, 5..7);
        assert!(c.indexes.is_empty());
        let json = b"\0\0\0\0\x07{\"a\":1}";
        let c = confluent(json, RegistryKind::Json).expect("framed");
        assert_eq!(c.id, 7);
        assert_eq!(&json[c.body], b"{\"a\":1}");
        assert!(looks_confluent(&bytes));
        assert!(!looks_confluent(&[0, 0, 0, 1]));
        assert!(!looks_confluent(&[1, 0, 0, 0, 1]));
        assert_eq!(
            confluent(&[0, 0, 0, 1], RegistryKind::Avro),
            Err(FramingError::TooShort { len: 4 })
        );
        assert_eq!(
            confluent(&[5, 0, 0, 0, 1], RegistryKind::Avro),
            Err(FramingError::BadMagic { found: 5 })
        );
        // An empty body is allowed (e.g. a `null` Avro datum).
        let c = confluent(&[0, 0, 0, 0, 1], RegistryKind::Avro).expect("framed");
        assert_eq!(c.body, 5..5);
    }

    #[test]
    fn confluent_protobuf_indexes() {
        // Single zero byte: [0].
        let bytes = [0, 0, 0, 0, 3, 0x00, 0x08, 0x01];
        let c = confluent(&bytes, RegistryKind::Protobuf).expect("framed");
        assert_eq!(c.indexes, vec![0]);
        assert_eq!(c.header, 0..6);
        assert_eq!(c.body, 6..8);
        // Count 2, indexes [1, 2] (zigzag 2, 4).
        let bytes = [0, 0, 0, 0, 3, 0x04, 0x02, 0x04, 0x08, 0x01];
        let c = confluent(&bytes, RegistryKind::Protobuf).expect("framed");
        assert_eq!(c.indexes, vec![1, 2]);
        assert_eq!(c.body, 8..10);
        // Truncated list.
        let bytes = [0, 0, 0, 0, 3, 0x04, 0x02];
        assert!(matches!(
            confluent(&bytes, RegistryKind::Protobuf),
            Err(FramingError::BadIndexCount { count: 2, .. })
        ));
        let bytes = [0, 0, 0, 0, 3, 0x04, 0x02, 0x80];
        assert!(matches!(
            confluent(&bytes, RegistryKind::Protobuf),
            Err(FramingError::Varint {
                what: "message index",
                ..
            })
        ));
        // Missing count.
        assert!(matches!(
            confluent(&[0, 0, 0, 0, 3], RegistryKind::Protobuf),
            Err(FramingError::Varint {
                what: "index count",
                ..
            })
        ));
        // Negative count, huge count, negative index.
        assert!(matches!(
            confluent(&[0, 0, 0, 0, 3, 0x01], RegistryKind::Protobuf),
            Err(FramingError::BadIndexCount {
                count: -1,
                at: 5,
                ..
            })
        ));
        let mut huge = vec![0, 0, 0, 0, 3];
        huge.extend([0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]);
        assert!(matches!(
            confluent(&huge, RegistryKind::Protobuf),
            Err(FramingError::BadIndexCount { .. })
        ));
        assert_eq!(
            confluent(&[0, 0, 0, 0, 3, 0x02, 0x01], RegistryKind::Protobuf),
            Err(FramingError::NegativeIndex { index: -1, at: 6 })
        );
        // Every prefix of a valid frame: an error or a shorter body, never a panic.
        let bytes = [0, 0, 0, 0, 3, 0x04, 0x02, 0x04, 0x08, 0x01];
        for n in 0..bytes.len() {
            let _ = confluent(&bytes[..n], RegistryKind::Protobuf);
            let _ = single_object(&bytes[..n]);
        }
        let msg = FramingError::BadIndexCount {
            count: 9,
            at: 5,
            remaining: 1,
        }
        .to_string();
        assert!(msg.contains("byte 5"), "{msg}");
    }
}
