//! The user's own reading of a schema-less field: `--read '$.1[*].2=bytes'` reads field 2 of
//! every field-1 message as bytes, whatever the decoder would have guessed.
//!
//! A pattern names a field by the field numbers from the top-level message down, in the CLI
//! tree's spelling (`${1}{2}`) or the short one (`$.1.2`); `[*]` after a number (any occurrence
//! of a repeated field) may be written and changes nothing, since a reading applies to every
//! occurrence at the pattern. A reading that the field's bytes cannot have (`message` for bytes
//! that do not parse as fields, `bool` for a varint above 1, `string` for bytes that are not
//! UTF-8, a wire type it does not fit) is a decode error naming the field, not a quiet fallback.

use std::fmt;

use crate::codec::protobuf::varint;
use crate::model::{NodeId, Segment, SpanTree, WireType};

/// What a field is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReadAs {
    /// LEN: a nested message.
    Message,
    /// LEN: UTF-8 text.
    String,
    /// LEN: bytes.
    Bytes,
    /// LEN: packed varints, unsigned.
    PackedVarint,
    /// LEN: packed varints, zigzag.
    PackedSint64,
    /// LEN: packed little-endian 32-bit integers.
    PackedFixed32,
    /// LEN: packed 32-bit floats.
    PackedFloat,
    /// LEN: packed little-endian 64-bit integers.
    PackedFixed64,
    /// LEN: packed 64-bit floats.
    PackedDouble,
    /// VARINT: unsigned.
    Uint64,
    /// VARINT: two's complement.
    Int64,
    /// VARINT: zigzag.
    Sint64,
    /// VARINT: 0 or 1.
    Bool,
    /// I32: unsigned.
    Fixed32,
    /// I32: signed.
    Sfixed32,
    /// I32: a float.
    Float,
    /// I64: unsigned.
    Fixed64,
    /// I64: signed.
    Sfixed64,
    /// I64: a double.
    Double,
}

/// Every reading by its name on the command line.
const NAMES: [(&str, ReadAs); 19] = [
    ("message", ReadAs::Message),
    ("string", ReadAs::String),
    ("bytes", ReadAs::Bytes),
    ("packed-varint", ReadAs::PackedVarint),
    ("packed-sint64", ReadAs::PackedSint64),
    ("packed-fixed32", ReadAs::PackedFixed32),
    ("packed-float", ReadAs::PackedFloat),
    ("packed-fixed64", ReadAs::PackedFixed64),
    ("packed-double", ReadAs::PackedDouble),
    ("uint64", ReadAs::Uint64),
    ("int64", ReadAs::Int64),
    ("sint64", ReadAs::Sint64),
    ("bool", ReadAs::Bool),
    ("fixed32", ReadAs::Fixed32),
    ("sfixed32", ReadAs::Sfixed32),
    ("float", ReadAs::Float),
    ("fixed64", ReadAs::Fixed64),
    ("sfixed64", ReadAs::Sfixed64),
    ("double", ReadAs::Double),
];

impl ReadAs {
    /// The reading named `name` (`bytes`, `packed-fixed32`, …).
    pub fn from_name(name: &str) -> Option<ReadAs> {
        NAMES.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, r)| *r == self)
            .map_or("?", |(n, _)| n)
    }

    /// The readings a field of wire type `wire` may be given, in the order `--read` lists
    /// them (none for a group).
    pub fn all_for(wire: WireType) -> impl Iterator<Item = ReadAs> {
        NAMES
            .iter()
            .map(|(_, r)| *r)
            .filter(move |r| r.wire_type() == wire)
    }

    /// The label of this reading in the decoder's list of readings (`packed fixed32`,
    /// `sint64 (zigzag)`).
    pub fn label(self) -> &'static str {
        match self {
            ReadAs::PackedVarint => "packed varints",
            ReadAs::PackedSint64 => "packed sint64",
            ReadAs::PackedFixed32 => "packed fixed32",
            ReadAs::PackedFloat => "packed float",
            ReadAs::PackedFixed64 => "packed fixed64",
            ReadAs::PackedDouble => "packed double",
            ReadAs::Sint64 => "sint64 (zigzag)",
            other => other.name(),
        }
    }

    /// The wire type whose bytes this reads.
    pub fn wire_type(self) -> WireType {
        match self {
            ReadAs::Uint64 | ReadAs::Int64 | ReadAs::Sint64 | ReadAs::Bool => WireType::Varint,
            ReadAs::Fixed32 | ReadAs::Sfixed32 | ReadAs::Float => WireType::I32,
            ReadAs::Fixed64 | ReadAs::Sfixed64 | ReadAs::Double => WireType::I64,
            _ => WireType::Len,
        }
    }
}

/// One `--read`: the field (numbers from the top level down) and its reading.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldReading {
    /// Field numbers from the top-level message down.
    pub fields: Vec<u64>,
    /// How the field is read.
    pub read_as: ReadAs,
}

impl FieldReading {
    /// Parses `PATTERN=READING` (`$.1[*].2=bytes`, `${1}{2}=sint64`).
    pub fn parse(text: &str) -> Result<FieldReading, FieldReadingError> {
        let (pattern, reading) =
            text.rsplit_once('=')
                .ok_or_else(|| FieldReadingError::NotAPair {
                    text: text.to_string(),
                })?;
        let read_as =
            ReadAs::from_name(reading.trim()).ok_or_else(|| FieldReadingError::UnknownReading {
                text: text.to_string(),
                reading: reading.trim().to_string(),
            })?;
        let fields = parse_pattern(pattern.trim())?;
        Ok(FieldReading { fields, read_as })
    }

