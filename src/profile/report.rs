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
use crate::profile::sweep::{Link, Sweep, Transfer};

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
    /// Where the protobuf schema came from.
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
