//! Attention fusion: QK_AttentionScores, QK_Softmax, FullAttention_SDPA (the seed's
//! `fused_attention_bench.py`), one head of B×S×D queries, keys and values.
//!
//! Unfused: `Q·Kᵀ` (`bmm`), the scale by 1/√D, softmax over the keys, `·V`, each writing a new
//! tensor. Fused: the scale folded into the GEMM (`baddbmm` with β = 0 and α = 1/√D, so the
//! B×S×S scores are written once, already scaled), softmax after it, and for the full head
//! libtorch's `scaled_dot_product_attention`. libtorch has no single QK + softmax kernel
//! outside SDPA, so QK_Softmax's fused side saves the scale's pass only; the seed's fused sides
//! there were TorchScript of the same ops.

use std::collections::BTreeMap;

use tch::{Kind, Tensor};

use super::super::profile::FusionProfile;
use super::super::timing::Trials;
use super::super::CalibrateError;
use super::pattern::{seed_sizes, seed_trials, time_both, Counts, Measured};
use crate::device::Device;

/// How much of the attention head is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionPattern {
    /// Scaled scores Q·Kᵀ/√D.
    QkScores,
    /// softmax(Q·Kᵀ/√D).
    QkSoftmax,
    /// softmax(Q·Kᵀ/√D)·V.
    FullSdpa,
}

/// The three patterns, in the seed's order.
pub const PATTERNS: [AttentionPattern; 3] = [
    AttentionPattern::QkScores,
    AttentionPattern::QkSoftmax,
    AttentionPattern::FullSdpa,
];

impl AttentionPattern {
    /// The seed's pattern name (`FullAttention_SDPA`: the seed fell back to `_JIT` without
    /// SDPA; libtorch 2.x always has it).
    pub fn pattern(self) -> &'static str {
        match self {
            AttentionPattern::QkScores => "QK_AttentionScores",
            AttentionPattern::QkSoftmax => "QK_Softmax",
            AttentionPattern::FullSdpa => "FullAttention_SDPA",
        }
    }
}

/// (B, S, D): batch, sequence length, head dimension.
pub type AttentionSize = (i64, i64, i64);

/// The seed's sizes: two in quick mode, a third in full mode.
pub fn sizes(quick: bool) -> Vec<AttentionSize> {
    seed_sizes(quick, [(1, 128, 64), (4, 256, 64)], (8, 512, 64))
}

/// The seed's trials: 30 quick, 50 full (`calibrate_attention_fusion_patterns`; its calibrator
/// wrote `num_trials: 50` into the quick profile regardless), after 10 warm-ups.
pub fn trials(quick: bool) -> Trials {
    seed_trials(quick, 30, 50)
}

/// The seed's counts (fp32), with `qkv` = B·S·D (one of Q, K, V or the output) and `s` = B·S·S
/// (the scores). FLOPs: 2·S·D·S per batch for each GEMM, S² for the scale, 5·S² for softmax.
/// Bytes: fused reads the inputs and writes the result once (scores, weights, or the B×S×D
/// output of the full head). Unfused, as the seed counted it: 2·s more for the scale (its
/// write and read back), 3·s more for QK + softmax, and for the full head only the three
/// intermediate writes of the scores (3·s), none of their reads.
pub fn counts(pattern: AttentionPattern, (b, s, d): AttentionSize) -> Counts {
    let (b, s, d) = (b as u64, s as u64, d as u64);
    let qkv = b * s * d;
    let scores = b * s * s;
    let gemm = 2 * scores * d;
    let (flops, fused, unfused_extra) = match pattern {
        AttentionPattern::QkScores => (gemm + scores, 2 * qkv + scores, 2 * scores),
        AttentionPattern::QkSoftmax => (gemm + 6 * scores, 2 * qkv + scores, 3 * scores),
        AttentionPattern::FullSdpa => (2 * gemm + 6 * scores, 4 * qkv, 3 * scores),
    };
    Counts {
        flops,
        unfused_bytes: 4 * (fused + unfused_extra),
        fused_bytes: 4 * fused,
    }
}

/// The operands of one size.
pub struct AttentionInputs {
    pub q: Tensor,
    pub k: Tensor,
    pub v: Tensor,
    /// 1/√D.
    pub scale: f64,
    /// The ignored addend of `baddbmm` (β = 0): one element, broadcast.
    nothing: Tensor,
}

impl AttentionInputs {
    /// Standard normal Q, K and V, as the seed draws them.
    pub fn random((b, s, d): AttentionSize, device: &Device) -> Result<Self, CalibrateError> {
        let options = (Kind::Float, device.torch());
        Ok(AttentionInputs {
            q: Tensor::f_randn([b, s, d], options)?,
            k: Tensor::f_randn([b, s, d], options)?,
            v: Tensor::f_randn([b, s, d], options)?,
            scale: 1.0 / (d.max(1) as f64).sqrt(),
            nothing: Tensor::f_zeros([1, 1, 1], options)?,
        })
    }

    /// `Kᵀ` as a view: the GEMM reads K transposed.
    fn kt(&self) -> Result<Tensor, tch::TchError> {
        self.k.f_transpose(-2, -1)
    }

    /// Q·Kᵀ, then the scale: two B×S×S tensors.
    fn unfused_scores(&self) -> Result<Tensor, tch::TchError> {
        self.q.f_bmm(&self.kt()?)?.f_mul_scalar(self.scale)
    }

    /// Q·Kᵀ·(1/√D) in one GEMM: α scales the product in the GEMM, β = 0 ignores the addend.
    fn fused_scores(&self) -> Result<Tensor, tch::TchError> {
        self.nothing
            .f_baddbmm(&self.q, &self.kt()?, 0.0, self.scale)
    }

