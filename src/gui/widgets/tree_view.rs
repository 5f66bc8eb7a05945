//! The tree view: one row per node (key or index, type, value summary, bytes in this format),
//! with expanders, selection and fidelity-note markers.
//!
//! It exists to browse documents of any size: the 15,000-record sample has about 150,000 nodes,
//! so nothing here walks every node per frame. The rows are a flattened list of the expanded
//! nodes, rebuilt only when expansion changes (in time proportional to the rows, since collapsed
//! subtrees are skipped by their `subtree_end`), and drawn with `ScrollArea::show_rows`; the text
//! of a row is worked out the first time the row is drawn and then cached.
//!
//! What it does not do: hold the selection (the app passes the selected node in and gets the
//! clicked node back), or react to hovering.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

use eframe::egui::{self, pos2, vec2, Align2, Rect, Role, Sense, WidgetInfo};

use super::{hover_bg, selection_bg};
use crate::model::{NodeId, Segment, SpanTree, Value};

/// Nodes shallower than this are expanded until the user collapses them: the root and its
/// children, unless the root has more than [`WIDE_ROOT`] children (then the root only: a
/// top-level array of 330,000 records would list millions of rows).
const DEFAULT_DEPTH: u32 = 2;

/// A root with more children than this has only itself expanded at first.
const WIDE_ROOT: usize = 256;

/// Indentation per level, in points.
const INDENT: f32 = 14.0;

/// Longest value summary, in characters.
const SUMMARY_CHARS: usize = 60;

/// Cached row texts are dropped past this many (they are cheap to make again).
const TEXT_CACHE_MAX: usize = 20_000;

/// Sums up a node's value in at most so many characters.
pub type Summarize<'a> = dyn Fn(NodeId, usize) -> Option<String> + 'a;

/// [`TreeInput::summary`] for a whole value whose spans are `spans`.
pub fn summarize<'a>(
    value: &'a Value,
    spans: &'a SpanTree,
) -> impl Fn(NodeId, usize) -> Option<String> + 'a {
    move |id, max_chars| spans.value_of(value, id).map(|v| v.summary(max_chars))
}

/// Draws the right-click menu of a node's row.
pub type RowMenu<'a> = dyn Fn(&mut egui::Ui, NodeId) + 'a;

/// How a node was read, where the app knows more than its bytes say (the schema-resolution rule
/// of Avro read with a reader's schema): the words, and whether the value was read as written.
pub type ReadBy<'a> = dyn Fn(NodeId) -> Option<(String, bool)> + 'a;

/// What the app shows in a tree view this frame.
pub struct TreeInput<'a> {
    /// A node's value summed up in at most so many characters (`None`: not decoded); see
    /// [`summarize`] for a whole value.
    pub summary: &'a Summarize<'a>,
    /// The spans of the buffer this column shows.
    pub spans: &'a SpanTree,
    /// The selected node, highlighted.
    pub selected: Option<NodeId>,
    /// Nodes that carry a fidelity note (marked).
    pub notes: &'a [NodeId],
    /// Rows tinted with their colour (the changes of a diff), sorted by node.
    pub marks: &'a [(NodeId, egui::Color32)],
    /// The right-click menu of a row, drawn for its node (`None`: rows have no menu).
    pub row_menu: Option<&'a RowMenu<'a>>,
    /// How each node was read: a row not read as written shows the words after its value, and
    /// every row that has them shows them when hovered.
    pub read_by: Option<&'a ReadBy<'a>>,
}

/// One visible row: a node and its depth.
#[derive(Debug, Clone, Copy)]
struct Row {
    id: NodeId,
    depth: u32,
}

/// The words of a row.
#[derive(Debug, Clone)]
struct RowText {
    key: String,
    kind: String,
    summary: String,
    bytes: String,
    container: bool,
    has_children: bool,
    /// [`TreeInput::read_by`]'s answer.
    read_by: Option<(String, bool)>,
}

