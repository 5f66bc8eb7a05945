//! The hex view: offset | hex | ASCII rows, 16 bytes a row, coloured by what each byte is. A
//! narrow column gives up its ASCII pane before it shows 8 a row (then 4); offsets have as many
//! hex digits as the buffer's last offset needs (at least 4).
//!
//! It exists to show which byte is which field, for buffers of any size. Only the rows on screen
//! are drawn, and only their bytes are looked up in the [`SpanTree`] ([`SpanTree::nodes_at`]: a
//! search per node a row meets, a byte inside the leaf before it taking that leaf), so a frame
//! costs the same for 1 KB and for 100 MB; the buffer is never copied or scanned.
//!
//! Up to a few million pixels of rows it scrolls with egui's `ScrollArea::show_rows`. Past that
//! (about 3.7 MB of bytes), f32 screen coordinates can no longer place rows to the pixel, so the
//! view switches to its own paged scrolling: it keeps the top row as an integer, scrolls with the
//! mouse wheel and keys, and draws its own scroll bar. There the wheel's speed grows with the
//! buffer (a notch moves up to a few pages; see [`wheel_rows`]), and a drag on the bar reaches
//! any offset.
//!
//! What it does not do: decide what is selected (the app passes the selected span in and gets
//! hovered and clicked bytes back), or describe nodes (the app's `describe` callback writes the
//! tooltip).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use eframe::egui::{
    self, pos2, text::LayoutJob, vec2, Color32, FontId, Rect, Role, Sense, Stroke, TextFormat,
    WidgetInfo,
};

use super::{error_bg, hover_bg, role_color, selection_bg};
use crate::model::{ByteRole, NodeId, Span, SpanTree};

/// Bytes in one row when the view is wide enough; narrower views show 8 or 4 per row, so the
/// ASCII column stays visible when four formats share the window.
pub const ROW_BYTES: usize = 16;

/// The row shapes tried, widest first: bytes a row and whether the ASCII pane is drawn. A
/// column gives up its ASCII pane before it shows fewer bytes a row (the tree beside it shows
/// every string in full).
const ROW_SHAPES: [(usize, bool); 6] = [
    (ROW_BYTES, true),
    (ROW_BYTES, false),
    (8, true),
    (8, false),
    (4, true),
    (4, false),
];

/// The fewest offset digits drawn; a longer buffer gets as many as its last offset needs.
pub const MIN_OFFSET_DIGITS: usize = 4;

/// How many hex digits the offsets of a `len`-byte buffer are drawn with: as many as its last
/// offset needs, at least [`MIN_OFFSET_DIGITS`] (a 100-byte payload is not labelled `00000000`).
pub fn offset_digits(len: usize) -> usize {
    let last = len.saturating_sub(1);
    ((usize::BITS - last.leading_zeros()).div_ceil(4) as usize).max(MIN_OFFSET_DIGITS)
}

/// Above this many pixels of rows, the view scrolls by itself instead of with a `ScrollArea`:
/// 2^22, where f32 still resolves a quarter pixel.
const SCROLL_AREA_MAX_PX: f32 = 4_194_304.0;

/// In paged mode, a buffer of this many rows or more scrolls faster than a row per row of wheel
/// movement (see [`wheel_rows`]).
pub const WHEEL_ROWS_AT_NORMAL_SPEED: usize = 100_000;

/// How many rows the paged view moves for `wheel` rows of wheel movement, in a buffer of `rows`
/// rows showing `visible` at once: one for one up to [`WHEEL_ROWS_AT_NORMAL_SPEED`] rows, then
/// proportionally faster, up to a page per row of movement (a notch, about three rows, then moves
/// up to three pages; the scroll bar reaches any offset in one drag).
pub fn wheel_rows(wheel: usize, rows: usize, visible: usize) -> usize {
    let speed = (rows / WHEEL_ROWS_AT_NORMAL_SPEED).clamp(1, visible.max(1));
    wheel.saturating_mul(speed)
}

/// Width of the paged mode's scroll bar.
const BAR_WIDTH: f32 = 12.0;

