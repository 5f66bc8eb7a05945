//! Minimal stand-ins for the inspector's widgets (hex view, tree view, data inspector, fonts),
//! with exactly the signatures of the shared widget contract, so the app builds and its flows can
//! be tested before the real widgets land. Plain, unstyled, and replaced wholesale at merge.

use eframe::egui::{self, Color32, RichText, ScrollArea, Ui};

use crate::model::{ByteRole, NodeId, Span, SpanTree, Value};

/// Colours for byte roles, chosen for both light and dark themes.
pub fn role_color(role: ByteRole, dark: bool) -> Color32 {
    match (role, dark) {
        (ByteRole::Key, true) => Color32::from_rgb(120, 180, 255),
        (ByteRole::Key, false) => Color32::from_rgb(20, 80, 180),
        (ByteRole::Header, true) => Color32::from_rgb(230, 170, 90),
        (ByteRole::Header, false) => Color32::from_rgb(160, 90, 0),
        (ByteRole::Value, true) => Color32::from_rgb(140, 220, 140),
        (ByteRole::Value, false) => Color32::from_rgb(20, 120, 40),
        (ByteRole::Structure, true) => Color32::GRAY,
        (ByteRole::Structure, false) => Color32::DARK_GRAY,
    }
}

/// Hex view state.
#[derive(Debug, Default)]
pub struct HexView {
    scroll: Option<usize>,
    cursor: Option<usize>,
}

/// What the hex view shows.
pub struct HexInput<'a> {
    /// The bytes.
    pub bytes: &'a [u8],
    /// Their spans, when known.
    pub spans: Option<&'a SpanTree>,
    /// The selected node's extent.
    pub selected: Option<Span>,
    /// A decode error offset.
    pub error_at: Option<usize>,
    /// Tooltip text for a node.
    pub describe: &'a dyn Fn(NodeId, ByteRole) -> String,
}

/// What happened in the hex view.
#[derive(Debug, Default, Clone, Copy)]
pub struct HexResponse {
    /// Byte under the pointer.
    pub hovered: Option<(usize, Option<NodeId>)>,
    /// Byte clicked.
    pub clicked: Option<(usize, Option<NodeId>)>,
}

const PER_ROW: usize = 16;

impl HexView {
    /// A new view.
    pub fn new() -> HexView {
        HexView::default()
    }

    /// Brings `offset` into view next frame.
    pub fn scroll_to(&mut self, offset: usize) {
        self.scroll = Some(offset);
    }

    /// The cursor byte.
    pub fn cursor(&self) -> Option<usize> {
        self.cursor
    }

    /// Moves the cursor.
    pub fn set_cursor(&mut self, offset: usize) {
        self.cursor = Some(offset);
    }

    /// Draws the view.
    pub fn show(&mut self, ui: &mut Ui, input: &HexInput<'_>) -> HexResponse {
        let mut out = HexResponse::default();
        let rows = input.bytes.len().div_ceil(PER_ROW);
        let height = ui.text_style_height(&egui::TextStyle::Monospace);
        let mut area = ScrollArea::vertical()
            .id_salt("hex")
            .auto_shrink([false, false]);
        if let Some(target) = self.scroll.take() {
            let row = target / PER_ROW;
            area = area.vertical_scroll_offset(row as f32 * (height + ui.spacing().item_spacing.y));
        }
        let dark = ui.visuals().dark_mode;
        area.show_rows(ui, height, rows, |ui, range| {
            for row in range {
                let start = row * PER_ROW;
                let end = (start + PER_ROW).min(input.bytes.len());
                let Some(chunk) = input.bytes.get(start..end) else {
                    continue;
                };
                ui.horizontal(|ui| {
                    ui.spacing_mut().item_spacing.x = 4.0;
                    ui.label(RichText::new(format!("{start:08x}")).monospace().weak());
                    for (i, b) in chunk.iter().enumerate() {
                        let offset = start + i;
                        let role = input.spans.and_then(|s| s.node_at(offset));
                        let mut text = RichText::new(format!("{b:02x}")).monospace();
                        if let Some((_, r)) = role {
                            text = text.color(role_color(r, dark));
                        }
                        if input.selected.is_some_and(|s| s.contains(offset)) {
                            text = text.background_color(ui.visuals().selection.bg_fill);
                        }
                        if input.error_at == Some(offset) {
                            text = text.background_color(ui.visuals().error_fg_color);
                        }
                        let r = ui.add(egui::Label::new(text).sense(egui::Sense::click()));
                        let node = role.map(|(n, _)| n);
                        if r.hovered() {
                            out.hovered = Some((offset, node));
                        }
                        if r.clicked() {
                            self.cursor = Some(offset);
                            out.clicked = Some((offset, node));
                        }
                        if let Some((n, role)) = role {
                            r.on_hover_text((input.describe)(n, role));
                        }
                    }
                    let ascii: String = chunk
                        .iter()
                        .map(|&b| {
                            if b.is_ascii_graphic() || b == b' ' {
                                b as char
                            } else {
                                '.'
                            }
                        })
                        .collect();
                    ui.label(RichText::new(ascii).monospace().weak());
                });
            }
        });
        out
    }
}

