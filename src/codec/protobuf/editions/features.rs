//! Editions features: protobuf's edition defaults, and a `FeatureSet` resolved from them down
//! the scopes of a file.
//!
//! The defaults are protoc's own: `defaults.binpb` beside this file is the `FeatureSetDefaults`
//! that protoc 36.2 (the `protoc-bin-vendored` crate's) writes with
//!
//! ```text
//! protoc --edition_defaults_out=defaults.binpb --edition_defaults_minimum=2023 \
//!        --edition_defaults_maximum=2024 -I<its include folder> google/protobuf/descriptor.proto
//! ```
//!
//! so an edition's defaults are what protoc resolves against, not a table written again here.

use super::wire::{self, Field};
use super::EditionsError;

/// `Edition` numbers of `descriptor.proto`.
pub const EDITION_PROTO2: i32 = 998;
/// `EDITION_PROTO3`.
pub const EDITION_PROTO3: i32 = 999;
/// `EDITION_2023`.
pub const EDITION_2023: i32 = 1000;
/// `EDITION_2024`.
pub const EDITION_2024: i32 = 1001;

/// protoc's `FeatureSetDefaults` for editions 2023 and 2024 (see the module docs).
const DEFAULTS: &[u8] = include_bytes!("defaults.binpb");

/// The edition an `Edition` number names, as written in a `.proto` (`2023`), or the number.
pub fn edition_name(edition: i32) -> String {
    match edition {
        EDITION_PROTO2 => "proto2".into(),
        EDITION_PROTO3 => "proto3".into(),
        EDITION_2023 => "2023".into(),
        EDITION_2024 => "2024".into(),
        1002 => "2026".into(),
        n => format!("edition number {n}"),
    }
}

/// An error in protoc's edition defaults, said as such.
fn in_defaults(e: EditionsError) -> EditionsError {
    EditionsError::InDefaults(Box::new(e))
}

/// The features `google.protobuf.FeatureSet` defines that wirelens reads (field numbers 1 to
/// 8), each its enum number (0: not set). Language features (`pb.cpp`, `pb.java`, …) are not
/// kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Features {
    values: [i32; FEATURES],
}

const FEATURES: usize = 8;

/// Names of the features and of their values, by field number and enum number.
const NAMES: [(&str, &[(i32, &str)]); FEATURES] = [
    (
        "field_presence",
        &[(1, "EXPLICIT"), (2, "IMPLICIT"), (3, "LEGACY_REQUIRED")],
    ),
    ("enum_type", &[(1, "OPEN"), (2, "CLOSED")]),
    ("repeated_field_encoding", &[(1, "PACKED"), (2, "EXPANDED")]),
    ("utf8_validation", &[(2, "VERIFY"), (3, "NONE")]),
    (
        "message_encoding",
        &[(1, "LENGTH_PREFIXED"), (2, "DELIMITED")],
    ),
    ("json_format", &[(1, "ALLOW"), (2, "LEGACY_BEST_EFFORT")]),
    (
        "enforce_naming_style",
        &[(1, "STYLE2024"), (2, "STYLE_LEGACY")],
    ),
    (
        "default_symbol_visibility",
        &[
            (1, "EXPORT_ALL"),
            (2, "EXPORT_TOP_LEVEL"),
            (3, "LOCAL_ALL"),
            (4, "STRICT"),
        ],
    ),
];

/// Which of a field's features a short description shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `field_presence`, `repeated_field_encoding`, `utf8_validation`, `message_encoding`.
    Field,
    /// `enum_type`.
    Enum,
}

impl Features {
    /// The defaults of `edition` (an `Edition` number), or why there are none.
    pub fn defaults(edition: i32) -> Result<Features, EditionsError> {
        let mut best: Option<(i32, Features)> = None;
        for entry in wire::fields(DEFAULTS).map_err(in_defaults)? {
            let Field::Len(1, bytes) = entry else {
                continue;
            };
            let mut at = None;
            let mut features = Features::default();
            for f in wire::fields(bytes).map_err(in_defaults)? {
                match f {
                    Field::Varint(3, e) => at = Some(e as i32),
                    // overridable_features (4) and fixed_features (5) together are the defaults.
                    Field::Len(4 | 5, set) => features.merge(set)?,
                    _ => {}
                }
            }
            if let Some(e) = at.filter(|&e| e <= edition) {
                if best.is_none_or(|(b, _)| e > b) {
                    best = Some((e, features));
                }
            }
        }
        match best {
            Some((_, f)) if (EDITION_2023..=EDITION_2024).contains(&edition) => Ok(f),
            _ => Err(EditionsError::Unsupported { edition }),
        }
    }

