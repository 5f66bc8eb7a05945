//! The same data through every format: values survive JSON → MessagePack → CBOR → JSON, encoded
//! span trees agree with what the decoders find in the same bytes, and one path names the same
//! field in every encoding.

use proptest::prelude::*;
use wirelens::codec::{decode, encode, DecodeOptions, EncodeOptions, FloatPolicy, Format};
use wirelens::model::{Float, Path, Value};

const BENCH: &[&str] = &["twitter.json", "citm_catalog.json", "canada.json"];

fn keep() -> EncodeOptions {
    EncodeOptions {
        floats: FloatPolicy::Keep,
        ..EncodeOptions::default()
    }
}

fn bench(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/data/json-bench/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Encodes `value` as `format`, checks the encoded span tree against a fresh decode of the same
/// bytes, and returns the decoded value.
fn through(value: &Value, format: Format, options: &EncodeOptions) -> Value {
    let enc = encode(value, format, options).unwrap_or_else(|e| panic!("encode {format}: {e}"));
    enc.spans
        .validate(enc.bytes.len())
        .unwrap_or_else(|e| panic!("{format} encoder tree: {e}"));
    let doc = decode(&enc.bytes, format, &DecodeOptions::default())
        .unwrap_or_else(|e| panic!("decode own {format}: {e}"));
    assert_eq!(
        doc.spans, enc.spans,
        "{format}: encoder and decoder disagree on spans"
    );
    doc.value
}

/// Equal values, ignoring the width floats were written at.
fn same_meaning(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => {
            x.value.to_bits() == y.value.to_bits() || (x.value.is_nan() && y.value.is_nan())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_meaning(a, b))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, va), (kb, vb))| same_meaning(ka, kb) && same_meaning(va, vb))
        }
        _ => a == b,
    }
}

#[test]
fn benchmark_files_survive_every_format_exactly() {
    for name in BENCH {
        let json = bench(name);
        let original = decode(&json, Format::Json, &DecodeOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .value;
        let mp = through(&original, Format::MessagePack, &keep());
        assert_eq!(mp, original, "{name}: JSON → MessagePack");
        let cbor = through(&mp, Format::Cbor, &keep());
        assert_eq!(cbor, original, "{name}: → CBOR");
        let back = through(&cbor, Format::Json, &keep());
        assert_eq!(back, original, "{name}: → JSON");
    }
}

#[test]
fn benchmark_files_keep_their_meaning_with_shortest_floats() {
    for name in BENCH {
        let json = bench(name);
        let original = decode(&json, Format::Json, &DecodeOptions::default())
            .expect("bench file decodes")
            .value;
        let options = EncodeOptions::default();
        let mp = through(&original, Format::MessagePack, &options);
        let cbor = through(&mp, Format::Cbor, &options);
        let back = through(&cbor, Format::Json, &options);
        assert!(same_meaning(&back, &original), "{name}");
        // Shortest floats never make a binary encoding larger.
        let wide = encode(&original, Format::Cbor, &keep()).expect("encode");
        let short = encode(&original, Format::Cbor, &options).expect("encode");
        assert!(short.bytes.len() <= wide.bytes.len(), "{name}");
    }
}

#[test]
fn one_path_names_the_same_field_in_every_format() {
    let json = br#"{"user_id":10042,"roles":["admin","editor"],"geo":{"lat":38.7104}}"#;
    let doc = decode(json, Format::Json, &DecodeOptions::default()).expect("decodes");
    let cases = [
        ("$.user_id", Format::Json, b"10042".to_vec()),
        ("$.user_id", Format::MessagePack, vec![0xcd, 0x27, 0x3a]),
        ("$.user_id", Format::Cbor, vec![0x19, 0x27, 0x3a]),
        ("$.roles[1]", Format::Json, b"\"editor\"".to_vec()),
        ("$.roles[1]", Format::MessagePack, b"\xa6editor".to_vec()),
        ("$.roles[1]", Format::Cbor, b"\x66editor".to_vec()),
    ];
    for (path, format, expected) in cases {
        let enc = encode(&doc.value, format, &EncodeOptions::default()).expect("encodes");
        let hits = enc.spans.find(&Path::parse(path).expect("path"));
        assert_eq!(hits.len(), 1, "{path} in {format}");
        let span = enc.spans.node(hits[0]).span;
        assert_eq!(
            &enc.bytes[span.range()],
            &expected[..],
            "{path} in {format}"
        );
        // And the byte under the field's last byte maps back to the same path.
        let (id, _) = enc.spans.node_at(span.end - 1).expect("a node");
        assert_eq!(enc.spans.path(id).to_string(), path);
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Int(n.into())),
        any::<u64>().prop_map(|n| Value::Int(n.into())),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Value::Float(Float::f64(f))),
        "\\PC{0,12}".prop_map(Value::text),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{0,6}|\\PC{0,4}", inner), 0..6).prop_map(|entries| {
                Value::Map(
                    entries
                        .into_iter()
                        .map(|(k, v)| (Value::text(k), v))
                        .collect(),
                )
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn json_sayable_values_survive_every_format(v in json_value()) {
        let mp = through(&v, Format::MessagePack, &keep());
        prop_assert_eq!(&mp, &v);
        let cbor = through(&mp, Format::Cbor, &keep());
        prop_assert_eq!(&cbor, &v);
        let json = through(&cbor, Format::Json, &keep());
        prop_assert_eq!(&json, &v);
        for format in Format::ALL {
            let enc = encode(&v, format, &EncodeOptions { canonical: true, ..keep() }).expect("encodes");
            prop_assert!(enc.spans.validate(enc.bytes.len()).is_ok());
        }
    }
}
