//! The inspector window: a thin face over a [`Workspace`].
//!
//! The app turns input (menus, shortcuts, drops, pastes, clicks in the widgets) into workspace
//! calls and draws what the workspace holds. It never decodes or encodes anything large itself:
//! the workspace's jobs do, on worker threads, and the app polls them once per frame. Linked
//! selection is a [`Path`]: a click in any column selects that path, and every column resolves it
//! in its own span tree, scrolls its hex view to it and reveals it in its tree.

mod columns;
mod command;
mod dialogs;
pub mod diff_view;
mod field_readings;
mod frame_log;
mod limits;
mod menus;
mod palette;
pub mod profiler;
mod samples;
pub mod schema_diff;
mod settings;
mod sidebar;
mod source_state;
mod status;
mod ui_command;
mod window_kind;
mod windows;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use eframe::egui;

pub use command::Command;
pub use samples::SAMPLES;
pub use settings::{SchemaFiles, SchemaText, Settings};
pub use status::Status;
pub use ui_command::{palette_score, UiCommand};

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

/// What a column's view was made for: its format and the identity of its bytes and tree
/// (shared between an analysis and its previews), and whether it was still pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ViewKey {
    bytes: (usize, usize),
    spans: Option<usize>,
    pending: bool,
}

impl ViewKey {
    fn of(c: &crate::workspace::Column) -> ViewKey {
        ViewKey {
            bytes: (c.bytes.as_ptr() as usize, c.bytes.len()),
            spans: c.document.as_ref().map(|d| Arc::as_ptr(&d.spans) as usize),
            pending: c.pending,
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
    /// Two payloads compared by meaning: the changes, and their bytes in both.
    Diff,
    /// Two versions of a protobuf message type compared for compatibility, field by field.
    SchemaDiff,
}

/// The inspector app.
pub struct App {
    /// The main area shown.
    pub view: View,
    /// The profiler's view state.
    pub profiler: profiler::ProfilerView,
    /// The diff view's state.
    diff: diff_view::DiffView,
    schema_diff: schema_diff::SchemaDiffView,
    /// The model: sources, payloads, analyses, schemas, selection.
    pub ws: Workspace,
    /// What is remembered across runs.
    pub settings: Settings,
    /// The status line: what the last action did (a schema loaded) or why it failed (a file
    /// that cannot open, a schema that did not compile).
    pub status: Option<Status>,
    /// What the pointer is over.
    pub hover: Option<Hover>,
    /// The view state of the source shown (scroll, cursor, selection, fields).
    here: source_state::SourceState,
    /// The source [`App::here`] belongs to.
    here_for: Option<Arc<Source>>,
    /// The view state of the other open sources.
    parked: Vec<(Arc<Source>, source_state::SourceState)>,
    /// The windows and the command palette, and which is on top.
    windows: windows::Windows,
    /// What the user asked for this frame, not yet done ([`App::run_commands`]).
    commands: Vec<Command>,
    /// Which system fonts draw payload text the built-in fonts lack (shown in the help window).
    font_summary: String,
    open_path: String,
    /// A source being renamed in the list: its index, the name typed, whether the field has
    /// been given the focus.
    renaming: Option<(usize, String, bool)>,
    message_filter: String,
    /// The data inspector's content height last frame (the panel's height this frame).
    inspector_content: f32,
    quit: bool,
    /// Frame times kept for measuring, when `WIRELENS_FRAME_LOG` asks for them.
    frame_log: Option<frame_log::FrameLog>,
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
            diff: diff_view::DiffView::default(),
            schema_diff: schema_diff::SchemaDiffView::default(),
            ws,
            settings: options.settings.unwrap_or_default(),
            status: None,
            hover: None,
            here: source_state::SourceState::default(),
            here_for: None,
            parked: Vec::new(),
            windows: windows::Windows::default(),
            commands: Vec::new(),
            font_summary: String::new(),
            open_path: String::new(),
            renaming: None,
            message_filter: String::new(),
            inspector_content: 0.0,
            quit: false,
            frame_log: frame_log::FrameLog::from_env(),
        };
        app.apply_theme(ctx);
        app.sync_hidden_columns();
        app.restore_limits();
        let schemas = app.settings.schemas.clone();
        for s in schemas {
            if let Err(e) = app.ws.load_schema_files(&s.files, &s.includes) {
                app.status = Some(Status::Error(format!(
                    "schema from the last run not loaded: {e}"
                )));
                app.settings.schemas.retain(|t| *t != s);
            }
        }
        let texts = app.settings.schema_texts.clone();
        for t in texts {
            let loaded = match &t {
                SchemaText::Sample(name) => match SAMPLES.iter().find(|(n, _)| n == name) {
                    Some((n, bytes)) => app
                        .ws
                        .load_proto_source(n, &String::from_utf8_lossy(bytes))
                        .map(drop)
                        .map_err(|e| e.to_string()),
                    None => Err(format!("no bundled sample is named {name}")),
                },
                SchemaText::Pasted(text) => app
                    .ws
                    .load_schema_text(text)
                    .map(drop)
                    .map_err(|e| e.to_string()),
            };
            if let Err(e) = loaded {
                app.status = Some(Status::Error(format!(
                    "schema from the last run not loaded: {e}"
                )));
                app.settings.schema_texts.retain(|s| *s != t);
            }
        }
        for f in options.files {
            app.open_file(f);
        }
        app
    }

