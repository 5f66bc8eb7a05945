use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::*;

fn empty(runtime: Runtime) -> RuntimeReport {
    RuntimeReport {
        runtime,
        program: runtime.program().1.to_string(),
        version: None,
        implementation: None,
        rows: Vec::new(),
        compressors: Vec::new(),
        error: None,
    }
}

/// What harness.py printed for the user-profile sample on the machine it was written on
/// (shortened to three samples), with a missing library and its install command.
const PYTHON_OUTPUT: &str = r#"{"type": "runtime", "runtime": "python", "version": "3.11.7", "implementation": "CPython", "executable": "/usr/bin/python3"}
{"type": "library", "format": "json", "library": "orjson", "version": "3.8.3", "status": "ok", "bytes": 3, "sha256": "080a9ed428559ef602668b4c00f114f1a11c3f6b02a435f0bdc154578e4d7f22"}
{"type": "samples", "format": "json", "library": "orjson", "op": "encode", "batch": 450, "ns": [149593, 123705, 123264]}
{"type": "samples", "format": "json", "library": "orjson", "op": "decode", "batch": 242, "ns": [144846, 132529, 131645]}
{"type": "library", "format": "json", "library": "ujson", "status": "missing", "version": null, "install": "pip install ujson", "message": "No module named 'ujson'"}
{"type": "library", "format": "msgpack", "library": "msgpack", "version": "1.2.4", "status": "ok", "bytes": 2, "sha256": "00"}
{"type": "library", "format": "cbor", "library": "cbor2", "version": "6.3.0", "status": "failed", "message": "round trip: ValueError: its own bytes read back as different data"}
{"type": "done"}
"#;

#[test]
fn the_protocol_reads_into_rows_with_statistics() {
    let mut report = empty(Runtime::Python);
    // wirelens' JSON of the payload is `[1]`, whose SHA-256 the orjson line carries.
    let ours = vec![
        (Format::Json, b"[1]".to_vec()),
        (Format::MessagePack, vec![0x91, 0x01]),
    ];
    let done = parse_lines(PYTHON_OUTPUT, &mut report, &ours, 100).expect("parses");
    assert!(done);
    assert_eq!(report.version.as_deref(), Some("3.11.7"));
    assert_eq!(report.implementation.as_deref(), Some("CPython"));
    assert_eq!(report.rows.len(), 4);

    let orjson = &report.rows[0];
    assert_eq!(
        (orjson.format, orjson.library.as_str()),
        (Format::Json, "orjson")
    );
    assert_eq!(orjson.version.as_deref(), Some("3.8.3"));
    assert_eq!(orjson.same_bytes_as_wirelens, Some(true));
    let encode = orjson.encode.as_ref().expect("encode timed");
    // Each sample is the total of 450 calls: the median sample 123,705 ns is 274.9 ns a call.
    assert_eq!(encode.batch, 450);
    assert_eq!(encode.ns.n, 3);
    assert_eq!(encode.iterations, 1350);
    assert!((encode.ns.median - 123_705.0 / 450.0).abs() < 1e-9);
    assert!((encode.ns.min - 123_264.0 / 450.0).abs() < 1e-9);
    assert!(encode.allocs_per_op.is_none());
    let decode = orjson.decode.as_ref().expect("decode timed");
    assert!((decode.ns.median - 132_529.0 / 242.0).abs() < 1e-9);

    let ujson = &report.rows[1];
    assert_eq!(ujson.install.as_deref(), Some("pip install ujson"));
    assert_eq!(
        ujson.error.as_deref(),
        Some("ujson not installed — `pip install ujson`")
    );
    assert!(ujson.encode.is_none() && ujson.version.is_none());

    // msgpack's bytes are not wirelens' (the digest differs): said, and no timing made up.
    let msgpack = &report.rows[2];
    assert_eq!(msgpack.same_bytes_as_wirelens, Some(false));
    assert!(msgpack.encode.is_none());

    let cbor2 = &report.rows[3];
    assert!(cbor2
        .error
        .as_deref()
        .is_some_and(|e| e.contains("round trip")));
    assert_eq!(cbor2.same_bytes_as_wirelens, None);
}

