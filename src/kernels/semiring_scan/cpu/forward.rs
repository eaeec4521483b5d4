//! The forward scan of one sequence, over `slots` beta rows where row `n` lives in slot
//! `n % slots`: `slots = max_duration` is the streaming ring buffer (O(K·C) floats), `slots =
//! len` keeps every row for the backward.
//!
//! For each destination label the terms `beta[n−d, c'] + edge[n−d, d, c, c']` of all
//! (d, c') are gathered into one padded buffer and reduced lane-wise ([`super::lanes`]).

use super::lanes::{entropy_sum, padded, PAD};
use crate::kernels::semiring_scan::ScanDims;

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
    /// Per duration, the source row's bases less the previous row's.
    shift_x: Vec<f32>,
    shift_h: Vec<f32>,
}

impl Gather {
    pub(super) fn new(d: ScanDims) -> Self {
        let width = padded((d.max_duration() * d.labels).max(d.labels));
        Gather {
            terms: vec![PAD; width],
            terms_h: vec![0.0; width],
            next: vec![0.0; d.labels],
            next_h: vec![0.0; d.labels],
            shift_x: vec![0.0; d.max_duration()],
            shift_h: vec![0.0; d.max_duration()],
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
/// `slots` rows of C float32 residuals and `bases` their float64 bases, `beta[n, c] =
/// bases[n] + states[n, c]` (why: see [`EntropyRows`]). Returns `Z = ⊕_c beta[len−1, c]`.
///
/// `REBASE = false` keeps every base at 0 (absolute float32 rows) and saves the add per term:
/// for Max, whose gradient is a 0/1 path that rounding of O(ulp) does not move (random
/// potentials have no near-ties), and whose cheap ⊕ makes that add 15–20 % of its forward
/// (measured at T = 1024, K = 24, C = 12).
#[allow(clippy::too_many_arguments)]
pub(super) fn scan_forward<const REBASE: bool>(
    d: ScanDims,
    edge: &[f32],
    len: usize,
    states: &mut [f32],
    bases: &mut [f64],
    slots: usize,
    g: &mut Gather,
    reduce: fn(&mut [f32]) -> f32,
) -> f64 {
    let c_n = d.labels;
    let stride = d.position_stride();
    states[..c_n].fill(0.0);
    bases[0] = 0.0;
    for n in 1..len {
        let durations = d.max_duration().min(n);
        let width = durations * c_n;
        let padded = padded(width);
        // This row is built relative to the previous row's base.
        let reference = bases[(n - 1) % slots];
        for dur in 1..=durations {
            g.shift_x[dur - 1] = (bases[(n - dur) % slots] - reference) as f32;
        }
        for c in 0..c_n {
            for dur in 1..=durations {
                let src = &states[((n - dur) % slots) * c_n..][..c_n];
                let shift = g.shift_x[dur - 1];
                let e = &edge[(n - dur) * stride + (d.slice_of(dur) * c_n + c) * c_n..][..c_n];
                let out = &mut g.terms[(dur - 1) * c_n..dur * c_n];
                if REBASE {
                    for ((o, s), e) in out.iter_mut().zip(src).zip(e) {
                        *o = s + e + shift;
                    }
                } else {
                    for ((o, s), e) in out.iter_mut().zip(src).zip(e) {
                        *o = s + e;
                    }
                }
            }
            g.terms[width..padded].fill(PAD);
            g.next[c] = reduce(&mut g.terms[..padded]);
        }
        // Rebase: the row's largest value becomes its base.
        let top = if REBASE {
            g.next.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b))
        } else {
            0.0
        };
        let slot = n % slots;
        bases[slot] = reference + top as f64;
        for (o, v) in states[slot * c_n..][..c_n].iter_mut().zip(&g.next) {
            *o = v - top;
        }
    }
    let last = (len - 1) % slots;
    let width = g.load_row(&states[last * c_n..(last + 1) * c_n], None);
    bases[last] + reduce(&mut g.terms[..width]) as f64
}

/// Entropy beta rows, `slots` of them: each row is a float64 base per half plus float32
/// residuals per label, `x[n, c] = base_x[n] + rx[n, c]` and likewise h.
///
/// Why: x and h grow about linearly in n (log Z and H of a 1000-position sequence are in the
/// thousands), where a float32's spacing is ~1e-4; the reverse pass needs differences of O(1)
/// between rows (`x_i − P`, `(h_i − x_i) − (H − P)`), and absolute values rounded at every
/// row made the gradient's error grow as T² (Entropy: 1e-3 of max |grad| at T = 1024, 1e-2
/// at 2048; Log's marginals 2e-3 at 2048). With a base per row every float32 stays O(K),
/// and the bases' differences are exact (after: within 1e-5 (Entropy) and 5e-5 (Log) of
/// max |grad| up to T = 2048).
pub(super) struct EntropyRows<'a> {
    pub x: &'a mut [f32],
    pub h: &'a mut [f32],
    pub base_x: &'a mut [f64],
    pub base_h: &'a mut [f64],
}

