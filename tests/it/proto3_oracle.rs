//! The test oracle for wirelens' proto3 JSON writer: prost-reflect's serializer, as `convert`
//! used it before wirelens wrote every payload itself (`DynamicMessage::decode`, then
//! `serialize_with_options`), with the fix-ups for editions prost-reflect does not know (fields
//! of implicit presence at their default and a closed enum's unnamed numbers left out, strings
//! with `utf8_validation = NONE` that are not UTF-8 repaired with a note). Tests hold the writer
//! to this text wherever prost-reflect writes one.

use std::collections::HashSet;

use base64::Engine as _;
use prost::Message as _;
use prost_reflect::ReflectMessage as _;
use prost_reflect::{
    DescriptorPool, DynamicMessage, Kind as PKind, MapKey, MessageDescriptor, Value as PValue,
};
use prost_types::field_descriptor_proto::Type as ProtoType;
use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorSet};

use wirelens::codec::protobuf::dynamic::{Proto3Json, Proto3JsonOptions};
use wirelens::codec::protobuf::editions;

/// prost-reflect's proto3 JSON of `bytes` read as `message`, or its error's text.
pub fn oracle_proto3_json(
    bytes: &[u8],
    message: &MessageDescriptor,
    options: Proto3JsonOptions,
) -> Result<Proto3Json, String> {
    let mut notes = Vec::new();
    let mut msg = match DynamicMessage::decode(message.clone(), bytes) {
        Ok(msg) => msg,
        Err(e) => match unchecked_strings_repaired(bytes, message, options, &mut notes) {
            Some(msg) => msg,
            None => return Err(format!("cannot decode {}: {e}", message.full_name())),
        },
    };
    if uses_editions(message) {
        clear_implicit_defaults(&mut msg);
    }
    let mut out = Vec::new();
    write_json(&msg, options, &mut out)
        .map_err(|e| format!("cannot write {} as JSON: {e}", message.full_name()))?;
    let text = String::from_utf8(out).map_err(|e| e.to_string())?;
    Ok(Proto3Json { text, notes })
}

/// Writes `msg` as proto3 JSON into `out`, as `options` say: prost-reflect's serializer, every
/// field with a value, none with its default.
pub fn write_json(
    msg: &DynamicMessage,
    options: Proto3JsonOptions,
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    let serialize =
        prost_reflect::SerializeOptions::new().use_proto_field_name(options.proto_names);
    if options.pretty {
        msg.serialize_with_options(&mut serde_json::Serializer::pretty(out), &serialize)
    } else {
        msg.serialize_with_options(&mut serde_json::Serializer::new(out), &serialize)
    }
}

/// Whether `message`'s pool has files of editions, whose messages prost-reflect reads as proto2
/// ([`clear_implicit_defaults`] puts them right).
pub fn uses_editions(message: &MessageDescriptor) -> bool {
    message
        .parent_pool()
        .files()
        .any(|f| editions::file_features(&f).is_some())
}

/// Unsets the fields of editions' implicit presence that hold their default (prost-reflect sees
/// them as proto2 fields, which have presence), and drops the numbers a closed editions enum
/// does not name (protobuf's runtimes keep those as unknown fields, which JSON does not show),
/// so the JSON is what `MessageToJson` writes; messages inside are walked too.
///
/// As protobuf's runtimes (Python's `MessageToJson`) do, and prost-reflect does not: also in an
/// `Any`'s packed message (read as its type, put right and packed again) and in extensions'
/// values (a closed enum's unnamed numbers left out).
pub fn clear_implicit_defaults(msg: &mut DynamicMessage) {
    if msg.descriptor().full_name() == "google.protobuf.Any" {
        clear_in_any(msg);
        return;
    }
    let mut unset_ext = Vec::new();
    for (ext, value) in msg.extensions_mut() {
        let closed = ext
            .kind()
            .as_enum()
            .and_then(editions::enum_features)
            .is_some_and(|f| f.closed_enum());
        match value {
            PValue::Message(m) => clear_implicit_defaults(m),
            PValue::List(items) => {
                for item in items.iter_mut() {
                    if let PValue::Message(m) = item {
                        clear_implicit_defaults(m);
                    }
                }
                if closed {
                    let e = ext.kind().as_enum().cloned();
                    items.retain(|v| match (v, &e) {
                        (PValue::EnumNumber(n), Some(e)) => e.get_value(*n).is_some(),
                        _ => true,
                    });
                    if items.is_empty() {
                        unset_ext.push(ext.clone());
                    }
                }
            }
            PValue::EnumNumber(n)
                if closed
                    && ext
                        .kind()
                        .as_enum()
                        .is_some_and(|e| e.get_value(*n).is_none()) =>
            {
                unset_ext.push(ext.clone());
            }
            _ => {}
        }
    }
    for ext in unset_ext {
        msg.clear_extension(&ext);
    }
    let mut unset = Vec::new();
    for (field, value) in msg.fields_mut() {
        match &mut *value {
            PValue::Message(m) => clear_implicit_defaults(m),
            PValue::List(items) => {
                for item in items {
                    if let PValue::Message(m) = item {
                        clear_implicit_defaults(m);
                    }
                }
            }
            PValue::Map(map) => {
                for v in map.values_mut() {
                    if let PValue::Message(m) = v {
                        clear_implicit_defaults(m);
                    }
                }
            }
            v => {
                if field.supports_presence()
                    && !editions::has_presence(&field)
                    && v.is_default_for_field(&field)
                {
                    unset.push(field.clone());
                }
            }
        }
        if let Some(e) = field.kind().as_enum() {
            let closed = editions::enum_features(e).is_some_and(|f| f.closed_enum());
            let named = |v: &PValue| match v {
                PValue::EnumNumber(n) => e.get_value(*n).is_some(),
                _ => true,
            };
            match &mut *value {
                PValue::List(items) if closed => {
                    items.retain(named);
                    if items.is_empty() {
                        unset.push(field.clone());
                    }
                }
                v if closed && !named(v) => unset.push(field.clone()),
                _ => {}
            }
        }
    }
    for field in unset {
        msg.clear_field(&field);
    }
}

