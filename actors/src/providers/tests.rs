//! Unit tests of the providers' shared parts: status classification, device settling, body fitting.

use super::*;

#[test]
fn an_answered_status_is_read_back_for_the_trace() {
    let e = classify_status(503, Some("busy"), None);
    assert_eq!(e.status_code(), Some(503));
    let e = SendError::Rejected {
        code: DeliveryErrorCode::ProviderRejected,
        message: "SMTP server answered 550 (5.1.1)".into(),
    };
    assert_eq!(e.status_code(), Some(550));
    let e = SendError::Transient {
        message: "timed out after 10 s waiting for example.com:25".into(),
        retry_after: None,
    };
    assert_eq!(e.status_code(), None);
    let e = SendError::Transient {
        message: "provider answered 5000".into(),
        retry_after: None,
    };
    assert_eq!(e.status_code(), None, "not a status");
}

async fn attempt(policy: EgressPolicy, url: &str, timeout: Duration) -> SendError {
    let http = egress::client_builder(&std::sync::Arc::new(policy))
        .build()
        .unwrap();
    let e = http
        .get(url)
        .timeout(timeout)
        .send()
        .await
        .expect_err("no answer expected");
    transport_error(timeout, e)
}

fn message(e: &SendError) -> &str {
    match e {
        SendError::Transient { message, .. } | SendError::Rejected { message, .. } => message,
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn transport_errors_say_what_failed_with_the_host_only() {
    let open = EgressPolicy::open;
    // nothing listens
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let e = attempt(
        open(),
        &format!("http://127.0.0.1:{port}/services/secret?x=1"),
        HTTP_TIMEOUT,
    )
    .await;
    assert!(matches!(e, SendError::Transient { .. }));
    assert_eq!(
        message(&e),
        format!("connection refused by 127.0.0.1:{port}")
    );
    // a listener that never answers
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let _held = tokio::spawn(async move {
        let (_sock, _) = l.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let e = attempt(
        open(),
        &format!("http://127.0.0.1:{port}/secret"),
        Duration::from_millis(300),
    )
    .await;
    assert_eq!(
        message(&e),
        format!("timed out after 300 ms waiting for 127.0.0.1:{port}")
    );
    // a name that does not resolve
    let e = attempt(open(), "https://no-such-host.invalid/secret", HTTP_TIMEOUT).await;
    assert_eq!(
        message(&e),
        "DNS lookup failed for no-such-host.invalid:443"
    );
    // refused by the resolver: permanent, destination_not_allowed
    let e = attempt(
        EgressPolicy::default(),
        "http://localhost:9/secret",
        HTTP_TIMEOUT,
    )
    .await;
    match &e {
        SendError::Rejected { code, message } => {
            assert_eq!(*code, DeliveryErrorCode::DestinationNotAllowed);
            assert!(
                message.contains("localhost") && !message.contains("secret"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn answers_keep_the_status_and_a_code_token_only() {
    assert_eq!(answered(500, None), "provider answered 500");
    assert_eq!(
        answered(400, Some("21211")),
        "provider answered 400 (21211)"
    );
    assert_eq!(
        answered(400, Some("the secret text of an internal service")),
        "provider answered 400"
    );
    // Slack's plain-text token, its trailing newline aside
    assert_eq!(
        answered(404, Some("channel_not_found\n")),
        "provider answered 404 (channel_not_found)"
    );
    assert_eq!(answered(404, Some("not found!")), "provider answered 404");
    assert!(matches!(
        classify_status(302, None, None),
        SendError::Rejected {
            code: DeliveryErrorCode::ProviderRejected,
            ..
        }
    ));
}

fn transient() -> Device {
    Device::Failed(SendError::Transient {
        message: "503".into(),
        retry_after: Some(Duration::from_secs(2)),
    })
}

#[test]
fn the_registry_and_its_specs_agree() {
    for &kind in ProviderKind::ALL {
        let spec = kind.spec();
        assert_eq!(ProviderKind::parse(spec.name), Some(kind));
        assert_eq!(provider_type(spec.name), Some(spec.channel_type));
        for d in spec.destinations {
            assert!(spec.field(d).is_some(), "{}: {d} is not a field", spec.name);
        }
        let secrets: Vec<_> = spec.secrets().collect();
        assert_eq!(secret_fields(spec.name), secrets.as_slice());
        // an empty config lacks exactly the required fields
        let required: Vec<_> = spec.required().collect();
        assert_eq!(missing_required(spec.name, &Map::new()), required);
    }
    assert_eq!(provider_type("no_such_provider"), None);
    assert!(secret_fields("no_such_provider").is_empty());
    for code in DeliveryErrorCode::ALL {
        assert_eq!(serde_json::json!(code), code.as_str());
    }
}

/// Every provider's documented example passes its checks, and each value
/// of it a pattern documents matches that pattern; every field it names is
/// one of the provider's.
#[test]
fn every_example_is_valid() {
    let egress = EgressPolicy {
        allow_private: false,
        allow: Default::default(),
    };
    for spec in specs() {
        let example = spec.example();
        let mut v = Validator::new();
        validate_config(spec.name, &example, &egress, &mut v);
        assert!(v.is_empty(), "{}: {:?}", spec.name, v.fields);
        for (k, value) in &example {
            let field = spec.field(k);
            assert!(field.is_some(), "{}: {k} is not a field", spec.name);
            if let Some(FieldFormat::Pattern(p)) = field.map(|f| &f.format) {
                let re = regex::Regex::new(p).expect("a valid pattern");
                assert!(
                    value.as_str().is_some_and(|s| re.is_match(s)),
                    "{}: {k} {value} does not match {p}",
                    spec.name
                );
            }
        }
        for pair in spec.together {
            for f in pair {
                assert!(spec.field(f).is_some(), "{}: {f} is not a field", spec.name);
            }
        }
    }
}

/// What each field's `FieldFormat` documents, the provider's checks
/// hold to: a value of another type is refused at `config.<field>`, an
/// integer outside its bounds too, while the bounds, every listed value
/// and each default are taken.
#[test]
fn the_checks_hold_to_the_documented_types() {
    use serde_json::json;
    let egress = EgressPolicy::open();
    for spec in specs() {
        let judge = |field: &str, value: Value| {
            let mut config = spec.example();
            config.insert(field.into(), value);
            let mut v = Validator::new();
            validate_config(spec.name, &config, &egress, &mut v);
            let path = format!("config.{field}");
            !v.fields.iter().any(|e| e.field == path)
        };
        for f in spec.fields {
            let n = f.name;
            let (wrong, taken): (Vec<Value>, Vec<Value>) = match f.format {
                FieldFormat::Integer { min, max, default } => (
                    vec![json!("1"), json!(max + 1)]
                        .into_iter()
                        .chain(min.checked_sub(1).map(|m| json!(m)))
                        .collect(),
                    vec![json!(min), json!(max)]
                        .into_iter()
                        .chain(default.map(|d| json!(d)))
                        .collect(),
                ),
                FieldFormat::OneOf { values, default } => (
                    vec![json!(1), json!("none of them")],
                    values.iter().chain([&default]).map(|x| json!(x)).collect(),
                ),
                FieldFormat::Url { default } => (
                    vec![json!(1), json!("not a URL")],
                    default.map(|d| json!(d)).into_iter().collect(),
                ),
                FieldFormat::Object { .. } => (vec![json!("an object?")], vec![]),
                _ => (vec![json!(1)], vec![]),
            };
            for x in wrong {
                assert!(!judge(n, x.clone()), "{}: {n} = {x} is taken", spec.name);
            }
            for x in taken {
                assert!(judge(n, x.clone()), "{}: {n} = {x} is refused", spec.name);
            }
        }
    }
}

#[test]
fn a_new_destination_needs_the_secret_again() {
    let obj = |v: serde_json::Value| v.as_object().unwrap().clone();
    let stored = obj(serde_json::json!({"base_url": "https://a", "auth_token": "t"}));
    let check = |patch: serde_json::Value| {
        let patch = obj(patch);
        let mut merged = stored.clone();
        for (k, v) in &patch {
            match v {
                Value::Null => {
                    merged.remove(k);
                }
                Value::String(s) if s == "********" => {}
                _ => {
                    merged.insert(k.clone(), v.clone());
                }
            }
        }
        let mut v = Validator::new();
        check_secret_restated("twilio", &stored, &merged, &patch, "********", &mut v);
        v.is_empty()
    };
    assert!(!check(serde_json::json!({"base_url": "https://b"})));
    assert!(!check(
        serde_json::json!({"base_url": "https://b", "auth_token": "********"})
    ));
    assert!(check(
        serde_json::json!({"base_url": "https://b", "auth_token": "t2"})
    ));
    assert!(check(
        serde_json::json!({"base_url": "https://b", "auth_token": "t"})
    ));
    assert!(
        check(serde_json::json!({"base_url": "https://a"})),
        "unchanged"
    );
    assert!(
        check(serde_json::json!({"base_url": null})),
        "removed: the default"
    );
    assert!(
        check(serde_json::json!({"from": "+1555"})),
        "not a destination"
    );
    assert!(check(
        serde_json::json!({"base_url": "https://b", "auth_token": null})
    ));
}

#[test]
fn settle_folds_device_results() {
    assert!(matches!(settle(vec![]), Err(SendError::NoAddress { .. })));
    // one accepted: sent, the gone one reported for removal, the others recorded
    let r = settle(vec![
        ("a".into(), Device::Sent(Map::new())),
        ("b".into(), Device::Expired("410".into())),
        ("c".into(), transient()),
    ])
    .expect("sent");
    assert_eq!(r.expired, vec!["b".to_string()]);
    let o = r.outcomes.expect("outcomes");
    assert_eq!(o[0]["status"], "sent");
    assert_eq!(o[1]["status"], "expired");
    assert_eq!(o[2]["status"], "failed");
    assert_eq!(o[2]["error"]["code"], "provider_unavailable");
    // none accepted, one transient: retried (with the Retry-After)
    match settle(vec![
        ("b".into(), Device::Expired("410".into())),
        ("c".into(), transient()),
    ]) {
        Err(SendError::AlsoExpired { error, expired }) => {
            assert_eq!(
                expired,
                vec!["b"],
                "the gone device is removed though the attempt is retried"
            );
            match *error {
                SendError::Transient { retry_after, .. } => {
                    assert_eq!(retry_after, Some(Duration::from_secs(2)))
                }
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
    // all gone
    match settle(vec![
        ("b".into(), Device::Expired("410".into())),
        ("d".into(), Device::Expired("404".into())),
    ]) {
        Err(SendError::Expired { expired, .. }) => assert_eq!(expired, vec!["b", "d"]),
        other => panic!("{other:?}"),
    }
    // permanent: 401/403 first, else the first rejection's code
    let rej = |code| {
        Device::Failed(SendError::Rejected {
            code,
            message: "x".into(),
        })
    };
    let unauth = Device::Failed(SendError::Unauthorized {
        message: "401".into(),
    });
    assert!(matches!(
        settle(vec![
            ("a".into(), rej(DeliveryErrorCode::ProviderRejected)),
            ("b".into(), unauth)
        ]),
        Err(SendError::Unauthorized { .. })
    ));
    assert!(matches!(
        settle(vec![
            ("a".into(), rej(DeliveryErrorCode::InvalidAddress)),
            ("b".into(), Device::Expired("410".into()))
        ]),
        Err(SendError::AlsoExpired { ref error, ref expired })
            if expired == &vec!["b".to_string()]
                && matches!(**error, SendError::Rejected { code: DeliveryErrorCode::InvalidAddress, .. })
    ));
}
