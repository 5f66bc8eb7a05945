//! The app as a daily tool (issue 22), driven through the real app in a kittest harness: paste
//! that works wherever the keyboard is, sources that can be closed, renamed and are not pasted
//! twice, schemas opened as schemas, a path field where no file dialog opens, and state that
//! belongs to each source.

use std::path::PathBuf;
use std::sync::Arc;

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use wirelens::codec::Format;
use wirelens::gui::egui;
use wirelens::gui::{App, AppOptions, Command, Settings, View};

use crate::common;
use crate::gui_app::{app, harness, harness_with, sample, settle};

/// Only the JSON column, full width: 16 bytes per hex row, so a row's label is known.
fn json_only() -> Settings {
    Settings {
        single: Some("json".into()),
        ..Settings::default()
    }
}

fn open(files: Vec<PathBuf>, settings: Option<Settings>) -> Harness<'static, Option<App>> {
    let mut h = harness(AppOptions { files, settings });
    settle(&mut h);
    h
}

/// The accessibility label of a hex row: its bytes as `7b 22 64 …`.
fn hex_row(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn state<'h>(h: &'h Harness<'_, Option<App>>) -> &'h App {
    app(h)
}

#[test]
fn ctrl_v_after_clicking_a_hex_byte_opens_the_clipboard_as_a_new_source() {
    let mut h = open(vec![sample("iot-metrics.json")], Some(json_only()));
    let json = std::fs::read(sample("iot-metrics.json")).expect("sample");
    h.get_by_label(&hex_row(&json[16..32])).click();
    h.run_steps(2);
    assert!(
        state(&h).cursor(Format::Json).is_some(),
        "the click put the cursor on a byte (and the hex view has the keyboard)"
    );
    let bytes = std::fs::read(sample("user-profile.msgpack")).expect("sample");
    h.event(egui::Event::Paste(common::xxd(&bytes)));
    settle(&mut h);
    assert_eq!(
        state(&h).ws.entries.len(),
        2,
        "the paste made a second source"
    );
    assert_eq!(state(&h).ws.current, Some(1));
    let a = state(&h).ws.analysis().cloned().expect("analysed");
    assert_eq!(a.format, Format::MessagePack);
}

#[test]
fn a_paste_into_a_text_field_stays_in_the_field() {
    let mut h = open(vec![sample("iot-metrics.json")], None);
    h.get_by_label("Selected path").focus();
    h.run_steps(1);
    h.event(egui::Event::Paste("$.device_id".into()));
    h.run_steps(2);
    assert_eq!(state(&h).ws.entries.len(), 1);
    assert_eq!(
        h.get_by_label("Selected path").value().as_deref(),
        Some("$.device_id")
    );
}

#[test]
fn shift_insert_asks_for_the_clipboard() {
    let mut h = open(vec![sample("iot-metrics.json")], None);
    // One frame with the key press (the harness's key helpers spread a press over frames).
    h.input_mut()
        .events
        .push(egui::Event::ModifiersChanged(egui::Modifiers::SHIFT));
    h.input_mut().events.push(egui::Event::Key {
        key: egui::Key::Insert,
        physical_key: None,
        pressed: true,
        repeat: false,
        modifiers: egui::Modifiers::SHIFT,
    });
    h.step();
    let asked = h
        .output()
        .viewport_output
        .values()
        .any(|v| v.commands.contains(&egui::ViewportCommand::RequestPaste));
    assert!(asked, "Shift+Insert asks the integration for a paste");
}

#[test]
fn a_middle_click_paste_outside_a_text_field_opens_the_text() {
    let mut h = open(vec![sample("iot-metrics.json")], None);
    let pos = h.get_by_label("JSON (source)").rect().center();
    h.event(egui::Event::MiddleClickPaste {
        pos,
        text: r#"{"primary": "selection"}"#.into(),
    });
    settle(&mut h);
    assert_eq!(state(&h).ws.entries.len(), 2);
    assert_eq!(
        state(&h).ws.entry().and_then(|e| e.source.text()),
        Some(r#"{"primary": "selection"}"#)
    );
}

/// Text dropped without a file (a selection dragged from a browser).
#[derive(Debug)]
struct DroppedText(&'static str);

impl egui::DroppedFile for DroppedText {
    fn path(&self) -> &std::path::Path {
        std::path::Path::new("")
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        Ok(self.0.as_bytes().to_vec())
    }
}

#[test]
fn dropped_text_is_read_like_pasted_text_and_not_opened_twice() {
    let mut h = harness(AppOptions::default());
    h.run_steps(2);
    let text = "81 a2 69 64 07";
    h.input_mut()
        .dropped_files
        .push(Arc::new(DroppedText(text)));
    settle(&mut h);
    assert_eq!(state(&h).ws.entries.len(), 1);
    h.get_by_label("MessagePack (source)");
    h.get_by_label_contains("layers: hex");
    // The same text pasted selects the open source instead of adding a copy.
    h.event(egui::Event::Paste("{}".into()));
    settle(&mut h);
    assert_eq!(state(&h).ws.entries.len(), 2);
    h.event(egui::Event::Paste(text.into()));
    settle(&mut h);
    assert_eq!(state(&h).ws.entries.len(), 2, "no copy of an open source");
    assert_eq!(state(&h).ws.current, Some(0));
}

#[test]
fn the_paste_area_opens_with_its_box_focused() {
    let mut h = harness(AppOptions::default());
    h.run_steps(2);
    h.key_press_modifiers(
        egui::Modifiers::COMMAND | egui::Modifiers::SHIFT,
        egui::Key::V,
    );
    h.run_steps(3);
    let area = h.get_by_label("Paste a hex dump, base64, an HTTP message, JSON, …");
    assert!(area.is_focused(), "the paste box has the keyboard");
    h.event(egui::Event::Paste("[1, 2]".into()));
    h.run_steps(2);
    assert!(
        state(&h).ws.entries.is_empty(),
        "the paste went into the box"
    );
    h.get_by_label("Inspect").click();
    settle(&mut h);
    assert_eq!(
        state(&h).ws.entry().and_then(|e| e.source.text()),
        Some("[1, 2]")
    );
}

#[test]
fn sources_close_with_ctrl_w_the_cross_and_the_context_menu_and_can_be_renamed() {
    let mut h = open(
        vec![
            sample("iot-metrics.json"),
            sample("iot-metrics.cbor"),
            sample("user-profile.json"),
            sample("risk-batch.json"),
        ],
        None,
    );
    assert_eq!(state(&h).ws.entries.len(), 4);
    // Ctrl+W closes the one shown (the last opened); the one before it is shown.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::W);
    settle(&mut h);
    let names = |h: &Harness<'_, Option<App>>| -> Vec<String> {
        state(h).ws.entries.iter().map(|e| e.name()).collect()
    };
    assert_eq!(
        names(&h),
        ["iot-metrics.json", "iot-metrics.cbor", "user-profile.json"]
    );
    assert_eq!(state(&h).ws.current, Some(2));
    // The × beside the current source closes it.
    h.get_by_label("×").click();
    settle(&mut h);
    assert_eq!(names(&h), ["iot-metrics.json", "iot-metrics.cbor"]);
    // Rename from the context menu.
    h.get_by_label_contains("iot-metrics.json (")
        .click_secondary();
    h.run_steps(2);
    h.get_by_label("Rename…").click();
    h.run_steps(2);
    h.get_by_label("New name").type_text(" before");
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert_eq!(names(&h), ["iot-metrics.json before", "iot-metrics.cbor"]);
    h.get_by_label_contains("iot-metrics.json before (");
    // Close others.
    h.get_by_label_contains("iot-metrics.cbor (")
        .click_secondary();
    h.run_steps(2);
    h.get_by_label("Close others").click();
    settle(&mut h);
    assert_eq!(names(&h), ["iot-metrics.cbor"]);
    h.get_by_label("CBOR (source)");
}

#[test]
fn commands_run_in_the_order_pushed_within_the_frame() {
    let mut h = open(vec![sample("iot-metrics.json")], None);
    let app = h.state_mut().as_mut().expect("app");
    app.push(Command::OpenSample("user-profile.json"));
    app.push(Command::Rename(1, "profile".into()));
    app.push(Command::CloseOthers(1));
    app.push(Command::SetView(View::Profiler));
    // Nothing happens until the commands run.
    assert_eq!(state(&h).ws.entries.len(), 1);
    h.step();
    let names: Vec<String> = state(&h).ws.entries.iter().map(|e| e.name()).collect();
    assert_eq!(
        names,
        ["profile"],
        "opened, renamed, then the others closed"
    );
    assert_eq!(state(&h).view, View::Profiler);
    // A command from a shortcut runs in the frame that saw the key: Ctrl+W on the last source
    // leaves the welcome panel.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::W);
    h.step();
    assert!(state(&h).ws.entries.is_empty());
    h.get_by_label("Bundled samples");
}

#[test]
fn a_bundled_proto_loads_as_a_schema() {
    let mut h = harness(AppOptions::default());
    h.run_steps(2);
    h.get_by_label("user-profile.proto").click();
    h.run_steps(2);
    assert!(
        state(&h).ws.entries.is_empty(),
        "no payload source was added"
    );
    assert!(state(&h)
        .ws
        .schemas
        .message_names()
        .contains(&"wirelens.samples.UserProfile".to_string()));
    h.get_by_label_contains("schema loaded: user-profile.proto");
}

#[test]
fn descriptor_sets_open_as_schemas_and_a_protobuf_payload_as_a_payload() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut compiler = protox::Compiler::new([sample("")]).expect("protox compiler");
    compiler
        .open_files(["user-profile.proto"])
        .expect("the sample compiles");
    let set = compiler.descriptor_pool().encode_to_vec();
    for name in ["profiles.pb", "profiles.desc", "profiles.binpb"] {
        std::fs::write(dir.path().join(name), &set).expect("write the set");
    }
    for name in ["profiles.pb", "profiles.desc", "profiles.binpb"] {
        let h = open(vec![dir.path().join(name)], None);
        assert!(state(&h).ws.entries.is_empty(), "{name} is no payload");
        assert!(
            state(&h)
                .ws
                .schemas
                .message_names()
                .contains(&"wirelens.samples.UserProfile".to_string()),
            "{name} loaded as a schema"
        );
    }
    // A .pb that is a protobuf message, not a descriptor set, is a payload.
    let h = open(vec![sample("user-profile.pb")], None);
    assert_eq!(state(&h).ws.entries.len(), 1);
    assert!(state(&h).ws.schemas.message_names().is_empty());
}

#[test]
fn open_path_is_always_there_and_opens_what_is_typed() {
    let mut h = open(vec![sample("iot-metrics.json")], None);
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Open path… Ctrl+L").click();
    // The click's command runs at the end of its frame; the window sizes itself unseen in the
    // next, and is shown in the one after.
    h.run_steps(3);
    let path = h.get_by_label("Path");
    assert!(path.is_focused());
    // Tab completes as far as the folder's names agree, and the field keeps the keyboard.
    let typed = format!(
        "{}/iot-m",
        sample("").display().to_string().trim_end_matches('/')
    );
    path.type_text(&typed);
    h.run_steps(1);
    h.key_press(egui::Key::Tab);
    h.run_steps(2);
    let completed = sample("iot-metrics.").display().to_string();
    assert_eq!(
        h.get_by_label("Path").value().as_deref(),
        Some(completed.as_str())
    );
    assert!(h.get_by_label("Path").is_focused());
    h.get_by_label(&sample("iot-metrics.msgpack").display().to_string());
    h.get_by_label("Path").type_text("cbor");
    h.run_steps(1);
    h.key_press(egui::Key::Enter);
    settle(&mut h);
    assert_eq!(state(&h).ws.entries.len(), 2);
    h.get_by_label("CBOR (source)");
    assert!(h.query_by_label("Path").is_none(), "the window closed");
}

/// A JSON array of `n` numbers followed by a stray `x`; the error's offset.
/// The label of a hex view's first row for a `len`-byte buffer.
fn first_offset(len: usize) -> String {
    format!(
        "{:0w$x}",
        0,
        w = wirelens::gui::widgets::hex_view::offset_digits(len)
    )
}

fn broken_array(n: usize) -> (String, usize) {
    let items: Vec<String> = (0..n).map(|i| format!("{}", 1000 + i)).collect();
    let text = format!("[{}, x]", items.join(", "));
    let at = text.find('x').expect("x");
    (text, at)
}

#[test]
fn a_decode_error_is_scrolled_into_view_with_the_cursor_on_its_byte() {
    let mut h = harness(AppOptions {
        files: Vec::new(),
        settings: Some(json_only()),
    });
    h.run_steps(2);
    let (text, at) = broken_array(3000);
    h.event(egui::Event::Paste(text.clone()));
    settle(&mut h);
    h.get_by_label_contains(&format!("error at byte {at}"));
    assert_eq!(state(&h).cursor(Format::Json), Some(at));
    // The error's row is on screen (rows off screen are not drawn at all), the first is not.
    let row = at / 16 * 16;
    h.get_by_label(&hex_row(&text.as_bytes()[row..(row + 16).min(text.len())]));
    assert!(h.query_by_label(&first_offset(text.len())).is_none());
    h.get_by_label_contains(&format!("At offset {at} "));
}

#[test]
fn one_column_mode_still_shows_the_source_column_of_a_payload_that_did_not_decode() {
    let settings = Settings {
        single: Some("msgpack".into()),
        ..Settings::default()
    };
    let mut h = harness(AppOptions {
        files: Vec::new(),
        settings: Some(settings),
    });
    h.run_steps(2);
    let (text, at) = broken_array(20);
    h.event(egui::Event::Paste(text));
    settle(&mut h);
    h.get_by_label("JSON (source)");
    h.get_by_label_contains(&format!("error at byte {at}"));
    h.get_by_label("MessagePack");
    assert!(
        h.query_by_label("CBOR").is_none(),
        "only the source joins the chosen column"
    );
    // A payload that decodes shows the chosen column alone again.
    h.event(egui::Event::Paste(r#"{"ok": true}"#.into()));
    settle(&mut h);
    h.get_by_label("MessagePack");
    assert!(h.query_by_label("JSON (source)").is_none());
}

#[test]
fn the_data_inspector_reads_the_byte_clicked_not_the_fields_first() {
    let mut h = open(vec![sample("iot-metrics.json")], Some(json_only()));
    let json = std::fs::read(sample("iot-metrics.json")).expect("sample");
    h.get_by_label(&hex_row(&json[16..32])).click();
    h.step();
    let clicked = state(&h).cursor(Format::Json).expect("a byte was clicked");
    h.run_steps(4);
    let a = state(&h).ws.analysis().cloned().expect("analysed");
    let selected = state(&h)
        .ws
        .selected
        .clone()
        .expect("the click selected a field");
    let extent = a
        .column(Format::Json)
        .and_then(|c| c.extent(&selected))
        .expect("the field is in the column");
    assert_ne!(extent.start, clicked, "the test clicks inside a field");
    assert!(extent.range().contains(&clicked));
    assert_eq!(state(&h).cursor(Format::Json), Some(clicked));
    h.get_by_label_contains(&format!("At offset {clicked} "));
}

#[test]
fn selection_fields_and_scroll_belong_to_their_source() {
    // The sample's merchants are in Chinese: payload text may show as boxes here.
    let mut h = harness_with(
        AppOptions {
            files: vec![sample("transactions-1k.json")],
            settings: Some(json_only()),
        },
        true,
    );
    settle(&mut h);
    // Select a field far down, and leave a bad offset in go-to-offset.
    h.get_by_label("Selected path").focus();
    h.get_by_label("Selected path")
        .type_text("$.transactions[900].id");
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    let deep = state(&h).ws.selected.clone().expect("selected");
    h.get_by_label("Go to offset").focus();
    h.get_by_label("Go to offset").type_text("0xffffffff");
    h.run_steps(2);
    h.get_by_label_contains("past the end");
    let top = first_offset(
        std::fs::metadata(sample("transactions-1k.json"))
            .expect("sample")
            .len() as usize,
    );
    assert!(h.query_by_label(&top).is_none(), "scrolled down");

    // A new source starts with nothing: no selection, empty fields, scrolled to the top.
    h.get_by_label("Inspector").click();
    h.run_steps(2);
    h.event(egui::Event::Paste(r#"{"fresh": [1, 2, 3]}"#.into()));
    settle(&mut h);
    assert_eq!(state(&h).ws.selected, None);
    assert_eq!(h.get_by_label("Selected path").value().as_deref(), Some(""));
    assert!(h.query_by_label_contains("past the end").is_none());
    h.get_by_label(&first_offset(r#"{"fresh": [1, 2, 3]}"#.len()));

    // Back to the first: its selection, its fields and its place come back.
    h.get_by_label_contains("transactions-1k.json (").click();
    settle(&mut h);
    assert_eq!(state(&h).ws.selected.as_ref(), Some(&deep));
    assert_eq!(
        h.get_by_label("Selected path").value().as_deref(),
        Some("$.transactions[900].id")
    );
    h.get_by_label_contains("past the end");
    assert!(h.query_by_label(&top).is_none(), "still scrolled down");
}

/// The app in a window of `size` points.
pub(crate) fn sized(size: [f32; 2], options: AppOptions) -> Harness<'static, Option<App>> {
    sized_stepping(size, options, 0.25)
}

/// [`sized`], each frame `step_dt` seconds after the last (a double click needs its two clicks
/// within 0.3 s; the harness's default step is 0.25 s, and settling takes frames between them).
fn sized_stepping(
    size: [f32; 2],
    options: AppOptions,
    step_dt: f32,
) -> Harness<'static, Option<App>> {
    let mut h = Harness::builder()
        .with_size(size)
        .with_step_dt(step_dt)
        .with_max_steps(100)
        .build_ui_state(
            move |ui, app: &mut Option<App>| {
                let app = app.get_or_insert_with(|| App::new(ui.ctx(), options.clone()));
                app.show(ui);
            },
            None,
        );
    settle(&mut h);
    h
}

/// The first click on a byte fills the inspector in place: it is as tall before the click as
/// after, so nothing under the pointer moves (the hex rows and the tree stay where they were).
#[test]
fn the_first_click_fills_the_data_inspector_without_moving_anything_and_it_collapses() {
    let mut h = open(
        vec![sample("iot-metrics.json"), sample("iot-metrics.cbor")],
        None,
    );
    let top = |h: &Harness<'_, Option<App>>| h.get_by_label("Go to offset").rect().top();
    let idle = top(&h);
    h.get_by_label_contains("click a byte to inspect it");
    h.get_by_label("u32 LE");
    let cbor = std::fs::read(sample("iot-metrics.cbor")).expect("sample");
    let row = state(&h).here_row_bytes();
    // The first row starts with the CBOR map header, which no other column has.
    let first_row = hex_row(&cbor[..row]);
    let row_before = h.get_by_label(&first_row).rect();
    h.get_by_label(&first_row).click();
    h.run_steps(4);
    let at = state(&h).cursor(Format::Cbor).expect("a byte was clicked");
    h.get_by_label_contains(&format!("At offset {at} "));
    let reading = top(&h);
    assert!(
        (reading - idle).abs() < 1.0,
        "the click moved the columns: {reading} vs {idle}"
    );
    assert_eq!(h.get_by_label(&first_row).rect(), row_before);
    // Another source with no byte chosen: the same height, waiting.
    h.get_by_label_contains("iot-metrics.json (").click();
    settle(&mut h);
    h.get_by_label_contains("click a byte to inspect it");
    assert!((top(&h) - idle).abs() < 1.0, "{} vs {idle}", top(&h));
    // Collapsed, only its header line shows, with the offset when a byte is chosen.
    h.get_by_label_contains("iot-metrics.cbor (").click();
    settle(&mut h);
    h.get_by_label("Data inspector · CBOR").click();
    h.run_steps(4);
    assert!(h.query_by_label("u32 LE").is_none());
    h.get_by_label_contains(&format!("at offset {at} (0x"));
    assert!(top(&h) > reading + 40.0);
    assert!(
        !state(&h).settings.inspector_open,
        "remembered for the next run"
    );
}

/// Bytes a row of each of the four columns of the source shown.
fn rows_of_every_column(h: &Harness<'_, Option<App>>) -> Vec<(Format, usize)> {
    [
        Format::Json,
        Format::MessagePack,
        Format::Cbor,
        Format::Protobuf,
    ]
    .into_iter()
    .map(|f| (f, state(h).row_bytes(f).expect("a column")))
    .collect()
}

#[test]
fn four_columns_show_8_bytes_a_row_at_1600_and_16_at_2560() {
    for (size, least) in [([1600.0, 1000.0], 8), ([2560.0, 1440.0], 16)] {
        for file in ["transactions-1k.json", "transactions-15k.json"] {
            let h = sized(
                size,
                AppOptions {
                    files: vec![sample(file)],
                    settings: None,
                },
            );
            let rows = rows_of_every_column(&h);
            assert!(
                rows.iter().all(|&(_, n)| n >= least),
                "{file} at {size:?}: {rows:?}"
            );
        }
    }
}

#[test]
fn a_column_dragged_wide_shows_16_bytes_a_row() {
    let mut h = sized(
        [1600.0, 1000.0],
        AppOptions {
            files: vec![sample("transactions-1k.json")],
            settings: None,
        },
    );
    let json = std::fs::read(sample("transactions-1k.json")).expect("sample");
    assert!(
        h.query_by_label(&hex_row(&json[..16])).is_none(),
        "four columns side by side at 1600 points show fewer than 16 bytes a row"
    );
    let next = h.get_by_label("MessagePack").rect();
    let start = egui::pos2(next.left() - 4.0, next.bottom() + 120.0);
    h.hover_at(start);
    h.drag_at(start);
    for dx in [20.0, 100.0, 250.0, 400.0] {
        h.hover_at(start + egui::vec2(dx, 0.0));
    }
    h.drop_at(start + egui::vec2(400.0, 0.0));
    h.run_steps(3);
    h.get_by_label(&hex_row(&json[..16]));
    let widths = &state(&h).settings.column_widths;
    let share = |name: &str| widths.iter().find(|(n, _)| n == name).map(|(_, w)| *w);
    assert!(share("json") > share("msgpack"), "{widths:?}");
}

/// Two clicks a frame apart (a double click to egui) on the widget labelled `label`, half a
/// second of 60 Hz frames after any click before (else egui counts a triple click).
fn double_click(h: &mut Harness<'_, Option<App>>, label: &str) {
    h.run_steps(30);
    h.get_by_label(label).click();
    h.step();
    h.get_by_label(label).click();
    h.run_steps(3);
}

#[test]
fn a_double_click_on_a_column_title_makes_it_the_only_column_and_back() {
    let options = AppOptions {
        files: vec![sample("transactions-1k.json")],
        settings: None,
    };
    let mut h = sized_stepping([1400.0, 860.0], options, 1.0 / 60.0);
    let json = std::fs::read(sample("transactions-1k.json")).expect("sample");
    assert!(h.query_by_label(&hex_row(&json[..16])).is_none());
    double_click(&mut h, "JSON (source)");
    assert_eq!(state(&h).settings.single.as_deref(), Some("json"));
    h.get_by_label(&hex_row(&json[..16]));
    assert!(h.query_by_label("CBOR").is_none(), "the others are hidden");
    double_click(&mut h, "JSON (source)");
    assert_eq!(state(&h).settings.single, None);
    h.get_by_label("CBOR");
}

#[test]
fn nothing_is_cut_at_1000_by_700() {
    let mut h = sized(
        [1000.0, 700.0],
        AppOptions {
            files: vec![sample("iot-metrics.json")],
            settings: None,
        },
    );
    h.get_by_label("Profiler").click();
    h.run_steps(3);
    for label in [
        "Run profile",
        "Copy Markdown",
        "Save plot as PNG",
        "Compare payloads",
    ] {
        let r = h.get_by_label(label).rect();
        assert!(r.right() <= 1000.0, "{label} ends at {}", r.right());
    }
    h.get_by_label("Inspector").click();
    h.run_steps(3);
    // Every byte of a hex row has its ASCII beside it (4 a row at this width).
    let json = std::fs::read(sample("iot-metrics.json")).expect("sample");
    let ascii = h.get_by_label(&String::from_utf8_lossy(&json[..4])).rect();
    let hex = h.get_by_label(&hex_row(&json[..4])).rect();
    assert!(ascii.left() > hex.right());
    // The columns that do not fit scroll into view instead of being squeezed.
    let protobuf = h.get_by_label("Protobuf").rect();
    assert!(protobuf.left() >= 1000.0 || protobuf.right() <= 1000.0);
}
