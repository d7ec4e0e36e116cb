//! Delivery feedback (docs/API.md, "Delivery feedback"): a delivery sent
//! through a local Postmark, Mailgun or Twilio counterpart, then the
//! provider's callback at `POST /hooks/v1/{channel_id}`, signed as each
//! provider signs (basic auth, HMAC-SHA256, HMAC-SHA1 over the URL): the
//! delivery becomes `delivered`, `bounced` (hard, soft), `complained` or
//! `failed`, with its event at an event endpoint and a `delivery.feedback`
//! trace entry. A badly signed callback is 401 and changes nothing, the same
//! report twice changes nothing, another project's message is ignored, and a
//! later step's condition sees the new status.

use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

const FROM: &str = "Herald <noreply@herald.test>";
const PM_USER: &str = "herald-hooks";
const PM_PASS: &str = "postmark-hook-password-xyz";
const MG_SIGNING: &str = "mailgun-signing-key-xyz";
const TW_TOKEN: &str = "twilio-auth-token-xyz";
const TW_SID: &str = "AC0123456789abcdef0123456789abcdef";

/// A provider counterpart answering each send with a new message id, in
/// the provider's own answer shape.
struct Answers {
    provider: &'static str,
    /// Unique to the counterpart, so two counterparts never answer the
    /// same id.
    tag: String,
    n: AtomicUsize,
}

impl Respond for Answers {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let i = self.n.fetch_add(1, Ordering::SeqCst);
        let body = match self.provider {
            "postmark" => json!({"To": "x", "MessageID": format!("pm-{i:04}-{}", self.tag),
                                 "ErrorCode": 0, "Message": "OK"}),
            "mailgun" => json!({"id": format!("<20261129.{i}.{}@mg.herald.test>", self.tag),
                                "message": "Queued. Thank you."}),
            _ => json!({"sid": format!("SM{i:04}{}", self.tag), "status": "queued"}),
        };
        ResponseTemplate::new(if self.provider == "twilio" { 201 } else { 200 }).set_body_json(body)
    }
}

pub(crate) async fn counterpart(provider: &'static str) -> MockServer {
    let server = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(Answers {
            provider,
            tag: new_uuid().replace('-', ""),
            n: AtomicUsize::new(0),
        })
        .mount(&server)
        .await;
    server
}

pub(crate) fn config(provider: &str, base: &str) -> Value {
    match provider {
        "postmark" => json!({"server_token": "pm-token", "from": FROM, "base_url": base,
                             "webhook_username": PM_USER, "webhook_password": PM_PASS}),
        "mailgun" => json!({"api_key": "mg-key", "domain": "mg.herald.test", "from": FROM,
                            "base_url": base, "webhook_signing_key": MG_SIGNING}),
        _ => json!({"account_sid": TW_SID, "auth_token": TW_TOKEN, "from": "+15005550006",
                    "base_url": base}),
    }
}

/// A channel of `provider` sending to its counterpart and a one-step flow.
async fn setup(app: &TestApp, provider: &'static str) -> (MockServer, Value, Value) {
    let server = counterpart(provider).await;
    let ct = if provider == "twilio" { "sms" } else { "email" };
    let ch = active_channel(app, ct, provider, config(provider, &server.uri())).await;
    let flow = template_flow(
        app,
        &s(&ch["id"]),
        json!({"subject": "Hi", "body": "Hello {{ recipient.first_name }}"}),
    )
    .await;
    (server, ch, flow)
}

/// Sends the flow to a new user; the delivery, sent, and its message id.
async fn send(app: &TestApp, flow: &Value) -> (Value, String) {
    // An address of its own per send: a hard bounce or a complaint of an
    // earlier send suppresses its address (docs/DELIVERABILITY.md).
    static SENDS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = SENDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = send_to(app, flow, &format!("ada{n}@example.com")).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let id = s(&d["data"]["outcomes"][0]["message_id"]);
    assert!(!id.is_empty(), "{d}");
    (d, id)
}

