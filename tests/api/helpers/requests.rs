//! Requests: with each kind of credentials, and per endpoint where a call
//! repeats across tests (as `create_user`, `get_project`).

use super::*;

use serde_json::{json, Value};

impl TestApp {
    // ------------------------------------------------------------ requests

    /// The URL of `path` on the node whose turn it is.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.next_address(), path)
    }

    /// No headers at all.
    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, self.url(path))
    }

    /// Only the public API key.
    pub fn api(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.request(method, path)
            .header("x-service-api-key", &self.public_key)
    }

    /// Admin API credentials (API key + secret key).
    pub fn admin(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.api(method, path)
            .header("x-service-secret-key", &self.secret_key)
    }

    /// User API with `x-service-user-id` (development mode).
    pub fn user(&self, method: Method, path: &str, external_id: &str) -> reqwest::RequestBuilder {
        self.api(method, path)
            .header("x-service-user-id", external_id)
    }

    /// User API with a JWT user key.
    pub fn user_jwt(&self, method: Method, path: &str, token: &str) -> reqwest::RequestBuilder {
        self.api(method, path).header("x-service-user-key", token)
    }

    /// Admin API credentials of another project (same server).
    pub fn admin_with(&self, keys: &Keys, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.request(method, path)
            .header("x-service-api-key", &keys.public_key)
            .header("x-service-secret-key", &keys.secret_key)
    }

    /// User API (user id header) with another project's API key.
    pub fn user_with(
        &self, keys: &Keys, method: Method, path: &str, external_id: &str,
    ) -> reqwest::RequestBuilder {
        self.request(method, path)
            .header("x-service-api-key", &keys.public_key)
            .header("x-service-user-id", external_id)
    }

    /// Creates a user with a unique external id (tag-prefixed); asserts 201.
    pub async fn create_user(&self, tag: &str, fields: Value) -> (String, Value) {
        let ext = new_ext(tag);
        let user = self.create_user_as(&ext, fields).await;
        (ext, user)
    }

    /// Creates the user `ext`; asserts 201 and returns the User.
    pub async fn create_user_as(&self, ext: &str, fields: Value) -> Value {
        let r = self
            .admin(PUT, &format!("{A}/users/{}", enc(ext)))
            .json(&fields)
            .go()
            .await;
        let u = r.ok(201);
        assert_eq!(u["external_id"], json!(ext), "created user: {r}");
        u
    }

    pub async fn set_security_mode(&self, on: bool) {
        let r = self
            .admin(PUT, &format!("{A}/project"))
            .json(&json!({ "security_mode": on }))
            .go()
            .await;
        assert_eq!(r.ok(200)["security_mode"], json!(on), "{r}");
    }

    /// Stores `public_pem` as the project's signing key (asserts 200).
    pub async fn put_signing_key(&self, public_pem: &str) -> Value {
        let r = self
            .admin(PUT, &format!("{A}/project/signing_key"))
            .json(&json!({ "public_key": public_pem }))
            .go()
            .await;
        r.ok(200)
    }

    // ------------------------------------------------------------ per endpoint

    /// `GET /admin/v1/project`.
    pub async fn get_project(&self) -> Resp {
        self.admin(GET, &format!("{A}/project")).go().await
    }

    /// `PUT /admin/v1/project` with `body`.
    pub async fn put_project(&self, body: &Value) -> Resp {
        self.admin(PUT, &format!("{A}/project"))
            .json(body)
            .go()
            .await
    }

    /// `GET /admin/v1/audit_log` with `query` (`limit`, `after`,
    /// `resource_type`, `who`).
    pub async fn audit_log(&self, query: &[(&str, &str)]) -> Resp {
        self.admin(GET, &format!("{A}/audit_log"))
            .query(query)
            .go()
            .await
    }

    /// `POST /admin/v1/channels/{channel}/test` with `body` (`user_id`,
    /// `data`).
    pub async fn test_channel(&self, channel: &str, body: &Value) -> Resp {
        self.admin(POST, &format!("{A}/channels/{channel}/test"))
            .json(body)
            .go()
            .await
    }

    /// `POST /admin/v1/project/clock/advance` with `body` (`by` or `to`).
    pub async fn advance_clock(&self, body: &Value) -> Resp {
        self.admin(POST, &format!("{A}/project/clock/advance"))
            .json(body)
            .go()
            .await
    }

    /// `POST /user/v1/feed/{entry}/interact` as user `ext` with `body`
    /// (`{"action": i}`).
    pub async fn interact(&self, ext: &str, entry: &str, body: &Value) -> Resp {
        self.user(POST, &format!("{U}/feed/{entry}/interact"), ext)
            .json(body)
            .go()
            .await
    }

    /// `POST /user/v1/feed/archive_all` as user `ext`, with the feed list's
    /// filters as `query` (`status`, `flow`).
    pub async fn archive_all(&self, ext: &str, query: &[(&str, &str)]) -> Resp {
        self.user(POST, &format!("{U}/feed/archive_all"), ext)
            .query(query)
            .go()
            .await
    }

    /// `POST /hooks/v1/{channel_id}` (a provider's callback, no Herald
    /// credentials) with the raw `body` as `content_type`; `sign` gets the
    /// absolute URL called (the scheme of Twilio signs it) and gives the
    /// headers that authenticate the call.
    pub async fn provider_callback(
        &self, channel_id: &str, content_type: &str, body: Vec<u8>,
        sign: impl FnOnce(&str) -> Vec<(String, String)>,
    ) -> Resp {
        let url = self.url(&format!("/hooks/v1/{channel_id}"));
        let mut req = self.client.post(&url).header("content-type", content_type);
        for (k, v) in sign(&url) {
            req = req.header(k, v);
        }
        req.body(body).go().await
    }
}
