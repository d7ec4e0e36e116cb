//! docs/API.md "Routes": a route step tries its channels one after another
//! until one reaches the recipient. A `sent` route stops at the first
//! channel a provider accepts; a `read` route stops when the in-app entry
//! is read before the next channel's `after` (test clock); a channel the
//! recipient cannot receive (no phone) and a permanent failure (provider
//! 400) let the next one go at once; the steps after a route wait for its
//! end; the decision trace names each hop; bad routes are 422s. `seen`,
//! `clicked` and `interacted` routes stop on their own flag of the in-app
//! entry, a `delivered` route on the provider's signed delivery report.

use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

fn hop(channel: &str, body: &str, after: Option<&str>) -> Value {
    let mut h = json!({"channel_id": channel, "template": {"body": body}});
    if let Some(a) = after {
        h["after"] = json!(a);
    }
    h
}

fn route(success: &str, hops: Vec<Value>) -> Value {
    json!({"type": "route", "success": success, "channels": hops})
}

/// The deliveries of the run's only notification, in id order (a route's
/// hops after every step's first delivery).
async fn the_deliveries(app: &TestApp, run_id: &str) -> (String, Vec<Value>) {
    let ns = run_notifications(app, run_id).await;
    assert_eq!(ns.len(), 1, "{ns:?}");
    (s(&ns[0]["id"]), deliveries(&ns[0]))
}

/// The delivery on `channel` with `body`.
#[track_caller]
fn on(ds: &[Value], channel: &str, body: &str) -> Value {
    let found: Vec<&Value> = ds
        .iter()
        .filter(|d| d["channel_id"] == json!(channel) && d["data"]["body"] == json!(body))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one delivery on {channel} with {body}: {ds:?}"
    );
    found[0].clone()
}

#[track_caller]
fn assert_unneeded(d: &Value) {
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("route_satisfied"), "{d}");
}

async fn trace_codes(app: &TestApp, nid: &str) -> Vec<Value> {
    let t = app
        .admin(GET, &format!("{A}/notifications/{nid}/trace"))
        .go()
        .await
        .ok(200);
    t["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("entries: {t}"))
        .iter()
        .filter(|e| s(&e["code"]).starts_with("route."))
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_sent_route_stops_at_the_first_channel_a_provider_accepts() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let sms = mock_server().await;
    mock_always(&sms, 200).await;
    let app = TestApp::spawn();
    let chat = s(&create_webhook_channel(&app, &hook_url(&hook), None).await["id"]);
    let vonage = active_channel(
        &app,
        "sms",
        "vonage",
        json!({"api_key": "k", "api_secret": "s", "from": "Herald", "base_url": sms.uri()}),
    )
    .await;
    let vonage = s(&vonage["id"]);
    let flow = active_flow(
        &app,
        "route-sent",
        json!([route(
            "sent",
            vec![hop(&chat, "first", None), hop(&vonage, "second", None)]
        )]),
    )
    .await;
    let (ext, _) = app
        .create_user("route", json!({"phone": "+447700900001"}))
        .await;
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": [ext]})).await;
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    let (nid, ds) = the_deliveries(&app, &s(&run["id"])).await;
    assert_eq!(ds.len(), 2, "{ds:?}");
    assert_eq!(on(&ds, &chat, "first")["status"], json!("sent"));
    assert_unneeded(&on(&ds, &vonage, "second"));
    assert_eq!(received(&hook).await.len(), 1);
    assert!(received(&sms).await.is_empty(), "the SMS was not needed");
    let codes = trace_codes(&app, &nid).await;
    let hop0 = codes
        .iter()
        .find(|e| e["code"] == json!("route.hop"))
        .unwrap_or_else(|| panic!("{codes:?}"));
    assert_eq!(hop0["args"]["result"], json!("sent"), "{codes:?}");
    assert_eq!(hop0["args"]["reason"], json!("first_channel"), "{codes:?}");
    let done = codes
        .iter()
        .find(|e| e["code"] == json!("route.satisfied"))
        .unwrap_or_else(|| panic!("{codes:?}"));
    assert_eq!(done["args"]["hop"], json!(1), "{codes:?}");
    assert!(s(&done["args"]["reason"]).contains("hop 0"), "{codes:?}");
}

#[tokio::test]
async fn a_permanent_failure_or_a_missing_phone_lets_the_next_channel_go_at_once() {
    let bad = mock_server().await;
    mock_always(&bad, 400).await;
    let good = mock_server().await;
    mock_always(&good, 200).await;
    let sms = mock_server().await;
    mock_always(&sms, 200).await;
    let app = TestApp::spawn();
    let failing = s(&create_webhook_channel(&app, &hook_url(&bad), None).await["id"]);
    let working = s(&create_webhook_channel(&app, &hook_url(&good), None).await["id"]);
    let vonage = active_channel(
        &app,
        "sms",
        "vonage",
        json!({"api_key": "k", "api_secret": "s", "from": "Herald", "base_url": sms.uri()}),
    )
    .await;
    let vonage = s(&vonage["id"]);
    // Each later channel waits an hour after one that went out: only a
    // failure or a skip lets it go within the test's seconds.
    let flow = active_flow(
        &app,
        "route-fail",
        json!([route(
            "sent",
            vec![
                hop(&vonage, "sms", None),
                hop(&failing, "rejected", Some("1h")),
                hop(&working, "fallback", Some("1h")),
            ]
        )]),
    )
    .await;
    let (ext, _) = app.create_user("nophone", json!({})).await;
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": [ext]})).await;
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    let (nid, ds) = the_deliveries(&app, &s(&run["id"])).await;
    let d = on(&ds, &vonage, "sms");
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("missing_address"), "{d}");
    let d = on(&ds, &failing, "rejected");
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["attempts"], json!(1), "a 400 is not retried: {d}");
    assert_eq!(on(&ds, &working, "fallback")["status"], json!("sent"));
    assert!(received(&sms).await.is_empty());
    assert_eq!(received(&good).await.len(), 1);
    let codes = trace_codes(&app, &nid).await;
    let reasons: Vec<(Value, Value)> = codes
        .iter()
        .map(|e| (e["args"]["result"].clone(), e["args"]["reason"].clone()))
        .collect();
    assert!(
        reasons.contains(&(json!("skipped"), json!("missing_address"))),
        "{codes:?}"
    );
    assert!(
        reasons.contains(&(json!("sent"), json!("previous_failed"))),
        "{codes:?}"
    );
}

