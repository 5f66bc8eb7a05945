#![no_main]
//! Fuzz target `json`: see `checks::json`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::json(data));
