//! The proto3 JSON mapping written from the value the schema-guided decoder read (`decode/`):
//! [`proto3_json_of_value`]. `convert` has that value already, so the payload is not read a
//! second time (through prost-reflect's `DynamicMessage`, which holds several times the
//! payload's size for a large one).
//!
//! The text is [`super::to_proto3_json`]'s, byte for byte (a test holds the two together on every
//! payload with a schema among the tests' data, and on payloads joined end to end), except that
//! a map field's entries are written in key order (numbers by value, text by its bytes), where
//! prost-reflect writes them in the order of a `HashMap`, which changes from run to run.
//! `Struct` entries are in key order in both. The value keeps what the wire said, so the
//! reading rules are applied here, as prost-reflect applies them when it reads:
//! - fields in field-number order, then extensions (`[full.name]`) in number order; fields the
//!   schema does not name are left out;
//! - a field without presence (proto3 implicit, or editions' `IMPLICIT`) only when it is not its
//!   default; a field with presence whenever it occurred;
//! - of a scalar that occurs more than once, the last; a message's occurrences merged (their
//!   entries read as one message, at every depth); a repeated field's packed and unpacked runs
//!   joined; a map's entries with the last of each key; of a `oneof`, the member that occurred
//!   last, and only its occurrences after another member's (setting a member clears the others);
//! - 64-bit integers as strings, enums by name (unnamed numbers as numbers;
//!   `google.protobuf.NullValue` as `null`), bytes in base64, non-finite floats as `"NaN"`,
//!   `"Infinity"`, `"-Infinity"` (`null` in a float wrapper, as serde_json writes them);
//! - the well-known types in their JSON forms (`Any` with `"@type"` first; an `Any` of a
//!   well-known type with `"value"`, its packed bytes read here);
//! - with editions in the pool, a field of implicit presence at its default and a closed enum's
//!   unnamed numbers left out, as `to_proto3_json` leaves them (not below an `Any` or an
//!   extension, which prost-reflect reads afresh).
//!
//! Where the value cannot say what prost-reflect would write, this gives `None` and the caller
//! reads the payload the ordinary way (which also reports what prost-reflect refuses):
//! - a field whose wire type contradicts the schema (the decoder keeps it as an unknown field;
//!   prost-reflect refuses the payload);
//! - a string field with `utf8_validation = NONE` read as bytes (the ordinary way repairs it,
//!   with a note);
//! - a well-known type not in its natural form (out of range, odd fields) or occurring more than
//!   once (but for `Struct` and `ListValue`, merged here), an `Any` whose type is not in the pool, a `google.protobuf.Value` that is a map of
//!   only `Value`'s own field names (a `Value` read as a plain message reads the same way as a
//!   struct with those keys), and a non-finite number in a `Value`;
//! - messages nested more than [`MAX_DEPTH`] deep (prost-reflect stops at 100).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use base64::Engine as _;
use prost_reflect::{ExtensionDescriptor, FieldDescriptor, Kind as PKind, MessageDescriptor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::decode::{decode_value, Tables};
use super::field::FieldFacts;
use super::proto3_json::{uses_editions, Proto3JsonOptions};
use super::wkt::{parse_duration, WellKnown};
use super::PerType;
use crate::codec::protobuf::editions;
use crate::codec::DecodeOptions;
use crate::model::Value;

/// How many messages deep the value is written; deeper, [`proto3_json_of_value`] declines.
pub const MAX_DEPTH: usize = 96;

/// The proto3 JSON text of `value`, decoded from a payload as `message` by the schema-guided
/// decoder, as [`super::to_proto3_json`] writes that payload (see the module docs); `None`
/// where the value cannot say it, and the payload should be read the ordinary way.
pub fn proto3_json_of_value(
    value: &Value,
    message: &MessageDescriptor,
    options: Proto3JsonOptions,
) -> Option<String> {
    let mut out = Vec::new();
    Writer::new(message, options)
        .write(value, message, &mut out)
        .then_some(())?;
    String::from_utf8(out).ok()
}

/// A writer of [`proto3_json_of_value`]'s text that keeps each message type's field table
/// from one value to the next (the pieces of one payload).
pub(super) struct Writer {
    proto_names: bool,
    pretty: bool,
    /// Whether the pool has editions files (see [`Message::cleared`]).
    editions: bool,
    tables: std::cell::RefCell<PerType<Table>>,
}

impl Writer {
    /// A writer for values of `message`'s pool.
    pub(super) fn new(message: &MessageDescriptor, options: Proto3JsonOptions) -> Writer {
        Writer {
            proto_names: options.proto_names,
            pretty: options.pretty,
            editions: uses_editions(message),
            tables: std::cell::RefCell::new(PerType::new()),
        }
    }

    /// Appends the text of `value`, a message of type `desc`, to `out`; `false` (and `out` as it
    /// was) where the value cannot say it.
    pub(super) fn write(&self, value: &Value, desc: &MessageDescriptor, out: &mut Vec<u8>) -> bool {
        let parts = [value];
        let root = Message {
            w: self,
            parts: &parts,
            desc,
            cleared: true,
            depth: 0,
        };
        let len = out.len();
        let written = if self.pretty {
            root.serialize(&mut serde_json::Serializer::pretty(&mut *out))
        } else {
            root.serialize(&mut serde_json::Serializer::new(&mut *out))
        };
        if written.is_err() {
            out.truncate(len);
        }
        written.is_ok()
    }

    fn table(&self, desc: &MessageDescriptor) -> Rc<Table> {
        let proto_names = self.proto_names;
        self.tables
            .borrow_mut()
            .get(desc, |d| Table::new(d, proto_names))
    }
}

/// One field of a message type, as the writer needs it.
struct Field {
    desc: FieldDescriptor,
    facts: FieldFacts,
    /// The JSON key: the field's JSON name, or its `.proto` name.
    name: String,
    /// The index of the (real) oneof the field is a member of.
    oneof: Option<usize>,
    /// An editions enum that is closed.
    closed_enum: bool,
    /// The number of the enum value that is the field's default (enum fields).
    enum_default: i32,
}

/// A message type's fields in number order, found by their `.proto` names.
struct Table {
    fields: Vec<Field>,
    by_name: HashMap<String, usize>,
}

impl Table {
    fn new(desc: &MessageDescriptor, proto_names: bool) -> Table {
        let oneofs: Vec<_> = desc.oneofs().filter(|o| !o.is_synthetic()).collect();
        let mut fields: Vec<Field> = desc
            .fields()
            .map(|f| {
                let kind = f.kind();
                let closed_enum = kind
                    .as_enum()
                    .and_then(editions::enum_features)
                    .is_some_and(|x| x.closed_enum());
                let enum_default = match f.default_value() {
                    prost_reflect::Value::EnumNumber(n) => n,
                    _ => 0,
                };
                let oneof = f
                    .containing_oneof()
                    .and_then(|o| oneofs.iter().position(|x| *x == o));
                Field {
                    name: if proto_names { f.name() } else { f.json_name() }.to_string(),
                    facts: FieldFacts::of_field(&f),
                    oneof,
                    closed_enum,
                    enum_default,
                    desc: f,
                }
            })
            .collect();
        fields.sort_by_key(|f| f.facts.number);
        let by_name = fields
            .iter()
            .enumerate()
            .map(|(i, f)| (f.desc.name().to_string(), i))
            .collect();
        Table { fields, by_name }
    }

    fn number(&self, number: u32) -> Option<&Field> {
        self.fields
            .binary_search_by_key(&number, |f| f.facts.number)
            .ok()
            .map(|i| &self.fields[i])
    }
}

fn decline<E: serde::ser::Error>(what: &str) -> E {
    E::custom(what)
}

/// A message value of type `desc`: the values of its occurrences, which merge (their entries
/// read as one message, as protobuf reads the occurrences' bytes end to end).
struct Message<'a> {
    w: &'a Writer,
    parts: &'a [&'a Value],
    desc: &'a MessageDescriptor,
    /// Whether `to_proto3_json` puts this message right for editions (a message read as part of
    /// the payload; not one prost-reflect reads afresh: an `Any`'s content, an extension's value).
    cleared: bool,
    depth: usize,
}

