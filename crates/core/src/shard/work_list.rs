//! A command's work list: the ids of its items in the order a single run does them, and a
//! hash of the whole list that every shard records, so parts of different lists (another
//! grid, another signature file) are never merged.

use sha2::{Digest, Sha256};

use super::Shard;

/// The ordered ids of a command's work items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkList {
    /// The command (`isolated`, `bench scan`, ...): part of the hash.
    pub command: String,
    pub ids: Vec<String>,
}

impl WorkList {
    pub fn new(command: impl Into<String>, ids: Vec<String>) -> WorkList {
        WorkList {
            command: command.into(),
            ids,
        }
    }

    /// SHA-256 of the command and every id, in order (hex).
    pub fn hash(&self) -> String {
        hash_ids(&self.command, self.ids.iter().map(String::as_str))
    }

    /// The ids `shard` covers, in order.
    pub fn covered(&self, shard: Shard) -> Vec<String> {
        shard.slice(&self.ids)
    }
}

/// The hash of a command's ids in order (what [`WorkList::hash`] computes).
pub fn hash_ids<'a>(command: &str, ids: impl Iterator<Item = &'a str>) -> String {
    let mut hasher = IdHasher::new(command);
    ids.for_each(|id| hasher.add(id));
    hasher.finish()
}

/// [`hash_ids`] fed one id at a time, for a work list too long to hold (a signature file
/// read in windows): the same hash, and how many ids it has seen.
pub struct IdHasher {
    hasher: Sha256,
    pub count: usize,
}

impl IdHasher {
    pub fn new(command: &str) -> IdHasher {
        let mut hasher = Sha256::new();
        hasher.update(command.as_bytes());
        hasher.update(b"\n");
        IdHasher { hasher, count: 0 }
    }

    pub fn add(&mut self, id: &str) {
        // Lengths first: ids may hold any character, newlines included.
        self.hasher.update((id.len() as u64).to_le_bytes());
        self.hasher.update(id.as_bytes());
        self.count += 1;
    }

    /// The hash (hex).
    pub fn finish(self) -> String {
        self.hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_depends_on_the_command_the_ids_and_their_order() {
        let list = WorkList::new("isolated", vec!["a".into(), "b".into()]);
        let same = WorkList::new("isolated", vec!["a".into(), "b".into()]);
        assert_eq!(list.hash(), same.hash());
        assert_eq!(list.hash().len(), 64);
        for other in [
            WorkList::new("bench scan", vec!["a".into(), "b".into()]),
            WorkList::new("isolated", vec!["b".into(), "a".into()]),
            WorkList::new("isolated", vec!["ab".into()]),
        ] {
            assert_ne!(list.hash(), other.hash(), "{other:?}");
        }
        let mut one_at_a_time = IdHasher::new("isolated");
        one_at_a_time.add("a");
        one_at_a_time.add("b");
        assert_eq!(one_at_a_time.count, 2);
        assert_eq!(one_at_a_time.finish(), list.hash());
    }
}
