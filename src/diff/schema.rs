//! Two versions of one protobuf message type, compared for compatibility: can a reader of one
//! version read what a writer of the other wrote, on the wire and in proto3 JSON?
//!
//! Fields are matched by number, as the wire matches them. For each field the verdict is:
//!
//! - **compatible**: the same type and name, a field added under a number never used, or a
//!   field removed whose number (or name) the new version reserves;
//! - **JSON-breaking**: the wire bytes still read, but proto3 JSON does not: a renamed field (JSON
//!   uses names), a type change inside one wire encoding (`int32 → int64`: JSON writes 64-bit
//!   integers as strings; `string ↔ bytes`: base64; a message ↔ bytes), or singular ↔ repeated;
//! - **not reserved**: a removed field whose number the new version does not reserve, so a later
//!   field may reuse it;
//! - **wire-breaking**: the same number with another wire encoding (`int32 ↔ string`,
//!   `sint32 ↔ int32`, `float ↔ fixed32`), or a new field on a number the old version reserved.
//!
//! Message-typed fields on the same number are compared field by field in turn (iteratively;
//! each pair of types once, so recursive types end).

use std::collections::HashSet;
use std::fmt;

use prost_reflect::{Cardinality, FieldDescriptor, Kind, MessageDescriptor};

/// How bad one schema change is, from harmless to breaking the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// Readers of either version read the other's messages.
    Compatible,
    /// The wire bytes read; proto3 JSON does not.
    JsonBreaking,
    /// A removed field's number is free for reuse.
    NotReserved,
    /// The wire bytes of one version do not read as the other's.
    WireBreaking,
}

impl Verdict {
    /// The word printed for it: `compatible`, `JSON-breaking`, `not reserved`, `wire-breaking`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Compatible => "compatible",
            Verdict::JsonBreaking => "JSON-breaking",
            Verdict::NotReserved => "not reserved",
            Verdict::WireBreaking => "wire-breaking",
        }
    }
}

/// A field as one version declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldVersion {
    /// Its name in the `.proto`.
    pub name: String,
    /// Its proto3 JSON name (`userId`).
    pub json_name: String,
    /// Its type as the `.proto` writes it: `int32`, `repeated string`, `pkg.Other`.
    pub kind: String,
}

impl FieldVersion {
    fn of(f: &FieldDescriptor) -> FieldVersion {
        let kind = kind_name(&f.kind());
        FieldVersion {
            name: f.name().to_string(),
            json_name: f.json_name().to_string(),
            kind: if f.is_map() {
                "map".into()
            } else if f.cardinality() == Cardinality::Repeated {
                format!("repeated {kind}")
            } else {
                kind
            },
        }
    }
}

/// One difference between the two versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaChange {
    /// How bad it is.
    pub verdict: Verdict,
    /// The message type in the old version (full name).
    pub message: String,
    /// The field number.
    pub number: u32,
    /// The field's name (old name when it exists in the old version).
    pub field: String,
    /// What changed, in words.
    pub what: String,
    /// The field in the old version, when it has one on this number.
    pub old: Option<FieldVersion>,
    /// The field in the new version, when it has one on this number.
    pub new: Option<FieldVersion>,
    /// Whether the version without the field reserves its number or name (the new one for a
    /// removed field, the old one for an added field); `false` when both have it.
    pub reserved: bool,
}

impl fmt::Display for SchemaChange {
    /// `wire-breaking  pkg.Payload.amount (3): double -> string, another wire encoding`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}  {}.{} ({}): {}",
            self.verdict.name(),
            self.message,
            self.field,
            self.number,
            self.what
        )
    }
}

/// One version of message type `message` (full name, or a short name only one type has) from a
/// schema file: a `.proto` (imports found beside it and in `includes`) or a descriptor set (any
/// other extension). The error names the file.
pub fn load_version(
    path: &std::path::Path,
    includes: &[std::path::PathBuf],
    message: &str,
) -> Result<MessageDescriptor, VersionLoadError> {
    use crate::codec::protobuf::schema::Schema;
    let is_proto = path.extension().is_some_and(|e| e == "proto");
    let schema = if is_proto {
        Schema::from_proto_files(std::slice::from_ref(&path), includes)
    } else {
        Schema::load(path)
    };
    schema
        .and_then(|s| s.message(message))
        .map_err(|source| VersionLoadError {
            path: path.to_path_buf(),
            source,
        })
}

