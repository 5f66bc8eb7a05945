//! The inspector's widgets driven through egui_kittest: the hex view (rows, hover, click,
//! scrolling far down large buffers), the tree view (rows, click, reveal), the data inspector
//! and go-to-offset, and the font fallbacks that let CJK text render.

use eframe::egui::{self, vec2, Pos2};
use egui_kittest::{kittest::Queryable, Harness};
use wirelens::codec::{decode, DecodeOptions, Format};
use wirelens::gui::fonts;
use wirelens::gui::widgets::{
    data_inspector, goto_offset, HexInput, HexResponse, HexView, TreeInput, TreeView,
};
use wirelens::model::{ByteRole, NodeId, Path, SpanTree, Value};

/// `{"a": 1, "b": [true, "中"]}` as MessagePack, written out by hand from the spec:
/// fixmap(2), fixstr "a", 1, fixstr "b", fixarray(2), true, fixstr(3) "中" (e4 b8 ad).
const MSGPACK: [u8; 12] = [
    0x82, 0xa1, 0x61, 0x01, 0xa1, 0x62, 0x92, 0xc3, 0xa3, 0xe4, 0xb8, 0xad,
];

struct HexState {
    view: HexView,
    bytes: Vec<u8>,
    spans: Option<SpanTree>,
    last: HexResponse,
    clicked: Option<(usize, Option<NodeId>)>,
}

fn hex_harness(bytes: Vec<u8>, spans: Option<SpanTree>) -> Harness<'static, HexState> {
    hex_harness_sized(bytes, spans, 900.0)
}

fn hex_harness_sized(
    bytes: Vec<u8>,
    spans: Option<SpanTree>,
    width: f32,
) -> Harness<'static, HexState> {
    let state = HexState {
        view: HexView::new(),
        bytes,
        spans,
        last: HexResponse::default(),
        clicked: None,
    };
    Harness::builder()
        .with_size(vec2(width, 500.0))
        .with_context_setup(|ctx| {
            // Tooltips at once, so a hover shows one within a run.
            ctx.all_styles_mut(|s| s.interaction.tooltip_delay = 0.0);
        })
        .build_ui_state(
            |ui, s: &mut HexState| {
                let spans = s.spans.clone();
                let describe = |id: NodeId, role: ByteRole| match &spans {
                    Some(t) => format!("{} ({})", t.path(id), role.name()),
                    None => String::new(),
                };
                let input = HexInput {
                    bytes: &s.bytes,
                    spans: s.spans.as_ref(),
                    selected: None,
                    error_at: None,
                    marks: &[],
                    describe: &describe,
                };
                s.last = s.view.show(ui, &input);
                if s.last.clicked.is_some() {
                    s.clicked = s.last.clicked;
                }
            },
            state,
        )
}

/// Centre of byte `i` of a row whose hex part is `rect` (16 cells of equal width).
fn hex_cell_centre(rect: egui::Rect, i: usize) -> Pos2 {
    let cell = rect.width() / 16.0;
    Pos2::new(rect.left() + cell * (i as f32 + 0.5), rect.center().y)
}

#[test]
fn hex_rows_show_offset_hex_and_ascii() {
    let doc = decode(&MSGPACK, Format::MessagePack, &DecodeOptions::default()).expect("valid");
    let mut h = hex_harness(MSGPACK.to_vec(), Some(doc.spans));
    h.run();
    // A 12-byte buffer's offsets take 4 digits, not 8.
    h.get_by_label("0000");
    h.get_by_label("82 a1 61 01 a1 62 92 c3 a3 e4 b8 ad");
    h.get_by_label("..a..b......");
    assert!(h.query_by_label("0010").is_none(), "only one row");
}