/// Runs the flow for a new user with that email; the delivery, final.
async fn send_to(app: &TestApp, flow: &Value, email: &str) -> Value {
    let (ext, _) = app
        .create_user(
            "fb",
            json!({"email": email, "phone": "+15005550009", "first_name": "Ada"}),
        )
        .await;
    deliver_once(app, flow, &ext, json!({})).await
}

async fn delivery(app: &TestApp, id: &str) -> Value {
    app.admin(GET, &format!("{A}/deliveries/{id}"))
        .go()
        .await
        .ok(200)
}

/// An event endpoint (a wiremock answering 200) for every event type.
async fn event_endpoint(app: &TestApp) -> MockServer {
    let rx = mock_server().await;
    mock_always(&rx, 200).await;
    app.admin(POST, "/admin/v1/webhook_endpoints")
        .json(&json!({"url": format!("{}/events", rx.uri())}))
        .go()
        .await
        .ok(201);
    rx
}

/// The events of `delivery` of type `t` the endpoint got, waiting until
/// there are `n` (and a moment longer, to see none more come).
async fn events(rx: &MockServer, t: &str, delivery: &str, n: usize) -> Vec<Value> {
    let d = Deadline::new(format!("{n} {t} event(s) of {delivery}"), 30);
    loop {
        let got: Vec<Value> = received(rx)
            .await
            .iter()
            .map(req_json)
            .filter(|e| e["type"] == json!(t) && e["data"]["id"] == json!(delivery))
            .collect();
        if got.len() >= n {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            return got;
        }
        d.tick(got.len()).await;
    }
}

/// The `delivery.feedback` entries of the delivery's notification trace.
async fn feedback_trace(app: &TestApp, d: &Value) -> Vec<Value> {
    let t = app
        .admin(
            GET,
            &format!("{A}/notifications/{}/trace", s(&d["notification_id"])),
        )
        .go()
        .await
        .ok(200);
    t["entries"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{t}"))
        .into_iter()
        .filter(|e| e["code"] == json!("delivery.feedback"))
        .collect()
}

// ================================================================ signing, the providers' side

fn postmark_call(record: Value, user: &str, pass: &str) -> (Vec<u8>, Vec<(String, String)>) {
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
    (
        serde_json::to_vec(&record).unwrap(),
        vec![("authorization".into(), format!("Basic {auth}"))],
    )
}

fn mailgun_body(event: Value, key: &str) -> Vec<u8> {
    let ts = now_secs().to_string();
    let token = format!("tok{}", new_uuid().replace('-', ""));
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).unwrap();
    mac.update(format!("{ts}{token}").as_bytes());
    let sig: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    serde_json::to_vec(&json!({
        "signature": {"timestamp": ts, "token": token, "signature": sig},
        "event-data": event,
    }))
    .unwrap()
}

fn mailgun_event(event: &str, severity: Option<&str>, message_id: &str) -> Value {
    // Mailgun's events name the message without the angle brackets its
    // send answer has
    let bare = message_id.trim_start_matches('<').trim_end_matches('>');
    json!({"event": event, "severity": severity, "timestamp": now_secs() as f64,
           "recipient": "ada@example.com",
           "message": {"headers": {"message-id": bare}},
           "delivery-status": {"code": 552, "description": "mailbox full"}})
}

fn twilio_form(params: &[(&str, &str)]) -> Vec<u8> {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params)
        .finish()
        .into_bytes()
}

