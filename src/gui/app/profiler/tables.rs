//! The profiler's tables: field paths by cost, timings, and payloads compared.

use eframe::egui::{self, Align2, RichText};
use egui_plot::{Bar, BarChart, PlotPoint, Text};

use super::plot::{bytes_axis, category, integer_marks, pct, solid, still, with_axes};
use super::{format_color, Action, ProfilerView, SortBy};
use crate::codec::Format;
use crate::gui::widgets::thousands;
use crate::model::Path;
use crate::profile::bench::Measurement;
use crate::profile::cost::FieldCost;
use crate::report::table::{rate, timing};
use crate::report::{FileReport, Report};

/// Rows the field table lists at most (patterns aggregate records, so real payloads stay far
/// below this).
const MAX_ROWS: usize = 2_000;

fn sort_key(c: &FieldCost, by: SortBy) -> (usize, &str) {
    match by {
        SortBy::Path => (0, c.pattern.as_str()),
        SortBy::Nodes => (c.nodes, ""),
        SortBy::Key => (c.key, ""),
        SortBy::Overhead => (c.overhead(), ""),
        SortBy::Value => (c.value, ""),
        SortBy::Total => (c.total(), ""),
    }
}

/// The costliest field paths of one format, sortable by any column; clicking a path selects it
/// in the inspector.
pub(super) fn field_table(
    ui: &mut egui::Ui,
    view: &mut ProfilerView,
    file: &FileReport,
) -> Option<Action> {
    ui.horizontal_wrapped(|ui| {
        ui.strong("field paths of");
        for f in &file.formats {
            let format = f.sizes.format;
            ui.selectable_value(
                &mut view.field_format,
                format,
                RichText::new(format.title()).color(format_color(format)),
            );
        }
    });
    let Some(report) = file.format(view.field_format) else {
        ui.weak("this format could not be encoded");
        return None;
    };
    let costs = &report.fields;
    let mut rows: Vec<&FieldCost> = costs.fields.iter().collect();
    let (by, descending) = view.sort;
    rows.sort_by(|a, b| {
        let o = sort_key(a, by).cmp(&sort_key(b, by));
        if descending {
            o.reverse()
        } else {
            o
        }
    });
    let mut action = None;
    let headers = [
        ("path", SortBy::Path),
        ("nodes", SortBy::Nodes),
        ("key/tag", SortBy::Key),
        ("overhead", SortBy::Overhead),
        ("value", SortBy::Value),
        ("total", SortBy::Total),
    ];
    egui::ScrollArea::vertical()
        .id_salt("field-table")
        .auto_shrink([false, true])
        .show(ui, |ui| {
            egui::Grid::new("field-grid")
                .striped(true)
                .num_columns(8)
                .show(ui, |ui| {
                    for (name, key) in headers {
                        let arrow = if by == key {
                            if descending {
                                " ↓"
                            } else {
                                " ↑"
                            }
                        } else {
                            ""
                        };
                        if ui
                            // Monospace: its font has the arrows; the proportional one has not.
                            .button(RichText::new(format!("{name}{arrow}")).monospace().strong())
                            .on_hover_text("sort by this column")
                            .clicked()
                        {
                            view.sort = if by == key {
                                (key, !descending)
                            } else {
                                (key, key != SortBy::Path)
                            };
                        }
                    }
                    ui.strong("share");
                    ui.strong("bytes per node");
                    ui.end_row();
                    for c in rows.iter().take(MAX_ROWS) {
                        if ui
                            .link(RichText::new(&c.pattern).monospace())
                            .on_hover_text("select this field in the inspector")
                            .clicked()
                        {
                            if let Ok(p) = Path::parse(&c.pattern) {
                                action = Some(Action::Select(p));
                            }
                        }
                        for v in [c.nodes, c.key, c.overhead(), c.value, c.total()] {
                            ui.monospace(thousands(v));
                        }
                        ui.monospace(pct(c.total() as f64, costs.total as f64));
                        ui.monospace(if c.nodes > 0 {
                            format!("{:.1}", c.total() as f64 / c.nodes as f64)
                        } else {
                            "-".into()
                        });
                        ui.end_row();
                    }
                });
            if rows.len() > MAX_ROWS {
                ui.weak(format!(
                    "{} more paths: the CSV export has them all",
                    rows.len() - MAX_ROWS
                ));
            }
        });
    action
}

