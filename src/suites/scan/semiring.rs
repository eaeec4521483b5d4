//! The three semirings of the seed's scan (the type is the kernels', [`Semiring`]): parsing
//! the user's word for one, and their float64 scalar operations for the reference.
//!
//! The seed's reference fills "nothing yet" with the semiring zero −1e5 (its fused kernel uses
//! −1e9). We use −1e5 in the reference, exactly as the seed; the CPU kernel never needs a zero
//! because it only ever ⊕-sums the terms that exist (`d ≤ n`), which gives the same values
//! (exp(−1e5) is 0 in float64 and float32 alike).

use std::str::FromStr;

use super::ScanError;
pub use crate::kernels::semiring_scan::Semiring;

/// The reference's semiring zero in log space (torch-struct's and the seed's −1e5).
pub const LOG_ZERO: f64 = -1e5;

impl FromStr for Semiring {
    type Err = ScanError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "log" => Ok(Semiring::Log),
            "max" => Ok(Semiring::Max),
            "entropy" => Ok(Semiring::Entropy),
            _ => Err(ScanError::UnknownSemiring(s.to_string())),
        }
    }
}

/// Scalar semiring operations in float64, for the naive reference.
pub trait SemiringOps {
    type Value: Copy;
    fn zero() -> Self::Value;
    fn one() -> Self::Value;
    /// An edge log-potential as a semiring value.
    fn potential(x: f64) -> Self::Value;
    fn plus(a: Self::Value, b: Self::Value) -> Self::Value;
    fn times(a: Self::Value, b: Self::Value) -> Self::Value;
}

/// (logsumexp, +).
pub struct LogOps;

impl SemiringOps for LogOps {
    type Value = f64;
    fn zero() -> f64 {
        LOG_ZERO
    }
    fn one() -> f64 {
        0.0
    }
    fn potential(x: f64) -> f64 {
        x
    }
    fn plus(a: f64, b: f64) -> f64 {
        let m = a.max(b);
        m + ((a - m).exp() + (b - m).exp()).ln()
    }
    fn times(a: f64, b: f64) -> f64 {
        a + b
    }
}

/// (max, +).
pub struct MaxOps;

impl SemiringOps for MaxOps {
    type Value = f64;
    fn zero() -> f64 {
        LOG_ZERO
    }
    fn one() -> f64 {
        0.0
    }
    fn potential(x: f64) -> f64 {
        x
    }
    fn plus(a: f64, b: f64) -> f64 {
        a.max(b)
    }
    fn times(a: f64, b: f64) -> f64 {
        a + b
    }
}

/// torch-struct's entropy semiring: a value is (log-weight x, entropy h) of a sub-distribution;
/// zero = (−1e5, 0), one = (0, 0); ⊗ adds both parts; ⊕ of items i is
/// `(P = logsumexp x_i, Σ p_i (h_i − log p_i))` with `p_i = exp(x_i − P)` — the entropy of the
/// mixture. ⊕ is associative, so folding pairwise equals the seed's ⊕ over a whole axis.
pub struct EntropyOps;

impl SemiringOps for EntropyOps {
    type Value = (f64, f64);
    fn zero() -> (f64, f64) {
        (LOG_ZERO, 0.0)
    }
    fn one() -> (f64, f64) {
        (0.0, 0.0)
    }
    fn potential(x: f64) -> (f64, f64) {
        (x, 0.0)
    }
    fn plus(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
        let part = LogOps::plus(a.0, b.0);
        let (la, lb) = (a.0 - part, b.0 - part);
        let (pa, pb) = (la.exp(), lb.exp());
        (part, pa * (a.1 - la) + pb * (b.1 - lb))
    }
    fn times(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
        (a.0 + b.0, a.1 + b.1)
    }
}
