//! `--memory-budget`: when `classify` streams a trace instead of holding it, and how much
//! its sorters keep in memory when it does.

use std::io::Read;
use std::path::Path;

use crate::memory_size::available_bytes;
use crate::trace::{gzip_size, stdin, STDIN_PATH};

/// The in-memory classify's peak, per byte of JSON: 1.7x on the 120 MB replicated trace
/// (`make bench-classify`), 1.85x on a generated 1 GB one; rounded up.
pub const IN_MEMORY_BYTES_PER_JSON_BYTE: u64 = 2;

/// JSON bytes from which the streamed pass beats the in-memory one. Measured on generated
/// traces (27 Nov 2026, the 2-core VM, best of 2-3 runs): classify 80 MB 0.12 s in memory
/// against 0.12-0.14 s streamed, 300 MB 0.45-0.56 s against 0.51 s (a gzip: 0.46-1.57 s
/// against 0.45-0.47 s), 1.5 GB 4.2-4.6 s (1.8 GB) against 2.7 s (150 MB); predict 80 MB
/// 0.17 s against 0.29 s, 300 MB 2.2 s against 1.1 s, 1.5 GB 31 s against 6.6 s. Holding a
/// large trace costs page faults (the kernel zeroing and compacting memory), which the
/// streamed pass, reusing a few buffers, does not pay.
pub const STREAMS_FASTER_FROM_JSON_BYTES: u64 = 256 << 20;

/// How much of standard input is read ahead to learn whether it is small: less than
/// [`STREAMS_FASTER_FROM_JSON_BYTES`], because a large input streams with the read-ahead in
/// memory until it has been parsed (the streamed classify's peak plus this), and because
/// between the two the paths run close (classify 80 MB: 0.12 s either way).
pub const STDIN_READ_AHEAD_BYTES: usize = 64 << 20;

/// Whether the trace at `path` (a file) holds [`STREAMS_FASTER_FROM_JSON_BYTES`] of JSON or
/// more, by [`in_memory_estimate`]'s reckoning.
fn streams_faster(path: &Path) -> bool {
    in_memory_estimate(path)
        .is_some_and(|need| need / IN_MEMORY_BYTES_PER_JSON_BYTE >= STREAMS_FASTER_FROM_JSON_BYTES)
}

/// The smallest block the streamed pass reads in (below it, a 1 GB trace took no less
/// memory and more time).
pub const MIN_BLOCK_BYTES: usize = 1 << 20;

/// The least the streamed pass takes, in its smallest blocks: 57-94 MB on a 1 GB trace
/// under budgets of 16-64 MB (27 Nov 2026, the 2-core VM).
pub const STREAMED_FLOOR_BYTES: u64 = 96 << 20;

/// How much memory a classify may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    pub bytes: u64,
    /// Given by the user (`--memory-budget`), not the default share.
    pub given: bool,
}

impl MemoryBudget {
    /// `--memory-budget`, else half the memory available now (4 GiB where that cannot be
    /// read).
    pub fn from_option(given: Option<u64>) -> MemoryBudget {
        match given {
            Some(bytes) => MemoryBudget { bytes, given: true },
            None => MemoryBudget {
                bytes: available_bytes().map_or(4 << 30, |a| a / 2),
                given: false,
            },
        }
    }

    /// Whether the trace at `path` must be streamed: holding it would take more than the
    /// budget. Standard input's size is unknown: it must when a budget is given.
    pub fn must_stream(&self, path: &Path) -> bool {
        match in_memory_estimate(path) {
            Some(need) => need > self.bytes,
            None => self.given,
        }
    }

    /// Whether the trace at `path` is classified (or predicted) streamed: when it must be,
    /// and, when no budget was given, when it holds [`STREAMS_FASTER_FROM_JSON_BYTES`] of
    /// JSON or more, from where the streamed pass is the faster one; standard input by
    /// [`Self::stdin_streams`]. A given budget is followed to the letter: in memory
    /// whenever the trace fits it.
    pub fn streams(&self, path: &Path) -> bool {
        if path.as_os_str() == STDIN_PATH {
            return self.stdin_streams();
        }
        self.must_stream(path) || (!self.given && streams_faster(path))
    }