/// The width a view needs for `row_bytes` bytes a row of a `len`-byte buffer, with its ASCII
/// pane or without, and its scroll bar, with digits `char_w` wide: a column this wide shows that
/// many bytes a row.
pub fn row_width(char_w: f32, row_bytes: usize, len: usize, ascii: bool) -> f32 {
    Layout::new(char_w, 0.0, len, row_bytes.max(1), ascii).width + BAR_WIDTH
}

/// What the app shows in a hex view this frame.
pub struct HexInput<'a> {
    /// The buffer; may be 100 MB (memory-mapped): never copied, never scanned per frame.
    pub bytes: &'a [u8],
    /// `None` while decoding or when undecodable: plain hex, no colours.
    pub spans: Option<&'a SpanTree>,
    /// Extent of the selected node (key included), highlighted.
    pub selected: Option<Span>,
    /// A decode error offset, marked.
    pub error_at: Option<usize>,
    /// Byte ranges tinted with their colour (the changes of a diff), sorted by start and not
    /// overlapping; the error, the selection and the hovered node draw over them.
    pub marks: &'a [(Span, Color32)],
    /// Tooltip body for a byte's node and role (path, type, value, range); the app supplies it.
    pub describe: &'a dyn Fn(NodeId, ByteRole) -> String,
}

/// What the user did in a hex view this frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HexResponse {
    /// Byte offset under the pointer and its node.
    pub hovered: Option<(usize, Option<NodeId>)>,
    /// Byte offset clicked and its node.
    pub clicked: Option<(usize, Option<NodeId>)>,
}

/// The hex view's state: scroll target, cursor, hovered node. See the module docs.
#[derive(Debug)]
pub struct HexView {
    id: egui::Id,
    /// A byte offset to bring into view next frame.
    scroll_target: Option<usize>,
    /// Bytes per row in the last frame.
    row_bytes: usize,
    cursor: Option<usize>,
    hovered_node: Option<NodeId>,
    viewport_height: f32,
    visible_rows: Range<usize>,
    /// Paged mode: first row shown, and wheel movement not yet a whole row.
    top_row: usize,
    wheel_px: f32,
    /// The last target scrolled to, the height it was centred in, and for how many more
    /// frames it is centred again if the height changes (a panel below that grows because of
    /// the same click, a frame later).
    centred: Option<(usize, f32, u8)>,
}

impl Default for HexView {
    fn default() -> Self {
        Self::new()
    }
}

/// Where things go in a row, in points from the row's left edge.
#[derive(Clone, Copy)]
struct Layout {
    char_w: f32,
    row_h: f32,
    /// Bytes per row.
    row_bytes: usize,
    digits: usize,
    hex_x: f32,
    /// Whether the ASCII pane is drawn (a narrow column gives it up to keep 8 bytes a row).
    ascii: bool,
    ascii_x: f32,
    width: f32,
}

impl Layout {
    fn new(char_w: f32, row_h: f32, len: usize, row_bytes: usize, ascii: bool) -> Layout {
        // One space between the parts; a hex cell's half space on each side makes it look
        // like one and a half.
        let digits = offset_digits(len);
        let hex_x = (digits + 1) as f32 * char_w;
        let hex_chars = row_bytes * 3 - 1;
        let ascii_x = hex_x + (hex_chars + 1) as f32 * char_w;
        let width = if ascii {
            ascii_x + row_bytes as f32 * char_w
        } else {
            hex_x + (hex_chars as f32 + 0.5) * char_w
        };
        Layout {
            row_bytes,
            char_w,
            row_h,
            digits,
            hex_x,
            ascii,
            ascii_x,
            width,
        }
    }

    /// The hex cell of byte `i` of a row starting at `left`, half a space wide on each side.
    fn hex_cell(&self, row: Rect, i: usize) -> Rect {
        let x = row.left() + self.hex_x + (3 * i) as f32 * self.char_w - 0.5 * self.char_w;
        Rect::from_min_size(pos2(x, row.top()), vec2(3.0 * self.char_w, self.row_h))
    }

    fn ascii_cell(&self, row: Rect, i: usize) -> Rect {
        let x = row.left() + self.ascii_x + i as f32 * self.char_w;
        Rect::from_min_size(pos2(x, row.top()), vec2(self.char_w, self.row_h))
    }
}

/// Everything a row needs that is the same for every row of one frame.
struct Frame<'a, 'b> {
    input: &'a HexInput<'b>,
    layout: Layout,
    font: FontId,
    dark: bool,
    text: Color32,
    weak: Color32,
    hovered_extent: Option<Span>,
}

