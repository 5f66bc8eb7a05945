//! Schema-guided protobuf encoding checked against independent oracles: prost-reflect's JSON
//! mapping + encoder (same bytes, or the same message where prost-reflect's map order is a hash
//! order), and `protoc --decode` (text equal to the expected text). Plus MessagePack input, error
//! messages, notes and spans.

use crate::common;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};
use wirelens::codec::protobuf::dynamic;
use wirelens::codec::{json, msgpack, DecodeOptions, EncodeOptions, Encoded, NoteKind};
use wirelens::model::{Path, RawField, Span, Value, WireType};

const PROTO: &str = r#"syntax = "proto3";
package enc;

import "google/protobuf/any.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/empty.proto";
import "google/protobuf/field_mask.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

enum Color {
  COLOR_UNSPECIFIED = 0;
  RED = 1;
  GREEN = 2;
}

message Inner {
  int32 a = 1;
  string b = 2;
}

message All {
  int32 i32 = 1;
  int64 i64 = 2;
  uint32 u32 = 3;
  uint64 u64 = 4;
  sint32 s32 = 5;
  sint64 s64 = 6;
  fixed32 f32 = 7;
  fixed64 f64 = 8;
  sfixed32 sf32 = 9;
  sfixed64 sf64 = 10;
  float fl = 11;
  double db = 12;
  bool flag = 13;
  string name = 14;
  bytes data = 15;
  Color color = 16;
  Inner inner = 17;
  repeated int32 nums = 18;
  repeated string tags = 19;
  repeated Inner items = 20;
  map<string, int32> counts = 21;
  map<int64, string> by_id = 22;
  map<bool, Inner> by_flag = 23;
  oneof choice {
    string text_choice = 24;
    int32 int_choice = 25;
    Inner inner_choice = 48;
  }
  optional int32 maybe = 26;
  repeated int32 unpacked = 27 [packed = false];
  repeated Color colors = 28;
  repeated double reals = 29;
  google.protobuf.Timestamp ts = 30;
  google.protobuf.Duration dur = 31;
  google.protobuf.Int32Value w_i32 = 32;
  google.protobuf.StringValue w_str = 33;
  google.protobuf.BoolValue w_bool = 34;
  google.protobuf.DoubleValue w_dbl = 35;
  google.protobuf.BytesValue w_bytes = 36;
  google.protobuf.UInt64Value w_u64 = 37;
  google.protobuf.FloatValue w_fl = 38;
  google.protobuf.Struct st = 40;
  google.protobuf.Value val = 41;
  google.protobuf.ListValue list = 42;
  google.protobuf.Any any = 43;
  google.protobuf.FieldMask mask = 44;
  google.protobuf.Empty empty = 45;
  int32 user_id = 46;
  map<uint32, google.protobuf.Value> dyn = 47;
}
"#;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/protobuf")
}

/// The test schema written to a temporary folder (for protox and protoc).
struct Schema {
    dir: tempfile::TempDir,
    pool: DescriptorPool,
}

fn schema() -> Schema {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("enc.proto"), PROTO).expect("write enc.proto");
    let mut compiler =
        protox::Compiler::new([dir.path().to_path_buf(), data_dir()]).expect("protox compiler");
    compiler.include_imports(true);
    compiler
        .open_files(["enc.proto"])
        .expect("enc.proto compiles");
    let pool = compiler.descriptor_pool();
    Schema { dir, pool }
}

fn all(s: &Schema) -> MessageDescriptor {
    s.pool.get_message_by_name("enc.All").expect("enc.All")
}

fn json_value(text: &str) -> Value {
    json::decode(text.as_bytes(), &DecodeOptions::default())
        .expect("test JSON decodes")
        .value
}

fn ours(desc: &MessageDescriptor, text: &str) -> Encoded {
    let out = dynamic::encode(&json_value(text), desc, &EncodeOptions::default())
        .unwrap_or_else(|e| panic!("encode {text}: {e}"));
    out.spans
        .validate(out.bytes.len())
        .unwrap_or_else(|e| panic!("spans of {text}: {e}"));
    out
}

fn oracle(desc: &MessageDescriptor, text: &str) -> DynamicMessage {
    let mut de = serde_json::Deserializer::from_str(text);
    let m = DynamicMessage::deserialize(desc.clone(), &mut de)
        .unwrap_or_else(|e| panic!("prost-reflect parses {text}: {e}"));
    de.end().expect("whole JSON read");
    m
}

/// Our bytes equal prost-reflect's (`exact`), or (for payloads with several map entries, which
/// prost-reflect writes in hash order) decode to the same message with the same length.
fn check(desc: &MessageDescriptor, text: &str, exact: bool) -> Encoded {
    let got = ours(desc, text);
    let want = oracle(desc, text);
    let want_bytes = want.encode_to_vec();
    if exact {
        assert_eq!(
            hex(&got.bytes),
            hex(&want_bytes),
            "bytes differ from prost-reflect for {text}"
        );
    } else {
        assert_eq!(got.bytes.len(), want_bytes.len(), "length for {text}");
        let back = DynamicMessage::decode(desc.clone(), got.bytes.as_slice())
            .unwrap_or_else(|e| panic!("prost-reflect reads our bytes for {text}: {e}"));
        assert_eq!(back, want, "message differs for {text}");
    }
    got
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn path(p: &str) -> Path {
    Path::parse(p).expect("path")
}

#[test]
fn every_scalar_type_matches_prost_reflect() {
    let s = schema();
    let d = all(&s);
    for text in [
        r#"{"i32": -5, "i64": "-9007199254740993", "u32": 4294967295, "u64": "18446744073709551615",
            "s32": -3, "s64": "-4", "f32": 7, "f64": "8", "sf32": -9, "sf64": "-10",
            "fl": "1.5", "db": "-2.25", "flag": true, "name": "héllo", "data": "AAEC/w==",
            "color": "GREEN", "userId": 3}"#,
        r#"{"i32": 2147483647, "i64": 9223372036854775807, "s32": -2147483648,
            "s64": "-9223372036854775808", "sf64": "9223372036854775807", "u64": 18446744073709551615}"#,
        r#"{"data": "AAEC_w"}"#,
        r#"{"data": "AAEC/w"}"#,
        r#"{"color": 1}"#,
        r#"{"color": 7}"#,
        r#"{"fl": "NaN", "db": "-Infinity"}"#,
        r#"{"fl": "Infinity", "db": "NaN"}"#,
        r#"{"user_id": 9, "db": "1e300"}"#,
        r#"{"fl": "0.1", "db": "0.1"}"#,
        r#"{"i32": 0, "name": "", "flag": false, "color": "COLOR_UNSPECIFIED"}"#,
    ] {
        check(&d, text, true);
    }
}