#[test]
fn a_line_that_is_not_the_protocol_is_an_error_naming_it_and_keeps_what_came_before() {
    let mut report = empty(Runtime::Node);
    let text =
        "{\"type\":\"runtime\",\"version\":\"20.20.2\"}\nTraceback (most recent call last):\n";
    let e = parse_lines(text, &mut report, &[], 100)
        .expect_err("not the protocol")
        .to_string();
    assert_eq!(
        e,
        "node harness, line 2: expected value at line 1 column 1: Traceback (most recent call last):"
    );
    assert_eq!(report.version.as_deref(), Some("20.20.2"));
    // Samples for a library never announced are refused too.
    let mut report = empty(Runtime::Node);
    let text =
        r#"{"type":"samples","format":"json","library":"JSON","op":"encode","batch":1,"ns":[5]}"#;
    assert!(parse_lines(text, &mut report, &[], 100).is_err());
    // Output cut short (no `done`) parses, and says it did not finish.
    let mut report = empty(Runtime::Python);
    let cut: String = PYTHON_OUTPUT
        .lines()
        .take(3)
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(matches!(
        parse_lines(&cut, &mut report, &[], 100),
        Ok(false)
    ));
    assert!(report.rows[0].encode.is_some() && report.rows[0].decode.is_none());
}

#[test]
fn a_runtime_that_is_not_installed_is_reported_not_fatal() {
    // A program that does not exist stands for a runtime that is not installed.
    let mut report = empty(Runtime::Python);
    let payload = Payload {
        files: vec![(Format::Json, b"[1]".to_vec())],
        ..Payload::default()
    };
    let cancel = AtomicBool::new(false);
    let e = run_harness(
        Runtime::Python,
        "/nonexistent/wirelens-test-python3",
        &payload,
        &BenchConfig::quick(),
        Duration::from_secs(5),
        &cancel,
        &mut report,
    )
    .expect_err("not installed");
    assert!(e.starts_with("Python not found"), "{e}");
    assert!(e.contains("WIRELENS_PYTHON"), "{e}");
    assert!(report.rows.is_empty());
}

