//! The profiler's CSV files, written with the csv crate.
//!
//! **Timings** ([`timings_csv`]): one row per file × format × library. Columns, in order:
//!
//! | column | meaning |
//! | --- | --- |
//! | `file` | the input as given |
//! | `format` | `json`, `msgpack`, `cbor`, `protobuf` |
//! | `library` | `serde_json`, `sonic-rs`, `rmp-serde`, `rmpv`, `ciborium`, `cbor4ii`, `prost-reflect`, `apache-avro`, `wirelens`; in other runtimes as their users name them (`orjson`, `@msgpack/msgpack`) |
//! | `schema_source` | `given`, `inferred` (protobuf), `none` |
//! | `bytes` | size of this library's own encoding |
//! | `gzip_bytes`, `zstd_bytes`, `brotli_bytes` | wirelens' encoding of the format compressed (gzip 6, zstd 3, brotli 6) |
//! | `ratio_to_json` | `bytes` / wirelens' JSON size |
//! | `encode_median_us` … | per operation (`encode_`, `decode_`): `median_us`, `mean_us`, `p5_us`, `p95_us`, `ci_low_us`, `ci_high_us` (95% bootstrap CI of the median), `mad_us` (scaled MAD), `cv`, `samples`, `batch`, `mb_s` (own bytes per second, 10^6), `json_mb_s` (JSON-equivalent bytes per second), `allocs_per_op`, `alloc_bytes_per_op` (empty: not counted), `concurrent` (true: other jobs ran meanwhile), `min_us`, `cpu_us` (the measuring thread's CPU time per operation, beside the wall-time median), `p99_us`, `p999_us` (tail latency of calls timed one by one; empty with fewer than 100 or 1,000 calls), `latency_calls` (how many), `ops_s` (operations per second on one thread, from the median), `all_cores_threads`, `all_cores_ops_s`, `all_cores_mb_s`, `all_cores_cpu_us` (every core calling at once, each thread with its own copy of the input: threads, operations and own bytes per second of all together, CPU time per call; empty where not measured) |
//! | `fidelity_notes` | notes wirelens' encoding raised (what the format could not say) |
//! | `e2e_<link>_ms`, `e2e_<link>_gzip_ms` | encode + transfer + decode estimate per link, without and with gzip |
//! | `error` | why a timing is missing |
//! | `runtime` | `rust`, or `python` / `node` for the rows `compare --runtime` adds (the library's own bytes and timings; no allocations or transfer estimates) |
//! | `library_version` | the library's version as the runtime reported it (empty for Rust rows) |
//!
//! Empty cells mean "not measured". **Fields** ([`fields_csv`]): one row per file × format ×
//! path pattern: `file, format, path, nodes, key_bytes, header_bytes, value_bytes,
//! structure_bytes, total_bytes, share` (share of the format's bytes, 0–1). Per file and format
//! the `total_bytes` sum to the encoded size exactly.

use crate::profile::bench::Measurement;
use crate::profile::report::{Report, TimingRow};

/// The operation columns, repeated for `encode_` and `decode_`.
pub const OP_COLUMNS: [&str; 25] = [
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
];

/// The header of the timings CSV for these link names.
pub fn timings_header(links: &[String]) -> Vec<String> {
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
    .iter()
    .map(|s| s.to_string())
    .collect();
    for op in ["encode", "decode"] {
        h.extend(OP_COLUMNS.iter().map(|c| format!("{op}_{c}")));
    }
    h.push("fidelity_notes".into());
    for l in links {
        h.push(format!("e2e_{l}_ms"));
        h.push(format!("e2e_{l}_gzip_ms"));
    }
    h.push("error".into());
    h.push("runtime".into());
    h.push("library_version".into());
    h
}

/// The header of the fields CSV.
pub const FIELDS_HEADER: [&str; 10] = [
    "file",
    "format",
    "path",
    "nodes",
    "key_bytes",
    "header_bytes",
    "value_bytes",
    "structure_bytes",
    "total_bytes",
    "share",
];

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn op_cells(m: Option<&Measurement>, bytes: usize, json_bytes: usize) -> Vec<String> {
    let Some(m) = m else {
        return vec![String::new(); OP_COLUMNS.len()];
    };
    let us = |ns: f64| format!("{:.4}", ns / 1e3);
    let rate = |b: usize| {
        if m.ns.median > 0.0 {
            format!("{:.2}", b as f64 / (m.ns.median / 1e9) / 1e6)
        } else {
            String::new()
        }
    };
    vec![
        us(m.ns.median),
        us(m.ns.mean),
        us(m.ns.p5),
        us(m.ns.p95),
        us(m.ns.ci_low),
        us(m.ns.ci_high),
        us(m.ns.mad),
        format!("{:.4}", m.ns.cv),
        m.ns.n.to_string(),
        m.batch.to_string(),
        rate(bytes),
        rate(json_bytes),
        opt(m.allocs_per_op.map(|a| format!("{a:.2}"))),
        opt(m.alloc_bytes_per_op.map(|a| format!("{a:.1}"))),
        m.concurrent.to_string(),
        us(m.ns.min),
        opt(m.cpu_ns_per_op.map(us)),
        opt(m.latency.and_then(|l| l.p99).map(us)),
        opt(m.latency.and_then(|l| l.p999).map(us)),
        opt(m.latency.map(|l| l.n)),
        opt((m.ns.median > 0.0).then(|| format!("{:.1}", 1e9 / m.ns.median))),
        opt(m.all_cores.map(|a| a.threads)),
        opt(m.all_cores.map(|a| format!("{:.1}", a.ops_per_s))),
        opt(m
            .all_cores
            .map(|a| format!("{:.2}", a.ops_per_s * bytes as f64 / 1e6))),
        opt(m.all_cores.and_then(|a| a.cpu_ns_per_op).map(us)),
    ]
}

