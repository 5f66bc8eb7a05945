//! The wire: encode + transfer + decode per format over network links the user can reshape,
//! with or without gzip, and the winner per link.

use eframe::egui::{self, Align2, RichText};
use egui_plot::{Bar, BarChart, PlotPoint, Text};

use super::plot::{axis_duration, category, integer_marks, solid, still, with_axes};
use super::{format_color, Action, ProfilerView};
use crate::codec::Format;
use crate::profile::runtimes::RuntimeReport;
use crate::profile::sweep::{Link, Transfer};
use crate::report::table::duration;
use crate::report::FileReport;

/// One format's estimate on one link, whichever runtime's times it uses.
#[derive(Debug, Clone)]
pub struct Estimate {
    /// The format.
    pub format: Format,
    /// The library whose times are used.
    pub library: String,
    /// The link's name.
    pub link: String,
    /// Bytes on the wire.
    pub wire_bytes: usize,
    /// Encode (plus compress), seconds.
    pub cpu_send: f64,
    /// Size / bandwidth + round trip, seconds.
    pub wire: f64,
    /// (Decompress plus) decode, seconds.
    pub cpu_receive: f64,
}

impl Estimate {
    /// The whole estimate, seconds.
    pub fn total(&self) -> f64 {
        self.cpu_send + self.wire + self.cpu_receive
    }

    fn of(t: &Transfer) -> Estimate {
        Estimate {
            format: t.format,
            library: t.library.name().to_string(),
            link: t.link.clone(),
            wire_bytes: t.wire_bytes,
            cpu_send: t.cpu_send,
            wire: t.wire,
            cpu_receive: t.cpu_receive,
        }
    }
}

/// The estimates per format on `link` from another runtime's times: each format's fastest
/// library there (encode + decode medians, as `compare` prints it), plain or with gzip (the
/// runtime's own gzip, else Rust's: [`FileReport::runtime_transfers`](crate::profile::report::FileReport::runtime_transfers)); fastest first, with the notes of
/// the formats whose gzip times are Rust's.
pub fn runtime_best_per_format(
    file: &FileReport,
    r: &RuntimeReport,
    links: &[Link],
    link: &str,
    gzip: bool,
) -> (Vec<Estimate>, Vec<String>) {
    let mut notes = Vec::new();
    let mut best: Vec<Estimate> = file
        .runtime_transfers(r, links, gzip)
        .into_iter()
        .filter(|t| t.link == link)
        .map(|t| {
            if let Some(n) = &t.fallback {
                notes.push(format!("{}: {n}", t.format.title()));
            }
            Estimate {
                format: t.format,
                library: t.library,
                link: t.link,
                wire_bytes: t.wire_bytes,
                cpu_send: t.cpu_send,
                wire: t.wire,
                cpu_receive: t.cpu_receive,
            }
        })
        .collect();
    best.sort_by(|a, b| a.total().total_cmp(&b.total()));
    (best, notes)
}

/// The fastest library's estimate per format on `link` (compressed or not), fastest first.
pub fn best_per_format(file: &FileReport, links: &[Link], link: &str, gzip: bool) -> Vec<Transfer> {
    let all = file.transfer_estimates(links);
    let mut best: Vec<Transfer> = Vec::new();
    for format in Format::ALL {
        if let Some(t) = all
            .iter()
            .filter(|t| t.format == format && t.link == link && t.compressed == gzip)
            .min_by(|a, b| a.total().total_cmp(&b.total()))
        {
            best.push(t.clone());
        }
    }
    best.sort_by(|a, b| a.total().total_cmp(&b.total()));
    best
}

/// Link editors (bandwidth and round trip, remove, add by `NAME=BANDWIDTH,RTT` as `--link` takes
/// it), whose encode and decode times to use (Rust's, or another runtime's when it was timed),
/// the gzip switch (Rust's times only: gzip is timed in Rust), and per link a bar per format
/// (its fastest library) with the winner marked.
pub(super) fn wire(
    ui: &mut egui::Ui,
    view: &mut ProfilerView,
    links: &mut Vec<Link>,
    gzip: &mut bool,
    file: &FileReport,
) -> Option<Action> {
    let runtime = runtime_picker(ui, view, file);
    link_options(ui, links, gzip);
    link_editors(ui, links);
    add_link_field(ui, view, links);
    let (rows, notes) = estimates(file, runtime, links, *gzip);
    if let (Some(r), true) = (runtime, *gzip) {
        if notes.is_empty() {
            ui.weak(format!("gzip timed in {}'s own gzip", r.runtime.title()));
        }
        for n in &notes {
            ui.colored_label(ui.visuals().warn_fg_color, n);
        }
    }
    let whose = runtime.map_or("Rust", |r| r.runtime.title());
    if rows.iter().all(|(_, r)| r.is_empty()) {
        ui.label("the estimates appear as soon as a format's encode and decode are measured");
        view.plot_rect = None;
        return None;
    }
    let response = wire_plot(ui, &rows, whose);
    view.plot_rect = Some(with_axes(ui, &response.response));
    winner_table(ui, &rows, whose);
    None
}