    /// [`Self::streams`] for standard input, whose size is unknown: without a given budget,
    /// its first [`STDIN_READ_AHEAD_BYTES`] are read ahead ([`stdin::ends_within`]), and it
    /// streams unless it ends within them (and is held as a file of its size would be).
    fn stdin_streams(&self) -> bool {
        if self.given {
            return true;
        }
        match stdin::ends_within(STDIN_READ_AHEAD_BYTES) {
            None => true,
            Some(input) => {
                let json = if input.gzipped {
                    gzip_size::json_bytes_at_least(Some(input.json), input.stored as u64, 0)
                } else {
                    input.json
                };
                json >= STREAMS_FASTER_FROM_JSON_BYTES
                    || json.saturating_mul(IN_MEMORY_BYTES_PER_JSON_BYTE) > self.bytes
            }
        }
    }

    /// This budget split between `readers` traces read at once (a job's ranks).
    pub fn shared_by(&self, readers: usize) -> MemoryBudget {
        MemoryBudget {
            bytes: self.bytes / readers.max(1) as u64,
            given: self.given,
        }
    }

    /// JSON bytes a block of the streamed pass holds: a 64th of the budget, from 1 MiB to
    /// the default ([`crate::trace::default_block_bytes`], 8 MiB on two cores). The pass's
    /// peak is about 50 MB and 12-17 times its block (the blocks in flight, their chunks'
    /// events, what the allocator keeps), so a small budget takes small blocks: on a 1 GB
    /// trace, 57-70 MB with 1 MiB blocks, 90-111 MB with 2, 135 MB with 4, 160-180 MB with 8
    /// (27 Nov 2026, the 2-core VM).
    pub fn block_bytes(&self) -> usize {
        let share = usize::try_from(self.bytes / 64).unwrap_or(usize::MAX);
        share.clamp(
            MIN_BLOCK_BYTES,
            crate::trace::default_block_bytes().max(MIN_BLOCK_BYTES),
        )
    }

    /// What to tell a user whose given budget is below what the streamed pass needs whatever
    /// the budget ([`STREAMED_FLOOR_BYTES`]); `None` for a budget above it, or not given.
    pub fn floor_note(&self) -> Option<String> {
        (self.given && self.bytes < STREAMED_FLOOR_BYTES).then(|| {
            format!(
                "note: streamed, a large trace takes up to about {} MB whatever the budget \
                 (blocks of JSON and their events); a budget of {} is followed where it \
                 can be (the smallest blocks, records sorted on disk)",
                STREAMED_FLOOR_BYTES >> 20,
                if self.bytes < 1 << 20 {
                    format!("{} KB", self.bytes >> 10)
                } else {
                    format!("{} MB", self.bytes >> 20)
                }
            )
        })
    }

    /// Records each of the streamed classify's sorters keeps in memory: a quarter of the
    /// budget each (two fill at once, a third while the first is read back).
    pub fn records_in_memory(&self) -> usize {
        let per_record = super::records::LARGEST_RECORD_BYTES as u64;
        usize::try_from(self.bytes / 4 / per_record).unwrap_or(usize::MAX)
    }
}

/// What the in-memory classify would take for the trace at `path`: its JSON size (a gzip's
/// by [`gzip_size::inflated_size_estimate`], at least its trailer's and [`gzip_size::LEAST_RATIO`]
/// times the file) times
/// [`IN_MEMORY_BYTES_PER_JSON_BYTE`]. `None` for standard input and anything not a file.
pub fn in_memory_estimate(path: &Path) -> Option<u64> {
    if path.as_os_str() == STDIN_PATH {
        return None;
    }
    let metadata = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    let stored = metadata.len();
    let mut file = std::fs::File::open(path).ok()?;
    let mut magic = [0u8; 2];
    let gzipped = file.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    let json = if gzipped {
        let trailer = gzip_trailer_size(path).unwrap_or(0);
        // The trailer is the last member's size only: the file's beginning says the rest.
        let sampled = std::fs::File::open(path)
            .ok()
            .and_then(|file| gzip_size::inflated_size_estimate(file, stored, trailer));
        gzip_size::json_bytes_at_least(sampled, stored, trailer)
    } else {
        stored
    };
    Some(json.saturating_mul(IN_MEMORY_BYTES_PER_JSON_BYTE))
}

