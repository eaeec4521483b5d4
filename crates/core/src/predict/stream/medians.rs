//! The trace's typical delays ([`TypicalDelays`]) over every launched activity, as
//! [`crate::predict::delays`] measures them in memory, without holding the samples: each
//! median is the middle of a sorted stream of samples on disk. The gap's samples depend on
//! the typical latency, so the activities that may give one are kept (on disk) until the
//! latency is known.

use std::cmp::Ordering;

use crate::signature::fold::sorter::PushSorter;

use crate::predict::delays::{median_position, LaunchedActivity, TypicalDelays};
use crate::signature::fold::sorter::sorter;

use super::record::Sample;

type SampleOrder = fn(&Sample, &Sample) -> Ordering;
type SampleSorter = PushSorter<Sample, SampleOrder>;

fn by_value(a: &Sample, b: &Sample) -> Ordering {
    a.cmp(b)
}

/// Where the delay samples go as the activities pass.
pub struct SampleSink {
    records_in_memory: usize,
    dir: std::path::PathBuf,
    latencies: SampleSorter,
    latency_count: u64,
    /// (start, released, previous end) of each activity with work before it on its stream.
    gap_candidates: SampleSorter,
}

impl SampleSink {
    pub fn new(records_in_memory: usize, dir: &std::path::Path) -> SampleSink {
        SampleSink {
            records_in_memory,
            dir: dir.to_path_buf(),
            latencies: sorter(records_in_memory, dir, "latencies").pushed_by(by_value as _),
            latency_count: 0,
            gap_candidates: sorter(records_in_memory, dir, "gap_candidates")
                .pushed_by(by_value as _),
        }
    }

    /// Takes one launched activity.
    pub fn add(&mut self, activity: &LaunchedActivity) -> std::io::Result<()> {
        if let Some(latency) = activity.latency_sample() {
            self.latencies.push(Sample([latency, 0, 0]))?;
            self.latency_count += 1;
        }
        if let Some(previous_end) = activity.previous_end {
            self.gap_candidates
                .push(Sample([activity.start, activity.released, previous_end]))?;
        }
        Ok(())
    }

    /// The typical delays of every activity taken.
    pub fn typical(self) -> std::io::Result<TypicalDelays> {
        let latency_ns = nth(self.latencies, self.latency_count)?;
        let mut gaps: SampleSorter =
            sorter(self.records_in_memory, &self.dir, "gaps").pushed_by(by_value as _);
        let mut gap_count = 0u64;
        for candidate in self.gap_candidates.done()? {
            let [start, released, previous_end] = candidate?.0;
            let activity = LaunchedActivity {
                start,
                released,
                call_start: released,
                previous_end: Some(previous_end),
            };
            if let Some(gap) = activity.gap_sample(latency_ns) {
                gaps.push(Sample([gap, 0, 0]))?;
                gap_count += 1;
            }
        }
        let gap_ns = nth(gaps, gap_count)?;
        Ok(TypicalDelays { latency_ns, gap_ns })
    }
}

/// The lower median of the `count` samples of `sorted` (0 without any).
fn nth(sorted: SampleSorter, count: u64) -> std::io::Result<i64> {
    let Some(position) = median_position(count) else {
        return Ok(0);
    };
    let position = usize::try_from(position).unwrap_or(usize::MAX);
    match sorted.done()?.nth(position) {
        Some(sample) => Ok(sample?.0[0]),
        None => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_medians_are_the_lower_middles() {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = SampleSink::new(2, dir.path());
        // Idle-GPU latencies 5, 1, 3: median 3.
        for (start, released) in [(15, 10), (11, 10), (13, 10)] {
            sink.add(&LaunchedActivity {
                start,
                released,
                call_start: 0,
                previous_end: None,
            })
            .unwrap();
        }
        // Two stream-bound activities (their stream busy past release + 3): gaps 2 and 4.
        for (start, previous_end) in [(52, 50), (64, 60)] {
            sink.add(&LaunchedActivity {
                start,
                released: 10,
                call_start: 9,
                previous_end: Some(previous_end),
            })
            .unwrap();
        }
        let typical = sink.typical().unwrap();
        assert_eq!(
            typical,
            TypicalDelays {
                latency_ns: 3,
                gap_ns: 2
            }
        );
    }
}
