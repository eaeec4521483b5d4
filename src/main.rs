//! The `replay` binary: parse arguments, run, print the error chain.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    restore_default_sigpipe();
    let cli = replay::cli::Cli::parse();
    match replay::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            // 2: something the user can fix (bad input, a device that is not there); 1: our failure.
            let usage = err.chain().any(|c| {
                c.downcast_ref::<replay::Error>()
                    .is_some_and(|e| e.is_usage_error())
            });
            ExitCode::from(if usage { 2 } else { 1 })
        }
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
