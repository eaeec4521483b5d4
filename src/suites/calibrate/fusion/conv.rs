//! Convolution fusion: Conv2d_ReLU, Conv2d_BN, Conv2d_BN_ReLU (the seed's
//! `fused_conv_bench.py`), stride 1 and the padding that keeps the image size.
//!
//! Unfused: the convolution, then inference BatchNorm (running statistics), then ReLU, each
//! writing a new tensor. Fused: BatchNorm folded into the convolution's weights and bias (the
//! deployment rewrite), and ReLU in place on the convolution's output. libtorch's aten API has
//! no convolution with a ReLU epilogue on the CPU, so Conv2d_ReLU's fused side saves only the
//! second output tensor; the seed's fused side there was the unfused code again.

use std::collections::BTreeMap;

use tch::{Kind, Tensor};

use super::super::profile::FusionProfile;
use super::super::timing::Trials;
use super::super::CalibrateError;
use super::pattern::{product, seed_sizes, seed_trials, time_both, Counts, Measured};
use crate::device::Device;

/// What follows the convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvPattern {
    Relu,
    Bn,
    BnRelu,
}

/// The three patterns, in the seed's order.
pub const PATTERNS: [ConvPattern; 3] = [ConvPattern::Relu, ConvPattern::Bn, ConvPattern::BnRelu];

impl ConvPattern {
    /// The seed's pattern name.
    pub fn pattern(self) -> &'static str {
        match self {
            ConvPattern::Relu => "Conv2d_ReLU",
            ConvPattern::Bn => "Conv2d_BN",
            ConvPattern::BnRelu => "Conv2d_BN_ReLU",
        }
    }

    fn has_bn(self) -> bool {
        matches!(self, ConvPattern::Bn | ConvPattern::BnRelu)
    }

    fn has_relu(self) -> bool {
        matches!(self, ConvPattern::Relu | ConvPattern::BnRelu)
    }
}

/// One convolution: batch, input and output channels, image height = width, kernel size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvSize {
    pub batch: i64,
    pub c_in: i64,
    pub c_out: i64,
    pub hw: i64,
    pub kernel: i64,
}

impl ConvSize {
    pub const fn new(batch: i64, c_in: i64, c_out: i64, hw: i64, kernel: i64) -> Self {
        ConvSize {
            batch,
            c_in,
            c_out,
            hw,
            kernel,
        }
    }

    /// The seed's padding (1 for its 3×3 kernels): the output keeps the input's size for any
    /// odd kernel.
    pub fn padding(&self) -> i64 {
        self.kernel / 2
    }

    /// (HW + 2·padding − k) / stride + 1, stride 1.
    pub fn out_hw(&self) -> i64 {
        self.hw + 2 * self.padding() - self.kernel + 1
    }

    fn input_shape(&self) -> [i64; 4] {
        [self.batch, self.c_in, self.hw, self.hw]
    }

    fn weight_shape(&self) -> [i64; 4] {
        [self.c_out, self.c_in, self.kernel, self.kernel]
    }

    fn output_shape(&self) -> [i64; 4] {
        [self.batch, self.c_out, self.out_hw(), self.out_hw()]
    }
}

/// The seed's sizes (ResNet layers): two in quick mode, a third in full mode.
pub fn sizes(quick: bool) -> Vec<ConvSize> {
    seed_sizes(
        quick,
        [
            ConvSize::new(1, 64, 64, 56, 3),
            ConvSize::new(4, 128, 128, 28, 3),
        ],
        ConvSize::new(8, 256, 256, 14, 3),
    )
}

/// The seed's trials: 30 quick, 50 full (`calibrate_conv_fusion_patterns`; its calibrator
/// wrote `num_trials: 50` into the quick profile regardless), after 10 warm-ups.
pub fn trials(quick: bool) -> Trials {
    seed_trials(quick, 30, 50)
}

/// The seed's counts (fp32). FLOPs: the convolution's 2·k²·Cin·Cout·HWout²·B, plus 2 per
/// output element for BatchNorm (ReLU counts as free). Bytes: fused reads the input, the
/// weights and a bias and writes the output once; unfused writes the output, then reads and
/// writes it again for each op after the convolution. The seed's unfused BatchNorm patterns
/// have a convolution without bias and count no BatchNorm parameters.
pub fn counts(pattern: ConvPattern, size: ConvSize) -> Counts {
    let input = product(&size.input_shape());
    let weight = product(&size.weight_shape());
    let output = product(&size.output_shape());
    let bias = size.c_out.max(0) as u64;
    // A multiply and an add per weight of an output channel, per output element.
    let per_output = product(&[size.c_in, size.kernel, size.kernel]);
    let conv_flops = 2 * per_output * output;
    let after_conv = u64::from(pattern.has_bn()) + u64::from(pattern.has_relu());
    let unfused_bias = if pattern.has_bn() { 0 } else { bias };
    Counts {
        flops: conv_flops + if pattern.has_bn() { 2 * output } else { 0 },
        unfused_bytes: 4 * (input + weight + unfused_bias + output + after_conv * 2 * output),
        fused_bytes: 4 * (input + weight + bias + output),
    }
}

