//! Keyset pagination over any ordered key range. Lists are newest first; a page
//! `after` a boundary holds older items, a page `before` it newer ones (returned
//! newest first all the same). Boundaries are item keys, so inserts and deletes
//! between requests never skip or repeat an item.

use super::keys::Key;
use crate::error::Result;
use sled::{IVec, Tree};
use std::ops::Bound;

#[derive(Debug, Clone, Default)]
pub struct PageReq {
    pub limit: usize,
    /// Sort key (bytes after the list prefix) of the boundary item.
    pub after: Option<Vec<u8>>,
    pub before: Option<Vec<u8>>,
}

#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// Sort keys of the first and last item (or of the boundary on an empty page).
    pub first_key: Option<Vec<u8>>,
    pub last_key: Option<Vec<u8>>,
    pub has_more_after: bool,
    pub has_more_before: bool,
}

impl<T> Page<T> {
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            items: self.items.into_iter().map(f).collect(),
            first_key: self.first_key,
            last_key: self.last_key,
            has_more_after: self.has_more_after,
            has_more_before: self.has_more_before,
        }
    }
}

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

fn range(tree: &Tree, lo: Bound<Vec<u8>>, hi: Bound<Vec<u8>>) -> sled::Iter {
    tree.range::<Vec<u8>, _>((lo, hi))
}

/// Scans `tree` under `prefix`. `pick` decodes one entry (key, value) into an item
/// or skips it (filters). `lo`/`hi` optionally narrow the sort-key range (e.g. from
/// `created_after`). Returns items newest (highest key) first.
pub fn scan<V>(
    tree: &Tree,
    prefix: &Key,
    req: &PageReq,
    mut pick: impl FnMut(&IVec, &IVec) -> Result<Option<V>>,
) -> Result<Page<V>> {
    let p = &prefix.0;
    let full = |k: &[u8]| {
        let mut v = p.clone();
        v.extend_from_slice(k);
        v
    };
    let lo_all: Bound<Vec<u8>> = Bound::Included(p.clone());
    let hi_all: Bound<Vec<u8>> = match prefix_end(p) {
        Some(e) => Bound::Excluded(e),
        None => Bound::Unbounded,
    };
    let limit = req.limit.max(1);
    let mut items: Vec<(Vec<u8>, V)> = Vec::with_capacity(limit.min(1024));
    let sk = |k: &IVec| k[p.len()..].to_vec();

    if let Some(before) = &req.before {
        // Newer than the boundary: ascending from it, then reversed.
        let mut it = range(tree, Bound::Excluded(full(before)), hi_all.clone());
        let mut more = false;
        for kv in &mut it {
            let (k, v) = kv?;
            if let Some(x) = pick(&k, &v)? {
                if items.len() == limit {
                    more = true;
                    break;
                }
                items.push((sk(&k), x));
            }
        }
        items.reverse();
        // Older side: is there a match at or below the boundary?
        let has_after = exists(tree, lo_all, Bound::Included(full(before)), true, &mut pick)?;
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

    let (hi, check_newer) = match &req.after {
        Some(after) => (Bound::Excluded(full(after)), true),
        None => (hi_all.clone(), false),
    };
    let mut more = false;
    for kv in range(tree, lo_all, hi.clone()).rev() {
        let (k, v) = kv?;
        if let Some(x) = pick(&k, &v)? {
            if items.len() == limit {
                more = true;
                break;
            }
            items.push((sk(&k), x));
        }
    }
    let has_before = if check_newer {
        let from = match &req.after {
            Some(a) => Bound::Included(full(a)),
            None => unreachable!(),
        };
        exists(tree, from, hi_all, false, &mut pick)?
    } else {
        false
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

fn exists<V>(
    tree: &Tree,
    lo: Bound<Vec<u8>>,
    hi: Bound<Vec<u8>>,
    rev: bool,
    pick: &mut impl FnMut(&IVec, &IVec) -> Result<Option<V>>,
) -> Result<bool> {
    let it = range(tree, lo, hi);
    if rev {
        for kv in it.rev() {
            let (k, v) = kv?;
            if pick(&k, &v)?.is_some() {
                return Ok(true);
            }
        }
    } else {
        for kv in it {
            let (k, v) = kv?;
            if pick(&k, &v)?.is_some() {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree_with(n: u8) -> (tempfile::TempDir, Tree) {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::open(dir.path()).unwrap();
        let t = db.open_tree("t").unwrap();
        for i in 1..=n {
            t.insert([b'p', i], &[i]).unwrap();
        }
        t.insert([b'q', 1], &[1]).unwrap(); // another prefix: never listed
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
        scan(t, &Key(vec![b'p']), &req, |_, v| Ok(Some(v[0]))).unwrap()
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
        t.insert([b'p', 9], &[9]).unwrap(); // newer than everything
        t.remove([b'p', 4]).unwrap();
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
        let p = scan(&t, &Key(vec![b'p']), &req, |_, v| {
            Ok((v[0] % 2 == 1).then_some(v[0]))
        })
        .unwrap();
        assert_eq!(p.items, vec![9, 7]);
        assert!(p.has_more_after);
    }
}
