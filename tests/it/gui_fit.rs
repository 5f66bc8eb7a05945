//! Nothing clipped at ordinary window sizes: every view is drawn at 1000×700 and 2560×1440, and
//! no widget's rectangle leaves the window (what is wider than its place scrolls, what is longer
//! wraps).

use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::Harness;
use wirelens::gui::egui;
use wirelens::gui::{App, AppOptions, Command, View};

use crate::gui_app::{app, sample};
use crate::gui_daily::sized;
use crate::gui_diff::compare_schemas;
use crate::gui_profiler::finish_profile;

/// A node's rectangle in points.
fn rect_of(node: &egui_kittest::Node<'_>) -> Option<egui::Rect> {
    let b = node.accesskit_node().bounding_box()?;
    Some(egui::Rect::from_min_max(
        egui::pos2(b.x0 as f32, b.y0 as f32),
        egui::pos2(b.x1 as f32, b.y1 as f32),
    ))
}

/// The widgets (by role, label and place) whose rectangle leaves the window where no scroll bar
/// brings it in: content may lie past the window's edge only when a scroll bar in the window
/// scrolls that way (a horizontal bar starting left of it, a vertical bar starting above it).
fn outside(h: &Harness<'_, Option<App>>, size: [f32; 2], view: &str) -> Vec<String> {
    let window = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size[0], size[1]));
    let nodes: Vec<_> = h.root().children_recursive().collect();
    let bars: Vec<egui::Rect> = nodes
        .iter()
        .filter(|n| n.accesskit_node().role() == egui::accesskit::Role::ScrollBar)
        .filter_map(rect_of)
        .filter(|r| window.expand(1.0).contains_rect(*r))
        .collect();
    let scrolls_sideways = |r: egui::Rect| {
        bars.iter()
            .any(|b| b.width() > b.height() && b.left() <= r.left() + 1.0)
    };
    let scrolls_down = |r: egui::Rect| {
        bars.iter()
            .any(|b| b.height() > b.width() && b.top() <= r.top() + 1.0)
    };
    let mut out = Vec::new();
    for node in &nodes {
        let Some(rect) = rect_of(node) else { continue };
        if !rect.is_positive() || window.expand(1.0).contains_rect(rect) {
            continue;
        }
        let sideways = rect.right() > window.right() + 1.0 || rect.left() < -1.0;
        let down = rect.bottom() > window.bottom() + 1.0 || rect.top() < -1.0;
        if (!sideways || scrolls_sideways(rect)) && (!down || scrolls_down(rect)) {
            continue;
        }
        let a = node.accesskit_node();
        let label = a.label().or_else(|| a.value()).unwrap_or_default();
        out.push(format!("{view}: {:?} {label:?} at {rect:?}", a.role()));
    }
    out
}

fn push(h: &mut Harness<'_, Option<App>>, command: Command) {
    h.state_mut().as_mut().expect("app").push(command);
    h.run_steps(4);
}

#[test]
fn no_view_leaves_the_window_at_1000x700_or_2560x1440() {
    let mut problems = Vec::new();
    for size in [[1000.0, 700.0], [2560.0, 1440.0]] {
        let mut h = sized(
            size,
            AppOptions {
                files: vec![sample("iot-metrics.json"), sample("iot-metrics.cbor")],
                settings: None,
            },
        );
        // The inspector with a field selected (the data inspector filled).
        h.get_by_label("Selected path").focus();
        h.get_by_label("Selected path").type_text("$.device_id");
        h.key_press(egui::Key::Enter);
        h.run_steps(4);
        problems.extend(outside(&h, size, "inspector"));
        // Every tree row's byte count is drawn whole, inside its column and the window.
        let counts: Vec<egui::Rect> = h
            .query_all_by(|n| {
                // A label's text is its accessible value.
                n.value().is_some_and(|l| {
                    l.strip_suffix(" bytes")
                        .or_else(|| l.strip_suffix(" byte"))
                        .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit() || c == ','))
                })
            })
            .map(|n| n.rect())
            .collect();
        assert!(counts.len() >= 8, "{size:?}: {} byte counts", counts.len());
        for r in &counts {
            assert!(
                r.right() <= size[0] && r.left() >= 0.0,
                "{size:?}: count at {r:?}"
            );
        }
        // A full row of the data inspector is in view.
        let u8_row = h.get_by_label("u8").rect();
        assert!(
            u8_row.bottom() <= size[1],
            "{size:?}: the inspector's first row at {u8_row:?}"
        );
        // The diff of the two sources.
        push(&mut h, Command::SetView(View::Diff));
        problems.extend(outside(&h, size, "diff"));
        // The schema diff of two versions of a message.
        push(&mut h, Command::SetView(View::SchemaDiff));
        let dir = tempfile::tempdir().expect("temp dir");
        let header = "syntax = \"proto3\";\npackage shop;\n";
        let versions = [
            "message Order { int32 id = 1; string note = 2; double amount = 3; int64 user = 4; }",
            "message Order { string id = 1; double total = 3; int64 user = 4; string extra = 5; }",
        ];
        let [old, new] = ["v1.proto", "v2.proto"].map(|name| dir.path().join(name));
        for (path, body) in [(&old, versions[0]), (&new, versions[1])] {
            std::fs::write(path, format!("{header}{body}")).expect("written");
        }
        compare_schemas(&mut h, &old, &new, "Order");
        h.get_by_label_contains("breaks the wire");
        problems.extend(outside(&h, size, "schema diff"));
        // The profiler, every tab, after a quick run.
        push(&mut h, Command::Profile(wirelens::report::Mode::Quick));
        finish_profile(&mut h);
        assert!(app(&h).ws.profile.is_some());
        for tab in [
            "Sizes",
            "Bytes per field",
            "Timings",
            "Scaling",
            "The wire",
            "Compare payloads",
        ] {
            h.get_by_label(tab).click();
            h.run_steps(4);
            problems.extend(outside(&h, size, &format!("profiler {tab}")));
        }
        push(&mut h, Command::TogglePalette);
        problems.extend(outside(&h, size, "palette"));
    }
    assert!(
        problems.is_empty(),
        "{} outside:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
