//! Running the project's Python helpers (`scripts/*.py`) with the `.venv` interpreter that
//! `scripts/setup` made (torch 2.11.0), never through a shell.

use std::path::PathBuf;
use std::process::Command;

use crate::error::{Error, Result};

/// The variable that points replay at another `scripts/` folder: a binary carried to another
/// machine (the GPU bundle) has its build checkout's path compiled in, which does not exist there.
/// (One name with the core, which finds the shipped data beside that folder.)
pub use replay_core::shipped::SCRIPTS_DIR_VAR;
/// The variable that names the Python interpreter (one whose torch matches the libtorch the
/// binary was built against); on the GPU machines that is the system `python3`.
pub const PYTHON_VAR: &str = "REPLAY_PYTHON";

/// The project's `scripts/` folder: `$REPLAY_SCRIPTS_DIR`, else the checkout the binary was
/// built in.
pub fn scripts_dir() -> PathBuf {
    match std::env::var_os(SCRIPTS_DIR_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts"),
    }
}

/// `$REPLAY_PYTHON`, else `.venv/bin/python`, or `python3` on `PATH` when the venv is gone.
pub fn interpreter() -> PathBuf {
    if let Some(python) = std::env::var_os(PYTHON_VAR).filter(|p| !p.is_empty()) {
        return PathBuf::from(python);
    }
    let venv = option_env!("REPLAY_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv"));
    let python = venv.join("bin/python");
    if python.is_file() {
        python
    } else {
        PathBuf::from("python3")
    }
}

/// Runs `scripts/<script>` with `args`, passing its output through. A script's exit code 2
/// (its usage errors) becomes a usage error here too.
pub fn run_script(script: &str, args: &[String]) -> Result<()> {
    let path = scripts_dir().join(script);
    let status = command(&path, args)
        .status()
        .map_err(|source| start_error(&path, source))?;
    judge(path, status)
}

/// As [`run_script`], but each line the script writes on standard output goes to `on_line`
/// (as it comes) instead of this process's standard output; its standard error is passed
/// through.
pub fn run_script_lines(
    script: &str,
    args: &[String],
    on_line: &mut dyn FnMut(&str),
) -> Result<()> {
    use std::io::BufRead as _;
    let path = scripts_dir().join(script);
    let mut child = command(&path, args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|source| start_error(&path, source))?;
    if let Some(stdout) = child.stdout.take() {
        let mut reader = std::io::BufReader::new(stdout);
        // Lossy: a script's odd byte must not lose the rest of its report.
        let mut bytes = Vec::new();
        loop {
            bytes.clear();
            match reader.read_until(b'\n', &mut bytes) {
                Ok(0) | Err(_) => break,
                Ok(_) => on_line(&String::from_utf8_lossy(&bytes)),
            }
        }
    }
    let status = child.wait().map_err(|source| start_error(&path, source))?;
    judge(path, status)
}

fn command(path: &std::path::Path, args: &[String]) -> Command {
    let mut command = Command::new(interpreter());
    command
        .arg(path)
        .args(args)
        .envs(crate::measure::host_allocator::child_env());
    command
}

fn start_error(path: &std::path::Path, source: std::io::Error) -> Error {
    Error::from(replay_core::Error::Io {
        context: format!(
            "cannot start {} {}",
            interpreter().display(),
            path.display()
        ),
        source,
    })
}

fn judge(path: PathBuf, status: std::process::ExitStatus) -> Result<()> {
    match status.code() {
        Some(0) => Ok(()),
        Some(2) => Err(Error::from(replay_core::Error::BadInput {
            path,
            message: "rejected its arguments (see the message above)".into(),
        })),
        _ => Err(Error::Model(format!(
            "{} failed ({status})",
            path.display()
        ))),
    }
}
