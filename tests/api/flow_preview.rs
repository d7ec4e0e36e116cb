//! Flow previews (docs/API.md §8, "Preview"): `POST /flows/{id}/preview`
//! renders a flow's channel steps for one recipient as a run then stores
//! and sends them, byte for byte (checked against the run's deliveries, a
//! local SMTP sink and a local webhook receiver), while the preview itself
//! stores and sends nothing (the sink and receiver see no request, lists
//! show no new record, no user is created); an unsaved flow's body
//! previews the same way; a step that does not render gives its error and
//! path; bad input is a 422 at its path.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

fn preview_path(flow: &str) -> String {
    format!("{A}/flows/{flow}/preview")
}

async fn preview(app: &TestApp, flow: &str, body: Value) -> Resp {
    app.admin(POST, &preview_path(flow)).json(&body).go().await
}

/// The preview's step `i` (by the flow's index).
fn step(p: &Value, i: usize) -> &Value {
    p["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("steps: {p}"))
        .iter()
        .find(|s| s["step"] == json!(i))
        .unwrap_or_else(|| panic!("no step {i}: {p}"))
}

/// How many items a list answers (first page of up to 100).
async fn count(app: &TestApp, path: &str) -> usize {
    let r = app.admin(GET, path).query(&[("limit", "100")]).go().await;
    r.ok(200)["items"].as_array().unwrap().len()
}

/// An email channel to `sink`, a chat webhook to `hook`, the in-app channel,
/// the project's content (a layout with a `<style>` block including a
/// partial, an English catalog) and a draft flow: email (subject, body and
/// HTML, in the layout, with a translated subject), a delay, chat, in-app
/// with an action button.
async fn setup(app: &TestApp, sink: &SmtpSink, hook: &wiremock::MockServer) -> Value {
    for (path, body) in [
        (
            "partials/sign",
            json!({"content": "<p class=\"sig\">{{ t(\"sig\") }}</p>"}),
        ),
        (
            "layouts/main",
            json!({"name": "Main", "text": "{{ content }}\n--",
            "html": "<html><head><style>.sig { color: #555 }</style></head><body>{{ content }}{% include \"partials/sign\" %}</body></html>"}),
        ),
        (
            "translations/en",
            json!({"messages": {"hi": "Hi {{ name }}", "sig": "The team"}}),
        ),
    ] {
        let r = app
            .admin(PUT, &format!("{A}/{path}"))
            .json(&body)
            .go()
            .await;
        assert!(r.status == 200 || r.status == 201, "{r}");
    }
    let email = active_channel(app, "email", "smtp", smtp_config(sink)).await;
    let chat = create_webhook_channel(app, &hook_url(hook), None).await;
    let inapp = in_app_channel(app).await;
    create_flow(
        app,
        &handle("pv"),
        json!([
            {"type": "channel", "channel_id": s(&email["id"]), "layout": "main", "template": {
                "subject": "{{ t(\"hi\", name=recipient.first_name) }} #{{ data.n }}",
                "body": "{{ actor.first_name }} says {{ data.msg }} ({{ recipient.locale }})",
                "html": "<p>{{ data.msg | upper }}</p>"}},
            delay_step(0),
            channel_step(&s(&chat["id"]), None, "Chat {{ data.n }} for {{ recipient.email }}"),
            {"type": "channel", "channel_id": inapp, "template": {
                "subject": "Feed {{ data.n }}", "body": "{{ flow.handle }}",
                "actions": [{"label": "Open {{ data.n }}", "url": "https://example.com/{{ data.n }}"}]}}
        ]),
    )
    .await
}

#[tokio::test]
async fn a_preview_is_what_the_run_then_stores_and_sends_and_itself_stores_nothing() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let flow = setup(&app, &sink, &hook).await;
    let fid = s(&flow["id"]);
    let (ada, _) = app
        .create_user(
            "ada",
            json!({"first_name": "Ada", "email": "ada@example.com", "locale": "en"}),
        )
        .await;
    let (bob, _) = app.create_user("bob", json!({"first_name": "Bob"})).await;
    let body = json!({"user": ada, "actor": bob, "data": {"n": 7, "msg": "hello"}});
    let users_before = count(&app, &format!("{A}/users")).await;

    // a draft flow previews; the delay step is not listed
    let r = preview(&app, &fid, body.clone()).await;
    let p = r.ok(200);
    assert_eq!(p["flow_id"], json!(fid), "{p}");
    assert_eq!(p["user"]["external_id"], json!(ada), "{p}");
    assert_eq!(p["steps"].as_array().unwrap().len(), 3, "{p}");
    let email = &step(&p, 0)["content"];
    assert_eq!(step(&p, 0)["channel_type"], json!("email"), "{p}");
    assert_eq!(email["subject"], json!("Hi Ada #7"), "{p}");
    assert_eq!(email["body"], json!("Bob says hello (en)\n--"), "{p}");
    let html = s(&email["html"]);
    assert!(html.contains("<p>HELLO</p>"), "{p}");
    assert!(
        html.contains(r#"<p class="sig" style="color: #555;">The team</p>"#),
        "the layout, its partial and its CSS inlined: {html}"
    );
    assert_eq!(
        step(&p, 2)["content"]["body"],
        json!("Chat 7 for ada@example.com")
    );
    let feed = &step(&p, 3)["content"];
    assert_eq!(
        feed["actions"],
        json!([{"label": "Open 7", "url": "https://example.com/7"}])
    );
    assert!(step(&p, 0).get("error").is_none(), "{p}");
    assert_eq!(step(&p, 0)["translation_missing"], json!([]), "{p}");

    // nothing stored, sent or counted
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(sink.mails().is_empty(), "{:?}", sink.mails());
    assert!(
        hook.received_requests()
            .await
            .unwrap_or_default()
            .is_empty(),
        "the webhook receiver saw a request"
    );
    assert_eq!(count(&app, &format!("{A}/notifications")).await, 0);
    assert_eq!(count(&app, &format!("{A}/users")).await, users_before);
    assert!(wait_feed_empty(&app, &ada).await);

    // the run with the same inputs stores and sends the same content
    activate(&app, &fid).await;
    let mut run = body.clone();
    run["recipients"] = json!([ada]);
    run.as_object_mut().unwrap().remove("user");
    let (_, note) = run_one(&app, &fid, run).await;
    let sent_email = wait_delivery_final(&app, &s(&delivery_of(&note, "email")["id"]), 30).await;
    let sent_chat = wait_delivery_final(&app, &s(&delivery_of(&note, "chat")["id"]), 30).await;
    let sent_feed = wait_delivery_final(&app, &s(&delivery_of(&note, "in_app")["id"]), 30).await;
    for (d, i) in [(&sent_email, 0), (&sent_chat, 2), (&sent_feed, 3)] {
        assert_eq!(d["status"], json!("sent"), "{d}");
        let mut stored = d["data"].clone();
        stored.as_object_mut().unwrap().remove("outcomes");
        assert_eq!(
            stored.to_string(),
            step(&p, i)["content"].to_string(),
            "step {i}: the run stored what the preview showed"
        );
    }
    let mails = sink.mails();
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert!(mails[0].data.contains("Hi Ada #7"), "{}", mails[0].data);
    assert!(
        mails[0].data.contains("Bob says hello (en)"),
        "{}",
        mails[0].data
    );
    // the HTML part as previewed (quoted-printable turns `=` into `=3D`)
    let qp = mails[0].data.replace("=\r\n", "").replace("=3D", "=");
    assert!(
        qp.contains(r#"style="color: #555;">The team"#),
        "{}",
        mails[0].data
    );
    let got = hook.received_requests().await.unwrap_or_default();
    assert_eq!(got.len(), 1);
    let sent: Value = serde_json::from_slice(&got[0].body).unwrap();
    assert!(
        sent.to_string().contains("Chat 7 for ada@example.com"),
        "{sent}"
    );
}

/// True once the user's feed is (still) empty.
async fn wait_feed_empty(app: &TestApp, ext: &str) -> bool {
    let r = app.user(GET, &format!("{U}/feed"), ext).go().await;
    r.ok(200)["items"].as_array().unwrap().is_empty()
}

#[tokio::test]
async fn a_preview_takes_inline_fields_a_locale_and_a_new_user_without_storing_them() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = create_flow(
        &app,
        &handle("pv"),
        json!([channel_step(
            &inapp,
            Some("{{ recipient.first_name }}"),
            "{{ recipient.locale }}"
        )]),
    )
    .await;
    let fid = s(&flow["id"]);
    let (ada, _) = app
        .create_user("ada", json!({"first_name": "Ada", "locale": "en"}))
        .await;

    // fields over the stored user's, and a locale over both
    let body = json!({"user": {"external_id": ada, "first_name": "Augusta"}, "locale": "fr-CA"});
    let p = preview(&app, &fid, body).await.ok(200);
    assert_eq!(step(&p, 0)["content"]["subject"], json!("Augusta"), "{p}");
    assert_eq!(step(&p, 0)["content"]["body"], json!("fr-CA"), "{p}");
    assert_eq!(p["user"]["locale"], json!("fr-CA"), "{p}");
    let stored = app
        .admin(GET, &format!("{A}/users/{ada}"))
        .go()
        .await
        .ok(200);
    assert_eq!(stored["first_name"], json!("Ada"), "unchanged: {stored}");
    assert_eq!(stored["locale"], json!("en"), "unchanged: {stored}");

    // an external_id nobody has: the user a run would create, not created
    let ghost = handle("ghost");
    let body = json!({"user": {"external_id": ghost, "first_name": "Gus"}});
    let p = preview(&app, &fid, body).await.ok(200);
    assert_eq!(step(&p, 0)["content"]["subject"], json!("Gus"), "{p}");
    let r = app.admin(GET, &format!("{A}/users/{ghost}")).go().await;
    assert_error(&r, 404, "not_found");

    // a flow by handle
    let p = preview(&app, &s(&flow["handle"]), json!({"user": ada}))
        .await
        .ok(200);
    assert_eq!(step(&p, 0)["content"]["subject"], json!("Ada"), "{p}");
}

#[tokio::test]
async fn an_unsaved_flow_previews_from_its_body_and_is_not_saved() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let (ada, _) = app.create_user("ada", json!({"first_name": "Ada"})).await;
    let r = app
        .admin(POST, &format!("{A}/flows/preview"))
        .json(&json!({
            "steps": [
                {"type": "batch", "window": "1h"},
                channel_step(&inapp, Some("{{ batch.count }} for {{ recipient.first_name }}"), "{{ data.n }}")
            ],
            "user": ada, "data": {"n": 3}
        }))
        .go()
        .await;
    let p = r.ok(200);
    assert_eq!(p["flow_id"], Value::Null, "{p}");
    // after a batch step: the batch of this run alone
    assert_eq!(step(&p, 1)["content"]["subject"], json!("1 for Ada"), "{p}");
    assert_eq!(step(&p, 1)["content"]["body"], json!("3"), "{p}");
    assert_eq!(count(&app, &format!("{A}/flows")).await, 0, "nothing saved");

    // the flow's body is checked as a create checks it, at the same paths
    let r = app
        .admin(POST, &format!("{A}/flows/preview"))
        .json(&json!({"steps": [{"type": "channel", "template": {"body": "x"}}], "user": ada}))
        .go()
        .await;
    let d = assert_error(&r, 422, "validation_failed");
    assert!(d["fields"].to_string().contains("steps.0"), "{r}");
}

