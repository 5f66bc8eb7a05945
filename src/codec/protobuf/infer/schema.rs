//! Turning observed [`Shape`]s into message definitions, naming and numbering them, writing the
//! `.proto` text, and rewriting a value into the wrappers the definitions introduced.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::codec::shape::{map_like, singular, upper_camel, Category, Ints, ObjShape, Shape};
use crate::model::Value;

/// The type of a field (or of a repeated field's elements, or of a map's values).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Ty {
    /// A scalar type keyword: `int32`, `string`, ...
    Scalar(&'static str),
    /// One of the file's messages, by index.
    Msg(usize),
    /// A well-known type, fully qualified.
    Wkt(&'static str),
}

/// How a field holds its type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Label {
    /// One value.
    Single,
    /// `repeated`.
    Repeated,
    /// `map<K, T>` with this key type.
    Map(&'static str),
}

/// One field of an inferred message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FieldDef {
    /// The payload's key (for wrapper fields: `items`, `entries` or `value`).
    pub key: String,
    /// The field name in the `.proto`.
    pub name: String,
    /// `json_name`, when `name` had to differ from `key` or its default JSON name would clash.
    pub json_name: Option<String>,
    /// The field number.
    pub number: u32,
    /// Repeated, map or single.
    pub label: Label,
    /// Its type.
    pub ty: Ty,
}

/// Why a message exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Wrapper {
    /// It describes objects of the payload.
    None,
    /// It wraps an array (field `items`) that could not be written directly: an array inside an
    /// array or a map, or the top-level array.
    List,
    /// It wraps a map-like object (field `entries`) inside an array or a map, or at the top.
    Map,
    /// It wraps a top-level value that is not an object (field `value`).
    Scalar,
}

/// One message of the inferred file.
#[derive(Debug, Clone)]
pub(crate) struct MsgDef {
    /// Preferred name (deduplicated when naming).
    pub hint: String,
    /// Fields in number order.
    pub fields: Vec<FieldDef>,
    /// Why it exists.
    pub wrapper: Wrapper,
    /// The final name.
    pub name: String,
}

/// The inferred file before it is written out.
#[derive(Debug, Clone)]
pub(crate) struct Schema {
    /// Every message, in the order the text declares them (the top-level one first).
    pub msgs: Vec<MsgDef>,
    /// Index of the top-level message.
    pub root: usize,
    /// Well-known files imported.
    pub imports: BTreeSet<&'static str>,
}

const VALUE: &str = "google.protobuf.Value";
const TIMESTAMP: &str = "google.protobuf.Timestamp";

/// Builds the schema for everything `shape` saw at the top level; `root_name` names the
/// top-level message.
pub(crate) fn build(shape: &Shape, root_name: &str) -> Schema {
    let mut lower = Lower::default();
    let cats = shape.categories();
    let root = match (cats.as_slice(), &shape.object) {
        ([Category::Object], Some(obj)) if !map_like(obj) => lower.message(obj, root_name),
        _ => {
            let hint = if cats == [Category::Array] {
                "Record"
            } else {
                root_name
            };
            let (label, ty) = lower.field(shape, hint);
            let (key, wrapper) = match label {
                Label::Repeated => ("items", Wrapper::List),
                Label::Map(_) => ("entries", Wrapper::Map),
                Label::Single => ("value", Wrapper::Scalar),
            };
            let field = FieldDef {
                key: key.into(),
                name: key.into(),
                json_name: None,
                number: 1,
                label,
                ty,
            };
            lower.add(root_name, wrapper, vec![field])
        }
    };
    name_and_order(lower, root, root_name)
}

#[derive(Default)]
struct Lower {
    msgs: Vec<MsgDef>,
    dedup: HashMap<(Wrapper, Vec<FieldDef>), usize>,
    imports: BTreeSet<&'static str>,
}

impl Lower {
    /// Adds a message, or returns an identical one already added.
    fn add(&mut self, hint: &str, wrapper: Wrapper, fields: Vec<FieldDef>) -> usize {
        let key = (wrapper, fields);
        if let Some(&id) = self.dedup.get(&key) {
            return id;
        }
        let id = self.msgs.len();
        self.msgs.push(MsgDef {
            hint: hint.into(),
            fields: key.1.clone(),
            wrapper,
            name: String::new(),
        });
        self.dedup.insert(key, id);
        id
    }

