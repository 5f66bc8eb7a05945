//! MessagePack conformance: the msgpack-test-suite cases, byte-for-byte agreement with `rmpv` on
//! the JSON benchmark files, exact error positions, fidelity notes, and property-based round trips.

use std::path::PathBuf;

use proptest::prelude::*;
use wirelens::codec::msgpack::{decode, encode};
use wirelens::codec::{
    DecodeOptions, EncodeOptions, Encoded, ErrorKind, FloatPolicy, LimitName, NoteKind,
};
use wirelens::model::{Float, Path, Timestamp, Value};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

fn keep() -> EncodeOptions {
    EncodeOptions {
        floats: FloatPolicy::Keep,
        ..EncodeOptions::default()
    }
}

fn shortest() -> EncodeOptions {
    EncodeOptions {
        floats: FloatPolicy::Shortest,
        ..EncodeOptions::default()
    }
}

fn hex_bytes(s: &str) -> Vec<u8> {
    if s.is_empty() {
        return Vec::new();
    }
    s.split('-')
        .map(|b| u8::from_str_radix(b, 16).expect("hex byte in the suite"))
        .collect()
}

fn to_hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join("-")
}

/// Encodes and checks the encoder's tree, and that decoding the output gives the same tree.
fn encode_checked(v: &Value, options: &EncodeOptions) -> Encoded {
    let e = encode(v, options).expect("encodes");
    e.spans
        .validate(e.bytes.len())
        .expect("encoder spans valid");
    let d = decode(&e.bytes, &DecodeOptions::default()).expect("own output decodes");
    assert_eq!(
        d.spans, e.spans,
        "decoded tree differs from encoded tree for {v:?}"
    );
    e
}

// ---------------------------------------------------------------------------------------------
// msgpack-test-suite

/// The expected value of a suite case described in JSON.
fn suite_value(kind: &str, j: &serde_json::Value) -> Value {
    match kind {
        "nil" => Value::Null,
        "bool" => Value::Bool(j.as_bool().expect("bool")),
        "number" => {
            if let Some(u) = j.as_u64() {
                Value::Int(u.into())
            } else if let Some(i) = j.as_i64() {
                Value::Int(i.into())
            } else {
                Value::f64(j.as_f64().expect("number"))
            }
        }
        "bignum" => Value::int(j.as_str().expect("bignum text").parse().expect("decimal")),
        "string" => Value::text(j.as_str().expect("string")),
        "binary" => Value::Bytes(hex_bytes(j.as_str().expect("binary hex"))),
        "array" => Value::Array(
            j.as_array()
                .expect("array")
                .iter()
                .map(json_value)
                .collect(),
        ),
        "map" => Value::Map(
            j.as_object()
                .expect("map")
                .iter()
                .map(|(k, v)| (Value::text(k.as_str()), json_value(v)))
                .collect(),
        ),
        "timestamp" => {
            let a = j.as_array().expect("[sec, nsec]");
            Value::Timestamp(Timestamp {
                seconds: a[0].as_i64().expect("seconds"),
                nanos: u32::try_from(a[1].as_u64().expect("nanos")).expect("nanos fit u32"),
            })
        }
        "ext" => {
            let a = j.as_array().expect("[type, hex]");
            Value::Ext(
                i8::try_from(a[0].as_i64().expect("type")).expect("type fits i8"),
                hex_bytes(a[1].as_str().expect("ext hex")),
            )
        }
        other => panic!("unknown suite value kind {other}"),
    }
}

/// Plain JSON inside suite arrays and maps: ints as `Int`, other numbers as float64.
fn json_value(j: &serde_json::Value) -> Value {
    match j {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(_) => suite_value("number", j),
        serde_json::Value::String(s) => Value::text(s.as_str()),
        serde_json::Value::Array(_) => suite_value("array", j),
        serde_json::Value::Object(_) => suite_value("map", j),
    }
}

/// Whether a decoded value says the same as the expected one. Numbers compare by value across
/// int and float forms (the suite lists `ca-3f-80-00-00` as an encoding of 1).
fn same(decoded: &Value, expected: &Value) -> bool {
    match (decoded, expected) {
        (Value::Float(f), Value::Int(n)) | (Value::Int(n), Value::Float(f)) => {
            f.value == *n as f64 && f.value.fract() == 0.0
        }
        (Value::Float(a), Value::Float(b)) => a.value == b.value,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Map(a), Value::Map(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((k1, v1), (k2, v2))| same(k1, k2) && same(v1, v2))
        }
        _ => decoded == expected,
    }
}

