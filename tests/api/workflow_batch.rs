//! docs/API.md "Batch steps": the first run to reach a batch step for a
//! recipient (and key) opens a batch; runs reaching it while it is open
//! join it and end there (`batched`, with `batched_into`); when it closes
//! (its window, or `max` activities) the opener goes on with `batch.*` in
//! its templates. On a test clock, in real time (a 1 s window), with an
//! SMTP sink, validated at save time, canceled, and kept across a SIGKILL.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

fn batch(window: &str, extra: Value) -> Value {
    let mut st = json!({"type": "batch", "window": window});
    for (k, v) in extra.as_object().unwrap() {
        st[k] = v.clone();
    }
    st
}

async fn test_clock(app: &TestApp) {
    app.put_project(&json!({"clock": "test"})).await.ok(200);
}

async fn advance(app: &TestApp, by: &str) {
    app.advance_clock(&json!({"by": by})).await.ok(200);
}

/// Runs the flow for `ext` with `body` (recipients filled in); the run's
/// one notification as it is right after acceptance.
async fn start(app: &TestApp, flow: &str, ext: &str, mut body: Value) -> Value {
    body["recipients"] = json!([ext]);
    let run = run_flow(app, flow, body).await;
    let ns = run_notifications(app, &s(&run["id"])).await;
    assert_eq!(ns.len(), 1, "{ns:?}");
    ns[0].clone()
}

#[track_caller]
fn assert_batched_into(n: &Value, carrier: &Value) {
    assert_eq!(n["status"], json!("batched"), "{n}");
    assert_eq!(n["batched_into"], carrier["id"], "{n}");
    assert!(deliveries(n).is_empty(), "no delivery after the batch: {n}");
}

async fn trace_codes(app: &TestApp, nid: &str) -> Vec<Value> {
    let t = app
        .admin(GET, &format!("{A}/notifications/{nid}/trace"))
        .go()
        .await
        .ok(200);
    t["entries"].as_array().unwrap().clone()
}

fn entry<'a>(entries: &'a [Value], code: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["code"] == json!(code))
        .unwrap_or_else(|| panic!("no {code} entry in {entries:?}"))
}