impl Serialize for Message<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.depth > MAX_DEPTH {
            return Err(decline("nested too deep"));
        }
        let Some(wkt) = WellKnown::of(self.desc.full_name()) else {
            let mut entries = Vec::new();
            for part in self.parts {
                let Value::Map(part) = part else {
                    return Err(decline("a message that is not a map"));
                };
                entries.extend(part.iter());
            }
            let mut map = s.serialize_map(None)?;
            self.fields(&mut map, &entries, self.desc, self.cleared)?;
            return map.end();
        };
        let [value] = self.parts else {
            return self.merged(wkt, s);
        };
        match (wkt, *value) {
            (WellKnown::Timestamp, Value::Timestamp(t)) => s.collect_str(&prost_types::Timestamp {
                seconds: t.seconds,
                nanos: i32::try_from(t.nanos).map_err(|_| decline("nanos"))?,
            }),
            (WellKnown::Duration, Value::Text(text)) => {
                let (seconds, nanos) =
                    parse_duration(text).ok_or_else(|| decline("a duration out of range"))?;
                s.collect_str(&prost_types::Duration { seconds, nanos })
            }
            (WellKnown::FieldMask, Value::Text(paths)) => s.serialize_str(&field_mask(paths)?),
            (WellKnown::Empty, Value::Map(_)) => s.serialize_map(Some(0))?.end(),
            (WellKnown::Wrapper, v) => {
                let field = self
                    .desc
                    .get_field(1)
                    .ok_or_else(|| decline("a wrapper without field 1"))?;
                match (field.kind(), v) {
                    // The wrappers write floats as they are: serde_json writes `null` for NaN.
                    (PKind::Float, Value::Float(f)) => s.serialize_f32(f.value as f32),
                    (PKind::Double, Value::Float(f)) => s.serialize_f64(f.value),
                    (_, Value::Map(_)) => Err(decline("a wrapper in its plain form")),
                    (kind, v) => Scalar {
                        value: v,
                        kind: &kind,
                    }
                    .serialize(s),
                }
            }
            (WellKnown::Struct, Value::Map(entries)) => struct_entries(entries, self.depth, s),
            (WellKnown::ListValue, Value::Array(items)) => list_items(items.iter(), self.depth, s),
            (WellKnown::Value, v) => JsonValue {
                value: v,
                depth: self.depth,
            }
            .serialize(s),
            (WellKnown::Any, Value::Map(entries)) => self.any(entries, s),
            _ => Err(decline("a well-known type in its plain form")),
        }
    }
}

