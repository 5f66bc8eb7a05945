//! `wirelens compare`, run as a user runs it (quick mode): the CSV schema, one row per
//! file × format × library with sane values, sizes equal to what `convert` writes, bytes per
//! field summing to each format's size, and the schema source of protobuf rows.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use assert_cmd::Command;

fn wirelens() -> Command {
    Command::cargo_bin("wirelens").expect("the wirelens binary is built")
}

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The documented columns of the timings CSV (docs/profiling.md, `report::csv` docs).
fn expected_header() -> Vec<String> {
    let mut h: Vec<String> = [
        "file",
        "format",
        "library",
        "schema_source",
        "bytes",
        "gzip_bytes",
        "zstd_bytes",
        "brotli_bytes",
        "ratio_to_json",
    ]
    .map(String::from)
    .to_vec();
    for op in ["encode", "decode"] {
        for c in [
            "median_us",
            "mean_us",
            "p5_us",
            "p95_us",
            "ci_low_us",
            "ci_high_us",
            "mad_us",
            "cv",
            "samples",
            "batch",
            "mb_s",
            "json_mb_s",
            "allocs_per_op",
            "alloc_bytes_per_op",
            "concurrent",
            "min_us",
            "cpu_us",
            "p99_us",
            "p999_us",
            "latency_calls",
            "ops_s",
            "all_cores_threads",
            "all_cores_ops_s",
            "all_cores_mb_s",
            "all_cores_cpu_us",
        ] {
            h.push(format!("{op}_{c}"));
        }
    }
    h.push("fidelity_notes".into());
    for link in ["mobile", "broadband", "datacenter"] {
        h.push(format!("e2e_{link}_ms"));
        h.push(format!("e2e_{link}_gzip_ms"));
    }
    h.push("error".into());
    h.push("runtime".into());
    h.push("library_version".into());
    h
}

type Row = BTreeMap<String, String>;

