//! Every adapter prepares on real samples (its bytes decode back to its value, which its decode
//! job checks on its first output), and its timed routines produce what they claim.

use std::sync::atomic::AtomicBool;

use super::*;
use crate::codec::protobuf::infer::{infer, wrap_for_inferred, InferOptions};
use crate::codec::{decode, encode, DecodeOptions, EncodeOptions};
use crate::profile::bench::{BenchConfig, Bencher};

fn sample(name: &str) -> Value {
    let path = format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(path).expect("sample present");
    decode(&bytes, Format::Json, &DecodeOptions::default())
        .expect("sample decodes")
        .value
}

/// One prepared library: which, for which format, its adapter, and wirelens' bytes of that format.
type Prepared = (Library, Format, Box<dyn Adapter>, Vec<u8>);

fn prepare_all(value: &Value) -> Vec<Prepared> {
    let mut out = Vec::new();
    for format in Format::ALL {
        let (value, message) = if format == Format::Protobuf {
            let inferred = infer(value, &InferOptions::default()).expect("inferred");
            (
                wrap_for_inferred(value).into_owned(),
                Some(inferred.message),
            )
        } else {
            (value.clone(), None)
        };
        let options = EncodeOptions {
            message: message.clone(),
            ..EncodeOptions::default()
        };
        let encoded = encode(&value, format, &options).expect("encodes");
        let value = Arc::new(value);
        for &library in Library::for_format(format) {
            let source = Source {
                value: &value,
                bytes: &encoded.bytes,
                message: message.as_ref(),
            };
            let adapter = prepare(library, format, source)
                .unwrap_or_else(|e| panic!("{} / {}: {e}", library.name(), format.title()));
            out.push((library, format, adapter, encoded.bytes.clone()));
        }
    }
    out
}

#[test]
fn every_library_prepares_on_the_samples() {
    for name in ["risk-batch.json", "user-profile.json", "order-graphql.json"] {
        let value = sample(name);
        let all = prepare_all(&value);
        assert_eq!(all.len(), 12);
        for (library, format, adapter, wirelens) in &all {
            // The library's bytes are the format: wirelens decodes them to the same value
            // (JSON and MessagePack libraries keep every value of these samples).
            // Avro is read with the schema it was written by (inferred from the value).
            let options = DecodeOptions {
                avro: (*format == Format::Avro).then(|| {
                    crate::codec::avro::schema_for(&value, &EncodeOptions::default())
                        .expect("schema")
                }),
                ..DecodeOptions::default()
            };
            let back = decode(adapter.bytes(), *format, &options);
            assert!(
                back.is_ok(),
                "{name}: {} output does not decode",
                library.name()
            );
            if *library == Library::Wirelens {
                assert_eq!(adapter.bytes(), &wirelens[..]);
            }
            if *format != Format::Protobuf {
                // The same value as wirelens' own encoding in that format says (which may have
                // chosen a narrower float width than the JSON source's).
                // Libraries choose float widths their own way (cbor4ii and ciborium write float64
                // or float32 where wirelens writes the shortest exact width), so widths are
                // compared as numbers.
                let ours = decode(wirelens, *format, &options)
                    .expect("wirelens' own bytes decode")
                    .value;
                assert_eq!(
                    back.map(|d| widened(&d.value)).ok(),
                    Some(widened(&ours)),
                    "{name}: {} changed the value",
                    library.name()
                );
            }
        }
    }
}

/// Sampling for a routine that is to run, not to be timed well: no warm-up, one sample.
fn one_sample() -> BenchConfig {
    BenchConfig {
        warm_up: std::time::Duration::ZERO,
        min_samples: 1,
        max_samples: 1,
        ..BenchConfig::quick()
    }
}

