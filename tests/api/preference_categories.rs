//! Preference categories and project defaults (docs/API.md §6,
//! docs/PREFERENCES.md): categories declared with `PUT /categories/{h}`,
//! flows that belong to them, the precedence table case by case (over
//! real runs to an in-app feed and a chat webhook), project defaults that
//! a user's own setting overrides and a later default change reaches, and
//! `?explain=true`.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

fn prefs_path(ext: &str) -> String {
    format!("{A}/users/{}/preferences", enc(ext))
}

const DEFAULTS: &str = "/admin/v1/preferences/defaults";

async fn put_category(app: &TestApp, handle: &str, name: &str) -> Resp {
    app.admin(PUT, &format!("{A}/categories/{handle}"))
        .json(&json!({"name": name}))
        .go()
        .await
}

async fn put_prefs(app: &TestApp, ext: &str, body: Value) -> Value {
    app.admin(PUT, &prefs_path(ext))
        .json(&body)
        .go()
        .await
        .ok(200)
}

async fn put_defaults(app: &TestApp, body: Value) -> Value {
    app.admin(PUT, DEFAULTS).json(&body).go().await.ok(200)
}

/// A 422 whose details name `field` with reason `reason`.
#[track_caller]
fn assert_field(r: &Resp, field: &str, reason: &str) {
    let d = assert_error(r, 422, "validation_failed");
    let fields = d["fields"].as_array().unwrap_or_else(|| panic!("{r}"));
    assert!(
        fields
            .iter()
            .any(|f| f["field"] == json!(field) && f["reason"] == json!(reason)),
        "expected {field} {reason}: {r}"
    );
}

/// A project with two declared categories (`comments`, `billing`) and two
/// active flows, each sending in-app and to a chat webhook: `comment` in
/// `comments`, `invoice` in `billing`.
/// (`_hook` must stay bound while the test runs: dropping it stops the
/// receiver.)
struct Setup {
    app: TestApp,
    comment: Value,
    invoice: Value,
    _hook: wiremock::MockServer,
}

async fn setup() -> Setup {
    let app = TestApp::spawn();
    put_category(&app, "comments", "Comments").await.ok(201);
    put_category(&app, "billing", "Billing").await.ok(201);
    let inapp = in_app_channel(&app).await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let steps = json!([
        channel_step(&inapp, None, "Hi"),
        channel_step(&s(&chat["id"]), None, "Hi")
    ]);
    let mut flows = vec![];
    for (tag, cat) in [("comment", "comments"), ("invoice", "billing")] {
        let r = app
            .admin(POST, &format!("{A}/flows"))
            .json(&json!({"handle": handle(tag), "name": tag, "steps": steps,
                "categories": [cat]}))
            .go()
            .await;
        let f = r.ok(201);
        assert_eq!(f["categories"], json!([cat]), "{r}");
        activate(&app, &s(&f["id"])).await;
        flows.push(f);
    }
    let invoice = flows.pop().unwrap();
    let comment = flows.pop().unwrap();
    Setup {
        app,
        comment,
        invoice,
        _hook: hook,
    }
}

/// The statuses of a run of `flow` to `ext`: (in_app, chat) as accepted.
async fn statuses(app: &TestApp, flow: &Value, ext: &str) -> (String, String, Value) {
    let (_, n) = run_one(app, &s(&flow["id"]), json!({"recipients": [ext]})).await;
    let in_app = s(&delivery_of(&n, "in_app")["status"]);
    let chat = s(&delivery_of(&n, "chat")["status"]);
    (in_app, chat, n)
}

fn sent_or_pending(status: &str) -> bool {
    status != "skipped" && status != "failed"
}

async fn preference_keys(app: &TestApp, nid: &str) -> Vec<(String, String)> {
    let t = app
        .admin(GET, &format!("{A}/notifications/{nid}/trace"))
        .go()
        .await
        .ok(200);
    t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| s(&e["code"]).starts_with("preference."))
        .map(|e| (s(&e["code"]), s(&e["args"]["key"])))
        .collect()
}

