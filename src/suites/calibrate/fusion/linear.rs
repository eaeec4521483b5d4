//! Linear layer fusion: Linear_Bias, Linear_Bias_ReLU, Linear_Bias_GELU (the seed's
//! `fused_linear_bench.py`).
//!
//! Unfused: `X·Wᵀ` (`mm`), then the bias added, then the activation, each a separate op that
//! writes a new tensor. Fused: `addmm(bias, X, Wᵀ)` (the bias enters the GEMM, which writes Y
//! once) with the activation applied in place on that output.

use std::collections::BTreeMap;

use tch::{Kind, Tensor};

use super::super::profile::FusionProfile;
use super::super::timing::Trials;
use super::super::CalibrateError;
use super::pattern::{seed_sizes, seed_trials, time_both, Counts, Measured};
use crate::device::Device;

/// The activation after the bias.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    None,
    Relu,
    Gelu,
}

/// The three patterns, in the seed's order.
pub const PATTERNS: [Activation; 3] = [Activation::None, Activation::Relu, Activation::Gelu];

impl Activation {
    /// The seed's pattern name.
    pub fn pattern(self) -> &'static str {
        match self {
            Activation::None => "Linear_Bias",
            Activation::Relu => "Linear_Bias_ReLU",
            Activation::Gelu => "Linear_Bias_GELU",
        }
    }
}

/// (M, K, N): X is M×K, W is N×K, Y is M×N.
pub type LinearSize = (i64, i64, i64);

/// The seed's sizes: small and medium in quick mode, large added in full mode.
pub fn sizes(quick: bool) -> Vec<LinearSize> {
    seed_sizes(
        quick,
        [(128, 512, 512), (512, 1024, 1024)],
        (1024, 2048, 2048),
    )
}

/// The seed's trials: 50 quick, 100 full, after 10 warm-ups.
pub fn trials(quick: bool) -> Trials {
    seed_trials(quick, 50, 100)
}

/// The seed's counts (fp32). FLOPs: the GEMM's 2·M·K·N plus M·N for the bias, plus 8·M·N more
/// for GELU (the seed's estimate of its cost per element; ReLU counts as free). Bytes: fused
/// reads X, W and the bias and writes Y once; unfused also writes Y and reads it back for the
/// bias (2·M·N), and once more for the activation.
pub fn counts(activation: Activation, (m, k, n): LinearSize) -> Counts {
    let (m, k, n) = (m as u64, k as u64, n as u64);
    let y = m * n;
    let fused = m * k + n * k + n + y;
    let extra_passes = match activation {
        Activation::None => 1,
        Activation::Relu | Activation::Gelu => 2,
    };
    let activation_flops = match activation {
        Activation::Gelu => 8 * y,
        _ => 0,
    };
    Counts {
        flops: 2 * m * k * n + y + activation_flops,
        unfused_bytes: 4 * (fused + extra_passes * 2 * y),
        fused_bytes: 4 * fused,
    }
}

/// The operands of one size.
pub struct LinearInputs {
    pub x: Tensor,
    pub w: Tensor,
    pub bias: Tensor,
}

impl LinearInputs {
    /// Standard normal operands, as the seed draws them.
    pub fn random((m, k, n): LinearSize, device: &Device) -> Result<Self, CalibrateError> {
        let options = (Kind::Float, device.torch());
        Ok(LinearInputs {
            x: Tensor::f_randn([m, k], options)?,
            w: Tensor::f_randn([n, k], options)?,
            bias: Tensor::f_randn([n], options)?,
        })
    }
}

// GELU is the exact (erf) form, F.gelu's default.
const GELU: &str = "none";

/// Three ops, each writing a new M×N tensor. `Wᵀ` is a view: the GEMM reads W transposed.
pub fn unfused(inputs: &LinearInputs, activation: Activation) -> Result<Tensor, tch::TchError> {
    let y = inputs.x.f_mm(&inputs.w.f_tr()?)?;
    let y = y.f_add(&inputs.bias)?;
    match activation {
        Activation::None => Ok(y),
        Activation::Relu => y.f_relu(),
        Activation::Gelu => y.f_gelu(GELU),
    }
}

/// The bias inside the GEMM, the activation in place on its output (libtorch has in-place
/// ReLU and GELU: no second M×N tensor is allocated or written).
pub fn fused(inputs: &LinearInputs, activation: Activation) -> Result<Tensor, tch::TchError> {
    let mut y = inputs.bias.f_addmm(&inputs.x, &inputs.w.f_tr()?)?;
    // The in-place ops return another handle on `y` itself.
    match activation {
        Activation::None => Ok(y),
        Activation::Relu => y.f_relu_(),
        Activation::Gelu => y.f_gelu_(GELU),
    }
}

