//! The proto3 JSON mapping written from the value the schema-guided decoder read (`decode/`),
//! as protoc's `MessageToJson` writes it: wirelens' one proto3 JSON writer. `convert` has the
//! value already, so the payload is not read a second time ([`proto3_json_of_value`]); a payload
//! read for its JSON alone (`decode_for_json`, by [`super::to_proto3_json`] and the streaming
//! walk) is written by the same [`Writer`].
//!
//! The text is prost-reflect's serializer's, byte for byte, wherever that serializer writes one
//! (the tests hold the two together on every payload with a schema among the tests' data, and
//! on payloads joined end to end, with prost-reflect as their oracle), except that a map field's
//! entries are written in key order (numbers by value, text by its bytes), where prost-reflect
//! writes them in the order of a `HashMap`, which changes from run to run; and that editions are
//! put right below an `Any` and in extensions too, as Python's `MessageToJson` does (see below).
//! `Struct` entries are in key order in both. The value keeps what the wire said, so the
//! reading rules are applied here, as protobuf's runtimes apply them when they read:
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
//!   well-known type with `"value"`, its packed bytes read here), from their natural form or
//!   from their plain message (its occurrences' fields merged, the last of each);
//! - with editions in the pool, a field of implicit presence at its default and a closed enum's
//!   unnamed numbers left out, at every depth, below an `Any` and in extensions too (Python reads
//!   an `Any`'s packed message as its type and keeps a closed enum's unnamed numbers as unknown
//!   fields; prost-reflect, which read them afresh, wrote them);
//! - a string field with `utf8_validation = NONE` whose bytes are not UTF-8 (the decoder reads
//!   it as bytes) as text with U+FFFD for each bad sequence, with a note that names the field by
//!   its JSON path and gives its bytes in base64 (Python writes a Python bytes literal; JSON has
//!   no string that holds those bytes).
//!
//! What has no proto3 JSON form is refused ([`Failure::Refused`], with the JSON path, the field
//! and the steps to find its bytes by), as protoc and prost-reflect refuse it: a `Timestamp` or
//! `Duration` out of range, an `Any` whose type is not in the pool (or whose packed bytes do not
//! read), a field mask path that would not read back, a non-finite number in a
//! `google.protobuf.Value`, messages nested more than [`MAX_DEPTH`] deep.
//!
//! The decoder's ordinary reading keeps some things the JSON needs only as their natural form,
//! so from that value the writer gives [`Failure::Reread`] (and [`proto3_json_of_value`] `None`)
//! for: a well-known type other than `Struct` and `ListValue` in its natural form that occurs
//! more than once (the form does not say which fields each occurrence set, which the merge
//! needs), a `google.protobuf.Value` that is a map of only `Value`'s own field names (a `Value`
//! read as a plain message looks the same as a struct with those keys), and a field kept as an
//! unknown field because its wire type contradicts the schema. The caller then reads the bytes
//! with `decode_for_json`, which reads every well-known type as its plain message and refuses
//! such a field with its offset, and writes that.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use base64::Engine as _;
use prost_reflect::{ExtensionDescriptor, FieldDescriptor, Kind as PKind, MessageDescriptor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::decode::{decode_for_json, Tables};
use super::field::FieldFacts;
use super::wkt::{parse_duration, WellKnown};
use super::PerType;
use crate::codec::protobuf::editions;
use crate::model::Value;

/// How the proto3 JSON is written ([`super::to_proto3_json`], [`proto3_json_of_value`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Proto3JsonOptions {
    /// Field names as written in the `.proto` (`start_time_unix_nano`) instead of their JSON
    /// names (`startTimeUnixNano`, the descriptor's `json_name`), which protoc's
    /// `MessageToJson`, Go's `protojson` and gRPC gateways write by default.
    pub proto_names: bool,
    /// Indented two spaces per level, as `MessageToJson` writes it; compact otherwise.
    pub pretty: bool,
}

/// The JSON text and what it could not say as the payload has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proto3Json {
    /// The JSON.
    pub text: String,
    /// One line per field whose bytes the text does not hold as they are (a string field with
    /// `utf8_validation = NONE` that is not UTF-8), naming the field by its JSON path.
    pub notes: Vec<String>,
}

/// Whether `message`'s pool has files of editions, whose fields of implicit presence at their
/// default and closed enums' unnamed numbers are left out of the JSON.
pub(super) fn uses_editions(message: &MessageDescriptor) -> bool {
    message
        .parent_pool()
        .files()
        .any(|f| editions::file_features(&f).is_some())
}

/// How many messages deep the value is written (a `google.protobuf.Value` in a `Struct` or
/// `ListValue` counts two: the message around it and itself); deeper is refused, with the path,
/// as protobuf's runtimes refuse to read past their recursion limit of 100.
pub const MAX_DEPTH: usize = 100;

