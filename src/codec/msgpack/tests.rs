use super::*;
use crate::codec::{DecodeOptions, EncodeOptions, ErrorKind, FloatPolicy, LimitName, NoteKind};
use crate::model::{ByteRole, Float, Kind, NodeId, Path, Span, Timestamp};

fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
        .collect()
}

fn dec(bytes: &[u8]) -> crate::codec::Document {
    let d = decode(bytes, &DecodeOptions::default()).expect("decodes");
    d.spans.validate(bytes.len()).expect("valid spans");
    d
}

fn enc(v: &Value) -> crate::codec::Encoded {
    let e = encode(v, &EncodeOptions::default()).expect("encodes");
    e.spans.validate(e.bytes.len()).expect("valid spans");
    e
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

/// One item of every scalar marker, as hex, with its value.
fn scalar_cases() -> Vec<(&'static str, Value)> {
    vec![
        ("05", Value::Int(5)),
        ("ff", Value::Int(-1)),
        ("e0", Value::Int(-32)),
        ("c0", Value::Null),
        ("c2", Value::Bool(false)),
        ("c3", Value::Bool(true)),
        ("cc ff", Value::Int(255)),
        ("cd 01 00", Value::Int(256)),
        ("ce 00 01 00 00", Value::Int(65536)),
        ("cf ff ff ff ff ff ff ff ff", Value::Int(u64::MAX.into())),
        ("d0 80", Value::Int(-128)),
        ("d1 80 00", Value::Int(-32768)),
        ("d2 80 00 00 00", Value::Int(i32::MIN.into())),
        ("d3 80 00 00 00 00 00 00 00", Value::Int(i64::MIN.into())),
        ("ca 3f c0 00 00", Value::Float(Float::f32(1.5))),
        ("cb 3f f8 00 00 00 00 00 00", Value::f64(1.5)),
        ("a1 61", Value::text("a")),
        ("d9 01 61", Value::text("a")),
        ("da 00 01 61", Value::text("a")),
        ("db 00 00 00 01 61", Value::text("a")),
        ("c4 01 07", Value::Bytes(vec![7])),
        ("c5 00 01 07", Value::Bytes(vec![7])),
        ("c6 00 00 00 01 07", Value::Bytes(vec![7])),
        ("d4 05 01", Value::Ext(5, vec![1])),
        ("d5 05 01 02", Value::Ext(5, vec![1, 2])),
        (
            "d8 05 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f",
            Value::Ext(5, (0..16).collect()),
        ),
        ("c7 03 fe 01 02 03", Value::Ext(-2, vec![1, 2, 3])),
        ("c8 00 01 05 09", Value::Ext(5, vec![9])),
        ("c9 00 00 00 01 05 09", Value::Ext(5, vec![9])),
        (
            "d6 ff 00 00 00 01",
            Value::Timestamp(Timestamp {
                seconds: 1,
                nanos: 0,
            }),
        ),
        // ts64 with nanoseconds 2^30 - 1 > 999,999,999: kept as ext, data intact.
        (
            "d7 ff ff ff ff fc 00 00 00 00",
            Value::Ext(-1, hex("ff ff ff fc 00 00 00 00")),
        ),
        // An ext -1 of another length stays an ext.
        ("d4 ff 01", Value::Ext(-1, vec![1])),
        // Text at the inline limit and past it, and text that is not ASCII.
        (
            "b6 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 6e 6f 70 71 72 73 74 75 76",
            Value::text("abcdefghijklmnopqrstuv"),
        ),
        (
            "b7 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 6e 6f 70 71 72 73 74 75 76 77",
            Value::text("abcdefghijklmnopqrstuvw"),
        ),
        ("a2 c3 a9", Value::text("é")),
        ("a0", Value::text("")),
    ]
}

#[test]
fn decodes_every_scalar_marker() {
    for (h, want) in scalar_cases() {
        assert_eq!(dec(&hex(h)).value, want, "{h}");
    }
}

/// Scalars inside containers are read on a path of their own (see `scalar_run`); each must
/// read as it does at the root: the same value, node and spans (moved to its place), and when
/// it is cut short, the same error at the same place.
#[test]
fn scalars_in_containers_read_as_at_the_root() {
    let parts = |n: &crate::model::Node, shift: usize| {
        let back = |s: Span| Span::new(s.start - shift, s.end - shift);
        (n.kind, back(n.span), n.header_end - shift, back(n.payload))
    };
    for (h, want) in scalar_cases() {
        let item = hex(h);
        let root = dec(&item);
        let at_root = parts(&root.spans.node(NodeId::ROOT), 0);
        // [5, item]
        let in_array = [&hex("92 05")[..], &item].concat();
        let d = dec(&in_array);
        assert_eq!(
            d.value,
            Value::Array(vec![Value::Int(5), want.clone()]),
            "{h}"
        );
        assert_eq!(
            parts(&d.spans.node(NodeId(2)), 2),
            at_root,
            "{h} in an array"
        );
        assert_eq!(d.spans.path(NodeId(2)).to_string(), "$[1]");
        // {"a": item}
        let in_map = [&hex("81 a1 61")[..], &item].concat();
        let d = dec(&in_map);
        assert_eq!(d.value, Value::object([("a", want.clone())]), "{h}");
        let node = d.spans.node(NodeId(1));
        assert_eq!(parts(&node, 3), at_root, "{h} as a map value");
        assert_eq!(node.key, Some(Span::new(1, 3)));
        // {item: 5}: the key has no node; the value's key span is the item's bytes.
        let as_key = [&hex("81")[..], &item, &hex("05")].concat();
        let d = dec(&as_key);
        assert_eq!(
            d.value,
            Value::Map(vec![(want.clone(), Value::Int(5))]),
            "{h}"
        );
        assert_eq!(d.spans.len(), 2);
        assert_eq!(
            d.spans.node(NodeId(1)).key,
            Some(Span::new(1, 1 + item.len()))
        );
        // Cut short: the same error, moved to the item's place.
        for cut in 1..item.len() {
            let alone = err(&item[..cut]);
            for (prefix, shift, path) in [("92 05", 2, "$[1]"), ("81 a1 61", 3, "$.a")] {
                let e = err(&[&hex(prefix)[..], &item[..cut]].concat());
                assert_eq!(
                    (e.kind, e.offset - shift, e.message.as_str()),
                    (alone.kind, alone.offset, alone.message.as_str()),
                    "{h} cut to {cut} bytes after {prefix}"
                );
                assert_eq!(e.path.to_string(), path, "{h} cut to {cut}");
            }
        }
    }
}

#[test]
fn spans_follow_the_conventions() {
    // {"a": [1, 300], 2: "xy"}
    let bytes = hex("82 a1 61 92 01 cd 01 2c 02 a2 78 79");
    let d = dec(&bytes);
    let t = &d.spans;
    assert_eq!(t.len(), 5);
    let root = t.node(NodeId::ROOT);
    assert_eq!((root.span, root.header_end), (Span::new(0, 12), 1));
    let a = t.node(NodeId(1));
    assert_eq!(t.path(NodeId(1)).to_string(), "$.a");
    assert_eq!(a.key, Some(Span::new(1, 3)));
    assert_eq!(
        (a.span, a.header_end, a.payload),
        (Span::new(3, 8), 4, Span::new(4, 8))
    );
    let one = t.node(NodeId(2));
    assert_eq!(
        (one.span, one.header_end, one.payload),
        (Span::new(4, 5), 4, Span::new(4, 5))
    );
    let big = t.node(NodeId(3));
    assert_eq!(
        (big.span, big.header_end, big.payload),
        (Span::new(5, 8), 6, Span::new(6, 8))
    );
    let xy = t.node(NodeId(4));
    assert_eq!(t.path(NodeId(4)).to_string(), "${2}");
    assert_eq!(xy.key, Some(Span::new(8, 9)));
    assert_eq!(
        (xy.span, xy.header_end, xy.payload),
        (Span::new(9, 12), 10, Span::new(10, 12))
    );
    assert_eq!(t.node_at(8).map(|x| x.1), Some(ByteRole::Key));
    // The encoder writes the same bytes and the same tree.
    let e = enc(&d.value);
    assert_eq!(e.bytes, bytes);
    assert_eq!(&e.spans, t);
}

#[test]
fn container_keys_have_no_node() {
    // {[1, 2]: {"x": nil}} — the key is an array, the value a map.
    let bytes = hex("81 92 01 02 81 a1 78 c0");
    let d = dec(&bytes);
    assert_eq!(d.spans.len(), 3);
    let v = d.spans.node(NodeId(1));
    assert_eq!(v.key, Some(Span::new(1, 4)));
    assert_eq!(v.kind, Kind::Map);
    assert_eq!(d.spans.path(NodeId(2)).to_string(), "${array(2)}.x");
    let e = enc(&d.value);
    assert_eq!(e.bytes, bytes);
    assert_eq!(e.spans, d.spans);
}

#[test]
fn encodes_smallest_forms() {
    let cases: Vec<(Value, &str)> = vec![
        (Value::Int(127), "7f"),
        (Value::Int(128), "cc 80"),
        (Value::Int(-32), "e0"),
        (Value::Int(-33), "d0 df"),
        (Value::Int(-129), "d1 ff 7f"),
        (Value::Int(-32769), "d2 ff ff 7f ff"),
        (
            Value::Int(i128::from(i32::MIN) - 1),
            "d3 ff ff ff ff 7f ff ff ff",
        ),
        (Value::Int(u64::MAX.into()), "cf ff ff ff ff ff ff ff ff"),
        (Value::Ext(3, vec![1, 2, 3]), "c7 03 03 01 02 03"),
        (
            Value::Timestamp(Timestamp {
                seconds: 1 << 32,
                nanos: 0,
            }),
            "d7 ff 00 00 00 01 00 00 00 00",
        ),
        (
            Value::Timestamp(Timestamp {
                seconds: -1,
                nanos: 0,
            }),
            "c7 0c ff 00 00 00 00 ff ff ff ff ff ff ff ff",
        ),
        (Value::Tag(1, Box::new(Value::Int(1))), "d6 ff 00 00 00 01"),
        (
            Value::Tag(1, Box::new(Value::f64(1.5))),
            "d7 ff 77 35 94 00 00 00 00 01",
        ),
        (
            Value::Tag(0, Box::new(Value::text("1970-01-01T00:00:01Z"))),
            "d6 ff 00 00 00 01",
        ),
        (Value::Undefined, "c0"),
    ];
    for (v, h) in cases {
        assert_eq!(enc(&v).bytes, hex(h), "{v:?}");
    }
    // Floats: by default the width they had, as msgpack.packb writes a Python float; the
    // shortest variant narrows to float32 where that is exact.
    for (v, default, narrowest) in [
        (1.5, "cb 3f f8 00 00 00 00 00 00", "ca 3f c0 00 00"),
        (
            1.1,
            "cb 3f f1 99 99 99 99 99 9a",
            "cb 3f f1 99 99 99 99 99 9a",
        ),
        (f64::NAN, "cb 7f f8 00 00 00 00 00 00", "ca 7f c0 00 00"),
    ] {
        assert_eq!(enc(&Value::f64(v)).bytes, hex(default), "{v}");
        let e = encode(&Value::f64(v), &shortest()).expect("encodes");
        assert_eq!(e.bytes, hex(narrowest), "{v}");
    }
    assert_eq!(
        enc(&Value::Bytes(vec![0; 256])).bytes[..3],
        hex("c5 01 00")[..]
    );
    let long = Value::text("x".repeat(300));
    assert_eq!(enc(&long).bytes[..3], hex("da 01 2c")[..]);
    let arr = Value::Array(vec![Value::Null; 16]);
    assert_eq!(enc(&arr).bytes[..3], hex("dc 00 10")[..]);
    let map = Value::Map((0..16).map(|i| (Value::Int(i), Value::Null)).collect());
    assert_eq!(enc(&map).bytes[..3], hex("de 00 10")[..]);
}

#[test]
fn keep_policy_keeps_widths() {
    let e = encode(&Value::f64(1.5), &keep()).expect("encodes");
    assert_eq!(e.bytes, hex("cb 3f f8 00 00 00 00 00 00"));
    let e = encode(&Value::Float(Float::f32(1.5)), &keep()).expect("encodes");
    assert_eq!(e.bytes, hex("ca 3f c0 00 00"));
    assert!(e.notes.is_empty());
    let e = encode(&Value::Float(Float::f16(half::f16::from_f32(1.5))), &keep()).expect("encodes");
    assert_eq!(e.bytes, hex("ca 3f c0 00 00"));
    assert_eq!(e.notes.len(), 1);
    assert_eq!(e.notes[0].kind, NoteKind::FloatWidth);
    assert!(e.notes[0]
        .message
        .contains("float16 1.5 written as float32"));
    // Canonical forces shortest floats.
    let canon = EncodeOptions {
        canonical: true,
        ..keep()
    };
    assert_eq!(
        encode(&Value::f64(1.5), &canon).expect("encodes").bytes,
        hex("ca 3f c0 00 00")
    );
}

#[test]
fn canonical_sorts_by_encoded_key_bytes() {
    let v = Value::Map(vec![
        (Value::text("b"), Value::Int(1)),
        (Value::Int(300), Value::Int(2)),
        (Value::text("a"), Value::Int(3)),
        (Value::Int(1), Value::Int(4)),
    ]);
    let opts = EncodeOptions {
        canonical: true,
        ..EncodeOptions::default()
    };
    let e = encode(&v, &opts).expect("encodes");
    e.spans.validate(e.bytes.len()).expect("valid");
    // 01 < a1 61 < a1 62 < cd 01 2c
    assert_eq!(e.bytes, hex("84 01 04 a1 61 03 a1 62 01 cd 01 2c 02"));
    let d = dec(&e.bytes);
    assert_eq!(d.spans, e.spans);
}

#[test]
fn notes_for_what_msgpack_cannot_say() {
    let big: num_bigint::BigInt = "123456789012345678901234567890".parse().expect("bigint");
    let v = Value::Map(vec![
        (Value::text("big"), Value::BigInt(Box::new(big))),
        (Value::text("low"), Value::Int(crate::model::INT_MIN)),
        (Value::text("u"), Value::Undefined),
        (Value::text("s"), Value::Simple(99)),
        (Value::text("t"), Value::Tag(42, Box::new(Value::text("x")))),
        (Value::text("d"), Value::Decimal("1e400".into())),
        (
            Value::text("d2"),
            Value::Decimal("0.1000000000000000000001".into()),
        ),
        (Value::text("u"), Value::Null),
    ]);
    let e = enc(&v);
    let find = |k: NoteKind, p: &str| {
        e.notes
            .iter()
            .find(|n| n.kind == k && n.path.to_string() == p)
            .unwrap_or_else(|| panic!("note {k:?} at {p} in {:#?}", e.notes))
    };
    assert_eq!(
        find(NoteKind::IntegerRange, "$.big").message,
        "integer 123456789012345678901234567890 does not fit MessagePack's 64-bit integers; written as text"
    );
    find(NoteKind::IntegerRange, "$.low");
    find(NoteKind::SimpleAsNull, "$.u");
    find(NoteKind::SimpleAsNull, "$.s");
    assert!(find(NoteKind::TagDropped, "$.t").message.contains("tag 42"));
    assert!(find(NoteKind::DecimalRounded, "$.d")
        .message
        .contains("beyond float64's range; written as Infinity"));
    find(NoteKind::DecimalRounded, "$.d2");
    assert!(find(NoteKind::DuplicateKey, "$").message.contains("\"u\""));
    let d = dec(&e.bytes);
    assert_eq!(
        d.value.get("big"),
        Some(&Value::text("123456789012345678901234567890"))
    );
    assert_eq!(d.value.get("t"), Some(&Value::text("x")));
    // Beyond float64: infinity, a float64 as Python's msgpack writes `json.loads("1e400")`.
    assert_eq!(d.value.get("d"), Some(&Value::f64(f64::INFINITY)));
    assert_eq!(d.value.as_map().map(<[_]>::len), Some(8));
    assert_eq!(d.spans, e.spans);
}

#[test]
fn non_text_duplicate_keys_are_noted() {
    let v = Value::Map(vec![
        (Value::Int(1), Value::Null),
        (Value::Int(1), Value::Null),
    ]);
    let e = enc(&v);
    assert_eq!(e.notes.len(), 1);
    assert_eq!(e.notes[0].kind, NoteKind::DuplicateKey);
    assert_eq!(e.bytes, hex("82 01 c0 01 c0"));
}

fn err(bytes: &[u8]) -> crate::codec::DecodeError {
    let e = decode(bytes, &DecodeOptions::default()).expect_err("fails");
    if let Some(p) = &e.partial {
        p.spans.validate(bytes.len()).expect("valid partial spans");
    }
    e
}

#[test]
fn errors_point_at_the_offending_item() {
    let e = err(&hex("c1"));
    assert_eq!(
        (e.kind, e.offset, e.message.as_str()),
        (ErrorKind::Syntax, 0, "0xc1 is never used")
    );
    assert!(e.partial.is_none());

    let e = err(&hex("92 01 d9"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 2));
    assert_eq!(e.path.to_string(), "$[1]");
    assert_eq!(
        e.message,
        "the length of the string runs past the end of the input (0 bytes left)"
    );
    assert_eq!(
        e.partial.as_ref().map(|p| &p.value),
        Some(&Value::Array(vec![Value::Int(1)]))
    );

    let e = err(&hex("db ff ff ff ff 61 62"));
    assert_eq!(
        e.message,
        "string length 4294967295 runs past the end of the input (2 bytes left)"
    );

    let e = err(&hex("dd ff ff ff ff"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 5));
    assert_eq!(e.path.to_string(), "$[0]");
    assert_eq!(
        e.message,
        "the input ends where item 0 of an array of 4294967295 items should start"
    );

    // {"ok": 1, <invalid utf-8 key>: 2}
    let e = err(&hex("82 a2 6f 6b 01 a2 61 ff 02"));
    assert_eq!((e.kind, e.offset), (ErrorKind::Invalid, 7));
    assert_eq!(e.path, Path::root());
    assert_eq!(
        e.partial.as_ref().map(|p| &p.value),
        Some(&Value::object([("ok", Value::Int(1))]))
    );

    let e = err(&hex("91 01 02 03"));
    assert_eq!((e.kind, e.offset), (ErrorKind::TrailingData, 2));
    assert_eq!(e.message, "2 more bytes follow the complete value");
    assert_eq!(
        e.partial.as_ref().map(|p| &p.value),
        Some(&Value::Array(vec![Value::Int(1)]))
    );

    let e = err(&[]);
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, 0));
}