    /// Opens a file (recent list updated; an error shows in the message bar). A schema loads
    /// as a schema instead (told by its name, and a `.pb`/`.binpb` by its content): a `.proto`
    /// with its imports found beside it and beside the `.proto` files loaded before it, a
    /// descriptor set on its own.
    pub fn open_file(&mut self, path: PathBuf) {
        match is_schema_file(&path) {
            Some(SchemaKind::DescriptorSet) => self.load_schema_files(vec![path], Vec::new()),
            Some(SchemaKind::Proto) => {
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
            }
            Some(SchemaKind::Avro) => {
                self.status = Some(match self.ws.load_avro_file(&path) {
                    Ok(label) => Status::Info(format!("Avro schema loaded: {label}")),
                    Err(e) => Status::Error(e.to_string()),
                });
            }
            None => self.open_payload_file(path),
        }
    }

    /// Opens a file as a payload source (or a TLS key log).
    fn open_payload_file(&mut self, path: PathBuf) {
        if key_log_text(&path).is_some() {
            self.load_key_log_file(&path);
            return;
        }
        match self.ws.open_path(&path) {
            Ok(_) => {
                let full = std::fs::canonicalize(&path).unwrap_or(path);
                self.settings.remember(full);
                self.status = None;
            }
            Err(e) => self.status = Some(Status::Error(e.to_string())),
        }
    }

    /// Opens a bundled sample by file name.
    pub fn open_sample(&mut self, name: &str) -> bool {
        match SAMPLES.iter().find(|(n, _)| *n == name) {
            // A bundled .proto is a schema, as a .proto file opened by path is.
            Some((n, bytes)) if n.ends_with(".proto") => {
                let text = String::from_utf8_lossy(bytes);
                self.status = Some(match self.ws.load_proto_source(n, &text) {
                    Ok(label) => {
                        let kept = SchemaText::Sample(n.to_string());
                        if !self.settings.schema_texts.contains(&kept) {
                            self.settings.schema_texts.push(kept);
                        }
                        Status::Info(format!("schema loaded: {label}"))
                    }
                    Err(e) => Status::Error(format!("schema not loaded: {e}")),
                });
                true
            }
            Some((n, bytes)) => {
                self.ws.add(Source::sample(n, bytes));
                self.status = None;
                true
            }
            None => false,
        }
    }

    /// Inspects pasted text.
    pub fn paste(&mut self, text: &str) {
        if !text.trim().is_empty() {
            self.ws.paste(text);
            self.status = None;
        }
    }

    /// Closes source `i` (its view state goes with it).
    pub fn close_source(&mut self, i: usize) {
        self.renaming = None;
        self.ws.close(i);
    }

