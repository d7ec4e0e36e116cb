//! The preference-page link's token: what it names (a project, a user, an
//! expiry, the project's link epoch) and its HMAC-SHA256 signature, written
//! once here: `issue`, `verify` and the page's CSRF value (`csrf`); and the
//! `{{ preferences_url }}` of a template, which a send fills with a fresh
//! link (`MARK`, `fill`).
//!
//! No secret of its own is stored: the signing key is derived from the
//! server's stored key (`Engine::cursor_key`, the same on every node of a
//! cluster), the project's id and its `link_epoch`. The token carries the
//! epoch it was signed under, so its MAC is checked before anything is
//! looked up; a link whose epoch is not the project's current one (the
//! project rotated its link secret since) is refused by the caller.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::model::Rendered;

type HmacSha256 = Hmac<Sha256>;

/// The version byte of the token's layout.
const VERSION: u8 = 1;
/// version, project, user, epoch, expiry (seconds since the epoch).
const PAYLOAD_LEN: usize = 1 + 16 + 16 + 8 + 8;
pub(crate) const MAC_LEN: usize = 32;

/// What a token names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub project: Uuid,
    pub user: Uuid,
    /// The project's `link_epoch` when it was issued.
    pub epoch: u64,
    /// Unix seconds after which it is refused.
    pub expires_at: i64,
}

/// Why a token is refused. Callers answer every case alike (404), so a
/// holder learns nothing about which.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// Not a token of this layout, or its MAC does not match.
    Forged,
    Expired,
}

/// The signing key of a project's links at an epoch.
fn link_key(server_key: &[u8; 32], project: Uuid, epoch: u64) -> [u8; 32] {
    let mut m = HmacSha256::new_from_slice(server_key).expect("HMAC takes any key length");
    m.update(b"herald preference link key v1\0");
    m.update(project.as_bytes());
    m.update(&epoch.to_be_bytes());
    m.finalize().into_bytes().into()
}

