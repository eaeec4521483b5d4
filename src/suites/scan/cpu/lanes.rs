//! The lane-wise reductions of the CPU kernel's ⊕: the terms of one ⊕ sit in a buffer padded
//! to a multiple of [`LANES`] and are reduced in `LANES` independent accumulators — a loop
//! shape the compiler turns into SIMD on stable Rust without intrinsics (a single running
//! float accumulator would not vectorise: float addition is not reassociated).

use super::super::exp_approx::exp_approx;

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