    /// Selects `path` in every column (each hex view scrolls to it, each tree reveals it).
    pub fn select(&mut self, path: Option<Path>) {
        if let Some(p) = &path {
            self.here.select_text = p.to_string();
        }
        self.ws.select(path);
    }

    /// The column the data inspector follows.
    pub fn focus(&self) -> Option<Format> {
        self.here.focus
    }

    /// The bytes a row of the focused column's hex view showed last frame.
    pub fn here_row_bytes(&self) -> usize {
        self.here
            .focus
            .and_then(|f| self.here.views.get(&f))
            .map_or(16, |v| v.hex.row_bytes())
    }

    /// The bytes a row of `format`'s hex view showed last frame (`None`: no such column).
    pub fn row_bytes(&self, format: Format) -> Option<usize> {
        self.here.views.get(&format).map(|v| v.hex.row_bytes())
    }

    /// The cursor (the byte the data inspector reads) of `format`'s hex view, for the source
    /// shown.
    pub fn cursor(&self, format: Format) -> Option<usize> {
        self.here.views.get(&format).and_then(|v| v.hex.cursor())
    }

    fn apply_theme(&self, ctx: &egui::Context) {
        ctx.set_theme(if self.settings.dark {
            egui::Theme::Dark
        } else {
            egui::Theme::Light
        });
    }

    /// Tells the workspace which columns are not shown (hidden, or another shown alone), so it
    /// leaves them unencoded; after every change of [`Settings`]' columns.
    fn sync_hidden_columns(&mut self) {
        self.ws.set_hidden_columns(&self.settings.hidden_formats());
    }

    /// Whether the user asked to quit (the window closes).
    pub fn wants_quit(&self) -> bool {
        self.quit
    }

    /// Makes new views when the analysis changed (scrolled to offset 0, or to a decode error,
    /// whose byte gets the cursor), and moves them to a new selection. A column whose bytes and
    /// tree are the ones it had (the source while the other columns arrive, each column
    /// already shown when the next one does) keeps its view: where the user scrolled and what
    /// they opened stay, and a large tree's rows are not listed again.
    fn sync_views(&mut self, analysis: Option<&Arc<Analysis>>) {
        let here = &mut self.here;
        let same = match (analysis, &here.views_for) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        // Columns given a new view, which the selection is shown in even when it did not change.
        let mut fresh: Vec<Format> = Vec::new();
        if !same {
            let before: HashMap<Format, ViewKey> = here
                .views_for
                .iter()
                .flat_map(|a| a.columns.iter())
                .map(|c| (c.format, ViewKey::of(c)))
                .collect();
            let mut kept = std::mem::take(&mut here.views);
            here.views_for = analysis.cloned();
            if let Some(a) = analysis {
                for c in &a.columns {
                    let view = match kept.remove(&c.format) {
                        Some(view) if before.get(&c.format) == Some(&ViewKey::of(c)) => view,
                        _ => {
                            fresh.push(c.format);
                            ColumnView::new()
                        }
                    };
                    here.views.insert(c.format, view);
                }
                if here.focus.is_none_or(|f| a.column(f).is_none()) {
                    here.focus = a.source().map(|c| c.format);
                }
                // A decode error is brought into view with the cursor on its byte, so the data
                // inspector reads it.
                for c in a.columns.iter().filter(|c| fresh.contains(&c.format)) {
                    let at = c.error.as_ref().and_then(|e| e.offset);
                    let (Some(at), Some(view)) = (at, here.views.get_mut(&c.format)) else {
                        continue;
                    };
                    let Some(last) = c.bytes.len().checked_sub(1) else {
                        continue;
                    };
                    view.hex.scroll_to(at.min(last));
                    view.hex.set_cursor(at.min(last));
                    here.focus = Some(c.format);
                }
            }
        }
        let Some(a) = analysis else { return };
        let changed = self.ws.selected != here.shown_selection;
        if !changed && fresh.is_empty() {
            return;
        }
        here.shown_selection = self.ws.selected.clone();
        // A click belongs to the views it was made in.
        let clicked = if same { here.clicked_at.take() } else { None };
        here.clicked_at = None;
        let Some(path) = &self.ws.selected else {
            here.select_text.clear();
            return;
        };
        for c in &a.columns {
            if !changed && !fresh.contains(&c.format) {
                continue;
            }
            let (Some(view), Some(doc), Some(id)) =
                (here.views.get_mut(&c.format), &c.document, c.resolve(path))
            else {
                continue;
            };
            match clicked {
                // The clicked column keeps its cursor on the byte clicked (and is in view).
                Some((f, offset)) if f == c.format => view.hex.set_cursor(offset),
                _ => {
                    let extent = doc.spans.node(id).extent();
                    view.hex.scroll_to(extent.start);
                    view.hex.set_cursor(extent.start);
                }
            }
            view.tree.reveal(&doc.spans, id);
        }
    }

