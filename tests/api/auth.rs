//! docs/API.md §2 (order of authentication checks, security mode, JWT rules) and
//! the project settings / signing key endpoints.

use serde_json::{json, Value};

use crate::helpers::*;

fn me() -> String {
    format!("{U}/me")
}

/// GET /user/v1/me with a JWT; asserts 200 and the external id.
async fn assert_me(app: &TestApp, token: &str, ext: &str) {
    let r = app.user_jwt(GET, &me(), token).go().await;
    assert_eq!(r.ok(200)["external_id"], json!(ext), "{r}");
}

async fn jwt_status(app: &TestApp, token: &str) -> Resp {
    app.user_jwt(GET, &me(), token).go().await
}

/// Table rows 1-4: the API key is checked first (absent/empty, then unknown),
/// then the Admin API's secret key (absent, then wrong).
#[tokio::test]
async fn api_key_then_secret_key_checks_in_order() {
    let app = TestApp::spawn();
    let (ext, _) = app.create_user("auth", json!({})).await;
    let users = format!("{A}/users");

    // api key absent, on the Admin API (even with a valid secret) and the User API
    assert_unauth(
        &app.request(GET, &users).go().await,
        "api_key",
        "missing_api_key",
    );
    assert_unauth(
        &app.request(GET, &users)
            .header("x-service-secret-key", &app.secret_key)
            .go()
            .await,
        "api_key",
        "missing_api_key",
    );
    assert_unauth(
        &app.request(GET, &me())
            .header("x-service-user-id", &ext)
            .go()
            .await,
        "api_key",
        "missing_api_key",
    );
    // an empty api key counts as absent
    assert_unauth(
        &app.request(GET, &users)
            .header("x-service-api-key", "")
            .header("x-service-secret-key", &app.secret_key)
            .go()
            .await,
        "api_key",
        "missing_api_key",
    );
    assert_unauth(
        &app.request(GET, &me())
            .header("x-service-api-key", "")
            .header("x-service-user-id", &ext)
            .go()
            .await,
        "api_key",
        "missing_api_key",
    );
    // authentication comes before routing: an unknown path under /admin/ or /user/
    assert_unauth(
        &app.request(GET, &format!("{A}/no-such-route")).go().await,
        "api_key",
        "missing_api_key",
    );
    assert_unauth(
        &app.request(GET, &format!("{U}/no-such-route")).go().await,
        "api_key",
        "missing_api_key",
    );

    // unknown api key: reported before any secret-key check
    let unknown = format!("pk_test_{}", random_hex());
    for secret in [
        None,
        Some(""),
        Some("sk_test_wrong"),
        Some(app.secret_key.as_str()),
    ] {
        let mut rb = app
            .request(GET, &users)
            .header("x-service-api-key", &unknown);
        if let Some(s) = secret {
            rb = rb.header("x-service-secret-key", s);
        }
        assert_unauth(&rb.go().await, "api_key", "invalid_api_key");
    }
    // the secret key is not an api key
    assert_unauth(
        &app.request(GET, &users)
            .header("x-service-api-key", &app.secret_key)
            .header("x-service-secret-key", &app.secret_key)
            .go()
            .await,
        "api_key",
        "invalid_api_key",
    );
    // User API with an unknown api key and a valid user id
    assert_unauth(
        &app.request(GET, &me())
            .header("x-service-api-key", &unknown)
            .header("x-service-user-id", &ext)
            .go()
            .await,
        "api_key",
        "invalid_api_key",
    );
    assert_unauth(
        &app.request(GET, &format!("{A}/no-such-route"))
            .header("x-service-api-key", &unknown)
            .go()
            .await,
        "api_key",
        "invalid_api_key",
    );

    // secret key absent or empty; a user id header does not stand in for it
    assert_unauth(
        &app.api(GET, &users).go().await,
        "secret_key",
        "missing_secret_key",
    );
    assert_unauth(
        &app.api(GET, &users)
            .header("x-service-secret-key", "")
            .go()
            .await,
        "secret_key",
        "missing_secret_key",
    );
    assert_unauth(
        &app.user(GET, &users, &ext).go().await,
        "secret_key",
        "missing_secret_key",
    );
    assert_unauth(
        &app.api(GET, &format!("{A}/no-such-route")).go().await,
        "secret_key",
        "missing_secret_key",
    );
    // secret key wrong for the project: another random key, the public key,
    // a truncated or extended or re-cased copy of the right one
    let sk = app.secret_key.clone();
    for wrong in [
        format!("sk_test_{}", random_hex()),
        app.public_key.clone(),
        sk[..sk.len() - 1].to_string(),
        format!("{sk}0"),
        sk.to_uppercase(),
    ] {
        assert_unauth(
            &app.api(GET, &users)
                .header("x-service-secret-key", &wrong)
                .go()
                .await,
            "secret_key",
            "invalid_secret_key",
        );
    }
    // the same rules on a write
    let r = app
        .api(PUT, &format!("{A}/users/{}", new_ext("nope")))
        .header("x-service-secret-key", "sk_test_wrong")
        .json(&json!({"first_name": "X"}))
        .go()
        .await;
    assert_unauth(&r, "secret_key", "invalid_secret_key");

    // the right pair works, and the rejected write created nothing
    let body = app.admin(GET, &users).go().await.page();
    assert_eq!(body["items"].as_array().unwrap().len(), 1, "{body}");

    // admin credentials are not user credentials
    assert_unauth(
        &app.admin(GET, &me()).go().await,
        "user_key_jwt",
        "missing_user_key",
    );
}