/// Whose encode and decode times the estimates use: Rust's, or those of another runtime that
/// timed both (a runtime no longer timed falls back to Rust).
fn runtime_picker<'a>(
    ui: &mut egui::Ui,
    view: &mut ProfilerView,
    file: &'a FileReport,
) -> Option<&'a RuntimeReport> {
    let timed: Vec<&RuntimeReport> = file
        .runtimes
        .iter()
        .filter(|r| {
            r.rows
                .iter()
                .any(|row| row.encode.is_some() && row.decode.is_some())
        })
        .collect();
    if view
        .wire_runtime
        .is_some_and(|w| !timed.iter().any(|r| r.runtime == w))
    {
        view.wire_runtime = None;
    }
    if !timed.is_empty() {
        ui.horizontal_wrapped(|ui| {
            ui.label("encode and decode times of");
            ui.selectable_value(&mut view.wire_runtime, None, "Rust");
            for r in &timed {
                let text = match &r.version {
                    Some(v) => format!("{} {v}", r.runtime.title()),
                    None => r.runtime.title().to_string(),
                };
                ui.selectable_value(&mut view.wire_runtime, Some(r.runtime), text)
                    .on_hover_text(format!(
                        "the fastest {} library of each format, its own bytes",
                        r.runtime.title()
                    ));
            }
        });
    }
    view.wire_runtime
        .and_then(|w| timed.iter().find(|r| r.runtime == w).copied())
}

/// The gzip switch, the button that puts the default links back, and how an estimate is made.
fn link_options(ui: &mut egui::Ui, links: &mut Vec<Link>, gzip: &mut bool) {
    ui.horizontal_wrapped(|ui| {
        ui.checkbox(gzip, "gzip on the wire").on_hover_text(
            "add gzip compress and decompress time, send the gzip bytes (timed in the chosen \
             runtime's own gzip where it was measured, else in Rust's)",
        );
        if ui.button("default links").clicked() {
            *links = Link::defaults();
        }
        ui.weak("estimate = encode + bytes / bandwidth + round trip + decode (medians)");
    });
}

/// Per link its bandwidth and round trip sliders, and a button that removes it.
fn link_editors(ui: &mut egui::Ui, links: &mut Vec<Link>) {
    let mut remove = None;
    egui::Grid::new("links").num_columns(4).show(ui, |ui| {
        for (i, link) in links.iter_mut().enumerate() {
            ui.strong(&link.name);
            let mut mbit = link.bits_per_second / 1e6;
            ui.add(
                egui::Slider::new(&mut mbit, 0.1..=100_000.0)
                    .logarithmic(true)
                    .text("Mbit/s"),
            );
            link.bits_per_second = mbit * 1e6;
            let mut ms = link.rtt_seconds * 1e3;
            ui.add(
                egui::Slider::new(&mut ms, 0.0..=1_000.0)
                    .logarithmic(true)
                    .smallest_positive(0.01)
                    .text("ms round trip"),
            );
            link.rtt_seconds = ms / 1e3;
            if ui.small_button("remove").clicked() {
                remove = Some(i);
            }
            ui.end_row();
        }
    });
    if let Some(i) = remove {
        links.remove(i);
    }
}

/// The field that adds (or replaces) a link written as `--link` takes it, and why the last one
/// typed was refused.
fn add_link_field(ui: &mut egui::Ui, view: &mut ProfilerView, links: &mut Vec<Link>) {
    ui.horizontal_wrapped(|ui| {
        ui.label("add a link");
        let field = ui.add(
            egui::TextEdit::singleline(&mut view.new_link)
                .hint_text("wifi=50mbit,15ms")
                .desired_width(180.0),
        );
        let entered = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if ui.button("add").clicked() || entered {
            match Link::parse(view.new_link.trim()) {
                Ok(l) => {
                    links.retain(|k| k.name != l.name);
                    links.push(l);
                    view.new_link.clear();
                    view.link_error = None;
                }
                Err(e) => view.link_error = Some(e.to_string()),
            }
        }
        if let Some(e) = &view.link_error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
    });
}

