//! The lane-wise reductions of the CPU kernel's ⊕: the terms of one ⊕ sit in a buffer padded
//! to a multiple of [`LANES`] and are reduced in `LANES` independent accumulators — a loop
//! shape the compiler turns into SIMD on stable Rust without intrinsics (a single running
//! float accumulator would not vectorise: float addition is not reassociated).

use crate::cpu::exp_approx::exp_approx;

/// Width of the lane-wise reductions (two AVX or four SSE registers of float32).
pub const LANES: usize = 8;

/// Padding for the gather buffer: finite so that `0 · (h − x)` stays 0 in Entropy, and far
/// below −87 so that its exp is exactly 0 and it never wins a max.
pub(super) const PAD: f32 = -1e30;

/// `width` rounded up to a whole number of lanes.
pub(super) fn padded(width: usize) -> usize {
    width.div_ceil(LANES) * LANES
}

/// Max of `x` (length a multiple of [`LANES`]) in lane-wise accumulators.
#[inline(always)]
pub(super) fn max_lanes(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    for chunk in x.chunks_exact(LANES) {
        for (a, &v) in acc.iter_mut().zip(chunk) {
            *a = if v > *a { v } else { *a };
        }
    }
    acc.iter()
        .fold(f32::NEG_INFINITY, |a, &b| if b > a { b } else { a })
}

/// [`max_lanes`] in the shape of a ⊕ that may use its buffer as scratch.
pub(super) fn max_reduce(x: &mut [f32]) -> f32 {
    max_lanes(x)
}

/// Sum of `x` (length a multiple of [`LANES`]) in lane-wise accumulators.
#[inline(always)]
pub(super) fn sum_lanes(x: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    for chunk in x.chunks_exact(LANES) {
        for (a, &v) in acc.iter_mut().zip(chunk) {
            *a += v;
        }
    }
    acc.iter().sum()
}

/// logsumexp of `x` (length a multiple of [`LANES`]; overwritten with exp(x − max)). The exp
/// runs as its own element-wise loop: the loop vectoriser handles that shape, whereas
/// exp inside the lane-accumulator loop stayed scalar (about 15× slower, measured).
#[inline(always)]
pub(super) fn lse_lanes(x: &mut [f32]) -> f32 {
    let max = max_lanes(x);
    for v in x.iter_mut() {
        *v = exp_approx(*v - max);
    }
    max + sum_lanes(x).ln()
}

/// The entropy semiring's ⊕ over items (x_i, h_i): `P = logsumexp x`,
/// `H = Σ p_i (h_i − x_i + P) = Σ w_i (h_i − (x_i − max)) / Σ w_i + ln Σ w_i` with
/// `w_i = exp(x_i − max)` (relative to the max, so large log-weights do not cancel).
/// Both buffers are overwritten.
pub(super) fn entropy_sum(x: &mut [f32], h: &mut [f32]) -> (f32, f32) {
    let max = max_lanes(x);
    for (x, h) in x.iter_mut().zip(h.iter_mut()) {
        let shifted = *x - max;
        let w = exp_approx(shifted);
        *x = w;
        *h = w * (*h - shifted);
    }
    let s = sum_lanes(x);
    (max + s.ln(), sum_lanes(h) / s + s.ln())
}

/// [`lse_lanes`] compiled for the widest vectors this CPU has, chosen once: the binary targets
/// baseline x86-64 (SSE2), where the exp loop runs four lanes at a time; with AVX-512 it runs
/// sixteen.
pub(super) fn fastest_lse() -> fn(&mut [f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("fma")
        {
            return lse_avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return lse_avx2;
        }
    }
    lse_lanes
}

#[cfg(target_arch = "x86_64")]
fn lse_avx512(x: &mut [f32]) -> f32 {
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx2,fma")]
    unsafe fn inner(x: &mut [f32]) -> f32 {
        lse_lanes(x)
    }
    // SAFETY: only returned by `fastest_lse` after detecting these features.
    unsafe { inner(x) }
}

#[cfg(target_arch = "x86_64")]
fn lse_avx2(x: &mut [f32]) -> f32 {
    #[target_feature(enable = "avx2,fma")]
    unsafe fn inner(x: &mut [f32]) -> f32 {
        lse_lanes(x)
    }
    // SAFETY: only returned by `fastest_lse` after detecting these features.
    unsafe { inner(x) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fastest_lse_equals_the_baseline_one() {
        let fastest = fastest_lse();
        for width in [8usize, 16, 24, 64, 280] {
            let values: Vec<f32> = (0..width)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
                .collect();
            let (mut a, mut b) = (values.clone(), values.clone());
            let (want, got) = (lse_lanes(&mut a), fastest(&mut b));
            // The same float operations, in other lanes and registers: equal to rounding.
            assert!(
                (want - got).abs() <= 1e-5 * want.abs().max(1.0),
                "{width}: {want} vs {got}"
            );
            let exact = values.iter().map(|&v| (v as f64).exp()).sum::<f64>().ln();
            assert!(
                (got as f64 - exact).abs() < 1e-5 * exact.abs().max(1.0),
                "{got} vs {exact}"
            );
        }
    }
}
