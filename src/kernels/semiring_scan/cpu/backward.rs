//! The reverse scans of one sequence, from the beta rows its saving forward kept (`len` rows
//! of C floats; the Entropy pairs in two tables). Each writes the gradient of the sequence's
//! value with respect to its edge block `[T−1, K, C, C]` (zeroed by the caller; entries the
//! sequence never reads stay 0).
//!
//! - Log: the outside pass `out[m, c'] = logsumexp_{d,c} edge[m, d, c, c'] + out[m+d, c]`,
//!   marginals `exp(beta[m, c'] + edge + out[m+d, c] − log Z)`.
//! - Max: a backtrack of the argmax.
//! - Entropy: reverse mode through the entropy ⊕. A node's items (x_i, h_i) =
//!   (beta_x[m, c'] + edge, beta_h[m, c']) make `P = logsumexp x`, `H = Σ p_i (h_i − x_i) + P`,
//!   so with the node's adjoints (P̄, H̄): `x̄_i = p_i (P̄ + H̄ ((h_i − x_i) − (H − P)))` and
//!   `h̄_i = H̄ p_i`; `x̄_i` is the edge's gradient and flows, with `h̄_i`, to beta[m, c'].
//!   The node's own (P, H) is its saved beta pair, so no ⊕ is recomputed.

use super::forward::Gather;
use crate::cpu::exp_approx::exp_approx;
use crate::kernels::semiring_scan::ScanDims;

/// The reverse pass's tables, reused across a thread's sequences: `len·C` floats each (small
/// next to the `len·K·C²` gradient).
#[derive(Default)]
pub(super) struct Reverse {
    /// Log: the outside table; Entropy: the adjoints of the x halves.
    adjoint: Vec<f32>,
    /// Entropy: the adjoints of the h halves.
    adjoint_h: Vec<f32>,
    /// Log: per source label, the running max and sum of the outside logsumexp.
    row_max: Vec<f32>,
    row_sum: Vec<f32>,
    /// Log: the terms of one outside step, `[d][c][c']`, and per source label exp(max + beta).
    terms: Vec<f32>,
    factor: Vec<f32>,
}

/// A sequence's saved rows for Log and Max: `len` rows of C float32 residuals and their
/// float64 bases, `beta[n, c] = base[n] + beta[n, c]` (see [`super::forward::EntropyRows`]).
pub(super) struct SavedRows<'a> {
    pub beta: &'a [f32],
    pub base: &'a [f64],
}

