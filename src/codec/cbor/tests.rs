//! Unit tests of the CBOR codec: spans, errors, encoder decisions, diagnostic notation.

use super::*;
use crate::codec::{DecodeOptions, EncodeOptions, ErrorKind, FloatPolicy, LimitName, NoteKind};
use crate::model::{ByteRole, Float, Kind, NodeId, Path, Span, Timestamp, Value};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("test hex"))
        .collect()
}

fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn dec(s: &str) -> crate::codec::Document {
    let bytes = hex(s);
    let doc = decode(&bytes, &DecodeOptions::default()).expect("decodes");
    doc.spans.validate(bytes.len()).expect("valid spans");
    doc
}

fn err(bytes: &[u8]) -> crate::codec::DecodeError {
    decode(bytes, &DecodeOptions::default()).expect_err("must be rejected")
}

fn enc(v: &Value) -> crate::codec::Encoded {
    enc_with(v, &EncodeOptions::default())
}

fn enc_with(v: &Value, o: &EncodeOptions) -> crate::codec::Encoded {
    let e = encode(v, o).expect("encodes");
    e.spans.validate(e.bytes.len()).expect("valid spans");
    e
}

/// (header, payload, span) of the node at `path`.
fn parts(doc: &crate::model::SpanTree, path: &str) -> (Span, Span, Span) {
    let ids = doc.find(&Path::parse(path).expect("path"));
    assert_eq!(ids.len(), 1, "one node at {path}");
    let n = doc.node(ids[0]);
    (n.header(), n.payload, n.span)
}

#[test]
fn scalar_spans_follow_the_conventions() {
    // Inline integer: empty header, the byte is payload.
    let d = dec("0a");
    assert_eq!(
        parts(&d.spans, "$"),
        (Span::new(0, 0), Span::new(0, 1), Span::new(0, 1))
    );
    // Integer with argument bytes: initial byte is header, argument is payload.
    let d = dec("1903e8");
    assert_eq!(d.value, Value::Int(1000));
    assert_eq!(
        parts(&d.spans, "$"),
        (Span::new(0, 1), Span::new(1, 3), Span::new(0, 3))
    );
    // Tagged: tag head joins the header.
    let d = dec("c11a514b67b0");
    assert_eq!(d.value, Value::Tag(1, Box::new(Value::Int(1_363_896_240))));
    assert_eq!(
        parts(&d.spans, "$"),
        (Span::new(0, 2), Span::new(2, 6), Span::new(0, 6))
    );
    assert_eq!(d.spans.node(NodeId::ROOT).kind, Kind::Int);
    // Text: head is header.
    let d = dec("6449455446");
    assert_eq!(
        parts(&d.spans, "$"),
        (Span::new(0, 1), Span::new(1, 5), Span::new(0, 5))
    );
    // Bignum: tag + byte-string head are header, magnitude is payload.
    let d = dec("c249010000000000000000");
    assert_eq!(
        parts(&d.spans, "$"),
        (Span::new(0, 2), Span::new(2, 11), Span::new(0, 11))
    );
    // Float.
    let d = dec("f93e00");
    assert_eq!(d.value, Value::Float(Float::f16(half::f16::from_f32(1.5))));
    assert_eq!(
        parts(&d.spans, "$"),
        (Span::new(0, 1), Span::new(1, 3), Span::new(0, 3))
    );
    // Indefinite text: chunks are payload, break is structure.
    let d = dec("7f657374726561646d696e67ff");
    assert_eq!(d.value, Value::text("streaming"));
    assert_eq!(
        parts(&d.spans, "$"),
        (Span::new(0, 1), Span::new(1, 12), Span::new(0, 13))
    );
    assert_eq!(d.spans.node_at(12).map(|x| x.1), Some(ByteRole::Structure));
}

