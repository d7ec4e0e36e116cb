//! Topics: the list (with each one's subscriber count) and one topic's
//! subscribers, whom the page's script adds and removes through the Admin
//! API (`POST` and `DELETE /admin/v1/topics/{key}/subscriptions…`).

use super::super::render::member_page;
use super::super::Member;
use super::common::{failed, next_link, user_path};
use crate::bodies::{Subscription, Topic};
use crate::extract::{path_str, Query};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use minijinja::context;

const NAV: &str = "/console/topics";

pub async fn list(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let q = Query::of(&req);
    let paging = match pagination::parse(&q, st.cursor_key(), &m.project_id, "console.topics", &[])
    {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let page = match st
        .engine
        .list_topics(m.project_id, paging.req.clone())
        .await
    {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e),
    };
    let next = next_link(NAV, &[], paging.page_object(&page).after);
    let items: Vec<Topic> = page.items.iter().map(Topic::from).collect();
    member_page(
        &m,
        NAV,
        "pages/topics.html",
        context! { items => items, next => next },
    )
}

pub async fn one(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let key = match path_str(&req, "key") {
        Ok(k) => k,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let topic = match st.engine.topic(m.project_id, key.clone()).await {
        Ok(t) => Topic::from(&t),
        Err(e) => return failed(&m, NAV, e),
    };
    let q = Query::of(&req);
    let list = format!("console.topic_subs:{key}");
    let paging = match pagination::parse(&q, st.cursor_key(), &m.project_id, &list, &[]) {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let page = match st
        .engine
        .topic_subscriptions(m.project_id, key.clone(), paging.req.clone())
        .await
    {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e),
    };
    let here = format!("{NAV}/{}", super::common::segment(&key));
    let next = next_link(&here, &[], paging.page_object(&page).after);
    let subscribers: Vec<serde_json::Value> = page
        .items
        .iter()
        .map(|s| {
            let s = Subscription::from(s);
            serde_json::json!({
                "external_id": s.user_external_id,
                "path": user_path(&s.user_external_id),
                "created_at": s.created_at,
            })
        })
        .collect();
    member_page(
        &m,
        NAV,
        "pages/topic.html",
        context! { t => topic, subscribers => subscribers, next => next },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{body, member};
    use super::*;

    #[test]
    fn a_topic_lists_its_subscribers_with_remove_buttons() {
        let b = body(member_page(
            &member(),
            NAV,
            "pages/topic.html",
            context! {
                t => serde_json::json!({"key": "team-<1>", "name": "Team", "subscribers_count": 1}),
                subscribers => serde_json::json!([{"external_id": "ann", "path": "/console/users/ann"}]),
            },
        ));
        assert!(b.contains("team-&lt;1&gt;"), "{b}");
        assert!(b.contains("aria-label=\"Remove ann\""), "{b}");
    }
}