impl Message<'_> {
    /// A well-known type that occurs more than once, as protobuf's readers merge it: a
    /// `Struct`'s entries together (the last of each key), a `ListValue`'s items end to end.
    /// Other types are declined: their value does not say which of their fields an occurrence
    /// set (a wrapper or a timestamp at zero reads the same as one without the field), which
    /// the merge needs.
    fn merged<S: Serializer>(&self, wkt: WellKnown, s: S) -> Result<S::Ok, S::Error> {
        match wkt {
            WellKnown::Struct => {
                let mut entries = Vec::new();
                for part in self.parts {
                    let Value::Map(part) = part else {
                        return Err(decline("a Struct in its plain form"));
                    };
                    entries.extend(part.iter());
                }
                struct_entries(entries, self.depth, s)
            }
            WellKnown::ListValue => {
                let mut items = Vec::new();
                for part in self.parts {
                    let Value::Array(part) = part else {
                        return Err(decline("a ListValue in its plain form"));
                    };
                    items.extend(part.iter());
                }
                list_items(items.into_iter(), self.depth, s)
            }
            _ => Err(decline("a well-known type that occurs more than once")),
        }
    }

    /// An `Any` read in its natural form: `"@type"`, then the packed message's fields.
    fn any<S: Serializer>(&self, entries: &[(Value, Value)], s: S) -> Result<S::Ok, S::Error> {
        let Some(((Value::Text(key), Value::Text(url)), rest)) = entries.split_first() else {
            return Err(decline("an Any in its plain form"));
        };
        if key.as_str() != "@type" {
            return Err(decline("an Any in its plain form"));
        }
        let (_, name) = url
            .rsplit_once('/')
            .ok_or_else(|| decline("a type URL without '/'"))?;
        let inner = self
            .desc
            .parent_pool()
            .get_message_by_name(name)
            .ok_or_else(|| decline("an Any of a type not in the pool"))?;
        if WellKnown::of(inner.full_name()).is_some() {
            return self.any_of_well_known(url, rest, &inner, s);
        }
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("@type", url.as_str())?;
        // prost-reflect reads the packed message afresh: editions are not put right in it.
        let rest: Vec<&(Value, Value)> = rest.iter().collect();
        self.fields(&mut map, &rest, &inner, false)?;
        map.end()
    }

    /// An `Any` of a well-known type (the decoder keeps its `"value"` bytes unread): `"@type"`,
    /// then `"value"`, the packed bytes read as `inner` and written in its JSON form, as
    /// prost-reflect writes it. Bytes not in the type's natural form are declined as they are
    /// in a field.
    fn any_of_well_known<S: Serializer>(
        &self,
        url: &str,
        rest: &[(Value, Value)],
        inner: &MessageDescriptor,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let bytes: &[u8] = match rest {
            [] => &[],
            [(Value::Text(key), Value::Bytes(bytes))] if key.as_str() == "value" => bytes,
            _ => return Err(decline("an Any in its plain form")),
        };
        let value = decode_value(bytes, inner, &DecodeOptions::default(), &mut Tables::new())
            .ok_or_else(|| decline("an Any whose value does not read"))?;
        let parts = [&value];
        // prost-reflect reads the packed message afresh: editions are not put right in it.
        let packed = Message {
            w: self.w,
            parts: &parts,
            desc: inner,
            cleared: false,
            depth: self.depth + 1,
        };
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("@type", url)?;
        map.serialize_entry("value", &packed)?;
        map.end()
    }

    /// Writes the fields of `entries`, a message of type `desc`, into `map`.
    fn fields<M: SerializeMap>(
        &self,
        map: &mut M,
        entries: &[&(Value, Value)],
        desc: &MessageDescriptor,
        cleared: bool,
    ) -> Result<(), M::Error> {
        let table = self.w.table(desc);
        let named = Named::of(&table, entries, desc)?;
        let found = &named.fields;
        let oneofs = Oneofs::of(&table, found);
        let mut at = 0;
        while at < found.len() {
            let f = found[at].0;
            let run = found[at..].iter().take_while(|(g, _)| *g == f).count();
            let field = &table.fields[f];
            let Some(from) = oneofs.counted_from(f, field.oneof) else {
                at += run;
                continue;
            };
            let occurrences: Vec<&Value> = found[at..at + run]
                .iter()
                .filter(|&&(_, i)| i >= from)
                .map(|&(_, i)| &entries[i].1)
                .collect();
            at += run;
            let value = FieldValue {
                w: self.w,
                facts: &field.facts,
                occurrences: &occurrences,
                cleared,
                filter_closed: cleared && self.w.editions && field.closed_enum,
                skip_default: !field.desc.supports_presence()
                    || (cleared && self.w.editions && field.facts.implicit),
                enum_default: field.enum_default,
                depth: self.depth,
            };
            if value.is_absent()? {
                continue;
            }
            map.serialize_entry(field.name.as_str(), &value)?;
        }
        self.extensions(map, entries, named)
    }

    /// Writes the extensions among `entries` (as [`Named`] found them) into `map`, in number
    /// order.
    fn extensions<M: SerializeMap>(
        &self,
        map: &mut M,
        entries: &[&(Value, Value)],
        named: Named,
    ) -> Result<(), M::Error> {
        let Named {
            mut extensions,
            extension_types,
            ..
        } = named;
        extensions.sort_by_key(|&(n, _)| n);
        let mut at = 0;
        while at < extensions.len() {
            let n = extensions[at].0;
            let run = extensions[at..].iter().take_while(|(m, _)| *m == n).count();
            let occurrences: Vec<&Value> = extensions[at..at + run]
                .iter()
                .map(|&(_, i)| &entries[i].1)
                .collect();
            at += run;
            let Some((_, ext)) = extension_types.iter().find(|(m, _)| *m == n) else {
                continue;
            };
            let facts = FieldFacts::of_extension(ext);
            // prost-reflect does not put an extension's value right for editions.
            let value = FieldValue {
                w: self.w,
                facts: &facts,
                occurrences: &occurrences,
                cleared: false,
                filter_closed: false,
                skip_default: !ext.supports_presence(),
                enum_default: 0,
                depth: self.depth,
            };
            if value.is_absent()? {
                continue;
            }
            map.serialize_entry(ext.json_name(), &value)?;
        }
        Ok(())
    }
}

