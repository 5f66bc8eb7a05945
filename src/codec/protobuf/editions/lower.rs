//! Lowering an editions `FileDescriptorSet` to proto2 files prost-reflect 0.16 loads.
//!
//! Every element of an editions file gets its features resolved (edition defaults, then file →
//! message → oneof → field, message or file → enum → value; an extension from the scope it is
//! declared in) and written, resolved, into its options' `features`, where
//! [`super::field_features`] reads them back. Then the file is rewritten as proto2 with the same
//! wire behaviour:
//!
//! - `field_presence = LEGACY_REQUIRED` → `LABEL_REQUIRED`;
//! - `message_encoding = DELIMITED` on a message field → `TYPE_GROUP` (not for map entries,
//!   whose values are always length-prefixed, as protoc has it); prost-reflect checks no group
//!   naming, so a delimited field may be named anything;
//! - `repeated_field_encoding` → the `packed` option of each repeated scalar field;
//! - `field_presence = IMPLICIT`, `enum_type` and `utf8_validation` have no proto2 spelling;
//!   they stay in the features only (prost-reflect ignores an enum's closedness either way).
//!
//! The set is read and written with prost-reflect's own `descriptor.proto` (which knows
//! `edition` and `features`), so options it does not know (custom options, language features)
//! pass through as unknown fields.

use std::collections::HashSet;

use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage, Value};

use super::features::{edition_name, Features};
use super::wire::{self, Field};
use super::EditionsError;

/// An editions file of a lowered set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditionFile {
    /// The file's name (`foo/bar.proto`).
    pub name: String,
    /// Its edition (`2023`).
    pub edition: String,
}

/// Field numbers of `FileDescriptorSet.file` and `FileDescriptorProto.syntax`.
const SET_FILE: u32 = 1;
const FILE_SYNTAX: u32 = 12;
const FILE_NAME: u32 = 1;

/// Whether the set holds a file with `syntax = "editions"`, read without decoding it all. A set
/// that does not parse says no (its loader reports why).
pub fn has_editions(set: &[u8]) -> bool {
    let Ok(files) = wire::fields(set) else {
        return false;
    };
    files.iter().any(|f| match f {
        Field::Len(SET_FILE, file) => wire::fields(file).is_ok_and(|fields| {
            fields
                .iter()
                .any(|g| matches!(g, Field::Len(FILE_SYNTAX, b"editions")))
        }),
        _ => false,
    })
}

/// The first file whose `syntax` is none of `proto2`, `proto3` and `editions`: its name and
/// syntax (prost-reflect 0.16 panics describing that error).
pub fn unknown_syntax(set: &[u8]) -> Option<(String, String)> {
    let files = wire::fields(set).ok()?;
    files.iter().find_map(|f| {
        let Field::Len(SET_FILE, file) = f else {
            return None;
        };
        let fields = wire::fields(file).ok()?;
        let text = |n: u32| {
            fields.iter().rev().find_map(|g| match g {
                Field::Len(k, b) if *k == n => Some(String::from_utf8_lossy(b).into_owned()),
                _ => None,
            })
        };
        let syntax = text(FILE_SYNTAX)?;
        (!matches!(syntax.as_str(), "" | "proto2" | "proto3" | "editions"))
            .then(|| (text(FILE_NAME).unwrap_or_default(), syntax))
    })
}

/// The set with every editions file lowered to proto2, and which files those were.
pub fn lower_set(set: &[u8]) -> Result<(Vec<u8>, Vec<EditionFile>), EditionsError> {
    let pool = DescriptorPool::global();
    let set_desc = message(&pool, "google.protobuf.FileDescriptorSet")?;
    let mut set_msg = DynamicMessage::decode(set_desc, set)
        .map_err(|e| EditionsError::NotValidSet(e.to_string()))?;
    let ctx = Context {
        map_entries: map_entries(&set_msg),
        feature_set: message(&pool, "google.protobuf.FeatureSet")?,
    };
    let mut lowered = Vec::new();
    let Some(Value::List(files)) = set_msg.get_field_by_name_mut("file") else {
        return Err(EditionsError::NotASet);
    };
    for file in files.iter_mut() {
        let Value::Message(file) = file else { continue };
        if text(file, "syntax").as_deref() != Some("editions") {
            continue;
        }
        let name = text(file, "name").unwrap_or_default();
        let edition = enum_number(file, "edition");
        lower_file(file, edition, &ctx).map_err(|e| EditionsError::InFile {
            file: name.clone(),
            error: Box::new(e),
        })?;
        lowered.push(EditionFile {
            name,
            edition: edition_name(edition),
        });
    }
    Ok((set_msg.encode_to_vec(), lowered))
}