/// An `Any`'s packed message read as its type (when the pool has it), put right for editions
/// and packed again.
fn clear_in_any(any: &mut DynamicMessage) {
    let url = match any.get_field_by_number(1).as_deref() {
        Some(PValue::String(url)) => url.clone(),
        _ => return,
    };
    let bytes = match any.get_field_by_number(2).as_deref() {
        Some(PValue::Bytes(b)) => b.clone(),
        _ => return,
    };
    let Some(desc) = url
        .rsplit_once('/')
        .and_then(|(_, name)| any.descriptor().parent_pool().get_message_by_name(name))
    else {
        return;
    };
    let Ok(mut inner) = DynamicMessage::decode(desc, bytes.as_ref()) else {
        return;
    };
    clear_implicit_defaults(&mut inner);
    any.set_field_by_number(2, PValue::Bytes(inner.encode_to_vec().into()));
}

/// The string fields of a pool with `utf8_validation = NONE`.
#[derive(Default)]
struct UncheckedStrings {
    /// (containing message's full name, field number); a map's value field included, its key
    /// not (a map key cannot be bytes).
    fields: HashSet<(String, u32)>,
    /// Extensions by full name.
    extensions: HashSet<String>,
}

impl UncheckedStrings {
    fn of(pool: &DescriptorPool) -> UncheckedStrings {
        let mut found = UncheckedStrings::default();
        for m in pool.all_messages() {
            for f in m.fields() {
                let unchecked = matches!(f.kind(), PKind::String)
                    && !(m.is_map_entry() && f.number() == 1)
                    && editions::field_features(&f).is_some_and(|x| x.utf8_unchecked());
                if unchecked {
                    found.fields.insert((m.full_name().to_string(), f.number()));
                }
            }
        }
        for e in pool.all_extensions() {
            if matches!(e.kind(), PKind::String)
                && editions::extension_features(&e).is_some_and(|x| x.utf8_unchecked())
            {
                found.extensions.insert(e.full_name().to_string());
            }
        }
        found
    }

    fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.extensions.is_empty()
    }

    fn field(&self, message: &str, number: u32) -> bool {
        self.fields.contains(&(message.to_string(), number))
    }
}

/// `bytes` read as `message` when its `utf8_validation = NONE` strings are not UTF-8: read with a
/// copy of the pool in which those fields are bytes, each bad string made text with U+FFFD (a
/// note for each, in `notes`), and read again with the real type. `None` when the pool has no
/// such field or the payload fails for another reason.
fn unchecked_strings_repaired(
    bytes: &[u8],
    message: &MessageDescriptor,
    options: Proto3JsonOptions,
    notes: &mut Vec<String>,
) -> Option<DynamicMessage> {
    let pool = message.parent_pool();
    let unchecked = UncheckedStrings::of(pool);
    if unchecked.is_empty() {
        return None;
    }
    let mut files: Vec<_> = pool.file_descriptor_protos().cloned().collect();
    for file in &mut files {
        let package = file.package().to_string();
        for m in &mut file.message_type {
            strings_as_bytes(m, &package, &unchecked);
        }
        for e in &mut file.extension {
            extension_as_bytes(e, &package, &unchecked);
        }
    }
    let loose = DescriptorPool::from_file_descriptor_set(FileDescriptorSet { file: files }).ok()?;
    let mut read =
        DynamicMessage::decode(loose.get_message_by_name(message.full_name())?, bytes).ok()?;
    let mut walk = Repair {
        unchecked: &unchecked,
        proto_names: options.proto_names,
        notes,
    };
    walk.message(&mut read, "$");
    DynamicMessage::decode(message.clone(), read.encode_to_vec().as_slice()).ok()
}