#[tokio::test]
async fn categories_are_declared_renamed_listed_and_deleted_when_unused() {
    let app = TestApp::spawn();
    let r = put_category(&app, "news", "News").await;
    let c = r.ok(201);
    assert_eq!(c["handle"], json!("news"), "{r}");
    assert_eq!(c["name"], json!("News"), "{r}");
    assert_eq!(c["description"], json!(null), "{r}");
    let r = app
        .admin(PUT, &format!("{A}/categories/news"))
        .json(&json!({"name": "Newsletter", "description": "Monthly"}))
        .go()
        .await;
    let c2 = r.ok(200);
    assert_eq!(c2["name"], json!("Newsletter"), "{r}");
    assert_eq!(c2["created_at"], c["created_at"], "{r}");
    put_category(&app, "alerts", "Alerts").await.ok(201);
    let list = app
        .admin(GET, &format!("{A}/categories"))
        .go()
        .await
        .ok(200);
    let handles: Vec<String> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| s(&c["handle"]))
        .collect();
    assert_eq!(handles, vec!["alerts", "news"], "{list}");
    let one = app
        .admin(GET, &format!("{A}/categories/news"))
        .go()
        .await
        .ok(200);
    assert_eq!(one, c2);

    // bad input: a missing name, a handle that is not one, an unknown one
    let r = app
        .admin(PUT, &format!("{A}/categories/news"))
        .json(&json!({"description": 3}))
        .go()
        .await;
    assert_field(&r, "name", "required");
    assert_field(&r, "description", "format");
    let r = put_category(&app, "Not%20A%20Handle", "X").await;
    assert_field(&r, "handle", "format");
    let r = app.admin(GET, &format!("{A}/categories/nope")).go().await;
    assert_error(&r, 404, "not_found");

    // a category a live flow belongs to stays; once the flow is archived it goes
    let inapp = in_app_channel(&app).await;
    let f = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("nl"), "name": "NL",
            "steps": [channel_step(&inapp, None, "Hi")], "categories": ["news"]}))
        .go()
        .await
        .ok(201);
    let r = app
        .admin(DELETE, &format!("{A}/categories/news"))
        .go()
        .await;
    let d = assert_conflict(&r, "category_in_use");
    assert_eq!(d["flows"], json!([f["handle"]]), "{r}");
    app.admin(POST, &format!("{A}/flows/{}/archive", s(&f["id"])))
        .go()
        .await
        .ok(200);
    let r = app
        .admin(DELETE, &format!("{A}/categories/news"))
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    let r = app
        .admin(DELETE, &format!("{A}/categories/news"))
        .go()
        .await;
    assert_error(&r, 404, "not_found");
}

#[tokio::test]
async fn a_flow_names_only_declared_categories_each_once() {
    let app = TestApp::spawn();
    put_category(&app, "comments", "Comments").await.ok(201);
    let inapp = in_app_channel(&app).await;
    let steps = json!([channel_step(&inapp, None, "Hi")]);
    for (bad, field, reason) in [
        (json!(["nope"]), "categories.0", "inclusion"),
        (json!(["comments", "comments"]), "categories.1", "unique"),
        (json!([3]), "categories.0", "format"),
        (json!("comments"), "categories", "format"),
        (json!(vec!["comments"; 11]), "categories", "length"),
    ] {
        let r = app
            .admin(POST, &format!("{A}/flows"))
            .json(&json!({"handle": handle("c"), "name": "C", "steps": steps, "categories": bad}))
            .go()
            .await;
        assert_field(&r, field, reason);
    }
    let f = create_flow(&app, &handle("plain"), steps).await;
    assert_eq!(f["categories"], json!([]), "none when absent: {f}");
    let id = s(&f["id"]);
    let f = app
        .admin(PUT, &format!("{A}/flows/{id}"))
        .json(&json!({"categories": ["comments"]}))
        .go()
        .await
        .ok(200);
    assert_eq!(f["categories"], json!(["comments"]));
    let f = app
        .admin(PUT, &format!("{A}/flows/{id}"))
        .json(&json!({"name": "Renamed"}))
        .go()
        .await
        .ok(200);
    assert_eq!(f["categories"], json!(["comments"]), "absent keeps them");
    let r = app
        .admin(PUT, &format!("{A}/flows/{id}"))
        .json(&json!({"categories": ["other"]}))
        .go()
        .await;
    assert_field(&r, "categories.0", "inclusion");
    let f = app
        .admin(PUT, &format!("{A}/flows/{id}"))
        .json(&json!({"categories": []}))
        .go()
        .await
        .ok(200);
    assert_eq!(f["categories"], json!([]));
}

