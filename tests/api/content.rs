//! A project's content (issue 40, docs/CONTENT.md): translations with their
//! locale fallback and `translation_missing` trace entries, email layouts
//! with their CSS inlined (checked at a local SMTP sink), and partials
//! nested at most five deep, all checked when saved.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

/// The body of the only delivery of a run of `flow` for `ext`.
async fn body_for(app: &TestApp, flow: &str, ext: &str) -> (String, Value) {
    let (_, note) = run_one(app, flow, json!({"recipients": [ext]})).await;
    let d = wait_delivery_final(app, &s(&delivery_of(&note, "in_app")["id"]), 30).await;
    (s(&d["data"]["body"]), note)
}

#[tokio::test]
async fn translations_follow_the_locale_fallback_chain_and_trace_missing_keys() {
    let app = TestApp::spawn();
    for (locale, messages) in [
        ("fr-CA", json!({"hello": "Allô"})),
        (
            "fr",
            json!({"hello": "Bonjour", "welcome": {"subject": "Bienvenue, {{ name }} !"}}),
        ),
        (
            "en",
            json!({"hello": "Hello", "welcome": {"subject": "Welcome, {{ name }}!"}}),
        ),
    ] {
        let t = app
            .put_content("translations", locale, &json!({ "messages": messages }))
            .await
            .ok(201);
        assert_eq!(t["locale"], json!(locale), "{t}");
        assert_eq!(t["messages"], messages, "{t}");
    }
    // a locale is one catalog however its tag is written
    let t = app
        .put_content(
            "translations",
            "FR-ca",
            &json!({"messages": {"hello": "Allô"}}),
        )
        .await
        .ok(200);
    assert_eq!(t["locale"], json!("fr-CA"), "{t}");
    let list = app.list_content("translations").await.ok(200);
    let locales: Vec<String> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| s(&c["locale"]))
        .collect();
    assert_eq!(locales.len(), 3, "{list}");
    for l in ["en", "fr", "fr-CA"] {
        assert!(locales.contains(&l.to_string()), "{list}");
    }

    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "i18n",
        json!([channel_step(
            &inapp,
            None,
            r#"{{ t("hello") }} / {{ t("welcome.subject", name=recipient.first_name) }} / {{ t("nope.key") }}"#
        )]),
    )
    .await;
    let flow = s(&flow["id"]);
    for (locale, name, want) in [
        (Some("fr-CA"), "Ada", "Allô / Bienvenue, Ada ! / nope.key"),
        (Some("fr"), "Bea", "Bonjour / Bienvenue, Bea ! / nope.key"),
        (Some("de"), "Carl", "Hello / Welcome, Carl! / nope.key"),
        (None, "Dan", "Hello / Welcome, Dan! / nope.key"),
    ] {
        let mut fields = json!({"first_name": name});
        if let Some(l) = locale {
            fields["locale"] = json!(l);
        }
        let (ext, _) = app.create_user("i18n", fields).await;
        let (body, note) = body_for(&app, &flow, &ext).await;
        assert_eq!(body, want, "{locale:?}");
        // the key no catalog has is in the decision trace
        let t = app
            .admin(GET, &format!("{A}/notifications/{}/trace", s(&note["id"])))
            .go()
            .await
            .ok(200);
        let missing: Vec<&Value> = t["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["code"] == json!("translation_missing"))
            .collect();
        assert_eq!(missing.len(), 1, "{t}");
        assert_eq!(missing[0]["args"]["key"], json!("nope.key"), "{t}");
    }

    // the project's default locale is the last fallback; a change applies
    // to the next run
    let p = app
        .put_project(&json!({"default_locale": "fr"}))
        .await
        .ok(200);
    assert_eq!(p["default_locale"], json!("fr"), "{p}");
    let (ext, _) = app
        .create_user("i18n", json!({"first_name": "Eve", "locale": "de"}))
        .await;
    let (body, _) = body_for(&app, &flow, &ext).await;
    assert_eq!(body, "Bonjour / Bienvenue, Eve ! / nope.key");
    app.put_content(
        "translations",
        "fr",
        &json!({"messages": {"hello": "Salut", "welcome": {"subject": "Coucou {{ name }}"}}}),
    )
    .await
    .ok(200);
    let (body, _) = body_for(&app, &flow, &ext).await;
    assert_eq!(body, "Salut / Coucou Eve / nope.key");
}

