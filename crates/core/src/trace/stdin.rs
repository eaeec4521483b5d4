//! Standard input, read ahead to learn whether it is small.
//!
//! A pipe has no size. To hold a small trace in memory (the faster way for it) and stream a
//! large one (memory independent of its size) without a `--memory-budget`, the first bytes
//! are read ahead ([`ends_within`]): when the input ends within them it is small. Whatever
//! was read ahead is given back in front of the rest by [`reader`], and freed as soon as it
//! has been read, so the read-ahead does not stay in memory while a large input streams.
//! Standard input is one per process: so is the read-ahead.

use std::io::Read;
use std::sync::Mutex;

/// What was read ahead and not yet handed on, and whether the input ended within it.
struct ReadAhead {
    bytes: Vec<u8>,
    ended: bool,
}

static READ_AHEAD: Mutex<Option<ReadAhead>> = Mutex::new(None);

/// Standard input that ended within the read-ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmallInput {
    /// Bytes as read.
    pub stored: usize,
    /// Whether they are gzip.
    pub gzipped: bool,
    /// Bytes of JSON: `stored`, or for a gzip [`super::gzip_size::inflated_size_of`] (0 where
    /// it does not inflate).
    pub json: u64,
}

/// The whole of standard input when it ends within `limit` bytes, sized; `None` when it is
/// longer. Reads up to that much ahead (once: a later call answers from what was read). An
/// error while reading ahead answers `None` (the stream then meets the error itself, where
/// it is reported with its offset).
pub fn ends_within(limit: usize) -> Option<SmallInput> {
    let mut slot = READ_AHEAD.lock().ok()?;
    let ahead = slot.get_or_insert_with(|| read_ahead(std::io::stdin().lock(), limit));
    ahead.ended.then(|| {
        let gzipped = ahead.bytes.starts_with(&[0x1f, 0x8b]);
        SmallInput {
            stored: ahead.bytes.len(),
            gzipped,
            json: if gzipped {
                super::gzip_size::inflated_size_of(&ahead.bytes).unwrap_or(0)
            } else {
                ahead.bytes.len() as u64
            },
        }
    })
}

fn read_ahead(input: impl Read, limit: usize) -> ReadAhead {
    let mut bytes = Vec::new();
    // One byte past the limit tells an input of exactly `limit` bytes from a longer one.
    let read = input.take(limit as u64 + 1).read_to_end(&mut bytes);
    let ended = read.is_ok() && bytes.len() <= limit;
    ReadAhead { bytes, ended }
}

/// Standard input from its first byte: what was read ahead, then the rest.
pub fn reader() -> Prefixed<std::io::Stdin> {
    let ahead = READ_AHEAD
        .lock()
        .ok()
        .and_then(|mut slot| slot.take())
        .map(|ahead| ahead.bytes)
        .unwrap_or_default();
    Prefixed::new(ahead, std::io::stdin())
}

/// `prefix`, then `rest`; the prefix is freed once it has been read.
pub struct Prefixed<R> {
    prefix: Vec<u8>,
    at: usize,
    rest: R,
}

impl<R> Prefixed<R> {
    pub fn new(prefix: Vec<u8>, rest: R) -> Self {
        Prefixed {
            prefix,
            at: 0,
            rest,
        }
    }
}

impl<R: Read> Read for Prefixed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(left) = self.prefix.get(self.at..).filter(|left| !left.is_empty()) {
            let n = left.len().min(buf.len());
            buf[..n].copy_from_slice(&left[..n]);
            self.at += n;
            if self.at == self.prefix.len() {
                self.prefix = Vec::new();
                self.at = 0;
            }
            return Ok(n);
        }
        self.rest.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_within_the_limit_ends_and_a_longer_one_does_not() {
        let exact = read_ahead(&b"12345"[..], 5);
        assert!(exact.ended);
        assert_eq!(exact.bytes, b"12345");
        let longer = read_ahead(&b"123456789"[..], 5);
        assert!(!longer.ended);
        assert_eq!(longer.bytes, b"123456");
    }

    #[test]
    fn the_prefix_comes_first_then_the_rest_and_is_freed_once_read() {
        let mut input = Prefixed::new(b"abc".to_vec(), &b"defgh"[..]);
        let mut two = [0u8; 2];
        assert_eq!(input.read(&mut two).unwrap(), 2);
        assert_eq!(&two, b"ab");
        assert_eq!(input.read(&mut two).unwrap(), 1);
        assert_eq!(input.prefix.capacity(), 0);
        let mut rest = String::new();
        input.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "defgh");
    }
}