#[tokio::test]
async fn the_precedence_table_case_by_case() {
    let Setup {
        app,
        comment,
        invoice,
        _hook,
    } = setup().await;
    let (ch, ih) = (s(&comment["handle"]), s(&invoice["handle"]));

    // nothing set: everything goes out
    let (u, _) = app.create_user("none", json!({})).await;
    let (a, c, _) = statuses(&app, &comment, &u).await;
    assert!(sent_or_pending(&a) && sent_or_pending(&c), "{a} {c}");

    // global off beats category on
    let (u, _) = app.create_user("global", json!({})).await;
    put_prefs(
        &app,
        &u,
        json!({"channel_types": {"chat": false},
        "categories": {"comments": {"enabled": true, "channel_types": {"chat": true}}}}),
    )
    .await;
    let (a, c, n) = statuses(&app, &comment, &u).await;
    assert!(sent_or_pending(&a), "{n}");
    assert_eq!(c, "skipped", "{n}");
    let keys = preference_keys(&app, &s(&n["id"])).await;
    assert!(
        keys.contains(&("preference.skipped".into(), "channel_type".into())),
        "{keys:?}"
    );

    // category off beats flow on; another category's flow is untouched
    let (u, _) = app.create_user("cat", json!({})).await;
    put_prefs(
        &app,
        &u,
        json!({"categories": {"comments": {"enabled": false}},
        "flows": {&ch: {"enabled": true, "channel_types": {"chat": true}}}}),
    )
    .await;
    let (a, c, n) = statuses(&app, &comment, &u).await;
    assert_eq!((a.as_str(), c.as_str()), ("skipped", "skipped"), "{n}");
    let keys = preference_keys(&app, &s(&n["id"])).await;
    assert_eq!(
        keys,
        vec![("preference.skipped".to_string(), "category".to_string()); 2],
        "{keys:?}"
    );
    let (a, c, n) = statuses(&app, &invoice, &u).await;
    assert!(sent_or_pending(&a) && sent_or_pending(&c), "{n}");

    // a category off on one channel type only
    let (u, _) = app.create_user("catchan", json!({})).await;
    put_prefs(
        &app,
        &u,
        json!({"categories": {"comments": {"channel_types": {"chat": false}}}}),
    )
    .await;
    let (a, c, n) = statuses(&app, &comment, &u).await;
    assert!(sent_or_pending(&a), "{n}");
    assert_eq!(c, "skipped", "{n}");
    let keys = preference_keys(&app, &s(&n["id"])).await;
    assert!(
        keys.contains(&("preference.skipped".into(), "category_channel".into())),
        "{keys:?}"
    );

    // the flow off alone, its category on
    let (u, _) = app.create_user("flow", json!({})).await;
    put_prefs(&app, &u, json!({"flows": {&ih: {"enabled": false}}})).await;
    let (a, c, n) = statuses(&app, &invoice, &u).await;
    assert_eq!((a.as_str(), c.as_str()), ("skipped", "skipped"), "{n}");
    let (a, c, n) = statuses(&app, &comment, &u).await;
    assert!(sent_or_pending(&a) && sent_or_pending(&c), "{n}");

    // the answer shows every category and each flow's categories
    let p = app.admin(GET, &prefs_path(&u)).go().await.ok(200);
    assert_eq!(
        p["categories"],
        json!({"billing": {"name": "Billing", "enabled": true, "channel_types": all_true()},
               "comments": {"name": "Comments", "enabled": true, "channel_types": all_true()}}),
        "{p}"
    );
    assert_eq!(p["flows"][&ih]["categories"], json!(["billing"]), "{p}");
    assert_eq!(p["flows"][&ih]["enabled"], json!(false), "{p}");
    assert_eq!(p.get("explain"), None, "only when asked: {p}");
}