#[test]
fn container_spans_and_keys() {
    // {"a": 1, "b": [2, 3]}
    let d = dec("a26161016162820203");
    let root = d.spans.node(NodeId::ROOT);
    assert_eq!(
        (root.header(), root.payload, root.span),
        (Span::new(0, 1), Span::new(1, 9), Span::new(0, 9))
    );
    let ids = d.spans.find(&Path::parse("$.b").expect("path"));
    let b = d.spans.node(ids[0]);
    assert_eq!(b.key, Some(Span::new(4, 6)));
    assert_eq!(
        (b.header(), b.payload, b.span),
        (Span::new(6, 7), Span::new(7, 9), Span::new(6, 9))
    );
    assert_eq!(d.spans.len(), 5, "map, a, b, b[0], b[1]: keys have no node");
    // Indefinite array: payload ends at the break.
    let d = dec("9f01ff");
    let root = d.spans.node(NodeId::ROOT);
    assert_eq!(
        (root.payload, root.span),
        (Span::new(1, 2), Span::new(0, 3))
    );
    // Container keys produce no node either.
    let d = dec("a1820102f5");
    assert_eq!(d.spans.len(), 2);
    assert_eq!(d.spans.path(NodeId(1)).to_string(), "${array(2)}");
    assert_eq!(d.spans.node(NodeId(1)).key, Some(Span::new(1, 4)));
}

#[test]
fn error_truncated_map() {
    // {1: 2, 3: <missing>}
    let e = err(&hex("a2010203"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 4));
    assert_eq!(e.path.to_string(), "${3}");
    let p = e.partial.expect("partial");
    assert_eq!(p.value, Value::Map(vec![(Value::Int(1), Value::Int(2))]));
    p.spans.validate(4).expect("valid partial spans");
    assert_eq!(p.spans.node(NodeId::ROOT).span, Span::new(0, 4));
}

#[test]
fn error_reserved_additional_information() {
    let e = err(&hex("821c"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Syntax, 1));
    assert_eq!(e.path.to_string(), "$[0]");
    assert!(e.message.contains("reserved"), "{}", e.message);
    assert_eq!(e.partial.expect("partial").value, Value::Array(vec![]));
}

#[test]
fn error_break_outside_indefinite() {
    let e = err(&hex("8201ff"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Syntax, 2));
    assert_eq!(e.path.to_string(), "$[1]");
    assert_eq!(err(&hex("ff")).kind, ErrorKind::Syntax);
    // A break after a key in an indefinite map, and a break right after a tag.
    let e = err(&hex("bf6161ff"));
    assert_eq!(
        (e.kind, e.offset, e.path.to_string().as_str()),
        (ErrorKind::Syntax, 3, "$.a")
    );
    let e = err(&hex("9fc1ff"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Syntax, 2));
}

#[test]
fn error_indefinite_text_with_byte_chunk() {
    // {"k": (_ "a", h'62')}
    let e = err(&hex("a1616b7f61614162ff"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Syntax, 6));
    assert_eq!(e.path.to_string(), "$.k");
    // Nested indefinite chunk.
    let e = err(&hex("5f5f4100ffff"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Syntax, 1));
}

#[test]
fn error_invalid_utf8() {
    // ["ok", "a\xff"]
    let e = err(&hex("82626f6b6261ff"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Invalid, 6));
    assert_eq!(e.path.to_string(), "$[1]");
    assert_eq!(
        e.partial.expect("partial").value,
        Value::Array(vec![Value::text("ok")])
    );
    // Each chunk on its own: a character split across chunks is invalid.
    let e = err(&hex("7f61c361bcff"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Invalid, 2));
}

#[test]
fn error_deep_nesting_is_a_limit_not_a_stack_overflow() {
    let bytes = vec![0x81u8; 1_000_000];
    let e = err(&bytes);
    assert_eq!(
        (e.kind, e.offset),
        (ErrorKind::Limit(LimitName::Depth), 512)
    );
    assert_eq!(e.path.segments().len(), 512);
    let p = e.partial.expect("partial");
    // 512 open arrays, the innermost empty (Value::depth counts the levels holding items).
    assert_eq!(p.spans.len(), 512);
    assert_eq!(p.value.depth(), 511);
    p.spans.validate(bytes.len()).expect("valid");
    // Exactly at the limit decodes.
    let mut ok = vec![0x81u8; 512];
    ok.push(0x00);
    assert_eq!(
        decode(&ok, &DecodeOptions::default())
            .expect("at limit")
            .value
            .depth(),
        512
    );
}

