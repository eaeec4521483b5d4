//! What goes wrong reading rank traces as one job.

use std::path::PathBuf;

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
