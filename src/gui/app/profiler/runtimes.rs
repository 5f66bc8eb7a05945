//! Other runtimes in the profiler: the timing rows of every runtime grouped by runtime (Rust,
//! then Python, then Node) with a filter, the runtime the wire view takes its times from, and
//! the Profile ▸ Runtimes window, which asks each interpreter (in the background) what it is and
//! which libraries it has.

use std::sync::{Arc, Mutex};

use eframe::egui::{self, RichText};

use crate::gui::app::window_kind::Which;

use super::ProfilerView;
use crate::codec::Format;
use crate::gui::app::App;
use crate::profile::bench::Measurement;
use crate::profile::runtimes::{self, Runtime, RuntimeReport};
use crate::report::FileReport;

/// A group of timing rows: Rust's (`None`) or another runtime's.
pub type Group = Option<Runtime>;

/// `Rust`, `Python`, `Node`.
pub fn group_title(group: Group) -> &'static str {
    group.map_or("Rust", Runtime::title)
}

/// `rust`, `python`, `node`: how the filter remembers a group.
pub fn group_name(group: Group) -> &'static str {
    group.map_or("rust", Runtime::name)
}

/// One timing row of any runtime, as the timing views draw it.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// Whose row.
    pub group: Group,
    /// The format.
    pub format: Format,
    /// The library, as its users name it.
    pub library: String,
    /// Bytes of the library's own encoding.
    pub bytes: usize,
    /// Encode timing.
    pub encode: Option<&'a Measurement>,
    /// Decode timing.
    pub decode: Option<&'a Measurement>,
}

impl Entry<'_> {
    /// `Python · JSON · orjson`.
    pub fn label(&self) -> String {
        format!(
            "{} · {} · {}",
            group_title(self.group),
            self.format.title(),
            self.library
        )
    }
}

/// The groups `file` has rows of: Rust, then each runtime run on it, in report order.
pub fn groups(file: &FileReport) -> Vec<Group> {
    let mut out = vec![None];
    for r in &file.runtimes {
        if !out.contains(&Some(r.runtime)) {
            out.push(Some(r.runtime));
        }
    }
    out
}

/// Whether the filter shows `group`.
pub fn shown(view: &ProfilerView, group: Group) -> bool {
    !view.hidden.iter().any(|h| h == group_name(group))
}

/// The rows the timing views draw, grouped by runtime (Rust first) and in report order within
/// a group; the filter's hidden groups left out. Other runtimes' rows are those they measured
/// (a library not installed, or failed, is said in the table instead).
pub fn entries<'a>(file: &'a FileReport, view: &ProfilerView) -> Vec<Entry<'a>> {
    let mut out = Vec::new();
    if shown(view, None) {
        for r in &file.timings {
            out.push(Entry {
                group: None,
                format: r.format,
                library: r.library.name().to_string(),
                bytes: r.bytes,
                encode: r.encode.as_ref(),
                decode: r.decode.as_ref(),
            });
        }
    }
    for r in &file.runtimes {
        if !shown(view, Some(r.runtime)) {
            continue;
        }
        for row in r.rows.iter().filter(|row| row.error.is_none()) {
            out.push(Entry {
                group: Some(r.runtime),
                format: row.format,
                library: row.library.clone(),
                bytes: row.bytes,
                encode: row.encode.as_ref(),
                decode: row.decode.as_ref(),
            });
        }
    }
    out
}

/// The runtime filter: a checkbox per group the payload has rows of (hidden when there is only
/// Rust's).
pub fn filter(ui: &mut egui::Ui, view: &mut ProfilerView, file: &FileReport) {
    let groups = groups(file);
    if groups.len() < 2 {
        return;
    }
    ui.horizontal_wrapped(|ui| {
        ui.label("runtimes:");
        for group in groups {
            let mut on = shown(view, group);
            let version = group.and_then(|g| {
                file.runtimes
                    .iter()
                    .find(|r| r.runtime == g)
                    .and_then(|r| r.version.clone())
            });
            let text = match (group, version) {
                (_, Some(v)) => format!("{} {v}", group_title(group)),
                (None, None) => "Rust".to_string(),
                // The harness gave no answer: the table below says why.
                (Some(_), None) => format!("{} (failed)", group_title(group)),
            };
            if ui
                .checkbox(&mut on, text)
                .on_hover_text("show this runtime's rows in the timing views")
                .changed()
            {
                let name = group_name(group);
                view.hidden.retain(|h| h != name);
                if !on {
                    view.hidden.push(name.to_string());
                }
            }
        }
    });
}

