#![no_main]
//! Fuzz target `tls`: see `checks::tls`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::tls(data));
