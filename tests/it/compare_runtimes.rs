//! `wirelens compare`'s library-true sizes with their variants, and `--runtime`: timings in
//! Python and Node beside Rust.
//!
//! Plain `cargo test` covers the sizes, the variants and a runtime that is not installed. The
//! tests that run the real harnesses need python3 and node with the pinned packages
//! (`scripts/runtimes/requirements.txt`, `package.json`); they are `#[ignore]`d here and run by
//! `.ci/run`, which installs them (`cargo test --test it compare_runtimes -- --ignored`, with
//! `WIRELENS_PYTHON` naming the virtual environment's interpreter and `NODE_PATH` the
//! packages).

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;

fn wirelens() -> Command {
    Command::cargo_bin("wirelens").expect("the wirelens binary is built")
}

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

type Row = BTreeMap<String, String>;

fn read_csv(path: &Path) -> Vec<Row> {
    let mut r = csv::Reader::from_path(path).expect("csv written");
    let header: Vec<String> = r
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    r.records()
        .map(|rec| {
            let rec = rec.expect("record");
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn num(row: &Row, col: &str) -> f64 {
    row.get(col)
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{col} is not a number in {row:?}"))
}

#[test]
fn sizes_are_the_libraries_bytes_and_the_variants_say_what_they_save() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("r.json");
    let out = wirelens()
        .args(["compare", "--quick", &sample("iot-metrics.json")])
        .args(["--runtime", "rust", "--json"])
        .arg(&json)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).expect("utf-8");
    // 80 bytes each, as msgpack.packb and cbor2.dumps write it; 24.5 is the one float that
    // narrows, to a float32 (−4) or a float16 (−6).
    let lines: Vec<&str> = text.lines().collect();
    let row = |start: &str| {
        lines
            .iter()
            .position(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no {start:?} row in:\n{text}"))
    };
    for (format, saving) in [
        ("MessagePack", "−4 bytes (−5.0%)"),
        ("CBOR", "−6 bytes (−7.5%)"),
    ] {
        let at = row(format);
        let cells: Vec<&str> = lines[at].split_whitespace().collect();
        assert_eq!(cells[1], "80", "{}", lines[at]);
        assert!(
            lines[at + 1].trim_start().starts_with("shortest floats"),
            "{}",
            lines[at + 1]
        );
        assert!(lines[at + 1].ends_with(saving), "{}", lines[at + 1]);
        assert!(lines[at + 2].trim_start().starts_with("canonical"));
        assert!(lines[at + 2].ends_with(saving), "{}", lines[at + 2]);
    }
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json report")).expect("json");
    let formats = report["files"][0]["formats"].as_array().expect("formats");
    for f in formats {
        let variants = f["variants"].as_array().expect("variants");
        match f["sizes"]["format"].as_str() {
            Some("msgpack") | Some("cbor") => {
                assert_eq!(f["sizes"]["sizes"]["raw"], 80);
                assert_eq!(variants[0]["variant"], "shortest-floats");
                assert_eq!(variants[1]["variant"], "canonical");
                let raw = variants[0]["sizes"]["raw"].as_i64().expect("raw");
                assert_eq!(variants[0]["delta"].as_i64(), Some(raw - 80));
            }
            _ => assert!(variants.is_empty(), "{f}"),
        }
    }
}

#[test]
fn a_runtime_that_is_not_installed_is_said_and_the_rust_rows_stay() {
    let dir = tempfile::tempdir().expect("temp dir");
    let csv_path = dir.path().join("t.csv");
    let out = wirelens()
        .env("WIRELENS_PYTHON", "/nonexistent/python3")
        .env("WIRELENS_NODE", "/nonexistent/node")
        .args([
            "compare",
            "--quick",
            &sample("user-profile.json"),
            "--runtime",
            "python,node,rust",
            "--csv",
        ])
        .arg(&csv_path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).expect("utf-8");
    for (name, var) in [("Python", "WIRELENS_PYTHON"), ("Node", "WIRELENS_NODE")] {
        let expected = format!(
            "{}: {name} not found: `/nonexistent/{}` is not on PATH (set {var} to the \
             interpreter to use)",
            name.to_lowercase(),
            if name == "Python" { "python3" } else { "node" }
        );
        assert!(text.contains(&expected), "no {expected:?} in:\n{text}");
    }
    let rows = read_csv(&csv_path);
    assert_eq!(rows.len(), 13, "only the Rust rows");
    assert!(rows.iter().all(|r| r["runtime"] == "rust"));
}

/// Without `--runtime`, every runtime installed is timed: one that is not installed, and one
/// whose interpreter hangs (a probe bounded by `--runtime-timeout`), are each listed with why and
/// how to ask for it, and the run goes on with the Rust rows.
#[cfg(unix)]
#[test]
fn by_default_every_installed_runtime_is_timed_and_the_others_are_listed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let hang = dir.path().join("hanging-python");
    std::fs::write(&hang, "#!/bin/sh\nexec sleep 60\n").expect("write");
    std::fs::set_permissions(&hang, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let csv_path = dir.path().join("t.csv");
    let start = std::time::Instant::now();
    let out = wirelens()
        .env("WIRELENS_PYTHON", &hang)
        .env("WIRELENS_NODE", "/nonexistent/node")
        .args([
            "compare",
            "--quick",
            &sample("user-profile.json"),
            "--runtime-timeout",
            "1",
            "--csv",
        ])
        .arg(&csv_path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    // The probe was stopped after its second, not waited for (the interpreter sleeps a minute).
    assert!(start.elapsed() < std::time::Duration::from_secs(50));
    let text = String::from_utf8(out).expect("utf-8");
    for expected in [
        "python: the python probe did not finish in 1 s and was stopped; not timed \
         (`--runtime python` asks for it, `--runtime rust` for Rust alone)"
            .to_string(),
        "node: Node not found: `/nonexistent/node` is not on PATH (set WIRELENS_NODE to the \
         interpreter to use); not timed (`--runtime node` asks for it, `--runtime rust` for \
         Rust alone)"
            .to_string(),
    ] {
        assert!(text.contains(&expected), "no {expected:?} in:\n{text}");
    }
    let rows = read_csv(&csv_path);
    assert_eq!(rows.len(), 13, "only the Rust rows");
    assert!(rows.iter().all(|r| r["runtime"] == "rust"));
}

#[test]
fn an_unknown_runtime_is_a_usage_error() {
    wirelens()
        .args([
            "compare",
            "--quick",
            &sample("user-profile.json"),
            "--runtime",
            "ruby",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("unknown runtime \"ruby\""));
}

/// The rows a run with every pinned package installed has, per runtime: (library, format,
/// whether the library writes wirelens' bytes for the user-profile sample). msgpackr and cbor-x
/// write 100 bytes where the others write 98: with their default `variableMapSize: false` a map
/// of 6 entries gets a 2-byte length (`de 00 06`, `b9 00 06`) instead of one byte (`86`, `a6`).
/// The Avro libraries read wirelens' datum by the schema it was written with (the harness's
/// `payload.avsc`) and write it back byte for byte, as the specification leaves one encoding.
const EXPECTED: &[(&str, &str, &str, bool)] = &[
    ("python", "json", "json", true),
    ("python", "json", "orjson", true),
    ("python", "json", "ujson", true),
    ("python", "json", "pydantic", true),
    ("python", "msgpack", "msgpack", true),
    ("python", "msgpack", "ormsgpack", true),
    ("python", "cbor", "cbor2", true),
    ("python", "protobuf", "protobuf", true),
    ("python", "avro", "fastavro", true),
    ("python", "avro", "avro", true),
    ("node", "json", "JSON", true),
    ("node", "msgpack", "@msgpack/msgpack", true),
    ("node", "msgpack", "msgpackr", false),
    ("node", "cbor", "cbor-x", false),
    ("node", "protobuf", "protobufjs", true),
    ("node", "avro", "avsc", true),
];

#[test]
#[ignore = "needs python3 and node with the pinned packages; .ci/run installs them and runs it"]
fn python_and_node_time_every_library_on_the_same_bytes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (csv_path, json_path) = (dir.path().join("t.csv"), dir.path().join("r.json"));
    wirelens()
        .args([
            "compare",
            "--quick",
            &sample("user-profile.json"),
            "--proto",
            &sample("user-profile.proto"),
            "--message",
            "wirelens.samples.UserProfile",
            "--runtime",
            "all",
            "--csv",
        ])
        .arg(&csv_path)
        .arg("--json")
        .arg(&json_path)
        .assert()
        .success();
    let rows = read_csv(&csv_path);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_path).expect("report")).expect("json");
    let runtimes = report["files"][0]["runtimes"].as_array().expect("runtimes");
    assert_eq!(runtimes.len(), 2);
    for r in runtimes {
        assert!(r["error"].is_null(), "{}", r["error"]);
        assert!(r["version"].as_str().is_some_and(|v| !v.is_empty()));
    }
    let wirelens_bytes = |format: &str| {
        rows.iter()
            .find(|r| r["runtime"] == "rust" && r["format"] == format && r["library"] == "wirelens")
            .map(|r| num(r, "bytes"))
            .expect("the wirelens row")
    };
    for &(runtime, format, library, same) in EXPECTED {
        let row = rows
            .iter()
            .find(|r| r["runtime"] == runtime && r["library"] == library)
            .unwrap_or_else(|| panic!("no {runtime} {library} row"));
        assert_eq!(row["format"], format);
        assert_eq!(row["error"], "", "{row:?}");
        assert!(!row["library_version"].is_empty(), "{row:?}");
        for op in ["encode", "decode"] {
            let median = num(row, &format!("{op}_median_us"));
            assert!(median > 0.0, "{row:?}");
            assert!(num(row, &format!("{op}_ci_low_us")) <= median);
            assert!(num(row, &format!("{op}_samples")) >= 3.0);
            // Measured inside the runtime: CPU time per call (Python's thread clock, Node's
            // process clock) and single calls for the tail.
            assert!(num(row, &format!("{op}_cpu_us")) > 0.0, "{row:?}");
            assert!(num(row, &format!("{op}_latency_calls")) >= 1.0, "{row:?}");
            // Every core at once, measured inside the runtime too: one worker per core
            // (Python processes, Node worker threads), each with its own copy.
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            if cores >= 2 {
                assert_eq!(
                    num(row, &format!("{op}_all_cores_threads")),
                    cores as f64,
                    "{row:?}"
                );
                assert!(num(row, &format!("{op}_all_cores_ops_s")) > 0.0, "{row:?}");
            } else {
                assert_eq!(row[&format!("{op}_all_cores_ops_s")], "", "{row:?}");
            }
        }
        // Whether the library wrote wirelens' bytes, as the harness's SHA-256 says; where it
        // did, the sizes agree too.
        let json_row = runtimes
            .iter()
            .find(|r| r["runtime"] == runtime)
            .and_then(|r| r["rows"].as_array())
            .and_then(|rows| rows.iter().find(|r| r["library"] == library))
            .expect("the report's row");
        assert_eq!(
            json_row["same_bytes_as_wirelens"], same,
            "{runtime} {library}"
        );
        if same {
            assert_eq!(
                num(row, "bytes"),
                wirelens_bytes(format),
                "{runtime} {library}"
            );
        }
    }
    assert_eq!(
        rows.iter().filter(|r| r["runtime"] != "rust").count(),
        EXPECTED.len()
    );
    // Each runtime's own compressors on each format's bytes: gzip and brotli in both (zstd in
    // Python with the pinned zstandard; in Node where zlib has it), each round-tripped and timed.
    for r in runtimes {
        let compressors = r["compressors"].as_array().expect("compressors");
        let name = r["runtime"].as_str().unwrap_or_default();
        let mut codecs = vec!["gzip", "brotli"];
        if name == "python" {
            codecs.push("zstd");
        }
        for codec in codecs {
            let timed: Vec<_> = compressors
                .iter()
                .filter(|c| c["codec"] == codec && c["error"].is_null())
                .collect();
            assert_eq!(timed.len(), 5, "{name} {codec}: one per format");
            for c in timed {
                assert!(c["bytes"].as_u64().is_some_and(|b| b > 0), "{c}");
                assert!(c["compress"]["ns"]["median"]
                    .as_f64()
                    .is_some_and(|m| m > 0.0));
                assert!(c["decompress"]["ns"]["median"]
                    .as_f64()
                    .is_some_and(|m| m > 0.0));
            }
        }
    }
}

/// A Python without its site-packages (`python3 -S`, through a wrapper) has only the standard
/// library: `json` is timed, every other library is reported missing with its `pip install`.
#[cfg(unix)]
#[test]
#[ignore = "needs python3; .ci/run runs it"]
fn a_python_without_the_packages_times_json_and_names_what_to_install() {
    use std::os::unix::fs::PermissionsExt;
    let python = std::env::var("WIRELENS_PYTHON").unwrap_or_else(|_| "python3".into());
    let dir = tempfile::tempdir().expect("temp dir");
    let bare = dir.path().join("bare-python");
    std::fs::write(&bare, format!("#!/bin/sh\nexec '{python}' -S \"$@\"\n")).expect("wrapper");
    std::fs::set_permissions(&bare, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = wirelens()
        .env("WIRELENS_PYTHON", &bare)
        .args([
            "compare",
            "--quick",
            &sample("iot-metrics.json"),
            "--runtime",
            "python",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).expect("utf-8");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("JSON         json ") && l.contains(" yes ")),
        "{text}"
    );
    for (format, library) in [
        ("JSON", "orjson"),
        ("JSON", "ujson"),
        ("JSON", "pydantic"),
        ("MessagePack", "msgpack"),
        ("MessagePack", "ormsgpack"),
        ("CBOR", "cbor2"),
        ("Protobuf", "protobuf"),
        ("Avro", "fastavro"),
        ("Avro", "avro"),
    ] {
        let line = format!(
            "python: {format} {library}: not measured: {library} not installed — `pip install \
             {library}`"
        );
        assert!(text.contains(&line), "no {line:?} in:\n{text}");
    }
}

/// A Node that finds none of the pinned packages (no `NODE_PATH`, run from a folder without
/// `node_modules`) times the built-in `JSON` and names the `npm install` of every other library,
/// avsc among them.
#[test]
#[ignore = "needs node; .ci/run runs it"]
fn a_node_without_the_packages_times_json_and_names_what_to_install() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = wirelens()
        .env_remove("NODE_PATH")
        .current_dir(dir.path())
        .args([
            "compare",
            "--quick",
            &sample("iot-metrics.json"),
            "--runtime",
            "node",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).expect("utf-8");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("JSON         JSON ") && l.contains(" built in ")),
        "{text}"
    );
    for (format, library) in [
        ("MessagePack", "@msgpack/msgpack"),
        ("MessagePack", "msgpackr"),
        ("CBOR", "cbor-x"),
        ("Protobuf", "protobufjs"),
        ("Avro", "avsc"),
    ] {
        let line = format!(
            "node: {format} {library}: not measured: {library} not installed — `npm install \
             {library}`"
        );
        assert!(text.contains(&line), "no {line:?} in:\n{text}");
    }
}
