//! What the user asked for, as data. Menus, panels, shortcuts, drops and pastes push a
//! [`Command`]; [`App::run_commands`] carries them out, in the order given, in one place.
//!
//! Drawing code only reads the app and pushes commands, so what a click does is written once
//! (a menu item, its shortcut and its context-menu twin all push the same command), and a
//! command never changes the list a panel is in the middle of drawing: a source closed from its
//! own row goes after the list is drawn.

use std::path::PathBuf;

use eframe::egui;

use super::window_kind::Which;
use super::{dialogs, App, View};
use crate::codec::Format;
use crate::model::Path;
use crate::workspace::{ProtoMode, Source};

/// One thing to do (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Open a file: a payload, a schema or a TLS key log, told by its name and content.
    Open(PathBuf),
    /// The native open dialog; where none can open, File ▸ Open path… with a note saying so.
    OpenDialog,
    /// File ▸ Open path… (its field focused).
    OpenPathField,
    /// A bundled sample, by file name.
    OpenSample(&'static str),
    /// Inspect text as a new source (or show the open source that has the same text).
    Paste(String),
    /// Bytes dropped on the window that are not text and came without a path.
    DroppedBytes(Vec<u8>),
    /// File ▸ Paste…: the paste area, its box focused.
    PasteArea,
    /// Show source `i`.
    ShowSource(usize),
    /// Close source `i` (its view state goes with it).
    Close(usize),
    /// Close the source shown (Ctrl+W).
    CloseShown,
    /// Read the source shown again from its file (File ▸ Reload, Ctrl+R).
    ReloadShown,
    /// Load the TLS key log in this file (one offered beside a capture, or picked).
    LoadKeyLog(std::path::PathBuf),
    /// Close every source but `i`.
    CloseOthers(usize),
    /// Start renaming source `i` in place.
    StartRename(usize),
    /// Give source `i` this name (an empty name goes back to the source's own).
    Rename(usize, String),
    /// Compare two payloads, each given as (source, payload) indices, in the diff view.
    Compare((usize, usize), (usize, usize)),
    /// Show payload `i` of the source shown.
    ShowPayload(usize),
    /// Read the payload shown as this format (`None`: the best detected).
    ReadAs(Option<Format>),
    /// How the payload shown is read as protobuf: best match, schema-less or one message type.
    SetProtoMode(ProtoMode),
    /// Select a field in every column (`None` clears the selection).
    Select(Option<Path>),
    /// Show only this format's column, full width (`None`: every column side by side).
    OnlyColumn(Option<Format>),
    /// Show these columns, in this order (View ▸ Columns): each format and whether it is shown.
    SetColumns(Vec<(Format, bool)>),
    /// Show one of the main area's views.
    SetView(View),
    /// Run the profiler on the payloads in its scope.
    StartProfile,
    /// Stop the running profile; what finished stays.
    CancelProfile,
    /// Write the profile's CSV files.
    ExportProfile,
    /// Switch between the dark and the light theme.
    ToggleTheme,
    /// Show or hide the shortcuts window.
    ToggleHelp,
    /// Show or hide the command palette.
    TogglePalette,
    /// Show the profiler at this tab.
    ProfilerTab(super::profiler::Tab),
    /// The native dialog for a TLS key log; where none can open, File ▸ Open path….
    OpenKeyLogDialog,
    /// File ▸ Save column bytes….
    SaveWindow,
    /// The native dialog for schema files; where none can open, the schema window.
    SchemaDialog,
    /// The schema window (paths, include folders, pasted text).
    SchemaWindow,
    /// Load these schema files, with these include folders.
    LoadSchemaFiles(Vec<PathBuf>, Vec<PathBuf>),
    /// Load pasted schema text (an error shows in the schema window).
    LoadSchemaText(String),
    /// Read Avro with the loaded Avro schema at this index as the reader's schema (`None`: by
    /// the writer's schema alone).
    SetAvroReader(Option<usize>),
    /// Unload every schema and forget them for the next run.
    ForgetSchemas,
    /// View ▸ Limits….
    LimitsWindow,
    /// Use these limits (kept for the next run): every source is read again.
    SetLimits(Box<crate::limits::Limits>),
    /// Profile ▸ Runtimes….
    RuntimesWindow,
    /// Show the profiler and run a profile of this length.
    Profile(crate::report::Mode),
    /// Stop reading the source shown (the status bar's Cancel).
    CancelReading,
    /// How the MessagePack and CBOR columns are written (`None`: as the libraries write).
    SetEncoding(Option<crate::profile::sizes::Variant>),
    /// Whether protobuf's JSON uses .proto names rather than JSON names.
    SetProtoNames(bool),
    /// Show the source's bytes as they are, or unwrap its layers.
    SetRaw(bool),
    /// How far the source shown is peeled.
    SetPeel(crate::capture::PeelChoice),
    /// Read every occurrence of a field of schema-less protobuf this way (the source shown).
    SetFieldReading(crate::codec::protobuf::wire::FieldReading),
    /// Drop the source shown's field readings.
    ClearFieldReadings,
    /// Close the window.
    Quit,
}

