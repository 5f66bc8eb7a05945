//! Protobuf schemas and schema-guided decoding: descriptor sets and `.proto` sources load,
//! protox compiles what protoc compiled, `descriptor_set.pb` decodes to what protoc's text
//! format says, protoc-encoded fixtures decode to the exact expected values and spans, ranking
//! picks the right type, and hostile inputs fail cleanly.

use crate::common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor, ReflectMessage};
use wirelens::codec::protobuf::dynamic::{decode, to_proto3_json, Proto3JsonOptions};
use wirelens::codec::protobuf::schema::{Schema, SchemaError};
use wirelens::codec::{DecodeOptions, Document, ErrorKind, LimitName};
use wirelens::model::{ByteRole, Float, Path, PathSegment, Timestamp, Value};

fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(data(path)).expect("test data is readable")
}

fn set(path: &str) -> Schema {
    Schema::from_descriptor_set(&read(path)).expect("descriptor set loads")
}

fn opts() -> DecodeOptions {
    DecodeOptions::default()
}

fn text(s: &str) -> Value {
    Value::text(s)
}

fn obj(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(entries.into_iter().map(|(k, v)| (text(k), v)).collect())
}

#[test]
fn descriptor_sets_load_and_every_type_resolves() {
    for (path, files, some_type) in [
        (
            "protobuf/descriptor_set.pb",
            1,
            "google.protobuf.FileDescriptorSet",
        ),
        (
            "protobuf/descriptor_set.protoc35.pb",
            1,
            "google.protobuf.FieldOptions",
        ),
        ("protobuf/wkt_descriptor_set.pb", 8, "google.protobuf.Any"),
        (
            "protoscope/testdata/unittest.proto.pb",
            1,
            "unittest.TestAllTypes",
        ),
    ] {
        let s = set(path);
        assert_eq!(s.files().len(), files, "{path}");
        let names = s.message_names();
        assert!(names.windows(2).all(|w| w[0] <= w[1]), "sorted");
        for n in &names {
            let m = s.message(n).expect("every listed name resolves");
            for f in m.fields() {
                // Resolving a field's type must not panic and must name a known type.
                if let Some(msg) = f.kind().as_message() {
                    assert!(s.message(msg.full_name()).is_ok(), "{n}.{}", f.name());
                }
            }
        }
        assert!(s.message(some_type).is_ok(), "{path}: {some_type}");
    }
    // The edition 2023 set made by protoc 35: prost-reflect 0.16 cannot load it as it is (it
    // panics while describing the problem); lowered to proto2 first, it loads, and every type
    // resolves (tests/it/protobuf_editions.rs reads payloads with it).
    let s = match Schema::from_descriptor_set(&read("protobuf/unittest_descriptor_set.pb")) {
        Ok(s) => s,
        Err(e) => panic!("the editions unittest set loads: {e}"),
    };
    assert_eq!(s.files().len(), 3);
    for n in s.message_names() {
        let m = s.message(&n).expect("every listed name resolves");
        for f in m.fields() {
            if let Some(msg) = f.kind().as_message() {
                assert!(s.message(msg.full_name()).is_ok(), "{n}.{}", f.name());
            }
        }
    }
    assert!(s.message("proto2_unittest.TestAllTypes").is_ok());
}

