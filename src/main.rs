//! The `wirelens` command-line entry point (a stub until the CLI lands).

fn main() {}
