//! A prepared scan as a target of the measurement core: the backend times the phase itself
//! (only the timed part of each call counts: a backward's untimed forward does not), and the
//! core warms up, batches and samples it like every other target.

use replay_core::measure::{BatchTiming, MeasureError, Target};

use super::{Phase, PreparedScan};

pub struct ScanTarget<'a> {
    pub scan: &'a mut dyn PreparedScan,
    pub phase: Phase,
}

impl Target for ScanTarget<'_> {
    fn run_batch(&mut self, calls: u64) -> Result<BatchTiming, MeasureError> {
        let time = self
            .scan
            .run_timed(self.phase, calls)
            .map_err(MeasureError::target)?;
        Ok(BatchTiming {
            device: time,
            host: time,
        })
    }
}

/// The seed's quartiles of a list of times: sorted, `q1 = s[n/4]`, `q3 = s[3n/4]` (its
/// `benchmark_memory_analysis.py` rule; no interpolation).
pub fn seed_quartiles(samples: &[f64]) -> Option<(f64, f64)> {
    if samples.is_empty() {
        return None;
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some((s[n / 4], s[(3 * n / 4).min(n - 1)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_follow_the_seed_index_rule() {
        // n = 5: q1 = s[1], q3 = s[3].
        assert_eq!(seed_quartiles(&[5.0, 1.0, 4.0, 2.0, 3.0]), Some((2.0, 4.0)));
        // n = 1: both are the only sample.
        assert_eq!(seed_quartiles(&[7.0]), Some((7.0, 7.0)));
        assert_eq!(seed_quartiles(&[]), None);
    }
}
