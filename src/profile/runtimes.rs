//! Timings in the user's own runtime: Python and Node libraries timed on the same payload bytes
//! as the Rust rows, beside them.
//!
//! Why: the people deciding between JSON, MessagePack, CBOR and Protobuf mostly run Python or
//! Node services, where `orjson` against `json`, or `protobuf` (upb) against `msgpack`, rank
//! differently from serde_json against rmp-serde. A profiler that times only Rust answers a
//! question they did not ask.
//!
//! How: a small harness script per runtime (`scripts/runtimes/harness.py` and `harness.cjs`,
//! carried in the binary with `include_str!`) is written to a temporary folder with the payload
//! in every format (wirelens' default encodings, for protobuf a descriptor set of the message
//! type used, given or inferred, and for Avro the schema its bytes were written with, as
//! `payload.avsc`) and a job file, and run as a child process: `python3` (or
//! `$WIRELENS_PYTHON`) and `node` (or `$WIRELENS_NODE`). It checks each library's round trip,
//! times encode and decode with the runtime's monotonic clock in batches, and streams raw samples
//! back as JSON lines ([`parse_lines`] reads them); wirelens computes the same statistics as for
//! Rust ([`super::stats::summarize`]). A runtime that is not installed, a library that is not
//! installed (with the command that installs it), a harness that fails or outlives its timeout
//! (killed, with its stderr) are reported as such: never a made-up number, never a hung profiler.
//!
//! What it does not do: count allocations (`allocs_per_op` is `None`), run while the Rust jobs
//! run (the CLI runs the harnesses after them, so they do not share the cores), or time in
//! turns.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::bench::{AllCores, BenchConfig, Latency, Measurement, SpreadRun};
use super::stats::summarize;
use crate::codec::Format;

/// The Python harness, as shipped in `scripts/runtimes/harness.py`.
pub const PYTHON_HARNESS: &str = include_str!("../../scripts/runtimes/harness.py");
/// The Node harness, as shipped in `scripts/runtimes/harness.cjs`.
pub const NODE_HARNESS: &str = include_str!("../../scripts/runtimes/harness.cjs");

/// A runtime whose libraries can be timed beside Rust's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Runtime {
    /// CPython (or whatever `python3` is): json, orjson, ujson, pydantic, msgpack, ormsgpack,
    /// cbor2, protobuf, fastavro, avro.
    Python,
    /// Node.js: JSON, @msgpack/msgpack, msgpackr, cbor-x, protobufjs, avsc.
    Node,
}

impl Runtime {
    /// Every runtime, in report order.
    pub const ALL: [Runtime; 2] = [Runtime::Python, Runtime::Node];

    /// `python` or `node`.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Python => "python",
            Runtime::Node => "node",
        }
    }

    /// `Python` or `Node`.
    pub fn title(self) -> &'static str {
        match self {
            Runtime::Python => "Python",
            Runtime::Node => "Node",
        }
    }

    /// Reads `python` or `node`.
    pub fn parse(s: &str) -> Option<Runtime> {
        Runtime::ALL.into_iter().find(|r| r.name() == s)
    }

    /// The environment variable that names the interpreter, and the program run without it.
    pub fn program(self) -> (&'static str, &'static str) {
        match self {
            Runtime::Python => ("WIRELENS_PYTHON", "python3"),
            Runtime::Node => ("WIRELENS_NODE", "node"),
        }
    }

    fn harness(self) -> (&'static str, &'static str) {
        match self {
            Runtime::Python => ("harness.py", PYTHON_HARNESS),
            Runtime::Node => ("harness.cjs", NODE_HARNESS),
        }
    }
}

/// What one runtime measured on one payload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeReport {
    /// Which runtime.
    pub runtime: Runtime,
    /// The interpreter run (`python3`, or `$WIRELENS_PYTHON`).
    pub program: String,
    /// Its version (`3.11.7`), once the harness said it.
    pub version: Option<String>,
    /// Its implementation (`CPython`, `V8 11.3…`).
    pub implementation: Option<String>,
    /// One row per library the harness knows, measured or not.
    pub rows: Vec<RuntimeRow>,
    /// The runtime's own compressors on each format's bytes (only for the whole payload's run),
    /// measured or not.
    pub compressors: Vec<RuntimeCompressor>,
    /// Why the runtime gave no (or not every) result: not installed, crashed, timed out (with
    /// the end of its stderr).
    pub error: Option<String>,
}

