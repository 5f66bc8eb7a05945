//! The profiler views: what each format costs on the payloads open in the inspector, drawn from
//! the workspace's [`ProfileRun`](crate::workspace::ProfileRun) while it streams in.
//!
//! A toolbar starts a run (quick, standard or precise; this payload or every open one), shows
//! its progress and cancels it, and exports: the same CSV files as `wirelens compare`, the table
//! as CSV or Markdown on the clipboard, and the plot on screen as a PNG. Below it, one tab per
//! view: sizes, bytes per field, timings, scaling, the wire, and the payloads compared. Clicking
//! a size bar focuses that format's column in the inspector; clicking a field row selects that
//! path in every column.

mod charts;
mod plot;
mod png;
pub mod runtimes;
mod scaling;
mod tables;
mod wire;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::Status;
use eframe::egui::{self, Color32, RichText};

pub use png::encode_png;

use super::App;
use crate::codec::Format;
use crate::model::Path;
use crate::profile::Op;
use crate::report::{Mode, Report};
use crate::workspace::profiling::{beside, csv_text, export_csv, markdown_text};
use crate::workspace::Scope;

/// The profiler's tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    /// Sizes raw and compressed.
    Sizes,
    /// Where the bytes go.
    Fields,
    /// Encode and decode timings.
    Timings,
    /// Size and time against the record count.
    Scaling,
    /// End to end over network links.
    Wire,
    /// Several payloads side by side.
    Compare,
}

impl Tab {
    const ALL: [Tab; 6] = [
        Tab::Sizes,
        Tab::Fields,
        Tab::Timings,
        Tab::Scaling,
        Tab::Wire,
        Tab::Compare,
    ];

    fn title(self) -> &'static str {
        match self {
            Tab::Sizes => "Sizes",
            Tab::Fields => "Bytes per field",
            Tab::Timings => "Timings",
            Tab::Scaling => "Scaling",
            Tab::Wire => "The wire",
            Tab::Compare => "Compare payloads",
        }
    }

    fn slug(self) -> &'static str {
        match self {
            Tab::Sizes => "sizes",
            Tab::Fields => "fields",
            Tab::Timings => "timings",
            Tab::Scaling => "scaling",
            Tab::Wire => "wire",
            Tab::Compare => "compare",
        }
    }
}

/// What the timing view plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Time per operation (box plots).
    Time,
    /// MB/s of JSON-equivalent bytes.
    Throughput,
    /// Allocations per operation.
    Allocations,
}

/// What the scaling view plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleMetric {
    /// Encoded bytes.
    Bytes,
    /// Encoded bytes per record.
    BytesPerRecord,
    /// Encode time.
    Encode,
    /// Decode time.
    Decode,
}

/// The field table's sort column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    /// The path pattern.
    Path,
    /// Nodes.
    Nodes,
    /// Key or tag bytes.
    Key,
    /// Length, marker and structure bytes.
    Overhead,
    /// Value bytes.
    Value,
    /// All bytes.
    Total,
}

/// What a view asks the app to do.
pub(super) enum Action {
    /// Show the inspector with this format's column focused.
    Focus(Format),
    /// Select this path (or pattern) in every column of the inspector.
    Select(Path),
}

/// The profiler's view state (what is not the run itself).
pub struct ProfilerView {
    /// The tab shown.
    pub tab: Tab,
    /// Which payloads the next run profiles.
    pub scope: Scope,
    /// The file shown when the report has several.
    pub file: usize,
    /// The timing view's operation.
    pub op: Op,
    /// The timing view's metric.
    pub metric: Metric,
    /// Whether the time boxes' upper whisker is the p99 of single calls (where measured)
    /// instead of the samples' p95.
    pub p99_whiskers: bool,
    /// The scaling view's metric.
    pub scale: ScaleMetric,
    /// The field table's format.
    pub field_format: Format,
    /// The field table's sort column and whether it is descending.
    pub sort: (SortBy, bool),
    /// The runtimes whose rows the timing views hide (`rust`, `python`, `node`).
    pub hidden: Vec<String>,
    /// The runtime whose encode and decode times the wire view uses (`None`: Rust's).
    pub wire_runtime: Option<crate::profile::runtimes::Runtime>,
    /// The wire view's "add a link" text, and why the last one did not parse.
    pub new_link: String,
    link_error: Option<String>,
    /// The plot's rectangle on screen last frame (what "Save plot as PNG" crops to).
    pub plot_rect: Option<egui::Rect>,
    /// A PNG being written from a screenshot: its outcome arrives here.
    png_result: Arc<Mutex<Option<Result<PathBuf, String>>>>,
    png_pending: bool,
}