#[test]
fn load_picks_by_extension_and_content() {
    let s = Schema::load(data("protobuf/wkt_descriptor_set.pb")).expect("set");
    assert!(s.message("Timestamp").is_ok());
    let s = Schema::load(data("protobuf/google/protobuf/any.proto")).expect("proto");
    assert_eq!(
        s.message("Any").expect("short name").full_name(),
        "google.protobuf.Any"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let bogus = dir.path().join("bogus.pb");
    std::fs::write(&bogus, b"\xff\xff\xff not a set").expect("write");
    let err = Schema::load(&bogus).expect_err("not a set").to_string();
    assert!(
        err.contains("is not a FileDescriptorSet"),
        "clear error: {err}"
    );
}

/// The files protox compiles equal protoc's, per file, once `json_name` and source info are
/// cleared (the only normalised fields). descriptor.proto and unittest.proto are beyond protox
/// 0.10 (extension declarations, editions) and must fail with a located error.
#[test]
fn protox_compiles_what_protoc_compiled() {
    let root = data("protobuf");
    let names = [
        "any",
        "timestamp",
        "duration",
        "struct",
        "wrappers",
        "empty",
        "field_mask",
    ];
    let files: Vec<PathBuf> = names
        .iter()
        .map(|n| root.join(format!("google/protobuf/{n}.proto")))
        .collect();
    let ours = Schema::from_proto_files(&files, &[&root]).expect("protox compiles the WKTs");
    let theirs =
        prost_types::FileDescriptorSet::decode(read("protobuf/wkt_descriptor_set.pb").as_slice())
            .expect("protoc's set");
    assert_eq!(theirs.file.len(), 8);
    for want in theirs
        .file
        .iter()
        .filter(|f| f.name() != "google/protobuf/descriptor.proto")
    {
        let got = ours
            .pool()
            .get_file_by_name(want.name())
            .unwrap_or_else(|| panic!("protox has {}", want.name()));
        let mut got = got.file_descriptor_proto().clone();
        let mut want = want.clone();
        normalise(&mut got);
        normalise(&mut want);
        assert_eq!(got, want, "{}", want.name());
    }

    // This descriptor.proto (protobuf 37-dev) uses extension-range declarations
    // (`extensions 536000000 [declaration = {...}]`), which protox 0.10 cannot parse: the error
    // points at the place.
    let err = Schema::from_proto_files(&[root.join("google/protobuf/descriptor.proto")], &[&root])
        .expect_err("protox 0.10 lacks extension declarations");
    assert_eq!(
        err.to_string(),
        "google/protobuf/descriptor.proto:37:24: expected 'to', ',' or ';', but found '['"
    );

    // unittest.proto is `edition = "2023"`, which protox 0.10 cannot parse: the vendored protoc
    // compiles it, and it has the types of protoc 35's set.
    let compiled =
        match Schema::from_proto_files(&[root.join("google/protobuf/unittest.proto")], &[&root]) {
            Ok(s) => s,
            Err(e) => panic!("protoc compiles the editions file: {e}"),
        };
    assert!(
        compiled
            .compiler()
            .is_some_and(|c| c.starts_with("protoc ")),
        "{:?}",
        compiled.compiler()
    );
    let from_set = match Schema::from_descriptor_set(&read("protobuf/unittest_descriptor_set.pb")) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(compiled.message_names(), from_set.message_names());
    // Its imports (proto2) compile and equal protoc 35's.
    let imports = Schema::from_proto_files(
        &[root.join("google/protobuf/unittest_import.proto")],
        &[&root],
    )
    .expect("proto2 imports compile");
    let theirs = prost_types::FileDescriptorSet::decode(
        read("protobuf/unittest_descriptor_set.pb").as_slice(),
    )
    .expect("set");
    for want in theirs
        .file
        .iter()
        .filter(|f| f.name() != "google/protobuf/unittest.proto")
    {
        let mut got = imports
            .pool()
            .get_file_by_name(want.name())
            .expect("import compiled")
            .file_descriptor_proto()
            .clone();
        let mut want = want.clone();
        normalise(&mut got);
        normalise(&mut want);
        assert_eq!(got, want, "{}", want.name());
    }
}

fn normalise(file: &mut prost_types::FileDescriptorProto) {
    fn message(m: &mut prost_types::DescriptorProto) {
        for f in m.field.iter_mut().chain(m.extension.iter_mut()) {
            f.json_name = None;
        }
        for n in &mut m.nested_type {
            message(n);
        }
    }
    file.source_code_info = None;
    for m in &mut file.message_type {
        message(m);
    }
    for f in &mut file.extension {
        f.json_name = None;
    }
}

#[test]
fn proto_errors_read_file_line_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("broken.proto");
    std::fs::write(
        &path,
        "syntax = \"proto3\";\nmessage User {\n  Missing friend = 1;\n}\n",
    )
    .expect("write");
    let err =
        Schema::from_proto_files(&[&path], &[] as &[&std::path::Path]).expect_err("unknown type");
    assert_eq!(
        err,
        SchemaError::Proto {
            file: "broken.proto".into(),
            line: 3,
            column: 3,
            message: "name 'Missing' is not defined".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "broken.proto:3:3: name 'Missing' is not defined"
    );
    let err = Schema::from_proto_source("p.proto", "syntax = \"proto3\";\nmessage {\n")
        .expect_err("syntax error");
    assert!(err.to_string().starts_with("p.proto:2:9: "), "{err}");
}

/// Our value for a `DynamicMessage`, by the contract (fields in number order).
fn dynamic_to_value(m: &DynamicMessage) -> Value {
    let mut entries = Vec::new();
    for (field, v) in m.fields() {
        let _ = field;
        entries.push((text(field.name()), reflect_value(v, &field.kind())));
    }
    Value::Map(entries)
}

fn reflect_value(v: &prost_reflect::Value, kind: &prost_reflect::Kind) -> Value {
    use prost_reflect::Value as R;
    match v {
        R::Bool(b) => Value::Bool(*b),
        R::I32(n) => Value::Int(i128::from(*n)),
        R::I64(n) => Value::Int(i128::from(*n)),
        R::U32(n) => Value::Int(i128::from(*n)),
        R::U64(n) => Value::Int(i128::from(*n)),
        R::F32(f) => Value::Float(Float::f32(*f)),
        R::F64(f) => Value::f64(*f),
        R::String(s) => text(s),
        R::Bytes(b) => Value::Bytes(b.to_vec()),
        R::EnumNumber(n) => match kind.as_enum().and_then(|e| e.get_value(*n)) {
            Some(ev) => text(ev.name()),
            None => Value::Int(i128::from(*n)),
        },
        R::Message(m) => dynamic_to_value(m),
        R::List(items) => Value::Array(items.iter().map(|i| reflect_value(i, kind)).collect()),
        R::Map(_) => panic!("descriptor.proto has no map fields"),
    }
}

/// Orders every message's entries by field number (our decoder keeps wire order; protoc 3.21
/// wrote some `FieldOptions` fields out of order).
fn by_field_number(v: &Value, desc: &MessageDescriptor) -> Value {
    let Value::Map(entries) = v else {
        return v.clone();
    };
    let mut out: Vec<(u32, (Value, Value))> = entries
        .iter()
        .map(|(k, val)| {
            let name = k.as_str().expect("text keys");
            let f = desc.get_field_by_name(name).expect("known field");
            let val = match (f.kind().as_message(), val) {
                (Some(m), Value::Array(items)) => {
                    Value::Array(items.iter().map(|i| by_field_number(i, m)).collect())
                }
                (Some(m), other) => by_field_number(other, m),
                (None, other) => other.clone(),
            };
            (f.number(), (k.clone(), val))
        })
        .collect();
    out.sort_by_key(|(n, _)| *n);
    Value::Map(out.into_iter().map(|(_, e)| e).collect())
}

/// `descriptor_set.pb` decoded with `FileDescriptorSet` from itself equals protoc's text format
/// of it (`descriptor_set.txtpb`) parsed by prost-reflect and mapped to a value by the same
/// contract; entries compared in field-number order, values exactly (types, enums by name).
#[test]
fn descriptor_set_decodes_to_what_protoc_printed() {
    let bytes = read("protobuf/descriptor_set.pb");
    let schema = Schema::from_descriptor_set(&bytes).expect("self-describing");
    let fds = schema
        .message("google.protobuf.FileDescriptorSet")
        .expect("type");
    let doc = decode(&bytes, &fds, &opts()).expect("decodes");
    doc.spans.validate(bytes.len()).expect("valid spans");
    let txt = std::fs::read_to_string(data("protobuf/descriptor_set.txtpb")).expect("txtpb");
    let expected = DynamicMessage::parse_text_format(fds.clone(), &txt).expect("text format");
    assert_eq!(
        by_field_number(&doc.value, &fds),
        dynamic_to_value(&expected)
    );
    // No unknown fields, and the 5 declaration blocks are there.
    let file = &doc
        .value
        .get("file")
        .and_then(Value::as_array)
        .expect("files")[0];
    assert_eq!(
        file.get("name"),
        Some(&text("google/protobuf/descriptor.proto"))
    );
    // And the proto3 JSON mapping agrees with prost-reflect's own decode.
    let json = to_proto3_json(&bytes, &fds, proto_names())
        .expect("json")
        .text;
    assert!(
        json.starts_with("{\"file\":[{\"name\":\"google/protobuf/descriptor.proto\""),
        "{}",
        &json[..80]
    );
    assert!(
        json.contains("\"json_name\""),
        "field names as written in the .proto"
    );
    assert_eq!(expected.descriptor().full_name(), fds.full_name());
}

const FIXTURE_PROTO: &str = r#"syntax = "proto3";
package fixture;
import "google/protobuf/timestamp.proto";
import "google/protobuf/any.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";

enum Role { ROLE_UNSPECIFIED = 0; ADMIN = 1; USER = 2; }

message Address { string city = 1; int32 zip = 2; }

message Profile {
  int32 i32 = 1; int64 i64 = 2; uint32 u32 = 3; uint64 u64 = 4; sint32 s32 = 5; sint64 s64 = 6;
  fixed32 f32 = 7; fixed64 f64 = 8; sfixed32 sf32 = 9; sfixed64 sf64 = 10; bool flag = 11;
  float ratio = 12; double score = 13; string name = 14; bytes avatar = 15; Role role = 16;
  Address home = 17;
  repeated int32 packed_ids = 18;
  repeated int32 loose_ids = 19 [packed = false];
  repeated Address addresses = 20;
  map<string, int32> counts = 21;
  map<int32, Address> by_zip = 22;
  oneof contact { string email = 23; string phone = 24; }
  google.protobuf.Timestamp created = 25;
  google.protobuf.Any extra = 26;
  google.protobuf.Duration ttl = 27;
  google.protobuf.Int32Value maybe = 28;
  google.protobuf.Struct meta = 29;
  repeated string tags = 30;
}
"#;

const FIXTURE_TXTPB: &str = r#"
i32: -5 i64: -9000000000 u32: 4000000000 u64: 18446744073709551615 s32: -3 s64: -4000000000
f32: 7 f64: 8 sf32: -9 sf64: -10 flag: true ratio: 0.25 score: 2.5 name: "Zoë"
avatar: "\000\001\377" role: ADMIN
home { city: "Oslo" zip: 150 }
packed_ids: [1, 2, 300]
loose_ids: 4 loose_ids: 5
addresses { city: "A" } addresses { city: "B" zip: 2 }
counts { key: "x" value: 1 }
by_zip { key: 7 value { city: "C" } }
email: "z@example.com"
created { seconds: 1700000000 nanos: 250000000 }
extra { [type.googleapis.com/fixture.Address] { city: "D" zip: 4 } }
ttl { seconds: 1 nanos: 500000000 }
maybe { }
meta { fields { key: "a" value { list_value {
  values { string_value: "s" } values { bool_value: true } values { null_value: NULL_VALUE }
  values { number_value: 3 } values { struct_value { fields { key: "k" value { string_value: "v" } } } }
} } } }
tags: "x" tags: "y"
"#;

fn fixture_value() -> Value {
    obj(vec![
        ("i32", Value::Int(-5)),
        ("i64", Value::Int(-9_000_000_000)),
        ("u32", Value::Int(4_000_000_000)),
        ("u64", Value::Int(i128::from(u64::MAX))),
        ("s32", Value::Int(-3)),
        ("s64", Value::Int(-4_000_000_000)),
        ("f32", Value::Int(7)),
        ("f64", Value::Int(8)),
        ("sf32", Value::Int(-9)),
        ("sf64", Value::Int(-10)),
        ("flag", Value::Bool(true)),
        ("ratio", Value::Float(Float::f32(0.25))),
        ("score", Value::f64(2.5)),
        ("name", text("Zoë")),
        ("avatar", Value::Bytes(vec![0, 1, 255])),
        ("role", text("ADMIN")),
        (
            "home",
            obj(vec![("city", text("Oslo")), ("zip", Value::Int(150))]),
        ),
        (
            "packed_ids",
            Value::Array(vec![Value::Int(1), Value::Int(2), Value::Int(300)]),
        ),
        (
            "loose_ids",
            Value::Array(vec![Value::Int(4), Value::Int(5)]),
        ),
        (
            "addresses",
            Value::Array(vec![
                obj(vec![("city", text("A"))]),
                obj(vec![("city", text("B")), ("zip", Value::Int(2))]),
            ]),
        ),
        ("counts", Value::Map(vec![(text("x"), Value::Int(1))])),
        (
            "by_zip",
            Value::Map(vec![(Value::Int(7), obj(vec![("city", text("C"))]))]),
        ),
        ("email", text("z@example.com")),
        (
            "created",
            Value::Timestamp(Timestamp {
                seconds: 1_700_000_000,
                nanos: 250_000_000,
            }),
        ),
        (
            "extra",
            obj(vec![
                ("@type", text("type.googleapis.com/fixture.Address")),
                ("city", text("D")),
                ("zip", Value::Int(4)),
            ]),
        ),
        ("ttl", text("1.5s")),
        ("maybe", Value::Int(0)),
        (
            "meta",
            obj(vec![(
                "a",
                Value::Array(vec![
                    text("s"),
                    Value::Bool(true),
                    Value::Null,
                    Value::f64(3.0),
                    obj(vec![("k", text("v"))]),
                ]),
            )]),
        ),
        ("tags", Value::Array(vec![text("x"), text("y")])),
    ])
}

/// Runs protoc to encode text format; fails clearly when protoc is missing.
fn protoc_encode(dir: &std::path::Path, proto: &str, ty: &str, txtpb: &str) -> Vec<u8> {
    let mut child = Command::new(common::protoc())
        .arg(format!("-I{}", dir.display()))
        .arg(format!("-I{}", data("protobuf").display()))
        .arg(format!("--encode={ty}"))
        .arg(proto)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("protoc must be installed (apt-get install protobuf-compiler) for this test");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(txtpb.as_bytes())
        .expect("write to protoc");
    let out = child.wait_with_output().expect("protoc runs");
    assert!(
        out.status.success(),
        "protoc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn fixture() -> (Vec<u8>, MessageDescriptor) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("profile.proto"), FIXTURE_PROTO).expect("write");
    let bytes = protoc_encode(
        dir.path(),
        "profile.proto",
        "fixture.Profile",
        FIXTURE_TXTPB,
    );
    let schema = Schema::from_proto_files(
        &[dir.path().join("profile.proto")],
        &[] as &[&std::path::Path],
    )
    .expect("fixture compiles");
    (bytes, schema.message("Profile").expect("type"))
}

fn path(segments: Vec<PathSegment>) -> Path {
    Path::from_segments(segments)
}

fn key(k: &str) -> PathSegment {
    PathSegment::Key(k.into())
}

fn find_bytes(doc: &Document, bytes: &[u8], p: &Path) -> Vec<u8> {
    let hits = doc.spans.find(p);
    assert_eq!(hits.len(), 1, "one node at {p}");
    let n = doc.spans.node(hits[0]);
    bytes[n.payload.range()].to_vec()
}

#[test]
fn protoc_encoded_fixture_decodes_exactly() {
    let (bytes, profile) = fixture();
    let doc = decode(&bytes, &profile, &opts()).expect("decodes");
    assert_eq!(doc.value, fixture_value());
    doc.spans.validate(bytes.len()).expect("valid spans");
    assert_eq!(
        doc.spans.len(),
        doc.value.preorder().len(),
        "one node per value"
    );

    // Hand-checked offsets: the first field is i32 = -5, tag 0x08 then a 10-byte varint.
    assert_eq!(bytes[0], 0x08);
    let at = |o: usize| {
        doc.spans
            .node_at(o)
            .map(|(id, role)| (doc.spans.path(id).to_string(), role))
    };
    assert_eq!(at(0), Some(("$.i32".into(), ByteRole::Key)));
    assert_eq!(at(1), Some(("$.i32".into(), ByteRole::Value)));
    assert_eq!(at(10), Some(("$.i32".into(), ByteRole::Value)));
    assert_eq!(at(11), Some(("$.i64".into(), ByteRole::Key)));
    let name_at = bytes
        .windows(3)
        .position(|w| {
            w == "Zo"
                .as_bytes()
                .iter()
                .chain(&[0xc3])
                .copied()
                .collect::<Vec<_>>()
                .as_slice()
        })
        .expect("name bytes");
    assert_eq!(at(name_at), Some(("$.name".into(), ByteRole::Value)));
    assert_eq!(at(name_at - 1), Some(("$.name".into(), ByteRole::Header)));
    assert_eq!(at(name_at - 2), Some(("$.name".into(), ByteRole::Key)));

    assert_eq!(
        find_bytes(
            &doc,
            &bytes,
            &path(vec![key("packed_ids"), PathSegment::Index(2)])
        ),
        vec![0xac, 0x02]
    );
    assert_eq!(
        find_bytes(
            &doc,
            &bytes,
            &path(vec![key("meta"), key("a"), PathSegment::Index(4), key("k")])
        ),
        b"v".to_vec()
    );
    assert_eq!(
        find_bytes(
            &doc,
            &bytes,
            &path(vec![
                key("by_zip"),
                PathSegment::OtherKey("7".into()),
                key("city")
            ])
        ),
        b"C".to_vec()
    );
    assert_eq!(
        find_bytes(&doc, &bytes, &path(vec![key("counts"), key("x")])),
        vec![1]
    );
    // The packed array's key is its tag (18 << 3 | 2 = 0x92 0x01) and its header the length.
    let packed = doc.spans.find(&path(vec![key("packed_ids")]))[0];
    let node = doc.spans.node(packed);
    let k = node.key.expect("tag");
    assert_eq!(&bytes[k.range()], &[0x92, 0x01]);
    assert_eq!(&bytes[node.header().range()], &[4]);
    // The unpacked run has no key; its items carry their own tags.
    let loose = doc.spans.find(&path(vec![key("loose_ids")]))[0];
    assert!(doc.spans.node(loose).key.is_none());
    let first = doc.spans.children(loose).next().expect("item");
    assert_eq!(
        &bytes[doc.spans.node(first).key.expect("tag").range()],
        &[0x98, 0x01]
    );
    // Every byte belongs to some node.
    for o in 0..bytes.len() {
        assert!(doc.spans.node_at(o).is_some(), "byte {o}");
    }

    // The proto3 JSON mapping names fields as written in the .proto.
    let json = to_proto3_json(&bytes, &profile, proto_names())
        .expect("json")
        .text;
    assert!(json.contains("\"packed_ids\":[1,2,300]"), "{json}");
    assert!(
        json.contains("\"created\":\"2023-11-14T22:13:20.250Z\""),
        "{json}"
    );
}

#[test]
fn wire_type_contradicting_the_schema_is_kept_raw() {
    let (_, profile) = fixture();
    // Field 1 (int32) written as I32, then field 14 (string) as a varint.
    let bytes = [0x0d, 1, 0, 0, 0, 0x70, 0x05];
    let doc = decode(&bytes, &profile, &opts()).expect("decodes");
    let Value::Map(entries) = &doc.value else {
        panic!("map")
    };
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].0, Value::Int(1));
    assert!(matches!(entries[0].1, Value::Raw(_)));
    assert_eq!(entries[1].0, Value::Int(14));
    doc.spans.validate(bytes.len()).expect("valid");
}

