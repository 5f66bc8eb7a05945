//! Decode and encode throughput of the span-tracking codecs beside each format's own library
//! decoding into (and encoding from) its own DOM value, on the same bytes, in one run:
//!
//! - JSON vs `serde_json::Value`, MessagePack vs `rmpv::Value`, CBOR vs `ciborium::Value`,
//!   Protobuf vs `prost_reflect::DynamicMessage`;
//! - on twitter.json, citm_catalog.json, canada.json (tests/data/json-bench), the 15,000-record
//!   sample, their MessagePack and CBOR forms made by our encoders, and protobuf transaction
//!   histories (the 1,000-record sample and the 15,000 records encoded with its schema);
//! - encoding also without the output's span tree (`wirelens-fast`, [`encode_fast`], what
//!   `wirelens convert` uses), since the libraries record no spans;
//! - plus converting the 15,000-record sample to every format on parallel threads.
//!
//! `cargo bench --no-default-features --bench baselines` (criterion; add a filter such as
//! `decode/json` to run part). Compare ratios within one run: the machines are shared.
//!
//! Fairness: this crate's dev-dependency on serde_json turns on `arbitrary_precision` and
//! `preserve_order`, and cargo unifies features, so `serde_json::Value` here is the slower
//! string-number / IndexMap variant. The `fair-json` crate in `benches/fair-json/` measures the
//! plain serde_json that most users have; `BENCHMARKS.md` quotes both.

#![allow(missing_docs)] // criterion_group! defines an undocumented function

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor};
use wirelens::codec::protobuf::schema::Schema;
use wirelens::codec::{
    decode, encode, encode_fast, DecodeOptions, EncodeOptions, FloatPolicy, Format,
};
use wirelens::model::Value;

/// One input: a name and its JSON bytes.
struct Input {
    name: &'static str,
    json: Vec<u8>,
    value: Value,
}

fn read(rel: &str) -> Vec<u8> {
    let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("bench input {path}: {e}"))
}

fn inputs() -> Vec<Input> {
    [
        ("twitter", "tests/data/json-bench/twitter.json"),
        ("citm_catalog", "tests/data/json-bench/citm_catalog.json"),
        ("canada", "tests/data/json-bench/canada.json"),
        ("transactions-15k", "samples/transactions-15k.json"),
    ]
    .into_iter()
    .map(|(name, rel)| {
        let json = read(rel);
        let value = decode(&json, Format::Json, &DecodeOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .value;
        Input { name, json, value }
    })
    .collect()
}

/// Float widths kept as read, so every format gets the same numbers.
fn keep() -> EncodeOptions {
    EncodeOptions {
        floats: FloatPolicy::Keep,
        ..EncodeOptions::default()
    }
}

fn encoded(value: &Value, format: Format) -> Vec<u8> {
    encode(value, format, &keep())
        .unwrap_or_else(|e| panic!("encode {}: {e}", format.name()))
        .bytes
}

fn history() -> MessageDescriptor {
    let text = String::from_utf8(read("samples/transactions.proto")).unwrap_or_default();
    Schema::from_proto_source("transactions.proto", &text)
        .and_then(|s| s.message("wirelens.samples.TransactionHistory"))
        .unwrap_or_else(|e| panic!("transactions.proto: {e}"))
}

/// Protobuf inputs: the 1,000-record sample and the 15,000 records encoded with the schema.
fn protobuf_inputs(message: &MessageDescriptor) -> Vec<(&'static str, Vec<u8>)> {
    let big = read("samples/transactions-15k.json");
    let value = decode(&big, Format::Json, &DecodeOptions::default())
        .unwrap_or_else(|e| panic!("transactions-15k: {e}"))
        .value;
    let options = EncodeOptions {
        message: Some(message.clone()),
        ..keep()
    };
    let pb15k = encode(&value, Format::Protobuf, &options)
        .unwrap_or_else(|e| panic!("transactions-15k as protobuf: {e}"))
        .bytes;
    vec![
        ("transactions-1k.pb", read("samples/transactions-1k.pb")),
        ("transactions-15k.pb", pb15k),
    ]
}

/// Few samples, short runs: enough for ratios, and the whole suite stays in minutes.
fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

fn bench_decode(c: &mut Criterion) {
    let inputs = inputs();
    let opts = DecodeOptions::default();
    for format in [Format::Json, Format::MessagePack, Format::Cbor] {
        let mut group = c.benchmark_group(format!("decode/{}", format.name()));
        for input in &inputs {
            let bytes = match format {
                Format::Json => input.json.clone(),
                _ => encoded(&input.value, format),
            };
            group.throughput(Throughput::Bytes(bytes.len() as u64));
            group.bench_with_input(BenchmarkId::new("wirelens", input.name), &bytes, |b, x| {
                b.iter(|| decode(black_box(x), format, &opts))
            });
            let lib = BenchmarkId::new(library(format), input.name);
            match format {
                Format::Json => group.bench_with_input(lib, &bytes, |b, x| {
                    b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(x)))
                }),
                Format::MessagePack => group.bench_with_input(lib, &bytes, |b, x| {
                    b.iter(|| rmpv::decode::read_value(&mut black_box(&x[..])))
                }),
                _ => group.bench_with_input(lib, &bytes, |b, x| {
                    b.iter(|| ciborium::from_reader::<ciborium::Value, _>(black_box(&x[..])))
                }),
            };
        }
        group.finish();
    }
    let message = history();
    let with_schema = DecodeOptions {
        message: Some(message.clone()),
        ..DecodeOptions::default()
    };
    let mut group = c.benchmark_group("decode/protobuf");
    for (name, bytes) in protobuf_inputs(&message) {
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new("wirelens", name), &bytes, |b, x| {
            b.iter(|| decode(black_box(x), Format::Protobuf, &with_schema))
        });
        group.bench_with_input(
            BenchmarkId::new("wirelens-schemaless", name),
            &bytes,
            |b, x| b.iter(|| decode(black_box(x), Format::Protobuf, &opts)),
        );
        group.bench_with_input(
            BenchmarkId::new(library(Format::Protobuf), name),
            &bytes,
            |b, x| b.iter(|| DynamicMessage::decode(message.clone(), black_box(&x[..]))),
        );
    }
    group.finish();
}

