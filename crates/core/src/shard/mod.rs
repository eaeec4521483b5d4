//! Scale-out: one process runs one slice of a command's work list (`--shard I/N`, or `auto`
//! from a Slurm array or a Kubernetes Indexed Job) and leaves a self-describing partial
//! result beside its normal outputs; `replay merge` puts the slices back together into the
//! files one process would have written.
//!
//! [`spec`] (which slice, from flags or the environment), [`work_list`] (the ordered item ids
//! and their hash), [`manifest`] (`shard.json`, the partial result's description, written
//! last so a shard that dies leaves none), [`args`] (the one clap group every grid command
//! flattens), [`plan`] (checking a set of parts and ordering their items), [`isolated`]
//! (merging `replay isolated`'s results), [`rows`] (merging a suite's row CSV).
//!
//! Runs that survive: [`resume`] (`resume.json`, what `--resume` checks), [`recover`] (the
//! whole rows and journal entries a killed run left), [`journal`] (the per-item log of the
//! commands whose files are rewritten whole) and [`stop`] (SIGINT/SIGTERM at a row boundary).

pub mod args;
pub mod calibration;
pub mod isolated;
pub mod journal;
pub mod manifest;
pub mod plan;
pub mod recover;
pub mod resume;
pub mod rows;
pub mod spec;
pub mod stop;
pub mod work_list;

pub use args::{ShardArgs, ShardRun};
pub use manifest::{ShardManifest, MANIFEST_FILE};
pub use plan::MergePlan;
pub use resume::{RunRecord, RunStart, RESUME_FILE};
pub use spec::{Shard, ShardSpec};
pub use work_list::WorkList;

/// A shard's errors, defined with the core's other errors (`error.rs`), which carries them.
pub use crate::error::ShardError;