/// The feed entries' bodies of `ext`, once it holds `n`.
async fn feed_bodies(app: &TestApp, ext: &str, n: usize) -> Vec<String> {
    let feed = wait_feed(app, ext, n).await;
    let mut out: Vec<String> = feed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| s(&e["data"]["body"]))
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn ten_runs_become_one_email_listing_every_activity() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    test_clock(&app).await;
    let email = active_channel(
        &app,
        "email",
        "smtp",
        json!({"host": "127.0.0.1", "port": sink.port, "tls": "none",
            "from": "Herald <noreply@herald.test>", "retry": quick_retry()}),
    )
    .await;
    let flow = active_flow(
        &app,
        "digest",
        json!([
            batch("15m", json!({})),
            {"type": "channel", "channel_id": s(&email["id"]), "template": {
                "subject": "{{ batch.count }} new comments",
                "body": "{% for a in batch.activities %}[{{ a.data.n }} by {{ a.actor.external_id }}]{% endfor %} from {{ batch.actors | length }} people"
            }}
        ]),
    )
    .await;
    assert_eq!(
        flow["steps"][0],
        json!({"type": "batch", "window": "15m", "window_type": "fixed"})
    );
    let fid = s(&flow["id"]);
    let (ext, _) = app
        .create_user("dig", json!({"email": "ada@example.com"}))
        .await;
    let (a1, _) = app.create_user("act", json!({})).await;
    let (a2, _) = app.create_user("act", json!({})).await;
    let actor = |i: usize| {
        if i.is_multiple_of(2) {
            a1.clone()
        } else {
            a2.clone()
        }
    };
    let first = start(
        &app,
        &fid,
        &ext,
        json!({"data": {"n": 0}, "actor": actor(0)}),
    )
    .await;
    assert_eq!(first["status"], json!("pending"), "{first}");
    for i in 1..10 {
        let (_, n) = run_one(
            &app,
            &fid,
            json!({"recipients": [ext], "data": {"n": i}, "actor": actor(i)}),
        )
        .await;
        assert_batched_into(&n, &first);
        let tr = trace_codes(&app, &s(&n["id"])).await;
        let joined = entry(&tr, "batch.joined");
        assert_eq!(joined["args"]["batched_into"], first["id"], "{joined}");
        assert_eq!(joined["args"]["count"], json!(i + 1), "{joined}");
    }
    // nothing goes out before the window ends
    advance(&app, "14m").await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(sink.mails().is_empty(), "{:?}", sink.mails());
    advance(&app, "1m").await;
    let d = wait_delivery_final(&app, &s(&delivery_of(&first, "email")["id"]), 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["data"]["subject"], json!("10 new comments"), "{d}");
    let mails = sink.mails();
    assert_eq!(mails.len(), 1, "one email: {mails:?}");
    // quoted-printable: soft line breaks undone
    let body = mails[0].data.replace("=\r\n", "").replace("=\n", "");
    for i in 0..10 {
        let who = actor(i);
        assert!(body.contains(&format!("[{i} by {who}]")), "{i}: {body}");
    }
    assert!(body.contains("from 2 people"), "{body}");
    let tr = trace_codes(&app, &s(&first["id"])).await;
    let opened = entry(&tr, "batch.opened");
    assert_eq!(opened["args"]["window_type"], json!("fixed"), "{opened}");
    let closed = entry(&tr, "batch.closed");
    assert_eq!(closed["args"]["count"], json!(10), "{closed}");
    assert_eq!(closed["args"]["reason"], json!("window"), "{closed}");
    // a run after the close opens a batch of its own
    let next = start(&app, &fid, &ext, json!({"data": {"n": 10}})).await;
    assert_eq!(next["status"], json!("pending"), "{next}");
}

