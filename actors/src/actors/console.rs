//! The engine's operations of the console's members, sign-in links and
//! sessions (`crate::console` holds the rules). Hashing and checking
//! passwords is slow on purpose: it runs on the blocking pool with the
//! storage work.

use super::engine::Engine;
use crate::audit::Actor;
use crate::console::{self, Invited, LiveSession, Role};
use crate::error::{Error, Result};
use crate::model::{Project, Timestamp};
use crate::storage::{ConsoleMember, Storage};
use std::time::Duration;
use uuid::Uuid;

/// A session just made: the token for the cookie and its CSRF token.
#[derive(Clone, Debug)]
pub struct NewSession {
    pub token: String,
    pub csrf: String,
}

/// The live link of a token (not used, not expired) and its member.
fn live_link(
    s: &dyn Storage, token: &str, now: Timestamp,
) -> Result<Option<(Project, ConsoleMember, Vec<u8>)>> {
    let Some((pid, hash)) = console::read_token(token) else {
        return Ok(None);
    };
    let Some(link) = s.sign_in_link(&pid, &hash)? else {
        return Ok(None);
    };
    if link.expires_at <= now {
        return Ok(None);
    }
    let Some(m) = s.console_member(&pid, &link.email)? else {
        return Ok(None);
    };
    let Some(p) = s.find_project(crate::storage::ProjectRef::Id(&pid))? else {
        return Ok(None);
    };
    Ok(Some((p, m, hash)))
}

impl Engine {
    /// `console::add_member` (the operator's command, or an owner's invite).
    pub async fn console_add_member(
        &self, project_name: String, email: String, role: Role, ttl: Duration, actor: Actor,
    ) -> Result<Invited> {
        self.run(move |s| {
            let before = console::normalize_email(&email, "email")
                .ok()
                .and_then(|e| {
                    s.project_by_name(&project_name)
                        .ok()
                        .flatten()
                        .and_then(|p| s.console_member(&p.id, &e).ok().flatten())
                });
            let inv = console::add_member(s, &project_name, &email, role, ttl)?;
            console::audit_member_change(
                s,
                &inv.project.id,
                &actor,
                &inv.member.email,
                before.as_ref(),
                Some(&inv.member),
            );
            Ok(inv)
        })
        .await
    }

    /// The project and member of a sign-in link that still works.
    pub async fn console_link(&self, token: String) -> Result<Option<(Project, ConsoleMember)>> {
        self.run(move |s| Ok(live_link(s, &token, Timestamp::now())?.map(|(p, m, _)| (p, m))))
            .await
    }

    /// Uses a sign-in link: sets the member's password (the policy of
    /// `console::check_password`) and signs them in. 404 when the link does
    /// not work (unknown, used or expired).
    pub async fn console_use_link(
        &self, token: String, password: String, confirm: String,
    ) -> Result<NewSession> {
        self.run(move |s| {
            console::check_password(&password, &confirm)?;
            let now = Timestamp::now();
            let gone = || Error::not_found("sign_in_link", "this link");
            let (_, m, hash) = live_link(s, &token, now)?.ok_or_else(gone)?;
            let hashed = console::hash_password(&password)?;
            let (token, session) = console::new_session(&m, now);
            if !s.use_sign_in_link(&m.project, &hash, &hashed, &session)? {
                return Err(gone());
            }
            let mut after = m.clone();
            after.password_hash = Some(hashed);
            console::audit_member_change(
                s,
                &m.project,
                &Actor::Member {
                    email: m.email.clone(),
                },
                &m.email,
                Some(&m),
                Some(&after),
            );
            Ok(NewSession {
                token,
                csrf: session.csrf,
            })
        })
        .await
    }

