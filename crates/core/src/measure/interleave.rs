//! Interleaved rounds: measuring many things in several short rounds, in a shuffled order each
//! round, instead of each one in a single stretch.
//!
//! Why: on a shared machine (a cloud VM, a laptop) speed drifts in phases lasting seconds; a
//! plain matrix product was seen to run 2.7 ms for ten seconds and 3.3 ms for the next few in
//! one process. Measured in one stretch, each item's median describes whichever phase it fell
//! into, and two runs disagree by the size of the phases (up to 25 % here). Spread over rounds,
//! every item samples the whole run, so its median describes the run's typical speed, and the
//! items are comparable with each other. Shuffling avoids aliasing with periodic disturbances
//! (the same idea as Google Benchmark's `--benchmark_enable_random_interleaving`).

use std::time::Duration;

use super::runner::{measure_detailed, MeasureConfig};
use super::{Clock, MeasureError, Measurement, Target};

/// The order in which `n` items are measured in round `round`: the given order in round 0 (so
/// an interrupted first round has results in file order), a permutation seeded by the round
/// number after it, the same on every run.
pub fn round_order(n: usize, round: u32) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    if round == 0 {
        return order;
    }
    let mut rng = SplitMix64(0x5eed_0000_0000_0000 ^ u64::from(round));
    // Fisher-Yates.
    for i in (1..n).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// Each round's share of a per-item time budget.
pub fn round_budget(budget: Duration, rounds: u32) -> Duration {
    budget / rounds.max(1)
}

/// Each round's share of a minimum sample count, so the pooled rounds have at least `min`:
/// never fewer than 2, the least a round's own noise estimate needs.
pub fn round_min_samples(min: usize, rounds: u32) -> usize {
    min.div_ceil(rounds.max(1) as usize).max(2)
}

/// One target's rounds pooled into one measurement ([`Measurement::add_round`]), with each
/// round's own median (microseconds, in the order of the rounds), from which a figure that
/// is a difference of medians gets a spread of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Pooled {
    pub measurement: Measurement,
    pub round_medians: Vec<f64>,
}