impl Default for ProfilerView {
    fn default() -> ProfilerView {
        ProfilerView {
            tab: Tab::Sizes,
            scope: Scope::Current,
            file: 0,
            op: Op::Decode,
            metric: Metric::Time,
            p99_whiskers: false,
            scale: ScaleMetric::Bytes,
            field_format: Format::Json,
            sort: (SortBy::Total, true),
            hidden: Vec::new(),
            wire_runtime: None,
            new_link: String::new(),
            link_error: None,
            plot_rect: None,
            png_result: Arc::new(Mutex::new(None)),
            png_pending: false,
        }
    }
}

/// A colour per format, the same in every plot: JSON amber, MessagePack teal, CBOR blue,
/// Protobuf purple, Avro red.
pub fn format_color(format: Format) -> Color32 {
    match format {
        Format::Json => Color32::from_rgb(0xe0, 0x9a, 0x1f),
        Format::MessagePack => Color32::from_rgb(0x1f, 0xa8, 0x8f),
        Format::Cbor => Color32::from_rgb(0x4a, 0x86, 0xd8),
        Format::Protobuf => Color32::from_rgb(0xa8, 0x6c, 0xd0),
        Format::Avro => Color32::from_rgb(0xd0, 0x5a, 0x5a),
    }
}

impl App {
    /// The report shown: the run's, as far as it has got.
    fn profile_report(&self) -> Option<Report> {
        self.ws.profile.as_ref().map(|r| r.report())
    }

    /// Starts a run with the mode and scope chosen in the toolbar.
    pub fn start_profile(&mut self) {
        let mode = self.settings.profile_mode;
        let links = self.settings.links.clone();
        let runtimes = self.settings.timed_runtimes();
        match self
            .ws
            .start_profile(mode, self.profiler.scope, links, runtimes)
        {
            Ok(()) => {
                self.profiler.file = 0;
                self.status = None;
            }
            Err(e) => self.status = Some(Status::Error(e.to_string())),
        }
    }

    /// Cancels the running profile; what finished stays.
    pub fn cancel_profile(&mut self) {
        if let Some(run) = &self.ws.profile {
            run.cancel();
        }
    }

