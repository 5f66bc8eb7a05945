//! The diff view: two payloads compared by meaning ([`crate::workspace::compare`]), with the
//! change list above both payloads side by side.
//!
//! Any two payloads of the open sources can be picked here (or with "Compare with…" in the
//! source list's and the payload list's context menus); the comparison runs on a worker. A
//! change clicked in the list selects its bytes in both hex views and its node in both trees; a
//! byte or a row clicked in either payload selects the change that holds it. Every change is
//! tinted by its kind in both hex views and trees, the kinds shown can be chosen, and the list
//! shown exports as CSV to a typed path (the native dialog is a second way). The options of
//! `wirelens diff` (identity keys, ignored paths, key order) are typed above the list; an edit
//! that parses compares again, one that does not shows its error and keeps the text.
//!
//! What it does not do: compute anything. The changes, their bytes and the summary come from
//! the core; this file only draws them and turns clicks into selections.

use std::path::PathBuf;
use std::sync::Arc;

use eframe::egui;

use super::{App, Status};
use crate::diff::{Change, ChangeKind, DiffOptions};
use crate::gui::widgets::{change_bg, thousands, HexInput, HexView, TreeInput, TreeView};
use crate::model::{NodeId, Path, Span, SpanTree};
use crate::workspace::{export_diff_csv, Compared, Comparison, Stage};

/// The kinds, in the order the filter lists them.
pub const KINDS: [ChangeKind; 5] = [
    ChangeKind::Changed,
    ChangeKind::TypeChanged,
    ChangeKind::Added,
    ChangeKind::Removed,
    ChangeKind::Order,
];

/// One payload's widgets in the diff view.
#[derive(Default)]
struct SideView {
    hex: HexView,
    tree: TreeView,
    /// The changes' bytes in this payload, sorted, with their colours.
    hex_marks: Vec<(Span, egui::Color32)>,
    /// The changes' nodes in this payload, sorted, with their colours.
    tree_marks: Vec<(NodeId, egui::Color32)>,
}

/// The diff view's state: the picks, the filter, the export path, the selected change and the
/// widgets made for the comparison shown.
pub struct DiffView {
    /// The first payload picked: (source, payload), both from 0.
    pub a: Option<(usize, usize)>,
    /// The second payload picked.
    pub b: Option<(usize, usize)>,
    /// Which kinds the list shows and the payloads tint, in [`KINDS`] order.
    pub shown: [bool; 5],
    /// Where "Export CSV" writes.
    pub export_path: String,
    /// The change selected (an index into the comparison's changes).
    selected: Option<usize>,
    /// The comparison the widgets and lines below were made for.
    made_for: Option<Arc<Comparison>>,
    /// The theme and filter the marks were made with.
    marks_for: Option<(bool, [bool; 5])>,
    sides: [SideView; 2],
    /// Each change's line, as `wirelens diff` prints it.
    lines: Vec<String>,
    /// The changes listed (indices), the filter applied.
    listed: Vec<usize>,
    /// Each change's node in A and in B.
    nodes: Vec<[Option<NodeId>; 2]>,
    /// The option texts (keys, ignore) the patterns below were parsed from.
    parsed_for: Option<(String, String)>,
    /// The identity-field patterns compared with: the last that parsed.
    keys: Vec<Path>,
    /// The patterns of paths left out: the last that parsed.
    ignore: Vec<Path>,
    /// Why the keys' text does not parse (shown under it; the text is kept).
    key_error: Option<String>,
    /// Why the ignore text does not parse.
    ignore_error: Option<String>,
}

impl Default for DiffView {
    fn default() -> DiffView {
        DiffView {
            a: None,
            b: None,
            shown: [true, true, true, true, false],
            export_path: String::new(),
            selected: None,
            made_for: None,
            marks_for: None,
            sides: Default::default(),
            lines: Vec::new(),
            listed: Vec::new(),
            nodes: Vec::new(),
            parsed_for: None,
            keys: Vec::new(),
            ignore: Vec::new(),
            key_error: None,
            ignore_error: None,
        }
    }
}

impl DiffView {
    /// The change selected, if any.
    pub fn selected(&self) -> Option<usize> {
        self.selected
    }