#[test]
fn msgpack_test_suite() {
    let text = std::fs::read_to_string(data("msgpack-test-suite/dist/msgpack-test-suite.json"))
        .expect("suite file");
    let suite: serde_json::Value = serde_json::from_str(&text).expect("suite json");
    let (mut cases, mut encodings, mut shortest_hits, mut keep_hits) = (0, 0, 0, 0);
    for (file, list) in suite.as_object().expect("object of files") {
        for case in list.as_array().expect("array of cases") {
            let obj = case.as_object().expect("case object");
            let listed: Vec<&str> = obj["msgpack"]
                .as_array()
                .expect("msgpack list")
                .iter()
                .map(|h| h.as_str().expect("hex"))
                .collect();
            // Prefer the exact bignum text when a case has both.
            let kind = [
                "bignum",
                "nil",
                "bool",
                "number",
                "string",
                "binary",
                "array",
                "map",
                "timestamp",
                "ext",
            ]
            .into_iter()
            .find(|k| obj.contains_key(*k))
            .expect("a value key");
            let expected = suite_value(kind, &obj[kind]);
            cases += 1;
            for h in &listed {
                encodings += 1;
                let bytes = hex_bytes(h);
                let doc = decode(&bytes, &DecodeOptions::default())
                    .unwrap_or_else(|e| panic!("{file}: {h} fails to decode: {e}"));
                doc.spans
                    .validate(bytes.len())
                    .expect("decoded spans valid");
                assert!(
                    same(&doc.value, &expected),
                    "{file}: {h} decodes to {:?}, not {expected:?}",
                    doc.value
                );
            }
            for (opts, hits) in [(shortest(), &mut shortest_hits), (keep(), &mut keep_hits)] {
                let e = encode_checked(&expected, &opts);
                let ours = to_hex(&e.bytes);
                assert!(
                    listed.contains(&ours.as_str()),
                    "{file}: {expected:?} with {opts:?} encodes as {ours}, not one of {listed:?}"
                );
                assert!(e.notes.is_empty(), "{file}: unexpected notes {:?}", e.notes);
                *hits += 1;
            }
        }
    }
    // Every case: no case lists only float64 for an f32-exact value, so both policies match.
    assert_eq!((cases, encodings), (85, 233));
    assert_eq!((shortest_hits, keep_hits), (85, 85));
}

// ---------------------------------------------------------------------------------------------
// Cross-implementation: rmpv

/// Our value and rmpv's for one JSON value (ints as ints, other numbers as float64).
fn both(j: &serde_json::Value) -> (Value, rmpv::Value) {
    match j {
        serde_json::Value::Null => (Value::Null, rmpv::Value::Nil),
        serde_json::Value::Bool(b) => (Value::Bool(*b), rmpv::Value::Boolean(*b)),
        serde_json::Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                (Value::Int(u.into()), rmpv::Value::from(u))
            } else if let Some(i) = n.as_i64() {
                (Value::Int(i.into()), rmpv::Value::from(i))
            } else {
                let f: f64 = n.to_string().parse().expect("float text");
                (Value::f64(f), rmpv::Value::F64(f))
            }
        }
        serde_json::Value::String(s) => (Value::text(s.as_str()), rmpv::Value::from(s.as_str())),
        serde_json::Value::Array(a) => {
            let (ours, theirs): (Vec<_>, Vec<_>) = a.iter().map(both).unzip();
            (Value::Array(ours), rmpv::Value::Array(theirs))
        }
        serde_json::Value::Object(o) => {
            let (ours, theirs): (Vec<_>, Vec<_>) = o
                .iter()
                .map(|(k, v)| {
                    let (a, b) = both(v);
                    (
                        (Value::text(k.as_str()), a),
                        (rmpv::Value::from(k.as_str()), b),
                    )
                })
                .unzip();
            (Value::Map(ours), rmpv::Value::Map(theirs))
        }
    }
}

