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
        // Avro's bytes were written by the schema inferred from the value: every library reads
        // them by it.
        let avro = (format == Format::Avro).then(|| {
            crate::codec::avro::schema_for(&value, &EncodeOptions::default()).expect("schema")
        });
        let value = Arc::new(value);
        for &library in Library::for_format(format) {
            let source = Source {
                value: &value,
                bytes: &encoded.bytes,
                message: message.as_ref(),
                avro: avro.as_ref(),
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
        assert_eq!(all.len(), 13);
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
        avro: None,
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
    let write = <super::msgpack::RmpSerde as super::Codec>::canonical;
    let check =
        RoundTrip::always(|| write(&one).map_err(|e| PrepareError::failed(Library::Rmpv, e)))
            .expect("written");
    let same: Result<rmpv::Value, String> = Ok(rmpv::Value::from(1));
    let other: Result<rmpv::Value, String> = Ok(rmpv::Value::from("1"));
    let failed: Result<rmpv::Value, String> = Err("cut short".into());
    assert_eq!(check.check(Library::RmpSerde, &same, write), Ok(()));
    let e = check
        .check(Library::RmpSerde, &other, write)
        .expect_err("another value");
    assert!(e.contains("does not decode back"), "{e}");
    let e = check
        .check(Library::RmpSerde, &failed, write)
        .expect_err("no value");
    assert!(e.contains("cut short"), "{e}");
    let own =
        RoundTrip::new(b"x", b"x", || Err(PrepareError::NoMessageType)).expect("nothing to write");
    assert_eq!(own.check(Library::Rmpv, &other, write), Ok(()));
    // And a real adapter whose bytes differ from the ones it read (white space) measures its
    // decode, the check passing.
    let value = Arc::new(Value::int(0));
    let spaced = br#"{"b": [1, 2.5, "x"], "a": null}"#;
    let source = Source {
        value: &value,
        bytes: spaced,
        message: None,
        avro: None,
    };
    let adapter = prepare(Library::SerdeJson, Format::Json, source).expect("prepared");
    assert_ne!(adapter.bytes(), &spaced[..]);
    let cfg = one_sample();
    let cancel = AtomicBool::new(false);
    let mut d = Bencher::new(&cfg, &cancel, 0, 1);
    adapter.decode(&mut d);
    assert!(d.finish().is_ok());
}

/// Every bundled sample (JSON, MessagePack, CBOR) written as Avro by the schema wirelens infers:
/// the `apache-avro` crate reads wirelens' datum and writes the same bytes back (both follow the
/// specification, which leaves a datum one encoding), and its timed decode reads them back.
#[test]
fn apache_avro_writes_wirelens_bytes_on_every_sample() {
    let dir = format!("{}/samples", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("samples")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    let cfg = one_sample();
    let cancel = AtomicBool::new(false);
    let mut compared = Vec::new();
    let mut with_maps = Vec::new();
    for name in &names {
        let format = match name.rsplit('.').next() {
            Some("json") => Format::Json,
            Some("msgpack") => Format::MessagePack,
            Some("cbor") => Format::Cbor,
            _ => continue,
        };
        let bytes = std::fs::read(format!("{dir}/{name}")).expect("sample");
        let value = decode(&bytes, format, &DecodeOptions::default())
            .expect("sample decodes")
            .value;
        let schema = crate::codec::avro::schema_for(&value, &EncodeOptions::default())
            .unwrap_or_else(|e| panic!("{name}: no Avro schema: {e}"));
        let options = EncodeOptions {
            avro: Some(schema.clone()),
            ..EncodeOptions::default()
        };
        let ours = encode(&value, Format::Avro, &options)
            .unwrap_or_else(|e| panic!("{name}: wirelens cannot write it as Avro: {e}"))
            .bytes;
        let value = Arc::new(value);
        let source = Source {
            value: &value,
            bytes: &ours,
            message: None,
            avro: Some(&schema),
        };
        let adapter = prepare(Library::ApacheAvro, Format::Avro, source)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let theirs = adapter.bytes();
        if schema.canonical_form().contains(r#""type":"map""#) {
            // The crate writes a map's entries in its HashMap's order: the same entries, the
            // same size, and wirelens reads them as the same value once entries are in key
            // order.
            with_maps.push(name.as_str());
            assert_eq!(theirs.len(), ours.len(), "{name}");
            let read = |bytes: &[u8]| {
                let options = DecodeOptions {
                    avro: Some(schema.clone()),
                    ..DecodeOptions::default()
                };
                let value = decode(bytes, Format::Avro, &options)
                    .unwrap_or_else(|e| panic!("{name}: {e}"))
                    .value;
                keys_sorted(&value)
            };
            assert!(read(theirs) == read(&ours), "{name}: another value");
        } else {
            let first = theirs.iter().zip(&ours).position(|(a, b)| a != b);
            assert!(
                theirs == &ours[..],
                "{name}: apache-avro wrote {} bytes, wirelens {}, first difference at {first:?}: \
             {:02x?} against {:02x?}\n{}",
                theirs.len(),
                ours.len(),
                &theirs[first.unwrap_or(0)..(first.unwrap_or(0) + 16).min(theirs.len())],
                &ours[first.unwrap_or(0)..(first.unwrap_or(0) + 16).min(ours.len())],
                schema.text()
            );
        }
        let mut e = Bencher::new(&cfg, &cancel, ours.len() + 1024, 1);
        adapter.encode(&mut e);
        assert_eq!(e.output(), adapter.bytes(), "{name}: the timed encode");
        assert!(e.finish().is_ok(), "{name}: encode measured");
        let mut d = Bencher::new(&cfg, &cancel, 0, 1);
        adapter.decode(&mut d);
        assert!(d.finish().is_ok(), "{name}: decode measured");
        compared.push(name.as_str());
    }
    // Every JSON, MessagePack and CBOR sample, the ones with odd values included.
    assert!(compared.contains(&"edge-cases.cbor"), "{compared:?}");
    assert!(compared.contains(&"transactions-15k.json"), "{compared:?}");
    assert_eq!(compared.len(), 18, "{compared:?}");
    // Byte for byte on every sample whose schema has no map of two or more entries.
    assert_eq!(with_maps, ["edge-cases.cbor", "edge-cases.msgpack"]);
}

/// `value` with every map's entries in the order of their keys (as debug-printed).
fn keys_sorted(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(keys_sorted).collect()),
        Value::Map(entries) => {
            let mut entries: Vec<(Value, Value)> = entries
                .iter()
                .map(|(k, v)| (keys_sorted(k), keys_sorted(v)))
                .collect();
            entries.sort_by_cached_key(|(k, _)| format!("{k:?}"));
            Value::Map(entries)
        }
        Value::Tag(t, inner) => Value::Tag(*t, Box::new(keys_sorted(inner))),
        other => other.clone(),
    }
}

