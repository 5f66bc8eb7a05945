//! Frame time of the hex and tree views while scrolling, run headless with egui_kittest.
//!
//! `cargo bench --bench gui_frames` (add `--profile test` for a quick, less optimised build).
//! Each frame gets one scroll (a mouse-wheel event, or a jump with `scroll_to`), then the harness
//! runs one egui pass. Measured per frame, as CPU time on this thread:
//! - **ui**: the egui pass: input handling, the widgets' layout and drawing into shapes,
//!   text layout (galleys), and the AccessKit tree that kittest turns on (an app without a screen
//!   reader skips it, so this is an upper bound);
//! - **ui+tess**: the same plus tessellating the frame's shapes into triangles.
//!
//! Not included: uploading to the GPU and the GPU's work (there is no renderer here), font atlas
//! uploads, and the rest of the app.
//!
//! Cases: the hex view of a 100 MB buffer (the MessagePack 15k sample repeated; spans cover the
//! first copy, so the byte lookups run over a ~150k-node tree everywhere), the hex view of the
//! 2.2 MB JSON 15k sample with its spans, and the tree of that sample (15,000 records, ~150k
//! nodes) with every record expanded.
//!
//! Then the whole app opening a 100 MB file (the same repeated MessagePack, written to a
//! temporary file): the first frame's time counts from before `App::new` (which maps the file and
//! starts the worker) to the end of that frame's pass and tessellation, and the frames after it
//! are measured while the worker peels and decodes the file.
//!
//! And the whole app opening 100 MB of JSON (the 15k sample's transactions repeated in one
//! array), which it reads on demand: the time until every column is shown, then the frames while
//! the wheel scrolls the source column's tree (whose rows read their values from the bytes) and
//! its hex view.
#![allow(clippy::print_stdout)] // a bench binary reports on stdout

use std::path::PathBuf;
use std::time::{Duration, Instant};

use eframe::egui::{self, vec2};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use wirelens::codec::{decode, encode_fast, DecodeOptions, EncodeOptions, Format};
use wirelens::gui::fonts;
use wirelens::gui::widgets::{HexInput, HexView, TreeInput, TreeView};
use wirelens::gui::{App, AppOptions};
use wirelens::model::{ByteRole, NodeId, Path, SpanTree, Value};

const FRAMES: usize = 300;

fn wheel(h: &Harness<'_, impl Sized>, dy: f32) {
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: vec2(0.0, dy),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Wheel,
        modifiers: egui::Modifiers::NONE,
    });
}

