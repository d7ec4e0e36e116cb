//! The one-click unsubscribe link of a commercial flow's email (RFC 8058):
//! its token (what it names: a project, a user, a flow and an expiry, and
//! its HMAC-SHA256 signature), the `List-Unsubscribe` headers a send adds,
//! the `{{ unsubscribe_url }}` of a template (`MARK`, `fill`, filled at the
//! send as `{{ preferences_url }}` is), and the preference change a used
//! link makes (`patch`).
//!
//! No secret of its own is stored: the signing key is derived from the
//! server's stored key (`Engine::cursor_key`, the same on every node of a
//! cluster) and the project's id, under a label of its own, so a
//! preference-page token never passes for an unsubscribe token or the
//! reverse. Unlike a preference link it does not carry the project's link
//! epoch: a link already sent in a mail must keep turning that mail off
//! after the project rotates its link secret, and all it can do is turn
//! one flow's email off for one user.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

use super::preference_link::{seal, signed_by, unseal, MAC_LEN};
use crate::model::{ChannelType, FlowPreference, Preferences, Rendered};

type HmacSha256 = Hmac<Sha256>;

/// The version byte of the token's layout.
const VERSION: u8 = 1;
/// version, project, user, flow, expiry (seconds since the epoch).
const PAYLOAD_LEN: usize = 1 + 16 + 16 + 16 + 8;

/// How long the link a mail carries keeps working: mail is read, and
/// unsubscribed from, long after it is sent (mailbox providers and
/// anti-spam law expect the link of an old mail to work), so two years.
pub const LIFETIME_SECS: i64 = 730 * 86_400;

/// What a token names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub project: Uuid,
    pub user: Uuid,
    pub flow: Uuid,
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

/// The signing key of a project's unsubscribe links.
fn link_key(server_key: &[u8; 32], project: Uuid) -> [u8; 32] {
    let mut m = HmacSha256::new_from_slice(server_key).expect("HMAC takes any key length");
    m.update(b"herald unsubscribe link key v1\0");
    m.update(project.as_bytes());
    m.finalize().into_bytes().into()
}

fn mac(key: &[u8; 32], payload: &[u8]) -> [u8; 32] {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    m.update(b"unsubscribe\0");
    m.update(payload);
    m.finalize().into_bytes().into()
}

/// The token of `link`, signed (URL-safe base64 without padding).
pub fn issue(server_key: &[u8; 32], link: &Link) -> String {
    let mut payload = Vec::with_capacity(PAYLOAD_LEN + MAC_LEN);
    payload.push(VERSION);
    payload.extend_from_slice(link.project.as_bytes());
    payload.extend_from_slice(link.user.as_bytes());
    payload.extend_from_slice(link.flow.as_bytes());
    payload.extend_from_slice(&link.expires_at.to_be_bytes());
    let sig = mac(&link_key(server_key, link.project), &payload);
    seal(payload, &sig)
}

/// What `token` names when its signature holds and it has not expired at
/// `now` (Unix seconds). Nothing is looked up.
pub fn verify(server_key: &[u8; 32], token: &str, now: i64) -> Result<Link, Refused> {
    let (payload, sig) = unseal(token, VERSION, PAYLOAD_LEN).ok_or(Refused::Forged)?;
    let uuid = |at: usize| Uuid::from_slice(&payload[at..at + 16]).map_err(|_| Refused::Forged);
    let expiry: [u8; 8] = payload[49..57].try_into().expect("8 bytes");
    let link = Link {
        project: uuid(1)?,
        user: uuid(17)?,
        flow: uuid(33)?,
        expires_at: i64::from_be_bytes(expiry),
    };
    let want = mac(&link_key(server_key, link.project), &payload);
    if !signed_by(&want, &sig) {
        return Err(Refused::Forged);
    }
    if now >= link.expires_at {
        return Err(Refused::Expired);
    }
    Ok(link)
}

/// The link of `user` for `flow`, made at `now` (Unix seconds) on the
/// server at `base` (its public URL, no trailing `/`).
pub fn url(
    server_key: &[u8; 32], base: &str, project: Uuid, user: Uuid, flow: Uuid, now: i64,
) -> String {
    let link = Link {
        project,
        user,
        flow,
        expires_at: now + LIFETIME_SECS,
    };
    format!("{base}/u/{}", issue(server_key, &link))
}

