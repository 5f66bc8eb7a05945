//! The scaling view: size or time per format against the record count, on log-log axes.

use eframe::egui;
use egui_plot::{HoverPosition, Legend, Line, Plot, PlotPoints, Points};

use super::charts::{plot_height, with_axes};
use super::{format_color, Action, ProfilerView, ScaleMetric};
use crate::gui::widgets::thousands;
use crate::report::FileReport;

/// A number with about four significant digits, without exponent for everyday sizes.
fn significant(v: f64) -> String {
    if v >= 1e4 {
        thousands(v.round() as usize)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// `10^v` for a log10 axis mark, when `v` is a whole number: 1, 10, 100, 1k, 10k, …
fn power_label(v: f64, unit: &str) -> String {
    if (v - v.round()).abs() > 1e-6 {
        return String::new();
    }
    let n = 10f64.powf(v.round());
    let text = if n >= 1e9 {
        format!("{}G", n / 1e9)
    } else if n >= 1e6 {
        format!("{}M", n / 1e6)
    } else if n >= 1e3 {
        format!("{}k", n / 1e3)
    } else if n >= 1.0 {
        format!("{n}")
    } else {
        format!("{n:e}")
    };
    format!("{text}{unit}")
}

/// Scaling: size or time per format against the record count, on log-log axes.
pub(super) fn scaling(
    ui: &mut egui::Ui,
    view: &mut ProfilerView,
    file: &FileReport,
) -> Option<Action> {
    let Some(sweep) = &file.sweep else {
        ui.label(
            "This payload has no list of records to slice (an array at the top or under a key \
             such as $.data), so there is no scaling curve: profile a payload with records.",
        );
        view.plot_rect = None;
        return None;
    };
    ui.horizontal(|ui| {
        ui.label(format!(
            "{} records at {} · log-log · the reference library per format",
            thousands(sweep.records.count),
            sweep.records.path
        ));
        ui.separator();
        ui.selectable_value(&mut view.scale, ScaleMetric::Bytes, "bytes");
        ui.selectable_value(
            &mut view.scale,
            ScaleMetric::BytesPerRecord,
            "bytes per record",
        );
        ui.selectable_value(&mut view.scale, ScaleMetric::Encode, "encode time");
        ui.selectable_value(&mut view.scale, ScaleMetric::Decode, "decode time");
    });
    let metric = view.scale;
    let (y_label, y_unit) = match metric {
        ScaleMetric::Bytes => ("bytes", " B"),
        ScaleMetric::BytesPerRecord => ("bytes per record", " B"),
        ScaleMetric::Encode => ("encode time", " ns"),
        ScaleMetric::Decode => ("decode time", " ns"),
    };
    let response = Plot::new("profile-scaling")
        .height(plot_height(ui, 0.7))
        .legend(Legend::default())
        .x_axis_label("records (log)")
        .y_axis_label(format!("{y_label} (log)"))
        .x_axis_formatter(|m, _| power_label(m.value, ""))
        .y_axis_formatter(move |m, _| power_label(m.value, y_unit))
        .label_formatter(move |hover| {
            let (name, at) = match hover {
                HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => (*plot_name, position),
                HoverPosition::Elsewhere { position } => ("", position),
            };
            Some(format!(
                "{name}\n{} records\n{} {y_label}",
                thousands(10f64.powf(at.x).round() as usize),
                significant(10f64.powf(at.y))
            ))
        })
        .show(ui, |p| {
            for format in crate::codec::Format::ALL {
                let points: Vec<[f64; 2]> = sweep
                    .points
                    .iter()
                    .filter(|pt| pt.format == format && pt.records > 0)
                    .filter_map(|pt| {
                        let y = match metric {
                            ScaleMetric::Bytes => Some(pt.bytes as f64),
                            ScaleMetric::BytesPerRecord => {
                                Some(pt.bytes as f64 / pt.records as f64)
                            }
                            ScaleMetric::Encode => pt.encode.as_ref().map(|m| m.ns.median),
                            ScaleMetric::Decode => pt.decode.as_ref().map(|m| m.ns.median),
                        }?;
                        (y > 0.0).then(|| [(pt.records as f64).log10(), y.log10()])
                    })
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let color = format_color(format);
                p.line(
                    Line::new(format.title(), PlotPoints::new(points.clone()))
                        .color(color)
                        .width(2.0),
                );
                p.points(
                    Points::new(format.title(), PlotPoints::new(points))
                        .color(color)
                        .radius(3.5),
                );
            }
        });
    view.plot_rect = Some(with_axes(ui, &response.response));
    None
}