/// One library of a runtime.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeRow {
    /// The format.
    #[serde(serialize_with = "super::ser_format")]
    pub format: Format,
    /// The library, as the runtime's users name it (`orjson`, `@msgpack/msgpack`).
    pub library: String,
    /// Its version as installed (`None` when not installed).
    pub version: Option<String>,
    /// Bytes of the library's own encoding of the payload (0 when not measured).
    pub bytes: usize,
    /// Whether those bytes are wirelens' default encoding of the format, byte for byte.
    pub same_bytes_as_wirelens: Option<bool>,
    /// Encode timing.
    pub encode: Option<Measurement>,
    /// Decode timing (of the library's own bytes).
    pub decode: Option<Measurement>,
    /// Not installed: the command that installs it (`pip install orjson`).
    pub install: Option<String>,
    /// Why a timing is missing.
    pub error: Option<String>,
}

/// A compression codec the wire estimate can send the bytes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Codec {
    /// gzip (deflate), level 6.
    Gzip,
    /// zstd, level 3.
    Zstd,
    /// brotli, quality 6, 4 MiB window.
    Brotli,
}

impl Codec {
    /// Every codec, in report order.
    pub const ALL: [Codec; 3] = [Codec::Gzip, Codec::Zstd, Codec::Brotli];

    /// `gzip`, `zstd`, `brotli`.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
            Codec::Brotli => "brotli",
        }
    }

    /// Reads `gzip`, `zstd` or `brotli`.
    pub fn parse(s: &str) -> Option<Codec> {
        Codec::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// One of a runtime's compressors on one format's bytes (wirelens' default encoding).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuntimeCompressor {
    /// The format whose bytes were compressed.
    #[serde(serialize_with = "super::ser_format")]
    pub format: Format,
    /// The codec.
    pub codec: Codec,
    /// The library, as the runtime's users name it (`gzip`, `zstandard`, `zlib`).
    pub library: String,
    /// Its version (`None` when not there).
    pub version: Option<String>,
    /// The compressed size (0 when not measured).
    pub bytes: usize,
    /// Compress timing.
    pub compress: Option<Measurement>,
    /// Decompress timing.
    pub decompress: Option<Measurement>,
    /// Not installed: the command that installs it.
    pub install: Option<String>,
    /// Why it is not measured (not installed, not in this version, failed).
    pub error: Option<String>,
}

impl RuntimeReport {
    /// The runtime's own `codec` on `format`'s bytes, when both timings are there.
    pub fn compressor(&self, format: Format, codec: Codec) -> Option<&RuntimeCompressor> {
        self.compressors.iter().find(|c| {
            c.format == format && c.codec == codec && c.compress.is_some() && c.decompress.is_some()
        })
    }
}

/// One line of the harness protocol.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum Line {
    /// The runtime itself.
    Runtime {
        /// Its version.
        version: String,
        /// `CPython`, `V8 …`.
        #[serde(default)]
        implementation: Option<String>,
    },
    /// A library: found and checked, missing, or failed.
    Library {
        /// `json`, `msgpack`, `cbor` or `protobuf`.
        format: String,
        /// The library's name.
        library: String,
        /// `ok`, `missing` or `failed`.
        status: String,
        /// Its version.
        #[serde(default)]
        version: Option<String>,
        /// Size of its own encoding (`ok`).
        #[serde(default)]
        bytes: Option<usize>,
        /// SHA-256 of its own encoding, hex (`ok`).
        #[serde(default)]
        sha256: Option<String>,
        /// How to install it (`missing`).
        #[serde(default)]
        install: Option<String>,
        /// What went wrong (`missing`, `failed`).
        #[serde(default)]
        message: Option<String>,
    },
    /// A compressor on one format's bytes: found and checked, missing, or failed.
    Compressor {
        /// The format.
        format: String,
        /// `gzip`, `zstd` or `brotli`.
        codec: String,
        /// The library's name.
        library: String,
        /// `ok`, `missing` or `failed`.
        status: String,
        /// Its version.
        #[serde(default)]
        version: Option<String>,
        /// The compressed size (`ok`).
        #[serde(default)]
        bytes: Option<usize>,
        /// How to install it (`missing`).
        #[serde(default)]
        install: Option<String>,
        /// What went wrong (`missing`, `failed`).
        #[serde(default)]
        message: Option<String>,
    },
    /// Raw samples of one operation: each the total of `batch` calls, in nanoseconds. For a
    /// compressor, `library` is its codec and `op` is `compress` or `decompress`.
    Samples {
        /// The format.
        format: String,
        /// The library.
        library: String,
        /// `encode` or `decode`.
        op: String,
        /// Calls per sample.
        batch: u64,
        /// Per-sample totals (ns).
        ns: Vec<f64>,
        /// CPU time over the samples (ns): Python's thread clock, Node's process clock; absent
        /// from harnesses that do not read one.
        #[serde(default)]
        cpu_ns: Option<f64>,
        /// Single calls timed one by one (ns), for the tail latency.
        #[serde(default)]
        calls: Vec<f64>,
        /// With `settings.all_cores`: what each worker (a process of its own in Python, a
        /// worker thread in Node) did calling the operation at once with the others.
        #[serde(default)]
        spread: Vec<SpreadLine>,
    },
    /// The harness finished.
    Done {},
}

