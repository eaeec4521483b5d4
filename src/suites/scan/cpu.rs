//! The float32 CPU kernel: a streaming scan per sequence over a ring buffer of the last
//! `max_duration` beta rows (K·C floats), sequences spread over the cores.
//!
//! The inner ⊕ gathers the terms `beta[n−d, c'] + edge[n−d, d, c, c']` of all (d, c') into one
//! padded buffer and reduces it in [`LANES`] independent lanes — max, then Σ exp(x − max) with
//! [`exp_approx`] — a loop shape the compiler turns into SIMD on stable Rust without
//! intrinsics (a single running float accumulator would not vectorise: float addition is not
//! reassociated).
//!
//! The backward recomputes the forward keeping every beta row (`len·C` floats, small next to
//! the `len·K·C²` gradient it writes) and runs the reverse scan: for Log the outside pass
//! `out[m, c'] = logsumexp_{d,c} edge[m, d, c, c'] + out[m+d, c]` with marginals
//! `exp(beta[m, c'] + edge + out[m+d, c] − log Z)`; for Max a backtrack of the argmax.

use super::exp_approx::exp_approx;
use super::{ScanDims, ScanError, ScanProblem, Semiring};

/// Width of the lane-wise reductions (two AVX or four SSE registers of float32).
pub const LANES: usize = 8;

/// Padding for the gather buffer: finite so that `0 · (h − x)` stays 0 in Entropy, and far
/// below −87 so that its exp is exactly 0 and it never wins a max.
const PAD: f32 = -1e30;

/// The value of each sequence's scan and the gradient of their sum with respect to `edge`
/// (same layout as `edge`).
#[derive(Debug, Clone)]
pub struct ScanGradient {
    pub values: Vec<f32>,
    pub grad: Vec<f32>,
}

/// The CPU backend; `threads` sequences run at once.
#[derive(Debug, Clone, Copy)]
pub struct CpuScan {
    threads: usize,
}

impl Default for CpuScan {
    fn default() -> Self {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        CpuScan { threads }
    }
}

impl CpuScan {
    pub fn with_threads(threads: usize) -> Self {
        CpuScan {
            threads: threads.max(1),
        }
    }

    /// The scan's value per sequence: log Z (Log), the Viterbi score (Max), the entropy H
    /// (Entropy). Working memory: the ring buffer and the gather buffer, O(K·C) per thread.
    pub fn forward(&self, p: &ScanProblem, semiring: Semiring) -> Vec<f32> {
        let mut values = vec![0.0; p.dims.batch];
        let jobs = values
            .iter_mut()
            .enumerate()
            .map(|(b, v)| (b, v, &mut [][..]))
            .collect();
        self.run(p.dims, jobs, |b, value, _, ws| {
            let (edge, len) = (p.sequence_edge(b), p.lengths[b]);
            let slots = p.dims.max_duration();
            *value = match semiring {
                Semiring::Log => scan_forward(p.dims, edge, len, slots, ws, lse_lanes),
                Semiring::Max => scan_forward(p.dims, edge, len, slots, ws, max_reduce),
                Semiring::Entropy => entropy_forward(p.dims, edge, len, ws).1,
            };
        });
        values
    }

    /// The values and the gradient of their sum: the edge marginals (Log) or the indicator
    /// of the best segmentation (Max; ties as in [`super::reference::viterbi_indicator`]).
    /// Entropy has no backward here: the gradient of H needs a second-order (covariance) pass
    /// that the seed only gets from autograd; it is reported as `not_implemented`.
    pub fn backward(&self, p: &ScanProblem, semiring: Semiring) -> Result<ScanGradient, ScanError> {
        if semiring == Semiring::Entropy {
            return Err(ScanError::NotImplemented(
                "the CPU kernel has no backward for the Entropy semiring".to_string(),
            ));
        }
        let dims = p.dims;
        let mut values = vec![0.0; dims.batch];
        let mut grad = vec![0.0; dims.edge_len()];
        let mut rest = &mut grad[..];
        let mut jobs = Vec::with_capacity(dims.batch);
        for (b, value) in values.iter_mut().enumerate() {
            let (own, tail) = std::mem::take(&mut rest).split_at_mut(dims.sequence_stride());
            rest = tail;
            jobs.push((b, value, own));
        }
        self.run(dims, jobs, |b, value, grad, ws| {
            let (edge, len) = (p.sequence_edge(b), p.lengths[b]);
            *value = match semiring {
                Semiring::Log => log_backward(dims, edge, len, grad, ws),
                _ => max_backward(dims, edge, len, grad, ws),
            };
        });
        Ok(ScanGradient { values, grad })
    }