#[test]
fn byte_identical_to_rmpv_on_json_benchmarks() {
    for name in ["twitter.json", "citm_catalog.json", "canada.json"] {
        let text =
            std::fs::read_to_string(data(&format!("json-bench/{name}"))).expect("bench file");
        let j: serde_json::Value = serde_json::from_str(&text).expect("bench json");
        let (ours, theirs) = both(&j);
        let e = encode(&ours, &keep()).expect("encodes");
        e.spans.validate(e.bytes.len()).expect("valid spans");
        assert!(e.notes.is_empty(), "{name}: notes {:?}", e.notes);
        let mut reference = Vec::new();
        rmpv::encode::write_value(&mut reference, &theirs).expect("rmpv encodes");
        assert_eq!(e.bytes.len(), reference.len(), "{name}: sizes differ");
        assert!(e.bytes == reference, "{name}: bytes differ from rmpv");
        // And each side reads the other back.
        let back = rmpv::decode::read_value(&mut e.bytes.as_slice()).expect("rmpv reads ours");
        assert_eq!(back, theirs, "{name}");
        let doc = decode(&reference, &DecodeOptions::default()).expect("we read rmpv's");
        assert_eq!(doc.value, ours, "{name}");
        assert_eq!(doc.spans, e.spans, "{name}: trees differ");
    }
}

// ---------------------------------------------------------------------------------------------
// Errors

#[test]
fn errors_have_exact_kind_offset_and_path() {
    let opts = DecodeOptions::default();
    // {"a": "x", "b": <str8 whose length byte is missing>}
    let e =
        decode(&[0x82, 0xa1, b'a', 0xa1, b'x', 0xa1, b'b', 0xd9], &opts).expect_err("truncated");
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 7));
    assert_eq!(e.path.to_string(), "$.b");
    assert_eq!(
        e.message,
        "the length of the string runs past the end of the input (0 bytes left)"
    );
    let p = e.partial.expect("partial");
    assert_eq!(p.value, Value::object([("a", Value::text("x"))]));
    p.spans.validate(8).expect("valid");

    // array32 claiming 4 billion items: fails at once, without allocating for them.
    let started = std::time::Instant::now();
    let e = decode(&[0xdd, 0xff, 0xff, 0xff, 0xff], &opts).expect_err("eof");
    assert!(started.elapsed().as_secs() < 1);
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 5));
    assert_eq!(e.path.to_string(), "$[0]");
    assert_eq!(e.partial.map(|p| p.value), Some(Value::Array(vec![])));

    // A str32 claiming 4 GiB.
    let e = decode(&[0x91, 0xdb, 0xff, 0xff, 0xff, 0xff, b'a'], &opts).expect_err("eof");
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 1));
    assert_eq!(
        e.message,
        "string length 4294967295 runs past the end of the input (1 byte left)"
    );

    // Invalid UTF-8 in a map key (inside a key that is an array of a map): the offset is the
    // first byte of the bad sequence (0xc3 not followed by a continuation byte), the path the
    // outer map's (keys have no path of their own, and the inner map is part of a key).
    let e = decode(&[0x81, 0x91, 0x81, 0xa2, 0xc3, 0x28, 0x01, 0x02], &opts).expect_err("utf-8");
    assert_eq!((e.kind, e.offset), (ErrorKind::Invalid, 4));
    assert_eq!(
        e.message,
        "string is not valid UTF-8: byte 0xc3 at offset 4 starts no valid character"
    );
    assert_eq!(e.path, Path::root());
    assert_eq!(e.partial.map(|p| p.value), Some(Value::Map(vec![])));

    let e = decode(&[0x92, 0x01, 0xc1], &opts).expect_err("c1");
    assert_eq!(
        (e.kind, e.offset, e.message.as_str()),
        (ErrorKind::Syntax, 2, "0xc1 is never used")
    );
    assert_eq!(e.path.to_string(), "$[1]");
    assert_eq!(
        e.partial.map(|p| p.value),
        Some(Value::Array(vec![Value::Int(1)]))
    );

    let e = decode(&[0xc3, 0xc0], &opts).expect_err("trailing");
    assert_eq!((e.kind, e.offset), (ErrorKind::TrailingData, 1));
    let p = e.partial.expect("complete document");
    assert_eq!(p.value, Value::Bool(true));
    assert_eq!(p.spans.len(), 1);
}

