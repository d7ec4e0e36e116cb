//! `PUT /admin/v1/users/{external_id}/preferences` (docs/API.md §6) and
//! `/user/v1/preferences` (§11).

use serde_json::{json, Value};

use crate::helpers::*;

fn prefs_path(ext: &str) -> String {
    format!("{A}/users/{}/preferences", enc(ext))
}

/// A 422 with an entry whose field is one of `fields` and whose reason is `reason`.
#[track_caller]
fn assert_field_one_of(r: &Resp, fields: &[&str], reason: &str) {
    let d = assert_error(r, 422, "validation_failed");
    let list = d["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("details.fields: {r}"));
    assert!(
        list.iter()
            .any(|f| f["reason"] == json!(reason)
                && fields.iter().any(|want| f["field"] == json!(want))),
        "expected a field in {fields:?} with reason {reason}: {r}"
    );
}

/// Asserts a full Preferences object; returns it.
#[track_caller]
fn assert_prefs(r: &Resp, channel_types: Value) -> Value {
    let p = r.ok(200);
    assert_eq!(p["channel_types"], channel_types, "channel_types: {r}");
    assert!(p["flows"].is_object(), "flows must be an object: {r}");
    p
}

#[tokio::test]
async fn defaults_and_partial_updates() {
    let app = TestApp::spawn();
    let (ext, _) = app.create_user("prefs", json!({})).await;
    let (other, _) = app.create_user("prefs-other", json!({})).await;
    let path = prefs_path(&ext);

    // defaults: all six channel types true, flows an object (no flows yet)
    let r = app.admin(GET, &path).go().await;
    let p = assert_prefs(&r, all_true());
    assert_eq!(p["flows"], json!({}), "no flows in a new project: {r}");

    // partial PUTs answer the full object and keep earlier changes
    let put = |body: Value| app.admin(PUT, &path).json(&body);
    let r = put(json!({"channel_types": {"email": false}})).go().await;
    assert_prefs(&r, channel_types(&["email"]));
    let r = put(json!({"channel_types": {"sms": false}})).go().await;
    assert_prefs(&r, channel_types(&["email", "sms"]));
    let r = put(json!({"channel_types": {"email": true, "web_push": false}}))
        .go()
        .await;
    assert_prefs(&r, channel_types(&["sms", "web_push"]));
    let r = put(json!({})).go().await;
    assert_prefs(&r, channel_types(&["sms", "web_push"]));
    let r = put(json!({"flows": {}})).go().await;
    assert_prefs(&r, channel_types(&["sms", "web_push"]));
    let r = app.admin(GET, &path).go().await;
    assert_prefs(&r, channel_types(&["sms", "web_push"]));

    // another user is untouched
    let r = app.admin(GET, &prefs_path(&other)).go().await;
    assert_prefs(&r, all_true());

    // validation: unknown channel type, wrong types
    let r = put(json!({"channel_types": {"pigeon": true}})).go().await;
    assert_field_one_of(&r, &["channel_types.pigeon", "channel_types"], "inclusion");
    let r = put(json!({"channel_types": {"email": "no"}})).go().await;
    assert_field_one_of(&r, &["channel_types.email", "channel_types"], "format");
    let r = put(json!({"channel_types": [true]})).go().await;
    assert_field_one_of(&r, &["channel_types"], "format");
    let r = put(json!({"flows": "all"})).go().await;
    assert_field_one_of(&r, &["flows"], "format");
    // a mix of a valid and an invalid change applies neither
    let r = put(json!({"channel_types": {"chat": false, "pigeon": false}}))
        .go()
        .await;
    assert_field_one_of(&r, &["channel_types.pigeon", "channel_types"], "inclusion");
    let r = app.admin(GET, &path).go().await;
    assert_prefs(&r, channel_types(&["sms", "web_push"]));

    // not a JSON object
    let r = app
        .admin(PUT, &path)
        .header("content-type", "application/json")
        .body("[]")
        .go()
        .await;
    assert_invalid_json(&r);
}

#[tokio::test]
async fn preferences_of_unknown_or_deleted_users_are_not_found() {
    let app = TestApp::spawn();
    let ghost = new_ext("ghost");
    assert_not_found(
        &app.admin(GET, &prefs_path(&ghost)).go().await,
        "user",
        &ghost,
    );
    let r = app
        .admin(PUT, &prefs_path(&ghost))
        .json(&json!({"channel_types": {"email": false}}))
        .go()
        .await;
    assert_not_found(&r, "user", &ghost);
    // 404 (resource in the path) comes before 422 (body validation)
    let r = app
        .admin(PUT, &prefs_path(&ghost))
        .json(&json!({"channel_types": {"pigeon": true}}))
        .go()
        .await;
    assert_not_found(&r, "user", &ghost);
    // the PUT did not create the user
    assert_not_found(
        &app.admin(GET, &format!("{A}/users/{ghost}")).go().await,
        "user",
        &ghost,
    );

    // unknown flow handle on an existing user → 422 inclusion
    let (ext, _) = app.create_user("flows", json!({})).await;
    let r = app
        .admin(PUT, &prefs_path(&ext))
        .json(&json!({"flows": {"no-such-flow": {"enabled": false}}}))
        .go()
        .await;
    assert_field_one_of(&r, &["flows.no-such-flow", "flows"], "inclusion");

    // deleted user
    let r = app
        .admin(DELETE, &format!("{A}/users/{}", enc(&ext)))
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    assert_not_found(&app.admin(GET, &prefs_path(&ext)).go().await, "user", &ext);
}

#[tokio::test]
async fn user_api_preferences_are_the_users_own() {
    let app = TestApp::spawn();
    let (a, _) = app.create_user("ua", json!({})).await;
    let (b, _) = app.create_user("ub", json!({})).await;
    let path = format!("{U}/preferences");

    let r = app.user(GET, &path, &a).go().await;
    assert_prefs(&r, all_true());
    let r = app
        .user(PUT, &path, &a)
        .json(&json!({"channel_types": {"sms": false}}))
        .go()
        .await;
    assert_prefs(&r, channel_types(&["sms"]));
    // the Admin API sees it
    let r = app.admin(GET, &prefs_path(&a)).go().await;
    assert_prefs(&r, channel_types(&["sms"]));
    // an admin change is seen by the user, earlier change kept
    let r = app
        .admin(PUT, &prefs_path(&a))
        .json(&json!({"channel_types": {"email": false}}))
        .go()
        .await;
    assert_prefs(&r, channel_types(&["email", "sms"]));
    let r = app.user(GET, &path, &a).go().await;
    assert_prefs(&r, channel_types(&["email", "sms"]));
    // user B is untouched, and its own change does not touch A
    let r = app.user(GET, &path, &b).go().await;
    assert_prefs(&r, all_true());
    let r = app
        .user(PUT, &path, &b)
        .json(&json!({"channel_types": {"chat": false}}))
        .go()
        .await;
    assert_prefs(&r, channel_types(&["chat"]));
    let r = app.admin(GET, &prefs_path(&a)).go().await;
    assert_prefs(&r, channel_types(&["email", "sms"]));
    // validation through the User API
    let r = app
        .user(PUT, &path, &a)
        .json(&json!({"channel_types": {"carrier_pigeon": false}}))
        .go()
        .await;
    assert_field_one_of(
        &r,
        &["channel_types.carrier_pigeon", "channel_types"],
        "inclusion",
    );
    // with a JWT in security mode
    app.put_signing_key(&key_a().public_pem).await;
    app.set_security_mode(true).await;
    let r = app
        .user_jwt(PUT, &path, &key_a().token(&a))
        .json(&json!({"channel_types": {"mobile_push": false}}))
        .go()
        .await;
    assert_prefs(&r, channel_types(&["email", "sms", "mobile_push"]));
    let r = app.admin(GET, &prefs_path(&a)).go().await;
    assert_prefs(&r, channel_types(&["email", "sms", "mobile_push"]));
}

/// Per-flow preferences: every non-archived flow appears with defaults.
#[tokio::test]
async fn flow_preferences_defaults_overrides_and_archive() {
    let app = TestApp::spawn();
    let (ext, _) = app.create_user("fp", json!({})).await;
    let path = prefs_path(&ext);

    let r = app.admin(GET, &format!("{A}/channels")).go().await;
    let channels = r.page();
    let in_app = channels["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == json!("in_app"))
        .unwrap_or_else(|| panic!("a new project has an in_app channel: {r}"))
        .clone();
    let make_flow = |handle: String, name: &'static str| {
        app.admin(POST, &format!("{A}/flows")).json(&json!({
            "handle": handle, "name": name,
            "steps": [{"type": "channel", "channel_id": in_app["id"], "template": {"body": "Hi"}}]
        }))
    };
    let h1 = new_ext("flow");
    let r = make_flow(h1.clone(), "Weekly digest").go().await;
    let f1 = r.ok(201);

    let r = app.admin(GET, &path).go().await;
    let p = assert_prefs(&r, all_true());
    let want_default =
        json!({"name": "Weekly digest", "enabled": true, "channel_types": all_true()});
    for k in ["name", "enabled", "channel_types"] {
        assert_eq!(p["flows"][&h1][k], want_default[k], "flows.{h1}.{k}: {r}");
    }

    // override the flow, then the channel types: both kept
    let r = app
        .admin(PUT, &path)
        .json(&json!({"flows": {&h1: {"enabled": false}}}))
        .go()
        .await;
    let p = assert_prefs(&r, all_true());
    assert_eq!(p["flows"][&h1]["enabled"], json!(false), "{r}");
    assert_eq!(p["flows"][&h1]["channel_types"], all_true(), "{r}");
    let r = app
        .admin(PUT, &path)
        .json(&json!({"flows": {&h1: {"channel_types": {"in_app": false}}}}))
        .go()
        .await;
    let p = assert_prefs(&r, all_true());
    assert_eq!(
        p["flows"][&h1]["enabled"],
        json!(false),
        "enabled kept: {r}"
    );
    assert_eq!(
        p["flows"][&h1]["channel_types"],
        channel_types(&["in_app"]),
        "{r}"
    );
    let r = app
        .admin(PUT, &path)
        .json(&json!({"channel_types": {"email": false}}))
        .go()
        .await;
    let p = assert_prefs(&r, channel_types(&["email"]));
    assert_eq!(p["flows"][&h1]["enabled"], json!(false), "{r}");
    assert_eq!(
        p["flows"][&h1]["channel_types"],
        channel_types(&["in_app"]),
        "{r}"
    );
    let r = app
        .admin(PUT, &path)
        .json(&json!({"flows": {&h1: {"channel_types": {"pigeon": true}}}}))
        .go()
        .await;
    assert_field_one_of(
        &r,
        &[
            &format!("flows.{h1}.channel_types.pigeon"),
            &format!("flows.{h1}.channel_types"),
        ],
        "inclusion",
    );

    // a new flow appears with defaults; an archived one disappears
    let h2 = new_ext("flow2");
    make_flow(h2.clone(), "Second").go().await.ok(201);
    let r = app
        .admin(
            POST,
            &format!("{A}/flows/{}/archive", f1["id"].as_str().unwrap()),
        )
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("archived"), "{r}");
    let r = app.admin(GET, &path).go().await;
    let p = assert_prefs(&r, channel_types(&["email"]));
    assert!(p["flows"].get(&h1).is_none(), "archived flow listed: {r}");
    assert_eq!(p["flows"][&h2]["enabled"], json!(true), "{r}");
    assert_eq!(p["flows"][&h2]["channel_types"], all_true(), "{r}");
}
