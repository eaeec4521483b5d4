//! The float32 CPU kernel: sequences spread over the cores, each scanned by one thread.
//!
//! - [`CpuScan::forward`] streams over a ring buffer of the last `max_duration` beta rows
//!   (K·C floats): O(K·C) working memory per thread, whatever T.
//! - [`CpuScan::forward_saving`] keeps every beta row (`len·C` floats per sequence; both
//!   halves of the pairs for Entropy), what the reverse scan needs.
//! - [`CpuScan::backward_from`] is the reverse scan alone, from a [`SavedForward`]: the
//!   outside pass (Log), the argmax backtrack (Max), reverse mode through the entropy ⊕
//!   (Entropy). [`CpuScan::backward`] runs both.
//!
//! The split lets a benchmark time the backward alone (the scan suite's `Phase::Backward`) as
//! the seed does with autograd, and both together.

mod backward;
mod forward;
mod lanes;

pub use lanes::LANES;

use backward::{
    entropy_backward, log_backward, max_backward, Reverse, SavedEntropyRows, SavedRows,
};
use forward::{entropy_forward, scan_forward, EntropyRows, Gather};
use lanes::max_reduce;

use rayon::prelude::*;

use super::{ScanDims, ScanProblem, Semiring};
use crate::cpu::worker_pool::worker_pool;
use crate::kernels::KernelError;

/// The value of each sequence's scan and the gradient of their sum with respect to `edge`
/// (same layout as `edge`).
#[derive(Debug, Clone)]
pub struct ScanGradient {
    pub values: Vec<f32>,
    pub grad: Vec<f32>,
}

/// What a saving forward keeps for the backward: the values and every beta row, `T` rows of
/// C floats per sequence (rows past a sequence's length unused).
#[derive(Debug, Clone)]
pub struct SavedForward {
    semiring: Semiring,
    dims: ScanDims,
    values: Vec<f32>,
    /// The values before rounding to float32 (the Log backward needs log Z to float64).
    totals: Vec<f64>,
    /// `[B, T, C]`: the beta values (Log, Max) or the log-weight halves x (Entropy), as
    /// float32 residuals from their row's base.
    beta: Vec<f32>,
    /// `[B, T, C]`: Entropy's entropy halves h; empty otherwise.
    beta_h: Vec<f32>,
    /// `[B, T]`: the float64 base of each row (of its x half for Entropy).
    base_x: Vec<f64>,
    /// `[B, T]`: Entropy's float64 bases of the h halves; empty otherwise.
    base_h: Vec<f64>,
}

impl SavedForward {
    /// The scan's value per sequence (as [`CpuScan::forward`] returns).
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    pub fn semiring(&self) -> Semiring {
        self.semiring
    }

    /// Hands the values over, dropping the saved rows.
    pub fn into_values(self) -> Vec<f32> {
        self.values
    }
}

/// The CPU backend; `threads` sequences run at once.
#[derive(Debug, Clone, Copy)]
pub struct CpuScan {
    threads: usize,
}

impl Default for CpuScan {
    /// One thread per core.
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

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The scan's value per sequence: log Z (Log), the Viterbi score (Max), the entropy H
    /// (Entropy). Working memory: the ring buffer and the gather buffer, O(K·C) per thread.
    pub fn forward(&self, p: &ScanProblem, semiring: Semiring) -> Vec<f32> {
        let lse = lanes::fastest_lse();
        let dims = p.dims;
        let slots = dims.max_duration();
        let mut values = vec![0.0; dims.batch];
        let jobs = values.iter_mut().enumerate().collect();
        self.run(dims, jobs, |(b, value), ws| {
            let (edge, len) = (p.sequence_edge(b), p.lengths[b]);
            let ring = slots * dims.labels;
            ws.ring.resize(ring, 0.0);
            ws.ring_base.resize(2 * slots, 0.0);
            let (base, base_h) = ws.ring_base.split_at_mut(slots);
            let (states, g) = (&mut ws.ring[..], &mut ws.gather);
            *value = match semiring {
                Semiring::Log => scan_forward::<true>(dims, edge, len, states, base, slots, g, lse),
                Semiring::Max => {
                    scan_forward::<false>(dims, edge, len, states, base, slots, g, max_reduce)
                }
                Semiring::Entropy => {
                    ws.ring_h.resize(ring, 0.0);
                    let rows = EntropyRows {
                        x: states,
                        h: &mut ws.ring_h,
                        base_x: base,
                        base_h,
                    };
                    entropy_forward(dims, edge, len, rows, slots, g).1
                }
            } as f32;
        });
        values
    }