#[test]
fn nested_repeated_oneof_and_optional_match_prost_reflect() {
    let s = schema();
    let d = all(&s);
    for text in [
        r#"{"inner": {"a": 1, "b": "x"}, "nums": [1, -2, 300], "tags": ["a", "", "b"]}"#,
        r#"{"items": [{"a": 1}, {}, {"b": "q"}], "unpacked": [1, 2, 0], "colors": ["RED", 2, 0]}"#,
        r#"{"reals": ["1.5", "-0.0", "NaN"], "nums": []}"#,
        r#"{"intChoice": 0}"#,
        r#"{"textChoice": ""}"#,
        r#"{"maybe": 0}"#,
        r#"{"inner": {}}"#,
        r#"{"counts": {"x": 1}}"#,
        r#"{"counts": {"": 0}}"#,
        r#"{"byId": {"-5": "neg"}}"#,
        r#"{"byFlag": {"true": {"a": 1}}}"#,
        r#"{"byFlag": {"false": {}}}"#,
        r#"{"inner": null, "name": null}"#,
    ] {
        check(&d, text, true);
    }
    // Several map entries: prost-reflect writes them in hash order.
    check(
        &d,
        r#"{"counts": {"x": 1, "y": 0, "z": -1}, "byId": {"-5": "neg", "7": "", "0": "zero"},
            "byFlag": {"true": {"a": 1}, "false": {}}}"#,
        false,
    );
}

#[test]
fn well_known_types_match_prost_reflect() {
    let s = schema();
    let d = all(&s);
    for text in [
        r#"{"ts": "2023-11-14T22:13:20.250Z"}"#,
        r#"{"ts": "1969-12-31T23:59:59.000000001Z"}"#,
        r#"{"ts": "1970-01-01T00:00:00Z"}"#,
        r#"{"dur": "-1.5s"}"#,
        r#"{"dur": "3s", "wI32": 0, "wStr": "s", "wBool": true, "wDbl": "1.5"}"#,
        r#"{"wBytes": "AQI=", "wU64": "18446744073709551615", "wFl": "0.25", "wStr": ""}"#,
        r#"{"st": {"a": true}}"#,
        r#"{"st": {"b": [true, null, "x", {"c": {}}]}}"#,
        r#"{"val": [false, "a"]}"#,
        r#"{"val": null}"#,
        r#"{"val": {"k": false}}"#,
        r#"{"list": ["1", {"k": false}, [], null]}"#,
        r#"{"any": {"@type": "type.googleapis.com/enc.Inner", "a": 5, "b": "z"}}"#,
        r#"{"any": {"@type": "type.googleapis.com/enc.Inner"}}"#,
        r#"{"any": {"@type": "type.googleapis.com/google.protobuf.Duration", "value": "2s"}}"#,
        r#"{"any": {"@type": "type.googleapis.com/google.protobuf.Struct", "value": {"x": "1"}}}"#,
        r#"{"mask": "fooBar,baz.quxQuux"}"#,
        r#"{"empty": {}}"#,
        r#"{"dyn": {"3": "three"}}"#,
    ] {
        check(&d, text, true);
    }
    check(&d, r#"{"st": {"a": true, "b": "two", "c": null}}"#, false);
}

#[test]
fn root_well_known_type_matches_prost_reflect() {
    let s = schema();
    for (ty, text) in [
        ("google.protobuf.Duration", r#""1.5s""#),
        (
            "google.protobuf.Timestamp",
            r#""2000-02-29T12:00:00+01:00""#,
        ),
        ("google.protobuf.Int64Value", r#""-7""#),
        ("google.protobuf.Value", r#"{"a": ["1", true]}"#),
    ] {
        let d = s.pool.get_message_by_name(ty).expect("wkt in pool");
        check(&d, text, true);
    }
}

#[test]
fn proto2_descriptor_types_match_prost_reflect() {
    // Proto2 coverage (explicit presence, closed enums, nested messages) with descriptor.proto;
    // the edition-2023 unittest set is covered in protobuf_editions.rs.
    let bytes =
        std::fs::read(data_dir().join("descriptor_set.protoc35.pb")).expect("descriptor set");
    let pool = DescriptorPool::decode(bytes.as_slice()).expect("descriptor set decodes");
    let d = pool
        .get_message_by_name("google.protobuf.FieldDescriptorProto")
        .expect("FieldDescriptorProto");
    for text in [
        r#"{"name": "", "number": 0, "label": "LABEL_OPTIONAL", "type": "TYPE_INT32"}"#,
        r#"{"name": "x", "number": 3, "type": 5, "options": {"packed": false, "deprecated": true}}"#,
        r#"{"jsonName": "fooBar", "proto3Optional": false, "oneofIndex": -1}"#,
    ] {
        check(&d, text, true);
    }
    let got = ours(&d, r#"{"number": 0}"#);
    assert_eq!(hex(&got.bytes), "1800");
    assert!(got.notes.is_empty(), "explicit presence: no note");
    let set = pool
        .get_message_by_name("google.protobuf.FileDescriptorSet")
        .expect("FileDescriptorSet");
    check(
        &set,
        r#"{"file": [{"name": "a.proto", "package": "p", "messageType": [{"name": "M",
            "field": [{"name": "f", "number": 1, "label": "LABEL_REPEATED", "type": "TYPE_STRING"}]}]}]}"#,
        true,
    );
}

