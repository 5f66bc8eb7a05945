//! Native file dialogs, and the windows that work without them: File ▸ Open path… (a path
//! field with completion) and the paste area.
//!
//! A native dialog needs a desktop portal (or zenity) on Linux; where there is none (a bare X
//! server, a minimal session), `rfd` returns nothing at once, exactly as if the user had
//! cancelled. A dialog that "closes" faster than anyone could cancel it is taken as one that
//! could not open ([`pick`]), and the app says so and offers the path field instead.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use eframe::egui;

use super::window_kind::Which;

/// How a native dialog ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Picked<T> {
    /// The user chose this.
    Chosen(T),
    /// The user closed the dialog.
    Cancelled,
    /// No dialog could be shown (it returned at once).
    Unavailable,
}

/// Nobody cancels a dialog this fast: a quicker "nothing" means no dialog was shown.
const FASTEST_CANCEL: Duration = Duration::from_millis(300);

/// Runs a blocking native dialog (`rfd`) and says how it ended (see the module docs).
pub(super) fn pick<T>(dialog: impl FnOnce() -> Option<T>) -> Picked<T> {
    let start = Instant::now();
    match dialog() {
        Some(t) => Picked::Chosen(t),
        None if start.elapsed() < FASTEST_CANCEL => Picked::Unavailable,
        None => Picked::Cancelled,
    }
}

/// What the app says when a native dialog cannot open.
pub(super) const NO_DIALOG: &str =
    "no file dialog could open here (no desktop portal or zenity): type the path instead";

/// Schema ▸ Paste .proto or descriptor set…: schema paths to load, or pasted schema text.
#[derive(Debug, Default)]
pub(super) struct SchemaWindow {
    /// Shown.
    pub open: bool,
    /// Pasted `.proto` text, or a descriptor set as base64 or hex.
    pub text: String,
    /// Schema files, separated by `;`.
    pub files: String,
    /// Include folders for imports, separated by `;`.
    pub includes: String,
    /// The last load that stopped at an import no folder holds: offered a folder to add.
    pub missing: Option<MissingImport>,
    /// The folder typed for the missing import.
    pub missing_folder: String,
}

/// A schema load that stopped at a missing import, to try again with one more folder.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MissingImport {
    /// The files and folders of the load.
    pub files: Vec<std::path::PathBuf>,
    pub includes: Vec<std::path::PathBuf>,
    /// The import, as written, and the file that imports it.
    pub import: String,
    pub file: std::path::PathBuf,
    /// A folder near the file that holds it, if one was found.
    pub nearby: Option<std::path::PathBuf>,
}

/// File ▸ Save column bytes…: which column's bytes, and where to.
#[derive(Debug, Default)]
pub(super) struct SaveWindow {
    /// Shown.
    pub open: bool,
    /// The path typed (or chosen in the native dialog).
    pub path: String,
    /// The column chosen; `None` follows the column the data inspector follows.
    pub format: Option<crate::codec::Format>,
}

/// Help ▸ Shortcuts (F1).
#[derive(Debug, Default)]
pub(super) struct HelpWindow {
    /// Shown.
    pub open: bool,
}

/// File ▸ Open path…: a path field with completion from the file system.
#[derive(Debug, Default)]
pub(super) struct OpenPathWindow {
    /// Shown.
    pub open: bool,
    text: String,
    /// Why the window opened by itself (the native dialog could not open).
    note: Option<String>,
    /// The field gets the keyboard focus on the next frame.
    focus: bool,
}

impl OpenPathWindow {
    /// Opens the window with its field focused; `note` says why it opened, if not asked for.
    pub fn show(&mut self, note: Option<&str>) {
        self.open = true;
        self.focus = true;
        self.note = note.map(str::to_string);
    }

    /// Draws the window; returns the path to open when the user presses Enter or Open.
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<PathBuf> {
        let mut open = self.open;
        let mut chosen = None;
        let field_id = egui::Id::unique("wirelens-open-path");
        egui::Window::new(Which::OpenPath.title())
            .open(&mut open)
            .default_width(520.0)
            .show(ctx, |ui| {
                if let Some(note) = &self.note {
                    ui.colored_label(ui.visuals().warn_fg_color, note);
                }
                // Tab completes (as far as the candidates agree) instead of moving the focus.
                let tab = ctx.memory(|m| m.has_focus(field_id))
                    && ui.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Tab));
                let candidates = completions(&self.text);
                if tab {
                    if let Some(common) = common_prefix(&candidates) {
                        if common.len() > self.text.len() {
                            self.text = common;
                            set_cursor_to_end(ctx, field_id, &self.text);
                        }
                    }
                }
                let mut enter = false;
                ui.horizontal(|ui| {
                    let label = ui.label("Path");
                    let r = ui
                        .add(
                            egui::TextEdit::singleline(&mut self.text)
                                .id(field_id)
                                // Tab stays in the field (it completes) instead of moving on.
                                .lock_focus(true)
                                .hint_text("/path/to/payload.json — Tab completes")
                                .desired_width(380.0),
                        )
                        .labelled_by(label.id);
                    if std::mem::take(&mut self.focus) {
                        r.request_focus();
                    }
                    enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                    if ui.button("Open").clicked() {
                        enter = true;
                    }
                });
                let mut picked = None;
                if !candidates.is_empty() {
                    egui::ScrollArea::vertical()
                        .max_height(200.0)
                        .show(ui, |ui| {
                            for c in candidates.iter().take(40) {
                                if ui.selectable_label(false, c.as_str()).clicked() {
                                    picked = Some(c.clone());
                                }
                            }
                        });
                }
                if let Some(c) = picked {
                    let dir = c.ends_with('/');
                    self.text = c;
                    if dir {
                        self.focus = true;
                        set_cursor_to_end(ctx, field_id, &self.text);
                    } else {
                        enter = true;
                    }
                }
                let path = self.text.trim();
                if enter && !path.is_empty() {
                    chosen = Some(expand_home(path));
                }
            });
        self.open = open && chosen.is_none();
        chosen
    }
}

