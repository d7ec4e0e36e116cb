//! A run accepted or refused: validation, inline identify, recipient dedup,
//! templates and preferences.

use super::*;

#[tokio::test]
async fn run_is_accepted_and_validated() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(&app, "runme", json!([channel_step(&inapp, None, "hi")])).await;
    let fid = s(&flow["id"]);
    let (ext, _) = app.create_user("runner", json!({})).await;

    // the 202
    let r = app
        .admin(POST, &run_path(&fid))
        .json(&json!({"recipients": [{"external_id": ext}]}))
        .go()
        .await;
    let run = r.ok(202);
    for k in ["id", "flow_id", "status", "recipients_count", "created_at"] {
        assert!(run.get(k).is_some(), "accepted run lacks {k}: {r}");
    }
    assert!(is_uuid_v7(&run["id"]), "{r}");
    assert_eq!(run["flow_id"], json!(fid), "{r}");
    assert_eq!(run["status"], json!("pending"), "{r}");
    assert_eq!(run["recipients_count"], json!(1), "{r}");
    assert!(is_timestamp(&run["created_at"]), "{r}");
    assert!(
        r.header("idempotent-replayed").is_none(),
        "a first response is no replay: {r}"
    );
    let run_id = s(&run["id"]);

    // the flow run, once processed
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["id"], json!(run_id), "{fr}");
    assert_eq!(fr["flow_id"], json!(fid), "{fr}");
    assert_eq!(fr["recipients_count"], json!(1), "{fr}");
    assert_eq!(fr["notifications_count"], json!(1), "{fr}");
    assert_eq!(fr["created_at"], run["created_at"], "{fr}");
    assert!(is_timestamp(&fr["processed_at"]), "{fr}");
    assert!(
        parse_ts(&fr["processed_at"]) >= parse_ts(&fr["created_at"]),
        "{fr}"
    );

    // by handle too
    let r = app
        .admin(POST, &run_path(&s(&flow["handle"])))
        .json(&json!({"recipients": [{"external_id": ext}]}))
        .go()
        .await;
    assert_eq!(r.ok(202)["flow_id"], json!(fid), "{r}");

    // not active: draft, then archived
    let draft = create_flow(
        &app,
        &handle("drafty"),
        json!([channel_step(&inapp, None, "x")]),
    )
    .await;
    let did = s(&draft["id"]);
    let body = json!({"recipients": [{"external_id": ext}]});
    let r = app.admin(POST, &run_path(&did)).json(&body).go().await;
    let d = assert_conflict(&r, "flow_not_active");
    assert_eq!(d["resource"], json!("flow"), "{r}");
    assert_eq!(d["id"], json!(did), "{r}");
    assert_eq!(d["current_status"], json!("draft"), "{r}");
    assert_eq!(d["allowed_statuses"], json!(["active"]), "{r}");
    let r = app
        .admin(POST, &format!("{A}/flows/{did}/archive"))
        .go()
        .await;
    r.ok(200);
    let r = app.admin(POST, &run_path(&did)).json(&body).go().await;
    let d = assert_conflict(&r, "flow_not_active");
    assert_eq!(d["current_status"], json!("archived"), "{r}");
    assert_eq!(d["allowed_statuses"], json!(["active"]), "{r}");

    // unknown flow
    let unknown = new_uuid();
    let r = app.admin(POST, &run_path(&unknown)).json(&body).go().await;
    assert_not_found(&r, "flow", &unknown);
    let r = app
        .admin(POST, &run_path("no-such-flow"))
        .json(&body)
        .go()
        .await;
    assert_not_found(&r, "flow", "no-such-flow");

    // order of checks: 400 (JSON) before 404, 404 before 422, 422 before 409
    let r = app
        .admin(POST, &run_path(&unknown))
        .header("content-type", "application/json")
        .body("{not json")
        .go()
        .await;
    assert_invalid_json(&r);
    let r = app
        .admin(POST, &run_path(&unknown))
        .json(&json!({}))
        .go()
        .await;
    assert_not_found(&r, "flow", &unknown);
    let r = app
        .admin(POST, &run_path(&did))
        .json(&json!({"recipients": []}))
        .go()
        .await;
    assert_validation(&r, &[("recipients", "required")]);

    // validation
    let post = |b: Value| app.admin(POST, &run_path(&fid)).json(&b);
    let many: Vec<String> = (0..1001).map(|i| format!("many-{i}")).collect();
    let r = post(json!({"recipients": recipients(&many)})).go().await;
    assert_validation(&r, &[("recipients", "length")]);
    let r = post(json!({})).go().await;
    assert_validation(&r, &[("recipients", "required")]);
    let r = post(json!({"recipients": []})).go().await;
    assert_validation(&r, &[("recipients", "required")]);
    let r = post(json!({"recipients": [{}]})).go().await;
    assert_validation(&r, &[("recipients.0.external_id", "required")]);
    let r = post(json!({"recipients": [{"external_id": ext}, {"first_name": "No id"}]}))
        .go()
        .await;
    assert_validation(&r, &[("recipients.1.external_id", "required")]);
    let r = post(json!({"recipients": [{"external_id": "bad-mail", "email": "nope"}]}))
        .go()
        .await;
    assert_validation(&r, &[("recipients.0.email", "format")]);
    let r = post(json!({"recipients": "x"})).go().await;
    assert_validation(&r, &[("recipients", "format")]);
    let r = post(json!({"recipients": [5]})).go().await;
    assert_validation(&r, &[("recipients.0", "format")]);
    let r = post(json!({"topic": "no-such-topic"})).go().await;
    assert_validation(&r, &[("topic", "inclusion")]);
    let ghost = new_ext("ghost");
    let newcomer = new_ext("newcomer");
    let r =
        post(json!({"recipients": [{"external_id": newcomer, "first_name": "N"}], "actor": ghost}))
            .go()
            .await;
    assert_validation(&r, &[("actor", "inclusion")]);
    let r = post(json!({"recipients": [{"external_id": ext}], "data": "text"}))
        .go()
        .await;
    assert_validation(&r, &[("data", "format")]);
    let r = post(json!({"recipients": [{"external_id": ext}], "actor": {"first_name": "Anon"}}))
        .go()
        .await;
    assert_validation(&r, &[("actor.external_id", "required")]);
    // a refused run did nothing: no inline-identified user, no notification
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&newcomer)))
        .go()
        .await;
    assert_not_found(&r, "user", &newcomer);
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc("many-0")))
        .go()
        .await;
    assert_not_found(&r, "user", "many-0");
    let all = list_all(&app, &format!("{A}/notifications"), &[]).await;
    assert_eq!(
        all.len(),
        2,
        "only the two accepted runs made notifications"
    );

    // exactly 1000 recipients are fine (and identified inline)
    let thousand: Vec<String> = (0..1000)
        .map(|i| format!("k-{i:04}-{}", &random_hex()[..4]))
        .collect();
    let r = post(json!({"recipients": recipients(&thousand)}))
        .go()
        .await;
    let big = r.ok(202);
    assert_eq!(big["recipients_count"], json!(1000), "{r}");
    let fr = wait_run_processed(&app, &s(&big["id"]), 30).await;
    assert_eq!(fr["notifications_count"], json!(1000), "{fr}");
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&thousand[999])))
        .go()
        .await;
    r.ok(200);

    // by-id reads: unknown and malformed ids
    let unknown = new_uuid();
    for (path, resource) in [
        ("flow_runs", "flow_run"),
        ("notifications", "notification"),
        ("deliveries", "delivery"),
    ] {
        let r = app.admin(GET, &format!("{A}/{path}/{unknown}")).go().await;
        assert_not_found(&r, resource, &unknown);
        let r = app.admin(GET, &format!("{A}/{path}/not-a-uuid")).go().await;
        assert_invalid_uuid(&r, "id");
    }
}

