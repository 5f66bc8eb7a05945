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

/// A command with a name, maybe a shortcut, and a state (see the module docs). The variants are
/// in the order the palette and the shortcuts window list them, which is the order of
/// `TABLE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UiCommand {
    /// File ▸ Open….
    Open,
    /// File ▸ Open path….
    OpenPath,
    /// File ▸ Paste….
    PasteArea,
    /// File ▸ Open TLS key log….
    OpenKeyLog,
    /// File ▸ Reload.
    Reload,
    /// Close the source shown.
    CloseSource,
    /// File ▸ Save column bytes….
    SaveColumnBytes,
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
    /// View ▸ Limits….
    Limits,
    /// View ▸ Dark theme.
    ToggleTheme,
    /// The command palette.
    Palette,
    /// Help ▸ Shortcuts.
    Help,
    /// File ▸ Quit.
    Quit,
}

/// What a command needs to run; without it, menus and the palette grey it out and its key says
/// why it did nothing ([`App::why_disabled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Nothing: it can always run.
    Nothing,
    /// The source shown was read from a file.
    FileSource,
    /// A source is open.
    Source,
    /// A payload has been read.
    Analysis,
    /// A schema is loaded.
    Schema,
    /// A column is shown alone.
    SingleColumn,
    /// A field is selected.
    Selection,
    /// A source is open and no profile is running.
    Idle,
    /// A profile is running.
    Profiling,
    /// A profile has finished.
    Profile,
}

/// One row of the command table: everything the menus, the palette and the shortcuts window
/// show of a command, what it needs, and what running it pushes.
#[derive(Debug)]
pub struct CommandInfo {
    /// The command the row is about.
    pub id: UiCommand,
    /// The name, as the menus and the palette write it.
    pub text: &'static str,
    /// What it does, in a sentence (a tooltip, the palette's second line).
    pub tooltip: &'static str,
    /// The keys that run it; the first is the one menus show.
    pub shortcuts: &'static [KeyboardShortcut],
    /// When it can run.
    pub needs: Needs,
    /// What running it pushes.
    pub command: Command,
}

const fn key(modifiers: Modifiers, key: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(modifiers, key)
}

const CTRL: Modifiers = Modifiers::COMMAND;
const CTRL_SHIFT: Modifiers = Modifiers {
    shift: true,
    ..Modifiers::COMMAND
};

/// A row of `TABLE`, written on one line.
const fn row(
    id: UiCommand,
    text: &'static str,
    tooltip: &'static str,
    shortcuts: &'static [KeyboardShortcut],
    needs: Needs,
    command: Command,
) -> CommandInfo {
    CommandInfo {
        id,
        text,
        tooltip,
        shortcuts,
        needs,
        command,
    }
}