impl App {
    /// Queues `command`; it runs at the next [`App::run_commands`] (in this frame).
    pub fn push(&mut self, command: Command) {
        self.commands.push(command);
    }

    /// Carries out the queued commands in order. A command may queue more; they run too. What
    /// they changed is drawn in the next frame, which is asked for here (a command run after
    /// drawing would otherwise wait for the next input event to be seen). Then the view state
    /// follows the source shown: a source switched (a click in the list, a paste, a close) has
    /// the old one's state parked and its own restored, with its selection.
    pub fn run_commands(&mut self, ctx: &egui::Context) {
        if !self.commands.is_empty() {
            ctx.request_repaint();
        }
        while !self.commands.is_empty() {
            let queued = std::mem::take(&mut self.commands);
            for command in queued {
                self.apply(ctx, command);
            }
        }
        self.sync_source();
    }

    fn apply(&mut self, ctx: &egui::Context, command: Command) {
        match command {
            Command::Open(path) => self.open_file(path),
            Command::OpenDialog => self.open_dialog(),
            Command::OpenPathField => self.windows.open_path.show(None),
            Command::OpenSample(name) => {
                self.open_sample(name);
            }
            Command::Paste(text) => self.paste(&text),
            Command::DroppedBytes(bytes) => {
                self.ws.add(Source::dropped("dropped bytes", bytes));
            }
            Command::PasteArea => self.windows.paste.show(),
            Command::ShowSource(i) => self.ws.select_source(i),
            Command::Close(i) => self.close_source(i),
            Command::CloseShown => {
                if let Some(i) = self.ws.current {
                    self.close_source(i);
                }
            }
            Command::LoadKeyLog(path) => self.load_key_log_file(&path),
            Command::ReloadShown => {
                if let Some(i) = self.ws.current {
                    let name = self.ws.entries.get(i).map(|e| e.name()).unwrap_or_default();
                    self.status = Some(match self.ws.reload(i) {
                        Ok(()) => super::Status::Info(format!("{name} read again")),
                        Err(e) => super::Status::Error(e.to_string()),
                    });
                }
            }
            Command::CloseOthers(i) => {
                self.renaming = None;
                self.ws.close_others(i);
            }
            Command::StartRename(i) => {
                let name = self.ws.entries.get(i).map(|e| e.name()).unwrap_or_default();
                self.renaming = Some((i, name, false));
            }
            Command::Rename(i, name) => {
                self.ws.rename(i, &name);
                self.renaming = None;
            }
            Command::Compare(a, b) => self.compare(a, b),
            Command::ShowPayload(i) => self.ws.select_payload(i),
            Command::ReadAs(format) => self.ws.set_format(format),
            Command::SetProtoMode(mode) => self.ws.set_proto_mode(mode),
            Command::Select(path) => self.select(path),
            Command::OnlyColumn(format) => {
                self.settings.single = format.map(|f| f.name().to_string());
                self.sync_hidden_columns();
            }
            Command::SetColumns(order) => {
                self.settings.set_column_order(&order);
                self.sync_hidden_columns();
            }
            Command::SetView(view) => self.view = view,
            Command::StartProfile => self.start_profile(),
            Command::CancelProfile => self.cancel_profile(),
            Command::ExportProfile => self.export_profile_csv(),
            Command::ToggleTheme => {
                self.settings.dark = !self.settings.dark;
                self.apply_theme(ctx);
            }
            Command::ToggleHelp => self.windows.toggle(Which::Help),
            Command::TogglePalette => self.windows.palette.toggle(),
            Command::ProfilerTab(tab) => {
                self.view = View::Profiler;
                self.profiler.tab = tab;
            }
            Command::OpenKeyLogDialog => self.key_log_dialog(),
            Command::SaveWindow => self.windows.open(Which::Save),
            Command::SchemaDialog => self.schema_dialog(),
            Command::SchemaWindow => self.windows.open(Which::Schema),
            Command::LoadSchemaFiles(files, includes) => self.load_schema_files(files, includes),
            Command::LoadSchemaText(text) => {
                if let Err(e) = self.load_schema_text(&text) {
                    self.status = Some(super::Status::Error(format!("schema not loaded: {e}")));
                }
            }
            Command::SetAvroReader(index) => self.ws.set_avro_reader(index),
            Command::ForgetSchemas => {
                self.ws.clear_schemas();
                self.settings.schemas.clear();
                self.settings.schema_texts.clear();
            }
            Command::LimitsWindow => self.windows.limits.show(self.ws.limits()),
            Command::SetLimits(limits) => self.apply_limits(*limits),
            Command::RuntimesWindow => self.open_runtimes_window(ctx),
            Command::Profile(mode) => {
                self.settings.profile_mode = mode;
                self.view = View::Profiler;
                self.start_profile();
            }
            Command::CancelReading => self.ws.cancel(),
            Command::SetEncoding(variant) => self.ws.set_encoding(variant),
            Command::SetProtoNames(names) => self.ws.set_proto_names(names),
            Command::SetRaw(raw) => self.ws.set_raw(raw),
            Command::SetPeel(choice) => self.ws.set_peel(choice),
            Command::SetFieldReading(reading) => self.ws.set_field_reading(reading),
            Command::ClearFieldReadings => self.ws.clear_field_readings(),
            Command::Quit => self.quit = true,
        }
    }

