//! The main area: the detection line with its overrides, the columns side by side (header,
//! fidelity notes, hex view, tree view), the data inspector and the status bar.

use std::cell::Cell;

use eframe::egui;

use super::field_readings;
use super::Status;

use super::{App, Command, Hover, Settings};
use crate::codec::{self, EncodeOptions, Format};
use crate::model::{ByteRole, NodeId, Path, Span};
use crate::workspace::{Analysis, Column, ProtoMode, Stage};

use super::super::widgets::{self, thousands, HexInput, TreeInput};

/// A click in a column: its format, the path of the field clicked (if any) and, for a byte of
/// the hex view, its offset.
struct ColumnClick {
    format: Format,
    path: Option<Path>,
    offset: Option<usize>,
}

/// The width of the handle between two columns, and between a column's hex view and its tree.
const GAP: f32 = 8.0;

/// What the user did with a split handle.
enum Split {
    /// Dragged it by this many points (along the direction it separates).
    Moved(f32),
    /// Double-clicked it: back to the default split.
    Reset,
}

/// A handle between two parts of a split (`LeftToRight`: columns side by side; `TopDown`: one
/// above the other): a line that highlights under the pointer, dragged to resize and
/// double-clicked to reset.
fn split_handle(
    ui: &mut egui::Ui,
    rect: egui::Rect,
    id: egui::Id,
    dir: egui::Direction,
) -> Option<Split> {
    let r = ui.interact(rect, id, egui::Sense::click_and_drag());
    let horizontal = dir == egui::Direction::LeftToRight;
    let r = r.on_hover_cursor(if horizontal {
        egui::CursorIcon::ResizeHorizontal
    } else {
        egui::CursorIcon::ResizeVertical
    });
    let active = r.hovered() || r.dragged();
    let stroke = if active {
        ui.visuals().widgets.active.fg_stroke
    } else {
        ui.visuals().widgets.noninteractive.bg_stroke
    };
    if horizontal {
        ui.painter().vline(rect.center().x, rect.y_range(), stroke);
    } else {
        ui.painter().hline(rect.x_range(), rect.center().y, stroke);
    }
    if r.double_clicked() {
        return Some(Split::Reset);
    }
    let d = r.drag_delta();
    let d = if horizontal { d.x } else { d.y };
    (r.dragged() && d != 0.0).then_some(Split::Moved(d))
}

/// Moves the split after column `i` by `d` (a share of the width): the columns on the side it
/// moves into shrink in turn, nearest first, each down to `min`; the column on the other side
/// grows by what they gave.
fn move_split(shares: &mut [f32], i: usize, d: f32, min: f32) {
    let (grow, order): (usize, Vec<usize>) = if d > 0.0 {
        (i, (i + 1..shares.len()).collect())
    } else {
        (i + 1, (0..=i).rev().collect())
    };
    let mut want = d.abs();
    let mut given = 0.0;
    for j in order {
        if want <= 0.0 {
            break;
        }
        let take = (shares[j] - min).clamp(0.0, want);
        shares[j] -= take;
        want -= take;
        given += take;
    }
    if let Some(s) = shares.get_mut(grow) {
        *s += given;
    }
}

/// The narrowest a column gets: 4 bytes of hex per row with their ASCII, and its scroll bar.
/// The most of the window's height the data inspector takes.
const INSPECTOR_SHARE: f32 = 0.34;

fn min_column_width(ui: &egui::Ui) -> f32 {
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let char_w = ui.fonts_mut(|f| f.glyph_width(&font, '0'));
    widgets::hex_view::row_width(char_w, 4, 0, false) + 16.0
}

/// The tooltip for a node: path, type, value, byte range.
fn describe(column: &Column, id: NodeId, role: ByteRole) -> String {
    let Some(doc) = &column.document else {
        return String::new();
    };
    let node = doc.spans.node(id);
    let path = doc.spans.path(id);
    let value = doc.summary(id, 60).unwrap_or_default();
    let extent = node.extent();
    format!(
        "{path}\n{} {value}\nbytes {}..{} ({} bytes), this byte: {}",
        node.kind,
        extent.start,
        extent.end,
        extent.len(),
        role.name()
    )
}

