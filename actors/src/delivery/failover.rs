//! Provider failover: a channel step may name backup channels of its
//! channel's type (`Step::fallback_channel_ids`, copied onto each delivery
//! at staging). When the channel fails a delivery for good (a provider's
//! rejection, its credentials, the channel gone or revoked), when its
//! retries are used up, or when its circuit is open (`crate::health`), the
//! same delivery (same id, so the same idempotency key at every provider)
//! moves to the next backup at once. The move is an outcome
//! (`Outcome::Failover`) stored with the settle, so it is durable before
//! the backup is tried.

use crate::model::{Delivery, DeliveryError, DeliveryErrorCode, Timestamp};
use crate::storage::Outcome;
use uuid::Uuid;

/// `reason` of a failover: the channel failed the delivery for good.
pub const FAILED: &str = "failed";
/// `reason` of a failover: the channel's retries are used up.
pub const RETRIES_EXHAUSTED: &str = "retries_exhausted";
/// `reason` of a failover: the channel's circuit is open.
pub const UNHEALTHY: &str = "unhealthy";

/// The backups left after `to` (the ones before it were passed over).
pub fn after(fallbacks: &[Uuid], to: &Uuid) -> Vec<Uuid> {
    match fallbacks.iter().position(|c| c == to) {
        Some(i) => fallbacks[i + 1..].to_vec(),
        None => fallbacks.to_vec(),
    }
}

/// Whether an error code says the channel, not the message's recipient,
/// could not send: another channel may. A missing or invalid address, an
/// expired subscription or a suppression would fail anywhere.
fn channel_failed(code: &str) -> Option<&'static str> {
    use DeliveryErrorCode as C;
    [
        (C::ProviderRejected, FAILED),
        (C::ProviderUnauthorized, FAILED),
        (C::ProviderRevoked, FAILED),
        (C::ProviderNotConfigured, FAILED),
        (C::DestinationNotAllowed, FAILED),
        (C::ProviderUnavailable, RETRIES_EXHAUSTED),
    ]
    .into_iter()
    .find(|(c, _)| c.as_str() == code)
    .map(|(_, r)| r)
}

/// The outcome of an attempt of a delivery with backups `fallbacks`
/// (`Delivery::fallback_channel_ids`; `attempted`: its channel was called)
/// with them applied: a final failure of the channel becomes a move to the
/// next backup, due `now`; any other outcome stays as it is.
pub fn reroute(fallbacks: &[Uuid], o: Outcome, attempted: bool, now: Timestamp) -> Outcome {
    let Some(&to) = fallbacks.first() else {
        return o;
    };
    match o {
        Outcome::Failed(e) => match channel_failed(&e.code) {
            Some(reason) => Outcome::Failover {
                error: e,
                attempted,
                to,
                reason,
                at: now,
            },
            None => Outcome::Failed(e),
        },
        o => o,
    }
}

/// The move of a delivery with backups `fallbacks` past a channel whose
/// circuit is open, without calling it; `None` when it has no backup (it
/// waits for the channel instead).
pub fn unhealthy(fallbacks: &[Uuid], now: Timestamp) -> Option<Outcome> {
    let &to = fallbacks.first()?;
    Some(Outcome::Failover {
        error: DeliveryError::new(
            DeliveryErrorCode::ProviderUnavailable,
            "the channel is degraded (its circuit is open)",
        ),
        attempted: false,
        to,
        reason: UNHEALTHY,
        at: now,
    })
}