#[cfg(unix)]
#[test]
fn a_harness_that_hangs_is_stopped_after_its_timeout_with_its_stderr() {
    // `sh` stands for a runtime whose harness hangs: it says something on stderr, then sleeps.
    let dir = tempfile::tempdir().expect("temp");
    let fake = dir.path().join("fake-python");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'stuck in import' >&2\nexec sleep 30\n",
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut report = empty(Runtime::Python);
    let cancel = AtomicBool::new(false);
    let start = std::time::Instant::now();
    let e = run_harness(
        Runtime::Python,
        &fake.display().to_string(),
        &Payload::default(),
        &BenchConfig::quick(),
        Duration::from_millis(300),
        &cancel,
        &mut report,
    )
    .expect_err("timed out");
    assert!(
        e.contains("the python harness did not finish in 0.3 s and was stopped"),
        "{e}"
    );
    assert!(e.ends_with("; stderr: stuck in import"), "{e}");
    // Killed, not waited for: well before the 30 s the child wanted.
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[cfg(unix)]
#[test]
fn a_harness_that_crashes_is_reported_with_its_exit_status_and_stderr() {
    let dir = tempfile::tempdir().expect("temp");
    let fake = dir.path().join("fake-node");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho '{\"type\":\"runtime\",\"version\":\"1.0\"}'\necho 'boom' >&2\nexit 3\n",
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut report = empty(Runtime::Node);
    let cancel = AtomicBool::new(false);
    let e = run_harness(
        Runtime::Node,
        &fake.display().to_string(),
        &Payload::default(),
        &BenchConfig::quick(),
        Duration::from_secs(20),
        &cancel,
        &mut report,
    )
    .expect_err("crashed");
    assert!(
        e.contains("exited with exit status: 3 before it finished"),
        "{e}"
    );
    assert!(e.ends_with("; stderr: boom"), "{e}");
    assert_eq!(report.version.as_deref(), Some("1.0"));
}

/// `harness --probe` as the machine's python3 answered it (tests/fixtures/runtimes/record.sh),
/// replayed by a fake interpreter: the runtime's version, each library with its version or the
/// command that installs it.
#[cfg(unix)]
#[test]
fn a_probe_lists_the_libraries_found_and_what_installs_the_others() {
    use std::os::unix::fs::PermissionsExt;
    let recorded = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/runtimes/python-probe.jsonl"
    );
    let dir = tempfile::tempdir().expect("temp");
    let fake = dir.path().join("fake-python");
    // The harness script comes first, then `--probe`.
    std::fs::write(
        &fake,
        format!("#!/bin/sh\n[ \"$2\" = --probe ] || exit 9\nexec cat '{recorded}'\n"),
    )
    .expect("write");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let report = probe(
        Runtime::Python,
        &fake.display().to_string(),
        Duration::from_secs(20),
    );
    assert!(answered(&report), "{:?}", report.error);
    assert_eq!(report.version.as_deref(), Some("3.11.7"));
    let libraries: Vec<(&str, Option<&str>, Option<&str>)> = report
        .rows
        .iter()
        .map(|r| {
            (
                r.library.as_str(),
                r.version.as_deref(),
                r.install.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        libraries,
        [
            ("json", Some("stdlib (Python 3.11.7)"), None),
            ("orjson", Some("3.8.3"), None),
            ("ujson", None, Some("pip install ujson")),
            ("pydantic", Some("2.13.4"), None),
            ("msgpack", Some("1.2.4"), None),
            ("ormsgpack", None, Some("pip install ormsgpack")),
            ("cbor2", Some("6.3.0"), None),
            ("protobuf", Some("7.36.2"), None),
        ]
    );
    // Nothing was timed.
    assert!(report.rows.iter().all(|r| r.encode.is_none()));
}

#[test]
fn a_probe_of_an_interpreter_that_is_not_installed_says_so_at_once() {
    let start = std::time::Instant::now();
    let report = probe(
        Runtime::Node,
        "/nonexistent/wirelens-test-node",
        Duration::from_secs(20),
    );
    assert!(!answered(&report));
    let e = report.error.as_deref().expect("a reason");
    assert!(e.starts_with("Node not found"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn progress_names_what_the_harness_did() {
    let lines: Vec<Option<String>> = PYTHON_OUTPUT.lines().map(progress_of).collect();
    assert_eq!(lines[0].as_deref(), Some("started (version 3.11.7)"));
    assert_eq!(lines[1].as_deref(), Some("orjson: round trip checked"));
    assert_eq!(lines[3].as_deref(), Some("orjson: decode measured"));
    assert_eq!(lines[4].as_deref(), Some("ujson: not installed"));
    assert_eq!(progress_of("not json"), None);
}

/// Compressor lines as harness.py writes them (shortened): gzip measured on the JSON file,
/// zstandard not installed, Node's zstd not in its version.
const COMPRESSOR_OUTPUT: &str = r#"{"type": "runtime", "runtime": "python", "version": "3.11.7", "implementation": "CPython"}
{"type": "compressor", "format": "json", "codec": "gzip", "library": "gzip", "version": "stdlib gzip (zlib 1.2.13)", "status": "ok", "bytes": 23}
{"type": "samples", "format": "json", "library": "gzip", "op": "compress", "batch": 100, "ns": [400000, 500000, 450000]}
{"type": "samples", "format": "json", "library": "gzip", "op": "decompress", "batch": 100, "ns": [100000, 120000, 110000]}
{"type": "compressor", "format": "json", "codec": "zstd", "library": "zstandard", "status": "missing", "version": null, "install": "pip install zstandard", "message": "No module named 'zstandard'"}
{"type": "compressor", "format": "cbor", "codec": "zstd", "library": "zlib", "status": "missing", "version": null, "message": "Node 20.20.2 has no zlib.zstdCompressSync (Node 22.15 or newer has)"}
{"type": "done"}
"#;

#[test]
fn compressor_lines_read_into_the_runtimes_compressors() {
    let mut report = empty(Runtime::Python);
    assert!(parse_lines(COMPRESSOR_OUTPUT, &mut report, &[], 10).expect("parses"));
    assert!(report.rows.is_empty());
    assert_eq!(report.compressors.len(), 3);
    let gzip = report
        .compressor(Format::Json, Codec::Gzip)
        .expect("gzip on JSON, both timings");
    assert_eq!((gzip.bytes, gzip.library.as_str()), (23, "gzip"));
    // 450,000 ns for 100 calls: 4.5 µs a call.
    let c = gzip.compress.as_ref().expect("compress");
    assert!((c.ns.median - 4_500.0).abs() < 1e-9);
    let d = gzip.decompress.as_ref().expect("decompress");
    assert!((d.ns.median - 1_100.0).abs() < 1e-9);
    assert!(report.compressor(Format::Json, Codec::Zstd).is_none());
    assert_eq!(
        report.compressors[1].error.as_deref(),
        Some("zstandard not installed — `pip install zstandard`")
    );
    assert_eq!(
        report.compressors[2].error.as_deref(),
        Some("Node 20.20.2 has no zlib.zstdCompressSync (Node 22.15 or newer has)")
    );
    // Samples of a compressor that was never announced are an error naming the line.
    let mut report = empty(Runtime::Python);
    let err = parse_lines(
        r#"{"type": "samples", "format": "json", "library": "brotli", "op": "compress", "batch": 1, "ns": [1]}"#,
        &mut report,
        &[],
        10,
    )
    .expect_err("samples before their compressor");
    assert_eq!(
        err.to_string(),
        "line 1: samples of the brotli compressor before it"
    );
}

/// The harness gets the Avro schema its bytes were written with: `payload.avsc` beside the
/// payload files, named by the job's `avro_schema` (the harnesses read Avro only with it), and
/// the schema is the one wirelens inferred for the payload. A fake interpreter keeps the job and
/// the schema it was given, and answers that its library wrote wirelens' Avro bytes.
#[cfg(unix)]
#[test]
fn the_avro_schema_goes_beside_the_payload_and_the_job_names_it() {
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::PermissionsExt;
    let value = crate::codec::decode(
        br#"{"id": 7, "name": "ada", "tags": ["x", "y"], "score": 2.5}"#,
        Format::Json,
        &crate::codec::DecodeOptions::default(),
    )
    .expect("json")
    .value;
    let subject = crate::profile::Subject {
        name: "t.json".into(),
        value: std::sync::Arc::new(value.clone()),
        message: None,
    };
    let payload = crate::profile::runtime_payload(&subject);
    let schema = crate::codec::avro::schema_for(&value, &crate::codec::EncodeOptions::default())
        .expect("inferred");
    assert_eq!(payload.avro_schema.as_deref(), Some(schema.text()));
    let avro = &payload
        .files
        .iter()
        .find(|(f, _)| *f == Format::Avro)
        .expect("the Avro bytes")
        .1;
    let sha = format!("{:x}", Sha256::digest(avro));

    let dir = tempfile::tempdir().expect("temp");
    let kept = dir.path().join("kept");
    std::fs::create_dir(&kept).expect("mkdir");
    let fake = dir.path().join("fake-python");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\ncp \"$2\" '{k}/job.json' && cp \"$(dirname \"$2\")/payload.avsc\" \
             '{k}/payload.avsc' || exit 4\n\
             echo '{{\"type\":\"runtime\",\"version\":\"3.11.7\"}}'\n\
             echo '{{\"type\":\"library\",\"format\":\"avro\",\"library\":\"fastavro\",\
             \"version\":\"1.13.1\",\"status\":\"ok\",\"bytes\":{n},\"sha256\":\"{sha}\"}}'\n\
             echo '{{\"type\":\"done\"}}'\n",
            k = kept.display(),
            n = avro.len(),
        ),
    )
    .expect("write");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut report = empty(Runtime::Python);
    let cancel = AtomicBool::new(false);
    run_harness(
        Runtime::Python,
        &fake.display().to_string(),
        &payload,
        &BenchConfig::quick(),
        Duration::from_secs(20),
        &cancel,
        &mut report,
    )
    .expect("ran");
    let given = std::fs::read_to_string(kept.join("payload.avsc")).expect("the schema was given");
    assert_eq!(given, schema.text());
    let job: serde_json::Value =
        serde_json::from_slice(&std::fs::read(kept.join("job.json")).expect("job")).expect("json");
    let named = job["avro_schema"]
        .as_str()
        .expect("the job names the schema");
    assert!(named.ends_with("/payload.avsc"), "{named}");
    let avro_file = job["files"]["avro"].as_str().expect("the Avro file");
    assert_eq!(
        Path::new(named).parent(),
        Path::new(avro_file).parent(),
        "beside the payload"
    );
    let row = &report.rows[0];
    assert_eq!(
        (row.format, row.library.as_str()),
        (Format::Avro, "fastavro")
    );
    assert_eq!(row.same_bytes_as_wirelens, Some(true));
}
