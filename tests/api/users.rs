//! docs/API.md §6 (users) and §11 (`/user/v1/me`).

use serde_json::{json, Value};

use crate::helpers::*;

fn user_path(ext: &str) -> String {
    format!("{A}/users/{}", enc(ext))
}

fn full_user() -> Value {
    json!({
        "first_name": "Ada",
        "last_name": "Lovelace",
        "email": "ada@example.com",
        "phone": "+15555550123",
        "avatar": "https://example.com/avatars/ada.png",
        "locale": "en-GB",
        "timezone": "Europe/London",
        "custom_fields": {"plan": "pro", "seats": 3, "tags": ["a", "b"], "nested": {"x": null}}
    })
}

#[tokio::test]
async fn create_with_every_field_then_get_and_list() {
    let app = TestApp::spawn();
    let ext = new_ext("ada");
    let body = full_user();
    let r = app.admin(PUT, &user_path(&ext)).json(&body).go().await;
    let u = r.ok(201);
    for (k, v) in body.as_object().unwrap() {
        assert_eq!(&u[k], v, "field {k}: {r}");
    }
    assert_eq!(u["external_id"], json!(ext), "{r}");
    assert!(is_uuid_v7(&u["id"]), "id must be a UUID v7: {r}");
    assert!(is_timestamp(&u["created_at"]), "created_at: {r}");
    assert!(is_timestamp(&u["updated_at"]), "updated_at: {r}");

    let r = app.admin(GET, &user_path(&ext)).go().await;
    assert_eq!(r.ok(200), u, "GET returns what the PUT returned: {r}");

    // the list shows the same object
    let r = app.admin(GET, &format!("{A}/users")).go().await;
    let body = r.page();
    let items = body["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{r}");
    assert_eq!(items[0], u, "{r}");

    // a second user gets another, later id
    let (_, v) = app.create_user("second", json!({})).await;
    assert_ne!(v["id"], u["id"]);
    assert!(
        v["id"].as_str().unwrap() > u["id"].as_str().unwrap(),
        "UUID v7 ids grow with creation time"
    );
    // a user created with an empty body has null profile fields
    for k in [
        "first_name",
        "last_name",
        "email",
        "phone",
        "avatar",
        "locale",
        "timezone",
    ] {
        assert!(v[k].is_null(), "{k} of a user created with {{}}: {v}");
    }

    // external ids with characters that need URL-encoding round-trip
    for ext in ["ada lovelace+1@example.com", "üser:ö/2"] {
        let r = app
            .admin(PUT, &user_path(ext))
            .json(&json!({"first_name": "Enc"}))
            .go()
            .await;
        assert_eq!(r.ok(201)["external_id"], json!(ext), "{r}");
        let r = app.admin(GET, &user_path(ext)).go().await;
        assert_eq!(r.ok(200)["external_id"], json!(ext), "{r}");
        if ext.is_ascii() {
            let r = app.user(GET, &format!("{U}/me"), ext).go().await;
            assert_eq!(r.ok(200)["external_id"], json!(ext), "user id header: {r}");
        }
    }
}

