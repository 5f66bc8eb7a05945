//! The node limit (`nodes`, [`Limits::max_nodes`]) in every decoder: a document of many one- or
//! two-byte items (the densest a format allows: a MessagePack or CBOR small integer is one byte
//! and one node) stops with an error naming the limit, at the byte of the first item past it,
//! with the path of that item and the items before it kept. The limit is lowered here so the
//! inputs stay small; `scripts/hostile-limits.sh` runs ten million of them under the default and
//! a memory rlimit.

use crate::common::run_wirelens;
use wirelens::codec::{decode, DecodeError, DecodeOptions, ErrorKind, Format, LimitName};
use wirelens::limits::Limits;
use wirelens::model::Value;

fn with_nodes(n: usize) -> DecodeOptions {
    let mut options = DecodeOptions::default();
    options.limits.max_nodes = n;
    options
}

/// The error is the node limit's, at `offset`, for the item at `path`; its partial document is
/// an array of `kept` zeros whose spans fit the bytes before `offset`.
fn assert_stopped(e: DecodeError, offset: usize, path: &str, kept: usize) {
    assert_eq!(e.kind, ErrorKind::Limit(LimitName::Nodes), "{e}");
    assert_eq!(e.offset, offset, "{e}");
    assert_eq!(e.path.to_string(), path, "{e}");
    let text = e.to_string();
    assert!(
        text.contains("limit of 101 nodes") && text.contains("--limit nodes=N"),
        "{text}"
    );
    let partial = e.partial.expect("the items before the limit are kept");
    let items = partial.value.as_array().expect("an array");
    assert_eq!(items.len(), kept);
    assert!(items.iter().all(|v| *v == Value::Int(0)));
    partial
        .spans
        .validate(offset)
        .expect("a partial tree inside the bytes read");
    assert_eq!(partial.spans.len(), kept + 1, "the root and the items kept");
}

/// `[0,0,…]` with `n` zeros: item `i` starts at byte `1 + 2i`.
fn json_zeros(n: usize) -> Vec<u8> {
    let mut out = b"[".to_vec();
    for i in 0..n {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'0');
    }
    out.push(b']');
    out
}

#[test]
fn json_stops_at_the_node_limit() {
    // The root array is one node, so 101 nodes hold items 0..100; item 100 is at 1 + 200.
    let e = decode(&json_zeros(1000), Format::Json, &with_nodes(101)).expect_err("past the limit");
    assert_stopped(e, 201, "$[100]", 100);
}

#[test]
fn json_objects_stop_at_the_value_past_the_limit() {
    // {"k0":0,"k1":0,…}: the root map and 100 values fit; the value of entry 100 does not.
    let mut text = String::from("{");
    let mut value_100 = 0;
    for i in 0..200 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("\"k{i}\":"));
        if i == 100 {
            value_100 = text.len();
        }
        text.push('0');
    }
    text.push('}');
    let e = decode(text.as_bytes(), Format::Json, &with_nodes(101)).expect_err("past the limit");
    assert_eq!(e.kind, ErrorKind::Limit(LimitName::Nodes), "{e}");
    assert_eq!(e.offset, value_100, "{e}");
    assert_eq!(e.path.to_string(), "$.k100", "{e}");
    let partial = e.partial.expect("kept");
    assert_eq!(partial.value.as_map().map(<[_]>::len), Some(100));
}

#[test]
fn msgpack_stops_at_the_node_limit() {
    // array32 of 1000 positive fixints (one byte, one node each): item i is at byte 5 + i.
    let mut bytes = vec![0xdd, 0, 0, 0x03, 0xe8];
    bytes.extend(std::iter::repeat_n(0u8, 1000));
    let e = decode(&bytes, Format::MessagePack, &with_nodes(101)).expect_err("past the limit");
    assert_stopped(e, 105, "$[100]", 100);
}

#[test]
fn cbor_stops_at_the_node_limit() {
    // Array of 1000 (0x99 + 2-byte count) unsigned zeros: item i is at byte 3 + i.
    let mut bytes = vec![0x99, 0x03, 0xe8];
    bytes.extend(std::iter::repeat_n(0u8, 1000));
    let e = decode(&bytes, Format::Cbor, &with_nodes(101)).expect_err("past the limit");
    assert_stopped(e, 103, "$[100]", 100);
    // Indefinite length: the break byte is no node, so exactly 101 nodes decode.
    let mut bytes = vec![0x9f];
    bytes.extend(std::iter::repeat_n(0u8, 100));
    bytes.push(0xff);
    let doc = decode(&bytes, Format::Cbor, &with_nodes(101)).expect("at the limit");
    assert_eq!(doc.spans.len(), 101);
}

#[test]
fn under_the_limit_every_decoder_is_unchanged() {
    let zeros = json_zeros(100);
    let doc = decode(&zeros, Format::Json, &with_nodes(101)).expect("exactly at the limit");
    assert_eq!(doc.value.as_array().map(<[_]>::len), Some(100));
    let mut bytes = vec![0xdc, 0, 100];
    bytes.extend(std::iter::repeat_n(0u8, 100));
    let doc = decode(&bytes, Format::MessagePack, &with_nodes(101)).expect("at the limit");
    assert_eq!(doc.spans.len(), 101);
    let e = decode(&bytes, Format::MessagePack, &with_nodes(100)).expect_err("one over");
    assert_eq!(e.offset, 3 + 99);
}