/// The proto3 JSON text of `value`, decoded from a payload as `message` by the schema-guided
/// decoder, as [`super::to_proto3_json`] writes that payload (see the module docs); `None`
/// where the value alone cannot say it (the payload is then read again by
/// [`super::to_proto3_json`], which writes it or says why not), or where the text would need a
/// note (a string with `utf8_validation = NONE` that is not UTF-8).
pub fn proto3_json_of_value(
    value: &Value,
    message: &MessageDescriptor,
    options: Proto3JsonOptions,
) -> Option<String> {
    let mut out = Vec::new();
    let notes = Writer::new(message, options)
        .write(value, message, false, &mut out)
        .ok()?;
    if !notes.is_empty() {
        return None;
    }
    String::from_utf8(out).ok()
}

/// Why [`Writer::write`] wrote nothing.
#[derive(Debug)]
pub(super) enum Failure {
    /// The value does not say what the payload holds: a well-known type in its natural form that
    /// occurs more than once (the form does not say which fields each occurrence set), a
    /// `google.protobuf.Value` that may be a plain message, a field kept as unknown because its
    /// wire type contradicts the schema. Reading the payload with `decode_for_json` says it.
    Reread(String),
    /// The payload has no proto3 JSON form.
    Refused(WriteRefusal),
}

/// A payload with no proto3 JSON form: why, and where.
#[derive(Debug)]
pub(super) struct WriteRefusal {
    pub reason: String,
    /// The JSON path of the value (`$.a.b[2]`).
    pub path: String,
    /// The full name of the innermost field on the path, if any.
    pub field: Option<String>,
    /// The fields and items on the path, to find its bytes by (up to a map key or `Struct` key).
    pub steps: Vec<Step>,
}

/// A step of [`WriteRefusal::steps`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// The field or extension numbered so.
    Field(u32),
    /// The item of a repeated field at this index.
    Index(usize),
}

/// A step of the path of the value being written.
#[derive(Clone, Copy)]
enum Seg<'a> {
    Root,
    /// A field or extension: its JSON key, its full name, its number.
    Field {
        key: &'a str,
        full: &'a str,
        number: u32,
    },
    Index(usize),
    /// A map's or a `Struct`'s key.
    Key(&'a Value),
}

/// The path of the value being written, each step on the stack of the one that writes it.
#[derive(Clone, Copy)]
struct At<'a> {
    parent: Option<&'a At<'a>>,
    seg: Seg<'a>,
}

impl<'a> At<'a> {
    const ROOT: At<'static> = At {
        parent: None,
        seg: Seg::Root,
    };

    fn then(&'a self, seg: Seg<'a>) -> At<'a> {
        At {
            parent: Some(self),
            seg,
        }
    }

    /// The steps from the root.
    fn segs(&self) -> Vec<Seg<'a>> {
        let mut segs = vec![self.seg];
        let mut at = self.parent;
        while let Some(a) = at {
            segs.push(a.seg);
            at = a.parent;
        }
        segs.reverse();
        segs
    }

    /// The JSON path, as the notes write it: `$`, `.key`, `[index]`, `["text key"]`.
    fn path(&self) -> String {
        let mut out = String::from("$");
        for seg in self.segs() {
            match seg {
                Seg::Root => {}
                Seg::Field { key, .. } => {
                    out.push('.');
                    out.push_str(key);
                }
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
                Seg::Key(Value::Text(t)) => out.push_str(&format!("[{:?}]", t.as_str())),
                Seg::Key(k) => out.push_str(&format!("[{}]", map_key_text(k))),
            }
        }
        out
    }

    fn refusal(&self, reason: String) -> WriteRefusal {
        let segs = self.segs();
        let field = segs.iter().rev().find_map(|s| match s {
            Seg::Field { full, .. } => Some(full.to_string()),
            _ => None,
        });
        let mut steps = Vec::new();
        for seg in &segs {
            match seg {
                Seg::Root => {}
                Seg::Field { number, .. } => steps.push(Step::Field(*number)),
                Seg::Index(i) => steps.push(Step::Index(*i)),
                Seg::Key(_) => break,
            }
        }
        WriteRefusal {
            reason,
            path: self.path(),
            field,
            steps,
        }
    }
}

/// A map key's text in a path: numbers and booleans as they are.
fn map_key_text(key: &Value) -> String {
    match key {
        Value::Text(t) => t.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => other.summary(24),
    }
}

/// A writer of [`proto3_json_of_value`]'s text that keeps each message type's field table
/// from one value to the next (the pieces of one payload).
pub(super) struct Writer {
    proto_names: bool,
    pretty: bool,
    /// Whether the pool has editions files (see [`Message::cleared`]).
    editions: bool,
    tables: RefCell<PerType<Table>>,
    /// Why the text being written stopped, when it is known.
    failure: RefCell<Option<Failure>>,
    /// The notes of the text being written.
    notes: RefCell<Vec<String>>,
}

