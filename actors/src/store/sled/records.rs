//! The stored form of a notification with its deliveries (`NotifRec`).
//!
//! It is the largest record written per recipient, and sled's cost grows with
//! the bytes logged, so it is kept compact: one-letter field names (still
//! MessagePack with names, so fields can be added with `#[serde(default)]`),
//! and the deliveries leave out what they share with their notification
//! (run, flow, topic, actor, recipient) and their feed state, which lives in
//! the feed tree. Decoding fills those back in.

use crate::delivery::conditions::Conditions;
use crate::model::{
    BounceKind, ChannelType, Delivery, DeliveryError, DeliveryStatus, Notification, Rendered,
    RouteHop, StopReason, Timestamp,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use uuid::Uuid;

/// A notification as stored, with its deliveries: one key for all of them. A
/// delivery is found through its notification (`model::notification_of`).
#[derive(Debug, Clone)]
pub(crate) struct NotifRec {
    pub n: Notification,
    pub d: Vec<Delivery>,
}

#[derive(Serialize, Deserialize)]
struct N<'a> {
    i: Uuid,
    f: Uuid,
    r: Uuid,
    #[serde(borrow)]
    t: Option<std::borrow::Cow<'a, str>>,
    p: bool,
    a: Option<Uuid>,
    u: Uuid,
    pa: Option<Timestamp>,
    c: Timestamp,
    up: Timestamp,
    /// `Notification::stopped`, only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    st: Option<StopReason>,
    /// `Notification::batched_into`, only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bi: Option<Uuid>,
    /// `Notification::test_channel_id`, only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tc: Option<Uuid>,
}

#[derive(Serialize, Deserialize)]
struct D<'a> {
    i: Uuid,
    ch: Uuid,
    ct: ChannelType,
    s: DeliveryStatus,
    #[serde(borrow)]
    d: std::borrow::Cow<'a, Rendered>,
    #[serde(default)]
    o: Option<std::borrow::Cow<'a, Value>>,
    n: u32,
    #[serde(borrow)]
    e: Option<std::borrow::Cow<'a, DeliveryError>>,
    du: Timestamp,
    na: Option<Timestamp>,
    sa: Option<Timestamp>,
    c: Timestamp,
    up: Timestamp,
    /// The delivery's gate (`Delivery::gate`), only when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    g: Option<std::borrow::Cow<'a, Conditions>>,
    /// `Delivery::batch`, only when set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    b: bool,
    /// `Delivery::feed_at`, only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fa: Option<Timestamp>,
    /// `Delivery::bounce`, only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bo: Option<BounceKind>,
    /// `Delivery::fallback_channel_ids`, only when it has some.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    fb: Vec<Uuid>,
    /// `Delivery::attempt_channels`, only after a failover.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    ac: Vec<Uuid>,
    /// `Delivery::route`, only when set.
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    ro: Option<std::borrow::Cow<'a, RouteHop>>,
    /// `Delivery::after_route`, only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ar: Option<u8>,
}

#[derive(Serialize, Deserialize)]
struct Rec<'a> {
    #[serde(borrow)]
    n: N<'a>,
    #[serde(borrow)]
    d: Vec<D<'a>>,
}

