//! The inspector's flows, driven through the real app in a kittest harness (no window):
//! open a sample by path, paste a hex dump, pick a message type, select a field and see it in
//! every column, errors shown inline for bad input.

use crate::common;

use std::path::PathBuf;

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use wirelens::codec::Format;
use wirelens::gui::egui;
use wirelens::gui::{App, AppOptions, Settings, SAMPLES};

pub(crate) fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

pub(crate) fn harness(options: AppOptions) -> Harness<'static, Option<App>> {
    harness_with(options, false)
}

/// `payload_text`: the payload holds CJK text or emoji. The app draws them with the system
/// fallback fonts it installs at start (the fonts module, tested on its own); the harness has
/// only egui's built-in fonts, so such glyphs are allowed to show as boxes here. The app's own
/// text is checked for missing glyphs in every other test.
pub(crate) fn harness_with(
    options: AppOptions,
    payload_text: bool,
) -> Harness<'static, Option<App>> {
    let mut builder = Harness::builder()
        .with_size([1500.0, 950.0])
        .with_max_steps(100);
    if payload_text {
        builder = builder.allow_missing_glyphs();
    }
    // The app times every installed runtime by default; these tests time Rust alone unless
    // they bring settings of their own (the runtime tests do), so they do not depend on the
    // Python and Node of the machine.
    let mut options = options;
    options.settings = options.settings.or_else(|| {
        let mut s = wirelens::gui::Settings::default();
        for r in wirelens::profile::runtimes::Runtime::ALL {
            s.set_profiles(r, false);
        }
        Some(s)
    });
    builder.build_ui_state(
        move |ui, app: &mut Option<App>| {
            let app = app.get_or_insert_with(|| App::new(ui.ctx(), options.clone()));
            app.show(ui);
        },
        None,
    )
}

pub(crate) fn app<'h>(h: &'h Harness<'_, Option<App>>) -> &'h App {
    h.state()
        .as_ref()
        .expect("the app was made on the first frame")
}

/// Runs frames until the workers are done, then a few more for the layout to settle.
pub(crate) fn settle(h: &mut Harness<'_, Option<App>>) {
    h.step();
    for _ in 0..5000 {
        if h.state().as_ref().is_some_and(|a| !a.ws.is_busy()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.step();
    }
    assert!(!app(h).ws.is_busy(), "the jobs finished");
    h.run_steps(4);
}

#[test]
fn the_window_opens_empty_with_the_welcome_panel() {
    let mut h = harness(AppOptions::default());
    h.run_steps(3);
    h.get_by_label("Open file…");
    h.get_by_label("Paste…");
    // Every bundled sample is offered.
    for (name, _) in SAMPLES {
        h.get_by_label(name);
    }
    h.get_by_label("iot-metrics.json").click();
    settle(&mut h);
    h.get_by_label_contains("JSON (source)");
}

#[test]
fn the_samples_menu_has_every_file_of_samples() {
    let mut on_disk: Vec<String> = std::fs::read_dir(sample(""))
        .expect("samples/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut bundled: Vec<String> = SAMPLES.iter().map(|(n, _)| n.to_string()).collect();
    bundled.sort();
    assert_eq!(bundled, on_disk);
    for (name, bytes) in SAMPLES {
        assert_eq!(
            std::fs::read(sample(name)).expect("sample").as_slice(),
            *bytes,
            "{name}"
        );
    }
}

#[test]
fn a_sample_opened_by_path_shows_every_format_side_by_side() {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.cbor")],
        settings: None,
    });
    settle(&mut h);
    h.get_by_label_contains("Read as CBOR");
    h.get_by_label("CBOR (source)");
    for f in [Format::Json, Format::MessagePack, Format::Protobuf] {
        h.get_by_label(f.title());
    }
    // The source's size is in its header: the file is 80 bytes. MessagePack's column says 80
    // bytes too, as Python's msgpack writes it (tests/fixtures/library-bytes/MANIFEST.tsv);
    // JSON and Protobuf are other sizes.
    let size = std::fs::metadata(sample("iot-metrics.cbor"))
        .expect("sample")
        .len();
    assert_eq!(
        h.query_all_by_label_contains(&format!("{size} bytes · gzip"))
            .count(),
        2
    );
    h.get_by_label_contains("iot-metrics.cbor");
}

