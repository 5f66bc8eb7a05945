//! The profiler's accuracy check: criterion times the same operations `wirelens compare` times
//! (each library on its own dynamic value, the same inputs), then the profiler measures them in
//! precise mode in the same binary, then criterion times them again. The table puts the
//! profiler's median beside both criterion passes: the passes' own difference is how far this
//! machine drifted while the profiler ran, the yardstick for the profiler's difference.
//!
//! `cargo bench --bench profile` (release profile; note that benches get the dev-dependency
//! features, serde_json's `arbitrary_precision` and `preserve_order` among them, in both
//! columns). Inputs: the json-benchmark files under `tests/data/json-bench/`.

#![allow(clippy::print_stdout, clippy::unwrap_used)] // a bench binary reports on stdout

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use cbor4ii::core::dec::Decode;
use cbor4ii::core::enc::Encode;
use criterion::Criterion;
use prost::Message;
use wirelens::codec::protobuf::infer::{infer, wrap_for_inferred, InferOptions};
use wirelens::codec::{decode, encode, DecodeOptions, EncodeOptions, Format};
use wirelens::profile::{run, Settings};
use wirelens::report::Mode;

const FILES: [&str; 2] = ["twitter.json", "citm_catalog.json"];

fn bench_file(c: &mut Criterion, name: &str, json: &[u8]) {
    let stem = name.trim_end_matches(".json").replace('_', "-");
    let mut g = c.benchmark_group(stem);
    let doc = decode(json, Format::Json, &DecodeOptions::default()).unwrap();
    let value = doc.value;
    let opts = EncodeOptions::default();
    let json = encode(&value, Format::Json, &opts).unwrap().bytes;
    let msgpack = encode(&value, Format::MessagePack, &opts).unwrap().bytes;
    let cbor = encode(&value, Format::Cbor, &opts).unwrap().bytes;
    let message = infer(&value, &InferOptions::default()).unwrap().message;
    let wrapped = wrap_for_inferred(&value).into_owned();
    let pb_opts = EncodeOptions {
        message: Some(message.clone()),
        ..EncodeOptions::default()
    };
    let pb = encode(&wrapped, Format::Protobuf, &pb_opts).unwrap().bytes;
    let mut buf: Vec<u8> = Vec::with_capacity(json.len() * 2);

    let sj: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let sj_bytes = serde_json::to_vec(&sj).unwrap();
    g.bench_function("json-serde_json-encode", |b| {
        b.iter(|| {
            buf.clear();
            serde_json::to_writer(&mut buf, black_box(&sj)).is_ok()
        })
    });
    g.bench_function("json-serde_json-decode", |b| {
        b.iter_with_large_drop(|| serde_json::from_slice::<serde_json::Value>(black_box(&sj_bytes)))
    });
    let so: sonic_rs::Value = sonic_rs::from_slice(&json).unwrap();
    let so_bytes = sonic_rs::to_vec(&so).unwrap();
    g.bench_function("json-sonic-rs-encode", |b| {
        b.iter(|| {
            buf.clear();
            sonic_rs::to_writer(&mut buf, black_box(&so)).is_ok()
        })
    });
    g.bench_function("json-sonic-rs-decode", |b| {
        b.iter_with_large_drop(|| sonic_rs::from_slice::<sonic_rs::Value>(black_box(&so_bytes)))
    });
    let rv = rmpv::decode::read_value(&mut &msgpack[..]).unwrap();
    let rs_bytes = rmp_serde::to_vec_named(&rv).unwrap();
    g.bench_function("msgpack-rmp-serde-encode", |b| {
        b.iter(|| {
            buf.clear();
            let mut ser = rmp_serde::Serializer::new(&mut buf).with_struct_map();
            serde::Serialize::serialize(black_box(&rv), &mut ser).is_ok()
        })
    });
    g.bench_function("msgpack-rmp-serde-decode", |b| {
        b.iter_with_large_drop(|| rmp_serde::from_slice::<rmpv::Value>(black_box(&rs_bytes)))
    });
    let mut rv_bytes = Vec::new();
    rmpv::encode::write_value(&mut rv_bytes, &rv).unwrap();
    g.bench_function("msgpack-rmpv-encode", |b| {
        b.iter(|| {
            buf.clear();
            rmpv::encode::write_value(&mut buf, black_box(&rv)).is_ok()
        })
    });
    g.bench_function("msgpack-rmpv-decode", |b| {
        b.iter_with_large_drop(|| rmpv::decode::read_value(&mut black_box(&rv_bytes[..])))
    });
    let ci: ciborium::Value = ciborium::from_reader(&cbor[..]).unwrap();
    let mut ci_bytes = Vec::new();
    ciborium::into_writer(&ci, &mut ci_bytes).unwrap();
    g.bench_function("cbor-ciborium-encode", |b| {
        b.iter(|| {
            buf.clear();
            ciborium::into_writer(black_box(&ci), &mut buf).is_ok()
        })
    });
    g.bench_function("cbor-ciborium-decode", |b| {
        b.iter_with_large_drop(|| {
            ciborium::from_reader::<ciborium::Value, _>(black_box(&ci_bytes[..]))
        })
    });
    let c4 =
        cbor4ii::core::Value::decode(&mut cbor4ii::core::utils::SliceReader::new(&cbor)).unwrap();
    let mut w = cbor4ii::core::utils::BufWriter::new(Vec::new());
    c4.encode(&mut w).unwrap();
    let c4_bytes = w.into_inner();
    g.bench_function("cbor-cbor4ii-encode", |b| {
        b.iter(|| {
            let mut w = cbor4ii::core::utils::BufWriter::new(std::mem::take(&mut buf));
            w.clear();
            let ok = black_box(&c4).encode(&mut w).is_ok();
            buf = w.into_inner();
            ok
        })
    });
    g.bench_function("cbor-cbor4ii-decode", |b| {
        b.iter_with_large_drop(|| {
            cbor4ii::core::Value::decode(&mut cbor4ii::core::utils::SliceReader::new(black_box(
                &c4_bytes,
            )))
        })
    });
    let dm = prost_reflect::DynamicMessage::decode(message.clone(), &pb[..]).unwrap();
    let dm_bytes = dm.encode_to_vec();
    g.bench_function("protobuf-prost-reflect-encode", |b| {
        b.iter(|| {
            buf.clear();
            black_box(&dm).encode(&mut buf).is_ok()
        })
    });
    g.bench_function("protobuf-prost-reflect-decode", |b| {
        b.iter_with_large_drop(|| {
            prost_reflect::DynamicMessage::decode(message.clone(), black_box(&dm_bytes[..]))
        })
    });
    for (format, v, bytes, o) in [
        (Format::Json, &value, &json, &opts),
        (Format::MessagePack, &value, &msgpack, &opts),
        (Format::Cbor, &value, &cbor, &opts),
        (Format::Protobuf, &wrapped, &pb, &pb_opts),
    ] {
        let dopts = DecodeOptions {
            message: o.message.clone(),
            ..DecodeOptions::default()
        };
        g.bench_function(format!("{}-wirelens-encode", format.name()), |b| {
            b.iter_with_large_drop(|| encode(black_box(v), format, o))
        });
        g.bench_function(format!("{}-wirelens-decode", format.name()), |b| {
            b.iter_with_large_drop(|| decode(black_box(bytes), format, &dopts))
        });
    }
    g.finish();
}

