//! The commands a user can name: one table of text, shortcut and enabled-state that the menus,
//! the command palette (Ctrl+Shift+P, Ctrl+K) and the shortcuts window all read.
//!
//! A [`UiCommand`] is what a menu item, a key and a palette row have in common; running one
//! pushes its [`Command`], so what it does is written once, in [`App::apply`]. Commands that
//! take an argument (a path, a source, a field) are not in the table; they are pushed by the
//! widget that knows the argument.

use eframe::egui::{self, Key, KeyboardShortcut, Modifiers};

use super::profiler::Tab;
use super::{App, Command, View};
use crate::report::Mode;

/// A command with a name, maybe a shortcut, and a state (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UiCommand {
    /// File ▸ Open….
    Open,
    /// File ▸ Open path….
    OpenPath,
    /// File ▸ Open TLS key log….
    OpenKeyLog,
    /// File ▸ Reload.
    Reload,
    /// File ▸ Paste….
    PasteArea,
    /// File ▸ Save column bytes….
    SaveColumnBytes,
    /// Close the source shown.
    CloseSource,
    /// File ▸ Quit.
    Quit,
    /// Schema ▸ Load .proto / descriptor set….
    LoadSchema,
    /// Schema ▸ Paste .proto or descriptor set….
    PasteSchema,
    /// Schema ▸ Forget loaded schemas.
    ForgetSchemas,
    /// The inspector view.
    ShowInspector,
    /// The profiler view.
    ShowProfiler,
    /// The diff view.
    ShowDiff,
    /// The schema diff view.
    ShowSchemaDiff,
    /// A profiler tab: sizes.
    ProfilerSizes,
    /// A profiler tab: bytes per field.
    ProfilerFields,
    /// A profiler tab: timings.
    ProfilerTimings,
    /// A profiler tab: scaling.
    ProfilerScaling,
    /// A profiler tab: the wire.
    ProfilerWire,
    /// A profiler tab: compare payloads.
    ProfilerCompare,
    /// Every column side by side.
    AllColumns,
    /// View ▸ Limits….
    Limits,
    /// View ▸ Dark theme.
    ToggleTheme,
    /// Clear the selection in every column.
    ClearSelection,
    /// Profile ▸ Quick profile.
    QuickProfile,
    /// Profile ▸ Standard profile.
    StandardProfile,
    /// Profile ▸ Precise profile.
    PreciseProfile,
    /// Profile ▸ Cancel.
    CancelProfile,
    /// Profile ▸ Export CSV….
    ExportProfile,
    /// Profile ▸ Runtimes….
    Runtimes,
    /// Help ▸ Shortcuts.
    Help,
    /// The command palette.
    Palette,
}

const fn key(modifiers: Modifiers, key: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(modifiers, key)
}

const CTRL: Modifiers = Modifiers::COMMAND;
const CTRL_SHIFT: Modifiers = Modifiers {
    shift: true,
    ..Modifiers::COMMAND
};

impl UiCommand {
    /// Every command, in the order the palette and the shortcuts window list them.
    pub const ALL: [UiCommand; 33] = [
        UiCommand::Open,
        UiCommand::OpenPath,
        UiCommand::PasteArea,
        UiCommand::OpenKeyLog,
        UiCommand::Reload,
        UiCommand::CloseSource,
        UiCommand::SaveColumnBytes,
        UiCommand::LoadSchema,
        UiCommand::PasteSchema,
        UiCommand::ForgetSchemas,
        UiCommand::ShowInspector,
        UiCommand::ShowProfiler,
        UiCommand::ShowDiff,
        UiCommand::ShowSchemaDiff,
        UiCommand::ProfilerSizes,
        UiCommand::ProfilerFields,
        UiCommand::ProfilerTimings,
        UiCommand::ProfilerScaling,
        UiCommand::ProfilerWire,
        UiCommand::ProfilerCompare,
        UiCommand::AllColumns,
        UiCommand::ClearSelection,
        UiCommand::QuickProfile,
        UiCommand::StandardProfile,
        UiCommand::PreciseProfile,
        UiCommand::CancelProfile,
        UiCommand::ExportProfile,
        UiCommand::Runtimes,
        UiCommand::Limits,
        UiCommand::ToggleTheme,
        UiCommand::Palette,
        UiCommand::Help,
        UiCommand::Quit,
    ];