impl App {
    pub(super) fn status_bar(&mut self, ui: &mut egui::Ui, analysis: Option<&Analysis>) {
        // What is shown before the analysis is ready is its preview: decoded, not yet encoded.
        let encoded = self.ws.analysis().is_some();
        egui::Panel::bottom("status").show(ui, |ui| {
            ui.horizontal(|ui| {
                if let Some((fraction, stage)) = self.ws.progress() {
                    ui.add(
                        egui::ProgressBar::new(fraction)
                            .desired_width(160.0)
                            .text(stage),
                    );
                    if ui.button("Cancel").clicked() {
                        self.push(Command::CancelReading);
                    }
                }
                match &self.hover {
                    Some(h) => {
                        let col = h.format.map_or("source", |f| f.title());
                        let what = match &h.node {
                            Some((p, role)) => format!("{p} ({})", role.name()),
                            None => "no field".into(),
                        };
                        ui.label(format!(
                            "{col} byte {} (0x{:x}): {what}",
                            h.offset, h.offset
                        ));
                    }
                    None => {
                        if let Some(a) = analysis {
                            let done = if encoded {
                                "decoded and encoded"
                            } else {
                                "decoded"
                            };
                            ui.weak(format!("{done} in {} ms", a.elapsed.as_millis()));
                        }
                    }
                }
            });
        });
    }

