//! The benchmark's inputs, drawn as the seed draws them: `torch.manual_seed(42)` once at the
//! start of the run, then `torch.randn(B, T−1, K, C, C)` (float32, on the CPU) for each case
//! that runs, one after another from libtorch's global generator. The seed does not reseed
//! per configuration, so a case's inputs depend on the cases run before it; skipped cases
//! draw nothing, as in the seed, whose skip comes before `run_single_benchmark`.

use tch::{Kind, Tensor};

use crate::device::Device;
use crate::suites::scan::{ScanDims, ScanError};

/// The seed of the seed's benchmark.
pub const SEED: i64 = 42;

/// libtorch's global generator, seeded once.
#[derive(Debug)]
pub struct SeededInputs(());

impl SeededInputs {
    /// Seeds libtorch's global generator with `seed` (the benchmark uses [`SEED`]).
    pub fn new(seed: i64) -> SeededInputs {
        tch::manual_seed(seed);
        SeededInputs(())
    }

    /// The next edge tensor `[B, T−1, K, C, C]`, flattened.
    pub fn next_edge(&mut self, dims: ScanDims) -> Result<Vec<f32>, ScanError> {
        let shape = [
            dims.batch as i64,
            dims.positions.saturating_sub(1) as i64,
            dims.durations as i64,
            dims.labels as i64,
            dims.labels as i64,
        ];
        let edge = Tensor::f_randn(shape, (Kind::Float, Device::host().torch()))
            .and_then(|t| t.f_view([-1]))
            .map_err(|e| ScanError::Backend(format!("drawing the inputs: {e}")))?;
        Vec::<f32>::try_from(&edge)
            .map_err(|e| ScanError::Backend(format!("copying the inputs: {e}")))
    }
}