/// Twilio's signature of a callback to `url` with `params`.
fn twilio_signature(token: &str, url: &str, params: &[(&str, &str)]) -> String {
    let mut sorted = params.to_vec();
    sorted.sort();
    let mut data = url.to_string();
    for (k, v) in sorted {
        data.push_str(k);
        data.push_str(v);
    }
    let mut mac = Hmac::<sha1::Sha1>::new_from_slice(token.as_bytes()).unwrap();
    mac.update(data.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

pub(crate) async fn postmark_report(app: &TestApp, ch: &Value, record: Value) -> Resp {
    let (body, headers) = postmark_call(record, PM_USER, PM_PASS);
    app.provider_callback(&s(&ch["id"]), "application/json", body, |_| headers)
        .await
}

async fn twilio_report(app: &TestApp, ch: &Value, token: &str, params: &[(&str, &str)]) -> Resp {
    let body = twilio_form(params);
    let sig = |url: &str| {
        vec![(
            "x-twilio-signature".to_string(),
            twilio_signature(token, url, params),
        )]
    };
    app.provider_callback(
        &s(&ch["id"]),
        "application/x-www-form-urlencoded",
        body,
        sig,
    )
    .await
}

fn counts(r: &Resp) -> (u64, u64, u64, u64) {
    let v = r.ok(200);
    let n = |k: &str| v[k].as_u64().unwrap_or(99);
    (n("applied"), n("duplicate"), n("ignored"), n("unknown"))
}

// ================================================================ tests

/// Postmark: delivered, then a late hard bounce; the same bounce again is a
/// duplicate (one event); wrong credentials are 401 and change nothing.
#[tokio::test]
async fn postmark_delivery_and_bounce_webhooks_update_the_delivery() {
    let app = TestApp::spawn();
    let rx = event_endpoint(&app).await;
    let (_server, ch, flow) = setup(&app, "postmark").await;
    let (d, mid) = send(&app, &flow).await;
    let did = s(&d["id"]);

    let (body, headers) = postmark_call(
        json!({"RecordType": "Delivery", "MessageID": mid, "Recipient": "ada@example.com"}),
        PM_USER,
        "wrong-password",
    );
    let r = app
        .provider_callback(&s(&ch["id"]), "application/json", body, |_| headers)
        .await;
    assert_error(&r, 401, "unauthenticated");
    assert_eq!(delivery(&app, &did).await["status"], json!("sent"));

    let delivered = json!({"RecordType": "Delivery", "MessageID": mid,
                           "DeliveredAt": "2026-11-29T10:00:00Z", "Details": "250 OK"});
    let r = postmark_report(&app, &ch, delivered.clone()).await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    let now = delivery(&app, &did).await;
    assert_eq!(now["status"], json!("delivered"), "{now}");
    assert!(now.get("bounce").is_none(), "{now}");
    let r = postmark_report(&app, &ch, delivered).await;
    assert_eq!(counts(&r), (0, 1, 0, 0), "{r}");

    let bounce = json!({"RecordType": "Bounce", "Type": "HardBounce", "TypeCode": 1,
                        "MessageID": mid, "Email": "ada@example.com",
                        "Description": "The server was unable to deliver your message"});
    let r = postmark_report(&app, &ch, bounce.clone()).await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    let r = postmark_report(&app, &ch, bounce).await;
    assert_eq!(counts(&r), (0, 1, 0, 0), "{r}");
    let now = delivery(&app, &did).await;
    assert_eq!(now["status"], json!("bounced"), "{now}");
    assert_eq!(now["bounce"], json!("hard"), "{now}");

    let ev = events(&rx, "delivery.delivered", &did, 1).await;
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0]["data"]["status"], json!("delivered"), "{}", ev[0]);
    let ev = events(&rx, "delivery.bounced", &did, 1).await;
    assert_eq!(ev.len(), 1, "the same bounce twice sends one event");
    assert_eq!(ev[0]["data"]["bounce"], json!("hard"), "{}", ev[0]);

    let tr = feedback_trace(&app, &now).await;
    assert_eq!(tr.len(), 2, "{tr:?}");
    assert_eq!(tr[0]["args"]["report"], json!("delivered"), "{tr:?}");
    assert_eq!(tr[1]["args"]["report"], json!("bounced"), "{tr:?}");
    assert_eq!(tr[1]["args"]["bounce"], json!("hard"), "{tr:?}");
    assert_eq!(tr[1]["args"]["provider"], json!("postmark"), "{tr:?}");
    assert!(
        s(&tr[1]["args"]["detail"]).contains("unable to deliver"),
        "{tr:?}"
    );
    assert!(s(&tr[1]["message"]).contains("hard bounce"), "{tr:?}");

    // a spam complaint on another delivery
    let (d2, mid2) = send(&app, &flow).await;
    let r = postmark_report(
        &app,
        &ch,
        json!({"RecordType": "SpamComplaint", "Type": "SpamComplaint", "MessageID": mid2}),
    )
    .await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    let now = delivery(&app, &s(&d2["id"])).await;
    assert_eq!(now["status"], json!("complained"), "{now}");
    events(&rx, "delivery.complained", &s(&d2["id"]), 1).await;
    // the statuses filter deliveries
    let listed = list_all(
        &app,
        &format!("{A}/deliveries"),
        &[("status", "complained")],
    )
    .await;
    assert_eq!(ids(&listed), ids(&[now]), "{listed:?}");
}

