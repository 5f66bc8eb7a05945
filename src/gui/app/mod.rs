//! The inspector window: a thin face over a [`Workspace`].
//!
//! The app turns input (menus, shortcuts, drops, pastes, clicks in the widgets) into workspace
//! calls and draws what the workspace holds. It never decodes or encodes anything large itself:
//! the workspace's jobs do, on worker threads, and the app polls them once per frame. Linked
//! selection is a [`Path`]: a click in any column selects that path, and every column resolves it
//! in its own span tree, scrolls its hex view to it and reveals it in its tree.

mod columns;
mod limits;
mod menus;
pub mod profiler;
mod samples;
mod settings;
mod sidebar;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use eframe::egui;

pub use samples::SAMPLES;
pub use settings::{SchemaFiles, Settings};

use super::widgets::{HexView, TreeView};
use crate::codec::Format;
use crate::model::{ByteRole, Path};
use crate::workspace::{Analysis, Source, Workspace};

/// A column's widgets; made anew whenever the analysis changes.
struct ColumnView {
    hex: HexView,
    tree: TreeView,
}

impl ColumnView {
    fn new() -> ColumnView {
        ColumnView {
            hex: HexView::new(),
            tree: TreeView::new(),
        }
    }
}

/// What the pointer is over, for the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hover {
    /// The column.
    pub format: Option<Format>,
    /// The byte offset.
    pub offset: usize,
    /// The field's path and the byte's role, when known.
    pub node: Option<(Path, ByteRole)>,
}

/// The main area's two faces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The formats side by side, byte by byte.
    Inspector,
    /// What each format costs: sizes, fields, timings, scaling, the wire.
    Profiler,
}

/// The inspector app.
pub struct App {
    /// The main area shown.
    pub view: View,
    /// The profiler's view state.
    pub profiler: profiler::ProfilerView,
    /// The model: sources, payloads, analyses, schemas, selection.
    pub ws: Workspace,
    /// What is remembered across runs.
    pub settings: Settings,
    /// A message for the user (an error opening a file, a schema that did not compile), and
    /// whether it is an error.
    pub message: Option<(String, bool)>,
    /// What the pointer is over.
    pub hover: Option<Hover>,
    views: HashMap<Format, ColumnView>,
    /// The analysis the views were made for.
    views_for: usize,
    /// The hex view of a source whose analysis is not ready yet.
    raw_hex: HexView,
    /// The column the data inspector and copy buttons use.
    focus: Option<Format>,
    /// The selection the views were last moved to.
    shown_selection: Option<Path>,
    paste_open: bool,
    paste_text: String,
    schema_open: bool,
    schema_text: String,
    schema_files: String,
    schema_includes: String,
    save_open: bool,
    save_path: String,
    save_format: Option<Format>,
    help_open: bool,
    /// View ▸ Limits….
    limits: limits::LimitsWindow,
    /// Which system fonts draw payload text the built-in fonts lack (shown in the help window).
    font_summary: String,
    open_path: String,
    select_text: String,
    message_filter: String,
    goto_text: String,
    /// The data inspector panel's tallest height so far (it never shrinks back).
    inspector_height: f32,
    quit: bool,
}

/// How the app starts.
#[derive(Debug, Default, Clone)]
pub struct AppOptions {
    /// Files to open.
    pub files: Vec<PathBuf>,
    /// Settings from the last run.
    pub settings: Option<Settings>,
}

impl App {
    /// Records which fallback fonts were installed, for the help window.
    pub fn set_font_summary(&mut self, summary: String) {
        self.font_summary = summary;
    }

    /// An app drawing into `ctx` (a real window or a test harness).
    pub fn new(ctx: &egui::Context, options: AppOptions) -> App {
        let repaint = ctx.clone();
        let ws = Workspace::new(Arc::new(move || repaint.request_repaint()));
        let mut app = App {
            view: View::Inspector,
            profiler: profiler::ProfilerView::default(),
            ws,
            settings: options.settings.unwrap_or_default(),
            message: None,
            hover: None,
            views: HashMap::new(),
            views_for: 0,
            raw_hex: HexView::new(),
            focus: None,
            shown_selection: None,
            paste_open: false,
            paste_text: String::new(),
            schema_open: false,
            schema_text: String::new(),
            schema_files: String::new(),
            schema_includes: String::new(),
            save_open: false,
            save_path: String::new(),
            save_format: None,
            help_open: false,
            limits: limits::LimitsWindow::default(),
            font_summary: String::new(),
            open_path: String::new(),
            select_text: String::new(),
            message_filter: String::new(),
            goto_text: String::new(),
            inspector_height: 0.0,
            quit: false,
        };
        app.apply_theme(ctx);
        app.restore_limits();
        let schemas = app.settings.schemas.clone();
        for s in schemas {
            if let Err(e) = app.ws.load_schema_files(&s.files, &s.includes) {
                app.message = Some((format!("schema from the last run not loaded: {e}"), true));
                app.settings.schemas.retain(|t| *t != s);
            }
        }
        for f in options.files {
            app.open_file(f);
        }
        app
    }

