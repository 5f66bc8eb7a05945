//! The `wirelens` command line, run as a user runs it: exact output for small inputs, exit
//! statuses, errors with offsets and paths, and files written atomically.

use assert_cmd::Command;
use predicates::prelude::*;

fn wirelens() -> Command {
    Command::cargo_bin("wirelens").expect("the wirelens binary is built")
}

/// The standard output of a command that succeeded, as text.
trait StdoutText {
    fn stdout_text(self) -> String;
}

impl StdoutText for &assert_cmd::assert::Assert {
    fn stdout_text(self) -> String {
        String::from_utf8(self.get_output().stdout.clone()).expect("UTF-8 output")
    }
}

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn inspect_json_from_stdin() {
    let expected = r#"input: <stdin> (13 bytes)
format: json (100%): valid JSON: map of 1, all 13 bytes; map keys are all text
  other: msgpack (12%): a complete MessagePack value in bytes 0..1, then 12 more bytes
  other: protobuf (4%): stopped at byte 2: length 97 of field 4 runs past the end of its message (10 bytes left)
  other: cbor (0%): stopped at byte 0: text string length 2477298904063880226 runs past the end of the input (4 bytes left)

tree:
0..13  $  map(1)
5..12    .a  array(2)
 6..7      [0]  1
8..11      [1]  "x"

annotated hex:
00000000  7b                                               {                 $  map(1)
00000001  22 61 22 3a 5b                                   "a":[             $.a  array(2)
00000006  31 2c                                            1,                $.a[0]  1
00000008  22 78 22                                         "x"               $.a[1]  "x"
0000000b  5d                                               ]                 $.a  end
0000000c  7d                                               }                 $  end
"#;
    wirelens()
        .args(["inspect", "-"])
        .write_stdin(r#"{"a":[1,"x"]}"#)
        .assert()
        .success()
        .stdout(expected)
        .stderr("");
}

#[test]
fn inspect_cbor_file_names_every_byte() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("small.cbor");
    // {"a": [1, "x"]}
    std::fs::write(&path, b"\xa1\x61\x61\x82\x01\x61\x78").expect("write");
    let expected = r#"tree:
0..7  $  map(1)
3..7    .a  array(2)
4..5      [0]  1
5..7      [1]  "x"

annotated hex:
00000000  a1                                               .                 $  map(1)
00000001  61 61 82                                         aa.               $.a  array(2)
00000004  01                                               .                 $.a[0]  1
00000005  61 78                                            ax                $.a[1]  "x"
"#;
    let out = wirelens()
        .arg("inspect")
        .arg(&path)
        .assert()
        .success()
        .stdout_text();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[1].starts_with(
        "format: cbor (85%): consumed all 7 bytes as CBOR map of 1; map keys are all text; the file name, Content-Type or framing names it"
    ), "{out}");
    assert!(out.ends_with(expected), "{out}");
}

#[test]
fn bad_input_prints_the_partial_tree_and_fails_with_offset_and_path() {
    wirelens()
        .args(["inspect", "-", "--from", "json", "--no-hex"])
        .write_stdin(r#"{"a":[1,2,}"#)
        .assert()
        .code(1)
        .stdout(
            r#"input: <stdin> (11 bytes)
format: json (100%): chosen with --from; stopped at byte 10: expected a value but found '}'

partial decode (up to the error):

tree:
0..10  $  map(1)
5..10    .a  array(2)
 6..7      [0]  1
 8..9      [1]  2
"#,
        )
        .stderr("error at byte 10 ($.a[2]): JSON: expected a value but found '}'\n");
}

#[test]
fn convert_to_json_writes_the_json_meaning_and_notes_every_loss() {
    // MessagePack {"id": bin 0xdeadbeef, 1: u64::MAX}
    let mut input = vec![
        0x82, 0xa2, b'i', b'd', 0xc4, 4, 0xde, 0xad, 0xbe, 0xef, 0x01, 0xcf,
    ];
    input.extend([0xff; 8]);
    wirelens()
        .args(["convert", "-", "--to", "json"])
        .write_stdin(input)
        .assert()
        .success()
        .stdout("{\"id\":\"3q2+7w==\",\"1\":18446744073709551615}\n")
        .stderr(
            "note: $.id: byte string of 4 bytes written as base64 text\n\
             note: ${1}: integer 18446744073709551615 is beyond ±2^53; JavaScript readers will round it\n\
             note: ${1}: int map key 1 written as the string \"1\"\n",
        );
}

/// A `.msgpack` file converts piece by piece (its name says what it is, so nothing is detected
/// or peeled), standard input the ordinary way: the same JSON and the same notes.
#[test]
fn a_messagepack_file_converts_as_its_bytes_on_standard_input_do() {
    for name in ["transactions-15k.msgpack", "edge-cases.msgpack"] {
        let bytes = std::fs::read(sample(name)).expect("sample");
        let file = wirelens()
            .args(["convert", &sample(name), "--to", "json"])
            .output()
            .expect("runs");
        let stdin = wirelens()
            .args(["convert", "-", "--to", "json"])
            .write_stdin(bytes)
            .output()
            .expect("runs");
        assert!(
            file.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&file.stderr)
        );
        assert!(file.stdout.len() > 100, "{name}");
        assert_eq!(file.stdout, stdin.stdout, "{name}: JSON");
        assert_eq!(
            String::from_utf8_lossy(&file.stderr),
            String::from_utf8_lossy(&stdin.stderr),
            "{name}: notes"
        );
    }
}

