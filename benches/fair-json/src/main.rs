//! JSON decode by wirelens (into `Value` with spans) against `serde_json::Value` built with
//! serde_json's default features, the serde_json most services have. Inside the main crate's
//! benches serde_json gets `arbitrary_precision` and `preserve_order` from the dev-dependencies,
//! which makes it slower; this crate has its own workspace so it does not.
//!
//! `cargo run --release --manifest-path benches/fair-json/Cargo.toml -- FILE… [ROUNDS]`
//!
//! Each round decodes the file once with each, in alternating order, so both see the same
//! moments of a noisy machine; the values are dropped outside the timed region. Prints the
//! median time of each and their ratio (serde_json ÷ wirelens: above 1 means wirelens is
//! faster).

#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use wirelens::codec::{decode, DecodeOptions, Format};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ours(bytes: &[u8], options: &DecodeOptions) -> Duration {
    let t = Instant::now();
    let doc = decode(black_box(bytes), Format::Json, options);
    let elapsed = t.elapsed();
    assert!(doc.is_ok(), "wirelens could not decode the file");
    drop(doc);
    elapsed
}

fn theirs(bytes: &[u8]) -> Duration {
    let t = Instant::now();
    let value = serde_json::from_slice::<serde_json::Value>(black_box(bytes));
    let elapsed = t.elapsed();
    assert!(value.is_ok(), "serde_json could not decode the file");
    drop(value);
    elapsed
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = match args.last().and_then(|a| a.parse::<usize>().ok()) {
        Some(n) => {
            args.pop();
            n
        }
        None => 200,
    };
    let options = DecodeOptions::default();
    println!(
        "{:<28} {:>10} {:>14} {:>14} {:>8}",
        "file", "bytes", "wirelens", "serde_json", "ratio"
    );
    for path in &args {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        };
        for _ in 0..3 {
            ours(&bytes, &options);
            theirs(&bytes);
        }
        let (mut a, mut b) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
        for i in 0..rounds {
            if i % 2 == 0 {
                a.push(ours(&bytes, &options));
                b.push(theirs(&bytes));
            } else {
                b.push(theirs(&bytes));
                a.push(ours(&bytes, &options));
            }
        }
        let (a, b) = (median(a), median(b));
        let name = std::path::Path::new(path)
            .file_name()
            .map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        println!(
            "{:<28} {:>10} {:>11.3} ms {:>11.3} ms {:>8.2}",
            name,
            bytes.len(),
            a.as_secs_f64() * 1e3,
            b.as_secs_f64() * 1e3,
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
}