/// A `read` route on a test clock: the email goes `after` the in-app
/// entry unless the entry was read by then; the step after the route
/// waits for the route to end.
#[tokio::test]
async fn a_read_route_waits_on_the_test_clock_and_stops_when_the_entry_is_read() {
    let hook = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&hook)
        .await;
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let inapp = in_app_channel(&app).await;
    let chat = s(&create_webhook_channel(&app, &hook_url(&hook), None).await["id"]);
    let flow = active_flow(
        &app,
        "route-read",
        json!([
            route(
                "read",
                vec![hop(&inapp, "entry", None), hop(&chat, "nudge", Some("10m"))]
            ),
            channel_step(&chat, None, "afterwards"),
        ]),
    )
    .await;
    let (reader, ignorer) = (new_ext("reader"), new_ext("ignorer"));
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [reader, ignorer]}),
    )
    .await;
    let run_id = s(&run["id"]);
    let feed = wait_feed(&app, &reader, 1).await;
    wait_feed(&app, &ignorer, 1).await;
    let entry = s(&feed["items"][0]["id"]);
    let r = app
        .user(POST, &format!("{U}/feed/{entry}/read"), &reader)
        .go()
        .await;
    assert!(r.status < 300, "{r}");

    // Nine minutes: nothing else went, and the step after the route waits.
    app.advance_clock(&json!({"by": "9m"})).await.ok(200);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(received(&hook).await.is_empty(), "nothing before `after`");
    for n in run_notifications(&app, &run_id).await {
        let ds = deliveries(&n);
        assert_eq!(on(&ds, &chat, "nudge")["status"], json!("pending"), "{n}");
        assert_eq!(
            on(&ds, &chat, "afterwards")["status"],
            json!("pending"),
            "{n}"
        );
    }

    // Ten: the ignorer gets the nudge, then the step after; the reader
    // only the step after.
    app.advance_clock(&json!({"by": "1m"})).await.ok(200);
    wait_run_processed(&app, &run_id, 30).await;
    for n in run_notifications(&app, &run_id).await {
        let who = s(&n["recipient"]["external_id"]);
        let ds = deliveries(&n);
        assert_eq!(on(&ds, &inapp, "entry")["status"], json!("sent"), "{n}");
        let nudge = on(&ds, &chat, "nudge");
        let after = on(&ds, &chat, "afterwards");
        assert_eq!(after["status"], json!("sent"), "{n}");
        if who == reader {
            assert_unneeded(&nudge);
            assert!(s(&nudge["error"]["message"]).contains("read"), "{nudge}");
        } else {
            assert_eq!(nudge["status"], json!("sent"), "{n}");
            assert!(
                parse_ts(&after["sent_at"]) >= parse_ts(&nudge["sent_at"]),
                "the step after the route went after it: {n}"
            );
        }
    }
    let bodies: Vec<String> = received(&hook)
        .await
        .iter()
        .map(|r| req_json(r).to_string())
        .collect();
    assert_eq!(bodies.len(), 3, "{bodies:?}");
    assert_eq!(
        bodies.iter().filter(|b| b.contains("nudge")).count(),
        1,
        "{bodies:?}"
    );
}

