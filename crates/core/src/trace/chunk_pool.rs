//! The threads that parse a streamed block's later chunks, kept for the whole stream.
//!
//! Starting a thread for each block (a few hundred a gigabyte) and ending it after cost
//! more than keeping them: 1 GB piped into the streamed classify, 1.675 s against 1.71 s
//! median over eight runs each (27 Nov 2026, the quiet 2-core VM). They wait on a channel,
//! never spin (rayon's pool, whose idle threads spin, was 6.5 % slower on two cores).
//!
//! The peak memory still moves between runs of the same input (154-170 MB over those
//! eight, 144-183 MB with a thread per block): the allocator returns freed pages to the
//! system after a delay, and what is freed but not yet returned when the peak comes depends
//! on timing (`MIMALLOC_PURGE_DELAY=0` held it to 119-123 MB, at 10 % more time).
//!
//! A chunk is sent with the block it lies in (shared, not copied) and its bounds; the
//! thread parses exactly that text, as [`chunked::parse_chunk`] parses a chunk of the
//! whole block (a chunk ends where the next starts, so nothing outside it is read).

use std::ops::Range;
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};

use super::assemble::TraceAssembler;
use super::chunked;

/// A chunk parsed: its assembler and, for the last chunk of the array, the offset after
/// its `]` (from the chunk's start); `None` where it did not parse.
pub(super) type Parsed<'p> = Option<(TraceAssembler<'p>, Option<usize>)>;

/// A chunk to parse: `block[bytes]`, which ends at the next chunk's start or, when `last`
/// is set, runs to the block's end (the array's `]` inside it); `slot`: its place in the
/// block.
struct Job {
    block: Arc<Vec<u8>>,
    bytes: Range<usize>,
    last: bool,
    slot: usize,
}

/// The pool's ends: where chunks are sent, and where their parses come back.
pub(super) struct ChunkPool<'p> {
    jobs: Option<mpsc::Sender<Job>>,
    results: mpsc::Receiver<(usize, Parsed<'p>)>,
    threads: usize,
}

impl<'p> ChunkPool<'p> {
    /// `threads` threads in `scope`, parsing for `path`'s trace. They end when the pool is
    /// dropped.
    pub(super) fn start<'scope>(
        scope: &'scope std::thread::Scope<'scope, '_>,
        threads: usize,
        path: &'p Path,
    ) -> ChunkPool<'p>
    where
        'p: 'scope,
    {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (done, results) = mpsc::channel();
        let queue = Arc::new(Mutex::new(queue));
        for _ in 0..threads {
            let queue = Arc::clone(&queue);
            let done = done.clone();
            scope.spawn(move || loop {
                let job = match queue.lock() {
                    Ok(queue) => queue.recv(),
                    Err(_) => return,
                };
                let Ok(Job {
                    block,
                    bytes,
                    last,
                    slot,
                }) = job
                else {
                    return;
                };
                let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    parse(&block, bytes, last, path)
                }))
                .ok()
                .flatten();
                // The block goes back to its owner before the answer does.
                drop(block);
                if done.send((slot, parsed)).is_err() {
                    return;
                }
            });
        }
        ChunkPool {
            jobs: (threads > 0).then_some(jobs),
            results,
            threads,
        }
    }

    /// How many threads parse beside the caller.
    pub(super) fn threads(&self) -> usize {
        self.threads
    }

    /// Parses the chunks `later` of `block` (each a byte range and whether it is the last)
    /// on the pool's threads while `first` runs on this one; their results in `later`'s
    /// order after `first`'s. Every chunk sent is waited for, whatever the others gave.
    pub(super) fn parse_beside<T>(
        &self,
        block: &Arc<Vec<u8>>,
        later: &[(Range<usize>, bool)],
        first: impl FnOnce() -> T,
    ) -> (T, Vec<Parsed<'p>>) {
        let mut slots: Vec<Parsed<'p>> = later.iter().map(|_| None).collect();
        let mut sent = 0;
        if let Some(jobs) = &self.jobs {
            for (slot, (bytes, last)) in later.iter().enumerate() {
                let job = Job {
                    block: Arc::clone(block),
                    bytes: bytes.clone(),
                    last: *last,
                    slot,
                };
                if jobs.send(job).is_ok() {
                    sent += 1;
                }
            }
        }
        let first = first();
        for _ in 0..sent {
            match self.results.recv() {
                Ok((slot, parsed)) => {
                    if let Some(place) = slots.get_mut(slot) {
                        *place = parsed;
                    }
                }
                Err(_) => break,
            }
        }
        (first, slots)
    }
}

/// One chunk's parse: its bytes as text, read by [`chunked::parse_chunk`] from its start
/// to its end (or, the last, to the array's `]`).
fn parse<'p>(block: &[u8], bytes: Range<usize>, last: bool, path: &'p Path) -> Parsed<'p> {
    let text = std::str::from_utf8(block.get(bytes)?).ok()?;
    let end = (!last).then_some(text.len());
    chunked::parse_chunk(text, 0, end, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_parsed_beside_come_back_in_order_and_a_bad_one_is_none() {
        let event = |name: &str| {
            format!("{{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{name}\", \"ts\": 1, \"dur\": 1, \"pid\": 1, \"tid\": 1}}")
        };
        let text = format!("{}, {}, {}]}}", event("a"), event("b"), event("c"));
        let starts: Vec<usize> = text.match_indices("{\"ph\"").map(|(at, _)| at).collect();
        let (second, third) = (starts[1], starts[2]);
        let path = Path::new("t.json");
        let block = Arc::new(text.into_bytes());
        std::thread::scope(|scope| {
            let pool = ChunkPool::start(scope, 2, path);
            assert_eq!(pool.threads(), 2);
            let later = [
                (second..third, false),
                (third..block.len(), true),
                // Not a chunk: it starts inside an event.
                (second + 3..third, false),
            ];
            let (first, parsed) = pool.parse_beside(&block, &later, || 7);
            assert_eq!(first, 7);
            let events: Vec<Option<u64>> = parsed
                .iter()
                .map(|p| p.as_ref().map(|(a, _)| a.counts.total))
                .collect();
            assert_eq!(events, [Some(1), Some(1), None]);
            // The last chunk's array ends after its `]`, counted from the chunk's start.
            let end = parsed[1].as_ref().unwrap().1.unwrap();
            assert_eq!(&block[third + end - 1..third + end], b"]");
        });
        // Every thread let go of the block.
        assert_eq!(Arc::strong_count(&block), 1);
    }
}
