//! `--memory-budget`: when `classify` streams a trace instead of holding it, and how much
//! its sorters keep in memory when it does.

use std::io::Read;
use std::path::Path;

use crate::memory_size::available_bytes;
use crate::trace::STDIN_PATH;

/// The in-memory classify's peak, per byte of JSON: 1.7x on the 120 MB replicated trace
/// (`make bench-classify`), 1.85x on a generated 1 GB one; rounded up.
pub const IN_MEMORY_BYTES_PER_JSON_BYTE: u64 = 2;

/// Gzipped traces inflate about this much or more (the shared ones 6-12x): the least a gzip
/// is assumed to hold when its trailer (the size mod 2^32) says less.
const LEAST_GZIP_RATIO: u64 = 4;

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

    /// Whether the trace at `path` is classified streamed: when holding it would take more
    /// than the budget. Standard input's size is unknown: it streams when a budget is given.
    pub fn streams(&self, path: &Path) -> bool {
        match in_memory_estimate(path) {
            Some(need) => need > self.bytes,
            None => self.given,
        }
    }

    /// This budget split between `readers` traces read at once (a job's ranks).
    pub fn shared_by(&self, readers: usize) -> MemoryBudget {
        MemoryBudget {
            bytes: self.bytes / readers.max(1) as u64,
            given: self.given,
        }
    }

    /// Records each of the streamed classify's sorters keeps in memory: a quarter of the
    /// budget each (two fill at once, a third while the first is read back).
    pub fn records_in_memory(&self) -> usize {
        let per_record = super::records::LARGEST_RECORD_BYTES as u64;
        usize::try_from(self.bytes / 4 / per_record).unwrap_or(usize::MAX)
    }
}

/// What the in-memory classify would take for the trace at `path`: its JSON size (a gzip's
/// from its trailer, at least [`LEAST_GZIP_RATIO`] times the file) times
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
        trailer.max(stored.saturating_mul(LEAST_GZIP_RATIO))
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
        assert!(!MemoryBudget::from_option(None).streams(stdin));
        assert!(MemoryBudget::from_option(None).bytes > 0);
    }
}
