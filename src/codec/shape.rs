//! Observing a value: what kinds of data appear at each position, merged over every record.
//!
//! A [`Shape`] counts what was seen at one position of the payload (one field of all the objects
//! that share a shape, or all the items of an array). Objects keep one [`Shape`] per key, in the
//! order keys first appeared; arrays keep one merged [`Shape`] for all their items. Nothing here
//! decides a type: the schema inferrers (protobuf's and Avro's) do, once everything has been
//! seen. The naming rules both share (a key's type name, a list's item name) live here too.

use std::collections::HashMap;

use crate::model::{FloatWidth, Value};

/// Whether `text` is a UUID in its canonical form: 32 hex digits in groups of 8-4-4-4-12.
pub(crate) fn is_uuid(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// `text` as an RFC 3339 timestamp, when it is one (`2024-05-01T12:00:00Z`, with an offset or
/// fractional seconds); a cheap look at its first bytes rules most text out.
pub(crate) fn looks_like_timestamp(text: &str) -> Option<crate::model::Timestamp> {
    let b = text.as_bytes();
    let shaped = b.len() >= 20
        && b.len() <= 40
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ');
    if !shaped {
        return None;
    }
    crate::model::Timestamp::parse_rfc3339(text)
}

/// Statistics about the integers seen at one position.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ints {
    /// How many integers.
    pub count: u64,
    /// How many of them were negative.
    pub negatives: u64,
    /// Smallest seen.
    pub min: i128,
    /// Largest seen.
    pub max: i128,
    /// Whether any was beyond `i128` (a big integer).
    pub huge: bool,
}

/// What was seen at one position of the payload.
#[derive(Debug, Clone, Default)]
pub(crate) struct Shape {
    /// Nulls (and CBOR undefined).
    pub nulls: u64,
    /// Booleans.
    pub bools: u64,
    /// Integers.
    pub ints: Ints,
    /// Binary floats.
    pub floats: u64,
    /// Whether every float seen survives float32 (see [`float32_safe`]).
    pub floats_f32: bool,
    /// Decimal literals no float64 holds exactly.
    pub decimals: u64,
    /// Text.
    pub texts: u64,
    /// Texts that are UUIDs in their canonical 8-4-4-4-12 hex form.
    pub uuid_texts: u64,
    /// Texts that are RFC 3339 timestamps.
    pub timestamp_texts: u64,
    /// Whether such a text had digits past the microsecond.
    pub timestamp_text_nanos: bool,
    /// Byte strings (also MessagePack ext data and raw protobuf fields).
    pub bytes: u64,
    /// Timestamps.
    pub timestamps: u64,
    /// Whether a timestamp had digits past the microsecond.
    pub timestamp_nanos: bool,
    /// Objects, with their keys' shapes.
    pub object: Option<Box<ObjShape>>,
    /// Arrays, with their items' merged shape.
    pub array: Option<Box<ArrShape>>,
}

/// The merged shape of every object seen at one position.
#[derive(Debug, Clone, Default)]
pub(crate) struct ObjShape {
    /// How many objects.
    pub records: u64,
    /// One entry per distinct key, in order of first appearance.
    pub fields: Vec<FieldShape>,
    /// Index into `fields` by key identity.
    index: HashMap<KeyId, usize>,
}

/// One key of an object shape.
#[derive(Debug, Clone)]
pub(crate) struct FieldShape {
    /// The key as it was written.
    pub key: Value,
    /// How many objects held it (an object that repeats the key counts once).
    pub seen: u64,
    /// What its values were.
    pub shape: Shape,
    /// The `records` count of the last object that held it, so a repeat is not counted twice.
    last_record: u64,
}

/// The merged shape of every array seen at one position.
#[derive(Debug, Clone, Default)]
pub(crate) struct ArrShape {
    /// How many arrays.
    pub count: u64,
    /// The items of all of them, merged.
    pub items: Shape,
}

/// How keys are told apart: text by its content, any other key by its debug form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyId {
    Text(String),
    Other(String),
}

fn key_id(key: &Value) -> KeyId {
    match key.untagged() {
        Value::Text(s) => KeyId::Text(s.to_string()),
        other => KeyId::Other(format!("{other:?}")),
    }
}

/// Kinds of data a shape can hold, for deciding whether a position is homogeneous.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Category {
    Bool,
    /// Integers only.
    Int,
    /// Floats or decimals, possibly mixed with integers.
    Number,
    Text,
    Bytes,
    Timestamp,
    Object,
    Array,
}