    fn wkt(&mut self, name: &'static str) -> Ty {
        self.imports.insert(match name {
            TIMESTAMP => "google/protobuf/timestamp.proto",
            _ => "google/protobuf/struct.proto",
        });
        Ty::Wkt(name)
    }

    /// A message for objects whose keys are field names.
    fn message(&mut self, obj: &ObjShape, hint: &str) -> usize {
        let mut names = Names {
            keys: obj
                .fields
                .iter()
                .filter_map(|f| f.key.as_str().map(str::to_string))
                .collect(),
            ..Names::default()
        };
        let mut fields = Vec::with_capacity(obj.fields.len());
        for field in &obj.fields {
            let key = field.key.as_str().unwrap_or_default();
            let (name, json_name) = names.field_name(key);
            let (label, ty) = self.field(&field.shape, &upper_camel(key));
            fields.push(FieldDef {
                key: key.into(),
                name,
                json_name,
                number: 0,
                label,
                ty,
            });
        }
        unique_json_names(&mut fields);
        let seen: Vec<u64> = obj.fields.iter().map(|f| f.seen).collect();
        for (field, number) in fields.iter_mut().zip(numbers(&seen)) {
            field.number = number;
        }
        fields.sort_by_key(|f| f.number);
        self.add(hint, Wrapper::None, fields)
    }

    /// Label and type of a field whose values were `shape`; `hint` names any message it needs.
    fn field(&mut self, shape: &Shape, hint: &str) -> (Label, Ty) {
        match (shape.categories().as_slice(), &shape.object, &shape.array) {
            ([Category::Array], _, Some(arr)) => {
                (Label::Repeated, self.elem(&arr.items, &singular(hint)))
            }
            ([Category::Object], Some(obj), _) => {
                if map_like(obj) {
                    let key = map_key_type(obj);
                    (
                        Label::Map(key),
                        self.elem(&obj.merged_values(), &singular(hint)),
                    )
                } else {
                    (Label::Single, Ty::Msg(self.message(obj, hint)))
                }
            }
            ([category], _, _) => (Label::Single, self.scalar(shape, *category)),
            _ => (Label::Single, self.wkt(VALUE)),
        }
    }

    /// Type of a repeated field's elements or a map's values: no nulls, no arrays, no maps.
    fn elem(&mut self, shape: &Shape, hint: &str) -> Ty {
        if shape.nulls > 0 {
            return self.wkt(VALUE);
        }
        let wrapper = match (shape.categories().as_slice(), &shape.object) {
            ([Category::Array], _) => Some((Wrapper::List, "List", "items")),
            ([Category::Object], Some(obj)) if map_like(obj) => {
                Some((Wrapper::Map, "Map", "entries"))
            }
            _ => None,
        };
        match wrapper {
            Some((wrapper, suffix, key)) => {
                let hint = format!("{hint}{suffix}");
                let (label, ty) = self.field(shape, &hint);
                let field = FieldDef {
                    key: key.into(),
                    name: key.into(),
                    json_name: None,
                    number: 1,
                    label,
                    ty,
                };
                Ty::Msg(self.add(&hint, wrapper, vec![field]))
            }
            None => self.field(shape, hint).1,
        }
    }

    fn scalar(&mut self, shape: &Shape, category: Category) -> Ty {
        match category {
            Category::Bool => Ty::Scalar("bool"),
            Category::Int => Ty::Scalar(int_type(&shape.ints).unwrap_or("double")),
            Category::Number => {
                if shape.ints.count == 0 && shape.decimals == 0 && shape.floats_f32 {
                    Ty::Scalar("float")
                } else {
                    Ty::Scalar("double")
                }
            }
            Category::Text => Ty::Scalar("string"),
            Category::Bytes => Ty::Scalar("bytes"),
            Category::Timestamp => self.wkt(TIMESTAMP),
            Category::Object | Category::Array => self.wkt(VALUE),
        }
    }
}