/// Mailgun: a temporary failure is a soft bounce, a permanent one after it
/// is ignored (a bounce is kept), a complaint on another delivery; the
/// send answer's `<id>` matches the event's bare id; a bad signature is
/// 401 and changes nothing.
#[tokio::test]
async fn mailgun_signed_events_update_the_delivery() {
    let app = TestApp::spawn();
    let rx = event_endpoint(&app).await;
    let (_server, ch, flow) = setup(&app, "mailgun").await;
    let (d, mid) = send(&app, &flow).await;
    assert!(mid.starts_with('<'), "{mid}");
    let did = s(&d["id"]);
    let cid = s(&ch["id"]);

    let bad = mailgun_body(
        mailgun_event("failed", Some("temporary"), &mid),
        "another-key",
    );
    let r = app
        .provider_callback(&cid, "application/json", bad, |_| vec![])
        .await;
    assert_error(&r, 401, "unauthenticated");
    assert_eq!(delivery(&app, &did).await["status"], json!("sent"));

    let soft = mailgun_body(mailgun_event("failed", Some("temporary"), &mid), MG_SIGNING);
    let r = app
        .provider_callback(&cid, "application/json", soft, |_| vec![])
        .await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    let now = delivery(&app, &did).await;
    assert_eq!(
        (now["status"].clone(), now["bounce"].clone()),
        (json!("bounced"), json!("soft")),
        "{now}"
    );
    let hard = mailgun_body(mailgun_event("failed", Some("permanent"), &mid), MG_SIGNING);
    let r = app
        .provider_callback(&cid, "application/json", hard, |_| vec![])
        .await;
    assert_eq!(counts(&r), (0, 0, 1, 0), "{r}");
    assert_eq!(delivery(&app, &did).await["bounce"], json!("soft"));
    let ev = events(&rx, "delivery.bounced", &did, 1).await;
    assert_eq!(ev.len(), 1);
    let tr = feedback_trace(&app, &now).await;
    assert_eq!(tr.len(), 1, "{tr:?}");
    assert_eq!(tr[0]["args"]["bounce"], json!("soft"), "{tr:?}");
    assert_eq!(tr[0]["args"]["detail"], json!("552 mailbox full"), "{tr:?}");

    let (d2, mid2) = send(&app, &flow).await;
    let complaint = mailgun_body(mailgun_event("complained", None, &mid2), MG_SIGNING);
    let r = app
        .provider_callback(&cid, "application/json", complaint, |_| vec![])
        .await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    assert_eq!(
        delivery(&app, &s(&d2["id"])).await["status"],
        json!("complained")
    );
    events(&rx, "delivery.complained", &s(&d2["id"]), 1).await;
}