/// The tree view's state: expansion, the flattened rows, a pending scroll. See the module docs.
#[derive(Debug)]
pub struct TreeView {
    id: egui::Id,
    expanded: HashSet<NodeId>,
    /// Nodes shallower than this are expanded unless collapsed ([`DEFAULT_DEPTH`], or 1 for a
    /// wide root).
    default_depth: u32,
    collapsed: HashSet<NodeId>,
    rows: Vec<Row>,
    /// Which tree `rows` was built for (address and node count), and whether expansion changed.
    built_for: Option<(usize, usize)>,
    dirty: bool,
    texts: HashMap<NodeId, RowText>,
    notes_for: Option<(usize, usize)>,
    notes: HashSet<NodeId>,
    scroll_to: Option<NodeId>,
    viewport_height: f32,
}

impl Default for TreeView {
    fn default() -> Self {
        Self::new()
    }
}

impl TreeView {
    /// A view with the root expanded to depth 2.
    pub fn new() -> TreeView {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        TreeView {
            id: egui::Id::unique(("wirelens_tree_view", n)),
            expanded: HashSet::new(),
            collapsed: HashSet::new(),
            default_depth: DEFAULT_DEPTH,
            rows: Vec::new(),
            built_for: None,
            dirty: true,
            texts: HashMap::new(),
            notes_for: None,
            notes: HashSet::new(),
            scroll_to: None,
            viewport_height: 0.0,
        }
    }

    /// Expands the ancestors of `id` and scrolls its row into view next frame.
    pub fn reveal(&mut self, spans: &SpanTree, id: NodeId) {
        if id.index() >= spans.len() {
            return;
        }
        let mut cur = spans.parent(id);
        while let Some(p) = cur {
            self.collapsed.remove(&p);
            self.expanded.insert(p);
            cur = spans.parent(p);
        }
        self.dirty = true;
        self.scroll_to = Some(id);
    }

    /// Number of rows currently listed (expanded nodes and their children).
    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    fn is_expanded(&self, id: NodeId, depth: u32) -> bool {
        expanded_in(
            &self.expanded,
            &self.collapsed,
            id,
            depth,
            self.default_depth,
        )
    }

    fn toggle(&mut self, id: NodeId, depth: u32) {
        if self.is_expanded(id, depth) {
            self.expanded.remove(&id);
            self.collapsed.insert(id);
        } else {
            self.collapsed.remove(&id);
            self.expanded.insert(id);
        }
        self.dirty = true;
    }

    /// Rebuilds the flattened rows: pre-order over expanded nodes only.
    fn rebuild(&mut self, spans: &SpanTree) {
        self.dirty = false;
        let wide = spans
            .root()
            .is_some_and(|root| spans.children(root).nth(WIDE_ROOT).is_some());
        self.default_depth = if wide { 1 } else { DEFAULT_DEPTH };
        let (expanded, collapsed, default) = (&self.expanded, &self.collapsed, self.default_depth);
        self.rows = spans
            .listed(|id, depth| expanded_in(expanded, collapsed, id, depth, default))
            .into_iter()
            .map(|(id, depth)| Row { id, depth })
            .collect();
    }

    /// Draws the rows in the space left in `ui`; returns the node whose row was clicked.
    pub fn show(&mut self, ui: &mut egui::Ui, input: &TreeInput<'_>) -> Option<NodeId> {
        let spans = input.spans;
        let identity = (std::ptr::from_ref(spans) as usize, spans.len());
        if self.built_for != Some(identity) {
            self.built_for = Some(identity);
            self.texts.clear();
            self.dirty = true;
        }
        if self.dirty {
            self.rebuild(spans);
        }
        let notes_identity = (input.notes.as_ptr() as usize, input.notes.len());
        if self.notes_for != Some(notes_identity) {
            self.notes_for = Some(notes_identity);
            self.notes = input.notes.iter().copied().collect();
        }
        if self.texts.len() > TEXT_CACHE_MAX {
            self.texts.clear();
        }
        if self.viewport_height <= 0.0 {
            self.viewport_height = ui.available_height();
        }

        let row_h = (ui.text_style_height(&egui::TextStyle::Body) + 4.0).round();
        let mut area = egui::ScrollArea::both()
            .id_salt(self.id)
            .auto_shrink([false, false]);
        if let Some(target) = self.scroll_to.take() {
            if let Ok(i) = self.rows.binary_search_by_key(&target, |r| r.id) {
                let y = i as f32 * row_h - 0.5 * self.viewport_height + 0.5 * row_h;
                area = area.vertical_scroll_offset(y.max(0.0));
            }
        }

        let mut clicked = None;
        let mut toggled = None;
        // As wide as the column: the byte count sits at its right edge, always in view, and
        // the key, type and summary are cut before it.
        let width = ui.available_width().max(INDENT * 4.0);
        let shown = ui
            .scope(|ui| {
                ui.spacing_mut().item_spacing.y = 0.0;
                area.show_rows(ui, row_h, self.rows.len(), |ui, range| {
                    for i in range {
                        let Some(&row) = self.rows.get(i) else {
                            continue;
                        };
                        let expanded = self.is_expanded(row.id, row.depth);
                        let noted = self.notes.contains(&row.id);
                        let mark = input
                            .marks
                            .binary_search_by_key(&row.id, |m| m.0)
                            .ok()
                            .map(|i| input.marks[i].1);
                        let text = self
                            .texts
                            .entry(row.id)
                            .or_insert_with(|| row_text(input, row.id));
                        let action = draw_row(
                            ui,
                            self.id,
                            row,
                            text,
                            RowState {
                                width,
                                row_h,
                                selected: input.selected == Some(row.id),
                                noted,
                                mark,
                                expanded,
                                menu: input.row_menu,
                            },
                        );
                        match action {
                            RowAction::None => {}
                            RowAction::Select => clicked = Some(row.id),
                            RowAction::Toggle => toggled = Some(row),
                        }
                    }
                })
            })
            .inner;
        self.viewport_height = shown.inner_rect.height();
        if let Some(row) = toggled {
            self.toggle(row.id, row.depth);
        }
        clicked
    }
}