/// A message's entries by what the schema says they are.
struct Named {
    /// (field index, entry index) of every entry the schema names, in field order (each
    /// field's in wire order).
    fields: Vec<(usize, usize)>,
    /// (number, entry index) of every extension's entry, in wire order.
    extensions: Vec<(u32, usize)>,
    /// The extensions met, each once, by number.
    extension_types: Vec<(u32, ExtensionDescriptor)>,
}

impl Named {
    /// Sorts `entries`, a message of type `desc` with fields `table`: unknown fields are left
    /// out; an entry the schema does not name, or an unknown field numbered as one the schema
    /// names (its wire type contradicted the schema, which prost-reflect refuses), is declined.
    fn of<E: serde::ser::Error>(
        table: &Table,
        entries: &[&(Value, Value)],
        desc: &MessageDescriptor,
    ) -> Result<Named, E> {
        let mut named = Named {
            fields: Vec::with_capacity(entries.len()),
            extensions: Vec::new(),
            extension_types: Vec::new(),
        };
        for (i, &(key, _)) in entries.iter().enumerate() {
            match key {
                Value::Text(name) => {
                    if let Some(&f) = table.by_name.get(name.as_str()) {
                        named.fields.push((f, i));
                        continue;
                    }
                    let ext = name
                        .strip_prefix('[')
                        .and_then(|n| n.strip_suffix(']'))
                        .and_then(|n| desc.parent_pool().get_extension_by_name(n))
                        .filter(|e| e.containing_message() == *desc)
                        .ok_or_else(|| decline("an entry the schema does not name"))?;
                    named.extensions.push((ext.number(), i));
                    if !named
                        .extension_types
                        .iter()
                        .any(|(n, _)| *n == ext.number())
                    {
                        named.extension_types.push((ext.number(), ext));
                    }
                }
                Value::Int(n) => {
                    let n = u32::try_from(*n).map_err(|_| decline("a field number"))?;
                    if table.number(n).is_some() || desc.get_extension(n).is_some() {
                        return Err(decline("a field whose wire type contradicts the schema"));
                    }
                }
                _ => return Err(decline("an entry key that is not a field")),
            }
        }
        named.fields.sort_by_key(|&(f, _)| f);
        Ok(named)
    }
}