/// Whether a float can be declared `float` without changing it: a float32 (or float16) in the
/// source, or a float64 that a float32 holds exactly *and* whose shortest float32 text reads back
/// as the same float64 — so both the binary value and its JSON text survive.
pub(crate) fn float32_safe(value: f64, width: FloatWidth) -> bool {
    match width {
        FloatWidth::F16 | FloatWidth::F32 => true,
        FloatWidth::F64 => {
            if !value.is_finite() {
                return true;
            }
            if !FloatWidth::F32.holds(value) {
                return false;
            }
            let text = format!("{}", value as f32);
            text.parse::<f64>().ok() == Some(value)
        }
    }
}

impl Shape {
    /// A shape that has seen nothing (floats count as float32-safe until one is not).
    pub fn new() -> Shape {
        Shape {
            floats_f32: true,
            ..Shape::default()
        }
    }

    /// Records one value at this position.
    pub fn observe(&mut self, value: &Value) {
        match value.untagged() {
            Value::Null | Value::Undefined => self.nulls += 1,
            Value::Bool(_) => self.bools += 1,
            Value::Int(n) => self.observe_int(*n, false),
            Value::Simple(n) => self.observe_int(i128::from(*n), false),
            Value::BigInt(n) => {
                let negative = n.sign() == num_bigint::Sign::Minus;
                self.observe_int(if negative { -1 } else { 0 }, true);
            }
            Value::Float(f) => {
                self.floats += 1;
                if !float32_safe(f.value, f.width) {
                    self.floats_f32 = false;
                }
            }
            Value::Decimal(_) => self.decimals += 1,
            Value::Text(t) => {
                self.texts += 1;
                // By length first: a UUID has 36 bytes, a timestamp 20 to 40, and a short text
                // kept in place is checked as UTF-8 each time it is read as a `str`.
                let len = t.len();
                if len == 36 && is_uuid(t) {
                    self.uuid_texts += 1;
                } else if let Some(ts) = (20..=40)
                    .contains(&len)
                    .then(|| looks_like_timestamp(t))
                    .flatten()
                {
                    self.timestamp_texts += 1;
                    self.timestamp_text_nanos |= ts.nanos % 1_000 != 0;
                }
            }
            Value::Bytes(_) | Value::Ext(_, _) | Value::Raw(_) => self.bytes += 1,
            Value::Timestamp(t) => {
                self.timestamps += 1;
                self.timestamp_nanos |= t.nanos % 1_000 != 0;
            }
            Value::Array(items) => {
                let arr = self.array.get_or_insert_with(|| {
                    Box::new(ArrShape {
                        count: 0,
                        items: Shape::new(),
                    })
                });
                arr.count += 1;
                for item in items {
                    arr.items.observe(item);
                }
            }
            Value::Map(entries) => {
                let obj = self.object.get_or_insert_with(Box::default);
                obj.records += 1;
                // Objects at one position mostly list their keys in one order: each key is
                // looked for first just after the one before it.
                let mut next = 0;
                for (key, value) in entries {
                    let i = obj.held_at(key, next);
                    next = i + 1;
                    obj.fields[i].shape.observe(value);
                }
            }
            Value::Tag(_, _) => {
                // `untagged` never returns a tag.
            }
        }
    }

    fn observe_int(&mut self, n: i128, huge: bool) {
        let ints = &mut self.ints;
        if ints.count == 0 {
            ints.min = n;
            ints.max = n;
        } else {
            ints.min = ints.min.min(n);
            ints.max = ints.max.max(n);
        }
        ints.count += 1;
        if n < 0 {
            ints.negatives += 1;
        }
        ints.huge |= huge;
    }

    /// Adds everything `other` saw to this shape.
    pub fn merge(&mut self, other: &Shape) {
        self.nulls += other.nulls;
        self.bools += other.bools;
        if other.ints.count > 0 {
            if self.ints.count == 0 {
                self.ints = other.ints.clone();
            } else {
                self.ints.min = self.ints.min.min(other.ints.min);
                self.ints.max = self.ints.max.max(other.ints.max);
                self.ints.count += other.ints.count;
                self.ints.negatives += other.ints.negatives;
                self.ints.huge |= other.ints.huge;
            }
        }
        self.floats += other.floats;
        self.floats_f32 &= other.floats_f32;
        self.decimals += other.decimals;
        self.texts += other.texts;
        self.bytes += other.bytes;
        self.uuid_texts += other.uuid_texts;
        self.timestamp_texts += other.timestamp_texts;
        self.timestamp_text_nanos |= other.timestamp_text_nanos;
        self.timestamps += other.timestamps;
        self.timestamp_nanos |= other.timestamp_nanos;
        if let Some(theirs) = &other.array {
            match &mut self.array {
                Some(mine) => {
                    mine.count += theirs.count;
                    mine.items.merge(&theirs.items);
                }
                None => self.array = Some(theirs.clone()),
            }
        }
        if let Some(theirs) = &other.object {
            match &mut self.object {
                Some(mine) => mine.merge(theirs),
                None => self.object = Some(theirs.clone()),
            }
        }
    }

