//! The first event carrying each id (a correlation id, an External id), for lookups by id.
//!
//! Profilers number correlation ids one after another, so the ids of a trace fill a narrow
//! range: a table indexed by `id - smallest` finds an event with one load, where a hash map
//! hashes, probes and, while it is built, grows and rehashes several times (on the 67,000
//! events of the cudagraph trace the growing map alone was a third of `predict`'s page
//! faults). Ids spread too thinly for a table fall back to a hash map.

use super::strings::FxHashMap;

/// A table is used when it has at most this many slots per id (and a floor for small
/// traces), so its memory stays within a small multiple of the map's.
const MAX_SLOTS_PER_ID: usize = 4;
const MIN_TABLE_SLOTS: usize = 4096;

/// Event index by id; the first event with an id wins.
#[derive(Debug, Clone)]
pub enum IdIndex {
    /// `slots[id - first]` is the event index, `u32::MAX` when no event has that id.
    Table {
        first: i64,
        slots: Vec<u32>,
    },
    Map(FxHashMap<i64, usize>),
}

impl IdIndex {
    /// The index of `(id, event index)` pairs, given in event order.
    pub fn build(pairs: impl Iterator<Item = (i64, usize)> + Clone) -> IdIndex {
        let (mut count, mut smallest, mut largest, mut largest_event) =
            (0usize, i64::MAX, i64::MIN, 0);
        for (id, event) in pairs.clone() {
            count += 1;
            smallest = smallest.min(id);
            largest = largest.max(id);
            largest_event = largest_event.max(event);
        }
        let span = u64::try_from(i128::from(largest) - i128::from(smallest) + 1).ok();
        let table_slots = span
            .and_then(|span| usize::try_from(span).ok())
            .filter(|&slots| {
                count > 0
                    && slots <= count.saturating_mul(MAX_SLOTS_PER_ID).max(MIN_TABLE_SLOTS)
                    && u32::try_from(largest_event).is_ok_and(|e| e < u32::MAX)
            });
        match table_slots {
            Some(slots) => {
                let mut table = vec![u32::MAX; slots];
                for (id, event) in pairs {
                    // In range by construction: smallest <= id <= largest.
                    let slot = &mut table[(id - smallest) as usize];
                    if *slot == u32::MAX {
                        *slot = event as u32;
                    }
                }
                IdIndex::Table {
                    first: smallest,
                    slots: table,
                }
            }
            None => {
                let mut map = FxHashMap::default();
                map.reserve(count);
                for (id, event) in pairs {
                    map.entry(id).or_insert(event);
                }
                IdIndex::Map(map)
            }
        }
    }

    /// The first event with `id`.
    pub fn get(&self, id: i64) -> Option<usize> {
        match self {
            IdIndex::Table { first, slots } => {
                let offset = usize::try_from(id.checked_sub(*first)?).ok()?;
                slots
                    .get(offset)
                    .filter(|&&event| event != u32::MAX)
                    .map(|&event| event as usize)
            }
            IdIndex::Map(map) => map.get(&id).copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookups(index: &IdIndex, ids: &[i64]) -> Vec<Option<usize>> {
        ids.iter().map(|&id| index.get(id)).collect()
    }

    #[test]
    fn dense_ids_use_a_table_and_the_first_event_wins() {
        let pairs = [(10, 0), (12, 3), (10, 5), (11, 7)];
        let index = IdIndex::build(pairs.iter().copied());
        assert!(matches!(index, IdIndex::Table { first: 10, .. }));
        assert_eq!(
            lookups(&index, &[9, 10, 11, 12, 13, i64::MIN, i64::MAX]),
            vec![None, Some(0), Some(7), Some(3), None, None, None]
        );
    }

    #[test]
    fn sparse_or_extreme_ids_use_a_map_with_the_same_answers() {
        let pairs = [(i64::MIN, 1), (0, 2), (i64::MAX, 3), (0, 4)];
        let index = IdIndex::build(pairs.iter().copied());
        assert!(matches!(index, IdIndex::Map(_)));
        assert_eq!(
            lookups(&index, &[i64::MIN, 0, i64::MAX, 5]),
            vec![Some(1), Some(2), Some(3), None]
        );
        let spread: Vec<(i64, usize)> = (0..10).map(|i| (i * 1_000_000, i as usize)).collect();
        let index = IdIndex::build(spread.iter().copied());
        assert!(matches!(index, IdIndex::Map(_)));
        assert_eq!(index.get(3_000_000), Some(3));
        assert_eq!(index.get(3_000_001), None);
    }

    #[test]
    fn no_ids_find_nothing() {
        let index = IdIndex::build(std::iter::empty());
        assert_eq!(index.get(0), None);
    }
}
