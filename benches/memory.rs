//! Memory of a decoded document: the bytes the `Value` and its `SpanTree` keep alive after a JSON
//! decode, against the size of the file, and how many allocations the decode makes per node.
//!
//! `cargo bench --no-default-features --bench memory`. Counts come from a global allocator that
//! wraps the system one, so they are exact and do not depend on the machine's load.

#![allow(clippy::print_stdout)] // a bench binary reports on stdout

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use wirelens::codec::protobuf::wire;
use wirelens::codec::{decode, encode, DecodeOptions, EncodeOptions, FloatPolicy, Format};
use wirelens::model::{Node, Value};

/// The system allocator, counting live bytes and allocation calls.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);

// The one place this crate uses `unsafe`: a global allocator has to implement an unsafe trait.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(live, Relaxed);
        CALLS.fetch_add(1, Relaxed);
        // SAFETY: forwarded unchanged to the system allocator, which has the same contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: `ptr` came from `alloc`/`realloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let live = LIVE.fetch_add(new_size, Relaxed) + new_size;
        LIVE.fetch_sub(layout.size(), Relaxed);
        PEAK.fetch_max(live, Relaxed);
        CALLS.fetch_add(1, Relaxed);
        // SAFETY: forwarded unchanged to the system allocator, which has the same contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    // A span tree keeps its nodes packed (varint records); `Node` is the unpacked copy
    // `SpanTree::node` hands out. What a tree keeps per node is the spans column below.
    println!(
        "size_of: Value {} B, an unpacked span-tree Node {} B",
        std::mem::size_of::<Value>(),
        std::mem::size_of::<Node>()
    );
    println!(
        "{:<22} {:>10} {:>8} {:>12} {:>7} {:>12} {:>7} {:>11} {:>10} {:>10}",
        "file",
        "bytes",
        "nodes",
        "retained",
        "ratio",
        "value only",
        "ratio",
        "peak",
        "allocs/node",
        "spans/node"
    );
    let keep = EncodeOptions {
        floats: FloatPolicy::Keep,
        ..EncodeOptions::default()
    };
    for (name, rel) in [
        ("twitter.json", "tests/data/json-bench/twitter.json"),
        (
            "citm_catalog.json",
            "tests/data/json-bench/citm_catalog.json",
        ),
        ("canada.json", "tests/data/json-bench/canada.json"),
        ("transactions-15k.json", "samples/transactions-15k.json"),
    ] {
        let Ok(json) = std::fs::read(format!("{root}/{rel}")) else {
            panic!("bench input {rel} is missing");
        };
        let before = LIVE.load(Relaxed);
        PEAK.store(before, Relaxed);
        let calls = CALLS.load(Relaxed);
        let doc = match decode(&json, Format::Json, &DecodeOptions::default()) {
            Ok(doc) => doc,
            Err(e) => panic!("{name}: {e}"),
        };
        let retained = LIVE.load(Relaxed) - before;
        let peak = PEAK.load(Relaxed) - before;
        let allocs = CALLS.load(Relaxed) - calls;
        let nodes = doc.spans.len();
        let spans = std::mem::take(&mut std::hint::black_box(doc).spans);
        let with_spans = LIVE.load(Relaxed);
        drop(spans);
        let value_only = retained - (with_spans - LIVE.load(Relaxed));
        let ratio = |n: usize| n as f64 / json.len() as f64;
        println!(
            "{name:<22} {:>10} {nodes:>8} {retained:>12} {:>6.2}x {value_only:>12} {:>6.2}x {peak:>11} {:>10.2} {:>9.1}B",
            json.len(),
            ratio(retained),
            ratio(value_only),
            allocs as f64 / nodes.max(1) as f64,
            (retained - value_only) as f64 / nodes.max(1) as f64
        );
        // Encoding allocations, for the same value.
        let value = decode(&json, Format::Json, &DecodeOptions::default())
            .map(|d| d.value)
            .unwrap_or_default();
        for format in [Format::Json, Format::MessagePack, Format::Cbor] {
            let calls = CALLS.load(Relaxed);
            let n = encode(&value, format, &keep).map_or(0, |e| e.spans.len());
            let allocs = CALLS.load(Relaxed) - calls;
            println!(
                "  encode {:<12} {:>8} allocations, {:.3} per node",
                format.name(),
                allocs,
                allocs as f64 / n.max(1) as f64
            );
        }
    }
    schemaless_protobuf();
}

/// Bytes that are not protobuf but read as a field per two bytes (`x` is field 15, VARINT):
/// what detection's schema-less reading costs per node, with and without the alternative
/// readings `decode_raw` keeps, and where the `protobuf-nodes` limit stops it.
fn schemaless_protobuf() {
    let xs = vec![b'x'; 2_000_000];
    let mut unlimited = DecodeOptions::default();
    unlimited.limits.max_protobuf_nodes = usize::MAX;
    println!("schema-less protobuf, {} bytes of 'x':", xs.len());
    let measure = |what: &str, run: &dyn Fn() -> usize| {
        let before = LIVE.load(Relaxed);
        PEAK.store(before, Relaxed);
        let nodes = run();
        let peak = PEAK.load(Relaxed) - before;
        println!(
            "  {what:<34} {nodes:>8} nodes, peak {peak:>11} B, {:>6.1} B/node, {:>6.1}x the input",
            peak as f64 / nodes.max(1) as f64,
            peak as f64 / xs.len() as f64
        );
    };
    measure("decode (chosen readings only)", &|| {
        decode(&xs, Format::Protobuf, &unlimited).map_or(0, |d| d.spans.len())
    });
    measure("decode_raw (every reading)", &|| {
        wire::decode_raw(&xs, &unlimited).map_or(0, |r| r.document.spans.len())
    });
    measure("decode, default protobuf-nodes", &|| {
        decode(&xs, Format::Protobuf, &DecodeOptions::default()).map_or_else(
            |e| e.partial.map_or(0, |d| d.spans.len()),
            |d| d.spans.len(),
        )
    });
}
