//! The same collective on every rank: kernels matched by process group and sequence number.
//!
//! A collective's kernel on one rank is matched with the kernels of the same process group
//! and sequence number (`Seq`) on the group's other ranks. Traces that record no sequence
//! number (PyTorch before ~2.4) are matched by order in the group instead: NCCL runs a
//! group's collectives in the same order on every rank, so the n-th of a group on one rank is
//! the n-th on each. Traces without process-group arguments put every collective kernel in one
//! group of all the ranks given.
//!
//! Ranks' clocks differ (they may be other hosts), but a collective ends at about the same
//! moment on every rank (each waits for the last to arrive, then they move the data together):
//! each rank's clock offset is the median, over the collectives it shares with the lowest rank,
//! of the difference of their ends. With the clocks aligned, the rank that starts a collective
//! last is the one the others wait for, and each rank's wait is how much earlier it started.

use std::collections::BTreeMap;

use serde::Serialize;

use super::collectives::CollectiveKernel;

/// How the kernels were matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// Every kernel by its recorded `Seq`.
    Sequence,
    /// By order within the process group (no `Seq` recorded).
    Order,
    /// Some by `Seq`, the rest by order.
    Mixed,
    /// No collective kernel on any rank.
    Nothing,
}

/// One process group's collectives across the ranks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupSummary {
    /// `Process Group Name` (`-` when the traces do not record it).
    pub name: String,
    /// The group's ranks among those given.
    pub ranks: Vec<u32>,
    /// Collectives on every rank of the group.
    pub matched: u64,
    /// Collectives missing on some rank of the group.
    pub unmatched: u64,
    /// Matched collectives whose ranks ran different collectives (`allreduce` on one,
    /// `broadcast` on another): the ranks' programs diverged.
    pub mismatched: u64,
}

/// One rank in the collectives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankWaits {
    pub rank: u32,
    /// Its collective kernels.
    pub collectives: u64,
    /// Its clock minus the lowest rank's, from the collectives' ends.
    pub clock_offset_us: f64,
    /// Matched collectives it started last (the others waited for it).
    pub arrived_last: u64,
    /// Time it waited in matched collectives for a later rank to arrive.
    pub waited_us: f64,
}

/// A collective that some rank of its group lacks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unmatched {
    pub process_group: String,
    /// The sequence number (recorded, or the order in the group).
    pub seq: i64,
    pub collective: String,
    pub present_on: Vec<u32>,
    pub missing_on: Vec<u32>,
}

/// The collectives of a job's ranks, matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectiveMatch {
    pub matched_by: MatchedBy,
    pub process_groups: Vec<GroupSummary>,
    /// Over matched collectives: the latest start minus the earliest, clocks aligned.
    pub arrival_skew_median_us: f64,
    pub arrival_skew_max_us: f64,
    pub ranks: Vec<RankWaits>,
    /// The first unmatched collectives (at most [`UNMATCHED_LISTED`]).
    pub unmatched: Vec<Unmatched>,
}

/// How many unmatched collectives the report lists.
pub const UNMATCHED_LISTED: usize = 20;

/// A collective's identity across ranks: (group, numbered by Seq?, number).
type Key = (String, bool, i64);

/// Matches the collective kernels of each rank (`(rank, kernels in time order)`).
pub fn match_collectives(ranks: &[(u32, &[CollectiveKernel])]) -> CollectiveMatch {
    let given: Vec<u32> = ranks.iter().map(|(r, _)| *r).collect();
    let mut by_key: BTreeMap<Key, BTreeMap<u32, &CollectiveKernel>> = BTreeMap::new();
    let mut members: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let (mut with_seq, mut without_seq) = (0u64, 0u64);
    for (rank, kernels) in ranks {
        let mut order: BTreeMap<String, i64> = BTreeMap::new();
        for kernel in kernels.iter() {
            let group = kernel.process_group.clone().unwrap_or_else(|| "-".into());
            let key = match kernel.seq {
                Some(seq) => {
                    with_seq += 1;
                    (group.clone(), true, seq)
                }
                None => {
                    without_seq += 1;
                    let n = order.entry(group.clone()).or_insert(0);
                    *n += 1;
                    (group.clone(), false, *n)
                }
            };
            let group_ranks = match &kernel.group_ranks {
                Some(r) if !r.is_empty() => {
                    r.iter().copied().filter(|r| given.contains(r)).collect()
                }
                _ => given.clone(),
            };
            members.entry(group).or_insert(group_ranks);
            by_key.entry(key).or_default().insert(*rank, kernel);
        }
    }
    let matched_by = match (with_seq, without_seq) {
        (0, 0) => MatchedBy::Nothing,
        (_, 0) => MatchedBy::Sequence,
        (0, _) => MatchedBy::Order,
        _ => MatchedBy::Mixed,
    };

    let mut groups: BTreeMap<String, GroupSummary> = members
        .iter()
        .map(|(name, ranks)| {
            (
                name.clone(),
                GroupSummary {
                    name: name.clone(),
                    ranks: ranks.clone(),
                    matched: 0,
                    unmatched: 0,
                    mismatched: 0,
                },
            )
        })
        .collect();
    let mut matched: Vec<&BTreeMap<u32, &CollectiveKernel>> = Vec::new();
    let mut unmatched = Vec::new();
    for ((group, _, seq), on) in &by_key {
        let Some(summary) = groups.get_mut(group) else {
            continue;
        };
        let missing: Vec<u32> = summary
            .ranks
            .iter()
            .copied()
            .filter(|r| !on.contains_key(r))
            .collect();
        if missing.is_empty() && on.len() >= 2 {
            summary.matched += 1;
            let mut names = on
                .values()
                .map(|k| k.collective.as_ref().unwrap_or(&k.name));
            let first = names.next();
            if names.any(|n| Some(n) != first) {
                summary.mismatched += 1;
            }
            matched.push(on);
        } else if !missing.is_empty() {
            summary.unmatched += 1;
            if unmatched.len() < UNMATCHED_LISTED {
                let any = on.values().next();
                unmatched.push(Unmatched {
                    process_group: group.clone(),
                    seq: *seq,
                    collective: any
                        .map(|k| k.collective.clone().unwrap_or_else(|| k.name.clone()))
                        .unwrap_or_default(),
                    present_on: on.keys().copied().collect(),
                    missing_on: missing,
                });
            }
        }
    }

    let offsets = clock_offsets(&given, &matched);
    let mut waits: BTreeMap<u32, (u64, i64)> = BTreeMap::new();
    let mut skews: Vec<i64> = Vec::new();
    for on in &matched {
        let aligned: Vec<(u32, i64)> = on
            .iter()
            .map(|(r, k)| (*r, k.start_ns - offsets.get(r).copied().unwrap_or(0)))
            .collect();
        let latest = aligned.iter().map(|(_, s)| *s).max().unwrap_or(0);
        let earliest = aligned.iter().map(|(_, s)| *s).min().unwrap_or(0);
        skews.push(latest - earliest);
        for (rank, start) in &aligned {
            let entry = waits.entry(*rank).or_default();
            if *start == latest {
                entry.0 += 1;
            }
            entry.1 += latest - start;
        }
    }
    skews.sort_unstable();
    CollectiveMatch {
        matched_by,
        process_groups: groups.into_values().collect(),
        arrival_skew_median_us: us(median_sorted(&skews)),
        arrival_skew_max_us: us(skews.last().copied().unwrap_or(0) as f64),
        ranks: ranks
            .iter()
            .map(|(rank, kernels)| {
                let (arrived_last, waited) = waits.get(rank).copied().unwrap_or_default();
                RankWaits {
                    rank: *rank,
                    collectives: kernels.len() as u64,
                    clock_offset_us: us(offsets.get(rank).copied().unwrap_or(0) as f64),
                    arrived_last,
                    waited_us: us(waited as f64),
                }
            })
            .collect(),
        unmatched,
    }
}

