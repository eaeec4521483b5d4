//! How the fused CPU kernels spread their work: the process's kept worker pool of the asked
//! thread count (the one the scan kernel uses), or the calling thread where none can be had.

use crate::cpu::worker_pool::worker_pool;

/// Worker threads of the fused kernels: `requested`, or every CPU this process may use.
pub fn thread_count(requested: Option<usize>) -> usize {
    requested
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .max(1)
}

/// Runs `work` inside the pool of `threads` workers (so its rayon iterators use them).
pub fn in_pool<R: Send>(threads: usize, work: impl FnOnce() -> R + Send) -> R {
    match worker_pool(threads) {
        Some(pool) => pool.install(work),
        _ => work(),
    }
}
