//! Keyset pagination over any ordered key range. Lists are newest first; a page
//! `after` a boundary holds older items, a page `before` it newer ones (returned
//! newest first all the same). Boundaries are item keys, so inserts and deletes
//! between requests never skip or repeat an item.

use super::keys::Key;
use super::{Space, SpaceIter};
use crate::error::Result;
pub(crate) use crate::storage::{Page, PageReq};
use sled::IVec;
use std::ops::Bound;

fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

fn range(tree: &Space, lo: Bound<Vec<u8>>, hi: Bound<Vec<u8>>) -> SpaceIter {
    tree.range::<Vec<u8>, _>((lo, hi))
}

/// Sort-key bounds of one visit (bytes after the list prefix).
pub(crate) type Bounds<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>);

/// A list's items in sort-key order. `visit` calls `f(sort key, item)` for the
/// items within `bounds`, ascending (or descending when `rev`), until `f`
/// returns false. Pagination (`paginate`) needs nothing else, so a list may be a
/// plain key range, several items per record or a merge of packed index chunks.
pub(crate) trait Source<V> {
    fn visit(
        &mut self, bounds: Bounds, rev: bool, f: &mut dyn FnMut(Vec<u8>, V) -> bool,
    ) -> Result<()>;
}

/// Whether a sort key lies within bounds.
pub(crate) fn within(k: &[u8], (lo, hi): Bounds) -> bool {
    let above = match lo {
        Bound::Included(b) => k >= b,
        Bound::Excluded(b) => k > b,
        Bound::Unbounded => true,
    };
    let below = match hi {
        Bound::Included(b) => k <= b,
        Bound::Excluded(b) => k < b,
        Bound::Unbounded => true,
    };
    above && below
}

/// One page of `src` for `req`, newest (highest sort key) first.
pub(crate) fn paginate<V>(src: &mut impl Source<V>, req: &PageReq) -> Result<Page<V>> {
    let limit = req.limit.max(1);
    let mut items: Vec<(Vec<u8>, V)> = Vec::with_capacity(limit.min(1024));
    let mut more = false;
    let mut collect = |k: Vec<u8>, v: V| {
        if items.len() == limit {
            more = true;
            return false;
        }
        items.push((k, v));
        true
    };
    if let Some(before) = &req.before {
        // Newer than the boundary: ascending from it, then reversed.
        src.visit(
            (Bound::Excluded(before.as_slice()), Bound::Unbounded),
            false,
            &mut collect,
        )?;
        items.reverse();
        // Older side: is there a match at or below the boundary?
        let has_after = any(
            src,
            (Bound::Unbounded, Bound::Included(before.as_slice())),
            true,
        )?;
        let first_key = items.first().map(|x| x.0.clone());
        let last_key = items
            .last()
            .map(|x| x.0.clone())
            .or_else(|| Some(before.clone()));
        return Ok(Page {
            first_key,
            last_key,
            items: items.into_iter().map(|x| x.1).collect(),
            has_more_after: has_after,
            has_more_before: more,
        });
    }
    let hi = match &req.after {
        Some(a) => Bound::Excluded(a.as_slice()),
        None => Bound::Unbounded,
    };
    src.visit((Bound::Unbounded, hi), true, &mut collect)?;
    let has_before = match &req.after {
        Some(a) => any(
            src,
            (Bound::Included(a.as_slice()), Bound::Unbounded),
            false,
        )?,
        None => false,
    };
    let first_key = items
        .first()
        .map(|x| x.0.clone())
        .or_else(|| req.after.clone());
    let last_key = items.last().map(|x| x.0.clone());
    Ok(Page {
        first_key,
        last_key,
        items: items.into_iter().map(|x| x.1).collect(),
        has_more_after: more,
        has_more_before: has_before,
    })
}

/// A source seen through sort-key bounds of its own (ids made within a time
/// range): each visit walks only the intersection, so a range far from the
/// newest items is reached by a seek, not a scan down to it.
pub(crate) struct Clamped<'s, S> {
    pub src: &'s mut S,
    /// Included.
    pub lo: Option<[u8; 16]>,
    /// Excluded.
    pub hi: Option<[u8; 16]>,
}

