//! Worker pools kept for the process, one per thread count, shared by every CPU kernel of the
//! suites (the semiring scan, calibrate's memory kernels).
//!
//! Why kept: spawning threads for every call cost about 65 µs, more than a whole small scan
//! (B = 4, T = 16, K = 4, C = 3 takes 10 µs on one thread). Why per thread count: a kernel that
//! hands thread `i` its own chunk (`ThreadPool::broadcast`) needs a pool of exactly that many
//! threads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The pool of `threads` threads, built on first use and kept for the process. `None` when the
/// system refuses threads; the caller then runs on its own thread.
pub fn worker_pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Default::default).lock().ok()?;
    if let Some(pool) = pools.get(&threads) {
        return Some(pool.clone());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("replay-worker-{i}"))
        .build()
        .ok()?;
    let pool = Arc::new(pool);
    pools.insert(threads, pool.clone());
    Some(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pool_per_thread_count_is_kept_and_has_that_many_threads() {
        let a = worker_pool(3).unwrap();
        let b = worker_pool(3).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.current_num_threads(), 3);
        let c = worker_pool(2).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(c.current_num_threads(), 2);
    }
}
