use super::*;
use serde_json::json;

const KEY: &str = "key-signing-0123";
const NOW: i64 = 1_764_400_000;

fn sign(key: &str, ts: &str, token: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).unwrap();
    mac.update(format!("{ts}{token}").as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn body(key: &str, ts: i64, event: Value) -> Vec<u8> {
    let ts = ts.to_string();
    let token = "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0";
    serde_json::to_vec(&json!({
        "signature": {"timestamp": ts, "token": token, "signature": sign(key, &ts, token)},
        "event-data": event,
    }))
    .unwrap()
}

fn call(body: &[u8]) -> Result<Verified, Refused> {
    let hook = Hook {
        url: "https://herald.example.com/hooks/v1/x",
        headers: &[],
        body,
    };
    verify(
        &json!({"webhook_signing_key": KEY}),
        &hook,
        Timestamp::from_millis(NOW * 1000),
    )
}

fn event(name: &str, severity: Option<&str>) -> Value {
    json!({"event": name, "severity": severity, "timestamp": 1764399990.5,
           "message": {"headers": {"message-id": "2026.abc@mg.example.com"}},
           "delivery-status": {"code": 550, "description": "mailbox does not exist"}})
}

#[test]
fn events_map_to_reports() {
    for (e, kind) in [
        (event("delivered", None), ReportKind::Delivered),
        (
            event("failed", Some("permanent")),
            ReportKind::Bounced(BounceKind::Hard),
        ),
        (
            event("failed", Some("temporary")),
            ReportKind::Bounced(BounceKind::Soft),
        ),
        (event("complained", None), ReportKind::Complained),
    ] {
        let Ok(Verified::Reports(r)) = call(&body(KEY, NOW, e)) else {
            panic!("refused");
        };
        assert_eq!(r.len(), 1);
        assert_eq!(
            (r[0].message_id.as_str(), r[0].kind),
            ("2026.abc@mg.example.com", kind)
        );
        assert_eq!(r[0].at, Some(Timestamp::from_millis(1_764_399_990_500)));
    }
    let Ok(Verified::Reports(r)) = call(&body(KEY, NOW, event("failed", Some("permanent")))) else {
        panic!("refused");
    };
    assert_eq!(r[0].detail.as_deref(), Some("550 mailbox does not exist"));
    assert_eq!(
        call(&body(KEY, NOW, event("opened", None))),
        Ok(Verified::Reports(vec![]))
    );
}

#[test]
fn bad_signatures_and_stale_timestamps_are_refused() {
    let e = || event("delivered", None);
    assert!(call(&body("another-key", NOW, e())).is_err());
    assert!(call(&body(KEY, NOW - 2 * 24 * 3600, e())).is_err());
    // a body changed after signing: the token is signed, not the event,
    // so a changed token is what fails
    let mut v: Value = serde_json::from_slice(&body(KEY, NOW, e())).unwrap();
    v["signature"]["token"] = json!("other-token");
    assert!(call(&serde_json::to_vec(&v).unwrap()).is_err());
    assert!(call(b"not json").is_err());
    let hook = Hook {
        url: "u",
        headers: &[],
        body: &body(KEY, NOW, e()),
    };
    assert!(verify(&json!({}), &hook, Timestamp::from_millis(NOW * 1000)).is_err());
}