    /// File ▸ Open…: the native dialog, or where none can open, File ▸ Open path… with a note.
    fn open_dialog(&mut self) {
        let picked = dialogs::pick(|| {
            rfd::FileDialog::new()
                .set_title("Open payloads")
                .pick_files()
        });
        match picked {
            dialogs::Picked::Chosen(files) => {
                for f in files {
                    self.open_file(f);
                }
            }
            dialogs::Picked::Cancelled => {}
            dialogs::Picked::Unavailable => self.windows.open_path.show(Some(dialogs::NO_DIALOG)),
        }
    }

    /// File ▸ Open TLS key log…: the native dialog, or where none can open, the path field (a
    /// `*.keylog` typed there loads as a key log).
    fn key_log_dialog(&mut self) {
        match dialogs::pick(|| {
            rfd::FileDialog::new()
                .set_title("Open a TLS key log")
                .pick_file()
        }) {
            dialogs::Picked::Chosen(path) => self.load_key_log_file(&path),
            dialogs::Picked::Cancelled => {}
            dialogs::Picked::Unavailable => self.windows.open_path.show(Some(dialogs::NO_DIALOG)),
        }
    }

    /// Schema ▸ Load…: the native dialog, or where none can open, the schema window (which has
    /// path fields) with a note.
    fn schema_dialog(&mut self) {
        match dialogs::pick(|| {
            rfd::FileDialog::new()
                .add_filter(
                    "schema",
                    &["proto", "pb", "desc", "binpb", "protoset", "avsc"],
                )
                .pick_files()
        }) {
            dialogs::Picked::Chosen(files) => self.load_schema_files(files, Vec::new()),
            dialogs::Picked::Cancelled => {}
            dialogs::Picked::Unavailable => {
                self.status = Some(super::Status::Error(dialogs::NO_DIALOG.to_string()));
                self.windows.open(Which::Schema);
            }
        }
    }
}