#[test]
fn hovering_a_byte_reports_its_node_and_clicking_selects_it() {
    let doc = decode(&MSGPACK, Format::MessagePack, &DecodeOptions::default()).expect("valid");
    let spans = doc.spans.clone();
    let mut h = hex_harness(MSGPACK.to_vec(), Some(doc.spans));
    h.run();
    let row = h.get_by_label("82 a1 61 01 a1 62 92 c3 a3 e4 b8 ad").rect();

    // Byte 2 is the text of the key "a": the key part of node $.a.
    h.hover_at(hex_cell_centre(row, 2));
    h.run();
    let (offset, node) = h.state().last.hovered.expect("a byte is hovered");
    assert_eq!(offset, 2);
    let (expected, role) = spans.node_at(2).expect("byte 2 belongs to a node");
    assert_eq!(node, Some(expected));
    assert_eq!(spans.path(expected).to_string(), "$.a");
    assert_eq!(role, ByteRole::Key);
    // The tooltip shows the app's description of the node.
    h.get_by_label("$.a (key)");

    // Byte 7 (c3) is `true`, the first item of $.b.
    h.hover_at(hex_cell_centre(row, 7));
    h.run();
    assert_eq!(h.state().last.hovered.map(|x| x.0), Some(7));
    h.event(egui::Event::PointerButton {
        pos: hex_cell_centre(row, 7),
        button: egui::PointerButton::Primary,
        pressed: true,
        modifiers: egui::Modifiers::NONE,
    });
    h.event(egui::Event::PointerButton {
        pos: hex_cell_centre(row, 7),
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    h.run();
    let b0 = spans.find(&Path::parse("$.b[0]").expect("path"));
    assert_eq!(h.state().clicked, Some((7, b0.first().copied())));
    assert_eq!(h.state().view.cursor(), Some(7));

    // The ASCII column maps to the same bytes: its 10th cell is byte 9, the first byte of "中".
    let ascii = h.get_by_label("..a..b......").rect();
    let cell = ascii.width() / 16.0;
    h.hover_at(Pos2::new(ascii.left() + cell * 9.5, ascii.center().y));
    h.run();
    let (offset, node) = h.state().last.hovered.expect("a byte is hovered");
    assert_eq!(offset, 9);
    let text = spans.find(&Path::parse("$.b[1]").expect("path"));
    assert_eq!(node, text.first().copied());
}

#[test]
fn scroll_to_brings_a_far_row_into_view() {
    // 1 MB: the view scrolls with a ScrollArea.
    let bytes: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    let mut h = hex_harness(bytes, None);
    h.run();
    // Offsets up to 0xf423f take 5 digits.
    h.get_by_label("00000");
    // Offset 1,000,000 is not in the buffer's last row; 999,000 (0xf3e58) is in row 0xf3e50.
    assert!(h.query_by_label("f3e50").is_none());
    h.state_mut().view.scroll_to(999_000);
    h.run();
    let row = h.get_by_label("f3e50").rect();
    assert!(row.top() >= 0.0 && row.bottom() <= 500.0, "row at {row:?}");
    // Centred: in the middle fifth of the 500-point-high view, not at an edge.
    assert!(
        (row.center().y - 250.0).abs() < 50.0,
        "row centre at {} of 500",
        row.center().y
    );
    assert!(h.query_by_label("00000").is_none(), "the top scrolled away");
    // Its bytes are the pattern's: 999,000 mod 251 = 4, so the row starts 999,000 - 8.
    let first = (999_000 - 8) % 251;
    let expected: Vec<String> = (0..16)
        .map(|i| format!("{:02x}", (first + i) % 251))
        .collect();
    h.get_by_label(&expected.join(" "));
}

#[test]
fn scroll_to_works_past_the_scroll_area_limit() {
    // 8 MB: more rows than a ScrollArea can place to the pixel; the view pages by itself.
    let mut h = hex_harness(vec![0u8; 8 << 20], None);
    h.run();
    h.get_by_label("000000");
    h.state_mut().view.scroll_to(7_000_000);
    h.run();
    // 7,000,000 = 0x6acfc0, which starts a row.
    let row = h.get_by_label("6acfc0").rect();
    assert!(row.top() >= 0.0 && row.bottom() <= 500.0, "row at {row:?}");
    let shown = h.state().view.visible_rows();
    assert!(shown.contains(&(7_000_000 / 16)), "rows {shown:?}");
    // The last row is reachable too.
    h.state_mut().view.scroll_to((8 << 20) - 1);
    h.run();
    h.get_by_label(&format!("{:06x}", (8 << 20) - 16));
}

struct TreeState {
    view: TreeView,
    value: Value,
    spans: SpanTree,
    selected: Option<NodeId>,
    clicked: Option<NodeId>,
    report: Option<fonts::FontReport>,
}

fn tree_harness(json: &[u8]) -> Harness<'static, TreeState> {
    let doc = decode(json, Format::Json, &DecodeOptions::default()).expect("valid JSON");
    let state = TreeState {
        view: TreeView::new(),
        value: doc.value,
        spans: doc.spans,
        selected: None,
        clicked: None,
        report: None,
    };
    Harness::builder()
        .with_size(vec2(700.0, 500.0))
        .build_ui_state(
            |ui, s: &mut TreeState| {
                if s.report.is_none() {
                    // The fonts the tests bring (a CJK subset), found by the app's own discovery,
                    // so the CJK text draws on a machine with no CJK font installed.
                    let ours = fonts::FontSources::Folders(vec!["tests/fixtures/fonts".into()]);
                    s.report = Some(fonts::install_fallback_fonts_from(ui.ctx(), &ours));
                }
                let summary = wirelens::gui::widgets::summarize(&s.value, &s.spans);
                let input = TreeInput {
                    summary: &summary,
                    spans: &s.spans,
                    selected: s.selected,
                    notes: &[],
                    marks: &[],
                    row_menu: None,
                    read_by: None,
                };
                if let Some(id) = s.view.show(ui, &input) {
                    s.clicked = Some(id);
                    s.selected = Some(id);
                }
            },
            state,
        )
}

const PROFILE: &str = r#"{"user":{"name":"李雷","tags":["a","b"],
  "address":{"city":"上海","geo":{"lat":31.2,"lng":121.5}}},"count":2}"#;

