#![no_main]
//! Fuzz target `http`: see `checks::http`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::http(data));
