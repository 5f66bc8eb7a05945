//! The command palette (Ctrl+Shift+P, Ctrl+K): every command by name, with its shortcut, run
//! from the keyboard. It lists the [`UiCommand`] table, the open sources and the samples; a
//! query filters them by words in any order (see [`palette_score`]).

use eframe::egui;

use super::ui_command::{palette_score, UiCommand};
use super::{App, Command, SAMPLES};

/// The palette's state.
#[derive(Debug, Default)]
pub(super) struct Palette {
    /// Shown.
    pub open: bool,
    query: String,
    /// The row Enter runs, counted in the filtered list.
    highlighted: usize,
    /// The query field gets the focus next frame.
    focus: bool,
}

impl Palette {
    /// Opens it empty with its field focused, or closes it.
    pub fn toggle(&mut self) {
        self.open = !self.open;
        if self.open {
            self.query.clear();
            self.highlighted = 0;
            self.focus = true;
        }
    }
}

/// One row of the palette.
struct Entry {
    text: String,
    /// What it does, or why it cannot run now.
    detail: &'static str,
    keys: String,
    enabled: bool,
    command: Command,
}

impl App {
    /// Every row the palette can show, in the table's order, then sources, then samples.
    fn palette_entries(&self, ctx: &egui::Context) -> Vec<Entry> {
        let mut out: Vec<Entry> = UiCommand::ALL
            .iter()
            .filter(|&&c| c != UiCommand::Palette)
            .map(|&c| {
                let why = self.why_disabled(c);
                Entry {
                    text: c.text().to_string(),
                    detail: why.unwrap_or(c.tooltip()),
                    keys: c.shortcut_text(ctx),
                    enabled: why.is_none(),
                    command: c.command(),
                }
            })
            .collect();
        for (i, e) in self.ws.entries.iter().enumerate() {
            out.push(Entry {
                text: format!("Show source: {}", e.name()),
                detail: "an open source",
                keys: String::new(),
                enabled: self.ws.current != Some(i),
                command: Command::ShowSource(i),
            });
        }
        for (name, _) in SAMPLES {
            out.push(Entry {
                text: format!("Open sample: {name}"),
                detail: "a bundled sample",
                keys: String::new(),
                enabled: true,
                command: Command::OpenSample(name),
            });
        }
        out
    }

    /// Draws the palette when open; a row run (Enter, click) pushes its command and closes it.
    pub(super) fn palette_ui(&mut self, ctx: &egui::Context) {
        if !self.windows.palette.open {
            return;
        }
        let mut shown: Vec<(u8, Entry)> = self
            .palette_entries(ctx)
            .into_iter()
            .filter_map(|e| palette_score(&self.windows.palette.query, &e.text).map(|s| (s, e)))
            .collect();
        shown.sort_by_key(|(score, e)| (*score, !e.enabled));
        let (down, up, enter) = ctx.input_mut(|i| {
            (
                i.consume_key(egui::Modifiers::NONE, egui::Key::ArrowDown),
                i.consume_key(egui::Modifiers::NONE, egui::Key::ArrowUp),
                i.key_pressed(egui::Key::Enter),
            )
        });
        let last = shown.len().saturating_sub(1);
        let mut at = self.windows.palette.highlighted.min(last);
        if down {
            at = (at + 1).min(last);
        }
        if up {
            at = at.saturating_sub(1);
        }
        let mut run: Option<usize> = enter.then_some(at);
        let state = &mut self.windows.palette;
        let modal = egui::Modal::new(egui::Id::unique("command palette")).show(ctx, |ui| {
            ui.set_width(560.0_f32.min(ctx.content_rect().width() - 40.0));
            let label = ui.label("Command palette");
            let before = state.query.clone();
            let field = ui
                .add(
                    egui::TextEdit::singleline(&mut state.query)
                        .hint_text("type to find a command, a source or a sample")
                        .desired_width(f32::INFINITY),
                )
                .labelled_by(label.id);
            if state.focus || field.lost_focus() && !enter {
                field.request_focus();
                state.focus = false;
            }
            if state.query != before {
                at = 0;
            }
            egui::ScrollArea::vertical()
                .max_height((ctx.content_rect().height() * 0.6).max(120.0))
                .show(ui, |ui| {
                    if shown.is_empty() {
                        ui.weak("no command matches");
                    }
                    for (i, (_, e)) in shown.iter().enumerate() {
                        let row = ui.horizontal(|ui| {
                            let text = if e.enabled {
                                egui::RichText::new(&e.text)
                            } else {
                                egui::RichText::new(&e.text).weak()
                            };
                            let r = ui.add(egui::Button::selectable(i == at, text));
                            ui.with_layout(
                                egui::Layout::right_to_left(egui::Align::Center),
                                |ui| {
                                    ui.weak(&e.keys);
                                },
                            );
                            r
                        });
                        let r = row.inner.on_hover_text(e.detail);
                        if i == at && (down || up) {
                            r.scroll_to_me(None);
                        }
                        if r.clicked() {
                            run = Some(i);
                        }
                    }
                });
        });
        self.windows.palette.highlighted = at;
        let close = modal.should_close();
        if let Some((_, e)) = run.and_then(|i| shown.into_iter().nth(i)) {
            if e.enabled {
                self.windows.palette.open = false;
                self.push(e.command);
                return;
            }
        }
        if close {
            self.windows.palette.open = false;
        }
    }
}