/// The crate's row needs the schema the bytes were written with, and says what it cannot read:
/// bytes cut short, or bytes left over after the datum.
#[test]
fn apache_avro_needs_the_schema_and_says_what_it_cannot_read() {
    let value = Arc::new(
        decode(
            br#"{"id": 300, "name": "ada"}"#,
            Format::Json,
            &DecodeOptions::default(),
        )
        .expect("json")
        .value,
    );
    let schema = crate::codec::avro::schema_for(&value, &EncodeOptions::default()).expect("schema");
    let options = EncodeOptions {
        avro: Some(schema.clone()),
        ..EncodeOptions::default()
    };
    let bytes = encode(&value, Format::Avro, &options).expect("avro").bytes;
    let source = Source {
        value: &value,
        bytes: &bytes,
        message: None,
        avro: None,
    };
    let e = prepare(Library::ApacheAvro, Format::Avro, source)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        e.as_deref(),
        Some("apache-avro needs the schema the bytes were written with")
    );
    let with = |bytes: &[u8]| {
        prepare(
            Library::ApacheAvro,
            Format::Avro,
            Source {
                bytes,
                avro: Some(&schema),
                ..source
            },
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
    };
    // The crate reads a string cut short as null (its decoder's way of telling the end of the
    // input), which its writer then refuses: either way the row is not timed.
    let cut = with(&bytes[..bytes.len() - 1]);
    assert!(cut.starts_with("apache-avro: "), "{cut}");
    let cut = with(&bytes[..1]);
    assert!(cut.starts_with("apache-avro: reading: "), "{cut}");
    let mut longer = bytes.clone();
    longer.push(0);
    let left = with(&longer);
    assert_eq!(
        left,
        format!(
            "apache-avro: the datum ends at byte {} of {}",
            bytes.len(),
            longer.len()
        )
    );
    assert!(with(&bytes).is_empty(), "the whole datum reads");
    // Not a pair the crate handles.
    assert!(prepare(
        Library::ApacheAvro,
        Format::Json,
        Source {
            avro: Some(&schema),
            ..source
        }
    )
    .is_err());
}