impl Serialize for NotifRec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use std::borrow::Cow::Borrowed;
        let n = &self.n;
        Rec {
            n: N {
                i: n.id,
                f: n.flow_id,
                r: n.flow_run_id,
                t: n.topic.as_deref().map(Borrowed),
                p: n.processed,
                a: n.actor_id,
                u: n.recipient_id,
                pa: n.processed_at,
                c: n.created_at,
                up: n.updated_at,
                st: n.stopped,
                bi: n.batched_into,
                tc: n.test_channel_id,
            },
            d: self
                .d
                .iter()
                .map(|d| D {
                    i: d.id,
                    ch: d.channel_id,
                    ct: d.channel_type,
                    s: d.status,
                    d: Borrowed(&d.data),
                    o: d.outcomes.as_ref().map(Borrowed),
                    n: d.attempts,
                    e: d.error.as_ref().map(Borrowed),
                    du: d.due_at,
                    na: d.next_attempt_at,
                    sa: d.sent_at,
                    c: d.created_at,
                    up: d.updated_at,
                    g: d.gate.as_ref().map(Borrowed),
                    b: d.batch,
                    fa: d.feed_at,
                    bo: d.bounce,
                    fb: d.fallback_channel_ids.clone(),
                    ac: d.attempt_channels.clone(),
                    ro: d.route.as_ref().map(Borrowed),
                    ar: d.after_route,
                })
                .collect(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for NotifRec {
    fn deserialize<De: Deserializer<'de>>(de: De) -> Result<Self, De::Error> {
        let r = Rec::deserialize(de)?;
        let n = Notification {
            id: r.n.i,
            flow_id: r.n.f,
            flow_run_id: r.n.r,
            topic: r.n.t.map(|t| t.into_owned()),
            processed: r.n.p,
            actor_id: r.n.a,
            recipient_id: r.n.u,
            processed_at: r.n.pa,
            created_at: r.n.c,
            updated_at: r.n.up,
            stopped: r.n.st,
            batched_into: r.n.bi,
            test_channel_id: r.n.tc,
        };
        let d =
            r.d.into_iter()
                .map(|d| Delivery {
                    id: d.i,
                    notification_id: n.id,
                    flow_run_id: n.flow_run_id,
                    flow_id: n.flow_id,
                    channel_id: d.ch,
                    channel_type: d.ct,
                    topic: n.topic.clone(),
                    status: d.s,
                    data: d.d.into_owned(),
                    outcomes: d.o.map(|o| o.into_owned()),
                    actor_id: n.actor_id,
                    recipient_id: n.recipient_id,
                    attempts: d.n,
                    error: d.e.map(|e| e.into_owned()),
                    due_at: d.du,
                    next_attempt_at: d.na,
                    sent_at: d.sa,
                    seen_at: None,
                    read_at: None,
                    clicked_at: None,
                    archived_at: None,
                    interacted_at: None,
                    interacted_action: None,
                    created_at: d.c,
                    updated_at: d.up,
                    gate: d.g.map(|g| g.into_owned()),
                    batch: d.b,
                    feed_at: d.fa,
                    bounce: d.bo,
                    fallback_channel_ids: d.fb,
                    attempt_channels: d.ac,
                    route: d.ro.map(|r| r.into_owned()),
                    after_route: d.ar,
                })
                .collect();
        Ok(NotifRec { n, d })
    }
}

/// Notifications that are settled when they are created (every delivery sent,
/// skipped or failed at once, the common case of an in-app-only flow) are never
/// rewritten, so they are stored in groups: one key for up to 16 of them
/// instead of one each. sled's cost is mostly per key (each new key also
/// splits a leaf every few inserts), and the notification record was the most
/// expensive of the keys a live recipient costs.
///
/// The ids of a group share their first 14 bytes: the delivery rules hand
/// ids out in runs of 16 that do (`delivery::accept::NotificationIds`, byte 14
/// the index in the run). The group is stored in the notifications space
/// under the 14-byte prefix, so it sorts just before its members' ids; a
/// notification that is still pending, or that does not fit its group, is
/// stored alone under its own id, which also overrides a group's copy if one
/// is ever rewritten.
///
/// A group stops taking records past this many bytes: sled rewrites a leaf's
/// values whole when it consolidates it, so its values stay small.
const GROUP_BYTES: usize = 8 * 1024;

/// Members are `(index, record)`.
const GROUP_V1: u8 = 1;
/// Members are `(index, record, trace part)`: a grouped notification's
/// decision trace as accepted (`trace_codec`) travels in its group, since
/// its own key in the trace space would be one more key per recipient, the
/// cost the group saves (see `sled::trace`). Groups written as V1 are still
/// read, their traces being in the trace space.
const GROUP_V2: u8 = 2;

/// A group ready to be written: (key tail, value).
pub(crate) type GroupKv = (Vec<u8>, Vec<u8>);

/// One member of a stored group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Member<'v> {
    /// The notification id's byte 14.
    pub i: u8,
    /// Its encoded record (`NotifRec`).
    pub rec: &'v [u8],
    /// Its trace part as accepted (`trace_codec`), empty when it has none
    /// here (a V1 group, or a notification accepted without one).
    pub trace: &'v [u8],
}

impl Member<'_> {
    /// The bytes the member takes in its group's value.
    pub fn stored_len(&self) -> usize {
        9 + self.rec.len() + self.trace.len()
    }
}

