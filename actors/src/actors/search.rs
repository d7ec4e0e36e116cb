//! Finding users by part of their external id or email, for the console's
//! user search. No backend indexes emails, so this reads the user list page
//! by page and stops at `SEARCH_CAP` users read (`Found::capped` says so):
//! bounded work on every search, at the price of missing users past the
//! cap in a very large project (an exact external id is looked up directly).

use super::engine::Engine;
use crate::error::Result;
use crate::model::User;
use crate::storage::{PageReq, Storage};
use uuid::Uuid;

/// The most users one search reads.
pub const SEARCH_CAP: usize = 5_000;

/// The most matches one search answers.
const MATCHES: usize = 50;

/// What a search found.
#[derive(Debug, Clone)]
pub struct Found {
    pub users: Vec<User>,
    /// The search stopped at `SEARCH_CAP` users or `MATCHES` matches.
    pub capped: bool,
}

/// Whether a user matches a search: part of the external id or the email,
/// letter case aside (`needle` in lowercase).
pub fn matches(u: &User, needle: &str) -> bool {
    u.external_id.to_lowercase().contains(needle)
        || u.email
            .as_deref()
            .is_some_and(|e| e.to_lowercase().contains(needle))
}

impl Engine {
    /// Users whose external id or email contains `text` (see the module doc).
    pub async fn search_users(&self, project: Uuid, text: String) -> Result<Found> {
        let needle = text.trim().to_lowercase();
        self.run(move |s: &dyn Storage| {
            let mut found = Found {
                users: Vec::new(),
                capped: false,
            };
            if let Some(u) = s.user_by_ext(&project, text.trim())? {
                found.users.push(u);
            }
            let mut req = PageReq {
                limit: 500,
                after: None,
                before: None,
            };
            let mut read = 0;
            loop {
                let p = s.list_users(&project, &req)?;
                read += p.items.len();
                for u in p.items {
                    if matches(&u, &needle) && !found.users.iter().any(|f| f.id == u.id) {
                        found.users.push(u);
                    }
                }
                if found.users.len() >= MATCHES {
                    found.users.truncate(MATCHES);
                    found.capped = true;
                    return Ok(found);
                }
                if !p.has_more_after {
                    return Ok(found);
                }
                if read >= SEARCH_CAP {
                    found.capped = true;
                    return Ok(found);
                }
                req.after = p.last_key;
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_part_of_the_id_or_email() {
        let mut u: User = serde_json::from_value(serde_json::json!({
            "id": Uuid::nil(), "external_id": "Ann-42", "first_name": null, "last_name": null,
            "email": "Ann@Example.com", "phone": null, "avatar": null, "locale": null,
            "timezone": null, "custom_fields": {}, "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z"
        }))
        .expect("a user");
        assert!(matches(&u, "ann-"));
        assert!(matches(&u, "example.com"));
        assert!(!matches(&u, "bob"));
        u.email = None;
        assert!(!matches(&u, "example"));
    }
}
