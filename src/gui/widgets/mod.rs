//! Self-contained widgets of the inspector: the hex view, the tree view, the data inspector,
//! go-to-offset and a busy indicator.
//!
//! They exist so the app's columns can show any buffer, however large, at a steady frame rate:
//! each widget draws only the rows on screen (virtualized), looks bytes up in the
//! [`SpanTree`](crate::model::SpanTree) by binary search for those rows only, and keeps no copy
//! of the data. They know nothing about the app's state: the app passes the bytes, the spans and
//! the selection in, and gets hovered and clicked nodes back (as [`NodeId`](crate::model::NodeId)s
//! of the column's own tree; the app turns them into paths).
//!
//! What they do not do: decode, encode, or hold the selection. Linked selection across columns is
//! the app's job.

mod busy;
pub mod hex_view;
pub mod inspector;
mod numbers;
pub mod tree_view;

pub use busy::{spinner, FRAME as BUSY_FRAME};
pub use hex_view::{HexInput, HexResponse, HexView};
pub use inspector::{data_inspector, data_inspector_waiting, goto_offset};
pub use tree_view::{summarize, ReadBy, RowMenu, Summarize, TreeInput, TreeView};

use eframe::egui::{self, Color32};

use crate::model::ByteRole;

/// `12,345` ([`crate::report::table::group`]).
pub fn thousands(n: usize) -> String {
    crate::report::table::group(n as u64)
}

/// Colours for byte roles, chosen for both light and dark themes.
///
/// Hue carries the role (blue keys, orange headers, green values, grey structure) and each is
/// readable on the theme's background; none is red, which marks errors.
pub fn role_color(role: ByteRole, dark: bool) -> Color32 {
    match (role, dark) {
        (ByteRole::Key, true) => Color32::from_rgb(0x7c, 0xb7, 0xff),
        (ByteRole::Key, false) => Color32::from_rgb(0x1a, 0x56, 0xb8),
        (ByteRole::Header, true) => Color32::from_rgb(0xf0, 0xa8, 0x4a),
        (ByteRole::Header, false) => Color32::from_rgb(0xa8, 0x52, 0x00),
        (ByteRole::Value, true) => Color32::from_rgb(0x8e, 0xd8, 0x7a),
        (ByteRole::Value, false) => Color32::from_rgb(0x1e, 0x7a, 0x1e),
        (ByteRole::Structure, true) => Color32::from_rgb(0xa8, 0xa8, 0xb0),
        (ByteRole::Structure, false) => Color32::from_rgb(0x60, 0x60, 0x68),
    }
}

/// Background of the selected node's bytes and rows.
pub fn selection_bg(dark: bool) -> Color32 {
    if dark {
        Color32::from_rgb(0x2e, 0x4a, 0x78)
    } else {
        Color32::from_rgb(0xc4, 0xda, 0xff)
    }
}

/// Background of the hovered node's bytes (fainter than the selection).
pub fn hover_bg(dark: bool) -> Color32 {
    if dark {
        Color32::from_rgb(0x3a, 0x3a, 0x44)
    } else {
        Color32::from_rgb(0xe6, 0xe6, 0xee)
    }
}

/// Background of the bytes and rows of a diff's change, by its kind: green added, red removed,
/// amber changed, violet changed type, grey another order.
pub fn change_bg(kind: crate::diff::ChangeKind, dark: bool) -> Color32 {
    use crate::diff::ChangeKind;
    match (kind, dark) {
        (ChangeKind::Added, false) => Color32::from_rgb(0xc6, 0xef, 0xc6),
        (ChangeKind::Added, true) => Color32::from_rgb(0x1f, 0x4d, 0x2a),
        (ChangeKind::Removed, false) => Color32::from_rgb(0xff, 0xcc, 0xd2),
        (ChangeKind::Removed, true) => Color32::from_rgb(0x5c, 0x24, 0x2c),
        (ChangeKind::Changed, false) => Color32::from_rgb(0xff, 0xe4, 0x9c),
        (ChangeKind::Changed, true) => Color32::from_rgb(0x5a, 0x48, 0x16),
        (ChangeKind::TypeChanged, false) => Color32::from_rgb(0xe4, 0xd2, 0xff),
        (ChangeKind::TypeChanged, true) => Color32::from_rgb(0x46, 0x2c, 0x62),
        (ChangeKind::Order, false) => Color32::from_rgb(0xe0, 0xe0, 0xe0),
        (ChangeKind::Order, true) => Color32::from_rgb(0x44, 0x44, 0x48),
    }
}

/// Background of a byte where decoding failed.
pub fn error_bg(dark: bool) -> Color32 {
    if dark {
        Color32::from_rgb(0xb0, 0x20, 0x20)
    } else {
        Color32::from_rgb(0xff, 0x9a, 0x9a)
    }
}

/// A legend of the byte roles in their colours, for a column header or the help window.
pub fn role_legend(ui: &mut egui::Ui) {
    let dark = ui.visuals().dark_mode;
    ui.horizontal(|ui| {
        for role in [
            ByteRole::Key,
            ByteRole::Header,
            ByteRole::Value,
            ByteRole::Structure,
        ] {
            ui.label(
                egui::RichText::new(role.name())
                    .monospace()
                    .color(role_color(role, dark)),
            );
        }
    });
}