#[test]
fn convert_between_binary_formats_round_trips() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cbor = dir.path().join("profile.cbor");
    wirelens()
        .args([
            "convert",
            &sample("user-profile.msgpack"),
            "--to",
            "cbor",
            "-o",
        ])
        .arg(&cbor)
        .assert()
        .success()
        .stdout("")
        .stderr("");
    assert_eq!(
        std::fs::read(&cbor).expect("written"),
        std::fs::read(sample("user-profile.cbor")).expect("sample")
    );
    wirelens()
        .args(["convert", "--to", "json", "--pretty"])
        .arg(&cbor)
        .assert()
        .success()
        .stdout(
            r#"{
  "user_id": 10042,
  "username": "li_wei",
  "email": "li.wei@example.com",
  "is_active": true,
  "roles": [
    "admin",
    "editor"
  ],
  "status": "active"
}
"#,
        );
}

#[test]
fn canonical_output_sorts_keys() {
    wirelens()
        .args(["convert", "-", "--to", "json", "--canonical"])
        .write_stdin(r#"{"b":1,"a":{"d":2,"c":3}}"#)
        .assert()
        .success()
        .stdout("{\"a\":{\"c\":3,\"d\":2},\"b\":1}\n");
}

#[test]
fn a_failed_conversion_leaves_no_output_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out.cbor");
    wirelens()
        .args(["convert", "-", "--from", "json", "--to", "cbor", "-o"])
        .arg(&out)
        .write_stdin("[1, 2")
        .assert()
        .code(1)
        .stderr("error at byte 5 ($): JSON: the input ends inside an array; expected ',' or ']'\n");
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("dir").count(),
        0,
        "no temp file left"
    );
}

#[test]
fn usage_errors_exit_2_and_missing_files_exit_1() {
    wirelens()
        .args(["convert", "-", "--to", "yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown format `yaml`"));
    wirelens()
        .args(["inspect", "/nonexistent/payload.json"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "error: cannot read /nonexistent/payload.json:",
        ));
}

#[test]
fn every_sample_decodes_and_its_forms_agree() {
    let samples: [(&str, &[&str]); 6] = [
        ("transactions-1k", &["msgpack", "cbor"]),
        ("transactions-15k", &["msgpack"]),
        ("risk-batch", &["cbor"]),
        ("user-profile", &["msgpack", "cbor"]),
        ("order-graphql", &["cbor"]),
        ("iot-metrics", &["msgpack", "cbor"]),
    ];
    for (name, binary_forms) in samples {
        let json = wirelens()
            .args(["convert", &sample(&format!("{name}.json")), "--to", "json"])
            .assert()
            .success()
            .stdout_text();
        assert!(json.len() > 80, "{name}");
        for ext in binary_forms {
            wirelens()
                .args(["convert", &sample(&format!("{name}.{ext}")), "--to", "json"])
                .assert()
                .success()
                .stdout(json.clone())
                .stderr("");
        }
    }
}

#[cfg(feature = "gui")]
#[test]
fn without_a_display_the_gui_fails_cleanly() {
    wirelens()
        .arg(sample("user-profile.json"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "error: cannot open the window:",
        ));
}

/// `samples/user-profile.pb` by the proto3 JSON mapping: 64-bit integers as strings, names as in
/// the .proto.
const USER_PROFILE_PROTO3_JSON: &str =
    "{\"userId\":\"10042\",\"username\":\"li_wei\",\"email\":\"li.wei@example.com\",\
     \"isActive\":true,\"roles\":[\"admin\",\"editor\"],\"status\":\"active\"}\n";

