//! Console members, sign-in links and sessions on sled
//! (`storage::ConsoleRepo`): `console_members` (`project ‖ email` → member),
//! `console_links` and `console_sessions` (`project ‖ SHA-256 of the token`
//! → record). Every key starts with the project's id, so deleting the
//! project deletes them with the rest. Changes of one project's console
//! records take one lock, so using a link is atomic with its deletion.

use super::keys::Key;
use super::{Store, Writes, T};
use crate::error::Result;
use crate::model::Timestamp;
use crate::storage::{ConsoleMember, ConsoleRepo, ConsoleSession, SignInLink};
use uuid::Uuid;

fn member_key(project: &Uuid, email: &str) -> Key {
    Key::new().id(project).str(email)
}

fn hash_key(project: &Uuid, hash: &[u8]) -> Key {
    Key::new().id(project).bytes(hash)
}

fn lock_key(project: &Uuid) -> Vec<u8> {
    let mut l = b"console".to_vec();
    l.extend_from_slice(project.as_bytes());
    l
}

impl Store {
    /// Stages the deletion of every link and session of `email` (a project
    /// has few of either: they are scanned).
    fn stage_member_tokens_delete(
        &self, w: &mut Writes, project: &Uuid, email: &str, links_only: bool,
    ) -> Result<()> {
        let prefix = Key::new().id(project);
        for kv in self.tree(T::console_links).scan_prefix(&prefix) {
            let (k, v) = kv?;
            let l: SignInLink = super::codec::dec(&v)?;
            if l.email == email {
                w.del(T::console_links, &k);
            }
        }
        if !links_only {
            for kv in self.tree(T::console_sessions).scan_prefix(&prefix) {
                let (k, v) = kv?;
                let s: ConsoleSession = super::codec::dec(&v)?;
                if s.email == email {
                    w.del(T::console_sessions, &k);
                }
            }
        }
        Ok(())
    }
}

impl ConsoleRepo for Store {
    fn console_member(&self, project: &Uuid, email: &str) -> Result<Option<ConsoleMember>> {
        self.get_rec(T::console_members, member_key(project, email).as_ref())
    }

    fn console_members(&self, project: &Uuid) -> Result<Vec<ConsoleMember>> {
        let mut out: Vec<ConsoleMember> = Vec::new();
        for kv in self
            .tree(T::console_members)
            .scan_prefix(Key::new().id(project))
        {
            let (_, v) = kv?;
            out.push(super::codec::dec(&v)?);
        }
        out.sort_by(|a, b| a.email.cmp(&b.email));
        Ok(out)
    }

    fn put_console_member(&self, m: &ConsoleMember, link: Option<&SignInLink>) -> Result<()> {
        let _g = self.lock(&lock_key(&m.project));
        let k = member_key(&m.project, &m.email);
        let stored = match self.get_rec::<ConsoleMember>(T::console_members, k.as_ref())? {
            Some(mut old) => {
                old.role = m.role;
                old
            }
            None => m.clone(),
        };
        let mut w = Writes::new();
        w.put_rec(T::console_members, &k, &stored);
        if let Some(l) = link {
            w.put_rec(T::console_links, hash_key(&l.project, &l.hash), l);
        }
        self.commit_durable(w)
    }

    fn delete_console_member(&self, project: &Uuid, email: &str) -> Result<bool> {
        let _g = self.lock(&lock_key(project));
        let k = member_key(project, email);
        if self.tree(T::console_members).get(&k)?.is_none() {
            return Ok(false);
        }
        let mut w = Writes::new();
        w.del(T::console_members, &k);
        self.stage_member_tokens_delete(&mut w, project, email, false)?;
        self.commit_durable(w)?;
        Ok(true)
    }

    fn sign_in_link(&self, project: &Uuid, hash: &[u8]) -> Result<Option<SignInLink>> {
        self.get_rec(T::console_links, hash_key(project, hash).as_ref())
    }

    fn use_sign_in_link(
        &self, project: &Uuid, hash: &[u8], password_hash: &str, session: &ConsoleSession,
    ) -> Result<bool> {
        let _g = self.lock(&lock_key(project));
        let Some(link) = self.sign_in_link(project, hash)? else {
            return Ok(false);
        };
        let Some(mut m) = self.console_member(project, &link.email)? else {
            return Ok(false);
        };
        m.password_hash = Some(password_hash.to_string());
        let mut w = Writes::new();
        self.stage_member_tokens_delete(&mut w, project, &m.email, true)?;
        w.put_rec(T::console_members, member_key(project, &m.email), &m);
        w.put_rec(
            T::console_sessions,
            hash_key(&session.project, &session.hash),
            session,
        );
        self.commit_durable(w)?;
        Ok(true)
    }

    fn put_console_session(&self, s: &ConsoleSession) -> Result<()> {
        let _g = self.lock(&lock_key(&s.project));
        let mut w = Writes::new();
        w.put_rec(T::console_sessions, hash_key(&s.project, &s.hash), s);
        self.commit_durable(w)
    }

    fn console_session(
        &self, project: &Uuid, hash: &[u8],
    ) -> Result<Option<(ConsoleSession, ConsoleMember)>> {
        let Some(s) =
            self.get_rec::<ConsoleSession>(T::console_sessions, hash_key(project, hash).as_ref())?
        else {
            return Ok(None);
        };
        Ok(self.console_member(project, &s.email)?.map(|m| (s, m)))
    }

    fn touch_console_session(&self, project: &Uuid, hash: &[u8], at: Timestamp) -> Result<()> {
        let _g = self.lock(&lock_key(project));
        let k = hash_key(project, hash);
        let Some(mut s) = self.get_rec::<ConsoleSession>(T::console_sessions, k.as_ref())? else {
            return Ok(());
        };
        if s.last_seen >= at {
            return Ok(());
        }
        s.last_seen = at;
        let mut w = Writes::new();
        w.put_rec(T::console_sessions, &k, &s);
        self.commit(w)
    }

    fn delete_console_session(&self, project: &Uuid, hash: &[u8]) -> Result<()> {
        let _g = self.lock(&lock_key(project));
        let mut w = Writes::new();
        w.del(T::console_sessions, hash_key(project, hash));
        self.commit_durable(w)
    }
}
