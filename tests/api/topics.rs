//! docs/API.md §10 (topics) and §11 (User API topic subscriptions): topic CRUD, subscriptions through both APIs, maintained
//! subscriber counts, and topic runs (fan-out, dedup with explicit recipients,
//! only users subscribed when the run was accepted).

use std::collections::HashSet;

use futures_util::stream::{self, StreamExt};
use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

fn topic_path(key: &str) -> String {
    format!("{A}/topics/{key}")
}

async fn put_topic(app: &TestApp, key: &str, body: Value, status: u16) -> Value {
    let r = app.admin(PUT, &topic_path(key)).json(&body).go().await;
    r.ok(status)
}

async fn count(app: &TestApp, key: &str) -> Value {
    let r = app.admin(GET, &topic_path(key)).go().await;
    r.ok(200)["subscribers_count"].clone()
}

async fn subscribe(app: &TestApp, key: &str, ext: &str) -> Value {
    let r = app
        .admin(POST, &format!("{}/subscriptions", topic_path(key)))
        .json(&json!({ "external_id": ext }))
        .go()
        .await;
    r.ok(201)
}

#[tokio::test]
async fn topic_crud_and_listing() {
    let app = TestApp::spawn();
    let (k1, k2, k3) = (handle("one"), handle("two"), handle("three"));
    let t1 = put_topic(
        &app,
        &k1,
        json!({"name": "One", "description": "first"}),
        201,
    )
    .await;
    for k in [
        "key",
        "name",
        "description",
        "subscribers_count",
        "created_at",
        "updated_at",
    ] {
        assert!(t1.get(k).is_some(), "topic lacks {k}: {t1}");
    }
    assert_eq!(t1["key"], json!(k1));
    assert_eq!(t1["name"], json!("One"));
    assert_eq!(t1["description"], json!("first"));
    assert_eq!(t1["subscribers_count"], json!(0));
    assert!(
        is_timestamp(&t1["created_at"]) && is_timestamp(&t1["updated_at"]),
        "{t1}"
    );
    let r = app.admin(GET, &topic_path(&k1)).go().await;
    assert_eq!(r.ok(200), t1, "{r}");

    put_topic(&app, &k2, json!({"name": "Two"}), 201).await;
    put_topic(&app, &k3, json!({"name": "Three"}), 201).await;
    // an update answers 200 and keeps the creation time
    let u = put_topic(&app, &k1, json!({"name": "Uno"}), 200).await;
    assert_eq!(u["name"], json!("Uno"), "{u}");
    assert_eq!(u["key"], json!(k1), "{u}");
    assert_eq!(u["created_at"], t1["created_at"], "{u}");
    assert!(
        parse_ts(&u["updated_at"]) >= parse_ts(&t1["updated_at"]),
        "{u}"
    );
    let r = app.admin(GET, &topic_path(&k1)).go().await;
    assert_eq!(r.ok(200)["name"], json!("Uno"), "{r}");

    // newest first by creation, whatever was updated since
    let r = app.admin(GET, &format!("{A}/topics")).go().await;
    let keys: Vec<String> = r.page()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| s(&t["key"]))
        .collect();
    assert_eq!(keys, vec![k3.clone(), k2.clone(), k1.clone()], "{r}");

    // delete, then gone
    let r = app.admin(DELETE, &topic_path(&k2)).go().await;
    assert_eq!(r.status, 204, "{r}");
    let r = app.admin(GET, &topic_path(&k2)).go().await;
    assert_not_found(&r, "topic", &k2);
    let r = app.admin(DELETE, &topic_path(&k2)).go().await;
    assert_not_found(&r, "topic", &k2);
    let r = app.admin(GET, &format!("{A}/topics")).go().await;
    let keys: Vec<String> = r.page()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| s(&t["key"]))
        .collect();
    assert_eq!(keys, vec![k3.clone(), k1.clone()], "{r}");
    let r = app.admin(GET, &topic_path("never-made")).go().await;
    assert_not_found(&r, "topic", "never-made");

    // re-creating a deleted key is a create again
    let again = put_topic(&app, &k2, json!({"name": "Two again"}), 201).await;
    assert_eq!(again["subscribers_count"], json!(0), "{again}");
}