#[test]
fn json_to_protobuf_with_the_users_schema_and_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pb = dir.path().join("user.pb");
    wirelens()
        .args(["convert", &sample("user-profile.json"), "--to", "protobuf"])
        .args(["--proto", &sample("user-profile.proto")])
        .args(["--message", "wirelens.samples.UserProfile", "-o"])
        .arg(&pb)
        .assert()
        .success()
        .stderr("");
    assert_eq!(
        std::fs::read(&pb).expect("written"),
        std::fs::read(sample("user-profile.pb")).expect("sample")
    );
    // Back to JSON by the proto3 JSON mapping: 64-bit integers as strings, lowerCamelCase names.
    wirelens()
        .args([
            "convert",
            "--to",
            "json",
            "--proto",
            &sample("user-profile.proto"),
        ])
        .arg(&pb)
        .assert()
        .success()
        .stdout(USER_PROFILE_PROTO3_JSON);
}

#[test]
fn a_named_message_reads_a_payload_inside_layers_as_that_type() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().expect("temp dir");
    let wrapped = dir.path().join("user.b64");
    let pb = std::fs::read(sample("user-profile.pb")).expect("sample");
    std::fs::write(
        &wrapped,
        base64::engine::general_purpose::STANDARD.encode(pb),
    )
    .expect("written");
    let schema = [
        "--proto",
        &sample("user-profile.proto"),
        "--message",
        "wirelens.samples.UserProfile",
    ];
    wirelens()
        .args(["convert", "--to", "json"])
        .args(schema)
        .arg(&wrapped)
        .assert()
        .success()
        .stdout(USER_PROFILE_PROTO3_JSON);
    let out = wirelens()
        .args(["inspect", "--no-hex"])
        .args(schema)
        .arg(&wrapped)
        .assert()
        .success()
        .stdout_text();
    assert!(out.contains("* 1. 56 bytes via base64\n"), "{out}");
    assert!(
        out.contains("format: protobuf (95%): consumed all 56 bytes as Protobuf map of 6"),
        "{out}"
    );
    assert!(
        out.contains("message type: wirelens.samples.UserProfile\n"),
        "{out}"
    );
}

#[test]
fn protobuf_without_a_schema_is_read_field_by_field() {
    let out = wirelens()
        .args(["inspect", &sample("user-profile.pb"), "--no-hex"])
        .assert()
        .success()
        .stdout_text();
    assert!(
        out.contains("format: protobuf (55%): consumed all 56 bytes as Protobuf message of 7 fields; read without a schema"),
        "{out}"
    );
    assert!(out.contains("  1..3    {1}  10042\n"), "{out}");
    assert!(out.contains("34..40    {5}  \"admin\"\n"), "{out}");
}

#[test]
fn a_schema_without_a_message_name_ranks_the_types() {
    let out = wirelens()
        .args([
            "inspect",
            &sample("transactions-1k.pb"),
            "--no-hex",
            "--no-tree",
        ])
        .args(["--proto", &sample("transactions.proto")])
        .assert()
        .success()
        .stdout_text();
    assert!(
        out.contains("message type: wirelens.samples.TransactionHistory\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "message types that fit, best first:\n  wirelens.samples.TransactionHistory (100%)"
        ),
        "{out}"
    );
}

#[test]
fn infer_proto_prints_a_schema_for_the_payload() {
    wirelens()
        .args(["infer-proto", &sample("iot-metrics.msgpack"), "--message", "Metrics"])
        .args(["--package", "iot.v1"])
        .assert()
        .success()
        .stdout(
            "syntax = \"proto3\";\n\npackage iot.v1;\n\nmessage Metrics {\n  string device_id = 1;\n  \
             repeated double metrics = 2;\n  bool active = 3;\n  int32 retry_count = 4;\n}\n",
        );
}

