//! Reports over decoded payloads, written to any `io::Write`: the `inspect` text report (readings,
//! tree with byte ranges, annotated hex).

pub mod inspect;
