//! The command-line reference, `docs/cli.md`, and the manual pages, `docs/man/*.1`, written
//! from the argument definitions themselves (each command's `--help`), so they cannot disagree
//! with the binary. A test holds the files equal to [`markdown`] and [`man_pages`];
//! `WIRELENS_BLESS=1 cargo test cli_reference` writes them anew after a change.

use clap::CommandFactory;

use super::Cli;

/// The reference: the top-level help, then each command's long help, as Markdown.
pub fn markdown() -> String {
    let mut cli = Cli::command();
    cli.build();
    let mut out = String::from(
        "# wirelens command-line reference\n\n\
         Every command's `--help`, written from the argument definitions by `cli::reference` (a \
         test keeps this file equal to them: after changing an argument, run \
         `WIRELENS_BLESS=1 cargo test cli_reference`). The README has worked examples; \
         [command-line.md](command-line.md) explains the output.\n\n",
    );
    section(&mut out, "wirelens", &mut cli.clone());
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| n != "help")
        .collect();
    for name in &names {
        if let Some(sub) = cli.find_subcommand_mut(name) {
            section(&mut out, &format!("wirelens {name}"), sub);
        }
    }
    out
}

fn section(out: &mut String, title: &str, command: &mut clap::Command) {
    let help = command.render_long_help().to_string();
    let help: Vec<&str> = help.lines().map(str::trim_end).collect();
    out.push_str(&format!(
        "## {title}\n\n```text\n{}\n```\n\n",
        help.join("\n").trim_end()
    ));
}

/// The manual pages: `wirelens.1`, then one page per command (`wirelens-inspect.1`, …), each as
/// its file name and its roff text. The help command has no page of its own.
pub fn man_pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    let mut pages = Vec::new();
    man_page(cli, &mut pages)?;
    Ok(pages)
}

/// `command`'s page, then its subcommands' pages, added to `pages`.
fn man_page(command: clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
    let subcommands: Vec<clap::Command> = command
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let man = clap_mangen::Man::new(command)
        .manual("wirelens manual")
        .source(concat!("wirelens ", env!("CARGO_PKG_VERSION")));
    let mut roff = Vec::new();
    man.render(&mut roff)?;
    pages.push((man.get_filename(), roff));
    for sub in subcommands {
        man_page(sub, pages)?;
    }
    Ok(())
}
