//! One Linear layer (no bias) under a recipe, as libtorch ops through tch: the weight is
//! quantized once when the layer is made, and each forward runs the recipe's kernel (torch's
//! int8/int4 packed GEMMs, `_int_mm`, `_scaled_mm`). Each layer also computes its own
//! dequantize-then-matmul reference in float64, which the tests and the suite's check hold
//! the kernels to.

use tch::{Kind, Tensor};

use super::error::QuantError;
use super::recipe::Recipe;

/// Largest finite float8 e4m3fn value.
const FLOAT8_E4M3_MAX: f64 = 448.0;
/// Up to this many rows the CPU int8wo path is torch's packed int8 kernel
/// (`_weight_int8pack_mm`, made for decode-sized inputs); above it, the weight cast to the
/// activations' dtype and one GEMM, then the scale (what torchao does at every size). On the
/// 2-core development machine the packed kernel is ~3x faster than cast+GEMM at m = 16 and
/// ~3.5x slower at m = 256 (bfloat16, k = 1024..4096, n = 1024).
pub const INT8_PACKED_MAX_ROWS: i64 = 64;
/// Smallest scale: an all-zero row or tensor quantizes to zeros, not NaN.
const MIN_SCALE: f64 = 1e-12;

/// The quantized weight and its scales, by recipe.
#[derive(Debug)]
enum Weight {
    /// The high-precision weight (n, k).
    Dense(Tensor),
    /// Symmetric int8 (n, k) and one float32 scale per output channel (n, 1); `scale_hp` is
    /// the same scale in the activations' dtype, shaped (n) as the packed kernel takes it.
    Int8 {
        q: Tensor,
        scale: Tensor,
        scale_hp: Tensor,
    },
    /// Asymmetric uint4 in groups of `group_size` along k: codes (n, k) in 0..=15, float32
    /// scale and zero (n, k/g) with w = (q - 8) * scale + zero; `packed` and
    /// `scales_and_zeros` (k/g, n, 2) are what torch's tinygemm kernel takes.
    Int4 {
        q: Tensor,
        scale: Tensor,
        zero: Tensor,
        group_size: i64,
        packed: Tensor,
        scales_and_zeros: Tensor,
    },
    /// float8 e4m3 (n, k) with one float32 scale per output channel (n, 1).
    Float8Row { q: Tensor, scale: Tensor },
    /// float8 e4m3 (n, k) with one float32 scale for the tensor (0-dim).
    Float8Tensor { q: Tensor, scale: Tensor },
}

/// A Linear(k, n, bias=False) under one recipe.
#[derive(Debug)]
pub struct QuantizedLinear {
    recipe: Recipe,
    weight: Weight,
    in_features: i64,
    dtype: Kind,
    /// Whether the weight is on a GPU (the kernels differ).
    cuda: bool,
}

fn unsupported(message: String) -> QuantError {
    QuantError::Unsupported(message)
}

/// Symmetric per-row int8: (q, scale (rows, 1) float32).
fn quantize_int8_rows(x: &Tensor) -> Result<(Tensor, Tensor), tch::TchError> {
    let x32 = x.f_to_kind(Kind::Float)?;
    let scale = x32
        .f_abs()?
        .f_amax([-1], true)?
        .f_clamp_min(MIN_SCALE)?
        .f_div_scalar(127.0)?;
    let q = x32
        .f_div(&scale)?
        .f_round()?
        .f_clamp(-128.0, 127.0)?
        .f_to_kind(Kind::Int8)?;
    Ok((q, scale))
}

/// float8 e4m3 with a scale per row (`per_row`) or one for the tensor: (q, scale float32).
fn quantize_float8(x: &Tensor, per_row: bool) -> Result<(Tensor, Tensor), tch::TchError> {
    let x32 = x.f_to_kind(Kind::Float)?;
    let amax = if per_row {
        x32.f_abs()?.f_amax([-1], true)?
    } else {
        x32.f_abs()?.f_max()?
    };
    let scale = amax.f_clamp_min(MIN_SCALE)?.f_div_scalar(FLOAT8_E4M3_MAX)?;
    let q = x32
        .f_div(&scale)?
        .f_clamp(-FLOAT8_E4M3_MAX, FLOAT8_E4M3_MAX)?
        .f_to_kind(Kind::Float8e4m3fn)?;
    Ok((q, scale))
}

/// The dynamic activation quantization of the `dq` recipes, as the kernels and the reference
/// both see it: (codes, float32 scale).
pub fn quantize_activation(recipe: Recipe, x: &Tensor) -> Result<(Tensor, Tensor), QuantError> {
    Ok(match recipe {
        Recipe::Int8Dynamic => quantize_int8_rows(x)?,
        Recipe::Float8DynamicTensor => quantize_float8(x, false)?,
        Recipe::Float8DynamicRow => quantize_float8(x, true)?,
        other => {
            return Err(unsupported(format!(
                "{other} does not quantize its activations"
            )))
        }
    })
}

