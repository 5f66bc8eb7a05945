//! The streamed proto3 JSON of `convert` (`to_proto3_json_streamed`) and the whole read
//! (`to_proto3_json`) against prost-reflect's serializer (the oracle of `proto3_oracle.rs`):
//! the same text for every payload with a
//! schema among the tests' data, and for payloads joined end to end (a protobuf reader merges
//! them: singular fields occur twice, message fields merge, oneof members meet), with every
//! message walked (chunk 0), a few walked, and none.

use std::path::PathBuf;

use wirelens::codec::protobuf::dynamic::{
    decode, proto3_json_of_value, to_proto3_json, to_proto3_json_in_chunks, Proto3JsonOptions,
};
use wirelens::codec::protobuf::schema::Schema;
use wirelens::codec::protobuf::MessageDescriptor;
use wirelens::codec::DecodeOptions;

use crate::common::{self, data, run_wirelens};
use crate::proto3_oracle::writer_is_oracle;

fn read(path: &str) -> Vec<u8> {
    std::fs::read(data(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

/// Payloads with their message types: the samples, the descriptor sets read as
/// `FileDescriptorSet`, protoscope's `unittest.proto` payloads and the editions cases.
fn cases() -> Vec<(String, Vec<u8>, MessageDescriptor)> {
    let mut out = Vec::new();
    for (payload, proto, message) in [
        (
            "orders-api.pb",
            "orders-api.proto",
            "wirelens.samples.OrderList",
        ),
        (
            "transactions-1k.pb",
            "transactions.proto",
            "wirelens.samples.TransactionHistory",
        ),
        (
            "user-profile.pb",
            "user-profile.proto",
            "wirelens.samples.UserProfile",
        ),
    ] {
        let dir = sample("");
        let schema = Schema::from_proto_files(&[sample(proto)], &[dir.as_path()]).expect(proto);
        let bytes = std::fs::read(sample(payload)).expect(payload);
        out.push((
            payload.into(),
            bytes,
            schema.message(message).expect(message),
        ));
    }
    let fds = Schema::from_descriptor_set(&read("protobuf/descriptor_set.pb")).expect("set");
    for set in [
        "protobuf/descriptor_set.pb",
        "protobuf/descriptor_set.protoc35.pb",
        "protobuf/wkt_descriptor_set.pb",
        "protobuf/unittest_descriptor_set.pb",
    ] {
        let message = fds
            .message("google.protobuf.FileDescriptorSet")
            .expect("type");
        out.push((set.into(), read(set), message));
    }
    let unittest =
        Schema::from_descriptor_set(&read("protoscope/testdata/unittest.proto.pb")).expect("set");
    for name in ["message", "maps", "oneof", "packed", "packed-big", "proto3"] {
        let path = format!("protoscope/testdata/{name}.pb");
        let message = unittest.message("unittest.TestAllTypes").expect("type");
        out.push((path.clone(), read(&path), message));
    }
    let editions = common::data("protobuf-editions");
    let text = std::fs::read_to_string(editions.join("CASES.txt")).expect("CASES.txt");
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let w: Vec<&str> = line.split_whitespace().collect();
        let set = std::fs::read(editions.join(w[1])).expect("set");
        let schema = Schema::from_descriptor_set(&set).expect("editions set");
        let bytes = std::fs::read(editions.join(format!("{}.binpb", w[0]))).expect("payload");
        out.push((w[0].into(), bytes, schema.message(w[2]).expect("type")));
    }
    out
}

/// `text` with the entries of every map (and `Struct`) in key order, all else as it is.
/// prost-reflect keeps a map in a `HashMap`, so two reads of one payload can list a map's
/// entries in two orders; fields, list items and everything else must agree as written.
pub(crate) fn maps_sorted(text: &str, message: &MessageDescriptor) -> String {
    let mut value: serde_json::Value = serde_json::from_str(text).expect("JSON");
    sort_maps(&mut value, message);
    serde_json::to_string(&value).expect("JSON")
}

fn sort_maps(value: &mut serde_json::Value, message: &MessageDescriptor) {
    use serde_json::Value as J;
    match (message.full_name(), value) {
        ("google.protobuf.Struct" | "google.protobuf.Value", J::Object(map)) => {
            map.sort_keys();
            let inner = message
                .parent_pool()
                .get_message_by_name("google.protobuf.Value");
            for v in map.values_mut() {
                if let Some(inner) = &inner {
                    sort_maps(v, inner);
                }
            }
        }
        ("google.protobuf.Value" | "google.protobuf.ListValue", J::Array(items)) => {
            let inner = message
                .parent_pool()
                .get_message_by_name("google.protobuf.Value");
            for v in items {
                if let Some(inner) = &inner {
                    sort_maps(v, inner);
                }
            }
        }
        (name, _) if name.starts_with("google.protobuf.") && !name.contains("Descriptor") => {}
        (_, J::Object(map)) => {
            for (key, v) in map.iter_mut() {
                let field = message
                    .fields()
                    .find(|f| f.json_name() == key || f.name() == key);
                let Some(field) = field else {
                    continue;
                };
                let Some(item) = field.kind().as_message().cloned() else {
                    continue;
                };
                if field.is_map() {
                    if let J::Object(entries) = v {
                        entries.sort_keys();
                        if let Some(value_type) = item.map_entry_value_field().kind().as_message() {
                            for e in entries.values_mut() {
                                sort_maps(e, value_type);
                            }
                        }
                    }
                } else if let J::Array(items) = v {
                    for i in items {
                        sort_maps(i, &item);
                    }
                } else {
                    sort_maps(v, &item);
                }
            }
        }
        _ => {}
    }
}

/// The streamed text for every chunk size, against the whole read: how many walks gave text,
/// and how many would have had the whole read not failed.
fn same_as_whole(name: &str, bytes: &[u8], message: &MessageDescriptor) -> (usize, usize) {
    let mut walked = 0;
    let mut due = 0;
    for proto_names in [false, true] {
        let options = Proto3JsonOptions {
            proto_names,
            pretty: false,
        };
        let whole = writer_is_oracle(name, bytes, message, options);
        for chunk in [0, 64, 4096, usize::MAX] {
            due += usize::from(whole.is_ok());
            let streamed = to_proto3_json_in_chunks(bytes, message, options, chunk);
            match (&whole, streamed) {
                (Ok(whole), Some(streamed)) => {
                    assert!(whole.notes.is_empty(), "{name}: text where a note was due");
                    let streamed = std::str::from_utf8(&streamed)
                        .unwrap_or_else(|e| panic!("{name}: the streamed text is not UTF-8: {e}"));
                    let (whole, streamed) = (
                        maps_sorted(&whole.text, message),
                        maps_sorted(streamed, message),
                    );
                    assert!(
                        whole == streamed,
                        "{name}, chunk {chunk}, proto names {proto_names}:\n  whole    {}\n  streamed {}",
                        whole,
                        streamed
                    );
                    walked += 1;
                }
                (Ok(whole), None) => {
                    // Declining is allowed only where the module docs say so: a whole read
                    // that repaired strings, or two members of one oneof.
                    assert!(
                        !whole.notes.is_empty() || chunk < usize::MAX,
                        "{name}: a payload read as one piece was declined"
                    );
                }
                (Err(e), Some(_)) => {
                    panic!("{name}, chunk {chunk}: streamed text where the whole read fails: {e}")
                }
                (Err(_), None) => {}
            }
        }
    }
    (walked, due)
}

#[test]
fn streamed_proto3_json_is_the_whole_reads_text() {
    let cases = cases();
    assert!(cases.len() >= 23, "{} cases", cases.len());
    let mut short = Vec::new();
    let mut walks = 0;
    for (name, bytes, message) in &cases {
        let (walked, due) = same_as_whole(name, bytes, message);
        walks += walked;
        if walked < due {
            short.push(format!("{name}: {walked} of {due}"));
        }
    }
    // Every case in both naming modes at every chunk size, but the one whose strings are
    // repaired and the one with four members of a oneof (then read as one piece only).
    assert_eq!(
        short,
        [
            "protoscope/testdata/message.pb: 4 of 8",
            "loose_not_utf8: 0 of 8"
        ]
    );
    assert!(walks >= 160, "{walks} walks");
}

/// Every two cases of one message type and pool, joined end to end (a protobuf reader merges
/// them: singular fields occur twice, message fields merge, oneof members meet), named `a + b`.
fn joined_pairs(
    cases: &[(String, Vec<u8>, MessageDescriptor)],
) -> Vec<(String, Vec<u8>, &MessageDescriptor)> {
    let mut out = Vec::new();
    for (a, first, message) in cases {
        for (b, second, other) in cases {
            if message.full_name() == other.full_name()
                && message.parent_pool() == other.parent_pool()
            {
                let joined = [first.as_slice(), second.as_slice()].concat();
                out.push((format!("{a} + {b}"), joined, message));
            }
        }
    }
    out
}

#[test]
fn payloads_joined_end_to_end_stream_as_they_merge() {
    let cases = cases();
    let mut walked = 0;
    let mut pairs = 0;
    for (name, joined, message) in joined_pairs(&cases) {
        walked += same_as_whole(&name, &joined, message).0;
        pairs += 1;
    }
    assert!(pairs >= 40, "{pairs} pairs");
    assert!(walked >= pairs * 4, "{walked} walks of {pairs} pairs");
}

/// The text written from the schema-guided decoder's value (`proto3_json_of_value`) against
/// the whole read, in both naming modes: the same values in the same order (maps aside), and
/// with `--pretty`, the same text wherever the two list maps alike. Returns whether the value
/// declined in either mode; `None` when the decoder refuses the payload.
fn value_text_as_whole(name: &str, bytes: &[u8], message: &MessageDescriptor) -> Option<bool> {
    let doc = decode(bytes, message, &DecodeOptions::default()).ok()?;
    let mut declined = false;
    for proto_names in [false, true] {
        let compact = Proto3JsonOptions {
            proto_names,
            pretty: false,
        };
        let pretty = Proto3JsonOptions {
            pretty: true,
            ..compact
        };
        let whole = writer_is_oracle(name, bytes, message, compact);
        let written = proto3_json_of_value(&doc.value, message, compact);
        match (whole, written) {
            (Ok(whole), Some(written)) => {
                assert!(whole.notes.is_empty(), "{name}: text where a note was due");
                assert_eq!(
                    maps_sorted(&whole.text, message),
                    maps_sorted(&written, message),
                    "{name}, proto names {proto_names}"
                );
                let written_pretty =
                    proto3_json_of_value(&doc.value, message, pretty).expect("pretty");
                let reparsed: serde_json::Value = serde_json::from_str(&written).expect("JSON");
                assert_eq!(
                    written_pretty,
                    serde_json::to_string_pretty(&reparsed).expect("JSON"),
                    "{name}: --pretty is the same text indented"
                );
                let whole_pretty = writer_is_oracle(name, bytes, message, pretty).expect("pretty");
                let whole_order: serde_json::Value =
                    serde_json::from_str(&whole_pretty.text).expect("JSON");
                if serde_json::to_string(&whole_order).expect("JSON") == written {
                    assert_eq!(whole_pretty.text, written_pretty, "{name}: pretty text");
                }
            }
            (Ok(_), None) => declined = true,
            (Err(e), Some(_)) => panic!("{name}: text written where the whole read fails: {e}"),
            (Err(_), None) => {}
        }
    }
    Some(declined)
}

#[test]
fn proto3_json_of_the_decoded_value_is_the_whole_reads_text() {
    let cases = cases();
    let mut declined = Vec::new();
    let mut written = 0;
    for (name, bytes, message) in &cases {
        match value_text_as_whole(name, bytes, message) {
            Some(true) => declined.push(name.clone()),
            Some(false) => written += 1,
            None => {}
        }
    }
    // The one payload whose strings the ordinary way repairs, with a note.
    assert_eq!(declined, ["loose_not_utf8"]);
    assert!(written >= 20, "{written} written");
    let mut pairs = 0;
    let mut declined_pairs: Vec<String> = Vec::new();
    for (name, joined, message) in joined_pairs(&cases) {
        match value_text_as_whole(&name, &joined, message) {
            Some(false) => pairs += 1,
            Some(true) => declined_pairs.push(name),
            None => {}
        }
    }
    // Joined payloads merge: message fields occur twice, oneof members follow each other.
    assert_eq!(declined_pairs, ["loose_not_utf8 + loose_not_utf8"]);
    assert!(pairs >= 60, "{pairs} pairs written");
}

#[test]
fn malformed_payloads_are_declined_not_written() {
    let (_, bytes, message) = cases()
        .into_iter()
        .find(|(n, _, _)| n == "transactions-1k.pb")
        .expect("case");
    let options = Proto3JsonOptions::default();
    // Cut inside a record, a bad tag, field number 0, a group's tag.
    let cut = &bytes[..bytes.len() - 3];
    let mut zero = bytes.clone();
    zero.extend_from_slice(&[0x00, 0x01]);
    let mut group = bytes.clone();
    group.extend_from_slice(&[0x0b, 0x0c]);
    for (what, bad) in [("cut", cut.to_vec()), ("field 0", zero), ("group", group)] {
        assert!(
            to_proto3_json_in_chunks(&bad, &message, options, 0).is_none(),
            "{what}"
        );
        assert!(to_proto3_json(&bad, &message, options).is_err(), "{what}");
    }
}

/// `convert` takes the streamed path for a `.pb` file with its message type, and writes what
/// the whole read writes (`--pretty` goes the ordinary way, its text the same values).
#[test]
fn convert_writes_the_same_json_streamed() {
    let pb = sample("transactions-1k.pb");
    let proto = sample("transactions.proto");
    let proto = proto.to_str().expect("path");
    let args = [
        "convert",
        "--proto",
        proto,
        "--message",
        "wirelens.samples.TransactionHistory",
        "--to",
        "json",
    ];
    let run = run_wirelens(&args, &pb);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let schema = Schema::from_proto_files(&[sample("transactions.proto")], &[sample("").as_path()])
        .expect("schema");
    let message = schema
        .message("wirelens.samples.TransactionHistory")
        .expect("type");
    let whole = to_proto3_json(
        &std::fs::read(&pb).expect("pb"),
        &message,
        Proto3JsonOptions::default(),
    )
    .expect("whole");
    assert_eq!(run.stdout, format!("{}\n", whole.text));
    let mut pretty = args.to_vec();
    pretty.push("--pretty");
    let run_pretty = run_wirelens(&pretty, &pb);
    assert_eq!(run_pretty.code, Some(0), "{}", run_pretty.stderr);
    // A limit the user sets is the ordinary way's to apply.
    let mut limited = args.to_vec();
    limited.extend(["--limit", "nodes=100"]);
    let run_limited = run_wirelens(&limited, &pb);
    assert_eq!(run_limited.code, Some(1), "{}", run_limited.stderr);
    assert!(
        run_limited.stderr.contains("limit of 100 nodes") && run_limited.stdout.is_empty(),
        "{}",
        run_limited.stderr
    );
    let a: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    let b: serde_json::Value = serde_json::from_str(&run_pretty.stdout).expect("json");
    assert_eq!(a, b);
    // `--pretty` is written from the decoded value: the streamed text, indented, key for key.
    assert_eq!(
        run_pretty.stdout,
        format!("{}\n", serde_json::to_string_pretty(&a).expect("json"))
    );
    // So is a conversion with a limit set that the payload stays within: the same bytes.
    let mut within = args.to_vec();
    within.extend(["--limit", "nodes=1M"]);
    let run_within = run_wirelens(&within, &pb);
    assert_eq!(run_within.code, Some(0), "{}", run_within.stderr);
    assert_eq!(run_within.stdout, run.stdout);
}

/// An OTLP batch made by Python's protobuf: `convert` writes what `MessageToJson` writes for it
/// (the same fields, values and order), and the walk at every chunk size writes the whole read's
/// text.
#[test]
fn an_otlp_batch_converts_as_python_protobuf_writes_it() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/protobuf/otlp");
    let otel = data("otel");
    let proto = otel.join("opentelemetry/proto/trace/v1/trace.proto");
    let message = "opentelemetry.proto.trace.v1.TracesData";
    let (proto, include) = (proto.to_str().expect("path"), otel.to_str().expect("path"));
    let args = [
        "convert",
        "--proto",
        proto,
        "-I",
        include,
        "--message",
        message,
        "--to",
        "json",
    ];
    let run = run_wirelens(&args, &dir.join("traces.pb"));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let ours: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let golden = std::fs::read_to_string(dir.join("traces.json")).expect("golden");
    let python: serde_json::Value = serde_json::from_str(&golden).expect("JSON");
    // Written again in one way, so that the order of every object's keys counts too.
    assert_eq!(
        serde_json::to_string(&ours).expect("JSON"),
        serde_json::to_string(&python).expect("JSON")
    );
    let schema = Schema::from_proto_files(
        &[otel.join("opentelemetry/proto/trace/v1/trace.proto")],
        &[otel.as_path()],
    )
    .expect("schema");
    let desc = schema.message(message).expect("type");
    let bytes = std::fs::read(dir.join("traces.pb")).expect("pb");
    assert!(
        bytes.len() > 2 * (64 << 10),
        "big enough to be walked at the default chunk"
    );
    let (walked, due) = same_as_whole("traces.pb", &bytes, &desc);
    assert_eq!((walked, due), (8, 8));
}