/// The narrowest integer type for `ints`; `None` when no 64-bit type holds them all.
fn int_type(ints: &Ints) -> Option<&'static str> {
    if ints.huge {
        return None;
    }
    let zigzag = ints.negatives.saturating_mul(4) > ints.count;
    if ints.min >= 0 {
        if ints.max <= i128::from(i32::MAX) {
            Some("int32")
        } else if ints.max <= i128::from(i64::MAX) {
            Some("int64")
        } else if ints.max <= i128::from(u64::MAX) {
            Some("uint64")
        } else {
            None
        }
    } else if ints.min >= i128::from(i32::MIN) && ints.max <= i128::from(i32::MAX) {
        Some(if zigzag { "sint32" } else { "int32" })
    } else if ints.min >= i128::from(i64::MIN) && ints.max <= i128::from(i64::MAX) {
        Some(if zigzag { "sint64" } else { "int64" })
    } else {
        None
    }
}

/// Key type of a map-like object: `string` for text keys, an integer type for integer keys,
/// `bool` for boolean keys, `string` when kinds are mixed.
fn map_key_type(obj: &ObjShape) -> &'static str {
    let mut keys = Shape::new();
    for field in &obj.fields {
        keys.observe(&field.key);
    }
    match keys.categories().as_slice() {
        [Category::Int] => int_type(&keys.ints).unwrap_or("string"),
        [Category::Bool] => "bool",
        _ => "string",
    }
}

/// Field numbers for fields seen `seen[i]` times (in order of first appearance): the 15 most
/// frequent get 1–15 (one-byte tags) in order of appearance, the rest follow in order of
/// appearance, skipping the reserved 19000–19999.
pub(crate) fn numbers(seen: &[u64]) -> Vec<u32> {
    let mut by_freq: Vec<usize> = (0..seen.len()).collect();
    by_freq.sort_by_key(|&i| (std::cmp::Reverse(seen[i]), i));
    let top: HashSet<usize> = by_freq.into_iter().take(15).collect();
    let mut out = vec![0; seen.len()];
    let mut next = 1u32;
    for pass in [true, false] {
        for (i, number) in out.iter_mut().enumerate() {
            if top.contains(&i) == pass {
                if next == 19_000 {
                    next = 20_000;
                }
                *number = next;
                next += 1;
            }
        }
    }
    out
}

/// Field names of one message, unique even after protoc's proto3 rule (lowercase, underscores
/// removed), and never the verbatim key of another field (an encoder looks keys up by field name
/// first, so a made-up name must not capture another key).
#[derive(Default)]
struct Names {
    taken: HashSet<String>,
    keys: HashSet<String>,
}

impl Names {
    /// The field name for `key`, and its `json_name` when the name is not the key itself.
    fn field_name(&mut self, key: &str) -> (String, Option<String>) {
        let mut base: String = key
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        if !base.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            base.insert_str(0, "f_");
        }
        let mut name = base.clone();
        let mut n = 2;
        loop {
            let other_key = name != key && self.keys.contains(&name);
            if !other_key && self.taken.insert(folded(&name)) {
                break;
            }
            name = format!("{base}_{n}");
            n += 1;
        }
        let json_name = (name != key).then(|| key.to_string());
        (name, json_name)
    }
}

