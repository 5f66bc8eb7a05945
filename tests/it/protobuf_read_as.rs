//! The user's reading of schema-less fields (`--read '$.1[*].2=bytes'`): every occurrence at the
//! pattern is read so, the reading is listed first, and a reading the bytes cannot have is an
//! error at the field.

use wirelens::codec::protobuf::wire::{decode, decode_raw, FieldReading};
use wirelens::codec::{DecodeOptions, ErrorKind};
use wirelens::model::{Float, Value};

fn with(readings: &[&str]) -> DecodeOptions {
    DecodeOptions {
        protobuf_readings: readings
            .iter()
            .map(|r| FieldReading::parse(r).expect("a reading"))
            .collect(),
        ..DecodeOptions::default()
    }
}

fn int(n: i128) -> Value {
    Value::Int(n)
}

fn entries(v: &Value) -> &[(Value, Value)] {
    match v {
        Value::Map(e) => e,
        other => panic!("not a map: {other:?}"),
    }
}

/// Two field-1 messages, each with field 2 = `{3: 5, 4: 6}` as a message and field 5 = 5.
fn two_records() -> Vec<u8> {
    let inner = [0x18, 0x05, 0x20, 0x06];
    let mut record = vec![0x12, inner.len() as u8];
    record.extend_from_slice(&inner);
    record.extend_from_slice(&[0x28, 0x05]);
    let mut out = Vec::new();
    for _ in 0..2 {
        out.push(0x0a);
        out.push(record.len() as u8);
        out.extend_from_slice(&record);
    }
    out
}

#[test]
fn a_reading_applies_to_every_occurrence_at_its_pattern() {
    let bytes = two_records();
    // By default field 2 reads as a message.
    let plain = decode(&bytes, &DecodeOptions::default()).expect("decodes");
    let first = &entries(&plain.value)[0].1;
    assert_eq!(
        entries(first)[0],
        (int(2), Value::Map(vec![(int(3), int(5)), (int(4), int(6))]))
    );
    // --read: field 2 of every field-1 record is bytes, field 5 zigzag.
    for pattern in ["$.1[*].2=bytes", "${1}{2}=bytes"] {
        let doc = decode(&bytes, &with(&[pattern, "$.1.5=sint64"])).expect("decodes");
        doc.spans.validate(bytes.len()).expect("spans");
        for (key, record) in entries(&doc.value) {
            assert_eq!(*key, int(1));
            assert_eq!(
                entries(record),
                [
                    (int(2), Value::Bytes(vec![0x18, 0x05, 0x20, 0x06])),
                    (int(5), int(-3)),
                ],
                "{pattern}"
            );
        }
    }
    // A pattern names one depth: $.2 is not field 2 inside field 1.
    let doc = decode(&bytes, &with(&["$.2=bytes"])).expect("decodes");
    assert_eq!(doc.value, plain.value);
}

#[test]
fn the_users_reading_is_listed_first_and_the_guess_stays_an_alternative() {
    let bytes = two_records();
    let raw = decode_raw(&bytes, &with(&["$.1.2=packed-fixed32"])).expect("decodes");
    let node = raw
        .readings
        .iter()
        .find(|r| r.field == 2)
        .expect("field 2 has readings");
    let labels: Vec<(&str, bool)> = node
        .readings
        .iter()
        .map(|r| (r.label.as_str(), r.chosen))
        .collect();
    assert_eq!(labels[0], ("packed fixed32 (chosen by --read)", true));
    assert!(labels.contains(&("message", false)), "{labels:?}");
    assert_eq!(labels.iter().filter(|(_, chosen)| *chosen).count(), 1);
    let record = &entries(&raw.document.value)[0].1;
    assert_eq!(
        entries(record)[0],
        (int(2), Value::Array(vec![int(0x0620_0518)]))
    );
    // Each element has its own four bytes.
    raw.document.spans.validate(bytes.len()).expect("spans");
}

#[test]
fn every_kind_of_reading_reads_its_bytes() {
    // 1: LEN of eight bytes (1.5f32, 2.0f32), 2: varint 1, 3: fixed32 0xffffffff,
    // 4: fixed64 of 1.0 as a double, 5: LEN "hi".
    let mut bytes = vec![0x0a, 8];
    bytes.extend_from_slice(&1.5f32.to_le_bytes());
    bytes.extend_from_slice(&2.0f32.to_le_bytes());
    bytes.extend_from_slice(&[0x10, 0x01, 0x1d, 0xff, 0xff, 0xff, 0xff, 0x21]);
    bytes.extend_from_slice(&1.0f64.to_le_bytes());
    bytes.extend_from_slice(&[0x2a, 2, b'h', b'i']);
    let cases: [(&str, usize, Value); 9] = [
        (
            "$.1=packed-float",
            0,
            Value::Array(vec![
                Value::Float(Float::f32(1.5)),
                Value::Float(Float::f32(2.0)),
            ]),
        ),
        (
            "$.1=packed-fixed64",
            0,
            Value::Array(vec![int(0x4000_0000_3fc0_0000)]),
        ),
        ("$.2=bool", 1, Value::Bool(true)),
        ("$.2=sint64", 1, int(-1)),
        ("$.3=sfixed32", 2, int(-1)),
        ("$.3=fixed32", 2, int(0xffff_ffff)),
        ("$.4=fixed64", 3, int(0x3ff0_0000_0000_0000)),
        (
            "$.5=packed-varint",
            4,
            Value::Array(vec![int(104), int(105)]),
        ),
        ("$.5=bytes", 4, Value::Bytes(b"hi".to_vec())),
    ];
    for (reading, at, want) in cases {
        let doc = decode(&bytes, &with(&[reading])).unwrap_or_else(|e| panic!("{reading}: {e}"));
        doc.spans.validate(bytes.len()).expect("spans");
        assert_eq!(entries(&doc.value)[at].1, want, "{reading}");
    }
}

