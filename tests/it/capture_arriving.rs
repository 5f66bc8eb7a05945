//! Captures read as they arrive (`--stream`, the default for captures over 64 MiB and for a
//! capture on standard input beyond that): `inspect --no-tree --no-hex` and `convert --all`
//! give what reading the whole file gives, in the order connections end, on every capture the
//! tests hold, and from standard input.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn wirelens() -> Command {
    Command::cargo_bin("wirelens").expect("binary built")
}

fn captures_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            captures_under(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "pcap" || e == "pcapng")
        {
            out.push(path);
        }
    }
}

fn captures() -> Vec<PathBuf> {
    let mut files = Vec::new();
    captures_under(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/capture"),
        &mut files,
    );
    files.sort();
    assert!(files.len() >= 40, "{} captures found", files.len());
    files
}

/// Runs wirelens with `args` on `file` (its key log beside it, if any): exit code, stdout,
/// stderr.
fn run(args: &[&str], file: &Path) -> (Option<i32>, String, String) {
    let mut cmd = wirelens();
    cmd.args(args).arg(file);
    let keylog = file.with_extension("keylog");
    if keylog.exists() {
        cmd.arg("--keylog").arg(keylog);
    }
    let out = cmd.output().expect("wirelens runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The payload lines of an `inspect` listing without their numbers and marks, sorted; and its
/// warnings, sorted.
fn listing(stdout: &str) -> (Vec<String>, Vec<String>) {
    let mut payloads: Vec<String> = stdout
        .lines()
        .filter(|l| l.contains(" bytes via "))
        .map(|l| {
            let l = l.trim_start_matches([' ', '*']);
            l.split_once(". ").map_or(l, |(_, rest)| rest).to_string()
        })
        .collect();
    let mut warnings: Vec<String> = stdout
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .map(str::to_string)
        .collect();
    payloads.sort();
    warnings.sort();
    (payloads, warnings)
}

fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}

#[test]
fn inspect_lists_what_the_whole_file_lists() {
    let mut listed = 0;
    for file in captures() {
        let name = file.display();
        let (code, whole, _) = run(&["inspect", "--no-tree", "--no-hex"], &file);
        let (streamed_code, streamed, _) =
            run(&["inspect", "--no-tree", "--no-hex", "--stream"], &file);
        assert_eq!(code, streamed_code, "{name}");
        assert_eq!(listing(&whole), listing(&streamed), "{name}");
        if streamed_code == Some(0) {
            assert!(
                streamed.contains("note: the capture is read as it arrives"),
                "{name}: {streamed}"
            );
        }
        listed += listing(&streamed).0.len();
    }
    assert!(listed > 500, "{listed} payloads listed in all");
}

#[test]
fn convert_all_writes_what_the_whole_file_writes() {
    let mut written = 0;
    for file in captures() {
        let name = file.display();
        let (code, whole, whole_err) = run(&["convert", "--all", "--to", "json"], &file);
        let (streamed_code, streamed, streamed_err) =
            run(&["convert", "--all", "--to", "json", "--stream"], &file);
        assert_eq!(code, streamed_code, "{name}: {whole_err} / {streamed_err}");
        assert_eq!(sorted_lines(&whole), sorted_lines(&streamed), "{name}");
        written += streamed.lines().count();
    }
    assert!(written > 200, "{written} lines written in all");
}

#[test]
fn a_capture_on_standard_input_is_read_as_it_arrives() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture/pcap/http-msgpack.pcapng");
    let bytes = std::fs::read(&file).expect("fixture");
    let (_, whole, _) = run(&["inspect", "--no-tree", "--no-hex"], &file);
    let out = wirelens()
        .args(["inspect", "--no-tree", "--no-hex", "--stream", "-"])
        .write_stdin(bytes.clone())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("input: <stdin>\n"), "{stdout}");
    assert!(
        stdout.contains(&format!("read: {} bytes", bytes.len())),
        "{stdout}"
    );
    assert_eq!(listing(&whole), listing(&stdout));
    assert!(!listing(&stdout).0.is_empty());
}

/// A pcap whose one record says it holds 4 GB, on standard input: what the input has is read,
/// and the lie is named; nothing is allocated for the length it claimed.
#[test]
fn a_record_length_lie_on_standard_input_holds_only_what_arrives() {
    let mut pcap = Vec::new();
    pcap.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    pcap.extend_from_slice(&2u16.to_le_bytes());
    pcap.extend_from_slice(&4u16.to_le_bytes());
    pcap.extend_from_slice(&[0; 8]);
    pcap.extend_from_slice(&65535u32.to_le_bytes());
    pcap.extend_from_slice(&1u32.to_le_bytes()); // Ethernet
    pcap.extend_from_slice(&[0; 8]); // time
    pcap.extend_from_slice(&0xffff_fff0u32.to_le_bytes()); // captured length: a lie
    pcap.extend_from_slice(&0xffff_fff0u32.to_le_bytes());
    pcap.extend_from_slice(&[0xab; 100]);
    let out = wirelens()
        .args(["inspect", "--no-tree", "--no-hex", "--stream", "-"])
        .write_stdin(pcap)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "warning: frame 1: the file ends inside its data (4294967280 bytes announced, 100 present)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("payloads: none"), "{stdout}");
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}

