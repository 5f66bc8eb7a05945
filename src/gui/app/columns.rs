//! The main area: the detection line with its overrides, the columns side by side (header,
//! fidelity notes, hex view, tree view), the data inspector and the status bar.

use eframe::egui;

use super::{App, Hover};
use crate::codec::{self, EncodeOptions, Format};
use crate::model::{ByteRole, NodeId, Path};
use crate::workspace::{Analysis, Column, ProtoMode, Stage};

use super::super::widgets::{self, thousands, HexInput, TreeInput};

/// The tooltip for a node: path, type, value, byte range.
fn describe(column: &Column, id: NodeId, role: ByteRole) -> String {
    let Some(doc) = &column.document else {
        return String::new();
    };
    let node = doc.spans.node(id);
    let path = doc.spans.path(id);
    let value = doc
        .spans
        .value_of(&doc.value, id)
        .map(|v| v.summary(60))
        .unwrap_or_default();
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
        egui::Panel::bottom("status").show(ui, |ui| {
            ui.horizontal(|ui| {
                if let Some((fraction, stage)) = self.ws.progress() {
                    ui.add(
                        egui::ProgressBar::new(fraction)
                            .desired_width(160.0)
                            .text(stage)
                            .animate(true),
                    );
                    if ui.button("Cancel").clicked() {
                        self.ws.cancel();
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
                            ui.weak(format!(
                                "decoded and encoded in {} ms",
                                a.elapsed.as_millis()
                            ));
                        }
                    }
                }
            });
        });
    }

    pub(super) fn bottom_panel(&mut self, ui: &mut egui::Ui, analysis: Option<&Analysis>) {
        // The panel keeps the tallest height it has had, so clicking a byte (which fills the
        // readings in) does not shrink the columns above in the same frame: a hex view centring
        // a selection would measure the old height and land off centre.
        let row = ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y;
        let min = self.inspector_height.max(10.0 * row);
        let shown = egui::Panel::bottom("inspector")
            .resizable(false)
            .min_size(min)
            .show(ui, |ui| {
                let Some(a) = analysis else {
                    ui.weak("data inspector: waiting for the decoded payload");
                    return;
                };
                let Some(format) = self.focus else { return };
                let Some(column) = a.column(format) else {
                    return;
                };
                let cursor = self.views.get(&format).and_then(|v| v.hex.cursor());
                ui.horizontal(|ui| {
                    ui.strong(format!("Data inspector · {}", format.title()));
                    if let Some(offset) =
                        widgets::goto_offset(ui, &mut self.goto_text, column.bytes.len())
                    {
                        if let Some(v) = self.views.get_mut(&format) {
                            v.hex.scroll_to(offset);
                            v.hex.set_cursor(offset);
                        }
                    }
                });
                match cursor {
                    Some(offset) => widgets::data_inspector(ui, &column.bytes, offset),
                    None => {
                        ui.weak("click a byte to inspect it");
                    }
                }
            });
        self.inspector_height = self.inspector_height.max(shown.response.rect.height());
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
                    ui.spinner();
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
                self.ws.set_format(choice);
            }
        });
        ui.separator();
        let (Some(payload), crate::capture::detect::Verdict::Text { .. }) = (payload, verdict)
        else {
            return;
        };
        let bytes = payload.bytes.as_slice();
        let mut text = String::from_utf8_lossy(bytes.get(..SHOWN).unwrap_or(bytes)).into_owned();
        if bytes.len() > SHOWN {
            ui.weak(format!(
                "the first {} of {} bytes",
                thousands(SHOWN),
                thousands(bytes.len())
            ));
        }
        egui::ScrollArea::both().show(ui, |ui| {
            ui.add(
                egui::TextEdit::multiline(&mut text)
                    .code_editor()
                    .interactive(false)
                    .desired_width(f32::INFINITY),
            );
        });
    }

    fn plain_hex(&mut self, ui: &mut egui::Ui, bytes: &[u8]) {
        let input = HexInput {
            bytes,
            spans: None,
            selected: None,
            error_at: None,
            describe: &|_, _| String::new(),
        };
        let r = self.raw_hex.show(ui, &input);
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
                self.ws.set_format(choice);
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
                        self.ws.set_proto_mode(m);
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

    fn selection_line(&mut self, ui: &mut egui::Ui, a: &Analysis) {
        ui.horizontal(|ui| {
            let label = ui.label("Selected path");
            let r = ui
                .add(
                    egui::TextEdit::singleline(&mut self.select_text)
                        .hint_text("$.data[0].id — or click a byte or field")
                        .desired_width(260.0),
                )
                .labelled_by(label.id);
            if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                let text = self.select_text.trim().to_string();
                match Path::parse(&text) {
                    Ok(p) => {
                        self.message = None;
                        self.select(Some(p));
                    }
                    Err(e) => {
                        self.message = Some((format!("not a path: {text}: {}", e.message), true));
                    }
                }
            }
            let Some(path) = self.ws.selected.clone() else {
                return;
            };
            let Some(format) = self.focus else { return };
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
                let json = column.resolve(&path).and_then(|id| {
                    let doc = column.document.as_ref()?;
                    let v = doc.spans.value_of(&doc.value, id)?;
                    let options = EncodeOptions {
                        pretty: true,
                        ..EncodeOptions::default()
                    };
                    codec::encode(v, Format::Json, &options).ok()
                });
                if let Some(enc) = json {
                    ui.ctx()
                        .copy_text(String::from_utf8_lossy(&enc.bytes).into_owned());
                }
            }
        });
    }

    fn columns(&mut self, ui: &mut egui::Ui, a: &Analysis) {
        let shown: Vec<&Column> = match self.settings.single_format() {
            Some(f) => a.column(f).into_iter().collect(),
            None => self
                .settings
                .column_order()
                .into_iter()
                .filter(|(_, shown)| *shown)
                .filter_map(|(f, _)| a.column(f))
                .collect(),
        };
        if shown.is_empty() {
            ui.weak("every column is hidden (View > Columns)");
            return;
        }
        let mut clicked: Option<(Format, Option<Path>)> = None;
        let mut hover = None;
        ui.columns(shown.len(), |uis| {
            for (ui, column) in uis.iter_mut().zip(&shown) {
                ui.push_id(column.format.name(), |ui| {
                    // A widget wider than its column is cut at the column's edge, not drawn
                    // over the next one.
                    ui.shrink_clip_rect(ui.max_rect());
                    let (c, h) = self.column(ui, column);
                    if c.is_some() {
                        clicked = c;
                    }
                    if h.is_some() {
                        hover = h;
                    }
                });
            }
        });
        self.hover = hover;
        if let Some((format, path)) = clicked {
            self.focus = Some(format);
            if path.is_some() {
                self.select(path);
            }
        }
    }

    /// One column; returns a click (its format and the path clicked) and what is hovered.
    fn column(
        &mut self,
        ui: &mut egui::Ui,
        column: &Column,
    ) -> (Option<(Format, Option<Path>)>, Option<Hover>) {
        let format = column.format;
        let mut clicked = None;
        let mut hover = None;
        // Header: format, source marker, sizes, notes.
        ui.horizontal_wrapped(|ui| {
            let title = if column.is_source {
                format!("{} (source)", format.title())
            } else {
                format.title().to_string()
            };
            ui.heading(title);
        });
        match column.sizes {
            Some(sizes) => ui.label(format!(
                "{} bytes · gzip {} · zstd {}",
                thousands(sizes.raw),
                thousands(sizes.gzip),
                thousands(sizes.zstd)
            )),
            None => ui.weak("no bytes"),
        };
        if let Some(schema) = &column.schema {
            ui.weak(format!("schema: {schema}"));
        }
        if let Some(v) = column.variant {
            ui.weak(format!("written with {} (see the View menu)", v.name()));
        }
        if let Some(err) = &column.error {
            ui.colored_label(ui.visuals().error_fg_color, err.to_string());
        }
        // The selection in this column.
        let selected = self.ws.selected.clone();
        let selected_id = selected.as_ref().and_then(|p| column.resolve(p));
        let selected_span =
            selected_id.and_then(|id| column.document.as_ref().map(|d| d.spans.node(id).extent()));
        match (&selected, selected_span) {
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
        if !column.notes.is_empty() {
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
                                clicked = Some((format, Some(n.path.clone())));
                            }
                        }
                    });
            });
        }
        let Some(view) = self.views.get_mut(&format) else {
            return (clicked, hover);
        };
        let spans = column.document.as_ref().map(|d| &*d.spans);
        let describe = |id: NodeId, role: ByteRole| describe(column, id, role);
        let input = HexInput {
            bytes: &column.bytes,
            spans,
            selected: selected_span,
            error_at: column.error.as_ref().and_then(|e| e.offset),
            describe: &describe,
        };
        let tree_height = (ui.available_height() * 0.45).max(80.0);
        let hex_height = (ui.available_height() - tree_height - 8.0).max(80.0);
        let r = ui
            .allocate_ui(egui::vec2(ui.available_width(), hex_height), |ui| {
                view.hex.show(ui, &input)
            })
            .inner;
        let path_of = |id: NodeId| spans.map(|s| s.path(id));
        if let Some((offset, node)) = r.hovered {
            hover = Some(Hover {
                format: Some(format),
                offset,
                node: node.and_then(|id| {
                    let role = spans.and_then(|s| s.node_at(offset)).map(|(_, r)| r)?;
                    Some((path_of(id)?, role))
                }),
            });
        }
        if let Some((_, node)) = r.clicked {
            clicked = Some((format, node.and_then(path_of)));
        }
        ui.separator();
        if let Some(doc) = &column.document {
            let input = TreeInput {
                value: &doc.value,
                spans: &doc.spans,
                selected: selected_id,
                notes: &column.note_nodes,
            };
            if let Some(id) = view.tree.show(ui, &input) {
                clicked = Some((format, Some(doc.spans.path(id))));
            }
        } else {
            ui.weak("no tree: nothing decoded");
        }
        (clicked, hover)
    }
}
