//! Critical flows (docs/API.md, "Flows" and §6): `"critical": true` on a
//! flow makes its deliveries ignore the recipient's preferences, the
//! decision trace says so, preference answers show the flow as critical
//! and a preferences change turning it off is a 422 `exclusion`.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

fn prefs_path(ext: &str) -> String {
    format!("{A}/users/{}/preferences", enc(ext))
}

/// `PUT /flows/{id}` with `body`; the flow it answers.
async fn edit_flow(app: &TestApp, id: &str, body: Value) -> Value {
    app.admin(PUT, &format!("{A}/flows/{id}"))
        .json(&body)
        .go()
        .await
        .ok(200)
}

/// A 422 whose details name `field` with reason `reason`.
#[track_caller]
fn assert_field(r: &Resp, field: &str, reason: &str) {
    let d = assert_error(r, 422, "validation_failed");
    let fields = d["fields"].as_array().unwrap_or_else(|| panic!("{r}"));
    assert!(
        fields
            .iter()
            .any(|f| f["field"] == json!(field) && f["reason"] == json!(reason)),
        "expected {field} {reason}: {r}"
    );
}

async fn trace(app: &TestApp, nid: &str) -> Value {
    app.admin(GET, &format!("{A}/notifications/{nid}/trace"))
        .go()
        .await
        .ok(200)
}

fn entries_of<'a>(t: &'a Value, code: &str) -> Vec<&'a Value> {
    t["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["code"] == json!(code))
        .collect()
}

#[tokio::test]
async fn a_critical_flow_ignores_preferences_and_cannot_be_turned_off() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let steps = json!([channel_step(&inapp, None, "Hi")]);
    // made critical only after the user turned it off: what was stored
    // before no longer applies
    let crit = active_flow(&app, "crit", steps.clone()).await;
    assert_eq!(crit["critical"], json!(false), "{crit}");
    let normal = active_flow(&app, "normal", steps).await;
    let (ch, nh) = (s(&crit["handle"]), s(&normal["handle"]));
    let (ext, _) = app.create_user("crit", json!({})).await;
    app.admin(PUT, &prefs_path(&ext))
        .json(&json!({"channel_types": {"in_app": false},
            "flows": {&ch: {"enabled": false}, &nh: {"enabled": false}}}))
        .go()
        .await
        .ok(200);
    let crit = edit_flow(&app, &s(&crit["id"]), json!({"critical": true})).await;
    assert_eq!(crit["critical"], json!(true), "{crit}");
    assert_eq!(crit["status"], json!("active"), "{crit}");

    // (a) the critical flow's in-app entry arrives, the other is skipped
    let body = json!({"recipients": [ext]});
    let (_, cn) = run_one(&app, &s(&crit["id"]), body.clone()).await;
    let (_, nn) = run_one(&app, &s(&normal["id"]), body).await;
    let cd = delivery_of(&cn, "in_app");
    assert_eq!(cd["status"], json!("sent"), "{cd}");
    let nd = delivery_of(&nn, "in_app");
    assert_eq!(nd["status"], json!("skipped"), "{nd}");
    assert_eq!(nd["error"]["code"], json!("preference"), "{nd}");
    let feed = wait_feed(&app, &ext, 1).await;
    let items = feed["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "only the critical flow's entry: {feed}");

    // (b) the trace says preferences were ignored, because it is critical
    let t = trace(&app, &s(&cn["id"])).await;
    let ignored = entries_of(&t, "preference.ignored");
    assert_eq!(ignored.len(), 1, "{t}");
    assert_eq!(ignored[0]["args"]["reason"], json!("critical"), "{t}");
    assert_eq!(ignored[0]["args"]["channel_type"], json!("in_app"), "{t}");
    assert!(
        s(&ignored[0]["message"]).contains("critical"),
        "the message names why: {t}"
    );
    assert!(entries_of(&t, "preference.skipped").is_empty(), "{t}");
    assert!(entries_of(&t, "preference.allowed").is_empty(), "{t}");
    let t = trace(&app, &s(&nn["id"])).await;
    assert_eq!(entries_of(&t, "preference.skipped").len(), 1, "{t}");
    assert!(entries_of(&t, "preference.ignored").is_empty(), "{t}");

    // (c) both APIs show the critical flow as critical and on
    let admin = app.admin(GET, &prefs_path(&ext)).go().await.ok(200);
    let user = app
        .user(GET, &format!("{U}/preferences"), &ext)
        .go()
        .await
        .ok(200);
    for p in [&admin, &user] {
        assert_eq!(
            p["flows"][&ch],
            json!({"critical": true, "enabled": true, "channel_types": all_true(),
                "name": crit["name"], "categories": []}),
            "{p}"
        );
        assert_eq!(p["flows"][&nh].get("critical"), None, "{p}");
        assert_eq!(p["flows"][&nh]["enabled"], json!(false), "{p}");
        assert_eq!(p["channel_types"], channel_types(&["in_app"]), "{p}");
    }

    // (d) turning it off is an exclusion, on either API, and changes nothing
    let r = app
        .admin(PUT, &prefs_path(&ext))
        .json(&json!({"flows": {&ch: {"enabled": false}}}))
        .go()
        .await;
    assert_field(&r, &format!("flows.{ch}.enabled"), "exclusion");
    let r = app
        .user(PUT, &format!("{U}/preferences"), &ext)
        .json(&json!({"channel_types": {"sms": false},
            "flows": {&ch: {"channel_types": {"email": false, "in_app": true}}}}))
        .go()
        .await;
    assert_field(&r, &format!("flows.{ch}.channel_types.email"), "exclusion");
    let details = &r.json["error"]["details"]["fields"];
    assert_eq!(details.as_array().unwrap().len(), 1, "only email: {r}");
    assert_eq!(
        app.admin(GET, &prefs_path(&ext)).go().await.ok(200),
        admin,
        "a refused change stores nothing"
    );
    // turning it on, or leaving it out, is fine
    let (other, _) = app.create_user("crit-other", json!({})).await;
    let r = app
        .admin(PUT, &prefs_path(&other))
        .json(
            &json!({"flows": {&ch: {"enabled": true, "channel_types": {"in_app": true}}},
            "channel_types": {"email": false}}),
        )
        .go()
        .await;
    assert_eq!(r.ok(200)["flows"][&ch]["critical"], json!(true), "{r}");

    // (f) back to not critical: the user's stored choices apply again
    let crit = edit_flow(&app, &s(&crit["id"]), json!({"critical": false})).await;
    assert_eq!(crit["critical"], json!(false), "{crit}");
    let p = app.admin(GET, &prefs_path(&ext)).go().await.ok(200);
    assert_eq!(p["flows"][&ch].get("critical"), None, "{p}");
    assert_eq!(p["flows"][&ch]["enabled"], json!(false), "{p}");
    let r = app
        .admin(PUT, &prefs_path(&ext))
        .json(&json!({"flows": {&ch: {"enabled": false}}}))
        .go()
        .await;
    r.ok(200);
    let (_, cn) = run_one(&app, &s(&crit["id"]), json!({"recipients": [ext]})).await;
    assert_eq!(
        delivery_of(&cn, "in_app")["status"],
        json!("skipped"),
        "{cn}"
    );
}