/// BatchNorm's parameters and running statistics, and its epsilon.
pub struct BatchNorm {
    pub gamma: Tensor,
    pub beta: Tensor,
    pub mean: Tensor,
    pub var: Tensor,
    pub eps: f64,
}

/// BatchNorm2d's default epsilon.
pub const BN_EPS: f64 = 1e-5;

impl BatchNorm {
    /// Statistics that make folding matter (the seed's fresh BatchNorm2d has γ = 1, β = 0,
    /// mean 0, var 1, which folding leaves almost unchanged): γ and var in [0.5, 1.5), β and
    /// the mean standard normal.
    pub fn random(channels: i64, device: &Device) -> Result<Self, CalibrateError> {
        let options = (Kind::Float, device.torch());
        let around_one = || Tensor::f_rand([channels], options)?.f_add_scalar(0.5);
        Ok(BatchNorm {
            gamma: around_one()?,
            beta: Tensor::f_randn([channels], options)?,
            mean: Tensor::f_randn([channels], options)?,
            var: around_one()?,
            eps: BN_EPS,
        })
    }

    /// Inference BatchNorm (running statistics, no update).
    pub fn apply(&self, x: &Tensor) -> Result<Tensor, tch::TchError> {
        x.f_batch_norm(
            Some(&self.gamma),
            Some(&self.beta),
            Some(&self.mean),
            Some(&self.var),
            false,
            0.0,
            self.eps,
            true,
        )
    }

    /// The seed's folding: scale = γ / √(var + eps); W' = W · scale (per output channel),
    /// b' = β − mean · scale, for a convolution without bias.
    pub fn fold(&self, weight: &Tensor) -> Result<(Tensor, Tensor), tch::TchError> {
        let scale = self
            .gamma
            .f_div(&self.var.f_add_scalar(self.eps)?.f_sqrt()?)?;
        let folded_w = weight.f_mul(&scale.f_reshape([-1, 1, 1, 1])?)?;
        let folded_b = self.beta.f_sub(&self.mean.f_mul(&scale)?)?;
        Ok((folded_w, folded_b))
    }
}

/// The operands of one pattern at one size.
pub struct ConvInputs {
    pub size: ConvSize,
    pub pattern: ConvPattern,
    pub x: Tensor,
    /// The unfused convolution's weights and bias (no bias before BatchNorm).
    pub weight: Tensor,
    pub bias: Option<Tensor>,
    pub bn: Option<BatchNorm>,
    /// The fused convolution's weights and bias (BatchNorm folded in where there is one).
    pub fused_weight: Tensor,
    pub fused_bias: Tensor,
}

impl ConvInputs {
    /// A standard normal input; weights scaled by 1/√fan-in so activations stay near unit
    /// size (as PyTorch's own initialisation does), a bias likewise.
    pub fn random(
        pattern: ConvPattern,
        size: ConvSize,
        device: &Device,
    ) -> Result<Self, CalibrateError> {
        let options = (Kind::Float, device.torch());
        let fan_in = (size.c_in * size.kernel * size.kernel).max(1) as f64;
        let x = Tensor::f_randn(size.input_shape(), options)?;
        let weight =
            Tensor::f_randn(size.weight_shape(), options)?.f_mul_scalar(1.0 / fan_in.sqrt())?;
        let (bias, bn, fused_weight, fused_bias) = if pattern.has_bn() {
            let bn = BatchNorm::random(size.c_out, device)?;
            let (w, b) = bn.fold(&weight)?;
            (None, Some(bn), w, b)
        } else {
            let b = Tensor::f_randn([size.c_out], options)?.f_mul_scalar(1.0 / fan_in.sqrt())?;
            (Some(b.shallow_clone()), None, weight.shallow_clone(), b)
        };
        Ok(ConvInputs {
            size,
            pattern,
            x,
            weight,
            bias,
            bn,
            fused_weight,
            fused_bias,
        })
    }

