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

/// A map entry whose key has the wrong wire type reads as protoc reads it: the entry keeps its
/// value under the default key, the stray field is an unknown field of the entry (`protoc
/// --decode` prints `label_counts { key: "" value: 7 1: 5 }`), and proto3 JSON leaves unknown
/// fields out. Streamed, `--pretty` and with a limit set alike.
#[test]
fn a_map_entry_with_a_key_of_the_wrong_wire_type_converts_as_protoc_reads_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pb = dir.path().join("entry.pb");
    // label_counts (12) { key (1) as a varint: 5, value (2): 7 }
    std::fs::write(&pb, [0x62, 0x04, 0x08, 0x05, 0x10, 0x07]).expect("write");
    let proto = fixture("json-names/trace.proto");
    let (pb, proto) = (pb.to_str().expect("path"), proto.to_str().expect("path"));
    let plain = span_args(pb, proto, "json");
    assert_eq!(stdout_ok(&plain), b"{\"labelCounts\":{\"\":7}}\n");
    for extra in [&["--pretty"][..], &["--limit", "nodes=1M"]] {
        let mut args = plain.clone();
        args.extend(extra);
        let out: serde_json::Value = serde_json::from_slice(&stdout_ok(&args)).expect("JSON");
        assert_eq!(
            out,
            serde_json::json!({"labelCounts": {"": 7}}),
            "{extra:?}"
        );
    }
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

/// A folder laid out as googleapis is: `google/api/http.proto` imported by
/// `google/api/annotations.proto` and by a service file at the root.
fn googleapis_like() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let api = dir.path().join("google/api");
    std::fs::create_dir_all(&api).expect("mkdir");
    std::fs::write(
        api.join("http.proto"),
        "syntax = \"proto3\";\npackage google.api;\nmessage Http { repeated HttpRule rules = 1; }\nmessage HttpRule { string selector = 1; }\n",
    )
    .expect("write");
    std::fs::write(
        api.join("annotations.proto"),
        "syntax = \"proto3\";\npackage google.api;\nimport \"google/api/http.proto\";\nmessage Annotated { Http http = 1; }\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("echo.proto"),
        "syntax = \"proto3\";\npackage demo.v1;\nimport \"google/api/annotations.proto\";\nimport \"google/protobuf/empty.proto\";\n\
         message EchoRequest { string text = 1; google.api.Annotated note = 2; }\n\
         message EchoReply { string text = 1; }\n\
         service Echo {\n  rpc Say(EchoRequest) returns (EchoReply);\n  rpc Listen(google.protobuf.Empty) returns (stream EchoReply);\n  rpc Ping(google.protobuf.Empty) returns (google.protobuf.Empty);\n}\n",
    )
    .expect("write");
    dir
}