#[test]
fn schema_errors_name_the_file_line_and_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let proto = dir.path().join("broken.proto");
    std::fs::write(
        &proto,
        "syntax = \"proto3\";\nmessage M {\n  Missing m = 1;\n}\n",
    )
    .expect("write");
    wirelens()
        .args(["inspect", &sample("user-profile.pb"), "--proto"])
        .arg(&proto)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: broken.proto:3:3: "));
    wirelens()
        .args(["inspect", &sample("user-profile.pb"), "--message", "M"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--message needs a schema"));
}

#[test]
fn captured_traffic_is_peeled_to_its_payloads() {
    let fixture = |name: &str| {
        format!(
            "{}/tests/fixtures/capture/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    };
    // A pcapng of an HTTP exchange on loopback: the response body is the sample, byte for byte.
    let out = wirelens()
        .args([
            "inspect",
            &fixture("pcap/http-msgpack.pcapng"),
            "--no-hex",
            "--no-tree",
        ])
        .assert()
        .success()
        .stdout_text();
    assert!(
        out.contains(
            "* 2. 98 bytes via pcapng → TCP 127.0.0.1:18733 → 127.0.0.1:44008 → HTTP/1.0 response"
        ),
        "{out}"
    );
    assert!(
        out.contains("format: msgpack (80%): consumed all 98 bytes as MessagePack map of 6"),
        "{out}"
    );
    let profile = wirelens()
        .args(["convert", &sample("user-profile.json"), "--to", "json"])
        .assert()
        .success()
        .stdout_text();
    // The same data from an xxd dump on stdin, and from a pcap.
    let xxd = std::fs::read(fixture("user-profile.msgpack.xxd")).expect("fixture");
    wirelens()
        .args(["convert", "-", "--to", "json"])
        .write_stdin(xxd)
        .assert()
        .success()
        .stdout(profile.clone());
    wirelens()
        .args([
            "convert",
            &fixture("pcap/http-msgpack.pcapng"),
            "--to",
            "json",
            "--pick",
            "2",
        ])
        .assert()
        .success()
        .stdout(profile);
    // --raw takes the dump as it is: text that is no format.
    wirelens()
        .args([
            "convert",
            &fixture("user-profile.msgpack.xxd"),
            "--raw",
            "--to",
            "json",
        ])
        .assert()
        .code(1);
}

#[test]
fn a_grpc_body_lists_its_messages_and_converts_them_all() {
    wirelens()
        .args(["convert", &sample("user-profiles.grpc"), "--to", "json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the input holds 3 payloads; choose one with --pick N",
        ));
    wirelens()
        .args([
            "convert",
            &sample("user-profiles.grpc"),
            "--to",
            "json",
            "--all",
        ])
        .args(["--proto", &sample("user-profile.proto")])
        .assert()
        .success()
        .stdout(
            predicate::str::is_match("^(\\{\"userId\":\"1004[234]\"[^\\n]*\\}\\n){3}$")
                .expect("regex"),
        );
}

fn capture_fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/capture/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn stdout_of(args: &[&str], stdin: Option<Vec<u8>>) -> String {
    let mut cmd = wirelens();
    cmd.args(args);
    if let Some(bytes) = stdin {
        cmd.write_stdin(bytes);
    }
    cmd.assert().success().stdout_text()
}

#[test]
fn layers_lists_the_ways_of_peeling_and_layer_chooses_one() {
    // Hex text of a MessagePack map: read as hex first, the text itself second.
    let out = stdout_of(
        &["inspect", "-", "--layers", "--no-tree", "--no-hex"],
        Some(b"81 a3 6b 65 79 01\n".to_vec()),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[1], "layer readings, best first (choose with --layer N):",
        "{out}"
    );
    assert!(
        lines[2].starts_with("* 1. hex (") && lines[2].contains("1 payload, msgpack"),
        "{out}"
    );
    assert!(lines[3].starts_with("  2. raw bytes ("), "{out}");
    assert!(out.contains("format: msgpack"), "{out}");
    // --layer 2 reads the text as it is: no format decodes it.
    wirelens()
        .args(["inspect", "-", "--layer", "2", "--no-tree", "--no-hex"])
        .write_stdin(b"81 a3 6b 65 79 01\n".to_vec())
        .assert()
        .code(1);
    // Usage errors.
    for bad in ["0", "7", "sideways"] {
        wirelens()
            .args(["inspect", "-", "--layer", bad])
            .write_stdin(b"81 a3 6b 65 79 01\n".to_vec())
            .assert()
            .code(2);
    }
}

#[test]
fn a_cbor_sequence_becomes_payloads_unless_told_otherwise() {
    let seq = capture_fixture("three.cbor-seq");
    let out = stdout_of(&["inspect", &seq, "--no-tree", "--no-hex"], None);
    assert!(
        out.contains("* 1. 98 bytes via CBOR sequence (item 1 of 3)\n"),
        "{out}"
    );
    assert!(
        out.contains("  3. 1064 bytes via CBOR sequence (item 3 of 3)\n"),
        "{out}"
    );
    // Each line of --all is the conversion of the document it was made from.
    let mut expected = String::new();
    for name in [
        "user-profile.cbor",
        "iot-metrics.cbor",
        "order-graphql.cbor",
    ] {
        expected.push_str(&stdout_of(
            &["convert", &sample(name), "--to", "json"],
            None,
        ));
    }
    assert_eq!(
        stdout_of(&["convert", &seq, "--to", "json", "--all"], None),
        expected
    );
    // Unsplit, it is one CBOR item with bytes after it: no format reads the whole input, and
    // the partial readings say where the first item ends.
    wirelens()
        .args(["inspect", &seq, "--layer", "whole", "--no-tree", "--no-hex"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("format: no known format"))
        .stdout(predicate::str::contains(
            "partial: cbor (12%): a complete CBOR value in bytes 0..98",
        ))
        .stderr(predicate::str::contains(
            "no known format reads these 1242 bytes",
        ));
}

#[test]
fn grpc_web_text_from_stdin_and_a_forced_framing() {
    let body = std::fs::read(capture_fixture("http-grpc-web-text.http")).expect("fixture");
    let out = stdout_of(&["inspect", "-", "--no-tree", "--no-hex"], Some(body));
    assert!(
        out.contains(
            "  3. 50 bytes via HTTP/1.1 response → gRPC-Web-text → gRPC frame (message 3 of 3, then trailers grpc-status: 0; grpc-message:)"
        ),
        "{out}"
    );
    // Integers back to back are not split unless asked.
    let ints = b"\x01\x02\x03\x04".to_vec();
    let out = stdout_of(
        &[
            "inspect",
            "-",
            "--layer",
            "cbor-seq",
            "--no-tree",
            "--no-hex",
        ],
        Some(ints),
    );
    assert!(
        out.contains("  4. 1 bytes via CBOR sequence (item 4 of 4)"),
        "{out}"
    );
}

/// gRPC frames back to back: `[0, length (4 bytes, big-endian), message]` each.
fn grpc_body(messages: &[&[u8]]) -> Vec<u8> {
    let mut body = Vec::new();
    for m in messages {
        body.push(0);
        body.extend_from_slice(&(m.len() as u32).to_be_bytes());
        body.extend_from_slice(m);
    }
    body
}

/// `convert --all` names the payload of each note, and past the first 20 note lines counts the
/// rest instead of printing a few lines for each of a capture's thousands of payloads.
#[test]
fn convert_all_names_each_notes_payload_and_counts_past_twenty() {
    let messages: Vec<Vec<u8>> = (1..=30u8).map(|i| vec![0x08, i]).collect();
    let refs: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
    let run = wirelens()
        .args(["convert", "-", "--to", "json", "--all"])
        .write_stdin(grpc_body(&refs))
        .assert()
        .success();
    let out = run.get_output();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 30);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 21, "{stderr}");
    assert_eq!(
        lines[0],
        "note: payload 1: ${1}: int map key 1 written as the string \"1\""
    );
    assert!(lines[19].starts_with("note: payload 20: "), "{stderr}");
    assert_eq!(
        lines[20],
        "note: 10 more note(s) on 10 more payload(s) are not shown (`--pick N` converts one payload and shows all of its notes)"
    );
}

#[test]
fn convert_all_writes_what_converts_and_names_each_failure() {
    // Three gRPC messages; the second is no format at all (a field-1 length running past the
    // end is not protobuf, and it is neither JSON, MessagePack nor CBOR).
    let body = grpc_body(&[b"\x08\x01", b"\x0a\x7f\xff", b"\x08\x03"]);
    let run = wirelens()
        .args(["convert", "-", "--to", "json", "--all"])
        .write_stdin(body.clone())
        .assert()
        .code(1);
    let output = run.get_output();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "{\"1\":1}\n{\"1\":3}\n"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Each converted message has a note on its integer key; the rest is about the failure.
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("note: "))
        .collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("payload 2 of 3: error at byte "),
        "{stderr}"
    );
    assert_eq!(
        lines[1],
        "error: 1 payload(s) did not convert (see above); the others were written"
    );
    // With -o, the file holds the lines that converted.
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("all.jsonl");
    wirelens()
        .args(["convert", "-", "--to", "json", "--all", "-o"])
        .arg(&out)
        .write_stdin(body)
        .assert()
        .code(1);
    assert_eq!(
        std::fs::read_to_string(&out).expect("written"),
        "{\"1\":1}\n{\"1\":3}\n"
    );
    // When none converts, nothing is written.
    let none = dir.path().join("none.jsonl");
    wirelens()
        .args(["convert", "-", "--to", "json", "--all", "-o"])
        .arg(&none)
        .write_stdin(grpc_body(&[b"\x0a\x7f\xff", b"\x0a\x7f\xfe"]))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("payload 1 of 2: "))
        .stderr(predicate::str::contains("payload 2 of 2: "))
        .stderr(predicate::str::contains(
            "2 payload(s) did not convert (see above); nothing was written",
        ));
    assert!(!none.exists());
}

