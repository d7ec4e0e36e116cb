use super::*;
use serde_json::json;

fn config() -> Value {
    json!({"server_token": "t", "webhook_username": "herald", "webhook_password": "s3cret"})
}

fn call(auth: Option<&str>, body: &Value) -> Result<Verified, Refused> {
    let headers: Vec<(String, String)> = auth
        .map(|a| {
            let b = base64::engine::general_purpose::STANDARD.encode(a);
            vec![("authorization".to_string(), format!("Basic {b}"))]
        })
        .unwrap_or_default();
    let body = serde_json::to_vec(body).unwrap();
    let hook = Hook {
        url: "https://herald.example.com/hooks/v1/x",
        headers: &headers,
        body: &body,
    };
    verify(&config(), &hook, Timestamp::from_millis(0))
}

fn one(v: Result<Verified, Refused>) -> Report {
    match v.unwrap() {
        Verified::Reports(mut r) => {
            assert_eq!(r.len(), 1);
            r.remove(0)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn records_map_to_reports() {
    let auth = Some("herald:s3cret");
    let r = one(call(
        auth,
        &json!({"RecordType": "Delivery", "MessageID": "m-1",
        "DeliveredAt": "2026-11-29T10:00:00Z", "Details": "250 ok"}),
    ));
    assert_eq!(
        (r.message_id.as_str(), r.kind),
        ("m-1", ReportKind::Delivered)
    );
    assert_eq!(r.at, rfc3339("2026-11-29T10:00:00Z"));
    let r = one(call(
        auth,
        &json!({"RecordType": "Bounce", "Type": "HardBounce", "MessageID": "m-2",
        "Description": "no such user"}),
    ));
    assert_eq!(r.kind, ReportKind::Bounced(BounceKind::Hard));
    assert_eq!(r.detail.as_deref(), Some("HardBounce: no such user"));
    for t in ["SoftBounce", "Transient", "DnsError"] {
        let r = one(call(
            auth,
            &json!({"RecordType": "Bounce", "Type": t, "MessageID": "m"}),
        ));
        assert_eq!(r.kind, ReportKind::Bounced(BounceKind::Soft), "{t}");
    }
    let r = one(call(
        auth,
        &json!({"RecordType": "SpamComplaint", "Type": "SpamComplaint",
        "MessageID": "m-3"}),
    ));
    assert_eq!(r.kind, ReportKind::Complained);
    // an auto-responder is not a bounce; an open is not tracked
    for v in [
        json!({"RecordType": "Bounce", "Type": "AutoResponder", "MessageID": "m"}),
        json!({"RecordType": "Open", "MessageID": "m"}),
    ] {
        assert_eq!(call(auth, &v), Ok(Verified::Reports(vec![])));
    }
}

#[test]
fn wrong_or_missing_credentials_are_refused() {
    let v = json!({"RecordType": "Delivery", "MessageID": "m-1"});
    assert!(call(None, &v).is_err());
    assert!(call(Some("herald:wrong"), &v).is_err());
    assert!(call(Some("other:s3cret"), &v).is_err());
    let body = serde_json::to_vec(&v).unwrap();
    let headers = vec![(
        "authorization".to_string(),
        "Basic aGVyYWxkOnMzY3JldA==".to_string(),
    )];
    let hook = Hook {
        url: "u",
        headers: &headers,
        body: &body,
    };
    // configured without credentials: every call is refused
    assert!(verify(
        &json!({"server_token": "t"}),
        &hook,
        Timestamp::from_millis(0)
    )
    .is_err());
    assert!(verify(&config(), &hook, Timestamp::from_millis(0)).is_ok());
}
