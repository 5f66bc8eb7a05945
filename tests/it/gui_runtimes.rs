//! Other runtimes in the app: the profiler times Python and Node after the Rust jobs, on a worker;
//! the timing views group every runtime's rows with a filter, the wire view can use a runtime's
//! times, the toolbar says when a harness failed, and Profile ▸ Runtimes lists what each
//! interpreter has.
//!
//! Plain `cargo test` replays what the real Python harness wrote (recorded by
//! `tests/fixtures/runtimes/record.sh`) through a fake interpreter, so it needs no Python. The
//! test with the real interpreters is `#[ignore]`d and run by `.ci/run`.

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use wirelens::gui::{App, AppOptions};
use wirelens::profile::runtimes::Runtime;

use crate::gui_app::{app, harness, sample, settle};
use crate::gui_profiler::finish_profile;

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/runtimes/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A "python" that answers as the recorded harness did: the probe's lines for `--probe`, the
/// run's for a job (the harness script is its first argument, as wirelens runs it).
#[cfg(unix)]
fn fake_python(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let fake = dir.join("recorded-python");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\ncase \"$2\" in\n  --probe) exec cat '{}' ;;\n  *) exec cat '{}' ;;\nesac\n",
            fixture("python-probe.jsonl"),
            fixture("python-iot-metrics.jsonl")
        ),
    )
    .expect("write the fake interpreter");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    fake
}

fn profile_with(h: &mut Harness<'_, Option<App>>, python: &str, node: &str) {
    {
        let a = h.state_mut().as_mut().expect("app");
        a.settings.set_interpreter(Runtime::Python, python);
        a.settings.set_interpreter(Runtime::Node, node);
        a.settings.set_profiles(Runtime::Python, true);
        a.settings.set_profiles(Runtime::Node, true);
    }
    h.get_by_label("Profiler").click();
    h.run_steps(2);
    h.get_by_label("Run profile").click();
    h.run_steps(2);
    finish_profile(h);
}

/// Steps frames until `label` shows (the probe runs on a thread of its own).
fn wait_for_label(h: &mut Harness<'_, Option<App>>, label: &str) {
    for _ in 0..4_000 {
        if h.query_by_label(label).is_some() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.step();
    }
    h.get_by_label(label);
}

