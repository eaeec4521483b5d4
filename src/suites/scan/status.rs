//! The seed's status words (`benchmarks/lib/runner.py` of torch-semimarkov) for the `status`
//! column of `benchmark_full.csv`, `heatmap_data.json` and `memory_breakdown.csv` (written by
//! the bench, read by its analysis):
//! `success` (measured), `oom`, `error`, `not_implemented` and `not_tested` (skipped by a
//! rule before it ran). The core's [`CaseStatus`] says `ok` and `skipped`, as the other
//! suites' files do; only this suite's files take the seed's words.

use replay_core::suite::CaseStatus;

/// A measured case.
pub const SUCCESS: &str = "success";
/// A case that one of the seed's skip rules left out.
pub const NOT_TESTED: &str = "not_tested";

/// The seed's word for `status`.
pub fn seed_status(status: CaseStatus) -> &'static str {
    match status {
        CaseStatus::Ok => SUCCESS,
        CaseStatus::Skipped => NOT_TESTED,
        other => other.as_str(),
    }
}

/// True for a row that was measured: the seed's `success`, or `ok` in a CSV written by
/// replay before it took the seed's words.
pub fn is_success(word: &str) -> bool {
    word == SUCCESS || word == CaseStatus::Ok.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_the_seeds_words() {
        let words: Vec<&str> = CaseStatus::ALL.into_iter().map(seed_status).collect();
        assert_eq!(
            words,
            ["success", "oom", "error", "not_implemented", "not_tested"]
        );
        assert!(is_success("success") && is_success("ok") && !is_success("not_tested"));
    }
}
