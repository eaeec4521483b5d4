//! Interned strings of a trace.
//!
//! A trace repeats the same few hundred kernel names, op names and shape lists tens of
//! thousands of times. Storing each distinct string once and referring to it by a small
//! id keeps the parsed trace well under the size of the JSON text and makes the
//! signature keys cheap to hash and compare.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Id of a string in a [`StringTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrId(u32);

impl StrId {
    /// The id's position in its table.
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }

    /// The id at `index` of its table (records written to disk keep ids as numbers).
    pub(crate) fn from_index(index: usize) -> StrId {
        StrId(u32::try_from(index).unwrap_or(u32::MAX))
    }
}

/// Returned when a trace has more distinct strings than a [`StrId`] can number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringTableFull;

/// Distinct strings of one trace, each stored once.
#[derive(Debug, Default, Clone)]
pub struct StringTable {
    strings: Vec<Box<str>>,
    index: HashMap<Box<str>, StrId, rustc_hash::FxBuildHasher>,
}

impl StringTable {
    /// Most distinct strings a table holds.
    pub const CAPACITY: u64 = u32::MAX as u64;

    /// The id of `text`, adding it on first sight.
    pub fn intern(&mut self, text: &str) -> Result<StrId, StringTableFull> {
        if let Some(id) = self.index.get(text) {
            return Ok(*id);
        }
        let id = StrId(u32::try_from(self.strings.len()).map_err(|_| StringTableFull)?);
        self.strings.push(text.into());
        self.index.insert(text.into(), id);
        Ok(id)
    }

    /// The id of `text` if it was interned.
    pub fn find(&self, text: &str) -> Option<StrId> {
        self.index.get(text).copied()
    }

    /// The text of an id from this table.
    ///
    /// Ids are only made by [`StringTable::intern`] of the same table, so the lookup
    /// cannot miss; an id from another table yields "" rather than a panic.
    pub fn get(&self, id: StrId) -> &str {
        self.strings.get(id.0 as usize).map(|s| &**s).unwrap_or("")
    }

    /// Every string with its id, in the order they were first interned.
    pub fn iter(&self) -> impl Iterator<Item = (StrId, &str)> {
        self.strings
            .iter()
            .enumerate()
            .map(|(at, text)| (StrId(at as u32), &**text))
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}

/// The Firefox/rustc multiply-rotate hash: several times faster than SipHash on the long
/// kernel names that dominate interning, and hash flooding is no concern for a local file.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` using [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_returns_the_same_id_for_the_same_text() {
        let mut table = StringTable::default();
        let a = table.intern("aten::mm").unwrap();
        let b = table.intern("aten::addmm").unwrap();
        assert_ne!(a, b);
        assert_eq!(table.intern("aten::mm").unwrap(), a);
        assert_eq!(table.get(b), "aten::addmm");
        assert_eq!(table.find("aten::mm"), Some(a));
        assert_eq!(table.find("aten::bmm"), None);
        assert_eq!(table.len(), 2);
    }
}