/// The colour of the mark holding byte `off`, if any (`marks` sorted by start, not overlapping).
fn mark_at(marks: &[(Span, Color32)], off: usize) -> Option<Color32> {
    let i = marks
        .partition_point(|(s, _)| s.start <= off)
        .checked_sub(1)?;
    let (span, color) = marks[i];
    span.contains(off).then_some(color)
}

impl HexView {
    /// A view scrolled to the top with no cursor.
    pub fn new() -> HexView {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        HexView {
            id: egui::Id::unique(("wirelens_hex_view", n)),
            scroll_target: None,
            row_bytes: ROW_BYTES,
            cursor: None,
            hovered_node: None,
            viewport_height: 0.0,
            visible_rows: 0..0,
            top_row: 0,
            wheel_px: 0.0,
            centred: None,
        }
    }

    /// Next frame brings the offset's row into view (centred).
    pub fn scroll_to(&mut self, offset: usize) {
        self.scroll_target = Some(offset);
    }

    /// Bytes per row drawn last frame (16, or fewer in a narrow column).
    pub fn row_bytes(&self) -> usize {
        self.row_bytes
    }

    /// Last clicked/keyboard byte, for the data inspector.
    pub fn cursor(&self) -> Option<usize> {
        self.cursor
    }

    /// Moves the cursor (without scrolling; call [`HexView::scroll_to`] too to show it).
    pub fn set_cursor(&mut self, offset: usize) {
        self.cursor = Some(offset);
    }

    /// The rows drawn last frame.
    pub fn visible_rows(&self) -> Range<usize> {
        self.visible_rows.clone()
    }

    /// Draws the view in the space left in `ui`, and says what was hovered and clicked.
    pub fn show(&mut self, ui: &mut egui::Ui, input: &HexInput<'_>) -> HexResponse {
        let len = input.bytes.len();
        let font = egui::TextStyle::Monospace.resolve(ui.style());
        let (char_w, text_h) = ui.fonts_mut(|f| (f.glyph_width(&font, '0'), f.row_height(&font)));
        let row_h = (text_h + 2.0).round();
        let room = ui.available_width() - BAR_WIDTH;
        let layout = ROW_SHAPES
            .iter()
            .map(|&(n, ascii)| Layout::new(char_w, row_h, len, n, ascii))
            .find(|l| l.width <= room)
            .unwrap_or_else(|| Layout::new(char_w, row_h, len, 4, false));
        self.row_bytes = layout.row_bytes;
        let rows = len.div_ceil(layout.row_bytes);
        let visuals = ui.visuals();
        let frame = Frame {
            input,
            layout,
            font,
            dark: visuals.dark_mode,
            text: visuals.text_color(),
            weak: visuals.weak_text_color(),
            hovered_extent: self
                .hovered_node
                .zip(input.spans)
                .filter(|(id, s)| id.index() < s.len())
                .map(|(id, s)| s.node(id).extent()),
        };
        self.keyboard(ui, len);
        // This frame's height, not last frame's: a panel that grew or shrank since must not
        // put a centred target off centre.
        self.viewport_height = ui.available_height();
        let mut out = HexResponse::default();
        ui.scope(|ui| {
            ui.spacing_mut().item_spacing.y = 0.0;
            if rows as f32 * layout.row_h > SCROLL_AREA_MAX_PX {
                self.show_paged(ui, &frame, rows, &mut out);
            } else {
                self.show_scrolled(ui, &frame, rows, &mut out);
            }
        });
        self.hovered_node = out.hovered.and_then(|(_, n)| n);
        if let Some((offset, _)) = out.clicked {
            self.cursor = Some(offset);
            ui.memory_mut(|m| m.request_focus(self.id));
        }
        out
    }

    /// The offset to centre this frame: a new target, or the last one again when the height
    /// changed in the few frames after it was centred.
    fn target(&mut self) -> Option<usize> {
        let height = self.viewport_height;
        if let Some(offset) = self.scroll_target.take() {
            self.centred = Some((offset, height, 3));
            return Some(offset);
        }
        let (offset, was, left) = self.centred?;
        if left == 0 {
            self.centred = None;
            return None;
        }
        self.centred = Some((offset, height, left - 1));
        ((height - was).abs() > 0.5).then_some(offset)
    }