#[test]
fn error_chained_tags_do_not_recurse() {
    let bytes = vec![0xc6u8; 1_000_000];
    let e = err(&bytes);
    assert_eq!(
        (e.kind, e.offset),
        (ErrorKind::Limit(LimitName::Depth), 512)
    );
    assert!(e.partial.is_none());
    // Within the budget, tags nest as values.
    let mut ok = vec![0xc6u8; 512];
    ok.push(0x00);
    let d = decode(&ok, &DecodeOptions::default()).expect("512 tags");
    let mut v = &d.value;
    let mut n = 0;
    while let Value::Tag(6, inner) = v {
        v = inner;
        n += 1;
    }
    assert_eq!((n, v), (512, &Value::Int(0)));
    assert_eq!(d.spans.node(NodeId::ROOT).header(), Span::new(0, 512));
}

#[test]
fn error_huge_length_is_eof_without_allocation() {
    let e = err(&hex("5b7fffffffffffffff00"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 0));
    assert!(e.message.contains("1 bytes left"), "{}", e.message);
    let e = err(&hex("9b7fffffffffffffff00"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 10));
    let e = err(&hex("19"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 0));
}

#[test]
fn error_not_well_formed_simple_and_indefinite_scalars() {
    assert_eq!(err(&hex("f818")).kind, ErrorKind::Syntax);
    assert_eq!(err(&hex("1f")).kind, ErrorKind::Syntax);
    assert_eq!(err(&hex("3f")).kind, ErrorKind::Syntax);
    assert_eq!(err(&hex("df00")).kind, ErrorKind::Syntax);
    assert_eq!(dec("f820").value, Value::Simple(32));
}

#[test]
fn trailing_data_keeps_the_complete_document() {
    let e = err(&hex("0102"));
    assert_eq!((e.kind, e.offset), (ErrorKind::TrailingData, 1));
    assert_eq!(e.partial.expect("partial").value, Value::Int(1));
}

#[test]
fn bignums_normalise_and_other_tags_stay() {
    assert_eq!(dec("c24101").value, Value::Int(1));
    assert_eq!(dec("c34100").value, Value::Int(-1));
    assert_eq!(dec("c200").value, Value::Tag(2, Box::new(Value::Int(0))));
    assert_eq!(
        dec("c1c24101").value,
        Value::Tag(1, Box::new(Value::Int(1)))
    );
    assert_eq!(dec("c25f4101ff").value, Value::Int(1));
}

#[test]
fn encoder_writes_shortest_heads() {
    for (v, h) in [
        (Value::Int(0), "00"),
        (Value::Int(23), "17"),
        (Value::Int(24), "1818"),
        (Value::Int(256), "190100"),
        (Value::Int(65536), "1a00010000"),
        (Value::Int(1 << 32), "1b0000000100000000"),
        (Value::Int(-24), "37"),
        (Value::Int(-25), "3818"),
        (Value::Int(crate::model::INT_MIN), "3bffffffffffffffff"),
        (
            Value::Int(crate::model::INT_MIN - 1),
            "c349010000000000000000",
        ),
        (Value::Simple(255), "f8ff"),
        (Value::Simple(16), "f0"),
    ] {
        assert_eq!(to_hex(&enc(&v).bytes), h, "{v:?}");
    }
}