#[test]
fn million_deep_input_hits_the_depth_limit() {
    let bytes = vec![0x91u8; 1_000_000];
    let e = decode(&bytes, &DecodeOptions::default()).expect_err("too deep");
    assert_eq!(e.kind, ErrorKind::Limit(LimitName::Depth));
    assert_eq!(e.offset, DecodeOptions::DEFAULT_MAX_DEPTH);
    let p = e.partial.expect("partial");
    // 512 nested arrays, the innermost empty: `Value::depth` counts 511 levels below the root.
    assert_eq!(p.value.depth(), DecodeOptions::DEFAULT_MAX_DEPTH - 1);
    assert_eq!(p.spans.len(), DecodeOptions::DEFAULT_MAX_DEPTH);
    p.spans.validate(bytes.len()).expect("valid");
}

// ---------------------------------------------------------------------------------------------
// Notes

#[test]
fn notes_name_what_was_lost() {
    let big: num_bigint::BigInt = "-18446744073709551617".parse().expect("bigint");
    let v = Value::Map(vec![
        (Value::text("big"), Value::BigInt(Box::new(big))),
        (Value::text("undef"), Value::Undefined),
        (
            Value::text("tagged"),
            Value::Tag(42, Box::new(Value::Int(7))),
        ),
        (Value::text("huge"), Value::Decimal("1e400".into())),
        (
            Value::text("half"),
            Value::Float(Float::f16(half::f16::from_f32(0.25))),
        ),
        (Value::text("big"), Value::Null),
    ]);
    let e = encode_checked(&v, &keep());
    let note = |kind: NoteKind| {
        e.notes
            .iter()
            .find(|n| n.kind == kind)
            .unwrap_or_else(|| panic!("no {kind:?} note in {:#?}", e.notes))
    };
    let n = note(NoteKind::IntegerRange);
    assert_eq!(n.path.to_string(), "$.big");
    assert_eq!(
        n.message,
        "integer -18446744073709551617 does not fit MessagePack's 64-bit integers; written as text"
    );
    assert_eq!(note(NoteKind::SimpleAsNull).path.to_string(), "$.undef");
    let n = note(NoteKind::TagDropped);
    assert_eq!(n.path.to_string(), "$.tagged");
    assert!(n.message.contains("CBOR tag 42"), "{}", n.message);
    let n = note(NoteKind::DecimalRounded);
    assert_eq!(n.path.to_string(), "$.huge");
    assert_eq!(
        n.message,
        "decimal 1e400 is beyond float64's range; written as Infinity"
    );
    let n = note(NoteKind::FloatWidth);
    assert_eq!(n.path.to_string(), "$.half");
    assert_eq!(
        n.message,
        "float16 0.25 written as float32: MessagePack has no float16"
    );
    let n = note(NoteKind::DuplicateKey);
    assert_eq!(n.path, Path::root());
    assert!(n.message.contains("\"big\""), "{}", n.message);
    assert_eq!(e.notes.len(), 6);

    let d = decode(&e.bytes, &DecodeOptions::default()).expect("decodes");
    assert_eq!(
        d.value,
        Value::Map(vec![
            (Value::text("big"), Value::text("-18446744073709551617")),
            (Value::text("undef"), Value::Null),
            (Value::text("tagged"), Value::Int(7)),
            (Value::text("huge"), Value::f64(f64::INFINITY)),
            (Value::text("half"), Value::Float(Float::f32(0.25))),
            (Value::text("big"), Value::Null),
        ])
    );
}

#[test]
fn long_forms_round_trip() {
    let v = Value::Array(vec![
        Value::text("é".repeat(40_000)),
        Value::Bytes(vec![7; 70_000]),
        Value::Ext(9, vec![1; 300]),
        Value::Ext(9, vec![1; 70_000]),
        Value::Array(vec![Value::Int(1); 70_000]),
        Value::Map(
            (0..70_000)
                .map(|i| (Value::Int(i), Value::Bool(true)))
                .collect(),
        ),
    ]);
    let e = encode_checked(&v, &keep());
    let d = decode(&e.bytes, &DecodeOptions::default()).expect("decodes");
    assert_eq!(d.value, v);
    let markers: Vec<u8> = d
        .spans
        .children(wirelens::model::NodeId::ROOT)
        .map(|id| e.bytes[d.spans.node(id).span.start])
        .collect();
    assert_eq!(markers, vec![0xdb, 0xc6, 0xc8, 0xc9, 0xdd, 0xdf]);
}