/// Of each oneof, the member that occurred last, and where the last occurrence of any other
/// member is: setting a member clears the others, so only the winner's occurrences after that
/// count.
struct Oneofs {
    /// Per oneof: the winning member's field index and its last entry index.
    last_member: Vec<Option<(usize, usize)>>,
    /// Per oneof: the first entry index that counts for the winner.
    cleared_before: Vec<usize>,
}

impl Oneofs {
    /// The oneofs of `found` ((field index, entry index), as [`Named`] gives them).
    fn of(table: &Table, found: &[(usize, usize)]) -> Oneofs {
        let oneofs = table
            .fields
            .iter()
            .filter_map(|f| f.oneof)
            .max()
            .map_or(0, |o| o + 1);
        let mut last_member: Vec<Option<(usize, usize)>> = vec![None; oneofs];
        for &(f, i) in found {
            if let Some(o) = table.fields[f].oneof {
                if last_member[o].is_none_or(|(_, at)| at < i) {
                    last_member[o] = Some((f, i));
                }
            }
        }
        let mut cleared_before: Vec<usize> = vec![0; oneofs];
        for &(f, i) in found {
            if let Some(o) = table.fields[f].oneof {
                if last_member[o].is_some_and(|(winner, _)| winner != f) {
                    cleared_before[o] = cleared_before[o].max(i + 1);
                }
            }
        }
        Oneofs {
            last_member,
            cleared_before,
        }
    }

    /// The first entry index that counts for field `f`, a member of `oneof` if any: `None` when
    /// another member won.
    fn counted_from(&self, f: usize, oneof: Option<usize>) -> Option<usize> {
        match oneof {
            Some(o) if self.last_member[o].is_some_and(|(winner, _)| winner != f) => None,
            Some(o) => Some(self.cleared_before[o]),
            None => Some(0),
        }
    }
}

