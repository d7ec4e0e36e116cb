//! The console's pages (docs/CONSOLE.md) without a session: every page of
//! the navigation, and each one's detail pages, answers 303 to
//! `/console/login` (Admin API keys do not open them); its script and
//! stylesheet are served to anyone, as the sign-in page needs them too.

use crate::helpers::*;

/// Every page the pages serve, details and filters included.
const PAGES: &[&str] = &[
    "/console",
    "/console/",
    "/console/notifications",
    "/console/notifications?status=pending&recipient=ann&since=24h",
    "/console/notifications/0190a9f4-0000-7000-8000-000000000000",
    "/console/notifications/not-a-uuid",
    "/console/flows",
    "/console/flows/welcome",
    "/console/users",
    "/console/users?q=ann%40example.com",
    "/console/users/ann%2Fb",
    "/console/channels",
    "/console/channels/new",
    "/console/channels/0190a9f4-0000-7000-8000-000000000000",
    "/console/topics",
    "/console/topics/team",
    "/console/endpoints",
    "/console/endpoints/0190a9f4-0000-7000-8000-000000000000",
    "/console/settings",
    "/console/audit_log",
];

/// A client that shows redirects instead of following them.
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .unwrap()
}

#[tokio::test]
async fn every_page_sends_a_visitor_without_a_session_to_sign_in() {
    let app = TestApp::spawn();
    let c = no_redirects();
    for path in PAGES {
        for admin in [false, true] {
            let mut r = c.get(app.url(path));
            if admin {
                r = r
                    .header("x-service-api-key", &app.public_key)
                    .header("x-service-secret-key", &app.secret_key);
            }
            let resp = r.send().await.unwrap();
            assert_eq!(resp.status().as_u16(), 303, "{path} (admin keys: {admin})");
            assert_eq!(
                resp.headers()["location"].to_str().unwrap(),
                "/console/login",
                "{path}"
            );
        }
    }
}

#[tokio::test]
async fn the_console_assets_are_served_with_their_etag() {
    let app = TestApp::spawn();
    let c = no_redirects();
    for (file, ty) in [
        ("console.js", "text/javascript"),
        ("console.css", "text/css"),
    ] {
        let r = c
            .get(app.url(&format!("/console/assets/{file}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "{file}");
        let h = r.headers().clone();
        assert!(
            h["content-type"].to_str().unwrap().starts_with(ty),
            "{file}"
        );
        assert_eq!(h["cache-control"], "no-cache");
        let tag = h["etag"].to_str().unwrap().to_string();
        assert!(!r.text().await.unwrap().is_empty());
        let again = c
            .get(app.url(&format!("/console/assets/{file}")))
            .header("if-none-match", &tag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status().as_u16(), 304, "{file}");
    }
    let missing = c
        .get(app.url("/console/assets/other.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
}