impl QuantizedLinear {
    /// Quantizes `weight` (n, k), in the model's high-precision dtype on its device.
    pub fn new(recipe: Recipe, weight: &Tensor) -> Result<QuantizedLinear, QuantError> {
        let size = weight.size();
        let (n, k) = match size.as_slice() {
            [n, k] => (*n, *k),
            other => {
                return Err(unsupported(format!(
                    "a Linear weight is 2-D, not {other:?}"
                )))
            }
        };
        let dtype = weight.kind();
        let cuda = weight.device().is_cuda();
        let weight = match recipe {
            Recipe::Baseline => Weight::Dense(weight.shallow_clone()),
            Recipe::Int8WeightOnly | Recipe::Int8Dynamic => {
                let (q, scale) = quantize_int8_rows(weight)?;
                let scale_hp = scale.f_reshape([n])?.f_to_kind(dtype)?;
                Weight::Int8 { q, scale, scale_hp }
            }
            Recipe::Int4WeightOnly { group_size } => {
                if k % group_size != 0 {
                    return Err(unsupported(format!(
                        "int4wo-{group_size}: k = {k} is not a multiple of the group size"
                    )));
                }
                let groups = k / group_size;
                let w = weight
                    .f_to_kind(Kind::Float)?
                    .f_reshape([n, groups, group_size])?;
                let min = w.f_amin([-1], true)?;
                let max = w.f_amax([-1], true)?;
                let scale = max.f_sub(&min)?.f_div_scalar(15.0)?.f_clamp_min(1e-6)?;
                let zero = min.f_add(&scale.f_mul_scalar(8.0)?)?;
                let q = w
                    .f_sub(&min)?
                    .f_div(&scale)?
                    .f_round()?
                    .f_clamp(0.0, 15.0)?
                    .f_reshape([n, k])?
                    .f_to_kind(Kind::Int)?;
                let (scale, zero) = (scale.f_reshape([n, groups])?, zero.f_reshape([n, groups])?);
                let packed = if cuda {
                    // The CUDA kernel takes two codes per byte, the even column high.
                    let even = q.f_slice(1, 0, k, 2)?;
                    let odd = q.f_slice(1, 1, k, 2)?;
                    even.f_mul_scalar(16)?
                        .f_add(&odd)?
                        .f_to_kind(Kind::Uint8)?
                        .f_internal_convert_weight_to_int4pack(8)?
                } else {
                    q.f_internal_convert_weight_to_int4pack_for_cpu(1)?
                };
                let scales_and_zeros = Tensor::f_stack(&[&scale, &zero], -1)?
                    .f_transpose(0, 1)?
                    .f_contiguous()?
                    .f_to_kind(dtype)?;
                Weight::Int4 {
                    q,
                    scale,
                    zero,
                    group_size,
                    packed,
                    scales_and_zeros,
                }
            }
            Recipe::Float8WeightOnly | Recipe::Float8DynamicRow => {
                let (q, scale) = quantize_float8(weight, true)?;
                Weight::Float8Row { q, scale }
            }
            Recipe::Float8DynamicTensor => {
                let (q, scale) = quantize_float8(weight, false)?;
                Weight::Float8Tensor { q, scale }
            }
        };
        Ok(QuantizedLinear {
            recipe,
            weight,
            in_features: k,
            dtype,
            cuda,
        })
    }

    pub fn recipe(&self) -> Recipe {
        self.recipe
    }

    pub fn in_features(&self) -> i64 {
        self.in_features
    }

