#![no_main]
//! Fuzz target `roundtrip`: see `checks::roundtrip`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::roundtrip(data));
