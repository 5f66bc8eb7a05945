#![no_main]
//! Fuzz target `http2`: see `checks::http2`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::http2(data));