impl<V, S: Source<V>> Source<V> for Clamped<'_, S> {
    fn visit(
        &mut self, bounds: Bounds, rev: bool, f: &mut dyn FnMut(Vec<u8>, V) -> bool,
    ) -> Result<()> {
        let lo = match (bounds.0, &self.lo) {
            (b, None) => b,
            (Bound::Unbounded, Some(l)) => Bound::Included(&l[..]),
            (Bound::Included(k) | Bound::Excluded(k), Some(l)) if k < &l[..] => {
                Bound::Included(&l[..])
            }
            (b, Some(_)) => b,
        };
        let hi = match (bounds.1, &self.hi) {
            (b, None) => b,
            (Bound::Unbounded, Some(h)) => Bound::Excluded(&h[..]),
            (Bound::Included(k) | Bound::Excluded(k), Some(h)) if k >= &h[..] => {
                Bound::Excluded(&h[..])
            }
            (b, Some(_)) => b,
        };
        let empty = match (lo, hi) {
            (Bound::Included(l), Bound::Included(h)) => l > h,
            (Bound::Included(l) | Bound::Excluded(l), Bound::Included(h) | Bound::Excluded(h)) => {
                l >= h
            }
            _ => false,
        };
        if empty {
            return Ok(());
        }
        self.src.visit((lo, hi), rev, f)
    }
}

/// Whether `src` has an item within bounds.
fn any<V>(src: &mut impl Source<V>, bounds: Bounds, rev: bool) -> Result<bool> {
    let mut found = false;
    src.visit(bounds, rev, &mut |_, _| {
        found = true;
        false
    })?;
    Ok(found)
}

/// The full-key range of sort-key bounds under `prefix`.
pub(crate) fn key_range(prefix: &[u8], (lo, hi): Bounds) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let full = |k: &[u8]| {
        let mut v = prefix.to_vec();
        v.extend_from_slice(k);
        v
    };
    let lo = match lo {
        Bound::Included(k) => Bound::Included(full(k)),
        Bound::Excluded(k) => Bound::Excluded(full(k)),
        Bound::Unbounded => Bound::Included(prefix.to_vec()),
    };
    let hi = match hi {
        Bound::Included(k) => Bound::Included(full(k)),
        Bound::Excluded(k) => Bound::Excluded(full(k)),
        Bound::Unbounded => match prefix_end(prefix) {
            Some(e) => Bound::Excluded(e),
            None => Bound::Unbounded,
        },
    };
    (lo, hi)
}

/// A key range under a prefix, one item per entry (or none: `pick` filters).
pub(crate) struct TreeSource<'t, P> {
    pub tree: Space<'t>,
    pub prefix: &'t [u8],
    pub pick: P,
}

