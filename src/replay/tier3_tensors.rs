//! The tensors a tier-3 call is given ([`super::tier3_libtorch`]): exactly the recorded sizes
//! and strides (stride-0 broadcasts and transposed layouts included), filled as the argument
//! needs ([`Fill`]): data, in-range indices, offsets, positive counts or recorded value ranges.
//! A tensor of data for a re-run step's op comes from the memory plan's buffers
//! ([`super::sequence_buffers::planned`]).

use replay_core::sequence_plan::Role;
use replay_core::signature::dtype::Dtype;
use tch::{Kind, Tensor};

use super::recorded::RecordedInput;
use crate::device::Device;
use crate::torch::dtype::kind_of;

/// Whether `kind` holds integers (not booleans).
pub fn is_integral(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Int64 | Kind::Int | Kind::Int16 | Kind::Int8 | Kind::Uint8
    )
}

/// The dtype of a call's tensor-list arguments, which the trace records without one: the
/// call's first floating tensor's, else float32 (the one rule tier 3 and the sequence's memory
/// plan share).
pub fn list_kind(inputs: &[RecordedInput]) -> Kind {
    inputs
        .iter()
        .find_map(|i| match i {
            RecordedInput::Tensor { dtype, .. }
                if !dtype.is_integral() && *dtype != Dtype::Bool =>
            {
                Some(kind_of(*dtype))
            }
            _ => None,
        })
        .unwrap_or(Kind::Float)
}

/// Elements the storage behind `sizes`/`strides` must hold.
pub fn storage_len(sizes: &[i64], strides: &[i64]) -> i64 {
    if sizes.contains(&0) {
        return 0;
    }
    1 + sizes
        .iter()
        .zip(strides)
        .map(|(&size, &stride)| (size - 1) * stride)
        .sum::<i64>()
}

/// The strides of a contiguous tensor of `sizes`.
pub fn contiguous_strides(sizes: &[i64]) -> Vec<i64> {
    let mut strides = vec![1; sizes.len()];
    for i in (0..sizes.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * sizes[i + 1].max(1);
    }
    strides
}

/// What fills a tensor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fill {
    /// Normal(0, 1) for floating types, zeros for integers, a random mask for bool.
    Data,
    /// Uniform integers in `[0, high)`.
    Indices(i64),
    /// `embedding_bag` offsets: `0, step, 2 step, ...` within `[0, high]`.
    Offsets(i64),
    /// Uniform integers in `[1, 8]` for integer types (divisors, counts), uniform in
    /// `[0.5, 1.5)` for floating ones (variances), `Data` for bool.
    Positive,
    /// Uniform integers in `[min, max]`: the values an Execution Trace recorded.
    Range(i64, i64),
}

/// A tensor with exactly the recorded sizes and strides (stride-0 broadcasts and transposed
/// layouts included), filled as asked.
pub fn make_tensor(
    kind: Kind,
    sizes: &[i64],
    strides: Option<&[i64]>,
    device: &Device,
    fill: Fill,
) -> Result<Tensor, String> {
    make_tensor_as(kind, sizes, strides, device, fill, None)
}