    /// The name, as the menus and the palette write it.
    pub fn text(self) -> &'static str {
        match self {
            UiCommand::Open => "Open…",
            UiCommand::OpenPath => "Open path…",
            UiCommand::OpenKeyLog => "Open TLS key log…",
            UiCommand::Reload => "Reload",
            UiCommand::PasteArea => "Paste…",
            UiCommand::SaveColumnBytes => "Save column bytes…",
            UiCommand::CloseSource => "Close source",
            UiCommand::Quit => "Quit",
            UiCommand::LoadSchema => "Load .proto / descriptor set…",
            UiCommand::PasteSchema => "Paste .proto or descriptor set…",
            UiCommand::ForgetSchemas => "Forget loaded schemas",
            UiCommand::ShowInspector => "Show the inspector",
            UiCommand::ShowProfiler => "Show the profiler",
            UiCommand::ShowDiff => "Show the diff",
            UiCommand::ShowSchemaDiff => "Show the schema diff",
            UiCommand::ProfilerSizes => "Profiler: sizes",
            UiCommand::ProfilerFields => "Profiler: bytes per field",
            UiCommand::ProfilerTimings => "Profiler: timings",
            UiCommand::ProfilerScaling => "Profiler: scaling",
            UiCommand::ProfilerWire => "Profiler: the wire",
            UiCommand::ProfilerCompare => "Profiler: compare payloads",
            UiCommand::AllColumns => "All columns side by side",
            UiCommand::Limits => "Limits…",
            UiCommand::ToggleTheme => "Dark or light theme",
            UiCommand::ClearSelection => "Clear the selection",
            UiCommand::QuickProfile => "Quick profile (seconds)",
            UiCommand::StandardProfile => "Standard profile",
            UiCommand::PreciseProfile => "Precise profile (one job at a time)",
            UiCommand::CancelProfile => "Cancel the profile",
            UiCommand::ExportProfile => "Export profile CSV…",
            UiCommand::Runtimes => "Runtimes…",
            UiCommand::Help => "Shortcuts and help",
            UiCommand::Palette => "Command palette",
        }
    }

    /// What it does, in a sentence (a tooltip, the palette's second line).
    pub fn tooltip(self) -> &'static str {
        match self {
            UiCommand::Open => "open files: payloads, captures, HAR, schemas, key logs",
            UiCommand::OpenPath => "open a file by typing its path (with completion)",
            UiCommand::OpenKeyLog => {
                "an NSS key log (SSLKEYLOGFILE) to decrypt captures' TLS with; a *.keylog opened, \
                 dropped or typed in the path field loads the same way"
            }
            UiCommand::Reload => "read the source shown again from its file",
            UiCommand::PasteArea => {
                "a box for text to inspect: hex dumps, base64, HTTP messages, JSON, …"
            }
            UiCommand::SaveColumnBytes => "write a column's bytes to a file",
            UiCommand::CloseSource => "close the source shown",
            UiCommand::Quit => "close the window",
            UiCommand::LoadSchema => "protobuf schemas from files (a dialog)",
            UiCommand::PasteSchema => {
                "the schema window: paths with include folders, or pasted .proto text"
            }
            UiCommand::ForgetSchemas => "unload every schema, and do not load them next run",
            UiCommand::ShowInspector => "the formats side by side, byte by byte",
            UiCommand::ShowProfiler => "sizes, fields, timings and scaling of every format",
            UiCommand::ShowDiff => "two payloads compared by meaning",
            UiCommand::ShowSchemaDiff => "two versions of a message type compared",
            UiCommand::ProfilerSizes => "sizes raw and compressed, per format",
            UiCommand::ProfilerFields => "where each format's bytes go, field by field",
            UiCommand::ProfilerTimings => {
                "encode and decode time of every library, its tail and CPU"
            }
            UiCommand::ProfilerScaling => "size and time against the record count",
            UiCommand::ProfilerWire => "encode, transfer and decode over network links",
            UiCommand::ProfilerCompare => "the open payloads' profiles side by side",
            UiCommand::AllColumns => "undo a column shown alone",
            UiCommand::Limits => "the memory and size limits every reader keeps to",
            UiCommand::ToggleTheme => "switch between the dark and the light theme",
            UiCommand::ClearSelection => "select no field",
            UiCommand::QuickProfile => "time every library briefly on the payloads in scope",
            UiCommand::StandardProfile => "time every library with the standard run length",
            UiCommand::PreciseProfile => "time one library at a time, the longest run",
            UiCommand::CancelProfile => "stop the running profile; what finished stays",
            UiCommand::ExportProfile => "write the profile's CSV files (to the export path)",
            UiCommand::Runtimes => "Python and Node: which are installed, with which libraries",
            UiCommand::Help => "every shortcut, and what the app reads",
            UiCommand::Palette => "find any command by name",
        }
    }

    /// The keys that run it; the first is the one menus show.
    pub fn shortcuts(self) -> &'static [KeyboardShortcut] {
        const OPEN: [KeyboardShortcut; 1] = [key(CTRL, Key::O)];
        const OPEN_PATH: [KeyboardShortcut; 1] = [key(CTRL, Key::L)];
        const RELOAD: [KeyboardShortcut; 1] = [key(CTRL, Key::R)];
        const PASTE_AREA: [KeyboardShortcut; 1] = [key(CTRL_SHIFT, Key::V)];
        const CLOSE: [KeyboardShortcut; 1] = [key(CTRL, Key::W)];
        const QUIT: [KeyboardShortcut; 1] = [key(CTRL, Key::Q)];
        const THEME: [KeyboardShortcut; 1] = [key(CTRL, Key::D)];
        const EXPORT: [KeyboardShortcut; 1] = [key(CTRL, Key::S)];
        const HELP: [KeyboardShortcut; 1] = [key(Modifiers::NONE, Key::F1)];
        const PALETTE: [KeyboardShortcut; 2] = [key(CTRL_SHIFT, Key::P), key(CTRL, Key::K)];
        match self {
            UiCommand::Open => &OPEN,
            UiCommand::OpenPath => &OPEN_PATH,
            UiCommand::Reload => &RELOAD,
            UiCommand::PasteArea => &PASTE_AREA,
            UiCommand::CloseSource => &CLOSE,
            UiCommand::Quit => &QUIT,
            UiCommand::ToggleTheme => &THEME,
            UiCommand::ExportProfile => &EXPORT,
            UiCommand::Help => &HELP,
            UiCommand::Palette => &PALETTE,
            _ => &[],
        }
    }

    /// Its shortcuts as this platform writes them ("Ctrl+Shift+P, Ctrl+K"); empty when none.
    pub fn shortcut_text(self, ctx: &egui::Context) -> String {
        self.shortcuts()
            .iter()
            .map(|s| ctx.format_shortcut(s))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// What running it pushes.
    pub fn command(self) -> Command {
        match self {
            UiCommand::Open => Command::OpenDialog,
            UiCommand::OpenPath => Command::OpenPathField,
            UiCommand::OpenKeyLog => Command::OpenKeyLogDialog,
            UiCommand::Reload => Command::ReloadShown,
            UiCommand::PasteArea => Command::PasteArea,
            UiCommand::SaveColumnBytes => Command::SaveWindow,
            UiCommand::CloseSource => Command::CloseShown,
            UiCommand::Quit => Command::Quit,
            UiCommand::LoadSchema => Command::SchemaDialog,
            UiCommand::PasteSchema => Command::SchemaWindow,
            UiCommand::ForgetSchemas => Command::ForgetSchemas,
            UiCommand::ShowInspector => Command::SetView(View::Inspector),
            UiCommand::ShowProfiler => Command::SetView(View::Profiler),
            UiCommand::ShowDiff => Command::SetView(View::Diff),
            UiCommand::ShowSchemaDiff => Command::SetView(View::SchemaDiff),
            UiCommand::ProfilerSizes => Command::ProfilerTab(Tab::Sizes),
            UiCommand::ProfilerFields => Command::ProfilerTab(Tab::Fields),
            UiCommand::ProfilerTimings => Command::ProfilerTab(Tab::Timings),
            UiCommand::ProfilerScaling => Command::ProfilerTab(Tab::Scaling),
            UiCommand::ProfilerWire => Command::ProfilerTab(Tab::Wire),
            UiCommand::ProfilerCompare => Command::ProfilerTab(Tab::Compare),
            UiCommand::AllColumns => Command::OnlyColumn(None),
            UiCommand::Limits => Command::LimitsWindow,
            UiCommand::ToggleTheme => Command::ToggleTheme,
            UiCommand::ClearSelection => Command::Select(None),
            UiCommand::QuickProfile => Command::Profile(Mode::Quick),
            UiCommand::StandardProfile => Command::Profile(Mode::Standard),
            UiCommand::PreciseProfile => Command::Profile(Mode::Precise),
            UiCommand::CancelProfile => Command::CancelProfile,
            UiCommand::ExportProfile => Command::ExportProfile,
            UiCommand::Runtimes => Command::RuntimesWindow,
            UiCommand::Help => Command::ToggleHelp,
            UiCommand::Palette => Command::TogglePalette,
        }
    }
}

