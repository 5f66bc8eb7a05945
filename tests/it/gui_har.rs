//! The payload list of a HAR (and of a capture) in the app: one row per body with method,
//! status, URL, size and the format the content type names; a filter by URL text and content
//! type that says how many rows it hides and never moves the selection.

use std::path::PathBuf;

use egui_kittest::kittest::Queryable;
use wirelens::codec::Format;
use wirelens::gui::egui::accesskit::Role;
use wirelens::gui::AppOptions;

use super::gui_app::{app, harness_with, settle};

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture")
        .join(path)
}

fn open(files: Vec<PathBuf>) -> egui_kittest::Harness<'static, Option<wirelens::gui::App>> {
    // The layer chains ("HAR entry 0 → response body") are drawn with an arrow the harness's
    // built-in fonts lack (the app installs system fonts that have it).
    let mut h = harness_with(
        AppOptions {
            files,
            settings: None,
        },
        true,
    );
    settle(&mut h);
    h
}

fn selected(h: &egui_kittest::Harness<'_, Option<wirelens::gui::App>>) -> usize {
    app(h).ws.entry().expect("a source is open").payload
}

fn analysed_format(h: &egui_kittest::Harness<'_, Option<wirelens::gui::App>>) -> Option<Format> {
    let entry = app(h).ws.entry()?;
    let analysis = entry.analysis.ready()?;
    Some(analysis.format)
}

#[test]
fn a_har_lists_every_body_with_method_status_url_size_and_format() {
    let h = open(vec![fixture("har/mitmproxy.har")]);
    h.get_by_label("8 payloads from 7 HAR entries");
    // (title, second line): as mitmproxy recorded the bodies of server.py.
    for (title, url) in [
        (
            "#1 GET 200 · 71 bytes · JSON",
            "response 127.0.0.1:18731/json",
        ),
        (
            "#2 GET 200 · 53 bytes · MessagePack",
            "response 127.0.0.1:18731/msgpack",
        ),
        (
            "#3 GET 200 · 54 bytes · CBOR",
            "response 127.0.0.1:18731/cbor",
        ),
        (
            "#4 GET 200 · 56 bytes · Protobuf",
            "response 127.0.0.1:18731/proto",
        ),
        (
            "#5 GET 200 · 56 bytes · Protobuf",
            "response 127.0.0.1:18731/grpc-web",
        ),
        (
            "#7 POST 200 · 71 bytes · JSON",
            "request 127.0.0.1:18731/json",
        ),
        (
            "#8 POST 200 · 71 bytes · JSON",
            "response 127.0.0.1:18731/json",
        ),
    ] {
        h.get_by_label(title);
        assert!(
            h.query_all_by_label(url).next().is_some(),
            "{url} is under {title}"
        );
    }
}

#[test]
fn the_url_filter_hides_rows_says_so_and_keeps_the_selection() {
    let mut h = open(vec![fixture("har/mitmproxy.har")]);
    h.get_by_label("#3 GET 200 · 54 bytes · CBOR").click();
    settle(&mut h);
    assert_eq!(selected(&h), 2);
    assert_eq!(analysed_format(&h), Some(Format::Cbor));

    h.get_by_label("filter").focus();
    h.get_by_label("filter").type_text("JSON");
    h.run_steps(3);
    // /json, /gzip-json and the POST's two bodies.
    h.get_by_label("4 of 8 payloads shown, from 3 of 7 HAR entries");
    h.get_by_label("#1 GET 200 · 71 bytes · JSON");
    h.get_by_label("#6 GET 200 · 71 bytes · JSON");
    assert!(h
        .query_by_label("#2 GET 200 · 53 bytes · MessagePack")
        .is_none());
    assert!(h.query_by_label("#3 GET 200 · 54 bytes · CBOR").is_none());
    // The selected payload is hidden, not dropped: the inspector still shows it, and says so.
    h.get_by_label("#3 is selected, hidden by the filter");
    settle(&mut h);
    assert_eq!(selected(&h), 2);
    assert_eq!(analysed_format(&h), Some(Format::Cbor));

    // Picking a row of the filtered list selects that payload, by its number.
    h.get_by_label("#7 POST 200 · 71 bytes · JSON").click();
    settle(&mut h);
    assert_eq!(selected(&h), 6);

    // A URL no payload has: every row hidden, and said so.
    h.get_by_label("filter").focus();
    h.get_by_label("filter").type_text("-nothing");
    h.run_steps(3);
    h.get_by_label("0 of 8 payloads shown, from 0 of 7 HAR entries");

    h.get_by_label("Show all").click();
    h.run_steps(3);
    h.get_by_label("8 payloads from 7 HAR entries");
    h.get_by_label("#2 GET 200 · 53 bytes · MessagePack");
    assert_eq!(selected(&h), 6);
}

/// The filter's terms beside URL words: the method, the status class, a size bound; a term
/// that does not parse is named under the field.
#[test]
fn the_filter_takes_method_status_and_size_terms() {
    let mut h = open(vec![fixture("har/mitmproxy.har")]);
    h.get_by_label("filter").focus();
    h.get_by_label("filter").type_text("method:post status:2xx");
    h.run_steps(3);
    h.get_by_label("2 of 8 payloads shown, from 1 of 7 HAR entries");
    h.get_by_label("#7 POST 200 · 71 bytes · JSON");
    assert!(h.query_by_label("#1 GET 200 · 71 bytes · JSON").is_none());
    h.get_by_label("filter").type_text(" size>71");
    h.run_steps(3);
    h.get_by_label("0 of 8 payloads shown, from 0 of 7 HAR entries");
    h.get_by_label("filter").type_text("x");
    h.run_steps(3);
    h.get_by_label("filter: size>71x: a size is a number with k, m or g (size>10k)");
    h.get_by_label("Show all").click();
    h.run_steps(3);
    h.get_by_label("8 payloads from 7 HAR entries");
}