#[tokio::test]
async fn defaults_apply_until_a_user_sets_the_value_and_later_changes_reach_the_rest() {
    let Setup {
        app,
        comment,
        _hook,
        ..
    } = setup().await;
    let ch = s(&comment["handle"]);
    let (quiet, _) = app.create_user("quiet", json!({})).await;
    let (chosen, _) = app.create_user("chosen", json!({})).await;

    // the project turns comments off by default
    let d = put_defaults(
        &app,
        json!({"categories": {"comments": {"enabled": false}}}),
    )
    .await;
    assert_eq!(d["categories"]["comments"]["enabled"], json!(false), "{d}");
    let again = app.admin(GET, DEFAULTS).go().await.ok(200);
    assert_eq!(again, d);
    // one user turns them back on for themselves, through the User API
    app.user(PUT, &format!("{U}/preferences"), &chosen)
        .json(&json!({"categories": {"comments": {"enabled": true}}}))
        .go()
        .await
        .ok(200);
    let (a, _, n) = statuses(&app, &comment, &quiet).await;
    assert_eq!(a, "skipped", "the default applies: {n}");
    let (a, _, n) = statuses(&app, &comment, &chosen).await;
    assert!(sent_or_pending(&a), "the user's own setting wins: {n}");

    // explain says where each value comes from
    let p = app
        .admin(GET, &prefs_path(&quiet))
        .query(&[("explain", "true")])
        .go()
        .await
        .ok(200);
    assert_eq!(p["categories"]["comments"]["enabled"], json!(false), "{p}");
    assert_eq!(
        p["explain"]["categories"]["comments"]["enabled"],
        json!("default"),
        "{p}"
    );
    assert_eq!(
        p["explain"]["channel_types"]["email"],
        json!("default"),
        "{p}"
    );
    let p = app
        .user(GET, &format!("{U}/preferences"), &chosen)
        .query(&[("explain", "true")])
        .go()
        .await
        .ok(200);
    assert_eq!(p["categories"]["comments"]["enabled"], json!(true), "{p}");
    assert_eq!(
        p["explain"]["categories"]["comments"]["enabled"],
        json!("user"),
        "{p}"
    );
    assert_eq!(
        p["explain"]["flows"][&ch]["enabled"],
        json!("default"),
        "{p}"
    );

    // a later default change reaches whoever did not set that value
    put_defaults(
        &app,
        json!({"categories": {"comments": {"enabled": true}},
        "channel_types": {"chat": false}}),
    )
    .await;
    let (a, c, n) = statuses(&app, &comment, &quiet).await;
    assert!(sent_or_pending(&a), "{n}");
    assert_eq!(c, "skipped", "the new default reaches them: {n}");
    // and someone who set chat on keeps it
    put_prefs(&app, &chosen, json!({"channel_types": {"chat": true}})).await;
    let (_, c, n) = statuses(&app, &comment, &chosen).await;
    assert!(sent_or_pending(&c), "{n}");
    let p = app
        .admin(GET, &prefs_path(&chosen))
        .query(&[("explain", "true")])
        .go()
        .await
        .ok(200);
    assert_eq!(p["explain"]["channel_types"]["chat"], json!("user"), "{p}");
    assert_eq!(p["channel_types"]["chat"], json!(true), "{p}");
    let p = app.admin(GET, &prefs_path(&quiet)).go().await.ok(200);
    assert_eq!(p["channel_types"]["chat"], json!(false), "{p}");

    // bad input to either, and a bad explain
    let r = app
        .admin(PUT, DEFAULTS)
        .json(&json!({"categories": {"nope": {"enabled": false}, "comments": {"enabled": "no"}}}))
        .go()
        .await;
    assert_field(&r, "categories.nope", "inclusion");
    assert_field(&r, "categories.comments.enabled", "format");
    let r = app
        .user(PUT, &format!("{U}/preferences"), &chosen)
        .json(&json!({"categories": []}))
        .go()
        .await;
    assert_field(&r, "categories", "format");
    let r = app
        .admin(GET, DEFAULTS)
        .query(&[("explain", "yes")])
        .go()
        .await;
    let d = assert_error(&r, 400, "bad_request");
    assert_eq!(d["param"], json!("explain"), "{r}");
}