fn read_csv(path: &Path) -> (Vec<String>, Vec<Row>) {
    let mut r = csv::Reader::from_path(path).expect("csv written");
    let header: Vec<String> = r
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    let rows = r
        .records()
        .map(|rec| {
            let rec = rec.expect("record");
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect();
    (header, rows)
}

fn num(row: &Row, col: &str) -> f64 {
    row.get(col)
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{col} is not a number in {row:?}"))
}

/// What `wirelens convert` writes for `input` in `format` (JSON without its final newline).
fn converted_len(input: &str, format: &str, dir: &Path) -> usize {
    let out = dir.join(format!("converted.{format}"));
    wirelens()
        .args(["convert", input, "--to", format, "-o"])
        .arg(&out)
        .assert()
        .success();
    let len = std::fs::metadata(&out).expect("converted").len() as usize;
    if format == "json" {
        len - 1
    } else {
        len
    }
}

#[test]
fn compare_writes_every_row_with_sane_values() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (csv_path, fields_path, json_path) = (
        dir.path().join("t.csv"),
        dir.path().join("f.csv"),
        dir.path().join("r.json"),
    );
    let inputs = [sample("risk-batch.json"), sample("transactions-1k.json")];
    let out = wirelens()
        .arg("compare")
        .args(&inputs)
        .arg("--quick")
        .args(["--runtime", "rust"])
        .arg("--csv")
        .arg(&csv_path)
        .arg("--csv-fields")
        .arg(&fields_path)
        .arg("--json")
        .arg(&json_path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).expect("utf-8");
    for section in [
        "sizes (gzip 6",
        "where the bytes go",
        "timings (median",
        "scaling over the records at $.data",
        "end to end",
    ] {
        assert!(text.contains(section), "missing {section:?} in:\n{text}");
    }

    let (header, rows) = read_csv(&csv_path);
    assert_eq!(header, expected_header());
    let expected: BTreeSet<(String, String, String)> = inputs
        .iter()
        .flat_map(|f| {
            [
                ("json", "serde_json"),
                ("json", "sonic-rs"),
                ("json", "wirelens"),
                ("msgpack", "rmp-serde"),
                ("msgpack", "rmpv"),
                ("msgpack", "wirelens"),
                ("cbor", "ciborium"),
                ("cbor", "cbor4ii"),
                ("cbor", "wirelens"),
                ("protobuf", "prost-reflect"),
                ("protobuf", "wirelens"),
                ("avro", "apache-avro"),
                ("avro", "wirelens"),
            ]
            .map(|(fmt, lib)| (f.clone(), fmt.to_string(), lib.to_string()))
        })
        .collect();
    let got: BTreeSet<(String, String, String)> = rows
        .iter()
        .map(|r| (r["file"].clone(), r["format"].clone(), r["library"].clone()))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(rows.len(), expected.len());

    for r in &rows {
        assert_eq!(r["error"], "", "{r:?}");
        // Without --runtime, only Rust is timed.
        assert_eq!(
            (r["runtime"].as_str(), r["library_version"].as_str()),
            ("rust", "")
        );
        let bytes = num(r, "bytes");
        assert!(bytes > 0.0);
        for c in ["gzip_bytes", "zstd_bytes", "brotli_bytes"] {
            assert!(num(r, c) < bytes, "{c} not smaller: {r:?}");
        }
        let schema = if r["format"] == "protobuf" || r["format"] == "avro" {
            "inferred"
        } else {
            "none"
        };
        assert_eq!(r["schema_source"], schema);
        for op in ["encode", "decode"] {
            let median = num(r, &format!("{op}_median_us"));
            assert!(median > 0.0, "{r:?}");
            assert!(num(r, &format!("{op}_ci_low_us")) <= median, "{r:?}");
            assert!(median <= num(r, &format!("{op}_ci_high_us")), "{r:?}");
            assert!(num(r, &format!("{op}_p5_us")) <= num(r, &format!("{op}_p95_us")));
            assert!(num(r, &format!("{op}_min_us")) <= median);
            assert!(num(r, &format!("{op}_samples")) >= 3.0);
            assert!(num(r, &format!("{op}_mb_s")) > 0.0);
            // The binary installs the counting allocator.
            assert!(num(r, &format!("{op}_allocs_per_op")) >= 0.0, "{r:?}");
            // The thread's CPU time per operation is there (Linux has the clock), positive,
            // and, the thread being busy only with the calls, not far above their wall time.
            let cpu = num(r, &format!("{op}_cpu_us"));
            assert!(
                cpu > 0.0 && cpu < 10.0 * num(r, &format!("{op}_mean_us")),
                "{r:?}"
            );
            // Tail latency from calls timed one by one: p99 at or above the median call; the
            // count says how many; p99.9 only from a thousand calls on.
            let calls = num(r, &format!("{op}_latency_calls"));
            assert!(calls >= 1.0, "{r:?}");
            if calls >= 100.0 {
                assert!(num(r, &format!("{op}_p99_us")) >= num(r, &format!("{op}_min_us")));
            } else {
                assert_eq!(r[&format!("{op}_p99_us")], "", "{r:?}");
            }
            if calls < 1000.0 {
                assert_eq!(r[&format!("{op}_p999_us")], "", "{r:?}");
            } else {
                assert!(num(r, &format!("{op}_p999_us")) >= num(r, &format!("{op}_p99_us")));
            }
            // Operations per second on one thread are the median's; on every core (a machine
            // of two or more), one thread per core, each with its own copy of the input.
            let ops = num(r, &format!("{op}_ops_s"));
            assert!((ops * median / 1e6 - 1.0).abs() < 0.01, "{r:?}");
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            if cores >= 2 {
                assert_eq!(num(r, &format!("{op}_all_cores_threads")), cores as f64);
                let all = num(r, &format!("{op}_all_cores_ops_s"));
                assert!(all > 0.0, "{r:?}");
                let mb = num(r, &format!("{op}_all_cores_mb_s"));
                let bytes = num(r, "bytes");
                assert!((mb - all * bytes / 1e6).abs() <= 0.01 + mb * 1e-3, "{r:?}");
                assert!(num(r, &format!("{op}_all_cores_cpu_us")) > 0.0, "{r:?}");
            } else {
                assert_eq!(r[&format!("{op}_all_cores_ops_s")], "", "{r:?}");
            }
        }
        // Decoding builds a value: every library allocates.
        assert!(num(r, "decode_allocs_per_op") >= 1.0, "{r:?}");
        for link in ["mobile", "broadband", "datacenter"] {
            let plain = num(r, &format!("e2e_{link}_ms"));
            // At least the round trip.
            assert!(plain > 0.0);
        }
        assert!(
            num(r, "e2e_mobile_ms") >= 60.0
                && num(r, "e2e_datacenter_ms") < num(r, "e2e_mobile_ms")
        );
    }

    // wirelens' rows hold exactly what `wirelens convert` writes.
    for input in &inputs {
        for format in ["json", "msgpack", "cbor", "protobuf"] {
            let row = rows
                .iter()
                .find(|r| {
                    &r["file"] == input && r["format"] == format && r["library"] == "wirelens"
                })
                .expect("row");
            assert_eq!(
                num(row, "bytes") as usize,
                converted_len(input, format, dir.path()),
                "{input} {format}"
            );
        }
        let json_row = rows
            .iter()
            .find(|r| &r["file"] == input && r["format"] == "json" && r["library"] == "wirelens")
            .expect("row");
        assert_eq!(num(json_row, "ratio_to_json"), 1.0);
    }

    // Bytes per field: every file × format sums exactly to its size.
    let (fheader, frows) = read_csv(&fields_path);
    assert_eq!(
        fheader,
        [
            "file",
            "format",
            "path",
            "nodes",
            "key_bytes",
            "header_bytes",
            "value_bytes",
            "structure_bytes",
            "total_bytes",
            "share"
        ]
    );
    let mut sums: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in &frows {
        let parts: f64 = [
            "key_bytes",
            "header_bytes",
            "value_bytes",
            "structure_bytes",
        ]
        .iter()
        .map(|c| num(r, c))
        .sum();
        assert_eq!(parts, num(r, "total_bytes"));
        *sums
            .entry((r["file"].clone(), r["format"].clone()))
            .or_default() += num(r, "total_bytes") as usize;
    }
    assert_eq!(sums.len(), 10);
    for ((file, format), sum) in &sums {
        let row = rows
            .iter()
            .find(|r| &r["file"] == file && &r["format"] == format && r["library"] == "wirelens")
            .expect("row");
        assert_eq!(*sum, num(row, "bytes") as usize, "{file} {format}");
    }
    // The records aggregate: one row for every user_id of risk-batch.
    assert!(frows.iter().any(|r| r["path"] == "$.data[*].user_id"
        && r["format"] == "json"
        && num(r, "nodes") > 1.0));

    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_path).expect("json written")).expect("json");
    assert_eq!(report["files"].as_array().map(Vec::len), Some(2));
    assert_eq!(report["mode"], "quick");
    assert_eq!(report["allocations_counted"], true);
}

