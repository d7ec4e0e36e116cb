//! docs/API.md "Suppressions": a project's suppression list through the
//! Admin API (add, idempotent add, list with its pages and filter, lift,
//! validation, tenancy), and the rule at send time: an email or SMS
//! delivery to a suppressed address is `skipped` with `suppressed`, for
//! every user holding the address, and sends again once it is lifted.

use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

fn list_path() -> String {
    format!("{A}/suppressions")
}

fn item_path(ct: &str, address: &str) -> String {
    format!("{A}/suppressions/{ct}/{}", enc(address))
}

async fn suppress(app: &TestApp, ct: &str, address: &str, status: u16) -> Value {
    let r = app
        .admin(POST, &list_path())
        .json(&json!({"channel_type": ct, "address": address, "reason": "manual"}))
        .go()
        .await;
    r.ok(status)
}

fn addresses(items: &[Value]) -> Vec<String> {
    items.iter().map(|i| s(&i["address"])).collect()
}

#[tokio::test]
async fn suppressions_crud_idempotent_add_and_not_found() {
    let app = TestApp::spawn();
    let item = suppress(&app, "email", "  Gone.User@Example.COM ", 201).await;
    assert_eq!(item["channel_type"], json!("email"), "{item}");
    assert_eq!(
        item["address"],
        json!("gone.user@example.com"),
        "trimmed and lower-cased: {item}"
    );
    assert_eq!(item["reason"], json!("manual"), "{item}");
    assert!(item["created_at"].is_string(), "{item}");

    // the same address again, in another spelling: 200, the existing item
    let again = suppress(&app, "email", "gone.user@example.com", 200).await;
    assert_eq!(again, item, "unchanged");
    // reason may be left out (manual)
    let r = app
        .admin(POST, &list_path())
        .json(&json!({"channel_type": "sms", "address": "+15551230001"}))
        .go()
        .await;
    let sms = r.ok(201);
    assert_eq!(sms["address"], json!("+15551230001"), "{sms}");
    assert_eq!(sms["reason"], json!("manual"), "{sms}");

    let all = list_all(&app, &list_path(), &[]).await;
    assert_eq!(
        addresses(&all),
        vec!["+15551230001", "gone.user@example.com"],
        "newest first"
    );

    // lift: 204, then 404; the phone's `+` percent-encoded
    let r = app
        .admin(DELETE, &item_path("sms", "+15551230001"))
        .go()
        .await;
    r.ok(204);
    assert_not_found(
        &app.admin(DELETE, &item_path("sms", "+15551230001"))
            .go()
            .await,
        "suppression",
        "sms/+15551230001",
    );
    // the email in any case of letters names the same suppression
    let r = app
        .admin(DELETE, &item_path("email", "GONE.user@example.com"))
        .go()
        .await;
    r.ok(204);
    assert_eq!(list_all(&app, &list_path(), &[]).await, Vec::<Value>::new());
    // never suppressed, or not an address at all: 404
    let r = app
        .admin(DELETE, &item_path("email", "nobody@example.com"))
        .go()
        .await;
    assert_error(&r, 404, "not_found");
    let r = app
        .admin(DELETE, &item_path("email", "not-an-address"))
        .go()
        .await;
    assert_error(&r, 404, "not_found");
    // a channel type the list does not hold
    let r = app
        .admin(DELETE, &item_path("chat", "x@example.com"))
        .go()
        .await;
    assert_validation(&r, &[("channel_type", "inclusion")]);
}