#[test]
fn the_type_filter_offers_the_types_present_with_their_counts() {
    let mut h = open(vec![fixture("har/mitmproxy.har")]);
    h.get_by_role_and_label(Role::ComboBox, "type").click();
    h.run_steps(3);
    for t in [
        "application/json (4)",
        "application/msgpack (1)",
        "application/cbor (1)",
        "application/x-protobuf (1)",
        "application/grpc-web+proto (1)",
    ] {
        h.get_by_label(t);
    }
    h.get_by_label("application/msgpack (1)").click();
    h.run_steps(3);
    h.get_by_label("1 of 8 payloads shown, from 1 of 7 HAR entries");
    h.get_by_label("#2 GET 200 · 53 bytes · MessagePack")
        .click();
    settle(&mut h);
    assert_eq!(selected(&h), 1);
    assert_eq!(analysed_format(&h), Some(Format::MessagePack));
    assert!(h.query_by_label("#1 GET 200 · 71 bytes · JSON").is_none());
}

#[test]
fn a_capture_lists_its_messages_the_same_way() {
    let h = open(vec![fixture("pcap/http-post-cbor-reply.pcap")]);
    h.get_by_label("2 payloads");
    h.get_by_label("#1 POST · 98 bytes · MessagePack");
    // The response says the method of the request it answers.
    h.get_by_label("#2 POST 200 · 80 bytes · CBOR");
}

#[test]
fn a_long_har_lays_out_only_the_rows_in_view_and_the_filter_finds_the_others() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("long.har");
    let entries: Vec<String> = (0..400)
        .map(|i| {
            format!(
                r#"{{"request":{{"method":"GET","url":"https://api.example/items/{i}"}},"response":{{"status":200,"headers":[{{"name":"content-type","value":"application/json"}}],"content":{{"size":{},"mimeType":"application/json","text":"{{\"i\":{i}}}"}}}}}}"#,
                format!("{{\"i\":{i}}}").len()
            )
        })
        .collect();
    std::fs::write(
        &path,
        format!(
            r#"{{"log":{{"version":"1.2","entries":[{}]}}}}"#,
            entries.join(",")
        ),
    )
    .expect("write");
    let mut h = open(vec![path]);
    h.get_by_label("400 payloads from 400 HAR entries");
    h.get_by_label("#1 GET 200 · 7 bytes · JSON");
    // 400 rows are about 15,000 points high: the last is not laid out until it is in view.
    assert!(h.query_by_label("#400 GET 200 · 9 bytes · JSON").is_none());
    h.get_by_label("filter").focus();
    h.get_by_label("filter").type_text("items/399");
    h.run_steps(3);
    h.get_by_label("1 of 400 payloads shown, from 1 of 400 HAR entries");
    h.get_by_label("#400 GET 200 · 9 bytes · JSON").click();
    settle(&mut h);
    assert_eq!(selected(&h), 399);
}

#[test]
fn what_cut_the_input_is_said_above_the_payload_list() {
    // Six payloads with the payload limit at two, in a capture with two TCP gaps: the limit's
    // warning comes first, above the rows, and the gaps' warnings follow it.
    let mut settings = wirelens::gui::Settings::default();
    for r in wirelens::profile::runtimes::Runtime::ALL {
        settings.set_profiles(r, false);
    }
    settings.limits = vec![("payloads".to_string(), "2".to_string())];
    let mut h = harness_with(
        AppOptions {
            files: vec![fixture("third-party/suricata/http-gap-double.pcap")],
            settings: Some(settings),
        },
        true,
    );
    settle(&mut h);
    // Marked as a cut, not drawn as a faint note.
    let limit = h.get_by_label_contains("⚠ 6 payloads found; only the first 2 are kept");
    let gap = h.get_by_label_contains("14 bytes are missing after stream byte 263");
    let first_row = h.get_by_label_contains("#1 GET");
    assert!(limit.rect().bottom() <= gap.rect().top());
    assert!(gap.rect().bottom() <= first_row.rect().top());
}

#[test]
fn a_key_log_beside_a_tls_capture_is_offered_and_named_once_loaded() {
    // illustrated-tls13's capture with its key log (and QUIC's) in the same folder.
    let mut h = open(vec![fixture("third-party/illustrated/tls13.pcap")]);
    h.get_by_label("TLS key log beside the capture: tls13.keylog");
    h.get_by_label("TLS key log beside the capture: quic.keylog");
    let loads: Vec<_> = h.query_all_by_label("Load").collect();
    assert_eq!(loads.len(), 2);
    // quic.keylog sorts first, tls13.keylog second.
    loads[1].click();
    settle(&mut h);
    h.get_by_label("key log in use: tls13.keylog");
    assert!(h
        .query_by_label("TLS key log beside the capture: tls13.keylog")
        .is_none());
    // Decrypted: the client's "ping" is text.
    let entry = app(&h).ws.entry().expect("a source");
    let opened = entry.opened.ready().expect("peeled");
    assert!(opened
        .payloads
        .iter()
        .any(|p| p.bytes.as_slice() == b"ping"));
}
