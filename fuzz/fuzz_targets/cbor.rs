#![no_main]
//! Fuzz target `cbor`: see `checks::cbor`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::cbor(data));