    /// Runs `work` on every sequence, round-robin over up to `threads` scoped threads, each
    /// with its own workspace.
    fn run<'g, F>(&self, dims: ScanDims, jobs: Vec<(usize, &'g mut f32, &'g mut [f32])>, work: F)
    where
        F: Fn(usize, &mut f32, &mut [f32], &mut Workspace) + Sync,
    {
        let threads = self.threads.min(jobs.len()).max(1);
        let mut groups: Vec<Vec<_>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, job) in jobs.into_iter().enumerate() {
            groups[i % threads].push(job);
        }
        let run_group = |group: Vec<(usize, &'g mut f32, &'g mut [f32])>| {
            let mut ws = Workspace::new(dims);
            for (b, value, grad) in group {
                work(b, value, grad, &mut ws);
            }
        };
        if threads == 1 {
            groups.into_iter().for_each(run_group);
        } else {
            std::thread::scope(|s| {
                for group in groups {
                    s.spawn(|| run_group(group));
                }
            });
        }
    }
}

/// One thread's scratch memory, reused across its sequences.
struct Workspace {
    /// Beta rows: the ring (forward) or the whole table (backward).
    states: Vec<f32>,
    /// The entropy half of the Entropy ring.
    states_h: Vec<f32>,
    /// The gathered terms of one ⊕, padded to a multiple of [`LANES`].
    terms: Vec<f32>,
    terms_h: Vec<f32>,
    /// The next beta row before it overwrites the oldest ring slot.
    next: Vec<f32>,
    next_h: Vec<f32>,
    /// The outside table of the Log backward.
    outside: Vec<f32>,
    /// Per source label: running max and sum of the outside logsumexp.
    row_max: Vec<f32>,
    row_sum: Vec<f32>,
}

impl Workspace {
    fn new(d: ScanDims) -> Self {
        let ring = d.max_duration() * d.labels;
        let terms = (ring.max(d.labels)).div_ceil(LANES) * LANES;
        Workspace {
            states: Vec::with_capacity(ring),
            states_h: Vec::with_capacity(ring),
            terms: vec![PAD; terms],
            terms_h: vec![0.0; terms],
            next: vec![0.0; d.labels],
            next_h: vec![0.0; d.labels],
            outside: Vec::new(),
            row_max: vec![0.0; d.labels],
            row_sum: vec![0.0; d.labels],
        }
    }
}

/// The forward scan of one sequence in the (⊕ = `reduce`, ⊗ = +) semiring, over `slots` beta
/// rows (`slots = max_duration` for the ring, `len` to keep every row for the backward).
/// Returns `Z = ⊕_c beta[len−1, c]`.
fn scan_forward(
    d: ScanDims,
    edge: &[f32],
    len: usize,
    slots: usize,
    ws: &mut Workspace,
    reduce: fn(&mut [f32]) -> f32,
) -> f32 {
    let c_n = d.labels;
    let stride = d.position_stride();
    ws.states.clear();
    ws.states.resize(slots * c_n, 0.0);
    for n in 1..len {
        let durations = d.max_duration().min(n);
        let width = durations * c_n;
        let padded = width.div_ceil(LANES) * LANES;
        for c in 0..c_n {
            for dur in 1..=durations {
                let src = &ws.states[((n - dur) % slots) * c_n..][..c_n];
                let e = &edge[(n - dur) * stride + (d.slice_of(dur) * c_n + c) * c_n..][..c_n];
                let out = &mut ws.terms[(dur - 1) * c_n..dur * c_n];
                for ((o, s), e) in out.iter_mut().zip(src).zip(e) {
                    *o = s + e;
                }
            }
            ws.terms[width..padded].fill(PAD);
            ws.next[c] = reduce(&mut ws.terms[..padded]);
        }
        ws.states[(n % slots) * c_n..][..c_n].copy_from_slice(&ws.next);
    }
    let last = ((len - 1) % slots) * c_n;
    let padded = c_n.div_ceil(LANES) * LANES;
    ws.terms[..c_n].copy_from_slice(&ws.states[last..last + c_n]);
    ws.terms[c_n..padded].fill(PAD);
    reduce(&mut ws.terms[..padded])
}

