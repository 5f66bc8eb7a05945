//! Reports over decoded payloads, written to any `io::Write`: the `inspect` text report (readings,
//! tree with byte ranges, annotated hex), and the profiler's [`Report`] with its terminal table
//! ([`table`]) and CSV files ([`csv`]).

pub mod csv;
pub mod inspect;
#[allow(clippy::module_inception)]
pub mod report;
pub mod table;

pub use report::{FileReport, FormatReport, Mode, Report, TimingRow};