    /// The forward that keeps every beta row for [`CpuScan::backward_from`]: `B·T·C` floats
    /// and `B·T` float64 row bases (twice that for Entropy) besides the per-thread gather
    /// buffers. Memory it cannot get is [`KernelError::OutOfMemory`].
    pub fn forward_saving(
        &self,
        p: &ScanProblem,
        semiring: Semiring,
    ) -> Result<SavedForward, KernelError> {
        let dims = p.dims;
        let lse = lanes::fastest_lse();
        let (rows, bases) = (dims.positions * dims.labels, dims.positions);
        let mut totals = vec![0.0; dims.batch];
        let mut beta = zeroed(dims.batch * rows, "the saved beta rows")?;
        let mut base_x = zeroed(dims.batch * bases, "the saved row bases")?;
        let (mut beta_h, mut base_h) = match semiring {
            Semiring::Entropy => (
                zeroed(dims.batch * rows, "the saved entropy halves")?,
                zeroed(dims.batch * bases, "the saved row bases")?,
            ),
            _ => (Vec::new(), Vec::new()),
        };
        let jobs = totals
            .iter_mut()
            .zip(per_sequence(&mut beta, dims.batch))
            .zip(per_sequence(&mut base_x, dims.batch))
            .zip(per_sequence(&mut beta_h, dims.batch))
            .zip(per_sequence(&mut base_h, dims.batch))
            .enumerate()
            .collect();
        self.run(
            dims,
            jobs,
            |(b, ((((total, x), base_x), h), base_h)), ws| {
                let (edge, len) = (p.sequence_edge(b), p.lengths[b]);
                let g = &mut ws.gather;
                *total = match semiring {
                    Semiring::Log => scan_forward::<true>(dims, edge, len, x, base_x, len, g, lse),
                    Semiring::Max => {
                        scan_forward::<false>(dims, edge, len, x, base_x, len, g, max_reduce)
                    }
                    Semiring::Entropy => {
                        let rows = EntropyRows {
                            x,
                            h,
                            base_x,
                            base_h,
                        };
                        entropy_forward(dims, edge, len, rows, len, g).1
                    }
                };
            },
        );
        Ok(SavedForward {
            semiring,
            dims,
            values: totals.iter().map(|&t| t as f32).collect(),
            totals,
            beta,
            beta_h,
            base_x,
            base_h,
        })
    }

    /// The reverse scan alone: the gradient of the sum of the values with respect to `edge`
    /// (layout of `edge`) — the edge marginals (Log), the indicator of the best segmentation
    /// (Max; ties as the scan suite's `reference::viterbi_indicator`), ∂ΣH/∂edge (Entropy).
    /// `saved` must come from [`CpuScan::forward_saving`] on the same problem.
    pub fn backward_from(
        &self,
        p: &ScanProblem,
        saved: &SavedForward,
    ) -> Result<Vec<f32>, KernelError> {
        let dims = p.dims;
        if saved.dims != dims || saved.values.len() != dims.batch {
            return Err(KernelError::InvalidInput(format!(
                "the saved forward is of {:?}, the problem of {dims:?}",
                saved.dims
            )));
        }
        let rows = dims.positions * dims.labels;
        let mut grad = zeroed(dims.edge_len(), "the gradient")?;
        let jobs = per_sequence(&mut grad, dims.batch)
            .into_iter()
            .enumerate()
            .collect();
        self.run(dims, jobs, |(b, grad), ws| {
            let (edge, len) = (p.sequence_edge(b), p.lengths[b]);
            let beta = &saved.beta[b * rows..(b + 1) * rows];
            let base = &saved.base_x[b * dims.positions..(b + 1) * dims.positions];
            match saved.semiring {
                Semiring::Log => {
                    let inside = (SavedRows { beta, base }, saved.totals[b]);
                    log_backward(dims, edge, len, inside, grad, &mut ws.reverse)
                }
                Semiring::Max => max_backward(dims, edge, len, SavedRows { beta, base }, grad),
                Semiring::Entropy => {
                    let bases = b * dims.positions..(b + 1) * dims.positions;
                    let rows = SavedEntropyRows {
                        x: beta,
                        h: &saved.beta_h[b * rows..(b + 1) * rows],
                        base_x: base,
                        base_h: &saved.base_h[bases],
                    };
                    let (reverse, gather) = (&mut ws.reverse, &mut ws.gather);
                    entropy_backward(dims, edge, len, rows, grad, reverse, gather)
                }
            }
        });
        Ok(grad)
    }

