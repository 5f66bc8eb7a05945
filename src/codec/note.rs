//! [`FidelityNote`]: what a target format could not say exactly, and where.
//!
//! Converting never fails silently and never drops data without a note. Notes are grouped by
//! kind and path pattern (`$.data[*].avatar`), so 15,000 records with one bytes field give one
//! note with a count of 15,000 rather than 15,000 notes; the first concrete path is kept so a
//! user can jump to an example.

use std::collections::HashMap;

use crate::model::Path;

/// What kind of information a conversion changed or dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum NoteKind {
    /// Bytes written as base64 text (JSON has no byte strings).
    BytesAsBase64,
    /// An integer beyond ±2^53: JavaScript and other float64-only readers lose precision.
    IntegerPrecision,
    /// An integer beyond what the format's integers hold (64 bits in MessagePack).
    IntegerRange,
    /// A map key that is not text, written as text.
    NonTextKey,
    /// NaN or an infinity, which the format cannot write.
    NonFinite,
    /// A key repeated in one map; most readers keep only one of the entries.
    DuplicateKey,
    /// A CBOR tag with no equivalent; the tagged value is written without it.
    TagDropped,
    /// A MessagePack extension type with no equivalent; only its data bytes are written.
    ExtDropped,
    /// A float written at another width than it had.
    FloatWidth,
    /// CBOR `undefined` or a simple value written as null.
    SimpleAsNull,
    /// A timestamp written as RFC 3339 text.
    TimestampAsText,
    /// A decimal number rounded to the nearest float64.
    DecimalRounded,
    /// Protobuf wire data with no schema meaning, written as its raw bytes.
    RawField,
    /// A map entry the target schema has no field for; it is not written.
    FieldDropped,
    /// A proto3 field at its default value is not written, so a reader cannot tell it from unset.
    PresenceLost,
    /// A null written to a protobuf field without presence: not written, so a reader sees the
    /// field's default (0, "", false, an empty list) and cannot tell the null from it.
    NullAsDefault,
    /// The target needs a schema and none was given; one was inferred from the value.
    SchemaInferred,
    /// A record field the value lacks: the schema's default (or null) was written for it.
    FieldMissing,
    /// A value of another type written as the schema's type (text as bytes, bytes as text).
    TypeForced,
    /// Text whose bytes are not all UTF-8, written with U+FFFD for each invalid sequence.
    TextRepaired,
}

impl NoteKind {
    /// A short label for tables.
    pub fn label(self) -> &'static str {
        match self {
            NoteKind::BytesAsBase64 => "bytes as base64",
            NoteKind::IntegerPrecision => "integer precision",
            NoteKind::IntegerRange => "integer range",
            NoteKind::NonTextKey => "non-text key",
            NoteKind::NonFinite => "NaN/Infinity",
            NoteKind::DuplicateKey => "duplicate key",
            NoteKind::TagDropped => "tag dropped",
            NoteKind::ExtDropped => "ext type dropped",
            NoteKind::FloatWidth => "float width",
            NoteKind::SimpleAsNull => "undefined/simple as null",
            NoteKind::TimestampAsText => "timestamp as text",
            NoteKind::DecimalRounded => "decimal rounded",
            NoteKind::RawField => "raw protobuf field",
            NoteKind::FieldDropped => "field dropped",
            NoteKind::PresenceLost => "presence lost",
            NoteKind::NullAsDefault => "null as default",
            NoteKind::SchemaInferred => "schema inferred",
            NoteKind::FieldMissing => "field missing",
            NoteKind::TypeForced => "type forced by schema",
            NoteKind::TextRepaired => "invalid UTF-8 replaced",
        }
    }
}

/// One thing a conversion could not keep exactly, at one path pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FidelityNote {
    /// What was changed or dropped.
    pub kind: NoteKind,
    /// The first path where it happened.
    pub path: Path,
    /// How many nodes matching `path.pattern()` it happened to.
    pub count: usize,
    /// A plain sentence about the first occurrence.
    pub message: String,
}

impl std::fmt::Display for FidelityNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.brief(), self.message)?;
        if self.count > 1 {
            write!(
                f,
                " ({} times at {})",
                self.count,
                self.path.pattern().brief()
            )?;
        }
        Ok(())
    }
}

/// Collects notes during one conversion, grouping repeats.
#[derive(Debug, Default)]
pub struct Notes {
    list: Vec<FidelityNote>,
    index: HashMap<(NoteKind, Path), usize>,
}

impl Notes {
    /// An empty collection.
    pub fn new() -> Notes {
        Notes::default()
    }

    /// Records a note of `kind` at `path`; `message` is only built for the first of its group.
    pub fn add(&mut self, kind: NoteKind, path: Path, message: impl FnOnce() -> String) {
        let key = (kind, path.pattern());
        if let Some(&i) = self.index.get(&key) {
            self.list[i].count += 1;
        } else {
            self.index.insert(key, self.list.len());
            self.list.push(FidelityNote {
                kind,
                path,
                count: 1,
                message: message(),
            });
        }
    }

    /// Records `note` (a group of `note.count` occurrences, from a conversion of part of the
    /// document) as [`Notes::add`] would have recorded each occurrence: into its kind and path
    /// pattern's group, counts added, the first path and message kept.
    pub fn merge(&mut self, note: FidelityNote) {
        let key = (note.kind, note.path.pattern());
        if let Some(&i) = self.index.get(&key) {
            self.list[i].count += note.count;
        } else {
            self.index.insert(key, self.list.len());
            self.list.push(note);
        }
    }

    /// Whether no note was recorded.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The notes, in the order first seen.
    pub fn into_vec(self) -> Vec<FidelityNote> {
        self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_grouped_by_pattern() {
        let mut notes = Notes::new();
        for i in 0..3 {
            let p = Path::parse(&format!("$.data[{i}].avatar")).expect("path");
            notes.add(NoteKind::BytesAsBase64, p, || {
                "bytes written as base64".into()
            });
        }
        notes.add(NoteKind::IntegerPrecision, Path::root(), || "big".into());
        let v = notes.into_vec();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].count, 3);
        assert_eq!(v[0].path.to_string(), "$.data[0].avatar");
        assert_eq!(
            v[0].to_string(),
            "$.data[0].avatar: bytes written as base64 (3 times at $.data[*].avatar)"
        );
    }
}