    /// Reads a serialized `FeatureSet`, each feature it sets replacing this one's.
    pub fn merge(&mut self, bytes: &[u8]) -> Result<(), EditionsError> {
        for f in wire::fields(bytes).map_err(|e| EditionsError::InFeatureSet(Box::new(e)))? {
            if let Field::Varint(n @ 1..=8, v) = f {
                if let Some(slot) = self.values.get_mut(n as usize - 1) {
                    *slot = v as i32;
                }
            }
        }
        Ok(())
    }

    /// This set with `bytes` (a serialized `FeatureSet`) merged over it.
    pub fn with(mut self, bytes: Option<&[u8]>) -> Result<Features, EditionsError> {
        if let Some(bytes) = bytes {
            self.merge(bytes)?;
        }
        Ok(self)
    }

    /// The set serialized as a `FeatureSet` (every feature that is set).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, &v) in self.values.iter().enumerate() {
            if v != 0 {
                out.push((i as u8 + 1) << 3);
                crate::codec::protobuf::varint::put(&mut out, v as i64 as u64);
            }
        }
        out
    }

    fn get(&self, number: usize) -> i32 {
        self.values.get(number - 1).copied().unwrap_or(0)
    }

    /// `field_presence = IMPLICIT`: a singular field at its default is not written, and reads
    /// back as unset.
    pub fn implicit_presence(&self) -> bool {
        self.get(1) == 2
    }

    /// `field_presence = LEGACY_REQUIRED`.
    pub fn legacy_required(&self) -> bool {
        self.get(1) == 3
    }

    /// `enum_type = CLOSED`.
    pub fn closed_enum(&self) -> bool {
        self.get(2) == 2
    }

    /// `repeated_field_encoding = PACKED`.
    pub fn packed(&self) -> bool {
        self.get(3) == 1
    }

    /// `utf8_validation = NONE`: a string field may hold any bytes.
    pub fn utf8_unchecked(&self) -> bool {
        self.get(4) == 3
    }

    /// `message_encoding = DELIMITED`: message fields are written as groups.
    pub fn delimited(&self) -> bool {
        self.get(5) == 2
    }

    /// The features as `name=VALUE` words: those that bear on `scope`, or every one set.
    pub fn describe(&self, scope: Option<Scope>) -> String {
        let shown: &[usize] = match scope {
            Some(Scope::Field) => &[1, 3, 4, 5],
            Some(Scope::Enum) => &[2],
            None => &[1, 2, 3, 4, 5, 6, 7, 8],
        };
        let mut words = Vec::new();
        for &n in shown {
            let v = self.get(n);
            if v == 0 {
                continue;
            }
            let Some((name, values)) = NAMES.get(n - 1) else {
                continue;
            };
            let value = values
                .iter()
                .find(|(k, _)| *k == v)
                .map_or_else(|| v.to_string(), |(_, s)| (*s).to_string());
            words.push(format!("{name}={value}"));
        }
        words.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edition_2023_defaults_are_protocs() {
        let f = Features::defaults(EDITION_2023).expect("2023");
        assert_eq!(
            f.describe(None),
            "field_presence=EXPLICIT enum_type=OPEN repeated_field_encoding=PACKED \
             utf8_validation=VERIFY message_encoding=LENGTH_PREFIXED json_format=ALLOW \
             enforce_naming_style=STYLE_LEGACY default_symbol_visibility=EXPORT_ALL"
        );
        let f = Features::defaults(EDITION_2024).expect("2024");
        assert!(f.describe(None).contains("enforce_naming_style=STYLE2024"));
        assert!(f
            .describe(None)
            .contains("default_symbol_visibility=EXPORT_TOP_LEVEL"));
    }

    #[test]
    fn unknown_editions_are_refused() {
        let err = Features::defaults(1002).expect_err("2026");
        assert_eq!(err, EditionsError::Unsupported { edition: 1002 });
        assert!(
            err.to_string().contains("edition 2026 is not supported"),
            "{err}"
        );
        assert!(Features::defaults(EDITION_PROTO3).is_err());
    }

    #[test]
    fn a_child_set_overrides_its_parent() {
        let parent = Features::defaults(EDITION_2023).expect("2023");
        // field_presence = IMPLICIT (field 1 = 2), message_encoding = DELIMITED (5 = 2).
        let child = parent.with(Some(&[0x08, 0x02, 0x28, 0x02])).expect("merge");
        assert!(child.implicit_presence() && child.delimited());
        assert!(child.packed() && !child.closed_enum());
        let back = Features::default()
            .with(Some(&child.to_bytes()))
            .expect("reads its own bytes");
        assert_eq!(back, child);
    }
}
