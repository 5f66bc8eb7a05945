//! wirelens's integration tests, built as one test binary: each module below was its own file
//! under `tests/`, and linking one binary instead of two dozen keeps `cargo test` quick and small
//! on disk (every test binary links the whole library and its dependencies).
//!
//! Run one group with a filter, e.g. `cargo test --test it hostile::` or `cargo test cbor_`.

mod common;
// The checks the fuzz targets run; `hostile_fuzz_replay` runs them over the committed corpus.
#[path = "../../fuzz/checks.rs"]
mod fuzz_checks;

mod architecture;
mod avro;
mod capture_arriving;
mod capture_detect;
mod capture_har;
mod capture_pcap;
mod capture_real;
mod capture_streams;
mod capture_text;
mod capture_third_party;
mod capture_tls12_cbc;
mod cbor_conformance;
mod cli;
mod cli_reference;
mod compare;
mod compare_runtimes;
mod cross_format;
mod diff;
mod encode_fast;
mod faces;
#[cfg(feature = "gui")]
mod gui_app;
#[cfg(feature = "gui")]
mod gui_daily;
#[cfg(feature = "gui")]
mod gui_diff;
#[cfg(feature = "gui")]
mod gui_field_readings;
#[cfg(feature = "gui")]
mod gui_fit;
#[cfg(feature = "gui")]
mod gui_har;
#[cfg(feature = "gui")]
mod gui_palette;
#[cfg(feature = "gui")]
mod gui_profiler;
#[cfg(feature = "gui")]
mod gui_runtimes;
#[cfg(feature = "gui")]
mod gui_widgets;
mod hostile;
mod hostile_bombs;
mod hostile_capture;
mod hostile_deep;
mod hostile_fuzz_replay;
mod hostile_memory;
mod hostile_nodes;
mod json_conformance;
mod library_bytes;
mod msgpack_conformance;
mod proto3_oracle;
mod protobuf_cli;
mod protobuf_editions;
mod protobuf_encode;
mod protobuf_infer;
mod protobuf_proto3_json;
mod protobuf_read_as;
mod protobuf_reencode;
mod protobuf_schema;
mod protobuf_stream;
mod protobuf_wire;
mod workspace;
