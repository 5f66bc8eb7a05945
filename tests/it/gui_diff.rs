//! The diff view, driven through the real app in a kittest harness: two real captures of one
//! API compared from the payload list's context menu, a change clicked in the list selects its
//! bytes in both hex views (and a tree row selects its change), the kind filter, the CSV export
//! (through a symbolic link too), and schema-aware equality with a real `.proto`.

use std::path::PathBuf;

use eframe::egui;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use wirelens::gui::{App, AppOptions};

use crate::gui_app::{app, harness_with};

fn real(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture/real/diff-api")
        .join(name)
}

fn json_names(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/protobuf/json-names")
        .join(name)
}

/// The change lines (as `wirelens diff` prints them) and the captures' layer chains use `→`
/// (U+2192), which egui's built-in font lacks: the app draws it with the system fallback fonts it
/// installs at start (tested in the fonts module), which the harness does not have.
fn harness(options: AppOptions) -> Harness<'static, Option<App>> {
    harness_with(options, true)
}

fn app_mut<'h>(h: &'h mut Harness<'_, Option<App>>) -> &'h mut App {
    h.state_mut()
        .as_mut()
        .expect("the app was made on the first frame")
}

/// Runs frames until every source is peeled and analysed and no comparison is running.
fn settle(h: &mut Harness<'_, Option<App>>) {
    h.step();
    for _ in 0..5000 {
        let idle = h.state().as_ref().is_some_and(|a| {
            !a.ws.is_busy()
                && !a.ws.is_comparing()
                && a.ws.entries.iter().all(|e| e.opened.ready().is_some())
        });
        if idle {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.step();
    }
    assert!(!app(h).ws.is_comparing(), "the comparison finished");
    h.run_steps(4);
}

const AMOUNT: &str = "~ $.data[1].amount: 12.5 → 13.75  (A bytes 212..216, B bytes 127..136)";

/// Both captures open, their orders (payload 4) compared, A = version 1.
fn compared_orders() -> Harness<'static, Option<App>> {
    let mut h = harness(AppOptions {
        files: vec![real("orders-v1.pcap"), real("orders-v2.pcap")],
        settings: None,
    });
    settle(&mut h);
    // The source shown is the last opened (version 2): right-click its orders payload,
    // Compare with… ▸ version 1's orders.
    h.get_by_label("#4 GET 200 · 411 bytes · MessagePack")
        .click_secondary();
    h.run_steps(2);
    h.get_by_label("Compare with…").hover();
    h.run_steps(2);
    if h.query_by_label("orders-v1.pcap #4").is_none() {
        h.get_by_label("Compare with…").click();
        h.run_steps(2);
    }
    h.get_by_label("orders-v1.pcap #4").click();
    settle(&mut h);
    h.get_by_label("A: orders-v2.pcap #4");
    // Swap makes version 1 the A side and compares again.
    h.get_by_label("Swap").click();
    settle(&mut h);
    h.get_by_label("A: orders-v1.pcap #4");
    h.get_by_label("B: orders-v2.pcap #4");
    h
}

#[test]
fn a_change_clicked_in_the_list_selects_its_bytes_in_both_payloads() {
    let mut h = compared_orders();
    h.get_by_label("6 changes: 3 changed, 1 type changed, 1 added, 1 removed; same key order");
    assert_eq!(app(&h).diff_view().listed().len(), 6);
    h.get_by_label(AMOUNT).click();
    h.run_steps(3);
    let c = app(&h).ws.comparison().cloned().expect("compared");
    let selected = app(&h)
        .diff_view()
        .selected()
        .expect("a change is selected");
    assert_eq!(c.diff.changes[selected].to_string(), AMOUNT);
    // Both hex views put their cursor on the change's first byte, and both say its bytes.
    assert_eq!(app(&h).diff_view().cursors(), (Some(212), Some(127)));
    h.get_by_label("A · $.data[1].amount: bytes 212..216 (4 bytes)");
    h.get_by_label("B · $.data[1].amount: bytes 127..136 (9 bytes)");
    // Those bytes are the numbers: `12.5` in A's JSON, a float64 (0xcb and 8 bytes) in B's
    // MessagePack.
    assert_eq!(&c.a.column.bytes[212..216], b"12.5");
    assert_eq!(c.b.column.bytes[127], 0xcb);
    assert_eq!(
        f64::from_be_bytes(c.b.column.bytes[128..136].try_into().expect("8 bytes")),
        13.75
    );

    // A row of A's tree selects the change it is: `total`.
    h.get_by_label("total: 4").click();
    h.run_steps(3);
    let selected = app(&h)
        .diff_view()
        .selected()
        .expect("a change is selected");
    assert_eq!(c.diff.changes[selected].path.to_string(), "$.total");
    assert_eq!(app(&h).diff_view().cursors(), (Some(21), Some(13)));
    h.get_by_label("B · $.total: bytes 13..14 (1 bytes)");
}

