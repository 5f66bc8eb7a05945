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
    let v = Value::BigInt(Box::new(digits.parse().expect("digits")));
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

/// A small deterministic generator for the tests below.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// [`write_f64`]'s short-decimal path writes what ryu writes: decimals of every length and
/// scale, their neighbours, whole numbers, the edges of the range, and arbitrary bit patterns.
#[test]
fn short_decimals_like_ryu() {
    let mut state = 0x9E37_79B9_7F4A_7C15;
    let mut xs = vec![
        55.27,
        0.1,
        0.3,
        1e-4,
        9.9999e-5,
        1e15,
        999999999999999.9,
        1e15 - 1.0,
        0.5,
        100.0,
        2.0e14,
        123456.789,
        0.000123,
        4503599627370496.5,
        9007199254740992.0,
        1.0000000000000002,
    ];
    for _ in 0..200_000 {
        let r = xorshift(&mut state);
        let digits = r % 10u64.pow((r >> 60) as u32 % 16 + 1);
        let scale = 10f64.powi(((r >> 40) % 12) as i32);
        let x = digits as f64 / scale;
        xs.extend([x, -x, f64::from_bits(x.to_bits() + 1), f64::from_bits(r)]);
    }
    for x in xs.into_iter().filter(|x| x.is_finite()) {
        let mut out = Vec::new();
        write_f64(&mut out, x);
        assert_eq!(
            std::str::from_utf8(&out).expect("ASCII"),
            ryu::Buffer::new().format_finite(x),
            "{x:e}"
        );
    }
}

/// [`any_escape`] agrees with the table, byte by byte, at every length around the word sizes.
#[test]
fn escape_scan_agrees_with_the_table() {
    let mut state = 0x2545_F491_4F6C_DD1D;
    for len in 0..40 {
        for _ in 0..300 {
            let mut bytes: Vec<u8> = (0..len)
                .map(|_| b'a' + (xorshift(&mut state) % 26) as u8)
                .collect();
            if len > 0 && xorshift(&mut state) % 2 == 0 {
                let at = (xorshift(&mut state) % len) as usize;
                bytes[at] = [b'"', b'\\', 0, 0x1f, 0x7f, 0x80, 0xff][at % 7];
            }
            let want = bytes.iter().any(|&b| ESCAPE[usize::from(b)] != 0);
            assert_eq!(any_escape(&bytes), want, "{bytes:?}");
        }
    }
}