/// One worker of a harness's every-core measurement: its calls, its span (ns) and the CPU time
/// it used over it (ns; its own clock), from the start all workers share.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct SpreadLine {
    /// Calls made.
    pub calls: u64,
    /// Its span, ns.
    pub ns: f64,
    /// CPU time over the span, ns.
    #[serde(default)]
    pub cpu_ns: Option<f64>,
}

/// The payload as the harness gets it: each format's bytes (wirelens' default encodings), for
/// protobuf the message type's descriptor set and full name, and for Avro the schema.
#[derive(Debug, Clone, Default)]
pub struct Payload {
    /// Per format: the bytes.
    pub files: Vec<(Format, Vec<u8>)>,
    /// A `FileDescriptorSet` holding the protobuf message type.
    pub descriptor_set: Option<Vec<u8>>,
    /// The message type's full name.
    pub message: Option<String>,
    /// The text of the Avro schema (`.avsc` JSON) the Avro bytes were written with.
    pub avro_schema: Option<String>,
    /// Whether the harness also times its runtime's compressors on each format's bytes (the
    /// wire estimate's; at wirelens' levels).
    pub compressors: bool,
}

/// Reads the harness's output into `report`: one row per library line, timings from the sample
/// lines (summarised as the Rust rows are, `resamples` bootstrap resamples), checked against
/// `wirelens` (each format's default bytes) for "same bytes". A line that is not the protocol
/// is an error naming the line; what came before it is kept. Returns whether `done` was read.
pub fn parse_lines(
    text: &str,
    report: &mut RuntimeReport,
    wirelens: &[(Format, Vec<u8>)],
    resamples: usize,
) -> Result<bool, HarnessOutputError> {
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(report.runtime, n, line)? {
            Line::Runtime {
                version,
                implementation,
            } => {
                report.version = Some(version);
                report.implementation = implementation;
            }
            Line::Library {
                format,
                library,
                status,
                version,
                bytes,
                sha256,
                install,
                message,
            } => {
                let format = parse_format(&format, n)?;
                let same = same_bytes(wirelens, format, sha256.as_deref(), status == "ok");
                let (error, install) = library_status(&status, &library, install, message);
                report.rows.push(RuntimeRow {
                    format,
                    library,
                    version,
                    bytes: bytes.unwrap_or(0),
                    same_bytes_as_wirelens: same,
                    encode: None,
                    decode: None,
                    install,
                    error,
                });
            }
            Line::Compressor {
                format,
                codec,
                library,
                status,
                version,
                bytes,
                install,
                message,
            } => {
                let format = parse_format(&format, n)?;
                let codec =
                    Codec::parse(&codec).ok_or_else(|| HarnessOutputError::UnknownCodec {
                        line: n + 1,
                        name: codec.clone(),
                    })?;
                let error = compressor_status(&status, &library, install.as_ref(), message);
                report.compressors.push(RuntimeCompressor {
                    format,
                    codec,
                    library,
                    version,
                    bytes: bytes.unwrap_or(0),
                    compress: None,
                    decompress: None,
                    install,
                    error,
                });
            }
            Line::Samples {
                format,
                library,
                op,
                batch,
                ns,
                cpu_ns,
                calls,
                spread,
            } => {
                let samples = Samples {
                    format: parse_format(&format, n)?,
                    library,
                    op,
                    batch,
                    ns,
                    cpu_ns,
                    calls,
                    spread,
                };
                samples.add_to(report, n, resamples)?;
            }
            Line::Done {} => return Ok(true),
        }
    }
    Ok(false)
}

