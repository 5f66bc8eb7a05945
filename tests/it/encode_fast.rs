//! `codec::encode_fast` (no output spans) writes exactly what `codec::encode` writes, with the
//! same notes and errors, on every sample and corpus file, in every format and option set.
//!
//! The fast encoders skip the span bookkeeping and give up at the first note or error (the full
//! encoder then runs), so the equality that matters is that of the bytes when nothing is noted:
//! checked here on every input, and the note-giving inputs check the fallback.

use std::path::{Path, PathBuf};

use wirelens::codec::{
    decode, encode, encode_fast, DecodeOptions, EncodeOptions, FloatPolicy, Format,
};
use wirelens::model::{Float, Value};

use crate::common::data;

/// Every option set the encoders branch on.
fn option_sets() -> Vec<EncodeOptions> {
    let mut sets = Vec::new();
    for canonical in [false, true] {
        for floats in [FloatPolicy::Shortest, FloatPolicy::Keep] {
            for pretty in [false, true] {
                sets.push(EncodeOptions {
                    canonical,
                    floats,
                    pretty,
                    message: None,
                    avro: None,
                    avro_logical: false,
                });
            }
        }
    }
    sets
}

/// Encodes `value` both ways in JSON, MessagePack and CBOR under every option set and asserts
/// the results agree; returns how many encodings gave notes.
fn agree(value: &Value, what: &str) -> usize {
    let mut noted = 0;
    for format in [Format::Json, Format::MessagePack, Format::Cbor] {
        for options in option_sets() {
            let full = encode(value, format, &options);
            let fast = encode_fast(value, format, &options);
            match (full, fast) {
                (Ok(full), Ok(fast)) => {
                    assert!(
                        fast.bytes == full.bytes,
                        "{what} as {format} {options:?}: bytes differ"
                    );
                    assert_eq!(fast.notes, full.notes, "{what} as {format} {options:?}");
                    assert!(fast.spans.is_empty(), "{what}: encode_fast gave spans");
                    assert!(!full.spans.is_empty(), "{what}: encode gave no spans");
                    noted += usize::from(!full.notes.is_empty());
                }
                (Err(full), Err(fast)) => assert_eq!(fast, full, "{what} as {format}"),
                (full, fast) => panic!(
                    "{what} as {format} {options:?}: encode {:?} but encode_fast {:?}",
                    full.map(|e| e.bytes.len()),
                    fast.map(|e| e.bytes.len())
                ),
            }
        }
    }
    noted
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn encode_fast_matches_encode_on_samples() {
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut files = Vec::new();
    files_under(&samples, &mut files);
    let mut checked = 0;
    let mut noted = 0;
    for path in &files {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let Some(format) = Format::from_extension(ext).filter(|f| *f != Format::Protobuf) else {
            continue;
        };
        let bytes = std::fs::read(path).expect("sample");
        let doc = decode(&bytes, format, &DecodeOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        noted += agree(&doc.value, &path.display().to_string());
        checked += 1;
    }
    // JSON, MessagePack and CBOR samples (transactions, iot-metrics, edge cases, ...).
    assert!(checked >= 15, "only {checked} samples found");
    // edge-cases.* carry values other formats cannot say: the fallback path is exercised.
    assert!(noted > 0, "no sample gave a note");
}

#[test]
fn encode_fast_matches_encode_on_json_corpus() {
    let mut files = Vec::new();
    files_under(&data("json-bench"), &mut files);
    files_under(&data("json-test-suite"), &mut files);
    let mut checked = 0;
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let bytes = std::fs::read(path).expect("corpus file");
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        // The suite's n_ files are rejected and its i_ files may be: only what decodes is
        // encoded. Its y_ files and the benchmark files must decode.
        let must = name.starts_with("y_") || !name.starts_with(['n', 'i']);
        match decode(&bytes, Format::Json, &DecodeOptions::default()) {
            Ok(doc) => {
                agree(&doc.value, &path.display().to_string());
                checked += 1;
            }
            Err(e) => assert!(!must, "{}: {e}", path.display()),
        }
    }
    assert!(checked > 100, "only {checked} JSON corpus files decoded");
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    let digits: Vec<u8> = hex.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits
        .chunks(2)
        .map(|pair| {
            let text = std::str::from_utf8(pair).expect("hex digits");
            u8::from_str_radix(text, 16).expect("hex byte")
        })
        .collect()
}

#[test]
fn encode_fast_matches_encode_on_binary_corpora() {
    // RFC 8949 appendix A: every well-formed example.
    let text = std::fs::read_to_string(data("cbor-test-vectors/appendix_a.json")).expect("file");
    let vectors: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut cbor = 0;
    for case in vectors.as_array().expect("array") {
        let hex = case["hex"].as_str().expect("hex");
        if let Ok(doc) = decode(&hex_bytes(hex), Format::Cbor, &DecodeOptions::default()) {
            agree(&doc.value, &format!("CBOR {hex}"));
            cbor += 1;
        }
    }
    assert!(cbor > 70, "only {cbor} CBOR vectors decoded");
    // The MessagePack test suite: every listed encoding of every case.
    let text = std::fs::read_to_string(data("msgpack-test-suite/dist/msgpack-test-suite.json"))
        .expect("suite file");
    let suite: serde_json::Value = serde_json::from_str(&text).expect("suite json");
    let mut msgpack = 0;
    for list in suite.as_object().expect("object").values() {
        for case in list.as_array().expect("cases") {
            for hex in case["msgpack"].as_array().expect("list") {
                let hex = hex.as_str().expect("hex");
                let bytes = hex_bytes(hex);
                if let Ok(doc) = decode(&bytes, Format::MessagePack, &DecodeOptions::default()) {
                    agree(&doc.value, &format!("MessagePack {hex}"));
                    msgpack += 1;
                }
            }
        }
    }
    assert!(
        msgpack > 100,
        "only {msgpack} MessagePack encodings decoded"
    );
}

#[test]
fn encode_fast_falls_back_for_notes_and_errors() {
    // Repeated keys in small and large maps, a float16, a non-finite float, a non-text key, a
    // bad decimal: each gives a note or an error in at least one format.
    let big: Vec<(Value, Value)> = (0..40)
        .map(|i| (Value::text(format!("k{}", i % 30)), Value::Int(i)))
        .collect();
    let cases = [
        Value::object([("a", Value::Int(1)), ("a", Value::Int(2))]),
        Value::Map(big),
        Value::Float(Float::f16(half::f16::from_f32(1.5))),
        Value::f64(f64::NAN),
        Value::Map(vec![(Value::Int(1), Value::text("one"))]),
        Value::Array(vec![Value::Decimal("1.2.3".into())]),
        Value::Array(vec![Value::Undefined, Value::Simple(99)]),
    ];
    let mut noted = 0;
    for v in &cases {
        noted += agree(v, &v.summary(60));
    }
    assert!(noted >= cases.len(), "only {noted} encodings gave notes");
    // The large map's note names the first repeated key in every format.
    let e = encode_fast(&cases[1], Format::Json, &EncodeOptions::default()).expect("encodes");
    assert!(
        e.notes.iter().any(|n| n.message.contains("\"k0\"")),
        "{:?}",
        e.notes
    );
}

#[test]
fn encode_fast_strings_need_every_escape() {
    // Strings long enough for the eight-bytes-at-a-time scan, with each escaped byte at every
    // offset of a word, against serde_json.
    for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', '\u{8}'] {
        for at in 0..17 {
            let mut s: String = "abcdefghijklmnopqrstuvwxyz".chars().take(20).collect();
            s.insert(at, special);
            s.push_str("é\u{7f} ~");
            let v = Value::text(s.clone());
            let e = encode_fast(&v, Format::Json, &EncodeOptions::default()).expect("encodes");
            assert_eq!(
                String::from_utf8(e.bytes).expect("utf8"),
                serde_json::to_string(&s).expect("serde_json"),
                "{s:?}"
            );
        }
    }
}