/// Log backward of one sequence: the edge marginals into `grad`. The outside values are kept
/// relative as the inside ones are: `out[m, c] = (log Z − base[m]) + rel[m, c]`, so that
/// `rel[m, c'] = logsumexp_{d,c} edge[m, d, c, c'] + rel[m+d, c] + (base[m] − base[m+d])`,
/// `rel[len−1, c] = base[len−1] − log Z`, and the marginal of `edge[m, d, c, c']` is
/// `exp(beta[m, c'] + edge + rel[m+d, c] + (base[m] − base[m+d]))` — every float32 O(K).
pub(super) fn log_backward(
    d: ScanDims,
    edge: &[f32],
    len: usize,
    (rows, log_z): (SavedRows, f64),
    grad: &mut [f32],
    r: &mut Reverse,
) {
    let c_n = d.labels;
    let stride = d.position_stride();
    let base = rows.base;
    r.adjoint.clear();
    r.adjoint.resize(len * c_n, 0.0);
    r.adjoint[(len - 1) * c_n..].fill((base[len - 1] - log_z) as f32);
    r.row_max.resize(c_n, 0.0);
    r.row_sum.resize(c_n, 0.0);
    r.factor.resize(c_n, 0.0);
    for m in (0..len - 1).rev() {
        let beta = &rows.beta[m * c_n..(m + 1) * c_n];
        let (outside_later, outside_here) = {
            let (head, tail) = r.adjoint.split_at_mut((m + 1) * c_n);
            (tail, &mut head[m * c_n..])
        };
        r.row_max.fill(f32::NEG_INFINITY);
        let durations = d.max_duration().min(len - 1 - m);
        let width = c_n * c_n;
        r.terms.resize(durations * width, 0.0);
        // Pass 1: every w = edge + rel[m+d, c] + shift, kept, and its max per source label.
        for dur in 1..=durations {
            let block = (m * stride) + d.slice_of(dur) * c_n * c_n;
            let shift = (base[m] - base[m + dur]) as f32;
            let later = &outside_later[(dur - 1) * c_n..dur * c_n];
            let terms = &mut r.terms[(dur - 1) * width..dur * width];
            for (c, &o) in later.iter().enumerate() {
                let row = &edge[block + c * c_n..][..c_n];
                let out = &mut terms[c * c_n..(c + 1) * c_n];
                for ((w, mx), &e) in out.iter_mut().zip(r.row_max.iter_mut()).zip(row) {
                    *w = e + o + shift;
                    *mx = if *w > *mx { *w } else { *mx };
                }
            }
        }
        // Pass 2: one exp per term serves both the outside sum and the marginal:
        // exp(w + beta) = exp(w − max) · exp(max + beta), the second factor once per label.
        for ((f, &mx), &b) in r.factor.iter_mut().zip(&r.row_max).zip(beta) {
            *f = exp_approx(mx + b);
        }
        r.row_sum.fill(0.0);
        for dur in 1..=durations {
            let block = (m * stride) + d.slice_of(dur) * c_n * c_n;
            let terms = &r.terms[(dur - 1) * width..dur * width];
            for c in 0..c_n {
                let w = &terms[c * c_n..(c + 1) * c_n];
                let g = &mut grad[block + c * c_n..][..c_n];
                let sums = r.row_sum.iter_mut().zip(&r.row_max);
                for (((g, &w), (sum, &mx)), &f) in g.iter_mut().zip(w).zip(sums).zip(&r.factor) {
                    let ew = exp_approx(w - mx);
                    *sum += ew;
                    *g = ew * f;
                }
            }
        }
        for ((out, mx), s) in outside_here.iter_mut().zip(&r.row_max).zip(&r.row_sum) {
            *out = mx + s.ln();
        }
    }
}

/// Max backward of one sequence: 1 in `grad` on every edge of the best segmentation (ties:
/// smallest final label, then smallest duration, then smallest source label, as
/// the scan suite's `reference::viterbi_indicator`).
pub(super) fn max_backward(
    d: ScanDims,
    edge: &[f32],
    len: usize,
    rows: SavedRows,
    grad: &mut [f32],
) {
    let c_n = d.labels;
    let stride = d.position_stride();
    let (beta, base) = (rows.beta, rows.base);
    let mut label = first_argmax(&beta[(len - 1) * c_n..len * c_n]);
    let mut n = len - 1;
    while n > 0 {
        let mut best = (f32::NEG_INFINITY, 0, 0);
        for dur in 1..=d.max_duration().min(n) {
            // Candidates from different rows compared on this row's base.
            let shift = (base[n - dur] - base[n]) as f32;
            let row = &edge[(n - dur) * stride + (d.slice_of(dur) * c_n + label) * c_n..][..c_n];
            for (src, (&b, &e)) in beta[(n - dur) * c_n..(n - dur + 1) * c_n]
                .iter()
                .zip(row)
                .enumerate()
            {
                if b + e + shift > best.0 {
                    best = (b + e + shift, dur, src);
                }
            }
        }
        let (_, dur, src) = best;
        // A NaN potential makes every comparison false: stop rather than loop on duration 0.
        if dur == 0 {
            break;
        }
        grad[(n - dur) * stride + (d.slice_of(dur) * c_n + label) * c_n + src] = 1.0;
        n -= dur;
        label = src;
    }
}

fn first_argmax(values: &[f32]) -> usize {
    let mut best = (0, f32::NEG_INFINITY);
    for (i, &v) in values.iter().enumerate() {
        if v > best.1 {
            best = (i, v);
        }
    }
    best.0
}