/// Security mode off, no signing key: user id header, missing/unknown users,
/// JWTs with no key to check them against.
#[tokio::test]
async fn user_api_in_development_mode() {
    let app = TestApp::spawn();
    let (ext, user) = app.create_user("dev", json!({"first_name": "Dev"})).await;

    // neither user key nor user id
    assert_unauth(
        &app.api(GET, &me()).go().await,
        "user_key_jwt",
        "missing_user_key",
    );
    // empty headers count as absent
    assert_unauth(
        &app.api(GET, &me())
            .header("x-service-user-id", "")
            .header("x-service-user-key", "")
            .go()
            .await,
        "user_key_jwt",
        "missing_user_key",
    );
    // unknown user id
    assert_unauth(
        &app.user(GET, &me(), &new_ext("nobody")).go().await,
        "user_key_jwt",
        "user_not_found",
    );
    // a known user id works while security mode is off
    let r = app.user(GET, &me(), &ext).go().await;
    let body = r.ok(200);
    assert_eq!(body["external_id"], json!(ext), "{r}");
    assert_eq!(body["id"], user["id"], "{r}");
    // an empty user key next to a valid user id is absent, not invalid
    let r = app
        .user(GET, &me(), &ext)
        .header("x-service-user-key", "")
        .go()
        .await;
    assert_eq!(r.ok(200)["external_id"], json!(ext), "{r}");

    // a user key is always verified: with no signing key stored (mode off) it
    // is invalid_signature, even next to a valid user id
    let token = key_a().token(&ext);
    assert_unauth(
        &jwt_status(&app, &token).await,
        "user_key_jwt",
        "invalid_signature",
    );
    assert_unauth(
        &app.user(GET, &me(), &ext)
            .header("x-service-user-key", &token)
            .go()
            .await,
        "user_key_jwt",
        "invalid_signature",
    );

    // a deleted user's id no longer authenticates
    let r = app
        .admin(DELETE, &format!("{A}/users/{}", enc(&ext)))
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    assert_unauth(
        &app.user(GET, &me(), &ext).go().await,
        "user_key_jwt",
        "user_not_found",
    );
}