impl Writer {
    /// A writer for values of `message`'s pool.
    pub(super) fn new(message: &MessageDescriptor, options: Proto3JsonOptions) -> Writer {
        Writer {
            proto_names: options.proto_names,
            pretty: options.pretty,
            editions: uses_editions(message),
            tables: RefCell::new(PerType::new()),
            failure: RefCell::new(None),
            notes: RefCell::new(Vec::new()),
        }
    }

    /// Appends the text of `value`, a message of type `desc`, to `out`, and gives its notes;
    /// on failure `out` is as it was. `plain` says the value was read by `decode_for_json`
    /// (every well-known type but `Struct` and `ListValue` as its plain message), else by the
    /// decoder's ordinary reading.
    pub(super) fn write(
        &self,
        value: &Value,
        desc: &MessageDescriptor,
        plain: bool,
        out: &mut Vec<u8>,
    ) -> Result<Vec<String>, Failure> {
        self.failure.replace(None);
        self.notes.replace(Vec::new());
        let parts = [value];
        let root = Message {
            w: self,
            parts: &parts,
            desc,
            cleared: true,
            plain,
            depth: 0,
            at: &At::ROOT,
        };
        let len = out.len();
        let written = if self.pretty {
            root.serialize(&mut serde_json::Serializer::pretty(&mut *out))
        } else {
            root.serialize(&mut serde_json::Serializer::new(&mut *out))
        };
        match written {
            Ok(()) => Ok(self.notes.take()),
            Err(e) => {
                out.truncate(len);
                Err(self
                    .failure
                    .take()
                    .unwrap_or_else(|| Failure::Reread(e.to_string())))
            }
        }
    }

    fn table(&self, desc: &MessageDescriptor) -> Rc<Table> {
        let proto_names = self.proto_names;
        self.tables
            .borrow_mut()
            .get(desc, |d| Table::new(d, proto_names))
    }

    /// Records that the payload has no proto3 JSON form, at `at`, and stops the text.
    fn refuse<E: serde::ser::Error>(&self, at: &At<'_>, reason: String) -> E {
        let mut failure = self.failure.borrow_mut();
        if failure.is_none() {
            *failure = Some(Failure::Refused(at.refusal(reason.clone())));
        }
        E::custom(reason)
    }

    /// A string field with `utf8_validation = NONE` at `at` whose bytes are not UTF-8: its text
    /// with U+FFFD for each bad sequence, and a note with its bytes.
    fn repaired<'b>(&self, at: &At<'_>, bytes: &'b [u8]) -> Cow<'b, str> {
        let text = String::from_utf8_lossy(bytes);
        if let Err(e) = std::str::from_utf8(bytes) {
            self.notes.borrow_mut().push(format!(
                "{}: a string field with utf8_validation = NONE holds bytes that are not UTF-8 \
                 (byte {} of {}); JSON text cannot hold them, so it has U+FFFD for each bad \
                 sequence (the bytes in base64: {})",
                at.path(),
                e.valid_up_to(),
                bytes.len(),
                base64::engine::general_purpose::STANDARD.encode(bytes)
            ));
        }
        text
    }
}

/// One field of a message type, as the writer needs it.
struct Field {
    desc: FieldDescriptor,
    facts: FieldFacts,
    /// The JSON key: the field's JSON name, or its `.proto` name.
    name: String,
    /// The `.proto` name: the key of the field's entries in a decoded message.
    proto_name: String,
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
                    proto_name: f.name().to_string(),
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
            .map(|(i, f)| (f.proto_name.clone(), i))
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

/// Stops the text where the value does not say what the payload holds ([`Failure::Reread`]).
fn decline<E: serde::ser::Error>(what: &str) -> E {
    E::custom(what)
}

/// A message value of type `desc`: the values of its occurrences, which merge (their entries
/// read as one message, as protobuf reads the occurrences' bytes end to end).
struct Message<'a> {
    w: &'a Writer,
    parts: &'a [&'a Value],
    desc: &'a MessageDescriptor,
    /// Whether editions are put right in this message (fields of implicit presence at their
    /// default and a closed enum's unnamed numbers left out), as protobuf's runtimes read it.
    cleared: bool,
    /// Read by `decode_for_json`: well-known types as plain messages (see [`Writer::write`]).
    plain: bool,
    depth: usize,
    at: &'a At<'a>,
}

impl Serialize for Message<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.depth > MAX_DEPTH {
            return Err(self.w.refuse(
                self.at,
                format!("messages nested more than {MAX_DEPTH} deep"),
            ));
        }
        if let Some(wkt) = WellKnown::of(self.desc.full_name()) {
            return self.well_known(wkt, s);
        }
        let mut entries = Vec::new();
        for part in self.parts {
            let Value::Map(part) = part else {
                return Err(decline("a message that is not a map"));
            };
            entries.extend(part.iter());
        }
        let mut map = s.serialize_map(None)?;
        self.fields(&mut map, &entries, self.desc, self.cleared, self.plain)?;
        map.end()
    }
}

