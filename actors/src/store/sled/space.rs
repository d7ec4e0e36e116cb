//! Key spaces: every kind of record (and every index) lives in the one data
//! tree under a one-byte prefix (`T`), and `Space` gives sled's read API on
//! the keys of one prefix without it. Apart from `mod.rs` so both stay short.

use super::{space_key, Store};
use sled::Tree;

/// One key space: the keys of the data tree under a one-byte prefix, with
/// sled's read API on keys without it.
///
/// Why one sled tree rather than one per key space: a change that touches
/// several trees needs a sled transaction, and sled 0.34's transactional
/// `insert` reads every key it writes (to return the old value); measured, that
/// read was a quarter of a topic chunk's commit. A batch on one tree is atomic
/// (`Tree::apply_batch`) and reads nothing.
#[derive(Clone)]
pub(crate) struct Space<'a> {
    /// `None` while the store reopens: every call answers 503.
    pub(super) tree: Option<Tree>,
    pub(super) tag: u8,
    pub(super) _store: std::marker::PhantomData<&'a Store>,
}

/// An iterator of a key space: keys come back without the prefix.
pub(crate) struct SpaceIter(Option<sled::Iter>, bool);

/// What a read answers while the store reopens (503 through `From<sled::Error>`).
pub(super) fn reopening() -> sled::Error {
    sled::Error::Io(std::io::Error::other("the store is reopening"))
}

impl SpaceIter {
    fn closed() -> SpaceIter {
        SpaceIter(None, false)
    }
}

fn strip(kv: sled::Result<(sled::IVec, sled::IVec)>) -> sled::Result<(sled::IVec, sled::IVec)> {
    kv.map(|(k, v)| (sled::IVec::from(&k[1..]), v))
}

impl Iterator for SpaceIter {
    type Item = sled::Result<(sled::IVec, sled::IVec)>;
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Some(it) => it.next().map(strip),
            None => self.closed_next(),
        }
    }
}

impl SpaceIter {
    /// A closed iterator yields one error, then ends.
    fn closed_next(&mut self) -> Option<sled::Result<(sled::IVec, sled::IVec)>> {
        if self.1 {
            None
        } else {
            self.1 = true;
            Some(Err(reopening()))
        }
    }
}

impl DoubleEndedIterator for SpaceIter {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Some(it) => it.next_back().map(strip),
            None => self.closed_next(),
        }
    }
}

impl<'a> Space<'a> {
    fn t(&self) -> sled::Result<&Tree> {
        self.tree.as_ref().ok_or_else(reopening)
    }
    pub fn get(&self, k: impl AsRef<[u8]>) -> sled::Result<Option<sled::IVec>> {
        self.t()?.get(space_key(self.tag, k.as_ref()))
    }
    pub fn contains_key(&self, k: impl AsRef<[u8]>) -> sled::Result<bool> {
        self.t()?.contains_key(space_key(self.tag, k.as_ref()))
    }
    /// Writes one key outside a commit (setup, tests).
    pub fn insert(&self, k: impl AsRef<[u8]>, v: impl Into<sled::IVec>) -> sled::Result<()> {
        self.t()?
            .insert(space_key(self.tag, k.as_ref()), v)
            .map(|_| ())
    }
    /// Removes one key outside a commit; returns the old value.
    pub fn remove(&self, k: impl AsRef<[u8]>) -> sled::Result<Option<sled::IVec>> {
        self.t()?.remove(space_key(self.tag, k.as_ref()))
    }
    pub fn iter(&self) -> SpaceIter {
        match &self.tree {
            Some(t) => SpaceIter(Some(t.scan_prefix([self.tag])), false),
            None => SpaceIter::closed(),
        }
    }
    pub fn scan_prefix(&self, p: impl AsRef<[u8]>) -> SpaceIter {
        match &self.tree {
            Some(t) => SpaceIter(Some(t.scan_prefix(space_key(self.tag, p.as_ref()))), false),
            None => SpaceIter::closed(),
        }
    }
    pub fn range<K: AsRef<[u8]>, R: std::ops::RangeBounds<K>>(&self, r: R) -> SpaceIter {
        use std::ops::Bound;
        let lo = match r.start_bound() {
            Bound::Included(k) => Bound::Included(space_key(self.tag, k.as_ref())),
            Bound::Excluded(k) => Bound::Excluded(space_key(self.tag, k.as_ref())),
            Bound::Unbounded => Bound::Included(vec![self.tag]),
        };
        let hi = match r.end_bound() {
            Bound::Included(k) => Bound::Included(space_key(self.tag, k.as_ref())),
            Bound::Excluded(k) => Bound::Excluded(space_key(self.tag, k.as_ref())),
            // Tags stay below 255 (there are far fewer key spaces).
            Bound::Unbounded => Bound::Excluded(vec![self.tag + 1]),
        };
        match &self.tree {
            Some(t) => SpaceIter(Some(t.range::<Vec<u8>, _>((lo, hi))), false),
            None => SpaceIter::closed(),
        }
    }
    /// Number of keys (a scan).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.iter().count()
    }
}