/// The occurrences of one field (or extension) in a message, in their wire order.
struct FieldValue<'a> {
    w: &'a Writer,
    facts: &'a FieldFacts,
    occurrences: &'a [&'a Value],
    /// Whether messages in the value are put right for editions.
    cleared: bool,
    /// Leave out the numbers a closed enum does not name.
    filter_closed: bool,
    /// Leave the field out when it holds its default.
    skip_default: bool,
    enum_default: i32,
    /// The depth of the message the field is in.
    depth: usize,
}

impl FieldValue<'_> {
    /// The items of a repeated field, its runs joined (unnamed numbers of a closed enum left
    /// out when [`FieldValue::filter_closed`]).
    fn items<E: serde::ser::Error>(&self) -> Result<Vec<&Value>, E> {
        let mut items = Vec::new();
        for o in self.occurrences {
            let Value::Array(run) = o else {
                return Err(decline("a repeated field that is not an array"));
            };
            items.extend(
                run.iter()
                    .filter(|v| !(self.filter_closed && matches!(v, Value::Int(_)))),
            );
        }
        Ok(items)
    }

    /// A map field's entries, the last of each key, in key order.
    fn entries<E: serde::ser::Error>(&self) -> Result<Vec<(&Value, &Value)>, E> {
        let mut entries = Vec::new();
        for o in self.occurrences {
            let Value::Map(run) = o else {
                return Err(decline("a map field that is not a map"));
            };
            entries.extend(run.iter().map(|(k, v)| (k, v)));
        }
        // Stable: of equal keys, the last stays last, and is the one kept.
        entries.sort_by(|a, b| key_order(a.0, b.0));
        let mut kept: Vec<(&Value, &Value)> = Vec::with_capacity(entries.len());
        for e in entries {
            match kept.last_mut() {
                Some(last) if key_order(last.0, e.0).is_eq() => *last = e,
                _ => kept.push(e),
            }
        }
        Ok(kept)
    }

    /// The values a singular field holds: its last occurrence, or a message's every
    /// occurrence (they merge).
    fn single<E: serde::ser::Error>(&self) -> Result<&[&Value], E> {
        let last = self.occurrences.len().checked_sub(1);
        let last = last.ok_or_else(|| decline("a field without a value"))?;
        if self.facts.kind.as_message().is_some() {
            Ok(self.occurrences)
        } else {
            Ok(&self.occurrences[last..])
        }
    }

    /// Whether prost-reflect leaves the field out: an empty list or map, a default where the
    /// field has no presence, a closed enum's unnamed number.
    fn is_absent<E: serde::ser::Error>(&self) -> Result<bool, E> {
        if self.facts.map {
            let empty = |o: &&Value| matches!(o, Value::Map(m) if m.is_empty());
            return Ok(self.occurrences.iter().all(empty));
        }
        if self.facts.list {
            if self.filter_closed {
                return Ok(self.items::<E>()?.is_empty());
            }
            // Without filtering, no items to gather twice: empty runs are all there is.
            let empty = |o: &&Value| matches!(o, Value::Array(a) if a.is_empty());
            return Ok(self.occurrences.iter().all(empty));
        }
        let [value] = self.single::<E>()? else {
            // A message: present.
            return Ok(false);
        };
        if self.filter_closed && matches!(value, Value::Int(_)) {
            return Ok(true);
        }
        Ok(self.skip_default && is_default(value, &self.facts.kind, self.enum_default))
    }

    fn one<'v>(&'v self, parts: &'v [&'v Value], kind: &'v PKind) -> Item<'v> {
        Item {
            w: self.w,
            parts,
            kind,
            cleared: self.cleared,
            depth: self.depth + 1,
        }
    }
}

