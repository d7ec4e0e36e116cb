//! Project branding (docs/API.md §8, "Branding"): `PUT /admin/v1/project`
//! `{"branding": {…}}` is checked part by part and shown back; every
//! template sees it as `brand.*`; `null` removes it (then `brand` renders
//! empty).

use serde_json::json;

use crate::engine_helpers::*;
use crate::helpers::*;

#[tokio::test]
async fn templates_see_the_projects_branding() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "brand",
        json!([channel_step(
            &inapp,
            Some("{{ brand.name }}"),
            "{{ brand.primary_color }}|{{ brand.footer_html }}|{{ brand.support_url }}"
        )]),
    )
    .await;
    let (ext, _) = app.create_user("brand", json!({})).await;
    let b = json!({"name": "Acme", "logo_url": "https://acme.test/logo.png",
        "primary_color": "#4F46e5", "footer_html": "<p>Acme Inc.</p>",
        "support_url": "https://acme.test/help"});
    let p = app.put_project(&json!({"branding": b})).await.ok(200);
    assert_eq!(p["branding"], b, "{p}");
    let (_, n) = run_one(&app, &s(&flow["id"]), json!({"recipients": [ext]})).await;
    let d = delivery_of(&n, "in_app");
    assert_eq!(d["data"]["subject"], json!("Acme"), "{d}");
    assert_eq!(
        d["data"]["body"],
        json!("#4F46e5|<p>Acme Inc.</p>|https://acme.test/help"),
        "{d}"
    );

    // every part is checked, at its path; nothing changes on a problem
    let r = app
        .put_project(
            &json!({"branding": {"primary_color": "blue", "logo_url": "ftp://x",
            "name": 3, "extra": 1}}),
        )
        .await;
    let details = assert_error(&r, 422, "validation_failed");
    let fields: Vec<(String, String)> = details["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (s(&f["field"]), s(&f["reason"])))
        .collect();
    for want in [
        ("branding.primary_color", "format"),
        ("branding.logo_url", "format"),
        ("branding.name", "format"),
        ("branding.extra", "exclusion"),
    ] {
        assert!(
            fields.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?}: {r}"
        );
    }
    let r = app.put_project(&json!({"branding": "acme"})).await;
    assert_error(&r, 422, "validation_failed");
    let p = app.admin(GET, "/admin/v1/project").go().await.ok(200);
    assert_eq!(p["branding"], b, "unchanged: {p}");

    // removed: `brand` renders empty
    let p = app.put_project(&json!({"branding": null})).await.ok(200);
    assert_eq!(p["branding"], json!(null), "{p}");
    let (_, n) = run_one(&app, &s(&flow["id"]), json!({"recipients": [ext]})).await;
    let d = delivery_of(&n, "in_app");
    assert_eq!(d["data"]["subject"], json!(""), "{d}");
    assert_eq!(d["data"]["body"], json!("||"), "{d}");
}
