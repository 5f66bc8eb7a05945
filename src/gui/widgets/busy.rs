//! A busy indicator that redraws ten times a second, not every frame.
//!
//! egui's own spinner asks for a new frame each time it is drawn, so a window showing one draws
//! as fast as it can for as long as the work runs. With a software renderer (Mesa under Xvfb, a
//! remote desktop) those frames take the cores the work needs: opening a 50 MB document showed
//! its first column a second later with a spinner on screen. A turning arc at ten frames a
//! second says the same.

use std::time::Duration;

use eframe::egui::{self, Pos2, Sense, Shape, Stroke};

/// How often the indicator asks to be drawn again.
pub const FRAME: Duration = Duration::from_millis(100);

/// Draws a small turning arc (one turn a second) and asks for the next frame 100 ms later.
pub fn spinner(ui: &mut egui::Ui) -> egui::Response {
    let side = ui.spacing().interact_size.y;
    let (rect, response) = ui.allocate_exact_size(egui::vec2(side, side), Sense::hover());
    if ui.is_rect_visible(rect) {
        ui.ctx().request_repaint_after(FRAME);
        let turn = ui.input(|i| i.time).fract() as f32 * std::f32::consts::TAU;
        let radius = side * 0.5 - 2.5;
        let steps = 24;
        let arc = 1.5 * std::f32::consts::PI;
        let points: Vec<Pos2> = (0..=steps)
            .map(|k| {
                let a = turn + arc * k as f32 / steps as f32;
                rect.center() + radius * egui::vec2(a.cos(), a.sin())
            })
            .collect();
        let color = ui.visuals().strong_text_color();
        ui.painter()
            .add(Shape::line(points, Stroke::new(2.5, color)));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The delay before the next frame that a pass drawing `draw` asks for: the third pass (a
    /// context's first two ask for another at once whatever they draw; the third of an empty
    /// window asks for none).
    fn next_frame_after(mut draw: impl FnMut(&mut egui::Ui)) -> Duration {
        let ctx = egui::Context::default();
        let mut output = egui::FullOutput::default();
        for _ in 0..3 {
            output.textures_delta.clear();
            output = ctx.run_ui(egui::RawInput::default(), |ui| draw(ui));
        }
        output.textures_delta.clear();
        output
            .viewport_output
            .get(&egui::ViewportId::ROOT)
            .map_or(Duration::MAX, |v| v.repaint_delay)
    }

    #[test]
    fn the_spinner_asks_for_ten_frames_a_second_not_every_frame() {
        assert_eq!(next_frame_after(|_| {}), Duration::MAX);
        assert_eq!(
            next_frame_after(|ui| {
                spinner(ui);
            }),
            FRAME
        );
        // egui's own spinner asks for the next frame at once.
        assert_eq!(
            next_frame_after(|ui| {
                ui.spinner();
            }),
            Duration::ZERO
        );
    }
}
