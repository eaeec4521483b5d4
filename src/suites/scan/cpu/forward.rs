//! The forward scan of one sequence, over `slots` beta rows where row `n` lives in slot
//! `n % slots`: `slots = max_duration` is the streaming ring buffer (O(K·C) floats), `slots =
//! len` keeps every row for the backward.
//!
//! For each destination label the terms `beta[n−d, c'] + edge[n−d, d, c, c']` of all
//! (d, c') are gathered into one padded buffer and reduced lane-wise ([`super::lanes`]).

use super::lanes::{entropy_sum, padded, PAD};
use crate::suites::scan::ScanDims;

/// The gather buffers of one ⊕ and the beta row being built, reused across a thread's
/// sequences.
pub(super) struct Gather {
    /// The gathered terms of one ⊕, padded to a multiple of the lane width.
    terms: Vec<f32>,
    /// Their entropy halves (Entropy only).
    terms_h: Vec<f32>,
    /// The next beta row before it overwrites the oldest ring slot.
    next: Vec<f32>,
    next_h: Vec<f32>,
}

impl Gather {
    pub(super) fn new(d: ScanDims) -> Self {
        let width = padded((d.max_duration() * d.labels).max(d.labels));
        Gather {
            terms: vec![PAD; width],
            terms_h: vec![0.0; width],
            next: vec![0.0; d.labels],
            next_h: vec![0.0; d.labels],
        }
    }

    /// Copies one beta row (and its entropy half, when given) into the padded terms:
    /// the final ⊕ over labels.
    fn load_row(&mut self, x: &[f32], h: Option<&[f32]>) -> usize {
        let (c_n, width) = (x.len(), padded(x.len()));
        self.terms[..c_n].copy_from_slice(x);
        self.terms[c_n..width].fill(PAD);
        if let Some(h) = h {
            self.terms_h[..c_n].copy_from_slice(h);
            self.terms_h[c_n..width].fill(0.0);
        }
        width
    }

    /// `⊕_c (x_c, h_c)` in the entropy semiring: (log-weight, entropy).
    pub(super) fn entropy_of_row(&mut self, x: &[f32], h: &[f32]) -> (f32, f32) {
        let width = self.load_row(x, Some(h));
        entropy_sum(&mut self.terms[..width], &mut self.terms_h[..width])
    }
}

/// The forward scan of one sequence in the (⊕ = `reduce`, ⊗ = +) semiring; `states` holds
/// `slots` rows of C floats. Returns `Z = ⊕_c beta[len−1, c]`.
pub(super) fn scan_forward(
    d: ScanDims,
    edge: &[f32],
    len: usize,
    states: &mut [f32],
    slots: usize,
    g: &mut Gather,
    reduce: fn(&mut [f32]) -> f32,
) -> f32 {
    let c_n = d.labels;
    let stride = d.position_stride();
    states[..c_n].fill(0.0);
    for n in 1..len {
        let durations = d.max_duration().min(n);
        let width = durations * c_n;
        let padded = padded(width);
        for c in 0..c_n {
            for dur in 1..=durations {
                let src = &states[((n - dur) % slots) * c_n..][..c_n];
                let e = &edge[(n - dur) * stride + (d.slice_of(dur) * c_n + c) * c_n..][..c_n];
                let out = &mut g.terms[(dur - 1) * c_n..dur * c_n];
                for ((o, s), e) in out.iter_mut().zip(src).zip(e) {
                    *o = s + e;
                }
            }
            g.terms[width..padded].fill(PAD);
            g.next[c] = reduce(&mut g.terms[..padded]);
        }
        states[(n % slots) * c_n..][..c_n].copy_from_slice(&g.next);
    }
    let last = ((len - 1) % slots) * c_n;
    let width = g.load_row(&states[last..last + c_n], None);
    reduce(&mut g.terms[..width])
}

/// The Entropy forward of one sequence: pairs (x = log-weight, h = entropy) in `states` and
/// `states_h`, `slots` rows each. Returns `(log Z, H)`.
pub(super) fn entropy_forward(
    d: ScanDims,
    edge: &[f32],
    len: usize,
    (states, states_h): (&mut [f32], &mut [f32]),
    slots: usize,
    g: &mut Gather,
) -> (f32, f32) {
    let c_n = d.labels;
    let stride = d.position_stride();
    states[..c_n].fill(0.0);
    states_h[..c_n].fill(0.0);
    for n in 1..len {
        let durations = d.max_duration().min(n);
        let width = durations * c_n;
        let padded = padded(width);
        for c in 0..c_n {
            for dur in 1..=durations {
                let slot = ((n - dur) % slots) * c_n;
                let e = &edge[(n - dur) * stride + (d.slice_of(dur) * c_n + c) * c_n..][..c_n];
                let x = &mut g.terms[(dur - 1) * c_n..dur * c_n];
                for ((o, s), e) in x.iter_mut().zip(&states[slot..slot + c_n]).zip(e) {
                    *o = s + e;
                }
                g.terms_h[(dur - 1) * c_n..dur * c_n].copy_from_slice(&states_h[slot..slot + c_n]);
            }
            g.terms[width..padded].fill(PAD);
            g.terms_h[width..padded].fill(0.0);
            (g.next[c], g.next_h[c]) =
                entropy_sum(&mut g.terms[..padded], &mut g.terms_h[..padded]);
        }
        states[(n % slots) * c_n..][..c_n].copy_from_slice(&g.next);
        states_h[(n % slots) * c_n..][..c_n].copy_from_slice(&g.next_h);
    }
    let last = ((len - 1) % slots) * c_n;
    g.entropy_of_row(&states[last..last + c_n], &states_h[last..last + c_n])
}