    /// Opens a file (recent list updated; an error shows in the message bar). A `.proto` file
    /// loads as a schema instead, its imports found beside it and beside the `.proto` files
    /// loaded before it.
    pub fn open_file(&mut self, path: PathBuf) {
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("proto"))
        {
            let folder = |f: &std::path::Path| match f.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let mut includes = vec![folder(&path)];
            for s in &self.settings.schemas {
                for dir in s.files.iter().map(|f| folder(f)) {
                    if !includes.contains(&dir) {
                        includes.push(dir);
                    }
                }
            }
            self.load_schema_files(vec![path], includes);
            return;
        }
        if key_log_text(&path).is_some() {
            self.load_key_log_file(&path);
            return;
        }
        match self.ws.open_path(&path) {
            Ok(_) => {
                let full = std::fs::canonicalize(&path).unwrap_or(path);
                self.settings.remember(full);
                self.message = None;
            }
            Err(e) => self.message = Some((e, true)),
        }
    }

    /// Opens a bundled sample by file name.
    pub fn open_sample(&mut self, name: &str) -> bool {
        match SAMPLES.iter().find(|(n, _)| *n == name) {
            Some((n, bytes)) => {
                self.ws.add(Source::sample(n, bytes));
                self.message = None;
                true
            }
            None => false,
        }
    }

    /// Inspects pasted text.
    pub fn paste(&mut self, text: &str) {
        if !text.trim().is_empty() {
            self.ws.paste(text);
            self.message = None;
        }
    }

    /// Selects `path` in every column (each hex view scrolls to it, each tree reveals it).
    pub fn select(&mut self, path: Option<Path>) {
        if let Some(p) = &path {
            self.select_text = p.to_string();
        }
        self.ws.select(path);
    }

    /// The column the data inspector follows.
    pub fn focus(&self) -> Option<Format> {
        self.focus
    }

    fn apply_theme(&self, ctx: &egui::Context) {
        ctx.set_theme(if self.settings.dark {
            egui::Theme::Dark
        } else {
            egui::Theme::Light
        });
    }

    /// Whether the user asked to quit (the window closes).
    pub fn wants_quit(&self) -> bool {
        self.quit
    }

    /// Makes new views when the analysis changed, and moves them to a new selection.
    fn sync_views(&mut self, analysis: Option<&Arc<Analysis>>) {
        let id = analysis.map_or(0, |a| Arc::as_ptr(a) as usize);
        if id != self.views_for {
            self.views_for = id;
            self.views.clear();
            self.shown_selection = None;
            if let Some(a) = analysis {
                for c in &a.columns {
                    self.views.insert(c.format, ColumnView::new());
                }
                if self.focus.is_none_or(|f| a.column(f).is_none()) {
                    self.focus = a.source().map(|c| c.format);
                }
            }
        }
        let Some(a) = analysis else { return };
        if self.ws.selected != self.shown_selection {
            self.shown_selection = self.ws.selected.clone();
            let Some(path) = &self.ws.selected else {
                return;
            };
            for c in &a.columns {
                let (Some(view), Some(doc), Some(id)) =
                    (self.views.get_mut(&c.format), &c.document, c.resolve(path))
                else {
                    continue;
                };
                let extent = doc.spans.node(id).extent();
                view.hex.scroll_to(extent.start);
                view.hex.set_cursor(extent.start);
                view.tree.reveal(&doc.spans, id);
            }
        }
    }

    /// Draws one frame (the window's whole content). Tests call this through a harness.
    pub fn show(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.ws.poll();
        self.handle_input(&ctx);
        self.profiler_input(&ctx);
        let analysis = self.ws.shown_analysis();
        if let Some(a) = &analysis {
            let shown = a.columns.iter().filter(|c| c.document.is_some()).count();
            crate::gui::log_time(&format!("{shown} of {} columns shown", a.columns.len()));
        }
        self.sync_views(analysis.as_ref());
        self.menu_bar(ui);
        self.status_bar(ui, analysis.as_deref());
        self.windows(&ctx);
        if self.ws.entries.is_empty() {
            egui::CentralPanel::default().show(ui, |ui| self.welcome(ui));
            return;
        }
        self.sidebar(ui);
        if self.view == View::Inspector {
            self.bottom_panel(ui, analysis.as_deref());
        }
        egui::CentralPanel::default().show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.selectable_value(&mut self.view, View::Inspector, "Inspector");
                ui.selectable_value(&mut self.view, View::Profiler, "Profiler");
                if self.ws.is_profiling() {
                    ui.spinner();
                }
            });
            self.message_bar(ui);
            match self.view {
                View::Inspector => self.main_area(ui, analysis.as_deref()),
                View::Profiler => self.profiler_view(ui),
            }
        });
        if self.ws.is_busy() || self.ws.is_profiling() {
            // Progress comes from the worker's notify; keep the spinner moving meanwhile.
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
    }

    fn message_bar(&mut self, ui: &mut egui::Ui) {
        let mut close = false;
        if let Some((text, is_error)) = &self.message {
            ui.horizontal(|ui| {
                if *is_error {
                    ui.colored_label(ui.visuals().error_fg_color, text);
                } else {
                    ui.label(text);
                }
                close = ui.small_button("close").clicked();
            });
        }
        if close {
            self.message = None;
        }
    }

    /// Drops, pastes and shortcuts.
    fn handle_input(&mut self, ctx: &egui::Context) {
        let (dropped, pasted) = ctx.input(|i| {
            let dropped = i.raw.dropped_files.clone();
            let pasted: Vec<String> = i
                .events
                .iter()
                .filter_map(|e| match e {
                    egui::Event::Paste(t) => Some(t.clone()),
                    _ => None,
                })
                .collect();
            (dropped, pasted)
        });
        for f in dropped {
            let path = f.path();
            if !path.as_os_str().is_empty() {
                self.open_file(path.to_path_buf());
                continue;
            }
            match f.bytes() {
                Ok(bytes) => {
                    self.ws.add(Source::dropped("dropped bytes", bytes));
                }
                Err(e) => self.message = Some((format!("cannot read the dropped file: {e}"), true)),
            }
        }
        // A paste into a text field belongs to the field.
        if !ctx.egui_wants_keyboard_input() {
            for t in pasted {
                self.paste(&t);
            }
        }
        let shortcut = |m: egui::Modifiers, k: egui::Key| {
            ctx.input_mut(|i| i.consume_shortcut(&egui::KeyboardShortcut::new(m, k)))
        };
        if shortcut(egui::Modifiers::COMMAND, egui::Key::O) {
            self.open_dialog();
        }
        if shortcut(
            egui::Modifiers::COMMAND | egui::Modifiers::SHIFT,
            egui::Key::V,
        ) {
            self.paste_open = true;
        }
        if shortcut(egui::Modifiers::COMMAND, egui::Key::Q) {
            self.quit = true;
        }
        if shortcut(egui::Modifiers::NONE, egui::Key::F1) {
            self.help_open = !self.help_open;
        }
        if shortcut(egui::Modifiers::COMMAND, egui::Key::D) {
            self.settings.dark = !self.settings.dark;
            self.apply_theme(ctx);
        }
        if !ctx.egui_wants_keyboard_input() && shortcut(egui::Modifiers::NONE, egui::Key::Escape) {
            self.select(None);
        }
    }

    /// Loads a TLS key log file; what happened shows in the message bar.
    pub(super) fn load_key_log_file(&mut self, path: &std::path::Path) {
        let loaded = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| self.ws.load_key_log(&text));
        self.message = Some(match loaded {
            Ok(n) => (
                format!(
                    "TLS key log loaded from {}: keys for {n} connection(s); captures are read again with them",
                    path.display()
                ),
                false,
            ),
            Err(e) => (format!("key log {} not loaded: {e}", path.display()), true),
        });
    }

    fn open_dialog(&mut self) {
        // Under a headless X server the dialog returns nothing; the path field, drops, pastes
        // and the command line are the other ways in.
        if let Some(files) = rfd::FileDialog::new()
            .set_title("Open payloads")
            .pick_files()
        {
            for f in files {
                self.open_file(f);
            }
        }
    }
}