/// Twilio: `delivered`, and `undelivered` (a failure after the provider
/// accepted it) on another message; `sent` is not a change; a signature
/// with another token, or over another URL, is 401.
#[tokio::test]
async fn twilio_status_callbacks_update_the_delivery() {
    let app = TestApp::spawn();
    let rx = event_endpoint(&app).await;
    let (server, ch, flow) = setup(&app, "twilio").await;
    let (d, sid) = send(&app, &flow).await;
    // no public URL given: no callback URL Twilio could reach
    assert!(
        !sent_forms(&server).await[0]
            .iter()
            .any(|(k, _)| k == "StatusCallback"),
        "without --public-url a message names no StatusCallback"
    );
    let did = s(&d["id"]);
    let delivered = [
        ("MessageSid", sid.as_str()),
        ("MessageStatus", "delivered"),
        ("AccountSid", TW_SID),
        ("To", "+15005550009"),
    ];
    let r = twilio_report(&app, &ch, "another-token", &delivered).await;
    assert_error(&r, 401, "unauthenticated");
    let body = twilio_form(&delivered);
    let r = app
        .provider_callback(
            &s(&ch["id"]),
            "application/x-www-form-urlencoded",
            body,
            |_| {
                vec![(
                    "x-twilio-signature".into(),
                    twilio_signature(TW_TOKEN, "https://elsewhere.example/hooks", &delivered),
                )]
            },
        )
        .await;
    assert_error(&r, 401, "unauthenticated");
    assert_eq!(delivery(&app, &did).await["status"], json!("sent"));

    let r = twilio_report(
        &app,
        &ch,
        TW_TOKEN,
        &[("MessageSid", sid.as_str()), ("MessageStatus", "sent")],
    )
    .await;
    assert_eq!(counts(&r), (0, 0, 0, 0), "{r}");
    let r = twilio_report(&app, &ch, TW_TOKEN, &delivered).await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    assert_eq!(delivery(&app, &did).await["status"], json!("delivered"));
    events(&rx, "delivery.delivered", &did, 1).await;

    let (d2, sid2) = send(&app, &flow).await;
    let did2 = s(&d2["id"]);
    let failed = [
        ("MessageSid", sid2.as_str()),
        ("MessageStatus", "undelivered"),
        ("ErrorCode", "30003"),
    ];
    let r = twilio_report(&app, &ch, TW_TOKEN, &failed).await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    let r = twilio_report(&app, &ch, TW_TOKEN, &failed).await;
    assert_eq!(counts(&r), (0, 1, 0, 0), "{r}");
    let now = delivery(&app, &did2).await;
    assert_eq!(now["status"], json!("failed"), "{now}");
    assert_eq!(now["error"]["code"], json!("provider_rejected"), "{now}");
    assert!(s(&now["error"]["message"]).contains("30003"), "{now}");
    let ev = events(&rx, "delivery.failed", &did2, 1).await;
    assert_eq!(ev.len(), 1, "the same failure twice sends one event");
    let tr = feedback_trace(&app, &now).await;
    assert_eq!(tr.len(), 1, "{tr:?}");
    assert_eq!(tr[0]["args"]["report"], json!("failed"), "{tr:?}");
    assert_eq!(tr[0]["args"]["provider"], json!("twilio"), "{tr:?}");
}