/// Every command, once, in [`UiCommand`]'s order: the one place its text, tooltip, keys, state
/// and effect are written.
#[rustfmt::skip]
pub const TABLE: &[CommandInfo] = {
    use UiCommand as C;
    use Needs as N;
    &[
        row(C::Open, "Open…", "open files: payloads, captures, HAR, schemas, key logs",
            &[key(CTRL, Key::O)], N::Nothing, Command::OpenDialog),
        row(C::OpenPath, "Open path…", "open a file by typing its path (with completion)",
            &[key(CTRL, Key::L)], N::Nothing, Command::OpenPathField),
        row(C::PasteArea, "Paste…",
            "a box for text to inspect: hex dumps, base64, HTTP messages, JSON, …",
            &[key(CTRL_SHIFT, Key::V)], N::Nothing, Command::PasteArea),
        row(C::OpenKeyLog, "Open TLS key log…",
            "an NSS key log (SSLKEYLOGFILE) to decrypt captures' TLS with; a *.keylog opened, \
             dropped or typed in the path field loads the same way",
            &[], N::Nothing, Command::OpenKeyLogDialog),
        row(C::Reload, "Reload", "read the source shown again from its file",
            &[key(CTRL, Key::R)], N::FileSource, Command::ReloadShown),
        row(C::CloseSource, "Close source", "close the source shown",
            &[key(CTRL, Key::W)], N::Source, Command::CloseShown),
        row(C::SaveColumnBytes, "Save column bytes…", "write a column's bytes to a file",
            &[], N::Analysis, Command::SaveWindow),
        row(C::LoadSchema, "Load .proto / descriptor set…",
            "protobuf schemas from files (a dialog)",
            &[], N::Nothing, Command::SchemaDialog),
        row(C::PasteSchema, "Paste .proto or descriptor set…",
            "the schema window: paths with include folders, or pasted .proto text",
            &[], N::Nothing, Command::SchemaWindow),
        row(C::ForgetSchemas, "Forget loaded schemas",
            "unload every schema, and do not load them next run",
            &[], N::Schema, Command::ForgetSchemas),
        row(C::ShowInspector, "Show the inspector", "the formats side by side, byte by byte",
            &[], N::Nothing, Command::SetView(View::Inspector)),
        row(C::ShowProfiler, "Show the profiler",
            "sizes, fields, timings and scaling of every format",
            &[], N::Nothing, Command::SetView(View::Profiler)),
        row(C::ShowDiff, "Show the diff", "two payloads compared by meaning",
            &[], N::Nothing, Command::SetView(View::Diff)),
        row(C::ShowSchemaDiff, "Show the schema diff", "two versions of a message type compared",
            &[], N::Nothing, Command::SetView(View::SchemaDiff)),
        row(C::ProfilerSizes, "Profiler: sizes", "sizes raw and compressed, per format",
            &[], N::Nothing, Command::ProfilerTab(Tab::Sizes)),
        row(C::ProfilerFields, "Profiler: bytes per field",
            "where each format's bytes go, field by field",
            &[], N::Nothing, Command::ProfilerTab(Tab::Fields)),
        row(C::ProfilerTimings, "Profiler: timings",
            "encode and decode time of every library, its tail and CPU",
            &[], N::Nothing, Command::ProfilerTab(Tab::Timings)),
        row(C::ProfilerScaling, "Profiler: scaling", "size and time against the record count",
            &[], N::Nothing, Command::ProfilerTab(Tab::Scaling)),
        row(C::ProfilerWire, "Profiler: the wire",
            "encode, transfer and decode over network links",
            &[], N::Nothing, Command::ProfilerTab(Tab::Wire)),
        row(C::ProfilerCompare, "Profiler: compare payloads",
            "the open payloads' profiles side by side",
            &[], N::Nothing, Command::ProfilerTab(Tab::Compare)),
        row(C::AllColumns, "All columns side by side", "undo a column shown alone",
            &[], N::SingleColumn, Command::OnlyColumn(None)),
        row(C::ClearSelection, "Clear the selection", "select no field",
            &[], N::Selection, Command::Select(None)),
        row(C::QuickProfile, "Quick profile (seconds)",
            "time every library briefly on the payloads in scope",
            &[], N::Idle, Command::Profile(Mode::Quick)),
        row(C::StandardProfile, "Standard profile",
            "time every library with the standard run length",
            &[], N::Idle, Command::Profile(Mode::Standard)),
        row(C::PreciseProfile, "Precise profile (one job at a time)",
            "time one library at a time, the longest run",
            &[], N::Idle, Command::Profile(Mode::Precise)),
        row(C::CancelProfile, "Cancel the profile", "stop the running profile; what finished stays",
            &[], N::Profiling, Command::CancelProfile),
        row(C::ExportProfile, "Export profile CSV…",
            "write the profile's CSV files (to the export path)",
            &[key(CTRL, Key::S)], N::Profile, Command::ExportProfile),
        row(C::Runtimes, "Runtimes…",
            "Python and Node: which are installed, with which libraries",
            &[], N::Nothing, Command::RuntimesWindow),
        row(C::Limits, "Limits…", "the memory and size limits every reader keeps to",
            &[], N::Nothing, Command::LimitsWindow),
        row(C::ToggleTheme, "Dark or light theme", "switch between the dark and the light theme",
            &[key(CTRL, Key::D)], N::Nothing, Command::ToggleTheme),
        row(C::Palette, "Command palette", "find any command by name",
            &[key(CTRL_SHIFT, Key::P), key(CTRL, Key::K)], N::Nothing, Command::TogglePalette),
        row(C::Help, "Shortcuts and help", "every shortcut, and what the app reads",
            &[key(Modifiers::NONE, Key::F1)], N::Nothing, Command::ToggleHelp),
        row(C::Quit, "Quit", "close the window",
            &[key(CTRL, Key::Q)], N::Nothing, Command::Quit),
    ]
};

/// The keys that inspect the clipboard's text outside a text field: the platform's paste
/// (egui's own) and Shift+Insert (asked of the integration where egui does not paste on it).
pub const PASTE_KEYS: [KeyboardShortcut; 2] =
    [key(CTRL, Key::V), key(Modifiers::SHIFT, Key::Insert)];

