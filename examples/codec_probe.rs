//! Runs one codec operation on one file a number of times, for profilers (callgrind, perf) that
//! need a plain process doing just that work.
//!
//! `cargo run --release --no-default-features --example codec_probe -- OP FILE [RUNS]` where OP is
//! `decode-json`, `decode-msgpack`, `decode-cbor`, `decode-protobuf` (schema-less) or
//! `encode-json`, `encode-msgpack`, `encode-cbor` (the file is JSON, decoded once first). The
//! `decode-*` ops other than JSON read the file as JSON and encode it to the format first, so
//! setup is not profiled apart from that one encode.

#![allow(clippy::print_stdout)] // prints a checksum so the work is not optimised away

use std::process::ExitCode;

use wirelens::codec::{decode, encode, DecodeOptions, EncodeOptions, FloatPolicy, Format};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(op), Some(file)) = (args.first(), args.get(1)) else {
        eprintln!("usage: codec_probe OP FILE [RUNS]");
        return ExitCode::from(2);
    };
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(1);
    let Ok(json) = std::fs::read(file) else {
        eprintln!("cannot read {file}");
        return ExitCode::from(2);
    };
    let Some((what, name)) = op.split_once('-') else {
        eprintln!("OP is decode-FORMAT or encode-FORMAT");
        return ExitCode::from(2);
    };
    let Some(format) = Format::from_name(name) else {
        eprintln!("unknown format {name}");
        return ExitCode::from(2);
    };
    let keep = EncodeOptions {
        floats: FloatPolicy::Keep,
        ..EncodeOptions::default()
    };
    let options = DecodeOptions::default();
    let value = match decode(&json, Format::Json, &options) {
        Ok(doc) => doc.value,
        Err(e) => {
            eprintln!("{file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut total = 0usize;
    if what == "decode" {
        let bytes = if format == Format::Json {
            json
        } else {
            match encode(&value, format, &keep) {
                Ok(e) => e.bytes,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::FAILURE;
                }
            }
        };
        drop(value);
        for _ in 0..runs {
            total += decode(&bytes, format, &options).map_or(0, |d| d.spans.len());
        }
    } else {
        for _ in 0..runs {
            total += encode(&value, format, &keep).map_or(0, |e| e.bytes.len());
        }
    }
    println!("{total}");
    ExitCode::SUCCESS
}
