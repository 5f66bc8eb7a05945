#![no_main]
//! Fuzz target `encode_all`: see `checks::encode_all`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::encode_all(data));
