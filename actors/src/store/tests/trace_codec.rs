//! Unit tests of `trace_codec.rs` (kept beside it so the module itself stays readable).

use super::*;
use serde_json::json;

fn e(at: i64, code: &str, args: Value) -> TraceEntry {
    crate::trace::entry(Timestamp::from_millis(at), code, args)
}

/// Step `step` of notification `nid`, made at `t`: not attempted, no error.
fn delivery(
    nid: &Uuid, step: usize, channel_type: crate::model::ChannelType,
    status: crate::model::DeliveryStatus, t: Timestamp,
) -> crate::model::Delivery {
    crate::model::Delivery {
        id: crate::model::delivery_id(nid, step),
        notification_id: *nid,
        flow_run_id: Uuid::now_v7(),
        flow_id: Uuid::now_v7(),
        channel_id: Uuid::now_v7(),
        channel_type,
        topic: None,
        status,
        data: crate::model::Rendered::default(),
        outcomes: None,
        actor_id: None,
        recipient_id: Uuid::now_v7(),
        attempts: 0,
        error: None,
        due_at: t,
        next_attempt_at: None,
        sent_at: None,
        seen_at: None,
        read_at: None,
        clicked_at: None,
        archived_at: None,
        interacted_at: None,
        interacted_action: None,
        created_at: t,
        updated_at: t,
        gate: None,
        batch: false,
        feed_at: None,
        bounce: None,
        fallback_channel_ids: vec![],
        attempt_channels: vec![],
        route: None,
        after_route: None,
    }
}

/// The notification `nid` that `a` was made for, settled at `t`.
fn notification(a: &Accepted, nid: Uuid, t: Timestamp) -> crate::model::Notification {
    crate::model::Notification {
        id: nid,
        flow_id: a.flow_id,
        flow_run_id: a.run_id,
        topic: None,
        processed: true,
        actor_id: None,
        recipient_id: a.user_id,
        processed_at: Some(t),
        created_at: t,
        updated_at: t,
        stopped: None,
        batched_into: None,
        test_channel_id: None,
    }
}

fn sample() -> Vec<TraceEntry> {
    let id = Uuid::now_v7().to_string();
    vec![
        e(
            1_790_000_000_123,
            "flow.reached",
            json!({"flow_handle": "soak", "flow_id": id, "run_id": id}),
        ),
        e(
            1_790_000_000_123,
            "step.reached",
            json!({"channel_type": "in_app", "delivery_id": id, "step": 0}),
        ),
        e(
            1_790_000_000_100,
            "delivery.final",
            json!({"attempts": 3, "error_code": null, "status": "failed", "step": 1}),
        ),
        // what no table knows, and values that only look like ids
        e(
            -5,
            "some.future_code",
            json!({"new_arg": [1, -2, 2.5, true, false, null, {"deep": {"x": "y"}}],
                       "upper": id.to_uppercase(), "braced": format!("{{{id}}}"),
                       "simple": id.replace('-', ""), "big": u64::MAX, "small": i64::MIN,
                       "unicode": "héllo ✓", "empty": "", "obj": {}}),
        ),
    ]
}

#[test]
fn round_trips_exactly_and_is_smaller() {
    let entries = sample();
    let compact = encode(&entries, None);
    assert_eq!(decode(&compact).unwrap(), entries);
    // the entries Herald writes (not the last, made of what no table knows)
    let typical = &entries[..3];
    let compact = encode(typical, None);
    let named = crate::store::sled::codec::enc(&typical);
    assert!(
        compact.len() * 2 < named.len(),
        "{} vs {}",
        compact.len(),
        named.len()
    );
    assert_eq!(decode(&encode(&[], None)).unwrap(), vec![]);
}