    /// The kinds of non-null data seen (integers and floats together count as one `Number`).
    pub fn categories(&self) -> Vec<Category> {
        let mut out = Vec::new();
        if self.bools > 0 {
            out.push(Category::Bool);
        }
        if self.floats > 0 || self.decimals > 0 {
            out.push(Category::Number);
        } else if self.ints.count > 0 {
            out.push(Category::Int);
        }
        if self.texts > 0 {
            out.push(Category::Text);
        }
        if self.bytes > 0 {
            out.push(Category::Bytes);
        }
        if self.timestamps > 0 {
            out.push(Category::Timestamp);
        }
        if self.object.is_some() {
            out.push(Category::Object);
        }
        if self.array.is_some() {
            out.push(Category::Array);
        }
        out
    }
}

impl ObjShape {
    pub(crate) fn field_mut(&mut self, key: &Value) -> &mut FieldShape {
        let i = self.index_of(key);
        &mut self.fields[i]
    }

    /// The index of the field for `key` by its identity (which makes a string of it), a new
    /// field at the end if it has none.
    fn index_of(&mut self, key: &Value) -> usize {
        let id = key_id(key);
        if let Some(&i) = self.index.get(&id) {
            return i;
        }
        self.index.insert(id, self.fields.len());
        self.fields.push(FieldShape {
            key: key.clone(),
            seen: 0,
            shape: Shape::new(),
            last_record: 0,
        });
        self.fields.len() - 1
    }

    /// The field for `key`, counted as held by the object being observed (the last one
    /// `records` counted), once however often that object repeats the key.
    pub(crate) fn held(&mut self, key: &Value) -> &mut FieldShape {
        let i = self.held_at(key, self.fields.len());
        &mut self.fields[i]
    }

    /// [`ObjShape::held`], by index; the field at `guess` is compared first, and only a text
    /// key that differs from it is looked up by identity ([`ObjShape::index_of`]).
    pub(crate) fn held_at(&mut self, key: &Value, guess: usize) -> usize {
        let same = |field: &FieldShape| match (field.key.untagged(), key.untagged()) {
            (Value::Text(a), Value::Text(b)) => a == b,
            _ => false,
        };
        let i = match self.fields.get(guess) {
            Some(field) if same(field) => guess,
            _ => self.index_of(key),
        };
        let record = self.records;
        let field = &mut self.fields[i];
        if field.last_record != record {
            field.last_record = record;
            field.seen += 1;
        }
        i
    }

    /// Adds everything `other` saw (its keys after this shape's own, in their order).
    pub fn merge(&mut self, other: &ObjShape) {
        self.records += other.records;
        for field in &other.fields {
            let mine = self.field_mut(&field.key);
            mine.seen += field.seen;
            mine.shape.merge(&field.shape);
        }
    }

    /// Every value of every key, merged into one shape (what a `map<K, V>`'s values look like).
    pub fn merged_values(&self) -> Shape {
        let mut out = Shape::new();
        for field in &self.fields {
            out.merge(&field.shape);
        }
        out
    }
}

/// Whether an object's keys look like data rather than field names: any key that is not text or
/// is empty;
/// every key not an identifier, or UUID/hex-like; or many distinct keys across records, none of
/// them in more than half of the records, with values of one kind.
pub(crate) fn map_like(obj: &ObjShape) -> bool {
    let n = obj.fields.len();
    if n == 0 {
        return false;
    }
    // A key that is not text, or the empty text, can name no field.
    if obj
        .fields
        .iter()
        .any(|f| f.key.as_str().is_none_or(str::is_empty))
    {
        return true;
    }
    if obj
        .fields
        .iter()
        .all(|f| key_looks_like_data(f.key.as_str().unwrap_or_default()))
    {
        return true;
    }
    let most = obj.fields.iter().map(|f| f.seen).max().unwrap_or(0);
    n >= 8
        && obj.records >= 2
        && most.saturating_mul(2) <= obj.records
        && obj.merged_values().categories().len() <= 1
}

/// A key that is not an identifier (numbers, UUIDs, text with spaces or punctuation) or a long
/// run of hex digits.
pub(crate) fn key_looks_like_data(key: &str) -> bool {
    !is_identifier(key) || (key.len() >= 16 && key.bytes().all(|b| b.is_ascii_hexdigit()))
}

pub(crate) fn is_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `user_id` → `UserId`, `placedAt` → `PlacedAt`; never empty, never starting with a digit.
pub(crate) fn upper_camel(key: &str) -> String {
    let mut out = String::new();
    for part in key.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "Message");
    }
    out
}