/// A timing cell: the terminal table's, or `…` while the job has not finished.
fn cell(m: Option<&Measurement>) -> String {
    m.map_or_else(|| "…".into(), |m| timing(Some(m)))
}

fn allocs(m: Option<&Measurement>) -> String {
    m.and_then(|m| m.allocs_per_op)
        .map_or("-".into(), |a| format!("{a:.0}"))
}

/// Every format × library: bytes, encode and decode medians with their confidence intervals,
/// throughput of JSON-equivalent bytes, allocations. Rows not measured yet show `…`. Grouped by
/// runtime (Rust's rows, then a table per runtime timed too), as the runtime filter shows them.
pub(super) fn timing_table(
    ui: &mut egui::Ui,
    view: &ProfilerView,
    report: &Report,
    file: &FileReport,
) {
    let several = super::runtimes::groups(file).len() > 1;
    // The Timings tab scrolls as a whole (the profiler wraps it in a scroll area).
    if !super::runtimes::shown(view, None) {
        for r in &file.runtimes {
            if super::runtimes::shown(view, Some(r.runtime)) {
                runtime_table(ui, file, r);
            }
        }
        return;
    }
    if several {
        ui.strong("Rust (this build of wirelens)");
    }
    egui::Grid::new("timing-grid")
        .striped(true)
        .num_columns(10)
        .show(ui, |ui| {
            for h in [
                "format",
                "library",
                "bytes",
                "encode median [95% CI]",
                "MB/s",
                "allocs",
                "decode median [95% CI]",
                "MB/s",
                "allocs",
                "",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for r in &file.timings {
                ui.colored_label(format_color(r.format), r.format.title());
                ui.label(r.library.name());
                ui.monospace(thousands(r.bytes));
                ui.monospace(cell(r.encode.as_ref()));
                ui.monospace(rate(r.encode.as_ref(), file.json_bytes));
                ui.monospace(allocs(r.encode.as_ref()));
                ui.monospace(cell(r.decode.as_ref()));
                ui.monospace(rate(r.decode.as_ref(), file.json_bytes));
                ui.monospace(allocs(r.decode.as_ref()));
                match &r.error {
                    Some(e) => {
                        ui.colored_label(ui.visuals().warn_fg_color, e);
                    }
                    None => {
                        ui.label("");
                    }
                }
                ui.end_row();
            }
        });
    if report.parallel {
        ui.weak("* measured while other jobs ran (Precise runs one job at a time)");
    }
    tail_table(ui, file);
    throughput_table(ui, file);
    for r in &file.runtimes {
        if super::runtimes::shown(view, Some(r.runtime)) {
            runtime_table(ui, file, r);
        }
    }
}

/// Tail latency (calls timed one by one) and CPU time per operation of the Rust rows, the
/// same cells as `compare` prints.
fn tail_table(ui: &mut egui::Ui, file: &FileReport) {
    ui.add_space(8.0);
    ui.strong("Tail latency and CPU time");
    ui.weak(
        "p99 and p99.9 of single calls (shown from 100 and 1,000 calls), how many were timed, \
         and the measuring thread's CPU time per operation beside the wall time above",
    );
    egui::Grid::new("tail-grid")
        .striped(true)
        .num_columns(10)
        .show(ui, |ui| {
            for h in [
                "format",
                "library",
                "encode p99",
                "p99.9",
                "calls",
                "CPU",
                "decode p99",
                "p99.9",
                "calls",
                "CPU",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for r in file.timings.iter().filter(|r| r.error.is_none()) {
                ui.colored_label(format_color(r.format), r.format.title());
                ui.label(r.library.name());
                for m in [r.encode.as_ref(), r.decode.as_ref()] {
                    for c in crate::report::table::tail_cells(m) {
                        ui.monospace(c);
                    }
                }
                ui.end_row();
            }
        });
}

/// Operations per second of the Rust rows on one thread and on every core at once, the same
/// cells as `compare` prints; nothing where no row was measured on every core.
fn throughput_table(ui: &mut egui::Ui, file: &FileReport) {
    let rows: Vec<_> = file
        .timings
        .iter()
        .filter(|r| {
            [&r.encode, &r.decode]
                .iter()
                .any(|m| m.as_ref().is_some_and(|m| m.all_cores.is_some()))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    ui.add_space(8.0);
    ui.strong("Throughput on every core");
    ui.weak(
        "operations per second on one thread (its median), and with one thread per core \
         calling at once, each with its own copy of the input; the gain is threads × how many \
         times one thread's rate they make together (the app's own drawing shares the cores)",
    );
    egui::Grid::new("throughput-grid")
        .striped(true)
        .num_columns(8)
        .show(ui, |ui| {
            for h in [
                "format",
                "library",
                "encode 1 thread",
                "every core",
                "gain",
                "decode 1 thread",
                "every core",
                "gain",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for r in rows {
                ui.colored_label(format_color(r.format), r.format.title());
                ui.label(r.library.name());
                for m in [r.encode.as_ref(), r.decode.as_ref()] {
                    for c in crate::report::table::throughput_cells(m) {
                        ui.monospace(c);
                    }
                }
                ui.end_row();
            }
        });
}

/// One runtime's libraries (`Python 3.11.7 (CPython)`): version, own bytes, whether they are
/// wirelens' bytes, encode and decode; then what was not measured and why.
fn runtime_table(
    ui: &mut egui::Ui,
    file: &FileReport,
    r: &crate::profile::runtimes::RuntimeReport,
) {
    ui.add_space(8.0);
    ui.strong(match (&r.version, &r.implementation) {
        (Some(v), Some(i)) => format!("{} {v} ({i})", r.runtime.title()),
        (Some(v), None) => format!("{} {v}", r.runtime.title()),
        _ => r.runtime.title().to_string(),
    });
    let measured: Vec<_> = r.rows.iter().filter(|row| row.error.is_none()).collect();
    if !measured.is_empty() {
        egui::Grid::new(("runtime-grid", r.runtime.name()))
            .striped(true)
            .num_columns(8)
            .show(ui, |ui| {
                for h in [
                    "format",
                    "library",
                    "version",
                    "bytes",
                    "same bytes",
                    "encode median [95% CI]",
                    "decode median [95% CI]",
                    "MB/s (decode)",
                ] {
                    ui.strong(h);
                }
                ui.end_row();
                for row in measured {
                    ui.colored_label(format_color(row.format), row.format.title());
                    ui.label(&row.library);
                    ui.label(row.version.as_deref().unwrap_or("-"));
                    ui.monospace(thousands(row.bytes));
                    ui.label(match row.same_bytes_as_wirelens {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "-",
                    })
                    .on_hover_text("whether the library writes the bytes wirelens writes");
                    ui.monospace(cell(row.encode.as_ref()));
                    ui.monospace(cell(row.decode.as_ref()));
                    ui.monospace(rate(row.decode.as_ref(), file.json_bytes));
                    ui.end_row();
                }
            });
    }
    for row in r.rows.iter() {
        if let Some(e) = &row.error {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!("{} {}: {e}", row.format.title(), row.library),
            );
        }
    }
    if let Some(e) = &r.error {
        ui.colored_label(ui.visuals().warn_fg_color, e);
    }
}

/// Several payloads side by side: size per format (bars grouped by payload) and a table with
/// bytes, bytes per record and the reference library's timings.
pub(super) fn compare(
    ui: &mut egui::Ui,
    view: &mut ProfilerView,
    report: &Report,
) -> Option<Action> {
    if report.files.len() < 2 {
        ui.label(
            "Open two or more payloads (e.g. the same API at 10 and at 15,000 records), choose \
             \"all open payloads\" in the toolbar and press Run profile: they appear here side by side.",
        );
        view.plot_rect = None;
        return None;
    }
    let labels: Vec<String> = report.files.iter().map(|f| f.name.clone()).collect();
    let x_labels = labels.clone();
    ui.label("bytes per format, each payload's bars labelled with % of its JSON size");
    let response = still(
        "profile-compare",
        (ui.available_height() * 0.45).clamp(180.0, 420.0),
    )
    .x_grid_spacer(integer_marks)
    .x_axis_formatter(move |m, _| category(&x_labels, m.value))
    .y_axis_formatter(|m, _| bytes_axis(m.value))
    .y_axis_label("bytes")
    .include_y(0.0)
    .show(ui, |p| {
        for (k, format) in Format::ALL.into_iter().enumerate() {
            let offset = (k as f64 - 1.5) * 0.2;
            let mut bars = Vec::new();
            for (i, file) in report.files.iter().enumerate() {
                let Some(f) = file.format(format) else {
                    continue;
                };
                let x = i as f64 + offset;
                let bytes = f.sizes.sizes.raw;
                bars.push(
                    Bar::new(x, bytes as f64)
                        .width(0.18)
                        .fill(solid(format_color(format)))
                        .name(format!(
                            "{} · {}: {} bytes",
                            file.name,
                            format.title(),
                            thousands(bytes)
                        )),
                );
                p.text(
                    Text::new(
                        "",
                        PlotPoint::new(x, bytes as f64),
                        RichText::new(pct(bytes as f64, file.json_bytes as f64)).small(),
                    )
                    .anchor(Align2::CENTER_BOTTOM),
                );
            }
            p.bar_chart(
                BarChart::new(format.title(), bars)
                    .color(format_color(format))
                    .element_formatter(Box::new(|b, _| b.name.clone())),
            );
        }
    });
    view.plot_rect = Some(with_axes(ui, &response.response));
    egui::ScrollArea::vertical()
        .id_salt("compare-table")
        .auto_shrink([false, true])
        .show(ui, |ui| {
            egui::Grid::new("compare-grid")
                .striped(true)
                .num_columns(8)
                .show(ui, |ui| {
                    for h in [
                        "payload",
                        "format",
                        "bytes",
                        "% of JSON",
                        "gzip",
                        "bytes per record",
                        "encode (reference library)",
                        "decode",
                    ] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for file in &report.files {
                        let records = file.sweep.as_ref().map(|s| s.records.count);
                        for f in &file.formats {
                            let format = f.sizes.format;
                            let reference = crate::profile::libs::Library::reference(format);
                            let row = file
                                .timings
                                .iter()
                                .find(|r| r.format == format && r.library == reference);
                            ui.label(&file.name);
                            ui.colored_label(format_color(format), format.title());
                            ui.monospace(thousands(f.sizes.sizes.raw));
                            ui.monospace(pct(f.sizes.sizes.raw as f64, file.json_bytes as f64));
                            ui.monospace(f.sizes.sizes.gzip.map_or("-".into(), thousands));
                            ui.monospace(records.filter(|n| *n > 0).map_or("-".into(), |n| {
                                format!("{:.1}", f.sizes.sizes.raw as f64 / n as f64)
                            }));
                            ui.monospace(cell(row.and_then(|r| r.encode.as_ref())));
                            ui.monospace(cell(row.and_then(|r| r.decode.as_ref())));
                            ui.end_row();
                        }
                    }
                });
            runtimes_compared(ui, view, report);
        });
    None
}

/// The payloads side by side in the other runtimes timed: per payload, runtime and format, the
/// fastest library there (by encode + decode medians, as the wire estimates pick it).
fn runtimes_compared(ui: &mut egui::Ui, view: &ProfilerView, report: &Report) {
    let any = report.files.iter().any(|f| {
        f.runtimes
            .iter()
            .any(|r| super::runtimes::shown(view, Some(r.runtime)) && !r.rows.is_empty())
    });
    if !any {
        return;
    }
    ui.add_space(8.0);
    ui.strong("in the other runtimes timed: each format's fastest library there");
    egui::Grid::new("compare-runtimes-grid")
        .striped(true)
        .num_columns(7)
        .show(ui, |ui| {
            for h in [
                "payload", "runtime", "format", "library", "bytes", "encode", "decode",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for file in &report.files {
                for r in &file.runtimes {
                    if !super::runtimes::shown(view, Some(r.runtime)) {
                        continue;
                    }
                    for (format, library, _) in crate::report::table::runtime_wire(&[], r) {
                        let Some(row) = r
                            .rows
                            .iter()
                            .find(|row| row.format == format && row.library == library)
                        else {
                            continue;
                        };
                        ui.label(&file.name);
                        ui.label(r.runtime.title());
                        ui.colored_label(format_color(format), format.title());
                        ui.label(&library);
                        ui.monospace(thousands(row.bytes));
                        ui.monospace(cell(row.encode.as_ref()));
                        ui.monospace(cell(row.decode.as_ref()));
                        ui.end_row();
                    }
                }
            }
        });
}
