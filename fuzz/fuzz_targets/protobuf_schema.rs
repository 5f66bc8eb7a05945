#![no_main]
//! Fuzz target `protobuf_schema`: see `checks::protobuf_schema`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::protobuf_schema(data));
