//! Protobuf editions (`edition = "2023"`, `"2024"`), which prost-reflect 0.16 and protox 0.10
//! do not know: an editions descriptor set is lowered to proto2 files with the same wire
//! behaviour ([`lower_set`]), with each element's resolved features kept in its options, and
//! editions `.proto` text is compiled by the protoc that the `protoc-bin-vendored` crate ships
//! ([`protoc`]).
//!
//! Once lowered, prost-reflect sees an editions file as proto2; what proto2 cannot say is read
//! back from the features by the decoder and encoder: a field with `field_presence = IMPLICIT`
//! has no presence (its default is not written, as in proto3), and a string field with
//! `utf8_validation = NONE` may hold bytes that are not UTF-8 (they are read as bytes).
//!
//! A closed enum's unnamed numbers are left out of proto3 JSON, as protobuf's runtimes (which
//! keep them as unknown fields) leave them out; in the decoded value they stay integers, as for
//! every enum (see [`super::dynamic`]). Language features (`pb.cpp`, `pb.java`, …) are kept as
//! they are but not read.

mod error;
mod features;
mod lower;
pub mod protoc;
mod wire;

pub use error::EditionsError;
pub use features::{edition_name, Features, Scope};
pub use lower::{has_editions, lower_set, unknown_syntax, EditionFile};

use prost::Message;
use prost_reflect::{EnumDescriptor, ExtensionDescriptor, FieldDescriptor, FileDescriptor};

/// `features` field numbers of the options messages.
const FILE_OPTIONS_FEATURES: u32 = 50;
const FIELD_OPTIONS_FEATURES: u32 = 21;
const ENUM_OPTIONS_FEATURES: u32 = 7;

/// The resolved features of a field of a lowered editions file (`None` for proto2 and proto3
/// files).
pub fn field_features(field: &FieldDescriptor) -> Option<Features> {
    file_features(&field.parent_file())?;
    features_in(&field.options().encode_to_vec(), FIELD_OPTIONS_FEATURES)
}

/// The resolved features of an extension declared in a lowered editions file.
pub fn extension_features(ext: &ExtensionDescriptor) -> Option<Features> {
    file_features(&ext.parent_file())?;
    features_in(&ext.options().encode_to_vec(), FIELD_OPTIONS_FEATURES)
}

/// The resolved features of an enum of a lowered editions file.
pub fn enum_features(e: &EnumDescriptor) -> Option<Features> {
    file_features(&e.parent_file())?;
    features_in(&e.options().encode_to_vec(), ENUM_OPTIONS_FEATURES)
}

/// The resolved file-level features of a lowered editions file.
pub fn file_features(file: &FileDescriptor) -> Option<Features> {
    // Lowered files are proto2 with features; a native editions file never reaches the pool.
    if file.syntax() != prost_reflect::Syntax::Proto2 {
        return None;
    }
    // A file without options cannot have been lowered (lowering writes `features`).
    file.file_descriptor_proto().options.as_ref()?;
    // Decoding a file's options for every field of every message type a decode meets would
    // cost more than the decode of a small message: the last 16 files asked about are kept
    // (with their pools, so at most 16 pools per thread outlive their schema).
    thread_local! {
        static SEEN: std::cell::RefCell<Vec<(FileDescriptor, Option<Features>)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    const KEPT: usize = 16;
    if let Some(found) = SEEN.with(|seen| {
        seen.borrow()
            .iter()
            .find(|(f, _)| f == file)
            .map(|(_, features)| *features)
    }) {
        return found;
    }
    let features = features_in(&file.options().encode_to_vec(), FILE_OPTIONS_FEATURES);
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        if seen.len() >= KEPT {
            seen.remove(0);
        }
        seen.push((file.clone(), features));
    });
    features
}

/// The `FeatureSet` at field `number` of serialized options.
fn features_in(options: &[u8], number: u32) -> Option<Features> {
    let fields = wire::fields(options).ok()?;
    let bytes = fields.iter().rev().find_map(|f| match f {
        wire::Field::Len(n, b) if *n == number => Some(*b),
        _ => None,
    })?;
    Features::default().with(Some(bytes)).ok()
}

/// Whether a field has explicit presence once its editions features are taken into account:
/// prost-reflect's `supports_presence`, except that `field_presence = IMPLICIT` (outside a
/// oneof) has none.
pub fn has_presence(field: &FieldDescriptor) -> bool {
    if !field.supports_presence() {
        return false;
    }
    // A oneof member or a message field always has presence, whatever the file says.
    if field.containing_oneof().is_some() || field.kind().as_message().is_some() {
        return true;
    }
    !field_features(field).is_some_and(|f| f.implicit_presence())
}