/// Runs `protoc --decode=enc.All` on `bytes`; fails with a clear message when protoc is missing.
fn protoc_decode(s: &Schema, ty: &str, bytes: &[u8]) -> String {
    let mut child = Command::new(common::protoc())
        .arg(format!("-I{}", s.dir.path().display()))
        .arg(format!("-I{}", data_dir().display()))
        .arg(format!("--decode={ty}"))
        .arg("enc.proto")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("protoc runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(bytes)
        .expect("write to protoc");
    let out = child.wait_with_output().expect("protoc runs");
    assert!(
        out.status.success(),
        "protoc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("protoc prints UTF-8")
}

#[test]
fn protoc_reads_what_we_write() {
    let s = schema();
    let d = all(&s);
    let cases: [(&str, &str); 3] = [
        (
            r#"{"userId": 3, "name": "hi", "i64": "-2", "color": "RED", "data": "AAE=",
                "inner": {"a": 1, "b": "x"}, "nums": [1, 2], "unpacked": [3, 4],
                "byId": {"7": "seven"}, "fl": 0.5, "flag": true}"#,
            r#"i64: -2
fl: 0.5
flag: true
name: "hi"
data: "\000\001"
color: RED
inner {
  a: 1
  b: "x"
}
nums: 1
nums: 2
by_id {
  key: 7
  value: "seven"
}
unpacked: 3
unpacked: 4
user_id: 3
"#,
        ),
        (
            r#"{"ts": "1970-01-01T00:00:01.5Z", "dur": "-0.25s", "wI32": 5, "maybe": 0,
                "any": {"@type": "type.googleapis.com/enc.Inner", "a": 2}}"#,
            r#"maybe: 0
ts {
  seconds: 1
  nanos: 500000000
}
dur {
  nanos: -250000000
}
w_i32 {
  value: 5
}
any {
  type_url: "type.googleapis.com/enc.Inner"
  value: "\010\002"
}
"#,
        ),
        (
            r#"{"st": {"k": [1, "a", null, true]}, "mask": "aB,c"}"#,
            r#"st {
  fields {
    key: "k"
    value {
      list_value {
        values {
          number_value: 1
        }
        values {
          string_value: "a"
        }
        values {
          null_value: NULL_VALUE
        }
        values {
          bool_value: true
        }
      }
    }
  }
}
mask {
  paths: "a_b"
  paths: "c"
}
"#,
        ),
    ];
    for (text, want) in cases {
        let got = ours(&d, text);
        assert_eq!(protoc_decode(&s, "enc.All", &got.bytes), want, "for {text}");
    }
}

