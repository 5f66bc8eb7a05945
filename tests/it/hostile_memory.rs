//! Input that is not protobuf but reads as millions of schema-less protobuf fields (a TCP stream
//! of the byte `x`: 0x78 is field 15, VARINT, so every two bytes are one field). The
//! `protobuf-nodes` limit turns it into an error naming the limit and the byte where it was
//! reached, with the fields before it kept; below the limit nothing changes. How much memory
//! such input costs is measured by `scripts/hostile-limits.sh` (a 20 MB stream in a pcap under
//! an address-space rlimit), not here.

use crate::common::{pcap_of_x_streams, run_wirelens};
use wirelens::capture::readings;
use wirelens::codec::detect::detect;
use wirelens::codec::protobuf::wire;
use wirelens::codec::{decode, DecodeOptions, ErrorKind, Format, LimitName};
use wirelens::limits::Limits;
use wirelens::model::Value;

/// `fields` fields of number 15 holding 120: the bytes `x x`, `fields` times.
fn xs(fields: usize) -> Vec<u8> {
    vec![b'x'; fields * 2]
}

fn with_nodes(n: usize) -> DecodeOptions {
    let mut options = DecodeOptions::default();
    options.limits.max_protobuf_nodes = n;
    options
}

#[test]
fn the_node_limit_names_itself_and_the_offset_and_keeps_the_fields_before() {
    // The root message is one node, so 101 nodes hold 100 fields; field 101's tag is at byte
    // 200 (two bytes per field), where decoding stops.
    let e = decode(&xs(1000), Format::Protobuf, &with_nodes(101)).expect_err("over the limit");
    assert_eq!(e.kind, ErrorKind::Limit(LimitName::ProtobufNodes), "{e}");
    assert_eq!(e.offset, 200, "{e}");
    let text = e.to_string();
    assert!(text.contains("error at byte 200"), "{text}");
    assert!(text.contains("protobuf-nodes"), "{text}");
    assert!(text.contains("101"), "{text}");
    let partial = e.partial.expect("the fields before the limit are kept");
    let fields = partial.value.as_map().expect("a message");
    assert_eq!(fields.len(), 100);
    assert!(fields
        .iter()
        .all(|(k, v)| *k == Value::Int(15) && *v == Value::Int(120)));
    assert_eq!(partial.spans.len(), 101);
    partial
        .spans
        .validate(200)
        .expect("a consistent partial tree");
}

#[test]
fn below_the_limit_nothing_changes() {
    let bytes = xs(1000);
    // 1 root + 1000 fields: exactly at the limit is allowed.
    let doc = decode(&bytes, Format::Protobuf, &with_nodes(1001)).expect("at the limit");
    assert_eq!(doc.value.as_map().map(<[_]>::len), Some(1000));
    let e = decode(&bytes, Format::Protobuf, &with_nodes(1000)).expect_err("one over");
    assert_eq!(e.offset, 1998);
    assert_eq!(Limits::default().max_protobuf_nodes, 1_000_000);
    let doc = decode(&bytes, Format::Protobuf, &DecodeOptions::default()).expect("default");
    assert_eq!(doc.spans.len(), 1001);
}

#[test]
fn a_packed_field_over_the_limit_stops_at_its_tag() {
    // Field 1, LEN 50: fifty varints 1 (not a message: field number 0; not text: controls).
    let mut bytes = vec![0x0a, 50];
    bytes.extend([1u8; 50]);
    let whole = decode(&bytes, Format::Protobuf, &DecodeOptions::default()).expect("decodes");
    assert_eq!(whole.spans.len(), 52, "root, the array, 50 elements");
    let e = decode(&bytes, Format::Protobuf, &with_nodes(20)).expect_err("over");
    assert_eq!(
        (e.kind, e.offset),
        (ErrorKind::Limit(LimitName::ProtobufNodes), 0),
        "{e}"
    );
    let partial = e.partial.expect("kept");
    assert_eq!(partial.value, Value::Map(Vec::new()));
}