#[tokio::test]
async fn inline_identify_dedup_and_templates() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let h = handle("greet");
    let flow = create_flow(
        &app,
        &h,
        json!([{
            "type": "channel",
            "channel_id": inapp,
            "template": {
                "subject": "{{ flow.name }} / {{ flow.handle }}",
                "body": "Hi {{ recipient.first_name }} {{ recipient.last_name }}, {{ actor.first_name }} says {{ data.msg }}[{{ data.nope }}][{{ data.a.b.c }}][{{ recipient.custom_fields.plan }}]",
                "url": "https://example.com/items/{{ data.item_id }}"
            }
        }]),
    )
    .await;
    let fid = s(&flow["id"]);
    activate(&app, &fid).await;

    let ann = new_ext("ann");
    app.create_user_as(
        &ann,
        json!({"first_name": "Ann", "last_name": "Old", "email": "ann@example.com",
            "custom_fields": {"plan": "pro"}}),
    )
    .await;
    let cid = new_ext("cid");
    let bob = new_ext("bob");
    let data = json!({"msg": "hello", "item_id": 42});
    let r = app
        .admin(POST, &run_path(&fid))
        .json(&json!({
            "recipients": [
                {"external_id": ann, "last_name": "New"},
                {"external_id": cid, "first_name": "Cid", "email": "cid@example.com"},
                {"external_id": ann},
                {"external_id": cid, "last_name": "Last"}
            ],
            "actor": {"external_id": bob, "first_name": "Bob"},
            "data": data
        }))
        .go()
        .await;
    let run = r.ok(202);
    assert_eq!(
        run["recipients_count"],
        json!(2),
        "recipients are deduplicated: {r}"
    );
    let run_id = s(&run["id"]);

    // inline identify created and updated the users (partial updates)
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&ann)))
        .go()
        .await;
    let u = r.ok(200);
    assert_eq!(u["first_name"], json!("Ann"), "{r}");
    assert_eq!(u["last_name"], json!("New"), "{r}");
    assert_eq!(u["email"], json!("ann@example.com"), "{r}");
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&cid)))
        .go()
        .await;
    let c = r.ok(200);
    assert_eq!(c["first_name"], json!("Cid"), "{r}");
    assert_eq!(c["last_name"], json!("Last"), "{r}");
    assert_eq!(c["email"], json!("cid@example.com"), "{r}");
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&bob)))
        .go()
        .await;
    let b = r.ok(200);
    assert_eq!(
        b["first_name"],
        json!("Bob"),
        "the inline actor is identified: {r}"
    );

    // the edits made after acceptance do not change this run
    let r = app
        .admin(PUT, &format!("{A}/flows/{fid}"))
        .json(&json!({"steps": [channel_step(&inapp, None, "edited {{ data.msg }}")]}))
        .go()
        .await;
    r.ok(200);

    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(2), "{fr}");
    let ns = run_notifications(&app, &run_id).await;
    assert_eq!(ns.len(), 2);
    let by_rcpt: HashMap<String, Value> = ns
        .iter()
        .map(|n| (s(&n["recipient"]["external_id"]), n.clone()))
        .collect();
    assert_eq!(
        by_rcpt.keys().cloned().collect::<HashSet<_>>(),
        HashSet::from([ann.clone(), cid.clone()]),
        "{ns:?}"
    );
    for n in &ns {
        assert_eq!(n["flow_id"], json!(fid), "{n}");
        assert_eq!(n["flow_run_id"], json!(run_id), "{n}");
        assert_eq!(n["status"], json!("processed"), "{n}");
        assert_eq!(n["data"], data, "notification data is the run's data: {n}");
        assert_eq!(n["actor_id"], b["id"], "{n}");
        assert_eq!(n["actor"]["external_id"], json!(bob), "{n}");
        assert_eq!(n["recipient_id"], n["recipient"]["id"], "{n}");
        assert_eq!(n["topic"], Value::Null, "{n}");
        let d = delivery_of(n, "in_app");
        assert_eq!(d["status"], json!("sent"), "{n}");
        assert_eq!(
            d["data"]["subject"],
            json!(format!("Flow {h} / {h}")),
            "{n}"
        );
        assert_eq!(
            d["data"]["url"],
            json!("https://example.com/items/42"),
            "{n}"
        );
    }
    let body = |ext: &str| s(&delivery_of(&by_rcpt[ext], "in_app")["data"]["body"]);
    assert_eq!(body(&ann), "Hi Ann New, Bob says hello[][][pro]");
    assert_eq!(body(&cid), "Hi Cid Last, Bob says hello[][][]");

    // the edited flow: no subject -> "", no actor -> undefined -> ""; actor by external_id
    let r = app
        .admin(PUT, &format!("{A}/flows/{fid}"))
        .json(&json!({"steps": [channel_step(&inapp, None, "{{ actor.first_name }}|{{ actor.external_id }}|{{ data.msg }}")]}))
        .go()
        .await;
    r.ok(200);
    let (_, n) = run_one(&app, &fid, json!({"recipients": [{"external_id": ann}]})).await;
    let d = delivery_of(&n, "in_app");
    assert_eq!(d["data"]["subject"], json!(""), "no subject template: {n}");
    assert_eq!(
        d["data"]["body"],
        json!("||"),
        "undefined renders empty: {n}"
    );
    assert_eq!(n["actor"], Value::Null, "{n}");
    assert_eq!(n["actor_id"], Value::Null, "{n}");
    let (_, n) = run_one(
        &app,
        &fid,
        json!({"recipients": [{"external_id": cid}], "actor": ann, "data": {"msg": "yo"}}),
    )
    .await;
    let d = delivery_of(&n, "in_app");
    assert_eq!(d["data"]["body"], json!(format!("Ann|{ann}|yo")), "{n}");
    assert_eq!(n["actor"]["external_id"], json!(ann), "{n}");
}