/// Security mode on with no signing key: signing_key_not_configured comes
/// before missing_user_key, whatever user credential is given.
#[tokio::test]
async fn security_mode_without_signing_key() {
    let app = TestApp::spawn();
    let (ext, _) = app.create_user("sec", json!({})).await;
    // turning security mode on without a key is allowed
    app.set_security_mode(true).await;
    let r = app.get_project().await;
    let p = r.ok(200);
    assert_eq!(p["security_mode"], json!(true), "{r}");
    assert_eq!(p["signing_key_configured"], json!(false), "{r}");

    let token = key_a().token(&ext);
    for rb in [
        app.api(GET, &me()),
        app.user(GET, &me(), &ext),
        app.user_jwt(GET, &me(), &token),
        app.user(GET, &format!("{U}/preferences"), &ext),
    ] {
        assert_unauth(&rb.go().await, "user_key_jwt", "signing_key_not_configured");
    }
    // the api key still comes first
    assert_unauth(
        &app.request(GET, &me())
            .header("x-service-api-key", format!("pk_test_{}", random_hex()))
            .header("x-service-user-key", &token)
            .go()
            .await,
        "api_key",
        "invalid_api_key",
    );
    // the Admin API is unaffected by security mode
    app.admin(GET, &format!("{A}/users")).go().await.page();

    // with a key stored: no user key → missing_user_key, user id refused
    app.put_signing_key(&key_a().public_pem).await;
    assert_unauth(
        &app.api(GET, &me()).go().await,
        "user_key_jwt",
        "missing_user_key",
    );
    assert_unauth(
        &app.user(GET, &me(), &ext).go().await,
        "user_key_jwt",
        "missing_user_key",
    );
    assert_me(&app, &token, &ext).await;

    // deleting the key brings signing_key_not_configured back
    let r = app
        .admin(DELETE, &format!("{A}/project/signing_key"))
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    assert_unauth(
        &jwt_status(&app, &token).await,
        "user_key_jwt",
        "signing_key_not_configured",
    );
}

