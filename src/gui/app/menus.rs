//! The menu bar and the app's windows: paste, schema, save column bytes, help.
//!
//! Every dialog action has a second way that works without a native file dialog (a path field,
//! a paste area, a drop), so the app is usable where no dialog can open.

use std::path::PathBuf;

use eframe::egui;

use super::window_kind::Which;

use super::Status;

use super::ui_command::{keys_text, GestureKeys, UiCommand, GESTURES};
use super::{App, Command, SAMPLES};
use crate::codec::Format;
use crate::workspace::ProtoMode;

fn split_paths(text: &str) -> Vec<PathBuf> {
    text.split([';', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

impl App {
    pub(super) fn menu_bar(&mut self, ui: &mut egui::Ui) {
        egui::Panel::top("menu").show(ui, |ui| {
            egui::MenuBar::new().ui(ui, |ui| {
                ui.menu_button("File", |ui| self.file_menu(ui));
                ui.menu_button("Schema", |ui| self.schema_menu(ui));
                ui.menu_button("View", |ui| self.view_menu(ui));
                ui.menu_button("Profile", |ui| self.profile_menu(ui));
                ui.menu_button("Help", |ui| {
                    self.command_button(ui, UiCommand::Palette);
                    self.command_button(ui, UiCommand::Help);
                });
            });
        });
    }

    fn file_menu(&mut self, ui: &mut egui::Ui) {
        self.command_button(ui, UiCommand::Open);
        self.command_button(ui, UiCommand::OpenPath);
        self.command_button(ui, UiCommand::OpenKeyLog);
        self.command_button(ui, UiCommand::Reload);
        ui.menu_button("Open recent", |ui| {
            if self.settings.recent.is_empty() {
                ui.weak("nothing yet");
            }
            for p in self.settings.recent.clone() {
                if ui.button(p.display().to_string()).clicked() {
                    ui.close();
                    self.push(Command::Open(p));
                }
            }
        });
        ui.menu_button("Samples", |ui| {
            for (name, _) in SAMPLES {
                if ui.button(*name).clicked() {
                    ui.close();
                    self.push(Command::OpenSample(name));
                }
            }
        });
        self.command_button(ui, UiCommand::PasteArea);
        self.command_button(ui, UiCommand::SaveColumnBytes);
        self.command_button(ui, UiCommand::CloseSource);
        ui.separator();
        self.command_button(ui, UiCommand::Quit);
    }

    fn schema_menu(&mut self, ui: &mut egui::Ui) {
        self.command_button(ui, UiCommand::LoadSchema);
        self.command_button(ui, UiCommand::PasteSchema);
        self.command_button(ui, UiCommand::ForgetSchemas);
        ui.separator();
        ui.label("Protobuf mode");
        let current = self
            .ws
            .entry()
            .map(|e| e.choice.proto.clone())
            .unwrap_or_default();
        for mode in [ProtoMode::Auto, ProtoMode::SchemaLess] {
            if ui.radio(current == mode, mode.label()).clicked() {
                self.push(Command::SetProtoMode(mode));
            }
        }
        ui.menu_button("Message type", |ui| self.message_picker(ui));
    }

    /// A searchable list of the loaded message types.
    pub(super) fn message_picker(&mut self, ui: &mut egui::Ui) {
        let names = self.ws.schemas.message_names();
        if names.is_empty() {
            ui.weak("no schema loaded (Schema > Load or Paste)");
            return;
        }
        let label = ui.label("Search message types");
        ui.add(
            egui::TextEdit::singleline(&mut self.message_filter).hint_text("name or part of it"),
        )
        .labelled_by(label.id);
        let filter = self.message_filter.to_lowercase();
        let current = self.ws.entry().map(|e| e.choice.proto.clone());
        egui::ScrollArea::vertical()
            .id_salt("message types")
            .max_height(300.0)
            .show(ui, |ui| {
                for name in names.iter().filter(|n| n.to_lowercase().contains(&filter)) {
                    let chosen = current == Some(ProtoMode::Message(name.clone()));
                    if ui.selectable_label(chosen, name).clicked() {
                        self.push(Command::SetProtoMode(ProtoMode::Message(name.clone())));
                        ui.close();
                    }
                }
            });
        let methods = self.ws.schemas.methods();
        let shown: Vec<_> = methods
            .iter()
            .filter(|m| {
                [&m.path, &m.input, &m.output]
                    .iter()
                    .any(|t| t.to_lowercase().contains(&filter))
            })
            .collect();
        if shown.is_empty() {
            return;
        }
        ui.separator();
        ui.label("Service methods: read as a request or a response");
        egui::ScrollArea::vertical()
            .id_salt("service methods")
            .max_height(200.0)
            .show(ui, |ui| {
                for m in shown {
                    ui.label(&m.path);
                    ui.horizontal_wrapped(|ui| {
                        let sides = [
                            ("request", &m.input, m.client_streaming),
                            ("response", &m.output, m.server_streaming),
                        ];
                        for (side, name, streaming) in sides {
                            let stream = if streaming { " (stream)" } else { "" };
                            let chosen = current == Some(ProtoMode::Message(name.clone()));
                            let text = format!("{side}{stream}: {name}");
                            if ui.selectable_label(chosen, text).clicked() {
                                self.push(Command::SetProtoMode(ProtoMode::Message(name.clone())));
                                ui.close();
                            }
                        }
                    });
                }
            });
    }

    fn profile_menu(&mut self, ui: &mut egui::Ui) {
        for c in [
            UiCommand::QuickProfile,
            UiCommand::StandardProfile,
            UiCommand::PreciseProfile,
            UiCommand::CancelProfile,
        ] {
            self.command_button(ui, c);
        }
        ui.separator();
        for c in [
            UiCommand::ExportProfile,
            UiCommand::ShowProfiler,
            UiCommand::Runtimes,
        ] {
            self.command_button(ui, c);
        }
    }

    /// How the MessagePack and CBOR columns are written: as the libraries write them, or a
    /// variant whose bytes the columns then show.
    fn encoding_menu(&mut self, ui: &mut egui::Ui) {
        use crate::profile::sizes::Variant;
        ui.label("MessagePack and CBOR");
        let current = self.ws.entry().and_then(|e| e.choice.encoding);
        let choices = [
            (None, "as Python's msgpack and cbor2 write them"),
            (Some(Variant::ShortestFloats), "shortest floats"),
            (
                Some(Variant::Canonical),
                "canonical (sorted keys, shortest floats)",
            ),
        ];
        for (choice, label) in choices {
            if ui.radio(current == choice, label).clicked() {
                self.push(Command::SetEncoding(choice));
            }
        }
    }

    /// The field names the JSON column writes for protobuf read with a schema.
    fn json_names_menu(&mut self, ui: &mut egui::Ui) {
        ui.label("JSON of protobuf with a schema");
        let current = self.ws.entry().is_some_and(|e| e.choice.proto_names);
        let choices = [
            (
                false,
                "JSON names (startTimeUnixNano), as protoc writes them",
            ),
            (true, ".proto names (start_time_unix_nano)"),
        ];
        for (choice, label) in choices {
            if ui.radio(current == choice, label).clicked() {
                self.push(Command::SetProtoNames(choice));
            }
        }
    }

    fn view_menu(&mut self, ui: &mut egui::Ui) {
        self.encoding_menu(ui);
        ui.separator();
        self.json_names_menu(ui);
        ui.separator();
        let mut order = self.settings.column_order();
        let mut changed = false;
        ui.label("Columns (shown, order)");
        for i in 0..order.len() {
            ui.horizontal(|ui| {
                let (f, shown) = &mut order[i];
                changed |= ui.checkbox(shown, f.title()).changed();
                if ui
                    .add_enabled(i > 0, egui::Button::new("up").small())
                    .clicked()
                {
                    order.swap(i, i - 1);
                    changed = true;
                }
                if ui
                    .add_enabled(i + 1 < order.len(), egui::Button::new("down").small())
                    .clicked()
                {
                    order.swap(i, i + 1);
                    changed = true;
                }
            });
        }
        if changed {
            self.push(Command::SetColumns(order));
        }
        ui.separator();
        let single = self.settings.single_format();
        if ui
            .radio(single.is_none(), "All columns side by side")
            .clicked()
        {
            self.push(Command::OnlyColumn(None));
        }
        for f in Format::ALL {
            if ui
                .radio(
                    single == Some(f),
                    format!("Only {} (full width)", f.title()),
                )
                .clicked()
            {
                self.push(Command::OnlyColumn(Some(f)));
            }
        }
        ui.separator();
        self.command_button(ui, UiCommand::Limits);
        self.command_button(ui, UiCommand::ToggleTheme);
    }

    pub(super) fn load_schema_files(&mut self, files: Vec<PathBuf>, includes: Vec<PathBuf>) {
        // Avro schemas and schema registries load on their own; the rest are protobuf.
        let ext = |f: &PathBuf, e: &str| f.extension().is_some_and(|x| x.eq_ignore_ascii_case(e));
        let (other, files): (Vec<PathBuf>, Vec<PathBuf>) = files
            .into_iter()
            .partition(|f| f.is_dir() || ext(f, "avsc") || ext(f, "json"));
        for f in other {
            self.status = Some(if ext(&f, "avsc") {
                match self.ws.load_avro_file(&f) {
                    Ok(label) => Status::Info(format!("Avro schema loaded: {label}")),
                    Err(e) => Status::Error(e.to_string()),
                }
            } else {
                match self.ws.load_registry(&f) {
                    Ok(label) => Status::Info(format!("schema registry loaded: {label}")),
                    Err(e) => Status::Error(format!("schema registry not loaded: {e}")),
                }
            });
        }
        if files.is_empty() {
            return;
        }
        match self.ws.load_schema_files(&files, &includes) {
            Ok(label) => {
                self.windows.schema.missing = None;
                self.status = Some(Status::Info(format!("schema loaded: {label}")));
                self.settings
                    .schemas
                    .push(super::SchemaFiles { files, includes });
            }
            Err(e) => {
                if let crate::codec::protobuf::schema::SchemaError::MissingImport {
                    file,
                    import,
                    nearby,
                    ..
                } = &e
                {
                    // The schema window offers the folder to add, and loads again with it.
                    self.windows.schema.missing_folder = nearby
                        .as_ref()
                        .map(|d| d.display().to_string())
                        .unwrap_or_default();
                    self.windows.schema.missing = Some(super::dialogs::MissingImport {
                        files,
                        includes,
                        import: import.clone(),
                        file: file.clone(),
                        nearby: nearby.clone(),
                    });
                    self.windows.schema.open = true;
                }
                self.status = Some(Status::Error(format!("schema not loaded: {e}")));
            }
        }
    }

    /// The schema window's offer after a load stopped at a missing import: the folder found
    /// near the file, or one typed or chosen, added to the load's folders.
    fn missing_import_offer(&mut self, ui: &mut egui::Ui) {
        let Some(missing) = self.windows.schema.missing.clone() else {
            return;
        };
        ui.group(|ui| {
            ui.label(format!(
                "{} imports \"{}\", which none of the folders searched holds.",
                missing.file.display(),
                missing.import
            ));
            let mut add: Option<PathBuf> = None;
            if let Some(d) = &missing.nearby {
                if ui
                    .button(format!("Add {} and load again", d.display()))
                    .on_hover_text(format!("{} is there", d.join(&missing.import).display()))
                    .clicked()
                {
                    add = Some(d.clone());
                }
            }
            let label = ui.label(format!("Folder that holds {}", missing.import));
            ui.horizontal(|ui| {
                let field = ui
                    .add(
                        egui::TextEdit::singleline(&mut self.windows.schema.missing_folder)
                            .hint_text("path/to/protos")
                            .desired_width(320.0),
                    )
                    .labelled_by(label.id);
                let entered = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if ui.button("Choose…").clicked() {
                    match super::dialogs::pick(|| rfd::FileDialog::new().pick_folder()) {
                        super::dialogs::Picked::Chosen(d) => {
                            self.windows.schema.missing_folder = d.display().to_string();
                        }
                        super::dialogs::Picked::Cancelled => {}
                        super::dialogs::Picked::Unavailable => {
                            self.status =
                                Some(Status::Error(super::dialogs::NO_DIALOG.to_string()));
                        }
                    }
                }
                let typed = self.windows.schema.missing_folder.trim();
                if (ui
                    .add_enabled(
                        !typed.is_empty(),
                        egui::Button::new("Add folder and load again"),
                    )
                    .clicked()
                    || entered)
                    && !typed.is_empty()
                {
                    add = Some(PathBuf::from(typed));
                }
            });
            if let Some(folder) = add {
                let mut includes = missing.includes.clone();
                includes.push(folder);
                self.windows.schema.missing = None;
                self.push(Command::LoadSchemaFiles(missing.files.clone(), includes));
            }
        });
    }

    /// Loads pasted schema text; the error is shown where it was pasted.
    pub fn load_schema_text(
        &mut self,
        text: &str,
    ) -> Result<(), crate::workspace::SchemaLoadError> {
        let label = self.ws.load_schema_text(text)?;
        let kept = super::SchemaText::Pasted(text.to_string());
        let note = if text.len() > super::SchemaText::MAX_PASTED {
            " (too long to keep for the next run)"
        } else {
            if !self.settings.schema_texts.contains(&kept) {
                self.settings.schema_texts.push(kept);
            }
            ""
        };
        self.status = Some(Status::Info(format!("schema loaded: {label}{note}")));
        Ok(())
    }

    pub(super) fn windows(&mut self, ctx: &egui::Context) {
        if let Some(text) = self.windows.paste.ui(ctx) {
            self.push(Command::Paste(text));
        }
        if let Some(path) = self.windows.open_path.ui(ctx) {
            self.push(Command::Open(path));
        }

        let mut open = self.windows.schema.open;
        egui::Window::new(Which::Schema.title())
            .open(&mut open)
            .default_width(520.0)
            .show(ctx, |ui| self.schema_window(ui));
        self.windows.schema.open = open && self.windows.schema.open;

        let mut open = self.windows.save.open;
        egui::Window::new(Which::Save.title())
            .open(&mut open)
            .show(ctx, |ui| self.save_window(ui));
        self.windows.save.open = open && self.windows.save.open;

        self.limits_window(ctx);
        self.runtimes_window_ui(ctx);
        self.palette_ui(ctx);

        let mut open = self.windows.help.open;
        egui::Window::new(Which::Help.title())
            .open(&mut open)
            .show(ctx, |ui| {
                egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                    for c in UiCommand::ALL {
                        let keys = c.shortcut_text(ui.ctx());
                        if keys.is_empty() {
                            continue;
                        }
                        ui.strong(keys);
                        ui.label(format!("{}: {}", c.text(), c.tooltip()));
                        ui.end_row();
                    }
                    for (keys, what) in GESTURES {
                        match keys {
                            GestureKeys::Keys(keys) => ui.strong(keys_text(ui.ctx(), keys)),
                            GestureKeys::Words(words) => ui.strong(*words),
                        };
                        ui.label(*what);
                        ui.end_row();
                    }
                });
                ui.label("Every command, with or without a key, is in the command palette.");
                ui.separator();
                ui.label("Protobuf: with no schema, protobuf input is read field by field and other formats are written with an inferred schema. Load or paste a .proto to read and write with a message type.");
                if !self.font_summary.is_empty() {
                    ui.separator();
                    ui.label(format!("Fonts for payload text: {}", self.font_summary));
                }
            });
        self.windows.help.open = open;
    }

    fn schema_window(&mut self, ui: &mut egui::Ui) {
        let label = ui.label(
            "Schema files (.proto, a descriptor set, .avsc; a schema registry folder of <id>.avsc \
             files or its JSON answers), separated by ';'",
        );
        ui.add(
            egui::TextEdit::singleline(&mut self.windows.schema.files)
                .hint_text("path/to/api.proto")
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id);
        let label = ui.label("Include folders for imports, separated by ';'");
        ui.add(
            egui::TextEdit::singleline(&mut self.windows.schema.includes)
                .hint_text("path/to/protos")
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id);
        self.missing_import_offer(ui);
        if ui.button("Load files").clicked() {
            let files = split_paths(&self.windows.schema.files);
            let includes = split_paths(&self.windows.schema.includes);
            self.push(Command::LoadSchemaFiles(files, includes));
        }
        ui.separator();
        ui.label("Or paste .proto text, an Avro schema (.avsc JSON), or a descriptor set as base64 or hex");
        let label = ui.label("Pasted schema");
        egui::ScrollArea::vertical()
            .id_salt("pasted schema")
            .max_height(260.0)
            .show(ui, |ui| {
                ui.add(
                    egui::TextEdit::multiline(&mut self.windows.schema.text)
                        .code_editor()
                        .desired_rows(10)
                        .desired_width(f32::INFINITY)
                        .hint_text("syntax = \"proto3\"; …"),
                )
                .labelled_by(label.id);
            });
        if ui.button("Load pasted schema").clicked() {
            let text = self.windows.schema.text.clone();
            self.push(Command::LoadSchemaText(text));
        }
        if let Some(Status::Error(m)) = &self.status {
            ui.colored_label(ui.visuals().error_fg_color, m);
        }
        ui.separator();
        ui.label("Message type");
        self.message_picker(ui);
    }

    fn save_window(&mut self, ui: &mut egui::Ui) {
        let Some(analysis) = self.ws.analysis().cloned() else {
            ui.label("nothing decoded yet");
            return;
        };
        let format = self
            .windows
            .save
            .format
            .or(self.here.focus)
            .unwrap_or(analysis.format);
        egui::ComboBox::from_label("column")
            .selected_text(format.title())
            .show_ui(ui, |ui| {
                for c in &analysis.columns {
                    ui.selectable_value(
                        &mut self.windows.save.format,
                        Some(c.format),
                        c.format.title(),
                    );
                }
            });
        let label = ui.label("Save to");
        ui.add(
            egui::TextEdit::singleline(&mut self.windows.save.path)
                .hint_text(format!("out.{}", format.extension()))
                .desired_width(360.0),
        )
        .labelled_by(label.id);
        ui.horizontal(|ui| {
            if ui.button("Choose…").clicked() {
                match super::dialogs::pick(|| {
                    rfd::FileDialog::new()
                        .set_file_name(format!("payload.{}", format.extension()))
                        .save_file()
                }) {
                    super::dialogs::Picked::Chosen(p) => {
                        self.windows.save.path = p.display().to_string();
                    }
                    super::dialogs::Picked::Cancelled => {}
                    super::dialogs::Picked::Unavailable => {
                        self.status = Some(Status::Error(super::dialogs::NO_DIALOG.to_string()));
                    }
                }
            }
            let Some(column) = analysis.column(format) else {
                return;
            };
            if ui
                .add_enabled(
                    !self.windows.save.path.trim().is_empty(),
                    egui::Button::new("Save"),
                )
                .clicked()
            {
                let path = PathBuf::from(self.windows.save.path.trim());
                self.status = Some(match crate::files::write_atomically(&path, &column.bytes) {
                    Ok(()) => Status::Info(format!(
                        "saved {} bytes of {} to {}",
                        column.bytes.len(),
                        format.title(),
                        path.display()
                    )),
                    Err(e) => Status::Error(format!("cannot write {}: {e}", path.display())),
                });
                self.windows.save.open = false;
            }
        });
    }
}
