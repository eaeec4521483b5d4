//! SIGINT and SIGTERM during a grid run: the handler only records the signal; the runners
//! look at [`requested`] between rows (never inside one) and end there, so every file is
//! whole and the run can be resumed (`--resume`). A second signal of the same kind while the
//! first is pending ends the process at once, as a user pressing Ctrl-C twice expects.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked the run to stop (0: none).
static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    if PENDING.swap(signal, Ordering::SeqCst) == signal {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(128 + signal) };
    }
}

/// Installs the handler for SIGINT and SIGTERM (once per process is enough; again is
/// harmless).
pub fn install() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only touches an atomic and calls _exit, both
        // async-signal-safe; sigaction's struct is plain data set before the call.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// The signal that asked the run to stop at the next row boundary, if one did.
pub fn requested() -> Option<i32> {
    match PENDING.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// The signal's name for messages.
pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        other => format!("signal {other}"),
    }
}

/// For tests of the runners: as if `signal` had arrived (0 clears it).
#[doc(hidden)]
pub fn simulate(signal: i32) {
    PENDING.store(signal, Ordering::SeqCst);
}

/// The error a run stopped by `signal` ends with, after `done` of `total` `unit`: the files
/// are whole, and the command line that resumes it.
pub fn stopped(signal: i32, done: usize, total: usize, unit: &str) -> super::ShardError {
    let mut argv = super::resume::command_line();
    if !argv.iter().any(|a| a == "--resume") {
        argv.push("--resume".into());
    }
    super::ShardError::Stopped {
        signal,
        message: format!(
            "stopped by {} after {done} of {total} {unit}; the results so far are whole. Resume with: {}",
            signal_name(signal),
            argv.join(" ")
        ),
    }
}

/// `Err(stopped(...))` when a signal asked the run to stop: what a runner calls between
/// items.
pub fn check(done: usize, total: usize, unit: &str) -> Result<(), super::ShardError> {
    match requested() {
        Some(signal) => Err(stopped(signal, done, total, unit)),
        None => Ok(()),
    }
}
