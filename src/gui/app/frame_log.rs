//! Frame times kept for measuring the app (`WIRELENS_FRAME_LOG=PATH`, as
//! `scripts/bench-app-frames.sh` sets it): each frame's CPU time as eframe measures it (the
//! app's drawing and the rendering, not the wait for the next frame) and whether a job was
//! running for the source then, written to PATH one frame a line (`seconds busy`).

use std::path::PathBuf;

/// The frames since the app started, written out every [`FrameLog::EVERY`] frames and at exit.
pub(super) struct FrameLog {
    path: PathBuf,
    frames: Vec<(f32, bool)>,
}

impl FrameLog {
    /// Frames between writes, so that an app closed from outside still leaves its times.
    const EVERY: usize = 200;

    /// A log when `WIRELENS_FRAME_LOG` names a file.
    pub(super) fn from_env() -> Option<FrameLog> {
        let path = std::env::var_os("WIRELENS_FRAME_LOG")?;
        Some(FrameLog {
            path: path.into(),
            frames: Vec::new(),
        })
    }

    /// The previous frame's CPU time (none on the first frame) and whether a job was running.
    pub(super) fn record(&mut self, seconds: Option<f32>, busy: bool) {
        if let Some(s) = seconds {
            self.frames.push((s, busy));
            if self.frames.len() % FrameLog::EVERY == 0 {
                self.write();
            }
        }
    }

    /// Writes every frame so far; a failure is said on stderr once per write (measuring only).
    pub(super) fn write(&self) {
        let mut text = String::with_capacity(self.frames.len() * 12);
        for (s, busy) in &self.frames {
            text.push_str(&format!("{s:.6} {}\n", u8::from(*busy)));
        }
        if let Err(e) = crate::files::write_atomically(&self.path, text.as_bytes()) {
            eprintln!(
                "wirelens: cannot write the frame log {}: {e}",
                self.path.display()
            );
        }
    }
}