    /// The cursors of A's and B's hex views.
    pub fn cursors(&self) -> (Option<usize>, Option<usize>) {
        (self.sides[0].hex.cursor(), self.sides[1].hex.cursor())
    }

    /// The changes listed (their indices), as filtered.
    pub fn listed(&self) -> &[usize] {
        &self.listed
    }

    /// Why the identity keys typed do not parse, if they do not.
    pub fn key_error(&self) -> Option<&str> {
        self.key_error.as_deref()
    }

    /// Why the ignore patterns typed do not parse, if they do not.
    pub fn ignore_error(&self) -> Option<&str> {
        self.ignore_error.as_deref()
    }

    /// Parses the option texts when they changed: a text that parses replaces its patterns, one
    /// that does not keeps the last good ones and says why. Whether every text parses.
    fn parse(&mut self, keys: &str, ignore: &str) -> bool {
        let texts = (keys.to_string(), ignore.to_string());
        if self.parsed_for.as_ref() != Some(&texts) {
            match DiffOptions::patterns(keys, DiffOptions::key_pattern) {
                Ok(k) => {
                    self.keys = k;
                    self.key_error = None;
                }
                Err(e) => self.key_error = Some(e.to_string()),
            }
            match DiffOptions::patterns(ignore, DiffOptions::ignore_pattern) {
                Ok(i) => {
                    self.ignore = i;
                    self.ignore_error = None;
                }
                Err(e) => self.ignore_error = Some(e.to_string()),
            }
            self.parsed_for = Some(texts);
        }
        self.key_error.is_none() && self.ignore_error.is_none()
    }

    fn shows(&self, kind: ChangeKind) -> bool {
        KINDS
            .iter()
            .position(|k| *k == kind)
            .is_some_and(|i| self.shown[i])
    }

    /// Makes the lines, nodes and widgets for a new comparison, and the marks for a new theme
    /// or filter.
    fn sync(&mut self, c: &Arc<Comparison>, dark: bool) {
        let same = self.made_for.as_ref().is_some_and(|m| Arc::ptr_eq(m, c));
        if !same {
            self.made_for = Some(c.clone());
            self.selected = None;
            self.marks_for = None;
            self.sides = Default::default();
            self.lines = c.diff.changes.iter().map(ToString::to_string).collect();
            self.nodes = c
                .diff
                .changes
                .iter()
                .map(|ch| {
                    [
                        node_of(&c.a, ch.a.as_ref().and_then(|s| s.span)),
                        node_of(&c.b, ch.b.as_ref().and_then(|s| s.span)),
                    ]
                })
                .collect();
            // Key order counts as a change only when the comparison was asked to count it.
            self.shown[4] = c.diff.order_counts;
        }
        if self.marks_for == Some((dark, self.shown)) {
            return;
        }
        self.marks_for = Some((dark, self.shown));
        self.listed = (0..c.diff.changes.len())
            .filter(|&i| self.shows(c.diff.changes[i].kind))
            .collect();
        for (k, side) in self.sides.iter_mut().enumerate() {
            let mut hex = Vec::new();
            let mut tree = Vec::new();
            for &i in &self.listed {
                let ch = &c.diff.changes[i];
                // A container's other key order would tint all of it: it is listed, not tinted.
                if ch.kind == ChangeKind::Order {
                    continue;
                }
                let color = change_bg(ch.kind, dark);
                let s = if k == 0 { &ch.a } else { &ch.b };
                if let Some(span) = s.as_ref().and_then(|s| s.span) {
                    hex.push((span, color));
                }
                if let Some(id) = self.nodes[i][k] {
                    tree.push((id, color));
                }
            }
            hex.sort_by_key(|(s, _)| (s.start, s.end));
            // Marks never overlap: a later one inside an earlier one is dropped.
            let mut end = 0;
            hex.retain(|(s, _)| {
                let keep = s.start >= end;
                if keep {
                    end = s.end;
                }
                keep
            });
            // The containers holding a change get a grey tint, so a collapsed record shows
            // that something in it changed.
            let compared = if k == 0 { &c.a } else { &c.b };
            if let Some(doc) = &compared.column.document {
                let holds = change_bg(ChangeKind::Order, dark);
                let mut held = Vec::new();
                for &(id, _) in &tree {
                    let mut up = doc.spans.parent(id);
                    while let Some(p) = up {
                        held.push((p, holds));
                        up = doc.spans.parent(p);
                    }
                }
                // The changes' own rows come first, so they win over a container's faint tint.
                tree.extend(held);
            }
            tree.sort_by_key(|(id, _)| *id);
            tree.dedup_by_key(|(id, _)| *id);
            side.hex_marks = hex;
            side.tree_marks = tree;
        }
    }

