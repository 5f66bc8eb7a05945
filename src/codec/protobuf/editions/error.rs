//! Why an editions descriptor set could not be lowered, or a set of features read: one error for
//! the editions code, its text what `load schema` shows after "editions descriptor set: ".

use crate::codec::protobuf::varint::VarintError;

use super::features::edition_name;

/// What went wrong reading editions descriptors.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EditionsError {
    /// A tag whose field number does not fit in 32 bits.
    BadTag {
        /// The byte after the tag.
        at: usize,
    },
    /// A varint that does not read.
    BadVarint {
        /// Where it starts.
        at: usize,
        /// `Eof`, `Overflow` or `TooLong`.
        reason: &'static str,
    },
    /// A fixed-width field that runs past the end of the bytes.
    FixedPastEnd,
    /// A length that runs past the end of the bytes.
    LengthPastEnd {
        /// The byte after the length (`None`: inside a group).
        at: Option<usize>,
    },
    /// A wire type protobuf does not have.
    WireType {
        /// The wire type's number.
        wire: u64,
        /// The byte after its tag.
        at: usize,
    },
    /// A wire type protobuf does not have, inside a group.
    WireTypeInGroup {
        /// The wire type's number.
        wire: u64,
        /// The group's field number.
        group: u32,
    },
    /// A group without its end tag.
    GroupNotClosed {
        /// The innermost open group's field number.
        group: u32,
    },
    /// A group whose last field runs past the end of the bytes.
    GroupPastEnd,
    /// An error in protoc's edition defaults (the bytes wirelens ships).
    InDefaults(Box<EditionsError>),
    /// An error in a serialized `FeatureSet`.
    InFeatureSet(Box<EditionsError>),
    /// An edition wirelens has no defaults for.
    Unsupported {
        /// Its `Edition` number.
        edition: i32,
    },
    /// Bytes that are not a `FileDescriptorSet` (prost's words).
    NotValidSet(String),
    /// A message without the `file` list of a `FileDescriptorSet`.
    NotASet,
    /// A message of `descriptor.proto` that prost-reflect's copy does not have (its full name).
    MissingMessage(String),
    /// An element (its descriptor type's full name) without options to write features into.
    NoOptions(String),
    /// Resolved features that do not write into options (prost-reflect's words).
    ResolvedFeatures(String),
    /// An error while lowering one file.
    InFile {
        /// The file's name.
        file: String,
        /// What went wrong in it.
        error: Box<EditionsError>,
    },
}

impl EditionsError {
    /// A varint at `at` that does not read.
    pub(super) fn varint(at: usize, e: VarintError) -> EditionsError {
        let reason = match e {
            VarintError::Eof => "Eof",
            VarintError::Overflow => "Overflow",
            VarintError::TooLong => "TooLong",
        };
        EditionsError::BadVarint { at, reason }
    }
}

impl std::fmt::Display for EditionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditionsError::BadTag { at } => write!(f, "a bad tag at byte {at}"),
            EditionsError::BadVarint { at, reason } => {
                write!(f, "a bad varint at byte {at}: {reason}")
            }
            EditionsError::FixedPastEnd => f.write_str("a fixed-width field runs past the end"),
            EditionsError::LengthPastEnd { at: Some(at) } => {
                write!(f, "a length at byte {at} runs past the end")
            }
            EditionsError::LengthPastEnd { at: None } => f.write_str("a length runs past the end"),
            EditionsError::WireType { wire, at } => write!(f, "wire type {wire} at byte {at}"),
            EditionsError::WireTypeInGroup { wire, group } => {
                write!(f, "wire type {wire} inside group {group}")
            }
            EditionsError::GroupNotClosed { group } => write!(f, "group {group} is not closed"),
            EditionsError::GroupPastEnd => f.write_str("a group runs past the end"),
            EditionsError::InDefaults(e) => write!(f, "edition defaults: {e}"),
            EditionsError::InFeatureSet(e) => write!(f, "a FeatureSet: {e}"),
            EditionsError::Unsupported { edition } => write!(
                f,
                "edition {} is not supported (wirelens knows editions 2023 and 2024)",
                edition_name(*edition)
            ),
            EditionsError::NotValidSet(e) => write!(f, "not a valid FileDescriptorSet: {e}"),
            EditionsError::NotASet => f.write_str("not a FileDescriptorSet"),
            EditionsError::MissingMessage(name) => {
                write!(f, "prost-reflect's descriptor.proto has no {name}")
            }
            EditionsError::NoOptions(name) => write!(f, "{name} has no options"),
            EditionsError::ResolvedFeatures(e) => write!(f, "resolved features: {e}"),
            EditionsError::InFile { file, error } => write!(f, "{file}: {error}"),
        }
    }
}

impl std::error::Error for EditionsError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_what_they_said_as_text() {
        let in_file = EditionsError::InFile {
            file: "a.proto".into(),
            error: Box::new(EditionsError::InFeatureSet(Box::new(
                EditionsError::LengthPastEnd { at: Some(3) },
            ))),
        };
        assert_eq!(
            in_file.to_string(),
            "a.proto: a FeatureSet: a length at byte 3 runs past the end"
        );
        assert_eq!(
            EditionsError::varint(7, VarintError::TooLong).to_string(),
            "a bad varint at byte 7: TooLong"
        );
        assert_eq!(
            EditionsError::Unsupported { edition: 999 }.to_string(),
            "edition proto3 is not supported (wirelens knows editions 2023 and 2024)"
        );
    }
}