#[tokio::test]
async fn update_is_partial_and_null_clears() {
    let app = TestApp::spawn();
    let ext = new_ext("upd");
    let created = app.create_user_as(&ext, full_user()).await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;

    // only the given field changes; 200 on update
    let r = app
        .admin(PUT, &user_path(&ext))
        .json(&json!({"last_name": "Byron"}))
        .go()
        .await;
    let u = r.ok(200);
    assert_eq!(u["last_name"], json!("Byron"), "{r}");
    for k in [
        "id",
        "external_id",
        "first_name",
        "email",
        "phone",
        "avatar",
        "locale",
        "timezone",
        "custom_fields",
        "created_at",
    ] {
        assert_eq!(u[k], created[k], "field {k} must not change: {r}");
    }
    assert!(is_timestamp(&u["updated_at"]), "{r}");
    assert!(
        parse_ts(&u["updated_at"]) > parse_ts(&created["updated_at"]),
        "updated_at must move on an update: {r}"
    );

    // an empty update changes nothing (200)
    let r = app.admin(PUT, &user_path(&ext)).json(&json!({})).go().await;
    let same = r.ok(200);
    assert_eq!(same["last_name"], json!("Byron"), "{r}");
    assert_eq!(same["email"], created["email"], "{r}");

    // custom_fields given again replace the object (the field is one value)
    let r = app
        .admin(PUT, &user_path(&ext))
        .json(&json!({"custom_fields": {"plan": "free"}}))
        .go()
        .await;
    assert_eq!(r.ok(200)["custom_fields"], json!({"plan": "free"}), "{r}");

    // null clears a field; the others stay
    let r = app
        .admin(PUT, &user_path(&ext))
        .json(&json!({"email": null, "avatar": null, "custom_fields": null, "timezone": null}))
        .go()
        .await;
    let u = r.ok(200);
    for k in ["email", "avatar", "timezone"] {
        assert!(u[k].is_null(), "{k} must be cleared: {r}");
    }
    assert!(
        u["custom_fields"].is_null() || u["custom_fields"] == json!({}),
        "custom_fields cleared: {r}"
    );
    assert_eq!(u["first_name"], created["first_name"], "{r}");
    assert_eq!(u["last_name"], json!("Byron"), "{r}");
    assert_eq!(u["locale"], created["locale"], "{r}");

    // GET sees the final state
    let r = app.admin(GET, &user_path(&ext)).go().await;
    let g = r.ok(200);
    assert!(g["email"].is_null(), "{r}");
    assert_eq!(g["last_name"], json!("Byron"), "{r}");
    assert_eq!(g["id"], created["id"], "{r}");
}

#[tokio::test]
async fn delete_removes_the_user_and_its_preferences() {
    let app = TestApp::spawn();
    let (ext, created) = app.create_user("del", json!({"first_name": "Del"})).await;
    let r = app
        .admin(PUT, &format!("{}/preferences", user_path(&ext)))
        .json(&json!({"channel_types": {"email": false}}))
        .go()
        .await;
    r.ok(200);

    let r = app.admin(DELETE, &user_path(&ext)).go().await;
    assert_eq!(r.status, 204, "{r}");
    assert!(r.text.is_empty(), "204 must have an empty body: {r}");
    assert_not_found(&app.admin(GET, &user_path(&ext)).go().await, "user", &ext);
    assert_not_found(
        &app.admin(GET, &format!("{}/preferences", user_path(&ext)))
            .go()
            .await,
        "user",
        &ext,
    );
    assert_not_found(
        &app.admin(DELETE, &user_path(&ext)).go().await,
        "user",
        &ext,
    );
    let r = app.admin(GET, &format!("{A}/users")).go().await;
    assert_eq!(
        r.page()["items"],
        json!([]),
        "deleted user still listed: {r}"
    );
    assert_unauth(
        &app.user(GET, &format!("{U}/me"), &ext).go().await,
        "user_key_jwt",
        "user_not_found",
    );

    // delete of a user that never existed
    let ghost = new_ext("ghost");
    assert_not_found(
        &app.admin(DELETE, &user_path(&ghost)).go().await,
        "user",
        &ghost,
    );

    // the same external id can be created again: a new user, fresh preferences
    let r = app
        .admin(PUT, &user_path(&ext))
        .json(&json!({"last_name": "Again"}))
        .go()
        .await;
    let again = r.ok(201);
    assert_ne!(again["id"], created["id"], "a new user: {r}");
    assert!(again["first_name"].is_null(), "nothing carried over: {r}");
    let r = app
        .admin(GET, &format!("{}/preferences", user_path(&ext)))
        .go()
        .await;
    assert_eq!(r.ok(200)["channel_types"], all_true(), "{r}");
}