#[test]
fn a_pasted_hex_dump_is_read_as_the_bytes_it_shows() {
    let mut h = harness(AppOptions::default());
    h.run_steps(2);
    let bytes = std::fs::read(sample("user-profile.msgpack")).expect("sample");
    h.event(egui::Event::Paste(common::xxd(&bytes)));
    settle(&mut h);
    h.get_by_label_contains("Read as MessagePack");
    h.get_by_label("MessagePack (source)");
    h.get_by_label_contains("layers: hex");
    let a = app(&h).ws.analysis().cloned().expect("analysed");
    assert_eq!(a.source().map(|c| c.bytes.to_vec()), Some(bytes));
}

#[test]
fn selecting_a_path_selects_it_in_every_column() {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    h.get_by_label("Selected path").focus();
    h.get_by_label("Selected path").type_text("$.device_id");
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    let a = app(&h).ws.analysis().cloned().expect("analysed");
    // Avro's column is hidden by default, so not encoded.
    for c in a.columns.iter().filter(|c| !c.deferred) {
        let doc = c.document.as_ref().expect("a tree");
        let ids = doc
            .spans
            .find(&wirelens::model::Path::parse("$.device_id").expect("path"));
        let extent = doc.spans.node(ids[0]).extent();
        // Each column names the same field with its own bytes.
        h.get_by_label(&format!(
            "{} · $.device_id: bytes {}..{} ({} bytes)",
            c.format.title(),
            extent.start,
            extent.end,
            extent.len()
        ));
    }
    // Escape clears it everywhere.
    h.get_by_label("JSON (source)").click();
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert_eq!(app(&h).ws.selected, None);
    assert_eq!(h.query_all_by_label("nothing selected").count(), 4);
}

#[test]
fn clicking_a_fidelity_note_selects_its_path_everywhere() {
    let mut h = harness_with(
        AppOptions {
            files: vec![sample("edge-cases.msgpack")],
            settings: None,
        },
        true,
    );
    settle(&mut h);
    let a = app(&h).ws.analysis().cloned().expect("analysed");
    let json = a.column(Format::Json).expect("json column");
    let note = json
        .notes
        .first()
        .expect("JSON cannot say everything in edge-cases");
    h.get_by_label_contains(&format!("{} fidelity notes", json.notes.len()))
        .click();
    h.run_steps(2);
    h.get_by_label(&format!("{}: {note}", note.kind.label()))
        .click();
    h.run_steps(3);
    assert_eq!(app(&h).ws.selected.as_ref(), Some(&note.path));
    let mentions = h
        .query_all_by_label_contains(&format!(" · {}: ", note.path))
        .count();
    assert_eq!(
        mentions, 4,
        "every column says where {} is (or that it is not there)",
        note.path
    );
}

