//! The profiler: what each format costs on the user's own payload, in bytes and in time.
//!
//! Given decoded payloads ([`Subject`]s), [`run`] measures, per payload:
//! - **sizes** ([`sizes`]): every format encoded by wirelens, raw and after gzip, zstd and brotli,
//!   with the ratio to JSON;
//! - **bytes per field** ([`cost`]): every encoded byte attributed to the path pattern that owns
//!   it, split into key, header, value and structure bytes;
//! - **timings** ([`bench`](mod@bench), [`stats`], [`libs`]): encode and decode per format *and library*,
//!   each library on its own dynamic value type, with criterion-style statistics and allocations
//!   per operation ([`alloc`]);
//! - **scaling** and **transfer** ([`sweep`]): size and time at growing record counts, and
//!   encode + wire + decode estimates over network links, with and without gzip.
//!
//! Everything ends in one [`crate::profile::report::Report`]. The run streams: each finished measurement
//! is handed to the caller's callback as an [`Event`] (the CLI drives a progress bar with it, the
//! GUI forwards events through a channel from a worker thread), and a shared cancel flag stops it
//! between samples. Timing jobs run on a rayon pool unless the mode is
//! [`Mode::Precise`](crate::profile::report::Mode::Precise); measurements taken while other jobs ran are
//! marked `concurrent`.
//!
//! It does not decode the user's input (the CLI and GUI do, with `capture` and `codec`) and it
//! prints nothing (see [`crate::report`]).

pub mod alloc;
pub mod bench;
pub mod cost;
pub mod libs;
pub mod live;
pub mod report;
mod run;
pub mod runtimes;
pub mod sizes;
pub mod stats;
pub mod sweep;
pub mod turns;

pub use live::Live;
pub use run::{
    measure_runtime_sweep, run, run_runtimes, runtime_payload, runtime_sweep_payloads, Event, Op,
    Settings, Slot, Subject,
};

use crate::codec::Format;

/// Serialises a [`Format`] by its name (`json`, `msgpack`, …).
pub(crate) fn ser_format<S: serde::Serializer>(f: &Format, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(f.name())
}