#[tokio::test]
async fn suppressions_validation() {
    let app = TestApp::spawn();
    let post = |body: Value| {
        let app = &app;
        async move { app.admin(POST, &list_path()).json(&body).go().await }
    };
    let r = post(json!({"channel_type": "push", "address": "a@example.com"})).await;
    assert_validation(&r, &[("channel_type", "inclusion")]);
    let r = post(json!({"channel_type": "in_app", "address": "a@example.com"})).await;
    assert_validation(&r, &[("channel_type", "inclusion")]);
    let r = post(json!({"channel_type": "email", "address": "not an address"})).await;
    assert_validation(&r, &[("address", "format")]);
    let r = post(json!({"channel_type": "sms", "address": "5551230001"})).await;
    assert_validation(&r, &[("address", "format")]);
    let r = post(json!({"channel_type": "sms", "address": "a@example.com"})).await;
    assert_validation(&r, &[("address", "format")]);
    let r = post(json!({"channel_type": "email", "address": "a@example.com",
        "reason": "hard_bounce"}))
    .await;
    assert_validation(&r, &[("reason", "inclusion")]);
    let r = post(json!({})).await;
    assert_validation(&r, &[("channel_type", "required"), ("address", "required")]);
    let r = post(json!({"channel_type": 3, "address": ["a"]})).await;
    assert_validation(&r, &[("channel_type", "format"), ("address", "format")]);
    // nothing was stored
    assert_eq!(list_all(&app, &list_path(), &[]).await, Vec::<Value>::new());
    // an unknown filter value is refused
    let r = app
        .admin(GET, &list_path())
        .query(&[("channel_type", "chat")])
        .go()
        .await;
    assert_invalid_param(&r, "channel_type");
}

