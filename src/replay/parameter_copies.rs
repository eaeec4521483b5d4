//! How many copies of a call's parameters an isolated replay goes round.
//!
//! In a forward pass each layer's weights are read once per pass: a model larger than the
//! last-level cache streams them from memory. Replayed alone over and over, one call would
//! find its weights in the cache and be predicted too fast, so tier 2 (a GEMM's weight) and
//! tier 3 (an op's `weight`, `bias`, ... arguments) use copies in turn, enough to cover twice
//! the last-level cache ([`weight_copies`]).
//!
//! A copy only matters if a call reads it: a measurement that makes 3 calls reads at most 3
//! copies, whatever the cache. So the copies are also bounded by the calls the unit's
//! measurement can make ([`CopyBudget`]): its longest time (a round's hard cap) over one
//! call's time, read from the call every replay makes up front to check that libtorch takes
//! it. A 30522 × 512 bfloat16 weight (31 MB) on a CPU reporting a 300 MiB cache wanted 21
//! copies, made in every round: with `--max-time 0.01`, whose rounds measure one or two
//! calls, that was 19 s of setup for 10 ms of budget.

use std::time::{Duration, Instant};

use replay_core::measure::stopping::HardCap;

/// At most this many copies, however small the parameters.
pub const MAX_COPIES: u64 = 64;
/// All the copies of one unit's parameters hold at most this many bytes (and at most a
/// quarter of the memory replay allows itself, `--max-memory`).
pub const MAX_COPY_BYTES: u64 = 1 << 30;
/// The calls a measurement can make are estimated from one call's time with this margin:
/// the call made up front is usually the slowest (first touch of its output, lazy setup), and
/// too few copies would let a weight come back from the cache.
pub const CALL_MARGIN: f64 = 2.0;

/// How many copies of a `bytes`-sized parameter set to use in turn so that, as in a forward
/// pass, the parameters come from memory rather than from the last-level cache: enough
/// copies to cover twice the cache, at most [`MAX_COPIES`] and at most `max_bytes` in all.
pub fn copies_for_cache(bytes: u64, cache_bytes: u64, max_bytes: u64) -> u64 {
    if bytes == 0 {
        return 1;
    }
    let wanted = (2 * cache_bytes).div_ceil(bytes).clamp(1, MAX_COPIES);
    let affordable = (max_bytes / bytes).max(1);
    wanted.min(affordable)
}

/// [`copies_for_cache`] with this machine's last-level cache (32 MiB when it cannot be read)
/// and [`MAX_COPY_BYTES`].
pub fn weight_copies(bytes: u64) -> usize {
    let llc = crate::device::CpuInfo::detect()
        .last_level_cache_bytes()
        .unwrap_or(32 << 20);
    copies_for_cache(bytes, llc, MAX_COPY_BYTES) as usize
}

/// What bounds the parameter copies of one replay unit besides the cache: the calls its
/// measurement can make, and memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyBudget {
    /// The longest one measurement of the unit may run: a round's hard cap (four times its
    /// share of `--max-time`).
    pub measurement: Duration,
    /// The most bytes all the copies may hold.
    pub max_bytes: u64,
}

impl CopyBudget {
    /// No bound from time, [`MAX_COPY_BYTES`] of memory: a target made outside a measured
    /// run (`selftest`, tests).
    pub const UNTIMED: CopyBudget = CopyBudget {
        measurement: Duration::MAX,
        max_bytes: MAX_COPY_BYTES,
    };

    /// The budget of a unit measured in rounds of `round_budget` each (the hard cap of the
    /// measurement core's default stopping rule: `HardCap::for_budget`), with
    /// [`MAX_COPY_BYTES`] or a quarter of `--max-memory`, whichever is less.
    pub fn for_round(round_budget: Duration) -> CopyBudget {
        CopyBudget {
            measurement: HardCap::for_budget(round_budget).max_time,
            max_bytes: MAX_COPY_BYTES.min(super::memory_limit::limit() / 4),
        }
    }

    /// The calls a measurement of calls taking `one_call` each can make, with [`CALL_MARGIN`]
    /// (unbounded for a call too quick to time).
    pub fn calls(&self, one_call: Duration) -> u64 {
        if one_call.is_zero() || self.measurement == Duration::MAX {
            return u64::MAX;
        }
        let calls = self.measurement.as_secs_f64() * CALL_MARGIN / one_call.as_secs_f64();
        // `as` saturates; one more for the call made up front.
        (calls.ceil() as u64).saturating_add(1)
    }