#[tokio::test]
async fn bad_routes_are_refused_with_their_paths() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let six: Vec<Value> = (0..6)
        .map(|i| hop(&inapp, &format!("h{i}"), None))
        .collect();
    let steps = json!([
        route("opened", vec![hop(&inapp, "a", None)]),
        route("sent", six),
        {"type": "route", "success": "sent"},
        route("sent", vec![hop(&inapp, "a", Some("soon")), hop(&new_uuid(), "b", None)]),
        route("sent", vec![json!({"channel_id": inapp, "template": {}})]),
        route("read", vec![json!({"channel_id": inapp, "template": {"body": "x"},
            "if": [{"path": "steps.9.read", "op": "eq", "value": true}]})]),
        {"type": "batch", "window": "1m"},
        route("sent", vec![hop(&inapp, "after a batch", None)]),
    ]);
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("route-bad"), "name": "R", "steps": steps}))
        .go()
        .await;
    assert_validation(
        &r,
        &[
            ("steps.0.success", "inclusion"),
            ("steps.1.channels", "length"),
            ("steps.2.channels", "required"),
            ("steps.3.channels.0.after", "format"),
            ("steps.3.channels.1.channel_id", "inclusion"),
            ("steps.4.channels.0.template.body", "required"),
            ("steps.5.channels.0.if.0.path", "inclusion"),
            ("steps.7.type", "inclusion"),
        ],
    );

    // A good one reads back as given, and previews every channel.
    let f = create_flow(
        &app,
        &handle("route-ok"),
        json!([route(
            "interacted",
            vec![hop(&inapp, "a", None), hop(&inapp, "b", Some("15m"))]
        )]),
    )
    .await;
    let st = &f["steps"][0];
    assert_eq!(st["type"], json!("route"), "{f}");
    assert_eq!(st["success"], json!("interacted"), "{f}");
    assert_eq!(st["channels"][1]["after"], json!("15m"), "{f}");
    assert_eq!(st["channels"][1]["template"]["body"], json!("b"), "{f}");
}

/// A SIGKILL while a `delivered` route waits on a test clock: after the
/// restart the next channel goes at its `after`, then the step after the
/// route; each once (a send repeated after the kill carries the same
/// delivery id as its idempotency key).
#[tokio::test]
async fn sigkill_while_a_route_waits_sends_each_channel_once_after_restart() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let chat = s(&create_webhook_channel(&app, &hook_url(&hook), None).await["id"]);
    let flow = active_flow(
        &app,
        "route-kill",
        json!([
            route(
                "delivered",
                vec![hop(&chat, "first", None), hop(&chat, "second", Some("10m"))]
            ),
            channel_step(&chat, None, "after"),
        ]),
    )
    .await;
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": [new_ext("k")]})).await;
    let run_id = s(&run["id"]);
    let (_, ds) = the_deliveries(&app, &run_id).await;
    let first = on(&ds, &chat, "first");
    assert_eq!(
        wait_delivery_final(&app, &s(&first["id"]), 30).await["status"],
        json!("sent")
    );
    let status = app.kill9();
    assert!(!status.success(), "SIGKILL: {status:?}");

    let app = TestApp::spawn_on(dir.path(), &keys);
    app.advance_clock(&json!({"by": "9m"})).await.ok(200);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let (_, ds) = the_deliveries(&app, &run_id).await;
    assert_eq!(
        on(&ds, &chat, "second")["status"],
        json!("pending"),
        "{ds:?}"
    );
    assert_eq!(
        on(&ds, &chat, "after")["status"],
        json!("pending"),
        "{ds:?}"
    );
    app.advance_clock(&json!({"by": "1m"})).await.ok(200);
    wait_run_processed(&app, &run_id, 30).await;
    let (_, ds) = the_deliveries(&app, &run_id).await;
    for body in ["first", "second", "after"] {
        let d = on(&ds, &chat, body);
        assert_eq!(d["status"], json!("sent"), "{d}");
        assert_eq!(d["attempts"], json!(1), "{d}");
    }
    let mut got: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    for r in received(&hook).await {
        let key = req_header(&r, "idempotency-key").expect("idempotency-key");
        got.entry(key)
            .or_default()
            .push(req_json(&r)["delivery"]["data"]["body"].clone());
    }
    let mut bodies: Vec<String> = got.values().map(|b| s(&b[0])).collect();
    bodies.sort();
    assert_eq!(bodies, ["after", "first", "second"], "{got:?}");
    assert!(
        got.values().all(|b| b.iter().all(|x| x == &b[0])),
        "{got:?}"
    );
}

