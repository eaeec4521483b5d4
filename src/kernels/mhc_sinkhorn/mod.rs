//! `cuda/mhc_sinkhorn.cu` and its CPU twin: stage 2 of the mHC pipeline, every n×n matrix of
//! logits made doubly stochastic by Sinkhorn-Knopp, fused on the CPU ([`cpu`]) and launched on
//! a GPU ([`cuda`]), over the element types both store ([`element`]). The mHC suite
//! (`suites::mhc`) runs them on libtorch tensors and checks them against torch's stage.

pub mod cpu;
pub mod cuda;
pub mod element;

pub use cpu::MAX_STREAMS;
pub use element::{Element, MhcDtype};

/// The seed's Sinkhorn iterations (`MHC(tmax=20)`).
pub const SINKHORN_ITERS: usize = 20;
/// Added to every column and row sum before dividing, as the seed does.
pub const SINKHORN_EPS: f32 = 1e-8;

/// Runs `work` inside the process's kept pool of `threads` workers (so its rayon iterators
/// use them), or on the calling thread where none can be had: how the fused CPU kernels
/// spread their work.
pub fn in_pool<R: Send>(threads: usize, work: impl FnOnce() -> R + Send) -> R {
    match crate::cpu::worker_pool::worker_pool(threads) {
        Some(pool) => pool.install(work),
        _ => work(),
    }
}