#[test]
fn a_payload_cut_short_by_its_transport_needs_partial() {
    // The chunk header promises 2^48 bytes; two are there.
    let chunked = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000\r\n[]".to_vec();
    wirelens()
        .args(["convert", "-", "--to", "json"])
        .write_stdin(chunked.clone())
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("was cut short"))
        .stderr(predicate::str::contains("--partial"));
    wirelens()
        .args(["convert", "-", "--to", "json", "--partial"])
        .write_stdin(chunked.clone())
        .assert()
        .success()
        .stdout("[]\n")
        .stderr(predicate::str::contains("warning: "));
    // inspect shows the partial payload as before.
    wirelens()
        .args(["inspect", "-", "--no-hex"])
        .write_stdin(chunked)
        .assert()
        .success()
        .stdout(predicate::str::contains("format: json"));
    // A body shorter than its Content-Length: a whole MessagePack value, but not all that was
    // sent.
    let short = capture_fixture("http-truncated.http");
    wirelens()
        .args(["convert", &short, "--to", "json"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "payload 1 (98 bytes via HTTP/1.1 response) was cut short",
        ));
    let profile = stdout_of(
        &["convert", &sample("user-profile.msgpack"), "--to", "json"],
        None,
    );
    assert_eq!(
        stdout_of(&["convert", &short, "--to", "json", "--partial"], None),
        profile
    );
}