#[test]
fn invalid_utf8_is_invalid_at_its_byte() {
    let (_, profile) = fixture();
    let bytes = [0x72, 3, b'a', 0xff, b'b'];
    let err = decode(&bytes, &profile, &opts()).expect_err("bad utf-8");
    assert_eq!(err.kind, ErrorKind::Invalid);
    assert_eq!(err.offset, 3);
    assert_eq!(err.path.to_string(), "$.name");
}

#[test]
fn errors_name_the_item_entry_or_field_they_are_in() {
    let (_, profile) = fixture();
    // (bytes, error offset, error path, the partial value)
    let cases: Vec<(Vec<u8>, usize, &str, Value)> = vec![
        // tags = ["x", "\xff"]: the second item of a repeated string.
        (
            vec![0xf2, 0x01, 1, b'x', 0xf2, 0x01, 1, 0xff],
            7,
            "$.tags[1]",
            obj(vec![("tags", Value::Array(vec![text("x")]))]),
        ),
        // home.city = "\xff": a field of a nested message, after a field of the outer one.
        (
            vec![0x08, 5, 0x8a, 0x01, 3, 0x0a, 1, 0xff],
            7,
            "$.home.city",
            obj(vec![("i32", Value::Int(5)), ("home", obj(vec![]))]),
        ),
        // packed_ids = [1, <a varint cut short>].
        (
            vec![0x92, 0x01, 2, 0x01, 0x80],
            4,
            "$.packed_ids[1]",
            obj(vec![("packed_ids", Value::Array(vec![Value::Int(1)]))]),
        ),
        // counts = {"\xff": ...}: a map key.
        (
            vec![0xaa, 0x01, 3, 0x0a, 1, 0xff],
            5,
            "$.counts",
            obj(vec![("counts", Value::Map(vec![]))]),
        ),
        // by_zip = {7: {city: "\xff"}}: a field of a map value.
        (
            vec![0xb2, 0x01, 7, 0x08, 7, 0x12, 3, 0x0a, 1, 0xff],
            9,
            "$.by_zip{7}.city",
            obj(vec![(
                "by_zip",
                Value::Map(vec![(Value::Int(7), obj(vec![]))]),
            )]),
        ),
    ];
    for (bytes, offset, at, partial) in cases {
        let err = decode(&bytes, &profile, &opts()).expect_err("bad input");
        assert_eq!(
            (err.offset, err.path.to_string().as_str()),
            (offset, at),
            "{err}"
        );
        let doc = err.partial.expect("partial document");
        assert_eq!(doc.value, partial, "{at}");
        doc.spans.validate(bytes.len()).expect("partial spans fit");
    }
}