#[tokio::test]
async fn suppressions_pages_filter_and_tenancy() {
    let (app, _a, b) = spawn_two_projects();
    let mut emails = vec![];
    for i in 0..5 {
        let e = format!("user{i}@example.com");
        suppress(&app, "email", &e, 201).await;
        emails.push(e);
    }
    let mut phones = vec![];
    for i in 0..3 {
        let p = format!("+1555123000{i}");
        suppress(&app, "sms", &p, 201).await;
        phones.push(p);
    }
    // pages of 3, newest first, walked forward and back
    let r = app
        .admin(GET, &list_path())
        .query(&[("limit", "3")])
        .go()
        .await;
    let p1 = r.page();
    let items = p1["items"].as_array().unwrap().clone();
    assert_eq!(
        addresses(&items),
        vec![phones[2].clone(), phones[1].clone(), phones[0].clone()]
    );
    assert_eq!(p1["page"]["has_more_after"], json!(true), "{p1}");
    assert_eq!(p1["page"]["has_more_before"], json!(false), "{p1}");
    let after = s(&p1["page"]["after"]);
    let r = app
        .admin(GET, &list_path())
        .query(&[("limit", "3"), ("after", &after)])
        .go()
        .await;
    let p2 = r.page();
    let items = p2["items"].as_array().unwrap().clone();
    assert_eq!(
        addresses(&items),
        vec![emails[4].clone(), emails[3].clone(), emails[2].clone()]
    );
    assert_eq!(p2["page"]["has_more_before"], json!(true), "{p2}");
    let before = s(&p2["page"]["before"]);
    let r = app
        .admin(GET, &list_path())
        .query(&[("limit", "3"), ("before", &before)])
        .go()
        .await;
    let back = r.page();
    assert_eq!(back["items"], p1["items"], "back to the first page");

    // the channel type filter, paged too
    let only_sms = list_all(&app, &list_path(), &[("channel_type", "sms")]).await;
    assert_eq!(
        addresses(&only_sms),
        phones.iter().rev().cloned().collect::<Vec<_>>()
    );
    let r = app
        .admin(GET, &list_path())
        .query(&[("channel_type", "email"), ("limit", "2")])
        .go()
        .await;
    let e1 = r.page();
    assert_eq!(
        addresses(e1["items"].as_array().unwrap()),
        vec![emails[4].clone(), emails[3].clone()]
    );
    // a cursor is bound to its filter
    let r = app
        .admin(GET, &list_path())
        .query(&[("channel_type", "sms"), ("after", &s(&e1["page"]["after"]))])
        .go()
        .await;
    assert_invalid_param(&r, "after");
    let only_email = list_all(&app, &list_path(), &[("channel_type", "email")]).await;
    assert_eq!(only_email.len(), 5);

    // the other project sees none of it, and its own list is its own
    let r = app.admin_with(&b, GET, &list_path()).go().await;
    assert_eq!(r.page()["items"], json!([]), "{r}");
    let r = app
        .admin_with(&b, DELETE, &item_path("email", &emails[0]))
        .go()
        .await;
    assert_error(&r, 404, "not_found");
    let r = app
        .admin_with(&b, POST, &list_path())
        .json(&json!({"channel_type": "email", "address": emails[0]}))
        .go()
        .await;
    r.ok(201);
    let r = app.admin_with(&b, GET, &list_path()).go().await;
    assert_eq!(r.page()["items"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(list_all(&app, &list_path(), &[]).await.len(), 8);
}

#[tokio::test]
async fn suppressions_skip_email_to_a_suppressed_address() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    let ch = active_channel(&app, "email", "smtp", smtp_config(&sink)).await;
    let flow = template_flow(&app, &s(&ch["id"]), json!({"subject": "S", "body": "B"})).await;
    let (ada, _) = app
        .create_user("ada", json!({"email": "Ada@Example.com"}))
        .await;
    let (twin, _) = app
        .create_user("twin", json!({"email": "ada@example.com"}))
        .await;
    let (other, _) = app
        .create_user("other", json!({"email": "other@example.com"}))
        .await;
    suppress(&app, "email", "ADA@example.com", 201).await;

    for ext in [&ada, &twin] {
        let d = deliver_once(&app, &flow, ext, json!({})).await;
        assert_eq!(d["status"], json!("skipped"), "{ext}: {d}");
        assert_eq!(d["error"]["code"], json!("suppressed"), "{ext}: {d}");
        assert_eq!(d["attempts"], json!(0), "{d}");
        // the trace says why
        let r = app
            .admin(
                GET,
                &format!("{A}/notifications/{}/trace", s(&d["notification_id"])),
            )
            .go()
            .await;
        let t = r.ok(200);
        assert!(
            t.to_string().contains("suppressed"),
            "the trace names the reason: {t}"
        );
    }
    assert!(
        sink.commands().is_empty(),
        "no SMTP session for a suppressed address: {:?}",
        sink.commands()
    );
    // another address is sent to
    let d = deliver_once(&app, &flow, &other, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(sink.mails().len(), 1);

    // lifted: the next run sends
    app.admin(DELETE, &item_path("email", "ada@example.com"))
        .go()
        .await
        .ok(204);
    let d = deliver_once(&app, &flow, &ada, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let mails = sink.mails();
    assert_eq!(mails.len(), 2, "{mails:?}");
    assert_eq!(mails[1].rcpt_to, vec!["Ada@Example.com".to_string()]);
}

#[tokio::test]
async fn suppressions_skip_sms_to_a_suppressed_number() {
    let vg = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "message-count": "1",
            "messages": [{"to": "15551230009", "status": "0", "message-id": "0A01"}]
        })))
        .mount(&vg)
        .await;
    let app = TestApp::spawn();
    let ch = active_channel(
        &app,
        "sms",
        "vonage",
        json!({"api_key": "abcd1234", "api_secret": "vonage-secret", "from": "Herald",
            "base_url": vg.uri(), "retry": quick_retry()}),
    )
    .await;
    let flow = template_flow(&app, &s(&ch["id"]), json!({"body": "Code 1"})).await;
    let (one, _) = app
        .create_user("one", json!({"phone": "+15551230009"}))
        .await;
    let (two, _) = app
        .create_user("two", json!({"phone": " +15551230009 "}))
        .await;
    suppress(&app, "sms", "+15551230009", 201).await;
    for ext in [&one, &two] {
        let d = deliver_once(&app, &flow, ext, json!({})).await;
        assert_eq!(d["status"], json!("skipped"), "{ext}: {d}");
        assert_eq!(d["error"]["code"], json!("suppressed"), "{ext}: {d}");
    }
    assert!(
        received(&vg).await.is_empty(),
        "nothing reached the provider"
    );

    app.admin(DELETE, &item_path("sms", "+15551230009"))
        .go()
        .await
        .ok(204);
    let d = deliver_once(&app, &flow, &one, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(received(&vg).await.len(), 1);
}