/// A report naming another project's message: the other project's channel
/// with this project's message id, and the other way round, is 200 and
/// ignored (`unknown`); neither delivery changes.
#[tokio::test]
async fn a_report_for_another_projects_message_is_ignored() {
    let (app, _a, b) = spawn_two_projects();
    let (_sa, ch_a, flow_a) = setup(&app, "postmark").await;
    let (da, mid_a) = send(&app, &flow_a).await;

    let server_b = counterpart("postmark").await;
    let ch_b = app
        .admin_with(&b, POST, &format!("{A}/channels"))
        .json(
            &json!({"type": "email", "provider": "postmark", "name": "b",
                      "config": config("postmark", &server_b.uri())}),
        )
        .go()
        .await
        .ok(201);
    let flow_b = app
        .admin_with(&b, POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("fb-b"), "name": "B", "steps": [
            {"type": "channel", "channel_id": ch_b["id"], "template": {"subject": "S", "body": "B"}}]}))
        .go()
        .await
        .ok(201);
    app.admin_with(
        &b,
        POST,
        &format!("{A}/flows/{}/activate", s(&flow_b["id"])),
    )
    .go()
    .await
    .ok(200);
    app.admin_with(&b, PUT, &format!("{A}/users/bob"))
        .json(&json!({"email": "bob@example.com"}))
        .go()
        .await;
    let run = app
        .admin_with(&b, POST, &format!("{A}/flows/{}/run", s(&flow_b["id"])))
        .json(&json!({"recipients": [{"external_id": "bob"}]}))
        .go()
        .await
        .ok(202);
    let nb = {
        let d = Deadline::new("project b's delivery", 30);
        loop {
            let page = app
                .admin_with(&b, GET, &format!("{A}/deliveries"))
                .query(&[("status", "sent")])
                .go()
                .await
                .ok(200);
            if let Some(x) = page["items"].as_array().and_then(|i| i.first()).cloned() {
                break x;
            }
            d.tick(&run).await;
        }
    };
    let mid_b = s(&nb["data"]["outcomes"][0]["message_id"]);

    let r = postmark_report(
        &app,
        &ch_b,
        json!({"RecordType": "Delivery", "MessageID": mid_a}),
    )
    .await;
    assert_eq!(counts(&r), (0, 0, 0, 1), "{r}");
    let r = postmark_report(
        &app,
        &ch_a,
        json!({"RecordType": "Delivery", "MessageID": mid_b}),
    )
    .await;
    assert_eq!(counts(&r), (0, 0, 0, 1), "{r}");
    assert_eq!(delivery(&app, &s(&da["id"])).await["status"], json!("sent"));
    let nb_now = app
        .admin_with(&b, GET, &format!("{A}/deliveries/{}", s(&nb["id"])))
        .go()
        .await
        .ok(200);
    assert_eq!(nb_now["status"], json!("sent"), "{nb_now}");
    // the right pairing applies
    let r = postmark_report(
        &app,
        &ch_a,
        json!({"RecordType": "Delivery", "MessageID": mid_a}),
    )
    .await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    if !single_node_only("/metrics counts one node's reports") {
        let m = app.request(GET, "/metrics").go().await;
        assert!(
            m.text
                .contains("herald_feedback_reports_total{outcome=\"unknown\"} 2"),
            "{}",
            m.text
        );
    }
}

/// A later step's condition `steps.0.status eq "delivered"` sees a report
/// that came during the delay (test clock).
#[tokio::test]
async fn a_later_step_sees_the_delivered_status() {
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let server = counterpart("postmark").await;
    let ch = active_channel(&app, "email", "postmark", config("postmark", &server.uri())).await;
    let inapp = in_app_channel(&app).await;
    let mut follow = channel_step(&inapp, None, "glad it arrived");
    follow["if"] = json!([{"path": "steps.0.status", "op": "eq", "value": "delivered"}]);
    let flow = active_flow(
        &app,
        "fbcond",
        json!([
            {"type": "channel", "channel_id": ch["id"], "template": {"subject": "S", "body": "B"}},
            delay_step(3600),
            follow
        ]),
    )
    .await;
    let (yes, no) = (new_ext("fbyes"), new_ext("fbno"));
    for ext in [&yes, &no] {
        app.create_user_as(ext, json!({"email": "x@example.com"}))
            .await;
    }
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": [yes, no]})).await;
    let run_id = s(&run["id"]);
    let mut emails = vec![];
    for n in run_notifications(&app, &run_id).await {
        let e = delivery_of(&n, "email");
        let e = wait_delivery_final(&app, &s(&e["id"]), 30).await;
        assert_eq!(e["status"], json!("sent"), "{e}");
        emails.push((s(&n["recipient"]["external_id"]), e));
    }
    let (_, e_yes) = emails.iter().find(|(x, _)| *x == yes).unwrap();
    let r = postmark_report(
        &app,
        &ch,
        json!({"RecordType": "Delivery", "MessageID": e_yes["data"]["outcomes"][0]["message_id"]}),
    )
    .await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    app.advance_clock(&json!({"by": "1h"})).await.ok(200);
    wait_run_processed(&app, &run_id, 30).await;
    for n in run_notifications(&app, &run_id).await {
        let who = s(&n["recipient"]["external_id"]);
        let later = delivery_of(&n, "in_app");
        if who == yes {
            assert_eq!(later["status"], json!("sent"), "{later}");
        } else {
            assert_eq!(later["status"], json!("skipped"), "{later}");
            assert_eq!(later["error"]["code"], json!("condition_false"), "{later}");
        }
    }
}

