//! One scan problem: the dimensions, the edge log-potentials and the per-sequence lengths,
//! checked once so that the kernels can index without bounds surprises.

use crate::kernels::KernelError;

/// `B` sequences of up to `T` positions, durations `0..K` (slice 0 unused unless `K == 1`)
/// and `C` labels; serialized in the seed's letters, as `replay scan` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ScanDims {
    #[serde(rename = "B")]
    pub batch: usize,
    #[serde(rename = "T")]
    pub positions: usize,
    #[serde(rename = "K")]
    pub durations: usize,
    #[serde(rename = "C")]
    pub labels: usize,
}

impl ScanDims {
    /// Floats of one sequence's edge block `[T−1, K, C, C]`.
    pub fn sequence_stride(&self) -> usize {
        self.positions.saturating_sub(1) * self.position_stride()
    }

    /// Floats of one position's block `[K, C, C]`.
    pub fn position_stride(&self) -> usize {
        self.durations * self.labels * self.labels
    }

    /// Floats of the whole edge tensor `[B, T−1, K, C, C]`.
    pub fn edge_len(&self) -> usize {
        self.batch * self.sequence_stride()
    }

    /// The longest duration a segment can have: `K − 1`, or 1 when `K == 1` (the seed's
    /// `max(1, min(K−1, n))`).
    pub fn max_duration(&self) -> usize {
        self.durations.saturating_sub(1).max(1)
    }

    /// The slice of the K axis that holds duration `d`. The seed clamps the duration index to
    /// `K − 1`, which matters only for `K == 1`: its single duration 1 reads slice 0.
    pub fn slice_of(&self, duration: usize) -> usize {
        duration.min(self.durations - 1)
    }

    /// Flat index of `edge[b][n][k][c][c']`.
    pub fn index(&self, b: usize, n: usize, k: usize, c: usize, c_src: usize) -> usize {
        b * self.sequence_stride()
            + n * self.position_stride()
            + (k * self.labels + c) * self.labels
            + c_src
    }
}

/// A checked scan input: `edge` is `[B, T−1, K, C, C]` contiguous, `lengths[b]` in `1..=T`.
#[derive(Debug, Clone)]
pub struct ScanProblem<'a> {
    pub dims: ScanDims,
    pub edge: &'a [f32],
    pub lengths: Vec<usize>,
}

impl<'a> ScanProblem<'a> {
    /// Checks that the pieces fit; `lengths` defaults to `T` for every sequence. Unlike the
    /// seed we do not require one sequence to have the full length `T`.
    pub fn new(
        dims: ScanDims,
        edge: &'a [f32],
        lengths: Option<&[usize]>,
    ) -> Result<Self, KernelError> {
        let ScanDims {
            batch,
            positions,
            durations,
            labels,
        } = dims;
        if batch == 0 || positions == 0 || durations == 0 || labels == 0 {
            return Err(KernelError::InvalidInput(format!(
                "every dimension must be at least 1 (B={batch}, T={positions}, K={durations}, C={labels})"
            )));
        }
        if edge.len() != dims.edge_len() {
            return Err(KernelError::InvalidInput(format!(
                "edge has {} values, [B={batch}, T−1={}, K={durations}, C={labels}, C={labels}] needs {}",
                edge.len(),
                positions - 1,
                dims.edge_len()
            )));
        }
        let lengths = match lengths {
            None => vec![positions; batch],
            Some(given) => {
                if given.len() != batch {
                    return Err(KernelError::InvalidInput(format!(
                        "{} lengths for {batch} sequences",
                        given.len()
                    )));
                }
                if let Some((b, &len)) = given
                    .iter()
                    .enumerate()
                    .find(|(_, &l)| l == 0 || l > positions)
                {
                    return Err(KernelError::InvalidInput(format!(
                        "length {len} of sequence {b} is outside 1..={positions}"
                    )));
                }
                given.to_vec()
            }
        };
        Ok(ScanProblem {
            dims,
            edge,
            lengths,
        })
    }

    /// The edge block `[T−1, K, C, C]` of sequence `b`.
    pub fn sequence_edge(&self, b: usize) -> &'a [f32] {
        let stride = self.dims.sequence_stride();
        &self.edge[b * stride..(b + 1) * stride]
    }
}
