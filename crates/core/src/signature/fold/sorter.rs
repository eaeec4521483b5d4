//! The external sorters of the streamed passes (classify's fold, predict's steps): records kept
//! in memory up to a segment's size, then sorted and written to a file of their own, merged
//! when read back.
//!
//! A segment holds at most [`MAX_SEGMENT_RECORDS`] records, whatever the memory budget allows:
//! larger segments saved no time (a 1 GB generated trace, streamed classify, 2.10 s of user
//! time with 16 MiB segments against 2.07 s with 64 MiB ones, 27 Nov 2026) but made the peak
//! memory grow with the trace until they filled (242 MB at 1 GB, 290 MB from 2 GB on under
//! `--memory-budget 256M`), where small ones fill within the first few hundred megabytes and
//! keep it flat from there. Every segment file stays open until the merge, so a long trace
//! needs many descriptors: the first sorter raises the soft limit to the hard one.

use extsort::ExternalSorter;

/// Records one sorter keeps in memory before it writes a sorted segment, at most.
pub const MAX_SEGMENT_RECORDS: usize = 1 << 17;

/// Records one sorter keeps in memory, at least (below, the segment files' overhead shows).
const MIN_SEGMENT_RECORDS: usize = 1024;

/// The segment size of a sorter given `records_in_memory` by the memory budget.
pub fn segment_records(records_in_memory: usize) -> usize {
    records_in_memory.clamp(MIN_SEGMENT_RECORDS, MAX_SEGMENT_RECORDS)
}

/// An external sorter writing its segments (named `0`, `1`, ...) to `dir/name`.
pub fn sorter(records_in_memory: usize, dir: &std::path::Path, name: &str) -> ExternalSorter {
    allow_open_segments();
    let folder = dir.join(name);
    // A folder that cannot be made fails the first segment's write, reported there.
    let _ = std::fs::create_dir_all(&folder);
    ExternalSorter::new()
        .with_segment_size(segment_records(records_in_memory))
        .with_sort_dir(folder)
}

/// Raises the soft limit on open files to the hard limit, once: a 30 GB trace writes about a
/// thousand segments, all open until the merge. Where it cannot be raised, the segment that
/// does not open is reported as a spill error.
fn allow_open_segments() {
    static RAISED: std::sync::Once = std::sync::Once::new();
    RAISED.call_once(|| {
        #[cfg(unix)]
        // SAFETY: getrlimit and setrlimit read and write the plain struct given, nothing else;
        // a failure leaves the limit as it was.
        unsafe {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0
                && limit.rlim_cur < limit.rlim_max
            {
                limit.rlim_cur = limit.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_is_capped_whatever_the_budget_allows() {
        assert_eq!(segment_records(0), MIN_SEGMENT_RECORDS);
        assert_eq!(segment_records(50_000), 50_000);
        assert_eq!(segment_records(usize::MAX), MAX_SEGMENT_RECORDS);
    }

    #[cfg(unix)]
    #[test]
    fn the_open_files_limit_is_raised_to_the_hard_one() {
        allow_open_segments();
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as in allow_open_segments.
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
            0
        );
        assert_eq!(limit.rlim_cur, limit.rlim_max);
    }
}
