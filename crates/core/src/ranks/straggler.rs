//! `replay predict` over a job's ranks: each rank's step time (measured, and predicted by the
//! timeline model from its own trace), the slowest rank and how far it trails the median rank
//! (the straggler), the slowest rank of each step, and the collectives matched across the
//! ranks ([`super::matching`]): who arrived last and how long the others waited.
//!
//! A synchronous job runs at its slowest rank's pace: a straggler's extra time is paid by every
//! rank, as waiting in the next collective.

use std::fmt::Write as _;

use serde::Serialize;

use super::collectives::CollectiveKernel;
use super::matching::{match_collectives, CollectiveMatch, MatchedBy};
use crate::predict::step_stats::{median, StepStatistics};
use crate::predict::Prediction;

/// One rank's prediction.
#[derive(Debug, Clone, Serialize)]
pub struct RankPrediction {
    pub rank: u32,
    /// The trace, as given.
    pub trace: String,
    pub prediction: Prediction,
    /// With `--steps all`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_statistics: Option<StepStatistics>,
    #[serde(skip)]
    pub collectives: Vec<CollectiveKernel>,
}

/// The rank that trails.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Straggler {
    pub rank: u32,
    pub trace: String,
    /// Its mean measured step time.
    pub measured_us: f64,
    /// The median over the ranks of their mean measured step time.
    pub median_us: f64,
    pub behind_median_us: f64,
    pub behind_median_percent: f64,
    /// Its predicted step time, and the median of the ranks' predictions.
    pub predicted_us: f64,
    pub median_predicted_us: f64,
}

/// One step (same `ProfilerStep#N` on every rank) across the ranks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobStep {
    pub name: String,
    /// The job's step: the slowest rank's.
    pub slowest_rank: u32,
    pub slowest_us: f64,
    pub median_us: f64,
}

/// The job's prediction: every rank, the straggler, the collectives.
#[derive(Debug, Clone, Serialize)]
pub struct JobPrediction {
    pub ranks: Vec<RankPrediction>,
    pub straggler: Straggler,
    /// Steps every rank has, in order.
    pub steps: Vec<JobStep>,
    pub collectives: CollectiveMatch,
}

fn round_us(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

impl JobPrediction {
    /// The job of these ranks (at least one; in rank order).
    pub fn new(mut ranks: Vec<RankPrediction>) -> JobPrediction {
        ranks.sort_by_key(|r| r.rank);
        let measured: Vec<f64> = ranks.iter().map(|r| r.prediction.measured_us).collect();
        let predicted: Vec<f64> = ranks.iter().map(|r| r.prediction.predicted_us).collect();
        let median_us = median(&measured);
        let slowest = ranks
            .iter()
            .max_by(|a, b| {
                a.prediction
                    .measured_us
                    .total_cmp(&b.prediction.measured_us)
                    // The lower rank of two equal ones.
                    .then_with(|| b.rank.cmp(&a.rank))
            })
            .map_or(0, |r| r.rank);
        let slow = ranks.iter().find(|r| r.rank == slowest);
        let slow_measured = slow.map_or(0.0, |r| r.prediction.measured_us);
        let straggler = Straggler {
            rank: slowest,
            trace: slow.map_or_else(String::new, |r| r.trace.clone()),
            measured_us: slow_measured,
            median_us: round_us(median_us),
            behind_median_us: round_us(slow_measured - median_us),
            behind_median_percent: if median_us > 0.0 {
                100.0 * (slow_measured - median_us) / median_us
            } else {
                0.0
            },
            predicted_us: slow.map_or(0.0, |r| r.prediction.predicted_us),
            median_predicted_us: round_us(median(&predicted)),
        };
        let kernels: Vec<(u32, &[CollectiveKernel])> = ranks
            .iter()
            .map(|r| (r.rank, r.collectives.as_slice()))
            .collect();
        let collectives = match_collectives(&kernels);
        let steps = job_steps(&ranks);
        JobPrediction {
            ranks,
            straggler,
            steps,
            collectives,
        }
    }

    /// The readable report.
    pub fn summary(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "job: {} ranks", self.ranks.len());
        let _ = writeln!(
            text,
            "  {:<5} {:>13} {:>13} {:>9}  trace",
            "rank", "predicted us", "measured us", "error %"
        );
        for rank in &self.ranks {
            let p = &rank.prediction;
            let _ = writeln!(
                text,
                "  {:<5} {:>13.1} {:>13.1} {:>+9.2}  {}",
                rank.rank, p.predicted_us, p.measured_us, p.error_percent, rank.trace
            );
        }
        let s = &self.straggler;
        let _ = writeln!(
            text,
            "straggler: rank {} ({}) {:.1} us per step, {:.1} us ({:+.2} %) behind the median rank's {:.1} us (predicted {:.1} us against a median {:.1} us)",
            s.rank,
            s.trace,
            s.measured_us,
            s.behind_median_us,
            s.behind_median_percent,
            s.median_us,
            s.predicted_us,
            s.median_predicted_us
        );
        if self.steps.len() > 1 {
            let _ = writeln!(
                text,
                "  {:<20} {:>13} {:>13} {:>13}",
                "step", "slowest rank", "slowest us", "median us"
            );
            for step in &self.steps {
                let _ = writeln!(
                    text,
                    "  {:<20} {:>13} {:>13.1} {:>13.1}",
                    step.name, step.slowest_rank, step.slowest_us, step.median_us
                );
            }
        }
        text.push_str(&collectives_summary(&self.collectives));
        for rank in &self.ranks {
            if let Some(stats) = &rank.step_statistics {
                let _ = write!(text, "rank {} {}", rank.rank, stats.summary());
            }
        }
        text
    }
}

