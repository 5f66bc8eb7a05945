//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) and every crash the fuzzers found
//! (`fuzz/regressions/<target>/`) through the same checks the fuzz targets run
//! (`fuzz/checks.rs`), so `cargo test` guards them without cargo-fuzz or a nightly toolchain.
//!
//! `WIRELENS_FUZZ_DIRS=dir1:dir2` replays other folders laid out the same way (for example the
//! raw seeds in `fuzz/seeds/`).

use crate::fuzz_checks as checks;

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// Runs every file under `dir/<target>/` through the target's check; returns how many ran.
fn replay(dir: &Path, target: &str, check: fn(&[u8])) -> usize {
    let folder = dir.join(target);
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return 0;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let mut count = 0;
    for path in paths.iter().filter(|p| p.is_file()) {
        let bytes = std::fs::read(path).expect("corpus file readable");
        if let Err(panic) = std::panic::catch_unwind(|| check(&bytes)) {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{target}: {} fails its check: {why}", path.display());
        }
        count += 1;
    }
    count
}

#[test]
fn every_target_has_a_committed_corpus_that_passes() {
    for (target, check) in checks::TARGETS {
        let n = replay(&root().join("corpus"), target, check);
        assert!(n > 0, "fuzz/corpus/{target}/ is empty or missing");
        // Crash, timeout and slow inputs, once fixed, go to fuzz/regressions/<target>/.
        replay(&root().join("regressions"), target, check);
    }
}

/// A tool rather than a test: `WIRELENS_FUZZ_DIRS=fuzz/seeds cargo test --test
/// hostile_fuzz_replay -- --ignored`.
#[test]
#[ignore = "needs WIRELENS_FUZZ_DIRS"]
fn extra_folders_from_the_environment() {
    let dirs = std::env::var("WIRELENS_FUZZ_DIRS").expect("WIRELENS_FUZZ_DIRS names the folders");
    let mut total = 0;
    for dir in dirs.split(':').filter(|d| !d.is_empty()) {
        for (target, check) in checks::TARGETS {
            total += replay(Path::new(dir), target, check);
        }
    }
    assert!(total > 0, "no files under {dirs}");
}