struct Context {
    /// Full names (`.pkg.Msg.FooEntry`) of the set's map-entry messages.
    map_entries: HashSet<String>,
    feature_set: MessageDescriptor,
}

fn message(pool: &DescriptorPool, name: &str) -> Result<MessageDescriptor, EditionsError> {
    pool.get_message_by_name(name)
        .ok_or_else(|| EditionsError::MissingMessage(name.to_string()))
}

fn lower_file(file: &mut DynamicMessage, edition: i32, ctx: &Context) -> Result<(), EditionsError> {
    let features = Features::defaults(edition)?.with(own_features(file).as_deref())?;
    set_features(file, features, ctx)?;
    for_each(file, "message_type", |m| lower_message(m, features, ctx))?;
    for_each(file, "enum_type", |e| lower_enum(e, features, ctx))?;
    for_each(file, "extension", |f| lower_field(f, features, false, ctx))?;
    file.set_field_by_name("syntax", Value::String("proto2".into()));
    file.clear_field_by_name("edition");
    Ok(())
}

fn lower_message(
    msg: &mut DynamicMessage,
    parent: Features,
    ctx: &Context,
) -> Result<(), EditionsError> {
    let features = parent.with(own_features(msg).as_deref())?;
    set_features(msg, features, ctx)?;
    let map_entry = options_bool(msg, "map_entry");
    // Oneofs first: their fields resolve under them.
    let mut oneofs = Vec::new();
    for_each(msg, "oneof_decl", |o| {
        let f = features.with(own_features(o).as_deref())?;
        set_features(o, f, ctx)?;
        oneofs.push(f);
        Ok(())
    })?;
    for_each(msg, "field", |f| {
        let scope = match f.get_field_by_name("oneof_index").as_deref() {
            Some(Value::I32(i)) if f.has_field_by_name("oneof_index") => oneofs
                .get(usize::try_from(*i).unwrap_or(usize::MAX))
                .copied()
                .unwrap_or(features),
            _ => features,
        };
        lower_field(f, scope, map_entry, ctx)
    })?;
    for_each(msg, "extension", |f| lower_field(f, features, false, ctx))?;
    for_each(msg, "nested_type", |m| lower_message(m, features, ctx))?;
    for_each(msg, "enum_type", |e| lower_enum(e, features, ctx))
}

fn lower_enum(
    e: &mut DynamicMessage,
    parent: Features,
    ctx: &Context,
) -> Result<(), EditionsError> {
    let features = parent.with(own_features(e).as_deref())?;
    set_features(e, features, ctx)?;
    for_each(e, "value", |v| {
        let f = features.with(own_features(v).as_deref())?;
        set_features(v, f, ctx)
    })
}

/// `FieldDescriptorProto.Label` and `.Type` numbers.
const LABEL_OPTIONAL: i32 = 1;
const LABEL_REQUIRED: i32 = 2;
const LABEL_REPEATED: i32 = 3;
const TYPE_STRING: i32 = 9;
const TYPE_GROUP: i32 = 10;
const TYPE_MESSAGE: i32 = 11;
const TYPE_BYTES: i32 = 12;

fn lower_field(
    field: &mut DynamicMessage,
    parent: Features,
    in_map_entry: bool,
    ctx: &Context,
) -> Result<(), EditionsError> {
    let features = parent.with(own_features(field).as_deref())?;
    let label = enum_number(field, "label");
    let ty = enum_number(field, "type");
    if features.legacy_required() && label == LABEL_OPTIONAL {
        field.set_field_by_name("label", Value::EnumNumber(LABEL_REQUIRED));
    }
    let target = text(field, "type_name").unwrap_or_default();
    if ty == TYPE_MESSAGE
        && features.delimited()
        && !in_map_entry
        && !ctx.map_entries.contains(&target)
    {
        field.set_field_by_name("type", Value::EnumNumber(TYPE_GROUP));
    }
    set_features(field, features, ctx)?;
    let packable = !matches!(ty, TYPE_STRING | TYPE_GROUP | TYPE_MESSAGE | TYPE_BYTES);
    if label == LABEL_REPEATED && packable {
        options_mut(field)?.set_field_by_name("packed", Value::Bool(features.packed()));
    }
    Ok(())
}

