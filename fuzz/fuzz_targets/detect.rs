#![no_main]
//! Fuzz target `detect`: see `checks::detect_all`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::detect_all(data));