/// [`make_tensor`]; a tensor of data in `role` comes from the memory plan's buffers when a
/// re-run step's op is being built ([`super::sequence_buffers::planned`]).
pub fn make_tensor_as(
    kind: Kind,
    sizes: &[i64],
    strides: Option<&[i64]>,
    device: &Device,
    fill: Fill,
    role: Option<Role>,
) -> Result<Tensor, String> {
    if sizes.iter().any(|&s| s < 0) {
        return Err(format!("negative size in {sizes:?}"));
    }
    let strides = match strides {
        Some(s) if s.len() == sizes.len() => s.to_vec(),
        _ => contiguous_strides(sizes),
    };
    if strides.iter().any(|&s| s < 0) {
        return Err(format!(
            "negative stride in {strides:?} (sizes {sizes:?}): libtorch makes no such tensor"
        ));
    }
    // The storage the strides reach, in checked arithmetic: a stride far outside any storage
    // (an overflowing extent) is refused here, never wrapped around.
    let extent = sizes
        .iter()
        .zip(&strides)
        .try_fold(1i64, |acc, (&size, &stride)| {
            (size.max(1) - 1)
                .checked_mul(stride)
                .and_then(|reach| acc.checked_add(reach))
        });
    if extent.is_none() && !sizes.contains(&0) {
        return Err(format!(
            "strides {strides:?} with sizes {sizes:?} point outside any storage (the extent overflows 64 bits)"
        ));
    }
    let len = storage_len(sizes, &strides);
    if !device.is_cuda() {
        // Checked before allocating: the storage and the buffer it is filled from.
        let per_element = (kind.elt_size_in_bytes() + 8) as u64;
        let bytes = u64::try_from(len)
            .ok()
            .and_then(|n| n.checked_mul(per_element));
        super::memory_limit::check(bytes, &format!("a tensor of sizes {sizes:?}"))?;
    }
    let err = |e: tch::TchError| e.to_string();
    if let (Fill::Data, Some(role)) = (fill, role) {
        if let Some(base) = super::sequence_buffers::planned(kind, len, role) {
            return base
                .map_err(err)?
                .f_as_strided(sizes, &strides, None::<i64>)
                .map_err(err);
        }
    }
    let base = match fill {
        Fill::Indices(high) => {
            Tensor::f_randint_low(0, high.max(1), [len], (Kind::Int64, device.torch()))
                .map_err(err)?
        }
        Fill::Offsets(high) => {
            let step = if len > 0 { (high / len).max(0) } else { 0 };
            Tensor::f_arange(len, (Kind::Int64, device.torch()))
                .map_err(err)?
                .f_mul_scalar(step)
                .map_err(err)?
        }
        Fill::Range(min, max) => Tensor::f_randint_low(
            min,
            max.saturating_add(1),
            [len],
            (Kind::Int64, device.torch()),
        )
        .map_err(err)?,
        Fill::Positive if is_integral(kind) => {
            Tensor::f_randint_low(1, 9, [len], (Kind::Int64, device.torch())).map_err(err)?
        }
        Fill::Data | Fill::Positive if kind == Kind::Bool => {
            Tensor::f_rand([len], (Kind::Float, device.torch()))
                .map_err(err)?
                .f_lt(0.5)
                .map_err(err)?
        }
        Fill::Data if is_integral(kind) => {
            Tensor::f_zeros([len], (Kind::Int64, device.torch())).map_err(err)?
        }
        Fill::Positive => Tensor::f_rand([len], (Kind::Float, device.torch()))
            .map_err(err)?
            .f_add_scalar(0.5)
            .map_err(err)?,
        Fill::Data => Tensor::f_randn([len], (Kind::Float, device.torch())).map_err(err)?,
    };
    base.f_to_kind(kind)
        .map_err(err)?
        .f_as_strided(sizes, &strides, None::<i64>)
        .map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_for_broadcast_and_transposed_strides() {
        assert_eq!(storage_len(&[4, 1, 768], &[0, 768, 1]), 768);
        assert_eq!(storage_len(&[512, 512], &[1, 512]), 512 * 512);
        assert_eq!(storage_len(&[0, 5], &[5, 1]), 0);
        assert_eq!(contiguous_strides(&[2, 3, 4]), vec![12, 4, 1]);
    }

    #[test]
    fn tensors_keep_the_recorded_layout() {
        let t = make_tensor(
            Kind::BFloat16,
            &[141, 512],
            Some(&[1, 141]),
            Device::host(),
            Fill::Data,
        )
        .unwrap();
        assert_eq!(t.size(), [141, 512]);
        assert_eq!(t.stride(), [1, 141]);
        assert_eq!(t.kind(), Kind::BFloat16);
        let mask = make_tensor(Kind::Bool, &[1000], None, Device::host(), Fill::Data).unwrap();
        let ones = mask.sum(Kind::Int64).int64_value(&[]);
        assert!(
            ones > 300 && ones < 700,
            "a real mask, not all-true or all-false: {ones}"
        );
    }
}
