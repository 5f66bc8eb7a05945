use super::*;
use crate::codec::{decode, encode, DecodeOptions, EncodeOptions, FloatPolicy, Format};

fn json(text: &str) -> Document {
    decode(text.as_bytes(), Format::Json, &DecodeOptions::default()).expect("valid JSON")
}

fn lines(d: &Diff) -> Vec<String> {
    d.counted().map(|c| c.to_string()).collect()
}

fn run(a: &str, b: &str) -> Diff {
    diff(&json(a), &json(b), &DiffOptions::default())
}

#[test]
fn same_document_is_same_meaning() {
    let d = run(
        r#"{"a": [1, 2.5, "x"], "b": null}"#,
        r#"{"a":[1,2.5,"x"],"b":null}"#,
    );
    assert!(d.same_meaning(), "{:?}", d.changes);
    assert_eq!(d.summary(), "same meaning");
}

#[test]
fn one_change_of_each_kind() {
    let d = run(
        r#"{"amount": 12.5, "id": 5, "tags": ["a", "x"], "gone": true}"#,
        r#"{"amount": 13, "id": "5", "tags": ["a"], "new": 1}"#,
    );
    assert_eq!(
        lines(&d),
        [
            "t $.amount: float64 12.5 → int 13  (A bytes 11..15, B bytes 11..13)",
            "t $.id: int 5 → text \"5\"  (A bytes 23..24, B bytes 21..24); the same number, as an integer and as text",
            "- $.tags[1]: \"x\"  (A bytes 40..43)",
            "- $.gone: true  (A bytes 46..58)",
            "+ $.new: 1  (B bytes 41..49)",
        ]
    );
    assert_eq!(
        d.summary(),
        "5 changes: 2 type changed, 1 added, 2 removed; same key order"
    );
    let d = run(r#"{"v": 12.5}"#, r#"{"v": 13.5}"#);
    assert_eq!(
        lines(&d),
        ["~ $.v: 12.5 → 13.5  (A bytes 6..10, B bytes 6..10)"]
    );
}

#[test]
fn key_order_is_reported_but_counts_only_when_asked() {
    let (a, b) = (json(r#"{"a":1,"b":2}"#), json(r#"{"b":2,"a":1}"#));
    let d = diff(&a, &b, &DiffOptions::default());
    assert!(d.same_meaning());
    assert_eq!(d.encoding.key_order, 1);
    assert_eq!(d.changes.len(), 1);
    assert_eq!(d.changes[0].kind, ChangeKind::Order);
    let strict = DiffOptions {
        order: true,
        ..DiffOptions::default()
    };
    let d = diff(&a, &b, &strict);
    assert!(!d.same_meaning());
    assert_eq!(
        lines(&d),
        ["o $: {…} → {…}  (A bytes 0..13, B bytes 0..13); key order a, b → b, a"]
    );
}

#[test]
fn float_widths_count_only_when_strict() {
    let value = Value::object([("x", Value::Float(crate::model::Float::f32(1.5)))]);
    let cbor = encode(
        &value,
        Format::Cbor,
        &EncodeOptions {
            floats: FloatPolicy::Keep,
            ..EncodeOptions::default()
        },
    )
    .expect("encodes");
    let b = decode(&cbor.bytes, Format::Cbor, &DecodeOptions::default()).expect("decodes");
    let a = json(r#"{"x": 1.5}"#);
    let d = diff(&a, &b, &DiffOptions::default());
    assert!(d.same_meaning());
    assert_eq!(d.encoding.float_widths, 1);
    let d = diff(
        &a,
        &b,
        &DiffOptions {
            strict_widths: true,
            ..DiffOptions::default()
        },
    );
    assert_eq!(d.count(ChangeKind::TypeChanged), 1);
    assert!(lines(&d)[0].starts_with("t $.x: float64 1.5 → float32 1.5 (f32)"));
}

#[test]
fn bytes_against_base64_text_is_a_type_change_with_a_note() {
    let a = Document {
        format: Format::Cbor,
        value: Value::object([("k", Value::Bytes(b"hi!".to_vec()))]),
        spans: SpanTree::default(),
    };
    let b = json(r#"{"k": "aGkh"}"#);
    let d = diff(&a, &b, &DiffOptions::default());
    assert_eq!(d.count(ChangeKind::TypeChanged), 1);
    assert!(d.changes[0]
        .note
        .as_deref()
        .is_some_and(|n| n.contains("base64")));
}

#[test]
fn an_insertion_in_the_middle_is_one_change() {
    let items: Vec<String> = (0..1000)
        .map(|i| format!(r#"{{"n":{i},"v":"x{i}"}}"#))
        .collect();
    let a = format!("[{}]", items.join(","));
    let mut b_items = items.clone();
    b_items.insert(500, r#"{"n":-1,"v":"new"}"#.into());
    let b = format!("[{}]", b_items.join(","));
    let d = run(&a, &b);
    assert_eq!(lines(&d).len(), 1, "{:?}", lines(&d));
    assert_eq!(d.changes[0].kind, ChangeKind::Added);
    assert_eq!(d.changes[0].path.to_string(), "$[500]");
}

#[test]
fn a_changed_record_is_compared_field_by_field() {
    let d = run(
        r#"[{"n":1,"v":"a"},{"n":2,"v":"b"},{"n":3,"v":"c"}]"#,
        r#"[{"n":1,"v":"a"},{"n":2,"v":"B"},{"n":3,"v":"c"}]"#,
    );
    assert_eq!(lines(&d).len(), 1);
    assert_eq!(d.changes[0].path.to_string(), "$[1].v");
}

#[test]
fn records_are_matched_by_an_evident_id() {
    let d = run(
        r#"{"data":[{"id":1,"v":"a"},{"id":2,"v":"b"},{"id":3,"v":"c"}]}"#,
        r#"{"data":[{"id":3,"v":"c"},{"id":1,"v":"a"},{"id":2,"v":"z"}]}"#,
    );
    let counted = lines(&d);
    assert_eq!(counted.len(), 1, "{counted:?}");
    assert!(counted[0].starts_with("~ $.data[1].v (B $.data[2].v): \"b\" → \"z\""));
    assert_eq!(d.encoding.key_order, 1);
    assert!(d.notes.iter().any(|n| n.contains("matched by `id`")));
}

#[test]
fn a_given_key_pattern_matches_records() {
    let a = json(r#"{"rows":[{"sku":"a","q":1},{"sku":"b","q":2}]}"#);
    let b = json(r#"{"rows":[{"sku":"b","q":2},{"sku":"a","q":5}]}"#);
    let options = DiffOptions {
        keys: vec![Path::parse("$.rows[*].sku").expect("pattern")],
        ..DiffOptions::default()
    };
    let d = diff(&a, &b, &options);
    assert_eq!(lines(&d).len(), 1);
    assert_eq!(
        d.changes
            .iter()
            .filter(|c| c.kind == ChangeKind::Changed)
            .count(),
        1
    );
}

#[test]
fn ignored_paths_are_left_out() {
    let a = json(r#"{"rows":[{"n":1,"at":"x"},{"n":2,"at":"y"}],"at":1}"#);
    let b = json(r#"{"rows":[{"n":1,"at":"z"},{"n":2,"at":"w"}],"at":2}"#);
    let options = DiffOptions {
        ignore: vec![
            Path::parse("$.rows[*].at").expect("pattern"),
            Path::parse("$.at").expect("pattern"),
        ],
        ..DiffOptions::default()
    };
    assert!(diff(&a, &b, &options).same_meaning());
}

#[test]
fn too_different_arrays_fall_back_to_index_pairs_with_a_note() {
    let a: Vec<String> = (0..50).map(|i| i.to_string()).collect();
    let b: Vec<String> = (100..150).map(|i| i.to_string()).collect();
    let d = diff(
        &json(&format!("[{}]", a.join(","))),
        &json(&format!("[{}]", b.join(","))),
        &DiffOptions {
            max_edits: 10,
            ..DiffOptions::default()
        },
    );
    assert_eq!(d.count(ChangeKind::Changed), 50);
    assert!(d.notes.iter().any(|n| n.contains("compared by index")));
}

#[test]
fn deep_documents_do_not_overflow() {
    let depth = 500;
    let a = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let b = format!("{}2{}", "[".repeat(depth), "]".repeat(depth));
    let d = run(&a, &b);
    assert_eq!(d.count(ChangeKind::Changed), 1);
    assert_eq!(d.changes[0].path.segments().len(), depth);
}