/// Tree view state.
#[derive(Debug, Default)]
pub struct TreeView {
    scroll: Option<NodeId>,
}

/// What the tree view shows.
pub struct TreeInput<'a> {
    /// The value (`value.preorder()[i]` is node `i`).
    pub value: &'a Value,
    /// Its spans.
    pub spans: &'a SpanTree,
    /// The selected node.
    pub selected: Option<NodeId>,
    /// Nodes with a fidelity note.
    pub notes: &'a [NodeId],
}

impl TreeView {
    /// A new view.
    pub fn new() -> TreeView {
        TreeView::default()
    }

    /// Scrolls to `id` next frame.
    pub fn reveal(&mut self, _spans: &SpanTree, id: NodeId) {
        self.scroll = Some(id);
    }

    /// Draws every node (no folding); returns the clicked one.
    pub fn show(&mut self, ui: &mut Ui, input: &TreeInput<'_>) -> Option<NodeId> {
        let values = input.value.preorder();
        let nodes = input.spans.nodes();
        let count = nodes.len().min(values.len());
        let height = ui.text_style_height(&egui::TextStyle::Body);
        let mut area = ScrollArea::vertical()
            .id_salt("tree")
            .auto_shrink([false, false]);
        if let Some(id) = self.scroll.take() {
            area = area
                .vertical_scroll_offset(id.index() as f32 * (height + ui.spacing().item_spacing.y));
        }
        let mut clicked = None;
        area.show_rows(ui, height, count, |ui, range| {
            for i in range {
                let id = NodeId(i as u32);
                let (Some(node), Some(value)) = (nodes.get(i), values.get(i)) else {
                    continue;
                };
                let mut depth = 0;
                let mut p = node.parent;
                while let Some(q) = p {
                    depth += 1;
                    p = input.spans.node(q).parent;
                }
                let name = input
                    .spans
                    .path_segment(id)
                    .map_or_else(|| "$".to_string(), |s| s.to_string());
                let mark = if input.notes.contains(&id) {
                    " (note)"
                } else {
                    ""
                };
                let text = format!("{name}: {} {}{mark}", value.kind(), value.summary(40));
                ui.horizontal(|ui| {
                    ui.add_space(depth as f32 * 12.0);
                    if ui
                        .selectable_label(input.selected == Some(id), text)
                        .clicked()
                    {
                        clicked = Some(id);
                    }
                });
            }
        });
        clicked
    }
}

/// The data inspector for `bytes[offset..]`.
pub fn data_inspector(ui: &mut Ui, bytes: &[u8], offset: usize) {
    let get = |n: usize| bytes.get(offset..offset.saturating_add(n));
    ui.horizontal_wrapped(|ui| {
        ui.label(format!("offset {offset}"));
        match get(1) {
            Some([b]) => ui.label(format!("u8 {b}  i8 {}", *b as i8)),
            _ => ui.label("u8 —"),
        };
        match get(4).and_then(|s| <[u8; 4]>::try_from(s).ok()) {
            Some(a) => ui.label(format!(
                "u32 LE {}  u32 BE {}  f32 LE {}",
                u32::from_le_bytes(a),
                u32::from_be_bytes(a),
                f32::from_le_bytes(a)
            )),
            None => ui.label("u32 —"),
        };
    });
}

/// A "go to offset" field; returns the offset on Enter.
pub fn goto_offset(ui: &mut Ui, text: &mut String, len: usize) -> Option<usize> {
    let r = ui.add(
        egui::TextEdit::singleline(text)
            .hint_text("go to offset")
            .desired_width(100.0),
    );
    if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
        let t = text.trim();
        let parsed = match t.strip_prefix("0x") {
            Some(h) => usize::from_str_radix(h, 16).ok(),
            None => t.parse().ok(),
        };
        return parsed.filter(|&o| o < len);
    }
    None
}

/// Which fallback fonts were found.
#[derive(Debug, Default, Clone)]
pub struct FontReport {
    /// Font files added.
    pub found: Vec<String>,
}

/// Adds installed CJK fonts as fallbacks (a fixed list of common paths).
pub fn install_fallback_fonts(ctx: &egui::Context) -> FontReport {
    let candidates = [
        "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
        "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
        "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    ];
    let mut report = FontReport::default();
    let mut fonts = egui::FontDefinitions::default();
    for path in candidates {
        if let Ok(data) = std::fs::read(path) {
            fonts.font_data.insert(
                path.to_string(),
                std::sync::Arc::new(egui::FontData::from_owned(data)),
            );
            for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
                fonts
                    .families
                    .entry(family)
                    .or_default()
                    .push(path.to_string());
            }
            report.found.push(path.to_string());
        }
    }
    if !report.found.is_empty() {
        ctx.set_fonts(fonts);
    }
    report
}