/// Why [`load_version`] gave no message type: the schema file did not load or compile, or has
/// no such type. The message names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct VersionLoadError {
    /// The schema file.
    pub path: std::path::PathBuf,
    /// Why it gave no message type.
    pub source: crate::codec::protobuf::schema::SchemaError,
}

/// How a field's values are laid out on the wire; two kinds in one class read as each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Varint,
    ZigZag,
    Fixed32,
    Fixed64,
    Float,
    Double,
    Len,
}

fn encoding(kind: &Kind) -> Encoding {
    match kind {
        Kind::Int32 | Kind::Int64 | Kind::Uint32 | Kind::Uint64 | Kind::Bool | Kind::Enum(_) => {
            Encoding::Varint
        }
        Kind::Sint32 | Kind::Sint64 => Encoding::ZigZag,
        Kind::Fixed32 | Kind::Sfixed32 => Encoding::Fixed32,
        Kind::Fixed64 | Kind::Sfixed64 => Encoding::Fixed64,
        Kind::Float => Encoding::Float,
        Kind::Double => Encoding::Double,
        Kind::String | Kind::Bytes | Kind::Message(_) => Encoding::Len,
    }
}

fn kind_name(kind: &Kind) -> String {
    match kind {
        Kind::Message(m) => m.full_name().to_string(),
        Kind::Enum(e) => e.full_name().to_string(),
        Kind::Double => "double".into(),
        Kind::Float => "float".into(),
        Kind::Int32 => "int32".into(),
        Kind::Int64 => "int64".into(),
        Kind::Uint32 => "uint32".into(),
        Kind::Uint64 => "uint64".into(),
        Kind::Sint32 => "sint32".into(),
        Kind::Sint64 => "sint64".into(),
        Kind::Fixed32 => "fixed32".into(),
        Kind::Fixed64 => "fixed64".into(),
        Kind::Sfixed32 => "sfixed32".into(),
        Kind::Sfixed64 => "sfixed64".into(),
        Kind::Bool => "bool".into(),
        Kind::String => "string".into(),
        Kind::Bytes => "bytes".into(),
    }
}

fn reserved(m: &MessageDescriptor, number: u32, name: &str) -> bool {
    m.reserved_ranges().any(|r| r.contains(&number)) || m.reserved_names().any(|n| n == name)
}

/// The worst verdict of `changes` ([`Verdict::Compatible`] when there are none).
pub fn worst(changes: &[SchemaChange]) -> Verdict {
    changes
        .iter()
        .map(|c| c.verdict)
        .max()
        .unwrap_or(Verdict::Compatible)
}

/// The line a comparison ends with: `2 wire-breaking, 1 JSON-breaking: breaks the wire`
/// (`no changes: compatible` when there are none).
pub fn summary(changes: &[SchemaChange]) -> String {
    let counts: Vec<String> = [
        Verdict::WireBreaking,
        Verdict::NotReserved,
        Verdict::JsonBreaking,
        Verdict::Compatible,
    ]
    .into_iter()
    .filter_map(|v| {
        let n = changes.iter().filter(|c| c.verdict == v).count();
        (n > 0).then(|| format!("{n} {}", v.name()))
    })
    .collect();
    if counts.is_empty() {
        return "no changes: compatible".into();
    }
    let verdict = match worst(changes) {
        Verdict::Compatible => "compatible",
        Verdict::JsonBreaking => "wire-compatible, breaks proto3 JSON",
        Verdict::NotReserved => "compatible today; removed numbers are not reserved",
        Verdict::WireBreaking => "breaks the wire",
    };
    format!("{}: {verdict}", counts.join(", "))
}