/// A channel that does not exist, or whose provider has no callbacks, is a
/// 404 error object; one whose provider's callbacks are not supported yet
/// is refused.
#[tokio::test]
async fn callbacks_to_unknown_or_unsupported_channels_are_refused() {
    let app = TestApp::spawn();
    let r = app
        .provider_callback(&new_uuid(), "application/json", b"{}".to_vec(), |_| vec![])
        .await;
    assert_error(&r, 404, "not_found");
    let r = app
        .provider_callback("not-a-uuid", "application/json", b"{}".to_vec(), |_| vec![])
        .await;
    assert_error(&r, 400, "bad_request");
    let hook = create_webhook_channel(&app, "https://example.com/hook", None).await;
    let r = app
        .provider_callback(
            &s(&hook["id"]),
            "application/json",
            b"{}".to_vec(),
            |_| vec![],
        )
        .await;
    assert_error(&r, 404, "not_found");
    let sg = active_channel(
        &app,
        "email",
        "sendgrid",
        json!({"api_key": "SG.x", "from": FROM}),
    )
    .await;
    let r = app
        .provider_callback(
            &s(&sg["id"]),
            "application/json",
            b"{}".to_vec(),
            |_| vec![],
        )
        .await;
    assert_error(&r, 401, "unauthenticated");
    // a body over 1 MiB is refused before anything is looked at
    let big = vec![b'x'; 1024 * 1024 + 1];
    let r = app
        .provider_callback(&new_uuid(), "application/json", big, |_| vec![])
        .await;
    assert_validation(&r, &[("body", "length")]);
}

/// The forms a Twilio counterpart received, in order.
async fn sent_forms(server: &MockServer) -> Vec<Vec<(String, String)>> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| url::form_urlencoded::parse(&r.body).into_owned().collect())
        .collect()
}

/// With a public URL, each Twilio message names the channel's callback URL
/// (`StatusCallback`), and a report signed over that URL (the one Twilio
/// signs) is applied.
#[tokio::test]
async fn twilio_messages_name_the_public_callback_url() {
    const PUBLIC: &str = "https://herald.example";
    let app = TestApp::spawn_with(&["--public-url", PUBLIC], &[]);
    let (server, ch, flow) = setup(&app, "twilio").await;
    let (d, sid) = send(&app, &flow).await;
    let hook = format!("{PUBLIC}/hooks/v1/{}", s(&ch["id"]));
    let forms = sent_forms(&server).await;
    assert!(
        forms[0].contains(&("StatusCallback".to_string(), hook.clone())),
        "{forms:?}"
    );
    let params = [("MessageSid", sid.as_str()), ("MessageStatus", "delivered")];
    let r = app
        .provider_callback(
            &s(&ch["id"]),
            "application/x-www-form-urlencoded",
            twilio_form(&params),
            |_| {
                vec![(
                    "x-twilio-signature".into(),
                    twilio_signature(TW_TOKEN, &hook, &params),
                )]
            },
        )
        .await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    assert_eq!(
        delivery(&app, &s(&d["id"])).await["status"],
        json!("delivered")
    );
}

