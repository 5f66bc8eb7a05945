use super::*;
use crate::codec::{decode as decode_any, NoteKind};
use crate::model::Float;

fn schema(text: &str) -> AvroSchema {
    AvroSchema::parse(text, "test").expect("schema parses")
}

fn options(s: &AvroSchema) -> (DecodeOptions, EncodeOptions) {
    let d = DecodeOptions {
        avro: Some(s.clone()),
        ..DecodeOptions::default()
    };
    let e = EncodeOptions {
        avro: Some(s.clone()),
        ..EncodeOptions::default()
    };
    (d, e)
}

/// The specification's own examples of the binary encoding.
#[test]
fn the_specifications_examples_encode_and_decode() {
    let cases: [(&str, Value, &[u8]); 5] = [
        ("\"long\"", Value::Int(3), &[0x06]),
        ("\"string\"", Value::text("foo"), &[0x06, b'f', b'o', b'o']),
        (
            r#"{"type": "array", "items": "long"}"#,
            Value::Array(vec![Value::Int(3), Value::Int(27)]),
            &[0x04, 0x06, 0x36, 0x00],
        ),
        (
            r#"["null", "string"]"#,
            Value::text("a"),
            &[0x02, 0x02, b'a'],
        ),
        (
            r#"{"type": "record", "name": "test", "fields": [
                {"name": "a", "type": "long"}, {"name": "b", "type": "string"}]}"#,
            Value::Map(vec![
                (Value::text("a"), Value::Int(27)),
                (Value::text("b"), Value::text("foo")),
            ]),
            &[0x36, 0x06, b'f', b'o', b'o'],
        ),
    ];
    for (text, value, bytes) in cases {
        let s = schema(text);
        let (d, e) = options(&s);
        let encoded = encode(&value, &e).expect("encodes");
        assert_eq!(encoded.bytes, bytes, "{text}");
        encoded.spans.validate(bytes.len()).expect("valid spans");
        let doc = decode_any(bytes, Format::Avro, &d).expect("decodes");
        assert_eq!(doc.value, value, "{text}");
        assert_eq!(doc.spans, encoded.spans, "{text}: the same spans both ways");
    }
}

#[test]
fn a_union_branch_index_is_its_nodes_header() {
    let s = schema(
        r#"{"type": "record", "name": "R", "fields": [
        {"name": "n", "type": ["null", "long"]},
        {"name": "r", "type": ["null", {"type": "record", "name": "In", "fields": [
            {"name": "x", "type": "int"}]}]}]}"#,
    );
    let (d, _) = options(&s);
    // n = 1 (branch 1), r = {x: 2} (branch 1).
    let bytes = [0x02, 0x02, 0x02, 0x04];
    let doc = decode_any(&bytes, Format::Avro, &d).expect("decodes");
    let n = doc.spans.find(&Path::parse("$.n").expect("test value"))[0];
    let node = doc.spans.node(n);
    assert_eq!((node.span.start, node.header_end, node.span.end), (0, 1, 2));
    let r = doc.spans.find(&Path::parse("$.r").expect("test value"))[0];
    let node = doc.spans.node(r);
    assert_eq!((node.span.start, node.header_end, node.span.end), (2, 3, 4));
    let x = doc.spans.find(&Path::parse("$.r.x").expect("test value"))[0];
    assert_eq!(doc.spans.node(x).span, crate::model::Span::new(3, 4));
}

#[test]
fn bad_bytes_name_their_offset_and_path_and_keep_what_was_read() {
    let s = schema(
        r#"{"type": "record", "name": "R", "fields": [
        {"name": "a", "type": "long"},
        {"name": "tags", "type": {"type": "array", "items": "string"}}]}"#,
    );
    let (d, _) = options(&s);
    // a = 1, then an array block of 2 strings whose second runs past the end.
    let bytes = [0x02, 0x04, 0x02, b'x', 0x0a, b'y'];
    let err = decode_any(&bytes, Format::Avro, &d).expect_err("fails");
    assert_eq!(err.kind, ErrorKind::Eof);
    assert_eq!(err.offset, 5);
    assert_eq!(err.path.to_string(), "$.tags");
    let partial = err.partial.expect("partial document");
    assert_eq!(
        partial.value,
        Value::Map(vec![
            (Value::text("a"), Value::Int(1)),
            (Value::text("tags"), Value::Array(vec![Value::text("x")])),
        ])
    );
    // Without a schema: a plain refusal, not a guess.
    let err = decode_any(&bytes, Format::Avro, &DecodeOptions::default()).expect_err("fails");
    assert!(
        err.message.contains("needs the writer's schema"),
        "{}",
        err.message
    );
}

