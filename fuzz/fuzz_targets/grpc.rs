#![no_main]
//! Fuzz target `grpc`: see `checks::grpc`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::grpc(data));
