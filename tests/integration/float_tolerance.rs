//! Tolerances for float32 results compared with values recorded on another machine, derived
//! from the computation rather than from one CPU's result. Two float32 computations of one
//! quantity differ by rounding: libtorch picks its kernels by the CPU's vector width
//! (`ATEN_CPU_CAPABILITY`: default, avx2, avx512), and each sums in a different order and
//! evaluates `exp`, `log`, `cos` with a different implementation (Sleef's vector functions or
//! the C library's). When each result lies within a bound `e` of the exact value, the two lie
//! within `2e` of each other: every tolerance here is twice a bound of one computation's error.
#![allow(dead_code)]

use std::f64::consts::TAU;

/// float32's unit roundoff, 2^-24: one rounding changes a value by at most this, relatively.
pub const F32_UNIT_ROUNDOFF: f64 = f32::EPSILON as f64 / 2.0;

/// The largest radius float32 Box–Muller reaches: sqrt(−2 ln u) with the smallest uniform u
/// a 24-bit draw gives, 2^-24 (sqrt(48 ln 2) = 5.77).
pub fn box_muller_max_radius() -> f64 {
    (-2.0 * F32_UNIT_ROUNDOFF.ln()).sqrt()
}

/// How far one float32 `torch.randn` draw `z` can be from the exact Box–Muller value of its
/// uniforms: z = r·cos θ with r = sqrt(−2 ln u₁) and θ = 2π·u₂ rounded to float32. θ's
/// rounding (≤ 2π·u absolute) moves cos θ by as much, times r ≤ [`box_muller_max_radius`];
/// `log`, `sqrt`, `cos` (each within one ulp, Sleef's `_u10` or the C library's) and the
/// product add at most 4 roundings of |z|. The AVX2 path (Sleef, 8 lanes) and the default one
/// (the C library) draw the same uniforms, so their draws differ by at most twice this.
pub fn normal_draw_error(z: f64) -> f64 {
    let u = F32_UNIT_ROUNDOFF;
    4.0 * u * z.abs() + TAU * u * box_muller_max_radius()
}

/// A float32 draw of this process against one PyTorch printed on another machine.
pub fn draws_agree(got: f32, recorded: f64) -> bool {
    (f64::from(got) - recorded).abs() <= 2.0 * normal_draw_error(recorded)
}

/// How many standard deviations [`ChainBound`] allows: with λ = 6 the bound of n = 381
/// roundings fails with probability below 2n·e^(−λ²/2) = 1.2e-5 (Higham & Mary, below).
pub const LAMBDA: f64 = 6.0;
/// Roundings of a log-space value per step of the scan: the sum β + edge, then the result of
/// each of the two logsumexps (over the source label, then the duration), max + log Σ exp.
pub const ROUNDINGS_PER_STEP: usize = 3;

/// The error of a float32 dynamic program: a chain of `depth` dependent steps, each rounding
/// log-space values of magnitude at most `magnitude` [`ROUNDINGS_PER_STEP`] times and adding
/// inputs that each carry an error of at most `input_error`. A step's errors reach the result
/// through weights (posterior probabilities) that sum to at most one at each position, so the
/// result's error is a sum of n = 3·depth roundings of at most u·magnitude each, plus `depth`
/// input errors. Summed with the same sign that would be n·u·magnitude (the worst case,
/// hundreds of times what float32 really loses: the scan's log Z on the benchmark's input is
/// within one ulp of float64's); rounding
/// to nearest makes the roundings independent with mean zero, and then the sum is at most
/// λ·√n·u·magnitude with probability at least 1 − 2n·exp(−λ²(1 − u)²/2) (Higham & Mary, "A
/// New Approach to Probabilistic Rounding Error Analysis", SIAM J. Sci. Comput. 41(5), 2019,
/// Theorem 2.4). The same holds whatever summation order or `exp`/`log` a vector path uses:
/// those only change which roundings happen, not their size.
#[derive(Debug, Clone, Copy)]
pub struct ChainBound {
    pub depth: usize,
    pub magnitude: f64,
    pub input_error: f64,
}

impl ChainBound {
    /// One computation's absolute error in a log-space result (log Z, a Viterbi score).
    pub fn log_space_error(&self) -> f64 {
        let roundings = (ROUNDINGS_PER_STEP * self.depth) as f64;
        LAMBDA
            * (roundings.sqrt() * F32_UNIT_ROUNDOFF * self.magnitude
                + (self.depth as f64).sqrt() * self.input_error)
    }

    /// Two computations' log-space results (this run's and a recorded one) differ by at most
    /// this, absolutely.
    pub fn log_space_tolerance(&self) -> f64 {
        2.0 * self.log_space_error()
    }

    /// Two computations' results in probability space — exp of log-space differences:
    /// marginals, their sums, an entropy (an expectation of log-probabilities under them) —
    /// differ by at most this, relatively: an absolute error ε in an exponent is a relative
    /// error of e^ε − 1 ≈ ε in its exponential.
    pub fn relative_tolerance(&self) -> f64 {
        self.log_space_tolerance().exp_m1()
    }

    /// Whether `got` (log-space) agrees with `recorded` within [`Self::log_space_tolerance`].
    pub fn log_space_agrees(&self, got: f64, recorded: f64) -> bool {
        (got - recorded).abs() <= self.log_space_tolerance()
    }

    /// Whether `got` (probability space) agrees with `recorded` within
    /// [`Self::relative_tolerance`] of |recorded|.
    pub fn relatively_agrees(&self, got: f64, recorded: f64) -> bool {
        (got - recorded).abs() <= self.relative_tolerance() * recorded.abs()
    }
}

#[test]
fn the_bounds_are_the_formulas() {
    assert_eq!(F32_UNIT_ROUNDOFF, 2f64.powi(-24));
    assert!((box_muller_max_radius() - 5.768).abs() < 1e-3);
    // A draw of 2: 4 roundings of 2 and 2π·u·5.77.
    let e = normal_draw_error(2.0);
    assert!(
        (e - (8.0 + TAU * 5.768_107_5) * 2f64.powi(-24)).abs() < 1e-12,
        "{e}"
    );
    assert!(draws_agree(1.926_915_3, 1.926_915_049_552_917_5));
    assert!(!draws_agree(1.926_915_3, 1.926_925));
    // 12 steps (36 roundings) of values up to 256, inputs exact: 6 · 6 · 2^-16, twice.
    let chain = ChainBound {
        depth: 12,
        magnitude: 256.0,
        input_error: 0.0,
    };
    let tolerance = 72.0 * 2f64.powi(-16);
    assert!((chain.log_space_tolerance() - tolerance).abs() < 1e-15);
    assert!(chain.relative_tolerance() > tolerance);
    assert!(chain.log_space_agrees(256.0, 256.0 + 0.99 * tolerance));
    assert!(!chain.log_space_agrees(256.0, 256.0 + 1.01 * tolerance));
    assert!(chain.relatively_agrees(100.0, 100.0 * (1.0 + tolerance)));
    assert!(!chain.relatively_agrees(100.0, 100.0 * (1.0 + 1.01 * tolerance)));
    // Input errors add √depth · λ · error each side.
    let noisy = ChainBound {
        input_error: 1e-6,
        ..chain
    };
    let extra = noisy.log_space_tolerance() - chain.log_space_tolerance();
    assert!(
        (extra - 2.0 * 6.0 * 12f64.sqrt() * 1e-6).abs() < 1e-15,
        "{extra}"
    );
}
