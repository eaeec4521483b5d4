//! A merge read on a thread of its own, ahead of the code that takes its records.
//!
//! After the last block, the sweep and the join run on one thread while the other cores
//! idle; about a third of that time is merging the sorters' segments back (reading the files,
//! decoding records, the heap). [`read_ahead`] moves that work to a scoped thread that hands
//! the records on in batches, so the merge and what consumes it run side by side. The records
//! and their order are the same; an error ends the batches where it happened.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::Scope;

/// Records handed on at a time.
const BATCH: usize = 4096;
/// Batches that may wait to be taken (the thread's lead).
const BATCHES_AHEAD: usize = 4;

/// `records`, read on a thread in `scope` up to [`BATCHES_AHEAD`] batches ahead. The thread
/// ends after the last record or the first error, or when what is returned is dropped.
pub fn read_ahead<'scope, T, I>(
    scope: &'scope Scope<'scope, '_>,
    records: I,
) -> impl Iterator<Item = std::io::Result<T>> + 'scope
where
    T: Send + 'scope,
    I: Iterator<Item = std::io::Result<T>> + Send + 'scope,
{
    let (send, batches) = sync_channel(BATCHES_AHEAD);
    let (recycle, emptied) = sync_channel(BATCHES_AHEAD + 2);
    scope.spawn(move || fill(records, &send, &emptied));
    Ahead {
        batches,
        recycle,
        current: Vec::new(),
        ended: false,
    }
}

/// The thread's work: batches of `records` sent until they end, fail or are no longer taken.
fn fill<T, I>(
    records: I,
    send: &SyncSender<Vec<std::io::Result<T>>>,
    emptied: &Receiver<Vec<std::io::Result<T>>>,
) where
    I: Iterator<Item = std::io::Result<T>>,
{
    let mut records = records.fuse();
    loop {
        let mut batch = emptied
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let mut failed = false;
        for record in records.by_ref().take(BATCH) {
            failed = record.is_err();
            batch.push(record);
            if failed {
                break;
            }
        }
        let last = failed || batch.len() < BATCH;
        // Taken from the end: the first record last.
        batch.reverse();
        if batch.is_empty() || send.send(batch).is_err() || last {
            return;
        }
    }
}

struct Ahead<T> {
    batches: Receiver<Vec<std::io::Result<T>>>,
    recycle: SyncSender<Vec<std::io::Result<T>>>,
    /// The batch being taken, its first record last.
    current: Vec<std::io::Result<T>>,
    ended: bool,
}

impl<T> Iterator for Ahead<T> {
    type Item = std::io::Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(record) = self.current.pop() {
                return Some(record);
            }
            if self.ended {
                return None;
            }
            match self.batches.recv() {
                Ok(batch) => {
                    let emptied = std::mem::replace(&mut self.current, batch);
                    // The emptied batch's room goes back to be filled again (or is freed
                    // where the thread has enough).
                    if emptied.capacity() > 0 {
                        let _ = self.recycle.try_send(emptied);
                    }
                }
                Err(_) => self.ended = true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_through_in_order_whatever_their_number() {
        for count in [0, 1, BATCH - 1, BATCH, BATCH + 1, 5 * BATCH + 17] {
            let read: Vec<usize> = std::thread::scope(|scope| {
                read_ahead(scope, (0..count).map(Ok))
                    .map(|record| record.unwrap())
                    .collect()
            });
            assert_eq!(read, (0..count).collect::<Vec<_>>(), "{count} records");
        }
    }

    #[test]
    fn an_error_ends_the_records_where_it_happened() {
        let source = (0..3 * BATCH).map(|i| {
            if i == BATCH + 5 {
                Err(std::io::Error::other("segment unreadable"))
            } else {
                Ok(i)
            }
        });
        let read: Vec<std::io::Result<usize>> =
            std::thread::scope(|scope| read_ahead(scope, source).collect());
        assert_eq!(read.len(), BATCH + 6);
        assert!(read[..BATCH + 5].iter().all(|r| r.is_ok()));
        let error = read[BATCH + 5].as_ref().unwrap_err();
        assert_eq!(error.to_string(), "segment unreadable");
    }

    #[test]
    fn a_reader_that_stops_early_lets_the_thread_end() {
        // Far more records than the thread may read ahead: it must end once the iterator
        // is dropped, or the scope would never return.
        let taken: Vec<usize> = std::thread::scope(|scope| {
            read_ahead(scope, (0..1_000_000).map(Ok))
                .take(10)
                .map(|record| record.unwrap())
                .collect()
        });
        assert_eq!(taken, (0..10).collect::<Vec<_>>());
    }
}
