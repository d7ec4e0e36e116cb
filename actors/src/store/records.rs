//! The stored form of a notification with its deliveries (`NotifRec`).
//!
//! It is the largest record written per recipient, and sled's cost grows with
//! the bytes logged, so it is kept compact: one-letter field names (still
//! MessagePack with names, so fields can be added with `#[serde(default)]`),
//! and the deliveries leave out what they share with their notification
//! (run, flow, topic, actor, recipient) and their feed state, which lives in
//! the feed tree. Decoding fills those back in.

use crate::model::{
    ChannelType, Delivery, DeliveryError, DeliveryStatus, Notification, Rendered, Timestamp,
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
                    created_at: d.c,
                    updated_at: d.up,
                })
                .collect();
        Ok(NotifRec { n, d })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::new_notification_id;

    #[test]
    fn a_record_round_trips_and_shares_its_notification_fields() {
        let (nid, now) = new_notification_id();
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
            },
            outcomes: Some(serde_json::json!({"device": "ok"})),
            actor_id: n.actor_id,
            recipient_id: n.recipient_id,
            attempts: 3,
            error: Some(DeliveryError {
                code: "provider_rejected".into(),
                message: "no".into(),
            }),
            due_at: now,
            next_attempt_at: None,
            sent_at: None,
            seen_at: None,
            read_at: None,
            clicked_at: None,
            archived_at: None,
            created_at: now,
            updated_at: now,
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
}