/// The size a gzip file's last member announces (mod 2^32).
fn gzip_trailer_size(path: &Path) -> Option<u64> {
    use std::io::{Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::End(-4)).ok()?;
    let mut tail = [0u8; 4];
    file.read_exact(&mut tail).ok()?;
    Some(u64::from(u32::from_le_bytes(tail)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_streams_when_holding_it_is_over_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("t.json");
        std::fs::write(&plain, vec![b' '; 1000]).unwrap();
        assert_eq!(in_memory_estimate(&plain), Some(2000));
        let budget = |bytes| MemoryBudget { bytes, given: true };
        assert!(budget(1999).streams(&plain));
        assert!(!budget(2000).streams(&plain));
        assert!(budget(1999).must_stream(&plain));
        // Without a given budget, a small file is held (the default share fits it).
        assert!(!MemoryBudget::from_option(None).streams(&plain));
        // A gzip is taken at its announced size, or at least 4x the file.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut gz, &vec![b' '; 100_000]).unwrap();
        let gz_path = dir.path().join("t.json.gz");
        std::fs::write(&gz_path, gz.finish().unwrap()).unwrap();
        assert_eq!(in_memory_estimate(&gz_path), Some(200_000));
        // Standard input: only a given budget streams it.
        let stdin = Path::new("-");
        assert_eq!(in_memory_estimate(stdin), None);
        assert!(budget(1 << 40).streams(stdin));
        // (Without a budget it would read standard input ahead: not in a unit test.)
        assert!(!MemoryBudget::from_option(None).must_stream(stdin));
        assert!(MemoryBudget::from_option(None).bytes > 0);
    }

    /// A gzip of several members announces only its last one's size: a 250 MB trace written
    /// in four members said 54 MB, and was held in 772 MB under a 300 MB budget. Its beginning
    /// says the rest now.
    #[test]
    fn a_gzip_of_many_members_is_taken_at_its_whole_size() {
        let dir = tempfile::tempdir().unwrap();
        let mut json = Vec::new();
        for i in 0..200_000u64 {
            json.extend_from_slice(
                format!(
                    "{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k{}\", \"ts\": {}, \"dur\": {}}},\n",
                    i % 89,
                    i * 7919 % 1_000_003,
                    i % 977
                )
                .as_bytes(),
            );
        }
        let mut file = Vec::new();
        let (body, last) = json.split_at(json.len() - 100);
        for member in body.chunks(1 << 20).chain([last]) {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            std::io::Write::write_all(&mut gz, member).unwrap();
            file.extend(gz.finish().unwrap());
        }
        let path = dir.path().join("ranks.json.gz");
        std::fs::write(&path, &file).unwrap();
        assert!(file.len() > 2 * (256 << 10), "{}", file.len());
        let json_bytes = json.len() as u64;
        // Before: max(100, 4x the file), well under the JSON.
        assert!(4 * file.len() as u64 * 2 < json_bytes);
        let need = in_memory_estimate(&path).unwrap();
        assert!(
            need >= 2 * json_bytes && need <= 3 * json_bytes,
            "{need} for {json_bytes}"
        );
        let budget = MemoryBudget {
            bytes: json_bytes,
            given: true,
        };
        assert!(budget.must_stream(&path));
    }

    #[test]
    fn blocks_follow_a_small_budget_and_a_budget_below_the_floor_says_so() {
        let budget = |bytes| MemoryBudget { bytes, given: true };
        let default = crate::trace::default_block_bytes();
        assert_eq!(budget(1 << 20).block_bytes(), MIN_BLOCK_BYTES);
        assert_eq!(budget(128 << 20).block_bytes(), (2 << 20).min(default));
        assert_eq!(budget(1 << 40).block_bytes(), default);
        assert_eq!(MemoryBudget::from_option(None).block_bytes(), default);
        let note = budget(64 << 20).floor_note().unwrap();
        assert!(note.contains("a budget of 64 MB"), "{note}");
        let note = budget(1 << 10).floor_note().unwrap();
        assert!(note.contains("a budget of 1 KB is followed"), "{note}");
        assert_eq!(budget(STREAMED_FLOOR_BYTES).floor_note(), None);
        // Not given: nothing to say.
        let small_default = MemoryBudget {
            bytes: 1 << 20,
            given: false,
        };
        assert_eq!(small_default.floor_note(), None);
    }

    #[test]
    fn a_large_trace_streams_by_default_but_not_under_a_budget_it_fits() {
        let dir = tempfile::tempdir().unwrap();
        let large = dir.path().join("large.json");
        // A sparse file: its size is what counts, no bytes are written.
        let file = std::fs::File::create(&large).unwrap();
        file.set_len(STREAMS_FASTER_FROM_JSON_BYTES).unwrap();
        let default = MemoryBudget {
            bytes: 1 << 40,
            given: false,
        };
        assert!(default.streams(&large));
        assert!(!default.must_stream(&large));
        let given = MemoryBudget {
            bytes: 1 << 40,
            given: true,
        };
        assert!(!given.streams(&large));
        file.set_len(STREAMS_FASTER_FROM_JSON_BYTES - 1).unwrap();
        assert!(!default.streams(&large));
    }
}