#[tokio::test]
async fn batch_keys_separate_batches() {
    let app = TestApp::spawn();
    test_clock(&app).await;
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "bkeys",
        json!([
            batch("10m", json!({"key": "{{ data.thread }}"})),
            channel_step(&inapp, None, "{{ data.thread }}: {{ batch.count }}")
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    let ext = new_ext("bk");
    let a = start(&app, &fid, &ext, json!({"data": {"thread": "a"}})).await;
    let b = start(&app, &fid, &ext, json!({"data": {"thread": "b"}})).await;
    assert_eq!(b["status"], json!("pending"), "another key: {b}");
    let (_, a2) = run_one(
        &app,
        &fid,
        json!({"recipients": [ext], "data": {"thread": "a"}}),
    )
    .await;
    assert_batched_into(&a2, &a);
    // another recipient, same key: a batch of their own
    let other = new_ext("bk");
    let o = start(&app, &fid, &other, json!({"data": {"thread": "a"}})).await;
    assert_eq!(o["status"], json!("pending"), "{o}");
    advance(&app, "10m").await;
    assert_eq!(feed_bodies(&app, &ext, 2).await, vec!["a: 2", "b: 1"]);
    assert_eq!(feed_bodies(&app, &other, 1).await, vec!["a: 1"]);
}

#[tokio::test]
async fn max_closes_a_batch_early() {
    let app = TestApp::spawn();
    test_clock(&app).await;
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "bmax",
        json!([
            batch("1h", json!({"max": 3})),
            channel_step(
                &inapp,
                None,
                "{{ batch.count }}: {% for a in batch.activities %}{{ a.data.n }}{% endfor %}"
            )
        ]),
    )
    .await;
    assert_eq!(flow["steps"][0]["max"], json!(3), "{flow}");
    let fid = s(&flow["id"]);
    let ext = new_ext("bm");
    let first = start(&app, &fid, &ext, json!({"data": {"n": 1}})).await;
    for n in 2..=3 {
        let (_, joined) = run_one(&app, &fid, json!({"recipients": [ext], "data": {"n": n}})).await;
        assert_batched_into(&joined, &first);
    }
    // closed at once, without the clock moving
    assert_eq!(feed_bodies(&app, &ext, 1).await, vec!["3: 123"]);
    let tr = trace_codes(&app, &s(&first["id"])).await;
    assert_eq!(entry(&tr, "batch.closed")["args"]["reason"], json!("max"));
    // the next run opens a new batch
    let next = start(&app, &fid, &ext, json!({"data": {"n": 4}})).await;
    assert_eq!(next["status"], json!("pending"), "{next}");
}

/// The delivery is still pending a moment after the clock moved.
async fn assert_pending(app: &TestApp, did: &str) {
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let d = app
        .admin(GET, &format!("{A}/deliveries/{did}"))
        .go()
        .await
        .ok(200);
    assert_eq!(d["status"], json!("pending"), "{d}");
}

#[tokio::test]
async fn a_sliding_window_moves_its_close_up_to_max_window() {
    let app = TestApp::spawn();
    test_clock(&app).await;
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "bslide",
        json!([
            batch(
                "10m",
                json!({"window_type": "sliding", "max_window": "25m"})
            ),
            channel_step(&inapp, None, "{{ batch.count }}")
        ]),
    )
    .await;
    assert_eq!(
        flow["steps"][0],
        json!({"type": "batch", "window": "10m", "window_type": "sliding", "max_window": "25m"})
    );
    let fid = s(&flow["id"]);
    let ext = new_ext("bs");
    let first = start(&app, &fid, &ext, json!({})).await;
    let did = s(&delivery_of(&first, "in_app")["id"]);
    advance(&app, "8m").await;
    let (_, j) = run_one(&app, &fid, json!({"recipients": [ext]})).await;
    assert_batched_into(&j, &first);
    // t = 16m: past the first close (10m), before the slid one (18m)
    advance(&app, "8m").await;
    assert_pending(&app, &did).await;
    let (_, j) = run_one(&app, &fid, json!({"recipients": [ext]})).await;
    assert_batched_into(&j, &first);
    // t = 24m: the close is bounded by 0 + 25m, not 16m + 10m
    advance(&app, "8m").await;
    assert_pending(&app, &did).await;
    advance(&app, "1m").await;
    assert_eq!(feed_bodies(&app, &ext, 1).await, vec!["3"]);
}