/// Every JWT rule, with security mode on and key A stored.
#[tokio::test]
async fn jwt_validation_rules() {
    let app = TestApp::spawn();
    let (ext, _) = app.create_user("jwt", json!({"first_name": "Jay"})).await;
    let (other, _) = app.create_user("jwt-other", json!({})).await;
    app.put_signing_key(&key_a().public_pem).await;
    app.set_security_mode(true).await;
    let now = now_secs();
    let good = key_a().token(&ext);
    assert_me(&app, &good, &ext).await;

    let invalid = |what: &'static str, token: String| (what, token);
    let claims = json!({"sub": ext, "iat": now, "exp": now + 300});
    let parts: Vec<&str> = good.split('.').collect();
    let cases = vec![
        invalid("garbage", "garbage".to_string()),
        invalid("three garbage segments", "not.a-jwt.at-all".to_string()),
        invalid("two segments", format!("{}.{}", parts[0], parts[1])),
        invalid("empty signature", format!("{}.{}.", parts[0], parts[1])),
        invalid(
            "truncated signature",
            format!(
                "{}.{}.{}",
                parts[0],
                parts[1],
                &parts[2][..parts[2].len() - 8]
            ),
        ),
        invalid("alg none", none_token(&claims)),
        invalid(
            "HS256 with a guessed secret",
            hs256_token(&claims, b"secret"),
        ),
        invalid(
            "HS256 keyed with the public key PEM (algorithm confusion)",
            hs256_token(&claims, key_a().public_pem.as_bytes()),
        ),
        invalid(
            "RS384 with the right key",
            sign_with(
                &key_a().private_pem,
                jsonwebtoken::Algorithm::RS384,
                &claims,
            ),
        ),
        invalid(
            "PS256 with the right key",
            sign_with(
                &key_a().private_pem,
                jsonwebtoken::Algorithm::PS256,
                &claims,
            ),
        ),
        invalid("signed by another RSA key", key_b().sign(&claims)),
        invalid(
            "payload swapped to another sub",
            with_payload(&good, &json!({"sub": other, "iat": now, "exp": now + 300})),
        ),
        invalid(
            "no sub claim",
            key_a().sign(&json!({"iat": now, "exp": now + 300})),
        ),
    ];
    for (what, token) in cases {
        let r = jwt_status(&app, &token).await;
        assert_eq!(r.status, 401, "{what}: {r}");
        assert_unauth(&r, "user_key_jwt", "invalid_signature");
    }

    // exp beyond the 30 s leeway
    for ago in [90, 3600] {
        let t = key_a().sign(&json!({"sub": ext, "iat": now - ago - 60, "exp": now - ago}));
        assert_unauth(&jwt_status(&app, &t).await, "user_key_jwt", "token_expired");
    }
    // exp 10 s ago: within the leeway
    assert_me(
        &app,
        &key_a().sign(&json!({"sub": ext, "iat": now - 100, "exp": now - 10})),
        &ext,
    )
    .await;
    // no exp at all: accepted (exp is only checked when present)
    assert_me(&app, &key_a().sign(&json!({"sub": ext})), &ext).await;
    // nbf in the future: rejected
    let t = key_a().sign(&json!({"sub": ext, "nbf": now + 3600, "exp": now + 7200}));
    let r = jwt_status(&app, &t).await;
    let d = assert_error(&r, 401, "unauthenticated");
    assert_eq!(d["auth"], json!("user_key_jwt"), "{r}");
    assert!(
        d["reason"] == json!("invalid_signature") || d["reason"] == json!("token_expired"),
        "nbf in the future: reason {}: {r}",
        d["reason"]
    );
    // nbf in the past: fine
    assert_me(
        &app,
        &key_a().sign(&json!({"sub": ext, "nbf": now - 10, "exp": now + 300})),
        &ext,
    )
    .await;
    // iat, aud and iss are ignored
    assert_me(
        &app,
        &key_a().sign(&json!({
            "sub": ext, "exp": now + 300, "iat": now + 3600,
            "aud": "some-audience", "iss": "https://issuer.example"
        })),
        &ext,
    )
    .await;
    // unknown sub
    assert_unauth(
        &jwt_status(&app, &key_a().token(&new_ext("ghost"))).await,
        "user_key_jwt",
        "user_not_found",
    );
    // a second valid token for another user names that user
    assert_me(&app, &key_a().token(&other), &other).await;

    // the same token is accepted with security mode off too
    app.set_security_mode(false).await;
    assert_me(&app, &good, &ext).await;
    assert_unauth(
        &jwt_status(&app, &key_b().token(&ext)).await,
        "user_key_jwt",
        "invalid_signature",
    );
}

/// A user key, when present, wins over `x-service-user-id`; security mode on
/// refuses the user id alone.
#[tokio::test]
async fn user_key_wins_over_user_id_and_security_mode_refuses_user_id() {
    let app = TestApp::spawn();
    let (u1, _) = app.create_user("win1", json!({})).await;
    let (u2, _) = app.create_user("win2", json!({})).await;
    app.put_signing_key(&key_a().public_pem).await;
    let now = now_secs();
    let both = |token: &str, id: &str| {
        app.user_jwt(GET, &me(), token)
            .header("x-service-user-id", id)
    };

    // mode off
    let r = both(&key_a().token(&u1), &u2).go().await;
    assert_eq!(r.ok(200)["external_id"], json!(u1), "JWT must win: {r}");
    assert_unauth(
        &both(&key_b().token(&u1), &u2).go().await,
        "user_key_jwt",
        "invalid_signature",
    );
    assert_unauth(
        &both(&key_a().sign(&json!({"sub": u1, "exp": now - 600})), &u2)
            .go()
            .await,
        "user_key_jwt",
        "token_expired",
    );
    assert_unauth(
        &both(&key_a().token(&new_ext("ghost")), &u2).go().await,
        "user_key_jwt",
        "user_not_found",
    );
    let r = app.user(GET, &me(), &u2).go().await;
    assert_eq!(r.ok(200)["external_id"], json!(u2), "{r}");

    // mode on: the user id alone is refused, JWTs work, and still win
    app.set_security_mode(true).await;
    assert_unauth(
        &app.user(GET, &me(), &u2).go().await,
        "user_key_jwt",
        "missing_user_key",
    );
    assert_unauth(
        &app.user(GET, &me(), &new_ext("ghost")).go().await,
        "user_key_jwt",
        "missing_user_key",
    );
    assert_me(&app, &key_a().token(&u1), &u1).await;
    let r = both(&key_a().token(&u1), &u2).go().await;
    assert_eq!(r.ok(200)["external_id"], json!(u1), "{r}");
    // a write through the User API with a JWT
    let r = app
        .user_jwt(PUT, &me(), &key_a().token(&u1))
        .json(&json!({"first_name": "Jwt"}))
        .go()
        .await;
    assert_eq!(r.ok(200)["first_name"], json!("Jwt"), "{r}");

    // mode off again: the user id works again
    app.set_security_mode(false).await;
    let r = app.user(GET, &me(), &u2).go().await;
    assert_eq!(r.ok(200)["external_id"], json!(u2), "{r}");
}

