//! Crafted hostile inputs for the capture layers: gRPC frames longer than their body, pcap files
//! cut at every byte or with records that lie about their length, decompression bombs, captures
//! with more payloads than the limit; and atomic writes that fail.

use std::io::Write;
use std::path::PathBuf;

use crate::common::run_wirelens;
use wirelens::capture::pcap::{extract, PcapLimits};
use wirelens::capture::{peel, PeelOptions};
use wirelens::codec::protobuf::framing::split_grpc;
use wirelens::files::write_atomically;
use wirelens::limits::Limits;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A gRPC frame whose length prefix exceeds the body: an error at that frame's first byte,
/// naming the frame, with the complete frames before it kept.
#[test]
fn grpc_frame_longer_than_the_body() {
    let mut body = vec![0, 0, 0, 0, 2, 0x08, 0x01]; // frame 1: 2 bytes
    body.extend_from_slice(&[0, 0x7f, 0xff, 0xff, 0xff, 0x08, 0x02]); // frame 2 claims 2 GiB
    let e = split_grpc(&body).expect_err("frame 2 runs past the end");
    assert_eq!(e.offset, 8, "at frame 2's length: {e}");
    assert!(e.message.contains('2'), "names the frame: {e}");
    assert_eq!(e.frames_before.len(), 1);
    // Through peel, as an HTTP gRPC response: the first message is a payload of its own, the
    // rest one marked truncated, whose layer names the offset.
    let mut http = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/grpc\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    http.extend_from_slice(&body);
    let peeled = peel(&http, &PeelOptions::default());
    assert_eq!(peeled.payloads.len(), 2, "{:?}", peeled.payloads);
    assert_eq!(peeled.payloads[0].bytes, [0x08, 0x01]);
    let rest = &peeled.payloads[1];
    assert!(rest.cut.is_some());
    assert_eq!(rest.bytes, body[7..]);
    let layer = rest.layers.last().expect("a gRPC layer");
    // Frame 2 starts at byte 7 (after the 5-byte header and 2 payload bytes of frame 1).
    assert!(layer.detail.contains("at byte 7"), "{}", layer.detail);
}

/// A pcap cut at every byte: never a panic, the cut reported (as an error with the layer and an
/// offset inside the file, or as a warning), and the packets before the cut kept.
#[test]
fn pcap_truncated_at_every_byte() {
    let whole = fixture("pcap/http-json.pcap");
    let full = extract(&whole, &PcapLimits::default()).expect("the fixture reads");
    let full_bytes: usize = full
        .streams
        .iter()
        .map(|s| s.directions.iter().map(|d| d.bytes.len()).sum::<usize>())
        .sum();
    assert!(full_bytes > 0);
    // Where each record ends: a cut there is a shorter capture, not a truncated one.
    let mut boundaries = vec![24usize];
    while let Some(at) = boundaries
        .last()
        .copied()
        .filter(|&at| at + 16 <= whole.len())
    {
        let len = u32::from_le_bytes(whole[at + 8..at + 12].try_into().expect("4 bytes"));
        boundaries.push(at + 16 + len as usize);
    }
    let mut growing = 0usize;
    for cut in 0..whole.len() {
        match extract(&whole[..cut], &PcapLimits::default()) {
            Ok(capture) => {
                let bytes: usize = capture
                    .streams
                    .iter()
                    .map(|s| s.directions.iter().map(|d| d.bytes.len()).sum::<usize>())
                    .sum();
                assert!(
                    bytes <= full_bytes,
                    "cut {cut}: more bytes than the whole file"
                );
                assert!(
                    bytes >= growing || capture.warnings.iter().any(|w| !w.is_empty()),
                    "cut {cut}: lost data without a warning"
                );
                growing = growing.max(bytes);
                if cut > 24 && !boundaries.contains(&cut) {
                    assert!(!capture.warnings.is_empty(), "cut {cut}: no warning");
                }
            }
            Err(e) => {
                assert!(e.offset <= cut, "cut {cut}: offset {}", e.offset);
                assert!(!e.layer.is_empty(), "the error names its layer");
            }
        }
    }
    assert_eq!(
        growing, full_bytes,
        "the last cuts keep everything before them"
    );
}