impl Serialize for FieldValue<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let kind = &self.facts.kind;
        if self.facts.map {
            let entry = kind
                .as_message()
                .ok_or_else(|| decline("a map without an entry type"))?;
            let value_kind = entry.map_entry_value_field().kind();
            let entries = self.entries()?;
            let mut map = s.serialize_map(Some(entries.len()))?;
            for (k, v) in &entries {
                map.serialize_entry(
                    &map_key(k)?,
                    &self.one(std::slice::from_ref(v), &value_kind),
                )?;
            }
            return map.end();
        }
        if self.facts.list {
            let items = self.items()?;
            let mut seq = s.serialize_seq(Some(items.len()))?;
            for v in &items {
                seq.serialize_element(&self.one(std::slice::from_ref(v), kind))?;
            }
            return seq.end();
        }
        self.one(self.single()?, kind).serialize(s)
    }
}

/// One value of a field of `kind`: a scalar, or a message `depth` messages deep (the values of
/// its occurrences).
struct Item<'a> {
    w: &'a Writer,
    parts: &'a [&'a Value],
    kind: &'a PKind,
    cleared: bool,
    depth: usize,
}

impl Serialize for Item<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.kind {
            PKind::Message(desc) => Message {
                w: self.w,
                parts: self.parts,
                desc,
                cleared: self.cleared,
                depth: self.depth,
            }
            .serialize(s),
            kind => match self.parts {
                [value] => Scalar { value, kind }.serialize(s),
                _ => Err(decline("a scalar without one value")),
            },
        }
    }
}

/// A scalar of `kind`, as prost-reflect writes it in a field.
struct Scalar<'a> {
    value: &'a Value,
    kind: &'a PKind,
}

impl Serialize for Scalar<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let range = |what: &str| decline::<S::Error>(what);
        match (self.kind, self.value) {
            (PKind::Double, Value::Float(f)) if f.value.is_finite() => s.serialize_f64(f.value),
            (PKind::Float, Value::Float(f)) if f.value.is_finite() => {
                s.serialize_f32(f.value as f32)
            }
            (PKind::Double | PKind::Float, Value::Float(f)) => s.serialize_str(non_finite(f.value)),
            (PKind::Int32 | PKind::Sint32 | PKind::Sfixed32, Value::Int(n)) => {
                s.serialize_i32(i32::try_from(*n).map_err(|_| range("int32"))?)
            }
            (PKind::Uint32 | PKind::Fixed32, Value::Int(n)) => {
                s.serialize_u32(u32::try_from(*n).map_err(|_| range("uint32"))?)
            }
            (PKind::Int64 | PKind::Sint64 | PKind::Sfixed64, Value::Int(n)) => {
                s.collect_str(&i64::try_from(*n).map_err(|_| range("int64"))?)
            }
            (PKind::Uint64 | PKind::Fixed64, Value::Int(n)) => {
                s.collect_str(&u64::try_from(*n).map_err(|_| range("uint64"))?)
            }
            (PKind::Bool, Value::Bool(b)) => s.serialize_bool(*b),
            (PKind::String, Value::Text(t)) => s.serialize_str(t),
            (PKind::Bytes, Value::Bytes(b)) => {
                s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(b))
            }
            (PKind::Enum(e), _) if e.full_name() == "google.protobuf.NullValue" => {
                s.serialize_none()
            }
            (PKind::Enum(_), Value::Text(name)) => s.serialize_str(name),
            (PKind::Enum(_), Value::Int(n)) => {
                s.serialize_i32(i32::try_from(*n).map_err(|_| range("enum"))?)
            }
            _ => Err(decline("a value that is not of its field's type")),
        }
    }
}

/// `"NaN"`, `"Infinity"` or `"-Infinity"`.
fn non_finite(x: f64) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

/// Whether `value` is the default of a field of `kind` without presence (zero, false, empty,
/// the enum value numbered `enum_default`), as prost-reflect tells it (`-0.0` is `0.0`).
fn is_default(value: &Value, kind: &PKind, enum_default: i32) -> bool {
    match (kind, value) {
        (PKind::Enum(e), Value::Text(name)) => e
            .get_value_by_name(name)
            .is_some_and(|v| v.number() == enum_default),
        (PKind::Enum(_), Value::Int(n)) => *n == i128::from(enum_default),
        (_, Value::Int(n)) => *n == 0,
        (_, Value::Bool(b)) => !b,
        (_, Value::Float(f)) => f.value == 0.0,
        (_, Value::Text(t)) => t.is_empty(),
        (_, Value::Bytes(b)) => b.is_empty(),
        _ => false,
    }
}

