//! The seed's streaming reference (`SemiMarkov._dp_scan_streaming` of torch-semimarkov,
//! commit fe28273) in libtorch: a ring buffer of the last K betas, per position one
//! `index_select` of the betas, the edges of the segments ending there, ⊕ over the source
//! label and then over the duration, a `where` that keeps the final beta of the sequences
//! ending there, and an in-place write into the ring. Autograd records all of it (the seed
//! always builds the graph), so the backward is libtorch's autograd through these ops.
//!
//! One change from the seed, for the backward's sake: the seed gathers the edges with advanced
//! indexing at every position, and the backward of each such gather writes a gradient the size
//! of the whole edge tensor, so its backward costs O(T²·K·C²) (at T = 1024 one call took 0.45 s
//! to 52 s here, and the default grid's torch half would run for over an hour). Here the edges
//! are gathered once, in the order the scan reads them, and split per position (`unbind`, whose
//! backward stacks once): the same values and the same forward ops per position, a backward
//! linear in T. The baseline is therefore faster than the seed's Python, never slower, and
//! every ratio against it is conservative.
//!
//! The seed also checks `max(lengths) <= N` and `max(lengths) == N` with Python's `max` over
//! the lengths tensor, which on a GPU synchronises once per sequence; that is input validation,
//! done once by [`crate::suites::scan::ScanProblem`] here, and not repeated on every call.

use tch::{Kind, TchError, Tensor};

use super::semiring_tensors::SemiringTensors;

/// Runs the scan on `edge` `[B, T−1, K, C, C]` (float32) with `lengths` `[B]` (int64, on the
/// same device) and returns the value per sequence `[B]` (log Z, Viterbi score or entropy),
/// with the autograd graph back to `edge`, which it marks as requiring grad (as the seed does
/// to its caller's tensor).
pub fn streaming_scan(
    semiring: SemiringTensors,
    edge: &Tensor,
    lengths: &Tensor,
) -> Result<Tensor, TchError> {
    let device = edge.device();
    let (batch, positions_1, durations, labels, _) = edge.size5()?;
    let positions = positions_1 + 1;
    let ssize = semiring.size();

    // The seed marks the caller's edges as requiring grad (`_get_dimension`), even in its
    // forward phase, then converts them and marks the converted ones too (a no-op by then):
    // the graph is always built, back to the caller's tensor.
    let _ = edge.shallow_clone().f_requires_grad_(true)?;
    let mut edge = semiring.convert(edge)?;
    let _ = edge.f_requires_grad_(true)?;

    let options = (Kind::Float, device);
    let beta0 = semiring.fill(
        &Tensor::f_zeros([ssize, batch, labels], options)?,
        semiring.one(),
    )?;

    // beta_hist[.., (head − (d − 1)) mod K, ..] holds beta[n − d]; beta[n − 1] sits at `head`.
    let ring_len = durations;
    let beta_hist = semiring.fill(
        &Tensor::f_zeros([ssize, batch, ring_len, labels], options)?,
        semiring.zero(),
    )?;
    beta_hist.f_select(2, 0)?.f_copy_(&beta0)?;
    let mut head: i64 = 0;

    let mut final_beta = semiring.fill(&beta0.f_zeros_like()?, semiring.zero())?;
    let ends_at_first = lengths.f_eq(1)?.f_view_([1, batch, 1])?;
    final_beta = beta0.f_where_self(&ends_at_first, &final_beta)?;

    // Durations 1..=max(K − 1, 1): K = 1 still has duration 1, read from slice 0.
    let max_duration = (durations - 1).max(1);
    let all_durations = Tensor::f_arange_start(1, max_duration + 1, (Kind::Int64, device))?;
    let ending_here = edges_by_end(&edge, positions, max_duration, durations)?;
    for n in 1..positions {
        let k_eff = (durations - 1).min(n).max(1);
        let dur = all_durations.f_slice(0, 0, k_eff, 1)?;
        let ring_idx = dur
            .f_sub_scalar(1)?
            .f_rsub_scalar(head)?
            .f_remainder(ring_len)?;
        let beta_prev = beta_hist.f_index_select(2, &ring_idx)?; // [S, B, k_eff, C]

        // edge[.., n − d, min(d, K − 1), ..] for d = 1..=k_eff, as the seed's gather reads it.
        let edge_slice = ending_here[(n - 1) as usize].f_slice(2, 0, k_eff, 1)?; // [S, B, k_eff, C, C]

        // ⊕ over the source label (last axis), then over the duration.
        let scores = semiring.sum(&beta_prev.f_unsqueeze(-2)?.f_add(&edge_slice)?, -1)?;
        let beta_n = semiring.sum(&scores, 2)?; // [S, B, C]

        let ends_here = lengths.f_eq(n + 1)?.f_view_([1, batch, 1])?;
        final_beta = beta_n.f_where_self(&ends_here, &final_beta)?;

        head = (head + 1) % ring_len;
        beta_hist.f_select(2, head)?.f_copy_(&beta_n)?;
    }

    let v = semiring.sum(&final_beta, -1)?; // [S, B]
    semiring.unconvert(&v)
}

/// The edges of the segments that end at each position, gathered once: element `n − 1` of the
/// result is `[S, B, D, C, C]` with `[.., d − 1, ..] = edge[.., n − d, min(d, K − 1), ..]` for
/// `d = 1..=D` (`D` = the longest duration; entries with `n − d < 0` repeat position 0 and are
/// never read, since position `n` reads only `d ≤ n`).
fn edges_by_end(
    edge: &Tensor,
    positions: i64,
    max_duration: i64,
    durations: i64,
) -> Result<Vec<Tensor>, TchError> {
    let device = edge.device();
    let ends = Tensor::f_arange_start(1, positions, (Kind::Int64, device))?.f_view([-1, 1])?;
    let lengths =
        Tensor::f_arange_start(1, max_duration + 1, (Kind::Int64, device))?.f_view([1, -1])?;
    let starts = ends.f_sub(&lengths)?.f_clamp_min(0)?; // [T−1, D]
    let slices = lengths
        .f_clamp_max(durations - 1)?
        .f_expand([positions - 1, max_duration], false)?;
    let gathered = edge.f_index(&[None, None, Some(&starts), Some(&slices)])?; // [S, B, T−1, D, C, C]
    gathered.f_unbind(2)
}