/// Each rank's clock minus the lowest rank's: the median difference of the ends of the
/// collectives they share (0 for a rank that shares none).
fn clock_offsets(
    ranks: &[u32],
    matched: &[&BTreeMap<u32, &CollectiveKernel>],
) -> BTreeMap<u32, i64> {
    let Some(&reference) = ranks.iter().min() else {
        return BTreeMap::new();
    };
    ranks
        .iter()
        .map(|&rank| {
            let mut differences: Vec<i64> = matched
                .iter()
                .filter_map(|on| Some(on.get(&rank)?.end_ns - on.get(&reference)?.end_ns))
                .collect();
            differences.sort_unstable();
            (rank, median_sorted(&differences).round() as i64)
        })
        .collect()
}

fn median_sorted(values: &[i64]) -> f64 {
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2] as f64,
        n => (values[n / 2 - 1] as f64 + values[n / 2] as f64) / 2.0,
    }
}

fn us(nanos: f64) -> f64 {
    nanos.round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(group: &str, seq: Option<i64>, name: &str, start: i64, end: i64) -> CollectiveKernel {
        CollectiveKernel {
            name: format!("ncclKernel_{name}"),
            collective: Some(name.into()),
            process_group: Some(group.into()),
            group_ranks: Some(vec![0, 1]),
            seq,
            start_ns: start,
            end_ns: end,
        }
    }

    #[test]
    fn a_late_rank_is_waited_for_and_clocks_are_aligned_on_the_ends() {
        // Rank 1's clock runs 1 ms ahead; it starts each collective 300 ns after rank 0.
        let r0 = vec![
            kernel("0", Some(1), "allreduce", 1_000, 2_000),
            kernel("0", Some(2), "allreduce", 5_000, 6_000),
        ];
        let r1 = vec![
            kernel("0", Some(1), "allreduce", 1_001_300, 1_002_000),
            kernel("0", Some(2), "allreduce", 1_005_300, 1_006_000),
            kernel("0", Some(3), "allreduce", 1_009_000, 1_010_000),
        ];
        let m = match_collectives(&[(0, &r0), (1, &r1)]);
        assert_eq!(m.matched_by, MatchedBy::Sequence);
        assert_eq!(m.process_groups[0].matched, 2);
        assert_eq!(m.process_groups[0].unmatched, 1);
        assert_eq!(m.unmatched[0].missing_on, vec![0]);
        assert_eq!(m.ranks[1].clock_offset_us, 1000.0);
        assert_eq!(m.ranks[1].arrived_last, 2);
        assert_eq!(m.ranks[0].arrived_last, 0);
        assert_eq!(m.ranks[0].waited_us, 0.6);
        assert_eq!(m.arrival_skew_max_us, 0.3);
    }

    #[test]
    fn without_seq_the_order_in_the_group_matches_and_divergence_shows() {
        let r0 = vec![
            kernel("0", None, "broadcast", 0, 10),
            kernel("0", None, "allreduce", 20, 30),
        ];
        let r1 = vec![
            kernel("0", None, "broadcast", 0, 10),
            kernel("0", None, "allgather", 20, 30),
        ];
        let m = match_collectives(&[(0, &r0), (1, &r1)]);
        assert_eq!(m.matched_by, MatchedBy::Order);
        assert_eq!(m.process_groups[0].matched, 2);
        assert_eq!(m.process_groups[0].mismatched, 1);
    }
}
