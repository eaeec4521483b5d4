//! The external sorters of the streamed passes (classify's fold, predict's steps): records kept
//! in memory up to a segment's size, then sorted and written to a file of their own, merged
//! when read back ([`super::merge`]), each record encoded by its [`Sortable`]. Until 27 Nov
//! 2026 this was the `extsort` crate, whose merge kept 20 records of every segment in one heap
//! and scanned every segment whenever one ran dry: at 16 GB of JSON, 183 segments a sorter,
//! that merge was most of the 9.4 s the classify spent alone on one core after the last block.
//!
//! A segment holds at most [`MAX_SEGMENT_RECORDS`] records, whatever the memory budget allows:
//! larger segments saved no time (a 1 GB generated trace, streamed classify, 2.10 s of user
//! time with 16 MiB segments against 2.07 s with 64 MiB ones, 27 Nov 2026) but made the peak
//! memory grow with the trace until they filled (242 MB at 1 GB, 290 MB from 2 GB on under
//! `--memory-budget 256M`), where small ones fill within the first few hundred megabytes and
//! keep it flat from there. Every segment file stays open until the merge, so a long trace
//! needs many descriptors: the first sorter raises the soft limit to the hard one.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom, Write};
use std::path::PathBuf;

pub use super::merge::Merged;
pub use super::sortable::Sortable;

/// Records one sorter keeps in memory before it writes a sorted segment, at most.
pub const MAX_SEGMENT_RECORDS: usize = 1 << 17;

/// Encoded bytes gathered before a segment's file is written to.
const STAGED_BYTES: usize = 64 << 10;

/// Records one sorter keeps in memory, at least (below, the segment files' overhead shows).
const MIN_SEGMENT_RECORDS: usize = 1024;

/// The segment size of a sorter given `records_in_memory` by the memory budget.
pub fn segment_records(records_in_memory: usize) -> usize {
    records_in_memory.clamp(MIN_SEGMENT_RECORDS, MAX_SEGMENT_RECORDS)
}

/// Where a sorter writes its segments (named `0`, `1`, ... in `dir/name`), and how large they
/// are; [`Self::pushed_by`] gives the sorter.
pub struct SorterPlace {
    folder: PathBuf,
    segment_records: usize,
}

/// An external sorter writing its segments to `dir/name`.
pub fn sorter(records_in_memory: usize, dir: &std::path::Path, name: &str) -> SorterPlace {
    allow_open_segments();
    let folder = dir.join(name);
    // A folder that cannot be made fails the first segment's write, reported there.
    let _ = std::fs::create_dir_all(&folder);
    SorterPlace {
        folder,
        segment_records: segment_records(records_in_memory),
    }
}

impl SorterPlace {
    /// A sorter of records pushed one by one, in the order `cmp` gives (ties in the order
    /// pushed: the sort is stable).
    pub fn pushed_by<T, F>(self, cmp: F) -> PushSorter<T, F>
    where
        T: Sortable,
        F: Fn(&T, &T) -> Ordering,
    {
        PushSorter {
            buffer: Vec::new(),
            place: self,
            segments: Vec::new(),
            cmp,
        }
    }
}

/// Records pushed in any order, read back sorted ([`Self::done`]): in memory up to a
/// segment's size, then sorted and written to a segment file; the segments and what is left in
/// memory are merged when read back, one head per segment in a heap ([`super::merge`]).
pub struct PushSorter<T, F> {
    buffer: Vec<T>,
    place: SorterPlace,
    segments: Vec<BufReader<File>>,
    cmp: F,
}

