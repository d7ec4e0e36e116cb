//! Requests of a project's content (partials, layouts, translations), one
//! method per endpoint: `kind` is the path's collection (`partials`,
//! `layouts`, `translations`) and `key` a handle or a locale.

use super::*;

use serde_json::Value;

impl TestApp {
    /// `PUT /admin/v1/{kind}/{key}`
    pub async fn put_content(&self, kind: &str, key: &str, body: &Value) -> Resp {
        self.admin(Method::PUT, &format!("{A}/{kind}/{key}"))
            .json(body)
            .go()
            .await
    }

    /// `GET /admin/v1/{kind}/{key}`
    pub async fn get_content(&self, kind: &str, key: &str) -> Resp {
        self.admin(Method::GET, &format!("{A}/{kind}/{key}"))
            .go()
            .await
    }

    /// `GET /admin/v1/{kind}`
    pub async fn list_content(&self, kind: &str) -> Resp {
        self.admin(Method::GET, &format!("{A}/{kind}")).go().await
    }

    /// `DELETE /admin/v1/{kind}/{key}`
    pub async fn delete_content(&self, kind: &str, key: &str) -> Resp {
        self.admin(Method::DELETE, &format!("{A}/{kind}/{key}"))
            .go()
            .await
    }
}