    /// Copies of a `bytes`-sized parameter set whose call took `one_call`, on a machine with
    /// a `cache_bytes` last-level cache: [`copies_for_cache`], never more than the calls the
    /// measurement can make.
    pub fn copies_with_cache(&self, bytes: u64, one_call: Duration, cache_bytes: u64) -> usize {
        let for_cache = copies_for_cache(bytes, cache_bytes, self.max_bytes);
        for_cache.min(self.calls(one_call)).max(1) as usize
    }

    /// [`Self::copies_with_cache`] with this machine's last-level cache.
    pub fn copies(&self, bytes: u64, one_call: Duration) -> usize {
        let llc = crate::device::CpuInfo::detect()
            .last_level_cache_bytes()
            .unwrap_or(32 << 20);
        self.copies_with_cache(bytes, one_call, llc)
    }
}

/// Runs `call` once (the call every replay makes up front, to check that libtorch takes it)
/// and says how long it took: setup's estimate of a call, not a measurement (those go through
/// [`crate::measure`]).
pub fn first_call<T, E>(call: impl FnOnce() -> Result<T, E>) -> Result<(T, Duration), E> {
    let start = Instant::now();
    let out = call()?;
    Ok((out, start.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn copies_cover_twice_the_cache_within_the_caps() {
        // 1 MiB against 32 MiB: 64 copies.
        assert_eq!(copies_for_cache(MIB, 32 * MIB, MAX_COPY_BYTES), 64);
        // 31.25 MB (30522 x 512 bfloat16) against 300 MiB: 21 copies.
        let lm_head = 30522 * 512 * 2;
        assert_eq!(copies_for_cache(lm_head, 300 * MIB, MAX_COPY_BYTES), 21);
        // Larger than the cap: one.
        assert_eq!(copies_for_cache(1 << 30, 300 * MIB, MAX_COPY_BYTES), 1);
        assert_eq!(copies_for_cache(0, 300 * MIB, MAX_COPY_BYTES), 1);
        // The memory cap.
        assert_eq!(copies_for_cache(lm_head, 300 * MIB, 4 * lm_head), 4);
    }

    #[test]
    fn copies_never_outnumber_the_calls_the_measurement_can_make() {
        let lm_head = 30522 * 512 * 2;
        let llc = 300 * MIB;
        // `--max-time 0.01` in 5 rounds: 2 ms a round, 8 ms its hard cap; a 50 ms call.
        let tiny = CopyBudget {
            measurement: HardCap::for_budget(Duration::from_millis(2)).max_time,
            max_bytes: MAX_COPY_BYTES,
        };
        assert_eq!(tiny.measurement, Duration::from_millis(8));
        assert_eq!(tiny.calls(Duration::from_millis(50)), 2);
        assert_eq!(
            tiny.copies_with_cache(lm_head, Duration::from_millis(50), llc),
            2
        );
        // The default 0.5 s in 5 rounds (400 ms cap): a 5 ms call keeps every copy the cache
        // asks for; a 100 ms one, 9.
        let default = CopyBudget {
            measurement: Duration::from_millis(400),
            max_bytes: MAX_COPY_BYTES,
        };
        assert_eq!(
            default.copies_with_cache(lm_head, Duration::from_millis(5), llc),
            21
        );
        assert_eq!(
            default.copies_with_cache(lm_head, Duration::from_millis(100), llc),
            9
        );
        // Untimed, or a call too quick to time: the cache decides.
        assert_eq!(
            CopyBudget::UNTIMED.copies_with_cache(lm_head, Duration::from_secs(10), llc),
            21
        );
        assert_eq!(tiny.copies_with_cache(lm_head, Duration::ZERO, llc), 21);
        // However slow the call, two: the measurement's warm-up call and its one sample.
        assert_eq!(
            tiny.copies_with_cache(lm_head, Duration::from_secs(1000), llc),
            2
        );
        // A parameter set larger than the cap: one, whatever the time allows.
        assert_eq!(
            default.copies_with_cache(MAX_COPY_BYTES, Duration::from_millis(1), llc),
            1
        );
    }

    #[test]
    fn the_first_call_is_run_once_and_timed() {
        let mut ran = 0;
        let (value, took) = first_call(|| {
            ran += 1;
            std::thread::sleep(Duration::from_millis(20));
            Ok::<_, ()>(7)
        })
        .unwrap();
        assert_eq!((value, ran), (7, 1));
        assert!(took >= Duration::from_millis(20), "{took:?}");
        assert_eq!(first_call(|| Err::<(), _>("no")), Err("no"));
    }
}
