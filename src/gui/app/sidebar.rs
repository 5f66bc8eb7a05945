//! The welcome panel and the left side: sources and, for captures, their payloads.

use eframe::egui;

use super::{App, SAMPLES};
use crate::capture::{Framing, PeelChoice, Split};
use crate::gui::widgets::thousands;
use crate::workspace::{Origin, Stage};

impl App {
    pub(super) fn welcome(&mut self, ui: &mut egui::Ui) {
        self.message_bar(ui);
        ui.vertical_centered(|ui| {
            ui.add_space(30.0);
            ui.heading("wirelens");
            ui.label("JSON, MessagePack, CBOR and Protobuf side by side, byte by byte.");
            ui.add_space(12.0);
            ui.label("Drop files here, press Ctrl+V to inspect the clipboard (hex dumps, base64, HTTP, JSON…), or:");
            ui.add_space(8.0);
            ui.horizontal(|ui| {
                ui.add_space((ui.available_width() - 420.0).max(0.0) / 2.0);
                if ui.button("Open file…").clicked() {
                    self.open_dialog();
                }
                if ui.button("Paste…").clicked() {
                    self.paste_window.show();
                }
            });
            ui.horizontal(|ui| {
                ui.add_space((ui.available_width() - 420.0).max(0.0) / 2.0);
                let label = ui.label("File path");
                let r = ui
                    .add(
                        egui::TextEdit::singleline(&mut self.open_path)
                            .hint_text("type a path and press Enter")
                            .desired_width(300.0),
                    )
                    .labelled_by(label.id);
                let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if (ui.button("Open").clicked() || enter) && !self.open_path.trim().is_empty() {
                    let p = std::path::PathBuf::from(self.open_path.trim());
                    self.open_file(p);
                }
            });
            ui.add_space(16.0);
            ui.strong("Bundled samples");
            ui.horizontal(|ui| {
                ui.add_space((ui.available_width() - 520.0).max(0.0) / 2.0);
                egui::Grid::new("samples").show(ui, |ui| {
                for (i, (name, bytes)) in SAMPLES.iter().enumerate() {
                    if ui.link(*name).clicked() {
                        self.open_sample(name);
                    }
                    ui.weak(format!("{} bytes", bytes.len()));
                    if i % 2 == 1 {
                        ui.end_row();
                    }
                }
                });
            });
            if !self.settings.recent.is_empty() {
                ui.add_space(16.0);
                ui.strong("Recent files");
                for p in self.settings.recent.clone() {
                    if ui.link(p.display().to_string()).clicked() {
                        self.open_file(p);
                    }
                }
            }
        });
    }

