//! Keyset pagination at the HTTP edge (docs/API.md §4): parsing `limit`/`after`/`before`
//! and issuing opaque cursors. A cursor carries the boundary item's sort key, the
//! direction, when it was issued, and a hash of the list and its filters; it is
//! signed (HMAC-SHA256 with a per-data-dir key), so a tampered, foreign or expired
//! cursor is recognised and refused with 400 `invalid_param`.

use crate::bodies::{List, Page as PageBody};
use crate::errors::{ApiError, ApiResult};
use crate::extract::Query;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use herald_engine::storage::{Page, PageReq};
use herald_engine::Error;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

pub const DEFAULT_LIMIT: usize = 25;
pub const MAX_LIMIT: usize = 1000;
const TTL_MS: i64 = 24 * 3600 * 1000;
const MAC_LEN: usize = 16;

/// A parsed page request bound to one list and filter set.
pub struct Paging {
    pub req: PageReq,
    binding: [u8; 8],
    key: [u8; 32],
}

fn binding(project: &uuid::Uuid, list: &str, filters: &[(&str, Option<String>)]) -> [u8; 8] {
    let mut h = Sha256::new();
    // The project first: a cursor of one tenant's list is refused on another's
    // (400), instead of reading as an empty page there.
    h.update(project.as_bytes());
    h.update(list.as_bytes());
    for (k, v) in filters {
        if let Some(v) = v {
            h.update([0]);
            h.update(k.as_bytes());
            h.update([1]);
            h.update(v.as_bytes());
        }
    }
    let d = h.finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    b
}

fn mac(key: &[u8; 32], data: &[u8]) -> [u8; MAC_LEN] {
    let mut m = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
    m.update(data);
    let out = m.finalize().into_bytes();
    let mut b = [0u8; MAC_LEN];
    b.copy_from_slice(&out[..MAC_LEN]);
    b
}

fn encode(key: &[u8; 32], dir: u8, bind: &[u8; 8], sort_key: &[u8]) -> String {
    let mut d = Vec::with_capacity(18 + sort_key.len() + MAC_LEN);
    d.push(1);
    d.push(dir);
    d.extend_from_slice(&chrono::Utc::now().timestamp_millis().to_be_bytes());
    d.extend_from_slice(bind);
    d.extend_from_slice(sort_key);
    let m = mac(key, &d);
    d.extend_from_slice(&m);
    B64.encode(d)
}

fn decode(key: &[u8; 32], param: &str, s: &str, dir: u8, bind: &[u8; 8]) -> ApiResult<Vec<u8>> {
    let bad = || {
        ApiError(Error::invalid_param(
            param,
            format!("invalid or expired cursor in {param}"),
        ))
    };
    let d = B64.decode(s.as_bytes()).map_err(|_| bad())?;
    if d.len() < 18 + MAC_LEN || d[0] != 1 {
        return Err(bad());
    }
    let (body, tag) = d.split_at(d.len() - MAC_LEN);
    let want = mac(key, body);
    if !bool::from(subtle::ConstantTimeEq::ct_eq(&want[..], tag)) {
        return Err(bad());
    }
    if body[1] != dir || &body[10..18] != bind {
        return Err(bad());
    }
    let mut ts = [0u8; 8];
    ts.copy_from_slice(&body[2..10]);
    let age = chrono::Utc::now().timestamp_millis() - i64::from_be_bytes(ts);
    if !(-60_000..=TTL_MS).contains(&age) {
        return Err(bad());
    }
    Ok(body[18..].to_vec())
}

/// Parses `limit` (default 25, capped at 1000), `after` and `before`.
pub fn parse(
    q: &Query, key: &[u8; 32], project: &uuid::Uuid, list: &str, filters: &[(&str, Option<String>)],
) -> ApiResult<Paging> {
    let limit = match q.get("limit") {
        None => DEFAULT_LIMIT,
        Some(s) => {
            let t = s.trim();
            let digits = t.strip_prefix('+').unwrap_or(t);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                match digits.parse::<u128>() {
                    Ok(0) => {
                        return Err(Error::invalid_param("limit", "limit must be at least 1").into())
                    }
                    Ok(n) => n.min(MAX_LIMIT as u128) as usize,
                    Err(_) => MAX_LIMIT, // too large for any integer: capped
                }
            } else {
                return Err(
                    Error::invalid_param("limit", "limit must be a positive integer").into(),
                );
            }
        }
    };
    let bind = binding(project, list, filters);
    let (after, before) = (q.get("after"), q.get("before"));
    if after.is_some() && before.is_some() {
        return Err(Error::invalid_param("before", "give either after or before, not both").into());
    }
    let mut req = PageReq {
        limit,
        after: None,
        before: None,
    };
    if let Some(a) = after {
        req.after = Some(decode(key, "after", a, b'a', &bind)?);
    }
    if let Some(b) = before {
        req.before = Some(decode(key, "before", b, b'b', &bind)?);
    }
    Ok(Paging {
        req,
        binding: bind,
        key: *key,
    })
}

impl Paging {
    /// The list response: `{items, page}`.
    pub fn respond<T, I>(&self, page: &Page<T>, items: Vec<I>) -> List<I> {
        List {
            items,
            page: self.page_object(page),
        }
    }

    pub fn page_object<T>(&self, page: &Page<T>) -> PageBody {
        let after = match (&page.last_key, page.has_more_after) {
            (Some(k), true) => Some(encode(&self.key, b'a', &self.binding, k)),
            _ => None,
        };
        let before = match (&page.first_key, page.has_more_before) {
            (Some(k), true) => Some(encode(&self.key, b'b', &self.binding, k)),
            _ => None,
        };
        PageBody {
            after,
            before,
            has_more_after: page.has_more_after,
            has_more_before: page.has_more_before,
            limit: self.req.limit,
        }
    }
}