/// Whether `value` is a well-known type's natural form as the decoder reads it (not its plain
/// message).
fn is_natural(wkt: WellKnown, value: &Value) -> bool {
    match (wkt, value) {
        (WellKnown::Timestamp, Value::Timestamp(_)) => true,
        (WellKnown::Duration | WellKnown::FieldMask, Value::Text(_)) => true,
        (WellKnown::Wrapper, v) => !matches!(v, Value::Map(_)),
        (WellKnown::Any, Value::Map(entries)) => {
            matches!(entries.first(), Some((Value::Text(k), _)) if k.as_str() == "@type")
        }
        _ => false,
    }
}

/// The last entry named `name` (a field's `.proto` name) among a plain message's `entries`.
fn last<'v>(entries: &[&'v (Value, Value)], name: &str) -> Option<&'v Value> {
    entries
        .iter()
        .rev()
        .find(|(k, _)| matches!(k, Value::Text(t) if t.as_str() == name))
        .map(|(_, v)| v)
}

/// A plain message's integer field `name` (0 when absent).
fn int_field<T: TryFrom<i128>, E: serde::ser::Error>(
    entries: &[&(Value, Value)],
    name: &str,
) -> Result<T, E> {
    let n = match last(entries, name) {
        None => 0,
        Some(Value::Int(n)) => *n,
        Some(_) => return Err(decline("a well-known type's field of another type")),
    };
    T::try_from(n).map_err(|_| decline("a well-known type's field out of its type's range"))
}