/// Why [`parse_lines`] stopped: a line of the harness's output that is not the protocol, or
/// that names what it does not know. Each names the line (from 1).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessOutputError {
    /// A line that is not one of the protocol's JSON objects (a traceback, a stray print).
    #[error("{} harness, line {line}: {source}: {text}", .runtime.name())]
    NotTheProtocol {
        /// The runtime whose harness wrote it.
        runtime: Runtime,
        /// The line's number.
        line: usize,
        /// Why it is not a protocol line.
        source: serde_json::Error,
        /// Its first 120 characters.
        text: String,
    },
    /// A format wirelens does not have.
    #[error("line {line}: unknown format {name:?}")]
    UnknownFormat {
        /// The line's number.
        line: usize,
        /// The format as the line names it.
        name: String,
    },
    /// A compressor wirelens does not have.
    #[error("line {line}: unknown codec {name:?}")]
    UnknownCodec {
        /// The line's number.
        line: usize,
        /// The codec as the line names it.
        name: String,
    },
    /// Samples of a compressor no earlier line announced.
    #[error("line {line}: samples of the {codec} compressor before it")]
    CompressorNotAnnounced {
        /// The line's number.
        line: usize,
        /// The compressor's codec.
        codec: String,
    },
    /// Samples of a library no earlier line announced.
    #[error("line {line}: samples of {library} before it")]
    LibraryNotAnnounced {
        /// The line's number.
        line: usize,
        /// The library.
        library: String,
    },
    /// Samples of an operation other than encode, decode, compress and decompress.
    #[error("line {line}: unknown op {op:?}")]
    UnknownOp {
        /// The line's number.
        line: usize,
        /// The operation as the line names it.
        op: String,
    },
}

/// Line `n` (from 0) of `runtime`'s harness output, read; the error names the line.
fn parse_line(runtime: Runtime, n: usize, line: &str) -> Result<Line, HarnessOutputError> {
    serde_json::from_str(line).map_err(|source| HarnessOutputError::NotTheProtocol {
        runtime,
        line: n + 1,
        source,
        text: line.chars().take(120).collect(),
    })
}

/// Whether a library's own encoding of `format` (its SHA-256 in hex, `sha256`) is wirelens'
/// bytes: only known when the library is `ok` and both hashes are at hand.
fn same_bytes(
    wirelens: &[(Format, Vec<u8>)],
    format: Format,
    sha256: Option<&str>,
    ok: bool,
) -> Option<bool> {
    use sha2::{Digest, Sha256};
    let ours = wirelens
        .iter()
        .find(|(f, _)| *f == format)
        .map(|(_, b)| format!("{:x}", Sha256::digest(b)));
    match (sha256, ours) {
        (Some(theirs), Some(ours)) if ok => Some(theirs == ours),
        _ => None,
    }
}

/// A library line's error and install hint: none when it is `ok`; not installed (with how to
/// install it); or failed, with the harness's message.
fn library_status(
    status: &str,
    library: &str,
    install: Option<String>,
    message: Option<String>,
) -> (Option<String>, Option<String>) {
    match status {
        "ok" => (None, None),
        "missing" => (
            Some(format!(
                "{library} not installed{}",
                install
                    .as_ref()
                    .map(|i| format!(" — `{i}`"))
                    .unwrap_or_default()
            )),
            install,
        ),
        _ => (
            Some(message.unwrap_or_else(|| format!("{library} failed"))),
            None,
        ),
    }
}

/// A compressor line's error: none when it is `ok`; not installed (with how to install it, or
/// the harness's message); or failed, with the harness's message.
fn compressor_status(
    status: &str,
    library: &str,
    install: Option<&String>,
    message: Option<String>,
) -> Option<String> {
    match status {
        "ok" => None,
        "missing" => Some(match (install, &message) {
            (Some(i), _) => format!("{library} not installed — `{i}`"),
            (None, Some(m)) => m.clone(),
            (None, None) => format!("{library} not installed"),
        }),
        _ => Some(message.unwrap_or_else(|| format!("{library} failed"))),
    }
}

