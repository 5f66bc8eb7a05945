//! A window with the inspector's widgets on one document: tree | hex | data inspector.
//!
//! `cargo run --example widgets_demo -- [FILE] [PATH]` opens FILE (default
//! `samples/transactions-1k.json`) with the node at PATH (default `$.transactions[2].merchant`)
//! selected. Clicking a tree row or a byte selects that node in both views. Used for the
//! widgets screenshot; the app itself lives in `wirelens::gui`.

use std::path::PathBuf;

use eframe::egui;
use wirelens::codec::{decode, DecodeOptions, Document, Format};
use wirelens::gui::{fonts, widgets};
use wirelens::model::{ByteRole, NodeId, Path};

struct Demo {
    name: String,
    bytes: Vec<u8>,
    doc: Document,
    hex: widgets::HexView,
    tree: widgets::TreeView,
    selected: Option<NodeId>,
    goto: String,
    fonts: String,
}

impl Demo {
    fn select(&mut self, id: NodeId, scroll_hex: bool) {
        self.selected = Some(id);
        self.tree.reveal(&self.doc.spans, id);
        let at = self.doc.spans.node(id).extent().start;
        if scroll_hex {
            self.hex.scroll_to(at);
        }
        self.hex.set_cursor(self.doc.spans.node(id).span.start);
    }
}

impl eframe::App for Demo {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        egui::Panel::top("demo_top").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.strong(format!(
                    "{} — {} bytes, {}",
                    self.name,
                    self.bytes.len(),
                    self.doc.format.title()
                ));
                ui.separator();
                widgets::role_legend(ui);
                ui.separator();
                if let Some(id) = self.selected {
                    ui.label(self.doc.spans.path(id).to_string());
                }
            });
        });
        egui::Panel::left("demo_tree")
            .default_size(520.0)
            .show(ui, |ui| {
                let clicked = {
                    let summary = widgets::summarize(&self.doc.value, &self.doc.spans);
                    let input = widgets::TreeInput {
                        summary: &summary,
                        spans: &self.doc.spans,
                        selected: self.selected,
                        notes: &[],
                        marks: &[],
                        row_menu: None,
                        read_by: None,
                    };
                    self.tree.show(ui, &input)
                };
                if let Some(id) = clicked {
                    self.select(id, true);
                }
            });
        egui::Panel::right("demo_inspector")
            .default_size(330.0)
            .show(ui, |ui| {
                ui.heading("Data inspector");
                if let Some(o) = widgets::goto_offset(ui, &mut self.goto, self.bytes.len()) {
                    self.hex.set_cursor(o);
                    self.hex.scroll_to(o);
                }
                let at = self.hex.cursor().unwrap_or(0);
                widgets::data_inspector(ui, &self.bytes, at);
                ui.separator();
                ui.weak(&self.fonts);
            });
        egui::CentralPanel::default().show(ui, |ui| {
            let spans = &self.doc.spans;
            let describe = |id: NodeId, role: ByteRole| {
                let n = spans.node(id);
                format!(
                    "{}\n{} — {} byte, bytes {} ({} in all)",
                    spans.path(id),
                    n.kind,
                    role.name(),
                    n.extent(),
                    n.extent().len()
                )
            };
            let input = widgets::HexInput {
                bytes: &self.bytes,
                spans: Some(spans),
                selected: self.selected.map(|id| spans.node(id).extent()),
                error_at: None,
                marks: &[],
                describe: &describe,
            };
            let out = self.hex.show(ui, &input);
            if let Some((_, Some(id))) = out.clicked {
                self.select(id, false);
            }
        });
    }
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let file = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "samples/transactions-1k.json".into()),
    );
    let select = args
        .next()
        .unwrap_or_else(|| "$.transactions[2].merchant".into());
    let bytes = std::fs::read(&file)?;
    let format = file
        .extension()
        .and_then(|e| e.to_str())
        .and_then(Format::from_extension)
        .unwrap_or(Format::Json);
    let doc =
        decode(&bytes, format, &DecodeOptions::default()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let path = Path::parse(&select).map_err(|e| anyhow::anyhow!("{e}"))?;
    let target = doc.spans.find(&path).first().copied();
    let options = eframe::NativeOptions {
        renderer: eframe::Renderer::Glow,
        viewport: egui::ViewportBuilder::default()
            .with_title("wirelens widgets")
            .with_inner_size([1580.0, 960.0]),
        ..Default::default()
    };
    let name = file.display().to_string();
    eframe::run_native(
        "wirelens widgets",
        options,
        Box::new(move |cc| {
            let report = fonts::install_fallback_fonts(&cc.egui_ctx);
            let mut demo = Demo {
                name,
                bytes,
                doc,
                hex: widgets::HexView::new(),
                tree: widgets::TreeView::new(),
                selected: None,
                goto: String::new(),
                fonts: report.summary(),
            };
            if let Some(id) = target {
                demo.select(id, true);
            }
            Ok(Box::new(demo))
        }),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))
}