#[test]
fn hostile_counts_stop_at_the_node_limit() {
    // An array of nulls claiming 2^62 items in two bytes' worth of input.
    let s = schema(r#"{"type": "array", "items": "null"}"#);
    let (mut d, _) = options(&s);
    d.limits.max_nodes = 1000;
    let mut bytes = Vec::new();
    encode::put_long(&mut bytes, 1 << 62);
    let err = decode_any(&bytes, Format::Avro, &d).expect_err("fails");
    assert_eq!(err.kind, ErrorKind::Limit(crate::codec::LimitName::Nodes));
    // A recursive type nested past the depth limit.
    let s = schema(
        r#"{"type": "record", "name": "L", "fields": [
        {"name": "next", "type": ["null", "L"]}]}"#,
    );
    let (mut d, _) = options(&s);
    d.limits.max_depth = 50;
    let bytes = vec![0x02; 200];
    let err = decode_any(&bytes, Format::Avro, &d).expect_err("fails");
    assert_eq!(err.kind, ErrorKind::Limit(crate::codec::LimitName::Depth));
}

#[test]
fn the_inferred_schema_carries_every_sample_there_and_back() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    for (name, from) in [
        ("order-graphql.json", Format::Json),
        ("transactions-1k.json", Format::Json),
        ("iot-metrics.cbor", Format::Cbor),
    ] {
        let bytes = std::fs::read(dir.join(name)).expect("sample");
        let doc = decode_any(&bytes, from, &DecodeOptions::default()).expect("decodes");
        let encoded = encode(&doc.value, &EncodeOptions::default()).expect("encodes");
        assert_eq!(encoded.notes[0].kind, NoteKind::SchemaInferred);
        encoded.spans.validate(encoded.bytes.len()).expect("spans");
        let s = schema_for(&doc.value, &EncodeOptions::default()).expect("schema");
        let (d, _) = options(&s);
        let back = decode_any(&encoded.bytes, Format::Avro, &d).expect("reads back");
        assert_eq!(back.spans, encoded.spans, "{name}");
        // Missing fields come back as null; everything present is the same value.
        assert!(back.value.node_count() >= doc.value.node_count(), "{name}");
    }
}