fn scoped(scope: &str, name: &str) -> String {
    if scope.is_empty() {
        name.to_string()
    } else {
        format!("{scope}.{name}")
    }
}

fn strings_as_bytes(m: &mut DescriptorProto, scope: &str, unchecked: &UncheckedStrings) {
    let full = scoped(scope, m.name());
    for f in &mut m.field {
        if unchecked.field(&full, f.number() as u32) {
            f.set_type(ProtoType::Bytes);
        }
    }
    for e in &mut m.extension {
        extension_as_bytes(e, &full, unchecked);
    }
    for n in &mut m.nested_type {
        strings_as_bytes(n, &full, unchecked);
    }
}

fn extension_as_bytes(e: &mut FieldDescriptorProto, scope: &str, unchecked: &UncheckedStrings) {
    if unchecked.extensions.contains(&scoped(scope, e.name())) {
        e.set_type(ProtoType::Bytes);
    }
}

/// Makes each unchecked string of a message read with the loose pool valid UTF-8.
struct Repair<'a> {
    unchecked: &'a UncheckedStrings,
    proto_names: bool,
    notes: &'a mut Vec<String>,
}

impl Repair<'_> {
    fn message(&mut self, msg: &mut DynamicMessage, path: &str) {
        let desc = msg.descriptor();
        for (field, value) in msg.fields_mut() {
            let name = if self.proto_names {
                field.name()
            } else {
                field.json_name()
            };
            let map_value = field
                .kind()
                .as_message()
                .filter(|e| e.is_map_entry())
                .is_some_and(|e| self.unchecked.field(e.full_name(), 2));
            let unchecked = map_value || self.unchecked.field(desc.full_name(), field.number());
            self.value(value, unchecked, &format!("{path}.{name}"));
        }
        for (ext, value) in msg.extensions_mut() {
            let unchecked = self.unchecked.extensions.contains(ext.full_name());
            self.value(value, unchecked, &format!("{path}.[{}]", ext.full_name()));
        }
    }

    fn value(&mut self, value: &mut PValue, unchecked: bool, path: &str) {
        match value {
            PValue::Bytes(b) if unchecked => {
                if let Err(e) = std::str::from_utf8(b) {
                    self.notes.push(format!(
                        "{path}: a string field with utf8_validation = NONE holds bytes that are \
                         not UTF-8 (byte {} of {}); JSON text cannot hold them, so it has U+FFFD \
                         for each bad sequence (the bytes in base64: {})",
                        e.valid_up_to(),
                        b.len(),
                        base64::engine::general_purpose::STANDARD.encode(&b[..])
                    ));
                    *b = String::from_utf8_lossy(b).into_owned().into_bytes().into();
                }
            }
            PValue::Message(m) => self.message(m, path),
            PValue::List(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    self.value(item, unchecked, &format!("{path}[{i}]"));
                }
            }
            PValue::Map(map) => {
                for (k, v) in map.iter_mut() {
                    let key = match k {
                        MapKey::String(s) => format!("{s:?}"),
                        MapKey::Bool(b) => b.to_string(),
                        MapKey::I32(n) => n.to_string(),
                        MapKey::I64(n) => n.to_string(),
                        MapKey::U32(n) => n.to_string(),
                        MapKey::U64(n) => n.to_string(),
                    };
                    self.value(v, unchecked, &format!("{path}[{key}]"));
                }
            }
            _ => {}
        }
    }
}

/// wirelens' `to_proto3_json` of `bytes` against the oracle, as `options` say: the same text
/// (maps in key order on both sides: prost-reflect lists a map as its `HashMap` does) and the
/// same notes where the oracle writes, an error where it fails. The oracle's result.
pub fn writer_is_oracle(
    name: &str,
    bytes: &[u8],
    message: &MessageDescriptor,
    options: Proto3JsonOptions,
) -> Result<Proto3Json, String> {
    let oracle = oracle_proto3_json(bytes, message, options);
    let ours = wirelens::codec::protobuf::dynamic::to_proto3_json(bytes, message, options);
    match (&oracle, ours) {
        (Ok(want), Ok(got)) => {
            let sorted = |t: &str| crate::protobuf_stream::maps_sorted(t, message);
            assert_eq!(sorted(&got.text), sorted(&want.text), "{name}: {options:?}");
            let mut notes = (got.notes, want.notes.clone());
            notes.0.sort();
            notes.1.sort();
            assert_eq!(notes.0, notes.1, "{name}: notes");
        }
        (Ok(want), Err(e)) => panic!(
            "{name}: prost-reflect wrote {} where wirelens fails: {e}",
            want.text
        ),
        (Err(e), Ok(got)) => panic!(
            "{name}: wirelens wrote {} where prost-reflect fails: {e}",
            got.text
        ),
        (Err(_), Err(_)) => {}
    }
    oracle
}