    fn show_scrolled(
        &mut self,
        ui: &mut egui::Ui,
        frame: &Frame<'_, '_>,
        rows: usize,
        out: &mut HexResponse,
    ) {
        let row_h = frame.layout.row_h;
        let mut area = egui::ScrollArea::both()
            .id_salt(self.id)
            .auto_shrink([false, false]);
        if let Some(offset) = self.target() {
            let row = offset / frame.layout.row_bytes;
            let y = row as f32 * row_h - 0.5 * self.viewport_height + 0.5 * row_h;
            area = area.vertical_scroll_offset(y.max(0.0));
        }
        let shown = area.show_rows(ui, row_h, rows, |ui, range| {
            self.register_focus(ui);
            for row in range.clone() {
                self.draw_row(ui, frame, row, out);
            }
            range
        });
        self.viewport_height = shown.inner_rect.height();
        self.visible_rows = shown.inner;
    }

    fn show_paged(
        &mut self,
        ui: &mut egui::Ui,
        frame: &Frame<'_, '_>,
        rows: usize,
        out: &mut HexResponse,
    ) {
        let row_h = frame.layout.row_h;
        let avail = ui.available_rect_before_wrap();
        let width = (frame.layout.width + BAR_WIDTH).min(avail.width().max(BAR_WIDTH));
        let (rect, _) = ui.allocate_exact_size(vec2(width, avail.height()), Sense::hover());
        let bar = Rect::from_min_max(pos2(rect.right() - BAR_WIDTH, rect.top()), rect.max);
        let body = Rect::from_min_max(rect.min, pos2(bar.left(), rect.bottom()));
        self.viewport_height = body.height();
        let visible = ((body.height() / row_h).floor() as usize).max(1);
        let max_top = rows.saturating_sub(visible);
        if let Some(offset) = self.target() {
            let row = offset / frame.layout.row_bytes;
            self.top_row = row.saturating_sub(visible / 2);
        }
        // Mouse wheel over the body.
        if ui.rect_contains_pointer(body) {
            let dy = ui.input(|i| i.smooth_scroll_delta.y);
            if dy != 0.0 {
                ui.input_mut(|i| i.smooth_scroll_delta.y = 0.0);
                self.wheel_px -= dy;
                let whole = (self.wheel_px / row_h).trunc();
                self.wheel_px -= whole * row_h;
                let moved = wheel_rows(whole.abs() as usize, rows, visible);
                self.top_row = if whole < 0.0 {
                    self.top_row.saturating_sub(moved)
                } else {
                    self.top_row.saturating_add(moved)
                };
            }
        }
        // The scroll bar: click or drag anywhere on it to jump there.
        let bar_response = ui.interact(bar, self.id.with("bar"), Sense::click_and_drag());
        let thumb_h = (bar.height() * visible as f32 / rows.max(1) as f32)
            .clamp(20.0_f32.min(bar.height()), bar.height());
        let travel = (bar.height() - thumb_h).max(1.0);
        if let Some(p) = bar_response.interact_pointer_pos() {
            let frac = f64::from(((p.y - bar.top() - 0.5 * thumb_h) / travel).clamp(0.0, 1.0));
            self.top_row = (frac * max_top as f64).round() as usize;
        }
        self.top_row = self.top_row.min(max_top);
        let frac = if max_top == 0 {
            0.0
        } else {
            self.top_row as f64 / max_top as f64
        };
        let thumb = Rect::from_min_size(
            pos2(bar.left() + 2.0, bar.top() + (frac as f32) * travel),
            vec2(BAR_WIDTH - 4.0, thumb_h),
        );
        let v = ui.visuals();
        ui.painter().rect_filled(bar, 0.0, v.extreme_bg_color);
        ui.painter()
            .rect_filled(thumb, 3.0, v.widgets.inactive.bg_fill);
        bar_response.widget_info(|| {
            WidgetInfo::labeled(
                Role::ScrollBar,
                true,
                format!("row {} of {rows}", self.top_row),
            )
        });

        let end = (self.top_row + visible + 1).min(rows);
        let range = self.top_row..end;
        ui.scope_builder(egui::UiBuilder::new().max_rect(body), |ui| {
            ui.set_clip_rect(body.intersect(ui.clip_rect()));
            ui.spacing_mut().item_spacing.y = 0.0;
            self.register_focus(ui);
            for row in range.clone() {
                self.draw_row(ui, frame, row, out);
            }
        });
        self.visible_rows = range;
    }