#[cfg(unix)]
#[test]
fn runtime_rows_are_grouped_filtered_and_feed_the_wire_view(
) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let python = fake_python(dir.path());
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    profile_with(
        &mut h,
        &python.display().to_string(),
        "/nonexistent/wirelens-test-node",
    );
    let report = app(&h).ws.profile.as_ref().ok_or("a run")?.report();
    let runtimes = &report.files[0].runtimes;
    let names: Vec<_> = runtimes.iter().map(|r| r.runtime.name()).collect();
    assert_eq!(names, ["python", "node"]);
    // The recording: five libraries measured (their bytes wirelens' own), two not installed.
    let python_rows = &runtimes[0].rows;
    let measured: Vec<&str> = python_rows
        .iter()
        .filter(|r| r.error.is_none())
        .map(|r| r.library.as_str())
        .collect();
    assert_eq!(measured, ["json", "orjson", "pydantic", "msgpack", "cbor2"]);
    assert!(python_rows
        .iter()
        .filter(|r| r.error.is_none())
        .all(|r| r.same_bytes_as_wirelens == Some(true) && r.decode.is_some()));
    // Node is not installed: the toolbar says so after the run, not only the timing view.
    h.get_by_label_contains("Node harness on iot-metrics.json: Node not found");

    h.get_by_label("Timings").click();
    h.run_steps(2);
    // The filter has a box per runtime run; the table has a group per runtime.
    h.get_by_label("Rust");
    h.get_by_label("Python 3.11.7");
    h.get_by_label("Node (failed)");
    h.get_by_label("Rust (this build of wirelens)");
    h.get_by_label("Python 3.11.7 (CPython)");
    h.get_by_label("JSON ujson: ujson not installed — `pip install ujson`");
    h.get_by_label("MessagePack ormsgpack: ormsgpack not installed — `pip install ormsgpack`");
    assert!(h.query_all_by_label("orjson").count() >= 1);
    assert!(h.query_all_by_label("serde_json").count() >= 1);
    // Hiding Python takes its rows out; hiding Rust instead leaves only Python's.
    h.get_by_label("Python 3.11.7").click();
    h.run_steps(2);
    assert_eq!(app(&h).profiler.hidden, ["python"]);
    assert_eq!(h.query_all_by_label("orjson").count(), 0);
    assert!(h.query_by_label("Python 3.11.7 (CPython)").is_none());
    assert!(h.query_all_by_label("serde_json").count() >= 1);
    h.get_by_label("Python 3.11.7").click();
    h.get_by_label("Rust").click();
    h.run_steps(2);
    assert_eq!(app(&h).profiler.hidden, ["rust"]);
    assert_eq!(h.query_all_by_label("serde_json").count(), 0);
    assert!(h.query_all_by_label("orjson").count() >= 1);
    h.get_by_label("Rust").click();
    h.run_steps(2);
    assert!(app(&h).profiler.hidden.is_empty());

    // The wire view with Python's times: each link's winner is a Python library, gzip is off.
    h.get_by_label("The wire").click();
    h.run_steps(2);
    h.get_by_label("Python 3.11.7").click();
    h.run_steps(2);
    assert_eq!(app(&h).profiler.wire_runtime, Some(Runtime::Python));
    let winners = h.query_all_by_label_contains("(Python)").count();
    assert_eq!(winners, report.links.len(), "a Python winner per link");
    // With gzip: the recording has no compressor lines, so Rust's gzip times stand in, and the
    // view says so per format; Python still wins each link with its own encode and decode.
    h.get_by_label("gzip on the wire").click();
    h.run_steps(2);
    h.get_by_label("JSON: Rust's gzip times: Python's gzip was not measured");
    assert_eq!(
        h.query_all_by_label_contains("(Python)").count(),
        report.links.len()
    );
    h.get_by_label("gzip on the wire").click();
    h.run_steps(2);
    assert!(h
        .query_by_label("JSON: Rust's gzip times: Python's gzip was not measured")
        .is_none());
    h.get_by_label("Rust").click();
    h.run_steps(2);
    assert_eq!(app(&h).profiler.wire_runtime, None);
    assert_eq!(h.query_all_by_label_contains("(Python)").count(), 0);
    assert_eq!(
        h.query_all_by_label_contains("(Rust)").count(),
        report.links.len()
    );

    // Profile ▸ Runtimes: what each interpreter has, asked in the background.
    h.get_by_label("Runtimes…").click();
    h.run_steps(1);
    wait_for_label(&mut h, "pip install ujson");
    h.get_by_label("pip install ormsgpack");
    h.get_by_label(&format!("Python 3.11.7 (CPython) at {}", python.display()));
    // orjson found with the version it had when recorded; two libraries missing.
    h.get_by_label("3.8.3");
    assert_eq!(h.query_all_by_label("missing").count(), 2);
    // Said in the window, and still in the toolbar under the run.
    assert_eq!(
        h.query_all_by_label_contains(
            "Node not found: `/nonexistent/wirelens-test-node` is not on PATH"
        )
        .count(),
        2
    );
    Ok(())
}

