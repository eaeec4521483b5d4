//! Worker pools kept for the process, one per thread count, shared by every CPU kernel of the
//! suites (the semiring scan, calibrate's memory kernels).
//!
//! Why kept: spawning threads for every call cost about 65 µs, more than a whole small scan
//! (B = 4, T = 16, K = 4, C = 3 takes 10 µs on one thread). Why per thread count: a kernel that
//! hands thread `i` its own chunk (`ThreadPool::broadcast`) needs a pool of exactly that many
//! threads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

type Pools = OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>>;

/// The pool of `threads` threads, built on first use and kept for the process. `None` when the
/// system refuses threads; the caller then runs on its own thread.
pub fn worker_pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: Pools = OnceLock::new();
    kept(&POOLS, threads, || build(threads, "replay-worker"))
}

/// The pool of `threads` threads with thread `i` pinned to the `i`-th CPU this process may run
/// on, kept for the process; `None` where threads cannot be pinned (not Linux, more threads
/// than CPUs, the system refuses).
///
/// Why: a kernel that splits one call over every core waits for its slowest thread, and an
/// unpinned worker woken onto a busy core waits for the scheduler's next tick. On the 2-core
/// VM that replay is developed on, one of two unpinned workers started its chunk 2–5 ms late
/// in most 20 ms copies; pinned, both started within 0.1 ms. likwid-bench and STREAM's usual
/// runs (OMP_PROC_BIND) pin for the same reason.
pub fn pinned_worker_pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: Pools = OnceLock::new();
    kept(&POOLS, threads, || {
        let cpus = allowed_cpus()?;
        if threads == 0 || threads > cpus.len() {
            return None;
        }
        let pool = build(threads, "replay-pinned")?;
        // Pinned from inside each worker (the affinity call applies to the calling thread);
        // broadcast runs once on every thread, index i on thread i.
        let pinned = pool.broadcast(|ctx| pin_current_thread(cpus[ctx.index()]));
        pinned.iter().all(|&ok| ok).then_some(pool)
    })
}

fn kept(
    pools: &Pools,
    threads: usize,
    make: impl FnOnce() -> Option<rayon::ThreadPool>,
) -> Option<Arc<rayon::ThreadPool>> {
    let mut pools = pools.get_or_init(Default::default).lock().ok()?;
    if let Some(pool) = pools.get(&threads) {
        return Some(pool.clone());
    }
    let pool = Arc::new(make()?);
    pools.insert(threads, pool.clone());
    Some(pool)
}

fn build(threads: usize, name: &'static str) -> Option<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("{name}-{i}"))
        .build()
        .ok()
}

/// The CPUs this process may run on, in order.
#[cfg(target_os = "linux")]
pub fn allowed_cpus() -> Option<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect();
        (!cpus.is_empty()).then_some(cpus)
    }
}

#[cfg(not(target_os = "linux"))]
pub fn allowed_cpus() -> Option<Vec<usize>> {
    None
}

#[cfg(target_os = "linux")]
fn pin_current_thread(cpu: usize) -> bool {
    // SAFETY: as above; pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_current_thread(_cpu: usize) -> bool {
    false
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

    #[cfg(target_os = "linux")]
    #[test]
    fn pinned_workers_each_run_on_their_own_allowed_cpu() {
        let cpus = allowed_cpus().unwrap();
        let threads = cpus.len().min(2);
        let pool = pinned_worker_pool(threads).unwrap();
        assert!(Arc::ptr_eq(&pool, &pinned_worker_pool(threads).unwrap()));
        // SAFETY: sched_getcpu only reads which CPU the calling thread is on.
        let on: Vec<i32> = pool.broadcast(|_| unsafe { libc::sched_getcpu() });
        let want: Vec<i32> = cpus[..threads].iter().map(|&c| c as i32).collect();
        assert_eq!(on, want);
        assert!(pinned_worker_pool(cpus.len() + 1).is_none());
    }
}