/// Each step every rank has, with its slowest rank.
fn job_steps(ranks: &[RankPrediction]) -> Vec<JobStep> {
    let Some(first) = ranks.first() else {
        return Vec::new();
    };
    first
        .prediction
        .steps
        .iter()
        .filter_map(|step| {
            let times: Vec<(u32, f64)> = ranks
                .iter()
                .map(|r| {
                    r.prediction
                        .steps
                        .iter()
                        .find(|s| s.name == step.name)
                        .map(|s| (r.rank, s.measured_us))
                })
                .collect::<Option<_>>()?;
            let (slowest_rank, slowest_us) = times
                .iter()
                .copied()
                .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(&a.0)))?;
            let values: Vec<f64> = times.iter().map(|(_, t)| *t).collect();
            Some(JobStep {
                name: step.name.clone(),
                slowest_rank,
                slowest_us,
                median_us: round_us(median(&values)),
            })
        })
        .collect()
}

fn collectives_summary(m: &CollectiveMatch) -> String {
    let mut text = String::new();
    let how = match m.matched_by {
        MatchedBy::Nothing => {
            let _ = writeln!(text, "collectives: none in these traces");
            return text;
        }
        MatchedBy::Sequence => "by process group and sequence number (Seq)",
        MatchedBy::Order => {
            "by process group and order in the group (the traces record no sequence number)"
        }
        MatchedBy::Mixed => "by process group and Seq where recorded, else order in the group",
    };
    let matched: u64 = m.process_groups.iter().map(|g| g.matched).sum();
    let unmatched: u64 = m.process_groups.iter().map(|g| g.unmatched).sum();
    let mismatched: u64 = m.process_groups.iter().map(|g| g.mismatched).sum();
    let _ = writeln!(
        text,
        "collectives: {matched} matched across the ranks {how}; {unmatched} unmatched, {mismatched} with different collectives on different ranks"
    );
    for group in &m.process_groups {
        let _ = writeln!(
            text,
            "  process group {}: ranks {:?}, {} matched, {} unmatched",
            group.name, group.ranks, group.matched, group.unmatched
        );
    }
    let _ = writeln!(
        text,
        "  arrival skew (clocks aligned on the collectives' ends): median {:.1} us, max {:.1} us",
        m.arrival_skew_median_us, m.arrival_skew_max_us
    );
    let _ = writeln!(
        text,
        "  {:<5} {:>12} {:>13} {:>12} {:>16}",
        "rank", "collectives", "arrived last", "waited us", "clock offset us"
    );
    for rank in &m.ranks {
        let _ = writeln!(
            text,
            "  {:<5} {:>12} {:>13} {:>12.1} {:>16.1}",
            rank.rank, rank.collectives, rank.arrived_last, rank.waited_us, rank.clock_offset_us
        );
    }
    for missing in &m.unmatched {
        let _ = writeln!(
            text,
            "  unmatched: {} #{} of group {} on ranks {:?}, missing on {:?}",
            missing.collective,
            missing.seq,
            missing.process_group,
            missing.present_on,
            missing.missing_on
        );
    }
    text
}
