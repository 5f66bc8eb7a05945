//! The welcome panel and the left side: sources and, for captures and HAR files, their payloads
//! (method, status, URL, size, format), filtered by URL text and content type.

use eframe::egui;

use std::sync::Arc;

use super::source_state::Filtered;
use super::ui_command::{UiCommand, PASTE_KEYS};
use super::{App, Command, SAMPLES};
use crate::capture::{
    listing, Exchange, Framing, Payload, PayloadFilter, PeelChoice, Query, Split,
};
use crate::gui::widgets::thousands;
use crate::pipeline::Layers;
use crate::workspace::{Origin, Stage};

impl App {
    pub(super) fn welcome(&mut self, ui: &mut egui::Ui) {
        self.message_bar(ui);
        ui.vertical_centered(|ui| {
            ui.add_space(30.0);
            ui.heading("wirelens");
            ui.label("JSON, MessagePack, CBOR, Protobuf and Avro side by side, byte by byte.");
            ui.add_space(12.0);
            let paste = ui.ctx().format_shortcut(&PASTE_KEYS[0]);
            ui.label(format!("Drop files here, press {paste} to inspect the clipboard (hex dumps, base64, HTTP, JSON…), or:"));
            ui.add_space(8.0);
            ui.horizontal(|ui| {
                ui.add_space((ui.available_width() - 420.0).max(0.0) / 2.0);
                if ui.button("Open file…").clicked() {
                    self.push(Command::OpenDialog);
                }
                if ui.button("Paste…").clicked() {
                    self.push(Command::PasteArea);
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
                    self.push(Command::Open(p));
                }
            });
            ui.add_space(16.0);
            ui.strong("Bundled samples");
            ui.horizontal(|ui| {
                ui.add_space((ui.available_width() - 520.0).max(0.0) / 2.0);
                egui::Grid::new("samples").show(ui, |ui| {
                for (i, (name, bytes)) in SAMPLES.iter().enumerate() {
                    if ui.link(*name).clicked() {
                        self.push(Command::OpenSample(name));
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
                        self.push(Command::Open(p));
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
        let mut act = None;
        let mut rename_done = None;
        let close_keys = UiCommand::CloseSource.shortcut_text(ui.ctx());
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
                            .on_hover_text(format!("close {name} ({close_keys})"))
                    },
                )
                .inner;
            if close.clicked() {
                act = Some(Command::Close(i));
            }
            if r.clicked() {
                act = Some(Command::ShowSource(i));
            }
            r.on_hover_text(origin_text(&e.source.origin))
                .context_menu(|ui| {
                    if ui.button("Rename…").clicked() {
                        act = Some(Command::StartRename(i));
                        ui.close();
                    }
                    if ui.button(format!("Close ({close_keys})")).clicked() {
                        act = Some(Command::Close(i));
                        ui.close();
                    }
                    if ui
                        .add_enabled(self.ws.entries.len() > 1, egui::Button::new("Close others"))
                        .clicked()
                    {
                        act = Some(Command::CloseOthers(i));
                        ui.close();
                    }
                    // Its selected payload against another source's.
                    ui.add_enabled_ui(self.ws.entries.len() > 1, |ui| {
                        ui.menu_button("Compare with…", |ui| {
                            for (j, other) in self.ws.entries.iter().enumerate() {
                                if j != i && ui.button(other.name()).clicked() {
                                    act =
                                        Some(Command::Compare((i, e.payload), (j, other.payload)));
                                    ui.close();
                                }
                            }
                        });
                    });
                });
        }
        match rename_done {
            Some(Some((i, name))) => self.push(Command::Rename(i, name)),
            Some(None) => self.renaming = None,
            None => {}
        }
        if let Some(command) = act {
            self.push(command);
        }
    }

    /// The payloads of the source shown (a capture's, a HAR's), filtered, with what stopped its
    /// layers and its key logs above, and how far it is peeled below.
    fn payload_list(&mut self, ui: &mut egui::Ui) {
        let choices = || super::diff_view::payload_choices_of(&self.ws);
        let Some(entry) = self.ws.entry() else { return };
        let layers = entry.layers;
        let mut deepest = 0;
        let current = entry.payload;
        let this = self.ws.current.unwrap_or(0);
        let mut pick = None;
        let mut compare_from = None;
        match &entry.opened {
            Stage::Ready(opened) => {
                let here = &mut self.here;
                let fresh = here
                    .listing
                    .as_ref()
                    .is_none_or(|made_for| !Arc::ptr_eq(made_for, opened));
                if fresh {
                    here.listing = Some(opened.clone());
                }
                deepest = opened.listing_summary().deepest;
                let exchanges: &[Exchange] = opened.exchanges();
                let listing_id = exchanges.as_ptr() as usize;
                let filter = &mut here.payload_filter;
                let total = opened.payloads.len();
                let stale = here
                    .filtered
                    .as_ref()
                    .is_none_or(|f| f.listing != listing_id || f.filter != *filter);
                if stale {
                    here.filtered = Some(filtered(opened, filter, listing_id));
                }
                let Some(made) = here.filtered.as_ref() else {
                    return;
                };
                ui.strong(format!("Payloads ({total})"));
                stop_notes(ui, opened);
                for path in key_log_lines(ui, &self.ws, this, opened.capture.is_some()) {
                    self.commands.push(Command::LoadKeyLog(path));
                }
                if total > 1 {
                    filter_lines(ui, filter, exchanges, made, (current, total));
                }
                let rows = Rows {
                    payloads: &opened.payloads,
                    exchanges,
                    shown: &made.shown,
                    current,
                    this,
                    choices: &choices,
                };
                let (clicked, compare) = payload_rows(ui, &rows);
                if let Some(i) = clicked {
                    pick = Some(i);
                }
                if compare.is_some() {
                    compare_from = compare;
                }
            }
            Stage::Running(_) => {
                ui.horizontal(|ui| {
                    crate::gui::widgets::spinner(ui);
                    ui.label("peeling layers…");
                });
            }
            Stage::Failed(e) => {
                ui.colored_label(ui.visuals().error_fg_color, e.to_string());
            }
            Stage::Empty => {}
        }
        ui.separator();
        let layers = layer_choices(ui, layers, deepest);
        if let Some(i) = pick {
            self.push(Command::ShowPayload(i));
        }
        if let Some((a, b)) = compare_from {
            self.push(Command::Compare(a, b));
        }
        if let Some(command) = layers {
            self.push(command);
        }
    }
}

/// What cut the input or stopped a layer, said above the list, where it is seen, not under its
/// last row; then the layers' warnings.
fn stop_notes(ui: &mut egui::Ui, opened: &crate::workspace::Opened) {
    if let Some(err) = &opened.error {
        ui.colored_label(
            ui.visuals().error_fg_color,
            format!(
                "{} stopped at byte {}: {}",
                err.layer, err.offset, err.message
            ),
        );
    }
    warnings_above_list(ui, &opened.warnings);
}

/// A key log lying beside source `this`, a capture whose TLS is not decrypted, is offered; for
/// a capture, the key logs in use are named. Returns the key logs the user asked to load.
fn key_log_lines(
    ui: &mut egui::Ui,
    ws: &crate::workspace::Workspace,
    this: usize,
    capture: bool,
) -> Vec<std::path::PathBuf> {
    let mut load = Vec::new();
    for path in ws.key_logs_beside(this) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        ui.horizontal_wrapped(|ui| {
            ui.label(format!("TLS key log beside the capture: {name}"));
            if ui
                .small_button("Load")
                .on_hover_text(path.display().to_string())
                .clicked()
            {
                load.push(path.clone());
            }
        });
    }
    if capture {
        for path in &ws.key_log_files {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            ui.weak(format!("key log in use: {name}"))
                .on_hover_text(path.display().to_string());
        }
    }
    load
}

/// Above a list of several payloads: the filter bar and its error, what it leaves, whether it
/// hides the payload shown (`current` of `total`), and a button that shows all again.
fn filter_lines(
    ui: &mut egui::Ui,
    filter: &mut PayloadFilter,
    exchanges: &[Exchange],
    made: &Filtered,
    (current, total): (usize, usize),
) {
    filter_bar(ui, filter, exchanges, &made.types);
    if let Some(e) = &made.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    ui.label(made.text.as_str());
    if !filter.is_empty() {
        if current < total && !made.shown.contains(&current) {
            ui.weak(format!(
                "#{} is selected, hidden by the filter",
                current + 1
            ));
        }
        if ui.small_button("Show all").clicked() {
            *filter = PayloadFilter::default();
        }
    }
}

/// Under the list: raw bytes, or how far the source is peeled (`layers` now, `deepest` found);
/// the command for a change.
fn layer_choices(ui: &mut egui::Ui, layers: Layers, deepest: usize) -> Option<Command> {
    let mut raw = layers == Layers::AsIs;
    // The best-ranked way shows as the default choice ("every layer", "auto").
    let peel = match layers {
        Layers::Peel(choice) => choice,
        _ => PeelChoice::default(),
    };
    let raw_changed = ui
        .checkbox(&mut raw, "raw bytes (don't unwrap layers)")
        .changed();
    let chosen = if raw {
        None
    } else {
        peel_choice(ui, peel, deepest)
    };
    if raw_changed {
        Some(Command::SetRaw(raw))
    } else {
        chosen.map(Command::SetPeel)
    }
}

/// What `filter` leaves of `opened`'s payloads (the listing at `listing`), with the words for it
/// and the listing's content types. Without a filter, nothing is read per payload: the counts
/// are the listing's, made on the worker that peeled it ([`crate::workspace::Opened::listing_summary`]).
fn filtered(opened: &crate::workspace::Opened, filter: &PayloadFilter, listing: usize) -> Filtered {
    let (payloads, exchanges) = (&opened.payloads, opened.exchanges());
    let summary = opened.listing_summary();
    let (query, error) = match Query::parse(&filter.text) {
        Ok(q) => (q, None),
        Err(e) => (Query::default(), Some(format!("filter: {e}"))),
    };
    let shown: Vec<usize> = if filter.is_empty() {
        (0..payloads.len()).collect()
    } else {
        (0..payloads.len())
            .filter(|&i| match (exchanges.get(i), payloads.get(i)) {
                (Some(e), Some(p)) => filter.matches_with(&query, e, p),
                _ => true,
            })
            .collect()
    };
    Filtered {
        filter: filter.clone(),
        listing,
        text: shown_text(payloads, &shown, filter.is_empty(), summary.har_entries),
        shown,
        error,
        types: summary.content_types.clone(),
    }
}

/// The payload list's filter: a text field (URL words and `method:`, `status:`, `type:`,
/// `proto:`, `size>` terms) and a content-type choice made of the types the payloads have, each
/// with its count.
fn filter_bar(
    ui: &mut egui::Ui,
    filter: &mut PayloadFilter,
    exchanges: &[Exchange],
    types: &[(Option<String>, usize)],
) {
    let any_url = exchanges.iter().take(10_000).any(|e| e.url.is_some());
    ui.horizontal(|ui| {
        let label = ui.label("filter");
        ui.add(
            egui::TextEdit::singleline(&mut filter.text)
                .hint_text(if any_url {
                    "URL words, method:POST status:4xx proto:grpc size>10k"
                } else {
                    "proto:websocket size>10k type:json"
                })
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id)
        .on_hover_text(
            "Every term must hold. Words: part of the URL. method:POST · status:404 or \
             status:4xx · type:json (part of the media type) · proto:grpc (part of a layer's \
             name: http/2, websocket, tls, avro…) · size>10k, size<=2m (k, m, g: 1024, 1024², \
             1024³)",
        );
    });
    let type_text = |t: &Option<String>| t.clone().unwrap_or_else(|| "no content type".into());
    let selected = match &filter.content_type {
        None => "every type".to_string(),
        Some(t) => type_text(t),
    };
    ui.horizontal(|ui| {
        let label = ui.label("type");
        egui::ComboBox::from_id_salt("payload-type")
            .selected_text(selected)
            .width(ui.available_width().max(60.0))
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut filter.content_type, None, "every type");
                for (t, n) in types {
                    ui.selectable_value(
                        &mut filter.content_type,
                        Some(t.clone()),
                        format!("{} ({n})", type_text(t)),
                    );
                }
            })
            .response
            .labelled_by(label.id)
            .on_hover_text("show only the payloads of one content type");
    });
}

/// "3 of 8 payloads shown, from 2 of 7 HAR entries": what the filter leaves, so nothing is
/// hidden without a word (`entries_total`: the HAR entries of all the payloads).
fn shown_text(
    payloads: &[Payload],
    shown: &[usize],
    unfiltered: bool,
    entries_total: usize,
) -> String {
    let mut text = if unfiltered {
        format!("{} payloads", payloads.len())
    } else {
        format!("{} of {} payloads shown", shown.len(), payloads.len())
    };
    if entries_total > 0 {
        if unfiltered {
            text.push_str(&format!(" from {entries_total} HAR entries"));
        } else {
            let kept = listing::har_entries(shown.iter().filter_map(|&i| payloads.get(i)));
            text.push_str(&format!(", from {kept} of {entries_total} HAR entries"));
        }
    }
    text
}

/// Two payloads to compare: (source, payload) each.
type Comparison = ((usize, usize), (usize, usize));

/// What the payload rows show: the payloads of source `this`, their exchanges, the indices the
/// filter leaves, the selected one, and every payload a row's "Compare with…" offers.
struct Rows<'a> {
    payloads: &'a [Payload],
    exchanges: &'a [Exchange],
    shown: &'a [usize],
    current: usize,
    this: usize,
    /// Every payload to compare with, made when the menu is open.
    choices: &'a dyn Fn() -> Vec<((usize, usize), String)>,
}

