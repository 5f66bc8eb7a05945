//! The profiler's plots: sizes, bytes per field and timings (scaling has its own module).

use eframe::egui::{self, Align2, Color32, RichText};
use egui_plot::{Bar, BarChart, BoxElem, BoxPlot, BoxSpread, PlotPoint, Text};

use super::plot::{
    axis_duration, bytes_axis, category, integer_marks, pct, plot_height, solid, still, with_axes,
};
use super::{format_color, tables, Action, Metric, ProfilerView};
use crate::gui::widgets::{role_color, thousands};
use crate::model::ByteRole;
use crate::profile::bench::Measurement;
use crate::profile::Op;
use crate::report::table::duration;
use crate::report::{FileReport, Report};

/// Where a time box's upper whisker ends: the p99 of single calls when asked for and measured
/// (never below the box's own p75), else the samples' p95.
fn upper_whisker(m: &Measurement, p99: bool) -> f64 {
    match m.latency.and_then(|l| l.p99) {
        Some(tail) if p99 => tail.max(m.ns.p75),
        _ => m.ns.p95,
    }
}

/// The tooltip's tail line: p99 and p99.9 of single calls and how many, and CPU per operation.
fn tail_text(m: &Measurement) -> String {
    let mut out = String::new();
    if let Some(l) = m.latency {
        let p = |v: Option<f64>| v.map_or("-".to_string(), duration);
        out.push_str(&format!(
            "\nsingle calls: p99 {} · p99.9 {} · {} calls",
            p(l.p99),
            p(l.p999),
            l.n
        ));
    }
    if let Some(cpu) = m.cpu_ns_per_op {
        out.push_str(&format!("\nCPU {} per op", duration(cpu)));
    }
    if let Some(all) = m.all_cores {
        let gain = all
            .scaling(m.ns.median)
            .map_or_else(String::new, |g| format!(", {g:.1}× one thread"));
        out.push_str(&format!(
            "\nevery core: {} threads, {} ops/s{gain}",
            all.threads,
            crate::report::table::group(all.ops_per_s.round() as u64)
        ));
    }
    out
}

/// MB/s of the payload's JSON-equivalent bytes at `m`'s median; `None` for a zero median.
fn json_mb_per_s(json_bytes: usize, m: &Measurement) -> Option<f64> {
    (m.ns.median > 0.0).then(|| json_bytes as f64 / (m.ns.median / 1e9) / 1e6)
}

/// The compressions the size bars show, with their colours.
const SIZE_KINDS: [(&str, Color32); 4] = [
    ("raw", Color32::from_rgb(0x5a, 0x8f, 0xd8)),
    ("gzip", Color32::from_rgb(0xe0, 0x9a, 0x1f)),
    ("zstd", Color32::from_rgb(0x3f, 0xae, 0x6a)),
    ("brotli", Color32::from_rgb(0xc0, 0x5c, 0x8a)),
];

/// A format's size under [`SIZE_KINDS`]`[k]` (`None`: not measured).
fn size_of(k: usize, f: &crate::report::FormatReport) -> Option<usize> {
    let s = f.sizes.sizes;
    match k {
        0 => Some(s.raw),
        1 => s.gzip,
        2 => s.zstd,
        _ => s.brotli,
    }
}

/// Size bars: per format, raw, gzip, zstd and brotli side by side, each labelled with its bytes
/// and its share of JSON's size at the same compression. Clicking a format's bars focuses its
/// column in the inspector.
pub(super) fn sizes(
    ui: &mut egui::Ui,
    view: &mut ProfilerView,
    file: &FileReport,
) -> Option<Action> {
    ui.label(format!(
        "{} · {} bytes as JSON · bars labelled with bytes and % of JSON at the same compression \
         (gzip 6, zstd 3, brotli 6) · click a format to inspect it",
        file.name,
        thousands(file.json_bytes)
    ));
    let response = size_plot(ui, file);
    view.plot_rect = Some(with_axes(ui, &response.response));
    let mut action = None;
    if response.response.clicked() {
        if let Some(pos) = response.inner {
            let i = pos.x.round();
            if i >= 0.0 {
                action = file
                    .formats
                    .get(i as usize)
                    .map(|f| Action::Focus(f.sizes.format));
            }
        }
    }
    ui.add_space(4.0);
    size_table(ui, file).or(action)
}