#[test]
fn the_kind_filter_and_the_csv_export_write_the_changes_listed() {
    let mut h = compared_orders();
    h.get_by_label("changed (3)").click();
    h.run_steps(2);
    assert_eq!(app(&h).diff_view().listed().len(), 3);
    assert_eq!(h.query_all_by_label(AMOUNT).count(), 0);
    h.get_by_label("- $.data[0].coupon: \"WINTER10\"  (A bytes 147..167)");

    let dir = tempfile::tempdir().expect("temp dir");
    // The export path is a symbolic link: the file it points to is written, the link stays.
    let target = dir.path().join("changes.csv");
    std::fs::write(&target, "old").expect("written");
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink(&target, &link).expect("link made");
    h.get_by_label("Export to").focus();
    h.get_by_label("Export to")
        .type_text(&link.display().to_string());
    h.run_steps(2);
    h.get_by_label("Export CSV").click();
    h.run_steps(2);
    h.get_by_label(&format!("exported 3 of 6 changes to {}", link.display()));
    assert!(std::fs::symlink_metadata(&link)
        .expect("link")
        .file_type()
        .is_symlink());
    let mut rows = csv::Reader::from_path(&target).expect("a CSV file");
    let headers = rows.headers().expect("headers").clone();
    assert_eq!(
        headers.iter().collect::<Vec<_>>(),
        ["kind", "path", "a_value", "b_value", "a_start", "a_end", "b_start", "b_end"]
    );
    let rows: Vec<Vec<String>> = rows
        .records()
        .map(|r| r.expect("a row").iter().map(str::to_string).collect())
        .collect();
    let kinds: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("removed", "$.data[0].coupon"),
            ("added", "$.data[2]"),
            ("type", "$.data[2].customer_id"),
        ]
    );
    assert_eq!(rows[0][4..], ["147", "167", "", ""]);
}

/// The GUI compares with the schema too: span.json (proto3 JSON from protoc's Python runtime)
/// against span.pb read as fixture.trace.Span differs only in its two bytes fields.
#[test]
fn the_diff_view_compares_proto3_json_with_the_schema() {
    let mut h = harness(AppOptions {
        files: vec![
            json_names("trace.proto"),
            json_names("span.json"),
            json_names("span.pb"),
        ],
        settings: None,
    });
    settle(&mut h);
    app_mut(&mut h)
        .ws
        .set_proto_mode(wirelens::workspace::ProtoMode::Message(
            "fixture.trace.Span".into(),
        ));
    settle(&mut h);
    app_mut(&mut h).compare((0, 0), (1, 0));
    settle(&mut h);
    h.get_by_label("2 changes: 2 type changed; same key order");
    h.get_by_label("compared with the schema of fixture.trace.Span (proto3 JSON forms)");
    let c = app(&h).ws.comparison().cloned().expect("compared");
    let paths: Vec<String> = c.diff.changes.iter().map(|c| c.path.to_string()).collect();
    assert_eq!(paths, ["$.traceId", "$.spanId"]);
    // Nine 64-bit integers written as text (two start/end times, an attribute, two event
    // times, four sample deltas), one RFC 3339 timestamp, eighteen JSON names.
    let e = c.diff.encoding;
    assert_eq!(
        (e.int_texts, e.json_forms, e.field_names),
        (9, 1, 18),
        "{e:?}"
    );
}