#[test]
fn tree_lists_two_levels_and_clicks_return_the_node() {
    let mut h = tree_harness(PROFILE.as_bytes());
    h.run();
    // The CJK values render only with a fallback font (kittest fails on missing glyphs).
    let report = h.state().report.clone().expect("fonts installed");
    assert!(report.has_cjk(), "{}", report.summary());

    h.get_by_label("$: map(2)");
    h.get_by_label("user: map(3)");
    h.get_by_label("name: \"李雷\"");
    h.get_by_label("tags: array(2)");
    h.get_by_label("count: 2");
    // Depth 3 is collapsed until asked for.
    assert!(h.query_by_label("city: \"上海\"").is_none());

    h.get_by_label("address: map(2)").click();
    h.run();
    let address = h
        .state()
        .spans
        .find(&Path::parse("$.user.address").expect("path"));
    assert_eq!(h.state().clicked, address.first().copied());

    // The expander opens the node.
    h.get_by_label("expand address").click();
    h.run();
    h.get_by_label("city: \"上海\"");
    h.get_by_label("collapse address");
}

#[test]
fn reveal_expands_ancestors_of_a_deep_node() {
    let mut h = tree_harness(PROFILE.as_bytes());
    h.run();
    assert!(h.query_by_label("lat: 31.2").is_none());
    let lat = h
        .state()
        .spans
        .find(&Path::parse("$.user.address.geo.lat").expect("path"))[0];
    {
        let s = h.state_mut();
        s.view.reveal(&s.spans, lat);
    }
    h.run();
    h.get_by_label("lat: 31.2");
    h.get_by_label("geo: map(2)");
}