    /// Keeps the view focusable (so arrow keys reach it once clicked).
    fn register_focus(&self, ui: &mut egui::Ui) {
        let rect = ui.max_rect().intersect(ui.clip_rect());
        let r = ui.interact(rect, self.id, Sense::focusable_noninteractive());
        if r.has_focus() {
            ui.memory_mut(|m| {
                m.set_focus_lock_filter(
                    self.id,
                    egui::EventFilter {
                        horizontal_arrows: true,
                        vertical_arrows: true,
                        ..Default::default()
                    },
                );
            });
        }
    }

    /// Arrow keys and page keys move the cursor while the view has focus.
    fn keyboard(&mut self, ui: &mut egui::Ui, len: usize) {
        if len == 0 || !ui.memory(|m| m.has_focus(self.id)) {
            return;
        }
        let page = self.visible_rows.len().max(2) - 1;
        let row_bytes = self.row_bytes.max(1);
        let step: i64 = ui.input(|i| {
            use egui::Key;
            let mut s = 0i64;
            let keys: [(Key, i64); 6] = [
                (Key::ArrowLeft, -1),
                (Key::ArrowRight, 1),
                (Key::ArrowUp, -(row_bytes as i64)),
                (Key::ArrowDown, row_bytes as i64),
                (Key::PageUp, -((page * row_bytes) as i64)),
                (Key::PageDown, (page * row_bytes) as i64),
            ];
            for (k, d) in keys {
                if i.key_pressed(k) {
                    s = s.saturating_add(d);
                }
            }
            s
        });
        if step == 0 {
            return;
        }
        let at = self.cursor.unwrap_or(0) as i64;
        let next = at.saturating_add(step).clamp(0, len as i64 - 1) as usize;
        self.cursor = Some(next);
        let row = next / row_bytes;
        if !self.visible_rows.contains(&row)
            || row + 1 >= self.visible_rows.end
            || row <= self.visible_rows.start
        {
            self.scroll_target = Some(next);
        }
    }

    /// Draws row `row` (offset, hex, ASCII, backgrounds, cursor) and takes its clicks and
    /// hover into `out`. Runs per visible row per frame: it allocates only the row's texts.
    fn draw_row(
        &self,
        ui: &mut egui::Ui,
        frame: &Frame<'_, '_>,
        row: usize,
        out: &mut HexResponse,
    ) {
        let layout = frame.layout;
        let input = frame.input;
        let (rect, _) = ui.allocate_exact_size(vec2(layout.width, layout.row_h), Sense::hover());
        if !ui.is_rect_visible(rect) {
            return;
        }
        let start = row.saturating_mul(layout.row_bytes);
        let end = start
            .saturating_add(layout.row_bytes)
            .min(input.bytes.len());
        let bytes = input.bytes.get(start..end).unwrap_or(&[]);
        let mut info: [Option<(NodeId, ByteRole)>; ROW_BYTES] = [None; ROW_BYTES];
        if let Some(spans) = input.spans {
            spans.nodes_at(start, &mut info[..bytes.len()]);
        }
        let row = RowBytes {
            index: row,
            rect,
            start,
            bytes,
            info: &info,
        };
        paint_backgrounds(ui.painter(), frame, &row);
        let text = row_text(frame, &row);
        let offset_text = format!("{start:0width$x}", width = layout.digits);
        paint_text(
            ui.painter(),
            frame,
            &row,
            &offset_text,
            text.hex_job,
            text.ascii_job,
        );
        self.paint_cursor(ui.painter(), frame, &row);
        // Interaction and accessibility: the offset, the hex and the ASCII are three labels.
        let off_rect = Rect::from_min_size(
            rect.min,
            vec2(layout.digits as f32 * layout.char_w, layout.row_h),
        );
        let off_response = ui.interact(
            off_rect,
            self.id.with(("offset", row.index)),
            Sense::hover(),
        );
        off_response.widget_info(|| WidgetInfo::labeled(Role::Label, true, &offset_text));
        self.row_parts(ui, frame, &row, [&text.hex_label, &text.ascii_label], out);
    }