/// A record whose header claims 4 GB: reading stops there with a warning naming the record; the
/// packets before it are kept; nothing of the claimed size is allocated.
#[test]
fn pcap_record_that_lies_about_its_length() {
    let whole = fixture("pcap/http-json.pcap");
    let mut lying = whole.clone();
    // Global header (24 bytes), then the first record header: incl_len and orig_len at 8..16.
    let first_len = u32::from_le_bytes(lying[32..36].try_into().expect("4 bytes")) as usize;
    let second = 24 + 16 + first_len;
    lying[second + 8..second + 16]
        .copy_from_slice(&[0xf0, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0xff]);
    match extract(&lying, &PcapLimits::default()) {
        Ok(capture) => {
            let text = capture.warnings.join("\n");
            assert!(!capture.warnings.is_empty(), "no warning");
            assert!(
                text.contains(&second.to_string())
                    || text.contains("record")
                    || text.contains("packet"),
                "{text}"
            );
        }
        Err(e) => {
            assert_eq!(e.offset, second, "{e}");
            assert!(e.layer.contains("pcap"), "{e}");
        }
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(data).expect("into a Vec");
    enc.finish().expect("into a Vec")
}

fn http_response(encoding: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: {encoding}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// A gzip bomb stops at the decompression limit with an error naming the layer and the limit;
/// gzip inside gzip stops at the ratio limit.
#[test]
fn decompression_bombs_stop_at_the_limits() {
    let bomb = gzip(&vec![0u8; 16 << 20]);
    let mut limits = Limits::default();
    limits.set("decompressed", "1M").expect("valid");
    let peeled = peel(http_response("gzip", &bomb), &PeelOptions::within(limits));
    let said = format!(
        "{:?} {:?}",
        peeled.error.as_ref().map(|e| e.to_string()),
        peeled.warnings
    );
    assert!(said.contains("limit"), "{said}");
    assert!(
        peeled.payloads.iter().all(|p| p.bytes.len() <= 1 << 20),
        "nothing past the limit is kept"
    );
    // Default byte limit, small ratio: 16 MiB of zeros is far past 10:1.
    let mut limits = Limits::default();
    limits.set("ratio", "10").expect("valid");
    let peeled = peel(http_response("gzip", &bomb), &PeelOptions::within(limits));
    let said = format!(
        "{:?} {:?}",
        peeled.error.as_ref().map(|e| e.to_string()),
        peeled.warnings
    );
    assert!(said.contains("limit"), "{said}");
    // Nested: two gzip layers share one budget (below).
    let nested = gzip(&gzip(&vec![0u8; 64 << 20]));
    assert!(nested.len() < 4096, "{}", nested.len());
    let mut limits = Limits::default();
    limits.set("decompressed", "8M").expect("valid");
    let peeled = peel(
        http_response("gzip, gzip", &nested),
        &PeelOptions::within(limits),
    );
    let said = format!(
        "{:?} {:?}",
        peeled.error.as_ref().map(|e| e.to_string()),
        peeled.warnings
    );
    assert!(said.contains("limit"), "{said}");
}

/// Zeros streamed through a compressor in 1 MiB chunks: `total` bytes of them, compressed.
fn compressed_zeros(total: usize, mut into: impl Write) {
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..total / chunk.len() {
        into.write_all(&chunk).expect("into a Vec");
    }
}

fn zstd_zeros(total: usize) -> Vec<u8> {
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 19).expect("zstd encoder");
    compressed_zeros(total, &mut enc);
    enc.finish().expect("into a Vec")
}

fn brotli_zeros(total: usize) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = brotli::CompressorWriter::new(&mut out, 4096, 9, 22);
        compressed_zeros(total, &mut enc);
    }
    out
}

