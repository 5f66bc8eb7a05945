//! Protobuf on the command line, checked against protoc and its Python runtime: proto3 JSON
//! names, schema-less JSON that keeps every field, schema paths, services, nulls.

use std::path::PathBuf;

use assert_cmd::Command;

fn wirelens() -> Command {
    Command::cargo_bin("wirelens").expect("the wirelens binary is built")
}

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/protobuf")
        .join(path)
}

fn text(path: &PathBuf) -> String {
    std::fs::read_to_string(path).expect("fixture reads")
}

/// Runs wirelens with `args`, expecting success; its standard output.
fn stdout_ok(args: &[&str]) -> Vec<u8> {
    let out = wirelens().args(args).output().expect("wirelens runs");
    assert!(
        out.status.success(),
        "wirelens {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn span_args<'a>(input: &'a str, proto: &'a str, to: &'a str) -> Vec<&'a str> {
    vec![
        "convert",
        input,
        "--proto",
        proto,
        "--message",
        "fixture.trace.Span",
        "--to",
        to,
    ]
}

#[test]
fn protobuf_json_with_a_schema_names_fields_as_message_to_json_does() {
    let pb = fixture("json-names/span.pb");
    let proto = fixture("json-names/trace.proto");
    let (pb, proto) = (pb.to_str().expect("path"), proto.to_str().expect("path"));
    // Default: lowerCamelCase JSON names, pretty exactly as MessageToJson indents.
    let mut args = span_args(pb, proto, "json");
    args.push("--pretty");
    let camel = String::from_utf8(stdout_ok(&args)).expect("UTF-8");
    assert_eq!(camel, text(&fixture("json-names/span.json")));
    args.push("--proto-names");
    let names = String::from_utf8(stdout_ok(&args)).expect("UTF-8");
    assert_eq!(names, text(&fixture("json-names/span.proto-names.json")));
    // Compact: the same JSON on one line.
    let compact = stdout_ok(&span_args(pb, proto, "json"));
    assert_eq!(compact.iter().filter(|&&b| b == b'\n').count(), 1);
    let compact: serde_json::Value = serde_json::from_slice(&compact).expect("JSON");
    let reference: serde_json::Value =
        serde_json::from_str(&text(&fixture("json-names/span.json"))).expect("JSON");
    assert_eq!(compact, reference);
}

#[test]
fn protobuf_either_json_naming_converts_back_to_the_same_bytes() {
    let proto = fixture("json-names/trace.proto");
    let proto = proto.to_str().expect("path");
    let pb = std::fs::read(fixture("json-names/span.pb")).expect("span.pb");
    for json in ["json-names/span.json", "json-names/span.proto-names.json"] {
        let path = fixture(json);
        let written = stdout_ok(&span_args(path.to_str().expect("path"), proto, "protobuf"));
        // Same fields: read back as proto3 JSON, it is the reference JSON again.
        let dir = tempfile::tempdir().expect("temp dir");
        let back = dir.path().join("back.pb");
        std::fs::write(&back, &written).expect("write");
        let mut args = span_args(back.to_str().expect("path"), proto, "json");
        args.push("--pretty");
        assert_eq!(
            String::from_utf8(stdout_ok(&args)).expect("UTF-8"),
            text(&fixture("json-names/span.json")),
            "{json}"
        );
        assert_eq!(written.len(), pb.len(), "{json}");
    }
}