    pub(super) fn sidebar(&mut self, ui: &mut egui::Ui) {
        egui::Panel::left("sources")
            .resizable(true)
            .default_size(230.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    ui.strong("Sources");
                    self.source_list(ui);
                    ui.separator();
                    self.payload_list(ui);
                });
            });
    }

    /// The open sources: click to show one; a × (on hover), Ctrl+W or the context menu
    /// closes it; the context menu also closes the others and renames it (in place).
    fn source_list(&mut self, ui: &mut egui::Ui) {
        enum Act {
            Show(usize),
            Close(usize),
            CloseOthers(usize),
            Rename(usize),
            Compare((usize, usize), (usize, usize)),
        }
        let mut act = None;
        let mut rename_done = None;
        for (i, e) in self.ws.entries.iter().enumerate() {
            let name = e.name();
            if let Some((at, text, focused)) = &mut self.renaming {
                if *at == i {
                    let mut r = None;
                    ui.horizontal(|ui| {
                        let label = ui.label("New name");
                        r = Some(
                            ui.add(
                                egui::TextEdit::singleline(text)
                                    .hint_text(e.source.name())
                                    .desired_width(f32::INFINITY),
                            )
                            .labelled_by(label.id),
                        );
                    });
                    let Some(r) = r else { continue };
                    if !*focused {
                        r.request_focus();
                        *focused = true;
                    }
                    let enter = ui.input(|inp| inp.key_pressed(egui::Key::Enter));
                    let escape = ui.input(|inp| inp.key_pressed(egui::Key::Escape));
                    if escape {
                        rename_done = Some(None);
                    } else if r.lost_focus() || (enter && r.has_focus()) {
                        rename_done = Some(Some((i, text.clone())));
                    }
                    continue;
                }
            }
            let label = format!("{name} ({} bytes)", thousands(e.source.len()));
            let row = ui.horizontal(|ui| {
                let current = self.ws.current == Some(i);
                let width = (ui.available_width() - 24.0).max(40.0);
                let r = ui.add_sized(
                    [width, ui.spacing().interact_size.y],
                    egui::Button::selectable(current, label.as_str()).truncate(),
                );
                (r, ui.max_rect())
            });
            let (r, rect) = row.inner;
            let hovered = ui.rect_contains_pointer(rect) || self.ws.current == Some(i);
            // The × shows on the row under the pointer and on the current one.
            let close = ui
                .scope_builder(
                    egui::UiBuilder::new().max_rect(egui::Rect::from_min_max(
                        egui::pos2(rect.right() - 22.0, rect.top()),
                        rect.right_bottom(),
                    )),
                    |ui| {
                        ui.add_visible(hovered, egui::Button::new("×").small().frame(false))
                            .on_hover_text(format!("close {name} (Ctrl+W)"))
                    },
                )
                .inner;
            if close.clicked() {
                act = Some(Act::Close(i));
            }
            if r.clicked() {
                act = Some(Act::Show(i));
            }
            r.on_hover_text(origin_text(&e.source.origin))
                .context_menu(|ui| {
                    if ui.button("Rename…").clicked() {
                        act = Some(Act::Rename(i));
                        ui.close();
                    }
                    if ui.button("Close (Ctrl+W)").clicked() {
                        act = Some(Act::Close(i));
                        ui.close();
                    }
                    if ui
                        .add_enabled(self.ws.entries.len() > 1, egui::Button::new("Close others"))
                        .clicked()
                    {
                        act = Some(Act::CloseOthers(i));
                        ui.close();
                    }
                    // Its selected payload against another source's.
                    ui.add_enabled_ui(self.ws.entries.len() > 1, |ui| {
                        ui.menu_button("Compare with…", |ui| {
                            for (j, other) in self.ws.entries.iter().enumerate() {
                                if j != i && ui.button(other.name()).clicked() {
                                    act = Some(Act::Compare((i, e.payload), (j, other.payload)));
                                    ui.close();
                                }
                            }
                        });
                    });
                });
        }
        if let Some(done) = rename_done {
            if let Some((i, name)) = done {
                self.ws.rename(i, &name);
            }
            self.renaming = None;
        }
        match act {
            Some(Act::Show(i)) => self.ws.select_source(i),
            Some(Act::Close(i)) => self.close_source(i),
            Some(Act::CloseOthers(i)) => {
                self.renaming = None;
                self.ws.close_others(i);
            }
            Some(Act::Compare(a, b)) => self.compare(a, b),
            Some(Act::Rename(i)) => {
                let name = self.ws.entries.get(i).map(|e| e.name()).unwrap_or_default();
                self.renaming = Some((i, name, false));
            }
            None => {}
        }
    }

    fn payload_list(&mut self, ui: &mut egui::Ui) {
        let choices = self.payload_choices();
        let Some(entry) = self.ws.entry() else { return };
        let peel = entry.peel;
        let mut raw = peel.max_layers == Some(0) && peel.split == Split::Never;
        let deepest = match &entry.opened {
            Stage::Ready(o) => o.payloads.iter().map(|p| p.layers.len()).max().unwrap_or(0),
            _ => 0,
        };
        let current = entry.payload;
        let this = self.ws.current.unwrap_or(0);
        let mut pick = None;
        let mut compare_from = None;
        match &entry.opened {
            Stage::Ready(opened) => {
                ui.strong(format!("Payloads ({})", opened.payloads.len()));
                for (i, p) in opened.payloads.iter().enumerate() {
                    // Numbered from 1, as `wirelens inspect` lists them and `--pick N` takes them.
                    let mut label = format!("#{} · {} bytes", i + 1, p.bytes.len());
                    if let Some(last) = p.layers.last() {
                        label.push_str(&format!(" · {}", last.name));
                    }
                    let mut hover = p.provenance();
                    for (k, v) in &p.meta {
                        // A long value (every frame of a large stream) is cut for the tooltip.
                        let v: String = if v.chars().count() > 200 {
                            v.chars().take(199).chain(['…']).collect()
                        } else {
                            v.clone()
                        };
                        hover.push_str(&format!("\n{k}: {v}"));
                    }
                    let r = ui.selectable_label(current == i, label);
                    let r = r.on_hover_text(hover);
                    if r.clicked() {
                        pick = Some(i);
                    }
                    r.context_menu(|ui| {
                        ui.menu_button("Compare with…", |ui| {
                            for (p, name) in choices.iter().filter(|(p, _)| *p != (this, i)) {
                                if ui.button(name).clicked() {
                                    compare_from = Some(((this, i), *p));
                                    ui.close();
                                }
                            }
                        });
                    });
                    // A captured exchange says which call and direction; else the layer chain.
                    match p.headline() {
                        Some(h) => ui.weak(h),
                        None => ui.weak(p.provenance()),
                    };
                }
                if let Some(err) = &opened.error {
                    ui.colored_label(
                        ui.visuals().error_fg_color,
                        format!(
                            "{} stopped at byte {}: {}",
                            err.layer, err.offset, err.message
                        ),
                    );
                }
                for w in &opened.warnings {
                    ui.weak(w);
                }
            }
            Stage::Running(_) => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("peeling layers…");
                });
            }
            Stage::Failed(e) => {
                ui.colored_label(ui.visuals().error_fg_color, e.to_string());
            }
            Stage::Empty => {}
        }
        ui.separator();
        let raw_changed = ui
            .checkbox(&mut raw, "raw bytes (don't unwrap layers)")
            .changed();
        let chosen = if raw {
            None
        } else {
            peel_choice(ui, peel, deepest)
        };
        if let Some(i) = pick {
            self.ws.select_payload(i);
        }
        if let Some((a, b)) = compare_from {
            self.compare(a, b);
        }
        if raw_changed {
            self.ws.set_raw(raw);
        } else if let Some(c) = chosen {
            self.ws.set_peel(c);
        }
    }
}

