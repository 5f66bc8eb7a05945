//! The app's windows together: paste, open path, schema, save column bytes, shortcuts, limits,
//! runtimes and the command palette, with the order they opened in, so Escape closes the one on
//! top.
//!
//! What each window draws is the app's (it reads the workspace and pushes commands); which are
//! open, and which is on top, is kept here.

use eframe::egui;

use super::dialogs::{HelpWindow, OpenPathWindow, PasteWindow, SaveWindow, SchemaWindow};
use super::limits::LimitsWindow;
use super::palette::Palette;
use super::profiler::runtimes::RuntimesWindow;
use super::window_kind::Which;

/// Every window's state, and the order the open ones opened in.
#[derive(Default)]
pub(super) struct Windows {
    /// File ▸ Paste… (Ctrl+Shift+V).
    pub paste: PasteWindow,
    /// File ▸ Open path….
    pub open_path: OpenPathWindow,
    /// Schema ▸ Paste….
    pub schema: SchemaWindow,
    /// File ▸ Save column bytes….
    pub save: SaveWindow,
    /// Help ▸ Shortcuts.
    pub help: HelpWindow,
    /// View ▸ Limits….
    pub limits: LimitsWindow,
    /// Profile ▸ Runtimes….
    pub runtimes: RuntimesWindow,
    /// The command palette (Ctrl+Shift+P, Ctrl+K).
    pub palette: Palette,
    /// The open windows, in the order they opened (Escape closes the topmost).
    order: Vec<Which>,
}

impl Windows {
    /// Whether `which` is open, to read or to change.
    fn open_flag(&mut self, which: Which) -> &mut bool {
        match which {
            Which::OpenPath => &mut self.open_path.open,
            Which::Paste => &mut self.paste.open,
            Which::Schema => &mut self.schema.open,
            Which::Save => &mut self.save.open,
            Which::Help => &mut self.help.open,
            Which::Limits => &mut self.limits.open,
            Which::Runtimes => &mut self.runtimes.open,
        }
    }

    /// Opens `which` as it was left.
    pub fn open(&mut self, which: Which) {
        *self.open_flag(which) = true;
    }

    /// Opens `which`, or closes it when open.
    pub fn toggle(&mut self, which: Which) {
        let open = self.open_flag(which);
        *open = !*open;
    }

    /// Keeps the order the open windows opened in (a window opened this frame goes on top).
    pub fn note_order(&mut self) {
        let open: Vec<Which> = Which::ALL
            .into_iter()
            .filter(|&w| *self.open_flag(w))
            .collect();
        self.order.retain(|w| open.contains(w));
        for w in open {
            if !self.order.contains(&w) {
                self.order.push(w);
            }
        }
    }

    /// Closes the window on top (the one egui draws over the others, else the last opened);
    /// whether one was open.
    pub fn close_topmost(&mut self, ctx: &egui::Context) -> bool {
        let top = ctx.memory(|m| m.areas().top_layer_id(egui::Order::Middle));
        let on_top = |w: &Which| top.is_some_and(|l| l.id == egui::Id::unique(w.title()));
        let last = self.order.last().copied();
        let open: Vec<Which> = Which::ALL
            .into_iter()
            .filter(|&w| *self.open_flag(w))
            .collect();
        let Some(which) = open
            .iter()
            .find(|w| on_top(w))
            .or_else(|| open.iter().find(|&&w| Some(w) == last))
            .copied()
        else {
            return false;
        };
        *self.open_flag(which) = false;
        self.order.retain(|&w| w != which);
        true
    }

    /// Escape closes what is on top: the palette (its field focused or not), else (outside a
    /// text field and with no menu or popup open, which egui closes itself) the topmost window.
    /// Whether it was pressed there with nothing to close, so it clears the selection instead.
    pub fn escape(&mut self, ctx: &egui::Context) -> bool {
        let escape = ctx.input(|i| i.key_pressed(egui::Key::Escape));
        if escape && self.palette.open {
            ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Escape));
            self.palette.open = false;
            false
        } else if escape && !ctx.egui_wants_keyboard_input() && !egui::Popup::is_any_open(ctx) {
            ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Escape));
            !self.close_topmost(ctx)
        } else {
            false
        }
    }
}