#[tokio::test]
async fn catalogs_are_checked_when_saved() {
    let app = TestApp::spawn();
    // a message that does not compile: 422 at its key path
    let r = app
        .put_content(
            "translations",
            "fr",
            &json!({"messages": {"welcome": {"subject": "Bienvenue {{ name "}}}),
        )
        .await;
    assert_validation(&r, &[("messages.welcome.subject", "format")]);
    // keys and shapes
    let r = app
        .put_content(
            "translations",
            "fr",
            &json!({"messages": {"a.b": "x", "c": 1, "d": {"e": []}}}),
        )
        .await;
    assert_validation(
        &r,
        &[
            ("messages.a.b", "format"),
            ("messages.c", "format"),
            ("messages.d.e", "format"),
        ],
    );
    assert_validation(
        &app.put_content("translations", "fr", &json!({})).await,
        &[("messages", "required")],
    );
    assert_validation(
        &app.put_content("translations", "not a tag!", &json!({"messages": {}}))
            .await,
        &[("locale", "format")],
    );
    assert_validation(
        &app.put_project(&json!({"default_locale": "??"})).await,
        &[("default_locale", "format")],
    );
    // too big
    let big = "x".repeat(70 * 1024);
    assert_validation(
        &app.put_content("translations", "fr", &json!({"messages": {"a": big}}))
            .await,
        &[("body", "length")],
    );
    // get, delete, 404
    app.put_content("translations", "fr", &json!({"messages": {"a": "b"}}))
        .await
        .ok(201);
    let t = app.get_content("translations", "fr").await.ok(200);
    assert_eq!(t["messages"], json!({"a": "b"}), "{t}");
    app.delete_content("translations", "fr").await.ok(204);
    assert_error(
        &app.get_content("translations", "fr").await,
        404,
        "not_found",
    );
    assert_error(
        &app.delete_content("translations", "fr").await,
        404,
        "not_found",
    );
}