#[test]
fn stream_is_for_captures_and_for_listings() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/user-profile.json");
    let out = wirelens()
        .args(["inspect", "--no-tree", "--no-hex", "--stream"])
        .arg(&sample)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--stream reads a pcap or pcapng capture as it arrives"),
        "{stderr}"
    );
    // A tree needs the payload read whole: --stream lists only.
    let capture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/capture/pcap/http-json.pcap");
    let out = wirelens()
        .args(["inspect", "--stream"])
        .arg(&capture)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let out = wirelens()
        .args(["convert", "--to", "json", "--stream"])
        .arg(&capture)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

/// A payload limit that is set ends the listing there, with a warning naming it.
#[test]
fn a_payload_limit_that_is_set_ends_the_listing() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture/real/http1-keepalive.pcap");
    let (code, stdout, _) = run(
        &[
            "inspect",
            "--no-tree",
            "--no-hex",
            "--stream",
            "--limit",
            "payloads=3",
        ],
        &file,
    );
    assert_eq!(code, Some(0), "{stdout}");
    let (payloads, warnings) = listing(&stdout);
    assert_eq!(payloads.len(), 3, "{stdout}");
    assert_eq!(
        warnings,
        ["warning: only the first 3 payloads are kept (limit payloads; `--limit payloads=N` raises it); the rest of the capture is not read"]
    );
    let (_, whole, _) = run(&["inspect", "--no-tree", "--no-hex", "--stream"], &file);
    assert!(listing(&whole).0.len() > 3);
}

/// The app reads a capture file through its handle, so it need not hold it; stopping that
/// reading part way (the status bar's Cancel while a capture loads) keeps every connection read
/// up to there, ends the ones still open where it stopped, and says so first.
#[test]
fn the_app_stops_reading_a_capture_where_asked_and_keeps_what_was_read() {
    use wirelens::limits::Limits;
    use wirelens::pipeline::Layers;
    use wirelens::workspace::{open, open_watched, Source};

    let dir = tempfile::tempdir().expect("a temporary folder");
    let file = dir.path().join("ten.pcap");
    // Larger than the size from which files are mapped, so that it is read through the handle.
    std::fs::write(&file, crate::common::pcap_of_x_streams(10, 1_000_000)).expect("written");
    let source = Source::open(&file).expect("opened");
    assert!(source.is_mapped());
    let all = open(&source, Layers::Best, &Limits::default(), None, None).expect("peeled");
    assert_eq!(all.payloads.len(), 10);
    assert!(all.payloads.iter().all(|p| p.bytes.len() == 1_000_000));
    assert!(
        !all.warnings.iter().any(|w| w.contains("stopped")),
        "{:?}",
        all.warnings
    );

    let half = source.len() / 2;
    let mut seen = Vec::new();
    let some = open_watched(
        &source,
        Layers::Best,
        &Limits::default(),
        None,
        None,
        &mut |read| {
            seen.push(read);
            read < half
        },
    )
    .expect("peeled");
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "read counts only grow"
    );
    let stop = seen.last().copied().expect("watched");
    assert!(
        stop >= half && stop < source.len(),
        "{stop} of {}",
        source.len()
    );
    assert!(
        some.warnings[0].starts_with(&format!(
            "reading stopped at byte {stop} of {}",
            source.len()
        )),
        "{:?}",
        some.warnings
    );
    // The streams before the stop are whole, the one it cut is there up to the stop, none after.
    let whole = some
        .payloads
        .iter()
        .filter(|p| p.bytes.len() == 1_000_000)
        .count();
    assert!((4..=5).contains(&whole), "{whole} whole streams");
    assert!(some.payloads.len() <= 6, "{}", some.payloads.len());
    for (a, b) in some.payloads.iter().zip(&all.payloads) {
        assert!(b.bytes.starts_with(&a.bytes));
    }
}

/// The app leaves what a capture sent as it was sent in the file and reads it back when it is
/// looked at, so its memory holds where each payload lies, not its bytes: nothing the list and
/// its filter need (exchanges, content types, the payload to start on, all made by the loading
/// job) keeps them, and what is read back is what peeling the whole file in memory gives.
#[test]
fn the_app_reads_payloads_back_from_the_capture_file_when_they_are_looked_at() {
    use wirelens::capture::{listing, peel, PeelOptions, SharedBytes};
    use wirelens::limits::Limits;
    use wirelens::pipeline::Layers;
    use wirelens::workspace::{open, Source};

    let dir = tempfile::tempdir().expect("a temporary folder");
    let file = dir.path().join("ten.pcap");
    let bytes = crate::common::pcap_of_x_streams(10, 1_000_000);
    std::fs::write(&file, &bytes).expect("written");
    let source = Source::open(&file).expect("opened");
    assert!(source.is_mapped());
    let opened = open(&source, Layers::Best, &Limits::default(), None, None).expect("peeled");
    opened.exchanges();
    let start = opened.listing_summary().default_payload;
    assert_eq!(opened.payloads.len(), 10);
    assert!(
        opened.payloads.iter().all(|p| p.bytes.is_unmade()),
        "every payload is still in the file"
    );
    let whole = peel(SharedBytes::from(bytes), &PeelOptions::default());
    assert_eq!(whole.payloads.len(), 10);
    assert_eq!(start, listing::default_payload(&whole.payloads));
    let looked_at = &opened.payloads[3];
    assert_eq!(looked_at.bytes, whole.payloads[3].bytes);
    assert_eq!(looked_at.bytes.len(), 1_000_000);
    assert!(!looked_at.bytes.is_unmade(), "read back once, then kept");
    assert!(
        opened.payloads[4].bytes.is_unmade(),
        "only the one looked at"
    );
    assert_eq!(opened.payloads, whole.payloads);
}
