//! The `wirelens` binary: the CLI, or the GUI when run without a command.

/// Counts allocations per thread, so `wirelens compare` reports allocations per operation.
#[global_allocator]
static ALLOC: wirelens::profile::alloc::CountingAlloc = wirelens::profile::alloc::CountingAlloc;

fn main() -> std::process::ExitCode {
    wirelens::cli::main()
}
