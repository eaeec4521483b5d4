//! What every fusion pattern shares: its work and traffic counts, timing its two sides on the
//! measurement core, and the [`FusionProfile`] built from them.

use std::collections::BTreeMap;

use super::super::profile::{verdict, FusionProfile};
use super::super::timing::{time_trials, Latency, Trials};
use super::super::CalibrateError;
use crate::device::Device;
use crate::torch::work_target::TorchWork;

/// The seed's warm-up for every fusion pattern.
pub const WARMUP: u64 = 10;

/// The seed's sizes of a family: two in quick mode, a third added in full mode.
pub fn seed_sizes<T>(quick: bool, quick_sizes: [T; 2], full_only: T) -> Vec<T> {
    let mut sizes = Vec::from(quick_sizes);
    if !quick {
        sizes.push(full_only);
    }
    sizes
}

/// The seed's trials of a family, after its warm-ups.
pub fn seed_trials(quick: bool, quick_trials: usize, full_trials: usize) -> Trials {
    Trials {
        warmup: WARMUP,
        trials: if quick { quick_trials } else { full_trials },
    }
}

/// The work and the memory traffic of one pattern at one size, counted as the seed counts them
/// (fp32, 4 bytes an element; each side's bytes are what its kernels read and write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub flops: u64,
    pub unfused_bytes: u64,
    pub fused_bytes: u64,
}

/// The seed's derived numbers for one pattern, from its counts and one latency per side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    pub unfused_gflops: f64,
    pub fused_gflops: f64,
    pub speedup_factor: f64,
    pub memory_reduction: f64,
    pub gflops_improvement: f64,
}

#[cfg(test)]
impl Metrics {
    /// Asserts these metrics equal the seed's own profile numbers (to 1e-9 relative): the
    /// GFLOPS of both sides and the memory reduction.
    pub fn assert_seed(&self, label: &str, unfused_gflops: f64, fused_gflops: f64, reduction: f64) {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(
            close(self.unfused_gflops, unfused_gflops),
            "{label} {}",
            self.unfused_gflops
        );
        assert!(
            close(self.fused_gflops, fused_gflops),
            "{label} {}",
            self.fused_gflops
        );
        assert!(close(self.memory_reduction, reduction), "{label}");
    }
}

impl Metrics {
    /// The seed's formulas: GFLOPS = flops / seconds / 1e9 on each side, speedup = unfused /
    /// fused latency, memory reduction = 1 − fused / unfused bytes, GFLOPS improvement =
    /// (fused − unfused) / unfused GFLOPS.
    pub fn new(counts: Counts, unfused_ms: f64, fused_ms: f64) -> Metrics {
        let gflops = |ms: f64| counts.flops as f64 / (ms / 1e3) / 1e9;
        let (unfused_gflops, fused_gflops) = (gflops(unfused_ms), gflops(fused_ms));
        Metrics {
            unfused_gflops,
            fused_gflops,
            speedup_factor: unfused_ms / fused_ms,
            memory_reduction: 1.0 - counts.fused_bytes as f64 / counts.unfused_bytes as f64,
            gflops_improvement: (fused_gflops - unfused_gflops) / unfused_gflops,
        }
    }
}

/// One pattern at one size, ready to be timed and reported.
pub struct Measured {
    /// `Linear_Bias_ReLU`, ...: its `_`-separated parts are the seed's `operators`.
    pub pattern: &'static str,
    pub input_shape: Vec<u64>,
    pub extra_params: BTreeMap<String, serde_json::Value>,
    pub counts: Counts,
    pub trials: Trials,
}

impl Measured {
    /// The profile of the two measured sides.
    ///
    /// Every latency-derived number uses the medians (the seed divided by the mean of its
    /// trials): one descheduled trial on a shared machine moves a mean, not a median, and the
    /// speedup is a ratio of two such numbers. The `*_latency_ms` fields hold the same medians
    /// so that speedup = unfused / fused of the fields beside it; the means, spreads and
    /// quartiles are in `unfused_latency` and `fused_latency`.
    pub fn profile(
        self,
        unfused: Latency,
        fused: Latency,
    ) -> Result<FusionProfile, CalibrateError> {
        let (u, f) = (unfused.median_latency_ms, fused.median_latency_ms);
        if !(u > 0.0 && f > 0.0) {
            return Err(CalibrateError::Measure(format!(
                "{}: a median latency of zero (unfused {u} ms, fused {f} ms) has no speedup",
                self.pattern
            )));
        }
        let m = Metrics::new(self.counts, u, f);
        // The seed's operators are its pattern name split at `_` (so `FullAttention_SDPA` is
        // `["FullAttention", "SDPA"]`): kept as it wrote them.
        let operators: Vec<String> = self.pattern.split('_').map(str::to_owned).collect();
        Ok(FusionProfile {
            fusion_pattern: self.pattern.to_owned(),
            num_operators: operators.len(),
            operators,
            unfused_latency_ms: u,
            unfused_gflops: m.unfused_gflops,
            unfused_bytes: self.counts.unfused_bytes,
            unfused_memory_bytes: self.counts.unfused_bytes,
            fused_latency_ms: f,
            fused_gflops: m.fused_gflops,
            fused_bytes: self.counts.fused_bytes,
            fused_memory_bytes: self.counts.fused_bytes,
            speedup_factor: m.speedup_factor,
            memory_reduction: m.memory_reduction,
            gflops_improvement: m.gflops_improvement,
            input_shape: self.input_shape,
            extra_params: self.extra_params,
            num_trials: self.trials.trials,
            flops: self.counts.flops,
            verdict: verdict(m.speedup_factor).to_owned(),
            unfused_latency: unfused,
            fused_latency: fused,
        })
    }
}

