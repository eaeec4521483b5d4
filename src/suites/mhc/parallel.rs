//! How the fused CPU kernels spread their work: the process's kept worker pool of the asked
//! thread count (the one the scan kernel uses), or the calling thread where none can be had
//! ([`in_pool`], with the kernels in [`crate::kernels::mhc_sinkhorn`]).

pub use crate::kernels::mhc_sinkhorn::in_pool;

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