#[test]
fn protobuf_with_a_schema_stops_at_the_node_limit() {
    let mut options = with_nodes(101);
    options.message = Some(crate::fuzz_checks::test_all_types().clone());
    // repeated_int32 (field 31) packed: tag 0xfa 0x01, length 1000 (0xe8 0x07), 1000 zeros.
    // Nodes: the message, the array, then the elements; element i is at byte 4 + i.
    let mut bytes = vec![0xfa, 0x01, 0xe8, 0x07];
    bytes.extend(std::iter::repeat_n(0u8, 1000));
    let e = decode(&bytes, Format::Protobuf, &options).expect_err("past the limit");
    assert_eq!(e.kind, ErrorKind::Limit(LimitName::Nodes), "{e}");
    assert_eq!(e.offset, 4 + 99, "{e}");
    assert_eq!(e.path.to_string(), "$.repeated_int32[99]", "{e}");
    assert!(e.to_string().contains("--limit nodes=N"), "{e}");
    let partial = e.partial.expect("kept");
    let (_, items) = &partial.value.as_map().expect("a message")[0];
    assert_eq!(items.as_array().map(<[_]>::len), Some(99));

    // Unknown fields (number 2000, VARINT 0: 0x80 0x7d 0x00) are one node each: the root and
    // 100 of them fit, the tag of field 101 (byte 300) is where decoding stops.
    let bytes: Vec<u8> = std::iter::repeat_n([0x80u8, 0x7d, 0x00], 500)
        .flatten()
        .collect();
    let mut options = with_nodes(101);
    options.message = Some(crate::fuzz_checks::test_all_types().clone());
    let e = decode(&bytes, Format::Protobuf, &options).expect_err("past the limit");
    assert_eq!(
        (e.kind, e.offset),
        (ErrorKind::Limit(LimitName::Nodes), 300),
        "{e}"
    );
    let partial = e.partial.expect("kept");
    assert_eq!(partial.value.as_map().map(<[_]>::len), Some(100));
    assert_eq!(partial.spans.len(), 101);
}

#[test]
fn schemaless_protobuf_takes_the_smaller_of_both_limits() {
    // `xx` is field 15 = 120; 1 root + 100 fields fit in 101 nodes, field 101 is at byte 200.
    let bytes = vec![b'x'; 2000];
    let e = decode(&bytes, Format::Protobuf, &with_nodes(101)).expect_err("past `nodes`");
    assert_eq!(
        (e.kind, e.offset),
        (ErrorKind::Limit(LimitName::Nodes), 200),
        "{e}"
    );
    assert!(e.to_string().contains("--limit nodes=N"), "{e}");
    let mut options = with_nodes(101);
    options.limits.max_protobuf_nodes = 51;
    let e = decode(&bytes, Format::Protobuf, &options).expect_err("past `protobuf-nodes`");
    assert_eq!(
        (e.kind, e.offset),
        (ErrorKind::Limit(LimitName::ProtobufNodes), 100),
        "{e}"
    );
    assert!(e.to_string().contains("--limit protobuf-nodes=N"), "{e}");
}

#[test]
fn the_limit_is_named_nodes_and_protobuf_nodes_still_works() {
    let mut limits = Limits::default();
    assert_eq!(limits.max_nodes, 8 << 20);
    assert_eq!(limits.max_protobuf_nodes, 1_000_000);
    limits.set("nodes", "2M").expect("nodes");
    limits.set("protobuf-nodes", "5").expect("protobuf-nodes");
    assert_eq!((limits.max_nodes, limits.max_protobuf_nodes), (2 << 20, 5));
}

#[test]
fn the_cli_names_the_limit_and_keeps_the_partial_tree() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("zeros.msgpack");
    let mut bytes = vec![0xdd, 0, 0, 0x03, 0xe8];
    bytes.extend(std::iter::repeat_n(0u8, 1000));
    std::fs::write(&file, &bytes).expect("write");
    let run = run_wirelens(&["inspect", "--no-hex", "--limit", "nodes=101"], &file);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("error at byte 105") && run.stderr.contains("limit nodes"),
        "{}",
        run.stderr
    );
}

/// Peeling decodes JSON to tell JSON text from other text; that decode must keep the user's node
/// limit, and detection must not reuse its document when the limit is lower than its nodes.
#[test]
fn a_json_payload_stops_at_the_node_limit_through_peeling() {
    let json = br#"{"items": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}"#;
    let mut options = DecodeOptions::default();
    options.limits.max_nodes = 5;
    let readings = wirelens::capture::peel_readings(json, &options, None);
    let best = &readings[0].detected[0].1[0];
    assert_eq!(best.format, Format::Json);
    let e = best.outcome.as_ref().expect_err("past the node limit");
    assert_eq!(e.kind, ErrorKind::Limit(LimitName::Nodes));
    assert_eq!(e.offset, 20, "{e}");

    // The same bytes with room for every node: the document peeling decoded is used whole.
    options.limits.max_nodes = 12;
    let readings = wirelens::capture::peel_readings(json, &options, None);
    let doc = readings[0].detected[0].1[0]
        .outcome
        .as_ref()
        .expect("12 nodes fit");
    assert_eq!(doc.spans.len(), 12);

    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("items.json");
    std::fs::write(&file, json).expect("write");
    let run = run_wirelens(&["inspect", "--no-hex", "--limit", "nodes=5"], &file);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("error at byte 20 ($.items[3])") && run.stderr.contains("limit nodes"),
        "{}",
        run.stderr
    );
}
