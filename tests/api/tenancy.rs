//! docs/API.md §2: a project is a tenant; no request sees another project's data.

use serde_json::json;

use crate::helpers::*;

fn user_path(ext: &str) -> String {
    format!("{A}/users/{}", enc(ext))
}

#[tokio::test]
async fn projects_are_isolated_from_each_other() {
    // project B made with the CLI before the first start; A is `default`
    let (app, a, b) = spawn_two_projects();
    assert_ne!(a.public_key, b.public_key);

    let ra = app.get_project().await;
    let pa = ra.ok(200);
    let rb = app.admin_with(&b, GET, &format!("{A}/project")).go().await;
    let pb = rb.ok(200);
    assert_eq!(pa["name"], json!("default"), "{ra}");
    assert_eq!(pb["name"], json!("other"), "{rb}");
    assert_ne!(pa["id"], pb["id"], "two projects");

    // users of A are invisible to B
    let (only_a, _) = app.create_user("only-a", json!({"first_name": "A"})).await;
    let shared = new_ext("shared");
    let ua = app
        .create_user_as(
            &shared,
            json!({"first_name": "InA", "email": "a@example.com"}),
        )
        .await;
    assert_not_found(
        &app.admin_with(&b, GET, &user_path(&only_a)).go().await,
        "user",
        &only_a,
    );
    let r = app.admin_with(&b, GET, &format!("{A}/users")).go().await;
    assert_eq!(r.page()["items"], json!([]), "B lists no users: {r}");
    assert_not_found(
        &app.admin_with(&b, DELETE, &user_path(&only_a)).go().await,
        "user",
        &only_a,
    );
    assert_not_found(
        &app.admin_with(&b, GET, &format!("{}/preferences", user_path(&only_a)))
            .go()
            .await,
        "user",
        &only_a,
    );
    let r = app
        .admin_with(&b, PUT, &format!("{}/preferences", user_path(&only_a)))
        .json(&json!({"channel_types": {"email": false}}))
        .go()
        .await;
    assert_not_found(&r, "user", &only_a);
    // ... and still there for A, untouched
    let r = app.admin(GET, &user_path(&only_a)).go().await;
    assert_eq!(r.ok(200)["first_name"], json!("A"), "{r}");

    // the same external id in both projects: independent users
    let r = app
        .admin_with(&b, PUT, &user_path(&shared))
        .json(&json!({"first_name": "InB"}))
        .go()
        .await;
    let ub = r.ok(201);
    assert_ne!(ub["id"], ua["id"], "a different user in B: {r}");
    assert!(ub["email"].is_null(), "nothing of A's user in B: {r}");
    let r = app.admin(GET, &user_path(&shared)).go().await;
    let g = r.ok(200);
    assert_eq!(g["first_name"], json!("InA"), "{r}");
    assert_eq!(g["id"], ua["id"], "{r}");
    let r = app
        .admin(PUT, &format!("{}/preferences", user_path(&shared)))
        .json(&json!({"channel_types": {"sms": false}}))
        .go()
        .await;
    r.ok(200);
    let r = app
        .admin_with(&b, GET, &format!("{}/preferences", user_path(&shared)))
        .go()
        .await;
    assert_eq!(
        r.ok(200)["channel_types"],
        all_true(),
        "B's prefs are its own: {r}"
    );
    // deleting in B leaves A's
    let r = app.admin_with(&b, DELETE, &user_path(&shared)).go().await;
    assert_eq!(r.status, 204, "{r}");
    let r = app.admin(GET, &user_path(&shared)).go().await;
    assert_eq!(r.ok(200)["id"], ua["id"], "{r}");
    let r = app
        .admin_with(&b, PUT, &user_path(&shared))
        .json(&json!({"first_name": "InB"}))
        .go()
        .await;
    let ub = r.ok(201);

    // lists
    let r = app.admin(GET, &format!("{A}/users")).go().await;
    assert_eq!(r.page()["items"].as_array().unwrap().len(), 2, "{r}");
    let r = app.admin_with(&b, GET, &format!("{A}/users")).go().await;
    let body = r.page();
    assert_eq!(body["items"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(body["items"][0]["id"], ub["id"], "{r}");

    // keys do not mix
    let users = format!("{A}/users");
    let r = app
        .request(GET, &users)
        .header("x-service-api-key", &a.public_key)
        .header("x-service-secret-key", &b.secret_key)
        .go()
        .await;
    assert_unauth(&r, "secret_key", "invalid_secret_key");
    let r = app
        .request(GET, &users)
        .header("x-service-api-key", &b.public_key)
        .header("x-service-secret-key", &a.secret_key)
        .go()
        .await;
    assert_unauth(&r, "secret_key", "invalid_secret_key");

    // the User API of B cannot see A's users
    let me = format!("{U}/me");
    assert_unauth(
        &app.user_with(&b, GET, &me, &only_a).go().await,
        "user_key_jwt",
        "user_not_found",
    );
    let r = app.user_with(&b, GET, &me, &shared).go().await;
    assert_eq!(r.ok(200)["id"], ub["id"], "B's own user: {r}");
    let r = app.user(GET, &me, &shared).go().await;
    assert_eq!(r.ok(200)["id"], ua["id"], "A's own user: {r}");

    // signing keys and security mode are per project
    app.put_signing_key(&key_a().public_pem).await;
    app.set_security_mode(true).await;
    let token_a = key_a().token(&shared);
    let r = app
        .request(GET, &me)
        .header("x-service-api-key", &b.public_key)
        .header("x-service-user-key", &token_a)
        .go()
        .await;
    assert_unauth(&r, "user_key_jwt", "invalid_signature");
    let r = app.user_with(&b, GET, &me, &shared).go().await;
    assert_eq!(
        r.ok(200)["id"],
        ub["id"],
        "B's security mode is still off: {r}"
    );
    let r = app.user_jwt(GET, &me, &token_a).go().await;
    assert_eq!(r.ok(200)["id"], ua["id"], "{r}");
    let r = app
        .admin_with(&b, PUT, &format!("{A}/project/signing_key"))
        .json(&json!({"public_key": key_b().public_pem}))
        .go()
        .await;
    r.ok(200);
    let r = app
        .request(GET, &me)
        .header("x-service-api-key", &b.public_key)
        .header("x-service-user-key", &token_a)
        .go()
        .await;
    assert_unauth(&r, "user_key_jwt", "invalid_signature");
    let r = app.user_jwt(GET, &me, &key_b().token(&shared)).go().await;
    assert_unauth(&r, "user_key_jwt", "invalid_signature");
    let r = app
        .request(GET, &me)
        .header("x-service-api-key", &b.public_key)
        .header("x-service-user-key", key_b().token(&shared))
        .go()
        .await;
    assert_eq!(r.ok(200)["id"], ub["id"], "{r}");

    // channels are per project too: A's in_app channel is not B's
    let r = app.admin(GET, &format!("{A}/channels")).go().await;
    let chans = r.page();
    let a_chan = chans["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == json!("in_app"))
        .unwrap_or_else(|| panic!("A has an in_app channel: {r}"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = app
        .admin_with(&b, GET, &format!("{A}/channels/{a_chan}"))
        .go()
        .await;
    assert_not_found(&r, "channel", &a_chan);
    let r = app.admin_with(&b, GET, &format!("{A}/channels")).go().await;
    let b_chans = r.page();
    assert!(
        b_chans["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["id"] != json!(a_chan)),
        "B lists A's channel: {r}"
    );

    // a cursor of A's list does not open B's list
    let r = app
        .admin(GET, &format!("{A}/users"))
        .query(&[("limit", "1")])
        .go()
        .await;
    let cur = r.page()["page"]["after"].as_str().unwrap().to_string();
    let r = app
        .admin_with(&b, GET, &format!("{A}/users"))
        .query(&[("after", cur.as_str())])
        .go()
        .await;
    if r.status == 200 {
        let items = r.page()["items"].clone();
        assert!(
            items
                .as_array()
                .unwrap()
                .iter()
                .all(|u| u["id"] == ub["id"]),
            "A's users leaked through a cursor: {r}"
        );
    } else {
        assert_invalid_param(&r, "after");
    }
}