#[test]
fn reveal_scrolls_a_far_record_of_the_sample_into_view() {
    let json = std::fs::read("samples/transactions-1k.json").expect("sample present");
    // The expected text comes from serde_json, not from wirelens.
    let parsed: serde_json::Value = serde_json::from_slice(&json).expect("valid JSON");
    let merchant = parsed["transactions"][900]["merchant"]
        .as_str()
        .expect("merchant is text")
        .to_string();
    let mut h = tree_harness(&json);
    h.run();
    h.get_by_label("[0]: map(6)");
    assert!(h.query_by_label("[900]: map(6)").is_none());
    let id = h
        .state()
        .spans
        .find(&Path::parse("$.transactions[900].merchant").expect("path"))[0];
    {
        let s = h.state_mut();
        s.view.reveal(&s.spans, id);
    }
    h.run();
    h.get_by_label("[900]: map(6)");
    h.get_by_label(&format!("merchant: {merchant:?}"));
    assert!(h.query_by_label("[0]: map(6)").is_none());
}

/// The value shown on the same grid row as `label`, to its right.
fn value_beside(h: &Harness<'_, Vec<u8>>, label: &str, value: &str) {
    let l = h.get_by_label(label).rect();
    let found = h.query_all_by_label(value).any(|n| {
        let r = n.rect();
        (r.center().y - l.center().y).abs() < 4.0 && r.left() > l.right()
    });
    assert!(found, "{value:?} is not beside {label:?}");
}

fn inspector_harness(bytes: Vec<u8>) -> Harness<'static, Vec<u8>> {
    Harness::builder()
        .with_size(vec2(900.0, 500.0))
        .build_ui_state(
            |ui, bytes: &mut Vec<u8>| data_inspector(ui, bytes, 0),
            bytes,
        )
}

#[test]
fn data_inspector_reads_known_bytes() {
    let mut h = inspector_harness(vec![0x01, 0x02, 0x03, 0x04]);
    h.run();
    value_beside(&h, "u32 LE", "67305985");
    value_beside(&h, "u32 BE", "16909060");
    value_beside(&h, "u16 LE", "513");
    value_beside(&h, "u8", "1");
    value_beside(&h, "u64 LE", "—");
    value_beside(&h, "binary", "0000_0001");

    let mut h = inspector_harness(vec![0xac, 0x02]);
    h.run();
    value_beside(&h, "varint", "300 (2 bytes)");
    // zigzag(300) = 150.
    value_beside(&h, "zigzag", "150 (2 bytes)");

    let mut h = inspector_harness(vec![0x00, 0x00, 0x80, 0x3f]);
    h.run();
    value_beside(&h, "f32 LE", "1");
    value_beside(&h, "varint", "0 (1 byte)");

    let mut h = inspector_harness(vec![0x80, 0x80]);
    h.run();
    value_beside(&h, "varint", "—");
    value_beside(&h, "UTF-8", "invalid");
}

#[test]
fn goto_offset_accepts_decimal_and_hex_and_rejects_past_the_end() {
    struct S {
        text: String,
        jumped: Option<usize>,
    }
    let mut h = Harness::builder()
        .with_size(vec2(600.0, 100.0))
        .build_ui_state(
            |ui, s: &mut S| {
                if let Some(o) = goto_offset(ui, &mut s.text, 2000) {
                    s.jumped = Some(o);
                }
            },
            S {
                text: String::new(),
                jumped: None,
            },
        );
    h.run();
    h.get_by_label("Go to offset").focus();
    h.get_by_label("Go to offset").type_text("0x4d2");
    h.run();
    h.key_press(egui::Key::Enter);
    h.run();
    assert_eq!(h.state().jumped, Some(1234));

    h.state_mut().text = "2000".into();
    h.state_mut().jumped = None;
    h.run();
    h.get_by_label("past the end: the last offset is 1999");
    h.get_by_label("Go to offset").focus();
    h.run();
    h.key_press(egui::Key::Enter);
    h.run();
    assert_eq!(h.state().jumped, None);

    h.state_mut().text = "1234".into();
    h.run();
    assert!(h.query_by_label_contains("past the end").is_none());
    h.get_by_label("Go to offset").focus();
    h.run();
    h.key_press(egui::Key::Enter);
    h.run();
    assert_eq!(h.state().jumped, Some(1234));
}

