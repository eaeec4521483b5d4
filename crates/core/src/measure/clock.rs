//! Time sources for the measurement core.
//!
//! The core reads a clock only to enforce the time budget and to report how long a
//! measurement took; the work itself is timed by a [`Timer`](super::Timer). Keeping the
//! clock behind a trait lets tests drive the whole runner (warm-up, batching, stopping rules)
//! with simulated time, deterministically and instantly.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A monotonic time source.
pub trait Clock {
    /// Time since an arbitrary, fixed origin. Never decreases.
    fn now(&self) -> Duration;
}

/// The real monotonic clock (`std::time::Instant`), with its origin at construction.
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    origin: Instant,
}

impl MonotonicClock {
    pub fn new() -> Self {
        MonotonicClock {
            origin: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A clock that only moves when told to: a fake workload advances it by the time its work
/// "took". Clones share the same time, so the runner and the fake target can each hold one.
///
/// Time is kept in whole nanoseconds; advancing saturates instead of wrapping, so a runaway
/// test cannot make the clock go backwards.
#[derive(Debug, Clone, Default)]
pub struct SyntheticClock {
    nanos: Arc<AtomicU64>,
}

impl SyntheticClock {
    pub fn new() -> Self {
        Self::default()
    }

    /// Move the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let by = duration_to_nanos(by);
        // fetch_update instead of fetch_add so that overflow saturates.
        let _ = self
            .nanos
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
                Some(now.saturating_add(by))
            });
    }
}

impl Clock for SyntheticClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::SeqCst))
    }
}

fn duration_to_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_clock_is_shared_between_clones_and_only_moves_when_advanced() {
        let clock = SyntheticClock::new();
        let other = clock.clone();
        assert_eq!(clock.now(), Duration::ZERO);
        other.advance(Duration::from_micros(7));
        assert_eq!(clock.now(), Duration::from_micros(7));
        assert_eq!(clock.now(), Duration::from_micros(7));
        clock.advance(Duration::MAX);
        assert_eq!(other.now(), Duration::from_nanos(u64::MAX));
    }

    #[test]
    fn monotonic_clock_counts_from_its_construction_in_real_time() {
        // Between the test's own instants, so exact by construction: the reading after a
        // 20 ms sleep is at least 20 ms (sleep never returns early) and at most the time
        // since just before the clock was made. A clock counting from elsewhere (the
        // process's start, the epoch) or in another unit fails one of the two.
        let before = Instant::now();
        let clock = MonotonicClock::new();
        std::thread::sleep(Duration::from_millis(20));
        let reading = clock.now();
        let bound = before.elapsed();
        assert!(reading >= Duration::from_millis(20), "{reading:?}");
        assert!(reading <= bound, "{reading:?} > {bound:?}");
        // Copies share the origin.
        let copy = clock;
        assert!(copy.now() >= reading);
    }
}