#[tokio::test]
async fn canceling_the_opener_cancels_the_digest() {
    let app = TestApp::spawn();
    test_clock(&app).await;
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "bcancel",
        json!([
            batch("10m", json!({})),
            channel_step(&inapp, None, "{{ batch.count }}")
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    let ext = new_ext("bc");
    let first = start(&app, &fid, &ext, json!({"cancellation_key": "k1"})).await;
    let (_, j) = run_one(
        &app,
        &fid,
        json!({"recipients": [ext], "cancellation_key": "k1"}),
    )
    .await;
    assert_batched_into(&j, &first);
    let r = app
        .admin(POST, &format!("{A}/flows/{fid}/cancel"))
        .json(&json!({"cancellation_key": "k1"}))
        .go()
        .await
        .ok(200);
    assert_eq!(r["canceled"], json!(1), "{r}");
    let d = wait_delivery_final(&app, &s(&delivery_of(&first, "in_app")["id"]), 30).await;
    assert_eq!(d["status"], json!("canceled"), "{d}");
    let tr = trace_codes(&app, &s(&first["id"])).await;
    assert_eq!(
        entry(&tr, "batch.closed")["args"]["reason"],
        json!("canceled")
    );
    // the next run opens a batch of its own, which goes out
    let next = start(&app, &fid, &ext, json!({})).await;
    assert_eq!(next["status"], json!("pending"), "{next}");
    advance(&app, "10m").await;
    assert_eq!(feed_bodies(&app, &ext, 1).await, vec!["1"]);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(feed_bodies(&app, &ext, 1).await.len(), 1);
}

#[tokio::test]
async fn a_one_second_window_in_real_time() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "breal",
        json!([
            batch("1s", json!({})),
            channel_step(&inapp, None, "{{ batch.count }}")
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    let ext = new_ext("br");
    let began = std::time::Instant::now();
    let first = start(&app, &fid, &ext, json!({})).await;
    let mut joined = 1;
    for _ in 0..2 {
        let n = start(&app, &fid, &ext, json!({})).await;
        if began.elapsed() < std::time::Duration::from_millis(800) {
            assert_batched_into(&n, &first);
            joined += 1;
        }
    }
    let bodies = feed_bodies(&app, &ext, 1).await;
    assert!(
        began.elapsed() >= std::time::Duration::from_secs(1),
        "not before the window ends"
    );
    assert!(bodies.contains(&joined.to_string()), "{bodies:?}");
    let run = s(&first["flow_run_id"]);
    wait_run_processed(&app, &run, 30).await;
}

#[tokio::test]
async fn batch_steps_are_validated() {
    let app = TestApp::spawn();
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("b-bad"), "name": "B", "steps": [
            {"type": "batch"},
            {"type": "batch", "window": "soon", "max": 0, "window_type": "rolling"},
            {"type": "batch", "window": "1h", "max_window": "2h", "key": "{{ oops"},
            {"type": "batch", "window": "1h", "window_type": "sliding", "max_window": "10m"},
        ]}))
        .go()
        .await;
    assert_validation(
        &r,
        &[
            ("steps.0.window", "required"),
            ("steps.1.type", "inclusion"),
            ("steps.1.window", "format"),
            ("steps.1.max", "number"),
            ("steps.1.window_type", "inclusion"),
            ("steps.2.type", "inclusion"),
            ("steps.2.max_window", "inclusion"),
            ("steps.2.key", "format"),
            ("steps.3.type", "inclusion"),
            ("steps.3.max_window", "number"),
        ],
    );
    // a sliding window's max_window defaults to ten windows
    let f = create_flow(
        &app,
        &handle("b-def"),
        json!([{"type": "batch", "window": "1m", "window_type": "sliding"}]),
    )
    .await;
    assert_eq!(f["steps"][0]["max_window"], json!("600s"), "{f}");
}

