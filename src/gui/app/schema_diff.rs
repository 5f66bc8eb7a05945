//! The schema diff view: two versions of one protobuf message type compared for wire and
//! proto3 JSON compatibility ([`crate::diff::schema::diff_messages`], `wirelens diff-schema`),
//! one row per field change with its verdict's colour; or two versions of an Avro schema
//! compared by the specification's resolution rules ([`crate::codec::avro::compat::compare`]):
//! backward, forward and full verdicts, and each change with the direction it breaks.
//!
//! Each version is a schema file typed as a path (`.proto`, a descriptor set or `.avsc`; native
//! dialogs are not needed) or one of the schemas the app has loaded. What it does not do: decide
//! anything. The verdicts come from the core; this file loads, draws and reports errors.

use eframe::egui;

use super::App;
use crate::codec::avro::compat::{self, Comparison};
use crate::codec::avro::AvroSchema;
use crate::codec::protobuf::MessageDescriptor;
use crate::diff::schema::{diff_messages, load_version, summary, SchemaChange, Verdict};

/// Where one version comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionSource {
    /// The path typed in its field.
    #[default]
    Path,
    /// The app's loaded protobuf schema at this index.
    Loaded(usize),
    /// The app's loaded Avro schema at this index.
    LoadedAvro(usize),
}

/// What a comparison found.
#[derive(Debug, Clone)]
pub enum Compared {
    /// Two protobuf versions of a message type: the field changes.
    Protobuf(Vec<SchemaChange>),
    /// Two Avro schemas: the verdicts and changes.
    Avro(Comparison),
}

/// The view's state: both versions' sources and paths, the message type, the outcome.
#[derive(Default)]
pub struct SchemaDiffView {
    /// Where the old (A) and new (B) versions come from.
    pub sources: [VersionSource; 2],
    /// The paths typed for the old and new versions.
    pub paths: [String; 2],
    /// The message type to compare (full name, or a short name only one type has).
    pub message: String,
    /// The last comparison: what it found, or why it could not be made.
    pub outcome: Option<Result<Compared, String>>,
}

impl SchemaDiffView {
    /// The last protobuf comparison's changes, when it was made.
    pub fn changes(&self) -> Option<&[SchemaChange]> {
        match self.outcome.as_ref()?.as_ref().ok()? {
            Compared::Protobuf(changes) => Some(changes),
            Compared::Avro(_) => None,
        }
    }

    /// The last Avro comparison, when it was made.
    pub fn avro(&self) -> Option<&Comparison> {
        match self.outcome.as_ref()?.as_ref().ok()? {
            Compared::Avro(c) => Some(c),
            Compared::Protobuf(_) => None,
        }
    }

    /// Whether version `k` is an Avro schema: a loaded one, or a path ending in `.avsc`.
    fn is_avro(&self, k: usize) -> bool {
        match self.sources[k] {
            VersionSource::LoadedAvro(_) => true,
            VersionSource::Loaded(_) => false,
            VersionSource::Path => self.paths[k].trim().to_ascii_lowercase().ends_with(".avsc"),
        }
    }
}

/// A verdict's background colour: red breaks the wire, orange leaves a number free, yellow
/// breaks JSON, green is compatible.
pub fn verdict_bg(verdict: Verdict, dark: bool) -> egui::Color32 {
    use egui::Color32;
    match (verdict, dark) {
        (Verdict::WireBreaking, false) => Color32::from_rgb(0xff, 0xc4, 0xc4),
        (Verdict::WireBreaking, true) => Color32::from_rgb(0x6a, 0x20, 0x24),
        (Verdict::NotReserved, false) => Color32::from_rgb(0xff, 0xd8, 0xa8),
        (Verdict::NotReserved, true) => Color32::from_rgb(0x5e, 0x3a, 0x12),
        (Verdict::JsonBreaking, false) => Color32::from_rgb(0xff, 0xf0, 0xa0),
        (Verdict::JsonBreaking, true) => Color32::from_rgb(0x52, 0x4a, 0x14),
        (Verdict::Compatible, false) => Color32::from_rgb(0xcc, 0xef, 0xcc),
        (Verdict::Compatible, true) => Color32::from_rgb(0x1f, 0x4d, 0x2a),
    }
}

impl App {
    /// The schema diff view's state.
    pub fn schema_diff_view(&self) -> &SchemaDiffView {
        &self.schema_diff
    }

    /// Loads both versions and compares them; the outcome is shown in the view.
    pub fn compare_schemas(&mut self) {
        let v = &self.schema_diff;
        let message = v.message.trim().to_string();
        let outcome = match (v.is_avro(0), v.is_avro(1)) {
            (true, true) => self
                .avro_version(0)
                .and_then(|old| Ok((old, self.avro_version(1)?)))
                .map(|(old, new)| Compared::Avro(compat::compare(old.root(), new.root()))),
            (true, false) | (false, true) => {
                Err("one version is an Avro schema and the other is not".to_string())
            }
            _ if message.is_empty() => {
                Err("name the message type to compare (pkg.Name)".to_string())
            }
            _ => self
                .schema_version(0, &message)
                .and_then(|old| Ok((old, self.schema_version(1, &message)?)))
                .map(|(old, new)| Compared::Protobuf(diff_messages(&old, &new))),
        };
        self.schema_diff.outcome = Some(outcome);
    }

