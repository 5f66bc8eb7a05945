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
    // prost-reflect 0.16 panics loading the edition-2023 unittest set, so proto2 coverage
    // (explicit presence, closed enums, nested messages) uses descriptor.proto.
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
            Value::Raw(RawField {
                wire_type: WireType::Len,
                data: b"hi".to_vec(),
            }),
        ),
        (Value::text("i32"), Value::Int(1)),
        (
            Value::Int(98),
            Value::Raw(RawField {
                wire_type: WireType::Varint,
                data: vec![0x96, 0x01],
            }),
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
