//! A job's traces, one file per rank: `--trace 'rank*.json.gz'` of `classify` and `predict`.
//!
//! - [`paths`] expands the files and globs the user gave (replay expands them itself, so a
//!   quoted glob works, and one that matches nothing is an error naming it);
//! - [`job`] gives each trace its rank (`distributedInfo.rank`, else its place among the
//!   files) and refuses a trace of another job;
//! - [`parallel`] reads the ranks side by side, a bounded number at a time;
//! - [`collectives`] reads each rank's collective kernels with their process group and
//!   sequence number, and [`matching`] matches them across ranks;
//! - [`straggler`] is `predict`'s report over the ranks: each rank's step time, the slowest
//!   and how far it trails the median, and who waits for whom in the collectives.

pub mod collectives;
pub mod job;
pub mod matching;
pub mod parallel;
pub mod paths;
pub mod straggler;

use std::path::PathBuf;

pub use job::{assign_ranks, RankClaim};
pub use paths::expand;

/// Rank traces that cannot be read as one job.
#[derive(Debug, thiserror::Error)]
pub enum RankError {
    #[error("{pattern}: no file matches this pattern")]
    NoMatch { pattern: String },

    #[error("{path}: cannot list the folder for the pattern {pattern}: {source}")]
    ListFolder {
        path: PathBuf,
        pattern: String,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: a trace of another job: {message}")]
    OtherJob { path: PathBuf, message: String },

    #[error("{path}: claims rank {rank}, as {other} does: each rank once")]
    DuplicateRank {
        path: PathBuf,
        rank: u32,
        other: PathBuf,
    },

    #[error("{path}: no distributedInfo.rank, while {other} has one: give the ranks of one job, all with their distributedInfo or none")]
    MissingRank { path: PathBuf, other: PathBuf },

    #[error("{path}: the same trace as {other} (same SHA-256): each rank once")]
    SameTrace { path: PathBuf, other: PathBuf },

    #[error("{path}: cannot read its collectives: {message}")]
    Collectives { path: PathBuf, message: String },

    #[error(transparent)]
    Merge(#[from] crate::signature::MergeError),
}