#[tokio::test]
async fn a_step_that_does_not_render_gives_its_error_and_path_and_bad_input_is_a_422() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = create_flow(
        &app,
        &handle("pv"),
        json!([
            channel_step(&inapp, Some("ok"), "{{ 'x' * data.n }}"),
            channel_step(&inapp, Some("fine {{ data.n }}"), "b")
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    let (ada, _) = app.create_user("ada", json!({})).await;
    let p = preview(&app, &fid, json!({"user": ada, "data": {"n": 100000000}}))
        .await
        .ok(200);
    let bad = step(&p, 0);
    assert!(bad.get("content").is_none(), "{p}");
    assert_eq!(bad["error"]["code"], json!("template_error"), "{p}");
    assert_eq!(bad["error"]["field"], json!("steps.0.template.body"), "{p}");
    assert!(s(&bad["error"]["message"]).contains("limit"), "{p}");
    assert_eq!(
        step(&p, 1)["content"]["subject"],
        json!("fine 100000000"),
        "the other steps still render: {p}"
    );

    let field = |r: &Resp, f: &str, reason: &str| {
        let d = assert_error(r, 422, "validation_failed");
        assert!(
            d["fields"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["field"] == json!(f) && x["reason"] == json!(reason)),
            "{f} {reason}: {r}"
        );
    };
    field(&preview(&app, &fid, json!({})).await, "user", "required");
    field(
        &preview(&app, &fid, json!({"user": ada, "locale": "not a locale!"})).await,
        "locale",
        "format",
    );
    field(
        &preview(&app, &fid, json!({"user": ada, "data": [1]})).await,
        "data",
        "format",
    );
    field(
        &preview(&app, &fid, json!({"user": ada, "actor": "nobody-here"})).await,
        "actor",
        "inclusion",
    );
    let r = preview(&app, "no-such-flow", json!({"user": ada})).await;
    assert_error(&r, 404, "not_found");
}

#[tokio::test]
async fn a_flow_handled_preview_is_still_reached_by_its_handle() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = create_flow(&app, "preview", json!([channel_step(&inapp, None, "P")])).await;
    let got = app
        .admin(GET, &format!("{A}/flows/preview"))
        .go()
        .await
        .ok(200);
    assert_eq!(got["id"], flow["id"], "{got}");
    let r = app
        .admin(PUT, &format!("{A}/flows/preview"))
        .json(&json!({"name": "Renamed"}))
        .go()
        .await;
    assert_eq!(r.ok(200)["name"], json!("Renamed"));
    let (ada, _) = app.create_user("ada", json!({})).await;
    let p = preview(&app, "preview", json!({"user": ada})).await.ok(200);
    assert_eq!(p["flow_id"], flow["id"], "{p}");
}

#[tokio::test]
async fn a_preview_renders_the_locale_asked_for_and_lists_missing_translations() {
    let app = TestApp::spawn();
    for (l, m) in [("en", "Hello"), ("fr", "Bonjour")] {
        let r = app
            .admin(PUT, &format!("{A}/translations/{l}"))
            .json(&json!({"messages": {"greet": m}}))
            .go()
            .await;
        assert!(r.status == 200 || r.status == 201, "{r}");
    }
    let inapp = in_app_channel(&app).await;
    let flow = create_flow(
        &app,
        &handle("pv"),
        json!([channel_step(
            &inapp,
            Some("{{ t(\"greet\") }}"),
            "{{ t(\"nope.key\") }}"
        )]),
    )
    .await;
    let (ada, _) = app.create_user("ada", json!({"locale": "en"})).await;
    let fid = s(&flow["id"]);
    let p = preview(&app, &fid, json!({"user": ada})).await.ok(200);
    assert_eq!(step(&p, 0)["content"]["subject"], json!("Hello"), "{p}");
    assert_eq!(step(&p, 0)["content"]["body"], json!("nope.key"), "{p}");
    assert_eq!(
        step(&p, 0)["translation_missing"],
        json!(["nope.key"]),
        "{p}"
    );
    let p = preview(&app, &fid, json!({"user": ada, "locale": "fr-CA"}))
        .await
        .ok(200);
    assert_eq!(step(&p, 0)["content"]["subject"], json!("Bonjour"), "{p}");
}