impl<T, F> PushSorter<T, F>
where
    T: Sortable,
    F: Fn(&T, &T) -> Ordering,
{
    /// Takes a record; writes a segment when memory holds a segment's worth.
    pub fn push(&mut self, record: T) -> std::io::Result<()> {
        self.buffer.push(record);
        if self.buffer.len() >= self.place.segment_records {
            self.write_segment()?;
        }
        Ok(())
    }

    fn write_segment(&mut self) -> std::io::Result<()> {
        self.buffer.sort_by(&self.cmp);
        let path = self.place.folder.join(self.segments.len().to_string());
        let mut file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        // Encoded into memory and written a piece at a time: a field is then a store, where
        // into a `BufWriter` it is a call to copy a few bytes.
        let mut staged = Vec::with_capacity(STAGED_BYTES + 1024);
        for record in self.buffer.drain(..) {
            record.encode(&mut staged)?;
            if staged.len() >= STAGED_BYTES {
                file.write_all(&staged)?;
                staged.clear();
            }
        }
        file.write_all(&staged)?;
        file.seek(SeekFrom::Start(0))?;
        self.segments.push(BufReader::new(file));
        Ok(())
    }

    /// Every record pushed, in order.
    pub fn done(mut self) -> std::io::Result<Merged<T, F>> {
        self.buffer.sort_by(&self.cmp);
        Merged::new(self.segments, self.buffer, self.cmp)
    }
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

    /// A record of a key and the order it was pushed in.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Keyed(u32, u32);

    impl Sortable for Keyed {
        fn encode<W: std::io::Write>(&self, writer: &mut W) -> std::io::Result<()> {
            writer.write_all(&self.0.to_le_bytes())?;
            writer.write_all(&self.1.to_le_bytes())
        }

        fn decode<R: std::io::Read>(reader: &mut R) -> std::io::Result<Self> {
            let mut bytes = [0u8; 8];
            reader.read_exact(&mut bytes)?;
            let [a, b, c, d, e, f, g, h] = bytes;
            Ok(Keyed(
                u32::from_le_bytes([a, b, c, d]),
                u32::from_le_bytes([e, f, g, h]),
            ))
        }
    }

    /// Against the standard library's stable sort: in memory only, one segment, many
    /// segments (ties across them), nothing at all.
    #[test]
    fn records_come_back_in_order_ties_in_the_order_pushed() {
        let dir = tempfile::tempdir().unwrap();
        for (count, keys) in [(500u32, 7u32), (1024, 5), (20_000, 97), (20_000, 3), (0, 1)] {
            let records: Vec<Keyed> = (0..count)
                .map(|i| Keyed(i.wrapping_mul(2_654_435_761) % keys, i))
                .collect();
            let name = format!("t{count}_{keys}");
            let mut sorter =
                sorter(1, dir.path(), &name).pushed_by(|a: &Keyed, b: &Keyed| a.0.cmp(&b.0));
            for &record in &records {
                sorter.push(record).unwrap();
            }
            let got: Vec<Keyed> = sorter.done().unwrap().map(|r| r.unwrap()).collect();
            let mut expected = records.clone();
            expected.sort_by_key(|r| r.0);
            assert_eq!(got, expected, "{count} records, {keys} keys");
            let segments = std::fs::read_dir(dir.path().join(&name)).unwrap().count();
            assert_eq!(segments, count as usize / MIN_SEGMENT_RECORDS, "{count}");
        }
    }

    /// A record of 13 bytes: segments of 1024 of them cross the boundaries of the reader's
    /// 8 KiB buffer inside a record, where the merge reads through the reader instead of
    /// from the buffer.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Odd(u32, u64);

    impl Sortable for Odd {
        fn encode<W: std::io::Write>(&self, writer: &mut W) -> std::io::Result<()> {
            writer.write_all(&[0xA5])?;
            writer.write_all(&self.0.to_le_bytes())?;
            writer.write_all(&self.1.to_le_bytes())
        }

        fn decode<R: std::io::Read>(reader: &mut R) -> std::io::Result<Self> {
            let mut bytes = [0u8; 13];
            reader.read_exact(&mut bytes)?;
            if bytes[0] != 0xA5 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "marker",
                ));
            }
            let key = u32::from_le_bytes(bytes[1..5].try_into().unwrap());
            Ok(Odd(key, u64::from_le_bytes(bytes[5..].try_into().unwrap())))
        }
    }

    #[test]
    fn records_across_the_read_buffer_come_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let records: Vec<Odd> = (0..10_000u64)
            .map(|i| Odd((i.wrapping_mul(2_654_435_761) % 101) as u32, i))
            .collect();
        let mut sorter = sorter(1, dir.path(), "odd").pushed_by(|a: &Odd, b: &Odd| a.0.cmp(&b.0));
        for &record in &records {
            sorter.push(record).unwrap();
        }
        let got: Vec<Odd> = sorter.done().unwrap().map(|r| r.unwrap()).collect();
        let mut expected = records;
        expected.sort_by_key(|r| r.0);
        assert_eq!(got, expected);
    }

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