fn library(format: Format) -> &'static str {
    match format {
        Format::Json => "serde_json-arbitrary_precision",
        Format::MessagePack => "rmpv",
        Format::Cbor => "ciborium",
        Format::Protobuf => "prost-reflect",
        Format::Avro => "apache-avro",
        other => panic!("no baseline library for {}", other.name()),
    }
}

fn bench_encode(c: &mut Criterion) {
    let inputs = inputs();
    let options = keep();
    for format in [Format::Json, Format::MessagePack, Format::Cbor] {
        let mut group = c.benchmark_group(format!("encode/{}", format.name()));
        for input in &inputs {
            let bytes = encoded(&input.value, format);
            group.throughput(Throughput::Bytes(bytes.len() as u64));
            group.bench_with_input(
                BenchmarkId::new("wirelens", input.name),
                &input.value,
                |b, v| b.iter(|| encode(black_box(v), format, &options)),
            );
            // The same bytes without the output's span tree, as `wirelens convert` encodes.
            group.bench_with_input(
                BenchmarkId::new("wirelens-fast", input.name),
                &input.value,
                |b, v| b.iter(|| encode_fast(black_box(v), format, &options)),
            );
            let lib = BenchmarkId::new(library(format), input.name);
            match format {
                Format::Json => {
                    let own: serde_json::Value =
                        serde_json::from_slice(&input.json).unwrap_or_default();
                    group.bench_with_input(lib, &own, |b, v| {
                        b.iter(|| serde_json::to_vec(black_box(v)))
                    });
                }
                Format::MessagePack => {
                    let own = rmpv::decode::read_value(&mut &bytes[..]).unwrap_or(rmpv::Value::Nil);
                    group.bench_with_input(lib, &own, |b, v| {
                        b.iter(|| {
                            let mut out = Vec::new();
                            rmpv::encode::write_value(&mut out, black_box(v)).map(|()| out)
                        })
                    });
                }
                _ => {
                    let own: ciborium::Value =
                        ciborium::from_reader(&bytes[..]).unwrap_or(ciborium::Value::Null);
                    group.bench_with_input(lib, &own, |b, v| {
                        b.iter(|| {
                            let mut out = Vec::new();
                            ciborium::into_writer(black_box(v), &mut out).map(|()| out)
                        })
                    });
                }
            }
        }
        group.finish();
    }
    let message = history();
    let with_schema = DecodeOptions {
        message: Some(message.clone()),
        ..DecodeOptions::default()
    };
    let encode_with = EncodeOptions {
        message: Some(message.clone()),
        ..keep()
    };
    let mut group = c.benchmark_group("encode/protobuf");
    for (name, bytes) in protobuf_inputs(&message) {
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        let value = decode(&bytes, Format::Protobuf, &with_schema)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .value;
        group.bench_with_input(BenchmarkId::new("wirelens", name), &value, |b, v| {
            b.iter(|| encode(black_box(v), Format::Protobuf, &encode_with))
        });
        let own = DynamicMessage::decode(message.clone(), &bytes[..])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        group.bench_with_input(
            BenchmarkId::new(library(Format::Protobuf), name),
            &own,
            |b, m| b.iter(|| black_box(m).encode_to_vec()),
        );
    }
    group.finish();
}

/// The 15,000-record sample converted to every format, one thread per format.
fn bench_parallel(c: &mut Criterion) {
    let json = read("samples/transactions-15k.json");
    let message = history();
    let mut group = c.benchmark_group("convert-all");
    group.throughput(Throughput::Bytes(json.len() as u64));
    group.bench_function("transactions-15k/parallel", |b| {
        b.iter(|| {
            let doc = decode(black_box(&json), Format::Json, &DecodeOptions::default())
                .unwrap_or_else(|e| panic!("{e}"));
            std::thread::scope(|s| {
                let handles: Vec<_> = Format::ALL
                    .into_iter()
                    .map(|format| {
                        let options = EncodeOptions {
                            message: (format == Format::Protobuf).then(|| message.clone()),
                            ..EncodeOptions::default()
                        };
                        let value = &doc.value;
                        s.spawn(move || encode(value, format, &options).map(|e| e.bytes.len()))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().ok().and_then(Result::ok).unwrap_or(0))
                    .sum::<usize>()
            })
        })
    });
    group.bench_function("transactions-15k/sequential", |b| {
        b.iter(|| {
            let doc = decode(black_box(&json), Format::Json, &DecodeOptions::default())
                .unwrap_or_else(|e| panic!("{e}"));
            Format::ALL
                .into_iter()
                .map(|format| {
                    let options = EncodeOptions {
                        message: (format == Format::Protobuf).then(|| message.clone()),
                        ..EncodeOptions::default()
                    };
                    encode(&doc.value, format, &options).map_or(0, |e| e.bytes.len())
                })
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_decode, bench_encode, bench_parallel
}
criterion_main!(benches);