#[tokio::test]
async fn validation_rules_for_user_fields() {
    let app = TestApp::spawn();
    let put = |ext: String, body: Value| app.admin(PUT, &user_path(&ext)).json(&body);

    let cases: Vec<(Value, &str, &str)> = vec![
        (json!({"email": "not-an-email"}), "email", "format"),
        (json!({"email": "a@"}), "email", "format"),
        (
            json!({"avatar": "ftp://example.com/a.png"}),
            "avatar",
            "format",
        ),
        (json!({"avatar": "/relative/a.png"}), "avatar", "format"),
        (json!({"avatar": "example.com/a.png"}), "avatar", "format"),
        (
            json!({"timezone": "Mars/Olympus_Mons"}),
            "timezone",
            "inclusion",
        ),
        (json!({"timezone": "GMT+25"}), "timezone", "inclusion"),
        (
            json!({"locale": "this is not a locale"}),
            "locale",
            "format",
        ),
        (json!({"locale": "!!"}), "locale", "format"),
        (json!({"custom_fields": [1, 2]}), "custom_fields", "format"),
        (
            json!({"custom_fields": "plan=pro"}),
            "custom_fields",
            "format",
        ),
        (
            json!({"first_name": "a".repeat(1001)}),
            "first_name",
            "length",
        ),
        (
            json!({"last_name": "é".repeat(1001)}),
            "last_name",
            "length",
        ),
        (json!({"phone": "1".repeat(1001)}), "phone", "length"),
        (json!({"first_name": 5}), "first_name", "format"),
        (json!({"email": true}), "email", "format"),
        (json!({"locale": ["en"]}), "locale", "format"),
        (json!({"timezone": 1}), "timezone", "format"),
    ];
    for (body, field, reason) in cases {
        let ext = new_ext("val");
        let r = put(ext.clone(), body.clone()).go().await;
        assert_eq!(r.status, 422, "{body}: {r}");
        assert_validation(&r, &[(field, reason)]);
        // nothing was created
        assert_not_found(&app.admin(GET, &user_path(&ext)).go().await, "user", &ext);
    }

    // several problems are listed together
    let r = put(
        new_ext("many"),
        json!({
            "email": "nope",
            "avatar": "ftp://example.com/a.png",
            "timezone": "Mars/Base",
            "locale": "!!",
            "first_name": 7,
            "custom_fields": 3
        }),
    )
    .go()
    .await;
    let d = assert_validation(
        &r,
        &[
            ("email", "format"),
            ("avatar", "format"),
            ("timezone", "inclusion"),
            ("locale", "format"),
            ("first_name", "format"),
            ("custom_fields", "format"),
        ],
    );
    assert_eq!(
        d["fields"].as_array().unwrap().len(),
        6,
        "one entry per problem: {r}"
    );

    // external_id: 1-255 characters
    let r = app
        .admin(PUT, &user_path(&"x".repeat(256)))
        .json(&json!({}))
        .go()
        .await;
    assert_validation(&r, &[("external_id", "length")]);
    let long = "y".repeat(255);
    let u = app.create_user_as(&long, json!({})).await;
    assert_eq!(u["external_id"], json!(long));

    // limits are inclusive and count characters, not bytes
    let r = put(
        new_ext("edge"),
        json!({
            "first_name": "a".repeat(1000),
            "last_name": "é".repeat(1000),
            "email": "first.last+tag@sub.example.co.uk",
            "avatar": "http://example.com/a.png?size=64#x",
            "timezone": "America/Argentina/Buenos_Aires",
            "locale": "zh-Hant-TW",
            "custom_fields": {}
        }),
    )
    .go()
    .await;
    let u = r.ok(201);
    assert_eq!(
        u["last_name"].as_str().unwrap().chars().count(),
        1000,
        "{r}"
    );
    for (tz, locale) in [
        ("UTC", "en"),
        ("Asia/Kolkata", "pt-BR"),
        ("Europe/Paris", "fr-CA"),
    ] {
        let r = put(new_ext("tz"), json!({"timezone": tz, "locale": locale}))
            .go()
            .await;
        assert_eq!(r.status, 201, "{tz} / {locale} are valid: {r}");
    }

    // a valid user is not changed by a refused update
    let (ext, created) = app
        .create_user("keep", json!({"email": "keep@example.com"}))
        .await;
    let r = put(
        ext.clone(),
        json!({"email": "bad", "first_name": "Changed"}),
    )
    .go()
    .await;
    assert_validation(&r, &[("email", "format")]);
    let r = app.admin(GET, &user_path(&ext)).go().await;
    let g = r.ok(200);
    assert_eq!(g["email"], created["email"], "{r}");
    assert!(
        g["first_name"].is_null(),
        "a refused PUT changes nothing: {r}"
    );
}

