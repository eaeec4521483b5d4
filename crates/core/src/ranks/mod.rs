//! A job's traces, one file per rank: `--trace 'rank*.json.gz'` of `classify` and `predict`.
//!
//! - [`paths`] expands the files and globs the user gave (replay expands them itself, so a
//!   quoted glob works, and one that matches nothing is an error naming it);
//! - [`job`] gives each trace its rank (`distributedInfo.rank`, else its place among the
//!   files) and refuses a trace of another job;
//! - [`job_file`] merges the ranks' signature files into the job's;
//! - [`parallel`] reads the ranks side by side, a bounded number at a time;
//! - [`collectives`] reads each rank's collective kernels with their process group and
//!   sequence number, and [`matching`] matches them across ranks;
//! - [`straggler`] is `predict`'s report over the ranks: each rank's step time, the slowest
//!   and how far it trails the median, and who waits for whom in the collectives.

pub mod collectives;
mod error;
pub mod job;
pub mod job_file;
pub mod matching;
pub mod parallel;
pub mod paths;
pub mod straggler;

pub use error::RankError;
pub use job::{assign_ranks, RankClaim};
pub use paths::expand;
