//! View ▸ Limits…: every bound of [`Limits`] as the CLI's `--limit` takes it, editable, applied
//! to every source (which is peeled and decoded again) and kept across runs as the values that
//! differ from the defaults.

use eframe::egui;

use super::window_kind::Which;

use super::Status;

use super::App;
use crate::limits::Limits;

/// The window's state: one text per [`Limits::NAMES`] entry, and the last error.
#[derive(Debug, Default)]
pub(super) struct LimitsWindow {
    pub(super) open: bool,
    text: Vec<String>,
    error: Option<String>,
}

impl LimitsWindow {
    /// Opens the window showing `limits`.
    pub(super) fn show(&mut self, limits: &Limits) {
        self.text = texts(limits);
        self.error = None;
        self.open = true;
    }
}

/// Each limit's value as text, in [`Limits::NAMES`] order.
fn texts(limits: &Limits) -> Vec<String> {
    Limits::NAMES
        .iter()
        .map(|(name, _)| limits.get(name).map(Limits::count_text).unwrap_or_default())
        .collect()
}

/// Limits from the defaults and `overrides` (name, value text), or the first error.
pub(super) fn limits_from<'a>(
    overrides: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Limits, String> {
    let mut limits = Limits::default();
    for (name, value) in overrides {
        limits.set(name, value).map_err(|e| e.to_string())?;
    }
    Ok(limits)
}

/// The (name, value text) pairs where `limits` differs from the defaults.
fn overrides(limits: &Limits) -> Vec<(String, String)> {
    let defaults = Limits::default();
    Limits::NAMES
        .iter()
        .filter_map(|(name, _)| {
            let value = limits.get(name)?;
            (Some(value) != defaults.get(name))
                .then(|| (name.to_string(), Limits::count_text(value)))
        })
        .collect()
}

impl App {
    /// Reads every source again within `limits`, and keeps them (those that differ from the
    /// defaults) for the next run.
    pub(super) fn apply_limits(&mut self, limits: Limits) {
        self.settings.limits = overrides(&limits);
        let changed = self.settings.limits.len();
        self.ws.set_limits(limits);
        self.status = Some(Status::Info(format!(
            "limits applied ({changed} differ from the defaults); every source is read again"
        )));
    }

    /// The limits the last run used; a stored value that no longer reads is dropped and said.
    pub(super) fn restore_limits(&mut self) {
        let stored = self.settings.limits.iter();
        match limits_from(stored.map(|(name, value)| (name.as_str(), value.as_str()))) {
            Ok(limits) => self.ws.set_limits(limits),
            Err(e) => {
                self.status = Some(Status::Error(format!(
                    "limits from the last run not used: {e}"
                )));
                self.settings.limits.clear();
            }
        }
    }

    pub(super) fn limits_window(&mut self, ctx: &egui::Context) {
        let mut open = self.windows.limits.open;
        let mut apply = false;
        let mut defaults = false;
        egui::Window::new(Which::Limits.title())
            .open(&mut open)
            .default_width(640.0)
            .show(ctx, |ui| {
                ui.label(
                    "Bounds on what an untrusted input may cost. A count, with an optional K, M or \
                     G (binary), or none. Applying them reads every source again.",
                );
                let shown = texts(&Limits::default());
                egui::Grid::new("limits").striped(true).show(ui, |ui| {
                    ui.strong("limit");
                    ui.strong("value");
                    ui.strong("default");
                    ui.strong("bounds");
                    ui.end_row();
                    for (i, (name, what)) in Limits::NAMES.iter().enumerate() {
                        let label = ui.label(*name);
                        if let Some(text) = self.windows.limits.text.get_mut(i) {
                            ui.add_sized([90.0, 18.0], egui::TextEdit::singleline(text))
                                .labelled_by(label.id);
                        }
                        ui.weak(shown.get(i).map_or("", String::as_str));
                        ui.label(*what);
                        ui.end_row();
                    }
                });
                if let Some(e) = &self.windows.limits.error {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                ui.horizontal(|ui| {
                    apply = ui.button("Apply").clicked();
                    defaults = ui.button("Defaults").clicked();
                });
            });
        if defaults {
            self.windows.limits.text = texts(&Limits::default());
            self.windows.limits.error = None;
        }
        if apply {
            let names = Limits::NAMES.iter().map(|(name, _)| *name);
            let texts = self.windows.limits.text.iter().map(String::as_str);
            match limits_from(names.zip(texts)) {
                Err(e) => self.windows.limits.error = Some(e),
                Ok(limits) => {
                    self.windows.limits.error = None;
                    self.push(super::Command::SetLimits(Box::new(limits)));
                }
            }
        }
        self.windows.limits.open = open && self.windows.limits.open;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_only_the_changed_limits_and_read_back() {
        assert!(overrides(&Limits::default()).is_empty());
        let mut l = Limits::default();
        l.set("nodes", "1M").expect("valid");
        l.set("layers", "none").expect("valid");
        let o = overrides(&l);
        assert_eq!(
            o,
            [
                ("layers".to_string(), "none".to_string()),
                ("nodes".to_string(), "1M".to_string())
            ]
        );
        assert_eq!(
            limits_from(o.iter().map(|(n, v)| (n.as_str(), v.as_str()))),
            Ok(l)
        );
        assert!(limits_from([("nodes", "lots")])
            .expect_err("not a count")
            .contains("nodes"));
    }
}
