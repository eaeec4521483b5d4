//! The core's [`Dtype`] as libtorch's `Kind`, and back: the one table between the recorded
//! element types and the tensors the replay builds.

use replay_core::signature::dtype::Dtype;
use tch::Kind;

/// libtorch's kind of a dtype.
pub fn kind_of(dtype: Dtype) -> Kind {
    match dtype {
        Dtype::Float32 => Kind::Float,
        Dtype::Float64 => Kind::Double,
        Dtype::Float16 => Kind::Half,
        Dtype::BFloat16 => Kind::BFloat16,
        Dtype::Int64 => Kind::Int64,
        Dtype::Int32 => Kind::Int,
        Dtype::Int16 => Kind::Int16,
        Dtype::Int8 => Kind::Int8,
        Dtype::UInt8 => Kind::Uint8,
        Dtype::Bool => Kind::Bool,
        Dtype::Complex32 => Kind::ComplexHalf,
        Dtype::Complex64 => Kind::ComplexFloat,
        Dtype::Complex128 => Kind::ComplexDouble,
        Dtype::Float8E4m3fn => Kind::Float8e4m3fn,
        Dtype::Float8E5m2 => Kind::Float8e5m2,
        Dtype::Float8E4m3fnuz => Kind::Float8e4m3fnuz,
        Dtype::Float8E5m2fnuz => Kind::Float8e5m2fnuz,
    }
}

/// The dtype of a PyTorch dtype name (`bfloat16`) as libtorch's kind.
pub fn kind_from_name(name: &str) -> Option<Kind> {
    Dtype::from_name(name).map(kind_of)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_has_a_distinct_kind_of_its_size() {
        let mut seen = std::collections::HashSet::new();
        for d in Dtype::ALL {
            let kind = kind_of(d);
            assert!(seen.insert(format!("{kind:?}")), "{d:?} shares {kind:?}");
            let t = tch::Tensor::zeros([1], (Kind::Float, tch::Device::Cpu));
            if !matches!(d, Dtype::Complex32) && !d.name().starts_with("float8") {
                let converted = t.to_kind(kind);
                assert_eq!(converted.kind(), kind);
            }
        }
    }
}