/// The project's suppressions of an email address, by reason.
async fn suppressed(app: &TestApp, email: &str) -> Vec<Value> {
    let v = app
        .admin(GET, &format!("{A}/suppressions?channel_type=email"))
        .go()
        .await
        .ok(200);
    v["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|x| x["address"] == json!(email))
        .collect()
}

/// A hard bounce suppresses its address at once: the next run's email to
/// it (another user sharing the address) is `skipped` `suppressed`; soft
/// bounces suppress only at the third within a week.
#[tokio::test]
async fn bounces_put_the_address_on_the_suppression_list() {
    let app = TestApp::spawn();
    let (server, ch, flow) = setup(&app, "postmark").await;

    let hard = "hard@example.com";
    let d = send_to(&app, &flow, hard).await;
    let mid = s(&d["data"]["outcomes"][0]["message_id"]);
    let r = postmark_report(
        &app,
        &ch,
        json!({"RecordType": "Bounce", "Type": "HardBounce", "TypeCode": 1, "MessageID": mid}),
    )
    .await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    let list = suppressed(&app, hard).await;
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["reason"], json!("hard_bounce"), "{list:?}");
    let sends = server.received_requests().await.unwrap_or_default().len();
    let next = send_to(&app, &flow, hard).await;
    assert_eq!(next["status"], json!("skipped"), "{next}");
    assert_eq!(next["error"]["code"], json!("suppressed"), "{next}");
    assert_eq!(
        server.received_requests().await.unwrap_or_default().len(),
        sends,
        "nothing reached the provider"
    );

    let soft = "soft@example.com";
    for i in 0..3 {
        assert!(
            suppressed(&app, soft).await.is_empty(),
            "after {i} soft bounces"
        );
        let d = send_to(&app, &flow, soft).await;
        assert_eq!(d["status"], json!("sent"), "{d}");
        let mid = s(&d["data"]["outcomes"][0]["message_id"]);
        let r = postmark_report(
            &app,
            &ch,
            json!({"RecordType": "Bounce", "Type": "SoftBounce", "TypeCode": 4096,
                   "MessageID": mid}),
        )
        .await;
        assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
        assert_eq!(delivery(&app, &s(&d["id"])).await["bounce"], json!("soft"));
    }
    let list = suppressed(&app, soft).await;
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["reason"], json!("soft_bounce"), "{list:?}");
    let next = send_to(&app, &flow, soft).await;
    assert_eq!(next["error"]["code"], json!("suppressed"), "{next}");
}

/// A refused callback is a wrong credential of its address: past the
/// address's budget the next guess is 429, and so is then a rightly signed
/// callback, before it is verified.
#[tokio::test]
async fn refused_callbacks_use_up_the_address_budget() {
    if single_node_only("the wrong-credentials budget is per node") {
        return;
    }
    let app = TestApp::spawn_with(&["--auth-failures-per-minute", "3"], &[]);
    let (_server, ch, flow) = setup(&app, "postmark").await;
    let (d, mid) = send(&app, &flow).await;
    let delivered = json!({"RecordType": "Delivery", "MessageID": mid,
                           "DeliveredAt": "2026-11-29T10:00:00Z", "Details": "250 OK"});
    for _ in 0..3 {
        let (body, headers) = postmark_call(delivered.clone(), PM_USER, "wrong-password");
        let r = app
            .provider_callback(&s(&ch["id"]), "application/json", body, |_| headers)
            .await;
        assert_error(&r, 401, "unauthenticated");
        assert_eq!(
            r.json["error"]["details"]["reason"],
            json!("invalid_signature"),
            "{r}"
        );
    }
    // the fourth guess is refused, and then so is a rightly signed callback
    let (body, headers) = postmark_call(delivered.clone(), PM_USER, "wrong-password");
    let r = app
        .provider_callback(&s(&ch["id"]), "application/json", body, |_| headers)
        .await;
    assert_error(&r, 429, "rate_limited");
    let r = postmark_report(&app, &ch, delivered).await;
    assert_error(&r, 429, "rate_limited");
    assert!(r.header("retry-after").is_some(), "{r}");
    // the address is refused on the APIs too, as after wrong API keys
    let r = app
        .admin(GET, &format!("/admin/v1/deliveries/{}", s(&d["id"])))
        .go()
        .await;
    assert_error(&r, 429, "rate_limited");
}