/// Row `offset` (a multiple of 16) of a hex view showing `bytes`: its label, as the hex view
/// gives it (the bytes in hex, space-separated).
fn hex_row(bytes: &[u8], offset: usize) -> String {
    bytes[offset..(offset + 16).min(bytes.len())]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Clicks byte `i` (0..16) of the hex row labelled `row`.
fn click_hex_byte(h: &mut Harness<'_, Option<App>>, row: &str, i: usize) {
    let rect = h.get_by_label(row).rect();
    let cell = rect.width() / 16.0;
    let pos = egui::pos2(rect.left() + cell * (i as f32 + 0.5), rect.center().y);
    h.hover_at(pos);
    h.run_steps(1);
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
    h.run_steps(3);
}

#[test]
fn a_byte_clicked_in_one_hex_view_selects_its_change_in_both() {
    let mut h = compared_orders();
    let c = app(&h).ws.comparison().cloned().expect("compared");
    // A's byte 21 is the `4` of `"total": 4`: that change, and B's byte 13.
    let row = hex_row(&c.a.column.bytes, 16);
    click_hex_byte(&mut h, &row, 5);
    let selected = app(&h)
        .diff_view()
        .selected()
        .expect("a change is selected");
    assert_eq!(c.diff.changes[selected].path.to_string(), "$.total");
    assert_eq!(app(&h).diff_view().cursors(), (Some(21), Some(13)));
    h.get_by_label("B · $.total: bytes 13..14 (1 bytes)");

    // B's byte 130 is inside the float64 13.75 (B bytes 127..136): the amount's change is
    // selected, and A's hex view moves its cursor to the change's first byte there, 212.
    let row = hex_row(&c.b.column.bytes, 128);
    click_hex_byte(&mut h, &row, 2);
    let selected = app(&h)
        .diff_view()
        .selected()
        .expect("a change is selected");
    assert_eq!(c.diff.changes[selected].to_string(), AMOUNT);
    assert_eq!(app(&h).diff_view().cursors(), (Some(212), Some(127)));
    h.get_by_label("A · $.data[1].amount: bytes 212..216 (4 bytes)");
    h.get_by_label("B · $.data[1].amount: bytes 127..136 (9 bytes)");
}

/// The options the CLI takes, edited in the view: a key pattern that does not parse is kept as
/// typed with its error under it and compares nothing; an ignore pattern compares again
/// without the paths it names; key order can count.
#[test]
fn the_diff_options_are_edited_in_the_view_and_compare_again() {
    let mut h = compared_orders();
    h.get_by_label("Identity keys").focus();
    h.get_by_label("Identity keys").type_text("$.data");
    h.run_steps(3);
    h.get_by_label(
        "Identity keys: $.data: expected an array's records and their field, like $.data[*].id",
    );
    assert_eq!(app(&h).settings.diff_keys, "$.data");
    assert!(!app(&h).ws.is_comparing(), "a bad pattern compares nothing");
    assert_eq!(
        app(&h).diff_view().key_error(),
        Some("$.data: expected an array's records and their field, like $.data[*].id")
    );

    // Finished, it parses: the error goes and the records are matched by their id.
    h.get_by_label("Identity keys").type_text("[*].id");
    settle(&mut h);
    assert_eq!(app(&h).diff_view().key_error(), None);
    let c = app(&h).ws.comparison().cloned().expect("compared");
    assert_eq!(c.diff.changes.len(), 6, "{:?}", c.diff.changes);

    h.get_by_label("Ignore").focus();
    h.get_by_label("Ignore").type_text("$.data[*].coupon");
    settle(&mut h);
    h.get_by_label("5 changes: 3 changed, 1 type changed, 1 added; same key order");
    let c = app(&h).ws.comparison().cloned().expect("compared");
    assert!(c
        .diff
        .changes
        .iter()
        .all(|ch| ch.path.to_string() != "$.data[0].coupon"));

    h.get_by_label("count key order as a change").click();
    settle(&mut h);
    let c = app(&h).ws.comparison().cloned().expect("compared");
    assert!(c.diff.order_counts);
    assert!(app(&h).settings.diff_order);
}

/// Two versions of a `.proto`, typed as paths, compared in the schema diff view: each
/// verdict's row, with both versions' field and whether the removed number is reserved.
#[test]
fn the_schema_diff_view_shows_each_fields_verdict() {
    let dir = tempfile::tempdir().expect("temp dir");
    let header = "syntax = \"proto3\";\npackage shop;\n";
    let v1 = dir.path().join("v1.proto");
    let v2 = dir.path().join("v2.proto");
    std::fs::write(
        &v1,
        format!("{header}message Order {{ int32 id = 1; string note = 2; double amount = 3; int64 user = 4; }}"),
    )
    .expect("written");
    std::fs::write(
        &v2,
        format!("{header}message Order {{ string id = 1; double total = 3; int64 user = 4; string extra = 5; }}"),
    )
    .expect("written");
    let mut h = harness(AppOptions {
        files: vec![real("orders-v1.pcap")],
        settings: None,
    });
    settle(&mut h);
    h.get_by_label("Schema diff").click();
    h.run_steps(2);
    compare_schemas(&mut h, &v1, &v2, "Order");
    h.get_by_label(
        "1 wire-breaking, 1 not reserved, 1 JSON-breaking, 1 compatible: breaks the wire",
    );
    let rows: Vec<(String, u32, bool)> = app(&h)
        .schema_diff_view()
        .changes()
        .expect("compared")
        .iter()
        .map(|c| (c.verdict.name().to_string(), c.number, c.reserved))
        .collect();
    assert_eq!(
        rows,
        [
            ("wire-breaking".to_string(), 1, false),
            ("not reserved".to_string(), 2, false),
            ("JSON-breaking".to_string(), 3, false),
            ("compatible".to_string(), 5, false),
        ]
    );
    h.get_by_label("int32 -> string: another wire encoding");
    // "not reserved": the legend, note's verdict and its reserved column.
    assert_eq!(h.query_all_by_label("not reserved").count(), 3);
    h.get_by_label("total");

    // A message type neither version has: the error, not a table.
    h.get_by_label("Message (protobuf)").focus();
    h.get_by_label("Message (protobuf)").type_text("Missing");
    h.get_by_label("Compare schemas").click();
    h.run_steps(3);
    assert!(app(&h).schema_diff_view().changes().is_none());
    h.get_by_label_contains("cannot compare: ");
}

/// Two versions of an Avro schema, typed as paths: the backward, forward and full verdicts by
/// the specification's resolution rules, and each change with the direction it breaks.
#[test]
fn the_schema_diff_view_compares_avro_schemas_both_ways() {
    let dir = tempfile::tempdir().expect("temp dir");
    let v1 = dir.path().join("v1.avsc");
    let v2 = dir.path().join("v2.avsc");
    std::fs::write(
        &v1,
        r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"note","type":"string"}]}"#,
    )
    .expect("written");
    // id widened (new reads old; old cannot read new), note dropped, a field added with a
    // default.
    std::fs::write(
        &v2,
        r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"total","type":"double","default":0}]}"#,
    )
    .expect("written");
    let mut h = harness(AppOptions {
        files: vec![real("orders-v1.pcap")],
        settings: None,
    });
    settle(&mut h);
    h.get_by_label("Schema diff").click();
    h.run_steps(2);
    for (label, path) in [("Old version (A)", &v1), ("New version (B)", &v2)] {
        h.get_by_label(label).focus();
        h.get_by_label(label).type_text(&path.display().to_string());
        h.run_steps(1);
    }
    h.get_by_label("Compare schemas").click();
    h.run_steps(4);
    let c = app(&h)
        .schema_diff_view()
        .avro()
        .cloned()
        .expect("compared as Avro");
    assert!(c.backward.is_compatible(), "{}", c.backward);
    assert!(!c.forward.is_compatible(), "{}", c.forward);
    assert!(app(&h).schema_diff_view().changes().is_none());
    h.get_by_label("Backward (new reads old)");
    // Backward and the changes that break neither way; the forward and full verdicts.
    assert!(h.query_all_by_label("compatible").count() >= 2);
    assert_eq!(h.query_all_by_label_contains("incompatible: ").count(), 2);
    assert!(c.changes.len() >= 3, "{:?}", c.changes);
    for change in &c.changes {
        h.get_by_label(&change.what);
    }
}

