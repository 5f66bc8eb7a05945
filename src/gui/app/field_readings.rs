//! The reading of a field of protobuf read without a schema, chosen from a right-click on its
//! row in the source column's tree: the same readings as the CLI's `--read` (message, bytes,
//! string, packed varints…, sint64…), offered for the field's wire type. The choice is a
//! [`Command`], made the workspace's ([`Workspace::set_field_reading`](crate::workspace::Workspace)): it applies to
//! every occurrence of the field at that path pattern, the payload is decoded again, and the
//! source keeps it when another source is shown and this one again.
//!
//! Not done here: deciding what a reading means or whether it fits the bytes (the decoder does,
//! and a reading that does not fit is the column's error).

use std::cell::Cell;

use eframe::egui;

use super::command::Command;

use crate::codec::protobuf::wire::{field_of_node, pattern, FieldReading, ReadAs};
use crate::model::{NodeId, SpanTree, WireType};

/// The right-click menu of node `id` of a schema-less protobuf tree over `bytes`: a reading for
/// each the field's wire type allows, the one in force marked; "Clear field readings" while the
/// source has any.
pub(super) fn menu(
    ui: &mut egui::Ui,
    bytes: &[u8],
    spans: &SpanTree,
    id: NodeId,
    current: &[FieldReading],
    chosen: &Cell<Option<Command>>,
) {
    match field_of_node(bytes, spans, id) {
        Some((fields, wire)) => {
            ui.label(format!("Read every {} as", pattern(&fields)));
            let now = current
                .iter()
                .find(|r| r.fields == fields)
                .map(|r| r.read_as);
            for read_as in ReadAs::all_for(wire) {
                if ui
                    .selectable_label(now == Some(read_as), read_as.label())
                    .clicked()
                {
                    chosen.set(Some(Command::SetFieldReading(FieldReading {
                        fields: fields.clone(),
                        read_as,
                    })));
                    ui.close();
                }
            }
            if wire == WireType::Group {
                ui.weak("a group has no other reading");
            }
        }
        None => {
            ui.weak("not a field: choose a field's row");
        }
    }
    if !current.is_empty() {
        ui.separator();
        if ui.button(clear_label(current)).clicked() {
            chosen.set(Some(Command::ClearFieldReadings));
            ui.close();
        }
    }
}

/// The line under the column header that lists the readings in force, with a way to clear
/// them.
pub(super) fn in_force(
    ui: &mut egui::Ui,
    current: &[FieldReading],
    chosen: &Cell<Option<Command>>,
) {
    if current.is_empty() {
        return;
    }
    ui.horizontal_wrapped(|ui| {
        let list: Vec<String> = current.iter().map(ToString::to_string).collect();
        ui.label(format!("your readings: {}", list.join(", ")));
        if ui.small_button(clear_label(current)).clicked() {
            chosen.set(Some(Command::ClearFieldReadings));
        }
    });
}

fn clear_label(current: &[FieldReading]) -> String {
    match current.len() {
        1 => "Clear the field reading".to_string(),
        n => format!("Clear the {n} field readings"),
    }
}