#[tokio::test]
async fn preferences_skip_deliveries() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let h = handle("prefs");
    let flow = create_flow(
        &app,
        &h,
        json!([
            channel_step(&inapp, None, "in app for {{ recipient.external_id }}"),
            channel_step(
                &s(&chat["id"]),
                None,
                "chat for {{ recipient.external_id }}"
            ),
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    activate(&app, &fid).await;
    let other = create_flow(
        &app,
        &handle("other"),
        json!([channel_step(&inapp, None, "o")]),
    )
    .await;
    let other_h = s(&other["handle"]);

    let mut users: Vec<(String, Value, (&str, &str))> = vec![
        (
            new_ext("global-chat-off"),
            json!({"channel_types": {"chat": false}}),
            ("sent", "skipped"),
        ),
        (
            new_ext("flow-off"),
            json!({"flows": {h.clone(): {"enabled": false}}}),
            ("skipped", "skipped"),
        ),
        (
            new_ext("flow-inapp-off"),
            json!({"flows": {h.clone(): {"channel_types": {"in_app": false}}}}),
            ("skipped", "sent"),
        ),
        (
            new_ext("other-flow-off"),
            json!({"flows": {other_h.clone(): {"enabled": false}}}),
            ("sent", "sent"),
        ),
        (
            new_ext("all-off"),
            json!({"channel_types": {"in_app": false, "chat": false}}),
            ("skipped", "skipped"),
        ),
        (new_ext("default"), json!(null), ("sent", "sent")),
    ];
    // one preference set through the User API
    users.push((
        new_ext("user-api"),
        json!({"user_api": {"flows": {h.clone(): {"channel_types": {"chat": false}}}}}),
        ("sent", "skipped"),
    ));
    for (ext, prefs, _) in &users {
        app.create_user_as(ext, json!({})).await;
        if let Some(p) = prefs.get("user_api") {
            let r = app
                .user(PUT, &format!("{U}/preferences"), ext)
                .json(p)
                .go()
                .await;
            r.ok(200);
        } else if !prefs.is_null() {
            let r = app
                .admin(PUT, &format!("{A}/users/{}/preferences", enc(ext)))
                .json(prefs)
                .go()
                .await;
            r.ok(200);
        }
    }
    let exts: Vec<String> = users.iter().map(|u| u.0.clone()).collect();
    let run = run_flow(&app, &fid, json!({"recipients": recipients(&exts)})).await;
    let run_id = s(&run["id"]);
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(users.len()), "{fr}");
    let ns = run_notifications(&app, &run_id).await;
    assert_eq!(ns.len(), users.len());

    let mut sent_chat = HashSet::new();
    for (ext, _, (want_in_app, want_chat)) in &users {
        let n = ns
            .iter()
            .find(|n| n["recipient"]["external_id"] == json!(ext))
            .unwrap_or_else(|| panic!("no notification for {ext}"));
        assert_eq!(n["status"], json!("processed"), "{ext}: {n}");
        assert!(is_timestamp(&n["processed_at"]), "{ext}: {n}");
        for (ct, want) in [("in_app", *want_in_app), ("chat", *want_chat)] {
            let d = delivery_of(n, ct);
            assert_eq!(d["status"], json!(want), "{ext} {ct}: {d}");
            assert_eq!(d["next_attempt_at"], Value::Null, "{ext} {ct}: {d}");
            if want == "skipped" {
                assert_eq!(d["error"]["code"], json!("preference"), "{ext} {ct}: {d}");
                assert!(
                    d["error"]["message"]
                        .as_str()
                        .is_some_and(|m| !m.is_empty()),
                    "{ext} {ct}: {d}"
                );
                assert_eq!(d["attempts"], json!(0), "{ext} {ct}: {d}");
                assert_eq!(d["sent_at"], Value::Null, "{ext} {ct}: {d}");
            } else {
                assert_eq!(d["error"], Value::Null, "{ext} {ct}: {d}");
                assert_eq!(d["attempts"], json!(1), "{ext} {ct}: {d}");
                assert!(is_timestamp(&d["sent_at"]), "{ext} {ct}: {d}");
                if ct == "chat" {
                    sent_chat.insert(s(&d["id"]));
                }
            }
        }
        // the feed shows exactly the sent in_app delivery
        let r = app
            .admin(GET, &format!("{A}/users/{}/feed", enc(ext)))
            .go()
            .await;
        let feed = r.page();
        let want_len = usize::from(*want_in_app == "sent");
        assert_eq!(
            feed["items"].as_array().unwrap().len(),
            want_len,
            "{ext}: {r}"
        );
    }
    // the webhook saw exactly the sent chat deliveries
    let got: HashSet<String> = received(&hook)
        .await
        .iter()
        .filter_map(|q| req_header(q, "idempotency-key"))
        .collect();
    assert_eq!(got, sent_chat, "webhook requests vs sent chat deliveries");
}