/// The `bytes` cell: the library's bytes, or empty when it measured nothing and so wrote
/// nothing (a library that is not installed): 0 would be a size it never wrote. A measured 0
/// (an empty protobuf message) stays 0.
fn bytes_cell(bytes: usize, measured: bool) -> String {
    if bytes == 0 && !measured {
        String::new()
    } else {
        bytes.to_string()
    }
}

fn timing_record(report: &Report, file: &super::FileReport, row: &TimingRow) -> Vec<String> {
    let f = file.format(row.format);
    let sizes = f.map(|f| f.sizes.sizes);
    let mut r = vec![
        file.name.clone(),
        row.format.name().to_string(),
        row.library.name().to_string(),
        row.schema.name().to_string(),
        bytes_cell(row.bytes, row.encode.is_some() || row.decode.is_some()),
        opt(sizes.and_then(|s| s.gzip)),
        opt(sizes.and_then(|s| s.zstd)),
        opt(sizes.and_then(|s| s.brotli)),
        if file.json_bytes > 0 && row.bytes > 0 {
            format!("{:.4}", row.bytes as f64 / file.json_bytes as f64)
        } else {
            String::new()
        },
    ];
    r.extend(op_cells(row.encode.as_ref(), row.bytes, file.json_bytes));
    r.extend(op_cells(row.decode.as_ref(), row.bytes, file.json_bytes));
    r.push(opt(f.map(|f| f.sizes.notes)));
    for link in &report.links {
        for compressed in [false, true] {
            let t = file.transfer.iter().find(|t| {
                t.format == row.format
                    && t.library == row.library
                    && t.link == link.name
                    && t.compressed == compressed
            });
            r.push(opt(t.map(|t| format!("{:.4}", t.total() * 1e3))));
        }
    }
    r.push(row.error.clone().unwrap_or_default());
    r.push("rust".into());
    r.push(String::new());
    r
}

/// A row of another runtime ([`crate::profile::runtimes`]): the same columns, with the
/// library's own bytes and version; no allocations, notes or transfer estimates.
fn runtime_record(
    report: &Report,
    file: &super::FileReport,
    runtime: &crate::profile::runtimes::RuntimeReport,
    row: &crate::profile::runtimes::RuntimeRow,
) -> Vec<String> {
    let f = file.format(row.format);
    let sizes = f.map(|f| f.sizes.sizes);
    let mut r = vec![
        file.name.clone(),
        row.format.name().to_string(),
        row.library.clone(),
        f.map(|f| f.sizes.schema.name().to_string())
            .unwrap_or_default(),
        bytes_cell(row.bytes, row.encode.is_some() || row.decode.is_some()),
        opt(sizes.and_then(|s| s.gzip)),
        opt(sizes.and_then(|s| s.zstd)),
        opt(sizes.and_then(|s| s.brotli)),
        if file.json_bytes > 0 && row.bytes > 0 {
            format!("{:.4}", row.bytes as f64 / file.json_bytes as f64)
        } else {
            String::new()
        },
    ];
    r.extend(op_cells(row.encode.as_ref(), row.bytes, file.json_bytes));
    r.extend(op_cells(row.decode.as_ref(), row.bytes, file.json_bytes));
    r.push(String::new());
    for _ in &report.links {
        r.push(String::new());
        r.push(String::new());
    }
    r.push(row.error.clone().unwrap_or_default());
    r.push(runtime.runtime.name().to_string());
    r.push(row.version.clone().unwrap_or_default());
    r
}

/// The timings CSV (see the module docs).
pub fn timings_csv(report: &Report) -> Result<Vec<u8>, csv::Error> {
    let links: Vec<String> = report.links.iter().map(|l| l.name.clone()).collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(timings_header(&links))?;
    for file in &report.files {
        for row in &file.timings {
            w.write_record(timing_record(report, file, row))?;
        }
        for runtime in &file.runtimes {
            for row in &runtime.rows {
                w.write_record(runtime_record(report, file, runtime, row))?;
            }
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// The fields CSV (see the module docs).
pub fn fields_csv(report: &Report) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(FIELDS_HEADER)?;
    for file in &report.files {
        for f in &file.formats {
            let total = f.fields.total;
            for c in &f.fields.fields {
                w.write_record([
                    file.name.clone(),
                    f.sizes.format.name().to_string(),
                    c.pattern.clone(),
                    c.nodes.to_string(),
                    c.key.to_string(),
                    c.header.to_string(),
                    c.value.to_string(),
                    c.structure.to_string(),
                    c.total().to_string(),
                    if total > 0 {
                        format!("{:.6}", c.total() as f64 / total as f64)
                    } else {
                        String::new()
                    },
                ])?;
            }
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

#[cfg(test)]
mod tests {
    use super::bytes_cell;

    #[test]
    fn a_library_that_measured_nothing_has_no_size() {
        // ujson or a Node library that is not installed: no bytes were written, so no number.
        assert_eq!(bytes_cell(0, false), "");
        // A measured empty protobuf message is 0 bytes, and says so.
        assert_eq!(bytes_cell(0, true), "0");
        assert_eq!(bytes_cell(98, true), "98");
        assert_eq!(bytes_cell(98, false), "98");
    }
}
