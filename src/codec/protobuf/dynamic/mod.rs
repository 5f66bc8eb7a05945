//! Schema-guided protobuf: decode bytes with a message type into a value with spans
//! (`decode/`), encode a value into a message type (`encode/`), both from one table of what
//! each field is (`field.rs`) and one leaf naming the well-known types and their text forms
//! (`wkt.rs`; each direction reads or writes them in its own `wkt.rs`), and the proto3 JSON
//! mapping (one writer, from the decoded value, `proto3_value.rs`; of a payload's bytes,
//! `proto3_json.rs`; of a large payload piece by piece, `proto3_stream.rs`).

mod decode;
mod encode;
mod field;
mod proto3_json;
mod proto3_stream;
mod proto3_value;
mod wkt;

use std::rc::Rc;

use prost_reflect::MessageDescriptor;

use crate::model::KeyMap;

pub use decode::{decode, decode_counting, DecodeStats};
pub use encode::encode;
pub(crate) use encode::encode_root_in_parts;
pub use proto3_json::{to_proto3_json, Proto3JsonError};
pub use proto3_stream::{to_proto3_json_in_chunks, to_proto3_json_streamed};
pub use proto3_value::{proto3_json_of_value, Proto3Json, Proto3JsonOptions};

/// What one decode or encode works out once per message type (its field table), kept by the
/// type: the first [`PerType::NEAR`] types met are found by comparing descriptors (a pointer and
/// an index), the rest by the type's full name.
struct PerType<T> {
    near: Vec<(MessageDescriptor, Rc<T>)>,
    by_name: KeyMap<String, Rc<T>>,
}

impl<T> PerType<T> {
    /// How many types are found without hashing their names (a payload's messages are usually
    /// of a few types, met again and again).
    const NEAR: usize = 16;

    fn new() -> PerType<T> {
        PerType {
            near: Vec::new(),
            by_name: KeyMap::default(),
        }
    }

    /// The value for `desc`, made by `make` the first time.
    fn get(
        &mut self,
        desc: &MessageDescriptor,
        make: impl FnOnce(&MessageDescriptor) -> T,
    ) -> Rc<T> {
        if let Some((_, t)) = self.near.iter().find(|(d, _)| d == desc) {
            return Rc::clone(t);
        }
        if let Some(t) = self.by_name.get(desc.full_name()) {
            return Rc::clone(t);
        }
        let made = Rc::new(make(desc));
        if self.near.len() < Self::NEAR {
            self.near.push((desc.clone(), Rc::clone(&made)));
        } else {
            self.by_name
                .insert(desc.full_name().to_string(), Rc::clone(&made));
        }
        made
    }
}