#[tokio::test]
async fn subscriptions_through_both_apis() {
    let app = TestApp::spawn();
    let t = handle("news");
    let t2 = handle("sports");
    put_topic(&app, &t, json!({"name": "News"}), 201).await;
    put_topic(&app, &t2, json!({"name": "Sports"}), 201).await;
    let (a, _) = app.create_user("a", json!({})).await;
    let (b, _) = app.create_user("b", json!({})).await;
    let (c, _) = app.create_user("c", json!({})).await;
    let subs_path = format!("{}/subscriptions", topic_path(&t));

    // admin subscribe
    let sa = subscribe(&app, &t, &a).await;
    for k in ["id", "topic", "user_external_id", "created_at"] {
        assert!(sa.get(k).is_some(), "subscription lacks {k}: {sa}");
    }
    assert!(is_uuid_v7(&sa["id"]), "{sa}");
    assert_eq!(sa["topic"], json!(t), "{sa}");
    assert_eq!(sa["user_external_id"], json!(a), "{sa}");
    assert!(is_timestamp(&sa["created_at"]), "{sa}");
    assert_eq!(count(&app, &t).await, json!(1));
    let r = app
        .admin(POST, &subs_path)
        .json(&json!({"external_id": a}))
        .go()
        .await;
    assert_conflict(&r, "subscription_already_exists");
    assert_eq!(
        count(&app, &t).await,
        json!(1),
        "a refused duplicate counts nothing"
    );
    let r = app.admin(POST, &subs_path).json(&json!({})).go().await;
    assert_validation(&r, &[("external_id", "required")]);
    let r = app
        .admin(POST, &format!("{}/subscriptions", topic_path("no-topic")))
        .json(&json!({"external_id": a}))
        .go()
        .await;
    assert_not_found(&r, "topic", "no-topic");
    let r = app
        .admin(GET, &format!("{}/subscriptions", topic_path("no-topic")))
        .go()
        .await;
    assert_not_found(&r, "topic", "no-topic");

    // user API subscribe
    let ub = format!("{U}/topics/{t}/subscriptions");
    let r = app.user(POST, &ub, &b).go().await;
    let sb = r.ok(201);
    assert_eq!(sb["topic"], json!(t), "{r}");
    assert_eq!(sb["user_external_id"], json!(b), "{r}");
    let r = app.user(POST, &ub, &b).go().await;
    assert_conflict(&r, "subscription_already_exists");
    let r = app.user(POST, &ub, &a).go().await;
    assert_conflict(&r, "subscription_already_exists");
    assert_eq!(count(&app, &t).await, json!(2));
    let r = app
        .user(POST, &format!("{U}/topics/{t2}/subscriptions"), &a)
        .go()
        .await;
    r.ok(201);
    let r = app
        .user(POST, &format!("{U}/topics/no-topic/subscriptions"), &a)
        .go()
        .await;
    assert_not_found(&r, "topic", "no-topic");
    let r = app
        .user(DELETE, &format!("{U}/topics/no-topic/subscriptions"), &a)
        .go()
        .await;
    assert_not_found(&r, "topic", "no-topic");

    // lists: the topic's (admin), mine (user)
    let r = app.admin(GET, &subs_path).go().await;
    let items = r.page()["items"].as_array().unwrap().clone();
    assert_eq!(
        items
            .iter()
            .map(|x| s(&x["user_external_id"]))
            .collect::<Vec<_>>(),
        vec![b.clone(), a.clone()],
        "newest first: {r}"
    );
    assert_eq!(items[1], sa, "{r}");
    let r = app.user(GET, &format!("{U}/subscriptions"), &b).go().await;
    let mine = r.page()["items"].as_array().unwrap().clone();
    assert_eq!(mine, vec![sb.clone()], "{r}");
    let r = app.user(GET, &format!("{U}/subscriptions"), &a).go().await;
    let mine: HashSet<String> = r.page()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| s(&x["topic"]))
        .collect();
    assert_eq!(mine, HashSet::from([t.clone(), t2.clone()]), "{r}");
    let r = app.user(GET, &format!("{U}/subscriptions"), &c).go().await;
    assert_eq!(r.page()["items"], json!([]), "{r}");

    // user API unsubscribe
    let r = app.user(DELETE, &ub, &b).go().await;
    assert_eq!(r.status, 204, "{r}");
    let r = app.user(DELETE, &ub, &b).go().await;
    let d = assert_error(&r, 404, "not_found");
    assert_eq!(d["resource"], json!("subscription"), "{r}");
    assert_eq!(count(&app, &t).await, json!(1));
    let r = app.user(GET, &format!("{U}/subscriptions"), &b).go().await;
    assert_eq!(r.page()["items"], json!([]), "{r}");

    // admin unsubscribe
    let r = app
        .admin(DELETE, &format!("{subs_path}/{}", enc(&a)))
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    let r = app
        .admin(DELETE, &format!("{subs_path}/{}", enc(&a)))
        .go()
        .await;
    let d = assert_error(&r, 404, "not_found");
    assert_eq!(d["resource"], json!("subscription"), "{r}");
    let r = app
        .admin(
            DELETE,
            &format!("{}/subscriptions/{}", topic_path("no-topic"), enc(&a)),
        )
        .go()
        .await;
    assert_not_found(&r, "topic", "no-topic");
    assert_eq!(count(&app, &t).await, json!(0));
    let r = app.admin(GET, &subs_path).go().await;
    assert_eq!(r.page()["items"], json!([]), "{r}");

    // deleting a user removes its subscriptions and their counts
    subscribe(&app, &t, &c).await;
    subscribe(&app, &t2, &c).await;
    assert_eq!(count(&app, &t).await, json!(1));
    assert_eq!(count(&app, &t2).await, json!(2));
    let r = app
        .admin(DELETE, &format!("{A}/users/{}", enc(&c)))
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    assert_eq!(count(&app, &t).await, json!(0));
    assert_eq!(count(&app, &t2).await, json!(1));
    let r = app.admin(GET, &subs_path).go().await;
    assert_eq!(r.page()["items"], json!([]), "{r}");

    // deleting a topic removes it from its subscribers' lists
    let r = app.admin(DELETE, &topic_path(&t2)).go().await;
    assert_eq!(r.status, 204, "{r}");
    let r = app.user(GET, &format!("{U}/subscriptions"), &a).go().await;
    assert_eq!(r.page()["items"], json!([]), "{r}");
}