    /// Draws one frame (the window's whole content). Tests call this through a harness.
    pub fn show(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.draw(ui);
        self.middle_click_paste(&ctx);
        self.run_commands(&ctx);
        // The shown source's selection is noted for its next switch.
        self.here.selected = self.ws.selected.clone();
    }

    /// A middle click's paste (X11/Wayland primary selection) outside a text field opens the
    /// text as a source. Taken after drawing: a text field under the pointer pastes it itself
    /// and takes the focus, so it is not pasted twice.
    fn middle_click_paste(&mut self, ctx: &egui::Context) {
        let texts: Vec<String> = ctx.input(|i| {
            i.events
                .iter()
                .filter_map(|e| match e {
                    egui::Event::MiddleClickPaste { text, .. } => Some(text.clone()),
                    _ => None,
                })
                .collect()
        });
        if !texts.is_empty() && !ctx.text_edit_focused() {
            for t in texts {
                self.push(Command::Paste(t));
            }
        }
    }

    fn draw(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.ws.poll();
        self.handle_input(&ctx);
        self.profiler_poll();
        // Input is carried out before drawing, so this frame already shows what it did.
        self.run_commands(&ctx);
        let analysis = self.ws.shown_analysis();
        if let Some(a) = &analysis {
            // The columns the view shows (a hidden one is not encoded, so never "shown").
            let hidden = self.ws.hidden_columns();
            let visible: Vec<_> = a
                .columns
                .iter()
                .filter(|c| c.is_source || !hidden.contains(&c.format))
                .collect();
            let shown = visible.iter().filter(|c| c.document.is_some()).count();
            crate::gui::log_time(&format!("{shown} of {} columns shown", visible.len()));
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
                    crate::gui::widgets::spinner(ui);
                }
                ui.selectable_value(&mut self.view, View::Diff, "Diff");
                if self.ws.is_comparing() {
                    crate::gui::widgets::spinner(ui);
                }
                ui.selectable_value(&mut self.view, View::SchemaDiff, "Schema diff");
            });
            self.message_bar(ui);
            match self.view {
                View::Inspector => self.main_area(ui, analysis.as_deref()),
                View::Profiler => self.profiler_view(ui),
                View::Diff => self.diff_area(ui),
                View::SchemaDiff => self.schema_diff_area(ui),
            }
        });
        if self.ws.is_busy() || self.ws.is_profiling() || self.ws.is_comparing() {
            // Progress comes from the worker's notify; keep the spinner moving meanwhile, at the
            // busy indicators' own pace.
            ctx.request_repaint_after(crate::gui::widgets::BUSY_FRAME);
        }
    }

    fn message_bar(&mut self, ui: &mut egui::Ui) {
        let mut close = false;
        if let Some(status) = &self.status {
            ui.horizontal_wrapped(|ui| {
                if status.is_error() {
                    ui.colored_label(ui.visuals().error_fg_color, status.text());
                } else {
                    ui.label(status.text());
                }
                close = ui.small_button("close").clicked();
            });
        }
        if close {
            self.status = None;
        }
    }

    /// Drops, pastes and shortcuts.
    ///
    /// A paste (Ctrl+V, Shift+Insert, a drop of text) opens the clipboard's text as a source
    /// wherever the keyboard is, except in a text field, whose paste it is. A middle click's
    /// paste (the X11/Wayland primary selection) is taken at the end of the frame
    /// ([`App::middle_click_paste`]), once a text field under the pointer had its chance.
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
                self.push(Command::Open(path.to_path_buf()));
                continue;
            }
            match f.bytes() {
                // Dropped text (a selection dragged from another window) is read as a paste.
                Ok(bytes) => match String::from_utf8(bytes) {
                    Ok(text) => self.push(Command::Paste(text)),
                    Err(e) => self.push(Command::DroppedBytes(e.into_bytes())),
                },
                Err(e) => {
                    self.status = Some(Status::Error(format!("cannot read the dropped file: {e}")))
                }
            }
        }
        // A paste into a text field belongs to the field; anywhere else (a clicked hex byte, a
        // tree row, a button) it is the app's.
        if !ctx.text_edit_focused() {
            for t in pasted {
                self.push(Command::Paste(t));
            }
        }
        // Shift+Insert: egui turns it into a paste only on Windows; elsewhere ask the
        // integration for the clipboard, which comes back as a paste next frame (to the focused
        // text field, if any, else to the app).
        let shift_insert = ctx.input_mut(|i| i.consume_shortcut(&ui_command::PASTE_KEYS[1]));
        if shift_insert {
            ctx.send_viewport_cmd(egui::ViewportCommand::RequestPaste);
        }
        self.shortcut_commands(ctx);
        self.windows.note_order();
        if self.windows.escape(ctx) {
            self.push(Command::Select(None));
        }
    }

    /// Loads a TLS key log file; what happened shows in the message bar.
    pub(super) fn load_key_log_file(&mut self, path: &std::path::Path) {
        self.status = Some(match self.ws.load_key_log_file(path) {
            Ok(n) => Status::Info(
                format!(
                    "TLS key log loaded from {}: keys for {n} connection(s); captures are read again with them",
                    path.display()
                )),
            Err(e) => Status::Error(e.to_string()),
        });
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
            self.status = Some(Status::Error(format!(
                "internal error while drawing (please report it): {}. Your data is kept; \
                     the window goes on.",
                crate::workspace::panic_message(panic.as_ref())
            )));
            ui.ctx().request_repaint();
        }
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        if let Some(log) = &mut self.frame_log {
            let state = if self.ws.is_loading() {
                frame_log::State::Loading
            } else if self.ws.is_busy() {
                frame_log::State::Working
            } else {
                frame_log::State::Idle
            };
            log.record(frame.info().cpu_usage, state);
        }
        self.guarded(ui, App::show);
        if self.quit {
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.settings);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        if let Some(log) = &self.frame_log {
            log.write();
        }
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

