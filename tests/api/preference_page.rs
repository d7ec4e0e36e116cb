//! The hosted preference page (docs/API.md §6, "Preference page"): a signed
//! link from `POST /users/{id}/preference_link`, the page it opens (every
//! name escaped, the security headers), its form saving through the same
//! path as a preferences PUT (a category turned off skips the next run, a
//! critical flow stays on), the form's CSRF and origin checks, and links
//! that no longer open: expired, tampered, issued before a rotation; and
//! `{{ preferences_url }}` in an email, a link made at the send.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

const CATEGORY_NAME: &str = "Comments <script>alert(1)</script>";
const FLOW_NAME: &str = "Digest & <b>news</b>";

fn prefs_path(ext: &str) -> String {
    format!("{A}/users/{}/preferences", enc(ext))
}

fn link_path(ext: &str) -> String {
    format!("{A}/users/{}/preference_link", enc(ext))
}

/// A client that shows redirects instead of following them.
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .unwrap()
}

/// A project with a category `comments` (a name with markup) and three
/// active in-app flows: `comment` in it, `digest` outside any category,
/// `reset` critical; and a user.
struct Setup {
    app: TestApp,
    comment: Value,
    digest: Value,
    reset: Value,
    ext: String,
}

async fn setup() -> Setup {
    let app = TestApp::spawn();
    app.admin(PUT, &format!("{A}/categories/comments"))
        .json(&json!({"name": CATEGORY_NAME}))
        .go()
        .await
        .ok(201);
    let inapp = in_app_channel(&app).await;
    let steps = json!([channel_step(&inapp, None, "Hi")]);
    let mut flows = vec![];
    for (tag, extra) in [
        ("comment", json!({"categories": ["comments"]})),
        ("digest", json!({"name": FLOW_NAME})),
        ("reset", json!({"critical": true})),
    ] {
        let mut body = json!({"handle": handle(tag), "name": tag, "steps": steps});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let r = app
            .admin(POST, &format!("{A}/flows"))
            .json(&body)
            .go()
            .await;
        let f = r.ok(201);
        flows.push(activate(&app, &s(&f["id"])).await);
    }
    let (ext, _) = app.create_user("page", json!({})).await;
    let reset = flows.pop().unwrap();
    let digest = flows.pop().unwrap();
    let comment = flows.pop().unwrap();
    Setup {
        app,
        comment,
        digest,
        reset,
        ext,
    }
}

async fn issue(app: &TestApp, ext: &str, body: Value) -> Value {
    app.admin(POST, &link_path(ext))
        .json(&body)
        .go()
        .await
        .ok(200)
}

/// `GET /p/{token}` (optionally with a query).
async fn page(app: &TestApp, token: &str, query: &str) -> Resp {
    app.request(GET, &format!("/p/{token}{query}")).go().await
}

/// The values of the hidden inputs named `name` in `html`.
fn hidden(html: &str, name: &str) -> Vec<String> {
    let re = regex::Regex::new(&format!(
        r#"<input type="hidden" name="{name}" value="([^"]*)">"#
    ))
    .unwrap();
    re.captures_iter(html).map(|c| c[1].to_string()).collect()
}

/// Stands for the origin of the node the form is posted to (in a cluster
/// each test node is its own `--public-url`).
const OWN_ORIGIN: &str = "own";