/// Whether a node is expanded: by the user's choice, else by its depth.
fn expanded_in(
    expanded: &HashSet<NodeId>,
    collapsed: &HashSet<NodeId>,
    id: NodeId,
    depth: u32,
    default_depth: u32,
) -> bool {
    if collapsed.contains(&id) {
        false
    } else {
        expanded.contains(&id) || depth < default_depth
    }
}

/// How one row is drawn this frame.
struct RowState<'a> {
    width: f32,
    row_h: f32,
    selected: bool,
    noted: bool,
    mark: Option<egui::Color32>,
    expanded: bool,
    menu: Option<&'a RowMenu<'a>>,
}

enum RowAction {
    None,
    Select,
    Toggle,
}

/// What the parts of a row drawn this frame share: where it is, what it says, how to paint.
struct RowPaint<'a> {
    view_id: egui::Id,
    row: Row,
    text: &'a RowText,
    rect: Rect,
    painter: egui::Painter,
    visuals: egui::Visuals,
}

/// Draws one row of the tree (expander, key, note mark, type, summary, byte count) and says
/// what a click on it asks for. Runs per visible row per frame.
fn draw_row(
    ui: &mut egui::Ui,
    view_id: egui::Id,
    row: Row,
    text: &RowText,
    state: RowState<'_>,
) -> RowAction {
    let (rect, response) = ui.allocate_exact_size(vec2(state.width, state.row_h), Sense::click());
    if let Some(menu) = state.menu {
        response.context_menu(|ui| menu(ui, row.id));
    }
    if !ui.is_rect_visible(rect) {
        return RowAction::None;
    }
    let paint = RowPaint {
        view_id,
        row,
        text,
        rect,
        painter: ui.painter().clone(),
        visuals: ui.visuals().clone(),
    };
    let dark = paint.visuals.dark_mode;
    if state.selected {
        paint.painter.rect_filled(rect, 2.0, selection_bg(dark));
    } else if let Some(c) = state.mark {
        paint.painter.rect_filled(rect, 2.0, c);
    } else if response.hovered() {
        paint.painter.rect_filled(rect, 2.0, hover_bg(dark));
    }
    let x = rect.left() + 4.0 + row.depth as f32 * INDENT;
    let mut action = RowAction::None;
    if text.has_children && expander(ui, &paint, state.expanded, x, state.row_h) {
        action = RowAction::Toggle;
    }
    let bytes_rect = byte_count(ui, &paint);
    row_words(ui, &paint, state.noted, bytes_rect, x + INDENT + 2.0);

    let label = match &text.read_by {
        Some((words, _)) => format!("{}: {} (read by: {words})", text.key, text.summary),
        None => format!("{}: {}", text.key, text.summary),
    };
    response.widget_info(|| WidgetInfo::selected(Role::TreeItem, true, state.selected, &label));
    let response = match &text.read_by {
        Some((words, _)) => response.on_hover_text(format!("read by: {words}")),
        None => response,
    };
    if matches!(action, RowAction::None) {
        if response.double_clicked() && text.container {
            action = RowAction::Toggle;
        } else if response.clicked() {
            action = RowAction::Select;
        }
    }
    action
}

