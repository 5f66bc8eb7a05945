#![no_main]
//! Fuzz target `text`: see `checks::text`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::text(data));
