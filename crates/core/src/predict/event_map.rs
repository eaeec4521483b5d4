//! Values kept per event of a trace, looked up by the event's index.
//!
//! The timeline builder asks, for tens of thousands of activities and calls, which call
//! launched an activity, what it launched, how the stream was busy before it and how it was
//! delayed. Event indices are dense, so a vector indexed by them answers with one load
//! where a hash map hashes and probes, and it is filled without ever rehashing.

/// A value for some of the events `0..len` of a trace.
#[derive(Debug, Clone)]
pub(crate) struct EventMap<T> {
    slots: Vec<Option<T>>,
}

impl<T> EventMap<T> {
    /// An empty map for the events of a trace with `len` events.
    pub(crate) fn new(len: usize) -> EventMap<T> {
        let mut slots = Vec::with_capacity(len);
        slots.resize_with(len, || None);
        EventMap { slots }
    }

    /// `pairs` of (event index, value) as a map; a later pair replaces an earlier one.
    pub(crate) fn from_pairs(len: usize, pairs: impl IntoIterator<Item = (usize, T)>) -> Self {
        let mut map = EventMap::new(len);
        for (event, value) in pairs {
            map.insert(event, value);
        }
        map
    }

    pub(crate) fn get(&self, event: &usize) -> Option<&T> {
        self.slots.get(*event).and_then(Option::as_ref)
    }

    /// Sets the value of `event`, growing the map if the event lies past its end.
    pub(crate) fn insert(&mut self, event: usize, value: T) {
        if event >= self.slots.len() {
            self.slots.resize_with(event + 1, || None);
        }
        self.slots[event] = Some(value);
    }

    /// The value of `event`, made with `Default` when it has none.
    pub(crate) fn get_or_default(&mut self, event: usize) -> &mut T
    where
        T: Default,
    {
        if event >= self.slots.len() {
            self.slots.resize_with(event + 1, || None);
        }
        self.slots[event].get_or_insert_with(T::default)
    }

    /// (event index, value), by event index.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(event, slot)| slot.as_ref().map(|value| (event, value)))
    }

    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.iter_mut().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_like_a_map_from_event_index() {
        let mut map: EventMap<Vec<usize>> = EventMap::new(4);
        map.get_or_default(2).push(7);
        map.get_or_default(2).push(8);
        map.insert(0, vec![1]);
        map.insert(6, vec![9]); // past the end: grows
        assert_eq!(map.get(&2), Some(&vec![7, 8]));
        assert_eq!(map.get(&1), None);
        assert_eq!(map.get(&100), None);
        let pairs: Vec<(usize, Vec<usize>)> = map.iter().map(|(e, v)| (e, v.clone())).collect();
        assert_eq!(pairs, vec![(0, vec![1]), (2, vec![7, 8]), (6, vec![9])]);
        for list in map.values_mut() {
            list.clear();
        }
        assert_eq!(map.get(&6), Some(&Vec::new()));
        let from = EventMap::from_pairs(3, [(1, 'a'), (1, 'b')]);
        assert_eq!(from.get(&1), Some(&'b'));
    }
}