#[test]
fn rank_picks_test_all_types_for_protoscope_message() {
    let schema = set("protoscope/testdata/unittest.proto.pb");
    let bytes = read("protoscope/testdata/message.pb");
    let ranked = schema.rank(&bytes, &opts());
    assert!(!ranked.is_empty());
    assert_eq!(
        ranked[0].message.full_name(),
        "unittest.TestAllTypes",
        "{:?}",
        ranked
            .iter()
            .take(5)
            .map(|c| (
                c.message.full_name().to_string(),
                c.score,
                c.reasons.clone()
            ))
            .collect::<Vec<_>>()
    );
    assert!(ranked[0].score <= 100);
    assert!(ranked.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn rank_picks_file_descriptor_set_for_a_descriptor_set() {
    let bytes = read("protobuf/descriptor_set.pb");
    let schema = Schema::from_descriptor_set(&bytes).expect("set");
    let ranked = schema.rank(&bytes, &opts());
    assert_eq!(
        ranked[0].message.full_name(),
        "google.protobuf.FileDescriptorSet"
    );
    assert_eq!(ranked[0].score, 100);
}

#[test]
fn truncation_at_every_byte_fails_cleanly() {
    let (bytes, profile) = fixture();
    for cut in 0..bytes.len() {
        let input = &bytes[..cut];
        match decode(input, &profile, &opts()) {
            Ok(doc) => doc.spans.validate(cut).expect("valid"),
            Err(e) => {
                assert!(
                    matches!(e.kind, ErrorKind::Eof | ErrorKind::Syntax),
                    "cut {cut}: {e}"
                );
                assert!(e.offset <= cut, "cut {cut}: offset {}", e.offset);
                let partial = e.partial.expect("partial document");
                partial.spans.validate(cut).expect("partial spans valid");
            }
        }
    }
}

#[test]
fn a_million_nested_messages_hit_the_depth_limit() {
    let schema = set("protobuf/descriptor_set.pb");
    let dp = schema
        .message("google.protobuf.DescriptorProto")
        .expect("type");
    // DescriptorProto.nested_type (field 3) nests DescriptorProto; every length claims exactly
    // the bytes that follow it.
    let n = 1_000_000;
    let mut lens = Vec::with_capacity(n);
    let mut inner = 0usize;
    for _ in 0..n {
        lens.push(inner);
        let mut l = inner;
        let mut size = 1;
        while l >= 0x80 {
            l >>= 7;
            size += 1;
        }
        inner += 1 + size;
    }
    let mut bytes = Vec::with_capacity(inner);
    for &l in lens.iter().rev() {
        bytes.push(0x1a);
        let mut v = l;
        while v >= 0x80 {
            bytes.push((v as u8) | 0x80);
            v >>= 7;
        }
        bytes.push(v as u8);
    }
    let err = decode(&bytes, &dp, &opts()).expect_err("too deep");
    assert_eq!(err.kind, ErrorKind::Limit(LimitName::Depth));
    let partial = err.partial.expect("partial");
    partial.spans.validate(bytes.len()).expect("valid");
}

#[test]
fn a_two_gigabyte_length_is_eof_at_once() {
    let (_, profile) = fixture();
    let bytes = [0x72, 0x80, 0x80, 0x80, 0x80, 0x08, b'a', b'b', b'c', b'd'];
    let err = decode(&bytes, &profile, &opts()).expect_err("too long");
    assert_eq!(err.kind, ErrorKind::Eof);
    assert_eq!(err.offset, 1);
    assert!(err.message.contains("2147483648"), "{}", err.message);
}

#[test]
fn groups_and_extensions_decode() {
    // protoscope's unittest: TestAllTypes.optionalgroup (field 16, a group with a = 17) and the
    // extension optional_int32_extension (1) of TestAllExtensions.
    let schema = set("protoscope/testdata/unittest.proto.pb");
    let all = schema.message("unittest.TestAllTypes").expect("type");
    let bytes = [0x83, 0x01, 0x88, 0x01, 0x05, 0x84, 0x01];
    let doc = decode(&bytes, &all, &opts()).expect("group decodes");
    assert_eq!(
        doc.value,
        obj(vec![("optionalgroup", obj(vec![("a", Value::Int(5))]))])
    );
    doc.spans.validate(bytes.len()).expect("valid");
    let g = doc.spans.find(&path(vec![key("optionalgroup")]))[0];
    let node = doc.spans.node(g);
    assert_eq!(node.key.map(|k| k.range()), Some(0..2));
    assert_eq!(node.payload.range(), 2..5, "payload up to the end tag");
    assert_eq!(node.span.end, 7, "end tag is structure of the group");

    let ext = schema.message("unittest.TestAllExtensions").expect("type");
    let doc = decode(&[0x08, 0x2a], &ext, &opts()).expect("extension decodes");
    assert_eq!(
        doc.value,
        obj(vec![(
            "[unittest.optional_int32_extension]",
            Value::Int(42)
        )])
    );
}

#[test]
fn protoscope_samples_decode_with_their_schemas() {
    let schema = set("protoscope/testdata/unittest.proto.pb");
    for (file, ty) in [
        ("message.pb", "unittest.TestAllTypes"),
        ("packed.pb", "unittest.TestPackedTypes"),
        ("packed-big.pb", "unittest.TestPackedTypes"),
    ] {
        let bytes = read(&format!("protoscope/testdata/{file}"));
        let m = schema.message(ty).expect("type");
        let doc = decode(&bytes, &m, &opts()).unwrap_or_else(|e| panic!("{file}: {e}"));
        doc.spans.validate(bytes.len()).expect("valid");
        assert_eq!(doc.spans.len(), doc.value.preorder().len(), "{file}");
    }
    let bytes = read("protoscope/testdata/unittest.proto.pb");
    let fds = schema.message("google.protobuf.FileDescriptorSet");
    // The protoscope set does not hold descriptor.proto; use the protobuf one.
    assert!(fds.is_err());
    let d = set("protobuf/descriptor_set.pb");
    let fds = d
        .message("google.protobuf.FileDescriptorSet")
        .expect("type");
    let doc = decode(&bytes, &fds, &opts()).expect("decodes");
    doc.spans.validate(bytes.len()).expect("valid");
    let file = &doc
        .value
        .get("file")
        .and_then(Value::as_array)
        .expect("files")[0];
    assert_eq!(file.get("name"), Some(&text("unittest.proto")));
}

/// The proto3 JSON options that keep the .proto's field names.
fn proto_names() -> Proto3JsonOptions {
    Proto3JsonOptions {
        proto_names: true,
        pretty: false,
    }
}

/// A repository laid out as buf and protoc expect (`proto/` the root, files importing each
/// other by their path from it): the file loaded alone finds its imports through the roots they
/// imply, names itself from that root, and compiles to the files and types protoc compiles with
/// `-I proto`. In the app, a file outside the folders the user gave adds its own.
#[test]
fn a_proto_finds_the_roots_its_imports_imply() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("proto");
    let write = |name: &str, text: &str| {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("folders");
        std::fs::write(&path, text).expect("write");
        path
    };
    write(
        "acme/common/v1/money.proto",
        "syntax = \"proto3\";\npackage acme.common.v1;\nmessage Money { string currency = 1; int64 units = 2; }\n",
    );
    write(
        "acme/common/v1/page.proto",
        "syntax = \"proto3\";\npackage acme.common.v1;\nimport \"acme/common/v1/money.proto\";\nmessage Page { int32 size = 1; Money total = 2; }\n",
    );
    let orders = write(
        "acme/orders/v1/orders.proto",
        "syntax = \"proto3\";\npackage acme.orders.v1;\n// import \"acme/missing.proto\";\nimport \"acme/common/v1/money.proto\";\nimport \"acme/common/v1/page.proto\";\nimport \"google/protobuf/timestamp.proto\";\nmessage Order { acme.common.v1.Money price = 1; acme.common.v1.Page page = 2; google.protobuf.Timestamp at = 3; }\n",
    );

    let schema = Schema::load(&orders).unwrap_or_else(|e| panic!("{e}"));
    let mut ours: Vec<String> = schema.files().to_vec();
    ours.sort();

    // protoc, given the root, names and compiles the same files.
    let set = dir.path().join("set.pb");
    let status = Command::new(common::protoc())
        .arg("-I")
        .arg(&root)
        .arg("--include_imports")
        .arg("-o")
        .arg(&set)
        .arg("acme/orders/v1/orders.proto")
        .status()
        .expect("protoc runs");
    assert!(status.success());
    let theirs = Schema::load(&set).expect("protoc's set loads");
    let mut names: Vec<String> = theirs.files().to_vec();
    names.sort();
    assert_eq!(ours, names);
    assert!(ours.contains(&"acme/orders/v1/orders.proto".to_string()));
    let mut types = schema.message_names();
    types.sort();
    let mut protoc_types = theirs.message_names();
    protoc_types.sort();
    assert_eq!(types, protoc_types);

    // The app: a folder given that does not hold the file is a place to look, not a fence.
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let mut set = wirelens::workspace::SchemaSet::default();
    let loaded = set
        .load_files(
            std::slice::from_ref(&orders),
            &[elsewhere.path().to_path_buf()],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded
        .schema
        .message_names()
        .contains(&"acme.orders.v1.Order".to_string()));
}

/// A missing import names itself, the file importing it and the folders searched, and points at
/// a folder nearby that holds it; loading again with that folder works, as protoc does with it.
#[test]
fn a_missing_import_names_the_folder_near_the_file_that_holds_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (order, deps) = crate::common::proto_with_import_elsewhere(dir.path());
    let api = order.parent().expect("its folder").to_path_buf();
    let err = Schema::load(&order).expect_err("the import is elsewhere");
    let SchemaError::MissingImport {
        file,
        import,
        searched,
        nearby,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(import, "common/money.proto");
    assert_eq!(file, &order.canonicalize().expect("canonical"));
    assert!(
        searched.contains(&api.canonicalize().expect("canonical")),
        "{searched:?}"
    );
    let deps = deps.canonicalize().expect("canonical");
    assert_eq!(nearby.as_deref(), Some(deps.as_path()));
    let text = err.to_string();
    assert!(
        text.contains("\"common/money.proto\"") && text.contains(&format!("-I {}", deps.display())),
        "{text}"
    );
    // With that folder it compiles, to the files protoc compiles.
    let schema = Schema::from_proto_files(&[&order], &[&deps, &api.canonicalize().expect("c")])
        .unwrap_or_else(|e| panic!("{e}"));
    schema.message("shop.Order").expect("the type");
    let status = Command::new(common::protoc())
        .arg("-I")
        .arg(&deps)
        .arg("-I")
        .arg(&api)
        .arg("-o")
        .arg(dir.path().join("set.pb"))
        .arg("order.proto")
        .status()
        .expect("protoc runs");
    assert!(status.success(), "protoc compiles it with the same folders");
    // Nothing near it holds the import (its three nearest folders are inside the temporary
    // one): the error says so without a folder.
    std::fs::remove_file(deps.join("common/money.proto")).expect("removed");
    let deep = dir.path().join("x/y/z/order.proto");
    std::fs::create_dir_all(deep.parent().expect("parent")).expect("folders");
    std::fs::copy(&order, &deep).expect("copied");
    match Schema::load(&deep) {
        Err(SchemaError::MissingImport { nearby: None, .. }) => {}
        other => panic!("{other:?}"),
    }
}