#[test]
fn partial_keeps_open_containers_and_drops_half_entries() {
    // {"a": [1, {"b": <cut>
    let e = err(&hex("82 a1 61 92 01 81 a1 62"));
    assert_eq!(e.path.to_string(), "$.a[1].b");
    assert_eq!(e.offset, 8);
    let p = e.partial.expect("partial");
    assert_eq!(
        p.value,
        Value::object([("a", Value::Array(vec![Value::Int(1), Value::Map(vec![])]))])
    );
    assert_eq!(p.spans.len(), 4);
}

#[test]
fn depth_limit_without_recursion() {
    let mut bytes = vec![0x91u8; 1_000_000];
    bytes.push(0xc0);
    let e = err(&bytes);
    assert_eq!(
        (e.kind, e.offset),
        (ErrorKind::Limit(LimitName::Depth), 512)
    );
    assert_eq!(e.path.segments().len(), 512);
    // Exactly at the limit decodes.
    let mut ok = vec![0x91u8; 512];
    ok.push(0xc0);
    assert_eq!(dec(&ok).value.depth(), 512);
    // Containers inside keys count too.
    let opts = DecodeOptions::with_max_depth(2);
    let e = decode(&hex("81 91 91 c0 c0"), &opts).expect_err("too deep");
    assert_eq!((e.kind, e.offset), (ErrorKind::Limit(LimitName::Depth), 2));
}

