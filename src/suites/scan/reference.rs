//! The float64 naive reference: the recurrence exactly as the seed states it, over a full
//! `beta[len, C]` table, and its gradients computed independently of the CPU kernel — the Log
//! marginals by an explicit outside (backward) pass, the Max indicator by backtracking.
//! Slow on purpose: plain loops, no ring buffer, no vectorisation.

use super::semiring::{EntropyOps, LogOps, MaxOps, SemiringOps};
use super::{ScanProblem, Semiring};

/// `⊕` over the items, folded from the first (equal to folding from the seed's zero, whose
/// share exp(−1e5 − x) is exactly 0 in float64).
fn fold<S: SemiringOps>(items: impl Iterator<Item = S::Value>) -> S::Value {
    items.reduce(S::plus).unwrap_or_else(S::zero)
}

/// `beta[n][c]` for `n` in `0..len` of sequence `b`.
pub fn beta_table<S: SemiringOps>(p: &ScanProblem, b: usize) -> Vec<Vec<S::Value>> {
    beta_table_scaled::<S>(p, b, 1.0)
}

/// [`beta_table`] of the potentials `scale · edge`, scaled in float64.
fn beta_table_scaled<S: SemiringOps>(p: &ScanProblem, b: usize, scale: f64) -> Vec<Vec<S::Value>> {
    let d = p.dims;
    let len = p.lengths[b];
    let mut beta: Vec<Vec<S::Value>> = vec![vec![S::one(); d.labels]];
    for n in 1..len {
        let row = (0..d.labels)
            .map(|c| {
                let beta = &beta;
                fold::<S>((1..=d.max_duration().min(n)).flat_map(move |dur| {
                    (0..d.labels).map(move |src| {
                        let e = scale * p.edge[d.index(b, n - dur, d.slice_of(dur), c, src)] as f64;
                        S::times(beta[n - dur][src], S::potential(e))
                    })
                }))
            })
            .collect();
        beta.push(row);
    }
    beta
}

/// `Z = ⊕_c beta[len−1, c]` per sequence.
pub fn partition<S: SemiringOps>(p: &ScanProblem) -> Vec<S::Value> {
    (0..p.dims.batch)
        .map(|b| {
            let beta = beta_table::<S>(p, b);
            fold::<S>(beta[p.lengths[b] - 1].iter().copied())
        })
        .collect()
}

/// The scan's value per sequence: log Z (Log), the Viterbi score (Max), the entropy H
/// (Entropy; the log Z half of its pair equals Log's).
pub fn forward(p: &ScanProblem, semiring: Semiring) -> Vec<f64> {
    match semiring {
        Semiring::Log => partition::<LogOps>(p),
        Semiring::Max => partition::<MaxOps>(p),
        Semiring::Entropy => partition::<EntropyOps>(p)
            .into_iter()
            .map(|(_, h)| h)
            .collect(),
    }
}

/// The edge marginals (the gradient of Σ_b log Z_b), by an outside pass:
/// `out[len−1, c] = 0`, `out[m, c'] = logsumexp_{d, c} edge[m, d, c, c'] + out[m+d, c]`, and
/// the marginal of `edge[m, d, c, c']` is `exp(beta[m, c'] + edge + out[m+d, c] − log Z)`.
pub fn log_marginals(p: &ScanProblem) -> Vec<f64> {
    log_marginals_scaled(p, 1.0)
}

/// [`log_marginals`] of the potentials `scale · edge`, scaled in float64.
fn log_marginals_scaled(p: &ScanProblem, scale: f64) -> Vec<f64> {
    let d = p.dims;
    let mut grad = vec![0.0; d.edge_len()];
    for b in 0..d.batch {
        let len = p.lengths[b];
        let beta = beta_table_scaled::<LogOps>(p, b, scale);
        let log_z = fold::<LogOps>(beta[len - 1].iter().copied());
        let mut out = vec![vec![f64::NEG_INFINITY; d.labels]; len];
        out[len - 1] = vec![0.0; d.labels];
        for m in (0..len - 1).rev() {
            for src in 0..d.labels {
                let mut terms = Vec::new();
                for dur in 1..=d.max_duration().min(len - 1 - m) {
                    for (c, &later) in out[m + dur].iter().enumerate() {
                        let i = d.index(b, m, d.slice_of(dur), c, src);
                        let inside_outside = scale * p.edge[i] as f64 + later;
                        grad[i] += (beta[m][src] + inside_outside - log_z).exp();
                        terms.push(inside_outside);
                    }
                }
                out[m][src] = fold::<LogOps>(terms.into_iter());
            }
        }
    }
    grad
}

/// The gradient of Σ_b H_b (the entropies) with respect to `edge`, from the marginals alone.
///
/// With θ the potentials, φ_s the edge counts of segmentation s and μ = E[φ], the entropy is
/// `H = log Z − θ·μ`, so `∂H/∂θ = μ − μ − Cov(φ) θ = −Cov(φ) θ`; and `Cov(φ) θ` is the
/// derivative of the marginals along θ itself, `d/dt μ((1 + t) θ)` at t = 0. We take that
/// derivative by a float64 central difference of [`log_marginals`] at `(1 ± ε) θ`
/// (ε = 1e-4: truncation error ~ε² ≈ 1e-8, rounding ~1e-16/ε ≈ 1e-12), so this reference
/// shares nothing with a reverse pass through the entropy semiring.
pub fn entropy_gradient(p: &ScanProblem) -> Vec<f64> {
    const STEP: f64 = 1e-4;
    let above = log_marginals_scaled(p, 1.0 + STEP);
    let below = log_marginals_scaled(p, 1.0 - STEP);
    above
        .iter()
        .zip(&below)
        .map(|(a, b)| -(a - b) / (2.0 * STEP))
        .collect()
}

/// The gradient of Σ_b (Viterbi score)_b: 1 on every edge of the best segmentation, found by
/// backtracking the max table. Ties go to the first candidate: the smallest final label, then
/// at each step the smallest duration and then the smallest source label (the CPU kernel uses
/// the same rule; random continuous inputs have no ties).
pub fn viterbi_indicator(p: &ScanProblem) -> Vec<f64> {
    let d = p.dims;
    let mut grad = vec![0.0; d.edge_len()];
    for b in 0..d.batch {
        let len = p.lengths[b];
        let beta = beta_table::<MaxOps>(p, b);
        let mut label = first_argmax(beta[len - 1].iter().copied());
        let mut n = len - 1;
        while n > 0 {
            let candidates = (1..=d.max_duration().min(n))
                .flat_map(|dur| (0..d.labels).map(move |src| (dur, src)))
                .collect::<Vec<_>>();
            let scores = candidates.iter().map(|&(dur, src)| {
                beta[n - dur][src] + p.edge[d.index(b, n - dur, d.slice_of(dur), label, src)] as f64
            });
            let (dur, src) = candidates[first_argmax(scores)];
            grad[d.index(b, n - dur, d.slice_of(dur), label, src)] = 1.0;
            n -= dur;
            label = src;
        }
    }
    grad
}

/// Index of the first maximum.
fn first_argmax(values: impl Iterator<Item = f64>) -> usize {
    let mut best = (0, f64::NEG_INFINITY);
    for (i, v) in values.enumerate() {
        if v > best.1 {
            best = (i, v);
        }
    }
    best.0
}