/// Compares message type `old` with `new` (see the module docs). Changes come in field-number
/// order within each message; compatible renames of nothing are not listed.
pub fn diff_messages(old: &MessageDescriptor, new: &MessageDescriptor) -> Vec<SchemaChange> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut work = vec![(old.clone(), new.clone())];
    while let Some((a, b)) = work.pop() {
        if !seen.insert((a.full_name().to_string(), b.full_name().to_string())) {
            continue;
        }
        let mut numbers: Vec<u32> = a.fields().chain(b.fields()).map(|f| f.number()).collect();
        numbers.sort_unstable();
        numbers.dedup();
        let mut nested = Vec::new();
        for number in numbers {
            let (old, new) = (a.get_field(number), b.get_field(number));
            let is_reserved = match (&old, &new) {
                (Some(f), None) => reserved(&b, number, f.name()),
                (None, Some(f)) => reserved(&a, number, f.name()),
                _ => false,
            };
            let change = |verdict, field: &str, what: String| SchemaChange {
                verdict,
                message: a.full_name().to_string(),
                number,
                field: field.to_string(),
                what,
                old: old.as_ref().map(FieldVersion::of),
                new: new.as_ref().map(FieldVersion::of),
                reserved: is_reserved,
            };
            match (old.clone(), new.clone()) {
                (Some(fa), None) => out.push(if is_reserved {
                    change(
                        Verdict::Compatible,
                        fa.name(),
                        "removed; the new version reserves it".into(),
                    )
                } else {
                    change(
                        Verdict::NotReserved,
                        fa.name(),
                        format!(
                            "removed without `reserved {number};` in the new version: a later field may reuse the number"
                        ),
                    )
                }),
                (None, Some(fb)) => out.push(if is_reserved {
                    change(
                        Verdict::WireBreaking,
                        fb.name(),
                        "added on a number the old version reserved (it was used before)".into(),
                    )
                } else {
                    change(Verdict::Compatible, fb.name(), "added".into())
                }),
                (Some(fa), Some(fb)) => {
                    out.extend(
                        compare_fields(&fa, &fb)
                            .into_iter()
                            .map(|(verdict, what)| change(verdict, fa.name(), what)),
                    );
                    if let (Kind::Message(ma), Kind::Message(mb)) = (fa.kind(), fb.kind()) {
                        nested.push((ma, mb));
                    }
                }
                (None, None) => {}
            }
        }
        // Nested types after this one's fields; the stack pops them in field order.
        work.extend(nested.into_iter().rev());
    }
    out
}

