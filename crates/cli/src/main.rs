//! The `replay` binary: parse arguments, run (or hand the command to `replay-torch`), print
//! the error chain. It never loads libtorch.

use std::process::ExitCode;

/// mimalloc, not the system allocator: see the dependency's note in Cargo.toml.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    restore_default_sigpipe();
    let cli: replay_cli::Cli = replay_cli::parse::parse();
    match replay_cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => replay_cli::exit::report(&err),
    }
}

/// Rust starts programs with SIGPIPE ignored, so `replay ... | head` would make the next print
/// panic on a closed pipe; like other Unix tools, end quietly instead.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