#[tokio::test]
async fn user_api_me_reads_and_updates_own_profile() {
    let app = TestApp::spawn();
    let (ext, created) = app.create_user("me", full_user()).await;
    let (other, other_user) = app
        .create_user("me-other", json!({"first_name": "Other"}))
        .await;
    let me = format!("{U}/me");

    let r = app.user(GET, &me, &ext).go().await;
    assert_eq!(r.ok(200), created, "GET /me is the User: {r}");
    let r = app.user(GET, &me, &other).go().await;
    assert_eq!(r.ok(200)["id"], other_user["id"], "{r}");

    // partial update of one's own profile
    let r = app
        .user(PUT, &me, &ext)
        .json(&json!({"first_name": "Augusta", "timezone": "Europe/Paris"}))
        .go()
        .await;
    let u = r.ok(200);
    assert_eq!(u["first_name"], json!("Augusta"), "{r}");
    assert_eq!(u["timezone"], json!("Europe/Paris"), "{r}");
    for k in [
        "id",
        "external_id",
        "last_name",
        "email",
        "avatar",
        "custom_fields",
        "created_at",
    ] {
        assert_eq!(u[k], created[k], "{k} must not change: {r}");
    }
    // the Admin API sees the change; the other user is untouched
    let r = app.admin(GET, &user_path(&ext)).go().await;
    assert_eq!(r.ok(200)["first_name"], json!("Augusta"), "{r}");
    let r = app.admin(GET, &user_path(&other)).go().await;
    assert_eq!(r.ok(200)["first_name"], json!("Other"), "{r}");

    // null clears here too
    let r = app
        .user(PUT, &me, &ext)
        .json(&json!({"phone": null}))
        .go()
        .await;
    assert!(r.ok(200)["phone"].is_null(), "{r}");

    // external_id cannot be changed through /me
    let new_id = new_ext("renamed");
    let r = app
        .user(PUT, &me, &ext)
        .json(&json!({"external_id": new_id, "last_name": "Still"}))
        .go()
        .await;
    assert!(
        r.status == 200 || r.status == 422,
        "PUT /me with external_id: ignored (200) or refused (422): {r}"
    );
    if r.status == 200 {
        assert_eq!(r.json["external_id"], json!(ext), "{r}");
    } else {
        assert_validation(&r, &[]);
    }
    assert_not_found(
        &app.admin(GET, &user_path(&new_id)).go().await,
        "user",
        &new_id,
    );
    let r = app.user(GET, &me, &ext).go().await;
    assert_eq!(r.ok(200)["external_id"], json!(ext), "{r}");

    // the same validation as the Admin API
    let r = app
        .user(PUT, &me, &ext)
        .json(&json!({"email": "nope", "timezone": "Nowhere/Land"}))
        .go()
        .await;
    assert_validation(&r, &[("email", "format"), ("timezone", "inclusion")]);
    let r = app.user(GET, &me, &ext).go().await;
    assert_eq!(
        r.ok(200)["email"],
        created["email"],
        "refused PUT changed nothing: {r}"
    );

    // body errors
    let r = app
        .user(PUT, &me, &ext)
        .header("content-type", "application/json")
        .body("[1]")
        .go()
        .await;
    assert_invalid_json(&r);
}
