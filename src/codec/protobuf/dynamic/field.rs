//! What the decoder and the encoder both need to know of a field or an extension, read from its
//! descriptor (and its editions features) once per message type: one table for both
//! directions.

use prost_reflect::{ExtensionDescriptor, FieldDescriptor, Kind as PKind};

use crate::codec::protobuf::editions;

/// A field's facts (see the module docs).
pub(super) struct FieldFacts {
    pub number: u32,
    pub kind: PKind,
    pub list: bool,
    pub map: bool,
    pub packed: bool,
    pub group: bool,
    pub presence: bool,
    /// No presence because of editions' `field_presence = IMPLICIT` (rather than proto3).
    pub implicit: bool,
    /// A string field with editions' `utf8_validation = NONE`: bytes that are not UTF-8 are
    /// read as bytes, and bytes are written as they are.
    pub loose_utf8: bool,
}

impl FieldFacts {
    pub fn of_field(f: &FieldDescriptor) -> FieldFacts {
        let presence = editions::has_presence(f);
        FieldFacts {
            number: f.number(),
            kind: f.kind(),
            list: f.is_list(),
            map: f.is_map(),
            packed: f.is_packed(),
            group: f.is_group(),
            presence,
            implicit: f.supports_presence() && !presence,
            loose_utf8: matches!(f.kind(), PKind::String)
                && editions::field_features(f).is_some_and(|x| x.utf8_unchecked()),
        }
    }

    pub fn of_extension(e: &ExtensionDescriptor) -> FieldFacts {
        FieldFacts {
            number: e.number(),
            kind: e.kind(),
            list: e.is_list(),
            map: e.is_map(),
            packed: e.is_packed(),
            group: e.is_group(),
            presence: e.supports_presence(),
            implicit: false,
            loose_utf8: matches!(e.kind(), PKind::String)
                && editions::extension_features(e).is_some_and(|x| x.utf8_unchecked()),
        }
    }
}