/// `decode` builds only the chosen readings; its document must be the one `decode_raw` shows.
#[test]
fn the_document_without_readings_is_the_document_with_them() {
    let samples = ["transactions-1k.pb", "user-profile.pb"];
    let mut inputs: Vec<Vec<u8>> = samples
        .iter()
        .map(|name| {
            let path = format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
        })
        .collect();
    inputs.extend([
        // Text, packed varints, bytes, an empty LEN, fixed32/64, a group, a non-minimal varint.
        vec![0x0a, 0x02, b'h', b'i'],
        vec![0x12, 0x03, 0x01, 0x96, 0x01],
        vec![0x1a, 0x02, 0xff, 0xfe],
        vec![0x22, 0x00],
        vec![
            0x2d, 0x00, 0x00, 0x80, 0x3f, 0x31, 1, 2, 3, 4, 5, 6, 7, 0x88,
        ],
        vec![0x33, 0x08, 0x01, 0x34],
        vec![0x08, 0x81, 0x00],
    ]);
    for bytes in &inputs {
        let options = DecodeOptions::default();
        let raw = wire::decode_raw(bytes, &options).expect("decodes with readings");
        assert!(!raw.readings.is_empty());
        let doc = wire::decode(bytes, &options).expect("decodes");
        assert_eq!(doc, raw.document, "{bytes:02x?}");
    }
}

#[test]
fn detection_ranks_a_reading_cut_short_by_the_limit_first_and_says_why() {
    let readings = detect(&xs(1000), None, &with_nodes(101));
    let best = &readings[0];
    assert_eq!(best.format, Format::Protobuf);
    let why = best.reasons.join("; ");
    assert!(why.contains("cut short at byte 200 by a limit"), "{why}");
    assert!(why.contains("protobuf-nodes"), "{why}");
    let e = best.outcome.as_ref().expect_err("cut short");
    assert!(e.partial.is_some());
}

#[test]
fn the_cli_reports_the_limit_and_prints_the_partial_tree() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("xs.bin");
    std::fs::write(&path, xs(1000)).expect("write");
    let run = run_wirelens(
        &["inspect", "--no-hex", "--limit", "protobuf-nodes=101"],
        &path,
    );
    assert_eq!(run.code, Some(1));
    let (stdout, stderr) = (&run.stdout, &run.stderr);
    assert!(stdout.contains("format: protobuf"), "{stdout}");
    assert!(
        stdout.contains("partial decode (up to the error)"),
        "{stdout}"
    );
    assert!(stdout.contains("$  map(100)"), "{stdout}");
    assert!(stdout.contains("199..200"), "the last field kept: {stdout}");
    assert!(!stdout.contains("201..202"), "{stdout}");
    assert!(stderr.contains("error at byte 200"), "{stderr}");
    assert!(stderr.contains("protobuf-nodes"), "{stderr}");

    let run = run_wirelens(
        &["convert", "--to", "json", "--limit", "protobuf-nodes=101"],
        &path,
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("error at byte 200") && run.stderr.contains("protobuf-nodes"),
        "{}",
        run.stderr
    );
}

/// Any limit, not only the node limit: JSON nested past the depth limit is reported as JSON cut
/// short there (512 valid bytes), not as a one-byte MessagePack integer followed by more bytes.
#[test]
fn detection_ranks_json_cut_short_by_the_depth_limit_as_json() {
    let readings = detect(&[b'['; 2000], None, &DecodeOptions::default());
    let best = &readings[0];
    assert_eq!(best.format, Format::Json);
    let why = best.reasons.join("; ");
    assert!(why.contains("cut short at byte 512 by a limit"), "{why}");
    let e = best.outcome.as_ref().expect_err("too deep");
    assert_eq!(e.kind, ErrorKind::Limit(LimitName::Depth));
}

/// Layer ranking keeps the documents it decoded for reuse, but not past
/// [`readings::KEPT_NODES`] beyond the first payload's: each of these streams reads as a
/// million protobuf fields, so only the first payload's documents are kept; both still count.
#[test]
fn layer_ranking_keeps_documents_of_one_huge_payload_not_of_every_one() {
    let pcap = pcap_of_x_streams(2, 2_200_000);
    let ranked = wirelens::capture::peel_readings(&pcap, &DecodeOptions::default(), None);
    let best = &ranked[0];
    assert_eq!(best.payload_count(), 2, "{:?}", best.reasons);
    assert_eq!(best.format, Some(Format::Protobuf));
    assert!(
        best.reasons.iter().any(|r| r.contains("all 2 payloads")),
        "{:?}",
        best.reasons
    );
    let kept: Vec<usize> = best.detected.iter().map(|(i, _)| *i).collect();
    assert_eq!(kept, vec![0]);
    const { assert!(readings::KEPT_NODES < 2 * 1_000_000) };
}
