//! Detection accuracy: on every sample and conformance corpus the best-ranked reading is the
//! format the bytes were written in, except for the listed cases that are genuinely ambiguous
//! (where the right format must still be among the complete readings); and random bytes are not
//! taken for a format with confidence.

use crate::common;

use common::data;
use wirelens::capture::{peel, peel_readings, PeelOptions};
use wirelens::codec::detect::detect;
use wirelens::codec::detect::CONFIDENT;
use wirelens::codec::protobuf::schema::Schema;
use wirelens::codec::{DecodeOptions, Format};

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))).expect("sample")
}

fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|c| c.is_ascii_hexdigit()).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).expect("ascii"), 16).expect("hex"))
        .collect()
}

fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The format ranked first for `bytes` (no hint: the test is about the bytes alone).
fn top(bytes: &[u8], options: &DecodeOptions) -> (Format, u8) {
    let r = detect(bytes, None, options);
    (r[0].format, r[0].confidence)
}

/// Whether `format` is among the complete readings of `bytes`.
fn among(bytes: &[u8], format: Format) -> bool {
    detect(bytes, None, &DecodeOptions::default())
        .iter()
        .any(|r| r.format == format && r.is_complete())
}

/// Checks `cases` (name, bytes) all detect as `want`, except those in `ambiguous` (by hex), which
/// must have `want` among their complete readings; every ambiguous entry must be used, so the
/// list cannot go stale.
fn check_corpus(what: &str, want: Format, cases: &[(String, Vec<u8>)], ambiguous: &[(&str, &str)]) {
    let options = DecodeOptions::default();
    let mut misses = Vec::new();
    let mut used = vec![false; ambiguous.len()];
    for (name, bytes) in cases {
        let h = to_hex(bytes);
        if let Some(i) = ambiguous.iter().position(|(x, _)| *x == h) {
            used[i] = true;
            assert!(
                among(bytes, want),
                "{what} {name} ({h}): {} is not among the complete readings",
                want.name()
            );
            continue;
        }
        let readings = detect(bytes, None, &options);
        let (got, conf) = (readings[0].format, readings[0].confidence);
        if got != want {
            misses.push(format!("{name} {h}: {} ({conf}%)", got.name()));
        } else if readings.get(1).is_some_and(|r| r.confidence == conf) {
            // First only by the order formats are tried in: as ambiguous as a miss.
            misses.push(format!(
                "{name} {h}: tied with {} ({conf}%)",
                readings[1].format.name()
            ));
        }
    }
    assert!(
        misses.is_empty(),
        "{what}: {} of {} not read as {} first:\n{}",
        misses.len(),
        cases.len(),
        want.name(),
        misses.join("\n")
    );
    let stale: Vec<_> = ambiguous
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(a, _)| a.0)
        .collect();
    assert!(
        stale.is_empty(),
        "{what}: listed but not in the corpus: {stale:?}"
    );
}

#[test]
fn samples_read_as_their_format() {
    let options = DecodeOptions::default();
    let mut checked = 0;
    for entry in std::fs::read_dir(format!("{}/samples", env!("CARGO_MANIFEST_DIR"))).expect("dir")
    {
        let path = entry.expect("entry").path();
        let want = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => Format::Json,
            Some("msgpack") => Format::MessagePack,
            Some("cbor") => Format::Cbor,
            _ => continue,
        };
        let bytes = std::fs::read(&path).expect("read");
        let (got, conf) = top(&bytes, &options);
        assert_eq!(got, want, "{}", path.display());
        assert!(conf >= CONFIDENT, "{}: only {conf}%", path.display());
        checked += 1;
    }
    assert!(checked >= 15, "{checked} samples");
}

#[test]
fn protobuf_samples_read_as_protobuf_with_their_schema() {
    for (proto, pb) in [
        ("user-profile.proto", "user-profile.pb"),
        ("transactions.proto", "transactions-1k.pb"),
    ] {
        let dir = format!("{}/samples", env!("CARGO_MANIFEST_DIR"));
        let schema = Schema::from_proto_files(
            &[std::path::PathBuf::from(format!("{dir}/{proto}"))],
            &[std::path::PathBuf::from(&dir)],
        )
        .expect("schema");
        let bytes = sample(pb);
        let mut options = DecodeOptions::default();
        options.message = schema
            .rank(&bytes, &options)
            .first()
            .map(|c| c.message.clone());
        assert!(options.message.is_some(), "{pb}: no type fits");
        let (got, conf) = top(&bytes, &options);
        assert_eq!(got, Format::Protobuf, "{pb}");
        assert!(conf >= CONFIDENT, "{pb}: {conf}%");
    }
}