/// A form post to the page, with these headers.
async fn post_form(
    app: &TestApp, token: &str, form: &[(String, String)], headers: &[(&str, &str)],
) -> Resp {
    let base = app.next_address().to_string();
    let mut req = no_redirects()
        .post(format!("{base}/p/{token}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(form)
                .finish(),
        );
    for (k, v) in headers {
        let v = if *v == OWN_ORIGIN { base.as_str() } else { v };
        req = req.header(*k, v);
    }
    req.go().await
}

/// The value of the page's `<input type="time">` named `name`.
fn time_input(html: &str, name: &str) -> String {
    let re = regex::Regex::new(&format!(r#"name="{name}" value="([^"]*)""#)).unwrap();
    re.captures(html)
        .map(|c| c[1].to_string())
        .unwrap_or_default()
}

/// The form the page shows with every box checked but those in `off`,
/// with its csrf value (and its time inputs, as a browser posts them).
fn form_from(html: &str, off: &[&str]) -> Vec<(String, String)> {
    let mut form = vec![("csrf".to_string(), hidden(html, "csrf")[0].clone())];
    for t in ["qh.from", "qh.to"] {
        form.push((t.to_string(), time_input(html, t)));
    }
    for name in hidden(html, "shown") {
        form.push(("shown".into(), name.clone()));
        if !off.contains(&name.as_str()) {
            form.push((name, "on".into()));
        }
    }
    form
}

async fn in_app_status(app: &TestApp, flow: &Value, ext: &str) -> String {
    let (_, n) = run_one(app, &s(&flow["id"]), json!({"recipients": [ext]})).await;
    s(&delivery_of(&n, "in_app")["status"])
}

#[track_caller]
fn assert_link_not_found(r: &Resp) {
    let d = assert_error(r, 404, "not_found");
    assert_eq!(d["resource"], json!("preference_link"), "{r}");
}

#[tokio::test]
async fn a_link_opens_the_users_page_with_every_name_escaped() {
    let Setup {
        app,
        comment,
        digest,
        reset,
        ext,
    } = setup().await;
    let link = issue(&app, &ext, json!({})).await;
    let token = s(&link["token"]);
    let url = s(&link["url"]);
    assert!(url.starts_with("http://127.0.0.1:"), "{link}");
    assert!(url.ends_with(&format!("/p/{token}")), "{link}");
    let expires = chrono::DateTime::parse_from_rfc3339(&s(&link["expires_at"])).unwrap();
    let days = (expires.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_hours();
    assert!(
        (29 * 24..=30 * 24).contains(&days),
        "30 days by default: {link}"
    );
    // a body is optional
    let r = app.admin(POST, &link_path(&ext)).go().await;
    r.ok(200);

    // bad lifetimes, an unknown user
    let r = app
        .admin(POST, &link_path(&ext))
        .json(&json!({"expires_in": "366d"}))
        .go()
        .await;
    assert_validation(&r, &[("expires_in", "number")]);
    for bad in [json!("soon"), json!(0), json!("0s")] {
        let r = app
            .admin(POST, &link_path(&ext))
            .json(&json!({ "expires_in": bad }))
            .go()
            .await;
        assert_validation(&r, &[("expires_in", "format")]);
    }
    let r = app.admin(POST, &link_path("nobody-here")).go().await;
    assert_not_found(&r, "user", "nobody-here");

    let r = page(&app, &token, "").await;
    assert_eq!(r.status, 200, "{r}");
    let h = |n: &str| r.header(n).unwrap_or_default();
    assert!(h("content-type").starts_with("text/html"), "{r}");
    let csp = h("content-security-policy");
    for part in [
        "default-src 'none'",
        "style-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ] {
        assert!(csp.contains(part), "{part}: {r}");
    }
    assert_eq!(h("cache-control"), "no-store", "{r}");
    assert_eq!(h("referrer-policy"), "no-referrer", "{r}");
    assert_eq!(h("x-content-type-options"), "nosniff", "{r}");
    let html = &r.text;
    assert!(html.contains("<html lang=\"en\">"), "{r}");
    assert!(html.contains("<title>"), "{r}");
    assert!(
        !html.contains("<script"),
        "no script at all, escaped names: {r}"
    );
    assert!(
        html.contains("Comments &lt;script&gt;alert(1)&lt;/script&gt;"),
        "{r}"
    );
    assert!(html.contains("Digest &amp; &lt;b&gt;news&lt;/b&gt;"), "{r}");
    assert!(!html.contains("<b>news"), "{r}");
    // what is shown: the channel types, the category (on and per channel
    // type), the flows outside any category; the critical one not editable
    let shown = hidden(html, "shown");
    let (dh, ch, rh) = (
        s(&digest["handle"]),
        s(&comment["handle"]),
        s(&reset["handle"]),
    );
    for name in [
        "ct.email".to_string(),
        "ct.in_app".into(),
        "category.comments".into(),
        "category.comments.in_app".into(),
        format!("flow.{dh}"),
    ] {
        assert!(shown.contains(&name), "{name} shown: {shown:?}");
    }
    assert!(
        !shown.iter().any(|n| n.contains(&ch)),
        "a category's flow: {shown:?}"
    );
    assert!(
        !shown.iter().any(|n| n.contains(&rh)),
        "critical: {shown:?}"
    );
    assert!(
        html.contains(&format!("id=\"f-flow-{rh}\" checked disabled")),
        "{r}"
    );
    // every checkbox has its label
    let ids = regex::Regex::new(r#"<input type="checkbox" id="([^"]+)""#).unwrap();
    for c in ids.captures_iter(html) {
        assert!(
            html.contains(&format!("<label for=\"{}\">", &c[1])),
            "{}",
            &c[1]
        );
    }
    assert_eq!(hidden(html, "csrf").len(), 1, "{r}");
    assert!(!html.contains("Saved"), "{r}");
    // `saved` is `1` or absent
    let r = page(&app, &token, "?saved=yes").await;
    assert_invalid_param(&r, "saved");

    // its stylesheet is same-origin
    let css = app.request(GET, "/p/preferences.css").go().await;
    assert_eq!(css.status, 200, "{css}");
    assert!(css.header("content-type").unwrap().starts_with("text/css"));
}

#[tokio::test]
async fn a_saved_form_turns_a_category_off_and_leaves_critical_flows_on() {
    let Setup {
        app,
        comment,
        digest,
        reset,
        ext,
    } = setup().await;
    let token = s(&issue(&app, &ext, json!({"expires_in": "1h"})).await["token"]);
    let html = page(&app, &token, "").await.text;
    let mut form = form_from(&html, &["category.comments"]);
    // a crafted post naming the critical flow, unchecked: never written
    let rh = s(&reset["handle"]);
    form.push(("shown".into(), format!("flow.{rh}")));
    let r = post_form(
        &app,
        &token,
        &form,
        &[("origin", OWN_ORIGIN), ("sec-fetch-site", "same-origin")],
    )
    .await;
    assert_eq!(r.status, 303, "{r}");
    let location = r.header("location").unwrap();
    assert!(location.ends_with(&format!("/p/{token}?saved=1")), "{r}");
    assert_eq!(
        r.header("cache-control").as_deref(),
        Some("no-store"),
        "{r}"
    );
    let after = page(&app, &token, "?saved=1").await;
    assert_eq!(after.status, 200, "{after}");
    assert!(after.text.contains("Saved"), "{after}");
    assert!(
        after
            .text
            .contains("id=\"f-category-comments\" name=\"category.comments\" value=\"on\">"),
        "unchecked now: {after}"
    );

    // the Admin API sees it; the critical flow is still on
    let p = app.admin(GET, &prefs_path(&ext)).go().await.ok(200);
    assert_eq!(p["categories"]["comments"]["enabled"], json!(false), "{p}");
    assert_eq!(
        p["categories"]["comments"]["channel_types"]["email"],
        json!(true),
        "{p}"
    );
    assert_eq!(p["flows"][&rh]["critical"], json!(true), "{p}");
    assert_eq!(p["flows"][&rh]["enabled"], json!(true), "{p}");
    assert_eq!(
        p["flows"][s(&digest["handle"])]["enabled"],
        json!(true),
        "{p}"
    );

    // the next run of the category's flow is skipped; the others go out
    assert_eq!(in_app_status(&app, &comment, &ext).await, "skipped");
    assert_ne!(in_app_status(&app, &digest, &ext).await, "skipped");
    assert_ne!(in_app_status(&app, &reset, &ext).await, "skipped");

    // everything off but in-app: the critical flow still arrives
    let html = page(&app, &token, "").await.text;
    let off: Vec<String> = hidden(&html, "shown")
        .into_iter()
        .filter(|n| n != "ct.in_app")
        .collect();
    let off: Vec<&str> = off.iter().map(String::as_str).collect();
    let r = post_form(&app, &token, &form_from(&html, &off), &[]).await;
    assert_eq!(r.status, 303, "{r}");
    let p = app.admin(GET, &prefs_path(&ext)).go().await.ok(200);
    assert_eq!(
        p["flows"][s(&digest["handle"])]["enabled"],
        json!(false),
        "{p}"
    );
    assert_eq!(p["channel_types"]["email"], json!(false), "{p}");
    assert_eq!(p["channel_types"]["in_app"], json!(true), "{p}");
    assert_eq!(in_app_status(&app, &digest, &ext).await, "skipped");
    assert_ne!(in_app_status(&app, &reset, &ext).await, "skipped");

    // quiet hours: the page's times, saved as the user's; unchecked, cleared
    let html = page(&app, &token, "").await.text;
    let mut form: Vec<(String, String)> = form_from(&html, &[])
        .into_iter()
        .filter(|(k, _)| k != "qh.from" && k != "qh.to")
        .collect();
    form.push(("qh.from".into(), "21:15".into()));
    form.push(("qh.to".into(), "06:45".into()));
    let r = post_form(&app, &token, &form, &[]).await;
    assert_eq!(r.status, 303, "{r}");
    let p = app.admin(GET, &prefs_path(&ext)).go().await.ok(200);
    assert_eq!(p["quiet_hours"]["from"], json!("21:15"), "{p}");
    assert_eq!(p["quiet_hours"]["to"], json!("06:45"), "{p}");
    let html = page(&app, &token, "").await.text;
    assert_eq!(time_input(&html, "qh.from"), "21:15");
    let r = post_form(&app, &token, &form_from(&html, &["qh"]), &[]).await;
    assert_eq!(r.status, 303, "{r}");
    let p = app.admin(GET, &prefs_path(&ext)).go().await.ok(200);
    assert_eq!(p["quiet_hours"], json!(null), "{p}");
}

#[tokio::test]
async fn a_form_without_the_pages_csrf_or_from_another_site_is_refused() {
    let Setup { app, ext, .. } = setup().await;
    let token = s(&issue(&app, &ext, json!({})).await["token"]);
    let (other, _) = app.create_user("other", json!({})).await;
    let other_token = s(&issue(&app, &other, json!({})).await["token"]);
    let html = page(&app, &token, "").await.text;
    let good = form_from(&html, &["category.comments", "ct.email"]);
    let without: Vec<_> = good.iter().filter(|(k, _)| k != "csrf").cloned().collect();
    let with = |csrf: &str| {
        let mut f = without.clone();
        f.push(("csrf".into(), csrf.into()));
        f
    };
    // the other user's page's csrf value does not fit this page
    let other_html = page(&app, &other_token, "").await.text;
    let other_csrf = hidden(&other_html, "csrf")[0].clone();

    let reason = |r: &Resp| assert_error(r, 400, "bad_request")["reason"].clone();
    let r = post_form(&app, &token, &without, &[]).await;
    assert_eq!(reason(&r), json!("invalid_csrf"), "{r}");
    let r = post_form(&app, &token, &with("AAAA"), &[]).await;
    assert_eq!(reason(&r), json!("invalid_csrf"), "{r}");
    let r = post_form(&app, &token, &with(&other_csrf), &[]).await;
    assert_eq!(reason(&r), json!("invalid_csrf"), "{r}");
    let r = post_form(&app, &token, &good, &[("origin", "http://evil.example")]).await;
    assert_eq!(reason(&r), json!("cross_site"), "{r}");
    let r = post_form(&app, &token, &good, &[("origin", "null")]).await;
    assert_eq!(reason(&r), json!("cross_site"), "{r}");
    let r = post_form(&app, &token, &good, &[("sec-fetch-site", "cross-site")]).await;
    assert_eq!(reason(&r), json!("cross_site"), "{r}");
    // not a form
    let r = no_redirects()
        .post(app.url(&format!("/p/{token}")))
        .json(&json!({"csrf": "x"}))
        .go()
        .await;
    assert_eq!(reason(&r), json!("invalid_form"), "{r}");
    // too large
    let mut big = good.clone();
    big.push(("pad".into(), "x".repeat(70 * 1024)));
    let r = post_form(&app, &token, &big, &[]).await;
    assert_validation(&r, &[("body", "length")]);

    // nothing was stored
    let p = app.admin(GET, &prefs_path(&ext)).go().await.ok(200);
    assert_eq!(p["categories"]["comments"]["enabled"], json!(true), "{p}");
    assert_eq!(p["channel_types"]["email"], json!(true), "{p}");
    // and the same form with its own csrf value saves (posted as a browser
    // posts it from a no-referrer page: an opaque origin, same-origin fetch)
    let r = post_form(
        &app,
        &token,
        &good,
        &[("origin", "null"), ("sec-fetch-site", "same-origin")],
    )
    .await;
    assert_eq!(r.status, 303, "{r}");
    let p = app.admin(GET, &prefs_path(&ext)).go().await.ok(200);
    assert_eq!(p["channel_types"]["email"], json!(false), "{p}");
}

#[tokio::test]
async fn expired_tampered_and_revoked_links_are_not_found() {
    let Setup { app, ext, .. } = setup().await;
    // expired
    let short = s(&issue(&app, &ext, json!({"expires_in": "1s"})).await["token"]);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_link_not_found(&page(&app, &short, "").await);
    assert_link_not_found(&post_form(&app, &short, &[], &[]).await);

    // tampered: a character changed, cut short, not a token at all
    let token = s(&issue(&app, &ext, json!({})).await["token"]);
    assert_eq!(page(&app, &token, "").await.status, 200);
    let mut chars: Vec<char> = token.chars().collect();
    chars[10] = if chars[10] == 'A' { 'B' } else { 'A' };
    let tampered: String = chars.into_iter().collect();
    let r = page(&app, &tampered, "").await;
    assert_link_not_found(&r);
    assert!(!r.text.contains(&ext), "nothing of the user: {r}");
    assert_link_not_found(&page(&app, &token[..token.len() - 4], "").await);
    assert_link_not_found(&page(&app, "nope", "").await);

    // issued before a rotation: refused, GET and POST alike; a new one opens
    let html = page(&app, &token, "").await.text;
    let form = form_from(&html, &["ct.email"]);
    let r = app
        .admin(POST, &format!("{A}/project/rotate_link_secret"))
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    assert_link_not_found(&page(&app, &token, "").await);
    assert_link_not_found(&post_form(&app, &token, &form, &[]).await);
    let p = app.admin(GET, &prefs_path(&ext)).go().await.ok(200);
    assert_eq!(p["channel_types"]["email"], json!(true), "{p}");
    let fresh = s(&issue(&app, &ext, json!({})).await["token"]);
    assert_eq!(page(&app, &fresh, "").await.status, 200);

    // the user deleted: the link goes with them
    app.admin(DELETE, &format!("{A}/users/{}", enc(&ext)))
        .go()
        .await;
    assert_link_not_found(&page(&app, &fresh, "").await);
}

/// `{{ preferences_url }}` in an email is a link, made at the send, that
/// opens the recipient's page; an in-app entry's is empty; the stored
/// content keeps the mark, not a token.
#[tokio::test]
async fn an_emails_preferences_url_opens_the_recipients_page() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    let email = active_channel(
        &app,
        "email",
        "smtp",
        json!({"host": "127.0.0.1", "port": sink.port, "tls": "none",
            "from": "Herald <noreply@herald.test>", "retry": quick_retry()}),
    )
    .await;
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "purl",
        json!([
            channel_step(
                &s(&email["id"]),
                Some("News"),
                "Manage: {{ preferences_url }}"
            ),
            channel_step(&inapp, None, "[{{ preferences_url }}]"),
        ]),
    )
    .await;
    let (ext, _) = app
        .create_user(
            "purl",
            json!({"email": "ada@example.com", "first_name": "Ada"}),
        )
        .await;
    let (_, n) = run_one(&app, &s(&flow["id"]), json!({"recipients": [ext]})).await;
    let d = wait_delivery_final(&app, &s(&delivery_of(&n, "email")["id"]), 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let mails = sink.mails();
    assert_eq!(mails.len(), 1, "{mails:?}");
    // the text as sent, soft line breaks and =3D of quoted-printable undone
    let text = mails[0].data.replace("=\r\n", "").replace("=3D", "=");
    let re = regex::Regex::new(r"http://[0-9.:]+/p/[A-Za-z0-9_-]+").unwrap();
    let url = re
        .find(&text)
        .unwrap_or_else(|| panic!("a link in the mail: {text}"))
        .as_str()
        .to_string();
    let r = reqwest::get(&url).await.unwrap();
    assert_eq!(r.status(), 200, "{url}");
    let html = r.text().await.unwrap();
    assert!(html.contains("Notification preferences"), "{html}");
    // stored: the mark, never the link; the in-app entry has none
    let stored = app
        .admin(GET, &format!("{A}/deliveries/{}", s(&d["id"])))
        .go()
        .await
        .ok(200);
    assert_eq!(
        stored["data"]["body"],
        json!("Manage: herald:preferences_url"),
        "{stored}"
    );
    let feed = wait_feed(&app, &ext, 1).await;
    assert_eq!(feed["items"][0]["data"]["body"], json!("[]"), "{feed}");
}