#[test]
fn float_policies() {
    let f = Value::f64(1.5);
    // By default a float keeps its width, as cbor2.dumps writes a Python float.
    assert_eq!(to_hex(&enc(&f).bytes), "fb3ff8000000000000");
    let keep = EncodeOptions {
        floats: FloatPolicy::Keep,
        ..EncodeOptions::default()
    };
    assert_eq!(keep, EncodeOptions::default());
    // Shortest: preferred serialization (RFC 8949 §4.1).
    let shortest = EncodeOptions {
        floats: FloatPolicy::Shortest,
        ..EncodeOptions::default()
    };
    assert_eq!(to_hex(&enc_with(&f, &shortest).bytes), "f93e00");
    let nan = Value::f64(f64::NAN);
    assert_eq!(to_hex(&enc_with(&nan, &shortest).bytes), "f97e00");
    assert_eq!(to_hex(&enc(&nan).bytes), "fb7ff8000000000000");
    let big = Value::f64(100000.0);
    assert_eq!(to_hex(&enc_with(&big, &shortest).bytes), "fa47c35000");
    assert_eq!(to_hex(&enc(&big).bytes), "fb40f86a0000000000");
    // Canonical forces shortest even with Keep.
    let canon = EncodeOptions {
        canonical: true,
        floats: FloatPolicy::Keep,
        ..EncodeOptions::default()
    };
    assert_eq!(to_hex(&enc_with(&f, &canon).bytes), "f93e00");
    // A width that cannot hold the value is widened, with a note.
    let bad = Value::Float(Float {
        value: 1.1,
        width: crate::model::FloatWidth::F16,
    });
    let e = enc_with(&bad, &keep);
    assert_eq!(to_hex(&e.bytes), "fb3ff199999999999a");
    assert_eq!(e.notes[0].kind, NoteKind::FloatWidth);
}

#[test]
fn canonical_sorts_by_encoded_key_bytes() {
    let v = Value::Map(vec![
        (Value::text("bb"), Value::Int(1)),
        (Value::Int(10), Value::Int(2)),
        (Value::text("a"), Value::Int(3)),
        (Value::Int(-1), Value::Int(4)),
    ]);
    let o = EncodeOptions {
        canonical: true,
        ..EncodeOptions::default()
    };
    let e = enc_with(&v, &o);
    // 0a < 20 < 61 61 < 62 62 62
    assert_eq!(
        to_hex(&e.bytes),
        "a40a0220046161036262620 1".replace(' ', "")
    );
    let d = decode(&e.bytes, &DecodeOptions::default()).expect("decodes own output");
    assert_eq!(d.spans, e.spans);
    assert_eq!(d.spans.find(&Path::parse("$.bb").expect("path")).len(), 1);
}

#[test]
fn duplicate_keys_are_written_with_a_note() {
    let v = Value::object([(
        "x",
        Value::Map(vec![
            (Value::text("a"), Value::Int(1)),
            (Value::text("a"), Value::Int(2)),
            (Value::Int(1), Value::Null),
            (Value::Int(1), Value::Null),
        ]),
    )]);
    let e = enc(&v);
    assert_eq!(to_hex(&e.bytes), "a16178a461610161610201f601f6");
    assert_eq!(e.notes.len(), 1);
    assert_eq!(e.notes[0].kind, NoteKind::DuplicateKey);
    assert_eq!(e.notes[0].path.to_string(), "$.x");
    assert_eq!(e.notes[0].count, 2);
    assert!(
        e.notes[0].message.contains("\"a\""),
        "{}",
        e.notes[0].message
    );
}

#[test]
fn ext_is_written_as_bytes_with_a_note() {
    let v = Value::Array(vec![Value::Ext(5, vec![1, 2])]);
    let e = enc(&v);
    assert_eq!(to_hex(&e.bytes), "81420102");
    assert_eq!(e.notes.len(), 1);
    assert_eq!(e.notes[0].kind, NoteKind::ExtDropped);
    assert_eq!(e.notes[0].path.to_string(), "$[0]");
}

#[test]
fn simple_values_that_cbor_cannot_write() {
    let e = enc(&Value::Simple(24));
    assert_eq!(to_hex(&e.bytes), "f6");
    assert_eq!(e.notes[0].kind, NoteKind::SimpleAsNull);
    let e = enc(&Value::Simple(20));
    assert_eq!(to_hex(&e.bytes), "f4");
    assert!(e.notes.is_empty());
}

