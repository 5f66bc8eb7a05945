use super::*;
use crate::codec::protobuf::varint::put as put_varint;
use crate::model::{Float, Segment};

fn tag(field: u64, wt: u64) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint(&mut out, field << 3 | wt);
    out
}

fn len_field(field: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = tag(field, 2);
    put_varint(&mut out, payload.len() as u64);
    out.extend_from_slice(payload);
    out
}

fn ok(bytes: &[u8]) -> RawDocument {
    let raw = decode_raw(bytes, &DecodeOptions::default()).expect("decodes");
    raw.document
        .spans
        .validate(bytes.len())
        .expect("valid spans");
    raw
}

fn int(n: i128) -> Value {
    Value::Int(n)
}

#[test]
fn varint_field_has_tag_as_key_and_alternative_readings() {
    let raw = ok(&[0x08, 0x01]);
    assert_eq!(raw.document.value, Value::Map(vec![(int(1), int(1))]));
    let n = raw.document.spans.node(NodeId(1));
    assert_eq!(n.key, Some(Span::new(0, 1)));
    assert_eq!(n.span, Span::new(1, 2));
    assert_eq!(n.header_end, 1);
    assert_eq!(n.segment, Segment::OtherKey(0));
    let labels: Vec<&str> = raw.readings[0]
        .readings
        .iter()
        .map(|r| r.label.as_str())
        .collect();
    assert_eq!(labels, ["uint64", "sint64 (zigzag)", "bool"]);
    assert!(raw.readings[0].readings[0].chosen);
    assert_eq!(raw.readings[0].readings[1].value, int(-1));
}

#[test]
fn negative_int64_is_listed() {
    // -200 as int32/int64: ten bytes.
    let mut b = tag(1, 0);
    put_varint(&mut b, (-200i64) as u64);
    let raw = ok(&b);
    let rs = &raw.readings[0].readings;
    assert_eq!(rs[0].value, int(i128::from((-200i64) as u64)));
    assert!(rs
        .iter()
        .any(|r| r.label == "int64" && r.value == int(-200)));
}

#[test]
fn fixed_width_heuristic() {
    assert!(looks_like_float32(111.0f32.to_bits()));
    assert!(looks_like_float32(0.1f32.to_bits()));
    assert!(!looks_like_float32(107));
    assert!(!looks_like_float32(0x6f69_6569));
    assert!(looks_like_float64(112.0f64.to_bits()));
    assert!(looks_like_float64(1.5e-3f64.to_bits()));
    assert!(!looks_like_float64(0xb111_f9d7_42ed_c33b));
    assert!(!looks_like_float64(24_553_676_007));
    let mut b = tag(11, 5);
    b.extend_from_slice(&111.0f32.to_le_bytes());
    b.extend(tag(7, 5));
    b.extend_from_slice(&107u32.to_le_bytes());
    let raw = ok(&b);
    assert_eq!(
        raw.document.value,
        Value::Map(vec![
            (int(11), Value::Float(Float::f32(111.0))),
            (int(7), int(107))
        ])
    );
    assert_eq!(raw.readings[0].readings[1].label, "fixed32");
    assert_eq!(raw.readings[1].readings[1].label, "float");
}

#[test]
fn len_choices_message_text_packed_bytes() {
    let mut b = len_field(1, &[0x08, 0x96, 0x01]);
    b.extend(len_field(2, b"hello"));
    b.extend(len_field(3, &[0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05]));
    b.extend(len_field(4, &[0xff, 0xff]));
    b.extend(len_field(5, &[]));
    let raw = ok(&b);
    assert_eq!(
        raw.document.value,
        Value::Map(vec![
            (int(1), Value::Map(vec![(int(1), int(150))])),
            (int(2), Value::Text("hello".into())),
            (int(3), Value::Array(vec![int(3), int(270), int(86942)])),
            (int(4), Value::Bytes(vec![0xff, 0xff])),
            (int(5), Value::text("")),
        ])
    );
    let t = &raw.document.spans;
    // The packed array: key = tag, header = length, three keyless leaves.
    let packed = t.find(&Path::from_segments(vec![PathSegment::OtherKey(
        "3".into(),
    )]));
    assert_eq!(packed.len(), 1, "{t:?}");
    let n = t.node(packed[0]);
    assert_eq!(n.kind, Kind::Array);
    assert_eq!(t.children(packed[0]).count(), 3);
    assert!(t.children(packed[0]).all(|c| t.node(c).key.is_none()));
    let labels = |i: usize| -> Vec<String> {
        raw.readings[i]
            .readings
            .iter()
            .map(|r| r.label.clone())
            .collect()
    };
    assert_eq!(labels(0)[0], "message");
    assert!(labels(0).contains(&"packed varints".to_string()));
    assert_eq!(labels(3)[0], "packed varints");
    assert_eq!(labels(4), ["bytes"]);
}