/// The size bars, per format a group of [`SIZE_KINDS`]; the plot's answer is where the pointer
/// is.
fn size_plot(ui: &mut egui::Ui, file: &FileReport) -> egui_plot::PlotResponse<Option<PlotPoint>> {
    let json = file.format(crate::codec::Format::Json);
    let x_labels: Vec<String> = file
        .formats
        .iter()
        .map(|f| f.sizes.format.title().to_string())
        .collect();
    still("profile-sizes", plot_height(ui, 0.62))
        .x_grid_spacer(integer_marks)
        .x_axis_formatter(move |m, _| category(&x_labels, m.value))
        .y_axis_formatter(|m, _| bytes_axis(m.value))
        .y_axis_label("bytes")
        .include_y(0.0)
        .show(ui, |p| {
            for (k, (name, color)) in SIZE_KINDS.iter().enumerate() {
                let offset = (k as f64 - 1.5) * 0.2;
                let mut bars = Vec::new();
                for (i, f) in file.formats.iter().enumerate() {
                    let Some(bytes) = size_of(k, f) else { continue };
                    let x = i as f64 + offset;
                    bars.push(
                        Bar::new(x, bytes as f64)
                            .width(0.18)
                            .fill(solid(*color))
                            .name(format!("{} {name}", f.sizes.format.title())),
                    );
                    let share = json
                        .and_then(|j| size_of(k, j))
                        .map_or("-".into(), |j| pct(bytes as f64, j as f64));
                    p.text(
                        Text::new(
                            "",
                            PlotPoint::new(x, bytes as f64),
                            RichText::new(format!("{}\n{share}", thousands(bytes))).small(),
                        )
                        .anchor(Align2::CENTER_BOTTOM),
                    );
                }
                p.bar_chart(
                    BarChart::new(*name, bars)
                        .color(*color)
                        .element_formatter(Box::new(|b, _| {
                            format!("{}: {} bytes", b.name, thousands(b.value as usize))
                        })),
                );
            }
            p.pointer_coordinate()
        })
}