    /// The cursor, when on this row: an outline in both columns.
    fn paint_cursor(&self, painter: &egui::Painter, frame: &Frame<'_, '_>, row: &RowBytes<'_>) {
        let layout = frame.layout;
        let end = row.start + row.bytes.len();
        let Some(c) = self.cursor.filter(|c| (row.start..end).contains(c)) else {
            return;
        };
        let i = c - row.start;
        let stroke = Stroke::new(1.0, frame.text);
        painter.rect_stroke(
            layout
                .hex_cell(row.rect, i)
                .shrink2(vec2(0.4 * layout.char_w, 0.0)),
            1.0,
            stroke,
            egui::StrokeKind::Inside,
        );
        if layout.ascii {
            painter.rect_stroke(
                layout.ascii_cell(row.rect, i),
                1.0,
                stroke,
                egui::StrokeKind::Inside,
            );
        }
    }

    /// The row's hex and ASCII parts as labels (`labels`: their texts) that take a click on a
    /// byte and show the hovered byte's field in a tooltip.
    fn row_parts(
        &self,
        ui: &mut egui::Ui,
        frame: &Frame<'_, '_>,
        row: &RowBytes<'_>,
        labels: [&String; 2],
        out: &mut HexResponse,
    ) {
        let (layout, rect) = (frame.layout, row.rect);
        let hex_rect = Rect::from_min_max(
            layout.hex_cell(rect, 0).min,
            pos2(
                layout.hex_cell(rect, layout.row_bytes - 1).max.x,
                rect.bottom(),
            ),
        );
        let ascii_rect = Rect::from_min_max(
            layout.ascii_cell(rect, 0).min,
            layout.ascii_cell(rect, layout.row_bytes - 1).max,
        );
        let parts = [
            ("hex", hex_rect, labels[0], 3.0 * layout.char_w),
            ("ascii", ascii_rect, labels[1], layout.char_w),
        ];
        let shown = if layout.ascii {
            &parts[..]
        } else {
            &parts[..1]
        };
        for &(part, part_rect, label, cell_w) in shown {
            let response = ui.interact(part_rect, self.id.with((part, row.index)), Sense::click());
            response.widget_info(|| WidgetInfo::labeled(Role::Label, true, label));
            let left = part_rect.left();
            let byte_at = |p: egui::Pos2| -> Option<usize> {
                let i = ((p.x - left) / cell_w).floor();
                (i >= 0.0 && (i as usize) < row.bytes.len()).then(|| row.start + i as usize)
            };
            if response.clicked() {
                if let Some(off) = response.interact_pointer_pos().and_then(byte_at) {
                    out.clicked = Some((off, row.info[off - row.start].map(|(n, _)| n)));
                }
            }
            if let Some(off) = response.hover_pos().and_then(byte_at) {
                let found = row.info[off - row.start];
                out.hovered = Some((off, found.map(|(n, _)| n)));
                let byte = row.bytes[off - row.start];
                response
                    .on_hover_ui_at_pointer(|ui| byte_tooltip(ui, frame.input, found, off, byte));
            }
        }
    }
}

/// A row of a hex view being drawn: its index, place, bytes and each byte's node and role.
struct RowBytes<'a> {
    index: usize,
    rect: Rect,
    /// The offset of its first byte.
    start: usize,
    bytes: &'a [u8],
    info: &'a [Option<(NodeId, ByteRole)>; ROW_BYTES],
}

/// A row's texts: the hex and ASCII galleys to lay out, coloured by role, and the same as plain
/// labels for accessibility.
struct RowText {
    hex_job: LayoutJob,
    ascii_job: LayoutJob,
    hex_label: String,
    ascii_label: String,
}