    /// `x` (..., k) to (..., n) in the model's dtype.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor, tch::TchError> {
        let size = x.size();
        let rows: i64 = size[..size.len().saturating_sub(1)].iter().product();
        let x2 = x.f_reshape([rows, self.in_features])?;
        let y = self.forward_2d(&x2)?;
        let mut out_size = size.clone();
        if let Some(last) = out_size.last_mut() {
            *last = y.size()[1];
        }
        y.f_reshape(out_size)
    }

    fn forward_2d(&self, x: &Tensor) -> Result<Tensor, tch::TchError> {
        let cuda = self.cuda;
        match (&self.weight, self.recipe) {
            (Weight::Dense(w), _) => x.f_linear::<Tensor>(w, None),
            (Weight::Int8 { q, scale_hp, .. }, Recipe::Int8WeightOnly) => {
                if cuda || x.size()[0] > INT8_PACKED_MAX_ROWS {
                    // torchao's int8wo: matmul with the weight cast up, then the scale.
                    x.f_matmul(&q.f_to_kind(self.dtype)?.f_tr()?)?
                        .f_mul(scale_hp)
                } else {
                    x.f_internal_weight_int8pack_mm(q, scale_hp)
                }
            }
            (Weight::Int8 { q, scale, .. }, _) => {
                let (xq, x_scale) = quantize_int8_rows(x)?;
                xq.f_internal_int_mm(&q.f_tr()?)?
                    .f_to_kind(Kind::Float)?
                    .f_mul(&x_scale)?
                    .f_mul(&scale.f_tr()?)?
                    .f_to_kind(self.dtype)
            }
            (
                Weight::Int4 {
                    group_size,
                    packed,
                    scales_and_zeros,
                    ..
                },
                _,
            ) => {
                if cuda {
                    x.f_internal_weight_int4pack_mm(packed, *group_size, scales_and_zeros)
                } else {
                    x.f_internal_weight_int4pack_mm_for_cpu(packed, *group_size, scales_and_zeros)
                }
            }
            (Weight::Float8Row { q, scale }, Recipe::Float8WeightOnly) => {
                // Dequantized in float32, then cast (as torchao does): elementwise bfloat16
                // arithmetic on the CPU is slower than float32's.
                let w = q
                    .f_to_kind(Kind::Float)?
                    .f_mul(scale)?
                    .f_to_kind(self.dtype)?;
                x.f_linear::<Tensor>(&w, None)
            }
            (Weight::Float8Row { q, scale }, _) => {
                let (xq, x_scale) = quantize_float8(x, true)?;
                if cuda {
                    xq.f_internal_scaled_mm::<Tensor>(
                        &q.f_tr()?,
                        &x_scale,
                        &scale.f_tr()?,
                        None,
                        None,
                        self.dtype,
                        false,
                    )
                } else {
                    // The CPU _scaled_mm takes one scale per tensor only: the row and column
                    // scales multiply its float32 output instead (the same product).
                    let one = Tensor::f_ones([], (Kind::Float, x.device()))?;
                    xq.f_internal_scaled_mm::<Tensor>(
                        &q.f_tr()?,
                        &one,
                        &one,
                        None,
                        None,
                        Kind::Float,
                        false,
                    )?
                    .f_mul(&x_scale)?
                    .f_mul(&scale.f_tr()?)?
                    .f_to_kind(self.dtype)
                }
            }
            (Weight::Float8Tensor { q, scale }, _) => {
                let (xq, x_scale) = quantize_float8(x, false)?;
                xq.f_internal_scaled_mm::<Tensor>(
                    &q.f_tr()?,
                    &x_scale,
                    scale,
                    None,
                    None,
                    self.dtype,
                    false,
                )
            }
        }
    }

    /// The weight as the recipe stores it, dequantized in float64 (n, k).
    pub fn dequantized_weight(&self) -> Result<Tensor, tch::TchError> {
        let f64_ = |t: &Tensor| t.f_to_kind(Kind::Double);
        match &self.weight {
            Weight::Dense(w) => f64_(w),
            Weight::Int8 { q, scale, .. } => f64_(q)?.f_mul(&f64_(scale)?),
            Weight::Int4 {
                q,
                scale,
                zero,
                group_size,
                ..
            } => {
                let size = q.size();
                let (n, k) = (size[0], size[1]);
                let groups = k / group_size;
                f64_(q)?
                    .f_reshape([n, groups, *group_size])?
                    .f_sub_scalar(8.0)?
                    .f_mul(&f64_(scale)?.f_unsqueeze(-1)?)?
                    .f_add(&f64_(zero)?.f_unsqueeze(-1)?)?
                    .f_reshape([n, k])
            }
            Weight::Float8Row { q, scale } | Weight::Float8Tensor { q, scale } => {
                f64_(q)?.f_mul(&f64_(scale)?)
            }
        }
    }

    /// The float64 dequantize-then-matmul reference of [`QuantizedLinear::forward`] on a 2-D
    /// `x`: the dequantized weight, and for the `dq` recipes the dequantized activations.
    pub fn reference(&self, x: &Tensor) -> Result<Tensor, QuantError> {
        let w = self.dequantized_weight()?;
        let x = match self.recipe {
            Recipe::Int8Dynamic | Recipe::Float8DynamicTensor | Recipe::Float8DynamicRow => {
                let (q, s) = quantize_activation(self.recipe, x)?;
                q.f_to_kind(Kind::Double)?
                    .f_mul(&s.f_to_kind(Kind::Double)?)?
            }
            _ => x.f_to_kind(Kind::Double)?,
        };
        Ok(x.f_matmul(&w.f_tr()?)?)
    }
}