/// The sizes table: per format its bytes, share of JSON, compressed sizes, schema and notes,
/// then its encoding variants; a click on a format asks to inspect it.
fn size_table(ui: &mut egui::Ui, file: &FileReport) -> Option<Action> {
    let mut action = None;
    egui::Grid::new("sizes-table")
        .striped(true)
        .num_columns(8)
        .show(ui, |ui| {
            for h in [
                "format",
                "bytes",
                "% of JSON",
                "gzip",
                "zstd",
                "brotli",
                "schema",
                "notes",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for f in &file.formats {
                let s = &f.sizes;
                if ui
                    .link(RichText::new(s.format.title()).color(format_color(s.format)))
                    .on_hover_text("show this column in the inspector")
                    .clicked()
                {
                    action = Some(Action::Focus(s.format));
                }
                ui.monospace(thousands(s.sizes.raw));
                ui.monospace(format!("{:.1}%", s.ratio_to_json * 100.0));
                for v in [s.sizes.gzip, s.sizes.zstd, s.sizes.brotli] {
                    ui.monospace(v.map_or("-".into(), thousands));
                }
                ui.label(s.schema.name());
                let notes = ui.label(if s.notes == 0 {
                    "none".to_string()
                } else {
                    format!("{} (what {} cannot say)", s.notes, s.format.title())
                });
                if !s.note_texts.is_empty() {
                    notes.on_hover_text(s.note_texts.join("\n"));
                }
                ui.end_row();
                variant_rows(ui, file, f);
            }
        });
    action
}

/// The rows of a format's encoding variants: what the sender could save (or not) against the
/// libraries' default bytes above.
fn variant_rows(ui: &mut egui::Ui, file: &FileReport, f: &crate::report::FormatReport) {
    let s = &f.sizes;
    for v in &f.variants {
        ui.label(format!("  {}, {}", s.format.title(), v.variant.name()));
        ui.monospace(thousands(v.sizes.raw));
        ui.monospace(if file.json_bytes == 0 {
            "-".to_string()
        } else {
            format!(
                "{:.1}%",
                v.sizes.raw as f64 * 100.0 / file.json_bytes as f64
            )
        });
        for c in [v.sizes.gzip, v.sizes.zstd, v.sizes.brotli] {
            ui.monospace(c.map_or("-".into(), thousands));
        }
        ui.label("");
        ui.label(crate::report::table::saving(v.delta, s.sizes.raw));
        ui.end_row();
    }
}

/// Bytes per field: a stacked bar per format (keys/tags, lengths/markers, values, structure)
/// and the sortable table of field paths.
pub(super) fn fields(
    ui: &mut egui::Ui,
    view: &mut ProfilerView,
    file: &FileReport,
) -> Option<Action> {
    let dark = ui.visuals().dark_mode;
    let labels: Vec<String> = file
        .formats
        .iter()
        .map(|f| f.sizes.format.title().to_string())
        .collect();
    let roles = [
        ("keys / tags", ByteRole::Key),
        ("lengths / markers", ByteRole::Header),
        ("values", ByteRole::Value),
        ("structure", ByteRole::Structure),
    ];
    ui.label(
        "where each format's bytes go: naming fields (keys, tags), framing them (lengths, \
         type markers, brackets) and the values themselves",
    );
    let x_labels = labels.clone();
    let response = still("profile-fields", plot_height(ui, 0.4))
        .x_grid_spacer(integer_marks)
        .x_axis_formatter(move |m, _| category(&x_labels, m.value))
        .y_axis_formatter(|m, _| bytes_axis(m.value))
        .y_axis_label("bytes")
        .include_y(0.0)
        .show(ui, |p| {
            let mut charts: Vec<BarChart> = Vec::new();
            for (name, role) in roles {
                let bars = file
                    .formats
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        let all = f.fields.by_role();
                        let v = match role {
                            ByteRole::Key => all.key,
                            ByteRole::Header => all.header,
                            ByteRole::Value => all.value,
                            _ => all.structure,
                        };
                        Bar::new(i as f64, v as f64)
                            .width(0.6)
                            .fill(solid(role_color(role, dark)))
                            .name(format!(
                                "{} {name}: {} bytes ({})",
                                f.sizes.format.title(),
                                thousands(v),
                                pct(v as f64, f.fields.total as f64)
                            ))
                    })
                    .collect();
                let refs: Vec<&BarChart> = charts.iter().collect();
                let chart = BarChart::new(name, bars)
                    .color(role_color(role, dark))
                    .element_formatter(Box::new(|b, _| b.name.clone()))
                    .stack_on(&refs);
                charts.push(chart);
            }
            for c in charts {
                p.bar_chart(c);
            }
            for (i, f) in file.formats.iter().enumerate() {
                let all = f.fields.by_role();
                p.text(
                    Text::new(
                        "",
                        PlotPoint::new(i as f64, f.fields.total as f64),
                        RichText::new(format!(
                            "{} B · keys {}",
                            thousands(f.fields.total),
                            pct(all.key as f64, f.fields.total as f64)
                        ))
                        .small(),
                    )
                    .anchor(Align2::CENTER_BOTTOM),
                );
            }
            p.pointer_coordinate()
        });
    view.plot_rect = Some(with_axes(ui, &response.response));
    let mut action = None;
    if response.response.clicked() {
        if let Some(pos) = response.inner {
            let i = pos.x.round();
            if i >= 0.0 {
                if let Some(f) = file.formats.get(i as usize) {
                    view.field_format = f.sizes.format;
                }
            }
        }
    }
    ui.add_space(4.0);
    if let Some(a) = tables::field_table(ui, view, file) {
        action = Some(a);
    }
    action
}

fn measurement<'a>(row: &super::runtimes::Entry<'a>, op: Op) -> Option<&'a Measurement> {
    match op {
        Op::Encode => row.encode,
        Op::Decode => row.decode,
    }
}

/// Timings per runtime, format and library: box plots (p5–p95 whiskers, quartile box, median)
/// of the time per operation, or bars of throughput or allocations; rows fill in as jobs
/// finish. Rows are grouped by runtime (Rust, then the runtimes timed too, a line between the
/// groups), and the runtime filter hides groups.
pub(super) fn timings(
    ui: &mut egui::Ui,
    view: &mut ProfilerView,
    report: &Report,
    file_index: usize,
) -> Option<Action> {
    let file = &report.files[file_index];
    timing_choices(ui, view);
    super::runtimes::filter(ui, view, file);
    let rows = super::runtimes::entries(file, view);
    let several = super::runtimes::groups(file).len() > 1;
    let plot = TimingPlot {
        rows: &rows,
        op: view.op,
        metric: view.metric,
        p99_whiskers: view.p99_whiskers,
        json_bytes: file.json_bytes,
    };
    let response = plot.show(ui, several);
    view.plot_rect = Some(with_axes(ui, &response.response));
    if plot.metric == Metric::Allocations && !report.allocations_counted {
        ui.weak("allocations are counted only in the wirelens binary (its counting allocator)");
    }
    if plot.metric == Metric::Allocations && several {
        ui.weak("allocations are counted in Rust only: Python's and Node's rows have none");
    }
    ui.add_space(4.0);
    tables::timing_table(ui, view, report, file);
    None
}