/// The Entropy forward of one sequence over the ring: pairs (x = log-weight, h = entropy).
/// Returns `(log Z, H)`.
fn entropy_forward(d: ScanDims, edge: &[f32], len: usize, ws: &mut Workspace) -> (f32, f32) {
    let c_n = d.labels;
    let slots = d.max_duration();
    let stride = d.position_stride();
    ws.states.clear();
    ws.states.resize(slots * c_n, 0.0);
    ws.states_h.clear();
    ws.states_h.resize(slots * c_n, 0.0);
    for n in 1..len {
        let durations = d.max_duration().min(n);
        let width = durations * c_n;
        let padded = width.div_ceil(LANES) * LANES;
        for c in 0..c_n {
            for dur in 1..=durations {
                let slot = ((n - dur) % slots) * c_n;
                let e = &edge[(n - dur) * stride + (d.slice_of(dur) * c_n + c) * c_n..][..c_n];
                let x = &mut ws.terms[(dur - 1) * c_n..dur * c_n];
                for ((o, s), e) in x.iter_mut().zip(&ws.states[slot..slot + c_n]).zip(e) {
                    *o = s + e;
                }
                ws.terms_h[(dur - 1) * c_n..dur * c_n]
                    .copy_from_slice(&ws.states_h[slot..slot + c_n]);
            }
            ws.terms[width..padded].fill(PAD);
            ws.terms_h[width..padded].fill(0.0);
            (ws.next[c], ws.next_h[c]) =
                entropy_sum(&mut ws.terms[..padded], &mut ws.terms_h[..padded]);
        }
        ws.states[(n % slots) * c_n..][..c_n].copy_from_slice(&ws.next);
        ws.states_h[(n % slots) * c_n..][..c_n].copy_from_slice(&ws.next_h);
    }
    let last = ((len - 1) % slots) * c_n;
    let padded = c_n.div_ceil(LANES) * LANES;
    ws.terms[..c_n].copy_from_slice(&ws.states[last..last + c_n]);
    ws.terms[c_n..padded].fill(PAD);
    ws.terms_h[..c_n].copy_from_slice(&ws.states_h[last..last + c_n]);
    ws.terms_h[c_n..padded].fill(0.0);
    entropy_sum(&mut ws.terms[..padded], &mut ws.terms_h[..padded])
}