/// One row's first line: `#7 POST 200 · 71 bytes · JSON`.
fn row_title(index: usize, p: &Payload, e: &Exchange) -> String {
    // Numbered from 1, as `wirelens inspect` lists them and `--pick N` takes them.
    let mut head = format!("#{}", index + 1);
    for part in [&e.method, &e.status].into_iter().flatten() {
        head.push(' ');
        head.push_str(part);
    }
    let mut parts = vec![head];
    parts.push(format!("{} bytes", thousands(p.bytes.len())));
    // What the protocol said comes first: a protocol that is no data format, a text message.
    let kind = match (p.protocol.as_deref(), e.format, &e.content_type) {
        (Some(protocol), _, _) => Some(format!("{protocol} (not data)")),
        (None, Some(f), _) => Some(f.title().to_string()),
        (None, None, Some(t)) => Some(t.clone()),
        (None, None, None) if p.meta_value("websocket opcode") == Some("text") => {
            Some("WebSocket text".to_string())
        }
        (None, None, None) => None,
    };
    match kind {
        Some(k) => parts.push(k),
        None => {
            if let Some(last) = p.layers.last() {
                parts.push(last.name.clone());
            }
        }
    }
    parts.join(" · ")
}

/// The rows of the payloads in `shown`, each two lines high (the title, then the direction and
/// URL, or the layer chain); only the rows in view are laid out, so a HAR of thousands of bodies scrolls
/// as fast as a short list. Returns the payload clicked.
fn payload_rows(ui: &mut egui::Ui, rows: &Rows<'_>) -> (Option<usize>, Option<Comparison>) {
    let Rows {
        payloads,
        exchanges,
        shown,
        current,
        this,
        choices,
    } = *rows;
    let spacing = ui.spacing().item_spacing.y;
    let line = ui.spacing().interact_size.y;
    let text = ui.text_style_height(&egui::TextStyle::Body);
    let row = line + text + spacing;
    let step = row + spacing;
    let width = ui.available_width();
    let top = ui.cursor().top();
    let clip = ui.clip_rect();
    let first = (((clip.top() - top) / step).floor().max(0.0) as usize).min(shown.len());
    let last = ((((clip.bottom() - top) / step).ceil().max(0.0)) as usize + 1).min(shown.len());
    let last = last.max(first);
    if first > 0 {
        ui.allocate_space(egui::vec2(width, first as f32 * step - spacing));
    }
    let mut pick = None;
    let mut compare = None;
    for &i in shown.get(first..last).unwrap_or(&[]) {
        let Some(p) = payloads.get(i) else { continue };
        let fallback;
        let e = match exchanges.get(i) {
            Some(e) => e,
            None => {
                fallback = p.exchange();
                &fallback
            }
        };
        let (rect, _) = ui.allocate_exact_size(egui::vec2(width, row), egui::Sense::hover());
        let mut cell = ui.new_child(egui::UiBuilder::new().max_rect(rect));
        let title = row_title(i, p, e);
        let r = cell.add(egui::Button::selectable(current == i, title.as_str()).truncate());
        let second = match (&e.url, p.headline()) {
            (Some(url), _) => {
                // The scheme is left off (the tooltip has it): the path is what tells rows apart.
                let url = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
                match &e.direction {
                    Some(d) => format!("{d} {url}"),
                    None => url.to_string(),
                }
            }
            (None, Some(h)) => h,
            (None, None) => p.provenance(),
        };
        cell.add(egui::Label::new(egui::RichText::new(second).weak()).truncate());
        if r.clicked() {
            pick = Some(i);
        }
        r.on_hover_text(hover_text(p)).context_menu(|ui| {
            ui.menu_button("Compare with…", |ui| {
                for (p, name) in choices().iter().filter(|(p, _)| *p != (this, i)) {
                    if ui.button(name).clicked() {
                        compare = Some(((this, i), *p));
                        ui.close();
                    }
                }
            });
        });
    }
    let rest = shown.len() - last;
    if rest > 0 {
        ui.allocate_space(egui::vec2(width, rest as f32 * step - spacing));
    }
    (pick, compare)
}