#[test]
fn groups_are_maps_with_end_tag_as_structure() {
    // 1: SGROUP { 2: 5 } EGROUP
    let b = [0x0b, 0x10, 0x05, 0x0c];
    let raw = ok(&b);
    assert_eq!(
        raw.document.value,
        Value::Map(vec![(int(1), Value::Map(vec![(int(2), int(5))]))])
    );
    let g = raw.document.spans.node(NodeId(1));
    assert_eq!(g.key, Some(Span::new(0, 1)));
    assert_eq!(g.payload, Span::new(1, 3));
    assert_eq!(g.span, Span::new(1, 4));
}

#[test]
fn odd_data_is_flagged_not_fatal() {
    // Non-minimal varint value, field 0, a field number above 2^29-1.
    let mut b = vec![0x08, 0x81, 0x80, 0x00];
    b.extend([0x00, 0x07]);
    b.extend(tag(1 << 30, 0));
    b.push(0x01);
    let raw = ok(&b);
    assert_eq!(
        raw.readings[0].readings[0].label,
        "uint64 (non-minimal varint, 3 bytes)"
    );
    assert_eq!(raw.readings[0].readings[0].value, int(1));
    assert!(raw.readings[1].readings[0].label.contains("field number 0"));
    assert!(raw.readings[2].readings[0]
        .label
        .contains("above the maximum"));
    // Inside a LEN payload, field 0 rules out the message reading.
    let raw = ok(&len_field(1, &[0x00, 0x07]));
    assert_eq!(raw.readings[0].readings[0].label, "packed varints");
}

#[test]
fn errors_carry_offset_path_and_partial() {
    let mut b = vec![0x08, 0x01];
    b.extend([0x12, 0x14, b'a']); // length 20, one byte left
    let e = decode(&b, &DecodeOptions::default()).expect_err("truncated");
    assert_eq!(e.kind, ErrorKind::Eof);
    assert_eq!(e.offset, 3);
    assert_eq!(
        e.path.to_string(),
        Path::root()
            .child(PathSegment::OtherKey("2".into()))
            .to_string()
    );
    assert!(e.message.contains("length 20"), "{}", e.message);
    let p = e.partial.expect("partial");
    assert_eq!(p.value, Value::Map(vec![(int(1), int(1))]));
    p.spans.validate(b.len()).expect("valid partial");

    for wt in [6u8, 7] {
        let b = [0x08, 0x01, 0x10 | wt];
        let e = decode(&b, &DecodeOptions::default()).expect_err("bad wire type");
        assert_eq!((e.kind, e.offset), (ErrorKind::Syntax, 2));
        assert!(e.message.contains(&format!("wire type {wt}")));
    }
}

#[test]
fn deep_nesting_hits_the_limit_without_recursion() {
    // 1,000,000 nested LEN fields, built from the inside out.
    let depth = 1_000_000usize;
    let mut lens = Vec::with_capacity(depth);
    let mut inner = 0usize;
    for _ in 0..depth {
        lens.push(inner);
        inner += 1 + varint_len(inner as u64);
    }
    let mut b = Vec::with_capacity(inner);
    for &l in lens.iter().rev() {
        b.push(0x0a);
        put_varint(&mut b, l as u64);
    }
    let (r, work) = decode_counting(&b, &DecodeOptions::default());
    let e = r.expect_err("too deep");
    assert_eq!(e.kind, ErrorKind::Limit(LimitName::Depth));
    assert!(work.trial_parses <= DecodeOptions::DEFAULT_MAX_DEPTH + 1);
    let p = e.partial.expect("partial");
    p.spans.validate(b.len()).expect("valid partial");
}

