//! The scaling view: size or time per format against the record count, on log-log axes; Rust's
//! reference library per format, and every library of each other runtime timed (on the same
//! slices), grouped by runtime and following the runtime filter.

use eframe::egui;
use egui_plot::{HoverPosition, Line, LineStyle, MarkerShape, Plot, PlotPoints, Points};

use super::plot::{plot_height, with_axes};
use super::runtimes::{filter, group_title, shown};
use super::{format_color, Action, ProfilerView, ScaleMetric};
use crate::codec::Format;
use crate::gui::widgets::thousands;
use crate::profile::bench::Measurement;
use crate::profile::runtimes::Runtime;
use crate::report::FileReport;

/// One line of the plot: whose, which format and library, and its points (record count, bytes,
/// encode, decode) in record order.
pub struct ScalingLine<'a> {
    /// `None`: Rust's reference library.
    pub runtime: Option<Runtime>,
    /// The format.
    pub format: Format,
    /// The library, as its users name it.
    pub library: String,
    /// Per record count: bytes, encode and decode timings.
    pub points: Vec<(
        usize,
        usize,
        Option<&'a Measurement>,
        Option<&'a Measurement>,
    )>,
}

impl ScalingLine<'_> {
    /// `JSON` for Rust's reference lines, `Python · JSON · orjson` for another runtime's.
    pub fn name(&self) -> String {
        match self.runtime {
            None => self.format.title().to_string(),
            Some(_) => format!(
                "{} · {} · {}",
                group_title(self.runtime),
                self.format.title(),
                self.library
            ),
        }
    }
}

/// The lines the scaling view draws for `file`: Rust's reference library per format, then per
/// runtime (in report order) each library it measured at some record count, the filter's hidden
/// runtimes left out.
pub fn scaling_lines<'a>(file: &'a FileReport, view: &ProfilerView) -> Vec<ScalingLine<'a>> {
    let Some(sweep) = &file.sweep else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if shown(view, None) {
        for format in Format::ALL {
            let points: Vec<_> = sweep
                .points
                .iter()
                .filter(|p| p.format == format && p.error.is_none())
                .map(|p| (p.records, p.bytes, p.encode.as_ref(), p.decode.as_ref()))
                .collect();
            if let Some(p) = sweep.points.iter().find(|p| p.format == format) {
                out.push(ScalingLine {
                    runtime: None,
                    format,
                    library: p.library.name().to_string(),
                    points,
                });
            }
        }
    }
    for whole in &file.runtimes {
        if !shown(view, Some(whole.runtime)) {
            continue;
        }
        let at = sweep.runtime_points(whole.runtime, Some(whole));
        for row in whole.rows.iter().filter(|r| r.error.is_none()) {
            let points: Vec<_> = at
                .iter()
                .filter_map(|(n, report)| {
                    report
                        .rows
                        .iter()
                        .find(|r| {
                            r.format == row.format && r.library == row.library && r.error.is_none()
                        })
                        .map(|r| (*n, r.bytes, r.encode.as_ref(), r.decode.as_ref()))
                })
                .collect();
            out.push(ScalingLine {
                runtime: Some(whole.runtime),
                format: row.format,
                library: row.library.clone(),
                points,
            });
        }
    }
    out
}

/// Each runtime's marker: Rust keeps the format's own, the others a cross or a plus.
fn runtime_marker(runtime: Option<Runtime>, format: Format) -> MarkerShape {
    match runtime {
        None => format_style(format).1,
        Some(Runtime::Python) => MarkerShape::Cross,
        Some(Runtime::Node) => MarkerShape::Plus,
    }
}

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

/// A log axis mark of a duration in nanoseconds: `10 µs`, `1 ms`, `2 s` at the powers of ten,
/// nothing between them.
fn power_duration(v: f64) -> String {
    if (v - v.round()).abs() > 1e-6 {
        return String::new();
    }
    super::plot::axis_duration(10f64.powf(v.round()))
}

