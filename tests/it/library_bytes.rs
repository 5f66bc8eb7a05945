//! wirelens' default MessagePack and CBOR encodings against the bytes Python's `msgpack` and
//! `cbor2` write for the same data: every JSON, MessagePack and CBOR file of `samples/` and a
//! generated corpus, in `tests/fixtures/library-bytes/` (made by its `make.py` with the versions
//! pinned in its `requirements.txt`; `.ci/run` makes them again and fails on any change, so
//! they cannot drift from what those libraries write).
//!
//! The sizes the profiler and the inspector show by default are these encodings', so this is
//! what makes "MessagePack: N bytes" the number a Python service would send.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wirelens::codec::{decode, encode, DecodeOptions, EncodeOptions, FloatPolicy, Format};
use wirelens::diff::{diff, DiffOptions};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/library-bytes")
}

/// Where an input of the manifest is (`samples/…` in the repository, `corpus/…` beside it).
fn input_path(input: &str) -> PathBuf {
    match input.strip_prefix("samples/") {
        Some(name) => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("samples")
            .join(name),
        None => fixtures().join(input),
    }
}

fn format_of(name: &str) -> Format {
    match Path::new(name).extension().and_then(|e| e.to_str()) {
        Some("json") => Format::Json,
        Some("msgpack") => Format::MessagePack,
        Some("cbor") => Format::Cbor,
        other => panic!("{name}: no format for the extension {other:?}"),
    }
}

/// One line of MANIFEST.tsv.
struct Entry {
    input: String,
    format: Format,
    /// `Ok((size, sha256, file))`, or why Python could not write it.
    written: Result<(usize, String, String), String>,
}

fn manifest() -> Vec<Entry> {
    let text = std::fs::read_to_string(fixtures().join("MANIFEST.tsv")).expect("MANIFEST.tsv");
    let mut entries = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 6, "MANIFEST.tsv line {line:?}");
        let written = if cols[2] == "ok" {
            Ok((
                cols[3].parse().expect("a size"),
                cols[4].to_string(),
                cols[5].to_string(),
            ))
        } else {
            Err(cols[2].to_string())
        };
        entries.push(Entry {
            input: cols[0].to_string(),
            format: format_of(&format!("x.{}", cols[1])),
            written,
        });
    }
    entries
}

/// Where Python's bytes differ from wirelens' on purpose, and the paths where they do: Python
/// has no float32 or float16 (`msgpack.unpackb` and `cbor2.loads` read them as a float, which
/// is written as a float64, while wirelens keeps the width the source gave); cbor2 turns an
/// epoch-time tag 1 into a tag 0 text, cuts nanoseconds to microseconds, and writes NaN as a
/// float16 whatever its width.
const KNOWN: &[(&str, Format, &[&str])] = &[
    (
        "samples/edge-cases.msgpack",
        Format::MessagePack,
        &["$.float32"],
    ),
    (
        "samples/edge-cases.cbor",
        Format::Cbor,
        &[
            "$.float32",
            "$.created",
            "$.not_a_number",
            "$.float16",
            "$.epoch",
        ],
    ),
];

fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