    /// Whether the field numbered `field` inside the messages `outer` (top level first) is the
    /// one this reading names.
    pub(super) fn matches(&self, outer: impl ExactSizeIterator<Item = u64>, field: u64) -> bool {
        let Some((last, prefix)) = self.fields.split_last() else {
            return false;
        };
        *last == field && prefix.len() == outer.len() && prefix.iter().copied().eq(outer)
    }
}

/// The field that node `id` of a schema-less protobuf tree (`spans` over `bytes`) is: its
/// numbers from the top-level message down and its wire type, read from the tags. An item of a
/// packed array is its array's field. `None` for the root and for a node that is no field (a
/// tree of another format, a tag that does not read).
pub fn field_of_node(bytes: &[u8], spans: &SpanTree, id: NodeId) -> Option<(Vec<u64>, WireType)> {
    let tag = |id: NodeId| -> Option<(u64, WireType)> {
        let node = spans.node(id);
        if !matches!(node.segment, Segment::OtherKey(_)) {
            return None;
        }
        let key = node.key?;
        let (tag, _) = varint::read(bytes, key.start, key.end).ok()?;
        Some((tag >> 3, WireType::of_tag(tag)?))
    };
    let mut id = id;
    if id.index() >= spans.len() {
        return None;
    }
    if matches!(spans.node(id).segment, Segment::Index(_)) {
        id = spans.parent(id)?;
    }
    let (number, wire) = tag(id)?;
    let mut fields = vec![number];
    let mut up = spans.parent(id);
    while let Some(p) = up {
        if spans.parent(p).is_none() {
            break;
        }
        fields.push(tag(p)?.0);
        up = spans.parent(p);
    }
    fields.reverse();
    Some((fields, wire))
}

/// The pattern of a field in the CLI tree's spelling: `${1}{2}`.
pub fn pattern(fields: &[u64]) -> String {
    let mut text = "$".to_string();
    for n in fields {
        text.push_str(&format!("{{{n}}}"));
    }
    text
}

impl fmt::Display for FieldReading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", pattern(&self.fields), self.read_as.name())
    }
}

/// The field numbers of `$.1[*].2` or `${1}[*]{2}`.
fn parse_pattern(pattern: &str) -> Result<Vec<u64>, FieldReadingError> {
    let bad = |why: &str| {
        Err(FieldReadingError::BadPattern {
            pattern: pattern.to_string(),
            why: why.to_string(),
        })
    };
    let Some(mut rest) = pattern.strip_prefix('$') else {
        return bad("a pattern starts with $");
    };
    let mut fields = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("[*]") {
            if fields.is_empty() {
                return bad("[*] follows a field number");
            }
            rest = r;
            continue;
        }
        let (digits, r) = if let Some(r) = rest.strip_prefix('{') {
            match r.split_once('}') {
                Some(split) => split,
                None => return bad("a { is not closed"),
            }
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            r.split_at(end)
        } else {
            return bad("expected .N, {N} or [*]");
        };
        match digits.parse::<u64>() {
            Ok(n) if (1..=super::MAX_FIELD_NUMBER).contains(&n) => fields.push(n),
            _ => return bad(&format!("{digits:?} is not a field number")),
        }
        rest = r;
    }
    if fields.is_empty() {
        return bad("no field named");
    }
    Ok(fields)
}

/// Why [`FieldReading::parse`] refused a `--read`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldReadingError {
    /// No `=` between the pattern and the reading.
    NotAPair {
        /// The text as given.
        text: String,
    },
    /// A reading that is none of the names [`ReadAs`] has.
    UnknownReading {
        /// The text as given.
        text: String,
        /// The reading named.
        reading: String,
    },
    /// A pattern that is not one of field numbers.
    BadPattern {
        /// The pattern as given.
        pattern: String,
        /// What is wrong with it.
        why: String,
    },
}

impl std::fmt::Display for FieldReadingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldReadingError::NotAPair { text } => {
                write!(f, "{text}: expected PATTERN=READING, e.g. '$.1[*].2=bytes'")
            }
            FieldReadingError::UnknownReading { text, reading } => {
                let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
                write!(
                    f,
                    "{text}: unknown reading {reading:?}; one of {}",
                    names.join(", ")
                )
            }
            FieldReadingError::BadPattern { pattern, why } => write!(
                f,
                "{pattern}: {why} (a pattern is like $.1[*].2 or ${{1}}{{2}})"
            ),
        }
    }
}

impl std::error::Error for FieldReadingError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_in_both_spellings() {
        let r = FieldReading::parse("$.1[*].2=bytes").expect("parses");
        assert_eq!(r.fields, vec![1, 2]);
        assert_eq!(r.read_as, ReadAs::Bytes);
        assert_eq!(r.to_string(), "${1}{2}=bytes");
        let r = FieldReading::parse("${1}[*]{20}=packed-fixed32").expect("parses");
        assert_eq!(r.fields, vec![1, 20]);
        assert!(r.matches([1].into_iter(), 20));
        assert!(!r.matches([2].into_iter(), 20));
        assert!(!r.matches([].into_iter(), 20));
    }

    #[test]
    fn bad_patterns_say_why() {
        for (text, why) in [
            ("$.1.2", "expected PATTERN=READING"),
            ("$.1=varint", "unknown reading \"varint\""),
            ("1.2=bytes", "starts with $"),
            ("$.0=bytes", "not a field number"),
            ("$[*]=bytes", "[*] follows"),
            ("$=bytes", "no field named"),
            ("$.x=bytes", "not a field number"),
        ] {
            let err = FieldReading::parse(text).expect_err(text).to_string();
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
