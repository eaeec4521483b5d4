//! The core's typed errors. Every one is about something the user gave (a file, a value) or
//! the disk; the binaries turn them into messages and exit codes (2 for what the user can fix).

use std::path::PathBuf;

/// Everything that can go wrong in the torch-free core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file given by the user cannot be read or understood.
    #[error("{path}: {message}")]
    BadInput { path: PathBuf, message: String },

    /// A profiler trace that cannot be read (the message names the file).
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),

    /// An Execution Trace that cannot be read, or that is not the Kineto trace's (the
    /// message names the files).
    #[error(transparent)]
    ExecutionTrace(#[from] crate::execution_trace::EtError),

    /// A signature file that cannot be read (the message names the file).
    #[error(transparent)]
    SignatureFile(#[from] crate::signature::SignatureFileError),

    /// A `kernels.json` of a kept Inductor cache that cannot be used (the message names
    /// the file).
    #[error(transparent)]
    InductorKernels(#[from] crate::inductor::KernelsFileError),

    /// An energy probe could not be opened or read.
    #[error(transparent)]
    Energy(#[from] crate::energy::EnergyError),

    /// Rank traces (or rank signature files) that cannot be read as one job (the message
    /// names the file).
    #[error(transparent)]
    Ranks(#[from] crate::ranks::RankError),

    /// A `--shard` that cannot be resolved, or parts that cannot be merged.
    #[error(transparent)]
    Shard(#[from] ShardError),

    /// An output the user named (a file or folder) cannot be written: a read-only or full
    /// disk, a missing permission. The user can fix it by choosing another place.
    #[error("{}: cannot {action}: {error}", path.display())]
    Output {
        path: PathBuf,
        action: &'static str,
        /// Not a `source`: the message already says it, and the error chain must not repeat it.
        error: std::io::Error,
    },

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// True when the user can fix the problem by changing what they typed or gave us;
    /// the binaries exit with status 2 for these.
    pub fn is_usage_error(&self) -> bool {
        match self {
            Error::BadInput { .. }
            | Error::Trace(_)
            | Error::ExecutionTrace(_)
            | Error::SignatureFile(_)
            | Error::InductorKernels(_)
            | Error::Shard(_)
            | Error::Ranks(_)
            | Error::Output { .. } => true,
            Error::Energy(e) => e.is_usage_error(),
            Error::Io { .. } => false,
        }
    }
}

impl Error {
    /// `path` cannot be written (`action`: "write", "create the folder", ...).
    pub fn output(path: &std::path::Path, action: &'static str, error: std::io::Error) -> Error {
        Error::Output {
            path: path.to_path_buf(),
            action,
            error,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can be wrong with a shard or a set of parts ([`crate::shard`]); every one is the
/// user's to fix. Here, beside the error that carries it, since the shard's writers return
/// that error too.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("--shard: {0}")]
    BadSpec(String),
    /// A part folder that cannot be read as one.
    #[error("{path}: {message}")]
    BadPart { path: PathBuf, message: String },
    /// Parts of different commands, work lists, settings or devices.
    #[error("cannot merge these parts: {0}")]
    Mismatch(String),
    /// The same shard given twice.
    #[error("duplicated shards: {0}")]
    Duplicated(String),
    /// Shards that are not among the parts (or did not finish), and how to run them.
    #[error("{0}")]
    Missing(String),
    /// `--resume` into a folder that holds no run, or another run.
    #[error("{0}")]
    Resume(String),
    /// SIGINT or SIGTERM ended the run at a row boundary; `message` says how to resume.
    #[error("{message}")]
    Stopped { signal: i32, message: String },
}