/// What `len` compressed bytes may expand to under `limits`: the decompressed bytes limit, or
/// (past the ratio floor) the ratio times the compressed size, whichever is less. For one layer
/// `len` is its compressed body; for the overall budget, the whole input.
fn allowed(limits: &Limits, len: usize) -> usize {
    (len * limits.max_ratio)
        .max(limits.ratio_floor)
        .min(limits.max_decompressed)
}

/// zstd and brotli bodies of 200 MB of zeros (a few KB each) stop at the ratio limit with an
/// error naming the coding and the limit, and keep nothing larger than the limit.
#[test]
fn zstd_and_brotli_bombs_stop_at_the_limits() {
    let limits = Limits::default();
    for (coding, bomb) in [
        ("zstd", zstd_zeros(200 << 20)),
        ("br", brotli_zeros(200 << 20)),
    ] {
        assert!(bomb.len() < 64 << 10, "{coding}: {} bytes", bomb.len());
        let input = http_response(coding, &bomb);
        let limit = allowed(&limits, bomb.len());
        // Far past: 200 MB is more than ten times what the ratio allows for this input.
        assert!(limit * 10 < 200 << 20, "{coding}: {limit}");
        let peeled = peel(&input, &PeelOptions::within(limits));
        let e = peeled.error.as_ref().expect("stops with an error");
        assert_eq!(e.layer, coding, "{e}");
        assert!(
            e.to_string().contains(&format!("limit of {limit} bytes")),
            "{e}"
        );
        assert!(
            peeled.payloads.iter().all(|p| p.bytes.len() <= limit),
            "{coding}: nothing past the limit is kept"
        );
        // A body that stays within the ratio still decompresses.
        let fine = match coding {
            "zstd" => zstd_zeros(1 << 20),
            _ => brotli_zeros(1 << 20),
        };
        let peeled = peel(http_response(coding, &fine), &PeelOptions::within(limits));
        assert!(peeled.error.is_none(), "{coding}: {:?}", peeled.error);
        assert_eq!(peeled.payloads[0].bytes.len(), 1 << 20);
    }
}