/// GET/PUT /admin/v1/project.
#[tokio::test]
async fn project_settings_read_and_update() {
    let app = TestApp::spawn();
    let path = format!("{A}/project");
    let r = app.admin(GET, &path).go().await;
    let p = r.ok(200);
    assert!(p["id"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
    assert_eq!(p["name"], json!("default"), "{r}");
    assert_eq!(p["security_mode"], json!(false), "new project: {r}");
    assert_eq!(p["signing_key_configured"], json!(false), "{r}");
    assert!(is_timestamp(&p["created_at"]), "created_at: {r}");
    assert!(is_timestamp(&p["updated_at"]), "updated_at: {r}");
    let text = r.text.clone();
    assert!(
        !text.contains(&app.secret_key),
        "the project must not echo its secret key: {r}"
    );

    // partial updates
    let r = app
        .admin(PUT, &path)
        .json(&json!({"name": "Renamed"}))
        .go()
        .await;
    let q = r.ok(200);
    assert_eq!(q["name"], json!("Renamed"), "{r}");
    assert_eq!(q["security_mode"], json!(false), "{r}");
    assert_eq!(q["id"], p["id"], "{r}");
    assert_eq!(q["created_at"], p["created_at"], "{r}");
    let r = app
        .admin(PUT, &path)
        .json(&json!({"security_mode": true}))
        .go()
        .await;
    let q = r.ok(200);
    assert_eq!(q["name"], json!("Renamed"), "{r}");
    assert_eq!(q["security_mode"], json!(true), "{r}");
    let r = app.admin(PUT, &path).json(&json!({})).go().await;
    let q = r.ok(200);
    assert_eq!(
        (q["name"].clone(), q["security_mode"].clone()),
        (json!("Renamed"), json!(true)),
        "{r}"
    );
    let r = app.admin(GET, &path).go().await;
    let q = r.ok(200);
    assert_eq!(q["name"], json!("Renamed"), "{r}");
    assert_eq!(q["security_mode"], json!(true), "{r}");

    // wrong types
    let r = app
        .admin(PUT, &path)
        .json(&json!({"security_mode": "yes"}))
        .go()
        .await;
    assert_validation(&r, &[("security_mode", "format")]);
    let r = app.admin(PUT, &path).json(&json!({"name": 12})).go().await;
    assert_validation(&r, &[("name", "format")]);
    // nothing changed by the refused PUTs
    let r = app.admin(GET, &path).go().await;
    assert_eq!(r.ok(200)["security_mode"], json!(true), "{r}");

    // admin credentials needed
    assert_unauth(
        &app.api(GET, &path).go().await,
        "secret_key",
        "missing_secret_key",
    );
}

/// PUT /admin/v1/project/signing_key: PEM formats and validation.
#[tokio::test]
async fn put_signing_key_validates_the_pem() {
    let app = TestApp::spawn();
    let (ext, _) = app.create_user("pem", json!({})).await;
    let path = format!("{A}/project/signing_key");
    let small = RsaPair::generate(1024);
    let bad: Vec<(&str, Value)> = vec![
        ("not a PEM", json!("hello")),
        (
            "PEM armour around garbage",
            json!(
                "-----BEGIN PUBLIC KEY-----\nAAAAB3NzaC1yc2EAAAADAQAB\n-----END PUBLIC KEY-----\n"
            ),
        ),
        ("a 1024-bit SPKI key", json!(small.public_pem)),
        ("a 1024-bit PKCS#1 key", json!(small.public_pkcs1_pem)),
        ("a private key", json!(key_a().private_pem)),
        ("a number", json!(42)),
    ];
    for (what, value) in bad {
        let r = app
            .admin(PUT, &path)
            .json(&json!({ "public_key": value }))
            .go()
            .await;
        assert_eq!(r.status, 422, "{what}: {r}");
        assert_validation(&r, &[("public_key", "format")]);
    }
    // an empty string: not a key (format), or too short (length)
    let r = app
        .admin(PUT, &path)
        .json(&json!({ "public_key": "" }))
        .go()
        .await;
    let d = assert_error(&r, 422, "validation_failed");
    assert!(
        d["fields"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["field"] == json!("public_key")
                && (f["reason"] == json!("format") || f["reason"] == json!("length")))),
        "an empty public_key: {r}"
    );
    let r = app.admin(PUT, &path).json(&json!({})).go().await;
    assert_validation(&r, &[("public_key", "required")]);
    let r = app.get_project().await;
    assert_eq!(
        r.ok(200)["signing_key_configured"],
        json!(false),
        "no key after refused PUTs: {r}"
    );

    // SPKI accepted; answers the project
    let p = app.put_signing_key(&key_a().public_pem).await;
    assert_eq!(p["signing_key_configured"], json!(true), "{p}");
    assert_eq!(p["name"], json!("default"), "{p}");
    assert_me(&app, &key_a().token(&ext), &ext).await;

    // PKCS#1 accepted; it replaces the previous key
    let p = app.put_signing_key(&key_b().public_pkcs1_pem).await;
    assert_eq!(p["signing_key_configured"], json!(true), "{p}");
    assert_me(&app, &key_b().token(&ext), &ext).await;
    assert_unauth(
        &jwt_status(&app, &key_a().token(&ext)).await,
        "user_key_jwt",
        "invalid_signature",
    );
}

/// POST (generate) and DELETE /admin/v1/project/signing_key.
#[tokio::test]
async fn generated_signing_key_signs_tokens_and_delete() {
    use rsa::pkcs1::DecodeRsaPublicKey;
    use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey};
    use rsa::traits::PublicKeyParts;

    let app = TestApp::spawn();
    let (ext, _) = app.create_user("gen", json!({})).await;
    let path = format!("{A}/project/signing_key");

    // DELETE with none stored
    let r = app.admin(DELETE, &path).go().await;
    assert_eq!(r.status, 204, "{r}");
    assert!(r.text.is_empty(), "204 must have an empty body: {r}");

    let r = app.admin(POST, &path).go().await;
    let pair = r.ok(201);
    let private_pem = pair["private_key"]
        .as_str()
        .expect("private_key")
        .to_string();
    let public_pem = pair["public_key"].as_str().expect("public_key").to_string();
    assert!(
        private_pem.contains("-----BEGIN PRIVATE KEY-----"),
        "private key must be PKCS#8 PEM: {r}"
    );
    let private = rsa::RsaPrivateKey::from_pkcs8_pem(&private_pem).expect("PKCS#8 private key");
    assert_eq!(private.size() * 8, 2048, "RSA-2048 expected");
    let public = rsa::RsaPublicKey::from_public_key_pem(&public_pem)
        .or_else(|_| rsa::RsaPublicKey::from_pkcs1_pem(&public_pem))
        .expect("public key PEM (SPKI or PKCS#1)");
    assert_eq!(
        public,
        private.to_public_key(),
        "the two PEMs must be a pair"
    );

    let r = app.get_project().await;
    assert_eq!(r.ok(200)["signing_key_configured"], json!(true), "{r}");
    assert!(
        !r.text.contains("PRIVATE KEY"),
        "the private key is returned once only: {r}"
    );

    app.set_security_mode(true).await;
    let token = sign_with(
        &private_pem,
        jsonwebtoken::Algorithm::RS256,
        &json!({"sub": ext, "exp": now_secs() + 300}),
    );
    assert_me(&app, &token, &ext).await;

    // a second POST makes a new pair, replacing the first
    let r = app.admin(POST, &path).go().await;
    let pair2 = r.ok(201);
    let private2 = pair2["private_key"]
        .as_str()
        .expect("private_key")
        .to_string();
    assert_ne!(private2, private_pem, "a new pair each time");
    assert_unauth(
        &jwt_status(&app, &token).await,
        "user_key_jwt",
        "invalid_signature",
    );
    let token2 = sign_with(
        &private2,
        jsonwebtoken::Algorithm::RS256,
        &json!({"sub": ext, "exp": now_secs() + 300}),
    );
    assert_me(&app, &token2, &ext).await;

    // DELETE → 204; then no key: signing_key_not_configured (mode on),
    // invalid_signature (mode off)
    let r = app.admin(DELETE, &path).go().await;
    assert_eq!(r.status, 204, "{r}");
    assert!(r.text.is_empty(), "{r}");
    let r = app.get_project().await;
    assert_eq!(r.ok(200)["signing_key_configured"], json!(false), "{r}");
    assert_unauth(
        &jwt_status(&app, &token2).await,
        "user_key_jwt",
        "signing_key_not_configured",
    );
    app.set_security_mode(false).await;
    assert_unauth(
        &jwt_status(&app, &token2).await,
        "user_key_jwt",
        "invalid_signature",
    );
    let r = app.admin(DELETE, &path).go().await;
    assert_eq!(r.status, 204, "DELETE again: {r}");
}

