#![no_main]
//! Fuzz target `msgpack`: see `checks::msgpack`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::msgpack(data));