/// The order of map keys: numbers by value, text by its bytes, `false` before `true`.
fn key_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Int(a), Value::Int(b)) => a.cmp(b),
        (Value::Text(a), Value::Text(b)) => a.as_str().cmp(b.as_str()),
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        _ => std::cmp::Ordering::Equal,
    }
}

/// A map key as JSON object keys are: text as it is, numbers and booleans as their text.
fn map_key<E: serde::ser::Error>(key: &Value) -> Result<Cow<'_, str>, E> {
    Ok(match key {
        Value::Text(t) => Cow::Borrowed(t.as_str()),
        Value::Int(n) => Cow::Owned(n.to_string()),
        Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        _ => return Err(decline("a map key that is not a scalar")),
    })
}

/// A field mask's paths (joined by commas) in their JSON form: each part of each path
/// lowerCamelCase, as prost-reflect writes them (a part it could not read back is refused).
fn field_mask<E: serde::ser::Error>(paths: &str) -> Result<String, E> {
    let mut out = String::new();
    if paths.is_empty() {
        return Ok(out);
    }
    for path in paths.split(',') {
        if !out.is_empty() {
            out.push(',');
        }
        for (i, part) in path.split('.').enumerate() {
            if i > 0 {
                out.push('.');
            }
            let mut upper_next = false;
            for c in part.chars() {
                if c.is_ascii_uppercase() {
                    return Err(decline("a field mask path that is not snake_case"));
                }
                if upper_next {
                    let upper = c.to_ascii_uppercase();
                    if upper == c {
                        return Err(decline("a field mask path that is not snake_case"));
                    }
                    out.push(upper);
                    upper_next = false;
                } else if c == '_' {
                    upper_next = true;
                } else {
                    out.push(c);
                }
            }
        }
    }
    Ok(out)
}

/// The names of `google.protobuf.Value`'s fields: a map of only these is declined (it may be
/// a `Value` read as a plain message).
const VALUE_FIELDS: [&str; 6] = [
    "null_value",
    "number_value",
    "string_value",
    "bool_value",
    "struct_value",
    "list_value",
];

/// A `Struct`'s entries (read in their natural form: text keys), in key order, the last of each
/// key; unknown fields left out.
fn struct_entries<'v, S: Serializer>(
    entries: impl IntoIterator<Item = &'v (Value, Value)>,
    depth: usize,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut sorted: BTreeMap<&str, &Value> = BTreeMap::new();
    for (k, v) in entries {
        match k {
            Value::Text(k) => {
                sorted.insert(k.as_str(), v);
            }
            Value::Int(1) => return Err(decline("a Struct entry of another wire type")),
            Value::Int(_) => {}
            _ => return Err(decline("a Struct entry without a text key")),
        }
    }
    let mut map = s.serialize_map(Some(sorted.len()))?;
    for (k, v) in sorted {
        map.serialize_entry(
            k,
            &JsonValue {
                value: v,
                depth: depth + 1,
            },
        )?;
    }
    map.end()
}

/// A `ListValue`'s items.
fn list_items<'v, S: Serializer>(
    items: impl ExactSizeIterator<Item = &'v Value>,
    depth: usize,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(items.len()))?;
    for v in items {
        seq.serialize_element(&JsonValue {
            value: v,
            depth: depth + 1,
        })?;
    }
    seq.end()
}

/// A `google.protobuf.Value` read in its natural form.
struct JsonValue<'a> {
    value: &'a Value,
    depth: usize,
}

impl Serialize for JsonValue<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.depth > MAX_DEPTH {
            return Err(decline("nested too deep"));
        }
        match self.value {
            Value::Null => s.serialize_none(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Float(f) if f.value.is_finite() => s.serialize_f64(f.value),
            Value::Text(t) => s.serialize_str(t),
            Value::Array(items) => list_items(items.iter(), self.depth, s),
            Value::Map(entries) => {
                let plain = entries.iter().all(|(k, _)| match k {
                    Value::Text(k) => VALUE_FIELDS.contains(&k.as_str()),
                    _ => true,
                });
                if plain {
                    return Err(decline("a Value that may be read as a plain message"));
                }
                struct_entries(entries, self.depth, s)
            }
            _ => Err(decline("a Value that is not in its natural form")),
        }
    }
}
