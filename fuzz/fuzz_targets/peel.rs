#![no_main]
//! Fuzz target `peel`: see `checks::peel_all`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::peel_all(data));