#[test]
fn encode_routines_write_the_library_bytes() {
    // The timed encode leaves its output in the bench buffer: it must equal the bytes decode
    // reads, so the two timed paths are the same data.
    let value = sample("risk-batch.json");
    let cfg = one_sample();
    let cancel = AtomicBool::new(false);
    for (library, format, adapter, _) in prepare_all(&value) {
        if library == Library::Wirelens {
            continue; // allocates its own output
        }
        let mut b = Bencher::new(&cfg, &cancel, 1 << 16, 1);
        adapter.encode(&mut b);
        assert_eq!(
            b.output(),
            adapter.bytes(),
            "{} {}: the timed encode wrote other bytes",
            library.name(),
            format.title()
        );
        assert!(b.finish().is_ok(), "{} {}", library.name(), format.title());
        let mut d = Bencher::new(&cfg, &cancel, 0, 1);
        adapter.decode(&mut d);
        let m = d.finish().expect("decode measured");
        assert!(m.ns.median > 0.0);
    }
}

#[test]
fn wrong_pairs_are_refused() {
    let value = Arc::new(Value::int(1));
    let source = Source {
        value: &value,
        bytes: b"1",
        message: None,
    };
    assert!(prepare(Library::Rmpv, Format::Json, source).is_err());
    assert!(prepare(Library::ProstReflect, Format::Protobuf, source).is_err());
    assert!(prepare(
        Library::SerdeJson,
        Format::Json,
        Source {
            bytes: b"{",
            ..source
        }
    )
    .is_err());
}

/// `value` with every float as a float64 of the same number.
fn widened(value: &Value) -> Value {
    match value {
        Value::Float(f) => Value::Float(crate::model::Float {
            value: f.value,
            width: crate::model::FloatWidth::F64,
        }),
        Value::Array(items) => Value::Array(items.iter().map(widened).collect()),
        Value::Map(entries) => Value::Map(
            entries
                .iter()
                .map(|(k, v)| (widened(k), widened(v)))
                .collect(),
        ),
        Value::Tag(t, inner) => Value::Tag(*t, Box::new(widened(inner))),
        other => other.clone(),
    }
}

/// The round trip is checked on the decode job's first output: a library's value read back from
/// its own bytes passes, another value fails the measurement with the mismatch, and a library
/// that decoded its value from its own bytes has nothing to check.
#[test]
fn round_trips_are_checked_on_the_first_decode() {
    let one = rmpv::Value::from(1);
    let check = RoundTrip::always(|| super::msgpack::write_rmpv(&one)).expect("written");
    let same: Result<rmpv::Value, String> = Ok(rmpv::Value::from(1));
    let other: Result<rmpv::Value, String> = Ok(rmpv::Value::from("1"));
    let failed: Result<rmpv::Value, String> = Err("cut short".into());
    let write = super::msgpack::write_rmpv;
    assert_eq!(check.check(Library::RmpSerde, &same, write), Ok(()));
    let e = check
        .check(Library::RmpSerde, &other, write)
        .expect_err("another value");
    assert!(e.contains("does not decode back"), "{e}");
    let e = check
        .check(Library::RmpSerde, &failed, write)
        .expect_err("no value");
    assert!(e.contains("cut short"), "{e}");
    let own = RoundTrip::new(b"x", b"x", || Err("not called".into())).expect("nothing to write");
    assert_eq!(own.check(Library::Rmpv, &other, write), Ok(()));
    // And a real adapter whose bytes differ from the ones it read (white space) measures its
    // decode, the check passing.
    let value = Arc::new(Value::int(0));
    let spaced = br#"{"b": [1, 2.5, "x"], "a": null}"#;
    let source = Source {
        value: &value,
        bytes: spaced,
        message: None,
    };
    let adapter = prepare(Library::SerdeJson, Format::Json, source).expect("prepared");
    assert_ne!(adapter.bytes(), &spaced[..]);
    let cfg = one_sample();
    let cancel = AtomicBool::new(false);
    let mut d = Bencher::new(&cfg, &cancel, 0, 1);
    adapter.decode(&mut d);
    assert!(d.finish().is_ok());
}
