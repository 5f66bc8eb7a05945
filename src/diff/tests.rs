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

/// An API's proto3 JSON (`orderId` as text, as the mapping writes an int64) against its protobuf
/// twin with the records in another order and one amount changed: with the schema, `orderId` is
/// the field `order_id`, evident as the records' identity on either side, so the pair is one
/// changed amount and a record order, not removals and additions.
#[test]
fn identity_fields_are_found_by_their_json_names_with_a_schema() {
    let schema = crate::codec::protobuf::schema::Schema::from_proto_source(
        "orders.proto",
        "syntax = \"proto3\";\npackage shop;\n\
         message Order { int64 order_id = 1; string user_id = 2; double amount = 3; }\n\
         message Orders { repeated Order orders = 1; }\n",
    )
    .expect("compiles");
    let message = schema.message("shop.Orders").expect("the message type");
    let a = json(
        r#"{"orders": [
            {"orderId": "9007199254740993", "userId": "u-7", "amount": 12.5},
            {"orderId": "1002", "userId": "u-7", "amount": 3},
            {"orderId": "1003", "userId": "u-9", "amount": 40.25}
        ]}"#,
    );
    let order = |id: i128, user: &str, amount: f64| {
        Value::object([
            ("order_id", Value::int(id)),
            ("user_id", Value::text(user)),
            ("amount", Value::Float(crate::model::Float::f64(amount))),
        ])
    };
    let b_value = Value::object([(
        "orders",
        Value::Array(vec![
            order(1002, "u-7", 3.0),
            order(9_007_199_254_740_993, "u-7", 13.75),
            order(1003, "u-9", 40.25),
        ]),
    )]);
    let with_message = EncodeOptions {
        message: Some(message.clone()),
        ..EncodeOptions::default()
    };
    let pb = encode(&b_value, Format::Protobuf, &with_message).expect("encodes");
    let b = decode(
        &pb.bytes,
        Format::Protobuf,
        &DecodeOptions {
            message: Some(message.clone()),
            ..DecodeOptions::default()
        },
    )
    .expect("decodes");
    let options = DiffOptions {
        message: Some(message),
        ..DiffOptions::default()
    };
    for (first, second, path) in [
        (&a, &b, "$.orders[0].amount"),
        (&b, &a, "$.orders[1].amount"),
    ] {
        let d = diff(first, second, &options);
        let counted: Vec<String> = d.counted().map(|c| c.path.to_string()).collect();
        assert_eq!(counted, [path], "{:?}", d.changes);
        let orders = d.changes.iter().filter(|c| c.kind == ChangeKind::Order);
        assert_eq!(orders.count(), 1, "{:?}", d.changes);
        assert_eq!(d.notes, ["$.orders: records matched by `order_id`"]);
        let evident: Vec<String> = d.evident_keys.iter().map(ToString::to_string).collect();
        assert_eq!(evident, ["$.orders[*].order_id"]);
    }
    // The user's key may name the field by its JSON name too.
    let given = DiffOptions {
        keys: vec![Path::parse("$.orders[*].orderId").expect("a pattern")],
        ..options
    };
    let d = diff(&b, &a, &given);
    assert_eq!(d.counted().count(), 1, "{:?}", d.changes);
    assert!(d.notes.is_empty(), "{:?}", d.notes);
}

#[test]
fn patterns_typed_on_one_line_are_split_outside_brackets_and_checked() {
    let keys = DiffOptions::patterns(
        " $.data[*].id, $[\"a,b\"][*].user_id ,",
        DiffOptions::key_pattern,
    )
    .expect("two patterns");
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0].to_string(), "$.data[*].id");
    let not_records = DiffOptions::patterns("$.data[*].id, $.data", DiffOptions::key_pattern)
        .expect_err("$.data names no record field");
    assert_eq!(
        not_records,
        PatternError::NotRecordsField {
            text: "$.data".into()
        }
    );
    assert_eq!(
        not_records.to_string(),
        "$.data: expected an array's records and their field, like $.data[*].id"
    );
    let bad = DiffOptions::patterns("data.id", DiffOptions::ignore_pattern).expect_err("no $");
    assert!(matches!(bad, PatternError::NotAPath { at: 0, .. }), "{bad}");
    assert!(
        bad.to_string()
            .starts_with("data.id: not a path pattern (at character 0"),
        "{bad}"
    );
    assert_eq!(
        DiffOptions::patterns("  ", DiffOptions::ignore_pattern),
        Ok(Vec::new())
    );
}