/// One pattern at one size.
pub fn measure(
    device: &Device,
    activation: Activation,
    size: LinearSize,
    trials: Trials,
) -> Result<FusionProfile, CalibrateError> {
    let inputs = LinearInputs::random(size, device)?;
    let (unfused_latency, fused_latency) = time_both(
        device,
        trials,
        || unfused(&inputs, activation).map(drop),
        || fused(&inputs, activation).map(drop),
    )?;
    let (m, k, n) = size;
    Measured {
        pattern: activation.pattern(),
        input_shape: vec![m as u64, k as u64, n as u64],
        extra_params: BTreeMap::from([("output_shape".to_owned(), serde_json::json!([m, n]))]),
        counts: counts(activation, size),
        trials,
    }
    .profile(unfused_latency, fused_latency)
}

#[cfg(test)]
mod tests {
    use super::super::pattern::Metrics;
    use super::*;

    /// The seed's i7-12700K profile (`i7_12700k_with_fusion.json`) at (512, 1024, 1024): bytes
    /// exactly, and its GFLOPS, speedup, memory reduction and improvement from its latencies.
    #[test]
    fn counts_reproduce_the_seed_profile() {
        let size = (512, 1024, 1024);
        // (pattern, unfused bytes, unfused ms, unfused GFLOPS, fused ms, fused GFLOPS,
        //  speedup, memory reduction)
        let seed = [
            (
                Activation::None,
                12_587_008,
                2.311924719979288,
                464.6631020103562,
                2.346226859954186,
                457.8696673948132,
                0.9853798707361283,
                0.33322486169866583,
            ),
            (
                Activation::Relu,
                16_781_312,
                2.3550203000195324,
                456.1600220563237,
                2.4013203800132032,
                447.36475854758424,
                0.9807189076563718,
                0.4998779594825482,
            ),
            (
                Activation::Gelu,
                16_781_312,
                2.420470840006601,
                445.55811132889283,
                2.42072694003582,
                445.5109736515932,
                0.9998942053211443,
                0.4998779594825482,
            ),
        ];
        for (act, unfused_bytes, u_ms, u_gf, f_ms, f_gf, speedup, reduction) in seed {
            let c = counts(act, size);
            assert_eq!(c.fused_bytes, 8_392_704, "{act:?}");
            assert_eq!(c.unfused_bytes, unfused_bytes, "{act:?}");
            let m = Metrics::new(c, u_ms, f_ms);
            m.assert_seed(&format!("{act:?}"), u_gf, f_gf, reduction);
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            assert!(close(m.speedup_factor, speedup), "{act:?}");
            assert!(close(m.gflops_improvement, speedup - 1.0), "{act:?}");
        }
        assert_eq!(counts(Activation::Relu, size).flops, 1_074_266_112);
        assert_eq!(counts(Activation::Gelu, size).flops, 1_078_460_416);
    }

    #[test]
    fn fused_and_unfused_agree() {
        tch::manual_seed(1);
        let inputs = LinearInputs::random((16, 64, 32), Device::host()).unwrap();
        for act in PATTERNS {
            let u = unfused(&inputs, act).unwrap();
            let f = fused(&inputs, act).unwrap();
            assert_eq!(f.size(), [16, 32]);
            assert!(u.allclose(&f, 1e-4, 1e-4, false), "{act:?}");
            // Not trivially equal: the activation changed something.
            if act == Activation::Relu {
                assert!(f.min().double_value(&[]) == 0.0);
            }
        }
    }

    #[test]
    fn a_quick_measurement_is_a_sane_profile() {
        let trials = Trials {
            warmup: 2,
            trials: 5,
        };
        let p = measure(Device::host(), Activation::Relu, (32, 64, 64), trials).unwrap();
        assert_eq!(p.fusion_pattern, "Linear_Bias_ReLU");
        assert_eq!(p.input_shape, [32, 64, 64]);
        assert_eq!(p.num_trials, 5);
        assert_eq!(p.unfused_latency.num_trials, 5);
        assert!(p.unfused_latency_ms > 0.0 && p.fused_latency_ms > 0.0);
        assert!(p.unfused_gflops > 0.0 && p.fused_gflops > 0.0);
        let speedup = p.unfused_latency_ms / p.fused_latency_ms;
        assert!((p.speedup_factor - speedup).abs() < 1e-12);
        assert_eq!(
            p.verdict,
            crate::suites::calibrate::profile::verdict(speedup)
        );
        assert_eq!(p.flops, counts(Activation::Relu, (32, 64, 64)).flops);
    }
}