/// Out of the box the app times every runtime a quick probe finds, like `compare`: the recorded
/// Python is timed, the Node that is not there is listed (with why and how to stop asking), not
/// fatal. Unticking Node in Profile ▸ Runtimes is remembered and the next run does not ask.
#[cfg(unix)]
#[test]
fn every_installed_runtime_is_timed_by_default_and_an_untick_is_kept(
) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let python = fake_python(dir.path());
    let mut settings = wirelens::gui::Settings::default();
    settings.set_interpreter(Runtime::Python, &python.display().to_string());
    settings.set_interpreter(Runtime::Node, "/nonexistent/wirelens-test-node");
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: Some(settings),
    });
    settle(&mut h);
    h.get_by_label("Profiler").click();
    h.run_steps(2);
    h.get_by_label("Run profile").click();
    h.run_steps(2);
    finish_profile(&mut h);
    let report = app(&h).ws.profile.as_ref().ok_or("a run")?.report();
    let runtimes = &report.files[0].runtimes;
    let names: Vec<_> = runtimes.iter().map(|r| r.runtime.name()).collect();
    assert_eq!(names, ["python", "node"]);
    assert!(runtimes[0].error.is_none(), "{:?}", runtimes[0].error);
    assert!(runtimes[0].rows.iter().any(|r| r.decode.is_some()));
    let node = runtimes[1].error.as_deref().ok_or("node's error")?;
    assert!(node.starts_with("Node not found"), "{node}");
    assert!(
        node.ends_with(
            "not timed (untick it in the Runtimes window of the Profile menu to stop asking)"
        ),
        "{node}"
    );
    assert!(runtimes[1].rows.is_empty());
    // The run finished: Rust's and Python's rows are there despite Node.
    assert!(!report.files[0].timings.is_empty());

    // Scaling: Python was run on each slice below the whole payload (the 3 metrics: 1 record),
    // Node (not there) on none; the view draws Python's lines and the filter takes them out.
    let sweep = report.files[0].sweep.as_ref().ok_or("a sweep")?;
    let at: Vec<(usize, &str)> = sweep
        .runtimes
        .iter()
        .map(|p| (p.records, p.report.runtime.name()))
        .collect();
    assert_eq!(at, [(1, "python")]);
    assert!(sweep.runtimes[0]
        .report
        .rows
        .iter()
        .any(|r| r.encode.is_some()));
    let points = sweep.runtime_points(Runtime::Python, Some(&runtimes[0]));
    let counts: Vec<usize> = points.iter().map(|(n, _)| *n).collect();
    assert_eq!(counts, [1, 3]);
    h.get_by_label("Scaling").click();
    h.run_steps(2);
    h.get_by_label("thin lines, x markers: Python, one per library");
    h.get_by_label("Python 3.11.7").click();
    h.run_steps(2);
    assert!(h
        .query_by_label("thin lines, x markers: Python, one per library")
        .is_none());
    h.get_by_label("Python 3.11.7").click();
    h.run_steps(2);

    h.get_by_label("Runtimes…").click();
    h.run_steps(1);
    wait_for_label(&mut h, "pip install ujson");
    let boxes = h.query_all_by_label("time in the profiler").count();
    assert_eq!(boxes, Runtime::ALL.len());
    h.query_all_by_label("time in the profiler")
        .nth(1)
        .ok_or("Node's box")?
        .click();
    h.run_steps(2);
    assert_eq!(app(&h).settings.runtimes_off, [Runtime::Node]);
    h.get_by_label("Close window").click();
    h.run_steps(2);
    h.get_by_label("Run profile").click();
    h.run_steps(2);
    finish_profile(&mut h);
    let report = app(&h).ws.profile.as_ref().ok_or("a run")?.report();
    let names: Vec<_> = report.files[0]
        .runtimes
        .iter()
        .map(|r| r.runtime.name())
        .collect();
    assert_eq!(names, ["python"]);
    Ok(())
}

/// The same flow against the real interpreters (`$WIRELENS_PYTHON` or `python3`, `node` with
/// `NODE_PATH`): every library each has is measured and shown with its version.
#[test]
#[ignore = "needs python3 and node with the pinned packages; .ci/run installs them and runs it"]
fn real_python_and_node_rows_show_in_the_timings() -> Result<(), Box<dyn std::error::Error>> {
    let mut h = harness(AppOptions {
        files: vec![sample("iot-metrics.json")],
        settings: None,
    });
    settle(&mut h);
    profile_with(
        &mut h,
        &Runtime::Python.default_program(),
        &Runtime::Node.default_program(),
    );
    let report = app(&h).ws.profile.as_ref().ok_or("a run")?.report();
    let runtimes = &report.files[0].runtimes;
    assert_eq!(runtimes.len(), 2);
    h.get_by_label("Timings").click();
    h.run_steps(2);
    for r in runtimes {
        assert!(r.error.is_none(), "{:?}", r.error);
        let v = r.version.as_deref().ok_or("a version")?;
        let i = r.implementation.as_deref().ok_or("an implementation")?;
        h.get_by_label(&format!("{} {v} ({i})", r.runtime.title()));
        for row in &r.rows {
            assert!(row.error.is_none(), "{row:?}");
            assert!(row.encode.is_some() && row.decode.is_some(), "{row:?}");
            assert!(h.query_all_by_label(&row.library).count() >= 1, "{row:?}");
        }
        // The Avro libraries read wirelens' datum by its schema and write it back byte for byte.
        let avro: Vec<(&str, Option<bool>)> = r
            .rows
            .iter()
            .filter(|row| row.format == wirelens::codec::Format::Avro)
            .map(|row| (row.library.as_str(), row.same_bytes_as_wirelens))
            .collect();
        let expected: &[(&str, Option<bool>)] = match r.runtime {
            Runtime::Python => &[("fastavro", Some(true)), ("avro", Some(true))],
            Runtime::Node => &[("avsc", Some(true))],
            other => panic!("no Avro libraries expected for {}", other.title()),
        };
        assert_eq!(avro, expected, "{} Avro rows", r.runtime.title());
    }
    Ok(())
}