/// Gathers the settled records of one write set by their ids' prefix (a
/// group never spans two commits: ids are never handed out twice).
#[derive(Default)]
pub(crate) struct Grouper {
    /// The groups in the order first seen.
    groups: Vec<Group>,
    at: std::collections::HashMap<[u8; 14], usize>,
}

struct Group {
    prefix: [u8; 14],
    /// (index, encoded record, trace part) of its members so far.
    members: Vec<(u8, Vec<u8>, Vec<u8>)>,
    bytes: usize,
}

impl Grouper {
    /// Adds the settled record of `nid` with its trace part; hands both back
    /// when its group is full, to be stored alone.
    pub fn add(&mut self, nid: &Uuid, rec: Vec<u8>, trace: Vec<u8>) -> Option<(Vec<u8>, Vec<u8>)> {
        let mut prefix = [0u8; 14];
        prefix.copy_from_slice(&nid.as_bytes()[..14]);
        let i = *self.at.entry(prefix).or_insert_with(|| {
            self.groups.push(Group {
                prefix,
                members: vec![],
                bytes: 0,
            });
            self.groups.len() - 1
        });
        let g = &mut self.groups[i];
        if g.bytes >= GROUP_BYTES {
            return Some((rec, trace));
        }
        g.bytes += rec.len() + trace.len();
        g.members.push((nid.as_bytes()[14], rec, trace));
        None
    }

    /// The groups gathered, as `(key tail, value)`.
    pub fn take(&mut self) -> Vec<GroupKv> {
        self.at.clear();
        std::mem::take(&mut self.groups)
            .into_iter()
            .map(|g| {
                let members: Vec<Member> = g
                    .members
                    .iter()
                    .map(|(i, r, t)| Member {
                        i: *i,
                        rec: r,
                        trace: t,
                    })
                    .collect();
                (g.prefix.to_vec(), group_value(&members))
            })
            .collect()
    }
}

/// The stored value of a group of members (always written as V2).
pub(crate) fn group_value(members: &[Member]) -> Vec<u8> {
    let mut v = Vec::with_capacity(2 + members.iter().map(Member::stored_len).sum::<usize>());
    v.push(GROUP_V2);
    v.push(members.len() as u8);
    for m in members {
        v.push(m.i);
        v.extend_from_slice(&(m.rec.len() as u32).to_be_bytes());
        v.extend_from_slice(m.rec);
        v.extend_from_slice(&(m.trace.len() as u32).to_be_bytes());
        v.extend_from_slice(m.trace);
    }
    v
}

/// The members of a stored group, in index order.
pub(crate) fn group_members(v: &[u8]) -> crate::error::Result<Vec<Member<'_>>> {
    let corrupt = || crate::error::Error::internal("corrupt notification group");
    let version = *v.first().ok_or_else(corrupt)?;
    if !(version == GROUP_V1 || version == GROUP_V2) || v.len() < 2 {
        return Err(corrupt());
    }
    let n = v[1] as usize;
    let mut out = Vec::with_capacity(n);
    let mut at = 2;
    let bytes = |at: &mut usize| -> crate::error::Result<&[u8]> {
        let head = v.get(*at..*at + 4).ok_or_else(corrupt)?;
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let b = v.get(*at + 4..*at + 4 + len).ok_or_else(corrupt)?;
        *at += 4 + len;
        Ok(b)
    };
    for _ in 0..n {
        let i = *v.get(at).ok_or_else(corrupt)?;
        at += 1;
        let rec = bytes(&mut at)?;
        let trace = if version == GROUP_V2 {
            bytes(&mut at)?
        } else {
            &[]
        };
        out.push(Member { i, rec, trace });
    }
    Ok(out)
}