/// What the Profile ▸ Runtimes window knows: the interpreters' answers, asked on a thread of
/// their own.
#[derive(Default)]
pub struct RuntimesWindow {
    /// Whether the window is open.
    pub open: bool,
    /// The answers of the last check (`None` until one finished).
    answers: Arc<Mutex<Option<Vec<RuntimeReport>>>>,
    /// Whether a check is going.
    checking: Arc<Mutex<bool>>,
    /// The interpreter fields as typed.
    programs: Vec<(Runtime, String)>,
}

impl RuntimesWindow {
    /// Asks every runtime's interpreter (`programs`) what it is and has, on a thread: the window
    /// shows the answers when they come (each bounded by [`runtimes::PROBE_TIMEOUT`]).
    pub fn check(&self, ctx: &egui::Context, programs: Vec<(Runtime, String)>) {
        if let Ok(mut c) = self.checking.lock() {
            if *c {
                return;
            }
            *c = true;
        }
        let (answers, checking, ctx) = (self.answers.clone(), self.checking.clone(), ctx.clone());
        let spawned = std::thread::Builder::new()
            .name("wirelens-runtimes-probe".into())
            .spawn(move || {
                let found: Vec<RuntimeReport> = programs
                    .iter()
                    .map(|(r, p)| runtimes::probe(*r, p, runtimes::PROBE_TIMEOUT))
                    .collect();
                if let Ok(mut a) = answers.lock() {
                    *a = Some(found);
                }
                if let Ok(mut c) = checking.lock() {
                    *c = false;
                }
                ctx.request_repaint();
            });
        if spawned.is_err() {
            if let Ok(mut c) = self.checking.lock() {
                *c = false;
            }
        }
    }

    /// Whether a check is going.
    pub fn is_checking(&self) -> bool {
        self.checking.lock().is_ok_and(|c| *c)
    }

    /// The answers of the last check.
    pub fn answers(&self) -> Option<Vec<RuntimeReport>> {
        self.answers.lock().ok().and_then(|a| a.clone())
    }
}

impl App {
    /// Opens Profile ▸ Runtimes and asks the interpreters again.
    pub fn open_runtimes_window(&mut self, ctx: &egui::Context) {
        self.windows.runtimes.open = true;
        self.windows.runtimes.programs = Runtime::ALL
            .into_iter()
            .map(|r| (r, self.settings.interpreter(r)))
            .collect();
        let programs = self.windows.runtimes.programs.clone();
        self.windows.runtimes.check(ctx, programs);
    }

    /// The Profile ▸ Runtimes window: per runtime its interpreter (editable), version, whether
    /// the profiler times it, and each library found (with its version) or missing (with the
    /// command that installs it).
    pub(in crate::gui::app) fn runtimes_window_ui(&mut self, ctx: &egui::Context) {
        if !self.windows.runtimes.open {
            return;
        }
        let mut open = true;
        egui::Window::new(Which::Runtimes.title())
            .open(&mut open)
            .default_width(640.0)
            .show(ctx, |ui| self.runtimes_window_body(ui));
        self.windows.runtimes.open &= open;
    }