/// The expander of a row with children, at `x`: a triangle pointing down when expanded, right
/// when not, as high as the row (`row_h`); whether it was clicked.
fn expander(ui: &mut egui::Ui, paint: &RowPaint<'_>, expanded: bool, x: f32, row_h: f32) -> bool {
    let (visuals, text) = (&paint.visuals, paint.text);
    let cy = paint.rect.center().y;
    let exp_rect = Rect::from_center_size(pos2(x + 0.5 * INDENT, cy), vec2(INDENT, row_h));
    let exp = ui.interact(
        exp_rect,
        paint.view_id.with(("expander", paint.row.id)),
        Sense::click(),
    );
    let verb = if expanded { "collapse" } else { "expand" };
    exp.widget_info(|| WidgetInfo::labeled(Role::Button, true, format!("{verb} {}", text.key)));
    let color = if exp.hovered() {
        visuals.strong_text_color()
    } else {
        visuals.text_color()
    };
    let c = exp_rect.center();
    let s = 4.0;
    let points = if expanded {
        vec![
            pos2(c.x - s, c.y - 0.5 * s),
            pos2(c.x + s, c.y - 0.5 * s),
            pos2(c.x, c.y + 0.7 * s),
        ]
    } else {
        vec![
            pos2(c.x - 0.5 * s, c.y - s),
            pos2(c.x + 0.7 * s, c.y),
            pos2(c.x - 0.5 * s, c.y + s),
        ]
    };
    paint.painter.add(egui::Shape::convex_polygon(
        points,
        color,
        egui::Stroke::NONE,
    ));
    exp.clicked()
}

/// The byte count at the row's right edge (a label of its own); returns where it was drawn.
fn byte_count(ui: &mut egui::Ui, paint: &RowPaint<'_>) -> Rect {
    let mono = egui::TextStyle::Monospace.resolve(ui.style());
    let rect = paint.rect;
    let bytes_rect = paint.painter.text(
        pos2(rect.right() - 6.0, rect.center().y),
        Align2::RIGHT_CENTER,
        &paint.text.bytes,
        mono,
        paint.visuals.weak_text_color(),
    );
    let bytes_label = ui.interact(
        bytes_rect,
        paint.view_id.with(("bytes", paint.row.id)),
        Sense::hover(),
    );
    bytes_label.widget_info(|| WidgetInfo::labeled(Role::Label, true, &paint.text.bytes));
    bytes_rect
}

/// The row's words from `x`, cut short of the byte count: the key, a note mark (with its
/// tooltip), the type, the summary and how a value not read as written was read.
fn row_words(ui: &mut egui::Ui, paint: &RowPaint<'_>, noted: bool, bytes_rect: Rect, x: f32) {
    let (visuals, text, rect) = (&paint.visuals, paint.text, paint.rect);
    let body = egui::TextStyle::Body.resolve(ui.style());
    let mono = egui::TextStyle::Monospace.resolve(ui.style());
    let cy = rect.center().y;
    let left_of_bytes = Rect::from_min_max(
        rect.min,
        pos2((bytes_rect.left() - 8.0).max(rect.left()), rect.bottom()),
    );
    let painter = paint
        .painter
        .with_clip_rect(left_of_bytes.intersect(paint.painter.clip_rect()));
    let key_rect = painter.text(
        pos2(x, cy),
        Align2::LEFT_CENTER,
        &text.key,
        body.clone(),
        visuals.strong_text_color(),
    );
    let mut x = key_rect.right() + 6.0;
    if noted {
        let warn = painter.text(
            pos2(x, cy),
            Align2::LEFT_CENTER,
            // A glyph every built-in font has, so no font lookup can fail on it.
            "(!)",
            body.clone(),
            visuals.warn_fg_color,
        );
        let r = ui.interact(
            warn,
            paint.view_id.with(("note", paint.row.id)),
            Sense::hover(),
        );
        r.widget_info(|| WidgetInfo::labeled(Role::Label, true, format!("note on {}", text.key)));
        r.on_hover_text(
            "A fidelity note applies here: this format cannot say everything the source said. \
             See the column's notes.",
        );
        x = warn.right() + 6.0;
    }
    let kind_rect = painter.text(
        pos2(x, cy),
        Align2::LEFT_CENTER,
        &text.kind,
        mono,
        visuals.weak_text_color(),
    );
    x = kind_rect.right() + 8.0;
    let summary_clip = Rect::from_min_max(
        pos2(x, rect.top()),
        pos2((bytes_rect.left() - 8.0).max(x), rect.bottom()),
    );
    let summary_painter = painter.with_clip_rect(summary_clip.intersect(painter.clip_rect()));
    let summary_rect = summary_painter.text(
        pos2(x, cy),
        Align2::LEFT_CENTER,
        &text.summary,
        body.clone(),
        visuals.text_color(),
    );
    // A value not read as written says how it was read, after it.
    if let Some((words, false)) = &text.read_by {
        summary_painter.text(
            pos2(summary_rect.right() + 8.0, cy),
            Align2::LEFT_CENTER,
            format!("← {words}"),
            body,
            visuals.hyperlink_color,
        );
    }
}