/// Times the unfused side, then the fused side (the seed's order), each with the seed's
/// warm-up and trials on the measurement core.
///
/// Each side runs once before its target is made: on a GPU that makes libtorch's context
/// current for the events, and a side that fails (a shape libtorch refuses) fails here with
/// libtorch's message rather than inside the timing.
pub fn time_both<U, F>(
    device: &Device,
    trials: Trials,
    mut unfused: U,
    mut fused: F,
) -> Result<(Latency, Latency), CalibrateError>
where
    U: FnMut() -> Result<(), tch::TchError>,
    F: FnMut() -> Result<(), tch::TchError>,
{
    let _guard = tch::no_grad_guard();
    unfused()?;
    let unfused_latency = time_trials(&mut TorchWork::new(device, &mut unfused)?, trials)?;
    fused()?;
    let fused_latency = time_trials(&mut TorchWork::new(device, &mut fused)?, trials)?;
    Ok((unfused_latency, fused_latency))
}

/// Elements of a shape as bytes-count arithmetic wants them.
pub fn product(dims: &[i64]) -> u64 {
    dims.iter().map(|&d| d.max(0) as u64).product()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency(ms: f64) -> Latency {
        Latency::from_samples_us(&[ms * 1e3; 3]).unwrap()
    }

    #[test]
    fn metrics_follow_the_seed_formulas() {
        let counts = Counts {
            flops: 2_000_000_000,
            unfused_bytes: 300,
            fused_bytes: 100,
        };
        let m = Metrics::new(counts, 4.0, 2.0);
        assert_eq!(m.unfused_gflops, 500.0);
        assert_eq!(m.fused_gflops, 1000.0);
        assert_eq!(m.speedup_factor, 2.0);
        assert!((m.memory_reduction - 2.0 / 3.0).abs() < 1e-15);
        assert_eq!(m.gflops_improvement, 1.0);
    }

    #[test]
    fn a_profile_uses_the_medians_and_splits_the_operators() {
        let measured = Measured {
            pattern: "Conv2d_BN_ReLU",
            input_shape: vec![1, 2, 3, 3],
            extra_params: BTreeMap::new(),
            counts: Counts {
                flops: 1_000_000,
                unfused_bytes: 400,
                fused_bytes: 100,
            },
            trials: Trials {
                warmup: 0,
                trials: 3,
            },
        };
        // Unfused: a median of 2 ms under a mean pulled up to 5 ms by one slow trial.
        let unfused = Latency::from_samples_us(&[2000.0, 2000.0, 11000.0]).unwrap();
        let p = measured.profile(unfused, latency(1.6)).unwrap();
        assert_eq!(p.operators, ["Conv2d", "BN", "ReLU"]);
        assert_eq!(p.num_operators, 3);
        assert_eq!(p.unfused_latency_ms, 2.0);
        assert!((p.speedup_factor - 1.25).abs() < 1e-12);
        assert_eq!(p.verdict, "moderate");
        assert_eq!(p.memory_reduction, 0.75);
        assert_eq!(p.unfused_latency.mean_latency_ms, 5.0);
    }

    #[test]
    fn a_zero_latency_is_an_error_not_an_infinite_speedup() {
        let measured = Measured {
            pattern: "Linear_Bias",
            input_shape: vec![1, 1, 1],
            extra_params: BTreeMap::new(),
            counts: Counts {
                flops: 3,
                unfused_bytes: 2,
                fused_bytes: 1,
            },
            trials: Trials {
                warmup: 0,
                trials: 3,
            },
        };
        let err = measured.profile(latency(1.0), latency(0.0)).unwrap_err();
        assert!(err.to_string().contains("zero"), "{err}");
    }
}
