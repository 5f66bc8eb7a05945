#![no_main]
//! Fuzz target `protobuf_raw`: see `checks::protobuf_raw`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::protobuf_raw(data));