/// `inspect --list-types` with these schema flags, run in `cwd`: (success, stdout, stderr).
fn list_types(cwd: &std::path::Path, schema: &[&str]) -> (bool, String, String) {
    let out = wirelens()
        .current_dir(cwd)
        .args(["inspect", "--list-types"])
        .args(schema)
        .output()
        .expect("wirelens runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn protobuf_proto_paths_resolve_inside_include_folders_as_protoc_does() {
    let dir = googleapis_like();
    let root = dir.path();
    let http = root.join("google/api/http.proto");
    let absolute = http.to_str().expect("path");
    // protoc accepts each of these and names the file google/api/http.proto, which
    // annotations.proto imports: compiled once, not "already defined".
    for (proto, include) in [
        (absolute, "."),
        ("google/api/http.proto", "."),
        ("./google/api/http.proto", "."),
        (absolute, root.to_str().expect("path")),
    ] {
        let (ok, stdout, stderr) = list_types(
            root,
            &[
                "--proto",
                proto,
                "--proto",
                "google/api/annotations.proto",
                "-I",
                include,
            ],
        );
        assert!(ok, "--proto {proto} -I {include}: {stderr}");
        assert!(stdout.contains("  google.api.Http\n"), "{stdout}");
        // protoc itself wants the -I folder spelled as a prefix of the path; where it is,
        // protoc agrees.
        if proto.starts_with('/') != include.starts_with('/') {
            continue;
        }
        let status = std::process::Command::new(crate::common::protoc())
            .current_dir(root)
            .args([
                "-I",
                include,
                "-o",
                "/dev/null",
                proto,
                "google/api/annotations.proto",
            ])
            .status()
            .expect("protoc runs");
        assert!(
            status.success(),
            "protoc agrees that {proto} -I {include} compiles"
        );
    }
    // Outside every -I folder: protoc's words.
    let other = tempfile::tempdir().expect("temp dir");
    let (ok, _, stderr) = list_types(other.path(), &["--proto", absolute, "-I", "."]);
    assert!(!ok);
    assert!(
        stderr.contains("File does not reside within any path specified using --proto_path (-I)")
            && stderr.contains(absolute),
        "{stderr}"
    );
    // A file that is not there: "no such file", with the path as given.
    let (ok, _, stderr) = list_types(root, &["--proto", "google/api/nope.proto", "-I", "."]);
    assert!(!ok);
    assert!(
        stderr.contains("google/api/nope.proto: no such file"),
        "{stderr}"
    );
    let (ok, _, stderr) = list_types(root, &["--proto", "missing.proto"]);
    assert!(!ok);
    assert!(stderr.contains("missing.proto: no such file"), "{stderr}");
}

#[test]
fn protobuf_list_types_names_messages_services_and_methods() {
    let dir = googleapis_like();
    let (ok, stdout, stderr) = list_types(dir.path(), &["--proto", "echo.proto", "-I", "."]);
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout,
        "message types (6):\n  demo.v1.EchoReply\n  demo.v1.EchoRequest\n  google.api.Annotated\n  \
         google.api.Http\n  google.api.HttpRule\n  google.protobuf.Empty\n\
         services (1):\n  demo.v1.Echo\n\
         methods (3):\n  \
         demo.v1.Echo/Listen (google.protobuf.Empty) returns (stream demo.v1.EchoReply)\n  \
         demo.v1.Echo/Ping (google.protobuf.Empty) returns (google.protobuf.Empty)\n  \
         demo.v1.Echo/Say (demo.v1.EchoRequest) returns (demo.v1.EchoReply)\n\
         compiled by protox 0.10\n"
    );
}

#[test]
fn protobuf_list_types_needs_a_schema() {
    let out = wirelens()
        .args(["inspect", "--list-types"])
        .output()
        .expect("wirelens runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--list-types needs a schema"));
}