    pub fn unfused(&self, pattern: AttentionPattern) -> Result<Tensor, tch::TchError> {
        let scores = self.unfused_scores()?;
        match pattern {
            AttentionPattern::QkScores => Ok(scores),
            AttentionPattern::QkSoftmax => scores.f_softmax(-1, None),
            AttentionPattern::FullSdpa => scores.f_softmax(-1, None)?.f_bmm(&self.v),
        }
    }

    pub fn fused(&self, pattern: AttentionPattern) -> Result<Tensor, tch::TchError> {
        match pattern {
            AttentionPattern::QkScores => self.fused_scores(),
            AttentionPattern::QkSoftmax => self.fused_scores()?.f_softmax(-1, None),
            // No mask, no dropout, not causal, the default scale 1/√D.
            AttentionPattern::FullSdpa => Tensor::f_scaled_dot_product_attention(
                &self.q,
                &self.k,
                &self.v,
                None::<Tensor>,
                0.0,
                false,
                None,
                false,
            ),
        }
    }
}

/// One pattern at one size.
pub fn measure(
    device: &Device,
    pattern: AttentionPattern,
    size: AttentionSize,
    trials: Trials,
) -> Result<FusionProfile, CalibrateError> {
    let inputs = AttentionInputs::random(size, device)?;
    let (unfused_latency, fused_latency) = time_both(
        device,
        trials,
        || inputs.unfused(pattern).map(drop),
        || inputs.fused(pattern).map(drop),
    )?;
    let (b, s, d) = size;
    let output = match pattern {
        AttentionPattern::FullSdpa => [b, s, d],
        _ => [b, s, s],
    };
    Measured {
        pattern: pattern.pattern(),
        input_shape: vec![b as u64, s as u64, d as u64],
        extra_params: BTreeMap::from([("output_shape".to_owned(), serde_json::json!(output))]),
        counts: counts(pattern, size),
        trials,
    }
    .profile(unfused_latency, fused_latency)
}

#[cfg(test)]
mod tests {
    use super::super::pattern::Metrics;
    use super::*;

    /// The seed's i7-12700K profile at B=4, S=256, D=64.
    #[test]
    fn counts_reproduce_the_seed_profile() {
        let size = (4, 256, 64);
        // (pattern, fused bytes, unfused bytes, flops, unfused ms, unfused GFLOPS, fused ms,
        //  fused GFLOPS, memory reduction)
        let seed = [
            (
                AttentionPattern::QkScores,
                1_572_864,
                3_670_016,
                33_816_576,
                0.11072359993704595,
                305.41434725051454,
                0.10349990019070295,
                326.73051797819636,
                0.5714285714285714,
            ),
            (
                AttentionPattern::QkSoftmax,
                1_572_864,
                4_718_592,
                35_127_296,
                0.16889979985232156,
                207.97713218555464,
                0.1607942666547994,
                218.4611225934623,
                0.6666666666666667,
            ),
            (
                AttentionPattern::FullSdpa,
                1_048_576,
                4_194_304,
                68_681_728,
                0.2530019667271214,
                271.46717034843283,
                0.35403336660237983,
                193.99789533718575,
                0.75,
            ),
        ];
        for (pattern, fused_bytes, unfused_bytes, flops, u_ms, u_gf, f_ms, f_gf, reduction) in seed
        {
            let c = counts(pattern, size);
            assert_eq!(c.fused_bytes, fused_bytes, "{pattern:?}");
            assert_eq!(c.unfused_bytes, unfused_bytes, "{pattern:?}");
            assert_eq!(c.flops, flops, "{pattern:?}");
            Metrics::new(c, u_ms, f_ms).assert_seed(&format!("{pattern:?}"), u_gf, f_gf, reduction);
        }
    }

    #[test]
    fn fused_and_unfused_agree() {
        tch::manual_seed(4);
        let inputs = AttentionInputs::random((2, 24, 8), Device::host()).unwrap();
        for pattern in PATTERNS {
            let u = inputs.unfused(pattern).unwrap();
            let f = inputs.fused(pattern).unwrap();
            assert_eq!(u.size(), f.size(), "{pattern:?}");
            assert!(u.allclose(&f, 1e-5, 1e-5, false), "{pattern:?}");
        }
        // The scale was applied (not the raw product), and softmax rows sum to one.
        let raw = inputs.q.bmm(&inputs.k.transpose(-2, -1));
        let scores = inputs.fused(AttentionPattern::QkScores).unwrap();
        assert!(scores.allclose(&(raw / 8f64.sqrt()), 1e-5, 1e-5, false));
        let rows = inputs
            .fused(AttentionPattern::QkSoftmax)
            .unwrap()
            .sum_dim_intlist(-1, false, Kind::Float);
        assert!(rows.allclose(&rows.ones_like(), 1e-5, 1e-5, false));
    }

    #[test]
    fn a_quick_measurement_is_a_sane_profile() {
        let trials = Trials {
            warmup: 1,
            trials: 4,
        };
        let p = measure(
            Device::host(),
            AttentionPattern::FullSdpa,
            (1, 32, 16),
            trials,
        )
        .unwrap();
        assert_eq!(p.fusion_pattern, "FullAttention_SDPA");
        assert_eq!(p.operators, ["FullAttention", "SDPA"]);
        assert!(p.unfused_latency_ms > 0.0 && p.fused_latency_ms > 0.0);
        assert_eq!(
            p.verdict,
            crate::suites::calibrate::profile::verdict(p.speedup_factor)
        );
        assert_eq!(
            p.extra_params["output_shape"],
            serde_json::json!([1, 32, 16])
        );
    }
}