#[test]
fn nested_lengths_cost_linear_work() {
    // Every LEN payload is itself a message of LEN fields: 20 levels, a fan-out of two, ~1 MB.
    let mut leaf = Vec::new();
    for i in 0..32u64 {
        leaf.extend(tag(1, 0));
        put_varint(&mut leaf, i);
    }
    let mut level = leaf;
    for _ in 0..15 {
        let mut next = len_field(1, &level);
        next.extend(len_field(2, &level));
        level = next;
    }
    assert!(level.len() > 1_000_000, "{}", level.len());
    // About 1.1 million nodes (a field per two bytes), past the default node limit: this test
    // counts the scanning work, so the limit is lifted.
    let mut options = DecodeOptions::default();
    options.limits.max_protobuf_nodes = usize::MAX;
    let (r, work) = decode_counting(&level, &options);
    let raw = r.expect("decodes");
    raw.document
        .spans
        .validate(level.len())
        .expect("valid spans");
    // One trial parse per LEN field (2^16 - 2 of them), and each field below the top level has
    // its tag read by exactly one scan (its parent's): linear, not one scan per ancestor.
    let len_fields = (1usize << 16) - 2;
    assert_eq!(work.trial_parses, len_fields);
    let varint_fields = (1usize << 15) * 32;
    assert_eq!(work.trial_fields, len_fields - 2 + varint_fields);
}

#[test]
fn non_minimal_tag_is_flagged_and_long_payload_alternatives_are_null() {
    // Field 1 VARINT with a 3-byte tag.
    let raw = ok(&[0x88, 0x80, 0x00, 0x05]);
    assert_eq!(
        raw.readings[0].readings[0].label,
        "uint64 (non-minimal tag, 3 bytes)"
    );
    // A 2000-byte message payload: alternatives are not copied, only `bytes` is listed.
    let mut inner = Vec::new();
    while inner.len() < 2000 {
        inner.extend([0x08, 0x01]);
    }
    let raw = ok(&len_field(1, &inner));
    let rs = &raw.readings[0].readings;
    assert_eq!(rs.len(), 2);
    assert_eq!(
        (rs[0].label.as_str(), rs[1].label.as_str()),
        ("message", "bytes")
    );
    assert_eq!(rs[1].value, Value::Null);
}

#[test]
fn random_ids_read_as_bytes_and_packed_numbers_as_packed() {
    // The W3C traceparent example's trace id and an 8-byte span id: both split into varints
    // (their last byte is below 0x80), and both are random bytes.
    let trace_id = [
        0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47,
        0x36,
    ];
    let span_id = [0xe1, 0x9a, 0x4f, 0x02, 0xbb, 0x7d, 0x30, 0x66];
    let mut b = len_field(1, &trace_id);
    b.extend(len_field(2, &span_id));
    b.extend(len_field(3, &[0x01, 0x02, 0x03, 0xac, 0x02])); // [1, 2, 3, 300]
                                                             // 16 bytes of small numbers: genuinely packed, at an id's length.
    let small: Vec<u8> = (1..=16).collect();
    b.extend(len_field(4, &small));
    let raw = ok(&b);
    assert_eq!(
        raw.document.value,
        Value::Map(vec![
            (int(1), Value::Bytes(trace_id.to_vec())),
            (int(2), Value::Bytes(span_id.to_vec())),
            (int(3), Value::Array(vec![int(1), int(2), int(3), int(300)])),
            (int(4), Value::Array((1..=16).map(int).collect())),
        ])
    );
    // The packed reading is still offered, second, for the ids.
    let labels = |i: usize| -> Vec<String> {
        raw.readings[i]
            .readings
            .iter()
            .map(|r| r.label.clone())
            .collect()
    };
    let ids: Vec<usize> = raw
        .readings
        .iter()
        .enumerate()
        .filter(|(_, r)| r.readings.first().is_some_and(|r| r.label == "bytes"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(ids.len(), 2, "{:?}", raw.readings);
    for i in ids {
        assert_eq!(labels(i)[1], "packed varints", "{:?}", labels(i));
    }
}