#[test]
fn protobuf_corpus_reads_as_protobuf_with_its_schema() {
    let cases = [
        ("protobuf/descriptor_set.pb", "protobuf/descriptor_set.pb"),
        // An editions set (a schema too, once lowered), read here as the FileDescriptorSet it
        // is, with descriptor.proto's types.
        (
            "protobuf/unittest_descriptor_set.pb",
            "protobuf/descriptor_set.pb",
        ),
        (
            "protobuf/descriptor_set.protoc35.pb",
            "protobuf/descriptor_set.pb",
        ),
        (
            "protobuf/wkt_descriptor_set.pb",
            "protobuf/descriptor_set.pb",
        ),
        (
            "protoscope/testdata/message.pb",
            "protoscope/testdata/unittest.proto.pb",
        ),
        (
            "protoscope/testdata/maps.pb",
            "protoscope/testdata/unittest.proto.pb",
        ),
        (
            "protoscope/testdata/oneof.pb",
            "protoscope/testdata/unittest.proto.pb",
        ),
        (
            "protoscope/testdata/packed.pb",
            "protoscope/testdata/unittest.proto.pb",
        ),
        (
            "protoscope/testdata/packed-big.pb",
            "protoscope/testdata/unittest.proto.pb",
        ),
        (
            "protoscope/testdata/proto3.pb",
            "protoscope/testdata/unittest.proto.pb",
        ),
    ];
    let mut misses = Vec::new();
    for (payload, set) in cases {
        let schema =
            Schema::from_descriptor_set(&std::fs::read(data(set)).expect("set")).expect("loads");
        let bytes = std::fs::read(data(payload)).expect("payload");
        let mut options = DecodeOptions::default();
        options.message = schema
            .rank(&bytes, &options)
            .first()
            .map(|c| c.message.clone());
        let fits = options.message.as_ref().is_some_and(|m| {
            wirelens::codec::protobuf::dynamic::decode(&bytes, m, &options).is_ok()
        });
        if !fits {
            // No type of the schema reads it: the schema-less reading must still win.
            options.message = None;
        }
        let (got, conf) = top(&bytes, &options);
        if got != Format::Protobuf || (fits && conf < CONFIDENT) {
            misses.push(format!("{payload}: {} ({conf}%)", got.name()));
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

#[test]
fn json_test_suite_accepted_files_read_as_json() {
    let dir = data("json-test-suite/test_parsing");
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("suite dir") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if name.starts_with("y_") {
            cases.push((name, std::fs::read(&path).expect("read")));
        }
    }
    assert!(cases.len() > 90, "{} y_ files", cases.len());
    check_corpus("JSONTestSuite", Format::Json, &cases, &[]);
}

#[test]
fn msgpack_suite_reads_as_msgpack() {
    let text = std::fs::read_to_string(data("msgpack-test-suite/dist/msgpack-test-suite.json"))
        .expect("suite");
    let suite: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut cases = Vec::new();
    for (file, list) in suite.as_object().expect("object") {
        for case in list.as_array().expect("array") {
            for h in case["msgpack"].as_array().expect("list") {
                let h = h.as_str().expect("hex");
                cases.push((format!("{file} {h}"), hex(h)));
            }
        }
    }
    assert!(cases.len() > 200, "{} encodings", cases.len());
    check_corpus(
        "MessagePack suite",
        Format::MessagePack,
        &cases,
        MSGPACK_AMBIGUOUS,
    );
}

#[test]
fn cbor_appendix_a_reads_as_cbor() {
    let text = std::fs::read_to_string(data("cbor-test-vectors/appendix_a.json")).expect("vectors");
    let vectors: serde_json::Value = serde_json::from_str(&text).expect("json");
    let cases: Vec<(String, Vec<u8>)> = vectors
        .as_array()
        .expect("array")
        .iter()
        .map(|v| {
            let h = v["hex"].as_str().expect("hex");
            (format!("appendix A {h}"), hex(h))
        })
        // Not well-formed since RFC 8949; checked in its own test below.
        .filter(|(name, _)| !name.ends_with("f818"))
        .collect();
    check_corpus("CBOR Appendix A", Format::Cbor, &cases, CBOR_AMBIGUOUS);
}

/// MessagePack suite encodings that another format reads at least as well: one byte that is a
/// complete value in both formats, with nothing to tell them apart.
const MSGPACK_AMBIGUOUS: &[(&str, &str)] = &[
    ("00", "positive fixint 0 is also the CBOR integer 0"),
    ("01", "positive fixint 1 is also the CBOR integer 1"),
    ("a0", "the empty fixstr is also an empty CBOR map"),
    ("80", "the empty fixmap is also an empty CBOR array"),
];

/// CBOR Appendix A vectors that another format reads at least as well: one byte that is a
/// complete value in both formats, with nothing to tell them apart.
const CBOR_AMBIGUOUS: &[(&str, &str)] = &[
    ("00", "the integer 0 is also MessagePack positive fixint 0"),
    ("01", "the integer 1 is also MessagePack positive fixint 1"),
    (
        "0a",
        "the integer 10 is also MessagePack positive fixint 10",
    ),
    (
        "17",
        "the integer 23 is also MessagePack positive fixint 23",
    ),
    (
        "20",
        "the integer -1 is also MessagePack positive fixint 32",
    ),
    (
        "29",
        "the integer -10 is also MessagePack positive fixint 41",
    ),
    (
        "40",
        "the empty byte string is also MessagePack positive fixint 64",
    ),
    (
        "60",
        "the empty text string is also MessagePack positive fixint 96",
    ),
    ("80", "the empty array is also an empty MessagePack map"),
    ("f0", "simple(16) is also MessagePack negative fixint -16"),
    ("f4", "false is also MessagePack negative fixint -12"),
    ("f5", "true is also MessagePack negative fixint -11"),
    ("f6", "null is also MessagePack negative fixint -10"),
    ("f7", "undefined is also MessagePack negative fixint -9"),
];

/// Appendix A (from RFC 7049) lists `f818`, simple(24) in two bytes, which RFC 8949 made not
/// well-formed; the decoder rejects it, so it is checked apart: CBOR must not read it completely.
#[test]
fn cbor_simple_24_in_two_bytes_is_not_read_as_complete_cbor() {
    assert!(!among(&hex("f818"), Format::Cbor));
}

/// protoscope's `groups.pb` is malformed on purpose (end-group tags without a start): no format
/// may claim it with confidence, and the protobuf reading stops at a fault.
#[test]
fn protoscope_malformed_groups_are_not_claimed() {
    let bytes = std::fs::read(data("protoscope/testdata/groups.pb")).expect("groups.pb");
    let readings = detect(&bytes, None, &DecodeOptions::default());
    assert!(
        readings[0].confidence < CONFIDENT,
        "{:?}",
        readings[0].reasons
    );
    assert!(!among(&bytes, Format::Protobuf));
}

/// A small seeded generator (SplitMix64), so the random buffers are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn buffer(&mut self, max: usize) -> Vec<u8> {
        let len = 1 + (self.next() % max as u64) as usize;
        (0..len).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn random_bytes_are_not_read_with_confidence() {
    let options = DecodeOptions::default();
    let mut rng = Rng(0x005e_ed0f_cafe);
    let total = 10_000;
    let mut misses = Vec::new();
    for _ in 0..total {
        let bytes = rng.buffer(4096);
        let readings = detect(&bytes, None, &options);
        if readings[0].confidence >= CONFIDENT {
            misses.push(format!(
                "{} bytes {}…: {} ({}%) {}",
                bytes.len(),
                to_hex(&bytes[..bytes.len().min(12)]),
                readings[0].format.name(),
                readings[0].confidence,
                readings[0].reasons.join("; ")
            ));
        }
    }
    eprintln!(
        "{} of {total} random buffers at or above {CONFIDENT}%:\n{}",
        misses.len(),
        misses.join("\n")
    );
    // At least 99% below the threshold.
    assert!(misses.len() * 100 <= total, "{} misses", misses.len());
}

#[test]
fn random_bytes_are_not_split_into_streams_or_layers() {
    let options = DecodeOptions::default();
    let mut rng = Rng(0xf00d_1234);
    let total = 2_000;
    let mut split = Vec::new();
    let mut confident = Vec::new();
    for _ in 0..total {
        let bytes = rng.buffer(1024);
        let peeled = peel(&bytes, &PeelOptions::default());
        if peeled.payloads.len() > 1 {
            split.push(format!(
                "{}: {} payloads via {}",
                to_hex(&bytes[..bytes.len().min(16)]),
                peeled.payloads.len(),
                peeled.payloads[0].provenance()
            ));
        }
        let readings = peel_readings(&bytes, &options, None);
        if readings[0].confidence >= CONFIDENT {
            confident.push(format!(
                "{}: {} ({}%)",
                to_hex(&bytes[..bytes.len().min(16)]),
                readings[0].layers(),
                readings[0].confidence
            ));
        }
    }
    eprintln!("split: {split:#?}\nconfident layer readings: {confident:#?}");
    assert!(split.len() * 1000 <= total, "{} split", split.len());
    assert!(
        confident.len() * 100 <= total,
        "{} confident",
        confident.len()
    );
}

#[test]
fn when_nothing_reads_whole_the_hinted_format_comes_first() {
    // A MessagePack str32 header claiming 4 GiB, cut short: its first bytes also start a
    // protobuf group that reads on to the end, but the file was named `.msgpack`.
    let bytes = hex("db ff ff ff ff 61");
    let unhinted = detect(&bytes, None, &DecodeOptions::default());
    assert!(unhinted.iter().all(|r| !r.is_complete()));
    assert_eq!(unhinted[0].format, Format::Protobuf, "{unhinted:?}");
    let hinted = detect(&bytes, Some(Format::MessagePack), &DecodeOptions::default());
    assert_eq!(hinted[0].format, Format::MessagePack);
    let error = hinted[0].outcome.as_ref().expect_err("cut short");
    assert!(error.message.contains("4294967295"), "{}", error.message);
    // A hint never lifts a failed reading above a complete one: bytes that are whole JSON stay
    // JSON whatever the file is called.
    let json = br#"{"a":[1,2]}"#;
    let r = detect(json, Some(Format::MessagePack), &DecodeOptions::default());
    assert_eq!(r[0].format, Format::Json);
    assert!(r[0].is_complete());
}

#[test]
fn a_hinted_reading_that_fails_near_the_end_stays_below_complete_readings() {
    // A whole MessagePack value, then one byte more: nearly all of it read, still not complete.
    // Named `.msgpack`, it takes 40, the top of the failed readings' range (11 of 12 bytes read
    // would otherwise score 36, and 41 with the hint: a complete reading's score).
    let mut bytes = hex("81 a3 6b 65 79 a5 76 61 6c 75 65");
    bytes.push(0xc0);
    let r = detect(&bytes, Some(Format::MessagePack), &DecodeOptions::default());
    let msgpack = r
        .iter()
        .find(|x| x.format == Format::MessagePack)
        .expect("a MessagePack reading");
    assert!(!msgpack.is_complete());
    assert_eq!(msgpack.confidence, 40);
    assert!(msgpack.confidence < CONFIDENT);
}

#[test]
fn a_text_content_type_is_a_text_verdict_and_no_format_ranks_above_it() {
    use wirelens::capture::verdict::{verdict, Verdict};
    for (content_type, media) in [
        ("text/html; charset=utf-8", "text/html"),
        ("text/plain", "text/plain"),
        ("text/css", "text/css"),
        ("application/javascript", "application/javascript"),
        ("image/svg+xml", "image/svg+xml"),
    ] {
        // A body that CBOR and MessagePack read a few bytes of.
        let body = "\u{7f}a{b} c: d;";
        let message = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let peeled = peel(message.as_bytes(), &PeelOptions::default());
        assert_eq!(peeled.payloads.len(), 1, "{content_type}");
        let body = &peeled.payloads[0];
        assert_eq!(
            verdict(body),
            Some(Verdict::Text {
                media_type: media.into(),
                said_by: "its Content-Type",
            }),
            "{content_type}"
        );
        let readings = peel_readings(message.as_bytes(), &DecodeOptions::default(), None);
        assert_eq!(
            readings[0].format, None,
            "{content_type}: {:?}",
            readings[0].reasons
        );
        assert!(
            readings[0].reasons[0].contains(&format!("text ({media})")),
            "{:?}",
            readings[0].reasons
        );
    }
    // JSON and binary media types are still read as formats.
    let json = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"a\":1}";
    assert_eq!(
        verdict(&peel(json, &PeelOptions::default()).payloads[0]),
        None
    );
    assert_eq!(
        peel_readings(json, &DecodeOptions::default(), None)[0].format,
        Some(Format::Json)
    );
}

#[test]
fn a_message_without_a_body_is_empty_not_a_protobuf_guess() {
    // An empty protobuf message reads every byte of nothing: a bodiless GET or HEAD was called
    // "protobuf (47%)". Only a layer that names protobuf makes it a reading.
    use wirelens::capture::verdict::{verdict, Verdict};
    let exchange = b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\nHTTP/1.1 204 No Content\r\nContent-Type: application/json\r\n\r\n";
    let peeled = peel(exchange, &PeelOptions::default());
    assert_eq!(peeled.payloads.len(), 2);
    for p in &peeled.payloads {
        assert!(p.bytes.is_empty());
        assert_eq!(verdict(p), Some(Verdict::Empty));
    }
    assert!(Verdict::Empty.sentence().starts_with("empty: 0 bytes"));
    // Content-Type protobuf: the empty message of its type.
    let protobuf =
        b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(
        verdict(&peel(protobuf, &PeelOptions::default()).payloads[0]),
        None
    );
}
