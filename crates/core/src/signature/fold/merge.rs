//! Reading an external sorter's records back in order: its sorted segments on disk and the
//! sorted records still in memory, merged through a heap of one head per source, so a record
//! costs about log2(sources) comparisons. Ties go to the earlier source (a segment written
//! earlier holds records pushed earlier), which keeps the sort stable.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind};

use super::sortable::Sortable;

/// Where the records come from: a segment file, or what was left in memory.
enum Source<T> {
    Disk(BufReader<File>),
    Memory(std::vec::IntoIter<T>),
}

impl<T: Sortable> Source<T> {
    /// The source's next record, `None` at its end.
    fn next_record(&mut self) -> std::io::Result<Option<T>> {
        match self {
            Source::Disk(reader) => {
                // From the reader's buffer where the record lies whole in it: a field is
                // then a load, where through the reader it is a call to copy a few bytes
                // (a third of the merge's time).
                let mut buffered = reader.fill_buf()?;
                let before = buffered.len();
                if before == 0 {
                    return Ok(None);
                }
                if let Ok(record) = T::decode(&mut buffered) {
                    let used = before - buffered.len();
                    reader.consume(used);
                    return Ok(Some(record));
                }
                // The record runs past the buffer (or is bad, which reading it again says).
                match T::decode(reader) {
                    Ok(record) => Ok(Some(record)),
                    Err(error) if error.kind() == ErrorKind::UnexpectedEof => Ok(None),
                    Err(error) => Err(error),
                }
            }
            Source::Memory(records) => Ok(records.next()),
        }
    }
}

/// The records of every source, in order ([`super::sorter::PushSorter::done`]).
pub struct Merged<T, F> {
    sources: Vec<Source<T>>,
    /// Each source's next record (`None` once it has ended).
    heads: Vec<Option<T>>,
    /// The sources with a head, as a binary heap: the least head first.
    heap: Vec<usize>,
    cmp: F,
}

impl<T, F> Merged<T, F>
where
    T: Sortable,
    F: Fn(&T, &T) -> Ordering,
{
    pub(super) fn new(
        segments: Vec<BufReader<File>>,
        in_memory: Vec<T>,
        cmp: F,
    ) -> std::io::Result<Merged<T, F>> {
        let mut sources: Vec<Source<T>> = segments.into_iter().map(Source::Disk).collect();
        sources.push(Source::Memory(in_memory.into_iter()));
        let mut heads = Vec::with_capacity(sources.len());
        for source in &mut sources {
            heads.push(source.next_record()?);
        }
        let mut merged = Merged {
            sources,
            heads,
            heap: Vec::new(),
            cmp,
        };
        for source in 0..merged.sources.len() {
            if merged.heads[source].is_some() {
                merged.heap.push(source);
                merged.sift_up(merged.heap.len() - 1);
            }
        }
        Ok(merged)
    }

    /// Whether the head of source `a` goes before that of source `b`.
    fn before(&self, a: usize, b: usize) -> bool {
        match (&self.heads[a], &self.heads[b]) {
            (Some(x), Some(y)) => match (self.cmp)(x, y) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => a < b,
            },
            (Some(_), None) => true,
            _ => false,
        }
    }

    fn sift_up(&mut self, mut at: usize) {
        while at > 0 {
            let parent = (at - 1) / 2;
            if !self.before(self.heap[at], self.heap[parent]) {
                break;
            }
            self.heap.swap(at, parent);
            at = parent;
        }
    }

    fn sift_down(&mut self, mut at: usize) {
        loop {
            let left = 2 * at + 1;
            if left >= self.heap.len() {
                return;
            }
            let right = left + 1;
            let least = if right < self.heap.len() && self.before(self.heap[right], self.heap[left])
            {
                right
            } else {
                left
            };
            if !self.before(self.heap[least], self.heap[at]) {
                return;
            }
            self.heap.swap(at, least);
            at = least;
        }
    }
}

impl<T, F> Iterator for Merged<T, F>
where
    T: Sortable,
    F: Fn(&T, &T) -> Ordering,
{
    type Item = std::io::Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        let &source = self.heap.first()?;
        let next = match self.sources[source].next_record() {
            Ok(next) => next,
            Err(error) => return Some(Err(error)),
        };
        let record = std::mem::replace(&mut self.heads[source], next);
        if self.heads[source].is_none() {
            self.heap.swap_remove(0);
        }
        self.sift_down(0);
        record.map(Ok)
    }
}