/// criterion's median estimate (ns) of one benchmark, from its saved estimates.
fn criterion_median(dir: &Path, group: &str, id: &str) -> Option<f64> {
    let path = dir.join(group).join(id).join("new").join("estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["median"]["point_estimate"].as_f64()
}

/// One criterion pass over every file; returns its median per (group, benchmark id).
fn criterion_pass(out_dir: &Path, files: &[(&str, Vec<u8>)]) -> HashMap<(String, String), f64> {
    let mut c = Criterion::default()
        .output_directory(out_dir)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
        .configure_from_args();
    for (name, json) in files {
        bench_file(&mut c, name, json);
    }
    c.final_summary();
    let mut medians = HashMap::new();
    let Ok(groups) = std::fs::read_dir(out_dir) else {
        return medians;
    };
    for group in groups.flatten() {
        let group = group.file_name().to_string_lossy().into_owned();
        let Ok(ids) = std::fs::read_dir(out_dir.join(&group)) else {
            continue;
        };
        for id in ids.flatten() {
            let id = id.file_name().to_string_lossy().into_owned();
            if let Some(m) = criterion_median(out_dir, &group, &id) {
                medians.insert((group.clone(), id), m);
            }
        }
    }
    medians
}

/// |a - b| as a percentage of the smaller.
fn apart(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.min(b) * 100.0
}

fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out_dir = root.join("target").join("criterion");
    let files: Vec<(&str, Vec<u8>)> = FILES
        .iter()
        .map(|name| {
            let path = root.join("tests/data/json-bench").join(name);
            (*name, std::fs::read(&path).unwrap())
        })
        .collect();
    let inputs: Vec<wirelens::profile::Subject> = files
        .iter()
        .map(|(name, json)| wirelens::profile::Subject {
            name: name.to_string(),
            value: decode(json, Format::Json, &DecodeOptions::default())
                .unwrap()
                .value
                .into(),
            message: None,
        })
        .collect();

    // criterion, then the profiler, then criterion again: the profiler's run sits between two
    // criterion passes, and the passes' own difference is the machine's drift over that time.
    let before = criterion_pass(&out_dir, &files);
    let mut settings = Settings::new(Mode::Precise);
    settings.sweep_counts.clear();
    let report = run(&inputs, &settings, &AtomicBool::new(false), &|_| {});
    let after = criterion_pass(&out_dir, &files);

    println!(
        "\n{:<14} {:<34} {:>12} {:>12} {:>12} {:>8} {:>8}",
        "file", "operation", "criterion 1", "wirelens", "criterion 2", "c1 ↔ c2", "wl ↔ c"
    );
    let (mut passes, mut ours, mut inside) = (Vec::new(), Vec::new(), 0usize);
    for file in &report.files {
        let group = file.name.trim_end_matches(".json").replace('_', "-");
        for row in &file.timings {
            for (op, m) in [("encode", &row.encode), ("decode", &row.decode)] {
                let id = format!("{}-{}-{op}", row.format.name(), row.library.name());
                let key = (group.clone(), id.clone());
                let (Some(m), Some(&c1), Some(&c2)) = (m, before.get(&key), after.get(&key)) else {
                    continue;
                };
                let wl = m.ns.median;
                // Against the nearer pass: the profiler ran between them.
                let diff = apart(wl, c1).min(apart(wl, c2));
                let between = wl >= c1.min(c2) && wl <= c1.max(c2);
                passes.push(apart(c1, c2));
                ours.push(if between { 0.0 } else { diff });
                inside += usize::from(between);
                println!(
                    "{:<14} {:<34} {:>9.1} µs {:>9.1} µs {:>9.1} µs {:>7.1}% {:>7}",
                    group,
                    id,
                    c1 / 1e3,
                    wl / 1e3,
                    c2 / 1e3,
                    apart(c1, c2),
                    if between {
                        "between".to_string()
                    } else {
                        format!("{diff:.1}%")
                    }
                );
            }
        }
    }
    if !passes.is_empty() {
        let n = passes.len();
        let largest = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
        println!(
            "\n{n} operations. criterion against itself (pass 1 ↔ pass 2): median {:.1}%, \
             largest {:.1}%.\nwirelens' median: between the two passes in {inside} of {n}; its distance \
             from the nearer pass, 0 when between, {:.1}% in the median operation, {:.1}% at most.",
            median_of(passes.clone()),
            largest(&passes),
            median_of(ours.clone()),
            largest(&ours),
        );
    }
}
