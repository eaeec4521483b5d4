//! `replay-torch`: the commands that link libtorch, run by `replay` (crates/core) as
//! `replay-torch COMMAND ARGS...`: parse arguments, run, print the error chain.

use std::process::ExitCode;

fn main() -> ExitCode {
    restore_default_sigpipe();
    // Before libtorch allocates anything: one malloc policy for replays and model alike.
    replay::measure::host_allocator::fix_thresholds();
    let cli: replay::cli::Cli = replay_cli::parse::parse();
    match replay::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => replay_cli::exit::report_with(&err, |e| {
            e.downcast_ref::<replay::Error>()
                .is_some_and(|e| e.is_usage_error())
                || e.downcast_ref::<replay_core::Error>()
                    .is_some_and(|e| e.is_usage_error())
        }),
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
