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
        let last_key = items.last().map(|x| x.0.clone()).or_else(|| Some(before.clone()));
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
    let first_key = items.first().map(|x| x.0.clone()).or_else(|| req.after.clone());
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
