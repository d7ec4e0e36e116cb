use super::*;
use serde_json::json;

const URL: &str = "https://herald.example.com/hooks/v1/0190c0de-0000-7000-8000-000000000001";

/// Twilio's scheme, computed independently of `verify`'s loop: the URL,
/// then `name` + `value` of each parameter in name order.
fn sign(token: &str, url: &str, params: &[(&str, &str)]) -> String {
    let mut sorted = params.to_vec();
    sorted.sort();
    let mut data = url.to_string();
    for (k, v) in sorted {
        data.push_str(k);
        data.push_str(v);
    }
    let mut mac = Hmac::<Sha1>::new_from_slice(token.as_bytes()).unwrap();
    mac.update(data.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

fn call(sig: &str, params: &[(&str, &str)]) -> Result<Verified, Refused> {
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params)
        .finish();
    let headers = vec![("x-twilio-signature".to_string(), sig.to_string())];
    let hook = Hook {
        url: URL,
        headers: &headers,
        body: body.as_bytes(),
    };
    verify(
        &json!({"account_sid": "AC1", "auth_token": "tok-123"}),
        &hook,
        Timestamp::from_millis(0),
    )
}

#[test]
fn statuses_map_to_reports() {
    for (status, kind) in [
        ("delivered", Some(ReportKind::Delivered)),
        ("undelivered", Some(ReportKind::Failed)),
        ("failed", Some(ReportKind::Failed)),
        ("sent", None),
    ] {
        let p = [
            ("MessageSid", "SM0123"),
            ("MessageStatus", status),
            ("To", "+15005550006"),
            ("ErrorCode", "30003"),
            ("AccountSid", "AC1"),
        ];
        let Ok(Verified::Reports(r)) = call(&sign("tok-123", URL, &p), &p) else {
            panic!("refused");
        };
        assert_eq!(r.first().map(|r| r.kind), kind, "{status}");
        if let Some(r) = r.first() {
            assert_eq!(r.message_id, "SM0123");
            if r.kind == ReportKind::Failed {
                assert_eq!(r.detail.as_deref(), Some("Twilio error 30003"));
            }
        }
    }
}

#[test]
fn bad_signatures_are_refused() {
    let p = [("MessageSid", "SM0123"), ("MessageStatus", "delivered")];
    assert!(call(&sign("another-token", URL, &p), &p).is_err());
    assert!(call(
        &sign("tok-123", "https://other.example.com/hooks/v1/x", &p),
        &p
    )
    .is_err());
    let changed = [("MessageSid", "SM9999"), ("MessageStatus", "delivered")];
    assert!(call(&sign("tok-123", URL, &p), &changed).is_err());
    assert!(call("", &p).is_err());
}