/// What kind of schema file a path is, by name and, for descriptor sets, content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaKind {
    /// `.proto` source.
    Proto,
    /// A binary `FileDescriptorSet` (`protoc -o`).
    DescriptorSet,
    /// An Avro schema (`.avsc`).
    Avro,
}

/// Whether `path` is a schema rather than a payload: `*.proto` is `.proto` source; `*.desc` and
/// `*.protoset` are descriptor sets; any other file (`*.pb`, `*.bin`, no extension: names
/// payloads use too) is a descriptor set when its bytes are one
/// ([`crate::codec::protobuf::schema::is_descriptor_set`]).
pub fn is_schema_file(path: &std::path::Path) -> Option<SchemaKind> {
    /// A descriptor set larger than this is not looked into (it is opened as a payload).
    const LARGEST_SET: u64 = 64 << 20;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "proto" => Some(SchemaKind::Proto),
        "desc" | "protoset" => Some(SchemaKind::DescriptorSet),
        "avsc" => Some(SchemaKind::Avro),
        _ => {
            let small =
                std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= LARGEST_SET);
            // A set starts with its first file's tag: any other file is not read whole here, on
            // the window's thread (a 50 MB document took tens of milliseconds).
            let mut first = [0u8; 1];
            let tagged = small
                && std::fs::File::open(path)
                    .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut first))
                    .is_ok()
                && first[0] == 0x0a;
            let bytes = tagged.then(|| std::fs::read(path).ok()).flatten()?;
            crate::codec::protobuf::schema::is_descriptor_set(&bytes)
                .then_some(SchemaKind::DescriptorSet)
        }
    }
}