/// A plural English noun's singular, roughly: `Edges` → `Edge`, `Categories` → `Category`,
/// `Statuses` → `Status`, `Boxes` → `Box`.
pub(crate) fn singular(word: &str) -> String {
    for (suffix, replace) in [
        ("ies", "y"),
        ("sses", "ss"),
        ("uses", "us"),
        ("xes", "x"),
        ("ches", "ch"),
        ("shes", "sh"),
    ] {
        if let Some(stem) = word.strip_suffix(suffix) {
            if !stem.is_empty() {
                return format!("{stem}{replace}");
            }
        }
    }
    match word.strip_suffix('s') {
        Some(stem) if !stem.is_empty() && !stem.ends_with('s') => stem.into(),
        _ => word.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Float;

    #[test]
    fn float32_rule() {
        assert!(float32_safe(24.5, FloatWidth::F64));
        assert!(float32_safe(0.25, FloatWidth::F64));
        // 26.1 is not a float32: the binary value would change.
        assert!(!float32_safe(26.1, FloatWidth::F64));
        // Exactly a float32, but its float64 text is 0.10000000149011612 and float32 prints 0.1.
        assert!(!float32_safe(f64::from(0.1f32), FloatWidth::F64));
        assert!(float32_safe(f64::from(0.1f32), FloatWidth::F32));
        assert!(float32_safe(f64::NAN, FloatWidth::F64));
    }

    #[test]
    fn observes_and_merges() {
        let mut s = Shape::new();
        s.observe(&Value::object([("a", Value::Int(-3)), ("b", Value::Null)]));
        s.observe(&Value::object([
            ("a", Value::Int(7)),
            ("c", Value::Float(Float::f64(1.5))),
        ]));
        let obj = s.object.as_ref().expect("object");
        assert_eq!(obj.records, 2);
        let keys: Vec<_> = obj.fields.iter().map(|f| f.key.clone()).collect();
        assert_eq!(keys, [Value::text("a"), Value::text("b"), Value::text("c")]);
        let a = &obj.fields[0];
        assert_eq!((a.seen, a.shape.ints.min, a.shape.ints.max), (2, -3, 7));
        assert_eq!(a.shape.ints.negatives, 1);
        assert_eq!(obj.fields[1].shape.categories(), []);
        let all = obj.merged_values();
        assert_eq!(all.categories(), [Category::Number]);
    }

    #[test]
    fn an_object_that_repeats_a_key_holds_it_once() {
        let mut s = Shape::new();
        s.observe(&Value::Map(vec![
            (Value::text("k"), Value::Bool(false)),
            (Value::text("k"), Value::Bool(true)),
        ]));
        s.observe(&Value::Map(Vec::new()));
        let obj = s.object.as_ref().expect("object");
        assert_eq!(obj.records, 2);
        // One of the two objects lacks `k`: both its values count, the key once.
        assert_eq!((obj.fields[0].seen, obj.fields[0].shape.bools), (1, 2));
    }

    /// Keys are looked for after the key before them first: objects that list them in other
    /// orders, leave some out, repeat one, tag one or use a key that is not text find the same
    /// fields as the first object's.
    #[test]
    fn keys_in_any_order_find_their_fields() {
        let tagged = |k: &str| Value::Tag(7, Box::new(Value::text(k)));
        let objects = [
            vec![("a", 1), ("b", 2), ("c", 3)],
            vec![("c", 4), ("b", 5), ("a", 6)],
            vec![("b", 7), ("c", 8)],
            vec![("a", 9), ("a", 10), ("d", 11), ("b", 12)],
        ];
        let mut s = Shape::new();
        for entries in &objects {
            s.observe(&Value::Map(
                entries
                    .iter()
                    .map(|&(k, v)| (Value::text(k), Value::Int(v)))
                    .collect(),
            ));
        }
        s.observe(&Value::Map(vec![
            (tagged("c"), Value::Int(13)),
            (Value::Int(1), Value::Int(14)),
            (Value::text("c"), Value::Int(15)),
        ]));
        let obj = s.object.as_ref().expect("object");
        assert_eq!(obj.records, 5);
        let fields: Vec<_> = obj
            .fields
            .iter()
            .map(|f| (f.key.clone(), f.seen, f.shape.ints.count))
            .collect();
        assert_eq!(
            fields,
            [
                (Value::text("a"), 3, 4),
                (Value::text("b"), 4, 4),
                (Value::text("c"), 4, 5),
                (Value::text("d"), 1, 1),
                (Value::Int(1), 1, 1),
            ]
        );
    }
}