#[test]
fn protobuf_with_the_users_schema_is_given() {
    let dir = tempfile::tempdir().expect("temp dir");
    let csv_path = dir.path().join("t.csv");
    wirelens()
        .args([
            "compare",
            "--quick",
            &sample("user-profile.pb"),
            "--proto",
            &sample("user-profile.proto"),
        ])
        .args([
            "--message",
            "wirelens.samples.UserProfile",
            "--runtime",
            "rust",
            "--csv",
        ])
        .arg(&csv_path)
        .assert()
        .success();
    let (_, rows) = read_csv(&csv_path);
    assert_eq!(rows.len(), 13);
    for r in &rows {
        // The message type was given; Avro's schema is inferred from the payload.
        let expected = match r["format"].as_str() {
            "protobuf" => "given",
            "avro" => "inferred",
            _ => "none",
        };
        assert_eq!(r["schema_source"], expected, "{r:?}");
        assert_eq!(r["error"], "", "{r:?}");
    }
    // Re-encoded with the same schema, protobuf is the input's own size.
    let pb = std::fs::metadata(sample("user-profile.pb"))
        .expect("sample")
        .len() as f64;
    let row = rows
        .iter()
        .find(|r| r["format"] == "protobuf" && r["library"] == "wirelens")
        .expect("row");
    assert_eq!(num(row, "bytes"), pb);
}

#[test]
fn bad_link_is_a_usage_error() {
    wirelens()
        .args([
            "compare",
            "--quick",
            &sample("risk-batch.json"),
            "--link",
            "wifi=fast",
        ])
        .assert()
        .code(2);
}

#[test]
fn missing_input_fails_with_its_name() {
    wirelens()
        .args(["compare", "--quick", "no-such-file.json"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no-such-file.json"));
}