/// Steps `frames` frames, calling `before` ahead of each; returns per-frame ui and ui+tess times.
fn measure<S>(
    h: &mut Harness<'_, S>,
    frames: usize,
    mut before: impl FnMut(&mut Harness<'_, S>, usize),
) -> (Vec<Duration>, Vec<Duration>) {
    let mut ui = Vec::with_capacity(frames);
    let mut total = Vec::with_capacity(frames);
    for i in 0..frames {
        before(h, i);
        let t0 = Instant::now();
        h.step();
        let t1 = Instant::now();
        let out = h.output();
        let shapes = out.shapes.clone();
        let ppp = out.pixels_per_point;
        let prims = h.ctx.tessellate(shapes, ppp);
        std::hint::black_box(prims);
        let t2 = Instant::now();
        ui.push(t1 - t0);
        total.push(t2 - t0);
    }
    (ui, total)
}

fn pct(v: &[Duration], p: f64) -> f64 {
    let mut s: Vec<f64> = v.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    s.sort_by(f64::total_cmp);
    let i = ((s.len() as f64 - 1.0) * p).round() as usize;
    s.get(i).copied().unwrap_or(0.0)
}

fn report(name: &str, (ui, total): (Vec<Duration>, Vec<Duration>)) {
    println!(
        "{name:<44} ui p50 {:6.2} ms  p99 {:6.2} ms | ui+tess p50 {:6.2} ms  p99 {:6.2} ms",
        pct(&ui, 0.5),
        pct(&ui, 0.99),
        pct(&total, 0.5),
        pct(&total, 0.99)
    );
}

struct HexBench {
    view: HexView,
    bytes: Vec<u8>,
    spans: SpanTree,
}

fn hex_case(name: &str, bytes: Vec<u8>, spans: SpanTree) {
    let len = bytes.len();
    let state = HexBench {
        view: HexView::new(),
        bytes,
        spans,
    };
    let mut h = Harness::builder()
        .with_size(vec2(900.0, 1000.0))
        .build_ui_state(
            |ui, s: &mut HexBench| {
                let spans = &s.spans;
                let describe =
                    |id: NodeId, role: ByteRole| format!("{} ({})", spans.path(id), role.name());
                let input = HexInput {
                    bytes: &s.bytes,
                    spans: Some(&s.spans),
                    selected: spans.nodes().get(5).map(|n| n.extent()),
                    error_at: None,
                    marks: &[],
                    describe: &describe,
                };
                s.view.show(ui, &input);
            },
            state,
        );
    h.run_steps(3);
    h.hover_at(egui::pos2(450.0, 500.0));
    h.run_steps(2);
    report(
        &format!("hex {name}: wheel scroll"),
        measure(&mut h, FRAMES, |h, _| wheel(h, -120.0)),
    );
    // Jumps spread over the whole buffer (a fixed stride, so runs are comparable).
    report(
        &format!("hex {name}: jump anywhere"),
        measure(&mut h, FRAMES, |h, i| {
            let at = (i as u64 * 7_919_993 % len.max(1) as u64) as usize;
            h.state_mut().view.scroll_to(at);
        }),
    );
}

/// The whole app, as a user starts it with `bytes` written to a temporary file named with
/// `extension` (the app is made in the first frame); the file's path, to remove when done.
fn app_opening(bytes: &[u8], extension: &str) -> (Harness<'static, Option<App>>, PathBuf) {
    let path = std::env::temp_dir().join(format!(
        "wirelens-gui-frames-{}.{extension}",
        std::process::id()
    ));
    std::fs::write(&path, bytes).expect("a temporary file");
    let options = AppOptions {
        files: vec![path.clone()],
        settings: None,
    };
    let h = Harness::builder()
        .with_size(vec2(1500.0, 950.0))
        // The merchants' names are Chinese: drawn as boxes without a CJK font installed.
        .allow_missing_glyphs()
        .with_context_setup(|ctx| {
            fonts::install_fallback_fonts(ctx);
        })
        .build_ui_state(
            move |ui, app: &mut Option<App>| {
                let app = app.get_or_insert_with(|| App::new(ui.ctx(), options.clone()));
                app.show(ui);
            },
            None,
        );
    (h, path)
}

/// The app opening `bytes` from a file: the first frame, then frames while it decodes.
fn open_case(bytes: &[u8]) {
    let (mut h, path) = app_opening(bytes, "msgpack");
    // Frames until the hex view of the bytes is on screen (the label above it says so).
    let t0 = Instant::now();
    let mut frames = 0;
    let shown = loop {
        h.step();
        let out = h.output();
        let prims = h.ctx.tessellate(out.shapes.clone(), out.pixels_per_point);
        std::hint::black_box(prims);
        frames += 1;
        if h.query_by_label_contains("the hex view works meanwhile")
            .is_some()
        {
            break Some(t0.elapsed());
        }
        if frames == 100 {
            break None;
        }
    };
    let mapped = h
        .state()
        .as_ref()
        .and_then(|app| app.ws.current.and_then(|i| app.ws.entries.get(i)))
        .is_some_and(|e| e.source.is_mapped());
    match shown {
        Some(t) => println!(
            "open 100 MB file: hex view on screen {:.1} ms after the app started, in frame {frames} (file {})",
            t.as_secs_f64() * 1000.0,
            if mapped { "memory-mapped" } else { "read" }
        ),
        None => println!("open 100 MB file: no hex view after {frames} frames"),
    }
    h.hover_at(egui::pos2(750.0, 600.0));
    report(
        "open 100 MB file: wheel scroll while it decodes",
        measure(&mut h, FRAMES, |h, _| wheel(h, -120.0)),
    );
    let busy = h.state().as_ref().is_some_and(|app| app.ws.is_busy());
    println!(
        "  after {FRAMES} frames the worker is {}",
        if busy { "still busy" } else { "done" }
    );
    drop(h);
    let _ = std::fs::remove_file(&path);
}

/// 100 MB of JSON: `{"transactions": [...]}` with the items of `doc`'s `transactions` repeated.
fn big_json(doc: &Value) -> Vec<u8> {
    let items = match doc {
        Value::Map(entries) => entries.iter().find_map(|(k, v)| match (k, v) {
            (Value::Text(t), Value::Array(items)) if t.as_str() == "transactions" => Some(items),
            _ => None,
        }),
        _ => None,
    }
    .expect("the sample has transactions");
    let encoded: Vec<Vec<u8>> = items
        .iter()
        .map(|item| {
            encode_fast(item, Format::Json, &EncodeOptions::default())
                .expect("an item encodes")
                .bytes
        })
        .collect();
    let mut out = b"{\"transactions\":[".to_vec();
    'fill: loop {
        for item in &encoded {
            if out.len() + item.len() + 2 > 100 << 20 {
                break 'fill;
            }
            if out.len() > 17 {
                out.push(b',');
            }
            out.extend_from_slice(item);
        }
    }
    out.extend_from_slice(b"]}");
    out
}