/// The timings' choices: encode or decode, the metric, and for times where the upper whisker
/// ends.
fn timing_choices(ui: &mut egui::Ui, view: &mut ProfilerView) {
    ui.horizontal_wrapped(|ui| {
        ui.selectable_value(&mut view.op, Op::Decode, "decode");
        ui.selectable_value(&mut view.op, Op::Encode, "encode");
        ui.separator();
        ui.selectable_value(&mut view.metric, Metric::Time, "time per op");
        ui.selectable_value(&mut view.metric, Metric::Throughput, "MB/s (of JSON bytes)");
        ui.selectable_value(&mut view.metric, Metric::Allocations, "allocations per op");
        if view.metric == Metric::Time {
            ui.separator();
            ui.checkbox(&mut view.p99_whiskers, "p99 whiskers")
                .on_hover_text(
                    "the upper whisker at the 99th percentile of single calls (the tail), where \
                     enough calls were timed; otherwise at the samples' 95th percentile",
                );
        }
    });
}

/// The timings plot of the rows shown: what it draws and how.
struct TimingPlot<'r, 'a> {
    rows: &'r [super::runtimes::Entry<'a>],
    op: Op,
    metric: Metric,
    p99_whiskers: bool,
    /// The payload's JSON-equivalent bytes, throughput's measure.
    json_bytes: usize,
}

impl TimingPlot<'_, '_> {
    /// A row's value in the metric shown: the upper whisker's end for times (`None`: not
    /// measured).
    fn extent(&self, row: &super::runtimes::Entry<'_>) -> Option<f64> {
        let m = measurement(row, self.op)?;
        match self.metric {
            Metric::Time => Some(upper_whisker(m, self.p99_whiskers)),
            Metric::Throughput => json_mb_per_s(self.json_bytes, m),
            Metric::Allocations => m.allocs_per_op,
        }
    }

    /// Draws the plot: a row per runtime, format and library (the first on top), labelled with
    /// the runtime when `several` runtimes were timed, a line between runtimes.
    fn show(&self, ui: &mut egui::Ui, several: bool) -> egui_plot::PlotResponse<()> {
        let rows = self.rows;
        // Rows top to bottom in report order: the plot's y grows upwards, so row i sits at n-1-i.
        let n = rows.len();
        let y_labels: Vec<String> = rows
            .iter()
            .rev()
            .map(|r| {
                if several {
                    r.label()
                } else {
                    format!("{} · {}", r.format.title(), r.library)
                }
            })
            .collect();
        // Where one runtime's rows end and the next one's begin.
        let boundaries: Vec<f64> = (1..n)
            .filter(|&i| rows[i].group != rows[i - 1].group)
            .map(|i| (n - i) as f64 - 0.5)
            .collect();
        let metric = self.metric;
        let x_label = match metric {
            Metric::Time => "time per operation",
            Metric::Throughput => "MB/s of JSON-equivalent bytes",
            Metric::Allocations => "allocations per operation",
        };
        // The legend sits in the top right corner: the x range runs on past the longest box or
        // bar by about the legend's width, so the first rows' ends are never under it.
        let longest = rows
            .iter()
            .filter_map(|r| self.extent(r))
            .fold(0.0_f64, f64::max);
        let axis_width = if several { 210.0 } else { 150.0 };
        let data_width = (ui.available_width() - axis_width).max(200.0);
        const LEGEND_WIDTH: f32 = 140.0;
        let legend_room =
            f64::from((LEGEND_WIDTH / (data_width - LEGEND_WIDTH).max(60.0)).max(0.1));
        // Tall enough to label every row (the tab scrolls): every runtime's rows make dozens.
        let height = (n as f32 * 22.0 + 60.0).max(180.0);
        let rule = ui.visuals().weak_text_color();
        still("profile-timings", height)
            .y_grid_spacer(integer_marks)
            .y_axis_formatter(move |m, _| category(&y_labels, m.value))
            .y_axis_min_width(axis_width)
            .x_axis_label(x_label)
            .x_axis_formatter(move |m, _| {
                if metric == Metric::Time {
                    if m.value < 0.0 {
                        String::new()
                    } else if m.value == 0.0 {
                        "0".into()
                    } else {
                        axis_duration(m.value)
                    }
                } else {
                    format!("{}", m.value)
                }
            })
            .include_x(0.0)
            .include_x(longest * (1.0 + legend_room))
            .include_y(-0.6)
            .include_y(n as f64 - 0.4)
            .show(ui, |p| {
                for y in &boundaries {
                    p.hline(egui_plot::HLine::new("", *y).color(rule).width(1.0));
                }
                for format in crate::codec::Format::ALL {
                    match metric {
                        Metric::Time => p.box_plot(self.boxes(format)),
                        Metric::Throughput | Metric::Allocations => p.bar_chart(self.bars(format)),
                    }
                }
            })
    }

