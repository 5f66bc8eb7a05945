//! `docs/cli.md` is the reference the argument definitions write (see `cli::reference`).

#[test]
fn cli_reference_is_what_the_arguments_say() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md");
    let expected = wirelens::cli::reference::markdown();
    if std::env::var_os("WIRELENS_BLESS").is_some() {
        std::fs::write(&path, &expected).expect("docs/cli.md written");
    }
    let found = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        found == expected,
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
        assert!(found.contains(&format!("{heading}\n")), "{heading}");
    }
    assert!(found.contains("--limit <NAME=VALUE>"), "options are listed");
}
