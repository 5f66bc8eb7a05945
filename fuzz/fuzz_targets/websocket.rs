#![no_main]
//! Fuzz target `websocket`: see `checks::websocket`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::websocket(data));