/// Log backward of one sequence: writes the marginals into `grad` (`[T−1, K, C, C]`, zeroed)
/// and returns log Z.
fn log_backward(
    d: ScanDims,
    edge: &[f32],
    len: usize,
    grad: &mut [f32],
    ws: &mut Workspace,
) -> f32 {
    let c_n = d.labels;
    let stride = d.position_stride();
    let log_z = scan_forward(d, edge, len, len, ws, lse_lanes);
    ws.outside.clear();
    ws.outside.resize(len * c_n, 0.0);
    for m in (0..len - 1).rev() {
        let beta = &ws.states[m * c_n..(m + 1) * c_n];
        let (outside_later, outside_here) = {
            let (head, tail) = ws.outside.split_at_mut((m + 1) * c_n);
            (tail, &mut head[m * c_n..])
        };
        ws.row_max.fill(f32::NEG_INFINITY);
        let durations = d.max_duration().min(len - 1 - m);
        // Pass 1: the running max per source label of w = edge + out[m+d, c].
        for dur in 1..=durations {
            let block = (m * stride) + d.slice_of(dur) * c_n * c_n;
            let later = &outside_later[(dur - 1) * c_n..dur * c_n];
            for (c, &o) in later.iter().enumerate() {
                let row = &edge[block + c * c_n..][..c_n];
                for (mx, &e) in ws.row_max.iter_mut().zip(row) {
                    let w = e + o;
                    *mx = if w > *mx { w } else { *mx };
                }
            }
        }
        // Pass 2: marginals and the sums of the outside logsumexp.
        ws.row_sum.fill(0.0);
        for dur in 1..=durations {
            let block = (m * stride) + d.slice_of(dur) * c_n * c_n;
            let later = &outside_later[(dur - 1) * c_n..dur * c_n];
            for (c, &o) in later.iter().enumerate() {
                let row = &edge[block + c * c_n..][..c_n];
                let g = &mut grad[block + c * c_n..][..c_n];
                let sums = ws.row_sum.iter_mut().zip(&ws.row_max);
                for (((g, &e), (sum, &mx)), &b) in g.iter_mut().zip(row).zip(sums).zip(beta) {
                    let w = e + o;
                    *sum += exp_approx(w - mx);
                    *g = exp_approx(w + b - log_z);
                }
            }
        }
        for ((out, mx), s) in outside_here.iter_mut().zip(&ws.row_max).zip(&ws.row_sum) {
            *out = mx + s.ln();
        }
    }
    log_z
}

/// Max backward of one sequence: 1 in `grad` on every edge of the best segmentation (ties:
/// smallest final label, then smallest duration, then smallest source label); returns the
/// Viterbi score.
fn max_backward(
    d: ScanDims,
    edge: &[f32],
    len: usize,
    grad: &mut [f32],
    ws: &mut Workspace,
) -> f32 {
    let c_n = d.labels;
    let stride = d.position_stride();
    let score = scan_forward(d, edge, len, len, ws, max_reduce);
    let beta = &ws.states;
    let mut label = first_argmax(&beta[(len - 1) * c_n..len * c_n]);
    let mut n = len - 1;
    while n > 0 {
        let mut best = (f32::NEG_INFINITY, 0, 0);
        for dur in 1..=d.max_duration().min(n) {
            let row = &edge[(n - dur) * stride + (d.slice_of(dur) * c_n + label) * c_n..][..c_n];
            for (src, (&b, &e)) in beta[(n - dur) * c_n..(n - dur + 1) * c_n]
                .iter()
                .zip(row)
                .enumerate()
            {
                if b + e > best.0 {
                    best = (b + e, dur, src);
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
    score
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

/// Max of `x` (length a multiple of [`LANES`]) in lane-wise accumulators.
fn max_lanes(x: &[f32]) -> f32 {
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
fn max_reduce(x: &mut [f32]) -> f32 {
    max_lanes(x)
}

/// Sum of `x` (length a multiple of [`LANES`]) in lane-wise accumulators.
fn sum_lanes(x: &[f32]) -> f32 {
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
fn lse_lanes(x: &mut [f32]) -> f32 {
    let max = max_lanes(x);
    for v in x.iter_mut() {
        *v = exp_approx(*v - max);
    }
    max + sum_lanes(x).ln()
}

/// The entropy semiring's ⊕ over items (x_i, h_i): `P = logsumexp x`,
/// `H = Σ p_i (h_i − x_i + P) = Σ w_i (h_i − (x_i − max)) / Σ w_i + ln Σ w_i` with
/// `w_i = exp(x_i − max)` (relative to the max, so large log-weights do not cancel).
fn entropy_sum(x: &mut [f32], h: &mut [f32]) -> (f32, f32) {
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