fn mac(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 32] {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

/// A signed token of a payload (its first byte a version): the payload
/// and its signature `sig`, in URL-safe base64 without padding. The
/// framing every signed link shares (this module's, `unsubscribe_link`).
pub(crate) fn seal(mut payload: Vec<u8>, sig: &[u8; MAC_LEN]) -> String {
    payload.extend_from_slice(sig);
    URL_SAFE_NO_PAD.encode(payload)
}

/// The payload and signature of a token framed by `seal` whose payload is
/// `payload_len` bytes and starts with `version`; `None` for anything
/// else (refused before decoding when it is too long to be one).
pub(crate) fn unseal(token: &str, version: u8, payload_len: usize) -> Option<(Vec<u8>, Vec<u8>)> {
    if token.len() > 2 * (payload_len + MAC_LEN) {
        return None;
    }
    let mut raw = URL_SAFE_NO_PAD.decode(token.as_bytes()).ok()?;
    if raw.len() != payload_len + MAC_LEN || raw[0] != version {
        return None;
    }
    let sig = raw.split_off(payload_len);
    Some((raw, sig))
}

/// Whether `sig` is `want`, compared in constant time.
pub(crate) fn signed_by(want: &[u8; MAC_LEN], sig: &[u8]) -> bool {
    bool::from(want.ct_eq(sig))
}

/// The token of `link`, signed.
pub fn issue(server_key: &[u8; 32], link: &Link) -> String {
    let mut payload = Vec::with_capacity(PAYLOAD_LEN + MAC_LEN);
    payload.push(VERSION);
    payload.extend_from_slice(link.project.as_bytes());
    payload.extend_from_slice(link.user.as_bytes());
    payload.extend_from_slice(&link.epoch.to_be_bytes());
    payload.extend_from_slice(&link.expires_at.to_be_bytes());
    let key = link_key(server_key, link.project, link.epoch);
    let sig = mac(&key, &[b"link\0", &payload]);
    seal(payload, &sig)
}

/// What `token` names when its signature holds and it has not expired at
/// `now` (Unix seconds). Nothing is looked up: whether the epoch is the
/// project's current one is the caller's check (`Link::epoch`).
pub fn verify(server_key: &[u8; 32], token: &str, now: i64) -> Result<Link, Refused> {
    let (payload, sig) = unseal(token, VERSION, PAYLOAD_LEN).ok_or(Refused::Forged)?;
    let uuid = |at: usize| Uuid::from_slice(&payload[at..at + 16]).map_err(|_| Refused::Forged);
    let int = |at: usize| -> [u8; 8] { payload[at..at + 8].try_into().expect("8 bytes") };
    let link = Link {
        project: uuid(1)?,
        user: uuid(17)?,
        epoch: u64::from_be_bytes(int(33)),
        expires_at: i64::from_be_bytes(int(41)),
    };
    let key = link_key(server_key, link.project, link.epoch);
    let want = mac(&key, &[b"link\0", &payload]);
    if !signed_by(&want, &sig) {
        return Err(Refused::Forged);
    }
    if now >= link.expires_at {
        return Err(Refused::Expired);
    }
    Ok(link)
}

/// The page's CSRF value for `token` (a hidden field of its form): only
/// who can sign links can make it, and it is bound to this one token.
pub fn csrf(server_key: &[u8; 32], link: &Link, token: &str) -> String {
    let key = link_key(server_key, link.project, link.epoch);
    URL_SAFE_NO_PAD.encode(mac(&key, &[b"csrf\0", token.as_bytes()]))
}

/// Whether `given` is the CSRF value of `token`, compared in constant time.
pub fn csrf_matches(server_key: &[u8; 32], link: &Link, token: &str, given: &str) -> bool {
    let want = csrf(server_key, link, token);
    want.len() == given.len() && bool::from(want.as_bytes().ct_eq(given.as_bytes()))
}

/// What `{{ preferences_url }}` renders to: a mark, which each attempt of
/// a delivery replaces with a link made then (`fill`). Links are
/// credentials: made at send time, they are never stored in a delivery's
/// content, and each send's expiry counts from the send.
pub const MARK: &str = "herald:preferences_url";

/// How long the link an email carries opens the page: a footer is clicked
/// long after the send.
pub const SENT_LINK_LIFETIME_SECS: i64 = 180 * 86_400;

/// Whether `data` holds the mark anywhere (only then is a link made).
pub fn has_mark(data: &Rendered) -> bool {
    data.has_mark(MARK)
}

/// Replaces the mark in every part of `data` with `url` (empty: no link,
/// as for an in-app entry, which is read inside the product).
pub fn fill(data: &mut Rendered, url: &str) {
    data.fill_mark(MARK, url)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [7; 32];
    const NOW: i64 = 1_800_000_000;

    fn link() -> Link {
        Link {
            project: Uuid::from_u128(1),
            user: Uuid::from_u128(2),
            epoch: 0,
            expires_at: NOW + 60,
        }
    }

    #[test]
    fn the_mark_is_found_and_filled_in_every_part() {
        let mut d = Rendered {
            subject: "s".into(),
            body: format!("prefs: {MARK}"),
            html: Some(format!("<a href=\"{MARK}\">x</a>")),
            ..Default::default()
        };
        assert!(has_mark(&d));
        fill(&mut d, "https://h/p/T");
        assert_eq!(d.body, "prefs: https://h/p/T");
        assert_eq!(d.html.as_deref(), Some("<a href=\"https://h/p/T\">x</a>"));
        assert!(!has_mark(&d));
    }

    #[test]
    fn a_token_verifies_to_what_it_names() {
        let t = issue(&KEY, &link());
        assert_eq!(verify(&KEY, &t, NOW), Ok(link()));
        // URL-safe as it is
        assert!(t
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    }

    #[test]
    fn a_tampered_token_is_refused() {
        let t = issue(&KEY, &link());
        let mut raw = URL_SAFE_NO_PAD.decode(&t).unwrap();
        for at in [0, 5, 20, 40, 45, raw.len() - 1] {
            raw[at] ^= 1;
            let bad = URL_SAFE_NO_PAD.encode(&raw);
            assert_eq!(verify(&KEY, &bad, NOW), Err(Refused::Forged), "byte {at}");
            raw[at] ^= 1;
        }
        assert_eq!(verify(&KEY, &t[..t.len() - 2], NOW), Err(Refused::Forged));
        assert_eq!(verify(&KEY, "", NOW), Err(Refused::Forged));
        assert_eq!(verify(&KEY, "not a token!", NOW), Err(Refused::Forged));
        // another server's key
        assert_eq!(verify(&[8; 32], &t, NOW), Err(Refused::Forged));
    }

    #[test]
    fn an_expired_token_is_refused() {
        let t = issue(&KEY, &link());
        assert!(verify(&KEY, &t, NOW + 59).is_ok());
        assert_eq!(verify(&KEY, &t, NOW + 60), Err(Refused::Expired));
    }

    #[test]
    fn another_projects_or_users_token_does_not_pass_as_this_one() {
        // the project and user are signed: rewriting them breaks the MAC
        let t = issue(&KEY, &link());
        let mut raw = URL_SAFE_NO_PAD.decode(&t).unwrap();
        raw[1..17].copy_from_slice(Uuid::from_u128(3).as_bytes());
        assert_eq!(
            verify(&KEY, &URL_SAFE_NO_PAD.encode(&raw), NOW),
            Err(Refused::Forged)
        );
        // and each project signs with its own key: the same MAC over another
        // project's payload does not verify
        let other = Link {
            project: Uuid::from_u128(3),
            ..link()
        };
        let t2 = issue(&KEY, &other);
        assert_ne!(t[t.len() - 43..], t2[t2.len() - 43..]);
        assert_eq!(verify(&KEY, &t2, NOW).unwrap().project, other.project);
    }

    #[test]
    fn a_rotated_epoch_changes_the_key_and_the_epoch_is_signed() {
        let old = issue(&KEY, &link());
        let new = issue(&KEY, &Link { epoch: 1, ..link() });
        // a token says its epoch: the caller refuses one that is not current
        assert_eq!(verify(&KEY, &old, NOW).unwrap().epoch, 0);
        assert_eq!(verify(&KEY, &new, NOW).unwrap().epoch, 1);
        // and the epoch cannot be rewritten to the current one
        let mut raw = URL_SAFE_NO_PAD.decode(&old).unwrap();
        raw[40] = 1;
        assert_eq!(
            verify(&KEY, &URL_SAFE_NO_PAD.encode(&raw), NOW),
            Err(Refused::Forged)
        );
    }

    #[test]
    fn the_csrf_value_is_bound_to_the_token() {
        let t = issue(&KEY, &link());
        let other = issue(
            &KEY,
            &Link {
                user: Uuid::from_u128(9),
                ..link()
            },
        );
        let c = csrf(&KEY, &link(), &t);
        assert!(csrf_matches(&KEY, &link(), &t, &c));
        assert!(!csrf_matches(&KEY, &link(), &other, &c));
        assert!(!csrf_matches(&KEY, &link(), &t, ""));
        assert!(!csrf_matches(&KEY, &link(), &t, &c[1..]));
        assert!(!csrf_matches(&KEY, &Link { epoch: 1, ..link() }, &t, &c));
    }
}