#[test]
fn a_narrow_view_puts_fewer_bytes_in_a_row_and_keeps_the_ascii_column() {
    // "ABCDEFGHIJKLMNOP…": 16 bytes no longer fit in a 420-pixel column; 8 do.
    let bytes: Vec<u8> = (b'A'..=b'Z').collect();
    let mut h = hex_harness_sized(bytes, None, 420.0);
    h.run();
    assert_eq!(h.state().view.row_bytes(), 8);
    h.get_by_label("0008");
    h.get_by_label("49 4a 4b 4c 4d 4e 4f 50");
    let ascii = h.get_by_label("IJKLMNOP").rect();
    assert!(ascii.right() <= 420.0, "ASCII column at {ascii:?}");
    // Scrolling to a byte uses the narrow rows: byte 17 is in the row at offset 16.
    h.state_mut().view.scroll_to(17);
    h.run();
    h.get_by_label("0010");
    // Wide again: 16 per row.
    let mut wide = hex_harness_sized((b'A'..=b'Z').collect(), None, 900.0);
    wide.run();
    assert_eq!(wide.state().view.row_bytes(), 16);
    wide.get_by_label("41 42 43 44 45 46 47 48 49 4a 4b 4c 4d 4e 4f 50");
}

#[test]
fn a_column_too_narrow_for_the_ascii_pane_keeps_8_bytes_a_row_without_it() {
    // 30 characters (4-digit offset, 8 bytes of hex) fit in 300 points; 40 (with ASCII) do not.
    let bytes: Vec<u8> = (b'A'..=b'Z').collect();
    let mut h = hex_harness_sized(bytes, None, 300.0);
    h.run();
    assert_eq!(h.state().view.row_bytes(), 8);
    let hex = h.get_by_label("41 42 43 44 45 46 47 48").rect();
    assert!(hex.right() <= 300.0, "hex at {hex:?}");
    assert!(h.query_by_label("ABCDEFGH").is_none(), "no ASCII pane");
    // Clicking a byte still reports it.
    h.get_by_label("41 42 43 44 45 46 47 48").hover();
    h.run();
    let row = h.get_by_label("41 42 43 44 45 46 47 48").rect();
    let cell = row.width() / 8.0;
    h.event(egui::Event::PointerMoved(Pos2::new(
        row.left() + 2.5 * cell,
        row.center().y,
    )));
    h.run();
    assert_eq!(h.state().last.hovered.map(|(o, _)| o), Some(2));
}

#[test]
fn offsets_take_the_digits_the_last_offset_needs() {
    use wirelens::gui::widgets::hex_view::offset_digits;
    assert_eq!(offset_digits(0), 4);
    assert_eq!(offset_digits(128), 4);
    assert_eq!(offset_digits(0x1_0000), 4, "last offset 0xffff");
    assert_eq!(offset_digits(0x1_0001), 5);
    assert_eq!(offset_digits(50 << 20), 7);
    assert_eq!(offset_digits(1 << 32), 8);
    assert_eq!(offset_digits((1 << 32) + 1), 9);
}

#[test]
fn the_wheel_moves_farther_in_a_huge_buffer() {
    // 32 MB, paged: wheel movement crosses many rows per row of movement, so sixty notches
    // go well past the first few kilobytes.
    let len = 32 << 20;
    let mut h = hex_harness(vec![0u8; len], None);
    h.run();
    let centre = Pos2::new(200.0, 250.0);
    h.event(egui::Event::PointerMoved(centre));
    h.run();
    for _ in 0..60 {
        h.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Line,
            delta: vec2(0.0, -1.0),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Wheel,
            modifiers: egui::Modifiers::NONE,
        });
        h.step();
    }
    h.run_steps(30);
    let top = h.state().view.visible_rows().start * h.state().view.row_bytes();
    // At a row per row of movement 60 notches of 40 points are about 140 rows (2 KB); here the
    // speed is 20 rows per row (2M rows / 100,000), so the view is past 40 KB.
    assert!(top > 40_000, "top offset {top:#x} after 60 notches");
    assert!(top < len / 4, "not flung to the end: {top:#x}");
}