    /// Avro version `k` (0 old, 1 new), from its source.
    fn avro_version(&self, k: usize) -> Result<AvroSchema, String> {
        let which = if k == 0 { "old" } else { "new" };
        match self.schema_diff.sources[k] {
            VersionSource::LoadedAvro(i) => self
                .ws
                .schemas
                .avro
                .get(i)
                .map(|a| a.schema.clone())
                .ok_or_else(|| format!("the {which} version's schema is no longer loaded")),
            _ => AvroSchema::from_file(std::path::Path::new(self.schema_diff.paths[k].trim()))
                .map_err(|e| e.to_string()),
        }
    }

    /// Version `k` (0 old, 1 new) of `message`, from its source.
    fn schema_version(&self, k: usize, message: &str) -> Result<MessageDescriptor, String> {
        let which = if k == 0 { "old" } else { "new" };
        match self.schema_diff.sources[k] {
            VersionSource::Path => {
                let path = self.schema_diff.paths[k].trim();
                if path.is_empty() {
                    return Err(format!("type the {which} version's schema file"));
                }
                load_version(std::path::Path::new(path), &[], message).map_err(|e| e.to_string())
            }
            VersionSource::LoadedAvro(_) => Err(format!("the {which} version is an Avro schema")),
            VersionSource::Loaded(i) => {
                let loaded =
                    self.ws.schemas.loaded.get(i).ok_or_else(|| {
                        format!("the {which} version's schema is no longer loaded")
                    })?;
                loaded
                    .schema
                    .message(message)
                    .map_err(|e| format!("{}: {e}", loaded.label))
            }
        }
    }

    /// The schema diff view (the main area's fourth face).
    pub(super) fn schema_diff_area(&mut self, ui: &mut egui::Ui) {
        let labels: Vec<String> = self
            .ws
            .schemas
            .loaded
            .iter()
            .map(|l| l.label.clone())
            .collect();
        let avro_labels: Vec<String> = self
            .ws
            .schemas
            .avro
            .iter()
            .map(|a| a.label.clone())
            .collect();
        let mut go = false;
        egui::Grid::new("schema-diff-inputs")
            .num_columns(3)
            .spacing([8.0, 4.0])
            .show(ui, |ui| {
                for (k, title) in [(0, "Old version (A)"), (1, "New version (B)")] {
                    let label = ui.label(title);
                    let source = &mut self.schema_diff.sources[k];
                    let shown = match *source {
                        VersionSource::Path => "schema file below".to_string(),
                        VersionSource::Loaded(i) => labels.get(i).cloned().unwrap_or_default(),
                        VersionSource::LoadedAvro(i) => {
                            avro_labels.get(i).cloned().unwrap_or_default()
                        }
                    };
                    egui::ComboBox::from_id_salt(("schema-diff-source", k))
                        .selected_text(shown)
                        .width(200.0)
                        .show_ui(ui, |ui| {
                            ui.selectable_value(source, VersionSource::Path, "schema file below");
                            for (i, l) in labels.iter().enumerate() {
                                ui.selectable_value(source, VersionSource::Loaded(i), l);
                            }
                            for (i, l) in avro_labels.iter().enumerate() {
                                ui.selectable_value(source, VersionSource::LoadedAvro(i), l);
                            }
                        });
                    let enabled = self.schema_diff.sources[k] == VersionSource::Path;
                    let r = ui
                        .add_enabled(
                            enabled,
                            egui::TextEdit::singleline(&mut self.schema_diff.paths[k])
                                .hint_text(if k == 0 {
                                    "/path/v1.proto or v1.avsc"
                                } else {
                                    "/path/v2.proto or v2.avsc"
                                })
                                .desired_width(360.0),
                        )
                        .labelled_by(label.id);
                    go |= r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                    ui.end_row();
                }
                let label = ui.label("Message (protobuf)");
                let r = ui
                    .add(
                        egui::TextEdit::singleline(&mut self.schema_diff.message)
                            .hint_text("pkg.Name")
                            .desired_width(200.0),
                    )
                    .labelled_by(label.id);
                go |= r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                go |= ui.button("Compare schemas").clicked();
                ui.end_row();
            });
        if go {
            self.compare_schemas();
        }
        ui.separator();
        let dark = ui.visuals().dark_mode;
        match &self.schema_diff.outcome {
            None => {
                ui.weak(
                    "Two versions of a message type, compared field by field by number: can a \
                     reader of one read what a writer of the other wrote, on the wire and in \
                     proto3 JSON? Or two versions of an Avro schema (.avsc), by the \
                     specification's resolution rules. (`wirelens diff-schema`)",
                );
            }
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("cannot compare: {e}"));
            }
            Some(Ok(Compared::Avro(c))) => avro_comparison(ui, c, dark),
            Some(Ok(Compared::Protobuf(changes))) => {
                ui.strong(summary(changes));
                ui.horizontal_wrapped(|ui| {
                    for v in [
                        Verdict::WireBreaking,
                        Verdict::NotReserved,
                        Verdict::JsonBreaking,
                        Verdict::Compatible,
                    ] {
                        let (r, _) =
                            ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                        ui.painter().rect_filled(r, 2.0, verdict_bg(v, dark));
                        ui.label(v.name());
                    }
                });
                ui.add_space(4.0);
                egui::ScrollArea::both()
                    .id_salt("schema-diff-rows")
                    .auto_shrink([false, false])
                    .show(ui, |ui| change_table(ui, changes, dark));
            }
        }
    }
}