/// `seen`, `clicked` and `interacted` routes: the recipient who did that to
/// the in-app entry before the next channel's `after` gets nothing more;
/// the other (who did nothing, or only read a `clicked` route's entry) gets
/// the next channel.
#[tokio::test]
async fn seen_clicked_and_interacted_routes_stop_on_their_own_flag() {
    let hook = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&hook)
        .await;
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let inapp = in_app_channel(&app).await;
    let chat = s(&create_webhook_channel(&app, &hook_url(&hook), None).await["id"]);
    // (success, what the stopping user does, what the other does)
    let kinds = [
        ("seen", json!({"seen": true}), None),
        (
            "clicked",
            json!({"clicked": true}),
            Some(json!({"read": true})),
        ),
        ("interacted", json!({"seen": true}), None),
    ];
    for (success, stop, other_does) in kinds {
        let flow = active_flow(
            &app,
            &format!("route-{success}"),
            json!([route(
                success,
                vec![hop(&inapp, "entry", None), hop(&chat, "nudge", Some("10m"))]
            )]),
        )
        .await;
        let (stopper, other) = (new_ext("stopper"), new_ext("other"));
        let run = run_flow(
            &app,
            &s(&flow["id"]),
            json!({"recipients": [stopper, other]}),
        )
        .await;
        let run_id = s(&run["id"]);
        for (who, body) in [(&stopper, Some(stop)), (&other, other_does)] {
            let feed = wait_feed(&app, who, 1).await;
            if let Some(body) = body {
                let entry = s(&feed["items"][0]["id"]);
                app.user(PATCH, &format!("{U}/feed/{entry}"), who)
                    .json(&body)
                    .go()
                    .await
                    .ok(200);
            }
        }
        app.advance_clock(&json!({"by": "10m"})).await.ok(200);
        wait_run_processed(&app, &run_id, 30).await;
        for n in run_notifications(&app, &run_id).await {
            let nudge = on(&deliveries(&n), &chat, "nudge");
            if s(&n["recipient"]["external_id"]) == stopper {
                assert_unneeded(&nudge);
                assert!(s(&nudge["error"]["message"]).contains(success), "{nudge}");
            } else {
                assert_eq!(nudge["status"], json!("sent"), "{success}: {n}");
            }
        }
    }
    assert_eq!(received(&hook).await.len(), 3, "one nudge per route kind");
}