/// The raw samples of one operation, from a harness's `samples` line.
struct Samples {
    format: Format,
    /// The library (a compressor's codec).
    library: String,
    /// `encode`, `decode`, `compress` or `decompress`.
    op: String,
    /// Calls per sample.
    batch: u64,
    /// Per-sample totals (ns).
    ns: Vec<f64>,
    /// CPU time over the samples (ns).
    cpu_ns: Option<f64>,
    /// Single calls timed one by one (ns).
    calls: Vec<f64>,
    /// Each worker's share of the every-core measurement.
    spread: Vec<SpreadLine>,
}

impl Samples {
    /// Summarises the samples of line `n` (from 0) into the row or compressor they time in
    /// `report`, which must have come before them.
    fn add_to(
        self,
        report: &mut RuntimeReport,
        n: usize,
        resamples: usize,
    ) -> Result<(), HarnessOutputError> {
        let Samples {
            format,
            library,
            op,
            batch,
            ns,
            cpu_ns,
            calls,
            spread,
        } = self;
        // Every worker must have called and timed something, or there is no figure.
        let runs: Option<Vec<SpreadRun>> = spread
            .iter()
            .map(|w| {
                (w.calls > 0 && w.ns.is_finite() && w.ns > 0.0).then(|| SpreadRun {
                    calls: w.calls,
                    seconds: w.ns / 1e9,
                    cpu_ns: w
                        .cpu_ns
                        .filter(|c| c.is_finite() && *c >= 0.0)
                        .map(|c| c as u128),
                })
            })
            .collect();
        let all_cores = runs.filter(|r| r.len() >= 2).and_then(|r| AllCores::of(&r));
        let batch = batch.max(1);
        let per_op: Vec<f64> = ns.iter().map(|t| t / batch as f64).collect();
        let calls_timed = batch * ns.len() as u64;
        let summary = |per_op: &[f64]| {
            summarize(per_op, resamples, n as u64 + 1).map(|ns| Measurement {
                iterations: batch * ns.n as u64,
                ns,
                batch,
                allocs_per_op: None,
                alloc_bytes_per_op: None,
                concurrent: false,
                probes: Vec::new(),
                cpu_ns_per_op: cpu_ns
                    .filter(|c| c.is_finite() && *c >= 0.0 && calls_timed > 0)
                    .map(|c| c / calls_timed as f64),
                latency: Latency::of(&calls),
                all_cores,
            })
        };
        if op == "compress" || op == "decompress" {
            let c = report
                .compressors
                .iter_mut()
                .find(|c| c.format == format && c.codec.name() == library)
                .ok_or_else(|| HarnessOutputError::CompressorNotAnnounced {
                    line: n + 1,
                    codec: library.clone(),
                })?;
            if op == "compress" {
                c.compress = summary(&per_op);
            } else {
                c.decompress = summary(&per_op);
            }
            return Ok(());
        }
        let row = report
            .rows
            .iter_mut()
            .find(|r| r.format == format && r.library == library)
            .ok_or_else(|| HarnessOutputError::LibraryNotAnnounced {
                line: n + 1,
                library: library.clone(),
            })?;
        let measurement = summary(&per_op);
        match op.as_str() {
            "encode" => row.encode = measurement,
            "decode" => row.decode = measurement,
            other => {
                return Err(HarnessOutputError::UnknownOp {
                    line: n + 1,
                    op: other.to_string(),
                })
            }
        }
        Ok(())
    }
}

/// The format named `name` on line `line` (from 0) of a harness's output.
fn parse_format(name: &str, line: usize) -> Result<Format, HarnessOutputError> {
    Format::ALL
        .into_iter()
        .find(|f| f.name() == name)
        .ok_or_else(|| HarnessOutputError::UnknownFormat {
            line: line + 1,
            name: name.to_string(),
        })
}