/// A classic little-endian pcap of raw IPv4 packets, each `(packet, bytes captured)`.
fn raw_ip_pcap(packets: &[(Vec<u8>, usize)]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    b.extend_from_slice(&[2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    b.extend_from_slice(&65535u32.to_le_bytes());
    b.extend_from_slice(&101u32.to_le_bytes());
    for (i, (packet, caplen)) in packets.iter().enumerate() {
        b.extend_from_slice(&1_700_000_000u32.to_le_bytes());
        b.extend_from_slice(&(i as u32).to_le_bytes());
        b.extend_from_slice(&(*caplen as u32).to_le_bytes());
        b.extend_from_slice(&(packet.len() as u32).to_le_bytes());
        b.extend_from_slice(&packet[..*caplen]);
    }
    b
}

fn ipv4_packet(src: [u8; 4], dst: [u8; 4], proto: u8, body: &[u8]) -> Vec<u8> {
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&((body.len() + 20) as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    ip.extend_from_slice(body);
    ip
}

/// A TCP segment from 10.0.0.1:51234 (`to_server`) or 10.0.0.2:80, flags ACK.
fn tcp_packet(to_server: bool, seq: u32, payload: &[u8]) -> Vec<u8> {
    let (c, s) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let (src, dst, sport, dport) = if to_server {
        (c, s, 51234u16, 80u16)
    } else {
        (s, c, 80, 51234)
    };
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 0, 5 << 4, 0x10, 0xff, 0xff, 0, 0, 0, 0]);
    t.extend_from_slice(payload);
    ipv4_packet(src, dst, 6, &t)
}

/// A capture whose payload data the `pcap-bytes` limit cut is not "every payload": `convert
/// --all` says from which frame data was dropped (the capture's own fact, not its warning's
/// words), whether the file is read whole or as it arrives, and `--partial` converts what was
/// read.
#[test]
fn a_capture_cut_by_the_payload_bytes_limit_needs_partial() {
    let dir = tempfile::tempdir().expect("tempdir");
    let packets = [
        tcp_packet(true, 100, b"[1,2]"),
        tcp_packet(false, 500, b"[3,4]"),
    ]
    .map(|p| {
        let n = p.len();
        (p, n)
    });
    let file = dir.path().join("cut.pcap");
    std::fs::write(&file, raw_ip_pcap(&packets)).expect("write");
    for stream in [false, true] {
        let mut args = vec![
            "convert",
            "--all",
            "--to",
            "json",
            "--limit",
            "pcap-bytes=5",
        ];
        if stream {
            args.push("--stream");
        }
        wirelens()
            .args(&args)
            .arg(&file)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(
                "the capture was not read whole (payload data from frame 2 on was dropped at the pcap-bytes limit)",
            ));
        let out = wirelens()
            .args(&args)
            .arg(&file)
            .arg("--partial")
            .assert()
            .code(0)
            .get_output()
            .stdout
            .clone();
        assert_eq!(
            String::from_utf8_lossy(&out).trim(),
            "[1,2]",
            "stream {stream}"
        );
    }
}