#[tokio::test]
async fn a_critical_flow_reaches_a_user_who_turned_everything_off() {
    let Setup {
        app,
        comment,
        _hook,
        ..
    } = setup().await;
    let ch = s(&comment["handle"]);
    put_defaults(
        &app,
        json!({"categories": {"comments": {"enabled": false}}}),
    )
    .await;
    let (u, _) = app.create_user("off", json!({})).await;
    put_prefs(
        &app,
        &u,
        json!({"channel_types": {"in_app": false, "chat": false},
        "categories": {"comments": {"enabled": false}, "billing": {"enabled": false}},
        "flows": {&ch: {"enabled": false}}}),
    )
    .await;
    let (a, c, _) = statuses(&app, &comment, &u).await;
    assert_eq!((a.as_str(), c.as_str()), ("skipped", "skipped"));
    app.admin(PUT, &format!("{A}/flows/{}", s(&comment["id"])))
        .json(&json!({"critical": true}))
        .go()
        .await
        .ok(200);
    let (a, c, n) = statuses(&app, &comment, &u).await;
    assert!(sent_or_pending(&a) && sent_or_pending(&c), "{n}");
    let p = app
        .admin(GET, &prefs_path(&u))
        .query(&[("explain", "true")])
        .go()
        .await
        .ok(200);
    assert_eq!(p["flows"][&ch]["critical"], json!(true), "{p}");
    assert_eq!(
        p["explain"]["flows"][&ch]["enabled"],
        json!("critical"),
        "{p}"
    );
    // the defaults cannot turn it off either
    let r = app
        .admin(PUT, DEFAULTS)
        .json(&json!({"flows": {&ch: {"enabled": false}}}))
        .go()
        .await;
    assert_field(&r, &format!("flows.{ch}.enabled"), "exclusion");
}

#[tokio::test]
async fn the_feed_filters_by_category_and_archive_all_takes_the_filter() {
    let Setup {
        app,
        comment,
        invoice,
        _hook,
    } = setup().await;
    let (u, _) = app.create_user("tabs", json!({})).await;
    statuses(&app, &comment, &u).await;
    statuses(&app, &invoice, &u).await;
    wait_feed(&app, &u, 2).await;
    let feed = |q: Vec<(&'static str, String)>| {
        let app = &app;
        let u = u.clone();
        async move {
            let r = app.user(GET, &format!("{U}/feed"), &u).query(&q).go().await;
            let page = r.ok(200);
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| s(&e["flow_id"]))
                .collect::<Vec<_>>()
        }
    };
    let (cid, iid) = (s(&comment["id"]), s(&invoice["id"]));
    assert_eq!(
        feed(vec![("category", "comments".into())]).await,
        vec![cid.clone()]
    );
    assert_eq!(
        feed(vec![("category", "billing".into())]).await,
        vec![iid.clone()]
    );
    assert!(feed(vec![("category", "nope".into())]).await.is_empty());
    let both = vec![
        ("category", "billing".to_string()),
        ("flow", s(&comment["handle"])),
    ];
    assert!(feed(both).await.is_empty(), "a flow outside the category");
    let r = app
        .user(POST, &format!("{U}/feed/archive_all"), &u)
        .query(&[("category", "billing")])
        .go()
        .await;
    assert_eq!(r.ok(200)["updated"], json!(1), "{r}");
    assert_eq!(
        feed(vec![]).await,
        vec![cid],
        "only the billing entry was archived"
    );
    assert_eq!(feed(vec![("status", "archived".into())]).await, vec![iid]);
}

/// The counts of `meta.by_category` as (category, unread, unseen), sorted.
fn tabs(meta: &Value) -> Vec<(String, u64, u64)> {
    let by = meta["by_category"]
        .as_object()
        .unwrap_or_else(|| panic!("meta.by_category must be an object: {meta}"));
    by.iter()
        .map(|(k, v)| {
            let n = |f: &str| v[f].as_u64().unwrap_or_else(|| panic!("{f}: {meta}"));
            (k.clone(), n("unread_count"), n("unseen_count"))
        })
        .collect()
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next text frame of `ws` within 5 s, as JSON.
async fn next_frame(ws: &mut Socket) -> Value {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => return serde_json::from_str(t.as_str()).unwrap(),
            Ok(Some(Ok(_))) => continue,
            other => panic!("expected a frame within 5 s: {other:?}"),
        }
    }
}

/// Reads frames until a `feed.counts` frame shows `want` (the frames
/// between are the entries' events).
async fn counts_frame(ws: &mut Socket, want: &[(String, u64, u64)]) -> Value {
    let mut seen = vec![];
    for _ in 0..50 {
        let f = next_frame(ws).await;
        if f["type"] == json!("feed.counts") {
            assert!(f["seq"].is_u64(), "{f}");
            if tabs(&f["meta"]) == want {
                return f;
            }
        }
        seen.push(f);
    }
    panic!("no feed.counts frame showed {want:?}: {seen:?}");
}

