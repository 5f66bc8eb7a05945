//! wirelens' proto3 JSON writer on the payloads prost-reflect's serializer used to write for it
//! (or refuse): each held to prost-reflect's text where it writes one (the oracle of
//! `proto3_oracle.rs`), and to wirelens' own error, which names the field and the byte offset,
//! where it refuses.

use prost::Message as _;
use wirelens::codec::protobuf::dynamic::{
    decode, proto3_json_of_value, to_proto3_json, Proto3JsonOptions,
};
use wirelens::codec::protobuf::schema::Schema;
use wirelens::codec::protobuf::MessageDescriptor;
use wirelens::codec::DecodeOptions;

use crate::proto3_oracle::{oracle_proto3_json, writer_is_oracle};

const PROTO: &str = r#"
syntax = "proto3";
package t;
import "google/protobuf/any.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/field_mask.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
message M {
  string s = 1;
  int32 n = 2;
  google.protobuf.Timestamp ts = 3;
  google.protobuf.Duration dur = 4;
  google.protobuf.Any any = 5;
  google.protobuf.Value val = 6;
  google.protobuf.Int32Value w = 7;
  google.protobuf.FieldMask mask = 8;
  repeated M items = 9;
  M child = 10;
  map<string, M> by_name = 11;
}
"#;

fn message() -> MessageDescriptor {
    Schema::from_proto_source("t.proto", PROTO)
        .expect("compiles")
        .message("t.M")
        .expect("t.M")
}

/// A field `number` of wire type 2 holding `bytes`.
fn len(number: u32, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_key(number, prost::encoding::WireType::LengthDelimited, &mut out);
    prost::encoding::encode_varint(bytes.len() as u64, &mut out);
    out.extend_from_slice(bytes);
    out
}

/// A varint field.
fn varint(number: u32, v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_key(number, prost::encoding::WireType::Varint, &mut out);
    prost::encoding::encode_varint(v, &mut out);
    out
}

/// wirelens' error text for `bytes`, which prost-reflect refuses too.
fn refused(bytes: &[u8]) -> String {
    let m = message();
    let oracle = oracle_proto3_json(bytes, &m, Proto3JsonOptions::default());
    assert!(oracle.is_err(), "prost-reflect wrote {oracle:?}");
    let err = to_proto3_json(bytes, &m, Proto3JsonOptions::default()).expect_err("refused");
    // The value read the ordinary way is not written either.
    if let Ok(doc) = decode(bytes, &m, &DecodeOptions::default()) {
        assert_eq!(
            proto3_json_of_value(&doc.value, &m, Proto3JsonOptions::default()),
            None
        );
    }
    err.to_string()
}

/// wirelens' text for `bytes`, which must be prost-reflect's, in both naming modes and pretty.
fn written(bytes: &[u8]) -> String {
    let m = message();
    for proto_names in [false, true] {
        for pretty in [false, true] {
            let options = Proto3JsonOptions {
                proto_names,
                pretty,
            };
            writer_is_oracle("case", bytes, &m, options).expect("prost-reflect writes it");
        }
    }
    to_proto3_json(bytes, &m, Proto3JsonOptions::default())
        .expect("written")
        .text
}

#[test]
fn a_field_whose_wire_type_contradicts_the_schema_is_refused_with_its_place() {
    // s (a string) as a varint.
    assert_eq!(
        refused(&varint(1, 1)),
        "cannot read t.M: field 1 has wire type VARINT where its type (string) is written as \
         LEN (in t.M.s, at byte 0)"
    );
    // items[1].n (an int32) as a LEN, after a good item.
    let mut bytes = len(9, &varint(2, 5));
    let bad = [len(1, b"o"), len(2, b"x")].concat();
    bytes.extend(len(9, &bad));
    assert_eq!(
        refused(&bytes),
        "cannot read t.M: field 2 has wire type LEN where its type (int32) is written as \
         VARINT (in t.M.n, at byte 9)"
    );
}

#[test]
fn a_malformed_payload_is_refused_with_its_place() {
    // A string that is not UTF-8.
    assert_eq!(
        refused(&len(1, &[b'a', 0xff])),
        "cannot read t.M: string field \"s\" is not valid UTF-8 (in t.M.s, at byte 3)"
    );
    // Cut inside a child's field.
    let mut cut = len(10, &len(1, b"abc"));
    cut.truncate(cut.len() - 1);
    assert_eq!(
        refused(&cut),
        "cannot read t.M: length 5 of field 10 runs past the end of the input (4 bytes \
         left) (in t.M.child, at byte 1)"
    );
    // A tag of wire type 7.
    assert_eq!(
        refused(&[0x0f]),
        "cannot read t.M: invalid wire type 7 in field 1 (in t.M, at byte 0)"
    );
}