/// Warnings shown above the payload list shown at once: more fold under a header.
const WARNINGS_SHOWN: usize = 3;

/// The input's warnings above the payload list: a limit that cut the input first, in the
/// warning colour (the list is not all there is), then the others; past [`WARNINGS_SHOWN`] the
/// rest fold under "N more warnings".
fn warnings_above_list(ui: &mut egui::Ui, warnings: &[String]) {
    if warnings.is_empty() {
        return;
    }
    let cuts = |w: &String| w.contains("limit");
    let ordered: Vec<&String> = warnings
        .iter()
        .filter(|w| cuts(w))
        .chain(warnings.iter().filter(|w| !cuts(w)))
        .collect();
    let warn = ui.visuals().warn_fg_color;
    let line = |ui: &mut egui::Ui, w: &String| {
        if cuts(w) {
            ui.colored_label(warn, format!("⚠ {w}"));
        } else {
            ui.label(egui::RichText::new(w.as_str()).small());
        }
    };
    for w in ordered.iter().take(WARNINGS_SHOWN) {
        line(ui, w);
    }
    let rest = ordered.len().saturating_sub(WARNINGS_SHOWN);
    if rest > 0 {
        egui::CollapsingHeader::new(format!("{rest} more warnings"))
            .id_salt("payload-warnings")
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .max_height(200.0)
                    .show(ui, |ui| {
                        for w in ordered.iter().skip(WARNINGS_SHOWN) {
                            line(ui, w);
                        }
                    });
            });
    }
}

/// A payload's tooltip: its layer chain, then its meta (long values cut).
fn hover_text(p: &Payload) -> String {
    let mut hover = p.provenance();
    if let Some(protocol) = &p.protocol {
        hover.push_str(&format!("\nprotocol: {protocol} (not a data format)"));
    }
    if let Some(cut) = &p.cut {
        hover.push_str(&format!("\ncut short: {cut}"));
    }
    for (k, v) in &p.meta {
        // A long value (every frame of a large stream) is cut for the tooltip.
        let v: String = if v.chars().count() > 200 {
            v.chars().take(199).chain(['…']).collect()
        } else {
            v.to_string()
        };
        hover.push_str(&format!("\n{k}: {v}"));
    }
    hover
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
