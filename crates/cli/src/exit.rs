//! How both executables end on an error: the message and its causes on stderr, then exit
//! status 2 for what the user can fix (bad input, a device that is not there) and 1 for our
//! own failures.

use std::process::ExitCode;

/// Prints `err` with its chain and picks the exit status; `is_usage` says which errors in
/// the chain are the user's to fix.
pub fn report_with(
    err: &anyhow::Error,
    is_usage: impl Fn(&(dyn std::error::Error + 'static)) -> bool,
) -> ExitCode {
    eprintln!("error: {err}");
    let mut shown = err.to_string();
    for cause in err.chain().skip(1) {
        // A message that already ends with its cause's words (`cannot open x: No such file or
        // directory (os error 2)`) is not followed by them again.
        let text = cause.to_string();
        if !shown.ends_with(&text) {
            eprintln!("  caused by: {text}");
        }
        shown = text;
    }
    // A grid run a SIGINT/SIGTERM stopped, however the error carried it.
    let signal = err
        .chain()
        .find_map(stopped_by)
        .or_else(replay_core::shard::stop::requested);
    if let Some(signal) = signal {
        // As a shell reports a process a signal ended: 128 + the signal (130, 143).
        return ExitCode::from(u8::try_from(128 + signal).unwrap_or(1));
    }
    let usage = err.chain().any(is_usage);
    ExitCode::from(if usage { 2 } else { 1 })
}

/// The signal that stopped a grid run at a row boundary, if `e` says one did.
fn stopped_by(e: &(dyn std::error::Error + 'static)) -> Option<i32> {
    use replay_core::shard::ShardError;
    let shard = match e.downcast_ref::<replay_core::Error>() {
        Some(replay_core::Error::Shard(s)) => Some(s),
        _ => e.downcast_ref::<ShardError>(),
    };
    match shard {
        Some(ShardError::Stopped { signal, .. }) => Some(*signal),
        _ => None,
    }
}

/// [`report_with`] for the core's own errors.
pub fn report(err: &anyhow::Error) -> ExitCode {
    report_with(err, |e| {
        e.downcast_ref::<replay_core::Error>()
            .is_some_and(|e| e.is_usage_error())
    })
}
