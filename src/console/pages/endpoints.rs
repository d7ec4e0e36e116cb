//! Event endpoints: the list, and one endpoint with its recent attempts
//! (event, status, latency, the answer's start). The page's script creates
//! endpoints, replays events since a time and rotates the signing secret
//! through the Admin API; a secret is shown once, as the API answers it.

use super::super::render::member_page;
use super::super::Member;
use super::common::{failed, next_link};
use crate::bodies::webhook_endpoints::{EventAttemptView, WebhookEndpoint};
use crate::extract::{path_uuid, Query};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use minijinja::context;

const NAV: &str = "/console/endpoints";

pub async fn list(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let q = Query::of(&req);
    let list = "console.webhook_endpoints";
    let paging = match pagination::parse(&q, st.cursor_key(), &m.project_id, list, &[]) {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let page = match st
        .engine
        .event_endpoints(m.project_id)
        .list(paging.req.clone())
        .await
    {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e),
    };
    let next = next_link(NAV, &[], paging.page_object(&page).after);
    let items: Vec<WebhookEndpoint> = page.items.iter().map(WebhookEndpoint::from).collect();
    member_page(
        &m,
        NAV,
        "pages/endpoints.html",
        context! { items => items, next => next },
    )
}

pub async fn one(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let id = match path_uuid(&req, "id") {
        Ok(id) => id,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let eps = st.engine.event_endpoints(m.project_id);
    let ep = match eps.get(id).await {
        Ok(ep) => WebhookEndpoint::from(&ep),
        Err(e) => return failed(&m, NAV, e),
    };
    let q = Query::of(&req);
    let list = format!("console.webhook_attempts:{id}");
    let paging = match pagination::parse(&q, st.cursor_key(), &m.project_id, &list, &[]) {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let page = match eps.attempts(id, paging.req.clone()).await {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e),
    };
    let next = next_link(&format!("{NAV}/{id}"), &[], paging.page_object(&page).after);
    let attempts: Vec<EventAttemptView> = page.items.iter().map(EventAttemptView::from).collect();
    member_page(
        &m,
        NAV,
        "pages/endpoint.html",
        context! { ep => ep, attempts => attempts, next => next },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{body, member};
    use super::*;

    #[test]
    fn an_endpoint_shows_its_attempts_escaped() {
        let b = body(member_page(
            &member(),
            NAV,
            "pages/endpoint.html",
            context! {
                ep => serde_json::json!({"id": "e1", "url": "https://x.example/<h>", "enabled": true, "event_types": []}),
                attempts => serde_json::json!([{"attempt": 1, "event_type": "delivery.sent",
                    "status_code": 500, "latency_ms": 12, "response": "<oops>", "error": "HTTP 500"}]),
            },
        ));
        assert!(
            b.contains("https:&#x2f;&#x2f;x.example&#x2f;&lt;h&gt;"),
            "{b}"
        );
        assert!(b.contains("&lt;oops&gt;"), "{b}");
        assert!(b.contains("id=\"rotate-secret\""), "{b}");
    }
}
