//! Long calls off the interpreter's thread: the work runs on a thread of its own while the
//! caller waits without the GIL, looking for Ctrl-C every 50 ms. An interrupted call raises
//! `KeyboardInterrupt` at once; its work finishes in the background and is dropped (the core
//! reads a file in one pass and has no point at which to stop it early). A panic in the work
//! becomes `ReplayError`; none crosses into Python.

use std::sync::mpsc;
use std::time::Duration;

use pyo3::prelude::*;

use crate::errors::internal;

/// How often a waiting call checks for a signal.
const POLL: Duration = Duration::from_millis(50);

/// Runs `work` on its own thread and returns its result, or the Python error of a signal
/// (Ctrl-C) that arrived meanwhile.
pub fn run<T, F>(py: Python<'_>, what: &str, work: F) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (tx, rx) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name(format!("replay-{what}"))
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            // The receiver is gone when the call was interrupted: nothing waits for it.
            let _ = tx.send(result);
        })
        .map_err(|e| internal(format!("cannot start a thread for {what}: {e}")))?;
    let mut rx = rx;
    loop {
        // The receiver goes into the GIL-free closure and comes back (it is not Sync).
        let (received, back) = py.detach(move || (rx.recv_timeout(POLL), rx));
        rx = back;
        match received {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(panic)) => {
                let text = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_owned());
                return Err(internal(format!(
                    "internal error in {what}: {text} (please report it)"
                )));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(internal(format!(
                    "internal error in {what}: its thread ended without a result"
                )))
            }
        }
    }
}