/// The text of a MIME part as sent: quoted-printable soft breaks and
/// escapes undone (what a mail client shows).
fn decoded(part: &str) -> String {
    let joined = part.replace("=\r\n", "").replace("=\n", "");
    let b = joined.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'=' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn layouts_wrap_email_steps_with_their_css_inlined() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    app.put_content(
        "partials",
        "footer",
        &json!({"content": "<p class=\"foot\">Sent by {{ brand.name }}</p>"}),
    )
    .await
    .ok(201);
    let layout = app
        .put_content(
            "layouts",
            "main",
            &json!({
                "name": "Main",
                "html": "<html><head><style>p { color: #ff0000; } .foot { font-size: 11px; }</style></head><body><div class=\"wrap\">{{ content }}</div>{% include \"partials/footer\" %}</body></html>",
                "text": "{{ content }}\n-- Acme"
            }),
        )
        .await
        .ok(201);
    assert_eq!(layout["handle"], json!("main"), "{layout}");
    app.put_project(&json!({"branding": {"name": "Acme"}}))
        .await
        .ok(200);
    let email = active_channel(&app, "email", "smtp", smtp_config(&sink)).await;
    let ch = s(&email["id"]);
    let flow = active_flow(
        &app,
        "lay",
        json!([
            {"type": "channel", "channel_id": ch, "layout": "main",
             "template": {"subject": "One", "body": "Hello text", "html": "<p>Hello {{ recipient.first_name }}</p>"}},
            {"type": "channel", "channel_id": ch, "layout": null,
             "template": {"subject": "Two", "body": "Bare text", "html": "<p>Bare</p>"}},
            {"type": "channel", "channel_id": ch,
             "template": {"subject": "Three", "body": "Line one\nline two\n\nSecond <para>"}},
        ]),
    )
    .await;
    assert_eq!(flow["steps"][0]["layout"], json!("main"), "{flow}");
    assert_eq!(flow["steps"][1]["layout"], Value::Null, "{flow}");
    assert!(flow["steps"][2].get("layout").is_none(), "{flow}");
    // the third step names no layout: the project's default applies
    let p = app
        .put_project(&json!({"default_layout": "main"}))
        .await
        .ok(200);
    assert_eq!(p["default_layout"], json!("main"), "{p}");
    let (ext, _) = app
        .create_user(
            "lay",
            json!({"email": "ada@example.com", "first_name": "Ada"}),
        )
        .await;
    let (_, note) = run_one(&app, &s(&flow["id"]), json!({"recipients": [ext]})).await;
    let mut ds = vec![];
    for d in deliveries(&note) {
        ds.push(wait_delivery_final(&app, &s(&d["id"]), 30).await);
    }
    ds.sort_by_key(|d| s(&d["data"]["subject"]));
    let (one, three, two) = (&ds[0], &ds[1], &ds[2]);
    for d in [one, two, three] {
        assert_eq!(d["status"], json!("sent"), "{d}");
    }
    let html = s(&one["data"]["html"]);
    assert!(html.contains("<p style=\"color: #ff0000"), "{html}");
    assert!(html.contains("Hello Ada</p>"), "{html}");
    assert!(html.contains("Sent by Acme</p>"), "{html}");
    assert!(html.contains("font-size: 11px"), "{html}");
    assert!(!html.contains("<style"), "{html}");
    assert_eq!(one["data"]["body"], json!("Hello text\n-- Acme"), "{one}");
    // `layout: null`: the step's own HTML, alone
    assert_eq!(two["data"]["html"], json!("<p>Bare</p>"), "{two}");
    assert_eq!(two["data"]["body"], json!("Bare text"), "{two}");
    // a body-only step gets its body as escaped paragraphs
    let html = s(&three["data"]["html"]);
    assert!(
        html.contains(">Line one<br>line two</p>") && html.contains(">Second &lt;para&gt;</p>"),
        "{html}"
    );
    assert!(html.contains("<p style=\"color: #ff0000"), "{html}");

    // what the SMTP sink received: a text and an HTML part each
    let mails = sink.mails();
    assert_eq!(mails.len(), 3, "{mails:?}");
    for m in &mails {
        let ct = m.header("Content-Type").unwrap_or_default();
        assert!(ct.starts_with("multipart/alternative"), "{ct}");
        let parts = mime_parts(&m.data);
        assert_eq!(parts.len(), 2, "{parts:?}");
        assert!(parts[0].0.starts_with("text/plain"), "{parts:?}");
        assert!(parts[1].0.starts_with("text/html"), "{parts:?}");
        let subject = m.header("Subject").unwrap_or_default();
        let html = decoded(&parts[1].1);
        if subject == "Two" {
            assert!(!html.contains("style="), "{html}");
        } else {
            assert!(html.contains("style=\"color: #ff0000"), "{subject}: {html}");
        }
    }
}

