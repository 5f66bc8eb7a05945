//! Frame times kept for measuring the app (`WIRELENS_FRAME_LOG=PATH`, as
//! `scripts/bench-app-frames.sh` sets it): each frame's CPU time as eframe measures it (the
//! app's drawing and the rendering, not the wait for the next frame) and what the app was doing
//! for the source then, written to PATH one frame a line (`seconds state at`: `state` is 2 while
//! the source loads, 1 while another job runs for it (an analysis, an encoding), 0 with none;
//! `at` is when the frame was recorded, in seconds since the app started, to find a slow
//! frame's moment).

use std::path::PathBuf;

/// The frames since the app started, written out every [`FrameLog::EVERY`] frames and at exit.
pub(super) struct FrameLog {
    path: PathBuf,
    start: std::time::Instant,
    frames: Vec<(f32, State, f32)>,
}

/// What the app was doing for the current source during a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    /// No job ran.
    Idle = 0,
    /// A job other than loading ran (an analysis, an encoding).
    Working = 1,
    /// The source was being read and peeled.
    Loading = 2,
}

impl FrameLog {
    /// Frames between writes, so that an app closed from outside still leaves its times.
    const EVERY: usize = 200;

    /// A log when `WIRELENS_FRAME_LOG` names a file.
    pub(super) fn from_env() -> Option<FrameLog> {
        let path = std::env::var_os("WIRELENS_FRAME_LOG")?;
        Some(FrameLog {
            path: path.into(),
            start: std::time::Instant::now(),
            frames: Vec::new(),
        })
    }

    /// The previous frame's CPU time (none on the first frame) and what the app was doing.
    pub(super) fn record(&mut self, seconds: Option<f32>, state: State) {
        if let Some(s) = seconds {
            self.frames
                .push((s, state, self.start.elapsed().as_secs_f32()));
            if self.frames.len() % FrameLog::EVERY == 0 {
                self.write();
            }
        }
    }

    /// Writes every frame so far; a failure is said on stderr once per write (measuring only).
    pub(super) fn write(&self) {
        let mut text = String::with_capacity(self.frames.len() * 20);
        for (s, state, at) in &self.frames {
            text.push_str(&format!("{s:.6} {} {at:.3}\n", *state as u8));
        }
        if let Err(e) = crate::files::write_atomically(&self.path, text.as_bytes()) {
            eprintln!(
                "wirelens: cannot write the frame log {}: {e}",
                self.path.display()
            );
        }
    }
}