#[tokio::test]
async fn an_open_batch_survives_sigkill_and_closes_once() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    test_clock(&app).await;
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "bkill",
        json!([
            batch("10m", json!({})),
            channel_step(&inapp, None, "{{ batch.count }}")
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    let ext = new_ext("bk9");
    let first = start(&app, &fid, &ext, json!({})).await;
    for _ in 0..2 {
        let (_, j) = run_one(&app, &fid, json!({"recipients": [ext]})).await;
        assert_batched_into(&j, &first);
    }
    let status = app.kill9();
    assert!(!status.success(), "SIGKILL: {status:?}");

    let app = TestApp::spawn_on(dir.path(), &keys);
    let (_, j) = run_one(&app, &fid, json!({"recipients": [ext]})).await;
    assert_batched_into(&j, &first);
    advance(&app, "10m").await;
    assert_eq!(feed_bodies(&app, &ext, 1).await, vec!["4"]);
    wait_run_processed(&app, &s(&first["flow_run_id"]), 30).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(feed_bodies(&app, &ext, 1).await, vec!["4"], "exactly once");
}

/// On the real clock the opener's delivery already waits in the delivery
/// actor's timer queue for the window's end; a `max` close moves it to now.
#[tokio::test]
async fn max_closes_a_batch_early_in_real_time() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "bmaxreal",
        json!([
            batch("1h", json!({"max": 2})),
            channel_step(&inapp, None, "{{ batch.count }}")
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    let ext = new_ext("bmr");
    let first = start(&app, &fid, &ext, json!({})).await;
    let (_, j) = run_one(&app, &fid, json!({"recipients": [ext]})).await;
    assert_batched_into(&j, &first);
    assert_eq!(feed_bodies(&app, &ext, 1).await, vec!["2"]);
    wait_run_processed(&app, &s(&first["flow_run_id"]), 30).await;
}

/// After a batch: an in_app digest, a delay, then a webhook only if the
/// digest is still unread, rendered with the batch when it comes due.
#[tokio::test]
async fn a_condition_over_the_digest_gates_a_later_step() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    test_clock(&app).await;
    let inapp = in_app_channel(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let mut gated = channel_step(&s(&chat["id"]), None, "{{ batch.count }} still unread");
    gated["if"] = json!([{"path": "steps.1.read", "op": "eq", "value": false}]);
    let flow = active_flow(
        &app,
        "bgate",
        json!([
            batch("10m", json!({})),
            channel_step(&inapp, None, "{{ batch.count }} new"),
            delay_step(3600),
            gated
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    let (reader, ignorer) = (new_ext("reader"), new_ext("ignorer"));
    let mut openers = vec![];
    for ext in [&reader, &ignorer] {
        openers.push(start(&app, &fid, ext, json!({})).await);
        for _ in 0..2 {
            let (_, j) = run_one(&app, &fid, json!({"recipients": [ext]})).await;
            assert_batched_into(&j, openers.last().unwrap());
        }
    }
    advance(&app, "10m").await;
    let feed = wait_feed(&app, &reader, 1).await;
    assert_eq!(feed["items"][0]["data"]["body"], json!("3 new"), "{feed}");
    let entry = s(&feed["items"][0]["id"]);
    let r = app
        .user(POST, &format!("{U}/feed/{entry}/read"), &reader)
        .go()
        .await;
    assert!(r.status < 300, "{r}");
    assert_eq!(feed_bodies(&app, &ignorer, 1).await, vec!["3 new"]);
    advance(&app, "1h").await;
    for n in &openers {
        wait_run_processed(&app, &s(&n["flow_run_id"]), 30).await;
    }
    let got = received(&hook).await;
    assert_eq!(got.len(), 1, "only the ignorer's webhook");
    let body = req_json(&got[0]);
    assert!(body.to_string().contains("3 still unread"), "{body}");
    let n = app
        .admin(GET, &format!("{A}/notifications/{}", s(&openers[0]["id"])))
        .go()
        .await
        .ok(200);
    let d = delivery_of(&n, "chat");
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("condition_false"), "{d}");
}

/// A send window after a batch step holds at the batch's real close: a
/// sliding window that moves the close past the window's end, and `max`
/// closing a batch before the window opens, both make the digest wait for
/// the window rather than go out when the batch closes.
#[tokio::test]
async fn a_send_window_after_a_batch_holds_at_the_real_close() {
    let app = TestApp::spawn();
    test_clock(&app).await;
    let to = |at: &'static str| {
        let app = &app;
        async move {
            app.advance_clock(&json!({ "to": at })).await.ok(200);
        }
    };
    let inapp = in_app_channel(&app).await;
    let mut step = channel_step(&inapp, None, "{{ batch.count }}");
    step["send_window"] = json!({"from": "09:00", "to": "18:00"});
    let sliding = active_flow(
        &app,
        "bwin-slide",
        json!([
            batch("30m", json!({"window_type": "sliding", "max_window": "2h"})),
            step.clone()
        ]),
    )
    .await;
    let capped = active_flow(
        &app,
        "bwin-max",
        json!([batch("1h", json!({"max": 2})), step]),
    )
    .await;

    // Planned close 17:30, inside the window; joins slide it to 18:10.
    to("2027-03-10T17:00:00Z").await;
    let ext = new_ext("bw");
    let first = start(&app, &s(&sliding["id"]), &ext, json!({})).await;
    let did = s(&delivery_of(&first, "in_app")["id"]);
    for at in ["2027-03-10T17:15:00Z", "2027-03-10T17:40:00Z"] {
        to(at).await;
        let (_, j) = run_one(&app, &s(&sliding["id"]), json!({"recipients": [ext]})).await;
        assert_batched_into(&j, &first);
    }
    to("2027-03-10T18:11:00Z").await;
    let d = wait_next_attempt(&app, &did, "2027-03-11T09:00:00Z").await;
    assert_eq!(d["status"], json!("pending"), "{d}");
    to("2027-03-11T09:00:00Z").await;
    assert_eq!(feed_bodies(&app, &ext, 1).await, vec!["3"]);

    // Planned close 09:30 the next day, inside the window; `max` closes it
    // at 08:40, before the window opens.
    to("2027-03-12T08:30:00Z").await;
    let ext = new_ext("bm");
    let first = start(&app, &s(&capped["id"]), &ext, json!({})).await;
    let did = s(&delivery_of(&first, "in_app")["id"]);
    to("2027-03-12T08:40:00Z").await;
    let (_, j) = run_one(&app, &s(&capped["id"]), json!({"recipients": [ext]})).await;
    assert_batched_into(&j, &first);
    let d = wait_next_attempt(&app, &did, "2027-03-12T09:00:00Z").await;
    assert_eq!(d["status"], json!("pending"), "{d}");
    to("2027-03-12T09:00:00Z").await;
    assert_eq!(feed_bodies(&app, &ext, 1).await, vec!["2"]);
}

/// The delivery once its next attempt is at `at` (the digest was rendered
/// and now waits for its send window); panics after 30 s.
async fn wait_next_attempt(app: &TestApp, did: &str, at: &str) -> Value {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let d = app
            .admin(GET, &format!("{A}/deliveries/{did}"))
            .go()
            .await
            .ok(200);
        if d["status"] != json!("pending") {
            panic!("the digest left its send window's wait: {d}");
        }
        if parse_ts(&d["next_attempt_at"]) == parse_ts(&json!(at)) {
            return d;
        }
        assert!(
            std::time::Instant::now() < until,
            "the digest never waited for {at}: {d}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// A topic run reaching a batch step: each subscriber joins their own open
/// batch or opens one, as a run naming them would.
#[tokio::test]
async fn a_topic_run_joins_or_opens_each_subscribers_batch() {
    let app = TestApp::spawn();
    test_clock(&app).await;
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "btopic",
        json!([
            batch("10m", json!({})),
            channel_step(&inapp, None, "{{ batch.count }}")
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    let topic = format!("bt-{}", new_ext("t"));
    let users = topic_of_new_users(&app, &topic, "bt", 3).await;
    let first = start(&app, &fid, &users[0], json!({})).await;
    let run = run_flow(&app, &fid, json!({"topic": topic})).await;
    // The expansion is the run's actor's work, after the 202.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let ns = loop {
        let ns = list_all(
            &app,
            &format!("{A}/notifications"),
            &[("flow_run_id", &s(&run["id"]))],
        )
        .await;
        if ns.len() >= 3 || std::time::Instant::now() > until {
            break ns;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(ns.len(), 3, "{ns:?}");
    let joined: Vec<&Value> = ns
        .iter()
        .filter(|n| n["status"] == json!("batched"))
        .collect();
    assert_eq!(joined.len(), 1, "{ns:?}");
    assert_eq!(joined[0]["recipient"]["external_id"], json!(users[0]));
    assert_eq!(joined[0]["batched_into"], first["id"]);
    advance(&app, "10m").await;
    assert_eq!(feed_bodies(&app, &users[0], 1).await, vec!["2"]);
    assert_eq!(feed_bodies(&app, &users[1], 1).await, vec!["1"]);
    assert_eq!(feed_bodies(&app, &users[2], 1).await, vec!["1"]);
}
