//! Handing a command to `replay-torch`: the executable that links libtorch, installed beside
//! `replay`. Only commands that replay, time or run a model pay for loading libtorch (about
//! half a second and 500 MB); reading and predicting traces never does.

use std::ffi::OsString;
use std::path::PathBuf;

/// The executable's file name, and the variable that points at another one.
pub const TORCH_BINARY: &str = "replay-torch";
pub const TORCH_BINARY_VAR: &str = "REPLAY_TORCH_BIN";

/// Why a command could not be handed over.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    #[error("cannot find {TORCH_BINARY} beside {beside}: replay's libtorch commands live there (reinstall, or set {TORCH_BINARY_VAR})")]
    Missing { beside: String },
    #[error("cannot run {path}: {source}")]
    Exec {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// `$REPLAY_TORCH_BIN`, else `replay-torch` in the folder of the running executable.
pub fn torch_binary() -> Result<PathBuf, ForwardError> {
    if let Some(path) = std::env::var_os(TORCH_BINARY_VAR).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().map_err(|_| ForwardError::Missing {
        beside: "this executable".into(),
    })?;
    let candidate = exe.with_file_name(TORCH_BINARY);
    if candidate.is_file() {
        Ok(candidate)
    } else {
        Err(ForwardError::Missing {
            beside: exe.display().to_string(),
        })
    }
}

/// Replaces this process with `replay-torch COMMAND ARGS...` (stdin, stdout, stderr, exit
/// status and signals are then the command's own); returns only on failure.
pub fn exec(command: &str, args: &[OsString]) -> anyhow::Error {
    let path = match torch_binary() {
        Ok(path) => path,
        Err(e) => return e.into(),
    };
    let mut cmd = std::process::Command::new(&path);
    cmd.arg(command).args(args);
    // What the user typed, for messages that repeat the command line (`--resume` hints).
    if let Some(argv0) = std::env::args_os().next() {
        cmd.env(replay_core::shard::resume::ARGV0_VAR, argv0);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let source = cmd.exec();
        ForwardError::Exec {
            path: path.display().to_string(),
            source,
        }
        .into()
    }
    #[cfg(not(unix))]
    {
        match cmd.status() {
            Ok(status) => std::process::exit(status.code().unwrap_or(1)),
            Err(source) => ForwardError::Exec {
                path: path.display().to_string(),
                source,
            }
            .into(),
        }
    }
}