#[test]
fn picking_a_message_type_reads_protobuf_with_it() {
    let mut h = harness_with(
        AppOptions {
            files: vec![sample("user-profile.pb")],
            settings: None,
        },
        true,
    );
    settle(&mut h);
    h.get_by_label("Protobuf (source)");
    h.get_by_label("schema: no schema (field numbers)");
    // Schema ▸ Paste, paste the .proto, load it, pick the message type.
    h.get_by_label("Schema").click();
    h.run_steps(2);
    h.get_by_label("Paste .proto or descriptor set…").click();
    h.run_steps(3);
    let proto = std::fs::read_to_string(sample("user-profile.proto")).expect("sample");
    h.get_by_label("Pasted schema").focus();
    h.event(egui::Event::Paste(proto));
    h.run_steps(2);
    h.get_by_label("Load pasted schema").click();
    settle(&mut h);
    h.get_by_label("schema loaded: pasted .proto");
    h.get_by_label("Search message types").type_text("UserPro");
    h.run_steps(2);
    h.get_by_label("wirelens.samples.UserProfile").click();
    settle(&mut h);
    h.get_by_label("schema: wirelens.samples.UserProfile");
    let a = app(&h).ws.analysis().cloned().expect("analysed");
    assert_eq!(a.message.as_deref(), Some("wirelens.samples.UserProfile"));
    let json = a.column(Format::Json).expect("json");
    assert!(json
        .resolve(&wirelens::model::Path::parse("$.username").expect("path"))
        .is_some());
}

/// A schema loaded from text (a bundled sample `.proto` from File ▸ Samples, or pasted) is
/// loaded again in the next run, as schema files are.
#[test]
fn schemas_from_samples_and_pastes_are_remembered_for_the_next_run() {
    let mut h = harness(AppOptions::default());
    settle(&mut h);
    // The welcome panel's samples (File ▸ Samples pushes the same command).
    h.get_by_label("user-profile.proto").click();
    settle(&mut h);
    h.get_by_label_contains("schema loaded: user-profile.proto");
    let pasted = "syntax = \"proto3\";\npackage kept;\nmessage Pasted { string note = 1; }\n";
    h.state_mut()
        .as_mut()
        .expect("app")
        .load_schema_text(pasted)
        .expect("the .proto compiles");
    settle(&mut h);
    let settings = app(&h).settings.clone();
    assert_eq!(
        settings.schema_texts.len(),
        2,
        "{:?}",
        settings.schema_texts
    );

    // The next run, with the settings this one saved.
    let mut next = harness(AppOptions {
        files: Vec::new(),
        settings: Some(settings),
    });
    settle(&mut next);
    let names: Vec<String> = app(&next)
        .ws
        .schemas
        .loaded
        .iter()
        .flat_map(|s| s.schema.message_names())
        .collect();
    assert!(
        names.iter().any(|n| n == "wirelens.samples.UserProfile"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "kept.Pasted"), "{names:?}");
    assert!(app(&next).status.is_none(), "nothing failed to load");
}

#[test]
fn bad_input_shows_the_error_where_it_happened_and_keeps_the_partial_tree() {
    let mut h = harness(AppOptions::default());
    h.run_steps(2);
    let text = r#"{"a": [1, 2, x], "b": 3}"#;
    h.event(egui::Event::Paste(text.to_string()));
    settle(&mut h);
    let offset = text.find('x').expect("x");
    h.get_by_label_contains(&format!("error at byte {offset} ($.a[2])"));
    // The other columns say why they are empty instead of vanishing.
    assert_eq!(
        h.query_all_by_label_contains("not encoded: the payload did not decode completely")
            .count(),
        3
    );
    // With no bytes they claim no sizes (an empty input's gzip header would read as 20 bytes).
    assert_eq!(h.query_all_by_label("no bytes").count(), 3);
    let a = app(&h).ws.analysis().cloned().expect("analysed");
    let partial = a
        .source()
        .and_then(|c| c.document.as_ref())
        .expect("partial tree");
    assert_eq!(
        partial
            .spans
            .find(&wirelens::model::Path::parse("$.a[1]").expect("p"))
            .len(),
        1
    );
    assert_eq!(app(&h).ws.entry().and_then(|e| e.source.text()), Some(text));
}

#[test]
fn a_missing_file_is_reported_in_the_window() {
    let mut h = harness(AppOptions {
        files: vec![PathBuf::from("/no/such/payload.json")],
        settings: None,
    });
    h.run_steps(3);
    h.get_by_label_contains("cannot open /no/such/payload.json");
}