#[test]
fn timestamps_decode_in_all_three_forms() {
    let ts = |seconds, nanos| Value::Timestamp(Timestamp { seconds, nanos });
    assert_eq!(dec(&hex("d7 ff 00 00 00 04 00 00 00 00")).value, ts(0, 1));
    assert_eq!(
        dec(&hex("c7 0c ff 3b 9a c9 ff ff ff ff ff ff ff ff ff")).value,
        ts(-1, 999_999_999)
    );
    // ts96 with nanos 10^9 is not a valid timestamp: kept as ext.
    let bad = hex("c7 0c ff 3b 9a ca 00 00 00 00 00 00 00 00 00");
    assert_eq!(dec(&bad).value, Value::Ext(-1, bad[3..].to_vec()));
    assert_eq!(enc(&Value::Ext(-1, bad[3..].to_vec())).bytes, bad);
}

#[test]
fn out_of_range_nanos_are_written_and_read_back_as_ext() {
    let v = Value::Timestamp(Timestamp {
        seconds: 5,
        nanos: 1_500_000_000,
    });
    let e = enc(&v);
    assert_eq!(e.spans.node(NodeId::ROOT).kind, Kind::Ext);
    let d = dec(&e.bytes);
    assert!(matches!(d.value, Value::Ext(-1, ref data) if data.len() == 12));
    assert_eq!(d.spans, e.spans);
}

#[test]
fn nested_huge_claims_fail_fast() {
    let mut bytes = Vec::new();
    for _ in 0..400 {
        bytes.extend_from_slice(&[0xdd, 0xff, 0xff, 0xff, 0xff]);
    }
    let e = err(&bytes);
    assert_eq!((e.kind, e.offset), (ErrorKind::Eof, bytes.len()));
    assert_eq!(e.path.segments().len(), 400);
}
