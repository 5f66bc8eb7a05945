//! The command-line reference, `docs/cli.md`, written from the argument definitions themselves
//! (each command's `--help`), so it cannot disagree with the binary. A test holds the file equal
//! to [`markdown`]; `WIRELENS_BLESS=1 cargo test cli_reference` writes it anew after a change.

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