    /// Writes the CSV files to the export path (or asks for one with a save dialog when the
    /// field is empty). The outcome is shown in the message bar.
    pub fn export_profile_csv(&mut self) {
        if !self.ws.profile.as_ref().is_some_and(|r| r.has_results()) {
            self.status = Some(Status::Error(
                "nothing to export yet: press Run profile first".into(),
            ));
            return;
        }
        if self.settings.export_path.trim().is_empty() {
            match super::dialogs::pick(|| {
                rfd::FileDialog::new()
                    .set_title("Export the profile as CSV")
                    .add_filter("CSV", &["csv"])
                    .set_file_name("wirelens-profile.csv")
                    .save_file()
            }) {
                super::dialogs::Picked::Chosen(p) => {
                    self.settings.export_path = p.display().to_string();
                }
                super::dialogs::Picked::Cancelled => return,
                super::dialogs::Picked::Unavailable => {
                    // No dialog here: the path field in the toolbar is the other way.
                    self.status = Some(Status::Error(
                        "no file dialog could open here: type a path in the export field (e.g. /tmp/profile.csv), then Export CSV"
                            .into()));
                    self.view = super::View::Profiler;
                    return;
                }
            }
        }
        let Some(report) = self.profile_report() else {
            return;
        };
        let path = PathBuf::from(self.settings.export_path.trim());
        self.status = Some(match export_csv(&report, &path) {
            Ok(paths) => Status::Info(format!(
                "exported {}{}",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" and "),
                if report.cancelled {
                    " (the run was cancelled: the files hold what finished)"
                } else {
                    ""
                }
            )),
            Err(e) => Status::Error(e.to_string()),
        });
    }

    /// Copies the timings table as CSV or Markdown.
    fn copy_table(&mut self, ctx: &egui::Context, markdown: bool) {
        let Some(report) = self.profile_report() else {
            return;
        };
        let text = if markdown {
            Ok(markdown_text(&report))
        } else {
            csv_text(&report).map_err(|e| e.to_string())
        };
        match text {
            Ok(t) => {
                ctx.copy_text(t);
                self.status = Some(Status::Info(format!(
                    "copied the table as {}",
                    if markdown { "Markdown" } else { "CSV" }
                )));
            }
            Err(e) => self.status = Some(Status::Error(format!("cannot copy the table: {e}"))),
        }
    }

    /// Saves the plot on screen as `<export stem>-<tab>.png` next to the export path, from a
    /// screenshot of the next frame.
    fn save_plot_png(&mut self, ctx: &egui::Context) {
        let Some(rect) = self.profiler.plot_rect else {
            self.status = Some(Status::Error("no plot on screen to save".into()));
            return;
        };
        let base = if self.settings.export_path.trim().is_empty() {
            std::env::temp_dir().join("wirelens-profile.csv")
        } else {
            PathBuf::from(self.settings.export_path.trim())
        };
        let path = beside(&base, &format!("-{}.png", self.profiler.tab.slug()));
        let slot = self.profiler.png_result.clone();
        let pixels_per_point = ctx.pixels_per_point();
        let repaint = ctx.clone();
        self.profiler.png_pending = true;
        ctx.request_screenshot(move |image| {
            let result = encode_png(&image, rect, pixels_per_point)
                .map_err(|e| e.to_string())
                .and_then(|bytes| {
                    crate::files::write_atomically(&path, &bytes)
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))
                })
                .map(|()| path);
            if let Ok(mut s) = slot.lock() {
                *s = Some(result);
            }
            repaint.request_repaint();
        });
    }

    /// A finished PNG write is reported.
    pub(super) fn profiler_poll(&mut self) {
        if self.profiler.png_pending {
            let done = self
                .profiler
                .png_result
                .lock()
                .ok()
                .and_then(|mut s| s.take());
            if let Some(result) = done {
                self.profiler.png_pending = false;
                self.status = Some(match result {
                    Ok(p) => Status::Info(format!("saved the plot as {}", p.display())),
                    Err(e) => Status::Error(e),
                });
            }
        }
    }

    /// The profiler: toolbar, tabs, the view.
    pub(super) fn profiler_view(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.profiler_toolbar(ui, &ctx);
        let report = self.profile_report();
        ui.horizontal_wrapped(|ui| {
            for tab in Tab::ALL {
                ui.selectable_value(&mut self.profiler.tab, tab, tab.title());
            }
        });
        ui.separator();
        let Some(report) = report else {
            ui.label(
                "Press Run profile to measure the payload in every format and library: sizes raw \
                 and compressed, where the bytes go, encode and decode time, how both grow with \
                 the record count, and what it means on the wire.",
            );
            ui.weak(
                "Quick takes seconds; Standard samples like criterion; Precise runs one \
                 timing job at a time, the jobs taking turns so each is sampled across the whole \
                 run, with two seconds of single calls per row for the tail (slower; results \
                 arrive together at the end).",
            );
            return;
        };
        if report.files.is_empty() {
            ui.horizontal(|ui| {
                crate::gui::widgets::spinner(ui);
                ui.label("encoding the payload in every format…");
            });
            return;
        }
        if report.files.len() > 1 && self.profiler.tab != Tab::Compare {
            ui.horizontal_wrapped(|ui| {
                ui.label("payload:");
                for (i, f) in report.files.iter().enumerate() {
                    ui.selectable_value(&mut self.profiler.file, i, &f.name);
                }
            });
        }
        let file = self.profiler.file.min(report.files.len() - 1);
        // Every view scrolls both ways, so a table wider or a chart taller than a small window
        // is reached by scrolling, not cut.
        let tab = self.profiler.tab;
        let action = egui::ScrollArea::both()
            .id_salt(("profiler-tab", tab.slug()))
            .auto_shrink([false, false])
            .show(ui, |ui| match tab {
                Tab::Sizes => charts::sizes(ui, &mut self.profiler, &report.files[file]),
                Tab::Fields => charts::fields(ui, &mut self.profiler, &report.files[file]),
                Tab::Timings => charts::timings(ui, &mut self.profiler, &report, file),
                Tab::Scaling => scaling::scaling(ui, &mut self.profiler, &report.files[file]),
                Tab::Wire => wire::wire(
                    ui,
                    &mut self.profiler,
                    &mut self.settings.links,
                    &mut self.settings.wire_gzip,
                    &report.files[file],
                ),
                Tab::Compare => tables::compare(ui, &mut self.profiler, &report),
            })
            .inner;
        match action {
            Some(Action::Focus(format)) => {
                self.here.focus = Some(format);
                self.view = super::View::Inspector;
            }
            Some(Action::Select(path)) => {
                self.push(super::Command::Select(Some(path)));
                self.push(super::Command::SetView(super::View::Inspector));
            }
            None => {}
        }
    }

    /// The profiler's toolbar: the run controls, the run's progress or result, and the export
    /// row.
    fn profiler_toolbar(&mut self, ui: &mut egui::Ui, ctx: &egui::Context) {
        self.run_controls(ui);
        if let Some(run) = &self.ws.profile {
            run_state(ui, run);
            // A harness that failed (not installed, crashed, timed out) says so here too, not only
            // in the timing views.
            let report = run.report();
            for file in &report.files {
                for r in file.runtimes.iter().filter(|r| r.error.is_some()) {
                    ui.add(
                        egui::Label::new(
                            RichText::new(format!(
                                "{} harness on {}: {}",
                                r.runtime.title(),
                                file.name,
                                r.error.as_deref().unwrap_or_default()
                            ))
                            .color(ui.visuals().warn_fg_color),
                        )
                        .wrap(),
                    );
                }
            }
            // The precise mode's word on the machine, on a line of its own (it is long).
            if !run.is_running() && run.error.is_none() {
                if let Some(note) = run.report().probe_note() {
                    ui.add(
                        egui::Label::new(
                            egui::RichText::new(format!("machine during the run: {note}")).weak(),
                        )
                        .wrap(),
                    );
                }
            }
        }
        self.export_row(ui, ctx);
    }

    /// Run (or Cancel), the run's length, the other runtimes to time, and the payloads in
    /// scope.
    fn run_controls(&mut self, ui: &mut egui::Ui) {
        let running = self.ws.is_profiling();
        ui.horizontal_wrapped(|ui| {
            if ui
                .add_enabled(!running, egui::Button::new("Run profile"))
                .on_hover_text("measure the payload(s) in every format and library")
                .clicked()
            {
                self.push(super::Command::StartProfile);
            }
            ui.add_enabled_ui(!running, |ui| {
                ui.selectable_value(&mut self.settings.profile_mode, Mode::Quick, "Quick")
                    .on_hover_text("a few samples per operation: seconds");
                ui.selectable_value(&mut self.settings.profile_mode, Mode::Standard, "Standard")
                    .on_hover_text("30–100 samples per operation, jobs in parallel");
                ui.selectable_value(&mut self.settings.profile_mode, Mode::Precise, "Precise")
                    .on_hover_text("like Standard, one timing job at a time");
                ui.separator();
                self.runtime_choices(ui);
                ui.separator();
                self.scope_choices(ui);
            });
            if ui
                .button("Runtimes…")
                .on_hover_text("which runtimes and libraries are installed here")
                .clicked()
            {
                self.push(super::Command::RuntimesWindow);
            }
            if running && ui.button("Cancel").clicked() {
                self.push(super::Command::CancelProfile);
            }
        });
    }

    /// Which runtimes besides Rust a profile times.
    fn runtime_choices(&mut self, ui: &mut egui::Ui) {
        ui.label("also in");
        for runtime in crate::profile::runtimes::Runtime::ALL {
            let mut on = self.settings.profiles(runtime);
            if ui
                .checkbox(&mut on, runtime.title())
                .on_hover_text(format!(
                    "also time {}'s libraries on the same bytes after the Rust jobs \
                     (interpreter: {}; Profile ▸ Runtimes shows what it has)",
                    runtime.title(),
                    self.settings.interpreter(runtime)
                ))
                .changed()
            {
                self.settings.set_profiles(runtime, on);
            }
        }
    }

    /// The payloads a profile measures: the one shown, or every open source's.
    fn scope_choices(&mut self, ui: &mut egui::Ui) {
        let n = self.ws.entries.len();
        ui.selectable_value(&mut self.profiler.scope, Scope::Current, "this payload");
        ui.add_enabled_ui(n > 1, |ui| {
            ui.selectable_value(
                &mut self.profiler.scope,
                Scope::AllOpen,
                if n > 1 {
                    format!("all {n} open payloads")
                } else {
                    "all open payloads".into()
                },
            )
            .on_hover_text("compare the payloads of every open source");
        });
    }

    /// The export path, and the buttons that export, copy or save the results.
    fn export_row(&mut self, ui: &mut egui::Ui, ctx: &egui::Context) {
        ui.horizontal_wrapped(|ui| {
            ui.label("export to");
            ui.add(
                egui::TextEdit::singleline(&mut self.settings.export_path)
                    .hint_text("/path/to/profile.csv")
                    .desired_width(260.0),
            );
            let has = self.ws.profile.as_ref().is_some_and(|r| r.has_results());
            if ui
                .add_enabled(
                    has,
                    egui::Button::new(format!(
                        "Export CSV ({})",
                        super::UiCommand::ExportProfile.shortcut_text(ctx)
                    )),
                )
                .on_hover_text(
                    "the timings CSV at this path and bytes per field next to it \
                     (<name>-fields.csv), as `wirelens compare --csv --csv-fields` writes them",
                )
                .clicked()
            {
                self.push(super::Command::ExportProfile);
            }
            if ui.add_enabled(has, egui::Button::new("Copy CSV")).clicked() {
                self.copy_table(ctx, false);
            }
            if ui
                .add_enabled(has, egui::Button::new("Copy Markdown"))
                .clicked()
            {
                self.copy_table(ctx, true);
            }
            if ui
                .add_enabled(
                    has && self.profiler.plot_rect.is_some(),
                    egui::Button::new("Save plot as PNG"),
                )
                .on_hover_text("<export name>-<view>.png next to the export path")
                .clicked()
            {
                self.save_plot_png(ctx);
            }
        });
    }
}

