//! Protobuf editions end to end: payloads made by Python's protobuf (7.36.2) with editions
//! schemas (`tests/data/protobuf-editions/`, made by its `make.py`) read by wirelens with the
//! same schema given as `.proto` text (compiled by the vendored protoc) and as a descriptor set
//! (lowered to proto2), written as JSON equal to `MessageToJson`'s in both of its naming modes.

use std::path::{Path, PathBuf};

use wirelens::codec::protobuf::dynamic::{to_proto3_json, Proto3JsonOptions};
use wirelens::codec::protobuf::editions;
use wirelens::codec::protobuf::schema::Schema;
use wirelens::codec::{decode, encode, DecodeOptions, EncodeOptions, Format};
use wirelens::model::Value;

use crate::common;

fn dir() -> PathBuf {
    common::data("protobuf-editions")
}

/// Each case of `CASES.txt`: name, descriptor set (relative to the folder), message type.
fn cases() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(dir().join("CASES.txt")).expect("CASES.txt");
    let cases: Vec<(String, String, String)> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut w = l.split_whitespace();
            let mut next = || w.next().expect("three words").to_string();
            (next(), next(), next())
        })
        .collect();
    assert_eq!(cases.len(), 10, "every case of make.py");
    cases
}

/// The `.proto` that a descriptor set of `CASES.txt` was made from, and its include folder.
fn proto_of(set: &str) -> (PathBuf, PathBuf) {
    match set {
        "test_messages_edition2023.pb" => (dir().join("test_messages_edition2023.proto"), dir()),
        "presence.pb" => (dir().join("presence.proto"), dir()),
        "../protobuf/unittest_descriptor_set.pb" => {
            let root = common::data("protobuf");
            (root.join("google/protobuf/unittest.proto"), root)
        }
        other => panic!("no .proto known for {other}"),
    }
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn check_json(schema: &Schema, how: &str, name: &str, type_name: &str) {
    let message = schema.message(type_name).expect("message type");
    let payload = std::fs::read(dir().join(format!("{name}.binpb"))).expect("payload");
    for (proto_names, golden) in [
        (false, format!("{name}.json")),
        (true, format!("{name}.proto-names.json")),
    ] {
        let options = Proto3JsonOptions {
            proto_names,
            pretty: true,
        };
        let got = to_proto3_json(&payload, &message, options)
            .unwrap_or_else(|e| panic!("{name} ({how}): {e}"));
        assert_eq!(got.notes, notes_of(name), "{name} ({how})");
        let got: serde_json::Value = serde_json::from_str(&got.text).expect("wirelens writes JSON");
        assert_eq!(got, golden_of(&golden), "{name} ({how}) against {golden}");
    }
    // wirelens' own decoder reads the payload whole, and its encoder writes the value back to
    // bytes (fields in number order) that give the same JSON.
    let options = DecodeOptions {
        message: Some(message.clone()),
        ..DecodeOptions::default()
    };
    let doc = decode(&payload, Format::Protobuf, &options)
        .unwrap_or_else(|e| panic!("{name} ({how}): {e}"));
    doc.spans.validate(payload.len()).expect("spans");
    let enc = encode(
        &doc.value,
        Format::Protobuf,
        &EncodeOptions {
            message: Some(message.clone()),
            ..EncodeOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{name} ({how}): {e}"));
    let again = to_proto3_json(&enc.bytes, &message, Proto3JsonOptions::default())
        .unwrap_or_else(|e| panic!("{name} ({how}): re-encoded: {e}"));
    let again: serde_json::Value = serde_json::from_str(&again.text).expect("JSON");
    assert_eq!(
        again,
        golden_of(&format!("{name}.json")),
        "{name} ({how}): re-encoded"
    );
    // Groups stay groups: the DELIMITED fields are written with start/end-group tags, as the
    // payload has them.
    if name == "all_types" {
        assert!(
            contains(&payload, &[0xcb, 0x0c]),
            "Python wrote field 201 as a group"
        );
    }
    for (tag, what) in [
        (&[0xcb, 0x0c][..], "field 201"),
        (&[0xd3, 0x0c][..], "field 202"),
    ] {
        assert_eq!(
            contains(&payload, tag),
            contains(&enc.bytes, tag),
            "{name} ({how}): {what} as a group"
        );
    }
}

/// The JSON `MessageToJson` wrote, except where wirelens writes otherwise on purpose: a
/// `utf8_validation = NONE` string that is not UTF-8, which Python writes as a Python bytes
/// literal and wirelens as text with U+FFFD for each bad sequence (with a note).
fn golden_of(golden: &str) -> serde_json::Value {
    let mut want = json(&dir().join(golden));
    if golden.starts_with("loose_not_utf8.") {
        assert_eq!(want["loose"], "b'a\\xffb'", "Python's bytes literal");
        want["loose"] = "a\u{fffd}b".into();
    }
    want
}

/// The notes wirelens gives for a case's JSON.
fn notes_of(name: &str) -> Vec<String> {
    match name {
        "loose_not_utf8" => vec![
            "$.loose: a string field with utf8_validation = NONE holds bytes that are not UTF-8 \
             (byte 1 of 3); JSON text cannot hold them, so it has U+FFFD for each bad sequence \
             (the bytes in base64: Yf9i)"
                .to_string(),
        ],
        _ => Vec::new(),
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn editions_descriptor_sets_read_as_message_to_json_writes() {
    for (name, set, type_name) in cases() {
        let bytes = std::fs::read(dir().join(&set)).expect("set");
        let schema = Schema::from_descriptor_set(&bytes).unwrap_or_else(|e| panic!("{set}: {e}"));
        assert!(
            !schema.editions().is_empty(),
            "{set}: an editions file was lowered"
        );
        assert_eq!(schema.compiler(), None);
        check_json(&schema, "descriptor set", &name, &type_name);
    }
}

#[test]
fn editions_proto_text_compiles_with_the_vendored_protoc() {
    for (name, set, type_name) in cases() {
        let (proto, include) = proto_of(&set);
        let schema =
            Schema::from_proto_files(&[&proto], &[&include]).unwrap_or_else(|e| panic!("{e}"));
        let compiler = schema.compiler().expect("compiled from text");
        assert!(
            compiler.starts_with("protoc ") && compiler.ends_with("(protoc-bin-vendored)"),
            "{compiler}"
        );
        check_json(&schema, "protoc", &name, &type_name);
    }
}

#[test]
fn pasted_editions_text_compiles_too() {
    let text = std::fs::read_to_string(dir().join("presence.proto")).expect("proto");
    let schema = Schema::from_proto_source("presence.proto", &text).expect("compiles");
    assert_eq!(schema.editions().len(), 1);
    assert_eq!(schema.editions()[0].edition, "2024");
    check_json(&schema, "pasted", "presence", "wirelens.editions.Presence");
    // protoc's errors point into the text, and say which compiler gave them.
    let err = Schema::from_proto_source(
        "bad.proto",
        "edition = \"2023\";\nmessage M { int32 x = 1 }\n",
    )
    .expect_err("missing ;");
    let err = err.to_string();
    assert!(err.starts_with("bad.proto:2:"), "{err}");
    assert!(err.contains("(protoc 36"), "{err}");
    let err = Schema::from_proto_source("../x.proto", "edition = \"2023\";\n").expect_err("name");
    assert!(err.to_string().contains("relative path"), "{err}");
}

#[test]
fn features_are_resolved_down_the_scopes() {
    let bytes = std::fs::read(dir().join("test_messages_edition2023.pb")).expect("set");
    let schema = Schema::from_descriptor_set(&bytes).expect("loads");
    let m = schema
        .message("protobuf_test_messages.editions.TestAllTypesEdition2023")
        .expect("type");
    let field = |n: &str| m.get_field_by_name(n).unwrap_or_else(|| panic!("{n}"));
    let features = |n: &str| editions::field_features(&field(n)).expect("editions features");
    // The file sets DELIMITED: a message field without its own override is a group.
    assert!(field("groupliketype").is_group() && field("delimited_field").is_group());
    assert!(features("delimited_field").delimited());
    // Fields that override it back are length-prefixed messages.
    assert!(!field("optional_nested_message").is_group());
    // Map values stay length-prefixed whatever the file says.
    let map = field("map_string_nested_message");
    let value = map
        .kind()
        .as_message()
        .expect("entry")
        .map_entry_value_field();
    assert!(!value.is_group());
    // Repeated scalars are packed by default in 2023, unless EXPANDED.
    assert!(field("repeated_int32").is_packed() && field("packed_int32").is_packed());
    assert!(!field("unpacked_int32").is_packed());
    assert_eq!(
        features("unpacked_int32").describe(Some(editions::Scope::Field)),
        "field_presence=EXPLICIT repeated_field_encoding=EXPANDED utf8_validation=VERIFY \
         message_encoding=DELIMITED"
    );
    // Extensions resolve in the scope that declares them: the file's DELIMITED.
    let ext = m
        .extensions()
        .find(|e| e.name() == "delimited_ext")
        .expect("extension");
    assert!(ext.is_group());
    assert!(editions::extension_features(&ext)
        .expect("features")
        .delimited());

    // unittest.proto: closed enums, EXPANDED, utf8 NONE at file level; LEGACY_REQUIRED fields.
    let unittest = Schema::from_descriptor_set(
        &std::fs::read(common::data("protobuf/unittest_descriptor_set.pb")).expect("set"),
    )
    .expect("the edition 2023 unittest set loads");
    assert_eq!(
        unittest
            .editions()
            .iter()
            .map(|f| format!("{} {}", f.name, f.edition))
            .collect::<Vec<_>>(),
        ["google/protobuf/unittest.proto 2023"]
    );
    let req = unittest
        .message("proto2_unittest.TestRequired")
        .expect("type");
    let a = req.get_field_by_name("a").expect("a");
    assert_eq!(a.cardinality(), prost_reflect::Cardinality::Required);
    assert!(editions::field_features(&a).expect("f").legacy_required());
    let all = unittest
        .message("proto2_unittest.TestAllTypes")
        .expect("type");
    let e = all
        .get_field_by_name("optional_nested_enum")
        .expect("field")
        .kind();
    let e = e.as_enum().expect("enum");
    assert!(editions::enum_features(e).expect("features").closed_enum());
    assert!(!all
        .get_field_by_name("repeated_int32")
        .expect("f")
        .is_packed());
    // A proto2 file of the same set has no editions features.
    let import = unittest
        .message("proto2_unittest_import.ImportMessage")
        .expect("type");
    assert!(editions::field_features(&import.fields().next().expect("a field")).is_none());
}

#[test]
fn implicit_presence_has_no_presence_and_loose_strings_read_as_bytes() {
    let bytes = std::fs::read(dir().join("presence.pb")).expect("set");
    let schema = Schema::from_descriptor_set(&bytes).expect("loads");
    let m = schema.message("wirelens.editions.Presence").expect("type");
    let f = |n: &str| m.get_field_by_name(n).expect("field");
    assert!(!editions::has_presence(&f("count")));
    assert!(editions::has_presence(&f("explicit_count")));
    assert!(editions::has_presence(&f("inner")));
    // Encoding a zero of an implicit field writes nothing and says so; the explicit one is
    // written.
    let value = Value::Map(vec![
        (Value::text("count"), Value::Int(0)),
        (Value::text("explicit_count"), Value::Int(0)),
        (Value::text("required_id"), Value::Int(1)),
    ]);
    let enc = encode(
        &value,
        Format::Protobuf,
        &EncodeOptions {
            message: Some(m.clone()),
            ..EncodeOptions::default()
        },
    )
    .expect("encodes");
    assert_eq!(enc.bytes, [0x18, 0x00, 0x58, 0x01]);
    let notes: Vec<String> = enc.notes.iter().map(|n| n.to_string()).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("$.count") && n.contains("implicit presence")),
        "{notes:?}"
    );
    // A string field with utf8_validation = NONE may hold any bytes: read as bytes, not an error.
    let payload = [0x52, 0x02, 0xff, 0xfe, 0x58, 0x01];
    let options = DecodeOptions {
        message: Some(m.clone()),
        ..DecodeOptions::default()
    };
    let doc = decode(&payload, Format::Protobuf, &options).expect("decodes");
    let Value::Map(entries) = &doc.value else {
        panic!("a map")
    };
    assert_eq!(
        entries[0],
        (Value::text("loose"), Value::Bytes(vec![0xff, 0xfe]))
    );
    // A checked string still fails on the same bytes.
    let bad = [0x12, 0x02, 0xff, 0xfe];
    assert!(decode(&bad, Format::Protobuf, &options).is_err());
}

#[test]
fn list_types_shows_editions_and_each_fields_features() {
    // The CLI loads the unittest set as a schema; nothing of prost-reflect's reaches stderr.
    let out = assert_cmd::Command::cargo_bin("wirelens")
        .expect("built")
        .args([
            "inspect",
            "--list-types",
            "--message",
            "proto2_unittest.TestRequired",
        ])
        .arg("--descriptor-set")
        .arg(common::data("protobuf/unittest_descriptor_set.pb"))
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert!(
        stdout.contains("  proto2_unittest.TestAllTypes\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "editions files (1, read as proto2 with their features):\n  \
             google/protobuf/unittest.proto: edition 2023\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "  1 a: required int32 [field_presence=LEGACY_REQUIRED \
             repeated_field_encoding=EXPANDED utf8_validation=NONE message_encoding=LENGTH_PREFIXED]\n"
        ),
        "{stdout}"
    );
    assert!(
        !stdout.contains("compiled by"),
        "a descriptor set: {stdout}"
    );

    // The .proto text: protoc compiled it, and the line says so.
    let out = assert_cmd::Command::cargo_bin("wirelens")
        .expect("built")
        .args([
            "inspect",
            "--list-types",
            "--message",
            "Presence",
            "--proto",
        ])
        .arg(dir().join("presence.proto"))
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("compiled by protoc 36."), "{stdout}");
    assert!(stdout.contains("(protoc-bin-vendored)\n"), "{stdout}");
    for line in [
        "  1 count: int32 [field_presence=IMPLICIT repeated_field_encoding=PACKED utf8_validation=VERIFY message_encoding=LENGTH_PREFIXED]",
        "  5 shade: wirelens.editions.Shade [field_presence=EXPLICIT repeated_field_encoding=PACKED utf8_validation=VERIFY message_encoding=LENGTH_PREFIXED enum_type=CLOSED]",
        "  7 expanded: repeated int32 [field_presence=IMPLICIT repeated_field_encoding=EXPANDED utf8_validation=VERIFY message_encoding=LENGTH_PREFIXED]",
        "  9 delimited: wirelens.editions.Inner (group) [field_presence=IMPLICIT repeated_field_encoding=PACKED utf8_validation=VERIFY message_encoding=DELIMITED]",
        "  12 shades: repeated wirelens.editions.Shade (packed) [field_presence=IMPLICIT repeated_field_encoding=PACKED utf8_validation=VERIFY message_encoding=LENGTH_PREFIXED enum_type=CLOSED]",
    ] {
        assert!(stdout.contains(&format!("{line}\n")), "{line}\n{stdout}");
    }
}

#[test]
fn inspect_says_how_an_editions_schema_was_read() {
    let out = assert_cmd::Command::cargo_bin("wirelens")
        .expect("built")
        .args([
            "inspect",
            "--no-hex",
            "--no-tree",
            "--message",
            "Presence",
            "--proto",
        ])
        .arg(dir().join("presence.proto"))
        .arg(dir().join("presence.binpb"))
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("schema: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.starts_with("schema: compiled by protoc 36."), "{line}");
    assert!(
        line.ends_with(
            "(protoc-bin-vendored); editions files read as proto2 with their features: \
             presence.proto (edition 2024)"
        ),
        "{line}"
    );
}

#[test]
fn convert_writes_editions_json_like_message_to_json() {
    let out = assert_cmd::Command::cargo_bin("wirelens")
        .expect("built")
        .args([
            "convert",
            "--to",
            "json",
            "--message",
            "Presence",
            "--descriptor-set",
        ])
        .arg(dir().join("presence.pb"))
        .arg(dir().join("presence.binpb"))
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(got, json(&dir().join("presence.json")));
}

#[test]
fn descriptor_sets_prost_reflect_panics_on_are_quiet_errors() {
    use prost::Message;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cases = Vec::new();
    // An unknown syntax (prost-reflect 0.16 panicked describing it), and an edition wirelens
    // does not know.
    for (name, syntax, edition) in [
        ("proto4", "proto4", None),
        ("e2026", "editions", Some(1002)),
    ] {
        let file = prost_types::FileDescriptorProto {
            name: Some(format!("{name}.proto")),
            syntax: Some(syntax.into()),
            message_type: vec![prost_types::DescriptorProto {
                name: Some("M".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut bytes = prost_types::FileDescriptorSet { file: vec![file] }.encode_to_vec();
        if let Some(e) = edition {
            // FileDescriptorProto.edition (14) is not in prost-types 0.14: append it to the
            // file's bytes by hand (the set's one file is its field 1, length below 128).
            bytes.extend_from_slice(&[0x70, (e & 0x7f) as u8 | 0x80, (e >> 7) as u8]);
            bytes[1] += 3;
        }
        let path = dir.path().join(format!("{name}.pb"));
        std::fs::write(&path, &bytes).expect("write");
        cases.push((path, name));
    }
    for (path, name) in cases {
        let err = Schema::from_descriptor_set(&std::fs::read(&path).expect("read"))
            .map(|_| ())
            .expect_err(name);
        assert!(!err.to_string().is_empty());
        let out = assert_cmd::Command::cargo_bin("wirelens")
            .expect("built")
            .args(["inspect", "--list-types", "--descriptor-set"])
            .arg(&path)
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        assert!(!stderr.contains("backtrace"), "{name}: {stderr}");
        if name == "e2026" {
            assert!(stderr.contains("edition 2026 is not supported"), "{stderr}");
        } else {
            assert!(
                stderr.contains(
                    "proto4.proto has syntax \"proto4\" (known: proto2, proto3, editions)"
                ),
                "{stderr}"
            );
        }
    }
}

#[test]
fn convert_writes_a_loose_string_that_is_not_utf8_as_text_and_says_so() {
    for schema in ["--descriptor-set", "--proto"] {
        let file = if schema == "--proto" {
            "presence.proto"
        } else {
            "presence.pb"
        };
        let out = assert_cmd::Command::cargo_bin("wirelens")
            .expect("built")
            .current_dir(dir())
            .args(["convert", "--to", "json", "--message", "Presence", schema])
            .arg(file)
            .arg("loose_not_utf8.binpb")
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{schema}: {stderr}");
        let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(got, golden_of("loose_not_utf8.json"), "{schema}");
        assert!(
            stderr.contains("note: $.loose: a string field with utf8_validation = NONE")
                && stderr.contains("(the bytes in base64: Yf9i)"),
            "{schema}: {stderr}"
        );
    }
}

#[test]
fn a_path_names_its_field_and_the_declaration_shows_the_resolved_features() {
    use wirelens::codec::protobuf::schema::{field_at, field_line};
    let bytes = std::fs::read(common::data("protobuf/unittest_descriptor_set.pb")).expect("set");
    let schema = Schema::from_descriptor_set(&bytes).expect("loads");
    let path = |t: &str| wirelens::model::Path::parse(t).expect("path");
    let required = schema
        .pool()
        .get_message_by_name("proto2_unittest.TestRequired")
        .expect("TestRequired");
    let a = field_at(&required, &path("$.a")).expect("field a");
    // The same line `inspect --list-types --message` prints, which the app shows on a
    // right-click of the field's row.
    assert_eq!(
        field_line(&a),
        "1 a: required int32 [field_presence=LEGACY_REQUIRED repeated_field_encoding=EXPANDED \
         utf8_validation=NONE message_encoding=LENGTH_PREFIXED]"
    );
    let all = schema
        .pool()
        .get_message_by_name("proto2_unittest.TestAllTypes")
        .expect("TestAllTypes");
    let bb = field_at(&all, &path("$.repeated_nested_message[1].bb")).expect("nested field");
    assert_eq!(
        bb.full_name(),
        "proto2_unittest.TestAllTypes.NestedMessage.bb"
    );
    assert!(field_at(&all, &path("$.no_such_field")).is_none());
    assert!(field_at(&all, &path("$")).is_none());
}