    /// Signs a member in by email and password: a new session, or `None`
    /// (the same answer whether the email is unknown or the password
    /// wrong, after the same work). An email that is a member of several
    /// projects signs in to the first, by project name, whose password
    /// matches.
    pub async fn console_sign_in(
        &self, email: String, password: String,
    ) -> Result<Option<(ConsoleMember, NewSession)>> {
        self.run(move |s| {
            let Ok(email) = console::normalize_email(&email, "email") else {
                console::verify_password(None, &password);
                return Ok(None);
            };
            let mut projects = s.projects()?;
            projects.sort_by(|a, b| a.name.cmp(&b.name));
            let mut found = None;
            let mut checked = false;
            for p in &projects {
                let Some(m) = s.console_member(&p.id, &email)? else {
                    continue;
                };
                let Some(h) = m.password_hash.as_deref() else {
                    continue;
                };
                checked = true;
                if console::verify_password(Some(h), &password) {
                    found = Some(m);
                    break;
                }
            }
            if !checked {
                console::verify_password(None, &password);
            }
            let Some(m) = found else { return Ok(None) };
            let (token, session) = console::new_session(&m, Timestamp::now());
            s.put_console_session(&session)?;
            Ok(Some((
                m,
                NewSession {
                    token,
                    csrf: session.csrf,
                },
            )))
        })
        .await
    }

    /// The live session of a cookie's token: `None` when there is none, its
    /// member is gone, or it was idle for `idle` (then it is deleted).
    /// Touches it at most once a minute.
    pub async fn console_session(
        &self, token: String, idle: Duration,
    ) -> Result<Option<LiveSession>> {
        let Some((pid, hash)) = console::read_token(&token) else {
            return Ok(None);
        };
        self.run(move |s| {
            let Some((session, member)) = s.console_session(&pid, &hash)? else {
                return Ok(None);
            };
            let now = Timestamp::now();
            if console::idle_expired(session.last_seen, now, idle) {
                s.delete_console_session(&pid, &hash)?;
                return Ok(None);
            }
            if console::worth_touching(session.last_seen, now) {
                s.touch_console_session(&pid, &hash, now)?;
            }
            let Some(project) = s.find_project(crate::storage::ProjectRef::Id(&pid))? else {
                return Ok(None);
            };
            Ok(Some(LiveSession {
                project,
                member,
                session,
            }))
        })
        .await
    }

    /// Ends the session of a token (sign-out).
    pub async fn console_sign_out(&self, token: String) -> Result<()> {
        let Some((pid, hash)) = console::read_token(&token) else {
            return Ok(());
        };
        self.run(move |s| s.delete_console_session(&pid, &hash))
            .await
    }

    /// The project's members, by email.
    pub async fn console_members(&self, project: Uuid) -> Result<Vec<ConsoleMember>> {
        self.run(move |s| s.console_members(&project)).await
    }

    /// Gives a member another role; 404 for no such member, 409 for the
    /// last owner's.
    pub async fn console_set_role(
        &self, project: Uuid, email: String, role: Role, actor: Actor,
    ) -> Result<ConsoleMember> {
        self.run(move |s| {
            let email = console::normalize_email(&email, "email")?;
            let before = s
                .console_member(&project, &email)?
                .ok_or_else(|| Error::not_found("console_member", &email))?;
            if before.role == Role::Owner && role != Role::Owner {
                console::keeps_an_owner(s, &project, &email)?;
            }
            let mut after = before.clone();
            after.role = role;
            s.put_console_member(&after, None)?;
            console::audit_member_change(s, &project, &actor, &email, Some(&before), Some(&after));
            Ok(after)
        })
        .await
    }

    /// Removes a member and ends their sessions; 404 for no such member,
    /// 409 for the last owner.
    pub async fn console_remove_member(
        &self, project: Uuid, email: String, actor: Actor,
    ) -> Result<()> {
        self.run(move |s| {
            let email = console::normalize_email(&email, "email")?;
            let before = s
                .console_member(&project, &email)?
                .ok_or_else(|| Error::not_found("console_member", &email))?;
            if before.role == Role::Owner {
                console::keeps_an_owner(s, &project, &email)?;
            }
            s.delete_console_member(&project, &email)?;
            console::audit_member_change(s, &project, &actor, &email, Some(&before), None);
            Ok(())
        })
        .await
    }
}