#[test]
fn a_reading_the_bytes_cannot_have_is_an_error_at_the_field() {
    let bytes = two_records();
    for (reading, offset, says) in [
        (
            "$.1.5=bool",
            9,
            "--read bool: field 5 is the varint 5, not a bool (0 or 1)",
        ),
        (
            "$.1.5=float",
            9,
            "--read float: field 5 has wire type VARINT, which float does not read",
        ),
        (
            "$.1.2.3=message",
            5,
            "--read message: field 3 has wire type VARINT",
        ),
        (
            "$.1.2=sint64",
            4,
            "--read sint64: field 2 has wire type LEN, which sint64 does not read",
        ),
        (
            "$.1.2=packed-fixed64",
            4,
            "--read packed-fixed64: field 2 has 4 bytes, not a multiple of 8",
        ),
    ] {
        let err = decode(&bytes, &with(&[reading])).expect_err(reading);
        assert_eq!(err.kind, ErrorKind::Invalid, "{reading}");
        assert_eq!(err.offset, offset, "{reading}: {}", err.message);
        assert!(err.message.starts_with(says), "{reading}: {}", err.message);
        assert!(
            err.partial.is_some(),
            "{reading}: the fields before it are kept"
        );
    }
    // Not a message, not UTF-8.
    let bytes = [0x0a, 0x02, 0xff, 0xfe];
    let err = decode(&bytes, &with(&["$.1=message"])).expect_err("not fields");
    assert!(
        err.message.contains("does not parse as a message"),
        "{}",
        err.message
    );
    let err = decode(&bytes, &with(&["$.1=string"])).expect_err("not UTF-8");
    assert!(err.message.contains("is not UTF-8"), "{}", err.message);
    assert_eq!(err.path.to_string(), "${1}");
}

#[test]
fn the_cli_reads_fields_the_users_way() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("records.pb");
    std::fs::write(&path, two_records()).expect("write");
    // Converted with two readings (and `extra` arguments): the records as those readings say.
    let converts_the_users_way = |extra: &[&std::ffi::OsStr]| {
        let out = assert_cmd::Command::cargo_bin("wirelens")
            .expect("built")
            .args(["convert", "--from", "protobuf", "--to", "json"])
            .args(["--read", "$.1[*].2=bytes", "--read", "$.1[*].5=sint64"])
            .args(extra)
            .arg(&path)
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim_end(),
            r#"{"1":[{"2":"GAUgBg==","5":-3},{"2":"GAUgBg==","5":-3}]}"#
        );
    };
    converts_the_users_way(&[]);
    // A bad reading is a usage error that lists the readings.
    let out = assert_cmd::Command::cargo_bin("wirelens")
        .expect("built")
        .args(["inspect", "--read", "$.1=varint"])
        .arg(&path)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown reading \"varint\"; one of message, string, bytes"),
        "{stderr}"
    );
    // A reading the bytes cannot have: exit 1, the field's place.
    let out = assert_cmd::Command::cargo_bin("wirelens")
        .expect("built")
        .args([
            "inspect",
            "--from",
            "protobuf",
            "--no-hex",
            "--read",
            "$.1.5=bool",
        ])
        .arg(&path)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .contains("error at byte 9 (${1}{5}): Protobuf: --read bool: field 5 is the varint 5"),
        "{stderr}"
    );
    // With a schema, the schema says what each field is.
    let proto = dir.path().join("r.proto");
    std::fs::write(&proto, "syntax = \"proto3\"; message R { bytes x = 1; }").expect("write");
    let out = assert_cmd::Command::cargo_bin("wirelens")
        .expect("built")
        .args([
            "inspect",
            "--message",
            "R",
            "--read",
            "$.1=bytes",
            "--proto",
        ])
        .arg(&proto)
        .arg(&path)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--read chooses readings of protobuf read without a schema"),
        "{stderr}"
    );
    // A schema loaded but no type named: the user's readings say what the fields are, not the
    // best-ranked type.
    converts_the_users_way(&["--proto".as_ref(), proto.as_os_str()]);
}