    /// `format`'s rows as time boxes, each with its numbers in the tooltip.
    fn boxes(&self, format: crate::codec::Format) -> BoxPlot {
        let n = self.rows.len();
        let boxes: Vec<BoxElem> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.format == format)
            .filter_map(|(i, r)| {
                let m = measurement(r, self.op)?;
                let s = &m.ns;
                Some(
                    BoxElem::new(
                        (n - 1 - i) as f64,
                        BoxSpread::new(
                            s.p5,
                            s.p25,
                            s.median,
                            s.p75,
                            upper_whisker(m, self.p99_whiskers),
                        ),
                    )
                    .box_width(0.6)
                    .whisker_width(0.4)
                    .name(format!(
                        "{} {}\nmedian {} (95% CI {} – {})\np5 {} · p95 {} · {} samples · {} bytes{}{}",
                        r.label(),
                        self.op.name(),
                        duration(s.median),
                        duration(s.ci_low),
                        duration(s.ci_high),
                        duration(s.p5),
                        duration(s.p95),
                        s.n,
                        thousands(r.bytes),
                        tail_text(m),
                        if m.concurrent {
                            "\nmeasured while other jobs ran"
                        } else {
                            ""
                        }
                    )),
                )
            })
            .collect();
        BoxPlot::new(format.title(), boxes)
            .horizontal()
            .color(format_color(format))
            .element_formatter(Box::new(|b, _| b.name.clone()))
    }

    /// `format`'s rows as bars of throughput or allocations.
    fn bars(&self, format: crate::codec::Format) -> BarChart {
        let n = self.rows.len();
        let color = format_color(format);
        let bars: Vec<Bar> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.format == format)
            .filter_map(|(i, r)| {
                let m = measurement(r, self.op)?;
                let v = if self.metric == Metric::Throughput {
                    json_mb_per_s(self.json_bytes, m)?
                } else {
                    m.allocs_per_op?
                };
                Some(
                    Bar::new((n - 1 - i) as f64, v)
                        .width(0.6)
                        .fill(solid(color))
                        .horizontal()
                        .name(format!("{}: {v:.1}", r.label())),
                )
            })
            .collect();
        BarChart::new(format.title(), bars)
            .horizontal()
            .color(color)
            .element_formatter(Box::new(|b, _| b.name.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::bench::Latency;

    #[test]
    fn the_p99_whisker_is_the_single_calls_tail_when_measured() {
        let samples: Vec<f64> = (1..=40).map(f64::from).collect();
        let calls: Vec<f64> = (1..=200).map(|i| f64::from(i) * 2.0).collect();
        let mut m = Measurement {
            ns: crate::profile::stats::summarize(&samples, 100, 1).expect("samples"),
            batch: 10,
            iterations: 400,
            allocs_per_op: None,
            alloc_bytes_per_op: None,
            concurrent: false,
            probes: Vec::new(),
            cpu_ns_per_op: Some(20.0),
            latency: Latency::of(&calls),
            all_cores: None,
        };
        let tail = m.latency.and_then(|l| l.p99).expect("200 calls");
        assert_eq!(upper_whisker(&m, true), tail);
        assert_eq!(upper_whisker(&m, false), m.ns.p95);
        assert!(tail_text(&m).contains("200 calls") && tail_text(&m).contains("CPU"));
        // Too few calls for a p99: the samples' p95 stays.
        m.latency = Latency::of(&calls[..50]);
        assert_eq!(upper_whisker(&m, true), m.ns.p95);
    }

    #[test]
    fn axis_labels_are_short() {
        assert_eq!(axis_duration(10e6), "10 ms");
        assert_eq!(axis_duration(1.5e9), "1.5 s");
        assert_eq!(axis_duration(250e3), "250 µs");
        assert_eq!(axis_duration(12.0), "12 ns");
        assert_eq!(bytes_axis(2_000_000.0), "2M");
        assert_eq!(bytes_axis(150_000.0), "150k");
        assert_eq!(bytes_axis(1_250.0), "1.25k");
        assert_eq!(bytes_axis(0.0), "0");
        assert_eq!(category(&["a".into(), "b".into()], 1.0), "b");
        assert_eq!(category(&["a".into()], 0.5), "");
        assert_eq!(category(&["a".into()], 3.0), "");
    }
}
