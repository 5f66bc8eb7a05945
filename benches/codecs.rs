//! Decode and encode throughput of the span-tracking codecs on the bundled samples and the
//! json-benchmark files, beside the libraries' own DOM decoders where they are dev-dependencies.
//!
//! `cargo bench --bench codecs` (release profile). Prints the median of several runs per case;
//! these machines are shared, so compare ratios within one run, not absolute numbers across runs.

#![allow(clippy::print_stdout)] // a bench binary reports on stdout

use std::hint::black_box;
use std::time::{Duration, Instant};

use wirelens::codec::{decode, encode, DecodeOptions, EncodeOptions, FloatPolicy, Format};

/// Median wall time of `f` over enough runs to fill about half a second (at least 5).
fn median<R>(mut f: impl FnMut() -> R) -> Duration {
    let start = Instant::now();
    black_box(f());
    let once = start.elapsed().max(Duration::from_micros(1));
    let runs = (Duration::from_millis(500).as_nanos() / once.as_nanos()).clamp(5, 200) as usize;
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn report(what: &str, bytes: usize, t: Duration) {
    let mbps = bytes as f64 / t.as_secs_f64() / 1e6;
    println!(
        "{what:<48} {:>10.3} ms {:>9.1} MB/s",
        t.as_secs_f64() * 1e3,
        mbps
    );
}

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    let files = [
        format!("{root}/samples/transactions-15k.json"),
        format!("{root}/tests/data/json-bench/twitter.json"),
        format!("{root}/tests/data/json-bench/citm_catalog.json"),
        format!("{root}/tests/data/json-bench/canada.json"),
    ];
    let keep = EncodeOptions {
        floats: FloatPolicy::Keep,
        ..EncodeOptions::default()
    };
    for path in &files {
        let Ok(json) = std::fs::read(path) else {
            eprintln!("skipping {path}: not found");
            continue;
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        println!("\n{name} ({} bytes of JSON)", json.len());
        let opts = DecodeOptions::default();
        let Ok(doc) = decode(&json, Format::Json, &opts) else {
            eprintln!("{name} does not decode");
            continue;
        };
        report(
            "wirelens JSON decode (with spans)",
            json.len(),
            median(|| decode(&json, Format::Json, &opts)),
        );
        report(
            "serde_json::Value decode (arbitrary_precision)",
            json.len(),
            median(|| serde_json::from_slice::<serde_json::Value>(&json)),
        );
        for format in Format::ALL {
            let Ok(enc) = encode(&doc.value, format, &keep) else {
                continue;
            };
            report(
                &format!("wirelens {} encode (with spans)", format.title()),
                enc.bytes.len(),
                median(|| encode(&doc.value, format, &keep)),
            );
            report(
                &format!("wirelens {} decode (with spans)", format.title()),
                enc.bytes.len(),
                median(|| decode(&enc.bytes, format, &opts)),
            );
            match format {
                Format::MessagePack => report(
                    "rmpv::Value decode",
                    enc.bytes.len(),
                    median(|| rmpv::decode::read_value(&mut &enc.bytes[..])),
                ),
                Format::Cbor => report(
                    "ciborium::Value decode",
                    enc.bytes.len(),
                    median(|| ciborium::from_reader::<ciborium::Value, _>(&enc.bytes[..])),
                ),
                Format::Json | Format::Protobuf => {}
            }
        }
    }
}
