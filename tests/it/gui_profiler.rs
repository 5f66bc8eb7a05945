//! The profiler views driven through the real app in a kittest harness: a quick profile fills
//! every view and exports the CSV, cancel keeps the app responsive, a field row selects its path
//! in the inspector.

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use wirelens::gui::egui;
use wirelens::gui::{App, AppOptions};

use crate::gui_app::{app, harness, harness_with, sample, settle};

/// Steps frames until the profiler run is over (bounded: a quick run on these samples takes
/// seconds).
pub(crate) fn finish_profile(h: &mut Harness<'_, Option<App>>) {
    for _ in 0..20_000 {
        if h.state().as_ref().is_some_and(|a| !a.ws.is_profiling()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.step();
    }
    assert!(!app(h).ws.is_profiling(), "the profile finished");
    h.run_steps(3);
}

/// The whole profiler flow without the CLI: open the 1,000-record sample, press Profile (quick),
/// see every format in the size and timing views and the scaling and wire views, export the CSV
/// with Ctrl+S to a path typed in the export field, and find the same header and one row per
/// format × library in the file.
#[test]
fn a_quick_profile_fills_every_view_and_exports_csv() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("profile.csv");
    let mut h = harness_with(
        AppOptions {
            files: vec![sample("transactions-1k.json")],
            settings: None,
        },
        true,
    );
    settle(&mut h);
    h.get_by_label("Profiler").click();
    h.run_steps(2);
    h.get_by_label_contains("Press Run profile");
    h.get_by_label("Run profile").click();
    h.run_steps(2);
    assert!(app(&h).ws.is_profiling(), "the run is going");
    finish_profile(&mut h);
    let report = app(&h).ws.profile.as_ref().ok_or("a run")?.report();
    assert!(!report.cancelled);
    let file = &report.files[0];
    assert_eq!(file.formats.len(), 5, "every format has sizes");
    assert!(file.timings.len() >= 8, "{} rows", file.timings.len());
    for r in &file.timings {
        assert!(
            r.error.is_some() || (r.encode.is_some() && r.decode.is_some()),
            "{} {} measured",
            r.format.title(),
            r.library.name()
        );
    }
    // Sizes: the table lists each format with its bytes.
    h.get_by_label("% of JSON");
    for f in &file.formats {
        h.get_by_label(&wirelens::gui::thousands(f.sizes.sizes.raw));
    }
    // Timings: every library's row, with its median.
    h.get_by_label("Timings").click();
    h.run_steps(2);
    for lib in [
        "serde_json",
        "sonic-rs",
        "rmp-serde",
        "ciborium",
        "prost-reflect",
        "apache-avro",
    ] {
        assert!(
            h.query_all_by_label(lib).count() >= 1,
            "{lib} in the timings"
        );
    }
    // Tail latency and CPU time: each Rust row's call count is shown as measured.
    h.get_by_label("Tail latency and CPU time");
    for r in file.timings.iter().filter(|r| r.error.is_none()) {
        let calls = r
            .encode
            .as_ref()
            .and_then(|m| m.latency)
            .ok_or("encode calls timed")?
            .n;
        assert!(
            h.query_all_by_label(&calls.to_string()).count() >= 1,
            "{} {}: {calls} calls shown",
            r.format.title(),
            r.library.name()
        );
        assert!(r.encode.as_ref().and_then(|m| m.cpu_ns_per_op).is_some());
    }
    // Scaling: the 1,000 records were sliced.
    h.get_by_label("Scaling").click();
    h.run_steps(2);
    h.get_by_label_contains("1,000 records at $.transactions");
    // The wire: a winner per link.
    h.get_by_label("The wire").click();
    h.run_steps(2);
    h.get_by_label("winner");
    for link in ["mobile", "broadband", "datacenter"] {
        assert!(h.query_all_by_label(link).count() >= 1, "{link}");
    }
    // A link of the user's own, typed as `--link` takes it; a bad one says why.
    h.state_mut().as_mut().ok_or("app")?.profiler.new_link = "wifi=50mbit,15ms".into();
    h.get_by_label("add").click();
    h.run_steps(2);
    assert!(app(&h).settings.links.iter().any(|l| l.name == "wifi"
        && l.bits_per_second == 50e6
        && (l.rtt_seconds - 0.015).abs() < 1e-12));
    assert!(
        h.query_all_by_label("wifi").count() >= 2,
        "a slider row and a winner row"
    );
    h.state_mut().as_mut().ok_or("app")?.profiler.new_link = "wifi=fast".into();
    h.get_by_label("add").click();
    h.run_steps(2);
    h.get_by_label_contains("expected NAME=BANDWIDTH,RTT");
    // Export with Ctrl+S to the typed path.
    h.state_mut().as_mut().ok_or("app")?.settings.export_path = out.display().to_string();
    h.key_combination_modifiers(egui::Modifiers::COMMAND, &[egui::Key::S]);
    h.run_steps(2);
    let text = std::fs::read_to_string(&out)?;
    let mut lines = text.lines();
    let links: Vec<String> = report.links.iter().map(|l| l.name.clone()).collect();
    assert_eq!(
        lines.next(),
        Some(
            wirelens::report::csv::timings_header(&links)
                .join(",")
                .as_str()
        )
    );
    assert_eq!(lines.count(), file.timings.len());
    let fields = std::fs::read_to_string(dir.path().join("profile-fields.csv"))?;
    assert!(fields.starts_with(&wirelens::report::csv::FIELDS_HEADER.join(",")));
    assert!(fields.contains("$.transactions[*].merchant"), "{fields}");
    h.get_by_label_contains("exported");
    Ok(())
}