#[tokio::test]
async fn topic_runs_fan_out_dedup_and_freeze_the_audience() {
    let app = TestApp::spawn_with(&["--admin-rate", "100000"], &[]);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "fanout",
        json!([channel_step(&inapp, None, "to {{ recipient.external_id }}")]),
    )
    .await;
    let fid = s(&flow["id"]);

    // 5 subscribers; explicit recipients overlap with one of them
    let t = handle("small");
    put_topic(&app, &t, json!({"name": "Small"}), 201).await;
    let subs: Vec<String> = (0..5).map(|i| new_ext(&format!("sub{i}"))).collect();
    for e in &subs {
        app.create_user_as(e, json!({})).await;
        subscribe(&app, &t, e).await;
    }
    let extra = new_ext("extra");
    let run = run_flow(
        &app,
        &fid,
        json!({"topic": t, "recipients": [{"external_id": subs[0]}, {"external_id": extra}]}),
    )
    .await;
    assert_eq!(
        run["recipients_count"],
        json!(6),
        "distinct recipients: {run}"
    );
    let run_id = s(&run["id"]);
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(6), "{fr}");
    assert_eq!(fr["recipients_count"], json!(6), "{fr}");
    let ns = run_notifications(&app, &run_id).await;
    let got: Vec<String> = ns
        .iter()
        .map(|n| s(&n["recipient"]["external_id"]))
        .collect();
    let uniq: HashSet<String> = got.iter().cloned().collect();
    assert_eq!(
        got.len(),
        uniq.len(),
        "one notification per recipient: {got:?}"
    );
    let mut want: HashSet<String> = subs.iter().cloned().collect();
    want.insert(extra.clone());
    assert_eq!(uniq, want);
    for n in &ns {
        assert_eq!(
            n["topic"],
            json!(t),
            "every notification carries the topic: {n}"
        );
        assert_eq!(n["status"], json!("processed"), "{n}");
        assert!(deliveries(n).iter().all(|d| d["topic"] == json!(t)), "{n}");
    }
    let r = app.user(GET, &format!("{U}/feed"), &subs[3]).go().await;
    let f = r.page();
    assert_eq!(f["items"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(f["items"][0]["topic"], json!(t), "{r}");

    // a topic nobody follows: accepted, nothing to deliver
    let empty = handle("empty");
    put_topic(&app, &empty, json!({}), 201).await;
    let run = run_flow(&app, &fid, json!({"topic": empty})).await;
    assert_eq!(run["recipients_count"], json!(0), "{run}");
    let fr = wait_run_processed(&app, &s(&run["id"]), 30).await;
    assert_eq!(fr["notifications_count"], json!(0), "{fr}");

    // a bigger topic (more than one expansion chunk), and a latecomer
    let big = handle("big");
    put_topic(&app, &big, json!({"name": "Big"}), 201).await;
    let n = 520;
    let members: Vec<String> = (0..n)
        .map(|i| format!("m{i:04}-{}", &random_hex()[..6]))
        .collect();
    let app_ref = &app;
    let big_ref = &big;
    stream::iter(members.iter())
        .for_each_concurrent(16, |e| async move {
            app_ref.create_user_as(e, json!({})).await;
            subscribe(app_ref, big_ref, e).await;
        })
        .await;
    assert_eq!(count(&app, &big).await, json!(n));
    let late = new_ext("late");
    app.create_user_as(&late, json!({})).await;
    let run = run_flow(&app, &fid, json!({"topic": big})).await;
    // subscribes right after the acceptance: not part of this run
    subscribe(&app, &big, &late).await;
    // an edit right after the acceptance does not change this run either
    let r = app
        .admin(PUT, &format!("{A}/flows/{fid}"))
        .json(&json!({"steps": [channel_step(&inapp, None, "edited")]}))
        .go()
        .await;
    r.ok(200);
    assert_eq!(run["recipients_count"], json!(n), "{run}");
    let run_id = s(&run["id"]);
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(n), "{fr}");
    let ns = run_notifications(&app, &run_id).await;
    assert_eq!(ns.len(), n);
    let got: HashSet<String> = ns
        .iter()
        .map(|n| s(&n["recipient"]["external_id"]))
        .collect();
    assert_eq!(got, members.iter().cloned().collect::<HashSet<_>>());
    assert!(!got.contains(&late), "the latecomer is not a recipient");
    for n in &ns {
        let body = s(&delivery_of(n, "in_app")["data"]["body"]);
        assert_eq!(
            body,
            format!("to {}", s(&n["recipient"]["external_id"])),
            "rendered from the flow as accepted: {n}"
        );
    }
    let r = app
        .admin(GET, &format!("{A}/notifications"))
        .query(&[("recipient", late.as_str())])
        .go()
        .await;
    assert_eq!(r.page()["items"], json!([]), "{r}");
    assert_eq!(count(&app, &big).await, json!(n + 1));
}
