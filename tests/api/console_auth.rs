//! The console's door (docs/CONSOLE.md): `herald console add-member` on a
//! stopped store and on a running server, one-time sign-in links that
//! expire, passwords set through them, sign-in with one generic failure and
//! its rate limits, the session cookie's flags, sign-out, the Admin API
//! with a session (CSRF token required, roles enforced by the server), the
//! owners' Members page, and a session made on one node used on another.

use serde_json::json;
use std::time::Duration;

use crate::engine_helpers::*;
use crate::helpers::*;

const PW: &str = "correct horse battery";

/// A session signed in with a set password (a `ConsoleSession` of a response).
fn session_of(r: &Resp, page: &Resp) -> ConsoleSession {
    ConsoleSession {
        cookie: session_cookie_of(r).unwrap_or_else(|| panic!("no session cookie: {r}")),
        csrf: csrf_of(&page.text),
    }
}

#[tokio::test]
async fn add_member_on_a_stopped_store_then_the_link_signs_in_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(&dir, &keys);
    assert_eq!(app.stop().code(), Some(0));

    let out = console_cmd(
        &dir,
        &[
            "add-member",
            "Ana@Example.com",
            "--project",
            "default",
            "--role",
            "owner",
            "--public-url",
            "https://herald.example.com/",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stdout
            .contains("sign_in_link: https://herald.example.com/console/invite/"),
        "{out:?}"
    );
    assert!(
        out.stdout.contains("member: ana@example.com (owner)"),
        "{out:?}"
    );
    let token = link_token(&out);
    // An unknown project: exit 1, said plainly.
    let bad = console_cmd(
        &dir,
        &[
            "add-member",
            "x@example.com",
            "--project",
            "nope",
            "--role",
            "owner",
        ],
    );
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    assert!(bad.stderr.contains("no project named \"nope\""), "{bad:?}");
    // A role that is none: usage, exit 2.
    let usage = console_cmd(
        &dir,
        &[
            "add-member",
            "x@example.com",
            "--project",
            "default",
            "--role",
            "admin",
        ],
    );
    assert_eq!(usage.status.code(), Some(2), "{usage:?}");

    let app = TestApp::spawn_on(&dir, &keys);
    let page = app.console_invite_page(&token).await;
    assert_eq!(page.status, 200, "{page}");
    assert!(page.text.contains("ana@example.com"), "{page}");
    assert!(
        page.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("script-src 'self'"),
        "{page}"
    );
    // The policy and the confirmation, then the password is set.
    let short = app.console_set_password(&token, "short", "short").await;
    assert_eq!(short.status, 422, "{short}");
    assert!(short.text.contains("at least 12 characters"), "{short}");
    let differ = app
        .console_set_password(&token, PW, "another password")
        .await;
    assert_eq!(differ.status, 422, "{differ}");
    let r = app.console_set_password(&token, PW, PW).await;
    assert_eq!(r.status, 303, "{r}");
    assert_eq!(r.headers["location"], "/console", "{r}");
    let cookie = session_set_cookie(&r);
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Lax"), "{cookie}");
    assert!(cookie.contains("Path=/"), "{cookie}");
    assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    let token_cookie = session_cookie_of(&r).unwrap();
    let members = app
        .console_page(&token_cookie, "/console/settings/members")
        .await;
    assert_eq!(members.status, 200, "{members}");
    assert!(members.text.contains("ana@example.com"), "{members}");
    // Once only.
    assert_eq!(app.console_invite_page(&token).await.status, 404);
    let again = app.console_set_password(&token, PW, PW).await;
    assert_eq!(again.status, 404, "{again}");
    assert!(session_cookie_of(&again).is_none(), "{again}");
    // And the password signs in (the email in any case).
    let login = app.console_login("ANA@example.com", PW).await;
    assert_eq!(login.status, 303, "{login}");
    assert!(session_cookie_of(&login).is_some(), "{login}");
}