    fn conv(&self, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor, tch::TchError> {
        let p = self.size.padding();
        self.x.f_conv2d(weight, bias, [1, 1], [p, p], [1, 1], 1)
    }

    /// The convolution, BatchNorm, ReLU: each a new tensor.
    pub fn unfused(&self) -> Result<Tensor, tch::TchError> {
        let mut y = self.conv(&self.weight, self.bias.as_ref())?;
        if let Some(bn) = &self.bn {
            y = bn.apply(&y)?;
        }
        if self.pattern.has_relu() {
            y = y.f_relu()?;
        }
        Ok(y)
    }

    /// The folded convolution, ReLU in place on its output.
    pub fn fused(&self) -> Result<Tensor, tch::TchError> {
        let mut y = self.conv(&self.fused_weight, Some(&self.fused_bias))?;
        if self.pattern.has_relu() {
            // Another handle on `y` itself.
            return y.f_relu_();
        }
        Ok(y)
    }
}

/// One pattern at one size.
pub fn measure(
    device: &Device,
    pattern: ConvPattern,
    size: ConvSize,
    trials: Trials,
) -> Result<FusionProfile, CalibrateError> {
    let inputs = ConvInputs::random(pattern, size, device)?;
    let (unfused_latency, fused_latency) = time_both(
        device,
        trials,
        || inputs.unfused().map(drop),
        || inputs.fused().map(drop),
    )?;
    let as_u64 = |dims: [i64; 4]| dims.map(|d| d as u64).to_vec();
    Measured {
        pattern: pattern.pattern(),
        // The seed's input shape: (B, Cin, HW, HW).
        input_shape: as_u64(size.input_shape()),
        extra_params: BTreeMap::from([
            (
                "output_shape".to_owned(),
                serde_json::json!(size.output_shape()),
            ),
            ("kernel_size".to_owned(), serde_json::json!(size.kernel)),
            ("padding".to_owned(), serde_json::json!(size.padding())),
        ]),
        counts: counts(pattern, size),
        trials,
    }
    .profile(unfused_latency, fused_latency)
}

#[cfg(test)]
mod tests {
    use super::super::pattern::Metrics;
    use super::*;

    /// The seed's i7-12700K profile at B=4, 128→128 channels, 28×28, k=3.
    #[test]
    fn counts_reproduce_the_seed_profile() {
        let size = ConvSize::new(4, 128, 128, 28, 3);
        // (pattern, unfused bytes, flops, unfused ms, unfused GFLOPS, fused ms, fused GFLOPS,
        //  memory reduction)
        let seed = [
            (
                ConvPattern::Relu,
                7_012_864,
                924_844_032,
                1.701434399971428,
                543.5672583177646,
                1.7002981000890334,
                543.9305213312724,
                0.4579104913484705,
            ),
            (
                ConvPattern::Bn,
                7_012_352,
                925_646_848,
                1.7191217666550074,
                538.441700846522,
                1.676320233430791,
                552.1897484381922,
                0.45787091121495327,
            ),
            (
                ConvPattern::BnRelu,
                10_223_616,
                925_646_848,
                1.7504499667362932,
                528.8050876003413,
                1.7035554000661555,
                543.3617526991219,
                0.6281550480769231,
            ),
        ];
        for (pattern, unfused_bytes, flops, u_ms, u_gf, f_ms, f_gf, reduction) in seed {
            let c = counts(pattern, size);
            assert_eq!(c.fused_bytes, 3_801_600, "{pattern:?}");
            assert_eq!(c.unfused_bytes, unfused_bytes, "{pattern:?}");
            assert_eq!(c.flops, flops, "{pattern:?}");
            Metrics::new(c, u_ms, f_ms).assert_seed(&format!("{pattern:?}"), u_gf, f_gf, reduction);
        }
    }

    #[test]
    fn padding_keeps_the_image_size() {
        for size in sizes(false) {
            assert_eq!(size.out_hw(), size.hw);
        }
        assert_eq!(ConvSize::new(1, 1, 1, 10, 5).out_hw(), 10);
    }

    /// Folding is exact algebra: the folded convolution equals the convolution followed by
    /// inference BatchNorm, on statistics far from the identity.
    #[test]
    fn folded_conv_equals_conv_then_batchnorm() {
        tch::manual_seed(2);
        let size = ConvSize::new(2, 8, 16, 12, 3);
        let inputs = ConvInputs::random(ConvPattern::Bn, size, Device::host()).unwrap();
        let bn = inputs.bn.as_ref().unwrap();
        // Non-trivial statistics: BatchNorm moves the convolution's output a lot...
        let conv = inputs.conv(&inputs.weight, None).unwrap();
        let reference = bn.apply(&conv).unwrap();
        let moved = (&reference - &conv).abs().max().double_value(&[]);
        assert!(moved > 0.5, "BatchNorm barely changed the output ({moved})");
        // ...and the folded convolution matches it.
        let folded = inputs.fused().unwrap();
        assert_eq!(folded.size(), [2, 16, 12, 12]);
        let diff = (&folded - &reference).abs().max().double_value(&[]);
        assert!(diff < 1e-4, "folded conv differs from conv + BN by {diff}");
        assert!(inputs
            .unfused()
            .unwrap()
            .allclose(&folded, 1e-4, 1e-4, false));
    }

    #[test]
    fn fused_and_unfused_agree() {
        tch::manual_seed(3);
        let size = ConvSize::new(1, 4, 8, 10, 3);
        for pattern in PATTERNS {
            let inputs = ConvInputs::random(pattern, size, Device::host()).unwrap();
            let u = inputs.unfused().unwrap();
            let f = inputs.fused().unwrap();
            assert_eq!(f.size(), [1, 8, 10, 10], "{pattern:?}");
            assert!(u.allclose(&f, 1e-4, 1e-4, false), "{pattern:?}");
        }
    }
}