/// A trace as accepted written straight through a `Writer` reads back as
/// the entries made as values, for each way a step can go; with staged
/// decisions it is encoded from the entries.
#[test]
fn accepted_traces_written_directly_read_back_as_their_entries() {
    use crate::model::{ChannelType, Delivery, DeliveryError, DeliveryStatus};
    let t = Timestamp::from_millis(1_790_000_000_123);
    let nid = Uuid::now_v7();
    let d = |step: usize, ct: ChannelType, status: DeliveryStatus, err: Option<(&str, &str)>| {
        Delivery {
            error: err.map(|(code, message)| DeliveryError {
                code: code.into(),
                message: message.into(),
            }),
            ..delivery(&nid, step, ct, status, t)
        }
    };
    let ds = vec![
        d(0, ChannelType::InApp, DeliveryStatus::Sent, None),
        d(
            1,
            ChannelType::Chat,
            DeliveryStatus::Skipped,
            Some(("preference", "off")),
        ),
        d(
            2,
            ChannelType::Email,
            DeliveryStatus::Failed,
            Some(("template_error", "bad {{")),
        ),
        d(
            3,
            ChannelType::Sms,
            DeliveryStatus::Failed,
            Some(("provider_not_configured", "none")),
        ),
        d(4, ChannelType::WebPush, DeliveryStatus::Pending, None),
        d(5, ChannelType::MobilePush, DeliveryStatus::Sent, None),
    ];
    let prefs = vec![
        ("default", true),
        ("flow", false),
        ("channel_type", true),
        ("default", true),
        ("flow_channel", true),
        ("default", true),
    ];
    let mut a = Accepted {
        at: t,
        project_at: None,
        flow_id: Uuid::now_v7(),
        flow_handle: "comment-created".into(),
        run_id: Uuid::now_v7(),
        user_id: Uuid::now_v7(),
        // an external id that looks like an id, and one that is a known value
        external_id: Uuid::now_v7().to_string(),
        prefs: prefs.clone(),
        decided: vec![],
    };
    for ext in [
        a.external_id.clone(),
        "sent".into(),
        "ada@example.com".into(),
    ] {
        a.external_id = ext;
        let mut w = Writer::new(None);
        a.write(&ds, &mut w);
        let part = w.finish();
        assert_eq!(decode(&part).unwrap(), a.entries(&ds));
        assert_eq!(encode_accepted(&a, &ds), part);
    }
    assert_eq!(a.entries(&ds).len(), 2 + 4 + 4 + 3 + 4 + 3 + 4);
    let mut w = Writer::new(None);
    a.write(&[], &mut w);
    assert_eq!(decode(&w.finish()).unwrap(), a.entries(&[]));
    assert!(Writer::new(None).finish().is_empty());
    // past 127 entries the count takes two bytes
    let many: Vec<Delivery> = (0..40)
        .map(|i| d(i, ChannelType::InApp, DeliveryStatus::Sent, None))
        .collect();
    a.prefs = vec![("default", true); 40];
    let mut w = Writer::new(None);
    a.write(&many, &mut w);
    assert_eq!(decode(&w.finish()).unwrap(), a.entries(&many));
    // a stub beside its record (as stored in a group) reads back the same
    let n = notification(&a, nid, t);
    a.prefs = prefs;
    let st = stub(&a, &n).unwrap();
    assert!(
        is_stub(&st) && st.len() * 4 < encode_accepted(&a, &ds).len(),
        "{} bytes",
        st.len()
    );
    assert_eq!(from_stub(&st, &n, &ds).unwrap(), a.entries(&ds));
    for cut in 1..st.len() {
        assert!(from_stub(&st[..cut], &n, &ds).is_err(), "cut at {cut}");
    }
    let mut other = n.clone();
    other.flow_run_id = Uuid::now_v7();
    assert!(stub(&a, &other).is_none());
    a.decided = vec![(
        None,
        crate::trace::entry(t, "run.scheduled", json!({"send_at": "x"})),
    )];
    assert!(stub(&a, &n).is_none());
    let part = encode_accepted(&a, &ds);
    assert_eq!(decode(&part).unwrap(), a.entries(&ds));
    assert_eq!(a.entries(&ds)[2].code, "run.scheduled");
}

