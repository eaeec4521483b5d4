//! How much JSON a gzip file holds, estimated without inflating all of it.
//!
//! A gzip member's trailer holds its inflated size (mod 2^32), but only the last member's
//! can be read without inflating: a file of several members (as `pigz` and
//! `replay-tracegen --gzip` write, and `cat a.gz b.gz` makes) announces only its last one.
//! A 250 MB trace in four members said 54 MB, and the memory budget, taking the file at
//! that or at 4x its compressed size, held it in memory at 772 MB under a 300 MB budget.
//! So the file's beginning is inflated as well, [`SAMPLE_STORED_BYTES`] of it, and the ratio
//! seen there, with a quarter more, is taken for the whole; the estimate is the larger of
//! the two, which is exact for a file the sample covers.

use std::io::{BufReader, Read};

use flate2::bufread::MultiGzDecoder;

/// Trace JSON compresses about this much or more (the shared traces 6-12x): a trailer that
/// says less than this times the file is taken for the last of several members.
pub const LEAST_RATIO: u64 = 4;

/// Compressed bytes inflated to learn the ratio: 256 KiB, a few milliseconds.
pub const SAMPLE_STORED_BYTES: u64 = 256 << 10;

/// Inflated bytes after which the sample stops, whatever it has read (a file that inflates
/// a thousandfold would otherwise make the sample a gigabyte).
const SAMPLE_JSON_BYTES: u64 = 64 << 20;

/// Inflated bytes the gzip read from `reader` (its first bytes; `stored` bytes in all)
/// holds, by the larger of its last member's `trailer` size and the ratio over its first
/// [`SAMPLE_STORED_BYTES`]: exact where the sample reaches the end. `None` where nothing
/// inflates (not gzip, or damaged at once).
pub fn inflated_size_estimate(reader: impl Read, stored: u64, trailer: u64) -> Option<u64> {
    let counted = Counted {
        inner: reader.take(SAMPLE_STORED_BYTES),
        bytes: 0,
    };
    let mut inflater = MultiGzDecoder::new(BufReader::with_capacity(32 << 10, counted));
    let mut json = 0u64;
    let mut chunk = vec![0u8; 64 << 10];
    let complete = loop {
        match inflater.read(&mut chunk) {
            Ok(0) => break true,
            Ok(read) => json += read as u64,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            // The sample ends inside a member (or the file is damaged further on).
            Err(_) => break false,
        }
        if json >= SAMPLE_JSON_BYTES {
            break false;
        }
    };
    // What was read, less what waits in the buffer, not inflated yet.
    let buffered = inflater.get_ref().buffer().len() as u64;
    let read = inflater.get_ref().get_ref().bytes;
    let sampled = read.saturating_sub(buffered);
    if json == 0 || sampled == 0 {
        return None;
    }
    if complete && read >= stored {
        return Some(json);
    }
    // The beginning (the document's top, the first steps) may compress differently from
    // the rest: a quarter more is allowed for (the 250 MB trace above: 10 % under from the
    // sample alone). Too much costs only address space, or a held trace streamed.
    let whole = u128::from(stored) * u128::from(json) * 5 / u128::from(sampled) / 4;
    Some(u64::try_from(whole).unwrap_or(u64::MAX).max(trailer))
}

/// [`inflated_size_estimate`] of a gzip held in memory.
pub fn inflated_size_of(compressed: &[u8]) -> Option<u64> {
    inflated_size_estimate(compressed, compressed.len() as u64, trailer_of(compressed))
}

/// The size the last member's trailer announces (mod 2^32; 0 for fewer than 4 bytes).
pub fn trailer_of(compressed: &[u8]) -> u64 {
    compressed
        .len()
        .checked_sub(4)
        .and_then(|at| compressed.get(at..))
        .and_then(|tail| <[u8; 4]>::try_from(tail).ok())
        .map_or(0, |tail| u64::from(u32::from_le_bytes(tail)))
}

/// The JSON a gzip of `stored` bytes is taken to hold where memory is planned: the larger of
/// its `estimate` ([`inflated_size_estimate`]), its `trailer` and [`LEAST_RATIO`] times it.
pub fn json_bytes_at_least(estimate: Option<u64>, stored: u64, trailer: u64) -> u64 {
    estimate
        .unwrap_or(0)
        .max(trailer)
        .max(stored.saturating_mul(LEAST_RATIO))
}

/// A reader that counts the bytes it gives.
struct Counted<R> {
    inner: R,
    bytes: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.bytes += read as u64;
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(members: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for member in members {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(member).unwrap();
            out.extend(gz.finish().unwrap());
        }
        out
    }

    /// Text that compresses about as a trace does (some 5-15x), from a fixed seed.
    fn text(bytes: usize) -> Vec<u8> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut out = Vec::with_capacity(bytes + 64);
        while out.len() < bytes {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let line = format!(
                "{{\"ph\": \"X\", \"name\": \"k{}\", \"ts\": {}, \"dur\": {}}},\n",
                state % 97,
                state % 1_000_000,
                state % 1000
            );
            out.extend_from_slice(line.as_bytes());
        }
        out.truncate(bytes);
        out
    }

    #[test]
    fn a_file_the_sample_covers_is_measured_exactly() {
        let json = text(300_000);
        let one = gzip(&[&json]);
        assert_eq!(inflated_size_of(&one), Some(json.len() as u64));
        let (a, b) = json.split_at(123_456);
        assert_eq!(inflated_size_of(&gzip(&[a, b])), Some(json.len() as u64));
    }

    /// The case that broke the budget: many members, the last one small. The trailer says
    /// 1000 bytes; the estimate is the truth or up to a third more.
    #[test]
    fn many_members_past_the_sample_are_taken_at_the_sampled_ratio() {
        let json = text(40 << 20);
        let (body, last) = json.split_at(json.len() - 1000);
        let pieces: Vec<&[u8]> = body.chunks(3 << 20).chain([last]).collect();
        let file = gzip(&pieces);
        assert!(
            file.len() as u64 > 2 * SAMPLE_STORED_BYTES,
            "{}",
            file.len()
        );
        let trailer = u64::from(u32::from_le_bytes(
            file[file.len() - 4..].try_into().unwrap(),
        ));
        assert_eq!(trailer, 1000);
        let estimate = inflated_size_of(&file).unwrap();
        let truth = json.len() as u64;
        assert!(
            estimate >= truth && estimate * 3 <= truth * 4,
            "{estimate} for {truth}"
        );
        // From a reader (a file), the same.
        let from_reader =
            inflated_size_estimate(file.as_slice(), file.len() as u64, trailer).unwrap();
        assert_eq!(from_reader, estimate);
    }

    #[test]
    fn a_trailer_larger_than_the_sampled_ratio_wins_and_non_gzip_is_none() {
        let json = text(16 << 20);
        let file = gzip(&[&json]);
        // The sample stops inside the member: the trailer (exact) is the larger or equal.
        assert!(
            file.len() as u64 > 2 * SAMPLE_STORED_BYTES,
            "{}",
            file.len()
        );
        let estimate = inflated_size_of(&file).unwrap();
        assert!(estimate >= json.len() as u64, "{estimate}");
        assert_eq!(inflated_size_of(b"{\"traceEvents\": []}"), None);
        assert_eq!(inflated_size_of(&[]), None);
    }
}