// ---------------------------------------------------------------------------------------------
// Property: round trips

fn arb_int() -> impl Strategy<Value = i128> {
    prop_oneof![
        (i128::from(i64::MIN)..=i128::from(u64::MAX)),
        prop::sample::select(vec![
            0,
            127,
            128,
            255,
            256,
            65_535,
            65_536,
            u32::MAX.into(),
            u64::MAX.into(),
            -1,
            -32,
            -33,
            -128,
            -129,
            -32_768,
            -32_769,
            i32::MIN.into(),
            i64::MIN.into(),
        ]),
        (-300i128..300),
    ]
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        arb_int().prop_map(Value::Int),
        any::<f32>().prop_map(|f| Value::Float(Float::f32(f))),
        any::<f64>().prop_map(Value::f64),
        ".{0,40}".prop_map(Value::text),
        "[a-z]{30,300}".prop_map(Value::text),
        prop::collection::vec(any::<u8>(), 0..300).prop_map(Value::Bytes),
        (
            any::<i8>().prop_filter("not the timestamp type", |t| *t != -1),
            prop::collection::vec(any::<u8>(), 0..20)
        )
            .prop_map(|(t, d)| Value::Ext(t, d)),
        (any::<i64>(), 0u32..1_000_000_000)
            .prop_map(|(seconds, nanos)| Value::Timestamp(Timestamp { seconds, nanos })),
        (
            0i64..1 << 35,
            prop::sample::select(vec![0u32, 1, 999_999_999])
        )
            .prop_map(|(seconds, nanos)| Value::Timestamp(Timestamp { seconds, nanos })),
    ];
    leaf.prop_recursive(4, 64, 20, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..20).prop_map(Value::Array),
            prop::collection::vec((inner.clone(), inner), 0..20).prop_map(Value::Map),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn round_trips_with_keep(v in arb_value()) {
        let e = encode_checked(&v, &keep());
        prop_assert!(e.notes.iter().all(|n| n.kind == NoteKind::DuplicateKey), "notes {:?}", e.notes);
        let d = decode(&e.bytes, &DecodeOptions::default()).expect("decodes");
        prop_assert_eq!(&d.value, &v);
        d.spans.validate(e.bytes.len()).expect("valid");
    }

    #[test]
    fn round_trips_with_shortest_up_to_float_width(v in arb_value()) {
        // The encoder names non-text keys by the *source* key (so every format gives one path),
        // and a float64 key narrowed to float32 reads back with another summary: compare the
        // byte layout of the trees, not their key texts.
        let e = encode(&v, &shortest()).expect("encodes");
        e.spans.validate(e.bytes.len()).expect("valid spans");
        let d = decode(&e.bytes, &DecodeOptions::default()).expect("decodes");
        prop_assert_eq!(widen(&d.value), widen(&v));
        let layout = |t: &wirelens::model::SpanTree| -> Vec<_> {
            t.nodes().map(|n| (n.key, n.span, n.header_end, n.payload, n.parent)).collect()
        };
        prop_assert_eq!(layout(&d.spans), layout(&e.spans));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        match decode(&bytes, &DecodeOptions::default()) {
            Ok(d) => {
                d.spans.validate(bytes.len()).expect("valid");
            }
            Err(e) => {
                prop_assert!(e.offset <= bytes.len());
                if let Some(p) = e.partial {
                    p.spans.validate(bytes.len()).expect("valid partial");
                }
            }
        }
    }
}

/// The value with every float widened to float64 (Shortest may narrow exact ones to float32).
fn widen(v: &Value) -> Value {
    match v {
        Value::Float(f) => Value::f64(f.value),
        Value::Array(a) => Value::Array(a.iter().map(widen).collect()),
        Value::Map(m) => Value::Map(m.iter().map(|(k, x)| (widen(k), widen(x))).collect()),
        other => other.clone(),
    }
}
