//! Creating or patching users, one or many in one change: each item is
//! applied to what is stored or to what an earlier item of the same external
//! id left.

use crate::delivery::accept;
use crate::model::{new_id, User, UserPatch};
use std::collections::HashMap;

/// One item's upsert: the user before (`None`: created) and after.
pub struct Upsert {
    pub before: Option<User>,
    pub after: User,
    pub created: bool,
}

/// Applies `items` in order to `stored` (each item's external id with the
/// user stored under it, read by the caller under the users' locks): a later
/// item of an external id sees the earlier one. One `Upsert` per item.
pub fn upsert_all<'a>(
    items: &[(&'a str, &UserPatch)], mut stored: HashMap<&'a str, Option<User>>,
) -> Vec<Upsert> {
    let mut out = Vec::with_capacity(items.len());
    for (ext, patch) in items {
        let before = stored.get(ext).cloned().flatten();
        let created = before.is_none();
        let fresh = new_id();
        let mut after = before
            .clone()
            .unwrap_or_else(|| accept::new_user(ext, fresh));
        accept::patch_user(&mut after, patch, fresh.1, created);
        stored.insert(ext, Some(after.clone()));
        out.push(Upsert {
            before,
            after,
            created,
        });
    }
    out
}