#[test]
fn floats_keep_the_schemas_width_with_a_note_when_rounded() {
    let s = schema(r#""float""#);
    let (_, e) = options(&s);
    let exact = encode(&Value::Float(Float::f64(0.5)), &e).expect("encodes");
    assert!(exact.notes.is_empty());
    let rounded = encode(&Value::Float(Float::f64(0.1)), &e).expect("encodes");
    assert_eq!(rounded.notes[0].kind, NoteKind::FloatWidth);
}

/// Data the plan does not fit is refused in words that name the node: a run of datums that is
/// no array, a union whose branch index is cut short.
#[test]
fn data_the_plan_does_not_fit_is_named() {
    let writer = schema(r#"["null", "long"]"#);
    let reader = schema(r#"["null", "double"]"#);
    let plan = resolve::plan(writer.root(), reader.root()).expect("plans");
    let (d, _) = options(&writer);
    let bytes = [0x02, 0x04];
    let doc = decode(&bytes, &d).expect("decodes");
    let err = resolved::read_with(&doc, &bytes, &plan, &reader, true).expect_err("no array");
    assert_eq!(err, resolved::ReadWithError::NotARun);
    assert_eq!(err.to_string(), "a run of datums that is not an array");
    // The writer's document says branch 1 at byte 0; the bytes given are cut short there.
    let err = resolved::read_with(&doc, &[0x82], &plan, &reader, false).expect_err("cut short");
    assert_eq!(
        err.to_string(),
        "at $ (byte 0): the union's branch index: varint starting at byte 0 is cut short by the \
         end of the input at byte 1"
    );
    assert!(std::error::Error::source(&err).is_some());
}

/// Each node of a datum read with a reader's schema names the rule that read it: a field by
/// alias, a writer's union branch promoted, an enum symbol the reader lacks, a default and the
/// nodes inside it, the writer's fields skipped; in a run of datums, each datum.
#[test]
fn each_node_read_with_a_readers_schema_names_its_rule() {
    let writer = schema(
        r#"{"type": "record", "name": "R", "fields": [
            {"name": "old", "type": "string"},
            {"name": "n", "type": ["null", "int"]},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "Z"]}},
            {"name": "gone", "type": "long"}]}"#,
    );
    let reader = schema(
        r#"{"type": "record", "name": "R", "fields": [
            {"name": "new", "type": "string", "aliases": ["old"]},
            {"name": "n", "type": ["null", "long"]},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"],
                                   "default": "B"}},
            {"name": "added", "type": {"type": "array", "items": "int"}, "default": [7]}]}"#,
    );
    let datum = Value::Map(vec![
        (Value::text("old"), Value::text("v")),
        (Value::text("n"), Value::Int(5)),
        (Value::text("e"), Value::text("Z")),
        (Value::text("gone"), Value::Int(1)),
    ]);
    let (_, e) = options(&writer);
    let bytes = encode(&datum, &e).expect("encodes").bytes;
    let plan = resolve::plan(writer.root(), reader.root()).expect("plans");
    let rules_at = |bytes: &[u8], run: Option<u64>| {
        let options = DecodeOptions {
            avro: Some(writer.clone()),
            avro_reader: Some(reader.clone()),
            avro_items: run,
            ..DecodeOptions::default()
        };
        let doc = decode_any(bytes, Format::Avro, &options).expect("decodes");
        let rules = resolved::node_rules(&doc.spans, bytes, &plan, run.is_some());
        doc.spans
            .nodes()
            .enumerate()
            .map(|(i, _)| {
                let id = crate::model::NodeId(u32::try_from(i).expect("small"));
                let path = doc.spans.path(id).to_string();
                (
                    path,
                    rules.rule(id).map(|(t, plain)| (t.to_string(), plain)),
                )
            })
            .collect::<Vec<_>>()
    };
    let rule = |text: &str, plain: bool| Some((text.to_string(), plain));
    let expected = [
        ("$", rule("record R; the writer's gone skipped", false)),
        ("$.new", rule("alias of old; same type string", false)),
        ("$.n", rule("same name; promoted int → long", false)),
        (
            "$.e",
            rule(
                "same name; enum E; Z read as the reader's enum default B",
                false,
            ),
        ),
        ("$.added", rule("default: [7]", false)),
        ("$.added[0]", rule("in the default of added", false)),
    ];
    let single: Vec<_> = rules_at(&bytes, None);
    let want: Vec<_> = expected
        .iter()
        .map(|(p, r)| (p.to_string(), r.clone()))
        .collect();
    assert_eq!(single, want);
    // A run of two datums: the array holding them has no rule; each datum is read as above.
    let two = [bytes.clone(), bytes].concat();
    let run = rules_at(&two, Some(2));
    assert_eq!(run[0], ("$".to_string(), None));
    for (k, datum) in run[1..].chunks(want.len()).enumerate() {
        for ((path, got), (want_path, want_rule)) in datum.iter().zip(&want) {
            assert_eq!(path, &want_path.replacen('$', &format!("$[{k}]"), 1));
            assert_eq!(got, want_rule, "{path}");
        }
    }
    // A field read as written is plain.
    let same = resolve::plan(writer.root(), writer.root()).expect("plans");
    let options = DecodeOptions {
        avro: Some(writer.clone()),
        avro_reader: Some(writer.clone()),
        ..DecodeOptions::default()
    };
    let bytes = encode(&datum, &e).expect("encodes").bytes;
    let doc = decode_any(&bytes, Format::Avro, &options).expect("decodes");
    let rules = resolved::node_rules(&doc.spans, &bytes, &same, false);
    let found = doc
        .spans
        .find(&crate::model::Path::parse("$.old").expect("path"));
    let id = *found.first().expect("node");
    assert_eq!(rules.rule(id), Some(("same name; same type string", true)));
    assert_eq!(rules.changed(id), None);
}

/// A record name that is no Avro name is refused in the words `infer-avro --name` shows.
#[test]
fn inferring_under_a_bad_name_says_why() {
    let options = infer::InferOptions {
        name: "1st".into(),
        ..infer::InferOptions::default()
    };
    let err = infer::infer(&Value::Null, &options).expect_err("bad name");
    assert_eq!(err, infer::InferError::BadName("1st".into()));
    assert_eq!(
        err.to_string(),
        "\"1st\" is not an Avro name ([A-Za-z_][A-Za-z0-9_]*)"
    );
}