#[test]
fn settings_survive_a_round_trip_and_tolerate_old_orders() {
    let mut s = Settings {
        dark: false,
        ..Settings::default()
    };
    s.remember(PathBuf::from("/tmp/a.json"));
    s.remember(PathBuf::from("/tmp/b.json"));
    s.remember(PathBuf::from("/tmp/a.json"));
    assert_eq!(
        s.recent,
        vec![PathBuf::from("/tmp/a.json"), PathBuf::from("/tmp/b.json")]
    );
    s.set_column_order(&[(Format::Protobuf, false), (Format::Json, true)]);
    let text = serde_json::to_string(&s).expect("serializes");
    let back: Settings = serde_json::from_str(&text).expect("deserializes");
    assert_eq!(back, s);
    // Formats missing from a stored order come back after the stored ones: shown, but for
    // Avro's column, which the user turns on.
    let order = back.column_order();
    assert_eq!(order[0], (Format::Protobuf, false));
    assert_eq!(order[1], (Format::Json, true));
    assert_eq!(order.len(), 5);
    assert_eq!(order[4], (Format::Avro, false));
    // Settings from an older version with fields missing still load.
    let old: Settings = serde_json::from_str(r#"{"dark": true}"#).expect("old settings load");
    assert!(old.dark);
    assert_eq!(old.column_order().len(), 5);
    // Every runtime is timed by default; the user's "off" survives, and a runtime installed
    // later (not in the stored list) is asked for. The old "Python and Node" box (a bool) and
    // the old list of runtimes ticked do not break a load.
    use wirelens::profile::runtimes::Runtime;
    let s = Settings::default();
    assert!(s.profiles(Runtime::Python) && s.profiles(Runtime::Node));
    let names: Vec<Runtime> = s.timed_runtimes().into_iter().map(|(r, _)| r).collect();
    assert_eq!(names, [Runtime::Python, Runtime::Node]);
    let mut s = Settings::default();
    s.set_profiles(Runtime::Node, false);
    s.set_interpreter(Runtime::Python, "/venv/bin/python");
    let back: Settings =
        serde_json::from_str(&serde_json::to_string(&s).expect("serializes")).expect("loads");
    assert_eq!(back, s);
    assert_eq!(
        back.timed_runtimes(),
        [(Runtime::Python, "/venv/bin/python".to_string())]
    );
    assert_eq!(back.runtimes_off, [Runtime::Node]);
    let old: Settings = serde_json::from_str(
        r#"{"dark": false, "profile_runtimes": true, "timed_runtimes": ["python"]}"#,
    )
    .expect("settings with the old box and list load");
    assert!(!old.dark && old.runtimes_off.is_empty());
    assert_eq!(old.timed_runtimes().len(), 2);
}

/// A panic while drawing does not end the app: it is caught, the message bar reports it on the
/// next frame, and the opened source and its decoded payload are still there.
#[test]
fn a_panic_while_drawing_is_reported_and_nothing_is_lost() {
    let panic_next = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let trigger = panic_next.clone();
    let options = AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    };
    let mut h = Harness::builder()
        .with_size([1500.0, 950.0])
        .with_max_steps(100)
        .build_ui_state(
            move |ui, app: &mut Option<App>| {
                let app = app.get_or_insert_with(|| App::new(ui.ctx(), options.clone()));
                let boom = trigger.swap(false, std::sync::atomic::Ordering::SeqCst);
                app.guarded(ui, |app, ui| {
                    app.show(ui);
                    if boom {
                        panic!("a bug in a view");
                    }
                });
            },
            None,
        );
    settle(&mut h);
    h.get_by_label("JSON (source)");
    panic_next.store(true, std::sync::atomic::Ordering::SeqCst);
    h.run_steps(3);
    h.get_by_label_contains("internal error while drawing (please report it): a bug in a view");
    h.get_by_label("JSON (source)");
    assert!(app(&h).ws.analysis().is_some(), "the decoded payload stays");
}