/// Cancel mid-run: the run stops soon, the report says so and keeps what finished, and the app
/// goes on answering (switching back to the inspector shows the columns).
#[test]
fn cancelling_a_profile_keeps_the_ui_responsive() -> Result<(), Box<dyn std::error::Error>> {
    let mut h = harness_with(
        AppOptions {
            files: vec![sample("transactions-1k.json")],
            settings: None,
        },
        true,
    );
    settle(&mut h);
    h.get_by_label("Profiler").click();
    h.run_steps(2);
    h.get_by_label("Standard").click();
    h.get_by_label("Run profile").click();
    h.run_steps(2);
    // Wait for the first timing job to start, then cancel.
    for _ in 0..4_000 {
        let total = app(&h).ws.profile.as_ref().ok_or("a run")?.progress().total;
        if total > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.step();
    }
    h.get_by_label("Cancel").click();
    finish_profile(&mut h);
    let run = app(&h).ws.profile.as_ref().ok_or("a run")?;
    let p = run.progress();
    let (done, total) = (p.done, p.total);
    assert!(run.report().cancelled, "the report says it was cancelled");
    assert!(done < total, "cancelled before the end: {done} of {total}");
    h.get_by_label_contains("run cancelled");
    h.get_by_label("Inspector").click();
    h.run_steps(2);
    h.get_by_label("JSON (source)");
    Ok(())
}

/// Clicking a path in the bytes-per-field table selects it in every column of the inspector.
#[test]
fn clicking_a_field_row_selects_it_in_the_inspector() -> Result<(), Box<dyn std::error::Error>> {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    h.get_by_label("Profiler").click();
    h.run_steps(2);
    h.get_by_label("Run profile").click();
    h.run_steps(2);
    finish_profile(&mut h);
    h.get_by_label("Bytes per field").click();
    h.run_steps(2);
    h.get_by_label("$.device_id").click();
    h.run_steps(3);
    let a = app(&h);
    assert_eq!(a.view, wirelens::gui::View::Inspector);
    assert_eq!(
        a.ws.selected.as_ref().map(ToString::to_string).as_deref(),
        Some("$.device_id")
    );
    Ok(())
}

/// Two open payloads profiled together appear side by side in the compare view; every view
/// draws with the app's own fonts (this harness fails on a missing glyph); Copy Markdown puts
/// the timings table on the clipboard.
#[test]
fn two_payloads_compare_side_by_side_and_copy_as_markdown() -> Result<(), Box<dyn std::error::Error>>
{
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json"), sample("user-profile.json")],
        settings: None,
    });
    settle(&mut h);
    h.get_by_label("Profiler").click();
    h.run_steps(2);
    h.get_by_label("all 2 open payloads").click();
    h.get_by_label("Run profile").click();
    h.run_steps(2);
    finish_profile(&mut h);
    let report = app(&h).ws.profile.as_ref().ok_or("a run")?.report();
    let names: Vec<&str> = report.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["iot-metrics.json", "user-profile.json"]);
    for tab in ["Sizes", "Bytes per field", "Timings", "Scaling", "The wire"] {
        h.get_by_label(tab).click();
        h.run_steps(2);
    }
    h.get_by_label("Compare payloads").click();
    h.run_steps(2);
    // One table row per payload × format.
    assert!(h.query_all_by_label("iot-metrics.json").count() >= 4);
    assert!(h.query_all_by_label("user-profile.json").count() >= 4);
    h.get_by_label("Copy Markdown").click();
    h.run_steps(1);
    let copied: Vec<String> = h
        .output()
        .platform_output
        .commands
        .iter()
        .filter_map(|c| match c {
            egui::OutputCommand::CopyText(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    let text = copied.first().ok_or("something was copied")?;
    assert!(text.contains("**iot-metrics.json**") && text.contains("**user-profile.json**"));
    assert!(text.contains("| JSON | serde_json |"), "{text}");
    Ok(())
}

/// Ctrl+S before any profile says there is nothing to export (no dialog, no file).
#[test]
fn export_before_a_profile_says_there_is_nothing_yet() {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    h.key_combination_modifiers(egui::Modifiers::COMMAND, &[egui::Key::S]);
    h.run_steps(2);
    h.get_by_label_contains("nothing to export yet");
}