#[test]
fn the_diff_tab_compares_the_two_json_files_just_opened_by_default() {
    // A capture opened first, then two JSON files: A is the JSON on show, B the other JSON,
    // not the capture's first payload.
    let sample = |n: &str| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("samples")
            .join(n)
    };
    let mut h = harness(AppOptions {
        files: vec![
            real("orders-v1.pcap"),
            sample("user-profile.json"),
            sample("iot-metrics.json"),
        ],
        settings: None,
    });
    settle(&mut h);
    h.get_by_label("Diff").click();
    h.run_steps(4);
    let picked: Vec<String> = h
        .query_all_by_role(wirelens::gui::egui::accesskit::Role::ComboBox)
        .filter_map(|n| n.value())
        .filter(|v| v.contains(".json") || v.contains(".pcap"))
        .collect();
    assert_eq!(picked, ["iot-metrics.json", "user-profile.json"]);
}

/// In the Schema diff view: types the two versions' paths and the message, and compares them.
pub(crate) fn compare_schemas(
    h: &mut Harness<'_, Option<App>>,
    old: &std::path::Path,
    new: &std::path::Path,
    message: &str,
) {
    for (label, path) in [("Old version (A)", old), ("New version (B)", new)] {
        h.get_by_label(label).focus();
        h.get_by_label(label).type_text(&path.display().to_string());
        h.run_steps(1);
    }
    h.get_by_label("Message (protobuf)").focus();
    h.get_by_label("Message (protobuf)").type_text(message);
    h.run_steps(1);
    h.get_by_label("Compare schemas").click();
    h.run_steps(4);
}

