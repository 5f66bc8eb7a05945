//! `docs/cli.md` and `docs/man/*.1` are the reference the argument definitions write (see
//! `cli::reference`).

use std::path::Path;

/// Writes `expected` to `path` when asked to bless, then says whether the file holds it.
fn holds(path: &Path, expected: &[u8]) -> bool {
    if std::env::var_os("WIRELENS_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder made");
        std::fs::write(path, expected).expect("reference written");
    }
    std::fs::read(path).ok().as_deref() == Some(expected)
}

#[test]
fn cli_reference_is_what_the_arguments_say() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md");
    let expected = wirelens::cli::reference::markdown();
    assert!(
        holds(&path, expected.as_bytes()),
        "docs/cli.md differs from the argument definitions; run `WIRELENS_BLESS=1 cargo test cli_reference` and commit it"
    );
    // Every command is in it, with its options.
    for heading in [
        "## wirelens inspect",
        "## wirelens convert",
        "## wirelens infer-proto",
        "## wirelens compare",
        "## wirelens diff",
        "## wirelens diff-schema",
    ] {
        assert!(expected.contains(&format!("{heading}\n")), "{heading}");
    }
    assert!(
        expected.contains("--limit <NAME=VALUE>"),
        "options are listed"
    );
}

#[test]
fn cli_reference_man_pages_are_what_the_arguments_say() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/man");
    let pages = wirelens::cli::reference::man_pages().expect("pages rendered");
    let names: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
    for name in [
        "wirelens.1",
        "wirelens-inspect.1",
        "wirelens-convert.1",
        "wirelens-infer-proto.1",
        "wirelens-compare.1",
        "wirelens-diff.1",
        "wirelens-diff-schema.1",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    for (name, roff) in &pages {
        assert!(
            holds(&dir.join(name), roff),
            "docs/man/{name} differs from the argument definitions; run `WIRELENS_BLESS=1 cargo test cli_reference` and commit it"
        );
        let text = String::from_utf8_lossy(roff);
        assert!(text.contains(".TH "), "{name} is roff");
    }
    // No page is left over from a command that is gone.
    let on_disk = std::fs::read_dir(&dir).expect("docs/man").count();
    assert_eq!(on_disk, pages.len(), "docs/man holds exactly the pages");
    let inspect = &pages
        .iter()
        .find(|(n, _)| n == "wirelens-inspect.1")
        .expect("page")
        .1;
    assert!(
        String::from_utf8_lossy(inspect).contains("\\-\\-layers"),
        "the inspect page lists its options"
    );
}