impl Message<'_> {
    /// A well-known type in its JSON form: from its natural form, or from its occurrences'
    /// plain messages merged (their entries read as one message).
    fn well_known<S: Serializer>(&self, wkt: WellKnown, s: S) -> Result<S::Ok, S::Error> {
        match wkt {
            WellKnown::Struct => return self.merged_struct(s),
            WellKnown::ListValue => return self.merged_list(s),
            WellKnown::Value => {
                return JsonValue {
                    w: self.w,
                    parts: self.parts,
                    depth: self.depth,
                    plain: self.plain,
                    at: self.at,
                }
                .serialize(s)
            }
            _ => {}
        }
        if let [one] = self.parts {
            if is_natural(wkt, one) {
                return self.natural(wkt, one, s);
            }
        }
        let mut entries = Vec::new();
        for part in self.parts {
            match part {
                Value::Map(m) if !is_natural(wkt, part) => entries.extend(m.iter()),
                _ => {
                    return Err(decline(
                        "a well-known type in its natural form that occurs more than once",
                    ))
                }
            }
        }
        self.plain_form(wkt, &entries, s)
    }

    /// A well-known type read in its natural form.
    fn natural<S: Serializer>(
        &self,
        wkt: WellKnown,
        value: &Value,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match (wkt, value) {
            (WellKnown::Timestamp, Value::Timestamp(t)) => {
                let nanos = i32::try_from(t.nanos).map_err(|_| decline("nanos"))?;
                self.timestamp(t.seconds, nanos, s)
            }
            (WellKnown::Duration, Value::Text(text)) => {
                let (seconds, nanos) =
                    parse_duration(text).ok_or_else(|| decline("a duration's text"))?;
                self.duration(seconds, nanos, s)
            }
            (WellKnown::FieldMask, Value::Text(paths)) => {
                let paths: Vec<&str> = if paths.is_empty() {
                    Vec::new()
                } else {
                    paths.split(',').collect()
                };
                s.serialize_str(&self.field_mask(&paths)?)
            }
            (WellKnown::Wrapper, v) => self.wrapper(v, s),
            (WellKnown::Any, Value::Map(entries)) => self.any(entries, s),
            _ => Err(decline("a well-known type in another form")),
        }
    }

    /// A well-known type from its plain message's `entries` (of every occurrence, in order):
    /// the last of each field, as protobuf's runtimes merge them.
    fn plain_form<S: Serializer>(
        &self,
        wkt: WellKnown,
        entries: &[&(Value, Value)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match wkt {
            WellKnown::Timestamp => self.timestamp(
                int_field(entries, "seconds")?,
                int_field(entries, "nanos")?,
                s,
            ),
            WellKnown::Duration => self.duration(
                int_field(entries, "seconds")?,
                int_field(entries, "nanos")?,
                s,
            ),
            WellKnown::FieldMask => {
                let mut paths = Vec::new();
                for (k, v) in entries {
                    match (k, v) {
                        (Value::Text(k), Value::Array(items)) if k.as_str() == "paths" => {
                            for item in items {
                                let Value::Text(p) = item else {
                                    return Err(decline("a field mask path that is not text"));
                                };
                                paths.push(p.as_str());
                            }
                        }
                        (Value::Int(_), _) => {}
                        _ => return Err(decline("a field mask in another form")),
                    }
                }
                s.serialize_str(&self.field_mask(&paths)?)
            }
            WellKnown::Empty => s.serialize_map(Some(0))?.end(),
            WellKnown::Wrapper => {
                let kind = self
                    .desc
                    .get_field(1)
                    .ok_or_else(|| decline("a wrapper without field 1"))?
                    .kind();
                match last(entries, "value") {
                    Some(v) => self.wrapper(v, s),
                    None => self.wrapper(&default_of(&kind), s),
                }
            }
            WellKnown::Any => {
                let url = match last(entries, "type_url") {
                    None => "",
                    Some(Value::Text(t)) => t.as_str(),
                    Some(_) => return Err(decline("an Any's type URL that is not text")),
                };
                let bytes: &[u8] = match last(entries, "value") {
                    None => &[],
                    Some(Value::Bytes(b)) => b,
                    Some(_) => return Err(decline("an Any's value that is not bytes")),
                };
                if url.is_empty() && bytes.is_empty() {
                    // Nothing packed: `{}`, as Python's `MessageToJson` writes it (prost-reflect
                    // refused it for its type URL without '/').
                    return s.serialize_map(Some(0))?.end();
                }
                self.any_of_bytes(url, bytes, s)
            }
            WellKnown::Struct | WellKnown::ListValue | WellKnown::Value => {
                Err(decline("a well-known type in another form"))
            }
        }
    }

    /// A timestamp as RFC 3339 text; refused outside 0001-01-01 to 9999-12-31, as protoc's and
    /// prost-reflect's writers refuse it.
    fn timestamp<S: Serializer>(&self, seconds: i64, nanos: i32, s: S) -> Result<S::Ok, S::Error> {
        if !(-62_135_596_800..=253_402_300_799).contains(&seconds) {
            return Err(self.w.refuse(
                self.at,
                format!(
                    "the google.protobuf.Timestamp of {seconds} s and {nanos} ns is out of \
                     range (0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z)"
                ),
            ));
        }
        s.collect_str(&prost_types::Timestamp { seconds, nanos })
    }

    /// A duration as `"1.5s"`; refused beyond 10,000 years (or nanos beyond a second), as
    /// protoc's and prost-reflect's writers refuse it.
    fn duration<S: Serializer>(&self, seconds: i64, nanos: i32, s: S) -> Result<S::Ok, S::Error> {
        if seconds.unsigned_abs() > 315_576_000_000 || nanos.unsigned_abs() > 999_999_999 {
            return Err(self.w.refuse(
                self.at,
                format!(
                    "the google.protobuf.Duration of {seconds} s and {nanos} ns is out of \
                     range (at most 315576000000 s and 999999999 ns either way)"
                ),
            ));
        }
        s.collect_str(&prost_types::Duration { seconds, nanos })
    }

    /// A field mask's `paths` in their JSON form (each part of each path lowerCamelCase,
    /// joined by commas); refused where a path would not read back.
    fn field_mask<E: serde::ser::Error>(&self, paths: &[&str]) -> Result<String, E> {
        field_mask(paths).map_err(|path| {
            self.w.refuse(
                self.at,
                format!(
                    "the google.protobuf.FieldMask path {path:?} has no JSON form (it is not \
                     lower snake_case, so it would not read back)"
                ),
            )
        })
    }

    /// A wrapper's value `v`.
    fn wrapper<S: Serializer>(&self, v: &Value, s: S) -> Result<S::Ok, S::Error> {
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

    /// `Struct`s' entries together (the last of each key).
    fn merged_struct<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut entries = Vec::new();
        for part in self.parts {
            let Value::Map(part) = part else {
                return Err(decline("a Struct in its plain form"));
            };
            entries.extend(part.iter());
        }
        self.json().struct_entries(entries, s)
    }

    /// `ListValue`s' items end to end.
    fn merged_list<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut items = Vec::new();
        for part in self.parts {
            let Value::Array(part) = part else {
                return Err(decline("a ListValue in its plain form"));
            };
            items.extend(part.iter());
        }
        self.json().list_items(items, s)
    }

    /// This message, a `Struct` or `ListValue`, as the context of the values in it (as if a
    /// `Value` one message up held it).
    fn json(&self) -> JsonValue<'_> {
        JsonValue {
            w: self.w,
            parts: &[],
            depth: self.depth.saturating_sub(1),
            plain: self.plain,
            at: self.at,
        }
    }

    /// The type an `Any`'s `url` names; refused when it has no `/` or the pool has no such
    /// type.
    fn any_type<E: serde::ser::Error>(&self, url: &str) -> Result<MessageDescriptor, E> {
        let Some((_, name)) = url.rsplit_once('/') else {
            return Err(self.w.refuse(
                self.at,
                format!(
                    "the google.protobuf.Any's type URL {url:?} has no '/' before the type name"
                ),
            ));
        };
        self.desc
            .parent_pool()
            .get_message_by_name(name)
            .ok_or_else(|| {
                self.w.refuse(
                    self.at,
                    format!(
                        "the google.protobuf.Any holds a {name}, which the schema does not have \
                         (its proto3 JSON needs the type's fields)"
                    ),
                )
            })
    }

    /// An `Any` read in its natural form: `"@type"`, then the packed message's fields.
    fn any<S: Serializer>(&self, entries: &[(Value, Value)], s: S) -> Result<S::Ok, S::Error> {
        let Some(((_, Value::Text(url)), rest)) = entries.split_first() else {
            return Err(decline("an Any in its plain form"));
        };
        let inner = self.any_type(url)?;
        if WellKnown::of(inner.full_name()).is_some() {
            let bytes: &[u8] = match rest {
                [] => &[],
                [(Value::Text(key), Value::Bytes(bytes))] if key.as_str() == "value" => bytes,
                _ => return Err(decline("an Any in its plain form")),
            };
            return self.any_of_bytes(url, bytes, s);
        }
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("@type", url.as_str())?;
        let rest: Vec<&(Value, Value)> = rest.iter().collect();
        self.fields(&mut map, &rest, &inner, true, self.plain)?;
        map.end()
    }

    /// An `Any` of type `url` whose packed message is `bytes`: `"@type"`, then the message's
    /// fields, or `"value"` and its JSON form for a well-known type. The bytes are read as
    /// protobuf's runtimes read them (refused where they do not read).
    fn any_of_bytes<S: Serializer>(
        &self,
        url: &str,
        bytes: &[u8],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let inner = self.any_type(url)?;
        let value = decode_for_json(bytes, &inner, &mut Tables::new()).map_err(|r| {
            self.w.refuse(
                self.at,
                format!(
                    "the {} packed in the google.protobuf.Any does not read: {} (byte {} of \
                     its value{})",
                    inner.full_name(),
                    r.reason,
                    r.offset,
                    r.field.map(|f| format!(", field {f}")).unwrap_or_default()
                ),
            )
        })?;
        let parts = [&value];
        let value_at = self.at.then(Seg::Field {
            key: "value",
            full: "google.protobuf.Any.value",
            number: 2,
        });
        let packed = Message {
            w: self.w,
            parts: &parts,
            desc: &inner,
            cleared: true,
            plain: true,
            depth: self.depth + 1,
            at: &value_at,
        };
        if WellKnown::of(inner.full_name()).is_some() {
            let mut map = s.serialize_map(Some(2))?;
            map.serialize_entry("@type", url)?;
            map.serialize_entry("value", &packed)?;
            return map.end();
        }
        let Value::Map(fields) = &value else {
            return Err(decline("a packed message that is not a map"));
        };
        let fields: Vec<&(Value, Value)> = fields.iter().collect();
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("@type", url)?;
        packed.fields(&mut map, &fields, &inner, true, true)?;
        map.end()
    }

    /// Writes the fields of `entries`, a message of type `desc`, into `map`.
    fn fields<M: SerializeMap>(
        &self,
        map: &mut M,
        entries: &[&(Value, Value)],
        desc: &MessageDescriptor,
        cleared: bool,
        plain: bool,
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
            let field_at = self.at.then(Seg::Field {
                key: &field.name,
                full: field.desc.full_name(),
                number: field.facts.number,
            });
            let value = FieldValue {
                w: self.w,
                facts: &field.facts,
                occurrences: &occurrences,
                cleared,
                plain,
                filter_closed: cleared && self.w.editions && field.closed_enum,
                skip_default: !field.desc.supports_presence()
                    || (cleared && self.w.editions && field.facts.implicit),
                enum_default: field.enum_default,
                depth: self.depth,
                at: &field_at,
            };
            if value.is_absent()? {
                continue;
            }
            map.serialize_entry(field.name.as_str(), &value)?;
        }
        self.extensions(map, entries, named, cleared, plain)
    }

    /// Writes the extensions among `entries` (as [`Named`] found them) into `map`, in number
    /// order.
    fn extensions<M: SerializeMap>(
        &self,
        map: &mut M,
        entries: &[&(Value, Value)],
        named: Named,
        cleared: bool,
        plain: bool,
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
            let closed_enum = ext
                .kind()
                .as_enum()
                .and_then(editions::enum_features)
                .is_some_and(|x| x.closed_enum());
            let key = ext.json_name();
            let ext_at = self.at.then(Seg::Field {
                key,
                full: ext.full_name(),
                number: n,
            });
            let value = FieldValue {
                w: self.w,
                facts: &facts,
                occurrences: &occurrences,
                cleared,
                plain,
                filter_closed: cleared && self.w.editions && closed_enum,
                skip_default: !ext.supports_presence(),
                enum_default: 0,
                depth: self.depth,
                at: &ext_at,
            };
            if value.is_absent()? {
                continue;
            }
            map.serialize_entry(key, &value)?;
        }
        Ok(())
    }
}

