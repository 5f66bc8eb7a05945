//! Runs one encode (or protobuf decode) on one file a number of times, by wirelens or by the
//! format's own library on its own value, for callgrind: the work is inside `#[inline(never)]`
//! functions named `measured_*`, so
//! `valgrind --tool=callgrind --toggle-collect='*measured_*' PROBE ...` counts only that work.
//!
//! `cargo build --release --no-default-features --example encode_probe`, then
//! `encode_probe WHO OP FILE [RUNS]`: WHO is `wirelens`, `fast` (wirelens without output spans,
//! [`wirelens::codec::encode_fast`]) or `lib` (serde_json, rmpv, ciborium, prost-reflect); OP is
//! `encode-json`, `encode-msgpack`, `encode-cbor`, `encode-protobuf`, `decode-json`,
//! `decode-msgpack`, `decode-cbor` (decode and drop, into the library's own value for `lib`) or
//! `decode-protobuf`. FILE is JSON (decoded once first, and encoded to the format for a decode); for the protobuf ops it is a `.pb` of
//! `wirelens.samples.TransactionHistory` or a JSON file of that shape (encoded with the schema
//! first), and the value encoded is what the schema-guided decode of those bytes gives.

#![allow(clippy::print_stdout)] // prints a checksum so the work is not optimised away

use std::hint::black_box;
use std::process::ExitCode;

use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor};
use wirelens::codec::protobuf::schema::Schema;
use wirelens::codec::{decode, encode, DecodeOptions, EncodeOptions, FloatPolicy, Format};
use wirelens::model::Value;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(who), Some(op), Some(file)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("usage: encode_probe WHO OP FILE [RUNS]");
        return ExitCode::from(2);
    };
    let runs: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(1);
    match run(who, op, file, runs) {
        Ok(total) => {
            println!("{total}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn keep() -> EncodeOptions {
    EncodeOptions {
        floats: FloatPolicy::Keep,
        ..EncodeOptions::default()
    }
}

fn history() -> Result<MessageDescriptor, String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/transactions.proto");
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    Schema::from_proto_source("transactions.proto", &text)
        .and_then(|s| s.message("wirelens.samples.TransactionHistory"))
        .map_err(|e| format!("transactions.proto: {e}"))
}

fn run(who: &str, op: &str, file: &str, runs: usize) -> Result<usize, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    if op.ends_with("protobuf") {
        return protobuf(who, op, file, bytes, runs);
    }
    let value = decode(&bytes, Format::Json, &DecodeOptions::default())
        .map_err(|e| e.to_string())?
        .value;
    let options = keep();
    if let Some(format) = op.strip_prefix("decode-").and_then(Format::from_name) {
        let encoded = match format {
            Format::Json => bytes,
            _ => {
                encode(&value, format, &options)
                    .map_err(|e| e.to_string())?
                    .bytes
            }
        };
        drop(value);
        return Ok(match (who, format) {
            ("lib", Format::Json) => measured_serde_json_decode(&encoded, runs),
            ("lib", Format::MessagePack) => measured_rmpv_decode(&encoded, runs),
            ("lib", _) => measured_ciborium_decode(&encoded, runs),
            _ => measured_wirelens_decode_as(&encoded, format, runs),
        });
    }
    let format = op
        .strip_prefix("encode-")
        .and_then(Format::from_name)
        .ok_or_else(|| format!("unknown op {op}"))?;
    match who {
        "wirelens" => Ok(measured_wirelens(&value, format, &options, runs)),
        "fast" => Ok(measured_fast(&value, format, &options, runs)),
        "lib" => {
            let encoded = encode(&value, format, &options)
                .map_err(|e| e.to_string())?
                .bytes;
            drop(value);
            Ok(match format {
                Format::Json => {
                    let own: serde_json::Value =
                        serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
                    measured_serde_json(&own, runs)
                }
                Format::MessagePack => {
                    let own =
                        rmpv::decode::read_value(&mut &encoded[..]).map_err(|e| e.to_string())?;
                    measured_rmpv(&own, runs)
                }
                _ => {
                    let own: ciborium::Value =
                        ciborium::from_reader(&encoded[..]).map_err(|e| e.to_string())?;
                    measured_ciborium(&own, runs)
                }
            })
        }
        _ => Err(format!("unknown WHO {who}")),
    }
}