#[tokio::test]
async fn partials_nest_five_deep_and_missing_content_is_refused_when_saved() {
    let app = TestApp::spawn();
    // p5 … p1, each including the next: five deep from a flow
    for i in (1..=5).rev() {
        let content = if i == 5 {
            "5".to_string()
        } else {
            format!("{i}{{% include \"partials/p{}\" %}}", i + 1)
        };
        app.put_content("partials", &format!("p{i}"), &json!({ "content": content }))
            .await
            .ok(201);
    }
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "deep",
        json!([channel_step(
            &inapp,
            None,
            r#"[{% include "partials/p1" %}]"#
        )]),
    )
    .await;
    let (ext, _) = app.create_user("deep", json!({})).await;
    let (body, _) = body_for(&app, &s(&flow["id"]), &ext).await;
    assert_eq!(body, "[12345]");
    // a sixth level is refused, from either end
    let r = app
        .put_content(
            "partials",
            "p0",
            &json!({"content": "0{% include \"partials/p1\" %}"}),
        )
        .await;
    assert_validation(&r, &[("content", "format")]);
    app.put_content("partials", "p6", &json!({"content": "6"}))
        .await
        .ok(201);
    let r = app
        .put_content(
            "partials",
            "p5",
            &json!({"content": "5{% include \"partials/p6\" %}"}),
        )
        .await;
    assert_validation(&r, &[("content", "format")]);
    // a cycle too
    let r = app
        .put_content(
            "partials",
            "p5",
            &json!({"content": "{% include \"partials/p1\" %}"}),
        )
        .await;
    assert_validation(&r, &[("content", "format")]);
    // naming a partial that does not exist: a flow, a layout, a partial
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("miss"), "name": "Miss", "steps": [
            channel_step(&inapp, None, r#"{% include "partials/nope" %}"#)]}))
        .go()
        .await;
    assert_validation(&r, &[("steps.0.template.body", "inclusion")]);
    let r = app
        .put_content(
            "layouts",
            "l",
            &json!({"name": "L", "html": "{{ content }}{% include \"partials/nope\" %}"}),
        )
        .await;
    assert_validation(&r, &[("html", "format")]);
    let r = app
        .put_content("partials", "x", &json!({"content": "{% include name %}"}))
        .await;
    assert_validation(&r, &[("content", "format")]);
    let r = app
        .put_content("partials", "x", &json!({"content": "{{ broken "}))
        .await;
    assert_validation(&r, &[("content", "format")]);
    assert_validation(
        &app.put_content("partials", "Bad Handle", &json!({"content": "x"}))
            .await,
        &[("handle", "format")],
    );
    // a layout that does not exist, or on a step that is not email
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("miss"), "name": "Miss", "steps": [
            {"type": "channel", "channel_id": inapp, "layout": "main",
             "template": {"body": "x"}}]}))
        .go()
        .await;
    assert_validation(&r, &[("steps.0.layout", "exclusion")]);
    assert_validation(
        &app.put_project(&json!({"default_layout": "nope"})).await,
        &[("default_layout", "inclusion")],
    );
    // what is named cannot go: 409 naming who names it
    let d = assert_conflict(
        &app.delete_content("partials", "p1").await,
        "partial_in_use",
    );
    assert_eq!(d["flows"], json!([s(&flow["handle"])]), "{d}");
    let d = assert_conflict(
        &app.delete_content("partials", "p3").await,
        "partial_in_use",
    );
    assert_eq!(d["content"], json!(["partial/p2"]), "{d}");
    app.put_content(
        "layouts",
        "main",
        &json!({"name": "Main", "html": "<b>{{ content }}</b>"}),
    )
    .await
    .ok(201);
    app.put_project(&json!({"default_layout": "main"}))
        .await
        .ok(200);
    assert_conflict(
        &app.delete_content("layouts", "main").await,
        "layout_in_use",
    );
    app.put_project(&json!({"default_layout": null}))
        .await
        .ok(200);
    app.delete_content("layouts", "main").await.ok(204);
    app.delete_content("partials", "p6").await.ok(204);
    let list = app.list_content("partials").await.ok(200);
    assert_eq!(list["data"].as_array().unwrap().len(), 5, "{list}");
}