#[test]
fn default_encodings_equal_the_bytes_python_libraries_write() {
    let entries = manifest();
    let mut compared = 0;
    let mut known_seen = 0;
    for entry in &entries {
        let path = input_path(&entry.input);
        let source = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let doc = decode(&source, format_of(&entry.input), &DecodeOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", entry.input));
        let ours = encode(&doc.value, entry.format, &EncodeOptions::default())
            .unwrap_or_else(|e| panic!("{} as {}: {e}", entry.input, entry.format.name()));
        let Ok((size, sha, file)) = &entry.written else {
            // Python could not write it (a datetime to MessagePack, a msgpack Timestamp to
            // CBOR); wirelens can, and that is all there is to check.
            assert!(!ours.bytes.is_empty(), "{}", entry.input);
            continue;
        };
        let theirs = std::fs::read(fixtures().join(file)).expect("the stored bytes");
        assert_eq!(theirs.len(), *size, "{file}: size in MANIFEST.tsv");
        assert_eq!(
            format!("{:x}", Sha256::digest(&theirs)),
            *sha,
            "{file}: SHA-256 in MANIFEST.tsv"
        );
        let known = KNOWN
            .iter()
            .find(|(input, format, _)| *input == entry.input && *format == entry.format);
        match known {
            None => {
                assert!(
                    ours.bytes == theirs,
                    "{} as {}: wirelens writes {} bytes, Python {} bytes; first difference at \
                     byte {}",
                    entry.input,
                    entry.format.name(),
                    ours.bytes.len(),
                    theirs.len(),
                    first_difference(&ours.bytes, &theirs)
                );
                compared += 1;
            }
            Some((_, format, paths)) => {
                assert_ne!(ours.bytes, theirs, "{}: no longer differs", entry.input);
                let a = decode(&ours.bytes, *format, &DecodeOptions::default()).expect("ours");
                let b = decode(&theirs, *format, &DecodeOptions::default()).expect("Python's");
                let options = DiffOptions {
                    strict_widths: true,
                    ..DiffOptions::default()
                };
                let d = diff(&a, &b, &options);
                let differing: Vec<String> = d.counted().map(|c| c.path.to_string()).collect();
                assert_eq!(differing, *paths, "{}: where Python differs", entry.input);
                known_seen += 1;
            }
        }
    }
    assert_eq!(known_seen, KNOWN.len(), "every known difference was met");
    // Six samples in JSON, MessagePack or CBOR forms, two formats each, and the corpus.
    assert!(compared >= 40, "compared only {compared} encodings");
}

/// Every JSON, MessagePack and CBOR sample has its Python bytes: a new sample cannot go
/// unchecked (run make.py).
#[test]
fn every_sample_has_its_python_bytes() {
    let entries = manifest();
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut names: Vec<String> = std::fs::read_dir(&samples)
        .expect("samples/")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") || n.ends_with(".msgpack") || n.ends_with(".cbor"))
        .collect();
    names.sort();
    assert!(names.len() >= 15, "{names:?}");
    for name in names {
        for format in [Format::MessagePack, Format::Cbor] {
            let input = format!("samples/{name}");
            assert!(
                entries
                    .iter()
                    .any(|e| e.input == input && e.format == format),
                "{input} as {} is not in tests/fixtures/library-bytes/MANIFEST.tsv: run make.py",
                format.name()
            );
        }
    }
}

/// The shortest-floats variant is what wirelens wrote by default before: smaller where a float
/// fits a narrower width, and read back as the same numbers.
#[test]
fn shortest_floats_shrink_iot_metrics_and_keep_the_numbers() {
    let path = input_path("samples/iot-metrics.json");
    let doc = decode(
        &std::fs::read(path).expect("sample"),
        Format::Json,
        &DecodeOptions::default(),
    )
    .expect("decodes");
    let shortest = EncodeOptions {
        floats: FloatPolicy::Shortest,
        ..EncodeOptions::default()
    };
    // Python's msgpack and cbor2 write 80 bytes each (MANIFEST.tsv). Of the metrics 24.5, 26.1
    // and 25.8 only 24.5 fits a narrower width exactly: a float32 in MessagePack (4 bytes
    // saved), a float16 in CBOR (6 saved); 26.1 and 25.8 stay float64.
    for (format, library, narrowed) in [(Format::MessagePack, 80, 76), (Format::Cbor, 80, 74)] {
        let keep = encode(&doc.value, format, &EncodeOptions::default()).expect("keep");
        let short = encode(&doc.value, format, &shortest).expect("shortest");
        assert_eq!(keep.bytes.len(), library, "{}", format.name());
        assert_eq!(short.bytes.len(), narrowed, "{}", format.name());
        let back = decode(&short.bytes, format, &DecodeOptions::default()).expect("reads");
        let options = DiffOptions::default();
        let d = diff(&doc, &back, &options);
        assert!(d.same_meaning(), "{}: {}", format.name(), d.summary());
    }
}
