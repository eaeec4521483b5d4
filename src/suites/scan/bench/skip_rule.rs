//! The seed's two reasons not to run a configuration (`should_skip_config`): a smaller
//! configuration of the same series already ran out of memory, or the estimate is over
//! `--max-memory-gb`.

use replay_core::suite::CaseStatus;

use super::grid::ScanCase;
use super::memory_estimate::{gib, MemoryEstimate, MemoryModel};
use crate::suites::scan::rounding::round_like_seed;

/// Why `case` is skipped, or `None` to run it. `done` holds the cases run so far, in order.
///
/// Out of memory at (T₀, K₀, C₀) skips every later case of the same backend, semiring and
/// phase (the seed keys its OOM history by `backend_semiring_phase`) with T ≥ T₀, K ≥ K₀,
/// C ≥ C₀ and at least one of them larger. The estimate rule uses the case's own batch size
/// (the seed always assumed B = 4, its default) and compares the unrounded total.
pub fn skip_reason(
    case: &ScanCase,
    done: &[(ScanCase, CaseStatus)],
    max_memory_gb: f64,
) -> Option<String> {
    let same_series = |other: &ScanCase| {
        other.backend == case.backend
            && other.semiring == case.semiring
            && other.phase == case.phase
    };
    let smaller_oom = done.iter().find(|(other, status)| {
        *status == CaseStatus::Oom
            && same_series(other)
            && case.t >= other.t
            && case.k >= other.k
            && case.c >= other.c
            && (case.t > other.t || case.k > other.k || case.c > other.c)
    });
    if let Some((other, _)) = smaller_oom {
        return Some(format!(
            "adjacent OOM at T={},K={},C={}",
            other.t, other.k, other.c
        ));
    }
    let model = MemoryModel::of_backend(&case.backend_name);
    let estimate = gib(MemoryEstimate::new(model, case.t, case.k, case.c, case.b).total());
    // The seed prints one decimal; a tiny limit (as in tests) needs more to say anything.
    (estimate > max_memory_gb).then(|| {
        format!(
            "predicted {:?}GB > {max_memory_gb:?}GB limit",
            round_like_seed(estimate, 1)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::scan::{Phase, Semiring};

    fn case(t: usize, k: usize, c: usize, backend: usize, phase: Phase) -> ScanCase {
        ScanCase {
            t,
            k,
            c,
            b: 4,
            backend,
            backend_name: ["cpu", "torch"][backend].into(),
            semiring: Semiring::Log,
            phase,
        }
    }

    #[test]
    fn an_oom_skips_only_configurations_at_least_as_large_in_all_three_and_larger_in_one() {
        let oom = case(256, 8, 6, 0, Phase::Both);
        let done = vec![(oom, CaseStatus::Oom)];
        let skipped = |t, k, c| skip_reason(&case(t, k, c, 0, Phase::Both), &done, 40.0);
        // Larger in one, equal in the others.
        assert_eq!(
            skipped(512, 8, 6).as_deref(),
            Some("adjacent OOM at T=256,K=8,C=6")
        );
        assert!(skipped(256, 12, 6).is_some());
        assert!(skipped(256, 8, 9).is_some());
        assert!(skipped(1024, 24, 12).is_some());
        // The same configuration again is not "larger in one".
        assert_eq!(skipped(256, 8, 6), None);
        // Smaller in any one dimension runs, even when larger in the others.
        assert_eq!(skipped(128, 24, 12), None);
        assert_eq!(skipped(1024, 4, 12), None);
        assert_eq!(skipped(1024, 24, 3), None);
    }

    #[test]
    fn the_oom_history_is_per_backend_semiring_and_phase() {
        let done = vec![(case(128, 4, 3, 0, Phase::Both), CaseStatus::Oom)];
        assert!(skip_reason(&case(256, 4, 3, 0, Phase::Both), &done, 40.0).is_some());
        assert_eq!(
            skip_reason(&case(256, 4, 3, 1, Phase::Both), &done, 40.0),
            None
        );
        assert_eq!(
            skip_reason(&case(256, 4, 3, 0, Phase::Forward), &done, 40.0),
            None
        );
        let mut max = case(256, 4, 3, 0, Phase::Both);
        max.semiring = Semiring::Max;
        assert_eq!(skip_reason(&max, &done, 40.0), None);
        // Other statuses never skip anything.
        for status in [
            CaseStatus::Error,
            CaseStatus::Skipped,
            CaseStatus::NotImplemented,
        ] {
            let done = vec![(case(128, 4, 3, 0, Phase::Both), status)];
            assert_eq!(
                skip_reason(&case(256, 4, 3, 0, Phase::Both), &done, 40.0),
                None
            );
        }
    }

    #[test]
    fn the_estimate_rule_compares_the_total_with_the_limit() {
        // Streaming, T=128, K=4, C=3, B=4: 73 152 + 240 + 768 + 103 632 = 177 792 bytes
        // = 1.6558e-4 GiB.
        let c = case(128, 4, 3, 0, Phase::Both);
        assert_eq!(skip_reason(&c, &[], 1.7e-4), None);
        assert_eq!(
            skip_reason(&c, &[], 1.6e-4).as_deref(),
            Some("predicted 0.000166GB > 0.00016GB limit")
        );
    }
}
