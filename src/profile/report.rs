//! The [`Report`] value: everything `wirelens compare` measured, for the terminal table, the
//! CSV files, `--json` and the GUI.
//!
//! It is plain data filled by [`crate::profile::run`]; a cancelled run keeps whatever finished
//! (measurements that did not run are `None`).

use serde::Serialize;

use crate::codec::Format;
use crate::profile::bench::Measurement;
use crate::profile::cost::FieldCosts;
use crate::profile::libs::Library;
use crate::profile::runtimes::RuntimeReport;
use crate::profile::sizes::{FormatSizes, SchemaSource, VariantSizes};
use crate::profile::stats::Summary;
use crate::profile::sweep::{estimate, Costs, Link, RuntimeTransfer, Sweep, Transfer};

/// How timings were taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Few samples, a small sweep.
    Quick,
    /// The default: criterion-like sampling, jobs in parallel.
    Standard,
    /// Like standard, one timing job at a time; the jobs take turns so that each is sampled
    /// across the whole run (see [`crate::profile::turns`]).
    Precise,
}

impl Mode {
    /// `quick`, `standard` or `precise`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Quick => "quick",
            Mode::Standard => "standard",
            Mode::Precise => "precise",
        }
    }
}

/// Everything measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// How timings were taken.
    pub mode: Mode,
    /// Whether timing jobs ran in parallel.
    pub parallel: bool,
    /// Whether allocations were counted (the counting allocator is installed).
    pub allocations_counted: bool,
    /// The links of the transfer estimates.
    pub links: Vec<Link>,
    /// One entry per input.
    pub files: Vec<FileReport>,
    /// Whether the run was cancelled before every job finished.
    pub cancelled: bool,
    /// Precise (interleaved) mode: the cache probe's time at the start of every turn (ns; see
    /// [`crate::profile::turns::probe`]), so `median / min` and `max / min` say how much other
    /// programs slowed the shared cache during the run.
    pub probe: Option<Summary>,
}

/// What was measured on one input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileReport {
    /// The input's name as given.
    pub name: String,
    /// Bytes of wirelens' JSON encoding (the base of every "ratio to JSON").
    pub json_bytes: usize,
    /// Per format: sizes, bytes per field, gzip timings.
    pub formats: Vec<FormatReport>,
    /// Per format × library: bytes and timings.
    pub timings: Vec<TimingRow>,
    /// How size and time grow with the record count, when the payload has records.
    pub sweep: Option<Sweep>,
    /// End-to-end estimates per format × library × link, with and without gzip.
    pub transfer: Vec<Transfer>,
    /// Timings in other runtimes (Python, Node), when asked for: one report per runtime.
    pub runtimes: Vec<RuntimeReport>,
}

impl FileReport {
    /// The estimates of `runtime` (one of this file's runtime reports) over `links`, plain or with
    /// gzip: per format its fastest library. With gzip, the runtime's own gzip of the format's bytes
    /// (wirelens' default encoding, which its harness compressed) when it was timed; else Rust's
    /// gzip timings and size, with a note saying so; a format with neither has no gzip estimate.
    pub fn runtime_transfers(
        &self,
        runtime: &RuntimeReport,
        links: &[Link],
        gzip: bool,
    ) -> Vec<RuntimeTransfer> {
        use crate::profile::runtimes::Codec;
        let file = self;
        let secs = |m: &Measurement| m.ns.median / 1e9;
        let mut out = Vec::new();
        for format in Format::ALL {
            let best = runtime
                .rows
                .iter()
                .filter(|row| row.format == format && row.error.is_none())
                .filter_map(|row| match (&row.encode, &row.decode) {
                    (Some(e), Some(d)) => Some((row, secs(e), secs(d))),
                    _ => None,
                })
                .min_by(|a, b| (a.1 + a.2).total_cmp(&(b.1 + b.2)));
            let Some((row, encode, decode)) = best else {
                continue;
            };
            // (bytes, compress s, decompress s, fallback note)
            let sent = if !gzip {
                Some((row.bytes, 0.0, 0.0, None))
            } else if let Some(c) = runtime.compressor(format, Codec::Gzip) {
                c.compress
                    .as_ref()
                    .zip(c.decompress.as_ref())
                    .map(|(a, b)| (c.bytes, secs(a), secs(b), None))
            } else {
                let rust = file.format(format);
                match (
                    rust.and_then(|f| f.sizes.sizes.gzip),
                    rust.and_then(|f| f.gzip_compress.as_ref()),
                    rust.and_then(|f| f.gzip_decompress.as_ref()),
                ) {
                    (Some(bytes), Some(c), Some(d)) => Some((
                        bytes,
                        secs(c),
                        secs(d),
                        Some(format!(
                            "Rust's gzip times: {}'s gzip was not measured{}",
                            runtime.runtime.title(),
                            runtime
                                .compressors
                                .iter()
                                .find(|c| c.format == format && c.codec == Codec::Gzip)
                                .and_then(|c| c.error.as_deref())
                                .map(|e| format!(" ({e})"))
                                .unwrap_or_default()
                        )),
                    )),
                    _ => None,
                }
            };
            let Some((bytes, compress, decompress, fallback)) = sent else {
                continue;
            };
            for link in links {
                out.push(RuntimeTransfer {
                    format,
                    library: row.library.clone(),
                    link: link.name.clone(),
                    compressed: gzip,
                    wire_bytes: bytes,
                    cpu_send: encode + compress,
                    wire: bytes as f64 * 8.0 / link.bits_per_second + link.rtt_seconds,
                    cpu_receive: decompress + decode,
                    fallback: fallback.clone(),
                });
            }
        }
        out
    }