/// The words of node `id`'s row.
fn row_text(input: &TreeInput<'_>, id: NodeId) -> RowText {
    let spans = input.spans;
    let node = spans.node(id);
    let key = match node.segment {
        Segment::Root => "$".to_string(),
        Segment::Index(i) => format!("[{i}]"),
        Segment::Key(k) => spans.key_text(k).to_string(),
        Segment::OtherKey(k) => format!("{{{}}}", spans.key_text(k)),
    };
    let summary = (input.summary)(id, SUMMARY_CHARS).unwrap_or_else(|| "(not decoded)".to_string());
    let n = node.extent().len();
    RowText {
        key,
        kind: node.kind.to_string(),
        summary,
        bytes: if n == 1 {
            "1 byte".to_string()
        } else {
            format!("{n} bytes")
        },
        container: node.kind.is_container(),
        has_children: node.kind.is_container() && node.subtree_end > id.0 + 1,
        read_by: input.read_by.and_then(|f| f(id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode, DecodeOptions, Format};

    #[test]
    fn value_lookup_matches_preorder() {
        let json = br#"{"a":[1,{"b":"x","c":[true,null]}],"d":{"e":2.5}}"#;
        let doc = decode(json, Format::Json, &DecodeOptions::default()).expect("valid JSON");
        let pre = doc.value.preorder();
        assert_eq!(pre.len(), doc.spans.len());
        for (i, expected) in pre.iter().enumerate() {
            let got = doc.spans.value_of(&doc.value, NodeId(i as u32));
            assert_eq!(got, Some(*expected), "node {i}");
        }
    }

    /// A root with many children lists them collapsed; a narrow one shows their children too.
    #[test]
    fn a_wide_root_starts_with_its_children_collapsed() {
        for (n, rows) in [
            (WIDE_ROOT, 1 + 2 * WIDE_ROOT),
            (WIDE_ROOT + 1, 1 + WIDE_ROOT + 1),
        ] {
            let json = format!("[{}]", vec![r#"{"a":1}"#; n].join(","));
            let doc = decode(json.as_bytes(), Format::Json, &DecodeOptions::default())
                .expect("valid JSON");
            let mut view = TreeView::new();
            view.rebuild(&doc.spans);
            assert_eq!(view.rows.len(), rows, "{n} items");
        }
    }

    #[test]
    fn rows_follow_expansion() {
        let json = br#"{"a":[1,{"b":"x","c":[true,null]}],"d":{"e":2.5}}"#;
        let doc = decode(json, Format::Json, &DecodeOptions::default()).expect("valid JSON");
        let mut view = TreeView::new();
        view.rebuild(&doc.spans);
        // Root, a, a[0], a[1], d, d.e: depth 2 is listed, its children are not.
        assert_eq!(view.rows.len(), 6);
        let c0 = doc
            .spans
            .find(&crate::model::Path::parse("$.a[1].c[0]").expect("path"))[0];
        view.reveal(&doc.spans, c0);
        view.rebuild(&doc.spans);
        assert!(view.rows.iter().any(|r| r.id == c0));
        assert!(view.rows.windows(2).all(|w| w[0].id < w[1].id));
    }
}