/// The app opening a large JSON document: the time until every column is shown, then wheel
/// scrolling over the source column's tree and hex view.
fn open_json_case(bytes: &[u8]) {
    let (mut h, path) = app_opening(bytes, "json");
    let t0 = Instant::now();
    h.step();
    let done = loop {
        std::thread::sleep(Duration::from_millis(20));
        h.step();
        let busy = h.state().as_ref().is_none_or(|app| app.ws.is_busy());
        if !busy {
            break Some(t0.elapsed());
        }
        if t0.elapsed() > Duration::from_secs(300) {
            break None;
        }
    };
    let mb = bytes.len() as f64 / f64::from(1 << 20);
    match done {
        Some(t) => println!(
            "open {mb:.0} MiB JSON: every column shown {:.1} s after the app started",
            t.as_secs_f64()
        ),
        None => println!("open {mb:.0} MiB JSON: still busy after 300 s"),
    }
    h.run_steps(3);
    // The source (JSON) column is the first: its tree below, its hex view above.
    h.hover_at(egui::pos2(330.0, 640.0));
    report(
        "open 100 MiB JSON: tree, wheel scroll",
        measure(&mut h, FRAMES, |h, _| wheel(h, -120.0)),
    );
    h.hover_at(egui::pos2(330.0, 300.0));
    report(
        "open 100 MiB JSON: hex, wheel scroll",
        measure(&mut h, FRAMES, |h, _| wheel(h, -120.0)),
    );
    drop(h);
    let _ = std::fs::remove_file(&path);
}

struct TreeBench {
    view: TreeView,
    value: Value,
    spans: SpanTree,
}

fn main() {
    let json =
        std::fs::read("samples/transactions-15k.json").expect("samples/transactions-15k.json");
    let msgpack = std::fs::read("samples/transactions-15k.msgpack")
        .expect("samples/transactions-15k.msgpack");
    let opts = DecodeOptions::default();
    let doc = decode(&json, Format::Json, &opts).expect("the sample decodes");
    let mp = decode(&msgpack, Format::MessagePack, &opts).expect("the sample decodes");
    println!(
        "samples: JSON {} bytes, {} nodes; MessagePack {} bytes",
        json.len(),
        doc.spans.len(),
        msgpack.len()
    );

    let mut big = Vec::with_capacity(100 << 20);
    while big.len() < 100 << 20 {
        let take = msgpack.len().min((100 << 20) - big.len());
        big.extend_from_slice(&msgpack[..take]);
    }
    open_case(&big);
    hex_case("100 MB", big, mp.spans);
    open_json_case(&big_json(&doc.value));
    hex_case("15k JSON (2.2 MB)", json.clone(), doc.spans.clone());

    // The tree with every record expanded: ~120k rows to scroll through.
    let mut view = TreeView::new();
    let records = doc
        .spans
        .find(&Path::parse("$.transactions[*].id").expect("path"));
    let t0 = Instant::now();
    for id in &records {
        view.reveal(&doc.spans, *id);
    }
    let reveal = t0.elapsed();
    let state = TreeBench {
        view,
        value: doc.value,
        spans: doc.spans,
    };
    let mut h = Harness::builder()
        .with_size(vec2(700.0, 1000.0))
        // Without a CJK font installed, the merchants' names draw as boxes instead of failing.
        .allow_missing_glyphs()
        .with_context_setup(|ctx| {
            // The merchants' names are Chinese.
            fonts::install_fallback_fonts(ctx);
        })
        .build_ui_state(
            |ui, s: &mut TreeBench| {
                let summary = wirelens::gui::widgets::summarize(&s.value, &s.spans);
                let input = TreeInput {
                    summary: &summary,
                    spans: &s.spans,
                    selected: None,
                    notes: &[],
                    marks: &[],
                    row_menu: None,
                    read_by: None,
                };
                s.view.show(ui, &input);
            },
            state,
        );
    let t0 = Instant::now();
    h.step();
    println!(
        "tree 15k: expanding {} records took {:.1} ms, the first frame (rebuilding the rows) {:.1} ms, {} rows",
        records.len(),
        reveal.as_secs_f64() * 1000.0,
        t0.elapsed().as_secs_f64() * 1000.0,
        h.state().view.row_count()
    );
    h.hover_at(egui::pos2(350.0, 500.0));
    h.run_steps(2);
    report(
        "tree 15k: wheel scroll",
        measure(&mut h, FRAMES, |h, _| wheel(h, -120.0)),
    );
}