    /// The data inspector: a panel as tall as what it shows this time (one line when collapsed
    /// or with no byte chosen), not as tall as it ever was.
    pub(super) fn bottom_panel(&mut self, ui: &mut egui::Ui, analysis: Option<&Analysis>) {
        // The content's height is measured as it is drawn and the panel gets exactly that the
        // next frame (egui's panels only grow). The hex views centre a selection on the height
        // they are given in the frame they draw it, so a panel growing under them is harmless.
        let margin = egui::Frame::side_top_panel(ui.style())
            .total_margin()
            .sum()
            .y;
        // In a short window it takes at most a third of the height (its readings then scroll),
        // so the hex views and trees above keep their room; at least its title row and two
        // rows of readings stay in view.
        let row = ui.spacing().interact_size.y;
        let cap = (ui.available_height() * INSPECTOR_SHARE).max(3.0 * row);
        let height = self.inspector_content.max(row).min(cap) + margin;
        let mut content = 0.0;
        egui::Panel::bottom("inspector")
            .resizable(false)
            .exact_size(height)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("data-inspector-scroll")
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        // Measured in a scope of its own: its natural height, whatever the
                        // panel's.
                        content = ui
                            .scope(|ui| self.inspector_ui(ui, analysis))
                            .response
                            .rect
                            .height();
                    });
            });
        if (content - self.inspector_content).abs() > 0.5 {
            self.inspector_content = content;
            ui.ctx().request_repaint();
        }
    }

    fn inspector_ui(&mut self, ui: &mut egui::Ui, analysis: Option<&Analysis>) {
        let Some(a) = analysis else {
            ui.weak("data inspector: waiting for the decoded payload");
            return;
        };
        let Some(format) = self.here.focus else {
            return;
        };
        let Some(column) = a.column(format) else {
            return;
        };
        let cursor = self.here.views.get(&format).and_then(|v| v.hex.cursor());
        let mut jump = None;
        let mut open = self.settings.inspector_open;
        ui.horizontal_wrapped(|ui| {
            let title = format!("Data inspector · {}", format.title());
            if ui
                .add(egui::Button::selectable(
                    open,
                    egui::RichText::new(title).strong(),
                ))
                .on_hover_text(if open { "collapse" } else { "expand" })
                .clicked()
            {
                open = !open;
            }
            jump = widgets::goto_offset(ui, &mut self.here.goto_text, column.bytes.len());
            if let (Some(offset), false) = (cursor, open) {
                ui.weak(format!("at offset {offset} (0x{offset:x})"));
            }
        });
        if open {
            match cursor {
                Some(offset) => widgets::data_inspector(ui, &column.bytes, offset),
                None => widgets::data_inspector_waiting(ui),
            }
        }
        self.settings.inspector_open = open;
        if let Some(offset) = jump {
            if let Some(v) = self.here.views.get_mut(&format) {
                v.hex.scroll_to(offset);
                v.hex.set_cursor(offset);
            }
        }
    }

    pub(super) fn main_area(&mut self, ui: &mut egui::Ui, analysis: Option<&Analysis>) {
        let Some(entry) = self.ws.entry() else { return };
        let source = entry.source.clone();
        if let Some(why) = entry.opened.ready().and_then(|o| o.nothing.clone()) {
            // A capture without a payload: say why, not the capture file's bytes.
            ui.strong(format!("{}: no payload to decode", source.name()));
            ui.label(why);
            return;
        }
        match (&entry.analysis, analysis) {
            (_, Some(a)) if a.verdict.is_some() && a.columns.is_empty() => self.verdict_view(ui, a),
            (_, Some(a)) => {
                self.detection_line(ui, a);
                self.selection_line(ui, a);
                ui.separator();
                self.columns(ui, a);
            }
            (Stage::Failed(e), None) => {
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    format!("could not read this source: {e}"),
                );
                self.plain_hex(ui, source.bytes());
            }
            _ => {
                // Not decoded yet: the bytes are there already (mapped for large files).
                ui.horizontal(|ui| {
                    crate::gui::widgets::spinner(ui);
                    ui.label(format!(
                        "reading {} ({} bytes)… the hex view works meanwhile",
                        source.name(),
                        thousands(source.len())
                    ));
                });
                self.plain_hex(ui, source.bytes());
            }
        }
    }

    /// A payload that is no data format (text, encrypted records): the verdict, a way to read it
    /// as a format anyway, and for text the text itself.
    fn verdict_view(&mut self, ui: &mut egui::Ui, a: &Analysis) {
        /// Bytes of a text payload shown (the rest is left out, with a note).
        const SHOWN: usize = 1 << 20;
        let Some(verdict) = &a.verdict else { return };
        let payload = self.ws.entry().and_then(|e| {
            let opened = e.opened.ready()?;
            opened.payloads.get(e.payload).cloned()
        });
        ui.strong(verdict.sentence());
        ui.horizontal_wrapped(|ui| {
            ui.label(format!(
                "layers: {}",
                payload
                    .as_ref()
                    .map_or_else(|| "raw bytes".into(), |p| p.provenance())
            ));
            ui.separator();
            let mut choice = None;
            egui::ComboBox::from_label("read as")
                .selected_text("no format")
                .show_ui(ui, |ui| {
                    for f in Format::ALL {
                        ui.selectable_value(&mut choice, Some(f), f.title());
                    }
                });
            if choice.is_some() {
                self.push(super::Command::ReadAs(choice));
            }
        });
        ui.separator();
        let Some(payload) = payload else {
            return;
        };
        let bytes = payload.bytes.as_slice();
        if let crate::capture::verdict::Verdict::Text { .. } = verdict {
            // The text, then its bytes: what a text message or body is, and what it was sent as.
            let mut text =
                String::from_utf8_lossy(bytes.get(..SHOWN).unwrap_or(bytes)).into_owned();
            if bytes.len() > SHOWN {
                ui.weak(format!(
                    "the first {} of {} bytes",
                    thousands(SHOWN),
                    thousands(bytes.len())
                ));
            }
            egui::ScrollArea::both()
                .id_salt("verdict text")
                .max_height(ui.available_height() / 2.0)
                .show(ui, |ui| {
                    ui.add(
                        egui::TextEdit::multiline(&mut text)
                            .code_editor()
                            .interactive(false)
                            .desired_width(f32::INFINITY),
                    );
                });
            ui.separator();
        }
        // Every payload with a verdict shows its bytes: a DNS query or TLS records are still
        // bytes a user may want to read.
        self.plain_hex(ui, bytes);
    }

    fn plain_hex(&mut self, ui: &mut egui::Ui, bytes: &[u8]) {
        let input = HexInput {
            bytes,
            spans: None,
            selected: None,
            error_at: None,
            marks: &[],
            describe: &|_, _| String::new(),
        };
        let r = self.here.raw_hex.show(ui, &input);
        if let Some((offset, _)) = r.hovered {
            self.hover = Some(Hover {
                format: None,
                offset,
                node: None,
            });
        }
    }

    fn detection_line(&mut self, ui: &mut egui::Ui, a: &Analysis) {
        let provenance = self.ws.entry().and_then(|e| {
            let opened = e.opened.ready()?;
            opened.payloads.get(e.payload).map(|p| p.provenance())
        });
        let best = a.readings.first();
        ui.horizontal_wrapped(|ui| {
            let reading = a.readings.iter().find(|r| r.format == a.format);
            if !a.overridden && reading.is_some_and(|r| !r.is_claim()) {
                // No format reads the payload: that is the answer, and the best partial
                // reading stays below for what it shows.
                ui.strong("No known format");
                ui.label(format!(
                    "no format reads the whole payload; shown: the best partial reading, {} ({}%): {}",
                    a.format.title(),
                    reading.map_or(0, |r| r.confidence),
                    reading.map(|r| r.reasons.join("; ")).unwrap_or_default()
                ));
                return;
            }
            ui.strong(format!(
                "Read as {} ({}%){}",
                a.format.title(),
                reading.map_or(0, |r| r.confidence),
                if a.overridden { ", your choice" } else { "" }
            ));
            if let Some(r) = reading {
                ui.label(r.reasons.join("; "));
            }
        });
        if a.format == Format::Avro || a.avro_resolution.is_some() {
            self.avro_reader_row(ui, a);
        }
        ui.horizontal_wrapped(|ui| {
            ui.label(format!(
                "layers: {}",
                provenance.unwrap_or_else(|| "raw bytes".into())
            ));
            ui.separator();
            let current = self.ws.entry().and_then(|e| e.choice.format);
            let mut choice = current;
            egui::ComboBox::from_label("read as")
                .selected_text(match choice {
                    None => format!("best ({})", best.map_or("?", |r| r.format.title())),
                    Some(f) => f.title().to_string(),
                })
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut choice, None, "best reading");
                    for r in &a.readings {
                        ui.selectable_value(
                            &mut choice,
                            Some(r.format),
                            format!("{} ({}%)", r.format.title(), r.confidence),
                        );
                    }
                });
            if choice != current {
                self.push(super::Command::ReadAs(choice));
            }
            ui.separator();
            let mode = self
                .ws
                .entry()
                .map(|e| e.choice.proto.clone())
                .unwrap_or_default();
            let mode_text = match (&mode, &a.message) {
                (ProtoMode::Auto, Some(m)) => format!("protobuf: best match {m}"),
                (ProtoMode::Auto, None) => "protobuf: no schema / inferred".to_string(),
                (m, _) => format!("protobuf: {}", m.label()),
            };
            ui.menu_button(mode_text, |ui| {
                for m in [ProtoMode::Auto, ProtoMode::SchemaLess] {
                    if ui.radio(mode == m, m.label()).clicked() {
                        self.push(super::Command::SetProtoMode(m));
                    }
                }
                ui.separator();
                if !a.candidates.is_empty() {
                    ui.strong("best matching message types");
                    for c in a.candidates.iter().take(8) {
                        let label = format!("{} ({}%)", c.message, c.score);
                        if ui
                            .button(label)
                            .on_hover_text(c.reasons.join("; "))
                            .clicked()
                        {
                            self.ws
                                .set_proto_mode(ProtoMode::Message(c.message.clone()));
                            ui.close();
                        }
                    }
                    ui.separator();
                }
                self.message_picker(ui);
            });
        });
        for w in &a.warnings {
            ui.colored_label(ui.visuals().warn_fg_color, w);
        }
    }

    /// Avro: the reader's schema chosen among the loaded ones, and with one, both schemas'
    /// names and the rule of the specification's schema resolution that reads each field.
    fn avro_reader_row(&mut self, ui: &mut egui::Ui, a: &Analysis) {
        let labels: Vec<String> = self
            .ws
            .schemas
            .avro
            .iter()
            .map(|l| l.label.clone())
            .collect();
        let current = self
            .ws
            .schemas
            .avro_reader
            .as_ref()
            .and_then(|r| self.ws.schemas.avro.iter().position(|l| &l.schema == r));
        ui.horizontal_wrapped(|ui| {
            let mut choice = current;
            egui::ComboBox::from_label("Avro reader's schema")
                .selected_text(match choice {
                    None => "none: read by the writer's schema".to_string(),
                    Some(i) => labels.get(i).cloned().unwrap_or_default(),
                })
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut choice, None, "none: read by the writer's schema");
                    for (i, l) in labels.iter().enumerate() {
                        ui.selectable_value(&mut choice, Some(i), l);
                    }
                });
            if choice != current {
                self.push(Command::SetAvroReader(choice));
            }
            if labels.is_empty() {
                ui.weak("load an .avsc (Schema ▸ Load or Paste) to read with another version");
            }
        });
        let Some(r) = &a.avro_resolution else {
            return;
        };
        match &r.rules {
            Ok(rules) => {
                egui::CollapsingHeader::new(format!(
                    "Schema resolution: written as {}, read as {} ({} rules)",
                    r.writer,
                    r.reader,
                    rules.len()
                ))
                .id_salt("avro-resolution")
                .show(ui, |ui| {
                    // Both schemas side by side, then the rule for each place.
                    ui.columns(2, |cols| {
                        for (k, (col, (title, text))) in cols
                            .iter_mut()
                            .zip([
                                (format!("writer's schema ({})", r.writer), &r.texts[0]),
                                (format!("reader's schema ({})", r.reader), &r.texts[1]),
                            ])
                            .enumerate()
                        {
                            col.strong(title);
                            egui::ScrollArea::both()
                                .id_salt(("avro-schema-text", k))
                                .max_height(140.0)
                                .show(col, |ui| ui.monospace(text.as_str()));
                        }
                    });
                    egui::ScrollArea::vertical()
                        .id_salt("avro-resolution-rules")
                        .max_height(180.0)
                        .show(ui, |ui| {
                            egui::Grid::new("avro-resolution-grid")
                                .num_columns(2)
                                .striped(true)
                                .show(ui, |ui| {
                                    for (place, rule) in rules {
                                        ui.monospace(place);
                                        ui.label(rule);
                                        ui.end_row();
                                    }
                                });
                        });
                });
            }
            Err(e) => {
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    format!("{} cannot read what {} wrote: {e}", r.reader, r.writer),
                );
            }
        }
    }

    fn selection_line(&mut self, ui: &mut egui::Ui, a: &Analysis) {
        ui.horizontal_wrapped(|ui| {
            let label = ui.label("Selected path");
            let r = ui
                .add(
                    egui::TextEdit::singleline(&mut self.here.select_text)
                        .hint_text("$.data[0].id — or click a byte or field")
                        .desired_width(260.0),
                )
                .labelled_by(label.id);
            if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                let text = self.here.select_text.trim().to_string();
                match Path::parse(&text) {
                    Ok(p) => {
                        self.status = None;
                        self.push(super::Command::Select(Some(p)));
                    }
                    Err(e) => {
                        self.status =
                            Some(Status::Error(format!("not a path: {text}: {}", e.message)));
                    }
                }
            }
            let Some(path) = self.ws.selected.clone() else {
                return;
            };
            if let Some((words, _)) = a.avro_rule(&path) {
                ui.separator();
                ui.label(format!("read by: {words}")).on_hover_text(
                    "the schema-resolution rule that read this value from the writer's data",
                );
            }
            let Some(format) = self.here.focus else {
                return;
            };
            let Some(column) = a.column(format) else {
                return;
            };
            let Some(extent) = column.extent(&path) else {
                return;
            };
            let bytes = column.bytes.get(extent.range()).unwrap_or_default();
            ui.separator();
            ui.label(format!("copy from {}:", format.title()));
            if ui.button("hex").clicked() {
                let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
                ui.ctx().copy_text(hex.join(" "));
            }
            if ui.button("base64").clicked() {
                use base64::Engine as _;
                ui.ctx()
                    .copy_text(base64::engine::general_purpose::STANDARD.encode(bytes));
            }
            if ui.button("JSON").clicked() {
                // As the JSON column writes it (its field names), else from the shared value.
                let json = a.json_at(&path).or_else(|| {
                    let id = column.resolve(&path)?;
                    let doc = column.document.as_ref()?;
                    let v = doc.value_at(id)?;
                    let options = EncodeOptions {
                        pretty: true,
                        ..EncodeOptions::default()
                    };
                    let enc = codec::encode(&v, Format::Json, &options).ok()?;
                    Some(String::from_utf8_lossy(&enc.bytes).into_owned())
                });
                if let Some(json) = json {
                    ui.ctx().copy_text(json);
                }
            }
        });
    }

    fn columns(&mut self, ui: &mut egui::Ui, a: &Analysis) {
        let shown: Vec<&Column> = match self.settings.single_format() {
            // A payload that did not decode has nothing to show in another format: its source
            // column, with the error and the partial tree, comes first.
            Some(f) => {
                let failed = a.source().filter(|s| s.error.is_some() && s.format != f);
                failed.into_iter().chain(a.column(f)).collect()
            }
            // The payload's own format is always shown, even where its column is hidden (an
            // Avro payload while the Avro column is off).
            None => {
                let source = a.source().map(|s| s.format);
                self.settings
                    .column_order()
                    .into_iter()
                    .filter(|(f, shown)| *shown || Some(*f) == source)
                    .filter_map(|(f, _)| a.column(f))
                    .collect()
            }
        };
        if shown.is_empty() {
            ui.weak("every column is hidden (View > Columns)");
            return;
        }
        let mut clicked: Option<ColumnClick> = None;
        let mut hover = None;
        let formats: Vec<Format> = shown.iter().map(|c| c.format).collect();
        let mut shares = self.settings.column_shares(&formats);
        let full = ui.available_rect_before_wrap();
        let n = shown.len();
        let gaps = GAP * (n - 1) as f32;
        // Each column is at least wide enough for 4 bytes of hex; when the window is narrower
        // than that, the columns scroll sideways instead of being cut.
        let min_w = min_column_width(ui);
        let width = (full.width() - gaps).max(min_w * n as f32);
        let mut changed = false;
        egui::ScrollArea::horizontal()
            .id_salt("columns-scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                let top = ui.max_rect().top();
                let mut x = ui.max_rect().left();
                let height = ui.available_height();
                for (i, column) in shown.iter().enumerate() {
                    let w = (width * shares[i]).max(min_w);
                    let rect = egui::Rect::from_min_size(egui::pos2(x, top), egui::vec2(w, height));
                    let builder = egui::UiBuilder::new()
                        .max_rect(rect)
                        .layout(egui::Layout::top_down(egui::Align::Min))
                        .id_salt(column.format.name());
                    ui.scope_builder(builder, |ui| {
                        // A widget wider than its column is cut at the column's edge, not drawn
                        // over the next one.
                        ui.shrink_clip_rect(rect);
                        let message = a
                            .message
                            .as_deref()
                            .and_then(|m| self.ws.schemas.message(m));
                        // The source's tree says which resolution rule read each node.
                        let rules = a.avro_rules.as_deref().filter(|_| column.is_source);
                        let (c, h) = self.column(ui, column, message.as_ref(), rules);
                        if c.is_some() {
                            clicked = c;
                        }
                        if h.is_some() {
                            hover = h;
                        }
                    });
                    x += w;
                    if i + 1 < n {
                        let handle =
                            egui::Rect::from_min_size(egui::pos2(x, top), egui::vec2(GAP, height));
                        let id = ui.scope_id().with(("column-split", i));
                        if let Some(d) = split_handle(ui, handle, id, egui::Direction::LeftToRight)
                        {
                            match d {
                                Split::Reset => shares = vec![1.0 / n as f32; n],
                                Split::Moved(dx) => {
                                    move_split(&mut shares, i, dx / width, min_w / width);
                                }
                            }
                            changed = true;
                        }
                        x += GAP;
                    }
                }
                ui.allocate_rect(
                    egui::Rect::from_min_max(
                        egui::pos2(ui.max_rect().left(), top),
                        egui::pos2(x, top + height),
                    ),
                    egui::Sense::hover(),
                );
            });
        if changed {
            self.settings.set_column_shares(&formats, &shares);
        }
        self.hover = hover;
        if let Some(ColumnClick {
            format,
            path,
            offset,
        }) = clicked
        {
            self.here.focus = Some(format);
            if path.is_some() && path != self.ws.selected {
                // The views move to the new field next frame; the byte clicked keeps the cursor.
                self.here.clicked_at = offset.map(|o| (format, o));
                self.push(super::Command::Select(path));
            }
        }
    }

    /// One column; returns a click (its format, the path clicked and, for a byte, its offset)
    /// and what is hovered. `message`: the type the payload was read as. Without one the
    /// protobuf source column's rows offer readings of their field (see [`field_readings`]);
    /// with one, a row's right-click shows its field's declaration (with the resolved
    /// features of an editions file).
    fn column(
        &mut self,
        ui: &mut egui::Ui,
        column: &Column,
        message: Option<&crate::codec::protobuf::MessageDescriptor>,
        rules: Option<&crate::codec::avro::resolved::NodeRules>,
    ) -> (Option<ColumnClick>, Option<Hover>) {
        let format = column.format;
        let readable = message.is_none() && column.is_source && format == Format::Protobuf;
        let readings = match self.ws.entry() {
            Some(e) if readable => e.choice.field_readings.clone(),
            _ => Vec::new(),
        };
        let chosen = Cell::new(None);
        self.column_title(ui, column);
        column_facts(ui, column);
        field_readings::in_force(ui, &readings, &chosen);
        if let Some(err) = &column.error {
            ui.colored_label(ui.visuals().error_fg_color, err.to_string());
        }
        // The selection in this column.
        let selected = self.ws.selected.as_ref();
        let selected_id = selected.and_then(|p| column.resolve(p));
        let selected_span =
            selected_id.and_then(|id| column.document.as_ref().map(|d| d.spans.node(id).extent()));
        selection_line(ui, format, selected, selected_span);
        let mut clicked = fidelity_notes(ui, column);
        let Some(view) = self.here.views.get_mut(&format) else {
            return (clicked, None);
        };
        let (hex_click, hover) = hex_part(ui, view, &mut self.settings, column, selected_span);
        clicked = hex_click.or(clicked);
        if let Some(doc) = &column.document {
            let menu = |ui: &mut egui::Ui, id: NodeId| {
                field_readings::menu(ui, &column.bytes, &doc.spans, id, &readings, &chosen);
            };
            let declaration = |ui: &mut egui::Ui, id: NodeId| {
                declaration_line(ui, message, &doc.spans.path(id));
            };
            let declared = message.is_some() && format == Format::Protobuf;
            let summary = |id, max_chars| doc.summary(id, max_chars);
            let read_by = |id| {
                let (words, plain) = rules?.rule(id)?;
                Some((words.to_string(), plain))
            };
            let input = TreeInput {
                summary: &summary,
                spans: &doc.spans,
                selected: selected_id,
                notes: &column.note_nodes,
                marks: &[],
                read_by: rules.is_some().then_some(&read_by as &widgets::ReadBy<'_>),
                row_menu: if readable {
                    Some(&menu as &widgets::RowMenu<'_>)
                } else if declared {
                    Some(&declaration as &widgets::RowMenu<'_>)
                } else {
                    None
                },
            };
            if let Some(id) = view.tree.show(ui, &input) {
                clicked = Some(ColumnClick {
                    format,
                    path: Some(doc.spans.path(id)),
                    offset: None,
                });
            }
        } else if !column.pending && !column.deferred {
            ui.weak("no tree: nothing decoded");
        }
        if let Some(command) = chosen.take() {
            self.push(command);
        }
        (clicked, hover)
    }

    /// A column's title (its format, "(source)" on the payload's own); a double-click shows it
    /// alone, full width, or all the columns again.
    fn column_title(&mut self, ui: &mut egui::Ui, column: &Column) {
        let format = column.format;
        let alone = self.settings.single_format() == Some(format);
        ui.horizontal_wrapped(|ui| {
            let title = if column.is_source {
                format!("{} (source)", format.title())
            } else {
                format.title().to_string()
            };
            let hint = if alone {
                "double-click: all columns side by side again"
            } else {
                "double-click: only this column, full width (16 bytes a hex row)"
            };
            let r = ui
                .add(
                    egui::Label::new(egui::RichText::new(title).heading())
                        .selectable(false)
                        .sense(egui::Sense::click()),
                )
                .on_hover_text(hint);
            if r.double_clicked() {
                self.push(super::Command::OnlyColumn((!alone).then_some(format)));
            }
        });
    }
}

/// Under a column's title: its sizes (raw, gzip, zstd; a spinner while it is encoded), the
/// schema it was written with and the encoding variant.
fn column_facts(ui: &mut egui::Ui, column: &Column) {
    let format = column.format;
    match column.sizes {
        None if column.pending || column.deferred => {
            ui.horizontal(|ui| {
                crate::gui::widgets::spinner(ui);
                ui.weak(format!("encoding as {}…", format.title()));
            })
            .response
        }
        Some(sizes) => ui.label(format!(
            "{} bytes · gzip {} · zstd {}",
            thousands(sizes.raw),
            thousands(sizes.gzip),
            thousands(sizes.zstd)
        )),
        None if column.is_measured() => ui.label(format!(
            "{} bytes · measuring gzip and zstd…",
            thousands(column.bytes.len())
        )),
        None => ui.weak("no bytes"),
    };
    if let Some(schema) = &column.schema {
        ui.weak(format!("schema: {schema}"));
    }
    if let Some(v) = column.variant {
        ui.weak(format!("written with {} (see the View menu)", v.name()));
    }
}

/// The selected field's path and bytes in a column, or that it is not there.
fn selection_line(ui: &mut egui::Ui, format: Format, selected: Option<&Path>, span: Option<Span>) {
    match (selected, span) {
        (Some(p), Some(s)) => {
            ui.label(format!(
                "{} · {p}: bytes {}..{} ({} bytes)",
                format.title(),
                s.start,
                s.end,
                s.len()
            ));
        }
        (Some(p), None) => {
            ui.weak(format!("{} · {p}: not in this column", format.title()));
        }
        (None, _) => {
            ui.weak("nothing selected");
        }
    }
}

/// A column's fidelity notes, folded; a click on one selects its field.
fn fidelity_notes(ui: &mut egui::Ui, column: &Column) -> Option<ColumnClick> {
    if column.notes.is_empty() {
        return None;
    }
    let mut clicked = None;
    egui::CollapsingHeader::new(match column.notes.len() {
        1 => "1 fidelity note".to_string(),
        n => format!("{n} fidelity notes"),
    })
    .id_salt("notes")
    .show(ui, |ui| {
        egui::ScrollArea::vertical()
            .id_salt("notes-scroll")
            .max_height(120.0)
            .show(ui, |ui| {
                for n in &column.notes {
                    let text = format!("{}: {n}", n.kind.label());
                    if ui.link(text).clicked() {
                        clicked = Some(ColumnClick {
                            format: column.format,
                            path: Some(n.path.clone()),
                            offset: None,
                        });
                    }
                }
            });
    });
    clicked
}

/// A column's hex view, in its share of the height, and the handle that splits it from the
/// tree; returns a click on a byte and what the pointer is over.
fn hex_part(
    ui: &mut egui::Ui,
    view: &mut super::ColumnView,
    settings: &mut Settings,
    column: &Column,
    selected: Option<Span>,
) -> (Option<ColumnClick>, Option<Hover>) {
    let format = column.format;
    let spans = column.document.as_ref().map(|d| &*d.spans);
    let describe = |id: NodeId, role: ByteRole| describe(column, id, role);
    let input = HexInput {
        bytes: &column.bytes,
        spans,
        selected,
        error_at: column.error.as_ref().and_then(|e| e.offset),
        marks: &[],
        describe: &describe,
    };
    // The hex view and the tree share the height as the user split it (the same split in
    // every column, so rows line up).
    let room = (ui.available_height() - GAP).max(160.0);
    let hex_height = (room * settings.hex_share.clamp(0.1, 0.9)).max(80.0);
    let r = ui
        .allocate_ui(egui::vec2(ui.available_width(), hex_height), |ui| {
            view.hex.show(ui, &input)
        })
        .inner;
    let handle = egui::Rect::from_min_size(
        egui::pos2(ui.max_rect().left(), ui.cursor().top()),
        egui::vec2(ui.max_rect().width(), GAP),
    );
    match split_handle(
        ui,
        handle,
        ui.scope_id().with("hex-tree-split"),
        egui::Direction::TopDown,
    ) {
        Some(Split::Moved(dy)) => {
            settings.hex_share = (settings.hex_share + dy / room).clamp(0.1, 0.9);
        }
        Some(Split::Reset) => settings.hex_share = Settings::default().hex_share,
        None => {}
    }
    ui.allocate_rect(handle, egui::Sense::hover());
    let path_of = |id: NodeId| spans.map(|s| s.path(id));
    let hover = r.hovered.map(|(offset, node)| Hover {
        format: Some(format),
        offset,
        node: node.and_then(|id| {
            let role = spans.and_then(|s| s.node_at(offset)).map(|(_, r)| r)?;
            Some((path_of(id)?, role))
        }),
    });
    let clicked = r.clicked.map(|(offset, node)| ColumnClick {
        format,
        path: node.and_then(path_of),
        offset: Some(offset),
    });
    (clicked, hover)
}

/// A protobuf row's right-click with a schema: the declaration of the field at `path`.
fn declaration_line(
    ui: &mut egui::Ui,
    message: Option<&crate::codec::protobuf::MessageDescriptor>,
    path: &Path,
) {
    use crate::codec::protobuf::schema::{field_at, field_line};
    match message.and_then(|m| field_at(m, path)) {
        Some(f) => {
            ui.label(format!(
                "{}: {}",
                f.parent_message().full_name(),
                field_line(&f)
            ));
        }
        None => {
            ui.weak("not a field of the schema: choose a field's row");
        }
    }
}