/// The layer override: how many layers to peel and how streams split. Returns a new choice when
/// the user made one.
fn peel_choice(ui: &mut egui::Ui, current: PeelChoice, deepest: usize) -> Option<PeelChoice> {
    let mut choice = current;
    let layers_text = |n: Option<usize>| match n {
        None => "every layer".to_string(),
        Some(1) => "1 layer".to_string(),
        Some(n) => format!("{n} layers"),
    };
    ui.horizontal(|ui| {
        ui.label("peel");
        egui::ComboBox::from_id_salt("peel-layers")
            .selected_text(layers_text(choice.max_layers))
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut choice.max_layers, None, layers_text(None));
                let most = deepest.max(choice.max_layers.unwrap_or(0)).max(1);
                for n in 1..=most {
                    ui.selectable_value(&mut choice.max_layers, Some(n), layers_text(Some(n)));
                }
            })
            .response
            .on_hover_text(
                "peel fewer layers to see an outer layer's bytes (e.g. the HTTP body before gzip)",
            );
    });
    let split_text = |s: Split| match s {
        Split::Auto => "auto".to_string(),
        Split::Never => "never (one payload)".to_string(),
        Split::Force(f) => format!("as {}", f.name()),
    };
    ui.horizontal(|ui| {
        ui.label("split");
        egui::ComboBox::from_id_salt("peel-split")
            .selected_text(split_text(choice.split))
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut choice.split, Split::Auto, split_text(Split::Auto));
                ui.selectable_value(&mut choice.split, Split::Never, split_text(Split::Never));
                for f in Framing::ALL {
                    ui.selectable_value(
                        &mut choice.split,
                        Split::Force(f),
                        split_text(Split::Force(f)),
                    );
                }
            })
            .response
            .on_hover_text(
                "how a payload holding several messages becomes one payload per message",
            );
    });
    (choice != current).then_some(choice)
}

/// Where a source came from, for its tooltip in the list.
fn origin_text(origin: &Origin) -> String {
    match origin {
        Origin::File(p) => p.display().to_string(),
        Origin::Pasted => "pasted text".into(),
        Origin::Sample(n) => format!("bundled sample {n}"),
        Origin::Dropped(n) => format!("dropped: {n}"),
    }
}