impl App {
    /// Runs `draw` (one frame of the app) so that a panic in it does not end the app: the panic
    /// is caught, the frame is cut short, and the message bar says what happened. The sources,
    /// the pasted text, the decoded payloads and the profile all stay, and the next frame draws
    /// as usual. (Worker threads catch their own panics: see [`crate::workspace::Job`].)
    pub fn guarded(&mut self, ui: &mut egui::Ui, draw: impl FnOnce(&mut App, &mut egui::Ui)) {
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| draw(self, ui)));
        if let Err(panic) = caught {
            self.message = Some((
                format!(
                    "internal error while drawing (please report it): {}. Your data is kept; \
                     the window goes on.",
                    crate::workspace::panic_message(panic.as_ref())
                ),
                true,
            ));
            ui.ctx().request_repaint();
        }
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.guarded(ui, App::show);
        if self.quit {
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.settings);
    }
}

/// The text of `path` when it is a TLS key log (named `*.keylog`, or text whose first line that
/// is not a comment starts with an NSS key log label such as `CLIENT_RANDOM`).
fn key_log_text(path: &std::path::Path) -> Option<String> {
    const LABELS: [&str; 6] = [
        "CLIENT_RANDOM ",
        "CLIENT_HANDSHAKE_TRAFFIC_SECRET ",
        "SERVER_HANDSHAKE_TRAFFIC_SECRET ",
        "CLIENT_TRAFFIC_SECRET_0 ",
        "SERVER_TRAFFIC_SECRET_0 ",
        "EXPORTER_SECRET ",
    ];
    let named = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("keylog"));
    let small = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() < 16 << 20);
    if !small {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))?;
    (named || LABELS.iter().any(|l| first.starts_with(l))).then_some(text)
}
