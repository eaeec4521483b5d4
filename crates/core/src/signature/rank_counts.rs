//! The per-rank parts of a signature file that covers several ranks of one job
//! (`replay classify --trace 'rank*.json.gz'`, `replay merge` of per-rank files).
//!
//! A signature that appears on several ranks is one signature: its `count` and `trace_*_us`
//! are over the whole job, and its `ranks` say how much of it ran on each rank. The file's
//! `source` is then the lowest rank's, with `linking` and `json_bytes` over every rank; each
//! rank's own is in the file's `ranks`. A file of one trace has neither list, so it reads and
//! writes exactly as before. (The file's list of ranks, [`super::schema::RankSource`], is in
//! the schema beside the `Source` it holds.)

use serde::{Deserialize, Serialize};

/// One signature's invocations on one rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankShare {
    pub rank: u32,
    pub count: u64,
    pub total_us: f64,
    pub min_us: f64,
    pub max_us: f64,
}
