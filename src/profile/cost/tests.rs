//! Byte attribution: hand-counted small buffers, and the exact-sum invariant on every sample in
//! every format.

use super::*;
use crate::codec::{decode, encode, DecodeOptions, EncodeOptions, Format};
use crate::model::Value;

fn costs_of_json(text: &str) -> FieldCosts {
    let doc = decode(text.as_bytes(), Format::Json, &DecodeOptions::default()).expect("json");
    field_costs(Format::Json, text.len(), &doc.spans)
}

#[test]
fn json_bytes_by_hand() {
    // `␣␣{"a":␣1}␣`: 3 bytes outside the root, `{` opens it, `"a"` names the field, `:`, the
    // space and `}` hold the map together, `1` is the value.
    let c = costs_of_json("  {\"a\": 1} ");
    assert_eq!(c.total, 11);
    let root = c.get("$").expect("root row");
    assert_eq!(
        (root.key, root.header, root.value, root.structure),
        (0, 1, 0, 3)
    );
    let a = c.get("$.a").expect("a row");
    assert_eq!(
        (a.key, a.header, a.value, a.structure, a.nodes),
        (3, 0, 1, 0, 1)
    );
    let out = c.get(OUTSIDE).expect("outside row");
    assert_eq!(out.total(), 3);
    assert_eq!(c.fields.iter().map(FieldCost::total).sum::<usize>(), 11);
}

#[test]
fn records_aggregate_under_one_pattern() {
    let c = costs_of_json(r#"{"data":[{"id":1},{"id":22},{"id":333}]}"#);
    let id = c.get("$.data[*].id").expect("pattern row");
    assert_eq!(id.nodes, 3);
    assert_eq!(id.key, 3 * 4); // "id" with its quotes, three times
    assert_eq!(id.value, 1 + 2 + 3);
    assert!(c.get("$.data[0].id").is_none());
    let rec = c.get("$.data[*]").expect("record row");
    // Each record: `{` is its header; its `:` and `}` are its structure (the commas between
    // records are the array's).
    assert_eq!((rec.nodes, rec.header, rec.structure), (3, 3, 6));
    // `,` `,` `]`; the `:` after the key "data" is the root's, as each record's `:` is the
    // record's.
    assert_eq!(c.get("$.data").map(|d| d.structure), Some(2 + 1));
}

#[test]
fn protobuf_pays_one_byte_per_tag() {
    let value = Value::object([("id", Value::int(5)), ("name", Value::text("x"))]);
    let enc = encode(&value, Format::Protobuf, &EncodeOptions::default()).expect("protobuf");
    // 08 05 (field 1 varint 5), 12 01 78 (field 2, length 1, "x").
    assert_eq!(enc.bytes, [0x08, 0x05, 0x12, 0x01, b'x']);
    let c = field_costs(Format::Protobuf, enc.bytes.len(), &enc.spans);
    let id = c.get("$.id").expect("id");
    let name = c.get("$.name").expect("name");
    assert_eq!((id.key, id.header + id.value), (1, 1));
    assert_eq!((name.key, name.header, name.value), (1, 1, 1));
}

#[test]
fn msgpack_map_of_one() {
    let value = Value::object([("a", Value::int(1))]);
    let enc = encode(&value, Format::MessagePack, &EncodeOptions::default()).expect("msgpack");
    assert_eq!(enc.bytes, [0x81, 0xa1, b'a', 0x01]);
    let c = field_costs(Format::MessagePack, 4, &enc.spans);
    assert_eq!(c.get("$").map(|r| (r.header, r.total())), Some((1, 1)));
    let a = c.get("$.a").expect("a");
    assert_eq!((a.key, a.header + a.value), (2, 1));
}

fn check_sums(name: &str, format: Format, bytes: &[u8], spans: &crate::model::SpanTree) {
    let c = field_costs(format, bytes.len(), spans);
    let sum: usize = c.fields.iter().map(FieldCost::total).sum();
    assert_eq!(sum, bytes.len(), "{name} as {}", format.title());
    assert_eq!(c.by_role().total(), bytes.len());
    // Every node is counted in exactly one row.
    assert_eq!(
        c.fields.iter().map(|f| f.nodes).sum::<usize>(),
        spans.len(),
        "{name} as {}",
        format.title()
    );
}

#[test]
fn every_sample_in_every_format_sums_to_its_size() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/samples");
    let mut checked = 0;
    for name in [
        "transactions-1k.json",
        "risk-batch.json",
        "user-profile.json",
        "order-graphql.json",
        "iot-metrics.json",
        "edge-cases.cbor",
        "edge-cases.msgpack",
        "iot-metrics.cbor",
    ] {
        let bytes = std::fs::read(format!("{dir}/{name}")).expect("sample present");
        let from = if name.ends_with(".json") {
            Format::Json
        } else if name.ends_with(".cbor") {
            Format::Cbor
        } else {
            Format::MessagePack
        };
        let doc = decode(&bytes, from, &DecodeOptions::default()).expect("sample decodes");
        // The decoded buffer itself (with its own whitespace, if any) …
        check_sums(name, from, &bytes, &doc.spans);
        // … and wirelens' encoding in every format, pretty JSON too.
        for format in Format::ALL {
            let Ok(enc) = encode(&doc.value, format, &EncodeOptions::default()) else {
                assert_eq!(
                    format,
                    Format::Protobuf,
                    "{name} encodes as {}",
                    format.title()
                );
                continue;
            };
            check_sums(name, format, &enc.bytes, &enc.spans);
            checked += 1;
        }
        let pretty = EncodeOptions {
            pretty: true,
            ..EncodeOptions::default()
        };
        let enc = encode(&doc.value, Format::Json, &pretty).expect("pretty json");
        check_sums(name, Format::Json, &enc.bytes, &enc.spans);
    }
    assert!(checked >= 30, "{checked}");
}

#[test]
fn empty_tree_is_all_outside() {
    let c = field_costs(Format::Json, 5, &crate::model::SpanTree::default());
    assert_eq!(c.fields.len(), 1);
    assert_eq!(c.fields[0].pattern, OUTSIDE);
    assert_eq!(c.fields[0].total(), 5);
}
