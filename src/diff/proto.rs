//! What a protobuf schema says about the values under a path, so that the forms the proto3 JSON
//! mapping gives a value compare equal to the value itself.
//!
//! The mapping writes 64-bit integers as JSON strings (`"9007199254740993"`), accepts every
//! integer as a string, writes `NaN` and the infinities of `float` and `double` fields as
//! strings, enums by name (or number), `google.protobuf.Timestamp` as RFC 3339 text and field
//! names in lowerCamelCase (`userId` for `user_id`). A [`Ctx`] follows the walk down both
//! values (a message's entries, a repeated field's items, a map field's values) and puts a value
//! in its canonical form ([`Ctx::normalize`]) and a key in its field's name ([`Ctx::key`]).
//!
//! What it leaves alone: bytes against base64 text, which the diff reports as a change of type
//! with a note (JSON has no byte strings, and text that happens to be valid base64 is common),
//! and anything at a path the schema does not name.

use prost_reflect::{FieldDescriptor, Kind as PKind, MessageDescriptor};

use crate::model::{Float, Timestamp, Value};

/// Where the walk is in the schema.
#[derive(Debug, Clone, Default)]
pub(crate) enum Ctx {
    /// No schema, or a path it does not name.
    #[default]
    None,
    /// A value of this message type (its entries are fields).
    Message(MessageDescriptor),
    /// One value of this field (a singular field, an item of a repeated field or a map value).
    Field(FieldDescriptor),
    /// A repeated field's array.
    List(FieldDescriptor),
    /// A map field's map (keys of the entry's key type, values of its value type).
    Map(FieldDescriptor),
}

/// What sort of scalar a context holds, for [`Ctx::normalize`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scalar {
    Integer,
    Float,
    Timestamp,
}

/// The context of one value of `field`.
fn singular(field: FieldDescriptor) -> Ctx {
    match field.kind() {
        PKind::Message(m) => Ctx::Message(m),
        _ => Ctx::Field(field),
    }
}

fn integer_kind(kind: &PKind) -> bool {
    matches!(
        kind,
        PKind::Int32
            | PKind::Int64
            | PKind::Uint32
            | PKind::Uint64
            | PKind::Sint32
            | PKind::Sint64
            | PKind::Fixed32
            | PKind::Fixed64
            | PKind::Sfixed32
            | PKind::Sfixed64
    )
}

impl Ctx {
    /// The context at the root of a document read as `message`.
    pub(crate) fn root(message: Option<&MessageDescriptor>) -> Ctx {
        message.map_or(Ctx::None, |m| Ctx::Message(m.clone()))
    }

    /// Whether there is a schema here at all (the walk skips the work when not).
    pub(crate) fn is_none(&self) -> bool {
        matches!(self, Ctx::None)
    }

    /// The field a message's key names, by its name or its JSON name.
    fn field(message: &MessageDescriptor, key: &Value) -> Option<FieldDescriptor> {
        let name = key.as_str()?;
        message
            .get_field_by_name(name)
            .or_else(|| message.get_field_by_json_name(name))
    }

    /// The context of the value under `key` of a map in this context.
    pub(crate) fn entry(&self, key: &Value) -> Ctx {
        match self {
            Ctx::Message(m) => match Ctx::field(m, key) {
                Some(f) if f.is_map() => Ctx::Map(f),
                Some(f) if f.is_list() => Ctx::List(f),
                Some(f) => singular(f),
                None => Ctx::None,
            },
            Ctx::Map(f) => match f.kind() {
                PKind::Message(entry) if entry.is_map_entry() => {
                    singular(entry.map_entry_value_field())
                }
                _ => Ctx::None,
            },
            _ => Ctx::None,
        }
    }

    /// The context of an item of an array in this context.
    pub(crate) fn item(&self) -> Ctx {
        match self {
            Ctx::List(f) => singular(f.clone()),
            _ => Ctx::None,
        }
    }

    /// A map key in its canonical form: a message's key as its field's name (`userId` and
    /// `user_id` are one field), a map field's key as its key type (`"5"` is `5` for
    /// `map<int64, …>`, `"true"` is `true` for `map<bool, …>`). `None`: the key as it is.
    pub(crate) fn key(&self, key: &Value) -> Option<Value> {
        match self {
            Ctx::Message(m) => Ctx::field(m, key).map(|f| Value::text(f.name())),
            Ctx::Map(f) => {
                let PKind::Message(entry) = f.kind() else {
                    return None;
                };
                if !entry.is_map_entry() {
                    return None;
                }
                let kind = entry.map_entry_key_field().kind();
                let text = key.as_str()?;
                if integer_kind(&kind) {
                    text.parse::<i128>().ok().map(Value::Int)
                } else if kind == PKind::Bool {
                    match text {
                        "true" => Some(Value::Bool(true)),
                        "false" => Some(Value::Bool(false)),
                        _ => None,
                    }
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn scalar(&self) -> Option<Scalar> {
        match self {
            Ctx::Field(f) => {
                let kind = f.kind();
                if integer_kind(&kind) {
                    Some(Scalar::Integer)
                } else if matches!(kind, PKind::Float | PKind::Double) {
                    Some(Scalar::Float)
                } else {
                    None
                }
            }
            Ctx::Message(m) => match m.full_name() {
                "google.protobuf.Int64Value"
                | "google.protobuf.UInt64Value"
                | "google.protobuf.Int32Value"
                | "google.protobuf.UInt32Value" => Some(Scalar::Integer),
                "google.protobuf.DoubleValue" | "google.protobuf.FloatValue" => Some(Scalar::Float),
                "google.protobuf.Timestamp" => Some(Scalar::Timestamp),
                _ => None,
            },
            _ => None,
        }
    }

    /// `v` in the form the schema gives its field when the proto3 JSON mapping wrote it another
    /// way, with the name of that way: an integer written as text, a float written as an
    /// integer or as `"NaN"`, an enum written as its number, a timestamp written as RFC 3339
    /// text. `None`: `v` is already in its canonical form, or the schema says nothing here.
    pub(crate) fn normalize(&self, v: &Value) -> Option<(Value, &'static str)> {
        if let (Ctx::Field(f), Value::Int(n)) = (self, v) {
            if let PKind::Enum(e) = f.kind() {
                let number = i32::try_from(*n).ok()?;
                let name = e.get_value(number)?.name().to_string();
                return Some((Value::Text(name.into()), "enums as numbers"));
            }
        }
        match (self.scalar()?, v) {
            (Scalar::Integer, Value::Text(t)) => {
                let n = t.parse::<i128>().ok()?;
                Some((Value::int(n), "integers as JSON text"))
            }
            (Scalar::Float, Value::Int(n)) => {
                Some((Value::Float(Float::f64(*n as f64)), "floats as integers"))
            }
            (Scalar::Float, Value::Text(t)) => {
                let f = match t.as_str() {
                    "NaN" => f64::NAN,
                    "Infinity" => f64::INFINITY,
                    "-Infinity" => f64::NEG_INFINITY,
                    _ => return None,
                };
                Some((Value::Float(Float::f64(f)), "floats as JSON text"))
            }
            (Scalar::Timestamp, Value::Text(t)) => Timestamp::parse_rfc3339(t)
                .map(|ts| (Value::Timestamp(ts), "timestamps as RFC 3339 text")),
            _ => None,
        }
    }
}