/// The member of notification `nid` in a stored group, if it is there.
pub(crate) fn group_member<'v>(
    v: &'v [u8], nid: &Uuid,
) -> crate::error::Result<Option<Member<'v>>> {
    let i = nid.as_bytes()[14];
    Ok(group_members(v)?.into_iter().find(|m| m.i == i))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::storage::*;

    #[test]
    fn a_record_round_trips_and_shares_its_notification_fields() {
        let nid = crate::delivery::accept::NotificationIds::default().next_id();
        let now = Timestamp::of_id(&nid);
        let n = Notification {
            id: nid,
            flow_id: Uuid::now_v7(),
            flow_run_id: Uuid::now_v7(),
            topic: Some("deploys".into()),
            processed: false,
            actor_id: Some(Uuid::now_v7()),
            recipient_id: Uuid::now_v7(),
            processed_at: None,
            created_at: now,
            updated_at: now,
            stopped: None,
            batched_into: None,
            test_channel_id: Some(Uuid::now_v7()),
        };
        let d = Delivery {
            id: crate::model::delivery_id(&nid, 1),
            notification_id: nid,
            flow_run_id: n.flow_run_id,
            flow_id: n.flow_id,
            channel_id: Uuid::now_v7(),
            channel_type: ChannelType::Chat,
            topic: n.topic.clone(),
            status: DeliveryStatus::Failed,
            data: Rendered {
                subject: "s".into(),
                body: "b".into(),
                html: None,
                url: Some("https://example.com".into()),
                actions: vec![crate::model::RenderedAction {
                    label: "Open".into(),
                    url: "https://example.com/open".into(),
                }],
            },
            outcomes: Some(serde_json::json!({"device": "ok"})),
            actor_id: n.actor_id,
            recipient_id: n.recipient_id,
            attempts: 3,
            error: Some(DeliveryError::new(
                crate::model::DeliveryErrorCode::ProviderRejected,
                "no",
            )),
            due_at: now,
            next_attempt_at: None,
            sent_at: None,
            seen_at: None,
            read_at: None,
            clicked_at: None,
            archived_at: None,
            interacted_at: None,
            interacted_action: None,
            created_at: now,
            updated_at: now,
            gate: None,
            batch: false,
            feed_at: None,
            bounce: None,
            fallback_channel_ids: vec![],
            attempt_channels: vec![],
            route: None,
            after_route: None,
        };
        let rec = NotifRec {
            n: n.clone(),
            d: vec![d.clone()],
        };
        let back: NotifRec = super::super::codec::dec(&super::super::codec::enc(&rec)).unwrap();
        assert_eq!(
            serde_json::to_value(&back.n).unwrap(),
            serde_json::to_value(&n).unwrap()
        );
        assert_eq!(back.d.len(), 1);
        assert_eq!(back.d[0].view(), d.view());
    }

    /// Records group by their ids' prefix, in the order first seen; once a
    /// group holds 8 KiB, a further member is handed back to be stored alone.
    #[test]
    fn groups_follow_id_prefixes_and_hand_back_what_does_not_fit() {
        let mut ids = crate::delivery::accept::NotificationIds::default();
        let a: Vec<Uuid> = (0..16).map(|_| ids.next_id()).collect();
        let b = ids.next_id();
        let mut g = Grouper::default();
        for (i, id) in a.iter().enumerate() {
            let rec = vec![i as u8; 2900];
            let handed = g.add(id, rec.clone(), vec![9; 100]);
            assert_eq!(handed.is_some(), i >= 3, "member {i}");
        }
        assert!(g.add(&b, vec![7; 10], vec![8; 3]).is_none());
        let groups = g.take();
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].0, a[0].as_bytes()[..14].to_vec());
        assert_eq!(groups[1].0, b.as_bytes()[..14].to_vec());
        let members = group_members(&groups[0].1).unwrap();
        assert_eq!(members.iter().map(|m| m.i).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(members.iter().all(|m| m.trace == [9u8; 100]));
        let m = group_member(&groups[1].1, &b).unwrap().unwrap();
        assert_eq!((m.rec, m.trace), (&[7u8; 10][..], &[8u8; 3][..]));
        assert!(g.take().is_empty());
    }

    /// Groups written before members carried their traces (V1) are read
    /// with empty traces; a truncated group is an error, not a panic.
    #[test]
    fn v1_groups_are_read_and_truncated_ones_refused() {
        let mut v1 = vec![GROUP_V1, 2];
        for (i, rec) in [(0u8, &b"abc"[..]), (5, &b"de"[..])] {
            v1.push(i);
            v1.extend_from_slice(&(rec.len() as u32).to_be_bytes());
            v1.extend_from_slice(rec);
        }
        let m = group_members(&v1).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!((m[1].i, m[1].rec, m[1].trace), (5, &b"de"[..], &[][..]));
        let v2 = group_value(&m);
        let back = group_members(&v2).unwrap();
        assert_eq!((back[0].i, back[0].rec), (0, &b"abc"[..]));
        for cut in 0..v2.len() {
            assert!(group_members(&v2[..cut]).is_err(), "cut at {cut}");
        }
    }
}