impl<V, P: FnMut(&IVec, &IVec) -> Result<Option<V>>> Source<V> for TreeSource<'_, P> {
    fn visit(
        &mut self, bounds: Bounds, rev: bool, f: &mut dyn FnMut(Vec<u8>, V) -> bool,
    ) -> Result<()> {
        let (lo, hi) = key_range(self.prefix, bounds);
        let it = range(&self.tree, lo, hi);
        let n = self.prefix.len();
        let mut step = |kv: sled::Result<(IVec, IVec)>| -> Result<bool> {
            let (k, v) = kv?;
            Ok(match (self.pick)(&k, &v)? {
                Some(x) => f(k[n..].to_vec(), x),
                None => true,
            })
        };
        if rev {
            for kv in it.rev() {
                if !step(kv)? {
                    break;
                }
            }
        } else {
            for kv in it {
                if !step(kv)? {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// Scans `tree` under `prefix`. `pick` decodes one entry (key, value) into an item
/// or skips it (filters). Returns items newest (highest key) first.
pub fn scan<V>(
    tree: Space<'_>, prefix: &Key, req: &PageReq,
    pick: impl FnMut(&IVec, &IVec) -> Result<Option<V>>,
) -> Result<Page<V>> {
    paginate(
        &mut TreeSource {
            tree,
            prefix: &prefix.0,
            pick,
        },
        req,
    )
}

/// Appends a packed index chunk: ids (16 bytes each) under `prefix`, stored as
/// one record keyed by the chunk's largest id. A run's or topic's notifications
/// are indexed this way, one key per chunk instead of one per notification.
pub(crate) fn packed_chunk(prefix: &Key, ids: &mut [uuid::Uuid]) -> Option<(Vec<u8>, Vec<u8>)> {
    ids.sort_unstable();
    let last = ids.last()?;
    let key = prefix.clone().id(last).0;
    let mut v = Vec::with_capacity(ids.len() * 16);
    for id in ids.iter() {
        v.extend_from_slice(id.as_bytes());
    }
    Some((key, v))
}

/// The ids of packed index chunks under a prefix, in id order: chunks are keyed
/// by their largest id, so going down they are opened lazily, only when the next
/// chunk's largest id beats every id already open (a k-way merge).
pub(crate) struct PackedSource<'t, P> {
    pub tree: Space<'t>,
    pub prefix: &'t [u8],
    pub pick: P,
}

fn chunk_ids(v: &[u8], bounds: Bounds) -> Vec<[u8; 16]> {
    v.chunks_exact(16)
        .filter(|c| within(c, bounds))
        .map(|c| {
            let mut a = [0u8; 16];
            a.copy_from_slice(c);
            a
        })
        .collect()
}

impl<V, P: FnMut(uuid::Uuid) -> Result<Option<V>>> Source<V> for PackedSource<'_, P> {
    fn visit(
        &mut self, bounds: Bounds, rev: bool, f: &mut dyn FnMut(Vec<u8>, V) -> bool,
    ) -> Result<()> {
        let n = self.prefix.len();
        if !rev {
            // Ascending: every chunk whose largest id is above the lower bound
            // may hold ids in range.
            let (klo, khi) = key_range(self.prefix, (bounds.0, Bound::Unbounded));
            let mut ids = vec![];
            for kv in range(&self.tree, klo, khi) {
                let (_, v) = kv?;
                ids.extend(chunk_ids(&v, bounds));
            }
            ids.sort_unstable();
            for id in ids {
                if let Some(x) = (self.pick)(uuid::Uuid::from_bytes(id))? {
                    if !f(id.to_vec(), x) {
                        break;
                    }
                }
            }
            return Ok(());
        }
        let (klo, khi) = key_range(self.prefix, (Bound::Unbounded, Bound::Unbounded));
        let mut chunks = range(&self.tree, klo, khi).rev().peekable();
        // Open chunks, each with its in-range ids ascending (taken from the end).
        let mut open: Vec<Vec<[u8; 16]>> = vec![];
        loop {
            let top = open
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.last().map(|id| (i, *id)))
                .max_by(|a, b| a.1.cmp(&b.1));
            let next_last = match chunks.peek() {
                Some(Ok((k, _))) => Some(k[n..].to_vec()),
                Some(Err(_)) => match chunks.next() {
                    Some(Err(e)) => return Err(e.into()),
                    _ => None,
                },
                None => None,
            };
            match (&top, next_last) {
                (None, None) => return Ok(()),
                (None, Some(_)) => {}
                (Some((_, id)), Some(last)) if last.as_slice() > id.as_slice() => {}
                (Some((i, id)), _) => {
                    let (i, id) = (*i, *id);
                    open[i].pop();
                    if let Some(x) = (self.pick)(uuid::Uuid::from_bytes(id))? {
                        if !f(id.to_vec(), x) {
                            return Ok(());
                        }
                    }
                    continue;
                }
            }
            // The next chunk may hold a larger id than any open one: open it.
            if let Some(kv) = chunks.next() {
                let (_, v) = kv?;
                let ids = chunk_ids(&v, bounds);
                if !ids.is_empty() {
                    open.push(ids);
                }
            }
            open.retain(|c| !c.is_empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::storage::*;
    use sled::Tree;

    fn sp(t: &Tree) -> Space<'_> {
        Space {
            tree: Some(t.clone()),
            tag: 0,
            _store: std::marker::PhantomData,
        }
    }

    fn tree_with(n: u8) -> (tempfile::TempDir, Tree) {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::open(dir.path()).unwrap();
        let t = db.open_tree("t").unwrap();
        for i in 1..=n {
            sp(&t).insert([b'p', i], vec![i]).unwrap();
        }
        sp(&t).insert([b'q', 1], vec![1]).unwrap(); // another prefix: never listed
        (dir, t)
    }

    fn ids(p: &Page<u8>) -> Vec<u8> {
        p.items.clone()
    }

    fn page(t: &Tree, limit: usize, after: Option<u8>, before: Option<u8>) -> Page<u8> {
        let req = PageReq {
            limit,
            after: after.map(|a| vec![a]),
            before: before.map(|b| vec![b]),
        };
        scan(sp(t), &Key(vec![b'p']), &req, |_, v| Ok(Some(v[0]))).unwrap()
    }

    #[test]
    fn walks_newest_first_and_back_without_gaps() {
        let (_d, t) = tree_with(7);
        let p1 = page(&t, 3, None, None);
        assert_eq!(ids(&p1), vec![7, 6, 5]);
        assert!(p1.has_more_after && !p1.has_more_before);
        let p2 = page(&t, 3, Some(5), None);
        assert_eq!(ids(&p2), vec![4, 3, 2]);
        assert!(p2.has_more_after && p2.has_more_before);
        let p3 = page(&t, 3, Some(2), None);
        assert_eq!(ids(&p3), vec![1]);
        assert!(!p3.has_more_after && p3.has_more_before);
        let back = page(&t, 3, None, Some(1));
        assert_eq!(
            ids(&back),
            vec![4, 3, 2],
            "a page before is still newest first"
        );
        assert!(back.has_more_before && back.has_more_after);
        let back2 = page(&t, 3, None, Some(4));
        assert_eq!(ids(&back2), vec![7, 6, 5]);
        assert!(!back2.has_more_before);
    }

    #[test]
    fn inserts_between_pages_do_not_shift_the_walk() {
        let (_d, t) = tree_with(6);
        let p1 = page(&t, 2, None, None);
        assert_eq!(ids(&p1), vec![6, 5]);
        sp(&t).insert([b'p', 9], vec![9]).unwrap(); // newer than everything
        sp(&t).remove([b'p', 4]).unwrap();
        let p2 = page(&t, 2, Some(5), None);
        assert_eq!(ids(&p2), vec![3, 2]);
    }

    #[test]
    fn filters_skip_items_and_pages_stay_full() {
        let (_d, t) = tree_with(9);
        let req = PageReq {
            limit: 2,
            after: None,
            before: None,
        };
        let p = scan(sp(&t), &Key(vec![b'p']), &req, |_, v| {
            Ok((v[0] % 2 == 1).then_some(v[0]))
        })
        .unwrap();
        assert_eq!(p.items, vec![9, 7]);
        assert!(p.has_more_after);
    }

    /// Packed chunks whose id ranges overlap (two runs expanding at once)
    /// still list in id order, both ways, with pages that neither skip nor
    /// repeat.
    #[test]
    fn packed_chunks_merge_in_id_order() {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::open(dir.path()).unwrap();
        let t = db.open_tree("t").unwrap();
        let id = |n: u8| uuid::Uuid::from_bytes([n; 16]);
        let prefix = Key(vec![b'x']);
        for chunk in [
            vec![1u8, 4, 7, 10],
            vec![2, 3, 11],
            vec![5, 6, 8, 9],
            vec![12],
        ] {
            let mut ids: Vec<uuid::Uuid> = chunk.into_iter().map(id).collect();
            let (k, v) = packed_chunk(&prefix, &mut ids).unwrap();
            sp(&t).insert(k, v).unwrap();
        }
        sp(&t).insert([b'y', 0], vec![0]).unwrap(); // another prefix
        let page = |after: Option<u8>, before: Option<u8>| {
            let req = PageReq {
                limit: 5,
                after: after.map(|a| id(a).as_bytes().to_vec()),
                before: before.map(|b| id(b).as_bytes().to_vec()),
            };
            let mut src = PackedSource {
                tree: sp(&t),
                prefix: &prefix.0,
                pick: |u: uuid::Uuid| Ok(Some(u.as_bytes()[0])),
            };
            paginate(&mut src, &req).unwrap()
        };
        let p1 = page(None, None);
        assert_eq!(p1.items, vec![12, 11, 10, 9, 8]);
        assert!(p1.has_more_after && !p1.has_more_before);
        let p2 = page(Some(8), None);
        assert_eq!(p2.items, vec![7, 6, 5, 4, 3]);
        let p3 = page(Some(3), None);
        assert_eq!(p3.items, vec![2, 1]);
        assert!(!p3.has_more_after && p3.has_more_before);
        let back = page(None, Some(3));
        assert_eq!(back.items, vec![8, 7, 6, 5, 4]);
        assert!(back.has_more_before && back.has_more_after);
    }
}