#[test]
fn messagepack_input_gives_the_same_bytes() {
    let s = schema();
    let d = all(&s);
    for text in [
        r#"{"i32": -5, "i64": 9007199254740993, "name": "x", "fl": 1.5, "color": "GREEN"}"#,
        r#"{"inner": {"a": 1}, "nums": [1, 2, 3], "byId": {"5": "five"}, "st": {"a": [1, null]}}"#,
    ] {
        let from_json = ours(&d, text);
        let mp =
            msgpack::encode(&json_value(text), &EncodeOptions::default()).expect("msgpack encodes");
        let value = msgpack::decode(&mp.bytes, &DecodeOptions::default())
            .expect("msgpack decodes")
            .value;
        let from_mp =
            dynamic::encode(&value, &d, &EncodeOptions::default()).expect("encode msgpack value");
        assert_eq!(hex(&from_mp.bytes), hex(&from_json.bytes), "for {text}");
    }
    // MessagePack says bytes and integer map keys natively: the same bytes as JSON's base64 and
    // digit keys, and no note (an integer key into an integer key field changes nothing).
    let native = Value::Map(vec![
        (Value::text("data"), Value::Bytes(vec![0, 1, 2, 0xff])),
        (
            Value::text("byId"),
            Value::Map(vec![(Value::Int(-5), Value::text("neg"))]),
        ),
    ]);
    let mp = msgpack::encode(&native, &EncodeOptions::default()).expect("msgpack encodes");
    let value = msgpack::decode(&mp.bytes, &DecodeOptions::default())
        .expect("msgpack decodes")
        .value;
    let got = dynamic::encode(&value, &d, &EncodeOptions::default()).expect("encodes");
    let want = check(&d, r#"{"data": "AAEC/w==", "byId": {"-5": "neg"}}"#, true);
    assert_eq!(got.bytes, want.bytes);
    assert!(got.notes.is_empty(), "{:?}", got.notes);
    let hits = got.spans.find(&path("$.byId{-5}"));
    assert_eq!(hits.len(), 1, "integer key path");
}

fn encode_err(desc: &MessageDescriptor, text: &str) -> String {
    match dynamic::encode(&json_value(text), desc, &EncodeOptions::default()) {
        Ok(e) => panic!("{text} encoded to {}", hex(&e.bytes)),
        Err(e) => e.to_string(),
    }
}

#[test]
fn mismatches_are_errors_with_path_and_expectation() {
    let s = schema();
    let d = all(&s);
    assert_eq!(
        encode_err(&d, r#"{"i32": "abc"}"#),
        r#"cannot encode $.i32 as protobuf: expected int32 (a number), found text "abc""#
    );
    assert_eq!(
        encode_err(&d, r#"{"items": [{"a": 1}, {"a": "x"}]}"#),
        r#"cannot encode $.items[1].a as protobuf: expected int32 (a number), found text "x""#
    );
    assert_eq!(
        encode_err(&d, r#"{"i32": 1099511627776}"#),
        "cannot encode $.i32 as protobuf: integer 1099511627776 is out of range for int32"
    );
    assert_eq!(
        encode_err(&d, r#"{"u32": -1}"#),
        "cannot encode $.u32 as protobuf: integer -1 is out of range for uint32"
    );
    assert_eq!(
        encode_err(&d, r#"{"userId": 1.5}"#),
        "cannot encode $.userId as protobuf: expected int32 (an integer), found number 1.5 with a \
         fractional part"
    );
    assert_eq!(
        encode_err(&d, r#"{"color": "BLUE"}"#),
        r#"cannot encode $.color as protobuf: enc.Color has no value named "BLUE""#
    );
    assert_eq!(
        encode_err(&d, r#"{"inner": [1]}"#),
        "cannot encode $.inner as protobuf: expected a map for enc.Inner, found an array of 1 items"
    );
    assert_eq!(
        encode_err(&d, r#"{"nums": 5}"#),
        "cannot encode $.nums as protobuf: expected an array for repeated int32, found integer 5"
    );
    assert_eq!(
        encode_err(&d, r#"{"flag": "yes"}"#),
        r#"cannot encode $.flag as protobuf: expected bool (true or false), found text "yes""#
    );
    assert_eq!(
        encode_err(&d, r#"{"byId": {"x": "y"}}"#),
        r#"cannot encode $.byId.x as protobuf: expected a int64 map key, found text "x""#
    );
    assert_eq!(
        encode_err(&d, r#"{"dur": "soon"}"#),
        r#"cannot encode $.dur as protobuf: expected google.protobuf.Duration (text like "1.5s"), found text "soon""#
    );
    assert_eq!(
        encode_err(&d, r#"{"data": "not base64!"}"#),
        r#"cannot encode $.data as protobuf: expected bytes (bytes or base64 text), found text "not base64!""#
    );
    assert_eq!(
        encode_err(
            &d,
            r#"{"any": {"@type": "type.googleapis.com/nope.Missing", "a": 1}}"#
        ),
        r#"cannot encode $.any["@type"] as protobuf: type "nope.Missing" is not in the schema's descriptor pool"#
    );
    assert_eq!(
        encode_err(&d, r#"{"fl": 1e300}"#),
        "cannot encode $.fl as protobuf: number 1e300 is beyond the range of float"
    );
    // An integral float is an integer.
    let five = ours(&d, r#"{"i32": 5.0, "u64": 1e3}"#);
    assert_eq!(hex(&five.bytes), "080520e807");
    assert_eq!(
        encode_err(&d, "[1]"),
        "cannot encode $ as protobuf: expected a map for enc.All, found an array of 1 items"
    );
}

#[test]
fn notes_for_presence_dropped_keys_and_narrowed_floats() {
    let s = schema();
    let d = all(&s);
    let got = ours(
        &d,
        r#"{"i32": 0, "name": "", "nickname": "bo", "fl": 0.1, "maybe": 0, "intChoice": 0,
            "items": [{"a": 0}, {"a": 0}, {"a": 1}], "wI32": 0}"#,
    );
    let summary: Vec<(NoteKind, String, usize)> = got
        .notes
        .iter()
        .map(|n| (n.kind, n.path.to_string(), n.count))
        .collect();
    assert_eq!(
        summary,
        [
            (NoteKind::FieldDropped, "$.nickname".to_string(), 1),
            (NoteKind::PresenceLost, "$.i32".to_string(), 1),
            (NoteKind::FloatWidth, "$.fl".to_string(), 1),
            (NoteKind::PresenceLost, "$.name".to_string(), 1),
            (NoteKind::PresenceLost, "$.items[0].a".to_string(), 2),
        ]
    );
    assert_eq!(
        got.notes[0].message,
        r#"key "nickname" has no field in enc.All; dropped"#
    );
    assert_eq!(
        got.notes[1].message,
        "proto3 field $.i32 is 0, its default, and is not written: a reader cannot tell 0 from unset"
    );
    assert_eq!(
        got.notes[2].message,
        "0.1 narrows to float32 0.10000000149011612 in a float field"
    );
    let dup = ours(
        &d,
        r#"{"counts": {"a": 1, "a": 2}, "db": 9007199254740993}"#,
    );
    let kinds: Vec<(NoteKind, String)> = dup
        .notes
        .iter()
        .map(|n| (n.kind, n.path.to_string()))
        .collect();
    assert_eq!(
        kinds,
        [
            (NoteKind::IntegerPrecision, "$.db".to_string()),
            (NoteKind::DuplicateKey, "$.counts".to_string()),
        ]
    );
    // Exactly representable floats narrow without a note.
    assert!(ours(&d, r#"{"fl": 0.5}"#).notes.is_empty());
}

#[test]
fn spans_link_source_keys_to_tag_length_and_value_bytes() {
    let s = schema();
    let d = all(&s);
    let got = ours(
        &d,
        r#"{"userId": 3, "inner": {"a": 1}, "nums": [1, 2], "tags": ["x"]}"#,
    );
    // inner(17): 8a01 02 0801; nums(18): 9201 02 0102; tags(19): 9a01 01 78; userId(46): f002 03
    assert_eq!(hex(&got.bytes), "8a0102080192010201029a010178f00203");
    let t = &got.spans;
    let node = |p: &str| {
        let hits = t.find(&path(p));
        assert_eq!(hits.len(), 1, "one node at {p}");
        t.node(hits[0])
    };
    let inner = node("$.inner");
    assert_eq!(inner.key, Some(Span::new(0, 2)));
    assert_eq!(inner.span, Span::new(2, 5));
    assert_eq!(inner.header_end, 3);
    let a = node("$.inner.a");
    assert_eq!(a.key, Some(Span::new(3, 4)));
    assert_eq!(a.span, Span::new(4, 5));
    assert_eq!(a.payload, Span::new(4, 5));
    let nums = node("$.nums");
    assert_eq!(nums.key, Some(Span::new(5, 7)));
    assert_eq!((nums.span, nums.header_end), (Span::new(7, 10), 8));
    let n1 = node("$.nums[1]");
    assert_eq!((n1.key, n1.span), (None, Span::new(9, 10)));
    let tags = node("$.tags");
    assert_eq!((tags.key, tags.span), (None, Span::new(10, 14)));
    let t0 = node("$.tags[0]");
    assert_eq!(
        (t0.key, t0.span),
        (Some(Span::new(10, 12)), Span::new(12, 14))
    );
    assert_eq!((t0.header_end, t0.payload), (13, Span::new(13, 14)));
    let user = node("$.userId");
    assert_eq!(user.key, Some(Span::new(14, 16)));
    assert_eq!((user.span, user.header_end), (Span::new(16, 17), 16));
    assert!(t.find(&path("$.user_id")).is_empty());
}

#[test]
fn map_entry_and_wrapper_spans() {
    let s = schema();
    let d = all(&s);
    // counts(21): aa01 len 0a01 'k' 1005 → value node key = aa01 05 0a016b, header = 10, payload 05.
    let got = ours(&d, r#"{"counts": {"k": 5}, "wI32": 7}"#);
    assert_eq!(hex(&got.bytes), "aa01050a016b10058202020807");
    let t = &got.spans;
    let k = t.node(t.find(&path("$.counts.k"))[0]);
    assert_eq!(k.key, Some(Span::new(0, 6)));
    assert_eq!(
        (k.span, k.header_end, k.payload),
        (Span::new(6, 8), 7, Span::new(7, 8))
    );
    let w = t.node(t.find(&path("$.wI32"))[0]);
    assert_eq!(w.key, Some(Span::new(8, 10)));
    assert_eq!(
        (w.span, w.header_end, w.payload),
        (Span::new(10, 13), 12, Span::new(12, 13))
    );
}

#[test]
fn raw_fields_are_written_back_after_known_fields() {
    let s = schema();
    let d = all(&s);
    let v = Value::Map(vec![
        (
            Value::Int(99),
            Value::Raw(Box::new(RawField {
                wire_type: WireType::Len,
                data: b"hi".to_vec(),
            })),
        ),
        (Value::text("i32"), Value::Int(1)),
        (
            Value::Int(98),
            Value::Raw(Box::new(RawField {
                wire_type: WireType::Varint,
                data: vec![0x96, 0x01],
            })),
        ),
        (Value::Int(1), Value::Int(2)),
    ]);
    let got = dynamic::encode(&v, &d, &EncodeOptions::default()).expect("encodes");
    got.spans.validate(got.bytes.len()).expect("valid spans");
    // i32 twice (by name and by number), then 99 and 98 in their order.
    assert_eq!(hex(&got.bytes), "080108029a0602686990069601");
    assert_eq!(got.notes.len(), 1);
    assert_eq!(got.notes[0].kind, NoteKind::DuplicateKey);
    let raw = got.spans.find(&path("${99}"));
    assert_eq!(raw.len(), 1);
    let n = got.spans.node(raw[0]);
    assert_eq!(
        (n.key, n.span, n.header_end),
        (Some(Span::new(4, 6)), Span::new(6, 9), 7)
    );
}

#[test]
fn deep_nesting_is_linear() {
    let s = schema();
    let d = s
        .pool
        .get_message_by_name("google.protobuf.Value")
        .expect("Value");
    let depth = 40; // prost-reflect stops decoding at 100 nested messages (2 per level here)
    let text = format!("{}\"x\"{}", "[".repeat(depth), "]".repeat(depth));
    let got = check(&d, &text, true);
    assert_eq!(got.spans.len(), depth + 1);
}

/// `payload`'s proto3 JSON written from the schema-guided decoder's value against
/// prost-reflect's reading of the payload (maps in key order on both sides); `false` when the
/// value declined and the payload would be read the ordinary way.
fn value_json_matches(desc: &MessageDescriptor, payload: &[u8], what: &str) -> bool {
    let doc = dynamic::decode(payload, desc, &DecodeOptions::default())
        .unwrap_or_else(|e| panic!("decode {what}: {e}"));
    let mut written = true;
    for proto_names in [false, true] {
        let options = dynamic::Proto3JsonOptions {
            proto_names,
            pretty: false,
        };
        let whole = crate::proto3_oracle::writer_is_oracle(what, payload, desc, options);
        match (
            whole,
            dynamic::proto3_json_of_value(&doc.value, desc, options),
        ) {
            (Ok(whole), Some(text)) => assert_eq!(
                crate::protobuf_stream::maps_sorted(&text, desc),
                crate::protobuf_stream::maps_sorted(&whole.text, desc),
                "{what}"
            ),
            (Err(e), Some(text)) => panic!("{what}: wrote {text} where prost-reflect fails: {e}"),
            (_, None) => written = false,
        }
    }
    written
}

#[test]
fn proto3_json_of_the_decoded_value_matches_prost_reflect_for_every_type() {
    let s = schema();
    let d = all(&s);
    let mut declined = Vec::new();
    for text in [
        r#"{"i32": -5, "i64": "-9007199254740993", "u32": 4294967295, "u64": "18446744073709551615",
            "s32": -3, "s64": "-4", "f32": 7, "f64": "8", "sf32": -9, "sf64": "-10",
            "fl": "1.5", "db": "-2.25", "flag": true, "name": "héllo \"q\" \u0001", "data": "AAEC/w==",
            "color": "GREEN", "userId": 3}"#,
        r#"{"i32": 2147483647, "i64": 9223372036854775807, "s32": -2147483648,
            "s64": "-9223372036854775808", "sf64": "9223372036854775807"}"#,
        r#"{"color": 7, "colors": ["RED", 9, 0]}"#,
        r#"{"fl": "NaN", "db": "-Infinity", "reals": ["1.5", "-0.0", "NaN", "Infinity"]}"#,
        r#"{"fl": "0.1", "db": "0.1", "wFl": "0.1", "wDbl": "1e300"}"#,
        r#"{"fl": "3.4028235e38", "db": "5e-324"}"#,
        r#"{"i32": 0, "name": "", "flag": false, "color": "COLOR_UNSPECIFIED", "db": "-0.0"}"#,
        r#"{"intChoice": 0, "maybe": 0, "inner": {}}"#,
        r#"{"textChoice": ""}"#,
        r#"{"items": [{"a": 1}, {}, {"b": "q"}], "unpacked": [1, 2, 0], "nums": [1, -2, 300]}"#,
        r#"{"counts": {"x": 1, "y": 0, "z": -1, "": 5}, "byId": {"-5": "neg", "7": "", "0": "zero", "10": "ten"},
            "byFlag": {"true": {"a": 1}, "false": {}}}"#,
        r#"{"dyn": {"3": "three", "1": null, "20": [1, "x"]}}"#,
        r#"{"ts": "2023-11-14T22:13:20.250Z", "dur": "-1.5s"}"#,
        r#"{"ts": "1969-12-31T23:59:59.000000001Z", "dur": "0.000001s"}"#,
        r#"{"ts": "0001-01-01T00:00:00Z", "dur": "-315576000000s"}"#,
        r#"{"ts": "9999-12-31T23:59:59.999999999Z", "dur": "315576000000.999999999s"}"#,
        r#"{"dur": "3s", "wI32": 0, "wStr": "s", "wBool": false, "wDbl": "NaN", "wFl": "-Infinity"}"#,
        r#"{"wBytes": "AQI=", "wU64": "18446744073709551615", "wStr": ""}"#,
        r#"{"st": {"b": "two", "a": true, "c": null, "d": 1.5, "e": [1, [2, {"f": "g"}]]}}"#,
        r#"{"val": [false, "a"], "list": ["1", {"k": false}, [], null]}"#,
        r#"{"val": null}"#,
        r#"{"val": {"k": false}}"#,
        r#"{"val": "text"}"#,
        r#"{"any": {"@type": "type.googleapis.com/enc.Inner", "a": 5, "b": "z"}}"#,
        r#"{"any": {"@type": "type.googleapis.com/enc.Inner"}}"#,
        r#"{"any": {"@type": "example.com/x/enc.All", "inner": {"a": 1}, "ts": "2000-01-01T00:00:00Z"}}"#,
        r#"{"mask": "fooBar,baz.quxQuux"}"#,
        r#"{"mask": ""}"#,
        r#"{"empty": {}}"#,
        r#"{}"#,
        // An Any of a well-known type: "value" in that type's JSON form.
        r#"{"any": {"@type": "type.googleapis.com/google.protobuf.Duration", "value": "2s"}}"#,
        r#"{"any": {"@type": "type.googleapis.com/google.protobuf.Timestamp", "value": "2000-01-01T00:00:00.5Z"}}"#,
        r#"{"any": {"@type": "type.googleapis.com/google.protobuf.Struct", "value": {"b": [1, "x"], "a": null}}}"#,
        r#"{"any": {"@type": "type.googleapis.com/google.protobuf.Value", "value": "text"}}"#,
        r#"{"any": {"@type": "type.googleapis.com/google.protobuf.Int32Value", "value": 0}}"#,
        r#"{"any": {"@type": "type.googleapis.com/google.protobuf.StringValue", "value": "s"}}"#,
        r#"{"any": {"@type": "type.googleapis.com/google.protobuf.FieldMask", "value": "a.bC,d"}}"#,
        r#"{"any": {"@type": "type.googleapis.com/google.protobuf.Empty", "value": {}}}"#,
        r#"{"any": {"@type": "type.googleapis.com/google.protobuf.Any", "value": {"@type": "type.googleapis.com/enc.Inner", "a": 5}}}"#,
        // Declined (read the ordinary way): an empty struct in a Value (a Value read as a plain
        // message looks the same).
        r#"{"st": {"c": {}}}"#,
    ] {
        let payload = oracle(&d, text).encode_to_vec();
        if !value_json_matches(&d, &payload, text) {
            declined.push(text);
        }
    }
    assert_eq!(declined.len(), 1, "{declined:#?}");
    // Map entries in key order (numbers by value), the last of a repeated key kept.
    let mut maps = oracle(&d, r#"{"byId": {"10": "ten", "-5": "neg", "7": "a"}}"#).encode_to_vec();
    maps.extend(oracle(&d, r#"{"byId": {"7": "b", "0": "zero"}}"#).encode_to_vec());
    assert!(value_json_matches(&d, &maps, "maps"));
    let doc = dynamic::decode(&maps, &d, &DecodeOptions::default()).expect("decode");
    assert_eq!(
        dynamic::proto3_json_of_value(&doc.value, &d, Default::default()).as_deref(),
        Some(r#"{"byId":{"-5":"neg","0":"zero","7":"b","10":"ten"}}"#)
    );
    // A Value read as a plain message (no kind: null; two kinds: the last) looks like a struct
    // of Value's field names: declined, not written as a struct.
    let no_kind = [0xc2, 0x02, 0x07, 0x0a, 0x05, 0x0a, 0x01, b'c', 0x12, 0x00];
    let two_kinds = [
        0xca, 0x02, 0x0c, 0x11, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x1a, 0x01, b'x',
    ];
    assert!(!value_json_matches(&d, &no_kind, "a Value without a kind"));
    assert!(!value_json_matches(
        &d,
        &two_kinds,
        "a Value with two kinds"
    ));
    // A singular field twice (the last wins), oneof members in turn (the last wins), an unknown
    // field (left out), a packed and an unpacked run of one field (joined).
    let mut twice = oracle(&d, r#"{"i32": 1, "textChoice": "a"}"#).encode_to_vec();
    twice.extend(oracle(&d, r#"{"i32": 2, "intChoice": 3, "nums": [4]}"#).encode_to_vec());
    twice.extend([0xf8, 0x3e, 0x01]); // field 999, varint 1
    twice.extend([0x90, 0x01, 0x05]); // field 18 (nums) unpacked: 5
    assert!(value_json_matches(&d, &twice, "joined"));
    // A message field twice: the occurrences merge, at every depth; a map entry's message
    // value does not merge with another entry's.
    let mut merged = oracle(
        &d,
        r#"{"inner": {"a": 1}, "any": {"@type": "type.googleapis.com/enc.All", "inner": {"a": 2}},
            "byFlag": {"true": {"a": 1}}}"#,
    )
    .encode_to_vec();
    merged.extend(
        oracle(
            &d,
            r#"{"inner": {"b": "x"}, "byFlag": {"true": {"b": "y"}}, "st": {"k": 1}}"#,
        )
        .encode_to_vec(),
    );
    assert!(value_json_matches(&d, &merged, "merged"));
    let doc = dynamic::decode(&merged, &d, &DecodeOptions::default()).expect("decode");
    assert_eq!(
        dynamic::proto3_json_of_value(&doc.value, &d, Default::default()).as_deref(),
        Some(
            r#"{"inner":{"a":1,"b":"x"},"byFlag":{"true":{"b":"y"}},"st":{"k":1.0},"any":{"@type":"type.googleapis.com/enc.All","inner":{"a":2}}}"#
        )
    );
    // A Struct and a ListValue twice: the struct's entries together (the last of each key), the
    // list's items end to end; a wrapper twice is still declined (the value does not say
    // whether the second one set its field).
    let mut twice = oracle(&d, r#"{"st": {"b": 1, "a": "x"}, "list": [1, "a"]}"#).encode_to_vec();
    twice.extend(
        oracle(
            &d,
            r#"{"st": {"b": [true], "c": null}, "list": [{"k": 2}]}"#,
        )
        .encode_to_vec(),
    );
    assert!(value_json_matches(
        &d,
        &twice,
        "a Struct and a ListValue twice"
    ));
    let doc = dynamic::decode(&twice, &d, &DecodeOptions::default()).expect("decode");
    let text = dynamic::proto3_json_of_value(&doc.value, &d, Default::default());
    assert!(
        text.as_deref()
            .is_some_and(|t| t.contains(r#""a":"x","b":[true],"c":null"#)),
        "{text:?}"
    );
    let mut wrapped = oracle(&d, r#"{"wI32": 5}"#).encode_to_vec();
    wrapped.extend(oracle(&d, r#"{"wI32": 0}"#).encode_to_vec());
    assert!(!value_json_matches(&d, &wrapped, "a wrapper twice"));
    // A oneof's message member, another member, the first again: setting the other member
    // cleared the first occurrence, so only the last one is written; without one between, the
    // two merge.
    for (parts, want) in [
        (
            [
                r#"{"innerChoice": {"a": 1}}"#,
                r#"{"intChoice": 2}"#,
                r#"{"innerChoice": {"b": "x"}}"#,
            ],
            r#"{"innerChoice":{"b":"x"}}"#,
        ),
        (
            [
                r#"{"innerChoice": {"a": 1}}"#,
                r#"{"innerChoice": {"b": "x"}}"#,
                r#"{}"#,
            ],
            r#"{"innerChoice":{"a":1,"b":"x"}}"#,
        ),
    ] {
        let bytes: Vec<u8> = parts
            .iter()
            .flat_map(|p| oracle(&d, p).encode_to_vec())
            .collect();
        assert!(value_json_matches(&d, &bytes, want));
        let doc = dynamic::decode(&bytes, &d, &DecodeOptions::default()).expect("decode");
        assert_eq!(
            dynamic::proto3_json_of_value(&doc.value, &d, Default::default()).as_deref(),
            Some(want)
        );
    }
    // A Struct twice is written (its entries together); a timestamp twice is declined.
    let mut twice_any = oracle(&d, r#"{"st": {"k": 1}}"#).encode_to_vec();
    twice_any.extend(oracle(&d, r#"{"st": {"j": 2}}"#).encode_to_vec());
    assert!(value_json_matches(&d, &twice_any, "a Struct twice"));
    let mut twice_ts = oracle(&d, r#"{"ts": "2000-01-01T00:00:00.5Z"}"#).encode_to_vec();
    twice_ts.extend(oracle(&d, r#"{"ts": "2001-01-01T00:00:00Z"}"#).encode_to_vec());
    assert!(!value_json_matches(&d, &twice_ts, "a Timestamp twice"));
    // Root well-known types.
    for (ty, text) in [
        ("google.protobuf.Duration", r#""1.5s""#),
        (
            "google.protobuf.Timestamp",
            r#""2000-02-29T12:00:00+01:00""#,
        ),
        ("google.protobuf.Int64Value", r#""-7""#),
        (
            "google.protobuf.Struct",
            r#"{"a": ["1", true], "b": {"c": null}}"#,
        ),
        ("google.protobuf.ListValue", r#"[1, "two", {"three": 3}]"#),
        ("google.protobuf.FieldMask", r#""a.bC,d""#),
    ] {
        let d = s.pool.get_message_by_name(ty).expect("wkt in pool");
        let payload = oracle(&d, text).encode_to_vec();
        assert!(value_json_matches(&d, &payload, text), "{ty}");
    }
}

/// With editions, `to_proto3_json` leaves out a field of implicit presence that holds its default
/// (prost-reflect reads it as proto2, with presence), inside an `Any` too, as Python's
/// `MessageToJson` does (it reads the packed message as its type; prost-reflect read it afresh
/// and wrote `"x":0`). The value's text does the same.
#[test]
fn proto3_json_of_the_decoded_value_puts_editions_right_as_prost_reflect_does() {
    use prost_types::field_descriptor_proto::{Label, Type};
    use prost_types::{DescriptorProto, FieldDescriptorProto};
    // The editions 2024 file of `presence.proto` (IMPLICIT presence by default), with a message
    // holding its `Inner { int32 x = 1; }` directly and in an `Any`, and an int32 of its own.
    // prost-types has no `edition` field, so the file's bytes are kept and the additions
    // appended (a message's bytes followed by more fields merge into it).
    let editions = std::fs::read(common::data("protobuf-editions/presence.pb")).expect("set");
    let len_field = |number: u32, bytes: &[u8]| {
        let mut out = Vec::new();
        prost::encoding::encode_key(number, prost::encoding::WireType::LengthDelimited, &mut out);
        prost::encoding::encode_varint(bytes.len() as u64, &mut out);
        out.extend_from_slice(bytes);
        out
    };
    let field = |name: &str, number: i32, ty: Type, type_name: Option<&str>| FieldDescriptorProto {
        name: Some(name.into()),
        number: Some(number),
        label: Some(Label::Optional as i32),
        r#type: Some(ty as i32),
        type_name: type_name.map(String::from),
        json_name: Some(name.into()),
        ..Default::default()
    };
    let holder = DescriptorProto {
        name: Some("Holder".into()),
        field: vec![
            field("inner", 1, Type::Message, Some(".wirelens.editions.Inner")),
            field("any", 2, Type::Message, Some(".google.protobuf.Any")),
            field("n", 3, Type::Int32, None),
        ],
        ..Default::default()
    };
    let mut set = len_field(1, &any_proto_file().encode_to_vec());
    let mut rest = editions.as_slice();
    while !rest.is_empty() {
        let (number, _) = prost::encoding::decode_key(&mut rest).expect("key");
        assert_eq!(number, 1, "a FileDescriptorSet holds files only");
        let len = prost::encoding::decode_varint(&mut rest).expect("length") as usize;
        let (file, after) = rest.split_at(len);
        rest = after;
        let mut file = file.to_vec();
        let descriptor = prost_types::FileDescriptorProto::decode(file.as_slice()).expect("file");
        if descriptor.package() == "wirelens.editions" {
            file.extend(len_field(3, b"google/protobuf/any.proto"));
            file.extend(len_field(4, &holder.encode_to_vec()));
        }
        set.extend(len_field(1, &file));
    }
    let schema =
        wirelens::codec::protobuf::schema::Schema::from_descriptor_set(&set).expect("editions set");
    let holder = schema.message("wirelens.editions.Holder").expect("Holder");
    // inner {x: 0 on the wire}, any {Inner {x: 0} on the wire}, n: 0.
    let inner = [0x08, 0x00];
    let url = b"type.googleapis.com/wirelens.editions.Inner";
    let mut any = vec![0x0a, url.len() as u8];
    any.extend(url);
    any.extend([0x12, inner.len() as u8]);
    any.extend(inner);
    let mut payload = vec![0x0a, inner.len() as u8];
    payload.extend(inner);
    payload.extend([0x12, any.len() as u8]);
    payload.extend(&any);
    payload.extend([0x18, 0x00]);
    assert!(value_json_matches(&holder, &payload, "editions"));
    let doc = dynamic::decode(&payload, &holder, &DecodeOptions::default()).expect("decode");
    let text =
        dynamic::proto3_json_of_value(&doc.value, &holder, Default::default()).expect("written");
    assert_eq!(
        text,
        r#"{"inner":{},"any":{"@type":"type.googleapis.com/wirelens.editions.Inner"}}"#
    );
    let whole = dynamic::to_proto3_json(&payload, &holder, Default::default()).expect("written");
    assert_eq!(whole.text, text);
}

/// `google/protobuf/any.proto` as protox builds it.
fn any_proto_file() -> prost_types::FileDescriptorProto {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("a.proto"),
        "syntax = \"proto3\";\nimport \"google/protobuf/any.proto\";\n",
    )
    .expect("write");
    let mut compiler = protox::Compiler::new([dir.path().to_path_buf()]).expect("protox");
    compiler.include_imports(true);
    compiler.open_files(["a.proto"]).expect("compiles");
    compiler
        .file_descriptor_set()
        .file
        .into_iter()
        .find(|f| f.name() == "google/protobuf/any.proto")
        .expect("any.proto")
}
