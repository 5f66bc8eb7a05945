//! Reports over decoded payloads, written to any `io::Write`: the `inspect` text report (readings,
//! tree with byte ranges, annotated hex), and the profiler's [`Report`] rendered as a terminal
//! table ([`table`]) and CSV files ([`csv`]). This module only renders: the report's types are
//! the profiler's ([`crate::profile::report`]), re-exported here for the renderers' callers.

pub mod csv;
pub mod inspect;
pub mod table;

pub use crate::profile::report::{FileReport, FormatReport, Mode, Report, TimingRow};
