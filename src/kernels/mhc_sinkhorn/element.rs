//! The element types the fused kernels read and write (float32, bfloat16, float16): the
//! dtypes of the seed's `--dtype` ([`MhcDtype`]) and their Rust types ([`Element`]).

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use tch::Kind;

/// The three dtypes of the seed's `--dtype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MhcDtype {
    Float32,
    Bfloat16,
    Float16,
}

impl MhcDtype {
    pub const ALL: [MhcDtype; 3] = [MhcDtype::Float32, MhcDtype::Bfloat16, MhcDtype::Float16];

    /// The seed's spelling, as in its CSV (`bfloat16`).
    pub fn name(self) -> &'static str {
        match self {
            MhcDtype::Float32 => "float32",
            MhcDtype::Bfloat16 => "bfloat16",
            MhcDtype::Float16 => "float16",
        }
    }

    pub fn kind(self) -> Kind {
        match self {
            MhcDtype::Float32 => Kind::Float,
            MhcDtype::Bfloat16 => Kind::BFloat16,
            MhcDtype::Float16 => Kind::Half,
        }
    }

    pub fn bytes(self) -> usize {
        match self {
            MhcDtype::Float32 => 4,
            _ => 2,
        }
    }

    /// Largest difference allowed between a fused stage and torch's on the same input,
    /// relative to the largest magnitude of torch's result: a few roundings of the dtype
    /// (torch rounds its intermediates to the dtype, the fused kernels keep float32).
    pub fn tolerance(self) -> f64 {
        match self {
            MhcDtype::Float32 => 1e-4,
            MhcDtype::Bfloat16 => 3e-2,
            MhcDtype::Float16 => 5e-3,
        }
    }
}

impl std::str::FromStr for MhcDtype {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "float32" | "fp32" | "f32" => Ok(MhcDtype::Float32),
            "bfloat16" | "bf16" => Ok(MhcDtype::Bfloat16),
            "float16" | "fp16" | "f16" | "half" => Ok(MhcDtype::Float16),
            _ => Err(format!(
                "unknown dtype '{text}' (accepted: float32, bfloat16, float16)"
            )),
        }
    }
}

/// A storage type of the fused kernels: they compute in float32 and convert at the edges.
pub trait Element: Copy + Send + Sync + 'static {
    const KIND: Kind;
    fn to_f32_slice(src: &[Self], dst: &mut [f32]);
    fn from_f32_slice(src: &[f32], dst: &mut [Self]);
}

impl Element for f32 {
    const KIND: Kind = Kind::Float;
    #[inline(always)]
    fn to_f32_slice(src: &[f32], dst: &mut [f32]) {
        dst.copy_from_slice(src);
    }
    #[inline(always)]
    fn from_f32_slice(src: &[f32], dst: &mut [f32]) {
        dst.copy_from_slice(src);
    }
}

impl Element for bf16 {
    const KIND: Kind = Kind::BFloat16;
    #[inline(always)]
    fn to_f32_slice(src: &[bf16], dst: &mut [f32]) {
        // A bfloat16 is the top half of a float32: a shift, which vectorises.
        for (d, s) in dst.iter_mut().zip(src) {
            *d = f32::from_bits((s.to_bits() as u32) << 16);
        }
    }
    #[inline(always)]
    fn from_f32_slice(src: &[f32], dst: &mut [bf16]) {
        dst.convert_from_f32_slice(src);
    }
}

impl Element for f16 {
    const KIND: Kind = Kind::Half;
    #[inline(always)]
    fn to_f32_slice(src: &[f16], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst);
    }
    #[inline(always)]
    fn from_f32_slice(src: &[f32], dst: &mut [f16]) {
        dst.convert_from_f32_slice(src);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_types_round_trip_through_float32() {
        let src = [0.1f32, -2.0, 65504.0, 1e-3];
        let mut h = [f16::ZERO; 4];
        f16::from_f32_slice(&src, &mut h);
        let mut back = [0.0f32; 4];
        f16::to_f32_slice(&h, &mut back);
        for (a, b) in src.iter().zip(back) {
            assert!((a - b).abs() <= a.abs() * 1e-3, "{a} {b}");
        }
    }
}