/// An Avro container read with a reader's schema chosen in the inspector: the records as the
/// reader sees them (a field dropped, a default added, a promotion), and the rule for each.
#[test]
fn an_avro_reader_schema_chosen_in_the_inspector_reads_each_field_by_its_rule() {
    let dir = tempfile::tempdir().expect("temp dir");
    let reader = dir.path().join("weather-v2.avsc");
    std::fs::write(
        &reader,
        r#"{"type":"record","name":"test.Weather","fields":[
            {"name":"station","type":"string"},
            {"name":"temp","type":"double"},
            {"name":"unit","type":"string","default":"C"}]}"#,
    )
    .expect("written");
    let weather =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/avro/interop/weather.avro");
    let mut h = harness(AppOptions {
        files: vec![weather, reader],
        settings: None,
    });
    settle(&mut h);
    let a = app(&h).ws.analysis().cloned().expect("analysed");
    assert_eq!(a.format, wirelens::codec::Format::Avro);
    assert!(a.avro_resolution.is_none());
    // The header's schema wrote the data; the loaded .avsc is offered as the reader's.
    h.get_by_label("Avro reader's schema").click();
    h.run_steps(2);
    h.get_by_label("weather-v2.avsc (test.Weather)").click();
    settle(&mut h);
    let a = app(&h).ws.analysis().cloned().expect("analysed");
    let resolution = a.avro_resolution.clone().expect("a resolution");
    assert_eq!(
        (resolution.writer.as_str(), resolution.reader.as_str()),
        ("test.Weather", "test.Weather")
    );
    let rules = resolution.rules.expect("readable");
    for (place, rule) in [
        ("Weather.temp", "same name; promoted int → double"),
        ("Weather.unit", "default: \"C\""),
        ("Weather.time", "skipped: not in reader"),
    ] {
        assert!(
            rules.iter().any(|(p, r)| p == place && r == rule),
            "{place}: {rule} in {rules:?}"
        );
    }
    let doc = a
        .source()
        .and_then(|c| c.document.clone())
        .expect("decoded");
    let wirelens::workspace::ColumnValue::Whole(value) = &doc.value else {
        panic!("a small payload is decoded whole")
    };
    let first = &value.as_array().expect("records")[0];
    assert_eq!(
        wirelens::codec::encode(first, wirelens::codec::Format::Json, &Default::default())
            .map(|e| String::from_utf8(e.bytes).expect("utf-8"))
            .expect("JSON"),
        r#"{"station":"011990-99999","temp":0.0,"unit":"C"}"#
    );
    h.get_by_label_contains("Schema resolution: written as test.Weather, read as test.Weather");
    // The source's tree says which rule read each value; selecting one says it too.
    let path = |p: &str| wirelens::model::Path::parse(p).expect("path");
    assert_eq!(
        a.avro_rule(&path("$[0].temp")),
        Some(("same name; promoted int → double", false))
    );
    assert_eq!(
        a.avro_rule(&path("$[0].station")),
        Some(("same name; same type string", true))
    );
    h.get_by_label("[0]: map(3) (read by: record Weather; the writer's time skipped)");
    h.get_by_label("temp: 0.0 (read by: same name; promoted int → double)")
        .click();
    settle(&mut h);
    h.get_by_label("read by: same name; promoted int → double");
}