/// The job file the harness reads: payload files, descriptor set, Avro schema, sampling
/// settings.
fn job_json(
    files: &[(Format, PathBuf)],
    payload: &Payload,
    dir: &Path,
    bench: &BenchConfig,
) -> serde_json::Value {
    let ns = |d: Duration| d.as_nanos() as u64;
    let mut map = serde_json::Map::new();
    for (format, path) in files {
        map.insert(format.name().into(), path.display().to_string().into());
    }
    serde_json::json!({
        "files": map,
        "descriptor_set": payload.descriptor_set.as_ref().map(|_| dir.join("schema.pb").display().to_string()),
        "message": payload.message,
        "avro_schema": payload.avro_schema.as_ref().map(|_| dir.join("payload.avsc").display().to_string()),
        "compressors": payload.compressors,
        "levels": {
            "gzip": super::sizes::GZIP_LEVEL,
            "zstd": super::sizes::ZSTD_LEVEL,
            "brotli": super::sizes::BROTLI_QUALITY,
            "brotli_window": super::sizes::BROTLI_WINDOW,
        },
        "settings": {
            "warm_up_ns": ns(bench.warm_up),
            "sample_ns": ns(bench.sample_time),
            "min_samples": bench.min_samples,
            "max_samples": bench.max_samples,
            "measurement_ns": ns(bench.measurement_time),
            "slow_ns": ns(bench.slow_threshold),
            "slow_samples": bench.slow_samples,
            "latency_ns": ns(bench.latency_time),
            "latency_calls": bench.latency_calls,
            "all_cores": {
                "workers": bench.all_cores_threads(),
                "span_ns": ns(bench.all_cores_time),
            },
        }
    })
}

impl Runtime {
    /// The interpreter run when the user named none: `$WIRELENS_PYTHON` or `python3`,
    /// `$WIRELENS_NODE` or `node`.
    pub fn default_program(self) -> String {
        let (var, default) = self.program();
        std::env::var(var).unwrap_or_else(|_| default.to_string())
    }
}

/// How long [`probe`] waits for an interpreter at most: an interpreter that does not answer a
/// version and an import of each library in this long is reported as not answering.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Asks `program` (`runtime`'s interpreter) what it is and which of the libraries the harness
/// times are installed, without timing anything (`harness --probe`). The report's rows have
/// versions, or the command that installs what is missing; `error` says why there is no answer
/// (not installed, crashed, no answer within `timeout`: killed). Quick: one interpreter start and
/// an import per library.
pub fn probe(runtime: Runtime, program: &str, timeout: Duration) -> RuntimeReport {
    let mut report = empty_report(runtime, program);
    let never = AtomicBool::new(false);
    let result = (|| {
        let dir = temp_dir()?;
        let (script_name, script) = runtime.harness();
        let script = write_in(dir.path(), script_name, script.as_bytes())?;
        let probe = std::ffi::OsString::from("--probe");
        let child = Child {
            runtime,
            task: "probe",
            program,
            timeout,
            cancel: &never,
        };
        run_child(
            &child,
            &[script.as_os_str(), &probe],
            &|_| {},
            &[],
            0,
            &mut report,
        )
    })();
    if let Err(e) = result {
        report.error = Some(e);
    }
    report
}

/// Whether `report` (of [`probe`]) found a working interpreter.
pub fn answered(report: &RuntimeReport) -> bool {
    report.version.is_some() && report.error.is_none()
}

/// Probes each of `programs` (a runtime and its interpreter) at once, each within `timeout`:
/// the runtimes that answered (with their interpreters, in the order given), and for each of
/// the others a report without rows whose `error` says why, followed by `hint` (what the user
/// can do about it, e.g. "untick it in Profile ▸ Runtimes"). Nothing here is fatal: a missing
/// runtime is listed, not timed.
pub fn probe_installed(
    programs: &[(Runtime, String)],
    timeout: Duration,
    hint: &dyn Fn(Runtime) -> String,
) -> (Vec<(Runtime, String)>, Vec<RuntimeReport>) {
    let probes: Vec<RuntimeReport> = std::thread::scope(|s| {
        let handles: Vec<_> = programs
            .iter()
            .map(|(r, p)| s.spawn(move || probe(*r, p, timeout)))
            .collect();
        handles
            .into_iter()
            .zip(programs)
            .map(|(h, (r, p))| {
                h.join().unwrap_or_else(|_| RuntimeReport {
                    error: Some("the probe failed".into()),
                    ..empty_report(*r, p)
                })
            })
            .collect()
    });
    let mut found = Vec::new();
    let mut absent = Vec::new();
    for mut p in probes {
        if answered(&p) {
            found.push((p.runtime, p.program.clone()));
        } else {
            p.rows.clear();
            let why = p.error.take().unwrap_or_else(|| "no answer".into());
            p.error = Some(format!("{why}; not timed ({})", hint(p.runtime)));
            p.version = None;
            absent.push(p);
        }
    }
    (found, absent)
}

