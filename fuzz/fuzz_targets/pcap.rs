#![no_main]
//! Fuzz target `pcap`: see `checks::pcap_file`.

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::pcap_file(data));
