//! One case of the quantization grid (a `model_params` entry, a recipe pair, a shape) and
//! what running it leaves for its row besides the quantized measurement.

use super::python_helper::CompiledTimes;
use super::shapes::NamedShape;

/// One row of the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantCase {
    /// Index into the config's `model_params`.
    pub param: usize,
    pub quantization: String,
    pub sparsity: Option<String>,
    pub shape: NamedShape,
}

impl QuantCase {
    pub fn describe(&self) -> String {
        format!(
            "{}{} {} ({}, {}, {})",
            self.quantization,
            self.sparsity
                .as_ref()
                .map(|s| format!("+{s}"))
                .unwrap_or_default(),
            self.shape.name,
            self.shape.m,
            self.shape.k,
            self.shape.n
        )
    }
}

/// What a case leaves for its row besides the quantized measurement.
#[derive(Debug, Clone, Default)]
pub struct CaseNotes {
    pub baseline_ms: Option<f64>,
    pub quantized_ms: Option<f64>,
    pub sqnr_db: Option<f64>,
    pub compiled: Option<CompiledTimes>,
    pub compile_status: Option<String>,
    pub profile_path: Option<String>,
    pub memory_profile_path: Option<String>,
    pub memory_stats: Option<String>,
    /// What the reference check did, or a note for an `ok` row.
    pub message: Option<String>,
}
