//! Unit tests of the JSON encoder (`encode.rs`).

use super::*;

fn text(v: &Value) -> String {
    let e = encode(v, &EncodeOptions::default()).expect("encodable");
    String::from_utf8(e.bytes).expect("JSON is UTF-8")
}

#[test]
fn escapes_like_serde_json() {
    let s = "a\"b\\c\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}/é😀";
    assert_eq!(
        text(&Value::text(s)),
        serde_json::to_string(s).expect("serde_json")
    );
    assert_eq!(
        text(&Value::text(s)),
        "\"a\\\"b\\\\c\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}/é😀\""
    );
}

#[test]
fn floats_like_serde_json() {
    // serde_json 1.0.154 formats f64 with zmij, which writes positive exponents as `e+20`;
    // we write ryu's `e20` (the project's rule, and nativejson-benchmark's roundtrip27). The
    // digits and the choice of notation are the same.
    for x in [
        1.0,
        1e20,
        1e21,
        1e16,
        1e15,
        1e-7,
        0.1,
        -0.0,
        5e-324,
        f64::MAX,
        123456789.125,
    ] {
        let theirs = serde_json::to_string(&x)
            .expect("serde_json")
            .replace("e+", "e");
        assert_eq!(text(&Value::f64(x)), theirs);
    }
    assert_eq!(text(&Value::f64(1e21)), "1e21");
    assert_eq!(
        text(&Value::Float(crate::model::Float::f32(0.1))),
        "0.10000000149011612"
    );
}

#[test]
fn long_bigint_note_is_short() {
    let digits = "12345".repeat(20);
    let v = Value::BigInt(digits.parse().expect("digits"));
    let e = encode(&v, &EncodeOptions::default()).expect("encodable");
    assert_eq!(e.bytes, digits.as_bytes());
    assert_eq!(
        e.notes[0].message,
        "integer 1234512345123451234512345123451234512345… (100 digits) is beyond ±2^53; \
         JavaScript readers will round it"
    );
}

#[test]
fn tag_names() {
    let v = Value::Tag(1, Box::new(Value::Int(5)));
    let e = encode(&v, &EncodeOptions::default()).expect("encodable");
    assert_eq!(e.bytes, b"5");
    assert_eq!(e.notes.len(), 1);
    assert_eq!(
        e.notes[0].message,
        "CBOR tag 1 (epoch time) dropped; the number is written as is"
    );
    let v = Value::Tag(99, Box::new(Value::text("x")));
    let e = encode(&v, &EncodeOptions::default()).expect("encodable");
    assert_eq!(
        e.notes[0].message,
        "CBOR tag 99 dropped; the text is written as is"
    );
}

#[test]
fn bad_decimal_is_an_error() {
    let v = Value::Array(vec![Value::Decimal("1.2.3".into())]);
    let err = encode(&v, &EncodeOptions::default()).expect_err("not a JSON number");
    assert_eq!(err.path.to_string(), "$[0]");
}

#[test]
fn canonical_sorts_by_utf16() {
    // U+1F600 sorts after U+FF61 by code point but before it in UTF-16 (surrogate D83D).
    let v = Value::object([
        ("\u{1F600}", Value::Int(1)),
        ("\u{FF61}", Value::Int(2)),
        ("a", Value::Int(3)),
    ]);
    let e = encode(
        &v,
        &EncodeOptions {
            canonical: true,
            ..EncodeOptions::default()
        },
    )
    .expect("encodable");
    assert_eq!(
        String::from_utf8(e.bytes).expect("utf8"),
        "{\"a\":3,\"😀\":1,\"｡\":2}"
    );
    e.spans
        .validate(e.spans.node(crate::model::NodeId(0)).span.end)
        .expect("valid spans");
}
