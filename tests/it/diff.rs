//! `wirelens diff`, run as a user runs it: the samples in all four formats mean the same, each
//! kind of change is one line with its path and bytes, arrays are aligned (one insertion in
//! 10,000 records is one change), records are matched by key, captures are peeled, deep and
//! large inputs finish, the CSV and JSON outputs parse, and the exit status is diff(1)'s.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn wirelens() -> Command {
    Command::cargo_bin("wirelens").expect("the wirelens binary is built")
}

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/capture/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("temp file written");
    path
}

/// Runs `wirelens diff ARGS…` and gives (exit status, stdout, stderr).
fn run<I, S>(args: I) -> (i32, String, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let output = wirelens()
        .arg("diff")
        .args(args)
        .output()
        .expect("wirelens runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The change lines of an output (neither the `A:`/`B:` headers, notes nor the summary).
fn change_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| l.len() > 2 && matches!(&l[..2], "+ " | "- " | "~ " | "t " | "o "))
        .collect()
}

fn summary(stdout: &str) -> &str {
    stdout.lines().last().unwrap_or("")
}

#[test]
fn diff_user_profile_in_all_four_formats_means_the_same() {
    let proto = sample("user-profile.proto");
    for other in [
        "user-profile.msgpack",
        "user-profile.cbor",
        "user-profile.pb",
    ] {
        let (code, out, err) = run([
            sample("user-profile.json").as_str(),
            sample(other).as_str(),
            "--proto",
            &proto,
            "--message",
            "UserProfile",
        ]);
        assert_eq!(code, 0, "{other}: {out}{err}");
        assert!(change_lines(&out).is_empty(), "{other}: {out}");
        assert!(
            summary(&out).starts_with("same meaning (JSON "),
            "{other}: {out}"
        );
    }
}

#[test]
fn diff_transactions_in_all_four_formats_means_the_same() {
    let proto = sample("transactions.proto");
    for other in [
        "transactions-1k.msgpack",
        "transactions-1k.cbor",
        "transactions-1k.pb",
    ] {
        let (code, out, err) = run([
            sample("transactions-1k.json").as_str(),
            sample(other).as_str(),
            "--proto",
            &proto,
            "--message",
            "TransactionHistory",
        ]);
        assert_eq!(code, 0, "{other}: {out}{err}");
        assert!(summary(&out).starts_with("same meaning"), "{other}: {out}");
        let size = std::fs::metadata(sample(other)).expect("sample").len();
        let grouped = size
            .to_string()
            .as_bytes()
            .rchunks(3)
            .rev()
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect::<Vec<_>>()
            .join(",");
        assert!(summary(&out).contains(&format!("{grouped} bytes")), "{out}");
    }
}

#[test]
fn diff_the_same_file_is_identical_bytes() {
    let json = sample("user-profile.json");
    let (code, out, _) = run([&json, &json]);
    assert_eq!(code, 0);
    assert_eq!(
        summary(&out),
        "same meaning (JSON 128 bytes, JSON 128 bytes; identical bytes)"
    );
}

#[test]
fn diff_reports_one_line_per_change_with_paths_and_bytes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = write(
        dir.path(),
        "a.json",
        br#"{"data":[{"amount":12.5},{"amount":1}],"id":5,"tags":["a","b","x"],"old":1}"#,
    );
    let b = write(
        dir.path(),
        "b.json",
        br#"{"data":[{"amount":13.5},{"amount":1}],"id":"5","tags":["a","b"],"new":[1]}"#,
    );
    let (code, out, err) = run([&a, &b]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        change_lines(&out),
        [
            "~ $.data[0].amount: 12.5 → 13.5  (A bytes 19..23, B bytes 19..23)",
            "t $.id: int 5 → text \"5\"  (A bytes 44..45, B bytes 44..47); the same number, as an integer and as text",
            "- $.tags[2]: \"x\"  (A bytes 62..65)",
            "- $.old: 1  (A bytes 67..74)",
            "+ $.new: […]  (B bytes 65..74)",
        ]
    );
    assert_eq!(
        summary(&out),
        "5 changes: 1 changed, 1 type changed, 1 added, 2 removed; same key order"
    );
    // The bytes named are the bytes of the values.
    let a_bytes = std::fs::read(&a).expect("a");
    assert_eq!(&a_bytes[19..23], b"12.5");
    assert_eq!(&a_bytes[62..65], b"\"x\"");
}