/// The widest the "what changed" column grows before its text wraps.
const WHAT_WIDTH: f32 = 380.0;

/// One row per change: verdict (coloured), message, number, both versions' name and type,
/// reserved, what.
fn change_table(ui: &mut egui::Ui, changes: &[SchemaChange], dark: bool) {
    egui::Grid::new("schema-diff-table")
        .num_columns(9)
        .striped(true)
        .spacing([12.0, 4.0])
        .show(ui, |ui| {
            for h in [
                "verdict",
                "message",
                "number",
                "old field",
                "old type",
                "new field",
                "new type",
                "reserved",
                "what changed",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            let field = |f: &Option<crate::diff::schema::FieldVersion>| {
                f.as_ref().map_or(("—".to_string(), "—".to_string()), |f| {
                    let name = if f.json_name == f.name {
                        f.name.clone()
                    } else {
                        format!("{} (JSON {})", f.name, f.json_name)
                    };
                    (name, f.kind.clone())
                })
            };
            for c in changes {
                let text = egui::RichText::new(c.verdict.name())
                    .background_color(verdict_bg(c.verdict, dark))
                    .strong();
                ui.label(text);
                ui.label(&c.message);
                ui.label(c.number.to_string());
                let (on, ot) = field(&c.old);
                let (nn, nt) = field(&c.new);
                ui.label(on);
                ui.label(ot);
                ui.label(nn);
                ui.label(nt);
                // A removed field's number: reserved by the new version or not; an added
                // field's: reserved by the old one (a reuse) or not (nothing to say).
                ui.label(match (&c.old, &c.new, c.reserved) {
                    (Some(_), None, true) => "reserved",
                    (Some(_), None, false) => "not reserved",
                    (None, Some(_), true) => "was reserved",
                    _ => "",
                });
                // The explanation wraps at a readable width rather than running off the side.
                ui.scope(|ui| {
                    ui.set_max_width(WHAT_WIDTH);
                    ui.add(egui::Label::new(&c.what).wrap());
                });
                ui.end_row();
            }
        });
}

/// An Avro comparison: the three verdicts, then one row per change with the direction it
/// breaks (red) or "compatible" (green).
fn avro_comparison(ui: &mut egui::Ui, c: &Comparison, dark: bool) {
    let verdict = |v: &compat::Verdict| match v {
        compat::Verdict::Compatible => ("compatible".to_string(), Verdict::Compatible),
        compat::Verdict::Incompatible(b) => (format!("incompatible: {b}"), Verdict::WireBreaking),
    };
    for (name, v) in [
        ("Backward (new reads old)", &c.backward),
        ("Forward (old reads new)", &c.forward),
        ("Full", &c.full()),
    ] {
        let (text, colour) = verdict(v);
        ui.horizontal_wrapped(|ui| {
            ui.strong(name);
            ui.label(egui::RichText::new(text).background_color(verdict_bg(colour, dark)));
        });
    }
    ui.add_space(4.0);
    egui::ScrollArea::both()
        .id_salt("schema-diff-avro-rows")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            egui::Grid::new("schema-diff-avro-table")
                .num_columns(4)
                .striped(true)
                .spacing([12.0, 4.0])
                .show(ui, |ui| {
                    for h in ["where", "what changed", "backward", "forward"] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for change in &c.changes {
                        ui.label(&change.path);
                        ui.scope(|ui| {
                            ui.set_max_width(WHAT_WIDTH);
                            ui.add(egui::Label::new(&change.what).wrap());
                        });
                        for b in [&change.backward, &change.forward] {
                            let (text, colour) = match b {
                                Some(b) => (format!("breaks: {}", b.reason), Verdict::WireBreaking),
                                None => ("compatible".to_string(), Verdict::Compatible),
                            };
                            ui.scope(|ui| {
                                ui.set_max_width(WHAT_WIDTH);
                                ui.add(
                                    egui::Label::new(
                                        egui::RichText::new(text)
                                            .background_color(verdict_bg(colour, dark)),
                                    )
                                    .wrap(),
                                );
                            });
                        }
                        ui.end_row();
                    }
                });
        });
}