#[test]
fn limits_set_in_their_window_apply_to_the_sources_and_persist() {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Limits…").click();
    h.run_steps(3);
    // "8M" becomes "5": the sample has 8 nodes.
    h.get_by_label("nodes").focus();
    h.run_steps(1);
    h.key_press(egui::Key::Backspace);
    h.key_press(egui::Key::Backspace);
    h.get_by_label("nodes").type_text("5");
    h.run_steps(2);
    h.get_by_label("Apply").click();
    settle(&mut h);
    assert_eq!(app(&h).ws.limits().max_nodes, 5);
    assert_eq!(
        app(&h).settings.limits,
        [("nodes".to_string(), "5".to_string())]
    );
    let a = app(&h).ws.analysis().cloned().expect("analysed again");
    let error = a
        .source()
        .and_then(|c| c.error.as_ref())
        .expect("the decode stopped at the limit");
    assert!(
        error.message.contains("limit of 5 nodes"),
        "{}",
        error.message
    );

    // A value that is not a count is refused, naming the limit, and nothing changes.
    h.get_by_label("layers").focus();
    h.get_by_label("layers").type_text("x");
    h.run_steps(2);
    h.get_by_label("Apply").click();
    h.run_steps(2);
    h.get_by_label_contains("limit layers: \"16x\" is not a count");
    assert_eq!(app(&h).ws.limits().max_layers, 16);
    assert_eq!(app(&h).ws.limits().max_nodes, 5);

    // The next run starts with the limits of this one.
    let settings = app(&h).settings.clone();
    let mut next = harness(AppOptions {
        files: Vec::new(),
        settings: Some(settings),
    });
    next.run_steps(2);
    assert_eq!(app(&next).ws.limits().max_nodes, 5);
}

/// View ▸ MessagePack and CBOR ▸ shortest floats writes those columns in the variant: their
/// headers give its sizes (76 and 74 bytes for iot-metrics.json, against 80 as the libraries
/// write it) and say which variant it is.
#[test]
fn the_view_menu_writes_the_binary_columns_in_a_variant() {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    assert_eq!(h.query_all_by_label_contains("80 bytes · gzip").count(), 2);
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("shortest floats").click();
    settle(&mut h);
    h.get_by_label_contains("76 bytes · gzip");
    h.get_by_label_contains("74 bytes · gzip");
    assert_eq!(h.query_all_by_label_contains("80 bytes · gzip").count(), 0);
    assert_eq!(
        h.query_all_by_label_contains("written with shortest floats")
            .count(),
        2
    );
}

#[test]
fn the_message_picker_offers_each_service_methods_request_and_response() {
    let mut h = harness_with(
        AppOptions {
            files: vec![sample("user-profile.pb")],
            settings: None,
        },
        true,
    );
    settle(&mut h);
    // Loaded as the paste window loads it (that window is driven in
    // picking_a_message_type_reads_protobuf_with_it).
    let proto = std::fs::read_to_string(sample("user-profile.proto")).expect("sample")
        + "message GetProfile { uint64 user_id = 1; } service Profiles { rpc Get(GetProfile) \
           returns (UserProfile); rpc Watch(GetProfile) returns (stream UserProfile); }";
    h.state_mut()
        .as_mut()
        .expect("app")
        .ws
        .load_schema_text(&proto)
        .expect("the .proto compiles");
    settle(&mut h);
    // The picker in the protobuf menu of the column header.
    h.get_by_label("protobuf: best match wirelens.samples.UserProfile")
        .click();
    h.run_steps(2);
    h.get_by_label("/wirelens.samples.Profiles/Get");
    h.get_by_label("/wirelens.samples.Profiles/Watch");
    assert_eq!(
        h.query_all_by_label("request: wirelens.samples.GetProfile")
            .count(),
        2
    );
    h.get_by_label("response (stream): wirelens.samples.UserProfile")
        .click();
    settle(&mut h);
    h.get_by_label("schema: wirelens.samples.UserProfile");
    assert_eq!(
        app(&h).ws.entry().map(|e| e.choice.proto.clone()),
        Some(wirelens::workspace::ProtoMode::Message(
            "wirelens.samples.UserProfile".into()
        ))
    );
}