    /// Selects change `i`: both hex views scroll to its bytes with the cursor on the first, both
    /// trees reveal its node.
    fn select(&mut self, c: &Comparison, i: usize) {
        self.selected = Some(i);
        let Some(ch) = c.diff.changes.get(i) else {
            return;
        };
        for (k, side) in self.sides.iter_mut().enumerate() {
            let (s, compared) = if k == 0 { (&ch.a, &c.a) } else { (&ch.b, &c.b) };
            if let Some(span) = s.as_ref().and_then(|s| s.span) {
                side.hex.scroll_to(span.start);
                side.hex.set_cursor(span.start);
            }
            if let (Some(id), Some(doc)) = (self.nodes[i][k], &compared.column.document) {
                side.tree.reveal(&doc.spans, id);
            }
        }
    }

    /// The listed change whose bytes in side `k` hold `offset` (the innermost one).
    fn change_at(&self, c: &Comparison, k: usize, offset: usize) -> Option<usize> {
        self.listed
            .iter()
            .copied()
            .filter_map(|i| {
                let ch = &c.diff.changes[i];
                let s = if k == 0 { &ch.a } else { &ch.b };
                let span = s.as_ref()?.span?;
                span.contains(offset).then_some((span.len(), i))
            })
            .min()
            .map(|(_, i)| i)
    }
}

/// The node of `side` whose bytes are exactly `span` (its value's, or with its key), found from
/// the innermost node at its first byte.
fn node_of(side: &Compared, span: Option<Span>) -> Option<NodeId> {
    let span = span?;
    let spans: &SpanTree = &side.column.document.as_ref()?.spans;
    let (mut id, _) = spans.node_at(span.start)?;
    loop {
        let node = spans.node(id);
        if node.span == span || node.extent() == span {
            return Some(id);
        }
        if node.extent().start < span.start || node.extent().end > span.end {
            // Past the change's bytes: the nearest node holding them all.
            if node.extent().contains(span.start) {
                return Some(id);
            }
        }
        id = node.parent?;
    }
}

impl App {
    /// Compares payload `a.1` of source `a.0` with payload `b.1` of source `b.0` (indices from
    /// 0) and shows the diff view; the comparison runs on a worker.
    pub fn compare(&mut self, a: (usize, usize), b: (usize, usize)) {
        self.diff.a = Some(a);
        self.diff.b = Some(b);
        self.view = super::View::Diff;
        let options = self.diff_options();
        match self.ws.compare(a, b, options) {
            Ok(()) => self.status = None,
            Err(e) => self.status = Some(Status::Error(e.to_string())),
        }
    }

    /// The options the diff view compares with: the patterns typed (the last good ones where
    /// a text does not parse) and whether key order counts.
    fn diff_options(&mut self) -> DiffOptions {
        self.diff
            .parse(&self.settings.diff_keys, &self.settings.diff_ignore);
        DiffOptions {
            keys: self.diff.keys.clone(),
            ignore: self.diff.ignore.clone(),
            order: self.settings.diff_order,
            ..DiffOptions::default()
        }
    }

    /// The diff view's state.
    pub fn diff_view(&self) -> &DiffView {
        &self.diff
    }

    /// Every payload of every open source, as (source, payload) and its name.
    pub(super) fn payload_choices(&self) -> Vec<((usize, usize), String)> {
        payload_choices_of(&self.ws)
    }

