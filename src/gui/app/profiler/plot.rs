//! What every profiler plot and table shares: a plot that stays still, category axes, axis
//! text for durations and byte counts, shares as percentages, bar fills. A leaf the charts, the
//! tables and the scaling view build on.

use eframe::egui::{self, Color32};
use egui_plot::{GridInput, GridMark, Legend, Plot};

/// A plot that does not pan or zoom (the data is categorical; clicks select).
pub(super) fn still(id: &str, height: f32) -> Plot<'static> {
    Plot::new(id)
        .height(height)
        .allow_zoom(false)
        .allow_drag(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
        .legend(Legend::default())
}

/// One grid mark per whole number in the visible range (category axes).
pub(super) fn integer_marks(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let (lo, hi) = (lo.ceil() as i64, hi.floor() as i64);
    if hi < lo || hi - lo > 1_000 {
        return Vec::new();
    }
    (lo..=hi)
        .map(|v| GridMark {
            value: v as f64,
            step_size: 1.0,
        })
        .collect()
}

/// The label of category `value` (a whole number) among `labels`.
pub(super) fn category(labels: &[String], value: f64) -> String {
    if (value - value.round()).abs() > 1e-6 || value < 0.0 {
        return String::new();
    }
    labels
        .get(value.round() as usize)
        .cloned()
        .unwrap_or_default()
}

/// The plot's whole frame for "Save plot as PNG": the plot area, its axes (left of it, up to
/// the panel's edge, and below it, up to where the next widget starts) and the legend.
pub(super) fn with_axes(ui: &egui::Ui, plot: &egui::Response) -> egui::Rect {
    egui::Rect::from_min_max(
        egui::pos2(ui.max_rect().left(), plot.rect.top() - 2.0),
        egui::pos2(
            plot.rect.right() + 2.0,
            ui.cursor().top().max(plot.rect.bottom()),
        ),
    )
}

/// `v` in the largest of `units` (descending `(scale, suffix)`, the last with scale 1) that it
/// reaches, with at most two decimals and trailing zeros dropped so axis marks stay short.
fn scaled(v: f64, units: &[(f64, &str)]) -> String {
    let (scale, unit) = units
        .iter()
        .find(|(scale, _)| v.abs() >= *scale)
        .or(units.last())
        .copied()
        .unwrap_or((1.0, ""));
    let text = format!("{:.2}", v / scale);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{unit}")
}

/// A duration for an axis mark, short: `10 ms`, `1.5 s`, `250 µs` (trailing zeros dropped, so
/// marks do not run into each other).
pub(super) fn axis_duration(ns: f64) -> String {
    scaled(ns, &[(1e9, " s"), (1e6, " ms"), (1e3, " µs"), (1.0, " ns")])
}

/// A bar's fill: the series colour, mostly opaque (the default fill is faint on dark themes).
pub(super) fn solid(color: Color32) -> Color32 {
    color.gamma_multiply(0.75)
}

/// A byte count for an axis: `0`, `500`, `1.5k`, `2M` (decimal units, as sizes are quoted).
pub(super) fn bytes_axis(v: f64) -> String {
    scaled(v, &[(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")])
}

/// Share `part / whole` as `41.2%`.
pub(super) fn pct(part: f64, whole: f64) -> String {
    if whole <= 0.0 {
        "-".into()
    } else {
        format!("{:.1}%", part * 100.0 / whole)
    }
}

pub(super) fn plot_height(ui: &egui::Ui, share: f32) -> f32 {
    (ui.available_height() * share).clamp(180.0, 520.0)
}