/// Per link (by name) each format's best estimate, fastest first, from `runtime`'s times (`None`:
/// Rust's); and the notes of the formats whose gzip times are Rust's, each once.
fn estimates(
    file: &FileReport,
    runtime: Option<&RuntimeReport>,
    links: &[Link],
    gzip: bool,
) -> (Vec<(String, Vec<Estimate>)>, Vec<String>) {
    let mut notes: Vec<String> = Vec::new();
    let rows = links
        .iter()
        .map(|l| {
            let best = match runtime {
                Some(r) => {
                    let (best, n) = runtime_best_per_format(file, r, links, &l.name, gzip);
                    for n in n {
                        if !notes.contains(&n) {
                            notes.push(n);
                        }
                    }
                    best
                }
                None => best_per_format(file, links, &l.name, gzip)
                    .iter()
                    .map(Estimate::of)
                    .collect(),
            };
            (l.name.clone(), best)
        })
        .collect();
    (rows, notes)
}

/// The plot: a row per link (the first on top), a bar per format with its total beside it, the
/// winner marked.
fn wire_plot(
    ui: &mut egui::Ui,
    rows: &[(String, Vec<Estimate>)],
    whose: &str,
) -> egui_plot::PlotResponse<()> {
    // The first link on top: the plot's y grows upwards, so row i sits at n-1-i.
    let y_labels: Vec<String> = rows.iter().rev().map(|(n, _)| n.clone()).collect();
    let n = rows.len();
    still(
        "profile-wire",
        (n as f32 * 110.0 + 40.0).clamp(200.0, (ui.available_height() * 0.6).max(200.0)),
    )
    .y_grid_spacer(integer_marks)
    .y_axis_formatter(move |m, _| category(&y_labels, m.value))
    .y_axis_min_width(90.0)
    .legend(egui_plot::Legend::default().position(egui_plot::Corner::RightBottom))
    .x_axis_label(format!("end to end in {whose}: encode + transfer + decode"))
    .x_axis_formatter(|m, _| {
        if m.value <= 0.0 {
            "0".into()
        } else {
            axis_duration(m.value * 1e6)
        }
    })
    .include_x(0.0)
    .show(ui, |p| {
        for (k, format) in Format::ALL.into_iter().enumerate() {
            let offset = (1.5 - k as f64) * 0.2;
            let mut bars = Vec::new();
            for (i, (_, best)) in rows.iter().enumerate() {
                let Some(t) = best.iter().find(|t| t.format == format) else {
                    continue;
                };
                let y = (n - 1 - i) as f64 + offset;
                bars.push(estimate_bar(t, y, whose));
                let winner = best.first().is_some_and(|b| b.format == format);
                p.text(total_label(t, y, winner));
            }
            p.bar_chart(
                BarChart::new(format.title(), bars)
                    .horizontal()
                    .color(format_color(format))
                    .element_formatter(Box::new(|b, _| b.name.clone())),
            );
        }
    })
}

/// An estimate's bar at height `y`, its hover text the estimate's parts.
fn estimate_bar(t: &Estimate, y: f64, whose: &str) -> Bar {
    Bar::new(y, t.total() * 1e3)
        .width(0.18)
        .horizontal()
        .fill(solid(format_color(t.format)))
        .name(format!(
            "{} · {} ({whose}) on {}: {}\nencode {} + wire {} ({} bytes) + decode {}",
            t.format.title(),
            t.library,
            t.link,
            duration(t.total() * 1e9),
            duration(t.cpu_send * 1e9),
            duration(t.wire * 1e9),
            t.wire_bytes,
            duration(t.cpu_receive * 1e9)
        ))
}

/// The total written at the end of an estimate's bar, "(fastest)" after the winner's.
fn total_label(t: &Estimate, y: f64, winner: bool) -> Text {
    Text::new(
        "",
        PlotPoint::new(t.total() * 1e3, y),
        RichText::new(format!(
            " {}{}",
            duration(t.total() * 1e9),
            if winner { "  (fastest)" } else { "" }
        ))
        .small()
        .strong(),
    )
    .anchor(Align2::LEFT_CENTER)
}

/// Per link its winner, the winner's library and its times.
fn winner_table(ui: &mut egui::Ui, rows: &[(String, Vec<Estimate>)], whose: &str) {
    egui::Grid::new("wire-table")
        .striped(true)
        .num_columns(7)
        .show(ui, |ui| {
            for h in [
                "link", "winner", "library", "total", "encode", "wire", "decode",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for (name, best) in rows {
                let Some(t) = best.first() else { continue };
                ui.label(name);
                ui.colored_label(format_color(t.format), t.format.title());
                ui.label(format!("{} ({whose})", t.library));
                ui.monospace(duration(t.total() * 1e9));
                ui.monospace(duration(t.cpu_send * 1e9));
                ui.monospace(duration(t.wire * 1e9));
                ui.monospace(duration(t.cpu_receive * 1e9));
                ui.end_row();
            }
        });
}
