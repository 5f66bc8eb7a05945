//! The data inspector (every common reading of the bytes at one offset) and the go-to-offset
//! field.
//!
//! The inspector answers "what could these bytes be?" for the byte under the hex view's cursor:
//! integers of every width in both byte orders, half/single/double floats, a LEB128 varint and its
//! zigzag reading, the UTF-8 character starting there and the byte in binary. Readings that need
//! more bytes than remain show "—". It reads at most 10 bytes, so it costs nothing on a large
//! buffer. It does not know which format the bytes are in; the hex view's colours and tooltip say
//! what the decoder made of them.

use eframe::egui;

use super::numbers::{self, NONE};

/// The data inspector for `bytes[offset..]`: u8…u64/i8…i64 LE/BE, f16/f32/f64 LE/BE, varint +
/// zigzag (with its length), UTF-8 char at offset; values that don't fit are shown as "—".
///
/// Each reading is a plain label ("u32 LE") beside its value; values can be selected and copied.
pub fn data_inspector(ui: &mut egui::Ui, bytes: &[u8], offset: usize) {
    if offset >= bytes.len() {
        ui.weak(format!(
            "No byte at offset {offset} (the buffer holds {} bytes).",
            bytes.len()
        ));
        return;
    }
    ui.label(format!("At offset {offset} (0x{offset:x})"));
    reading_grid(ui, &readings_at(bytes, offset));
}

/// The inspector before a byte is chosen: its rows with "—" for every value, as tall as
/// [`data_inspector`] draws them, so the first click shifts nothing under the pointer.
pub fn data_inspector_waiting(ui: &mut egui::Ui) {
    ui.weak("click a byte to inspect it");
    let blank: Vec<(&str, String)> = readings_at(&[0u8; 16], 0)
        .into_iter()
        .map(|(label, _)| (label, NONE.to_string()))
        .collect();
    reading_grid(ui, &blank);
}

/// Every reading of `bytes` at `offset`, labelled.
fn readings_at(bytes: &[u8], offset: usize) -> Vec<(&'static str, String)> {
    let (var, zig) = numbers::varint_text(bytes, offset);
    let mut items: Vec<(&str, String)> = numbers::readings(bytes, offset)
        .iter()
        .map(|(label, v)| (*label, v.clone()))
        .collect();
    items.push(("varint", var));
    items.push(("zigzag", zig));
    items.push(("UTF-8", numbers::utf8_text(bytes, offset)));
    items.push(("binary", numbers::binary_text(bytes, offset)));
    items
}

/// The readings as a grid: single-byte readings on their own row, then LE | BE pairs.
fn reading_grid(ui: &mut egui::Ui, items: &[(&str, String)]) {
    let value = |ui: &mut egui::Ui, text: &str| {
        let weak = text == NONE;
        let rich = egui::RichText::new(text).monospace();
        let rich = if weak { rich.weak() } else { rich };
        ui.add(egui::Label::new(rich).selectable(true));
    };
    // Wide windows get four readings per row (two LE | BE pairs), narrow ones two, so the panel
    // stays a few rows high and the hex views keep their room.
    let per_row = if ui.available_width() > 1100.0 { 4 } else { 2 };
    egui::Grid::new("wirelens_data_inspector")
        .num_columns(per_row * 2)
        .spacing([10.0, 2.0])
        .striped(true)
        .show(ui, |ui| {
            let (single, rest) = items.split_at(2.min(items.len()));
            for (label, v) in single {
                ui.label(*label);
                value(ui, v);
            }
            ui.end_row();
            for row in rest.chunks(per_row) {
                for (label, v) in row {
                    ui.label(*label);
                    value(ui, v);
                }
                ui.end_row();
            }
        });
}

/// A small "go to offset" text field (decimal or 0x hex); returns the offset when the user presses
/// Enter. An offset past the end (or text that is not a number) gets a red hint instead.
pub fn goto_offset(ui: &mut egui::Ui, text: &mut String, len: usize) -> Option<usize> {
    let mut jump = None;
    ui.horizontal(|ui| {
        let label = ui.label("Go to offset");
        let edit = egui::TextEdit::singleline(text)
            .hint_text("1234 or 0x4d2")
            .desired_width(110.0)
            .font(egui::TextStyle::Monospace);
        let response = ui.add(edit).labelled_by(label.id);
        let trimmed = text.trim();
        let parsed = numbers::parse_offset(trimmed);
        let problem = match parsed {
            _ if trimmed.is_empty() => None,
            None => Some("not a number: use 1234 or 0x4d2".to_string()),
            Some(o) if o >= len => Some(format!(
                "past the end: the last offset is {}",
                len.checked_sub(1)
                    .map_or_else(|| "none (empty)".to_string(), |l| l.to_string())
            )),
            Some(_) => None,
        };
        if let Some(p) = &problem {
            ui.colored_label(ui.visuals().error_fg_color, p);
        }
        let entered = response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if entered && problem.is_none() {
            jump = parsed;
        }
    });
    jump
}