#[test]
fn decimals_are_exact_decimal_fractions() {
    let e = enc(&Value::Decimal("273.15".into()));
    // 4([-2, 27315])
    assert_eq!(to_hex(&e.bytes), "c48221196ab3");
    assert!(e.notes.is_empty());
    assert_eq!(e.spans.node(NodeId::ROOT).header(), Span::new(0, 2));
    assert_eq!(
        diagnostic(&Value::Decimal("273.15".into())),
        "4([-2, 27315])"
    );
    let d = dec(&to_hex(&e.bytes));
    assert_eq!(
        d.value,
        Value::Tag(
            4,
            Box::new(Value::Array(vec![Value::Int(-2), Value::Int(27315)]))
        )
    );
    // Large mantissa: a bignum; large exponent: still an integer.
    let e = enc(&Value::Decimal(
        "-123456789012345678901234567890e400".into(),
    ));
    assert_eq!(
        diagnostic(
            &decode(&e.bytes, &DecodeOptions::default())
                .expect("decodes")
                .value
        ),
        "4([400, -123456789012345678901234567890])"
    );
    // Exponent beyond CBOR integers: rounded, with a note.
    let e = enc(&Value::Decimal("1e99999999999999999999999".into()));
    assert_eq!(to_hex(&e.bytes), "f97c00");
    assert_eq!(e.notes[0].kind, NoteKind::DecimalRounded);
    assert!(encode(&Value::Decimal("x1".into()), &EncodeOptions::default()).is_err());
}

#[test]
fn timestamps_use_tags_0_and_1() {
    let t = Value::Timestamp(Timestamp {
        seconds: 1_363_896_240,
        nanos: 0,
    });
    assert_eq!(to_hex(&enc(&t).bytes), "c11a514b67b0");
    let t = Value::Timestamp(Timestamp {
        seconds: -1,
        nanos: 0,
    });
    assert_eq!(to_hex(&enc(&t).bytes), "c120");
    let t = Value::Timestamp(Timestamp {
        seconds: 1_700_000_000,
        nanos: 250_000_000,
    });
    let e = enc(&t);
    assert!(e.notes.is_empty());
    let d = dec(&to_hex(&e.bytes));
    assert_eq!(
        d.value,
        Value::Tag(0, Box::new(Value::text("2023-11-14T22:13:20.250Z")))
    );
}

#[test]
fn encoded_spans_match_decoded_spans() {
    let v = Value::Map(vec![
        (
            Value::text("a"),
            Value::Array(vec![Value::Int(1), Value::Int(1000), Value::text("x")]),
        ),
        (
            Value::Array(vec![Value::Int(1)]),
            Value::Tag(32, Box::new(Value::text("http://x"))),
        ),
        (Value::Int(7), Value::Bytes(vec![1, 2, 3])),
        (Value::text("f"), Value::Float(Float::f32(100000.0))),
        (
            Value::text("b"),
            Value::BigInt(Box::new(num_bigint::BigInt::from(u64::MAX) * 4)),
        ),
    ]);
    let e = enc(&v);
    let d = decode(&e.bytes, &DecodeOptions::default()).expect("decodes");
    assert_eq!(d.value, v);
    assert_eq!(d.spans, e.spans);
    assert_eq!(e.spans.path(NodeId(6)).to_string(), "${7}");
}

#[test]
fn diagnostic_notation() {
    let v = Value::Array(vec![
        Value::Int(1),
        Value::Array(vec![Value::Int(2), Value::Int(3)]),
        Value::object([("a", Value::Bytes(vec![1, 2]))]),
        Value::Tag(1, Box::new(Value::Int(1_363_896_240))),
        Value::Simple(16),
        Value::Undefined,
        Value::f64(f64::NAN),
        Value::f64(f64::NEG_INFINITY),
        Value::f64(1.0e300),
        Value::f64(100000.0),
        Value::f64(5.960464477539063e-8),
        Value::f64(-0.0),
        Value::text("\"\\"),
        Value::BigInt(Box::new(num_bigint::BigInt::from(u64::MAX) + 1)),
    ]);
    assert_eq!(
        diagnostic(&v),
        "[1, [2, 3], {\"a\": h'0102'}, 1(1363896240), simple(16), undefined, NaN, -Infinity, \
         1.0e+300, 100000.0, 5.960464477539063e-8, -0.0, \"\\\"\\\\\", 18446744073709551616]"
    );
}
