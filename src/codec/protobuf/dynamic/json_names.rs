//! A value read with its schema, renamed to the JSON names protoc's `MessageToJson`, Go's
//! `protojson` and gRPC gateways write by default (`startTimeUnixNano` for
//! `start_time_unix_nano`, or the field's explicit `json_name`).
//!
//! The decoded value keeps the `.proto` names, so that paths (`$.resource_spans[0]…`) stay the
//! same in every column and in `--read` patterns; the app's JSON column writes this renamed copy,
//! which has the value's shape node for node, so its spans line up with the shared tree.

use prost_reflect::{FieldDescriptor, Kind as PKind, MessageDescriptor};

use super::wkt::WellKnown;
use crate::model::Value;

/// `value`, a message read as `message`, with every field's key replaced by the field's JSON
/// name, at every depth; `None` when no key changes. Map keys, extensions (`[full.name]`),
/// unknown field numbers and the contents of well-known types (a `Struct`'s keys are the
/// user's) are kept as they are.
pub fn with_json_names(value: &Value, message: &MessageDescriptor) -> Option<Value> {
    if WellKnown::of(message.full_name()).is_some() {
        return None;
    }
    let Value::Map(entries) = value else {
        return None;
    };
    changed(entries, |(key, item)| {
        let Value::Text(name) = key else {
            return None;
        };
        let field = message.get_field_by_name(name)?;
        let renamed_key =
            (field.json_name() != field.name()).then(|| Value::text(field.json_name()));
        let renamed_item = field_value(item, &field);
        if renamed_key.is_none() && renamed_item.is_none() {
            return None;
        }
        Some((
            renamed_key.unwrap_or_else(|| key.clone()),
            renamed_item.unwrap_or_else(|| item.clone()),
        ))
    })
    .map(Value::Map)
}

/// The value of `field` renamed: a message, each message of a repeated field, or each message
/// value of a map field.
fn field_value(value: &Value, field: &FieldDescriptor) -> Option<Value> {
    let PKind::Message(m) = field.kind() else {
        return None;
    };
    match value {
        Value::Map(entries) if field.is_map() => {
            let PKind::Message(inner) = m.map_entry_value_field().kind() else {
                return None;
            };
            changed(entries, |(k, v)| {
                with_json_names(v, &inner).map(|v| (k.clone(), v))
            })
            .map(Value::Map)
        }
        Value::Array(items) if field.is_list() => {
            changed(items, |v| with_json_names(v, &m)).map(Value::Array)
        }
        _ if field.is_map() || field.is_list() => None,
        _ => with_json_names(value, &m),
    }
}

/// `items` with each one that `change` changes replaced; `None` when none changes (nothing is
/// copied until the first change).
fn changed<T: Clone>(items: &[T], change: impl Fn(&T) -> Option<T>) -> Option<Vec<T>> {
    let mut out: Option<Vec<T>> = None;
    for (i, item) in items.iter().enumerate() {
        match (change(item), &mut out) {
            (Some(new), out) => out.get_or_insert_with(|| items[..i].to_vec()).push(new),
            (None, Some(out)) => out.push(item.clone()),
            (None, None) => {}
        }
    }
    out
}