/// Nested compression draws on one budget for the whole input: two gzip layers of 64 MiB of
/// zeros in a 1 KiB file each stay within the per-layer ratio (about 1000:1 each), but together
/// expand 60,000-fold, so peeling stops at the overall limit (the ratio times the input's size),
/// naming the layer and the limit. The same holds for a gzip file holding a gzip file, and for a
/// capture's HTTP messages together.
#[test]
fn nested_compression_is_bounded_overall() {
    let limits = Limits::default();
    let zeros = vec![0u8; 64 << 20];
    let nested = gzip(&gzip(&zeros));
    let inputs = [
        ("HTTP gzip, gzip", http_response("gzip, gzip", &nested)),
        ("gzip file in a gzip file", nested.clone()),
    ];
    for (what, input) in inputs {
        let limit = allowed(&limits, input.len());
        assert!(limit < zeros.len(), "{what}: {limit}");
        let peeled = peel(&input, &PeelOptions::within(limits));
        let e = peeled.error.as_ref().expect("stops with an error");
        assert_eq!(e.layer, "gzip", "{what}: {e}");
        let said = e.to_string();
        assert!(
            said.contains(&format!("overall limit of {limit} decompressed bytes")),
            "{what}: {said}"
        );
        assert!(
            peeled.payloads.iter().all(|p| p.bytes.len() <= limit),
            "{what}: nothing past the limit is kept"
        );
    }
    // Each message of a pipelined capture alone is within the byte limit; together they are not.
    let mut four = Limits::default();
    four.set("decompressed", "4M").expect("valid");
    let one = gzip(&vec![0u8; 900 << 10]);
    let input: Vec<u8> = (0..8).flat_map(|_| http_response("gzip", &one)).collect();
    let limit = allowed(&four, input.len());
    assert_eq!(limit, 4 << 20);
    let peeled = peel(&input, &PeelOptions::within(four));
    let e = peeled.error.as_ref().expect("stops with an error");
    assert!(e.to_string().contains("overall limit"), "{e}");
    let total: usize = peeled.payloads.iter().map(|p| p.bytes.len()).sum();
    assert!(total <= limit + one.len(), "{total} > {limit}");
    // Nested layers that stay within the budget still peel all the way.
    let small = gzip(&gzip(br#"{"id": 7}"#));
    let peeled = peel(
        http_response("gzip, gzip", &small),
        &PeelOptions::within(limits),
    );
    assert!(peeled.error.is_none(), "{:?}", peeled.error);
    assert_eq!(peeled.payloads[0].bytes, br#"{"id": 7}"#);
}

/// More payloads than the limit: the first ones are kept, with a warning saying how many.
#[test]
fn payload_count_limit() {
    let lines: String = (0..50).map(|i| format!("{{\"n\":{i}}}\n")).collect();
    assert_eq!(
        peel(lines.as_bytes(), &PeelOptions::default())
            .payloads
            .len(),
        50
    );
    let mut limits = Limits::default();
    limits.set("payloads", "10").expect("valid");
    let peeled = peel(lines.as_bytes(), &PeelOptions::within(limits));
    assert_eq!(peeled.payloads.len(), 10);
    assert_eq!(peeled.payloads[9].bytes, b"{\"n\":9}");
    assert!(
        peeled
            .warnings
            .iter()
            .any(|w| w.contains("50") && w.contains("10")),
        "{:?}",
        peeled.warnings
    );
}

/// A write that fails leaves what was there intact, and the error says why.
#[test]
fn failed_atomic_writes_leave_the_old_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The parent of the target is a file: the file is untouched.
    let parent = dir.path().join("report.json");
    std::fs::write(&parent, b"old report").expect("write");
    let e = write_atomically(&parent.join("out.cbor"), b"new").expect_err("parent is a file");
    assert_eq!(e.kind(), std::io::ErrorKind::NotADirectory, "{e}");
    assert!(
        e.to_string().to_lowercase().contains("not a directory"),
        "{e}"
    );
    assert_eq!(std::fs::read(&parent).expect("read"), b"old report");
    // The target is a folder holding the user's file: the rename fails, nothing is replaced.
    let folder = dir.path().join("exports");
    std::fs::create_dir(&folder).expect("mkdir");
    std::fs::write(folder.join("keep.json"), b"kept").expect("write");
    let e = write_atomically(&folder, b"new").expect_err("target is a directory");
    assert!(!e.to_string().is_empty());
    assert_eq!(
        std::fs::read(folder.join("keep.json")).expect("read"),
        b"kept"
    );
    // No temporary file is left behind in either folder.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 2, "{leftovers:?}");
    // A successful write replaces the file whole.
    let target = dir.path().join("out.json");
    std::fs::write(&target, b"old").expect("write");
    write_atomically(&target, b"new contents").expect("writes");
    assert_eq!(std::fs::read(&target).expect("read"), b"new contents");
}

/// The CLI's `--limit`: a bad name is a usage error (exit 2) listing the limits; a set limit
/// applies (depth 2 stops a 3-deep document with an error naming the offset).
#[test]
fn cli_limit_flag() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("deep.json");
    std::fs::write(&input, b"[[[1]]]").expect("write");
    let run = run_wirelens(&["inspect", "--limit", "colour=1"], &input);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("unknown limit") && run.stderr.contains("pcap-bytes"),
        "{}",
        run.stderr
    );
    for args in [
        &[
            "convert", "--from", "json", "--to", "cbor", "--limit", "depth=2",
        ][..],
        &["infer-proto", "--limit", "depth=2"],
    ] {
        let run = run_wirelens(args, &input);
        assert_eq!(run.code, Some(1), "{args:?}");
        assert!(run.stderr.contains("error at byte 2"), "{}", run.stderr);
    }

    // Every command's help names every limit `--limit` takes.
    for command in ["inspect", "convert", "compare", "infer-proto"] {
        let out = assert_cmd::Command::cargo_bin("wirelens")
            .expect("built")
            .args([command, "--help"])
            .output()
            .expect("runs");
        let help = String::from_utf8_lossy(&out.stdout);
        // The flag's line and its wrapped continuation, up to the next flag.
        let mut lines = help
            .lines()
            .skip_while(|l| !l.contains("--limit <NAME=VALUE>"));
        let first = lines.next().unwrap_or_default();
        let rest = lines.take_while(|l| !l.trim_start().starts_with('-'));
        let flag = std::iter::once(first)
            .chain(rest)
            .collect::<Vec<_>>()
            .join(" ");
        for (name, _) in wirelens::limits::Limits::NAMES {
            assert!(flag.contains(name), "{command} --help lacks {name}: {flag}");
        }
    }
}

