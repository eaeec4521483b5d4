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