impl App {
    /// Whether `command` can run now; a menu greys it out, the palette too, and its key says
    /// why it did nothing.
    pub fn enabled(&self, command: UiCommand) -> bool {
        self.why_disabled(command).is_none()
    }

    /// Why `command` cannot run now (`None`: it can).
    pub fn why_disabled(&self, command: UiCommand) -> Option<&'static str> {
        let profiling = self.ws.is_profiling();
        let no_source = self.ws.entries.is_empty();
        match command {
            UiCommand::Reload => {
                let file = self
                    .ws
                    .entry()
                    .is_some_and(|e| matches!(e.source.origin, crate::workspace::Origin::File(_)));
                (!file).then_some("the source shown was not read from a file")
            }
            UiCommand::CloseSource => no_source.then_some("no source is open"),
            UiCommand::SaveColumnBytes => self
                .ws
                .analysis()
                .is_none()
                .then_some("no payload has been read yet"),
            UiCommand::ForgetSchemas => self.ws.schemas.is_empty().then_some("no schema is loaded"),
            UiCommand::AllColumns => self
                .settings
                .single
                .is_none()
                .then_some("every column is shown already"),
            UiCommand::ClearSelection => {
                self.ws.selected.is_none().then_some("nothing is selected")
            }
            UiCommand::QuickProfile | UiCommand::StandardProfile | UiCommand::PreciseProfile => {
                if profiling {
                    Some("a profile is running")
                } else {
                    no_source.then_some("no source is open")
                }
            }
            UiCommand::CancelProfile => (!profiling).then_some("no profile is running"),
            UiCommand::ExportProfile => self
                .ws
                .profile
                .is_none()
                .then_some("nothing to export yet: run a profile first"),
            _ => None,
        }
    }

    /// A menu item for `command`: its text, its shortcut on the right, greyed when it cannot
    /// run; a click pushes it and closes the menu.
    pub(super) fn command_button(&mut self, ui: &mut egui::Ui, command: UiCommand) {
        let keys = command.shortcut_text(ui.ctx());
        let mut button = egui::Button::new(command.text());
        if !keys.is_empty() {
            button = button.shortcut_text(keys);
        }
        let why = self.why_disabled(command);
        if ui
            .add_enabled(why.is_none(), button)
            .on_hover_text(command.tooltip())
            .on_disabled_hover_text(why.unwrap_or_default())
            .clicked()
        {
            ui.close();
            self.push(command.command());
        }
    }

    /// Pushes the command of every shortcut pressed this frame, or says why it cannot run now;
    /// the shortcuts with more modifiers are taken first, so Ctrl+Shift+V is not read as Ctrl+V.
    pub(super) fn shortcut_commands(&mut self, ctx: &egui::Context) {
        let mut keys: Vec<(KeyboardShortcut, UiCommand)> = UiCommand::ALL
            .iter()
            .flat_map(|&c| c.shortcuts().iter().map(move |&s| (s, c)))
            .collect();
        keys.sort_by_key(|(s, _)| std::cmp::Reverse(modifier_count(s.modifiers)));
        for (shortcut, command) in keys {
            if ctx.input_mut(|i| i.consume_shortcut(&shortcut)) {
                match self.why_disabled(command) {
                    None => self.push(command.command()),
                    Some(why) => {
                        self.status = Some(super::Status::Info(format!(
                            "{} ({}): {why}",
                            command.text(),
                            ctx.format_shortcut(&shortcut)
                        )));
                    }
                }
            }
        }
    }
}