/// How a row of the shortcuts window names its gesture.
#[derive(Debug, Clone, Copy)]
pub enum GestureKeys {
    /// Keys, written as this platform writes them.
    Keys(&'static [KeyboardShortcut]),
    /// Words (a click, a drop, a key egui names otherwise).
    Words(&'static str),
}

/// What the shortcuts window lists besides the commands' own keys: gestures and keys that are
/// not commands.
pub const GESTURES: &[(GestureKeys, &str)] = &[
    (
        GestureKeys::Keys(&PASTE_KEYS),
        "inspect the clipboard's text (hex dump, base64, HTTP, JSON, …) anywhere but in a text field",
    ),
    (
        GestureKeys::Words("Esc"),
        "close the menu or window on top, else clear the selection",
    ),
    (
        GestureKeys::Words("click a byte or field"),
        "select that field in every column",
    ),
    (GestureKeys::Words("drop files on the window"), "open them"),
];

/// `shortcuts` as this platform writes them ("Ctrl+Shift+P, Ctrl+K"); empty when none.
pub fn keys_text(ctx: &egui::Context, shortcuts: &[KeyboardShortcut]) -> String {
    shortcuts
        .iter()
        .map(|s| ctx.format_shortcut(s))
        .collect::<Vec<_>>()
        .join(", ")
}

impl UiCommand {
    /// Every command, in the order the palette and the shortcuts window list them.
    pub const ALL: [UiCommand; 33] = {
        let mut all = [UiCommand::Open; 33];
        let mut i = 0;
        while i < all.len() {
            all[i] = TABLE[i].id;
            i += 1;
        }
        all
    };

    /// Its row of `TABLE`.
    pub fn info(self) -> &'static CommandInfo {
        &TABLE[self as usize]
    }

    /// The name, as the menus and the palette write it.
    pub fn text(self) -> &'static str {
        self.info().text
    }

    /// What it does, in a sentence (a tooltip, the palette's second line).
    pub fn tooltip(self) -> &'static str {
        self.info().tooltip
    }

    /// The keys that run it; the first is the one menus show.
    pub fn shortcuts(self) -> &'static [KeyboardShortcut] {
        self.info().shortcuts
    }

    /// Its shortcuts as this platform writes them ("Ctrl+Shift+P, Ctrl+K"); empty when none.
    pub fn shortcut_text(self, ctx: &egui::Context) -> String {
        keys_text(ctx, self.shortcuts())
    }

    /// What running it pushes.
    pub fn command(self) -> Command {
        self.info().command.clone()
    }
}

impl App {
    /// Whether `command` can run now; a menu greys it out, the palette too, and its key says
    /// why it did nothing.
    pub fn enabled(&self, command: UiCommand) -> bool {
        self.why_disabled(command).is_none()
    }

    /// Why `command` cannot run now (`None`: it can), by what its row of `TABLE` needs.
    pub fn why_disabled(&self, command: UiCommand) -> Option<&'static str> {
        let profiling = self.ws.is_profiling();
        let no_source = self.ws.entries.is_empty();
        match command.info().needs {
            Needs::Nothing => None,
            Needs::FileSource => {
                let file = self
                    .ws
                    .entry()
                    .is_some_and(|e| matches!(e.source.origin, crate::workspace::Origin::File(_)));
                (!file).then_some("the source shown was not read from a file")
            }
            Needs::Source => no_source.then_some("no source is open"),
            Needs::Analysis => self
                .ws
                .analysis()
                .is_none()
                .then_some("no payload has been read yet"),
            Needs::Schema => self.ws.schemas.is_empty().then_some("no schema is loaded"),
            Needs::SingleColumn => self
                .settings
                .single
                .is_none()
                .then_some("every column is shown already"),
            Needs::Selection => self.ws.selected.is_none().then_some("nothing is selected"),
            Needs::Idle => {
                if profiling {
                    Some("a profile is running")
                } else {
                    no_source.then_some("no source is open")
                }
            }
            Needs::Profiling => (!profiling).then_some("no profile is running"),
            Needs::Profile => self
                .ws
                .profile
                .is_none()
                .then_some("nothing to export yet: run a profile first"),
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
        assert_eq!(TABLE.len(), UiCommand::ALL.len());
        for c in UiCommand::ALL {
            assert!(seen.insert(c), "{c:?} twice");
            assert!(!c.text().is_empty() && !c.tooltip().is_empty(), "{c:?}");
            assert_eq!(
                c.info().id,
                c,
                "the table's rows are in the commands' order"
            );
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
