//! docs/API.md §11 (the User API and the feed): the in-app feed of sent
//! in_app deliveries, its status filters and meta counts, PATCH and the
//! shortcuts with their state machine (unseen → seen → read), archive,
//! seen_all / read_all, isolation between users and the admin view.

use std::time::Duration;

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

struct Setup {
    app: TestApp,
    ext: String,
    other: String,
    actor: Value,
    flow_id: String,
    /// The user's entries, newest first (data.i = 3, 2, 1, 0).
    entries: Vec<Value>,
    other_entry: Value,
}

/// A server with a user holding four feed entries and another user with one.
async fn setup() -> Setup {
    let app = TestApp::spawn_with(&["--user-rate", "10000"], &[]);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "feed",
        json!([channel_step(
            &inapp,
            Some("S{{ data.i }}"),
            "B{{ data.i }} for {{ recipient.external_id }}"
        )]),
    )
    .await;
    let flow_id = s(&flow["id"]);
    let (actor_ext, actor) = app.create_user("actor", json!({"first_name": "Act"})).await;
    let (ext, _) = app.create_user("reader", json!({})).await;
    let (other, _) = app.create_user("other", json!({})).await;
    for i in 0..4 {
        run_flow(
            &app,
            &flow_id,
            json!({"recipients": [{"external_id": ext}], "actor": actor_ext, "data": {"i": i}}),
        )
        .await;
        // distinct creation instants keep the order unambiguous
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    run_flow(
        &app,
        &flow_id,
        json!({"recipients": [{"external_id": other}], "data": {"i": 9}}),
    )
    .await;
    let feed = wait_feed(&app, &ext, 4).await;
    let entries = feed["items"].as_array().unwrap().clone();
    assert_eq!(entries.len(), 4, "{feed}");
    let of = wait_feed(&app, &other, 1).await;
    let other_entry = of["items"][0].clone();
    Setup {
        app,
        ext,
        other,
        actor,
        flow_id,
        entries,
        other_entry,
    }
}

fn entry_path(id: &Value) -> String {
    format!("{U}/feed/{}", s(id))
}

async fn feed(app: &TestApp, ext: &str, status: Option<&str>) -> Value {
    let mut rb = app.user(GET, &format!("{U}/feed"), ext);
    if let Some(st) = status {
        rb = rb.query(&[("status", st)]);
    }
    let r = rb.go().await;
    let body = r.page();
    assert!(body["meta"].is_object(), "feed meta: {r}");
    body
}

fn item_ids(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| s(&e["id"]))
        .collect()
}