/// gzip frames of a gRPC body draw on the input's one decompression budget, like HTTP
/// content-encodings: ten frames of 10 KiB of zeros each (about 50 bytes compressed, each far
/// under its own bound) are 100 KiB in all, past a 64 KiB budget; the six that fit are kept, and
/// the seventh is the error, naming the overall limit and the frame.
#[test]
fn compressed_grpc_frames_share_the_input_budget() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&[0u8; 10 << 10]).expect("gzip into a Vec");
    let frame_payload = gz.finish().expect("gzip");
    let mut body = Vec::new();
    let mut frame_starts = Vec::new();
    for _ in 0..10 {
        frame_starts.push(body.len());
        body.push(1); // compressed
        body.extend_from_slice(&(frame_payload.len() as u32).to_be_bytes());
        body.extend_from_slice(&frame_payload);
    }
    let mut http = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/grpc\r\ngrpc-encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    http.extend_from_slice(&body);

    // Under the default budget (at least 1 MiB) every frame decompresses.
    let peeled = peel(&http, &PeelOptions::default());
    assert!(peeled.error.is_none(), "{:?}", peeled.error);
    assert_eq!(peeled.payloads.len(), 10);
    assert!(peeled.payloads.iter().all(|p| p.bytes == [0u8; 10 << 10]));

    let limits = Limits {
        max_decompressed: 64 << 10,
        ..Limits::default()
    };
    let peeled = peel(&http, &PeelOptions::within(limits));
    let e = peeled
        .error
        .as_ref()
        .expect("the budget runs out at frame 7");
    assert_eq!(e.layer, "gRPC frame");
    // The error is at frame 7's payload (past its 5-byte prefix), in the body's offsets.
    assert_eq!(e.offset, frame_starts[6] + 5, "{e}");
    assert!(
        e.message.contains("frame 7") && e.message.contains("overall limit of 65536"),
        "{e}"
    );
    let whole: Vec<_> = peeled.payloads.iter().filter(|p| p.cut.is_none()).collect();
    assert_eq!(whole.len(), 6, "the frames that fit are kept");
    assert!(whole.iter().all(|p| p.bytes == [0u8; 10 << 10]));
}

/// A dump's `*` line repeats the line before it up to the next offset: 27 bytes (found by the
/// `peel` fuzz target, which it took past 2 GB) claim 71 MB. The expansion draws on the input's
/// decompression budget like a gzip body's, so it is not taken as a dump; one that fits still is.
#[test]
fn hexdump_repeats_draw_on_the_decompression_budget() {
    let bomb = b"0000000 00 0\n*\n\n44018a0 07\n";
    let peeled = peel(bomb, &PeelOptions::default());
    assert_eq!(peeled.payloads.len(), 1);
    assert!(
        peeled.payloads[0].layers.is_empty(),
        "{:?}",
        peeled.payloads[0].layers
    );
    assert_eq!(peeled.payloads[0].bytes, &bomb[..]);

    // 64 KiB from one line: under the budget's 1 MiB floor, so it is a dump.
    let fits = b"00000000  01 01 01 01 01 01 01 01  01 01 01 01 01 01 01 01  |................|\n*\n00010000\n";
    let peeled = peel(fits, &PeelOptions::default());
    let layers: Vec<&str> = peeled.payloads[0]
        .layers
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    assert_eq!(layers, ["hex dump"]);
    assert_eq!(peeled.payloads[0].bytes.len(), 0x10000);
    assert!(peeled.payloads[0].bytes.iter().all(|&b| b == 1));
}