/// The `delivery.failover` trace entry of a move of `d` (as settled: its
/// channel is the backup now) from channel `from`.
pub fn trace_entry(
    d: &Delivery, from: Uuid, reason: &str, now: Timestamp,
) -> crate::trace::TraceEntry {
    crate::trace::entry(
        now,
        "delivery.failover",
        serde_json::json!({
            "step": crate::trace::step_of(&d.id),
            "delivery_id": d.id,
            "from": from,
            "to": d.channel_id,
            "reason": reason,
            "error_code": d.error.as_ref().map(|e| e.code.as_str()),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(code: DeliveryErrorCode) -> Outcome {
        Outcome::Failed(DeliveryError::new(code, "x"))
    }

    fn delivery(fallbacks: Vec<Uuid>) -> Delivery {
        let mut d: Delivery = serde_json::from_value(serde_json::json!({
            "id": Uuid::now_v7(), "notification_id": Uuid::now_v7(),
            "flow_run_id": Uuid::now_v7(), "flow_id": Uuid::now_v7(),
            "channel_id": Uuid::now_v7(), "channel_type": "email", "topic": null,
            "status": "pending", "data": {"subject": "", "body": ""},
            "actor_id": null, "recipient_id": Uuid::now_v7(), "attempts": 0,
            "error": null, "due_at": Timestamp::from_millis(0),
            "next_attempt_at": null, "sent_at": null, "seen_at": null,
            "read_at": null, "clicked_at": null, "archived_at": null,
            "created_at": Timestamp::from_millis(0), "updated_at": Timestamp::from_millis(0)
        }))
        .unwrap();
        d.fallback_channel_ids = fallbacks;
        d
    }

    #[test]
    fn a_channel_failure_moves_to_the_first_backup() {
        let (b, c) = (Uuid::now_v7(), Uuid::now_v7());
        let d = delivery(vec![b, c]);
        let now = Timestamp::from_millis(5);
        for (code, reason) in [
            (DeliveryErrorCode::ProviderRejected, FAILED),
            (DeliveryErrorCode::ProviderUnavailable, RETRIES_EXHAUSTED),
            (DeliveryErrorCode::ProviderRevoked, FAILED),
        ] {
            match reroute(&d.fallback_channel_ids, failed(code), true, now) {
                Outcome::Failover {
                    to, reason: r, at, ..
                } => {
                    assert_eq!((to, r, at), (b, reason, now));
                }
                o => panic!("{code:?}: {o:?}"),
            }
        }
    }

    #[test]
    fn a_recipient_failure_or_no_backup_stays_failed() {
        let d = delivery(vec![Uuid::now_v7()]);
        let now = Timestamp::from_millis(5);
        for code in [
            DeliveryErrorCode::InvalidAddress,
            DeliveryErrorCode::SubscriptionExpired,
            DeliveryErrorCode::Suppressed,
        ] {
            assert!(matches!(
                reroute(&d.fallback_channel_ids, failed(code), true, now),
                Outcome::Failed(_)
            ));
        }
        let alone = delivery(vec![]);
        assert!(matches!(
            reroute(
                &alone.fallback_channel_ids,
                failed(DeliveryErrorCode::ProviderRejected),
                true,
                now
            ),
            Outcome::Failed(_)
        ));
        assert!(unhealthy(&alone.fallback_channel_ids, now).is_none());
        assert!(matches!(
            unhealthy(&d.fallback_channel_ids, now),
            Some(Outcome::Failover {
                attempted: false,
                reason: UNHEALTHY,
                ..
            })
        ));
    }

    #[test]
    fn settling_a_failover_keeps_each_attempts_channel() {
        let (b, c) = (Uuid::now_v7(), Uuid::now_v7());
        let mut d = delivery(vec![b, c]);
        let a = d.channel_id;
        d.attempts = 2;
        let q = crate::storage::QueueItem {
            project: Uuid::now_v7(),
            delivery_id: d.id,
            channel_type: d.channel_type,
            due_ms: 0,
        };
        let now = Timestamp::from_millis(9);
        let o = reroute(
            &d.fallback_channel_ids,
            failed(DeliveryErrorCode::ProviderUnavailable),
            true,
            now,
        );
        let next = crate::delivery::settle::apply(&mut d, &q, o, now).expect("queued again");
        assert_eq!(next.due_ms, 9);
        assert_eq!(d.channel_id, b);
        assert_eq!(d.fallback_channel_ids, vec![c]);
        assert_eq!(d.attempts, 3);
        assert_eq!(d.attempt_channels(), vec![a, a, a]);
        assert_eq!(d.attempts_on_channel(), 0);
        // B's attempt: counted on B.
        let o = Outcome::Retry {
            error: DeliveryError::new(DeliveryErrorCode::ProviderUnavailable, "503"),
            at: now,
            outcomes: None,
        };
        crate::delivery::settle::apply(&mut d, &q, o, now);
        assert_eq!(d.attempt_channels(), vec![a, a, a, b]);
        assert_eq!(d.attempts_on_channel(), 1);
        // An open circuit on B: moved on to C without an attempt.
        let o = unhealthy(&d.fallback_channel_ids, now).expect("a backup");
        crate::delivery::settle::apply(&mut d, &q, o, now);
        assert_eq!((d.channel_id, d.attempts), (c, 4));
        assert!(d.fallback_channel_ids.is_empty());
        assert_eq!(d.attempt_channels(), vec![a, a, a, b]);
    }
}