#[tokio::test]
async fn feed_entries_and_their_state_machine() {
    let Setup {
        app,
        ext,
        other,
        actor,
        flow_id,
        entries,
        other_entry,
    } = setup().await;

    // shape and content, newest first
    for (k, e) in entries.iter().enumerate() {
        let i = 3 - k;
        let mut keys: Vec<&str> = e.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        keys.sort();
        let mut want = vec![
            "id",
            "notification_id",
            "flow_id",
            "topic",
            "data",
            "actor",
            "read",
            "seen",
            "archived",
            "clicked",
            "seen_at",
            "read_at",
            "clicked_at",
            "archived_at",
            "interacted_at",
            "interacted_action",
            "created_at",
        ];
        want.sort();
        assert_eq!(keys, want, "feed entry fields: {e}");
        assert_eq!(e["data"]["subject"], json!(format!("S{i}")), "{e}");
        assert_eq!(e["data"]["body"], json!(format!("B{i} for {ext}")), "{e}");
        assert_eq!(e["flow_id"], json!(flow_id), "{e}");
        assert_eq!(e["topic"], Value::Null, "{e}");
        assert_eq!(e["actor"]["external_id"], actor["external_id"], "{e}");
        assert_eq!(e["actor"]["id"], actor["id"], "{e}");
        for f in ["read", "seen", "archived", "clicked"] {
            assert_eq!(e[f], json!(false), "{f}: {e}");
            assert_eq!(e[format!("{f}_at")], Value::Null, "{f}_at: {e}");
        }
        assert!(is_timestamp(&e["created_at"]), "{e}");
        // id = the in_app delivery's id
        let r = app
            .admin(GET, &format!("{A}/deliveries/{}", s(&e["id"])))
            .go()
            .await;
        let d = r.ok(200);
        assert_eq!(d["channel_type"], json!("in_app"), "{r}");
        assert_eq!(d["status"], json!("sent"), "{r}");
        assert_eq!(d["notification_id"], e["notification_id"], "{r}");
        assert_eq!(d["data"], e["data"], "{r}");
    }
    let body = feed(&app, &ext, None).await;
    assert_eq!(
        body["meta"],
        json!({"unread_count": 4, "unseen_count": 4}),
        "{body}"
    );

    // GET one; PATCH {} changes nothing
    let e = &entries[0];
    let r = app.user(GET, &entry_path(&e["id"]), &ext).go().await;
    assert_eq!(&r.ok(200), e, "{r}");
    let r = app
        .user(PATCH, &entry_path(&e["id"]), &ext)
        .json(&json!({}))
        .go()
        .await;
    assert_eq!(&r.ok(200), e, "PATCH {{}} is a no-op: {r}");

    // unseen -> seen; repeating keeps the first timestamp
    let r = app
        .user(PATCH, &entry_path(&e["id"]), &ext)
        .json(&json!({"seen": true}))
        .go()
        .await;
    let seen = r.ok(200);
    assert_eq!(seen["seen"], json!(true), "{r}");
    assert!(is_timestamp(&seen["seen_at"]), "{r}");
    assert_eq!(seen["read"], json!(false), "{r}");
    assert_eq!(seen["read_at"], Value::Null, "{r}");
    let body = feed(&app, &ext, None).await;
    assert_eq!(
        body["meta"],
        json!({"unread_count": 4, "unseen_count": 3}),
        "{body}"
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    let r = app
        .user(PATCH, &entry_path(&e["id"]), &ext)
        .json(&json!({"seen": true}))
        .go()
        .await;
    assert_eq!(r.ok(200)["seen_at"], seen["seen_at"], "{r}");
    let r = app
        .user(POST, &format!("{}/seen", entry_path(&e["id"])), &ext)
        .go()
        .await;
    assert_eq!(r.ok(200)["seen_at"], seen["seen_at"], "{r}");

    // seen -> back: 409 with the allowed transitions
    let r = app
        .user(PATCH, &entry_path(&e["id"]), &ext)
        .json(&json!({"seen": false}))
        .go()
        .await;
    let d = assert_conflict(&r, "invalid_transition");
    assert_eq!(d["resource"], json!("feed_entry"), "{r}");
    assert_eq!(d["id"], e["id"], "{r}");
    assert_eq!(d["current_status"], json!("seen"), "{r}");
    assert_eq!(d["allowed_transitions"], json!(["read"]), "{r}");

    // seen -> read
    tokio::time::sleep(Duration::from_millis(20)).await;
    let r = app
        .user(PATCH, &entry_path(&e["id"]), &ext)
        .json(&json!({"read": true}))
        .go()
        .await;
    let read = r.ok(200);
    assert_eq!(read["read"], json!(true), "{r}");
    assert_eq!(read["seen"], json!(true), "{r}");
    assert_eq!(read["seen_at"], seen["seen_at"], "seen_at is kept: {r}");
    assert!(
        parse_ts(&read["read_at"]) >= parse_ts(&seen["seen_at"]),
        "{r}"
    );
    for body in [json!({"read": false}), json!({"seen": false})] {
        let r = app
            .user(PATCH, &entry_path(&e["id"]), &ext)
            .json(&body)
            .go()
            .await;
        let d = assert_conflict(&r, "invalid_transition");
        assert_eq!(d["resource"], json!("feed_entry"), "{r}");
        assert_eq!(d["current_status"], json!("read"), "{r}");
        assert_eq!(d["allowed_transitions"], json!([]), "{r}");
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let r = app
        .user(POST, &format!("{}/read", entry_path(&e["id"])), &ext)
        .go()
        .await;
    let again = r.ok(200);
    assert_eq!(
        again["read_at"], read["read_at"],
        "repeating keeps read_at: {r}"
    );
    let r = app.user(GET, &entry_path(&e["id"]), &ext).go().await;
    assert_eq!(r.ok(200), read, "{r}");

    // unseen -> read directly: read implies seen
    let e1 = &entries[1];
    let r = app
        .user(POST, &format!("{}/read", entry_path(&e1["id"])), &ext)
        .go()
        .await;
    let v = r.ok(200);
    assert_eq!(v["read"], json!(true), "{r}");
    assert_eq!(v["seen"], json!(true), "read implies seen: {r}");
    assert!(is_timestamp(&v["seen_at"]), "{r}");
    assert!(is_timestamp(&v["read_at"]), "{r}");
    let body = feed(&app, &ext, None).await;
    assert_eq!(
        body["meta"],
        json!({"unread_count": 2, "unseen_count": 2}),
        "{body}"
    );

    // clicked
    let e2 = &entries[2];
    let r = app
        .user(PATCH, &entry_path(&e2["id"]), &ext)
        .json(&json!({"clicked": true}))
        .go()
        .await;
    let c = r.ok(200);
    assert_eq!(c["clicked"], json!(true), "{r}");
    assert!(is_timestamp(&c["clicked_at"]), "{r}");
    tokio::time::sleep(Duration::from_millis(20)).await;
    let r = app
        .user(POST, &format!("{}/clicked", entry_path(&e2["id"])), &ext)
        .go()
        .await;
    assert_eq!(r.ok(200)["clicked_at"], c["clicked_at"], "{r}");

    // archive / unarchive, by PATCH and by shortcut
    let r = app
        .user(PATCH, &entry_path(&e2["id"]), &ext)
        .json(&json!({"archived": true}))
        .go()
        .await;
    let a = r.ok(200);
    assert_eq!(a["archived"], json!(true), "{r}");
    assert!(is_timestamp(&a["archived_at"]), "{r}");
    let body = feed(&app, &ext, None).await;
    assert!(
        !item_ids(&body).contains(&s(&e2["id"])),
        "archived entries leave `all`: {body}"
    );
    assert_eq!(
        body["meta"],
        json!({"unread_count": 1, "unseen_count": 1}),
        "{body}"
    );
    let body = feed(&app, &ext, Some("archived")).await;
    assert_eq!(item_ids(&body), vec![s(&e2["id"])], "{body}");
    let r = app
        .user(PATCH, &entry_path(&e2["id"]), &ext)
        .json(&json!({"archived": false}))
        .go()
        .await;
    let u = r.ok(200);
    assert_eq!(u["archived"], json!(false), "{r}");
    assert_eq!(u["archived_at"], Value::Null, "{r}");
    let r = app
        .user(POST, &format!("{}/archive", entry_path(&e2["id"])), &ext)
        .go()
        .await;
    assert_eq!(r.ok(200)["archived"], json!(true), "{r}");
    let r = app
        .user(POST, &format!("{}/unarchive", entry_path(&e2["id"])), &ext)
        .go()
        .await;
    assert_eq!(r.ok(200)["archived"], json!(false), "{r}");
    let body = feed(&app, &ext, None).await;
    assert_eq!(
        body["meta"],
        json!({"unread_count": 2, "unseen_count": 2}),
        "{body}"
    );
    assert_eq!(item_ids(&body).len(), 4, "{body}");

    // the admin delivery shows the same state
    let r = app
        .admin(GET, &format!("{A}/deliveries/{}", s(&e["id"])))
        .go()
        .await;
    let d = r.ok(200);
    assert_eq!(d["read_at"], read["read_at"], "{r}");
    assert_eq!(d["seen_at"], read["seen_at"], "{r}");

    // bad bodies
    let r = app
        .user(PATCH, &entry_path(&e2["id"]), &ext)
        .json(&json!({"read": "yes"}))
        .go()
        .await;
    assert_validation(&r, &[("read", "format")]);

    // another user's entry, unknown and malformed ids
    let oid = s(&other_entry["id"]);
    let r = app
        .user(GET, &entry_path(&other_entry["id"]), &ext)
        .go()
        .await;
    assert_not_found(&r, "feed_entry", &oid);
    let r = app
        .user(PATCH, &entry_path(&other_entry["id"]), &ext)
        .json(&json!({"read": true}))
        .go()
        .await;
    assert_not_found(&r, "feed_entry", &oid);
    for action in ["seen", "read", "clicked", "archive", "unarchive"] {
        let r = app
            .user(
                POST,
                &format!("{}/{action}", entry_path(&other_entry["id"])),
                &ext,
            )
            .go()
            .await;
        assert_not_found(&r, "feed_entry", &oid);
    }
    let body = feed(&app, &other, None).await;
    assert_eq!(
        body["meta"],
        json!({"unread_count": 1, "unseen_count": 1}),
        "untouched: {body}"
    );
    assert_eq!(body["items"][0], other_entry, "{body}");
    assert_eq!(
        other_entry["actor"],
        Value::Null,
        "a run without actor: {other_entry}"
    );
    let unknown = new_uuid();
    let r = app
        .user(GET, &format!("{U}/feed/{unknown}"), &ext)
        .go()
        .await;
    assert_not_found(&r, "feed_entry", &unknown);
    let r = app
        .user(POST, &format!("{U}/feed/{unknown}/read"), &ext)
        .go()
        .await;
    assert_not_found(&r, "feed_entry", &unknown);
    let r = app
        .user(GET, &format!("{U}/feed/not-a-uuid"), &ext)
        .go()
        .await;
    assert_invalid_uuid(&r, "id");
    let r = app
        .user(PATCH, &format!("{U}/feed/not-a-uuid"), &ext)
        .json(&json!({"read": true}))
        .go()
        .await;
    assert_invalid_uuid(&r, "id");
    // an unknown action is an unknown route
    let r = app
        .user(POST, &format!("{}/unread", entry_path(&e["id"])), &ext)
        .go()
        .await;
    let d = assert_error(&r, 404, "not_found");
    assert!(
        d.get("resource").is_none(),
        "an unknown route names no resource: {r}"
    );
}

#[tokio::test]
async fn feed_filters_bulk_actions_and_admin_view() {
    let Setup {
        app,
        ext,
        other,
        flow_id,
        entries,
        ..
    } = setup().await;
    let id = |k: usize| s(&entries[k]["id"]);
    // entry 0 read, 1 seen, 2 archived, 3 untouched
    for (k, body) in [
        (0, json!({"read": true})),
        (1, json!({"seen": true})),
        (2, json!({"archived": true})),
    ] {
        let r = app
            .user(PATCH, &entry_path(&entries[k]["id"]), &ext)
            .json(&body)
            .go()
            .await;
        r.ok(200);
    }
    let meta = json!({"unread_count": 2, "unseen_count": 1});
    for (status, want) in [
        (None, vec![id(0), id(1), id(3)]),
        (Some("all"), vec![id(0), id(1), id(3)]),
        (Some("unread"), vec![id(1), id(3)]),
        (Some("unseen"), vec![id(3)]),
        (Some("read"), vec![id(0)]),
        (Some("archived"), vec![id(2)]),
    ] {
        let body = feed(&app, &ext, status).await;
        assert_eq!(item_ids(&body), want, "status={status:?}: {body}");
        assert_eq!(body["meta"], meta, "status={status:?}: {body}");
        // the admin view is the same
        let mut rb = app.admin(GET, &format!("{A}/users/{}/feed", enc(&ext)));
        if let Some(st) = status {
            rb = rb.query(&[("status", st)]);
        }
        let r = rb.go().await;
        let admin = r.page();
        assert_eq!(
            admin["items"], body["items"],
            "admin feed status={status:?}: {r}"
        );
        assert_eq!(admin["meta"], body["meta"], "{r}");
    }
    let r = app
        .user(GET, &format!("{U}/feed"), &ext)
        .query(&[("status", "bogus")])
        .go()
        .await;
    assert_invalid_param(&r, "status");
    let r = app
        .user(GET, &format!("{U}/feed"), &ext)
        .query(&[("limit", "1")])
        .go()
        .await;
    let p = r.page();
    assert_eq!(item_ids(&p), vec![id(0)], "{r}");
    assert_eq!(p["page"]["has_more_after"], json!(true), "{r}");
    // a feed cursor binds to its user and its filter
    let cursor = s(&p["page"]["after"]);
    let r = app
        .user(GET, &format!("{U}/feed"), &ext)
        .query(&[("limit", "1"), ("after", cursor.as_str())])
        .go()
        .await;
    assert_eq!(item_ids(&r.page()), vec![id(1)], "{r}");
    let r = app
        .user(GET, &format!("{U}/feed"), &ext)
        .query(&[
            ("limit", "1"),
            ("after", cursor.as_str()),
            ("status", "unread"),
        ])
        .go()
        .await;
    assert_invalid_param(&r, "after");
    let r = app
        .user(GET, &format!("{U}/feed"), &other)
        .query(&[("limit", "1"), ("after", cursor.as_str())])
        .go()
        .await;
    assert_invalid_param(&r, "after");
    let ghost = new_ext("ghost");
    let r = app
        .admin(GET, &format!("{A}/users/{}/feed", enc(&ghost)))
        .go()
        .await;
    assert_not_found(&r, "user", &ghost);

    // seen_all: only the non-archived unseen entry
    let r = app
        .user(POST, &format!("{U}/feed/seen_all"), &ext)
        .go()
        .await;
    let v = r.ok(200);
    assert_eq!(
        v,
        json!({"updated": 1, "meta": {"unread_count": 2, "unseen_count": 0}}),
        "{r}"
    );
    let r = app
        .user(GET, &entry_path(&entries[3]["id"]), &ext)
        .go()
        .await;
    let e3 = r.ok(200);
    assert_eq!(e3["seen"], json!(true), "{r}");
    assert_eq!(e3["read"], json!(false), "{r}");
    let r = app
        .user(GET, &entry_path(&entries[2]["id"]), &ext)
        .go()
        .await;
    let e2 = r.ok(200);
    assert_eq!(
        e2["seen"],
        json!(false),
        "archived entries are left alone: {r}"
    );
    let r = app
        .user(GET, &entry_path(&entries[1]["id"]), &ext)
        .go()
        .await;
    let e1_before = r.ok(200);

    // read_all: the two unread non-archived entries
    let r = app
        .user(POST, &format!("{U}/feed/read_all"), &ext)
        .go()
        .await;
    assert_eq!(
        r.ok(200),
        json!({"updated": 2, "meta": {"unread_count": 0, "unseen_count": 0}}),
        "{r}"
    );
    let r = app
        .user(GET, &entry_path(&entries[1]["id"]), &ext)
        .go()
        .await;
    let e1 = r.ok(200);
    assert_eq!(e1["read"], json!(true), "{r}");
    assert_eq!(
        e1["seen_at"], e1_before["seen_at"],
        "the first seen_at is kept: {r}"
    );
    let r = app
        .user(POST, &format!("{U}/feed/seen_all"), &ext)
        .go()
        .await;
    assert_eq!(r.ok(200)["updated"], json!(0), "{r}");
    let r = app
        .user(POST, &format!("{U}/feed/read_all"), &ext)
        .go()
        .await;
    assert_eq!(r.ok(200)["updated"], json!(0), "{r}");
    let body = feed(&app, &ext, Some("unread")).await;
    assert_eq!(item_ids(&body), Vec::<String>::new(), "{body}");
    let body = feed(&app, &ext, Some("read")).await;
    assert_eq!(item_ids(&body), vec![id(0), id(1), id(3)], "{body}");

    // unarchiving brings the unread entry back into the counts
    let r = app
        .user(
            POST,
            &format!("{}/unarchive", entry_path(&entries[2]["id"])),
            &ext,
        )
        .go()
        .await;
    r.ok(200);
    let body = feed(&app, &ext, None).await;
    assert_eq!(
        body["meta"],
        json!({"unread_count": 1, "unseen_count": 1}),
        "{body}"
    );

    // the other user was not touched by any of it
    let body = feed(&app, &other, None).await;
    assert_eq!(
        body["meta"],
        json!({"unread_count": 1, "unseen_count": 1}),
        "{body}"
    );

    // a new delivery lands unread and unseen on top
    run_flow(
        &app,
        &flow_id,
        json!({"recipients": [{"external_id": ext}], "data": {"i": 7}}),
    )
    .await;
    let body = wait_feed(&app, &ext, 5).await;
    assert_eq!(body["items"][0]["data"]["subject"], json!("S7"), "{body}");
    assert_eq!(
        body["meta"],
        json!({"unread_count": 2, "unseen_count": 2}),
        "{body}"
    );
}

/// The plain first page of a feed is served from a cache: every kind of change
/// must show on the very next read, through every writer of the feed.
#[tokio::test]
async fn the_first_page_shows_every_change_on_the_next_read() {
    let st = setup().await;
    let app = &st.app;
    let first = |ext: &str| {
        let ext = ext.to_string();
        async move { feed(app, &ext, None).await }
    };
    let b = first(&st.ext).await;
    assert_eq!(b["items"].as_array().unwrap().len(), 4, "{b}");
    assert_eq!(b["meta"]["unread_count"], json!(4), "{b}");
    // the same page twice (the second from the cache) is the same
    assert_eq!(first(&st.ext).await, b);

    // a PATCH through the user's actor
    let id = &st.entries[0]["id"];
    app.user(PATCH, &entry_path(id), &st.ext)
        .json(&json!({"read": true}))
        .go()
        .await
        .ok(200);
    let b = first(&st.ext).await;
    assert_eq!(b["items"][0]["read"], json!(true), "{b}");
    assert_eq!(b["meta"]["unread_count"], json!(3), "{b}");

    // read_all
    app.user(POST, &format!("{U}/feed/read_all"), &st.ext)
        .go()
        .await
        .ok(200);
    let b = first(&st.ext).await;
    assert_eq!(b["meta"]["unread_count"], json!(0), "{b}");

    // the actor shown on the entries changes its name
    let actor_ext = s(&st.actor["external_id"]);
    app.admin(PUT, &format!("{A}/users/{actor_ext}"))
        .json(&json!({"first_name": "Renamed"}))
        .go()
        .await
        .ok(200);
    let b = first(&st.ext).await;
    assert_eq!(
        b["items"][0]["actor"]["first_name"],
        json!("Renamed"),
        "{b}"
    );

    // a new entry settled with its run
    run_flow(
        app,
        &st.flow_id,
        json!({"recipients": [{"external_id": st.ext}], "data": {"i": 5}}),
    )
    .await;
    let b = first(&st.ext).await;
    assert_eq!(b["items"].as_array().unwrap().len(), 5, "{b}");
    assert_eq!(b["items"][0]["data"]["subject"], json!("S5"), "{b}");
    assert_eq!(b["meta"]["unread_count"], json!(1), "{b}");

    // a new entry settled later by the in-app delivery actor (after a delay)
    let inapp = in_app_channel(app).await;
    let later = active_flow(
        app,
        "feed-later",
        json!([delay_step(1), channel_step(&inapp, Some("late"), "late")]),
    )
    .await;
    run_flow(
        app,
        &s(&later["id"]),
        json!({"recipients": [{"external_id": st.ext}]}),
    )
    .await;
    let b = first(&st.ext).await;
    assert_eq!(b["items"].as_array().unwrap().len(), 5, "not yet: {b}");
    let b = wait_feed(app, &st.ext, 6).await;
    assert_eq!(b["items"][0]["data"]["subject"], json!("late"), "{b}");
    let b = first(&st.ext).await;
    assert_eq!(b["meta"]["unread_count"], json!(2), "{b}");

    // through a topic run's expansion
    let topic = handle("feedcache");
    app.admin(PUT, &format!("{A}/topics/{topic}"))
        .json(&json!({"name": "T"}))
        .go()
        .await
        .ok(201);
    app.admin(POST, &format!("{A}/topics/{topic}/subscriptions"))
        .json(&json!({"external_id": st.other}))
        .go()
        .await
        .ok(201);
    let before = first(&st.other).await;
    assert_eq!(before["items"].as_array().unwrap().len(), 1, "{before}");
    run_flow(app, &st.flow_id, json!({"topic": topic, "data": {"i": 7}})).await;
    let b = wait_feed(app, &st.other, 2).await;
    assert_eq!(b["items"][0]["data"]["subject"], json!("S7"), "{b}");

    // deletion: the deleted user's feed is gone with it
    app.admin(DELETE, &format!("{A}/users/{}", st.other))
        .go()
        .await
        .ok(204);
    let r = app.user(GET, &format!("{U}/feed"), &st.other).go().await;
    assert_eq!(r.status, 401, "{r}");
}