fn compare_fields(fa: &FieldDescriptor, fb: &FieldDescriptor) -> Vec<(Verdict, String)> {
    let mut out = Vec::new();
    if fa.name() != fb.name() {
        out.push((
            Verdict::JsonBreaking,
            format!(
                "renamed {} -> {}: the wire is the same, JSON names differ",
                fa.name(),
                fb.name()
            ),
        ));
    }
    let (ka, kb) = (fa.kind(), fb.kind());
    let (ea, eb) = (encoding(&ka), encoding(&kb));
    let same_kind = match (&ka, &kb) {
        // Message types are compared field by field; the names may differ.
        (Kind::Message(_), Kind::Message(_)) => true,
        (Kind::Enum(_), Kind::Enum(_)) => true,
        _ => ka == kb,
    };
    if ea != eb {
        out.push((
            Verdict::WireBreaking,
            format!(
                "{} -> {}: another wire encoding",
                kind_name(&ka),
                kind_name(&kb)
            ),
        ));
    } else if !same_kind {
        out.push((
            Verdict::JsonBreaking,
            format!(
                "{} -> {}: the same wire encoding (values may be cut to the narrower type), another JSON form",
                kind_name(&ka),
                kind_name(&kb)
            ),
        ));
    }
    let (ra, rb) = (
        fa.cardinality() == Cardinality::Repeated,
        fb.cardinality() == Cardinality::Repeated,
    );
    if ra != rb && ea == eb {
        out.push((
            Verdict::JsonBreaking,
            format!(
                "{} -> {}: the wire reads either way (a single value is the last one sent), JSON has a value against an array",
                if ra { "repeated" } else { "singular" },
                if rb { "repeated" } else { "singular" }
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::protobuf::schema::Schema;

    fn message(dir: &std::path::Path, name: &str, body: &str) -> MessageDescriptor {
        let path = dir.join(name);
        std::fs::write(&path, format!("syntax = \"proto3\";\npackage v;\n{body}"))
            .expect("proto written");
        let none: [&std::path::Path; 0] = [];
        Schema::from_proto_files(&[&path], &none)
            .expect("compiles")
            .message("M")
            .expect("M")
    }

    fn verdicts(old: &str, new: &str) -> Vec<(Verdict, String)> {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = message(dir.path(), "a.proto", old);
        let b = message(dir.path(), "b.proto", new);
        diff_messages(&a, &b)
            .into_iter()
            .map(|c| (c.verdict, c.field))
            .collect()
    }

    #[test]
    fn a_version_that_does_not_load_names_its_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("two.proto");
        std::fs::write(
            &path,
            "syntax = \"proto3\";\npackage v;\nmessage A { message M {} }\nmessage B { message M {} }\n",
        )
        .expect("proto written");
        let err = load_version(&path, &[], "M").expect_err("ambiguous");
        assert_eq!(
            err.to_string(),
            format!(
                "{}: message name M is ambiguous: v.A.M, v.B.M",
                path.display()
            )
        );
    }

    #[test]
    fn the_same_message_is_compatible() {
        let m = "message M { int32 a = 1; string b = 2; }";
        assert!(verdicts(m, m).is_empty());
    }

    #[test]
    fn each_verdict() {
        // Number reuse with another wire type.
        assert_eq!(
            verdicts("message M { int32 a = 1; }", "message M { string a = 1; }"),
            [(Verdict::WireBreaking, "a".to_string())]
        );
        // A rename breaks only JSON.
        assert_eq!(
            verdicts("message M { int32 a = 1; }", "message M { int32 b = 1; }"),
            [(Verdict::JsonBreaking, "a".to_string())]
        );
        // int32 → int64 reads on the wire; JSON writes int64 as a string.
        assert_eq!(
            verdicts("message M { int32 a = 1; }", "message M { int64 a = 1; }"),
            [(Verdict::JsonBreaking, "a".to_string())]
        );
        // Removed without reserving, and removed with the number reserved.
        assert_eq!(
            verdicts(
                "message M { int32 a = 1; int32 b = 2; }",
                "message M { reserved 2; }"
            ),
            [
                (Verdict::NotReserved, "a".to_string()),
                (Verdict::Compatible, "b".to_string())
            ]
        );
        // A new field on a reserved number.
        assert_eq!(
            verdicts("message M { reserved 3; }", "message M { string c = 3; }"),
            [(Verdict::WireBreaking, "c".to_string())]
        );
        // Nested messages are compared too.
        assert_eq!(
            verdicts(
                "message M { N n = 1; } message N { sint32 x = 1; }",
                "message M { N n = 1; } message N { int32 x = 1; }"
            ),
            [(Verdict::WireBreaking, "x".to_string())]
        );
    }

    #[test]
    fn each_change_has_both_versions_of_its_field() {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = message(
            dir.path(),
            "a.proto",
            "message M { int32 user_id = 1; string note = 2; repeated string tags = 4; }",
        );
        let b = message(
            dir.path(),
            "b.proto",
            "message M { string user_id = 1; reserved 2; repeated string labels = 4; }",
        );
        let changes = diff_messages(&a, &b);
        let rows: Vec<_> = changes
            .iter()
            .map(|c| {
                (
                    c.number,
                    c.old.as_ref().map(|f| (f.name.as_str(), f.kind.as_str())),
                    c.new
                        .as_ref()
                        .map(|f| (f.json_name.as_str(), f.kind.as_str())),
                    c.reserved,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                (
                    1,
                    Some(("user_id", "int32")),
                    Some(("userId", "string")),
                    false
                ),
                (2, Some(("note", "string")), None, true),
                (
                    4,
                    Some(("tags", "repeated string")),
                    Some(("labels", "repeated string")),
                    false
                ),
            ]
        );
        assert_eq!(changes[1].verdict, Verdict::Compatible);
        assert_eq!(changes[2].verdict, Verdict::JsonBreaking);
    }

    #[test]
    fn recursive_types_end() {
        let m = "message M { M next = 1; int32 v = 2; }";
        assert!(verdicts(m, m).is_empty());
    }
}