#[tokio::test]
async fn critical_is_a_boolean_on_every_flow() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let steps = json!([channel_step(&inapp, None, "Hi")]);
    // (e) a wrong type is the standard 422, on create and on edit
    for bad in [json!("yes"), json!(1), json!({})] {
        let r = app
            .admin(POST, &format!("{A}/flows"))
            .json(&json!({"handle": handle("bad"), "name": "Bad",
                "steps": steps, "critical": bad}))
            .go()
            .await;
        assert_field(&r, "critical", "format");
    }
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("crit"), "name": "Reset",
            "steps": steps, "critical": true}))
        .go()
        .await;
    let crit = r.ok(201);
    assert_eq!(crit["critical"], json!(true), "{r}");
    let plain = create_flow(&app, &handle("plain"), steps).await;
    assert_eq!(plain["critical"], json!(false), "absent is false: {plain}");
    let r = app
        .admin(PUT, &format!("{A}/flows/{}", s(&crit["id"])))
        .json(&json!({"critical": "no"}))
        .go()
        .await;
    assert_field(&r, "critical", "format");
    // an edit without it keeps it; every view shows it
    let crit = edit_flow(&app, &s(&crit["id"]), json!({"name": "Reset (v2)"})).await;
    assert_eq!(crit["critical"], json!(true), "{crit}");
    let got = app
        .admin(GET, &format!("{A}/flows/{}", s(&crit["handle"])))
        .go()
        .await
        .ok(200);
    assert_eq!(got["critical"], json!(true), "{got}");
    let all = list_all(&app, &format!("{A}/flows"), &[]).await;
    for f in &all {
        let want = json!(f["id"] == crit["id"]);
        assert_eq!(f["critical"], want, "{f}");
    }
    let activated = activate(&app, &s(&crit["id"])).await;
    assert_eq!(activated["critical"], json!(true), "{activated}");

    // the OpenAPI document declares it on the flow's bodies and views
    let doc = app.request(GET, "/openapi.json").go().await.ok(200);
    let schemas = &doc["components"]["schemas"];
    for name in ["Flow", "FlowInput", "FlowUpdate", "FlowPreferences"] {
        let c = &schemas[name]["properties"]["critical"];
        assert!(c.is_object(), "{name}.critical: {}", schemas[name]);
    }
    let required = |name: &str| schemas[name]["required"].as_array().cloned();
    assert!(required("Flow").unwrap().contains(&json!("critical")));
    assert!(!required("FlowPreferences")
        .unwrap()
        .contains(&json!("critical")));
}