    fn runtimes_window_body(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        ui.label(
            "The profiler times these runtimes' libraries on the payload's bytes after the Rust \
             jobs, every one installed unless unticked here (as `wirelens compare`). Rust is \
             always timed.",
        );
        let answers = self.windows.runtimes.answers();
        let checking = self.windows.runtimes.is_checking();
        let mut check = false;
        for runtime in Runtime::ALL {
            ui.separator();
            let answer = answers
                .as_ref()
                .and_then(|a| a.iter().find(|r| r.runtime == runtime));
            ui.horizontal_wrapped(|ui| {
                ui.strong(runtime.title());
                let mut on = self.settings.profiles(runtime);
                if ui
                    .checkbox(&mut on, "time in the profiler")
                    .on_hover_text("time this runtime's libraries after the Rust jobs")
                    .changed()
                {
                    self.settings.set_profiles(runtime, on);
                }
            });
            ui.horizontal_wrapped(|ui| {
                ui.label("interpreter");
                let (var, default) = runtime.program();
                let programs = &mut self.windows.runtimes.programs;
                if !programs.iter().any(|(r, _)| *r == runtime) {
                    programs.push((runtime, self.settings.interpreter(runtime)));
                }
                if let Some((_, text)) = programs.iter_mut().find(|(r, _)| *r == runtime) {
                    let field = ui.add(
                        egui::TextEdit::singleline(text)
                            .hint_text(format!("{default} (or ${var})"))
                            .desired_width(320.0),
                    );
                    if field.lost_focus() {
                        let typed = text.clone();
                        self.settings.set_interpreter(runtime, &typed);
                        check = true;
                    }
                }
            });
            match answer {
                None if checking => {
                    ui.horizontal(|ui| {
                        crate::gui::widgets::spinner(ui);
                        ui.label(format!("asking {}…", runtime.title()));
                    });
                }
                None => {
                    ui.weak("not asked yet");
                }
                Some(r) => runtime_answer(ui, r),
            }
        }
        ui.separator();
        ui.horizontal(|ui| {
            if ui
                .add_enabled(!checking, egui::Button::new("Check again"))
                .clicked()
            {
                check = true;
            }
            if checking {
                crate::gui::widgets::spinner(ui);
            }
        });
        if check {
            let programs = Runtime::ALL
                .into_iter()
                .map(|r| (r, self.settings.interpreter(r)))
                .collect();
            self.windows.runtimes.check(&ctx, programs);
        }
    }
}

/// One interpreter's answer: its version, or why there is none; then its libraries.
fn runtime_answer(ui: &mut egui::Ui, r: &RuntimeReport) {
    match (&r.version, &r.implementation) {
        (Some(v), Some(i)) => ui.label(format!("{} {v} ({i}) at {}", r.runtime.title(), r.program)),
        (Some(v), None) => ui.label(format!("{} {v} at {}", r.runtime.title(), r.program)),
        _ => ui.colored_label(ui.visuals().error_fg_color, "not found"),
    };
    if let Some(e) = &r.error {
        ui.add(egui::Label::new(RichText::new(e).color(ui.visuals().error_fg_color)).wrap());
    }
    if r.rows.is_empty() {
        return;
    }
    egui::Grid::new(("runtime-libraries", r.runtime.name()))
        .striped(true)
        .num_columns(4)
        .show(ui, |ui| {
            for h in ["format", "library", "version", "install"] {
                ui.strong(h);
            }
            ui.end_row();
            for row in &r.rows {
                ui.colored_label(super::format_color(row.format), row.format.title());
                ui.label(&row.library);
                match (&row.version, &row.install) {
                    (Some(v), _) => {
                        ui.label(v);
                        ui.label("");
                    }
                    (None, Some(cmd)) => {
                        ui.colored_label(ui.visuals().warn_fg_color, "missing");
                        ui.horizontal(|ui| {
                            ui.monospace(cmd);
                            if ui.small_button("copy").clicked() {
                                ui.ctx().copy_text(cmd.clone());
                            }
                        });
                    }
                    (None, None) => {
                        ui.colored_label(
                            ui.visuals().warn_fg_color,
                            row.error.as_deref().unwrap_or("failed"),
                        );
                        ui.label("");
                    }
                }
                ui.end_row();
            }
        });
}