/// The Entropy forward of one sequence: pairs (x = log-weight, h = entropy) in `rows`.
/// Returns `(log Z, H)` in float64 (from float64 bases and float32 residuals).
pub(super) fn entropy_forward(
    d: ScanDims,
    edge: &[f32],
    len: usize,
    rows: EntropyRows,
    slots: usize,
    g: &mut Gather,
) -> (f64, f64) {
    let EntropyRows {
        x: states,
        h: states_h,
        base_x,
        base_h,
    } = rows;
    let c_n = d.labels;
    let stride = d.position_stride();
    states[..c_n].fill(0.0);
    states_h[..c_n].fill(0.0);
    (base_x[0], base_h[0]) = (0.0, 0.0);
    for n in 1..len {
        let durations = d.max_duration().min(n);
        let width = durations * c_n;
        let padded = padded(width);
        // This row is built relative to the previous row's bases.
        let (ref_x, ref_h) = (base_x[(n - 1) % slots], base_h[(n - 1) % slots]);
        for dur in 1..=durations {
            let slot = (n - dur) % slots;
            g.shift_x[dur - 1] = (base_x[slot] - ref_x) as f32;
            g.shift_h[dur - 1] = (base_h[slot] - ref_h) as f32;
        }
        for c in 0..c_n {
            for dur in 1..=durations {
                let slot = ((n - dur) % slots) * c_n;
                let (sx, sh) = (g.shift_x[dur - 1], g.shift_h[dur - 1]);
                let e = &edge[(n - dur) * stride + (d.slice_of(dur) * c_n + c) * c_n..][..c_n];
                let x = &mut g.terms[(dur - 1) * c_n..dur * c_n];
                for ((o, s), e) in x.iter_mut().zip(&states[slot..slot + c_n]).zip(e) {
                    *o = s + e + sx;
                }
                let h = &mut g.terms_h[(dur - 1) * c_n..dur * c_n];
                for (o, s) in h.iter_mut().zip(&states_h[slot..slot + c_n]) {
                    *o = s + sh;
                }
            }
            g.terms[width..padded].fill(PAD);
            g.terms_h[width..padded].fill(0.0);
            (g.next[c], g.next_h[c]) =
                entropy_sum(&mut g.terms[..padded], &mut g.terms_h[..padded]);
        }
        // Rebase: the row's largest values become its bases.
        let top_x = g.next.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
        let top_h = g.next_h.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
        let slot = n % slots;
        (base_x[slot], base_h[slot]) = (ref_x + top_x as f64, ref_h + top_h as f64);
        for (o, v) in states[slot * c_n..][..c_n].iter_mut().zip(&g.next) {
            *o = v - top_x;
        }
        for (o, v) in states_h[slot * c_n..][..c_n].iter_mut().zip(&g.next_h) {
            *o = v - top_h;
        }
    }
    let last = (len - 1) % slots;
    let rows = last * c_n..(last + 1) * c_n;
    let (x, h) = g.entropy_of_row(&states[rows.clone()], &states_h[rows]);
    (base_x[last] + x as f64, base_h[last] + h as f64)
}
