//! The signature id of every unit of work in a trace, event by event.
//!
//! [`super::classify`] folds a trace into signatures; the timeline model needs the
//! opposite direction: for each GPU activity (or, in a CPU-only trace, each top-level op)
//! the id of the signature it was folded into, so that a replayed duration per signature
//! can be put back at every invocation. Both directions build their keys with
//! [`GpuKey::of`] / [`HostOpKey::of`] and hash them with the same functions, so the ids
//! are the signature file's ids by construction.

use crate::trace::link::Links;
use crate::trace::{FxHashMap, Platform, Trace};

use super::classify::{signature_id, GpuKey};
use super::host_ops::{host_op_id, top_level_ops, HostOpKey};

/// Signature ids by event index. Ids are stored once and events refer to them by a
/// small index, because a trace has many invocations of few signatures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignatureIds {
    ids: Vec<String>,
    by_event: FxHashMap<usize, u32>,
}

impl SignatureIds {
    /// The id of the signature that event `event` (an index into `Trace::events`) belongs
    /// to; `None` for events that are not units of work and for unattributed activities
    /// (no launch call in the trace, so no signature).
    pub fn of_event(&self, event: usize) -> Option<&str> {
        self.index_of_event(event).and_then(|i| self.id(i))
    }

    /// Like [`Self::of_event`], as an index into [`Self::ids`].
    pub fn index_of_event(&self, event: usize) -> Option<u32> {
        self.by_event.get(&event).copied()
    }

    /// The id at `index`.
    pub fn id(&self, index: u32) -> Option<&str> {
        self.ids.get(index as usize).map(String::as_str)
    }

    /// Every distinct id, in order of first appearance in the file.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// Number of events that have an id.
    pub fn event_count(&self) -> usize {
        self.by_event.len()
    }

    /// The events that have an id, in no particular order: the linked GPU activities, or
    /// the top-level ops of a CPU-only trace.
    pub fn events(&self) -> impl Iterator<Item = usize> + '_ {
        self.by_event.keys().copied()
    }

    fn insert(&mut self, event: usize, index: u32) {
        self.by_event.insert(event, index);
    }

    fn push_id(&mut self, id: String) -> u32 {
        self.ids.push(id);
        // A trace cannot hold 2^32 distinct signatures (the string table is smaller).
        u32::try_from(self.ids.len() - 1).unwrap_or(u32::MAX)
    }
}

/// The signature id of every unit of work of `trace`, as [`super::classify`] would name
/// it: every linked GPU activity of a GPU trace, every top-level op of a CPU-only one.
pub fn signature_ids(trace: &Trace, links: &Links) -> SignatureIds {
    let mut ids = SignatureIds::default();
    match trace.platform {
        Platform::Cpu => {
            let mut known: FxHashMap<HostOpKey, u32> = FxHashMap::default();
            for event in top_level_ops(trace, links) {
                let key = HostOpKey::of(&trace.events[event]);
                let index = match known.get(&key) {
                    Some(&index) => index,
                    None => {
                        let index = ids.push_id(host_op_id(trace, &key));
                        known.insert(key, index);
                        index
                    }
                };
                ids.insert(event, index);
            }
        }
        Platform::Cuda | Platform::Rocm => {
            // Hashing is the expensive part: once per distinct key, not per invocation.
            let mut known: FxHashMap<GpuKey, u32> = FxHashMap::default();
            for link in links.activities.iter().filter(|l| l.launch.is_some()) {
                let key = GpuKey::of(trace, link);
                let index = match known.get(&key) {
                    Some(&index) => index,
                    None => {
                        let index = ids.push_id(signature_id(trace, &key));
                        known.insert(key, index);
                        index
                    }
                };
                ids.insert(link.activity, index);
            }
        }
    }
    ids
}