    /// The diff view (the main area's third face).
    pub(super) fn diff_area(&mut self, ui: &mut egui::Ui) {
        let edited = self.diff_pickers(ui);
        self.diff_option_fields(ui, edited);
        let mut comparison = self.ws.comparison().cloned();
        match &self.ws.comparison {
            None => {
                ui.weak(
                    "Pick two payloads above, or right-click a source or a payload and choose \
                     Compare with….",
                );
                return;
            }
            Some(run) => match &run.result {
                Stage::Running(_) => {
                    ui.horizontal(|ui| {
                        crate::gui::widgets::spinner(ui);
                        ui.label(format!("comparing {} with {}…", run.names.0, run.names.1));
                    });
                    // The last comparison stays in view (an option being typed re-runs it).
                    match &self.diff.made_for {
                        Some(last) => comparison = Some(last.clone()),
                        None => return,
                    }
                }
                Stage::Failed(e) => {
                    ui.colored_label(
                        ui.visuals().error_fg_color,
                        format!("cannot compare {} with {}: {e}", run.names.0, run.names.1),
                    );
                    return;
                }
                _ => {}
            },
        }
        let Some(c) = comparison else { return };
        self.diff.sync(&c, ui.visuals().dark_mode);
        ui.horizontal_wrapped(|ui| {
            ui.strong(c.summary());
            if let Some(m) = &c.message {
                ui.weak(format!(
                    "compared with the schema of {m} (proto3 JSON forms)"
                ));
            }
        });
        for n in &c.diff.notes {
            ui.weak(format!("note: {n}"));
        }
        self.diff_toolbar(ui, &c);
        ui.separator();
        let list_height = (ui.available_height() * 0.3).clamp(90.0, 320.0);
        ui.allocate_ui(egui::vec2(ui.available_width(), list_height), |ui| {
            self.change_list(ui, &c);
        });
        ui.separator();
        self.diff_sides(ui, &c);
    }

    /// A and B: a combo box each, Compare and Swap, then the options; whether an option was
    /// edited.
    fn diff_pickers(&mut self, ui: &mut egui::Ui) -> bool {
        let choices = self.payload_choices();
        let name = |p: Option<(usize, usize)>| {
            p.and_then(|p| choices.iter().find(|(q, _)| *q == p))
                .map_or_else(|| "choose a payload".to_string(), |(_, n)| n.clone())
        };
        // Defaults: the payload shown, and the next source's (or the next payload).
        if self
            .diff
            .a
            .is_none_or(|p| !choices.iter().any(|(q, _)| *q == p))
        {
            self.diff.a = self
                .ws
                .current
                .and_then(|i| self.ws.entries.get(i).map(|e| (i, e.payload)));
        }
        if self
            .diff
            .b
            .is_none_or(|p| !choices.iter().any(|(q, _)| *q == p))
        {
            // Another source's payload on show, one read as A's format first, the latest
            // opened first: two JSON files just opened are compared, not a JSON file and the
            // first payload of a capture opened earlier.
            let format_of = |i: usize| {
                self.ws
                    .entries
                    .get(i)
                    .and_then(|e| e.analysis.ready())
                    .map(|a| a.format)
            };
            let a_format = self.diff.a.and_then(|a| format_of(a.0));
            let shown = (0..self.ws.entries.len())
                .rev()
                .filter(|&i| Some(i) != self.diff.a.map(|a| a.0))
                .filter_map(|i| self.ws.entries.get(i).map(|e| (i, e.payload)))
                .filter(|p| choices.iter().any(|(q, _)| q == p));
            let mut others: Vec<(usize, usize)> = shown.collect();
            others.sort_by_key(|p| a_format.is_none() || format_of(p.0) != a_format);
            self.diff.b = others
                .first()
                .copied()
                .or_else(|| {
                    choices
                        .iter()
                        .map(|(p, _)| *p)
                        .find(|p| Some(*p) != self.diff.a && Some(p.0) != self.diff.a.map(|a| a.0))
                })
                .or_else(|| {
                    choices
                        .iter()
                        .map(|(p, _)| *p)
                        .find(|p| Some(*p) != self.diff.a)
                });
        }
        let mut go = false;
        let mut edited = false;
        // The options follow the pickers where the row holds both, else on a row of their own,
        // each label kept with its field.
        let one_row = ui.available_width() >= 1200.0;
        ui.horizontal_wrapped(|ui| {
            for (label, slot) in [("A", 0), ("B", 1)] {
                let current = if slot == 0 { self.diff.a } else { self.diff.b };
                let mut pick = current;
                ui.strong(label);
                egui::ComboBox::from_id_salt(("diff-pick", slot))
                    .selected_text(name(current))
                    .width(170.0)
                    .show_ui(ui, |ui| {
                        for (p, n) in &choices {
                            ui.selectable_value(&mut pick, Some(*p), n);
                        }
                    });
                if pick != current {
                    if slot == 0 {
                        self.diff.a = pick;
                    } else {
                        self.diff.b = pick;
                    }
                }
            }
            if ui.button("Swap").clicked() {
                std::mem::swap(&mut self.diff.a, &mut self.diff.b);
                go = self.ws.comparison.is_some();
            }
            let ready = self.diff.a.is_some() && self.diff.b.is_some();
            if ui
                .add_enabled(ready, egui::Button::new("Compare"))
                .clicked()
            {
                go = true;
            }
            if one_row {
                ui.separator();
                edited = self.diff_option_widgets(ui);
            }
        });
        if !one_row {
            ui.horizontal_wrapped(|ui| {
                edited = self.diff_option_widgets(ui);
            });
        }
        if let (true, Some(a), Some(b)) = (go, self.diff.a, self.diff.b) {
            self.push(super::Command::Compare(a, b));
        }
        edited
    }