/// Calls `f` on each message of the repeated field `name`.
fn for_each(
    msg: &mut DynamicMessage,
    name: &str,
    mut f: impl FnMut(&mut DynamicMessage) -> Result<(), EditionsError>,
) -> Result<(), EditionsError> {
    if !msg.has_field_by_name(name) {
        return Ok(());
    }
    if let Some(Value::List(items)) = msg.get_field_by_name_mut(name) {
        for item in items.iter_mut() {
            if let Value::Message(m) = item {
                f(m)?;
            }
        }
    }
    Ok(())
}

fn text(msg: &DynamicMessage, name: &str) -> Option<String> {
    match msg.get_field_by_name(name).as_deref() {
        Some(Value::String(s)) if msg.has_field_by_name(name) => Some(s.clone()),
        _ => None,
    }
}

fn enum_number(msg: &DynamicMessage, name: &str) -> i32 {
    match msg.get_field_by_name(name).as_deref() {
        Some(Value::EnumNumber(n)) => *n,
        _ => 0,
    }
}

/// The element's own `options.features`, serialized, if it sets any.
fn own_features(msg: &DynamicMessage) -> Option<Vec<u8>> {
    if !msg.has_field_by_name("options") {
        return None;
    }
    let options = msg.get_field_by_name("options")?;
    let Value::Message(options) = options.as_ref() else {
        return None;
    };
    if !options.has_field_by_name("features") {
        return None;
    }
    match options.get_field_by_name("features").as_deref() {
        Some(Value::Message(f)) => Some(f.encode_to_vec()),
        _ => None,
    }
}

fn options_bool(msg: &DynamicMessage, name: &str) -> bool {
    if !msg.has_field_by_name("options") {
        return false;
    }
    match msg.get_field_by_name("options").as_deref() {
        Some(Value::Message(o)) => matches!(
            o.get_field_by_name(name).as_deref(),
            Some(Value::Bool(true))
        ),
        _ => false,
    }
}

/// The element's options message, made if it has none.
fn options_mut(msg: &mut DynamicMessage) -> Result<&mut DynamicMessage, EditionsError> {
    let name = msg.descriptor().full_name().to_string();
    match msg.get_field_by_name_mut("options") {
        Some(Value::Message(o)) => Ok(o),
        _ => Err(EditionsError::NoOptions(name)),
    }
}

/// Writes the resolved `features` into the element's options.
fn set_features(
    msg: &mut DynamicMessage,
    features: Features,
    ctx: &Context,
) -> Result<(), EditionsError> {
    let set = DynamicMessage::decode(ctx.feature_set.clone(), features.to_bytes().as_slice())
        .map_err(|e| EditionsError::ResolvedFeatures(e.to_string()))?;
    options_mut(msg)?
        .try_set_field_by_name("features", Value::Message(set))
        .map_err(|e| EditionsError::ResolvedFeatures(e.to_string()))
}

/// The full names of every map-entry message in the set.
fn map_entries(set: &DynamicMessage) -> HashSet<String> {
    fn walk(msg: &DynamicMessage, scope: &str, out: &mut HashSet<String>) {
        let name = text(msg, "name").unwrap_or_default();
        let full = format!("{scope}.{name}");
        if options_bool(msg, "map_entry") {
            out.insert(full.clone());
        }
        if let Some(Value::List(nested)) = msg.get_field_by_name("nested_type").as_deref() {
            for n in nested {
                if let Value::Message(n) = n {
                    walk(n, &full, out);
                }
            }
        }
    }
    let mut out = HashSet::new();
    if let Some(Value::List(files)) = set.get_field_by_name("file").as_deref() {
        for file in files {
            let Value::Message(file) = file else { continue };
            let package = text(file, "package").unwrap_or_default();
            let scope = if package.is_empty() {
                String::new()
            } else {
                format!(".{package}")
            };
            if let Some(Value::List(msgs)) = file.get_field_by_name("message_type").as_deref() {
                for m in msgs {
                    if let Value::Message(m) = m {
                        walk(m, &scope, &mut out);
                    }
                }
            }
        }
    }
    out
}