/// Settles written straight through a `Writer` (with decisions made as
/// values mixed in) read back as the entries made as values, and an
/// attempt's entry holds exactly its documented arguments.
#[test]
fn settled_entries_written_directly_read_back_as_their_entries() {
    use crate::model::{ChannelType, Delivery, DeliveryError, DeliveryStatus};
    use crate::trace::{processed_into, settled_into, AttemptNote};
    let t = Timestamp::from_millis(1_790_000_000_123);
    let nid = Uuid::now_v7();
    let mut d = Delivery {
        attempts: 1,
        error: Some(DeliveryError {
            code: "provider_unavailable".into(),
            message: "503".into(),
        }),
        next_attempt_at: Some(Timestamp::from_millis(1_790_000_001_000)),
        ..delivery(&nid, 1, ChannelType::Chat, DeliveryStatus::Pending, t)
    };
    let note = AttemptNote {
        provider: "webhook".into(),
        latency_ms: 12,
        status_code: Some(503),
        subscriptions_removed: 0,
    };
    let mut w = Writer::new(None);
    let mut values = vec![];
    let decided = crate::trace::entry(t, "condition.evaluated", json!({"step": 1, "result": true}));
    w.push_entry(&decided);
    values.push(decided);
    // a retry, then a sent attempt with a message id and a removed
    // subscription, a skip that made no attempt, and processed
    settled_into(&d, true, Some(note.clone()), t, &mut w);
    settled_into(&d, true, Some(note.clone()), t, &mut values);
    let attempt = &values[1];
    assert_eq!(attempt.code, "attempt");
    assert_eq!(
        Value::Object(attempt.args.clone()),
        json!({"step": 1, "delivery_id": d.id, "channel_type": "chat",
                   "channel_id": d.channel_id, "attempt": 1, "result": "retry",
                   "provider": "webhook", "latency_ms": 12, "status_code": 503,
                   "error_code": "provider_unavailable", "error": "503",
                   "provider_message_id": null})
    );
    assert_eq!(values[2].code, "retry.scheduled");
    d.status = DeliveryStatus::Sent;
    d.attempts = 2;
    d.error = None;
    d.next_attempt_at = None;
    d.outcomes = Some(json!([{"message_id": "m-1"}]));
    let sent_note = AttemptNote {
        subscriptions_removed: 2,
        ..note
    };
    settled_into(&d, true, Some(sent_note.clone()), t, &mut w);
    settled_into(&d, true, Some(sent_note), t, &mut values);
    d.status = DeliveryStatus::Skipped;
    settled_into(&d, false, None, t, &mut w);
    settled_into(&d, false, None, t, &mut values);
    processed_into(t, &mut w);
    processed_into(t, &mut values);
    assert_eq!(decode(&w.finish()).unwrap(), values);
    let codes: Vec<&str> = values.iter().map(|e| e.code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "condition.evaluated",
            "attempt",
            "retry.scheduled",
            "attempt",
            "subscription.removed",
            "delivery.final",
            "delivery.final",
            "notification.processed"
        ]
    );
    assert_eq!(values[3].args["provider_message_id"], json!("m-1"));
}

/// What writing a trace costs each way, per notification (a measurement,
/// not a check: `cargo test --release -p herald-engine --lib --
/// --ignored trace_write_cost --nocapture`).
#[test]
#[ignore]
fn trace_write_cost() {
    use crate::model::{ChannelType, Delivery, DeliveryStatus};
    use crate::trace::{processed_into, settled_into, AttemptNote};
    let t = Timestamp::now();
    let nid = Uuid::now_v7();
    let d = |step: usize, ct: ChannelType, status: DeliveryStatus| Delivery {
        attempts: 1,
        ..delivery(&nid, step, ct, status, t)
    };
    let ds = vec![d(0, ChannelType::InApp, DeliveryStatus::Sent)];
    let a = Accepted {
        at: t,
        project_at: None,
        flow_id: Uuid::now_v7(),
        flow_handle: "comment-created".into(),
        run_id: Uuid::now_v7(),
        user_id: Uuid::now_v7(),
        external_id: "user-12345".into(),
        prefs: vec![("default", true)],
        decided: vec![],
    };
    let n = notification(&a, nid, t);
    let hook = d(1, ChannelType::Chat, DeliveryStatus::Sent);
    let note = AttemptNote {
        provider: "webhook".into(),
        latency_ms: 3,
        status_code: Some(200),
        subscriptions_removed: 0,
    };
    const N: u32 = 200_000;
    let time = |label: &str, f: &mut dyn FnMut() -> usize| {
        let mut bytes = 0;
        let start = std::time::Instant::now();
        for _ in 0..N {
            bytes += std::hint::black_box(f());
        }
        let ns = start.elapsed().as_nanos() as f64 / f64::from(N);
        println!("{label:<48} {ns:>8.0} ns  {:>4} bytes", bytes / N as usize);
    };
    time("accepted, in-app: entries as values, encoded", &mut || {
        encode(&a.entries(&ds), None).len()
    });
    time("accepted, in-app: Writer", &mut || {
        let mut w = Writer::new(None);
        a.write(&ds, &mut w);
        w.finish().len()
    });
    time("accepted, in-app: stub", &mut || {
        stub(&a, &n).unwrap().len()
    });
    time("settled webhook: entries as values, encoded", &mut || {
        let mut e = vec![];
        settled_into(&hook, true, Some(note.clone()), t, &mut e);
        processed_into(t, &mut e);
        encode(&e, None).len()
    });
    time("settled webhook: Writer", &mut || {
        let mut w = Writer::new(None);
        settled_into(&hook, true, Some(note.clone()), t, &mut w);
        processed_into(t, &mut w);
        w.finish().len()
    });
}