#[test]
fn protobuf_empty_grpc_frames_are_a_grpc_reading() {
    // google.protobuf.Empty between two messages: the best reading.
    let body = vec![0u8, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0x08, 0x01, 0, 0, 0, 0, 0];
    let text = String::from_utf8(stdout_of_stdin(
        &["inspect", "-", "--layers", "--no-tree", "--no-hex"],
        body,
    ))
    .expect("UTF-8");
    let first = text.lines().nth(2).unwrap_or("");
    assert!(
        first.starts_with("* 1. gRPC frame") && first.contains("3 payloads"),
        "{text}"
    );
    // Alone: offered as a reading (the raw reading of five zero bytes still ranks first), and
    // chosen with --layer grpc it is one empty message.
    let lone = vec![0u8; 5];
    // (It exits 1: the raw reading it shows does not decode.)
    let out = wirelens()
        .args(["inspect", "-", "--layers", "--no-tree", "--no-hex"])
        .write_stdin(lone.clone())
        .output()
        .expect("wirelens runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.contains(". gRPC frame (") && l.contains("1 payload")),
        "{text}"
    );
    let text = String::from_utf8(stdout_of_stdin(
        &["inspect", "-", "--layer", "grpc", "--no-hex"],
        lone,
    ))
    .expect("UTF-8");
    assert!(text.contains("gRPC frame"), "{text}");
}

/// The standard output of a successful run with `stdin` as its input.
fn stdout_of_stdin(args: &[&str], stdin: Vec<u8>) -> Vec<u8> {
    let out = wirelens()
        .args(args)
        .write_stdin(stdin)
        .output()
        .expect("wirelens runs");
    assert!(
        out.status.success(),
        "wirelens {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// One message as `protoc --decode_raw` prints it: (field number, a nested message or not).
#[derive(Debug)]
struct RawMessage(Vec<RawField>);

/// A field of a [`RawMessage`]: its number, and its fields when protoc read it as a message.
type RawField = (String, Option<RawMessage>);

fn decode_raw(bytes: &[u8]) -> RawMessage {
    use std::io::Write;
    let mut child = std::process::Command::new(crate::common::protoc())
        .arg("--decode_raw")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("protoc runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(bytes)
        .expect("write");
    let out = child.wait_with_output().expect("protoc finishes");
    assert!(out.status.success(), "protoc --decode_raw failed");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut stack: Vec<(String, Vec<RawField>)> = vec![(String::new(), Vec::new())];
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line == "}" {
            let (field, fields) = stack.pop().expect("open message");
            let parent = stack.last_mut().expect("parent");
            parent.1.push((field, Some(RawMessage(fields))));
        } else if let Some(field) = line.strip_suffix(" {") {
            stack.push((field.to_string(), Vec::new()));
        } else {
            let field = line.split(':').next().expect("field").to_string();
            stack.last_mut().expect("message").1.push((field, None));
        }
    }
    RawMessage(stack.pop().expect("root").1)
}

/// Checks that `json` (as `serde_json`, like `json.load`, keeps the last of duplicate keys)
/// has every field occurrence protoc found: one key per field number, an array of all its
/// occurrences where it occurs more than once. Returns the occurrences counted.
fn same_occurrences(raw: &RawMessage, json: &serde_json::Value, at: &str) -> usize {
    let object = json
        .as_object()
        .unwrap_or_else(|| panic!("{at}: a message, in JSON {json}"));
    let mut order: Vec<&str> = Vec::new();
    for (field, _) in &raw.0 {
        if !order.contains(&field.as_str()) {
            order.push(field);
        }
    }
    assert_eq!(object.len(), order.len(), "{at}: one key per field number");
    let mut counted = 0;
    for field in order {
        let occurrences: Vec<&Option<RawMessage>> = raw
            .0
            .iter()
            .filter(|(f, _)| f == field)
            .map(|(_, m)| m)
            .collect();
        let value = object
            .get(field)
            .unwrap_or_else(|| panic!("{at}: field {field} is missing"));
        let values: Vec<&serde_json::Value> = if occurrences.len() > 1 {
            let items = value
                .as_array()
                .unwrap_or_else(|| panic!("{at}.{field}: occurs {} times", occurrences.len()));
            assert_eq!(items.len(), occurrences.len(), "{at}.{field}");
            items.iter().collect()
        } else {
            vec![value]
        };
        for (m, v) in occurrences.iter().zip(values) {
            counted += 1;
            // Nested messages are compared where both read the payload as a message.
            if let (Some(m), true) = (m, v.is_object()) {
                counted += same_occurrences(m, v, &format!("{at}.{field}"));
            }
        }
    }
    counted
}

#[test]
fn protobuf_without_a_schema_converts_to_json_with_every_field() {
    let mut payloads: Vec<(String, Vec<u8>)> = Vec::new();
    for name in ["transactions-1k.pb", "user-profile.pb"] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("samples")
            .join(name);
        payloads.push((name.to_string(), std::fs::read(path).expect("sample")));
    }
    let pcap =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/capture/real/grpc-h2c.pcap");
    let peeled = wirelens::capture::peel(
        std::fs::read(&pcap).expect("pcap"),
        &wirelens::capture::PeelOptions::default(),
    );
    let mut picks = 0;
    for (i, p) in peeled.payloads.iter().enumerate() {
        if !p.bytes.is_empty() {
            picks += 1;
            payloads.push((format!("grpc-h2c.pcap --pick {}", i + 1), p.bytes.to_vec()));
        }
    }
    assert!(picks >= 10, "the capture's gRPC messages");
    let mut grouped_somewhere = false;
    for (name, bytes) in &payloads {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("payload.pb");
        std::fs::write(&path, bytes).expect("write");
        let out = wirelens()
            .args([
                "convert",
                path.to_str().expect("path"),
                "--from",
                "protobuf",
            ])
            .args(["--to", "json"])
            .output()
            .expect("wirelens runs");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let raw = decode_raw(bytes);
        let total = raw_count(&raw);
        let counted = same_occurrences(&raw, &json, "$");
        assert!(counted > 0 && counted <= total, "{name}");
        let notes = String::from_utf8_lossy(&out.stderr);
        assert!(!notes.contains("appears more than once"), "{name}: {notes}");
        grouped_somewhere |=
            notes.contains(": written as an array") || notes.contains(": each written as an array");
        // MessagePack and CBOR get the same grouping: their maps hold no repeated key.
        for to in ["msgpack", "cbor"] {
            let out = wirelens()
                .args([
                    "convert",
                    path.to_str().expect("path"),
                    "--from",
                    "protobuf",
                ])
                .args([
                    "--to",
                    to,
                    "-o",
                    dir.path().join("out").to_str().expect("path"),
                ])
                .output()
                .expect("wirelens runs");
            assert!(out.status.success(), "{name} {to}");
            let back = wirelens()
                .args(["convert", dir.path().join("out").to_str().expect("path")])
                .args(["--from", to, "--to", "json"])
                .output()
                .expect("wirelens runs");
            assert!(
                !String::from_utf8_lossy(&back.stderr).contains("more than once"),
                "{name} {to}: {}",
                String::from_utf8_lossy(&back.stderr)
            );
            let again: serde_json::Value = serde_json::from_slice(&back.stdout).expect("JSON");
            assert_eq!(again, json, "{name} {to}");
        }
    }
    assert!(grouped_somewhere, "some payload has a repeated field");
}

fn raw_count(raw: &RawMessage) -> usize {
    raw.0
        .iter()
        .map(|(_, m)| 1 + m.as_ref().map_or(0, raw_count))
        .sum()
}

#[test]
fn protobuf_nulls_under_an_inferred_schema_are_noted_with_their_count() {
    let twitter =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/json-bench/twitter.json");
    let text = std::fs::read_to_string(&twitter).expect("twitter.json");
    // The nulls at places that also hold data (1,254; places that hold only nulls, 692 of
    // them, are inferred as google.protobuf.Value, which keeps null). Python's json module
    // counts the same.
    fn walk(
        v: &serde_json::Value,
        path: String,
        seen: &mut std::collections::HashMap<String, (usize, usize)>,
    ) {
        let entry = seen.entry(path.clone()).or_default();
        if v.is_null() {
            entry.0 += 1;
        } else {
            entry.1 += 1;
        }
        match v {
            serde_json::Value::Array(a) => {
                for x in a {
                    walk(x, format!("{path}[*]"), seen);
                }
            }
            serde_json::Value::Object(o) => {
                for (k, x) in o {
                    walk(x, format!("{path}.{k}"), seen);
                }
            }
            _ => {}
        }
    }
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let mut seen = std::collections::HashMap::new();
    walk(&value, "$".into(), &mut seen);
    let noted: usize = seen
        .values()
        .filter(|(_, data)| *data > 0)
        .map(|(n, _)| n)
        .sum();
    let all: usize = seen.values().map(|(n, _)| n).sum();
    assert_eq!((noted, all), (1254, 1946));
    let dir = tempfile::tempdir().expect("temp dir");
    let out = wirelens()
        .args([
            "convert",
            twitter.to_str().expect("path"),
            "--to",
            "protobuf",
            "-o",
        ])
        .arg(dir.path().join("t.pb"))
        .output()
        .expect("wirelens runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let notes = String::from_utf8_lossy(&out.stderr);
    assert!(
        notes.contains(
            "note: 1,254 null(s) in all written as the field's default (first at $.statuses[0]."
        ),
        "{notes}"
    );
    assert!(
        notes.contains("null written as the field's default, 0"),
        "{notes}"
    );
}