#[tokio::test]
async fn the_feed_counts_unread_and_unseen_per_category_live_and_in_pages() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let Setup {
        app,
        comment,
        invoice,
        _hook,
    } = setup().await;
    let (u, _) = app.create_user("badges", json!({})).await;
    let t = |c: &str, unread, unseen| (c.to_string(), unread, unseen);

    let mut req = format!("{}{U}/feed/live", app.next_ws_base())
        .into_client_request()
        .unwrap();
    let h = req.headers_mut();
    h.insert("x-service-api-key", app.public_key.parse().unwrap());
    h.insert("x-service-user-id", u.parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let hello = next_frame(&mut ws).await;
    assert_eq!(hello["type"], json!("hello"), "{hello}");
    assert_eq!(
        tabs(&hello["meta"]),
        vec![t("billing", 0, 0), t("comments", 0, 0)],
        "every declared category, at zero: {hello}"
    );

    // two comments and an invoice reach the feed: the counts follow live
    statuses(&app, &comment, &u).await;
    statuses(&app, &comment, &u).await;
    statuses(&app, &invoice, &u).await;
    let want = vec![t("billing", 1, 1), t("comments", 2, 2)];
    let f = counts_frame(&mut ws, &want).await;
    assert_eq!(f["meta"]["unread_count"], json!(3), "{f}");

    // the first page shows them too, filtered or not; a later page does not
    let page = wait_feed(&app, &u, 3).await;
    assert_eq!(tabs(&page["meta"]), want, "{page}");
    let r = app
        .user(GET, &format!("{U}/feed"), &u)
        .query(&[("category", "billing")])
        .go()
        .await;
    let billing = r.ok(200);
    assert_eq!(tabs(&billing["meta"]), want, "{billing}");
    let r = app
        .user(GET, &format!("{U}/feed"), &u)
        .query(&[("limit", "1")])
        .go()
        .await;
    let first = r.ok(200);
    let cursor = s(&first["page"]["after"]);
    let r = app
        .user(GET, &format!("{U}/feed"), &u)
        .query(&[("limit", "1"), ("after", cursor.as_str())])
        .go()
        .await;
    let second = r.ok(200);
    assert!(second["meta"].get("by_category").is_none(), "{second}");

    // reading the invoice empties the billing tab; seen_all the rest's unseen
    let entry = billing["items"][0]["id"].clone();
    let r = app
        .user(POST, &format!("{U}/feed/{}/read", s(&entry)), &u)
        .go()
        .await;
    r.ok(200);
    counts_frame(&mut ws, &[t("billing", 0, 0), t("comments", 2, 2)]).await;
    let r = app.user(POST, &format!("{U}/feed/seen_all"), &u).go().await;
    let done = r.ok(200);
    assert_eq!(
        tabs(&done["meta"]),
        vec![t("billing", 0, 0), t("comments", 2, 0)],
        "{done}"
    );
    counts_frame(&mut ws, &[t("billing", 0, 0), t("comments", 2, 0)]).await;

    // moving a flow to another category moves its entries' counts
    let r = app
        .admin(PUT, &format!("{A}/flows/{}", s(&comment["id"])))
        .json(&json!({"categories": ["billing"]}))
        .go()
        .await;
    r.ok(200);
    let page = wait_feed(&app, &u, 3).await;
    assert_eq!(
        tabs(&page["meta"]),
        vec![t("billing", 2, 0), t("comments", 0, 0)],
        "{page}"
    );
}

#[tokio::test]
async fn a_project_without_categories_shows_no_counts_per_category() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = create_flow(
        &app,
        &handle("plain"),
        json!([channel_step(&inapp, None, "Hi")]),
    )
    .await;
    activate(&app, &s(&flow["id"])).await;
    let (u, _) = app.create_user("plain", json!({})).await;
    run_one(&app, &s(&flow["id"]), json!({"recipients": [u.clone()]})).await;
    let page = wait_feed(&app, &u, 1).await;
    assert!(page["meta"].get("by_category").is_none(), "{page}");
}