/// Puts the text field's cursor after its last character (after a completion).
fn set_cursor_to_end(ctx: &egui::Context, id: egui::Id, text: &str) {
    let mut state = egui::text_edit::TextEditState::load(ctx, id).unwrap_or_default();
    let end = egui::text::CCursor::new(text.chars().count());
    state
        .cursor
        .set_char_range(Some(egui::text::CCursorRange::one(end)));
    state.store(ctx, id);
}

/// `~/x` is `$HOME/x`.
fn expand_home(text: &str) -> PathBuf {
    match (text.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(text),
    }
}

/// The entries of the typed path's folder that start with its last part, sorted, folders with a
/// trailing `/`, written as the user would type them (so one can replace the field's text).
fn completions(text: &str) -> Vec<String> {
    /// More entries than this in a folder are not read (a huge folder stays quick).
    const MOST: usize = 2000;
    if text.is_empty() {
        return Vec::new();
    }
    let (dir_text, prefix) = match text.rfind('/') {
        Some(i) => (&text[..=i], &text[i + 1..]),
        None => ("", text),
    };
    let dir = if dir_text.is_empty() {
        PathBuf::from(".")
    } else {
        expand_home(dir_text)
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .take(MOST)
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let is_dir = e.file_type().ok()?.is_dir()
                || (e.file_type().ok()?.is_symlink() && e.path().is_dir());
            Some(format!("{dir_text}{name}{}", if is_dir { "/" } else { "" }))
        })
        .collect();
    out.sort();
    out
}

/// The longest text every candidate starts with.
fn common_prefix(candidates: &[String]) -> Option<String> {
    let first = candidates.first()?;
    let mut end = first.len();
    for c in &candidates[1..] {
        end = first
            .char_indices()
            .zip(c.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, a), _)| i + a.len_utf8())
            .min(end);
    }
    first.get(..end).map(str::to_string)
}

/// The paste area (File ▸ Paste…, Ctrl+Shift+V): a text box, focused when the window opens.
#[derive(Debug, Default)]
pub(super) struct PasteWindow {
    /// Shown.
    pub open: bool,
    text: String,
    focus: bool,
}

impl PasteWindow {
    /// Opens the window with its text box focused.
    pub fn show(&mut self) {
        self.open = true;
        self.focus = true;
    }

    /// Draws the window; returns the text to inspect when the user presses Inspect.
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<String> {
        let mut open = self.open;
        let mut inspect = false;
        egui::Window::new(Which::Paste.title())
            .open(&mut open)
            .default_width(520.0)
            .show(ctx, |ui| {
                let label = ui.label("Paste a hex dump, base64, an HTTP message, JSON, …");
                egui::ScrollArea::vertical()
                    .max_height(300.0)
                    .show(ui, |ui| {
                        let r = ui
                            .add(
                                egui::TextEdit::multiline(&mut self.text)
                                    .code_editor()
                                    .desired_rows(12)
                                    .desired_width(f32::INFINITY)
                                    .hint_text("paste here"),
                            )
                            .labelled_by(label.id);
                        if std::mem::take(&mut self.focus) {
                            r.request_focus();
                        }
                    });
                inspect = ui.button("Inspect").clicked();
            });
        self.open = open && !inspect;
        inspect.then(|| std::mem::take(&mut self.text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_lists_the_folder_entries_that_start_with_the_typed_name() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("alpha.json"), "{}")?;
        std::fs::write(dir.path().join("alps.cbor"), [0xa0])?;
        std::fs::write(dir.path().join("beta.json"), "{}")?;
        std::fs::create_dir(dir.path().join("albums"))?;
        let base = format!("{}/", dir.path().display());
        let got = completions(&format!("{base}al"));
        assert_eq!(
            got,
            vec![
                format!("{base}albums/"),
                format!("{base}alpha.json"),
                format!("{base}alps.cbor"),
            ]
        );
        assert_eq!(common_prefix(&got), Some(format!("{base}al")));
        let alp = completions(&format!("{base}alp"));
        assert_eq!(common_prefix(&alp), Some(format!("{base}alp")));
        assert_eq!(completions(&format!("{base}zzz")), Vec::<String>::new());
        assert_eq!(completions(&format!("{base}nope/x")), Vec::<String>::new());
        Ok(())
    }

    #[test]
    fn a_dialog_that_returns_nothing_at_once_could_not_open() {
        assert_eq!(pick(|| None::<u8>), Picked::Unavailable);
        assert_eq!(pick(|| Some(3)), Picked::Chosen(3));
        let slow = pick(|| {
            std::thread::sleep(FASTEST_CANCEL + Duration::from_millis(20));
            None::<u8>
        });
        assert_eq!(slow, Picked::Cancelled);
    }
}
