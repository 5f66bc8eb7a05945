//! The desktop app (eframe with the glow renderer).
//!
//! For now a first window: it opens the files given on the command line or dropped on it, and for
//! each shows how it was read and its size in every format. The side-by-side inspector replaces
//! it. Decoding and encoding run on a worker thread; the UI thread only draws.

pub mod fonts;
pub mod widgets;

use std::path::PathBuf;
use std::sync::mpsc;

use eframe::egui;

use crate::capture::{detect, peel};
use crate::codec::{self, DecodeOptions, EncodeOptions, Format};

/// Opens the window with `files` loaded, and returns when it closes.
pub fn run(files: Vec<PathBuf>) -> anyhow::Result<()> {
    let options = eframe::NativeOptions {
        renderer: eframe::Renderer::Glow,
        viewport: egui::ViewportBuilder::default()
            .with_title("wirelens")
            .with_inner_size([1100.0, 700.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "wirelens",
        options,
        Box::new(move |cc| {
            let mut app = App::default();
            for f in files {
                app.open(f, &cc.egui_ctx);
            }
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))
}

/// What loading one file found.
struct Loaded {
    path: PathBuf,
    size: usize,
    summary: Result<Summary, String>,
}

/// Encoded bytes and the number of fidelity notes.
type Size = (usize, usize);

struct Summary {
    format: Format,
    confidence: u8,
    reasons: String,
    /// Per format: bytes and number of fidelity notes, or why it could not be encoded.
    sizes: Vec<(Format, Result<Size, String>)>,
}

#[derive(Default)]
struct App {
    loaded: Vec<Loaded>,
    pending: usize,
    channel: Option<(mpsc::Sender<Loaded>, mpsc::Receiver<Loaded>)>,
}

impl App {
    fn open(&mut self, path: PathBuf, ctx: &egui::Context) {
        let (tx, _) = self.channel.get_or_insert_with(mpsc::channel);
        let tx = tx.clone();
        let ctx = ctx.clone();
        self.pending += 1;
        let spawned = std::thread::Builder::new()
            .name("wirelens-load".into())
            .spawn(move || {
                let loaded = load(path);
                // The window may have closed meanwhile; then nobody needs the result.
                let _ = tx.send(loaded);
                ctx.request_repaint();
            });
        if spawned.is_err() {
            self.pending -= 1;
        }
    }
}

fn load(path: PathBuf) -> Loaded {
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            return Loaded {
                path,
                size: 0,
                summary: Err(format!("cannot read: {e}")),
            }
        }
    };
    let hint = path
        .extension()
        .and_then(|e| e.to_str())
        .and_then(Format::from_extension);
    // Captured traffic (hex dumps, HTTP, pcap, gRPC bodies) is peeled first; the first payload
    // with bytes is shown.
    let peeled = peel(&bytes);
    let (payload, hint) = match peeled.payloads.iter().find(|p| !p.bytes.is_empty()) {
        Some(p) => (p.bytes.as_slice(), p.hint.or(hint)),
        None => (bytes.as_slice(), hint),
    };
    let mut readings = detect(payload, hint, &DecodeOptions::default());
    let best = readings.remove(0);
    let summary = match best.outcome {
        Err(e) => Err(e.to_string()),
        Ok(doc) => {
            let sizes = Format::ALL
                .iter()
                .map(|&f| {
                    let size = codec::encode(&doc.value, f, &EncodeOptions::default())
                        .map(|enc| (enc.bytes.len(), enc.notes.len()))
                        .map_err(|e| e.to_string());
                    (f, size)
                })
                .collect();
            Ok(Summary {
                format: best.format,
                confidence: best.confidence,
                reasons: best.reasons.join("; "),
                sizes,
            })
        }
    };
    Loaded {
        path,
        size: bytes.len(),
        summary,
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        if let Some((_, rx)) = &self.channel {
            while let Ok(l) = rx.try_recv() {
                self.pending = self.pending.saturating_sub(1);
                self.loaded.push(l);
            }
        }
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        for p in dropped {
            self.open(p, &ctx);
        }
        egui::CentralPanel::default().show(ui, |ui| {
            ui.heading("wirelens");
            ui.label(
                "Drop a JSON, MessagePack, CBOR or Protobuf file (or a capture: hex dump, HTTP, pcap, gRPC body) on this window, or pass files on the command line.",
            );
            if self.pending > 0 {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!("loading {} file(s)…", self.pending));
                });
            }
            ui.separator();
            egui::ScrollArea::vertical().show(ui, |ui| {
                for l in &self.loaded {
                    ui.strong(format!("{} ({} bytes)", l.path.display(), l.size));
                    match &l.summary {
                        Err(e) => {
                            ui.colored_label(ui.visuals().error_fg_color, e);
                        }
                        Ok(s) => {
                            ui.label(format!("read as {} ({}%): {}", s.format.title(), s.confidence, s.reasons));
                            egui::Grid::new(l.path.display().to_string()).striped(true).show(ui, |ui| {
                                ui.label("format");
                                ui.label("bytes");
                                ui.label("fidelity notes");
                                ui.end_row();
                                for (f, size) in &s.sizes {
                                    ui.label(f.title());
                                    match size {
                                        Ok((bytes, notes)) => {
                                            ui.label(bytes.to_string());
                                            ui.label(notes.to_string());
                                        }
                                        Err(e) => {
                                            ui.label("—");
                                            ui.colored_label(ui.visuals().error_fg_color, e);
                                        }
                                    }
                                    ui.end_row();
                                }
                            });
                        }
                    }
                    ui.add_space(12.0);
                }
            });
        });
    }
}
