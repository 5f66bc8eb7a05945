//! The desktop inspector (eframe with the glow renderer), behind the default `gui` feature.
//!
//! A thin face over [`crate::workspace`]: the [`App`] draws the workspace's sources,
//! payloads and columns and turns clicks, drops and pastes into workspace calls; all decoding and
//! encoding runs on the workspace's worker threads.

mod app;
pub mod fonts;
pub mod widgets;

use std::path::PathBuf;

/// The GUI toolkit, for tests and tools that drive the app.
pub use eframe::egui;

pub use app::{
    palette_score, App, AppOptions, Command, Hover, SchemaFiles, Settings, UiCommand, View, SAMPLES,
};
pub use widgets::thousands;

/// When the app started, for [`log_time`].
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// With `WIRELENS_LOG_TIMES` set, says on stderr once per distinct `event` how many seconds after
/// the start it happened (`scripts/bench-memory.sh` reads these lines to time the app).
pub(crate) fn log_time(event: &str) {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    if std::env::var_os("WIRELENS_LOG_TIMES").is_none() {
        return;
    }
    let Ok(mut seen) = SEEN.lock() else { return };
    if seen.iter().any(|e| e == event) {
        return;
    }
    seen.push(event.to_string());
    let secs = STARTED
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64();
    eprintln!("wirelens: {secs:.2} s: {event}");
}

/// Opens the window with `files` loaded, and returns when it closes.
pub fn run(files: Vec<PathBuf>) -> anyhow::Result<()> {
    STARTED.get_or_init(std::time::Instant::now);
    let options = eframe::NativeOptions {
        renderer: eframe::Renderer::Glow,
        viewport: egui::ViewportBuilder::default()
            .with_title("wirelens")
            .with_inner_size([1400.0, 860.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "wirelens",
        options,
        Box::new(move |cc| {
            let fonts = fonts::install_fallback_fonts(&cc.egui_ctx);
            let settings = cc
                .storage
                .and_then(|s| eframe::get_value::<Settings>(s, eframe::APP_KEY));
            let mut app = App::new(&cc.egui_ctx, AppOptions { files, settings });
            app.set_font_summary(fonts.summary());
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))
}