/// Each format's line dash and marker in the scaling plot.
fn format_style(format: crate::codec::Format) -> (LineStyle, MarkerShape) {
    use crate::codec::Format;
    match format {
        Format::Json => (LineStyle::Solid, MarkerShape::Circle),
        Format::MessagePack => (LineStyle::Dashed { length: 10.0 }, MarkerShape::Square),
        Format::Cbor => (LineStyle::Dotted { spacing: 6.0 }, MarkerShape::Diamond),
        Format::Protobuf => (LineStyle::Dashed { length: 4.0 }, MarkerShape::Up),
        Format::Avro => (LineStyle::Dotted { spacing: 3.0 }, MarkerShape::Down),
    }
}

/// A format's line and marker, drawn small, for the legend row.
fn legend_swatch(ui: &mut egui::Ui, format: crate::codec::Format) {
    use egui::{pos2, vec2, Shape, Stroke};
    let (rect, _) = ui.allocate_exact_size(vec2(28.0, 12.0), egui::Sense::hover());
    let color = format_color(format);
    let stroke = Stroke::new(2.0, color);
    let (a, b) = (
        pos2(rect.left(), rect.center().y),
        pos2(rect.right(), rect.center().y),
    );
    let (style, shape) = format_style(format);
    let painter = ui.painter();
    match style {
        LineStyle::Solid => {
            painter.line_segment([a, b], stroke);
        }
        LineStyle::Dashed { length } => {
            painter.extend(Shape::dashed_line(
                &[a, b],
                stroke,
                length * 0.5,
                length * 0.3,
            ));
        }
        LineStyle::Dotted { spacing } => {
            painter.extend(Shape::dotted_line(&[a, b], color, spacing * 0.6, 1.2));
        }
    }
    let c = rect.center();
    let r = 4.0;
    let points = match shape {
        MarkerShape::Square => vec![
            c + vec2(-r, -r),
            c + vec2(r, -r),
            c + vec2(r, r),
            c + vec2(-r, r),
        ],
        MarkerShape::Diamond => vec![
            c + vec2(0.0, -r),
            c + vec2(r, 0.0),
            c + vec2(0.0, r),
            c + vec2(-r, 0.0),
        ],
        MarkerShape::Up => vec![c + vec2(0.0, -r), c + vec2(r, r), c + vec2(-r, r)],
        _ => {
            painter.circle_filled(c, r, color);
            return;
        }
    };
    painter.add(Shape::convex_polygon(points, color, Stroke::NONE));
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
    filter(ui, view, file);
    ui.horizontal_wrapped(|ui| {
        ui.label(format!(
            "{} records at {} · log-log · Rust: the reference library per format",
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
    // The legend is a row above the plot, never over the points; each format has its own
    // dash and marker as well as its colour, so one line lying on another (MessagePack and
    // CBOR often do) still shows.
    let lines = scaling_lines(file, view);
    let legend = scaling_legend(ui, file, &lines);
    let response = scaling_plot(ui, &lines, view.scale);
    // A saved PNG has the legend row too.
    view.plot_rect = Some(with_axes(ui, &response.response).union(legend.response.rect));
    None
}

/// The legend row: each format's colour, dash and marker, and the other runtimes' lines.
fn scaling_legend(
    ui: &mut egui::Ui,
    file: &FileReport,
    lines: &[ScalingLine<'_>],
) -> egui::InnerResponse<()> {
    let others: Vec<Runtime> = file
        .runtimes
        .iter()
        .map(|r| r.runtime)
        .filter(|r| lines.iter().any(|l| l.runtime == Some(*r)))
        .collect();
    ui.horizontal_wrapped(|ui| {
        for format in crate::codec::Format::ALL {
            legend_swatch(ui, format);
            ui.label(egui::RichText::new(format.title()).color(format_color(format)));
            ui.add_space(8.0);
        }
        for runtime in &others {
            ui.label(match runtime {
                Runtime::Python => "thin lines, x markers: Python, one per library",
                Runtime::Node => "thin lines, + markers: Node, one per library",
            });
            ui.add_space(8.0);
        }
    })
}

/// The log-log plot of `lines` in `metric`, its tooltip the line, the record count and the
/// value.
fn scaling_plot(
    ui: &mut egui::Ui,
    lines: &[ScalingLine<'_>],
    metric: ScaleMetric,
) -> egui_plot::PlotResponse<()> {
    let timed = matches!(metric, ScaleMetric::Encode | ScaleMetric::Decode);
    let (y_label, y_unit) = match metric {
        ScaleMetric::Bytes => ("bytes", " B"),
        ScaleMetric::BytesPerRecord => ("bytes per record", " B"),
        ScaleMetric::Encode => ("encode time", " ns"),
        ScaleMetric::Decode => ("decode time", " ns"),
    };
    Plot::new("profile-scaling")
        .height(plot_height(ui, 0.7))
        .x_axis_label("records (log)")
        .y_axis_label(format!("{y_label} (log)"))
        .x_axis_formatter(|m, _| power_label(m.value, ""))
        .y_axis_formatter(move |m, _| {
            if timed {
                // Powers of ten of nanoseconds in the unit that reads: `1 ms`, not `1M ns`.
                power_duration(m.value)
            } else {
                power_label(m.value, y_unit)
            }
        })
        .label_formatter(move |hover| {
            let (name, at) = match hover {
                HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => (*plot_name, position),
                HoverPosition::Elsewhere { position } => ("", position),
            };
            let y = 10f64.powf(at.y);
            let value = if timed {
                super::plot::axis_duration(y)
            } else {
                significant(y)
            };
            Some(format!(
                "{name}\n{} records\n{value} {y_label}",
                thousands(10f64.powf(at.x).round() as usize),
            ))
        })
        .show(ui, |p| {
            for line in lines {
                let points = line_points(line, metric);
                if !points.is_empty() {
                    draw_line(p, line, points);
                }
            }
        })
}

/// A line's points in `metric`, as (log10 records, log10 value); a point without a value, or
/// with none above zero, is left out.
fn line_points(line: &ScalingLine<'_>, metric: ScaleMetric) -> Vec<[f64; 2]> {
    line.points
        .iter()
        .filter(|(records, ..)| *records > 0)
        .filter_map(|&(records, bytes, encode, decode)| {
            let y = match metric {
                ScaleMetric::Bytes => Some(bytes as f64),
                ScaleMetric::BytesPerRecord => Some(bytes as f64 / records as f64),
                ScaleMetric::Encode => encode.map(|m| m.ns.median),
                ScaleMetric::Decode => decode.map(|m| m.ns.median),
            }?;
            (y > 0.0).then(|| [(records as f64).log10(), y.log10()])
        })
        .collect()
}

/// Draws a line and its markers: Rust's thicker, another runtime's thinner with its own marker.
fn draw_line(p: &mut egui_plot::PlotUi<'_>, line: &ScalingLine<'_>, points: Vec<[f64; 2]>) {
    let color = format_color(line.format);
    let (style, _) = format_style(line.format);
    let (width, radius) = if line.runtime.is_none() {
        (2.0, 4.5)
    } else {
        (1.2, 5.0)
    };
    let name = line.name();
    p.line(
        Line::new(name.clone(), PlotPoints::new(points.clone()))
            .color(color)
            .style(style)
            .width(width),
    );
    p.points(
        Points::new(name, PlotPoints::new(points))
            .color(color)
            .shape(runtime_marker(line.runtime, line.format))
            .radius(radius),
    );
}

#[cfg(test)]
mod tests {
    use super::{power_duration, power_label};

    #[test]
    fn time_axes_name_their_unit_and_byte_axes_their_prefix() {
        // 10^6 ns is a millisecond, not "1M ns".
        assert_eq!(power_duration(6.0), "1 ms");
        assert_eq!(power_duration(4.0), "10 µs");
        assert_eq!(power_duration(9.0), "1 s");
        assert_eq!(power_duration(2.0), "100 ns");
        assert_eq!(power_duration(6.5), "");
        assert_eq!(power_label(6.0, " B"), "1M B");
    }
}