fn protobuf(who: &str, op: &str, file: &str, bytes: Vec<u8>, runs: usize) -> Result<usize, String> {
    let message = history()?;
    let options = EncodeOptions {
        message: Some(message.clone()),
        ..keep()
    };
    let with_schema = DecodeOptions {
        message: Some(message.clone()),
        ..DecodeOptions::default()
    };
    let pb = if file.ends_with(".pb") {
        bytes
    } else {
        let value = decode(&bytes, Format::Json, &DecodeOptions::default())
            .map_err(|e| e.to_string())?
            .value;
        encode(&value, Format::Protobuf, &options)
            .map_err(|e| e.to_string())?
            .bytes
    };
    match (who, op) {
        ("lib", "decode-protobuf") => Ok(measured_prost_decode(&message, &pb, runs)),
        ("lib", _) => {
            let own = DynamicMessage::decode(message, &pb[..]).map_err(|e| e.to_string())?;
            Ok(measured_prost_encode(&own, runs))
        }
        (_, "decode-protobuf") => Ok(measured_wirelens_decode(&pb, &with_schema, runs)),
        (who, _) => {
            let value = decode(&pb, Format::Protobuf, &with_schema)
                .map_err(|e| e.to_string())?
                .value;
            Ok(if who == "fast" {
                measured_fast(&value, Format::Protobuf, &options, runs)
            } else {
                measured_wirelens(&value, Format::Protobuf, &options, runs)
            })
        }
    }
}

#[inline(never)]
fn measured_wirelens(value: &Value, format: Format, options: &EncodeOptions, runs: usize) -> usize {
    (0..runs)
        .map(|_| encode(black_box(value), format, options).map_or(0, |e| e.bytes.len()))
        .sum()
}

#[inline(never)]
fn measured_fast(value: &Value, format: Format, options: &EncodeOptions, runs: usize) -> usize {
    (0..runs)
        .map(|_| {
            wirelens::codec::encode_fast(black_box(value), format, options)
                .map_or(0, |e| e.bytes.len())
        })
        .sum()
}

#[inline(never)]
fn measured_serde_json(value: &serde_json::Value, runs: usize) -> usize {
    (0..runs)
        .map(|_| serde_json::to_vec(black_box(value)).map_or(0, |v| v.len()))
        .sum()
}

#[inline(never)]
fn measured_rmpv(value: &rmpv::Value, runs: usize) -> usize {
    (0..runs)
        .map(|_| {
            let mut out = Vec::new();
            rmpv::encode::write_value(&mut out, black_box(value)).map_or(0, |()| out.len())
        })
        .sum()
}

#[inline(never)]
fn measured_ciborium(value: &ciborium::Value, runs: usize) -> usize {
    (0..runs)
        .map(|_| {
            let mut out = Vec::new();
            ciborium::into_writer(black_box(value), &mut out).map_or(0, |()| out.len())
        })
        .sum()
}

#[inline(never)]
fn measured_wirelens_decode_as(bytes: &[u8], format: Format, runs: usize) -> usize {
    let options = DecodeOptions::default();
    (0..runs)
        .map(|_| decode(black_box(bytes), format, &options).map_or(0, |d| d.spans.len()))
        .sum()
}

#[inline(never)]
fn measured_serde_json_decode(bytes: &[u8], runs: usize) -> usize {
    (0..runs)
        .map(|_| serde_json::from_slice::<serde_json::Value>(black_box(bytes)).map_or(0, |_| 1))
        .sum()
}

#[inline(never)]
fn measured_rmpv_decode(bytes: &[u8], runs: usize) -> usize {
    (0..runs)
        .map(|_| rmpv::decode::read_value(&mut black_box(bytes)).map_or(0, |_| 1))
        .sum()
}

#[inline(never)]
fn measured_ciborium_decode(bytes: &[u8], runs: usize) -> usize {
    (0..runs)
        .map(|_| ciborium::from_reader::<ciborium::Value, _>(black_box(bytes)).map_or(0, |_| 1))
        .sum()
}

#[inline(never)]
fn measured_prost_encode(message: &DynamicMessage, runs: usize) -> usize {
    (0..runs)
        .map(|_| black_box(message).encode_to_vec().len())
        .sum()
}

#[inline(never)]
fn measured_prost_decode(message: &MessageDescriptor, pb: &[u8], runs: usize) -> usize {
    (0..runs)
        .map(|_| {
            DynamicMessage::decode(message.clone(), black_box(pb)).map_or(0, |m| {
                black_box(&m);
                1
            })
        })
        .sum()
}

#[inline(never)]
fn measured_wirelens_decode(pb: &[u8], options: &DecodeOptions, runs: usize) -> usize {
    (0..runs)
        .map(|_| decode(black_box(pb), Format::Protobuf, options).map_or(0, |d| d.spans.len()))
        .sum()
}