    /// [`CpuScan::forward_saving`] then [`CpuScan::backward_from`]: the values and the
    /// gradient of their sum.
    pub fn backward(
        &self,
        p: &ScanProblem,
        semiring: Semiring,
    ) -> Result<ScanGradient, KernelError> {
        let saved = self.forward_saving(p, semiring)?;
        let grad = self.backward_from(p, &saved)?;
        Ok(ScanGradient {
            values: saved.into_values(),
            grad,
        })
    }

    /// Runs `work` on every job (one per sequence), round-robin over up to `threads` scoped
    /// threads, each with its own workspace.
    fn run<J, F>(&self, dims: ScanDims, jobs: Vec<J>, work: F)
    where
        J: Send,
        F: Fn(J, &mut Workspace) + Sync,
    {
        let threads = self.threads.min(jobs.len()).max(1);
        let small = terms(dims) < PARALLEL_MIN_TERMS;
        let pool = (threads > 1 && !small)
            .then(|| worker_pool(self.threads))
            .flatten();
        match pool {
            Some(pool) => pool.install(|| {
                jobs.into_par_iter()
                    .for_each_init(|| Workspace::new(dims), |ws, job| work(job, ws))
            }),
            None => {
                let mut ws = Workspace::new(dims);
                for job in jobs {
                    work(job, &mut ws);
                }
            }
        }
    }
}

/// Below this many ⊕ terms per call (B·T·(K−1)·C²) the scan runs on the calling thread:
/// handing work to the pool costs 20–30 µs, about what 4,000 terms take on one thread, and
/// measured on 2 cores one thread was faster up to about 15,000 terms (B = 4, T = 128, K = 4,
/// C = 3: 82 µs on one thread, 102 µs on two) and slower from about 30,000.
const PARALLEL_MIN_TERMS: usize = 20_000;

/// The ⊕ terms of a whole call: every position reads up to K − 1 earlier rows of C labels for
/// each of its C labels.
fn terms(d: ScanDims) -> usize {
    d.batch
        .saturating_mul(d.positions)
        .saturating_mul(d.max_duration())
        .saturating_mul(d.labels * d.labels)
}

struct Workspace {
    /// The streaming forward's ring of beta rows (and its entropy halves).
    ring: Vec<f32>,
    ring_h: Vec<f32>,
    /// The ring's float64 row bases: of the rows (x halves), then of the h halves.
    ring_base: Vec<f64>,
    gather: Gather,
    reverse: Reverse,
}

impl Workspace {
    fn new(d: ScanDims) -> Self {
        Workspace {
            ring: Vec::new(),
            ring_h: Vec::new(),
            ring_base: Vec::new(),
            gather: Gather::new(d),
            reverse: Reverse::default(),
        }
    }
}

/// Float types whose all-zero bit pattern is 0.0.
trait ZeroBits: Copy {}
impl ZeroBits for f32 {}
impl ZeroBits for f64 {}

/// `n` zeros, or [`KernelError::OutOfMemory`] naming `what` when the allocator refuses.
///
/// Zeroed by the allocator (calloc), as `vec![0.0; n]` is: a large block comes as fresh
/// zero pages that are never touched where nothing is written — most of a Max gradient,
/// which marks one path (writing the zeros cost a 56 MB memset per call, doubling Max's
/// forward-and-backward at T = 1024, K = 24, C = 12).
fn zeroed<T: ZeroBits>(n: usize, what: &str) -> Result<Vec<T>, KernelError> {
    let refused = || {
        KernelError::OutOfMemory(format!(
            "{what}: {:.2} GB",
            n as f64 * std::mem::size_of::<T>() as f64 / 1e9
        ))
    };
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| refused())?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout has a nonzero size; a non-null block from `alloc_zeroed` with the
    // layout of `[T; n]` holds n valid values of T (all-zero bits are 0.0 for a `ZeroBits`
    // float), and `Vec` frees it with that same layout (capacity n, the global allocator).
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout) as *mut T;
        if ptr.is_null() {
            return Err(refused());
        }
        Ok(Vec::from_raw_parts(ptr, n, n))
    }
}

/// `buf` cut into `batch` equal parts, one per sequence; `batch` empty slices when `buf` is
/// empty (a table the semiring does not use, or T = 1).
fn per_sequence<T>(buf: &mut [T], batch: usize) -> Vec<&mut [T]> {
    if buf.is_empty() {
        return (0..batch).map(|_| &mut [][..]).collect();
    }
    buf.chunks_mut(buf.len() / batch).collect()
}