/// The default of a wrapper's value of `kind`.
fn default_of(kind: &PKind) -> Value {
    match kind {
        PKind::Bool => Value::Bool(false),
        PKind::Float | PKind::Double => Value::f64(0.0),
        PKind::String => Value::text(""),
        PKind::Bytes => Value::Bytes(Vec::new()),
        _ => Value::Int(0),
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
        // The field of the entry before: a decoded message's entries come in wire order, which
        // is mostly number order, so the field of an entry is mostly that one (a repeated
        // field) or the next, compared byte for byte before the names are looked up.
        let mut last = 0;
        for (i, &(key, _)) in entries.iter().enumerate() {
            match key {
                Value::Text(name) => {
                    let is = |f: &usize| {
                        table
                            .fields
                            .get(*f)
                            .is_some_and(|field| field.proto_name.as_bytes() == name.as_bytes())
                    };
                    let field = [last, last + 1]
                        .into_iter()
                        .find(is)
                        .or_else(|| table.by_name.get(name.as_str()).copied());
                    if let Some(f) = field {
                        last = f;
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
    /// Read by `decode_for_json` (see [`Message::plain`]).
    plain: bool,
    /// Leave out the numbers a closed enum does not name.
    filter_closed: bool,
    /// Leave the field out when it holds its default.
    skip_default: bool,
    enum_default: i32,
    /// The depth of the message the field is in.
    depth: usize,
    /// The field's path.
    at: &'a At<'a>,
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

    fn one<'v>(&'v self, parts: &'v [&'v Value], kind: &'v PKind, at: &'v At<'v>) -> Item<'v> {
        Item {
            w: self.w,
            parts,
            kind,
            cleared: self.cleared,
            plain: self.plain,
            loose_utf8: self.facts.loose_utf8,
            depth: self.depth + 1,
            at,
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
            // The decoder reads a map's string value as bytes only under utf8_validation =
            // NONE, so the value says it (no features looked up for every map written).
            let loose_utf8 = matches!(value_kind, PKind::String);
            let entries = self.entries()?;
            let mut map = s.serialize_map(Some(entries.len()))?;
            for (k, v) in &entries {
                let at = self.at.then(Seg::Key(k));
                let item = Item {
                    loose_utf8,
                    ..self.one(std::slice::from_ref(v), &value_kind, &at)
                };
                map.serialize_entry(&map_key(k)?, &item)?;
            }
            return map.end();
        }
        if self.facts.list {
            let items = self.items()?;
            let mut seq = s.serialize_seq(Some(items.len()))?;
            for (i, v) in items.iter().enumerate() {
                let at = self.at.then(Seg::Index(i));
                seq.serialize_element(&self.one(std::slice::from_ref(v), kind, &at))?;
            }
            return seq.end();
        }
        self.one(self.single()?, kind, self.at).serialize(s)
    }
}

/// One value of a field of `kind`: a scalar, or a message `depth` messages deep (the values of
/// its occurrences).
struct Item<'a> {
    w: &'a Writer,
    parts: &'a [&'a Value],
    kind: &'a PKind,
    cleared: bool,
    plain: bool,
    /// A string with `utf8_validation = NONE` (bytes that are not UTF-8 are repaired, with a
    /// note).
    loose_utf8: bool,
    depth: usize,
    at: &'a At<'a>,
}

impl Serialize for Item<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (self.kind, self.parts) {
            (PKind::Message(desc), parts) => Message {
                w: self.w,
                parts,
                desc,
                cleared: self.cleared,
                plain: self.plain,
                depth: self.depth,
                at: self.at,
            }
            .serialize(s),
            (PKind::String, [Value::Bytes(b)]) if self.loose_utf8 => {
                s.serialize_str(&self.w.repaired(self.at, b))
            }
            (kind, [value]) => Scalar { value, kind }.serialize(s),
            _ => Err(decline("a scalar without one value")),
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

/// A field mask's `paths` in their JSON form: each part of each path lowerCamelCase, joined by
/// commas, as prost-reflect writes them; `Err` with the first path that would not read back.
fn field_mask<'p>(paths: &[&'p str]) -> Result<String, &'p str> {
    let mut out = String::new();
    for path in paths {
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
                    return Err(path);
                }
                if upper_next {
                    let upper = c.to_ascii_uppercase();
                    if upper == c {
                        return Err(path);
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

/// The names of `google.protobuf.Value`'s fields: read by the decoder's ordinary reading, a map
/// of only these may be a `Value` read as a plain message.
const VALUE_FIELDS: [&str; 6] = [
    "null_value",
    "number_value",
    "string_value",
    "bool_value",
    "struct_value",
    "list_value",
];

/// A `google.protobuf.Value` (the values of its occurrences), or the context of a `Struct` or a
/// `ListValue` (no parts) `depth` messages deep.
struct JsonValue<'a> {
    w: &'a Writer,
    parts: &'a [&'a Value],
    depth: usize,
    /// Read by `decode_for_json`: a `Value` is its plain message.
    plain: bool,
    at: &'a At<'a>,
}

/// What a `google.protobuf.Value` holds, its occurrences merged.
enum Held<'v> {
    Null,
    Number(f64),
    Text(&'v str),
    Bool(bool),
    Struct(Vec<&'v (Value, Value)>),
    List(Vec<&'v Value>),
}

impl<'a> JsonValue<'a> {
    /// A value in this one's `Struct` or `ListValue`, at `at`: two messages deeper.
    fn nested<'b>(&'b self, parts: &'b [&'b Value], at: &'b At<'b>) -> JsonValue<'b> {
        JsonValue {
            w: self.w,
            parts,
            depth: self.depth + 2,
            plain: self.plain,
            at,
        }
    }

    /// A `Struct`'s entries (text keys), in key order, the last of each key; unknown fields
    /// left out.
    fn struct_entries<'v, S: Serializer>(
        &self,
        entries: impl IntoIterator<Item = &'v (Value, Value)>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut sorted: BTreeMap<&str, (&Value, &Value)> = BTreeMap::new();
        for (k, v) in entries {
            match k {
                Value::Text(text) => {
                    sorted.insert(text.as_str(), (k, v));
                }
                Value::Int(1) => return Err(decline("a Struct entry of another wire type")),
                Value::Int(_) => {}
                _ => return Err(decline("a Struct entry without a text key")),
            }
        }
        let mut map = s.serialize_map(Some(sorted.len()))?;
        for (k, (key, v)) in sorted {
            let at = self.at.then(Seg::Key(key));
            map.serialize_entry(k, &self.nested(&[v], &at))?;
        }
        map.end()
    }

    /// A `ListValue`'s items.
    fn list_items<S: Serializer>(&self, items: Vec<&Value>, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(items.len()))?;
        for (i, v) in items.into_iter().enumerate() {
            let at = self.at.then(Seg::Index(i));
            seq.serialize_element(&self.nested(&[v], &at))?;
        }
        seq.end()
    }

    /// What the plain messages of the parts hold: the member set last, a `Struct` or
    /// `ListValue` member merged with the same member right before it (as protobuf merges a
    /// oneof's message member).
    fn held(&self) -> Result<Held<'a>, serde_json::Error> {
        let mut held = Held::Null;
        for part in self.parts {
            let entries = match part {
                Value::Map(entries) => entries,
                // A `Struct` entry without its value.
                Value::Null => continue,
                _ => return Err(decline("a Value in another form")),
            };
            for (k, v) in entries {
                let Value::Text(k) = k else {
                    continue;
                };
                held = match (k.as_str(), v, held) {
                    ("null_value", _, _) => Held::Null,
                    ("number_value", Value::Float(f), _) => Held::Number(f.value),
                    ("string_value", Value::Text(t), _) => Held::Text(t.as_str()),
                    ("bool_value", Value::Bool(b), _) => Held::Bool(*b),
                    ("struct_value", Value::Map(m), Held::Struct(mut before)) => {
                        before.extend(m.iter());
                        Held::Struct(before)
                    }
                    ("struct_value", Value::Map(m), _) => Held::Struct(m.iter().collect()),
                    ("list_value", Value::Array(a), Held::List(mut before)) => {
                        before.extend(a.iter());
                        Held::List(before)
                    }
                    ("list_value", Value::Array(a), _) => Held::List(a.iter().collect()),
                    _ => return Err(decline("a Value's member of another type")),
                };
            }
        }
        Ok(held)
    }

    /// What a `Value` read in its natural form holds.
    fn natural(&self) -> Result<Held<'a>, serde_json::Error> {
        let [value] = self.parts else {
            return Err(decline(
                "a Value in its natural form that occurs more than once",
            ));
        };
        Ok(match value {
            Value::Null => Held::Null,
            Value::Bool(b) => Held::Bool(*b),
            Value::Float(f) => Held::Number(f.value),
            Value::Text(t) => Held::Text(t.as_str()),
            Value::Array(items) => Held::List(items.iter().collect()),
            Value::Map(entries) => {
                let plain = entries.iter().all(|(k, _)| match k {
                    Value::Text(k) => VALUE_FIELDS.contains(&k.as_str()),
                    _ => true,
                });
                if plain {
                    return Err(decline("a Value that may be read as a plain message"));
                }
                Held::Struct(entries.iter().collect())
            }
            _ => return Err(decline("a Value that is not in its natural form")),
        })
    }
}

impl Serialize for JsonValue<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.depth > MAX_DEPTH {
            return Err(self.w.refuse(
                self.at,
                format!("messages nested more than {MAX_DEPTH} deep"),
            ));
        }
        let held = if self.plain {
            self.held()
        } else {
            self.natural()
        };
        match held.map_err(|e| decline::<S::Error>(&e.to_string()))? {
            Held::Null => s.serialize_none(),
            Held::Bool(b) => s.serialize_bool(b),
            Held::Number(n) if n.is_finite() => s.serialize_f64(n),
            Held::Number(n) => Err(self.w.refuse(
                self.at,
                format!(
                    "a google.protobuf.Value holds the number {}, which JSON cannot write",
                    non_finite(n)
                ),
            )),
            Held::Text(t) => s.serialize_str(t),
            Held::Struct(entries) => self.struct_entries(entries, s),
            Held::List(items) => self.list_items(items, s),
        }
    }
}