#[tokio::test]
async fn a_project_sees_only_its_own_content() {
    let (app, _a, b) = spawn_two_projects();
    app.put_content("partials", "footer", &json!({"content": "A's footer"}))
        .await
        .ok(201);
    app.put_content(
        "layouts",
        "main",
        &json!({"name": "A", "html": "{{ content }}"}),
    )
    .await
    .ok(201);
    app.put_content("translations", "fr", &json!({"messages": {"hi": "Salut"}}))
        .await
        .ok(201);
    for (kind, key) in [
        ("partials", "footer"),
        ("layouts", "main"),
        ("translations", "fr"),
    ] {
        let r = app
            .admin_with(&b, GET, &format!("{A}/{kind}/{key}"))
            .go()
            .await;
        assert_error(&r, 404, "not_found");
        let r = app.admin_with(&b, GET, &format!("{A}/{kind}")).go().await;
        assert_eq!(r.ok(200)["data"], json!([]), "{r}");
    }
    // B cannot include A's partial nor default to A's layout
    let r = app
        .admin_with(&b, PUT, &format!("{A}/partials/mine"))
        .json(&json!({"content": "{% include \"partials/footer\" %}"}))
        .go()
        .await;
    assert_validation(&r, &[("content", "format")]);
    let r = app
        .admin_with(&b, PUT, &format!("{A}/project"))
        .json(&json!({"default_layout": "main"}))
        .go()
        .await;
    assert_validation(&r, &[("default_layout", "inclusion")]);
    // B's own partial of the same handle is its own
    let r = app
        .admin_with(&b, PUT, &format!("{A}/partials/footer"))
        .json(&json!({"content": "B's footer"}))
        .go()
        .await;
    assert_eq!(r.ok(201)["content"], json!("B's footer"), "{r}");
    let a = app.get_content("partials", "footer").await.ok(200);
    assert_eq!(a["content"], json!("A's footer"), "{a}");
}

#[tokio::test]
async fn a_digest_is_rendered_in_its_layout_with_the_content_of_its_close() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    app.put_content(
        "layouts",
        "digest",
        &json!({"name": "Digest", "html": "<style>li { color: #00ff00 }</style><ul>{{ content }}</ul>"}),
    )
    .await
    .ok(201);
    app.put_content(
        "translations",
        "en",
        &json!({"messages": {"new": "{{ n }} new"}}),
    )
    .await
    .ok(201);
    let email = active_channel(&app, "email", "smtp", smtp_config(&sink)).await;
    let flow = active_flow(
        &app,
        "dig",
        json!([
            {"type": "batch", "window": "15m"},
            {"type": "channel", "channel_id": s(&email["id"]), "layout": "digest", "template": {
                "subject": "{{ t('new', n=batch.count) }}",
                "body": "{{ batch.count }}",
                "html": "{% for a in batch.activities %}<li>{{ a.data.n }}</li>{% endfor %}"
            }}
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    let (ext, _) = app
        .create_user("dig", json!({"email": "ada@example.com"}))
        .await;
    let run = run_flow(&app, &fid, json!({"recipients": [ext], "data": {"n": 1}})).await;
    let first = run_notifications(&app, &s(&run["id"])).await[0].clone();
    run_one(&app, &fid, json!({"recipients": [ext], "data": {"n": 2}})).await;
    // a catalog changed before the close is the one the digest uses
    app.put_content(
        "translations",
        "en",
        &json!({"messages": {"new": "{{ n }} fresh"}}),
    )
    .await
    .ok(200);
    app.advance_clock(&json!({"by": "15m"})).await.ok(200);
    let d = wait_delivery_final(&app, &s(&delivery_of(&first, "email")["id"]), 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["data"]["subject"], json!("2 fresh"), "{d}");
    let html = s(&d["data"]["html"]);
    assert!(
        html.contains("<li style=\"color: #00ff00;\">1</li>"),
        "{html}"
    );
    assert!(
        html.contains("<li style=\"color: #00ff00;\">2</li>"),
        "{html}"
    );
    assert_eq!(sink.mails().len(), 1);
}