#[cfg(test)]
mod schema_file_tests {
    use super::{is_schema_file, SchemaKind};

    #[test]
    fn a_descriptor_set_is_known_by_its_bytes_whatever_its_name() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let set = std::fs::read(root.join("tests/data/protobuf/descriptor_set.pb")).expect("set");
        let payload =
            std::fs::read(root.join("tests/fixtures/protobuf/otlp/traces.pb")).expect("payload");
        for name in ["schema.bin", "schema", "api.pb", "x.protoset.backup"] {
            let path = dir.path().join(name);
            std::fs::write(&path, &set).expect("write");
            assert_eq!(
                is_schema_file(&path),
                Some(SchemaKind::DescriptorSet),
                "{name}"
            );
        }
        // A protobuf payload (its field 1 holds bytes too) is no schema, whatever its name.
        for name in ["traces.pb", "traces.bin", "traces"] {
            let path = dir.path().join(name);
            std::fs::write(&path, &payload).expect("write");
            assert_eq!(is_schema_file(&path), None, "{name}");
        }
    }
}

#[cfg(test)]
mod view_tests {
    use super::*;
    use crate::workspace::analysis::analyze_previewing;
    use crate::workspace::{AnalysisRequest, Choice, JobContext, SchemaSet};

    /// The previews of an analysis as its columns arrive, and the analysis.
    fn previews_of(sample: &str) -> Vec<Arc<Analysis>> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("samples")
            .join(sample);
        let bytes = crate::capture::SharedBytes::from(std::fs::read(path).expect("sample"));
        let (choice, schemas, limits) =
            (Choice::default(), SchemaSet::default(), Default::default());
        let request = AnalysisRequest {
            bytes: &bytes,
            origin: crate::pipeline::Origin::hinted(None),
            choice: &choice,
            schemas: &schemas,
            limits: &limits,
        };
        let previews = std::sync::Mutex::new(Vec::new());
        let done = analyze_previewing(request, &JobContext::unwatched(), &|a| {
            previews.lock().expect("previews").push(Arc::new(a));
        })
        .expect("analysed");
        let mut all = previews.into_inner().expect("previews");
        all.push(Arc::new(done));
        all
    }

    #[test]
    fn a_column_shown_keeps_its_view_while_the_others_arrive() {
        let all = previews_of("transactions-1k.json");
        assert!(all.len() >= 3, "{} stages", all.len());
        let mut app = App::new(&egui::Context::default(), AppOptions::default());
        let first = &all[0];
        let source = first.source().expect("source").format;
        let pending: Vec<Format> = first
            .columns
            .iter()
            .filter(|c| c.pending)
            .map(|c| c.format)
            .collect();
        assert!(
            !pending.is_empty(),
            "the first preview has columns still encoding"
        );
        app.sync_views(Some(first));
        // The user moves in the source column while the others are encoded.
        app.here
            .views
            .get_mut(&source)
            .expect("source view")
            .hex
            .set_cursor(1234);
        for a in &all[1..] {
            app.sync_views(Some(a));
            assert_eq!(app.cursor(source), Some(1234), "the source's view was kept");
        }
        // Each column that arrived got a view of its own bytes.
        let last = all.last().expect("analysis");
        for f in pending {
            let c = last.column(f).expect("column");
            assert!(!c.pending && !c.bytes.is_empty(), "{f:?} encoded");
            assert_ne!(app.cursor(f), Some(1234));
        }
        // Another payload's analysis makes every view anew.
        let other = previews_of("orders-api.json");
        app.sync_views(other.last());
        assert_ne!(app.cursor(source), Some(1234));
    }
}
