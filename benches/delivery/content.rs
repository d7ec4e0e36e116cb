//! `content`: what a project's content (docs/CONTENT.md) costs a run. Two
//! flows send the same email to N recipients through a sandboxed email
//! channel (each delivery rendered and stored, nothing sent): one plain
//! (subject, body and HTML written inline, `"layout": null`), one with a
//! layout whose `<style>` block is inlined into the elements, a partial it
//! includes and `t()` messages in every part, to recipients in two locales
//! (`fr-CA`, which falls back to `fr`, and `en`). Their runs alternate on
//! one server; the 202 of a run comes once every recipient's email is
//! rendered and the run committed, so the difference between the two
//! medians, per delivery, is the content's cost. Reports the median 202 of
//! each, µs per delivery, and the ratio; a third flow, the same layout
//! without its `<style>` block, separates the CSS inlining from the rest.

use crate::herald::Server;
use crate::load::{num, pct};
use reqwest::Method;
use serde_json::{json, Value};
use std::time::Duration;

/// Sizes: recipients per run, and runs of each flow.
pub fn sizes(smoke: bool) -> (usize, usize) {
    if smoke {
        (20, 2)
    } else {
        (1000, 11)
    }
}

async fn put(api: &crate::herald::Api, path: &str, body: Value) {
    let (s, v) = api.admin(Method::PUT, path, Some(body)).await;
    assert!(s == 200 || s == 201, "PUT {path}: {s} {v}");
}

pub async fn content(n: usize, runs: usize) -> Value {
    let srv = Server::start();
    let api = srv.api();
    let (s, ch) = api
        .admin(
            Method::POST,
            "/admin/v1/channels",
            Some(json!({"type": "email", "provider": "smtp", "sandbox": true,
                "config": {"host": "127.0.0.1", "port": 2525, "tls": "none",
                           "from": "Bench <bench@herald.test>"}})),
        )
        .await;
    assert_eq!(s, 201, "email channel: {ch}");
    put(
        &api,
        "/admin/v1/partials/footer",
        json!({"content": "<p class=\"footer\">{{ brand.name }} · {{ t(\"footer.note\") }}</p>"}),
    )
    .await;
    put(&api, "/admin/v1/layouts/main", json!({"name": "Main",
        "html": "<html><head><style>body { font-family: sans-serif } .card { padding: 24px; border: 1px solid #e5e7eb } h1 { font-size: 20px } .footer { color: #6b7280; font-size: 12px }</style></head><body><div class=\"card\">{{ content }}</div>{% include \"partials/footer\" %}</body></html>",
        "text": "{{ content }}\n\n-- {{ brand.name }}"})).await;
    // The same layout without its <style> block: nothing to inline.
    put(&api, "/admin/v1/layouts/bare", json!({"name": "Bare",
        "html": "<html><head></head><body><div class=\"card\">{{ content }}</div>{% include \"partials/footer\" %}</body></html>",
        "text": "{{ content }}\n\n-- {{ brand.name }}"})).await;
    for (locale, hello, ready, note) in [
        (
            "en",
            "Welcome, {{ name }}!",
            "Your account is ready.",
            "You get this because you signed up.",
        ),
        (
            "fr",
            "Bienvenue, {{ name }} !",
            "Votre compte est prêt.",
            "Vous recevez ceci car vous êtes inscrit.",
        ),
    ] {
        put(
            &api,
            &format!("/admin/v1/translations/{locale}"),
            json!({"messages": {
            "welcome": {"subject": hello, "body": ready}, "footer": {"note": note}}}),
        )
        .await;
    }
    put(
        &api,
        "/admin/v1/project",
        json!({"branding": {"name": "Acme"}}),
    )
    .await;
    let id = ch["id"].clone();
    api.flow(
        "plain",
        json!([{"type": "channel", "channel_id": id, "layout": null, "template": {
        "subject": "Welcome, {{ recipient.external_id }}!",
        "body": "Your account is ready.",
        "html": "<h1>Welcome, {{ recipient.external_id }}!</h1><p>Your account is ready.</p>"}}]),
    )
    .await;
    for (flow, layout) in [("content", "main"), ("nocss", "bare")] {
        api.flow(flow, json!([{"type": "channel", "channel_id": id, "layout": layout, "template": {
            "subject": "{{ t(\"welcome.subject\", name=recipient.external_id) }}",
            "body": "{{ t(\"welcome.body\") }}",
            "html": "<h1>{{ t(\"welcome.subject\", name=recipient.external_id) }}</h1><p>{{ t(\"welcome.body\") }}</p>"}}]))
        .await;
    }
    // The recipients exist beforehand (as in the pipeline), half in fr-CA.
    let recipients: Vec<Value> = (0..n)
        .map(|i| json!({"external_id": format!("c-{i}"), "locale": if i % 2 == 0 { "fr-CA" } else { "en" }}))
        .collect();
    let (s, v, _) = api.run("plain", json!({"recipients": recipients})).await;
    assert_eq!(s, 202, "setup run: {v}");
    api.wait_idle(Duration::from_secs(120)).await;
    let names: Vec<Value> = (0..n).map(|i| json!(format!("c-{i}"))).collect();
    let body = json!({"recipients": names});
    let (mut plain, mut with, mut nocss) = (vec![], vec![], vec![]);
    for i in 0..runs * 3 {
        let (flow, out) = match i % 3 {
            0 => ("plain", &mut plain),
            1 => ("nocss", &mut nocss),
            // last, so the latest deliveries are a content run's
            _ => ("content", &mut with),
        };
        let (s, v, d) = api.run(flow, body.clone()).await;
        assert_eq!(s, 202, "{flow} run: {v}");
        out.push(d.as_secs_f64() * 1000.0);
        // Each run measured on a quiet server: its deliveries settled.
        api.wait_idle(Duration::from_secs(120)).await;
    }
    // What the last (content) run stored: a layout's inlined style.
    let (_, list) = api
        .admin(Method::GET, "/admin/v1/deliveries?limit=1000", None)
        .await;
    let styled = list["items"].as_array().is_some_and(|ds| {
        ds.iter().any(|d| {
            d["data"]["html"]
                .as_str()
                .is_some_and(|h| h.contains("style="))
        })
    });
    plain.sort_by(f64::total_cmp);
    with.sort_by(f64::total_cmp);
    nocss.sort_by(f64::total_cmp);
    let (p, c, b) = (pct(&plain, 50.0), pct(&with, 50.0), pct(&nocss, 50.0));
    let per = |ms: f64| ms * 1000.0 / n as f64;
    json!({
        "scenario": "content",
        "recipients": n,
        "runs": runs,
        "plain_202_p50_ms": num(p),
        "content_202_p50_ms": num(c),
        "plain_us_per_delivery": num(per(p)),
        "content_us_per_delivery": num(per(c)),
        "ratio": num(c / p),
        "no_css_202_p50_ms": num(b),
        "no_css_us_per_delivery": num(per(b)),
        "no_css_ratio": num(b / p),
        "sample_styled": styled,
    })
}