/// The User API resolves users through a cache: every way a user changes or
/// goes away must show on the very next request.
#[tokio::test]
async fn user_api_sees_user_changes_and_deletion_at_once() {
    let app = TestApp::spawn();
    let (ext, created) = app
        .create_user("cached", json!({"first_name": "Ann"}))
        .await;
    let r = app.user(GET, &me(), &ext).go().await;
    assert_eq!(r.ok(200)["first_name"], json!("Ann"), "{r}");

    // an admin update
    let r = app
        .admin(PUT, &format!("{A}/users/{ext}"))
        .json(&json!({"first_name": "Bea"}))
        .go()
        .await;
    r.ok(200);
    let r = app.user(GET, &me(), &ext).go().await;
    assert_eq!(r.ok(200)["first_name"], json!("Bea"), "{r}");

    // an inline identify in a run
    let inapp = crate::engine_helpers::in_app_channel(&app).await;
    let flow = crate::engine_helpers::active_flow(
        &app,
        "cache",
        json!([crate::engine_helpers::channel_step(&inapp, None, "hi")]),
    )
    .await;
    crate::engine_helpers::run_flow(
        &app,
        flow["id"].as_str().unwrap(),
        json!({"recipients": [{"external_id": ext, "first_name": "Cy"}]}),
    )
    .await;
    let r = app.user(GET, &me(), &ext).go().await;
    assert_eq!(r.ok(200)["first_name"], json!("Cy"), "{r}");

    // deletion: the next request no longer authenticates
    app.admin(DELETE, &format!("{A}/users/{ext}"))
        .go()
        .await
        .ok(204);
    assert_unauth(
        &app.user(GET, &me(), &ext).go().await,
        "user_key_jwt",
        "user_not_found",
    );
    // and a user created again under the same external id is a new user
    let again = app.create_user_as(&ext, json!({})).await;
    assert_ne!(again["id"], created["id"]);
    let r = app.user(GET, &me(), &ext).go().await;
    let body = r.ok(200);
    assert_eq!(body["id"], again["id"], "{body}");
    assert_eq!(body["first_name"], Value::Null, "{body}");
}