/// A `delivered` route: the email the provider reported delivered (its
/// callback, signed) stops the route; the one only accepted does not.
#[tokio::test]
async fn a_delivered_route_stops_when_the_provider_reports_delivery() {
    let hook = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&hook)
        .await;
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let pm = super::feedback::counterpart("postmark").await;
    let email = active_channel(
        &app,
        "email",
        "postmark",
        super::feedback::config("postmark", &pm.uri()),
    )
    .await;
    let chat = s(&create_webhook_channel(&app, &hook_url(&hook), None).await["id"]);
    let mail = json!({"channel_id": email["id"], "template": {"subject": "Hi", "body": "mail"}});
    let flow = active_flow(
        &app,
        "route-delivered",
        json!([route(
            "delivered",
            vec![mail, hop(&chat, "nudge", Some("10m"))]
        )]),
    )
    .await;
    let (got, lost) = (new_ext("got"), new_ext("lost"));
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [
            {"external_id": got, "email": "got@example.com"},
            {"external_id": lost, "email": "lost@example.com"}]}),
    )
    .await;
    let run_id = s(&run["id"]);
    // both emails accepted by the provider
    let d = Deadline::new("both emails sent", 30);
    let mails = loop {
        let ns = run_notifications(&app, &run_id).await;
        let mails: Vec<(String, Value)> = ns
            .iter()
            .map(|n| {
                let m = on(&deliveries(n), &s(&email["id"]), "mail");
                (s(&n["recipient"]["external_id"]), m)
            })
            .collect();
        if mails.len() == 2 && mails.iter().all(|(_, m)| m["status"] == json!("sent")) {
            break mails;
        }
        d.tick(format!("{mails:?}")).await;
    };
    let (_, delivered) = mails.iter().find(|(w, _)| *w == got).expect("got's email");
    let mid = s(&delivered["data"]["outcomes"][0]["message_id"]);
    let r = super::feedback::postmark_report(
        &app,
        &email,
        json!({"RecordType": "Delivery", "MessageID": mid,
               "DeliveredAt": "2026-11-30T10:00:00Z", "Details": "250 OK"}),
    )
    .await;
    assert_eq!(r.ok(200)["applied"], json!(1), "{r}");
    app.advance_clock(&json!({"by": "10m"})).await.ok(200);
    wait_run_processed(&app, &run_id, 30).await;
    for n in run_notifications(&app, &run_id).await {
        let ds = deliveries(&n);
        let nudge = on(&ds, &chat, "nudge");
        if s(&n["recipient"]["external_id"]) == got {
            assert_eq!(
                on(&ds, &s(&email["id"]), "mail")["status"],
                json!("delivered")
            );
            assert_unneeded(&nudge);
            assert!(
                s(&nudge["error"]["message"]).contains("delivered"),
                "{nudge}"
            );
        } else {
            assert_eq!(nudge["status"], json!("sent"), "{n}");
        }
    }
    assert_eq!(received(&hook).await.len(), 1, "one nudge");
}

/// A route channel's backups: its first channel refuses for good, the same
/// hop (the same delivery id) goes through its backup, which accepts, and
/// that meets a `sent` route: the next channel is not needed.
#[tokio::test]
async fn a_route_channel_moves_to_its_backup_within_its_hop() {
    let (refusing, backup, later) = (
        mock_server().await,
        mock_server().await,
        mock_server().await,
    );
    for (server, status) in [(&refusing, 400), (&backup, 200), (&later, 200)] {
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(status))
            .mount(server)
            .await;
    }
    let app = TestApp::spawn();
    let a = s(&create_webhook_channel(&app, &hook_url(&refusing), None).await["id"]);
    let b = s(&create_webhook_channel(&app, &hook_url(&backup), None).await["id"]);
    let c = s(&create_webhook_channel(&app, &hook_url(&later), None).await["id"]);
    let mut first = hop(&a, "first", None);
    first["fallback_channel_ids"] = json!([b]);
    let flow = active_flow(
        &app,
        "route-backup",
        json!([route("sent", vec![first, hop(&c, "later", Some("10m"))])]),
    )
    .await;
    let got = app
        .admin(GET, &format!("{A}/flows/{}", s(&flow["id"])))
        .go()
        .await
        .ok(200);
    assert_eq!(
        got["steps"][0]["channels"][0]["fallback_channel_ids"],
        json!([b]),
        "{got}"
    );
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [new_ext("bk")]}),
    )
    .await;
    let run_id = s(&run["id"]);
    wait_run_processed(&app, &run_id, 30).await;
    let (_, ds) = the_deliveries(&app, &run_id).await;
    assert_eq!(ds.len(), 2, "{ds:?}");
    let moved = ds
        .iter()
        .find(|d| d["data"]["body"] == json!("first"))
        .expect("hop 0");
    assert_eq!(moved["status"], json!("sent"), "{moved}");
    assert_eq!(moved["channel_id"], json!(b), "{moved}");
    assert_eq!(moved["attempt_channels"], json!([a, b]), "{moved}");
    assert_unneeded(&on(&ds, &c, "later"));
    let key = |r: &wiremock::Request| req_header(r, "idempotency-key").expect("key");
    let (at_a, at_b) = (received(&refusing).await, received(&backup).await);
    assert_eq!((at_a.len(), at_b.len()), (1, 1));
    assert_eq!(key(&at_a[0]), key(&at_b[0]), "one delivery id at both");
    assert_eq!(key(&at_b[0]), s(&moved["id"]));
    assert!(received(&later).await.is_empty());
}