    /// The options' errors under the pickers' row, and a new comparison when an option was
    /// `edited` and every text parses (one that does not is kept as typed, its error shown).
    fn diff_option_fields(&mut self, ui: &mut egui::Ui, edited: bool) {
        let valid = self
            .diff
            .parse(&self.settings.diff_keys, &self.settings.diff_ignore);
        let error = ui.visuals().error_fg_color;
        for (what, e) in [
            ("Identity keys", &self.diff.key_error),
            ("Ignore", &self.diff.ignore_error),
        ] {
            if let Some(e) = e {
                ui.colored_label(error, format!("{what}: {e}"));
            }
        }
        if edited && valid && self.ws.comparison.is_some() {
            if let (Some(a), Some(b)) = (self.diff.a, self.diff.b) {
                self.push(super::Command::Compare(a, b));
            }
        }
    }

    /// The comparison's options (identity keys, paths ignored, key order); whether one was
    /// edited. The empty keys' field shows the identity fields found
    /// evident.
    fn diff_option_widgets(&mut self, ui: &mut egui::Ui) -> bool {
        let evident = self
            .ws
            .comparison()
            .map(|c| {
                c.diff
                    .evident_keys
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .filter(|k| !k.is_empty())
            .map_or_else(|| "$.data[*].id".to_string(), |k| format!("{k} (evident)"));
        let mut changed = false;
        changed |= ui
            .horizontal(|ui| {
                let label = ui.label("Identity keys");
                ui.add(
                    egui::TextEdit::singleline(&mut self.settings.diff_keys)
                        .hint_text(evident)
                        .desired_width(140.0),
                )
                .labelled_by(label.id)
                .on_hover_text(
                    "the field that identifies an array's records, as `wirelens diff --key`; \
                     several separated by commas. Empty: a key named `id` or ending in `_id` \
                     that nearly every record has (shown greyed when one was found)",
                )
                .changed()
            })
            .inner;
        changed |= ui
            .horizontal(|ui| {
                let label = ui.label("Ignore");
                ui.add(
                    egui::TextEdit::singleline(&mut self.settings.diff_ignore)
                        .hint_text("$.data[*].updated_at")
                        .desired_width(140.0),
                )
                .labelled_by(label.id)
                .on_hover_text("paths left out of the comparison, as `wirelens diff --ignore`")
                .changed()
            })
            .inner;
        changed |= ui
            .checkbox(&mut self.settings.diff_order, "count key order as a change")
            .changed();
        changed
    }

    /// The kind filter (with counts) and the CSV export.
    fn diff_toolbar(&mut self, ui: &mut egui::Ui, c: &Comparison) {
        ui.horizontal_wrapped(|ui| {
            ui.label("Show");
            for (i, kind) in KINDS.iter().enumerate() {
                let n = c.diff.changes.iter().filter(|ch| ch.kind == *kind).count();
                let dark = ui.visuals().dark_mode;
                let (r, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                ui.painter().rect_filled(r, 2.0, change_bg(*kind, dark));
                ui.checkbox(&mut self.diff.shown[i], format!("{} ({n})", kind.name()));
            }
            ui.separator();
            let label = ui.label("Export to");
            ui.add(
                egui::TextEdit::singleline(&mut self.diff.export_path)
                    .hint_text("/tmp/changes.csv")
                    .desired_width(220.0),
            )
            .labelled_by(label.id);
            if ui.button("Choose…").clicked() {
                match super::dialogs::pick(|| {
                    rfd::FileDialog::new()
                        .set_title("Export the changes as CSV")
                        .add_filter("CSV", &["csv"])
                        .set_file_name("wirelens-diff.csv")
                        .save_file()
                }) {
                    super::dialogs::Picked::Chosen(p) => {
                        self.diff.export_path = p.display().to_string();
                    }
                    super::dialogs::Picked::Cancelled => {}
                    super::dialogs::Picked::Unavailable => {
                        self.status = Some(Status::Error(super::dialogs::NO_DIALOG.to_string()));
                    }
                }
            }
            let can = !self.diff.export_path.trim().is_empty();
            if ui
                .add_enabled(can, egui::Button::new("Export CSV"))
                .on_hover_text(
                    "the changes listed, one row each, as `wirelens diff --csv` writes them",
                )
                .clicked()
            {
                self.export_diff(c);
            }
        });
    }

    /// Writes the listed changes as CSV to the export path; the outcome is in the message bar.
    fn export_diff(&mut self, c: &Comparison) {
        let path = PathBuf::from(self.diff.export_path.trim());
        let mut shown = c.clone();
        shown.diff.changes = self
            .diff
            .listed
            .iter()
            .filter_map(|&i| c.diff.changes.get(i).cloned())
            .collect();
        self.status = Some(match export_diff_csv(&shown, &path) {
            Ok(n) => Status::Info(format!(
                "exported {n} of {} changes to {}",
                c.diff.changes.len(),
                path.display()
            )),
            Err(e) => Status::Error(e.to_string()),
        });
    }

    /// The change list: one row per listed change, its kind's colour and its line.
    fn change_list(&mut self, ui: &mut egui::Ui, c: &Comparison) {
        if self.diff.listed.is_empty() {
            ui.weak(if c.diff.changes.is_empty() {
                "no changes"
            } else {
                "no change of the kinds shown"
            });
            return;
        }
        let row_h = ui.spacing().interact_size.y;
        let dark = ui.visuals().dark_mode;
        let mut clicked = None;
        egui::ScrollArea::both()
            .id_salt("diff-changes")
            .auto_shrink([false, false])
            .show_rows(ui, row_h, self.diff.listed.len(), |ui, range| {
                for r in range {
                    let i = self.diff.listed[r];
                    let ch: &Change = &c.diff.changes[i];
                    ui.horizontal(|ui| {
                        let (swatch, _) =
                            ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                        ui.painter()
                            .rect_filled(swatch, 2.0, change_bg(ch.kind, dark));
                        let line = &self.diff.lines[i];
                        let selected = self.diff.selected == Some(i);
                        if ui
                            .add(egui::Button::selectable(selected, line.as_str()))
                            .clicked()
                        {
                            clicked = Some(i);
                        }
                    });
                }
            });
        if let Some(i) = clicked {
            self.diff.select(c, i);
        }
    }

    /// A and B side by side: header, selection line, hex view and tree.
    fn diff_sides(&mut self, ui: &mut egui::Ui, c: &Comparison) {
        let full = ui.available_rect_before_wrap();
        let gap = 8.0;
        let w = ((full.width() - gap) / 2.0).max(200.0);
        let mut clicked = None;
        for k in 0..2 {
            let rect = egui::Rect::from_min_size(
                egui::pos2(full.left() + k as f32 * (w + gap), full.top()),
                egui::vec2(w, full.height()),
            );
            let builder = egui::UiBuilder::new()
                .max_rect(rect)
                .layout(egui::Layout::top_down(egui::Align::Min))
                .id_salt(("diff-side", k));
            ui.scope_builder(builder, |ui| {
                ui.shrink_clip_rect(rect);
                if let Some(i) = self.diff_side(ui, c, k) {
                    clicked = Some(i);
                }
            });
        }
        ui.allocate_rect(full, egui::Sense::hover());
        if let Some(i) = clicked {
            self.diff.select(c, i);
        }
    }

    /// One side; returns the change a click in it selected.
    fn diff_side(&mut self, ui: &mut egui::Ui, c: &Comparison, k: usize) -> Option<usize> {
        let (letter, side) = if k == 0 { ("A", &c.a) } else { ("B", &c.b) };
        let column = &side.column;
        ui.heading(format!("{letter}: {}", side.name));
        ui.label(format!(
            "{}, {} bytes",
            column.format.title(),
            thousands(column.bytes.len())
        ));
        let selected = self.diff.selected.and_then(|i| c.diff.changes.get(i));
        let span = selected.and_then(|ch| if k == 0 { &ch.a } else { &ch.b }.as_ref()?.span);
        match (selected, span) {
            (Some(ch), Some(s)) => {
                let path = if k == 1 {
                    ch.b_path.as_ref().unwrap_or(&ch.path)
                } else {
                    &ch.path
                };
                ui.label(format!(
                    "{letter} · {path}: bytes {}..{} ({} bytes)",
                    s.start,
                    s.end,
                    s.len()
                ));
            }
            (Some(ch), None) => {
                ui.weak(format!("{letter} · {}: not in {letter}", ch.path));
            }
            (None, _) => {
                ui.weak(format!("{letter} · no change selected"));
            }
        }
        let doc = column.document.as_ref()?;
        let view = &mut self.diff.sides[k];
        let describe = |id: NodeId, role: crate::model::ByteRole| {
            let node = doc.spans.node(id);
            let value = doc.summary(id, 60).unwrap_or_default();
            let e = node.extent();
            format!(
                "{}\n{} {value}\nbytes {}..{}, this byte: {}",
                doc.spans.path(id),
                node.kind,
                e.start,
                e.end,
                role.name()
            )
        };
        let input = HexInput {
            bytes: &column.bytes,
            spans: Some(&doc.spans),
            selected: span,
            error_at: None,
            marks: &view.hex_marks,
            describe: &describe,
        };
        let hex_height = (ui.available_height() * 0.5).max(80.0);
        let r = ui
            .allocate_ui(egui::vec2(ui.available_width(), hex_height), |ui| {
                view.hex.show(ui, &input)
            })
            .inner;
        ui.separator();
        let selected_node = self.diff.selected.and_then(|i| self.diff.nodes[i][k]);
        let summary = |id, max_chars| doc.summary(id, max_chars);
        let tree_input = TreeInput {
            summary: &summary,
            spans: &doc.spans,
            selected: selected_node,
            notes: &[],
            marks: &view.tree_marks,
            row_menu: None,
            read_by: None,
        };
        let tree_click = view.tree.show(ui, &tree_input);
        if let Some((offset, _)) = r.clicked {
            return self.diff.change_at(c, k, offset);
        }
        if let Some(id) = tree_click {
            let own = self
                .diff
                .listed
                .iter()
                .copied()
                .find(|&i| self.diff.nodes[i][k] == Some(id));
            return own.or_else(|| self.diff.change_at(c, k, doc.spans.node(id).extent().start));
        }
        None
    }
}

/// Every payload of every source with its name, as the pickers list them: made when a list is
/// shown (a capture's hundreds of thousands of names are not made every frame).
pub(super) fn payload_choices_of(
    ws: &crate::workspace::Workspace,
) -> Vec<((usize, usize), String)> {
    let mut out = Vec::new();
    for (i, e) in ws.entries.iter().enumerate() {
        let n = e.opened.ready().map_or(1, |o| o.payloads.len().max(1));
        for p in 0..n {
            out.push(((i, p), ws.payload_name(i, p)));
        }
    }
    out
}