/// A `Timestamp` or `Duration` of `seconds` and `nanos` (plain fields, as written).
fn seconds_nanos(seconds: i64, nanos: i32) -> Vec<u8> {
    prost_types::Timestamp { seconds, nanos }.encode_to_vec()
}

#[test]
fn well_known_types_out_of_range_are_refused_with_their_path() {
    assert_eq!(
        refused(&len(3, &seconds_nanos(253_402_300_800, 0))),
        "cannot write t.M as proto3 JSON: the google.protobuf.Timestamp of 253402300800 s and \
         0 ns is out of range (0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z) (at $.ts, in \
         t.M.ts, at byte 0)"
    );
    let mut items = len(9, &[]);
    items.extend(len(9, &len(4, &seconds_nanos(315_576_000_001, 0))));
    assert_eq!(
        refused(&items),
        "cannot write t.M as proto3 JSON: the google.protobuf.Duration of 315576000001 s and \
         0 ns is out of range (at most 315576000000 s and 999999999 ns either way) (at \
         $.items[1].dur, in t.M.dur, at byte 4)"
    );
}

#[test]
fn well_known_types_in_their_plain_form_or_twice_are_written_as_prost_reflect_writes_them() {
    // Twice: the second occurrence sets seconds to 0 explicitly, and nanos.
    let mut ts = len(3, &seconds_nanos(5, 0));
    ts.extend(len(3, &[varint(1, 0), varint(2, 1)].concat()));
    assert_eq!(written(&ts), r#"{"ts":"1970-01-01T00:00:00.000000001Z"}"#);
    // A nanos out of range is not refused (prost-reflect checks the seconds alone).
    assert_eq!(
        written(&len(3, &seconds_nanos(1, -1))),
        r#"{"ts":"1970-01-01T00:00:00.999999999Z"}"#
    );
    // An unknown field in a Duration; a wrapper twice, the second at 0 explicitly.
    let dur = [varint(1, 3), varint(9, 1)].concat();
    let mut bytes = len(4, &dur);
    bytes.extend(len(7, &varint(1, 5)));
    bytes.extend(len(7, &varint(1, 0)));
    assert_eq!(written(&bytes), r#"{"dur":"3s","w":0}"#);
    // A field mask twice: its paths joined.
    let mut mask = len(8, &len(1, b"foo_bar"));
    mask.extend(len(8, &len(1, b"baz")));
    assert_eq!(written(&mask), r#"{"mask":"fooBar,baz"}"#);
    // A Value with two members (the last wins), and a Value twice whose struct members merge.
    let two = [len(3, b"x"), varint(4, 1)].concat();
    assert_eq!(written(&len(6, &two)), r#"{"val":true}"#);
    let entry = |k: &[u8], v: &[u8]| len(1, &[len(1, k), len(2, v)].concat());
    let mut merged = len(6, &len(5, &entry(b"a", &varint(4, 1))));
    merged.extend(len(6, &len(5, &entry(b"b", &len(3, b"y")))));
    assert_eq!(written(&merged), r#"{"val":{"a":true,"b":"y"}}"#);
}

#[test]
fn an_any_of_a_type_not_in_the_schema_and_a_non_finite_value_are_refused() {
    let any = [len(1, b"type.googleapis.com/x.Nope"), len(2, &varint(1, 1))].concat();
    assert_eq!(
        refused(&len(5, &any)),
        "cannot write t.M as proto3 JSON: the google.protobuf.Any holds a x.Nope, which the \
         schema does not have (its proto3 JSON needs the type's fields) (at $.any, in t.M.any, \
         at byte 0)"
    );
    assert_eq!(
        refused(&len(5, &len(1, b"t.M"))),
        "cannot write t.M as proto3 JSON: the google.protobuf.Any's type URL \"t.M\" has no \
         '/' before the type name (at $.any, in t.M.any, at byte 0)"
    );
    let mut nan = vec![0x11];
    nan.extend(f64::NAN.to_le_bytes());
    assert_eq!(
        refused(&len(6, &nan)),
        "cannot write t.M as proto3 JSON: a google.protobuf.Value holds the number NaN, which \
         JSON cannot write (at $.val, in t.M.val, at byte 0)"
    );
    // An Any with nothing in it: `{}`, as Python's `MessageToJson` writes it (prost-reflect
    // refused it: "unsupported type url ''").
    let m = message();
    let empty = len(5, &[]);
    assert!(oracle_proto3_json(&empty, &m, Proto3JsonOptions::default()).is_err());
    let got = to_proto3_json(&empty, &m, Proto3JsonOptions::default()).expect("written");
    assert_eq!(got.text, r#"{"any":{}}"#);
    // An Any of a type in the schema, in its plain form (the value before the type URL).
    let plain = [len(2, &varint(2, 7)), len(1, b"type.googleapis.com/t.M")].concat();
    assert_eq!(
        written(&len(5, &plain)),
        r#"{"any":{"@type":"type.googleapis.com/t.M","n":7}}"#
    );
}

/// `depth` messages nested by `child`, the innermost with `n: 1`.
fn nested(depth: usize) -> Vec<u8> {
    let mut bytes = varint(2, 1);
    for _ in 0..depth {
        bytes = len(10, &bytes);
    }
    bytes
}

#[test]
fn nesting_is_written_as_deep_as_prost_reflect_reads_and_refused_deeper_with_the_path() {
    let m = message();
    let options = Proto3JsonOptions::default();
    let mut deepest = 0;
    for depth in 90..110 {
        let bytes = nested(depth);
        if writer_is_oracle("nested", &bytes, &m, options).is_ok() {
            deepest = depth;
        }
    }
    assert!(deepest >= 90, "{deepest}");
    let err = to_proto3_json(&nested(deepest + 1), &m, options).expect_err("too deep");
    let path = format!("${}", ".child".repeat(deepest + 1));
    let text = err.to_string();
    assert!(
        text.starts_with("cannot write t.M as proto3 JSON: messages nested more than "),
        "{text}"
    );
    // The innermost child's tag: past the tag and length of each message around it.
    let bytes = nested(deepest + 1);
    let mut offset = 0;
    for _ in 0..deepest {
        let mut rest = &bytes[offset + 1..];
        let before = rest.len();
        prost::encoding::decode_varint(&mut rest).expect("length");
        offset += 1 + before - rest.len();
    }
    assert!(
        text.ends_with(&format!("(at {path}, in t.M.child, at byte {offset})")),
        "{text}"
    );
    // Far deeper: refused, not a crash.
    assert!(to_proto3_json(&nested(5000), &m, options).is_err());
}

#[test]
fn editions_are_put_right_below_any_and_in_extensions_and_loose_strings_get_notes() {
    let schema = Schema::from_proto_source(
        "e.proto",
        r#"edition = "2023";
package e;
import "google/protobuf/any.proto";
option features.utf8_validation = NONE;
enum Shade { option features.enum_type = CLOSED; DARK = 1; LIGHT = 2; }
message Inner { int32 x = 1 [features.field_presence = IMPLICIT]; }
message H {
  string s = 1;
  repeated string r = 2;
  map<string, string> m = 3;
  google.protobuf.Any any = 4;
  extensions 100 to 200;
}
extend H { Shade shade = 100; repeated Shade shades = 101; Inner inner = 102; }
"#,
    )
    .expect("compiles");
    let h = schema.message("e.H").expect("e.H");
    let any = [
        len(1, b"type.googleapis.com/e.Inner"),
        len(2, &varint(1, 0)),
    ]
    .concat();
    let bytes = [
        len(1, b"a\xffb"),
        len(2, b"ok"),
        len(2, b"\xff"),
        len(3, &[len(1, b"k"), len(2, b"\xfe")].concat()),
        len(4, &any),
        varint(100, 7),
        varint(101, 1),
        varint(101, 9),
        len(102, &varint(1, 0)),
    ]
    .concat();
    let options = Proto3JsonOptions::default();
    let got = writer_is_oracle("editions", &bytes, &h, options).expect("written");
    assert_eq!(
        got.text,
        "{\"s\":\"a\u{fffd}b\",\"r\":[\"ok\",\"\u{fffd}\"],\"m\":{\"k\":\"\u{fffd}\"},\
         \"any\":{\"@type\":\"type.googleapis.com/e.Inner\"},\"[e.shades]\":[\"DARK\"],\
         \"[e.inner]\":{}}"
    );
    let ours = to_proto3_json(&bytes, &h, options).expect("written");
    let note = |path: &str, at: usize, of: usize, b64: &str| {
        format!(
            "{path}: a string field with utf8_validation = NONE holds bytes that are not UTF-8 \
             (byte {at} of {of}); JSON text cannot hold them, so it has U+FFFD for each bad \
             sequence (the bytes in base64: {b64})"
        )
    };
    assert_eq!(
        ours.notes,
        [
            note("$.s", 1, 3, "Yf9i"),
            note("$.r[1]", 0, 1, "/w=="),
            note("$.m[\"k\"]", 0, 1, "/g=="),
        ]
    );
    // The value read the ordinary way declines (its notes are the whole read's to give).
    let doc = decode(&bytes, &h, &DecodeOptions::default()).expect("decodes");
    assert_eq!(proto3_json_of_value(&doc.value, &h, options), None);
}