/// Measures `targets` interleaved: round `r` measures every target once with `rounds[r]`
/// (its warm-up, its stopping rule, applied to that target alone), in [`round_order`]'s
/// order, and each target's rounds are pooled, so that every target sees the same stretch of
/// a drifting machine and the targets' medians compare (an implementation's stages and their
/// total, timed in turn rather than one after the other). A target that fails in a round is
/// left out of the later ones and its result is that error; the others go on. One result
/// per target, in the targets' order.
pub fn measure_interleaved(
    targets: &mut [&mut dyn Target],
    rounds: &[MeasureConfig],
    clock: &dyn Clock,
) -> Vec<Result<Pooled, MeasureError>> {
    let mut results: Vec<Option<Result<Pooled, MeasureError>>> =
        targets.iter().map(|_| None).collect();
    if rounds.is_empty() {
        return results
            .into_iter()
            .map(|_| {
                Err(MeasureError::InvalidConfig(
                    "interleaved rounds need at least one round".into(),
                ))
            })
            .collect();
    }
    for (round, config) in rounds.iter().enumerate() {
        let round = u32::try_from(round).unwrap_or(u32::MAX);
        for i in round_order(targets.len(), round) {
            if matches!(results[i], Some(Err(_))) {
                continue;
            }
            let measured = measure_detailed(&mut *targets[i], config, clock);
            results[i] = Some(match (results[i].take(), measured) {
                (_, Err(e)) => Err(e),
                (None, Ok(m)) => Ok(Pooled {
                    round_medians: vec![m.summary.median],
                    measurement: m,
                }),
                (Some(Ok(mut pool)), Ok(m)) => {
                    pool.round_medians.push(m.summary.median);
                    pool.measurement.add_round(m).map(|()| pool)
                }
                (Some(Err(e)), Ok(_)) => Err(e),
            });
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or(Err(MeasureError::NoSamples)))
        .collect()
}

/// SplitMix64 (Steele, Lea and Flood 2014): a tiny, well-mixed generator, enough to shuffle.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::measure::{Placement, SyntheticClock, SyntheticStream, Timing};
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A machine that runs slower (`slow` times) until `slow_until`, then at full speed, on
    /// a synthetic clock; every call logs which target made it.
    #[derive(Clone)]
    struct Machine {
        clock: SyntheticClock,
        slow: f64,
        slow_until: Duration,
        log: Rc<RefCell<Vec<usize>>>,
    }

    /// Work of `base` per call at full speed, on `machine`.
    struct Work {
        id: usize,
        base: Duration,
        machine: Machine,
        stream: SyntheticStream,
        fail_after: Option<usize>,
    }

    impl Work {
        fn new(id: usize, base_us: u64, machine: &Machine) -> Work {
            Work {
                id,
                base: Duration::from_micros(base_us),
                stream: SyntheticStream::on(&machine.clock),
                machine: machine.clone(),
                fail_after: None,
            }
        }
    }

    impl Target for Work {
        fn placement(&self) -> Placement<'_> {
            Placement::Stream(&self.stream)
        }
        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            for _ in 0..calls {
                let m = &self.machine;
                if self.fail_after == Some(m.log.borrow().iter().filter(|&&i| i == self.id).count())
                {
                    return Err(MeasureError::target("out of memory"));
                }
                let factor = if m.clock.now() < m.slow_until {
                    m.slow
                } else {
                    1.0
                };
                m.clock.advance(self.base.mul_f64(factor));
                m.log.borrow_mut().push(self.id);
            }
            Ok(())
        }
    }

    fn machine(slow: f64, slow_until_ms: u64) -> Machine {
        Machine {
            clock: SyntheticClock::new(),
            slow,
            slow_until: Duration::from_millis(slow_until_ms),
            log: Rc::new(RefCell::new(Vec::new())),
        }
    }

    /// Seed-style timing: 2 warm-up calls, then 10 samples of one call, in 10 rounds.
    fn ten_rounds() -> Vec<MeasureConfig> {
        Timing {
            rounds: Some(10),
            ..Timing::fixed(2, 10)
        }
        .round_configs()
    }

    #[test]
    fn every_target_gets_a_sample_in_every_round_in_the_rounds_order() {
        let m = machine(1.0, 0);
        let (mut a, mut b, mut c) = (
            Work::new(0, 100, &m),
            Work::new(1, 200, &m),
            Work::new(2, 300, &m),
        );
        let rounds = ten_rounds();
        let results = measure_interleaved(&mut [&mut a, &mut b, &mut c], &rounds, &m.clock);
        let log = m.log.borrow().clone();
        // Round 0: each target's warm-up and its sample, in the given order.
        assert_eq!(log[..9], [0, 0, 0, 1, 1, 1, 2, 2, 2]);
        // Each later round: one call of each target, in that round's order.
        for (r, calls) in log[9..].chunks(3).enumerate() {
            let order: Vec<usize> = round_order(3, r as u32 + 1);
            assert_eq!(calls, order.as_slice(), "round {}", r + 1);
        }
        assert_eq!(log.len(), 9 + 9 * 3);
        for (i, r) in results.into_iter().enumerate() {
            let pooled = r.unwrap();
            let s = &pooled.measurement.summary;
            assert_eq!(
                (s.samples, s.warmup_calls, s.rounds),
                (10, 2, 10),
                "target {i}"
            );
            assert_eq!(pooled.round_medians.len(), 10);
            assert_eq!(s.median, 100.0 * (i + 1) as f64);
        }
    }

    #[test]
    fn on_a_drifting_machine_interleaved_targets_keep_their_order_where_stretches_invert() {
        // A stage (10 ms) and the total it is part of (14 ms), on a machine 1.6 times slower
        // for its first 150 ms: timed one after the other, the stage falls in the slow stretch
        // and the total in the fast one, and the total comes out below its own stage.
        let one_stretch = Timing::fixed(2, 10).round_configs();
        let m = machine(1.6, 150);
        let (mut stage, mut total) = (Work::new(0, 10_000, &m), Work::new(1, 14_000, &m));
        let apart: Vec<f64> = [&mut stage, &mut total]
            .into_iter()
            .map(|t| {
                measure_interleaved(&mut [t], &one_stretch, &m.clock)[0]
                    .as_ref()
                    .unwrap()
                    .measurement
                    .summary
                    .median
            })
            .collect();
        assert!(apart[1] < apart[0], "the inversion this fixes: {apart:?}");
        // Interleaved, both sample the same stretches: the total stays above its stage.
        let m = machine(1.6, 150);
        let (mut stage, mut total) = (Work::new(0, 10_000, &m), Work::new(1, 14_000, &m));
        let together = measure_interleaved(&mut [&mut stage, &mut total], &ten_rounds(), &m.clock);
        let medians: Vec<f64> = together
            .iter()
            .map(|r| r.as_ref().unwrap().measurement.summary.median)
            .collect();
        assert!(medians[1] > medians[0], "{medians:?}");
        assert_eq!(medians, [10_000.0, 14_000.0]);
    }

    #[test]
    fn a_target_that_fails_is_left_out_and_the_others_go_on() {
        let m = machine(1.0, 0);
        let (mut a, mut b) = (Work::new(0, 100, &m), Work::new(1, 200, &m));
        // b's 5th call fails: warm-up 2 and round 0's sample, then rounds 1 and 2's.
        b.fail_after = Some(5);
        let results = measure_interleaved(&mut [&mut a, &mut b], &ten_rounds(), &m.clock);
        assert_eq!(results[0].as_ref().unwrap().measurement.summary.samples, 10);
        let err = results[1].as_ref().unwrap_err();
        assert_eq!(err.to_string(), "out of memory");
        assert_eq!(m.log.borrow().iter().filter(|&&i| i == 1).count(), 5);
    }

    #[test]
    fn no_rounds_is_an_error_for_every_target() {
        let m = machine(1.0, 0);
        let mut a = Work::new(0, 100, &m);
        let results = measure_interleaved(&mut [&mut a], &[], &m.clock);
        assert!(matches!(results[0], Err(MeasureError::InvalidConfig(_))));
        assert!(m.log.borrow().is_empty());
    }

    #[test]
    fn first_round_keeps_the_order() {
        assert_eq!(round_order(5, 0), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn later_rounds_are_permutations_that_differ_and_repeat_across_runs() {
        let mut seen = std::collections::HashSet::new();
        for round in 1..6 {
            let order = round_order(20, round);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..20).collect::<Vec<_>>(), "round {round}");
            assert_eq!(order, round_order(20, round), "deterministic");
            seen.insert(order);
        }
        assert_eq!(seen.len(), 5, "each round has its own order");
        assert_ne!(round_order(20, 1), round_order(20, 0));
    }

    #[test]
    fn small_and_empty_inputs() {
        assert!(round_order(0, 3).is_empty());
        assert_eq!(round_order(1, 3), vec![0]);
    }

    #[test]
    fn budget_and_min_samples_are_split_across_rounds() {
        assert_eq!(
            round_budget(Duration::from_millis(500), 5),
            Duration::from_millis(100)
        );
        assert_eq!(
            round_budget(Duration::from_millis(500), 0),
            Duration::from_millis(500)
        );
        assert_eq!(round_min_samples(10, 1), 10);
        assert_eq!(round_min_samples(10, 4), 3);
        assert_eq!(round_min_samples(10, 20), 2);
    }
}