#[tokio::test]
async fn add_member_on_a_running_server_and_a_fresh_link_resets() {
    let app = TestApp::spawn();
    let out = console_cmd(
        &app.data_dir,
        &[
            "add-member",
            "vi@example.com",
            "--project",
            "default",
            "--role",
            "viewer",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    if !pg_mode() {
        // Through the server: the link starts with its address.
        assert!(
            out.stdout
                .contains(&format!("sign_in_link: {}/console/invite/", app.address)),
            "{out:?}"
        );
    }
    let token = link_token(&out);
    assert_eq!(app.console_set_password(&token, PW, PW).await.status, 303);
    // A second add-member is a reset: a new link, a new password; the old
    // password works until the link is used.
    let reset = app.console_add_member("vi@example.com", "viewer");
    assert_eq!(app.console_login("vi@example.com", PW).await.status, 303);
    let new_pw = "a brand new passphrase";
    assert_eq!(
        app.console_set_password(&reset, new_pw, new_pw)
            .await
            .status,
        303
    );
    assert_eq!(app.console_login("vi@example.com", PW).await.status, 401);
    assert_eq!(
        app.console_login("vi@example.com", new_pw).await.status,
        303
    );
}

#[tokio::test]
async fn a_link_stops_working_when_it_expires() {
    let app = TestApp::spawn();
    let out = console_cmd(
        &app.data_dir,
        &[
            "add-member",
            "late@example.com",
            "--project",
            "default",
            "--role",
            "editor",
            "--valid-for",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let token = link_token(&out);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let page = app.console_invite_page(&token).await;
    assert_eq!(page.status, 404, "{page}");
    assert!(page.text.contains("This link does not work"), "{page}");
    let r = app.console_set_password(&token, PW, PW).await;
    assert_eq!(r.status, 404, "{r}");
    assert!(session_cookie_of(&r).is_none(), "{r}");
    // Not a token at all: the same page.
    assert_eq!(app.console_invite_page("nonsense").await.status, 404);
}

#[tokio::test]
async fn a_wrong_password_and_an_unknown_email_get_the_same_answer() {
    let app = TestApp::spawn();
    app.console_member("ana@example.com", "owner", PW).await;
    let wrong = app
        .console_login("ana@example.com", "not the password")
        .await;
    let unknown = app.console_login("bob@example.com", PW).await;
    assert_eq!(wrong.status, 401, "{wrong}");
    assert_eq!(unknown.status, 401, "{unknown}");
    assert_eq!(wrong.text, unknown.text);
    assert!(
        wrong.text.contains("Email or password is incorrect."),
        "{wrong}"
    );
    assert!(session_cookie_of(&wrong).is_none() && session_cookie_of(&unknown).is_none());
    // The page itself: labelled fields and the button.
    let page = console_client()
        .get(app.url("/console/login"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for s in [">Email</label>", ">Password</label>", ">Sign in</button>"] {
        assert!(page.contains(s), "{s}: {page}");
    }
}

#[tokio::test]
async fn failed_sign_ins_are_rate_limited_per_account_and_per_address() {
    if single_node_only("the budgets of failed sign-ins are each node's") {
        return;
    }
    let app = TestApp::spawn();
    app.console_member("ana@example.com", "owner", PW).await;
    for i in 0..5 {
        let r = app
            .console_login("ana@example.com", "wrong password!")
            .await;
        assert_eq!(r.status, 401, "attempt {i}: {r}");
    }
    // The budget refills one a minute: on a loaded machine, where each
    // Argon2 check of a debug build takes seconds, a slow run may have
    // earned one back; a few more failures use it up.
    let mut r = app
        .console_login("ana@example.com", "wrong password!")
        .await;
    for _ in 0..3 {
        if r.status != 401 {
            break;
        }
        r = app
            .console_login("ana@example.com", "wrong password!")
            .await;
    }
    assert_eq!(r.status, 429, "{r}");
    assert!(r.headers.contains_key("retry-after"), "{r}");
    assert!(r.text.contains("Too many failed sign-ins"), "{r}");
    // Refused even with the right password while it lasts.
    let right = app.console_login("ana@example.com", PW).await;
    assert_eq!(right.status, 429, "{right}");
    assert!(session_cookie_of(&right).is_none());

    // Per address: many accounts from one address. The tries go at once:
    // one after another on a loaded machine, each taking a second or more,
    // the budget's refill (one every three seconds) could keep up with them.
    let app = TestApp::spawn();
    let tries = (0..30).map(|i| {
        let app = &app;
        async move {
            app.console_login(&format!("guess{i}@example.com"), "whatever pw")
                .await
        }
    });
    let rs = futures_util::future::join_all(tries).await;
    for r in &rs {
        assert!(r.status == 401 || r.status == 429, "{r}");
    }
    assert!(
        rs.iter().any(|r| r.status == 429),
        "an address trying many accounts is refused"
    );
}

#[tokio::test]
async fn secure_cookies_when_asked() {
    let app = TestApp::spawn_with(&["--console-secure-cookies"], &[]);
    let token = app.console_add_member("ana@example.com", "owner");
    let r = app.console_set_password(&token, PW, PW).await;
    assert!(session_set_cookie(&r).contains("Secure"), "{r}");
}

#[tokio::test]
async fn the_admin_api_with_a_session_needs_its_csrf_token() {
    let app = TestApp::spawn();
    let owner = app.console_member("ana@example.com", "owner", PW).await;
    let flows = format!("{A}/flows");
    for csrf in [None, Some("wrong"), Some("")] {
        let r = app.admin_as_member(&owner, csrf, GET, &flows).go().await;
        assert_eq!(r.status, 403, "{csrf:?}: {r}");
        assert_eq!(r.json["error"]["code"], "forbidden", "{r}");
        assert_eq!(r.json["error"]["details"]["reason"], "csrf", "{r}");
    }
    let r = app
        .admin_as_member(&owner, Some(&owner.csrf), GET, &flows)
        .go()
        .await;
    assert_eq!(r.status, 200, "{r}");
    // A cookie that is no session: 401, the error object.
    let nobody = ConsoleSession {
        cookie: "nonsense".into(),
        csrf: "x".into(),
    };
    let r = app
        .admin_as_member(&nobody, Some("x"), GET, &flows)
        .go()
        .await;
    assert_eq!(r.status, 401, "{r}");
    assert_eq!(
        r.json["error"]["details"]["reason"], "invalid_session",
        "{r}"
    );
    // Without a session the console redirects to the sign-in page.
    let r = console_client()
        .get(app.url("/console/settings/members"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 303);
    assert_eq!(r.headers()["location"], "/console/login");
}

#[tokio::test]
async fn roles_are_enforced_by_the_server() {
    let app = TestApp::spawn();
    let viewer = app.console_member("vi@example.com", "viewer", PW).await;
    let editor = app.console_member("ed@example.com", "editor", PW).await;
    let owner = app.console_member("ow@example.com", "owner", PW).await;
    let flows = format!("{A}/flows");
    // A viewer reads, and changes nothing.
    let r = app
        .admin_as_member(&viewer, Some(&viewer.csrf), POST, &flows)
        .json(&json!({"handle": "from-viewer", "name": "No", "steps": []}))
        .go()
        .await;
    assert_eq!(r.status, 403, "{r}");
    assert_eq!(r.json["error"]["code"], "forbidden", "{r}");
    let list = app
        .admin_as_member(&viewer, Some(&viewer.csrf), GET, &flows)
        .go()
        .await;
    assert_eq!(list.status, 200, "{list}");
    assert_eq!(list.json["items"], json!([]), "nothing stored: {list}");
    // An editor changes the configuration, not the keys.
    let inapp = in_app_channel(&app).await;
    let r = app
        .admin_as_member(&editor, Some(&editor.csrf), POST, &flows)
        .json(&json!({"handle": "from-editor", "name": "Yes",
                      "steps": [channel_step(&inapp, None, "Hi")]}))
        .go()
        .await;
    assert_eq!(r.status, 201, "{r}");
    for (m, path) in [
        (POST, format!("{A}/project/rotate_link_secret")),
        (POST, format!("{A}/project/signing_key")),
        (DELETE, format!("{A}/project/signing_key")),
    ] {
        let r = app
            .admin_as_member(&editor, Some(&editor.csrf), m.clone(), &path)
            .go()
            .await;
        assert_eq!(r.status, 403, "{m} {path}: {r}");
    }
    // An owner manages keys.
    let r = app
        .admin_as_member(
            &owner,
            Some(&owner.csrf),
            POST,
            &format!("{A}/project/rotate_link_secret"),
        )
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    // Members are an owner's page.
    for s in [&viewer, &editor] {
        let r = app
            .console_page(&s.cookie, "/console/settings/members")
            .await;
        assert_eq!(r.status, 403, "{r}");
        let r = app
            .console_post(
                &s.cookie,
                "/console/settings/members",
                &[
                    ("csrf", &s.csrf),
                    ("email", "x@example.com"),
                    ("role", "owner"),
                ],
            )
            .await;
        assert_eq!(r.status, 403, "{r}");
    }
}

#[tokio::test]
async fn a_viewer_previews_a_flow_but_is_offered_no_change() {
    let app = TestApp::spawn();
    let viewer = app.console_member("vi@example.com", "viewer", PW).await;
    let editor = app.console_member("ed@example.com", "editor", PW).await;
    let inapp = in_app_channel(&app).await;
    let flow = json!({"handle": "hello", "name": "Hello",
                      "steps": [channel_step(&inapp, None, "Hi {{ data.who }}")]});
    let r = app
        .admin_as_member(&editor, Some(&editor.csrf), POST, &format!("{A}/flows"))
        .json(&flow)
        .go()
        .await;
    assert_eq!(r.status, 201, "{r}");
    // A preview stores and sends nothing: a viewer's read, saved or not.
    for (path, mut body) in [
        (format!("{A}/flows/hello/preview"), json!({})),
        (format!("{A}/flows/preview"), flow.clone()),
    ] {
        body["user"] = json!("ada");
        body["data"] = json!({"who": "Ada"});
        let r = app
            .admin_as_member(&viewer, Some(&viewer.csrf), POST, &path)
            .json(&body)
            .go()
            .await;
        assert_eq!(r.status, 200, "{path}: {r}");
        assert_eq!(r.json["steps"][0]["content"]["body"], "Hi Ada", "{r}");
    }
    // ...but changes nothing through a route that ends otherwise.
    let r = app
        .admin_as_member(
            &viewer,
            Some(&viewer.csrf),
            POST,
            &format!("{A}/flows/hello/activate"),
        )
        .go()
        .await;
    assert_eq!(r.status, 403, "{r}");
    // The pages offer a viewer no change; an editor's do.
    for (path, control) in [
        ("/console/flows", "New flow"),
        ("/console/topics", "Create topic"),
        ("/console/endpoints", "Add endpoint"),
        ("/console/settings", "Save settings"),
        ("/console/flows/hello", "id=\"save\""),
    ] {
        let v = app.console_page(&viewer.cookie, path).await;
        assert_eq!(v.status, 200, "{path}: {v}");
        assert!(v.text.contains("You are a viewer"), "{path}: {v}");
        assert!(
            !v.text.contains(control),
            "{path} offers a viewer {control}"
        );
        let e = app.console_page(&editor.cookie, path).await;
        assert!(
            e.text.contains(control),
            "{path} offers an editor no {control}"
        );
        assert!(!e.text.contains("You are a viewer"), "{path}");
    }
    // Key rotation is an owner's: an editor's Settings do not offer it.
    let e = app.console_page(&editor.cookie, "/console/settings").await;
    assert!(!e.text.contains("Rotate the secret key"), "{e}");
}

#[tokio::test]
async fn owners_invite_change_roles_and_remove_members() {
    let app = TestApp::spawn();
    let owner = app.console_member("ow@example.com", "owner", PW).await;
    let path = "/console/settings/members";
    // Without the CSRF token: 403, nothing done.
    let r = app
        .console_post(
            &owner.cookie,
            path,
            &[("email", "new@example.com"), ("role", "viewer")],
        )
        .await;
    assert_eq!(r.status, 403, "{r}");
    let r = app
        .console_post(
            &owner.cookie,
            path,
            &[
                ("csrf", &owner.csrf),
                ("email", "New@example.com"),
                ("role", "viewer"),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{r}");
    // (MiniJinja escapes `/` in HTML as `&#x2f;`)
    let text = r.text.replace("&#x2f;", "/");
    let link = text
        .split("value=\"")
        .find_map(|s| {
            s.split('"')
                .next()
                .filter(|v| v.contains("/console/invite/"))
        })
        .unwrap_or_else(|| panic!("the new link is shown: {r}"))
        .to_string();
    let token = link.rsplit_once("/console/invite/").unwrap().1.to_string();
    let r = app.console_set_password(&token, PW, PW).await;
    assert_eq!(r.status, 303, "{r}");
    let newcomer = session_cookie_of(&r).unwrap();
    let page = app.console_page(&newcomer, path).await;
    assert_eq!(page.status, 403, "a viewer: {page}");
    // Promoted: the role counts at once.
    let r = app
        .console_post(
            &owner.cookie,
            "/console/settings/members/role",
            &[
                ("csrf", &owner.csrf),
                ("email", "new@example.com"),
                ("role", "owner"),
            ],
        )
        .await;
    assert_eq!(r.status, 303, "{r}");
    assert_eq!(app.console_page(&newcomer, path).await.status, 200);
    // Removed: their session ends.
    let r = app
        .console_post(
            &owner.cookie,
            "/console/settings/members/remove",
            &[("csrf", &owner.csrf), ("email", "new@example.com")],
        )
        .await;
    assert_eq!(r.status, 303, "{r}");
    let r = app.console_page(&newcomer, path).await;
    assert_eq!(r.status, 303, "{r}");
    // The last owner stays.
    let r = app
        .console_post(
            &owner.cookie,
            "/console/settings/members/remove",
            &[("csrf", &owner.csrf), ("email", "ow@example.com")],
        )
        .await;
    assert_eq!(r.status, 409, "{r}");
    assert!(r.text.contains("last owner"), "{r}");
}

#[tokio::test]
async fn signing_out_ends_the_session_on_the_server() {
    let app = TestApp::spawn();
    let s = app.console_member("ana@example.com", "owner", PW).await;
    let r = app.console_logout(&s.cookie, "wrong").await;
    assert_eq!(r.status, 403, "{r}");
    assert_eq!(
        app.console_page(&s.cookie, "/console/settings/members")
            .await
            .status,
        200
    );
    let r = app.console_logout(&s.cookie, &s.csrf).await;
    assert_eq!(r.status, 303, "{r}");
    assert_eq!(r.headers["location"], "/console/login", "{r}");
    assert_eq!(session_cookie_of(&r).as_deref(), Some(""), "cleared: {r}");
    // The old cookie no longer works, for pages or for the Admin API.
    let r = app
        .console_page(&s.cookie, "/console/settings/members")
        .await;
    assert_eq!(r.status, 303, "{r}");
    let r = app
        .admin_as_member(&s, Some(&s.csrf), GET, &format!("{A}/flows"))
        .go()
        .await;
    assert_eq!(r.status, 401, "{r}");
}

#[tokio::test]
async fn an_idle_session_ends() {
    // Five seconds, not one or two: signing in and the two first page loads
    // must fit in it on a machine loaded by the rest of the suite.
    let app = TestApp::spawn_with(&["--console-idle-timeout", "5"], &[]);
    let s = app.console_member("ana@example.com", "owner", PW).await;
    assert_eq!(
        app.console_page(&s.cookie, "/console/settings/members")
            .await
            .status,
        200
    );
    tokio::time::sleep(Duration::from_millis(5500)).await;
    let r = app
        .console_page(&s.cookie, "/console/settings/members")
        .await;
    assert_eq!(r.status, 303, "{r}");
}

#[tokio::test]
async fn a_session_made_on_one_node_works_on_every_node() {
    let app = TestApp::spawn();
    let token = app.console_add_member("ana@example.com", "owner");
    assert_eq!(app.console_set_password(&token, PW, PW).await.status, 303);
    let nodes = app.node_addresses().to_vec();
    let r = app.console_login_at(&nodes[0], "ana@example.com", PW).await;
    assert_eq!(r.status, 303, "{r}");
    let cookie = session_cookie_of(&r).unwrap();
    for n in &nodes {
        let page = app
            .console_page_at(n, &cookie, "/console/settings/members")
            .await;
        assert_eq!(page.status, 200, "{n}: {page}");
        let s = session_of(&r, &page);
        let api = console_client()
            .get(format!("{n}{A}/flows"))
            .header("cookie", format!("herald_console={}", s.cookie))
            .header("x-csrf-token", &s.csrf)
            .send()
            .await
            .unwrap();
        assert_eq!(api.status().as_u16(), 200, "{n}");
    }
}

/// A member's changes are logged under their email, and members added by
/// the operator under `operator`; the log never holds a password hash.
#[tokio::test]
async fn the_audit_log_names_members_and_the_operator() {
    let app = TestApp::spawn();
    let editor = app.console_member("ed@example.com", "editor", PW).await;
    let inapp = in_app_channel(&app).await;
    let r = app
        .admin_as_member(&editor, Some(&editor.csrf), POST, &format!("{A}/flows"))
        .json(&json!({"handle": "by-editor", "name": "By editor",
                      "steps": [channel_step(&inapp, None, "Hi")]}))
        .go()
        .await;
    assert_eq!(r.status, 201, "{r}");
    let log = app
        .admin(GET, &format!("{A}/audit_log?limit=100"))
        .go()
        .await
        .ok(200);
    let items = log["items"].as_array().expect("items").clone();
    let flow = items
        .iter()
        .find(|e| e["action"] == "flow.created")
        .unwrap_or_else(|| panic!("flow.created: {log}"));
    assert_eq!(flow["who"], "ed@example.com", "{flow}");
    let created = items
        .iter()
        .find(|e| e["action"] == "member.created")
        .unwrap_or_else(|| panic!("member.created: {log}"));
    assert_eq!(created["who"], "operator", "{created}");
    assert_eq!(created["after"]["role"], "editor", "{created}");
    // the password set through the link: an update by the member
    assert!(
        items
            .iter()
            .any(|e| e["action"] == "member.updated" && e["after"]["can_sign_in"] == json!(true)),
        "{log}"
    );
    assert!(!log.to_string().contains("$argon2"), "no hash: {log}");
}

/// The secret key rotated through the Admin API: shown once, the old key
/// kept for its grace period or refused at once with 0, editors refused,
/// and the log names who rotated it.
#[tokio::test]
async fn owners_and_the_key_itself_rotate_the_secret_key() {
    let app = TestApp::spawn();
    let path = format!("{A}/project/rotate_secret");
    // With the key itself, a grace period: old and new keys both work.
    let r = app
        .admin(POST, &path)
        .json(&json!({"grace_seconds": 3600}))
        .go()
        .await
        .ok(200);
    let first = r["secret_key"].as_str().expect("secret_key").to_string();
    assert!(first.starts_with("sk_"), "{r}");
    assert!(r["previous_secret_expires_at"].is_string(), "{r}");
    let old = app.keys();
    let new = Keys {
        secret_key: first.clone(),
        ..old.clone()
    };
    for k in [&old, &new] {
        app.admin_with(k, GET, &format!("{A}/project"))
            .go()
            .await
            .ok(200);
    }
    let bad = app
        .admin(POST, &path)
        .json(&json!({"grace_seconds": "soon"}))
        .go()
        .await;
    assert_eq!(bad.status, 422, "{bad}");
    // An editor may not; an owner may, with no grace: the key before
    // stops at once.
    let editor = app.console_member("ed@example.com", "editor", PW).await;
    let r = app
        .admin_as_member(&editor, Some(&editor.csrf), POST, &path)
        .json(&json!({}))
        .go()
        .await;
    assert_eq!(r.status, 403, "{r}");
    let owner = app.console_member("ow@example.com", "owner", PW).await;
    let r = app
        .admin_as_member(&owner, Some(&owner.csrf), POST, &path)
        .json(&json!({"grace_seconds": 0}))
        .go()
        .await;
    assert_eq!(r.status, 200, "{r}");
    let second = r.json["secret_key"]
        .as_str()
        .expect("secret_key")
        .to_string();
    let refused = app
        .admin_with(&new, GET, &format!("{A}/project"))
        .go()
        .await;
    assert_eq!(refused.status, 401, "{refused}");
    let latest = Keys {
        secret_key: second.clone(),
        ..old.clone()
    };
    let log = app
        .admin_with(&latest, GET, &format!("{A}/audit_log?resource_type=key"))
        .go()
        .await
        .ok(200);
    let who: Vec<&str> = log["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|e| e["who"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(who, vec!["ow@example.com", "api"], "{log}");
    let text = log.to_string();
    assert!(
        !text.contains(&first) && !text.contains(&second),
        "no key in the log: {log}"
    );
}
