//! Users: the list (or a search by part of an external id or email) and
//! one user's page: profile, preference toggles (the page's script saves
//! them through `PUT /admin/v1/users/{external_id}/preferences`), their
//! latest notifications, and their in-app feed (which the script reads from
//! the Admin API's `GET …/feed`, as the User API shows it).

use super::super::render::member_page;
use super::super::Member;
use super::common::{failed, user_path, with_user_paths};
use crate::bodies::preferences::Preferences;
use crate::extract::{path_str, Query};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::actors::{NotificationQuery, SEARCH_CAP};
use herald_engine::storage::PageReq;
use herald_engine::views::UserView;
use minijinja::context;

const NAV: &str = "/console/users";

/// How many of a user's notifications their page lists.
const LATEST: usize = 10;

/// Users as the list shows them, each with the path of their page.
fn rows(users: &[herald_engine::model::User]) -> Vec<serde_json::Value> {
    users
        .iter()
        .map(|u| {
            let mut v = serde_json::to_value(UserView::from(u)).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert("path".into(), user_path(&u.external_id).into());
            }
            v
        })
        .collect()
}

pub async fn list(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let q = Query::of(&req);
    let search = q
        .get("q")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    if let Some(text) = search {
        return match st.engine.search_users(m.project_id, text.clone()).await {
            Ok(found) => member_page(
                &m,
                NAV,
                "pages/users.html",
                context! {
                    q => text,
                    items => rows(&found.users),
                    capped => found.capped,
                    cap => SEARCH_CAP,
                },
            ),
            Err(e) => failed(&m, NAV, e),
        };
    }
    let paging = match pagination::parse(&q, st.cursor_key(), &m.project_id, "console.users", &[]) {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let page = match st.engine.list_users(m.project_id, paging.req.clone()).await {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e),
    };
    let next = super::common::next_link(NAV, &[], paging.page_object(&page).after);
    member_page(
        &m,
        NAV,
        "pages/users.html",
        context! {
            items => rows(&page.items),
            next => next,
        },
    )
}

pub async fn one(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let ext = match path_str(&req, "external_id") {
        Ok(e) => e,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let pid = m.project_id;
    let user = match st.engine.user(pid, ext.clone()).await {
        Ok(u) => u,
        Err(e) => return failed(&m, NAV, e),
    };
    let prefs = match st.engine.preference_setting(pid, Some(user.id)).await {
        Ok(s) => Preferences::new(&s, false),
        Err(e) => return failed(&m, NAV, e),
    };
    let query = NotificationQuery {
        recipient: Some(ext.clone()),
        ..Default::default()
    };
    let req = PageReq {
        limit: LATEST,
        after: None,
        before: None,
    };
    let notifications = match st.engine.notifications(pid).list(query, req).await {
        Ok((_, items)) => items,
        Err(e) => return failed(&m, NAV, e),
    };
    member_page(
        &m,
        NAV,
        "pages/user.html",
        context! {
            u => UserView::from(&user),
            custom_fields => serde_json::to_string_pretty(&user.custom_fields).unwrap_or_default(),
            prefs => prefs,
            notifications => with_user_paths(&notifications),
            all_notifications => format!(
                "/console/notifications?{}",
                url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("recipient", &ext)
                    .finish()
            ),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{body, member};
    use super::*;

    #[test]
    fn a_user_page_has_labelled_toggles() {
        let b = body(member_page(
            &member(),
            NAV,
            "pages/user.html",
            context! {
                u => serde_json::json!({"external_id": "a/b<c>", "email": "x@y.z"}),
                custom_fields => "{}",
                prefs => serde_json::json!({
                    "channel_types": {"email": true, "sms": false},
                    "flows": {"welcome": {"name": "Welcome", "enabled": true, "channel_types": {}}},
                    "categories": {}
                }),
                notifications => Vec::<u8>::new(),
            },
        ));
        assert!(b.contains("a&#x2f;b&lt;c&gt;"), "{b}");
        assert!(b.contains("data-pref=\"channel_types.email\""), "{b}");
        assert!(b.contains("data-pref=\"flows.welcome.enabled\""), "{b}");
        assert!(b.contains("data-user=\"a&#x2f;b&lt;c&gt;\""), "{b}");
    }
}
