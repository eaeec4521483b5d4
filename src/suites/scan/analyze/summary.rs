//! What `replay bench scan analyze` wrote, and the headline figures it prints.

use std::path::PathBuf;

/// What was written, and the headline figures the command prints.
#[derive(Debug, Clone)]
pub struct AnalyzeSummary {
    pub rows: usize,
    pub files: Vec<PathBuf>,
    /// Median positions per second of each backend over its rows, fastest first.
    pub throughput: Vec<(String, f64)>,
    /// Mean backward/forward ratio of each backend.
    pub backward_forward: Vec<(String, f64)>,
    /// Median time ratio of each other backend against the baseline.
    pub against_baseline: Vec<(String, f64)>,
    pub baseline: String,
}