#[test]
fn a_capture_that_lost_bytes_needs_partial() {
    let dir = tempfile::tempdir().expect("temp dir");
    // One UDP datagram holding `[1,2,3]`, captured without its last two bytes (snap length).
    let mut udp = Vec::new();
    udp.extend_from_slice(&5000u16.to_be_bytes());
    udp.extend_from_slice(&53u16.to_be_bytes());
    udp.extend_from_slice(&15u16.to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.extend_from_slice(b"[1,2,3]");
    let packet = ipv4_packet([10, 0, 0, 1], [10, 0, 0, 2], 17, &udp);
    let cut = packet.len() - 2;
    let snapped = dir.path().join("snapped.pcap");
    std::fs::write(&snapped, raw_ip_pcap(&[(packet, cut)])).expect("write");
    wirelens()
        .args(["convert"])
        .arg(&snapped)
        .args(["--to", "json"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(
            "1 packets were captured shorter than they were on the wire",
        ))
        .stderr(predicate::str::contains(
            "was cut short (frame 1 was captured shorter than it was on the wire); --partial converts it as far as it goes",
        ));
    // --partial converts what was captured: `[1,2,` is no JSON, so the error is the decoder's.
    wirelens()
        .args(["convert"])
        .arg(&snapped)
        .args(["--to", "json", "--partial"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "error at byte 5 ($[2]): JSON: the input ends where a value was expected",
        ));

    // A TCP stream with a gap: the client's bytes stop before it.
    let gap = dir.path().join("gap.pcap");
    let packets = [
        (tcp_packet(true, 100, b"[1,"), 0),
        (tcp_packet(true, 106, b"4]"), 0),
    ]
    .map(|(p, _)| {
        let n = p.len();
        (p, n)
    });
    std::fs::write(&gap, raw_ip_pcap(&packets)).expect("write");
    // The bytes after the gap are a payload of their own, so pick the first.
    wirelens()
        .args(["convert"])
        .arg(&gap)
        .args(["--to", "json", "--pick", "1"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bytes are missing after stream byte 3",
        ))
        .stderr(predicate::str::contains("error: payload 1 (3 bytes via "))
        .stderr(predicate::str::contains(
            "was cut short (a gap in the TCP stream lies at its start or its end)",
        ));
    // --all converts what is whole and names what is not: here both runs touch the gap.
    wirelens()
        .args(["convert"])
        .arg(&gap)
        .args(["--to", "json", "--all"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("payload 2 (2 bytes via "));
}

#[test]
fn long_frame_lists_are_cut_on_payload_lines() {
    // The client's 2,000 bytes in every other frame of 2,000 (the server's answer in the rest).
    let mut packets = Vec::new();
    for n in 0..1000u32 {
        for p in [
            // Letters that are no hex digits, so the stream bytes are not read as a hex dump.
            tcp_packet(true, 1000 + 2 * n, b"xy"),
            tcp_packet(false, 9000 + n, b"z"),
        ] {
            let len = p.len();
            packets.push((p, len));
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("alternating.pcap");
    std::fs::write(&path, raw_ip_pcap(&packets)).expect("write");
    let out = wirelens()
        .args(["inspect"])
        .arg(&path)
        .args(["--no-tree", "--no-hex"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("1. 2000 bytes via pcap → TCP"))
        .unwrap_or_else(|| panic!("the first payload is listed: {text}"));
    assert!(line.chars().count() < 200, "{} chars: {line}", line.len());
    assert!(
        line.contains(" (stream 0, client→server, frames 1, 3, 5, "),
        "{line}"
    );
    assert!(line.ends_with("… (1000 frames in 1000 runs))"), "{line}");
}

#[test]
fn output_dash_is_standard_output_and_a_symlink_keeps_its_target() {
    let profile = stdout_of(
        &["convert", &sample("user-profile.json"), "--to", "json"],
        None,
    );
    assert_eq!(
        stdout_of(
            &[
                "convert",
                &sample("user-profile.json"),
                "--to",
                "json",
                "-o",
                "-"
            ],
            None
        ),
        profile
    );
    let msgpack = std::fs::read(sample("user-profile.msgpack")).expect("sample");
    let out = wirelens()
        .args([
            "convert",
            &sample("user-profile.json"),
            "--to",
            "msgpack",
            "-o",
            "-",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, msgpack);
    #[cfg(unix)]
    {
        let dir = tempfile::tempdir().expect("temp dir");
        let target = dir.path().join("profile.msgpack");
        std::fs::write(&target, b"old").expect("write");
        let link = dir.path().join("latest.msgpack");
        std::os::unix::fs::symlink("profile.msgpack", &link).expect("symlink");
        wirelens()
            .args([
                "convert",
                &sample("user-profile.json"),
                "--to",
                "msgpack",
                "-o",
            ])
            .arg(&link)
            .assert()
            .success();
        assert_eq!(std::fs::read(&target).expect("read"), msgpack);
        assert!(std::fs::symlink_metadata(&link)
            .expect("lstat")
            .file_type()
            .is_symlink());
        // A link to nothing is an error naming the path.
        let dangling = dir.path().join("dangling.msgpack");
        std::os::unix::fs::symlink("gone/profile.msgpack", &dangling).expect("symlink");
        wirelens()
            .args(["convert", &sample("user-profile.json"), "--to", "msgpack", "-o"])
            .arg(&dangling)
            .assert()
            .code(1)
            .stderr(format!(
                "error: cannot write {}: it is a symbolic link to gone/profile.msgpack, which does not exist\n",
                dangling.display()
            ));
    }
}

/// `inspect` output has no format reading besides `verdict_line` (if given): no `format: cbor
/// (11%)` guess, no `other:` lines.
fn assert_no_format_guess(out: &str, what: &str) {
    for line in out.lines() {
        assert!(
            !line.starts_with("  other: "),
            "{what}: a format guess is offered: {line}\n{out}"
        );
        if let Some(rest) = line.strip_prefix("format: ") {
            assert!(
                rest.starts_with("text (") || rest.starts_with("encrypted TLS records"),
                "{what}: a format guess is offered: {line}\n{out}"
            );
        }
    }
}

#[test]
fn inspect_of_a_capture_without_payloads_says_why_and_convert_fails_with_it() {
    for (name, why) in [
        ("empty.pcapng", "0 packets: the capture is empty"),
        (
            "handshake-only.pcap",
            "3 packets, TCP handshake only, no application data",
        ),
        (
            "pktap.pcap",
            "link type 258 (PKTAP) is not supported: 4 packets skipped",
        ),
    ] {
        let path = capture_fixture(&format!("pcap/{name}"));
        let assert = wirelens().args(["inspect", &path]).assert().success();
        let out = assert.stdout_text();
        assert!(
            out.contains(&format!("\ncapture: {why}\npayloads: none\n")),
            "{name}: {out}"
        );
        assert_no_format_guess(&out, name);
        // The sentence is said once, not again as a warning.
        assert_eq!(out.matches(why).count(), 1, "{name}: {out}");
        wirelens()
            .args(["convert", &path, "--to", "json"])
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains(format!(
                "no payload to read: {why}"
            )));
    }
}

#[test]
fn convert_help_names_every_output_format_and_partial() {
    let help = stdout_of(&["convert", "--help"], None);
    assert!(
        help.contains("The format to write: json, msgpack, cbor, protobuf"),
        "{help}"
    );
    assert!(help.contains("--partial"), "{help}");
    wirelens()
        .args(["convert", "-", "--to", "yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "expected json, msgpack, cbor or protobuf",
        ));
}

#[test]
fn inspect_of_a_tls_capture_labels_it_and_convert_refuses_to_guess() {
    let path = capture_fixture("pcap/tls13.pcap");
    let assert = wirelens()
        .args(["inspect", &path, "--no-tree", "--no-hex"])
        .assert()
        .success();
    let out = assert.stdout_text();
    assert!(
        out.contains(
            "capture: TLS 1.3: 1 encrypted stream, SNI api.example.test — give a key log to decrypt\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("format: encrypted TLS records: TLS 1.3, SNI api.example.test, TLS_AES_256_GCM_SHA384, ALPN offered http/1.1, 11 records encrypted — give a key log to decrypt\n"),
        "{out}"
    );
    assert_no_format_guess(&out, "tls13.pcap");
    wirelens()
        .args(["convert", &path, "--pick", "2", "--to", "json"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("encrypted TLS records: TLS 1.3"));
}

#[test]
fn inspect_of_an_html_body_shows_its_text() {
    let path = capture_fixture("pcap/html-listing.pcap");
    let assert = wirelens().args(["inspect", &path]).assert().success();
    let out = assert.stdout_text();
    assert!(
        out.contains("format: text (text/html), as its Content-Type says; no data format is guessed (read it as one with --from FORMAT)\n"),
        "{out}"
    );
    assert!(out.contains("\ntext (lines 1–"), "{out}");
    assert!(
        out.contains("<li><a href=\"hello.txt\">hello.txt</a></li>\n"),
        "{out}"
    );
    assert_no_format_guess(&out, "html-listing.pcap");
    assert!(!out.contains("annotated hex"), "{out}");
    // Without --from the text is written as the string it is; with it, the user's choice is
    // read.
    let json = wirelens()
        .args(["convert", &path, "--to", "json"])
        .assert()
        .success()
        .stdout_text();
    let text: String = serde_json::from_str(&json).expect("one JSON string");
    assert!(text.starts_with("<!DOCTYPE HTML>\n<html"), "{text}");
    assert!(text.contains("<li><a href=\"hello.txt\">hello.txt</a></li>\n"));
    wirelens()
        .args(["inspect", &path, "--from", "cbor", "--no-tree", "--no-hex"])
        .assert()
        .stdout(predicate::str::contains(
            "format: cbor (100%): chosen with --from",
        ));
}