/// The row's byte backgrounds: the error, then the selection, then a mark, then the hovered
/// node.
fn paint_backgrounds(painter: &egui::Painter, frame: &Frame<'_, '_>, row: &RowBytes<'_>) {
    let (layout, input) = (frame.layout, frame.input);
    let n = row.bytes.len();
    for i in 0..n {
        let off = row.start + i;
        let bg = if input.error_at == Some(off) {
            Some(error_bg(frame.dark))
        } else if input.selected.is_some_and(|s| s.contains(off)) {
            Some(selection_bg(frame.dark))
        } else if let Some(c) = mark_at(input.marks, off) {
            Some(c)
        } else if frame.hovered_extent.is_some_and(|s| s.contains(off)) {
            Some(hover_bg(frame.dark))
        } else {
            None
        };
        if let Some(bg) = bg {
            let mut hex = layout.hex_cell(row.rect, i);
            if i == 0 {
                hex.min.x += 0.5 * layout.char_w;
            }
            if i + 1 == n {
                hex.max.x -= 0.5 * layout.char_w;
            }
            painter.rect_filled(hex, 0.0, bg);
            if layout.ascii {
                painter.rect_filled(layout.ascii_cell(row.rect, i), 0.0, bg);
            }
        }
    }
}

/// The row's hex and ASCII text, each byte coloured by its role.
fn row_text(frame: &Frame<'_, '_>, row: &RowBytes<'_>) -> RowText {
    let (layout, input) = (frame.layout, frame.input);
    let color = |i: usize| -> Color32 {
        // The error byte (on its red background) and plain hex use the text colour.
        if input.error_at == Some(row.start + i) || input.spans.is_none() {
            frame.text
        } else {
            match row.info[i] {
                Some((_, role)) => role_color(role, frame.dark),
                None => frame.weak,
            }
        }
    };
    let mut text = RowText {
        hex_job: LayoutJob::default(),
        ascii_job: LayoutJob::default(),
        hex_label: String::with_capacity(layout.row_bytes * 3),
        ascii_label: String::with_capacity(layout.row_bytes),
    };
    for (i, &b) in row.bytes.iter().enumerate() {
        let fmt = TextFormat::simple(frame.font.clone(), color(i));
        let h = format!("{b:02x}");
        text.hex_label.push_str(&h);
        text.hex_job.append(&h, 0.0, fmt.clone());
        if i + 1 < row.bytes.len() {
            text.hex_label.push(' ');
            text.hex_job.append(" ", 0.0, fmt.clone());
        }
        let c = if b.is_ascii_graphic() || b == b' ' {
            b as char
        } else {
            '.'
        };
        text.ascii_label.push(c);
        text.ascii_job.append(&c.to_string(), 0.0, fmt);
    }
    text
}

/// The row's offset, hex and ASCII text, and the faint rule between the two halves of the row.
fn paint_text(
    painter: &egui::Painter,
    frame: &Frame<'_, '_>,
    row: &RowBytes<'_>,
    offset_text: &str,
    hex_job: LayoutJob,
    ascii_job: LayoutJob,
) {
    let (layout, rect) = (frame.layout, row.rect);
    let text_y = rect.top() + 1.0;
    painter.text(
        pos2(rect.left(), text_y),
        egui::Align2::LEFT_TOP,
        offset_text,
        frame.font.clone(),
        frame.weak,
    );
    let hex_galley = painter.layout_job(hex_job);
    painter.galley(
        pos2(rect.left() + layout.hex_x, text_y),
        hex_galley,
        frame.text,
    );
    if layout.ascii {
        let ascii_galley = painter.layout_job(ascii_job);
        painter.galley(
            pos2(rect.left() + layout.ascii_x, text_y),
            ascii_galley,
            frame.text,
        );
    }
    let mid = rect.left() + layout.hex_x + (3 * layout.row_bytes / 2) as f32 * layout.char_w
        - layout.char_w;
    painter.vline(
        mid,
        rect.y_range(),
        Stroke::new(1.0, frame.weak.gamma_multiply(0.25)),
    );
}

/// The tooltip of a hovered byte: its field (as the app describes it), or that it is in none,
/// and its offset and value.
fn byte_tooltip(
    ui: &mut egui::Ui,
    input: &HexInput<'_>,
    found: Option<(NodeId, ByteRole)>,
    off: usize,
    byte: u8,
) {
    match (found, input.spans) {
        (Some((node, role)), _) => {
            ui.label((input.describe)(node, role));
        }
        (None, Some(_)) => {
            ui.label("Outside every field (whitespace or trailing bytes)");
        }
        (None, None) => {}
    }
    ui.weak(format!("offset {off} (0x{off:x}), byte 0x{byte:02x}"));
}
