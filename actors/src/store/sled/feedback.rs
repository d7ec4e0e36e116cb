//! Delivery feedback in the sled store (`storage::FeedbackRepo`): the
//! provider message index, two key spaces written by settling
//! (`stage_sent_message`) — `sent_msgs` `(project, channel, message id)` →
//! `(delivery, address)` for the lookup and `sent_msgs_by_delivery`
//! `(project, delivery)` → `(channel, message id)` so that removing a
//! delivery removes its entry (`stage_sent_message_removal`) — and a
//! report's change, written under the notification's lock with the
//! delivery's event and trace entry in one commit.

use super::keys::Key;
use super::runs::{notif_key, status_indexed};
use super::{Store, Writes, T};
use crate::error::Result;
use crate::feedback::SentIndex;
use crate::model::{notification_of, Delivery};
use crate::storage::{FeedbackRepo, ReportEdit, SentMessage};
use crate::store::trace_codec;
use uuid::Uuid;

fn forward(project: &Uuid, channel: &Uuid, message_id: &str) -> Key {
    Key::new()
        .id(project)
        .id(channel)
        .bytes(message_id.as_bytes())
}

fn backward(project: &Uuid, delivery: &Uuid) -> Key {
    Key::new().id(project).id(delivery)
}

impl Store {
    /// Stages the index entry of a delivery that settled as sent.
    pub(super) fn stage_sent_message(&self, w: &mut Writes, project: &Uuid, e: &SentIndex) {
        let mut v = e.delivery_id.as_bytes().to_vec();
        v.extend_from_slice(e.address.as_bytes());
        w.put(
            T::sent_msgs,
            forward(project, &e.channel_id, &e.message_id),
            v,
        );
        let mut b = e.channel_id.as_bytes().to_vec();
        b.extend_from_slice(e.message_id.as_bytes());
        w.put(
            T::sent_msgs_by_delivery,
            backward(project, &e.delivery_id),
            b,
        );
    }

    /// Stages the removal of a delivery's index entry, if it has one; the
    /// bytes it held.
    pub(super) fn stage_sent_message_removal(
        &self, w: &mut Writes, project: &Uuid, delivery: &Uuid,
    ) -> Result<u64> {
        let bk = backward(project, delivery);
        let Some(b) = self.tree(T::sent_msgs_by_delivery).get(&bk.0)? else {
            return Ok(0);
        };
        if b.len() >= 16 {
            let channel = Uuid::from_slice(&b[..16]).unwrap_or_default();
            let fk = Key::new().id(project).id(&channel).bytes(&b[16..]);
            // unless a later send of the same id took the entry over
            let ours = self
                .tree(T::sent_msgs)
                .get(&fk.0)?
                .is_some_and(|v| v.get(..16) == Some(delivery.as_bytes().as_slice()));
            if ours {
                w.del(T::sent_msgs, fk);
            }
        }
        w.del(T::sent_msgs_by_delivery, &bk);
        Ok((bk.0.len() + b.len() * 2 + 32) as u64)
    }
}

impl FeedbackRepo for Store {
    /// A scan of the channels' keys `(project, channel)`: channels are few
    /// (a handful per project), and a callback is one request.
    fn channel_project(&self, channel: &Uuid) -> Result<Option<Uuid>> {
        for kv in self.tree(T::channels).iter() {
            let (k, _) = kv?;
            if k.len() == 32 && k[16..] == channel.as_bytes()[..] {
                return Ok(Uuid::from_slice(&k[..16]).ok());
            }
        }
        Ok(None)
    }

    fn sent_message(
        &self, project: &Uuid, channel: &Uuid, message_id: &str,
    ) -> Result<Option<SentMessage>> {
        let k = forward(project, channel, message_id);
        Ok(self.tree(T::sent_msgs).get(&k.0)?.and_then(|v| {
            let delivery_id = Uuid::from_slice(v.get(..16)?).ok()?;
            Some(SentMessage {
                delivery_id,
                address: String::from_utf8_lossy(&v[16..]).into_owned(),
            })
        }))
    }

    fn apply_report(
        &self, project: &Uuid, delivery: &Uuid, f: ReportEdit<'_>,
    ) -> Result<Option<(Delivery, bool)>> {
        let nid = notification_of(delivery);
        let lock_key = Key::new().u8(b'n').id(project).id(&nid);
        let _g = self.lock_many([lock_key.0.as_slice()]);
        let Some(mut rec) = self.notif_rec(project, &nid)? else {
            return Ok(None);
        };
        let Some(di) = rec.d.iter().position(|d| d.id == *delivery) else {
            return Ok(None);
        };
        let old = rec.d[di].status;
        let Some(entry) = f(&mut rec.d[di]) else {
            return Ok(Some((rec.d[di].clone(), false)));
        };
        let mut w = Writes::new();
        let d = &rec.d[di];
        if old != d.status && status_indexed(d.status) {
            w.put(
                T::deliv_by_status,
                Key::new().id(project).u8(d.status.index()).id(&d.id),
                b"",
            );
        }
        self.stage_delivery_event(&mut w, project, d);
        let mut trace = trace_codec::Writer::new(trace_codec::project_time(project));
        trace.push_entry(&entry);
        self.stage_trace_part(&mut w, project, &nid, trace.finish());
        let out = d.clone();
        w.put_rec(T::notifications, notif_key(project, &nid), &rec);
        self.commit(w)?;
        Ok(Some((out, true)))
    }
}

#[cfg(test)]
#[path = "tests/feedback.rs"]
mod tests;