#[test]
fn diff_key_order_counts_only_with_order() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = write(dir.path(), "a.json", br#"{"a":1,"b":2}"#);
    let b = write(dir.path(), "b.json", br#"{"b":2,"a":1}"#);
    let (code, out, _) = run([&a, &b]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        summary(&out),
        "same meaning (JSON 13 bytes, JSON 13 bytes; differ in: key order)"
    );
    let (code, out, _) = run([a.as_os_str(), b.as_os_str(), "--order".as_ref()]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(change_lines(&out).len(), 1);
    assert!(change_lines(&out)[0].starts_with("o $: "), "{out}");
}

#[test]
fn diff_json_against_msgpack_with_another_key_order_names_both_sizes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = write(dir.path(), "a.json", br#"{"a":1,"b":2.5}"#);
    // {"b": 2.5 as float32, "a": 1}
    let b = write(
        dir.path(),
        "b.msgpack",
        &[0x82, 0xa1, b'b', 0xca, 0x40, 0x20, 0, 0, 0xa1, b'a', 0x01],
    );
    let (code, out, err) = run([&a, &b]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        summary(&out),
        "same meaning (JSON 15 bytes, MessagePack 11 bytes; differ in: key order, float widths)"
    );
    let (code, out, _) = run([a.as_os_str(), b.as_os_str(), "--strict-widths".as_ref()]);
    assert_eq!(code, 1);
    assert_eq!(
        change_lines(&out),
        ["t $.b: float64 2.5 → float32 2.5 (f32)  (A bytes 11..14, B bytes 3..8); the same number at another width"]
    );
}

fn records(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!(r#"{{"seq":{i},"name":"item {i}","price":{}.25}}"#, i % 97))
        .collect()
}

#[test]
fn diff_an_insertion_in_10000_records_is_one_change() {
    let dir = tempfile::tempdir().expect("temp dir");
    let items = records(10_000);
    let mut more = items.clone();
    more.insert(4_321, r#"{"seq":-1,"name":"new","price":0.5}"#.into());
    let a = write(
        dir.path(),
        "a.json",
        format!("{{\"data\":[{}]}}", items.join(",")).as_bytes(),
    );
    let b = write(
        dir.path(),
        "b.json",
        format!("{{\"data\":[{}]}}", more.join(",")).as_bytes(),
    );
    let (code, out, err) = run([&a, &b]);
    assert_eq!(code, 1, "{err}");
    let lines = change_lines(&out);
    assert_eq!(lines.len(), 1, "{out}");
    assert!(
        lines[0].starts_with("+ $.data[4321]: {…}  (B bytes "),
        "{out}"
    );
    assert_eq!(summary(&out), "1 change: 1 added; same key order");
}

#[test]
fn diff_matches_records_by_key_after_a_reorder() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = write(
        dir.path(),
        "a.json",
        br#"{"rows":[{"sku":"a","q":1},{"sku":"b","q":2},{"sku":"c","q":3}]}"#,
    );
    let b = write(
        dir.path(),
        "b.json",
        br#"{"rows":[{"sku":"c","q":3},{"sku":"a","q":1},{"sku":"b","q":7}]}"#,
    );
    let (code, out, _) = run([
        a.as_os_str(),
        b.as_os_str(),
        "--key".as_ref(),
        "$.rows[*].sku".as_ref(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        change_lines(&out),
        ["~ $.rows[1].q (B $.rows[2].q): 2 → 7  (A bytes 42..43, B bytes 60..61)"]
    );
    // Without the key, LCS alignment sees other records.
    let (code, out, _) = run([&a, &b]);
    assert_eq!(code, 1);
    assert_ne!(change_lines(&out).len(), 1, "{out}");
    // A record order change alone counts only with --order.
    let c = write(
        dir.path(),
        "c.json",
        br#"{"rows":[{"sku":"c","q":3},{"sku":"a","q":1},{"sku":"b","q":2}]}"#,
    );
    let key = ["--key", "$.rows[*].sku"];
    let (code, out, _) = run([
        a.as_os_str(),
        c.as_os_str(),
        key[0].as_ref(),
        key[1].as_ref(),
    ]);
    assert_eq!(code, 0, "{out}");
    let (code, _, _) = run([
        a.as_os_str(),
        c.as_os_str(),
        key[0].as_ref(),
        key[1].as_ref(),
        "--order".as_ref(),
    ]);
    assert_eq!(code, 1);
}

#[test]
fn diff_ignore_leaves_paths_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = write(dir.path(), "a.json", br#"{"v":1,"at":"10:00"}"#);
    let b = write(dir.path(), "b.json", br#"{"v":1,"at":"10:05"}"#);
    assert_eq!(run([&a, &b]).0, 1);
    let (code, out, _) = run([
        a.as_os_str(),
        b.as_os_str(),
        "--ignore".as_ref(),
        "$.at".as_ref(),
    ]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn diff_two_picks_of_a_capture() {
    let pcap = fixture("real/http1-keepalive.pcap");
    // Payloads 21 and 22 are one profile served as MessagePack and as CBOR.
    let (code, out, err) = run([
        pcap.as_str(),
        pcap.as_str(),
        "--pick",
        "21",
        "--pick-b",
        "22",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("(payload 21 of 23): MessagePack, 98 bytes"),
        "{out}"
    );
    assert_eq!(
        summary(&out),
        "same meaning (MessagePack 98 bytes, CBOR 98 bytes)"
    );
    // 13 is a POST of a new user, 15 the server's answer: the same fields plus the id.
    let (code, out, err) = run([
        pcap.as_str(),
        pcap.as_str(),
        "--pick",
        "13",
        "--pick-b",
        "15",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        change_lines(&out),
        ["+ $.user_id: 10045  (B bytes 125..140)"]
    );
    // The JSON of one capture against the MessagePack of another input.
    let other = fixture("pcap/http-json.pcap");
    let (code, out, err) = run([
        pcap.as_str(),
        other.as_str(),
        "--pick",
        "23",
        "--pick-b",
        "4",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        summary(&out),
        "same meaning (JSON 128 bytes, MessagePack 98 bytes)"
    );
}

#[test]
fn diff_a_capture_against_a_modified_copy() {
    let pcap = fixture("pcap/http-json.pcap");
    let bytes = std::fs::read(&pcap).expect("fixture");
    // Change one digit of the JSON body inside the captured packet.
    let (code, out, _) = run([pcap.as_str(), pcap.as_str()]);
    assert_eq!(code, 0, "{out}");
    let field = b"\"user_id\":10042";
    let at = bytes
        .windows(field.len())
        .position(|w| w == field)
        .expect("the JSON body in the capture")
        + field.len()
        - 1;
    let mut changed = bytes.clone();
    changed[at] = b'3';
    let dir = tempfile::tempdir().expect("temp dir");
    let b = write(dir.path(), "changed.pcap", &changed);
    let (code, out, err) = run([pcap.as_str(), b.to_str().expect("utf-8 path")]);
    assert_eq!(code, 1, "{out}{err}");
    let lines = change_lines(&out);
    assert_eq!(
        lines,
        ["~ $.user_id: 10042 → 10043  (A bytes 11..16, B bytes 11..16)"],
        "{out}"
    );
}

#[test]
fn diff_a_500_deep_input_finishes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = write(
        dir.path(),
        "a.json",
        format!("{}1{}", "[".repeat(500), "]".repeat(500)).as_bytes(),
    );
    let b = write(
        dir.path(),
        "b.json",
        format!("{}2{}", "[".repeat(500), "]".repeat(500)).as_bytes(),
    );
    let (code, out, err) = run([&a, &b]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(change_lines(&out).len(), 1, "{out}");
    assert_eq!(summary(&out), "1 change: 1 changed; same key order");
}

#[test]
fn diff_100000_records_finish() {
    let dir = tempfile::tempdir().expect("temp dir");
    let items = records(100_000);
    let mut other = items.clone();
    other[77_777] = r#"{"seq":77777,"name":"renamed","price":80.25}"#.into();
    other.remove(12_345);
    let a = write(
        dir.path(),
        "a.json",
        format!("[{}]", items.join(",")).as_bytes(),
    );
    let b = write(
        dir.path(),
        "b.json",
        format!("[{}]", other.join(",")).as_bytes(),
    );
    let (code, out, err) = run([&a, &b]);
    assert_eq!(code, 1, "{err}");
    let lines = change_lines(&out);
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("- $[12345]: {…}"), "{out}");
    assert!(
        lines[1].starts_with("~ $[77777].name (B $[77776].name): \"item 77777\" → \"renamed\""),
        "{out}"
    );
}

#[test]
fn diff_csv_and_json_outputs_parse() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = write(dir.path(), "a.json", br#"{"a":1,"b":[1,2],"c":"x"}"#);
    let b = write(dir.path(), "b.json", br#"{"a":2,"b":[1],"d":true}"#);
    let csv_out = dir.path().join("out.csv");
    let json_out = dir.path().join("out.json");
    let (code, out, err) = run([
        a.as_os_str(),
        b.as_os_str(),
        "--csv".as_ref(),
        csv_out.as_os_str(),
        "--json".as_ref(),
        json_out.as_os_str(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let mut reader = csv::Reader::from_path(&csv_out).expect("CSV written");
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    assert_eq!(
        header,
        ["kind", "path", "a_value", "b_value", "a_start", "a_end", "b_start", "b_end"]
    );
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.expect("row").iter().map(String::from).collect())
        .collect();
    assert_eq!(
        rows,
        [
            ["changed", "$.a", "1", "2", "5", "6", "5", "6"],
            ["removed", "$.b[1]", "2", "", "14", "15", "", ""],
            ["removed", "$.c", "\"x\"", "", "17", "24", "", ""],
            ["added", "$.d", "", "true", "", "", "15", "23"],
        ]
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_out).expect("JSON written")).expect("JSON");
    assert_eq!(report["same_meaning"], serde_json::json!(false));
    assert_eq!(report["changes"].as_array().map(Vec::len), Some(4));
    assert_eq!(report["changes"][0]["path"], serde_json::json!("$.a"));
    assert_eq!(report["a"]["format"], serde_json::json!("json"));
    assert_eq!(report["summary"], serde_json::json!(summary(&out)));
}

#[test]
fn diff_trouble_exits_2() {
    let json = sample("user-profile.json");
    let (code, _, err) = run([json.as_str(), "/nonexistent/b.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read /nonexistent/b.json"), "{err}");
    let (code, _, err) = run([json.as_str(), json.as_str(), "--key", "data"]);
    assert_eq!(code, 2);
    assert!(err.contains("--key data"), "{err}");
    let (code, _, err) = run([json.as_str(), json.as_str(), "--key", "$.data.id"]);
    assert_eq!(code, 2, "{err}");
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = write(dir.path(), "bad.json", b"{\"a\": [1, 2");
    let (code, _, err) = run([
        json.as_str(),
        bad.to_str().expect("utf-8"),
        "--from",
        "json",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.json"), "{err}");
    let (code, _, _) = run([json.as_str(), json.as_str(), "--no-such-flag"]);
    assert_eq!(code, 2);
}

/// Runs `wirelens diff-schema` on two versions of message `M` and gives (status, stdout).
fn diff_schema(old: &str, new: &str) -> (i32, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let header = "syntax = \"proto3\";\npackage shop;\n";
    let a = write(dir.path(), "v1.proto", format!("{header}{old}").as_bytes());
    let b = write(dir.path(), "v2.proto", format!("{header}{new}").as_bytes());
    let output = wirelens()
        .arg("diff-schema")
        .arg("--proto-a")
        .arg(&a)
        .arg("--proto-b")
        .arg(&b)
        .args(["--message", "M"])
        .output()
        .expect("wirelens runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn diff_schema_gives_each_verdict() {
    let (code, out) = diff_schema(
        "message M { int32 id = 1; string name = 2; }",
        "message M { int32 id = 1; string name = 2; }",
    );
    assert_eq!((code, out.as_str()), (0, "no changes: compatible\n"));
    let (code, out) = diff_schema(
        "message M { int32 id = 1; }",
        "message M { string id = 1; }",
    );
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "wire-breaking  shop.M.id (1): int32 -> string: another wire encoding\n1 wire-breaking: breaks the wire\n"
    );
    let (code, out) = diff_schema(
        "message M { int32 id = 1; }",
        "message M { int32 user_id = 1; }",
    );
    assert_eq!(code, 1);
    assert!(
        out.starts_with("JSON-breaking  shop.M.id (1): renamed id -> user_id"),
        "{out}"
    );
    assert!(
        out.ends_with("1 JSON-breaking: wire-compatible, breaks proto3 JSON\n"),
        "{out}"
    );
    let (code, out) = diff_schema(
        "message M { int32 id = 1; string note = 2; }",
        "message M { int32 id = 1; }",
    );
    assert_eq!(code, 1);
    assert!(
        out.starts_with("not reserved  shop.M.note (2): removed without `reserved 2;`"),
        "{out}"
    );
    let (code, out) = diff_schema(
        "message M { int32 id = 1; string note = 2; }",
        "message M { int32 id = 1; reserved 2; string extra = 3; }",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.ends_with("2 compatible: compatible\n"), "{out}");
    let (code, _) = diff_schema("message M { int32 id = 1; }", "message N { int32 id = 1; }");
    assert_eq!(code, 2);
}

fn json_names(name: &str) -> String {
    format!(
        "{}/tests/fixtures/protobuf/json-names/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The schema flags for `tests/fixtures/protobuf/json-names/` (a Span written by protoc's Python
/// runtime as binary and as proto3 JSON).
fn span_schema() -> [String; 4] {
    [
        "--proto".into(),
        json_names("trace.proto"),
        "--message".into(),
        "fixture.trace.Span".into(),
    ]
}

/// protoc's Python runtime writes the span's int64/fixed64/sint64 fields as JSON strings, its
/// field names in lowerCamelCase, its enum by name and its timestamp as RFC 3339 text: with the
/// schema, all of it is the binary's meaning, and only the two bytes fields (base64 text in
/// JSON) stay changes of type, with their note.
#[test]
fn diff_with_a_schema_reads_proto3_json_as_the_binary() {
    let (code, out, err) = run([json_names("span.json"), json_names("span.pb")]
        .into_iter()
        .chain(span_schema()));
    assert_eq!(code, 1, "{out}{err}");
    let lines = change_lines(&out);
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0]
            .starts_with("t $.traceId (B $.trace_id): text \"W4768DyRLUenD9O2keQoxQ==\" → bytes"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("t $.spanId (B $.span_id): text \"4ZpPArt9MGY=\" → bytes"),
        "{out}"
    );
    for l in &lines {
        assert!(
            l.ends_with("the text is the bytes in base64 (JSON has no byte strings)"),
            "{l}"
        );
    }
    assert_eq!(summary(&out), "2 changes: 2 type changed; same key order");

    // Without the schema the names differ and the numbers are text: nothing lines up.
    let (code, out, _) = run([json_names("span.json"), json_names("span.pb")]);
    assert_eq!(code, 1);
    assert!(change_lines(&out).len() > 20, "{out}");
}

/// A 64-bit integer changed in the JSON is a changed value (not a change of type) with the
/// schema; the same number written as text is no change, and the summary says where the bytes
/// differ.
#[test]
fn diff_with_a_schema_sees_a_changed_int64_written_as_text() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = std::fs::read_to_string(json_names("span.json")).expect("fixture");
    let changed = json.replace("\"1700000000223456789\"", "\"1700000000223456790\"");
    assert_ne!(changed, json);
    let a = write(dir.path(), "changed.json", changed.as_bytes());
    let (code, out, err) = run([a.display().to_string(), json_names("span.pb")]
        .into_iter()
        .chain(span_schema()));
    assert_eq!(code, 1, "{out}{err}");
    let lines = change_lines(&out);
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[2].starts_with(
            "~ $.endTimeUnixNano (B $.end_time_unix_nano): \"1700000000223456790\" → 1700000000223456789"
        ),
        "{out}"
    );
    assert!(
        lines[2].ends_with("; read with the schema (integers as JSON text)"),
        "{out}"
    );

    // Two JSON writings of one span (JSON names, and the names of the .proto) mean the same
    // with the schema named: neither input is protobuf, --message says what they are.
    let (code, out, err) = run(
        [json_names("span.json"), json_names("span.proto-names.json")]
            .into_iter()
            .chain(span_schema()),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        summary(&out)
            .starts_with("same meaning (JSON 962 bytes, JSON 994 bytes; differ in: field names"),
        "{out}"
    );
}

/// Two real captures of one API (`tests/fixtures/capture/real/diff-api/`, recorded with curl
/// and tcpdump against two versions of a Python http.server app): the health checks (payload
/// 2) are the same bytes; the orders (payload 4, JSON in version 1, MessagePack in version 2)
/// differ in exactly the six places the server's second version changed.
#[test]
fn diff_two_real_captures_of_one_api() {
    let real = |name: &str| fixture(&format!("real/diff-api/{name}"));
    let (code, out, err) = run([real("orders-v1.pcap"), real("orders-v2.pcap")]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        summary(&out),
        "same meaning (JSON 16 bytes, JSON 16 bytes; identical bytes)"
    );
    let (code, out, err) = run([
        real("orders-v1.pcap"),
        real("orders-v2.pcap"),
        "--pick".into(),
        "4".into(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "A: ".to_string() + &real("orders-v1.pcap") + " (payload 4 of 4): JSON, 506 bytes",
            "B: ".to_string() + &real("orders-v2.pcap") + " (payload 4 of 4): MessagePack, 411 bytes",
            "~ $.total: 4 → 5  (A bytes 21..22, B bytes 13..14)".into(),
            "- $.data[0].coupon: \"WINTER10\"  (A bytes 147..167)".into(),
            "~ $.data[1].amount: 12.5 → 13.75  (A bytes 212..216, B bytes 127..136)".into(),
            "~ $.data[1].status: \"pending\" → \"shipped\"  (A bytes 247..256, B bytes 156..164)".into(),
            "+ $.data[2]: {…}  (B bytes 177..251)".into(),
            "t $.data[2].customer_id (B $.data[3].customer_id): int 31 → text \"31\"  (A bytes 307..309, B bytes 270..273); the same number, as an integer and as text".into(),
            "note: $.data: records matched by `id`".into(),
            "6 changes: 3 changed, 1 type changed, 1 added, 1 removed; same key order".into(),
        ]
    );
    // The bytes named are the values' own: A's amount is the JSON text `12.5`.
    let a = std::fs::read(real("orders-v1.pcap")).expect("fixture");
    let body = a
        .windows(9)
        .position(|w| w == b"{\"page\": ")
        .expect("the orders body is in one segment");
    assert_eq!(&a[body + 212..body + 216], b"12.5");
}

/// `diff-schema` takes a descriptor set for either version (any extension but `.proto`): the
/// old version compiled and written as a set, against the new `.proto`.
#[test]
fn diff_schema_reads_a_descriptor_set_for_a_version() {
    let dir = tempfile::tempdir().expect("temp dir");
    let header = "syntax = \"proto3\";\npackage shop;\n";
    let old = format!("{header}message M {{ int32 id = 1; string note = 2; }}");
    let schema = wirelens::codec::protobuf::schema::Schema::from_proto_source("v1.proto", &old)
        .expect("compiles");
    let set = schema.pool().encode_to_vec();
    let a = write(dir.path(), "v1.pb", &set);
    let b = write(
        dir.path(),
        "v2.proto",
        format!("{header}message M {{ string id = 1; reserved 2; }}").as_bytes(),
    );
    let output = wirelens()
        .arg("diff-schema")
        .arg("--proto-a")
        .arg(&a)
        .arg("--proto-b")
        .arg(&b)
        .args(["--message", "shop.M"])
        .output()
        .expect("wirelens runs");
    let out = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert_eq!(
        out,
        "wire-breaking  shop.M.id (1): int32 -> string: another wire encoding\n\
         compatible  shop.M.note (2): removed; the new version reserves it\n\
         1 wire-breaking, 1 compatible: breaks the wire\n"
    );
}