fn modifier_count(m: Modifiers) -> usize {
    [m.alt, m.ctrl || m.command || m.mac_cmd, m.shift]
        .iter()
        .filter(|&&b| b)
        .count()
}

/// The palette's match of `query` in `text`: every word of the query found in the text, in any
/// order, case ignored. The score is lower for better matches: a text starting with the query,
/// then one holding it whole, then the rest.
pub fn palette_score(query: &str, text: &str) -> Option<u8> {
    let query = query.trim().to_lowercase();
    let text = text.to_lowercase();
    if query.is_empty() {
        return Some(2);
    }
    if !query.split_whitespace().all(|w| text.contains(w)) {
        return None;
    }
    Some(if text.starts_with(&query) {
        0
    } else if text.contains(&query) {
        1
    } else {
        2
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_listed_once_and_no_two_share_a_shortcut() {
        let mut seen = std::collections::HashSet::new();
        for c in UiCommand::ALL {
            assert!(seen.insert(c), "{c:?} twice");
            assert!(!c.text().is_empty() && !c.tooltip().is_empty(), "{c:?}");
        }
        let mut keys = std::collections::HashSet::new();
        for c in UiCommand::ALL {
            for s in c.shortcuts() {
                assert!(keys.insert((s.modifiers.command, s.modifiers.shift, s.logical_key)));
            }
        }
    }

    #[test]
    fn the_palette_matches_words_in_any_order() {
        assert_eq!(palette_score("open", "Open path…"), Some(0));
        assert_eq!(palette_score("path", "Open path…"), Some(1));
        assert_eq!(palette_score("path op", "Open path…"), Some(2));
        assert_eq!(palette_score("proff", "Show the profiler"), None);
        assert_eq!(palette_score("", "Quit"), Some(2));
    }
}