/// A part written on a test clock carries its project time, which every
/// entry reads back as `project_at`; a real-clock part is as it was.
#[test]
fn a_part_written_on_a_test_clock_reads_back_its_project_time() {
    let entries = sample();
    let at = Timestamp::from_millis(1_800_000_000_000);
    let part = encode(&entries, Some(at));
    assert_eq!(part[0], TRACE_V4);
    let back = decode(&part).unwrap();
    assert_eq!(back.len(), entries.len());
    for (b, e) in back.iter().zip(&entries) {
        assert_eq!(b.project_at, Some(at));
        assert_eq!((&b.at, &b.code, &b.args), (&e.at, &e.code, &e.args));
    }
    assert_eq!(encode(&entries, None)[0], TRACE_V2);
    // a stub has no room for it: the accepted trace is written in full
    let t = Timestamp::from_millis(1_790_000_000_123);
    let mut a = Accepted {
        at: t,
        project_at: Some(at),
        flow_id: Uuid::now_v7(),
        flow_handle: "f".into(),
        run_id: Uuid::now_v7(),
        user_id: Uuid::now_v7(),
        external_id: "u".into(),
        prefs: vec![],
        decided: vec![],
    };
    let n = notification(&a, Uuid::now_v7(), t);
    assert!(stub(&a, &n).is_none());
    let part = encode_accepted(&a, &[]);
    assert_eq!(decode(&part).unwrap(), a.entries(&[]));
    assert!(a.entries(&[]).iter().all(|e| e.project_at == Some(at)));
    a.project_at = None;
    assert!(stub(&a, &n).is_some());
    for cut in 1..part.len() {
        let _ = decode(&part[..cut]);
    }
}

#[test]
fn reads_parts_an_earlier_herald_wrote() {
    let entries = sample();
    let old = crate::store::sled::codec::enc(&entries);
    assert_eq!(decode(&old).unwrap(), entries);
}

#[test]
fn truncated_or_garbled_parts_are_errors_not_panics() {
    let b = encode(&sample(), None);
    for n in 1..b.len() {
        let _ = decode(&b[..n]);
    }
    let mut bad = b.clone();
    for i in 1..bad.len() {
        bad[i] ^= 0x5a;
        let _ = decode(&bad);
    }
    assert!(decode(&[TRACE_V2, 0xff, 0xff, 0xff]).is_err());
}

/// A critical flow's deliveries are traced `preference.ignored`; the
/// encoding and a stub beside its record read it back the same.
#[test]
fn a_critical_flows_ignored_preferences_round_trip() {
    use crate::model::{ChannelType, DeliveryStatus};
    let t = Timestamp::from_millis(1_790_000_000_123);
    let nid = Uuid::now_v7();
    let ds = vec![
        delivery(&nid, 0, ChannelType::InApp, DeliveryStatus::Sent, t),
        delivery(&nid, 1, ChannelType::Email, DeliveryStatus::Pending, t),
    ];
    let a = Accepted {
        at: t,
        project_at: None,
        flow_id: Uuid::now_v7(),
        flow_handle: "password-reset".into(),
        run_id: Uuid::now_v7(),
        user_id: Uuid::now_v7(),
        external_id: "u".into(),
        prefs: vec![(crate::trace::CRITICAL, true); 2],
        decided: vec![],
    };
    let entries = a.entries(&ds);
    let ignored: Vec<_> = entries
        .iter()
        .filter(|e| e.code == "preference.ignored")
        .collect();
    assert_eq!(ignored.len(), 2);
    assert_eq!(
        ignored[1].message(),
        "step 1: email sent regardless of preferences: the flow is critical"
    );
    assert!(!entries
        .iter()
        .any(|e| e.code.starts_with("preference.s") || e.code == "preference.allowed"));
    assert_eq!(decode(&encode_accepted(&a, &ds)).unwrap(), entries);
    let n = notification(&a, nid, t);
    let st = stub(&a, &n).unwrap();
    assert_eq!(from_stub(&st, &n, &ds).unwrap(), entries);
}

/// A delivery held by quiet hours is traced `quiet_hours.waited`: a code of
/// the table (one byte, like the other staged decisions), read back the same
/// with its message.
#[test]
fn a_quiet_hours_wait_round_trips_in_its_table_code() {
    let until = Timestamp::from_millis(1_790_030_000_000);
    let waited = e(
        1_790_000_000_123,
        "quiet_hours.waited",
        json!({"step": 1, "until": until}),
    );
    let b = encode(std::slice::from_ref(&waited), None);
    assert_eq!(decode(&b).unwrap(), vec![waited.clone()]);
    let other = e(
        1_790_000_000_123,
        "send_window.waited",
        json!({"step": 1, "until": until}),
    );
    assert_eq!(
        b.len(),
        encode(&[other], None).len(),
        "one byte, as a known code"
    );
    assert!(waited
        .message()
        .starts_with("step 1: waits for the recipient's quiet hours"));
}