fn empty_report(runtime: Runtime, program: &str) -> RuntimeReport {
    RuntimeReport {
        runtime,
        program: program.to_string(),
        version: None,
        implementation: None,
        rows: Vec::new(),
        compressors: Vec::new(),
        error: None,
    }
}

/// Runs `runtime`'s harness on `payload` and reads what it measured. The harness is killed
/// when `timeout` passes or `cancel` is raised; whatever it had streamed is kept. The
/// interpreter is [`Runtime::default_program`].
pub fn measure(
    runtime: Runtime,
    payload: &Payload,
    bench: &BenchConfig,
    timeout: Duration,
    cancel: &AtomicBool,
) -> RuntimeReport {
    measure_with(
        runtime,
        &runtime.default_program(),
        payload,
        bench,
        timeout,
        cancel,
        &|_| {},
    )
}

/// [`measure`] with the interpreter `program`, telling `on_progress` what the harness has done
/// as it streams (`orjson: decode measured`), from another thread.
pub fn measure_with(
    runtime: Runtime,
    program: &str,
    payload: &Payload,
    bench: &BenchConfig,
    timeout: Duration,
    cancel: &AtomicBool,
    on_progress: &(dyn Fn(&str) + Sync),
) -> RuntimeReport {
    let mut report = empty_report(runtime, program);
    let child = Child {
        runtime,
        task: "harness",
        program,
        timeout,
        cancel,
    };
    if let Err(e) = run_harness_with(&child, payload, bench, on_progress, &mut report) {
        report.error = Some(e);
    }
    report
}

/// What one line of the harness says it did, for a progress label (`None`: nothing to say).
pub fn progress_of(line: &str) -> Option<String> {
    match serde_json::from_str::<Line>(line).ok()? {
        Line::Runtime { version, .. } => Some(format!("started (version {version})")),
        Line::Library {
            library, status, ..
        } => Some(match status.as_str() {
            "ok" => format!("{library}: round trip checked"),
            "missing" => format!("{library}: not installed"),
            _ => format!("{library}: failed"),
        }),
        Line::Compressor {
            format,
            codec,
            status,
            ..
        } => Some(match status.as_str() {
            "ok" => format!("{codec} on {format}: round trip checked"),
            "missing" => format!("{codec}: not there"),
            _ => format!("{codec} on {format}: failed"),
        }),
        Line::Samples { library, op, .. } => Some(format!("{library}: {op} measured")),
        Line::Done {} => Some("done".into()),
    }
}

fn temp_dir() -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix("wirelens-runtime-")
        .tempdir()
        .map_err(|e| format!("no temporary folder: {e}"))
}

fn write_in(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
fn run_harness(
    runtime: Runtime,
    program: &str,
    payload: &Payload,
    bench: &BenchConfig,
    timeout: Duration,
    cancel: &AtomicBool,
    report: &mut RuntimeReport,
) -> Result<(), String> {
    let child = Child {
        runtime,
        task: "harness",
        program,
        timeout,
        cancel,
    };
    run_harness_with(&child, payload, bench, &|_| {}, report)
}

/// Writes `payload`'s files, the harness script and its job into a temporary folder and runs
/// the harness there as `child` says.
fn run_harness_with(
    child: &Child<'_>,
    payload: &Payload,
    bench: &BenchConfig,
    on_progress: &(dyn Fn(&str) + Sync),
    report: &mut RuntimeReport,
) -> Result<(), String> {
    let dir = temp_dir()?;
    let write = |name: &str, bytes: &[u8]| write_in(dir.path(), name, bytes);
    let mut files = Vec::new();
    for (format, bytes) in &payload.files {
        files.push((
            *format,
            write(&format!("payload.{}", format.name()), bytes)?,
        ));
    }
    if let Some(set) = &payload.descriptor_set {
        write("schema.pb", set)?;
    }
    if let Some(schema) = &payload.avro_schema {
        write("payload.avsc", schema.as_bytes())?;
    }
    let (script_name, script) = child.runtime.harness();
    let script = write(script_name, script.as_bytes())?;
    let job = job_json(&files, payload, dir.path(), bench);
    let job = write("job.json", job.to_string().as_bytes())?;
    run_child(
        child,
        &[script.as_os_str(), job.as_os_str()],
        &|line| {
            if let Some(p) = progress_of(line) {
                on_progress(&p);
            }
        },
        &payload.files,
        bench.resamples,
        report,
    )
}

/// One run of a runtime's interpreter: which, what it does, and when it is stopped.
struct Child<'a> {
    runtime: Runtime,
    /// `harness` or `probe`, as messages name it.
    task: &'static str,
    /// The interpreter.
    program: &'a str,
    /// How long it may run before it is killed.
    timeout: Duration,
    /// Raised to kill it.
    cancel: &'a AtomicBool,
}

