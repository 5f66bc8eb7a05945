//! The `wirelens` binary: the CLI, or the GUI when run without a command.

fn main() -> std::process::ExitCode {
    wirelens::cli::main()
}