#[test]
fn a_right_click_on_a_field_read_with_its_schema_shows_its_declaration() {
    let mut h = harness_with(
        AppOptions {
            files: vec![sample("user-profile.proto"), sample("user-profile.pb")],
            settings: None,
        },
        true,
    );
    settle(&mut h);
    h.get_by_label("schema: wirelens.samples.UserProfile");
    let column_left = h.get_by_label("Protobuf (source)").rect().left();
    h.query_all_by_label_contains("username: ")
        .find(|n| (n.rect().left() - column_left).abs() < 8.0)
        .expect("the username row in the protobuf column")
        .click_secondary();
    h.run_steps(2);
    h.get_by_label("wirelens.samples.UserProfile: 2 username: string");
}

#[test]
fn escape_closes_the_topmost_window_before_it_clears_the_selection() {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    h.get_by_label("Selected path").focus();
    h.get_by_label("Selected path").type_text("$.device_id");
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    // Leave the field, so the keys are the app's.
    h.get_by_label("JSON (source)").click();
    h.run_steps(2);
    assert!(app(&h).ws.selected.is_some());
    // View ▸ Limits… opens the limits, then F1 the shortcuts: two windows, shortcuts on top.
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Limits…").click();
    h.run_steps(3);
    h.key_press(egui::Key::F1);
    h.run_steps(3);
    assert!(
        h.query_by_label("Apply").is_some(),
        "the limits window is open"
    );
    assert!(
        h.query_by_label("Shortcuts").is_some(),
        "the shortcuts window is open"
    );
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    assert!(
        h.query_by_label("Shortcuts").is_none(),
        "Escape closed the shortcuts"
    );
    assert!(h.query_by_label("Apply").is_some(), "the limits stay open");
    assert!(app(&h).ws.selected.is_some(), "the selection stays");
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    assert!(h.query_by_label("Apply").is_none(), "then the limits");
    assert!(app(&h).ws.selected.is_some(), "the selection still stays");
    // Nothing open: Escape clears the selection.
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    assert_eq!(app(&h).ws.selected, None);
}

/// A `.proto` whose import sits in another folder: the schema window names the import and
/// offers the folder found near the file; one click loads it with that folder, and the next run
/// remembers both.
#[test]
fn a_missing_import_offers_the_folder_that_holds_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (order, deps) = crate::common::proto_with_import_elsewhere(dir.path());
    let mut h = harness(AppOptions::default());
    h.run_steps(2);
    h.state_mut()
        .as_mut()
        .expect("app")
        .push(wirelens::gui::Command::Open(order.clone()));
    h.run_steps(4);
    assert!(app(&h).ws.schemas.is_empty(), "not loaded yet");
    // Said in the message bar and in the schema window, with the offer.
    assert!(
        h.query_all_by_label_contains("imports \"common/money.proto\", which none of the folders")
            .count()
            >= 2
    );
    let deps = deps.canonicalize().expect("canonical");
    h.get_by_label(&format!("Add {} and load again", deps.display()))
        .click();
    h.run_steps(4);
    assert!(
        app(&h)
            .ws
            .schemas
            .message_names()
            .contains(&"shop.Order".to_string()),
        "{:?}",
        app(&h).status
    );
    assert_eq!(
        h.query_all_by_label_contains("which none of the folders")
            .count(),
        0
    );
    let kept = &app(&h).settings.schemas;
    assert!(
        kept.iter()
            .any(|s| s.files == [order.clone()] && s.includes.contains(&deps)),
        "{kept:?}"
    );
}
