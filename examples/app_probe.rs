//! What the app's analysis of one file costs, without a window: opens FILE as the app does
//! (a memory map for a large file; its protobuf column written meanwhile, and the readings
//! ranking made of a large payload handed on), peels it, and analyses its first payload on a
//! job as the app's first analysis does, printing
//! the elapsed time and the process's RSS and peak RSS (`/proc/self/status`) at every preview
//! and at the end, and how many of the payloads' bytes were left in the file to be read back
//! when looked at.
//!
//! `cargo run --release --no-default-features --example app_probe -- FILE` (`PROBE_PEEL=fixed`:
//! peel every layer without ranking the ways of peeling; `PROBE_HIDE=avro,cbor`: leave those
//! columns unencoded, as the app does for hidden columns, Avro by default).

#![allow(clippy::print_stdout)] // a probe reports on stdout

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use wirelens::limits::Limits;
use wirelens::pipeline::Layers;
use wirelens::workspace::analysis::{
    analyze_payload_knowing, open_walking, prewrite_protobuf, Choice, HeadStart,
};
use wirelens::workspace::{no_notify, Job, SchemaSet, Source};

/// `VmRSS` and `VmHWM` in MiB.
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() -> ExitCode {
    let Some(file) = std::env::args().nth(1) else {
        eprintln!("usage: app_probe FILE");
        return ExitCode::from(2);
    };
    let started = Instant::now();
    let source = match Source::open(&file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let limits = Limits::default();
    // As the app opens a file: the best-ranked way; `PROBE_PEEL=fixed` peels every layer
    // without ranking, to see what the ranking costs.
    let layers = match std::env::var("PROBE_PEEL").as_deref() {
        Ok("fixed") => Layers::Peel(wirelens::capture::PeelChoice::default()),
        _ => Layers::Best,
    };
    // As the app's peel job: the source's protobuf column is written meanwhile, and the
    // readings ranking made of a large payload are handed to its analysis.
    let choice = Choice {
        hidden: std::env::var("PROBE_HIDE")
            .unwrap_or_default()
            .split(',')
            .filter_map(wirelens::codec::Format::from_name)
            .collect(),
        ..Choice::default()
    };
    let protobuf = prewrite_protobuf(&source, &limits, &choice.hidden);
    let (opened, known) = match open_walking(&source, layers, &limits, None, None, &mut |_| true) {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!("{file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    // What the app's loading job makes before the list is shown.
    opened.exchanges();
    opened.listing_summary();
    let left: Vec<usize> = opened
        .payloads
        .iter()
        .filter(|p| p.bytes.is_unmade())
        .map(|p| p.bytes.len())
        .collect();
    let all: usize = opened.payloads.iter().map(|p| p.bytes.len()).sum();
    println!(
        "{} payloads of {} MiB: {} of them ({} MiB) left in the file until looked at",
        opened.payloads.len(),
        all >> 20,
        left.len(),
        left.iter().sum::<usize>() >> 20
    );
    if std::env::var_os("PROBE_KINDS").is_some() {
        let mut kinds: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
        for p in opened.payloads.iter().filter(|p| !p.bytes.is_unmade()) {
            let chain: Vec<&str> = p.layers.iter().skip(2).map(|l| l.name.as_str()).collect();
            let k = kinds.entry(chain.join(" > ")).or_default();
            k.0 += 1;
            k.1 += p.bytes.len();
        }
        for (k, (n, b)) in kinds {
            println!("  held: {n:7} payloads, {b:10} bytes: {k}");
        }
    }
    let Some(payload) = opened.payloads.into_iter().next() else {
        eprintln!("{file}: no payload");
        return ExitCode::FAILURE;
    };
    let (r, h) = rss();
    println!(
        "{:7.2} s  opened: rss {r} MiB, peak {h} MiB",
        started.elapsed().as_secs_f64()
    );
    let head = HeadStart {
        known: known.filter(|(i, _)| *i == 0).map(|(_, k)| k),
        protobuf,
    };
    let job = Job::spawn_with_preview("probe", no_notify(), move |ctx, preview| {
        analyze_payload_knowing(
            &payload,
            &choice,
            &SchemaSet::default(),
            &limits,
            ctx,
            &|partial| {
                let shown = partial
                    .columns
                    .iter()
                    .filter(|c| c.document.is_some())
                    .count();
                let sized = partial.columns.iter().filter(|c| c.sizes.is_some()).count();
                let (r, h) = rss();
                println!(
                    "{:7.2} s  preview: {shown} of {} columns, {sized} sized: rss {r} MiB, peak {h} MiB",
                    started.elapsed().as_secs_f64(),
                    partial.columns.len()
                );
                preview.publish(partial);
            },
            head,
        )
    });
    let analysis = match job.wait() {
        Ok(a) => Arc::new(a),
        Err(e) => {
            eprintln!("{file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (r, h) = rss();
    println!(
        "{:7.2} s  done: {} columns: rss {r} MiB, peak {h} MiB",
        started.elapsed().as_secs_f64(),
        analysis.columns.len()
    );
    let source = analysis.source().and_then(|c| c.document.as_ref());
    for c in &analysis.columns {
        let (shared, shape) = match (source, &c.document) {
            (Some(s), Some(d)) => (
                s.value.is_shared_with(&d.value),
                if !c.is_source && d.spans.shares_shape_with(&s.spans) {
                    " (shape shared with the source's)"
                } else {
                    ""
                },
            ),
            _ => (false, ""),
        };
        let hash = {
            use std::hash::{Hash, Hasher};
            let mut h = std::hash::DefaultHasher::new();
            c.bytes[..].hash(&mut h);
            h.finish()
        };
        println!("  {:12} bytes hash {hash:016x}", c.format.title());
        println!(
            "  {:12} {:>12} bytes  {} nodes, {} MiB of spans{shape}, {}, {} notes on {} nodes  {:?}",
            c.format.title(),
            c.bytes.len(),
            c.document.as_ref().map_or(0, |d| d.spans.len()),
            c.document
                .as_ref()
                .map_or(0, |d| d.spans.heap_bytes() >> 20),
            if shared { "shared value" } else { "own value" },
            c.notes.len(),
            c.note_nodes.len(),
            c.sizes
        );
    }
    ExitCode::SUCCESS
}
