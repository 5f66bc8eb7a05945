//! The reading of a schema-less protobuf field chosen from a right-click on its row: it applies
//! to every occurrence, the payload is decoded again, the source keeps it across a switch to
//! another source and back, and it can be cleared.

use egui_kittest::kittest::Queryable;
use wirelens::codec::protobuf::wire::{FieldReading, ReadAs};
use wirelens::codec::Format;
use wirelens::gui::AppOptions;
use wirelens::model::{Kind, Segment};

use crate::gui_app::{app, harness_with, sample, settle};

/// The kinds of the top-level nodes of field `number` in the protobuf source column.
fn kinds_of_field(
    h: &egui_kittest::Harness<'_, Option<wirelens::gui::App>>,
    number: &str,
) -> Vec<Kind> {
    let a = app(h).ws.analysis().cloned().expect("analysed");
    let column = a.column(Format::Protobuf).expect("protobuf column");
    assert!(column.is_source, "the payload is read as protobuf");
    let doc = column.document.as_ref().expect("decoded");
    let root = doc.spans.root().expect("a root");
    doc.spans
        .children(root)
        .filter(|&id| {
            matches!(doc.spans.node(id).segment, Segment::OtherKey(k) if doc.spans.key_text(k) == number)
        })
        .map(|id| doc.spans.kind(id))
        .collect()
}

#[test]
fn a_field_read_as_bytes_from_its_row_stays_with_its_source() {
    let mut h = harness_with(
        AppOptions {
            files: vec![sample("user-profile.pb"), sample("iot-metrics.json")],
            settings: None,
        },
        true,
    );
    settle(&mut h);
    // The second file is shown; go back to the protobuf one.
    h.state_mut().as_mut().expect("app").ws.select_source(0);
    settle(&mut h);
    h.get_by_label("schema: no schema (field numbers)");
    // Field 5 occurs twice ("admin", "editor"), read as text by the decoder.
    assert_eq!(kinds_of_field(&h, "5"), vec![Kind::Text, Kind::Text]);

    // The JSON, MessagePack and CBOR columns write field 5 once, as the array of both; the
    // row under the protobuf column's heading is the source's.
    let column_left = h.get_by_label("Protobuf (source)").rect().left();
    h.query_all_by_label("{5}: \"admin\"")
        .find(|n| (n.rect().left() - column_left).abs() < 8.0)
        .expect("field 5's row in the protobuf column")
        .click_secondary();
    h.run_steps(2);
    h.get_by_label("Read every ${5} as");
    // The readings of a LEN field, as --read names them.
    for label in [
        "message",
        "string",
        "packed varints",
        "packed fixed32",
        "packed sint64",
    ] {
        h.get_by_label(label);
    }
    h.get_by_label("bytes").click();
    settle(&mut h);
    assert_eq!(kinds_of_field(&h, "5"), vec![Kind::Bytes, Kind::Bytes]);
    // Each occurrence keeps its own row in the source's tree.
    let in_source = h
        .query_all_by_label_contains("{5}: ")
        .filter(|n| (n.rect().left() - column_left).abs() < 8.0)
        .count();
    assert_eq!(in_source, 2);
    h.get_by_label("your readings: ${5}=bytes");
    assert_eq!(
        app(&h).ws.entry().expect("shown").choice.field_readings,
        vec![FieldReading {
            fields: vec![5],
            read_as: ReadAs::Bytes
        }]
    );

    // Another source is read the decoder's way; this one keeps its reading when shown again.
    h.state_mut().as_mut().expect("app").ws.select_source(1);
    settle(&mut h);
    assert!(h.query_by_label("your readings: ${5}=bytes").is_none());
    h.state_mut().as_mut().expect("app").ws.select_source(0);
    settle(&mut h);
    h.get_by_label("your readings: ${5}=bytes");
    assert_eq!(kinds_of_field(&h, "5"), vec![Kind::Bytes, Kind::Bytes]);

    // Cleared, the decoder's guess is back.
    h.get_by_label("Clear the field reading").click();
    settle(&mut h);
    assert!(h.query_by_label("your readings: ${5}=bytes").is_none());
    assert_eq!(kinds_of_field(&h, "5"), vec![Kind::Text, Kind::Text]);
}