/// A run's state on a line: preparing, encoding, its progress (or cancelling), its error, or
/// how it finished.
fn run_state(ui: &mut egui::Ui, run: &crate::workspace::ProfileRun) {
    let crate::workspace::Progress {
        done,
        total,
        fraction,
        text,
        current,
    } = run.progress();
    ui.horizontal_wrapped(|ui| {
        if let Some(p) = run.preparing() {
            crate::gui::widgets::spinner(ui);
            ui.label(p);
        } else if run.is_running() && total == 0 {
            crate::gui::widgets::spinner(ui);
            ui.label(if run.is_cancelled() {
                "cancelling…"
            } else {
                "encoding the payload in every format and library, slicing its records…"
            });
        } else if run.is_running() {
            ui.add(
                egui::ProgressBar::new(fraction)
                    .desired_width(260.0)
                    .text(text),
            );
            if run.is_cancelled() {
                ui.label("cancelling…");
            } else if let Some(label) = current {
                ui.weak(label);
            }
        } else if let Some(e) = &run.error {
            ui.colored_label(ui.visuals().error_fg_color, format!("profile failed: {e}"));
        } else {
            let report = run.report();
            ui.label(format!(
                "{} run {}: {done} of {total} timing jobs{}",
                report.mode.name(),
                if report.cancelled {
                    "cancelled"
                } else {
                    "finished"
                },
                if report.parallel {
                    " (in parallel; * marks timings taken while other jobs ran)"
                } else {
                    " (one at a time, in turns)"
                }
            ));
        }
    });
}
