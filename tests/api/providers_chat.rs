//! docs/channels/chat.md, chat / `discord`, `teams` and `slack` (the bot)
//! against wiremock on 127.0.0.1: the requests Herald sends (path, query,
//! auth header, JSON body), the message id of the answer under
//! `data.outcomes`, and how answers map to outcomes (401 unauthorized, 429 and
//! 5xx retried, other refusals failed at once, address errors
//! `invalid_address`).

use serde_json::{json, Value};
use wiremock::matchers::{body_partial_json, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

/// An active channel of `provider` with `config` and a flow sending `template` through it.
async fn chat_flow(app: &TestApp, provider: &str, config: Value, template: Value) -> Value {
    let ch = active_channel(app, "chat", provider, config).await;
    template_flow(app, &s(&ch["id"]), template).await
}

fn deploy_template() -> Value {
    json!({"subject": "Deploy {{ data.v }}", "body": "{{ data.v }} is live",
        "url": "https://example.com/deploys/{{ data.v }}"})
}

/// Mounts `answers` on POST, each answered once in order.
async fn answer_once(server: &MockServer, answers: Vec<ResponseTemplate>) {
    for a in answers {
        Mock::given(method("POST"))
            .respond_with(a)
            .up_to_n_times(1)
            .mount(server)
            .await;
    }
}

#[tokio::test]
async fn providers_discord_posts_content_and_keeps_the_message_id() {
    const HOOK: &str = "/api/webhooks/123456789/discord-secret-token";
    let dc = mock_server().await;
    Mock::given(method("POST"))
        .and(path(HOOK))
        .and(query_param("wait", "true"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"id": "1180000000000000001", "channel_id": "1170000000000000002", "type": 0}),
        ))
        .mount(&dc)
        .await;
    let app = TestApp::spawn();
    let ch = active_channel(
        &app,
        "chat",
        "discord",
        json!({"url": format!("{}{HOOK}", dc.uri()), "username": "Herald", "retry": quick_retry()}),
    )
    .await;
    assert_eq!(ch["config"]["url"], json!("********"), "{ch}");
    let flow = template_flow(&app, &s(&ch["id"]), deploy_template()).await;
    let (ext, _) = app.create_user("discord", json!({})).await;
    let d = deliver_once(&app, &flow, &ext, json!({"v": "1.2.3"})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    let o = &d["data"]["outcomes"][0];
    assert_eq!(o["message_id"], json!("1180000000000000001"), "{d}");
    assert_eq!(o["identifier"], json!("1170000000000000002"), "{d}");
    assert_eq!(o["status"], json!("sent"), "{d}");

    let reqs = received(&dc).await;
    assert_eq!(reqs.len(), 1);
    let b = req_json(&reqs[0]);
    assert_eq!(
        b["content"],
        json!("**Deploy 1.2.3**\n1.2.3 is live"),
        "{b}"
    );
    assert_eq!(b["username"], json!("Herald"), "{b}");
    assert_eq!(b["allowed_mentions"], json!({"parse": []}), "{b}");
    assert_eq!(
        b["embeds"][0]["url"],
        json!("https://example.com/deploys/1.2.3"),
        "{b}"
    );

    // a body over Discord's 2,000 characters is cut to fit
    let long = template_flow(&app, &s(&ch["id"]), json!({"body": "{{ data.text }}"})).await;
    let d = deliver_once(&app, &long, &ext, json!({"text": "x".repeat(2500)})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let reqs = received(&dc).await;
    let content = req_json(&reqs[1])["content"].as_str().unwrap().to_string();
    assert_eq!(content.chars().count(), 2000);
    assert!(content.ends_with('…'), "{content}");
    assert!(
        !app.output.text().contains("discord-secret-token"),
        "the webhook token is logged"
    );
}

#[tokio::test]
async fn providers_discord_errors_map_to_outcomes() {
    let rate = mock_server().await;
    answer_once(
        &rate,
        vec![
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(json!({"message": "You are being rate limited.",
                    "retry_after": 0.05, "global": false})),
            ResponseTemplate::new(502),
        ],
    )
    .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"id": "42"})))
        .mount(&rate)
        .await;
    let unauth = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(json!({"message": "Invalid Webhook Token", "code": 50027})),
        )
        .mount(&unauth)
        .await;
    let unknown = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(404)
                .set_body_json(json!({"message": "Unknown Webhook", "code": 10015})),
        )
        .mount(&unknown)
        .await;
    let app = TestApp::spawn();
    let (ext, _) = app.create_user("discord-err", json!({})).await;
    let cfg = |m: &MockServer| json!({"url": format!("{}/api/webhooks/1/t", m.uri()), "retry": quick_retry()});
    let f_rate = chat_flow(&app, "discord", cfg(&rate), deploy_template()).await;
    let f_unauth = chat_flow(&app, "discord", cfg(&unauth), deploy_template()).await;
    let f_unknown = chat_flow(&app, "discord", cfg(&unknown), deploy_template()).await;

    // 429 (retry_after in the body), then 502, then 200: sent on the third attempt
    let d = deliver_once(&app, &f_rate, &ext, json!({"v": "1"})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(3), "{d}");
    assert_eq!(d["data"]["outcomes"][0]["message_id"], json!("42"), "{d}");
    assert_eq!(received(&rate).await.len(), 3);
    // 401: provider_unauthorized, not retried
    let d = deliver_once(&app, &f_unauth, &ext, json!({"v": "2"})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unauthorized"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    // 404 unknown webhook: provider_rejected with Discord's code, never its text
    let d = deliver_once(&app, &f_unknown, &ext, json!({"v": "3"})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_rejected"), "{d}");
    assert_eq!(
        d["error"]["message"],
        json!("provider answered 404 (10015)"),
        "{d}"
    );
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert_eq!(received(&unauth).await.len(), 1);
    assert_eq!(received(&unknown).await.len(), 1);
}

#[tokio::test]
async fn providers_teams_posts_an_adaptive_card() {
    const HOOK: &str = "/workflows/abc/triggers/manual/paths/invoke";
    let ok = mock_server().await;
    Mock::given(method("POST"))
        .and(path(HOOK))
        .respond_with(ResponseTemplate::new(202))
        .mount(&ok)
        .await;
    let flaky = mock_server().await;
    answer_once(&flaky, vec![ResponseTemplate::new(503)]).await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("1"))
        .mount(&flaky)
        .await;
    let unauth = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&unauth)
        .await;
    let bad = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string("Bad payload: secret details"))
        .mount(&bad)
        .await;
    let app = TestApp::spawn();
    let url = format!("{}{HOOK}?sig=teams-secret-sig", ok.uri());
    let ch = active_channel(
        &app,
        "chat",
        "teams",
        json!({"url": url, "retry": quick_retry()}),
    )
    .await;
    assert_eq!(ch["config"]["url"], json!("********"), "{ch}");
    let flow = template_flow(&app, &s(&ch["id"]), deploy_template()).await;
    let (ext, _) = app.create_user("teams", json!({})).await;
    let d = deliver_once(&app, &flow, &ext, json!({"v": "1.2.3"})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert!(
        !d.to_string().contains("message_id"),
        "Teams gives no message id: {d}"
    );
    let reqs = received(&ok).await;
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        reqs[0]
            .url
            .query_pairs()
            .find(|(k, _)| k == "sig")
            .map(|(_, v)| v.into_owned()),
        Some("teams-secret-sig".to_string())
    );
    let b = req_json(&reqs[0]);
    assert_eq!(b["type"], json!("message"), "{b}");
    let att = &b["attachments"][0];
    assert_eq!(
        att["contentType"],
        json!("application/vnd.microsoft.card.adaptive"),
        "{b}"
    );
    let card = &att["content"];
    assert_eq!(card["type"], json!("AdaptiveCard"), "{b}");
    assert_eq!(card["body"][0]["type"], json!("TextBlock"), "{b}");
    assert_eq!(card["body"][0]["text"], json!("Deploy 1.2.3"), "{b}");
    assert_eq!(card["body"][1]["text"], json!("1.2.3 is live"), "{b}");
    assert_eq!(
        card["actions"][0]["url"],
        json!("https://example.com/deploys/1.2.3"),
        "{b}"
    );

    let (ext2, _) = app.create_user("teams2", json!({})).await;
    let cfg = |m: &MockServer| json!({"url": format!("{}/hook", m.uri()), "retry": quick_retry()});
    let f_flaky = chat_flow(&app, "teams", cfg(&flaky), deploy_template()).await;
    let f_unauth = chat_flow(&app, "teams", cfg(&unauth), deploy_template()).await;
    let f_bad = chat_flow(&app, "teams", cfg(&bad), deploy_template()).await;
    // 503 then 200: retried
    let d = deliver_once(&app, &f_flaky, &ext2, json!({"v": "2"})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(2), "{d}");
    // 401: provider_unauthorized at once
    let d = deliver_once(&app, &f_unauth, &ext2, json!({"v": "3"})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unauthorized"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    // 400: provider_rejected at once, the free-text answer not kept
    let d = deliver_once(&app, &f_bad, &ext2, json!({"v": "4"})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_rejected"), "{d}");
    assert_eq!(d["error"]["message"], json!("provider answered 400"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert!(
        !app.output.text().contains("teams-secret-sig"),
        "the URL is logged"
    );
}

const BOT_TOKEN: &str = "xoxb-1111-2222-slack-bot-secret";

fn slack_ok() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(
        json!({"ok": true, "channel": "D0123", "ts": "1700000000.000100",
            "message": {"text": "x"}}),
    )
}

/// A Slack Web API answer to a message for `channel`.
async fn slack_for(server: &MockServer, channel: &str, answer: ResponseTemplate, times: u64) {
    Mock::given(method("POST"))
        .and(path("/api/chat.postMessage"))
        .and(body_partial_json(json!({"channel": channel})))
        .respond_with(answer)
        .up_to_n_times(times)
        .mount(server)
        .await;
}

#[tokio::test]
async fn providers_slack_bot_posts_to_the_users_slack_id() {
    let sl = mock_server().await;
    let err = |e: &str| ResponseTemplate::new(200).set_body_json(json!({"ok": false, "error": e}));
    slack_for(&sl, "U_AUTH", err("invalid_auth"), 10).await;
    slack_for(&sl, "U_GONE", err("user_not_found"), 10).await;
    slack_for(&sl, "U_LONG", err("msg_too_long"), 10).await;
    slack_for(
        &sl,
        "U_RATE",
        ResponseTemplate::new(429)
            .insert_header("retry-after", "0")
            .set_body_json(json!({"ok": false, "error": "ratelimited"})),
        1,
    )
    .await;
    slack_for(&sl, "U_RATE", ResponseTemplate::new(500), 1).await;
    Mock::given(method("POST"))
        .and(path("/api/chat.postMessage"))
        .respond_with(slack_ok())
        .mount(&sl)
        .await;
    let app = TestApp::spawn();
    let ch = active_channel(
        &app,
        "chat",
        "slack",
        json!({"token": BOT_TOKEN, "recipient_field": "slack_id", "base_url": sl.uri(),
            "retry": quick_retry()}),
    )
    .await;
    assert_eq!(ch["config"]["token"], json!("********"), "{ch}");
    let flow = template_flow(&app, &s(&ch["id"]), deploy_template()).await;
    let user = |id: &str| json!({"custom_fields": {"slack_id": id}});

    let (ext, _) = app.create_user("slack-bot", user("U0123")).await;
    let d = deliver_once(&app, &flow, &ext, json!({"v": "1.2.3"})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let o = &d["data"]["outcomes"][0];
    assert_eq!(o["message_id"], json!("1700000000.000100"), "{d}");
    assert_eq!(o["identifier"], json!("U0123"), "{d}");
    let reqs = received(&sl).await;
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        req_header(&reqs[0], "authorization"),
        Some(format!("Bearer {BOT_TOKEN}"))
    );
    let b = req_json(&reqs[0]);
    assert_eq!(b["channel"], json!("U0123"), "{b}");
    assert_eq!(b["text"], json!("1.2.3 is live"), "{b}");
    assert_eq!(b["blocks"][0]["type"], json!("header"), "{b}");
    assert_eq!(b["blocks"][0]["text"]["text"], json!("Deploy 1.2.3"), "{b}");

    // no Slack id (or only under another field): skipped, nothing sent
    let (none, _) = app
        .create_user(
            "slack-none",
            json!({"custom_fields": {"slack_user_id": "U9"}}),
        )
        .await;
    let d = deliver_once(&app, &flow, &none, json!({"v": "2"})).await;
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("missing_address"), "{d}");
    assert_eq!(received(&sl).await.len(), 1);

    let cases = [
        (
            "U_AUTH",
            "provider_unauthorized",
            "provider answered 200 (invalid_auth)",
        ),
        (
            "U_GONE",
            "invalid_address",
            "provider answered 200 (user_not_found)",
        ),
        (
            "U_LONG",
            "provider_rejected",
            "provider answered 200 (msg_too_long)",
        ),
    ];
    for (id, code, message) in cases {
        let (ext, _) = app.create_user("slack-err", user(id)).await;
        let d = deliver_once(&app, &flow, &ext, json!({"v": "3"})).await;
        assert_eq!(d["status"], json!("failed"), "{id}: {d}");
        assert_eq!(d["error"]["code"], json!(code), "{id}: {d}");
        assert_eq!(d["error"]["message"], json!(message), "{id}: {d}");
        assert_eq!(d["attempts"], json!(1), "{id}: {d}");
    }
    // 429 ratelimited, then 500, then ok: retried
    let (ext, _) = app.create_user("slack-rate", user("U_RATE")).await;
    let d = deliver_once(&app, &flow, &ext, json!({"v": "4"})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(3), "{d}");
    assert!(
        !app.output.text().contains(BOT_TOKEN),
        "the bot token is logged"
    );

    // the default field is slack_user_id
    let ch2 = active_channel(
        &app,
        "chat",
        "slack",
        json!({"token": BOT_TOKEN, "base_url": sl.uri()}),
    )
    .await;
    let flow2 = template_flow(&app, &s(&ch2["id"]), deploy_template()).await;
    let d = deliver_once(&app, &flow2, &none, json!({"v": "5"})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let last = received(&sl).await.pop().unwrap();
    assert_eq!(req_json(&last)["channel"], json!("U9"));
}