/// The headers of a commercial flow's email (RFC 2369, RFC 8058): the link
/// in angle brackets, and the one-click marker that tells a mailbox
/// provider it may POST to it.
pub fn headers(url: &str) -> [(&'static str, String); 2] {
    [
        ("List-Unsubscribe", format!("<{url}>")),
        ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click".into()),
    ]
}

/// What a used link changes: the flow's email off, in the user's own
/// layer (`rules::preferences`: a flow's channel-type setting), the rest
/// left as it is.
pub fn patch(flow_handle: &str) -> Preferences {
    let mut fp = FlowPreference::default();
    fp.channel_types.insert(ChannelType::Email, false);
    let mut p = Preferences::default();
    p.flows.insert(flow_handle.to_string(), fp);
    p
}

/// What `{{ unsubscribe_url }}` renders to: a mark, which each attempt of
/// an email delivery of a commercial flow replaces with the link it sends
/// in `List-Unsubscribe` (`fill`); empty anywhere else. Links are
/// credentials: never stored in a delivery's content.
pub const MARK: &str = "herald:unsubscribe_url";

/// Whether `data` holds the mark anywhere.
pub fn has_mark(data: &Rendered) -> bool {
    data.has_mark(MARK)
}

/// Replaces the mark in every part of `data` with `url` (empty: no link).
pub fn fill(data: &mut Rendered, url: &str) {
    data.fill_mark(MARK, url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;

    const KEY: [u8; 32] = [7; 32];
    const NOW: i64 = 1_800_000_000;

    fn link() -> Link {
        Link {
            project: Uuid::from_u128(1),
            user: Uuid::from_u128(2),
            flow: Uuid::from_u128(3),
            expires_at: NOW + 60,
        }
    }

    #[test]
    fn a_token_verifies_to_what_it_names() {
        let t = issue(&KEY, &link());
        assert_eq!(verify(&KEY, &t, NOW), Ok(link()));
        assert!(t
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    }

    #[test]
    fn a_tampered_or_foreign_token_is_refused() {
        let t = issue(&KEY, &link());
        let mut raw = URL_SAFE_NO_PAD.decode(&t).unwrap();
        for at in [0, 5, 20, 40, 50, 56, raw.len() - 1] {
            raw[at] ^= 1;
            let bad = URL_SAFE_NO_PAD.encode(&raw);
            assert_eq!(verify(&KEY, &bad, NOW), Err(Refused::Forged), "byte {at}");
            raw[at] ^= 1;
        }
        assert_eq!(verify(&KEY, &t[..t.len() - 2], NOW), Err(Refused::Forged));
        assert_eq!(verify(&KEY, "", NOW), Err(Refused::Forged));
        assert_eq!(verify(&KEY, "not a token!", NOW), Err(Refused::Forged));
        assert_eq!(verify(&[8; 32], &t, NOW), Err(Refused::Forged));
        // a preference-page token is not an unsubscribe token
        let p = crate::rules::preference_link::issue(
            &KEY,
            &crate::rules::preference_link::Link {
                project: Uuid::from_u128(1),
                user: Uuid::from_u128(2),
                epoch: 0,
                expires_at: NOW + 60,
            },
        );
        assert_eq!(verify(&KEY, &p, NOW), Err(Refused::Forged));
    }

    #[test]
    fn an_expired_token_is_refused() {
        let t = issue(&KEY, &link());
        assert!(verify(&KEY, &t, NOW + 59).is_ok());
        assert_eq!(verify(&KEY, &t, NOW + 60), Err(Refused::Expired));
        // a sent link lives two years
        let u = url(
            &KEY,
            "https://h",
            link().project,
            link().user,
            link().flow,
            NOW,
        );
        let t = u.strip_prefix("https://h/u/").unwrap();
        assert!(verify(&KEY, t, NOW + LIFETIME_SECS - 1).is_ok());
    }

    #[test]
    fn the_mark_is_filled_and_the_patch_turns_the_flows_email_off() {
        let mut d = Rendered {
            body: format!("bye: {MARK}"),
            html: Some(format!("<a href=\"{MARK}\">x</a>")),
            ..Default::default()
        };
        assert!(has_mark(&d));
        fill(&mut d, "https://h/u/T");
        assert_eq!(d.body, "bye: https://h/u/T");
        assert!(!has_mark(&d));
        let p = patch("news");
        assert!(!p.flows["news"].channel_types[&ChannelType::Email]);
        assert_eq!(p.flows["news"].enabled, None);
        assert!(p.channel_types.is_empty());
        let [(n1, v1), (n2, v2)] = headers("https://h/u/T");
        assert_eq!((n1, v1.as_str()), ("List-Unsubscribe", "<https://h/u/T>"));
        assert_eq!(
            (n2, v2.as_str()),
            ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")
        );
    }
}