/// The saved Entropy rows of one sequence, `len` of them (see [`super::forward::EntropyRows`]:
/// float64 bases per row, float32 residuals per label).
pub(super) struct SavedEntropyRows<'a> {
    pub x: &'a [f32],
    pub h: &'a [f32],
    pub base_x: &'a [f64],
    pub base_h: &'a [f64],
}

/// Entropy backward of one sequence: the gradient of H with respect to the edge block, by
/// reverse mode from the saved pairs. Every difference is taken between residuals plus the
/// exact difference of the bases, so the float32 values stay O(K) whatever T.
pub(super) fn entropy_backward(
    d: ScanDims,
    edge: &[f32],
    len: usize,
    rows: SavedEntropyRows,
    grad: &mut [f32],
    r: &mut Reverse,
    g: &mut Gather,
) {
    if len == 1 {
        return;
    }
    let SavedEntropyRows {
        x,
        h,
        base_x,
        base_h,
    } = rows;
    let c_n = d.labels;
    let stride = d.position_stride();
    r.adjoint.clear();
    r.adjoint.resize(len * c_n, 0.0);
    r.adjoint_h.clear();
    r.adjoint_h.resize(len * c_n, 0.0);

    // The final ⊕ over labels, with adjoints (P̄, H̄) = (0, 1): the loss is H alone. The
    // items and the result share the last row's bases, so residuals suffice.
    let last = (len - 1) * c_n..len * c_n;
    let (top_x, top_h) = g.entropy_of_row(&x[last.clone()], &h[last.clone()]);
    let top_spread = top_h - top_x;
    let items = x[last.clone()].iter().zip(&h[last.clone()]);
    let adjoints = r.adjoint[last.clone()]
        .iter_mut()
        .zip(&mut r.adjoint_h[last]);
    for ((&xi, &hi), (ax, ah)) in items.zip(adjoints) {
        let p = exp_approx(xi - top_x);
        *ax = p * ((hi - xi) - top_spread);
        *ah = p;
    }

    for n in (1..len).rev() {
        let (adj_earlier, adj_here) = r.adjoint.split_at_mut(n * c_n);
        let (adj_h_earlier, adj_h_here) = r.adjoint_h.split_at_mut(n * c_n);
        for c in 0..c_n {
            let (bar_p, bar_h) = (adj_here[c], adj_h_here[c]);
            let (node_x, node_h) = (x[n * c_n + c], h[n * c_n + c]);
            // H − P of this node, in residuals.
            let spread = node_h - node_x;
            for dur in 1..=d.max_duration().min(n) {
                let m = n - dur;
                // The source row's bases against this row's: x_i − P = xs + e + shift − node_x
                // and (h_i − x_i) − (H − P) = (hs − xs − e) − spread + spread_shift.
                let shift = (base_x[m] - base_x[n]) as f32;
                let spread_shift = ((base_h[m] - base_h[n]) - (base_x[m] - base_x[n])) as f32;
                let at = m * stride + (d.slice_of(dur) * c_n + c) * c_n;
                let sources = x[m * c_n..][..c_n].iter().zip(&h[m * c_n..][..c_n]);
                let adjoints = adj_earlier[m * c_n..][..c_n]
                    .iter_mut()
                    .zip(&mut adj_h_earlier[m * c_n..][..c_n]);
                let edges = edge[at..at + c_n].iter().zip(&mut grad[at..at + c_n]);
                for (((&xs, &hs), (ax, ah)), (&e, ge)) in sources.zip(adjoints).zip(edges) {
                    let p = exp_approx(xs + e + shift - node_x);
                    let deviation = (hs - xs - e) - spread + spread_shift;
                    let bar_x = p * (bar_p + bar_h * deviation);
                    *ge = bar_x;
                    *ax += bar_x;
                    *ah += bar_h * p;
                }
            }
        }
    }
}