/// Runs `run`'s interpreter with `args`, reading its lines as they come (each told to
/// `on_line`), killing it when its timeout passes or its cancel flag is raised, and parses what
/// it wrote into `report` (against `wirelens`' own bytes, with `resamples` for the intervals).
fn run_child(
    run: &Child<'_>,
    args: &[&std::ffi::OsStr],
    on_line: &(dyn Fn(&str) + Sync),
    wirelens: &[(Format, Vec<u8>)],
    resamples: usize,
    report: &mut RuntimeReport,
) -> Result<(), String> {
    let Child {
        runtime,
        task,
        program,
        timeout,
        cancel,
    } = *run;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "{} not found: `{program}` is not on PATH (set {} to the interpreter to use)",
                runtime.title(),
                runtime.program().0
            ),
            _ => format!("cannot run `{program}`: {e}"),
        })?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (status, stopped, text, stderr) = std::thread::scope(|s| {
        let out = s.spawn(move || {
            let mut text = String::new();
            if let Some(o) = stdout {
                for line in BufReader::new(o).lines().map_while(Result::ok) {
                    on_line(&line);
                    text.push_str(&line);
                    text.push('\n');
                }
            }
            text
        });
        let err = s.spawn(move || {
            let mut text = String::new();
            if let Some(mut e) = stderr {
                let _ = e.read_to_string(&mut text);
            }
            text
        });
        let start = Instant::now();
        let (status, stopped) = loop {
            match child.try_wait() {
                Ok(Some(status)) => break (Some(status), None),
                Ok(None) => {}
                Err(e) => break (None, Some(format!("cannot wait for `{program}`: {e}"))),
            }
            let why = if cancel.load(Ordering::Relaxed) {
                Some("cancelled".to_string())
            } else if start.elapsed() >= timeout {
                Some(format!(
                    "the {} {task} did not finish in {} s and was stopped",
                    runtime.name(),
                    seconds(timeout)
                ))
            } else {
                None
            };
            if let Some(why) = why {
                let _ = child.kill();
                let _ = child.wait();
                break (None, Some(why));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        (
            status,
            stopped,
            out.join().unwrap_or_default(),
            err.join().unwrap_or_default(),
        )
    });
    let done = parse_lines(&text, report, wirelens, resamples);
    let tail = stderr_tail(&stderr);
    if let Some(why) = stopped {
        return Err(format!("{why}{tail}"));
    }
    match (done, status) {
        (Err(e), _) => Err(format!("{e}{tail}")),
        (Ok(true), Some(s)) if s.success() => Ok(()),
        (Ok(_), Some(s)) => Err(format!(
            "the {} {task} exited with {s} before it finished{tail}",
            runtime.name()
        )),
        (Ok(_), None) => Err(format!("the {} {task} stopped{tail}", runtime.name())),
    }
}

/// `300`, `0.3`: a timeout in seconds, as given.
fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        d.as_secs().to_string()
    } else {
        format!("{:.1}", d.as_secs_f64())
    }
}

/// The last lines of a harness's stderr, for an error message (`""` when it said nothing).
fn stderr_tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail = &lines[lines.len().saturating_sub(6)..];
    let mut s = String::from("; stderr: ");
    s.push_str(&tail.join(" | "));
    s
}

#[cfg(test)]
mod tests;