    /// Every estimate of one payload's report over `links`: for each format × library row whose
    /// encode and decode are both measured, with and (when gzip was timed) without compression.
    pub fn transfer_estimates(&self, links: &[Link]) -> Vec<Transfer> {
        let file = self;
        let mut out = Vec::new();
        for row in &file.timings {
            let (Some(encode), Some(decode)) = (&row.encode, &row.decode) else {
                continue;
            };
            let format = file.format(row.format);
            out.extend(estimate(
                &Costs {
                    format: row.format,
                    library: row.library,
                    bytes: row.bytes,
                    gzip: format.and_then(|f| f.sizes.sizes.gzip),
                    encode,
                    decode,
                    compress: format.and_then(|f| f.gzip_compress.as_ref()),
                    decompress: format.and_then(|f| f.gzip_decompress.as_ref()),
                },
                links,
            ));
        }
        out
    }
}

impl Report {
    /// Precise mode: one sentence on how disturbed the machine was while it measured, from the
    /// cache probe (`None` when no turn was taken).
    pub fn probe_note(&self) -> Option<String> {
        let p = self.probe.as_ref().filter(|p| p.min > 0.0)?;
        let (median, max) = (p.median / p.min, p.max / p.min);
        Some(format!(
            "a shared-cache probe took {median:.1}× its best in the median turn, {max:.1}× at \
             most{}",
            if max > 3.0 {
                ": other programs were using the cache, so memory-heavy rows may move between \
                 runs; compare rows within one run"
            } else {
                ""
            }
        ))
    }
}

impl FileReport {
    /// The report of `format`, if it could be encoded.
    pub fn format(&self, format: Format) -> Option<&FormatReport> {
        self.formats.iter().find(|f| f.sizes.format == format)
    }
}

/// One format of one input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormatReport {
    /// Sizes raw and compressed, ratio to JSON, schema source, notes.
    pub sizes: FormatSizes,
    /// The same data in this format's variants (shortest floats, canonical), with what each
    /// saves against `sizes`; empty for JSON and protobuf.
    pub variants: Vec<VariantSizes>,
    /// Bytes per field path pattern.
    pub fields: FieldCosts,
    /// gzip compress time of these bytes.
    pub gzip_compress: Option<Measurement>,
    /// gzip decompress time.
    pub gzip_decompress: Option<Measurement>,
}

/// One format × library of one input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimingRow {
    /// The format.
    #[serde(serialize_with = "crate::profile::ser_format")]
    pub format: Format,
    /// The library.
    pub library: Library,
    /// Where the protobuf or Avro schema came from.
    pub schema: SchemaSource,
    /// Bytes of this library's own encoding (0 when it could not be prepared).
    pub bytes: usize,
    /// Encode timing (`None`: not run, cancelled or failed, see `error`).
    pub encode: Option<Measurement>,
    /// Decode timing.
    pub decode: Option<Measurement>,
    /// Why a timing is missing.
    pub error: Option<String>,
}