/// Makes every field's JSON name unique: a field whose default JSON name (protoc's lowerCamel of
/// its name) collides with another field's JSON name gets its key as an explicit `json_name`.
/// Keys are unique within a message, so this ends with all names distinct.
fn unique_json_names(fields: &mut [FieldDef]) {
    loop {
        let effective: Vec<String> = fields
            .iter()
            .map(|f| {
                f.json_name
                    .clone()
                    .unwrap_or_else(|| default_json_name(&f.name))
            })
            .collect();
        let mut count: HashMap<&str, usize> = HashMap::new();
        for e in &effective {
            *count.entry(e.as_str()).or_default() += 1;
        }
        let mut changed = false;
        for (f, e) in fields.iter_mut().zip(&effective) {
            if f.json_name.is_none() && count.get(e.as_str()).copied().unwrap_or(0) > 1 {
                f.json_name = Some(f.key.clone());
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// protoc's default JSON name: underscores dropped, the letter after each one upper-cased.
fn default_json_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn folded(name: &str) -> String {
    name.chars()
        .filter(|&c| c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Names every message (the top-level one `root_name`, the others from their hints, made unique
/// and distinct from every field name) and orders them as the text declares them: depth first
/// from the top-level message.
fn name_and_order(lower: Lower, root: usize, root_name: &str) -> Schema {
    let Lower { msgs, imports, .. } = lower;
    let mut taken: HashSet<String> = msgs
        .iter()
        .flat_map(|m| m.fields.iter().map(|f| f.name.clone()))
        .collect();
    taken.remove(root_name);
    let mut order = Vec::with_capacity(msgs.len());
    let mut names = vec![String::new(); msgs.len()];
    let mut visited = vec![false; msgs.len()];
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        if visited[id] {
            continue;
        }
        visited[id] = true;
        let hint = if id == root {
            root_name.to_string()
        } else {
            msgs[id].hint.clone()
        };
        let mut name = hint.clone();
        let mut n = 2;
        while !taken.insert(name.clone()) {
            name = format!("{hint}{n}");
            n += 1;
        }
        names[id] = name;
        order.push(id);
        for field in msgs[id].fields.iter().rev() {
            if let Ty::Msg(child) = field.ty {
                stack.push(child);
            }
        }
    }
    let mut new_index = vec![0; msgs.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    let mut slots: Vec<Option<MsgDef>> = msgs.into_iter().map(Some).collect();
    let msgs = order
        .iter()
        .filter_map(|&old| {
            let mut msg = slots[old].take()?;
            msg.name = std::mem::take(&mut names[old]);
            for field in &mut msg.fields {
                if let Ty::Msg(child) = &mut field.ty {
                    *child = new_index[*child];
                }
            }
            Some(msg)
        })
        .collect();
    Schema {
        msgs,
        root: 0,
        imports,
    }
}

impl Schema {
    /// The `.proto` text.
    pub fn render(&self, package: Option<&str>) -> String {
        let mut out = String::from("syntax = \"proto3\";\n\n");
        if let Some(package) = package {
            out.push_str(&format!("package {package};\n\n"));
        }
        for import in &self.imports {
            out.push_str(&format!("import \"{import}\";\n"));
        }
        if !self.imports.is_empty() {
            out.push('\n');
        }
        for (i, msg) in self.msgs.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&format!("message {} {{\n", msg.name));
            for field in &msg.fields {
                let ty = self.type_name(&field.ty);
                let typed = match field.label {
                    Label::Single => ty.to_string(),
                    Label::Repeated => format!("repeated {ty}"),
                    Label::Map(key) => format!("map<{key}, {ty}>"),
                };
                out.push_str(&format!("  {typed} {} = {}", field.name, field.number));
                if let Some(json) = &field.json_name {
                    out.push_str(&format!(" [json_name = \"{}\"]", escape(json)));
                }
                out.push_str(";\n");
            }
            out.push_str("}\n");
        }
        out
    }

    fn type_name<'a>(&'a self, ty: &'a Ty) -> &'a str {
        match ty {
            Ty::Scalar(s) | Ty::Wkt(s) => s,
            Ty::Msg(id) => self.msgs.get(*id).map_or("", |m| m.name.as_str()),
        }
    }

    /// Whether the only wrapper message is the top-level one, around a top-level array (so the
    /// value is rewritten only as `{"items": value}`).
    pub fn wraps_only_top_list(&self) -> bool {
        self.msgs.iter().enumerate().all(|(i, m)| {
            if i == self.root {
                m.wrapper == Wrapper::List && m.fields.first().is_some_and(|f| f.key == "items")
            } else {
                m.wrapper == Wrapper::None
            }
        })
    }

    /// Whether any wrapper message exists (so values must be rewritten before encoding).
    pub fn wraps(&self) -> bool {
        self.msgs.iter().any(|m| m.wrapper != Wrapper::None)
    }

    /// `value` as the top-level message expects it: wrapped in `items`/`entries`/`value` at the
    /// top and wherever an array or map-like object sits inside an array or map.
    pub fn rewrite(&self, value: &Value) -> Value {
        self.rewrite_elem(value, self.root)
    }

    fn rewrite_elem(&self, value: &Value, id: usize) -> Value {
        let Some(msg) = self.msgs.get(id) else {
            return value.clone();
        };
        match (msg.wrapper, msg.fields.first()) {
            (Wrapper::None, _) | (_, None) => self.rewrite_msg(value, msg),
            (_, Some(field)) => Value::Map(vec![(
                Value::text(field.key.as_str()),
                self.rewrite_field(value, field),
            )]),
        }
    }

    fn rewrite_msg(&self, value: &Value, msg: &MsgDef) -> Value {
        match value.untagged() {
            Value::Map(entries) => Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let field = k
                            .as_str()
                            .and_then(|k| msg.fields.iter().find(|f| f.key == k));
                        let v = match field {
                            Some(field) => self.rewrite_field(v, field),
                            None => v.clone(),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            _ => value.clone(),
        }
    }

    fn rewrite_field(&self, value: &Value, field: &FieldDef) -> Value {
        let elem = |v: &Value| match field.ty {
            Ty::Msg(id) => self.rewrite_elem(v, id),
            _ => v.clone(),
        };
        match (&field.label, value.untagged()) {
            (Label::Repeated, Value::Array(items)) => {
                Value::Array(items.iter().map(elem).collect())
            }
            (Label::Map(_), Value::Map(entries)) => {
                Value::Map(entries.iter().map(|(k, v)| (k.clone(), elem(v))).collect())
            }
            (Label::Single, _) => match field.ty {
                Ty::Msg(id) => match self.msgs.get(id) {
                    Some(msg) => self.rewrite_msg(value, msg),
                    None => value.clone(),
                },
                _ => value.clone(),
            },
            _ => value.clone(),
        }
    }
}

/// A protobuf string literal's content: quotes, backslashes and control characters escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_gives_frequent_fields_one_byte_tags() {
        // 20 fields; fields 16..20 are in every record, the others once.
        let seen: Vec<u64> = (0..20).map(|i| if i >= 15 { 100 } else { 1 }).collect();
        let n = numbers(&seen);
        // The frequent five get one-byte tags; the first ten rare fields take the rest of 1–15,
        // in order of appearance.
        assert_eq!(&n[..10], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(&n[15..], &[11, 12, 13, 14, 15]);
        assert_eq!(&n[10..15], &[16, 17, 18, 19, 20]);
    }

    #[test]
    fn numbering_skips_reserved_range() {
        let n = numbers(&vec![1; 19_010]);
        assert!(n.iter().all(|n| !(19_000..20_000).contains(n)));
        assert_eq!(n[18_998], 18_999);
        assert_eq!(n[18_999], 20_000);
    }

    #[test]
    fn names() {
        assert_eq!(upper_camel("user_id"), "UserId");
        assert_eq!(upper_camel("placedAt"), "PlacedAt");
        assert_eq!(upper_camel("page-info"), "PageInfo");
        assert_eq!(upper_camel("42"), "Message42");
        assert_eq!(upper_camel(""), "Message");
        assert_eq!(singular("Edges"), "Edge");
        assert_eq!(singular("Categories"), "Category");
        assert_eq!(singular("Statuses"), "Status");
        assert_eq!(singular("Address"), "Address");
        assert_eq!(singular("Boxes"), "Box");
        assert_eq!(singular("S"), "S");
        let mut n = Names::default();
        assert_eq!(n.field_name("user_id"), ("user_id".into(), None));
        assert_eq!(
            n.field_name("userId"),
            ("userId_2".into(), Some("userId".into()))
        );
        assert_eq!(
            n.field_name("Content-Type"),
            ("Content_Type".into(), Some("Content-Type".into()))
        );
        assert_eq!(n.field_name("1st"), ("f_1st".into(), Some("1st".into())));
        assert_eq!(n.field_name(""), ("f_".into(), Some(String::new())));
    }

    #[test]
    fn int_types() {
        let ints = |min, max, negatives, count| Ints {
            count,
            negatives,
            min,
            max,
            huge: false,
        };
        assert_eq!(int_type(&ints(0, 5, 0, 3)), Some("int32"));
        assert_eq!(int_type(&ints(-5, 5, 1, 8)), Some("int32"));
        assert_eq!(int_type(&ints(-5, 5, 3, 8)), Some("sint32"));
        assert_eq!(int_type(&ints(0, 1 << 40, 0, 2)), Some("int64"));
        assert_eq!(int_type(&ints(-(1 << 40), 0, 2, 2)), Some("sint64"));
        assert_eq!(
            int_type(&ints(0, i128::from(u64::MAX), 0, 2)),
            Some("uint64")
        );
        assert_eq!(int_type(&ints(-1, i128::from(u64::MAX), 1, 2)), None);
    }

    #[test]
    fn escapes_literals() {
        assert_eq!(escape("a\"b\\c\nd é"), "a\\\"b\\\\c\\012d é");
    }
}
