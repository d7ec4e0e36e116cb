//! Messages: the project's notifications, newest first, keyset-paginated
//! and filtered as the Admin API's list is (status, flow, recipient, time),
//! and one notification with its deliveries, their attempts and provider
//! answers, and its decision trace as a timeline (`timeline`).

use super::super::render::member_page;
use super::super::Member;
use super::common::{failed, with_user_paths};
use super::timeline;
use crate::extract::Query;
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::actors::NotificationQuery;
use herald_engine::model::Timestamp;
use herald_engine::views::NotificationView;
use herald_engine::Error;
use minijinja::context;
use std::collections::hash_map::{Entry, HashMap};

const NAV: &str = "/console/notifications";

/// The time filter's choices: (value, words, milliseconds back).
const SINCE: &[(&str, &str, i64)] = &[
    ("1h", "Last hour", 3_600_000),
    ("24h", "Last 24 hours", 86_400_000),
    ("7d", "Last 7 days", 7 * 86_400_000),
];

/// A filter's value, empty taken as absent (an untouched form field).
fn field(q: &Query, name: &str) -> Option<String> {
    q.get(name)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

pub async fn list(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let q = Query::of(&req);
    let status = field(&q, "status");
    let flow = field(&q, "flow");
    let recipient = field(&q, "recipient");
    let since = field(&q, "since");
    let processed = match status.as_deref() {
        None => None,
        Some("pending") => Some(false),
        Some("processed") => Some(true),
        Some(_) => {
            return failed(
                &m,
                NAV,
                Error::invalid_param("status", "unknown value for status"),
            )
        }
    };
    let created_after = match since.as_deref() {
        None => None,
        Some(s) => match SINCE.iter().find(|(v, _, _)| *v == s) {
            Some((_, _, back)) => Some(Timestamp::from_millis(
                st.engine.project_now(&m.project_id).millis() - back,
            )),
            None => {
                return failed(
                    &m,
                    NAV,
                    Error::invalid_param("since", "unknown value for since"),
                )
            }
        },
    };
    // The cursor is bound to the list and its filters, as the API's is.
    let filters = [
        ("status", status.clone()),
        ("flow", flow.clone()),
        ("recipient", recipient.clone()),
        ("since", since.clone()),
    ];
    let paging = match pagination::parse(
        &q,
        st.cursor_key(),
        &m.project_id,
        "console.notifications",
        &filters,
    ) {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let query = NotificationQuery {
        processed,
        created_after,
        flow: flow.clone(),
        recipient: recipient.clone(),
        ..Default::default()
    };
    let (page, items) = match st
        .engine
        .notifications(m.project_id)
        .list(query, paging.req.clone())
        .await
    {
        Ok(x) => x,
        Err(e) => return failed(&m, NAV, e),
    };
    let next = super::common::next_link(NAV, &filters, paging.page_object(&page).after);
    let mut rows = with_user_paths(&items);
    with_flow_handles(&st, m.project_id, &items, &mut rows).await;
    member_page(
        &m,
        NAV,
        "pages/messages.html",
        context! {
            items => rows,
            next => next,
            status => status,
            flow => flow,
            recipient => recipient,
            since => since,
            since_choices => SINCE.iter().map(|(v, w, _)| (*v, *w)).collect::<Vec<_>>(),
        },
    )
}

/// Gives each row of `items` the `flow` it came from (`handle` and the
/// editor's `path`), each flow of the page read once. A channel's test and a
/// notification whose flow is gone have none (the column says so).
async fn with_flow_handles(
    st: &State, project: uuid::Uuid, items: &[NotificationView], rows: &mut [serde_json::Value],
) {
    let mut handles: HashMap<uuid::Uuid, Option<String>> = HashMap::new();
    for (n, row) in items.iter().zip(rows.iter_mut()) {
        if n.test_channel_id.is_some() {
            continue;
        }
        let h = match handles.entry(n.flow_id) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let f = st.engine.flow(project, n.flow_id.to_string()).await.ok();
                e.insert(f.map(|f| f.handle))
            }
        };
        if let Some(h) = h {
            row["flow"] = serde_json::json!({
                "handle": h,
                "path": format!("/console/flows/{}", super::common::segment(h)),
            });
        }
    }
}

pub async fn one(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let id = match crate::extract::path_uuid(&req, "id") {
        Ok(id) => id,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let n = match st.engine.notifications(m.project_id).get(id).await {
        Ok(n) => n,
        Err(e) => return failed(&m, NAV, e),
    };
    let trace = match st.engine.notification_trace(m.project_id, id).await {
        Ok(t) => t,
        Err(e) => return failed(&m, NAV, e),
    };
    member_page(
        &m,
        NAV,
        "pages/message.html",
        context! {
            n => with_user_paths(std::slice::from_ref(&n)).pop(),
            data => serde_json::to_string_pretty(&n.data).unwrap_or_default(),
            timeline => timeline::timeline(&trace),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::super::render::member_page;
    use super::super::tests::{body, member};
    use super::*;

    #[test]
    fn a_timeline_renders_escaped() {
        let e = herald_engine::trace::entry(
            Timestamp::from_millis(0),
            "template.failed",
            serde_json::json!({"step": 0, "error": "<script>x</script>"}),
        );
        let r = member_page(
            &member(),
            NAV,
            "pages/message.html",
            context! {
                n => serde_json::json!({"id": "n1", "status": "processed", "deliveries": [
                    {"id": "d1", "channel_type": "email", "status": "failed", "attempts": 1,
                     "error": {"code": "template_error", "message": "bad <b>"}}
                ], "recipient": {"external_id": "u<1>", "path": "/console/users/u%3C1%3E"}}),
                data => "{}",
                timeline => timeline::timeline(&[e]),
            },
        );
        let b = body(r);
        assert!(b.contains("the template failed"), "{b}");
        assert!(b.contains("&lt;script&gt;x&lt;&#x2f;script&gt;"));
        assert!(!b.contains("<script>x"));
        assert!(b.contains("u&lt;1&gt;"));
        assert!(b.contains("template_error"));
    }

    #[test]
    fn a_channel_test_says_so() {
        let n = serde_json::json!({"id": "n1", "status": "processed", "deliveries": [],
            "test_channel_id": "c<1>", "recipient": null});
        let one = body(member_page(
            &member(),
            NAV,
            "pages/message.html",
            context! { n => n, data => "{}", timeline => timeline::timeline(&[]) },
        ));
        assert!(one.contains("A test of the channel"), "{one}");
        assert!(
            one.contains("href=\"/console/channels/c&lt;1&gt;\""),
            "{one}"
        );
        let list = body(member_page(
            &member(),
            NAV,
            "pages/messages.html",
            context! { items => vec![n], since_choices => Vec::<(&str, &str)>::new() },
        ));
        assert!(list.contains("(channel test)"), "{list}");
    }

    #[test]
    fn the_list_renders_with_its_filters() {
        let r = member_page(
            &member(),
            NAV,
            "pages/messages.html",
            context! {
                items => serde_json::json!([{"id": "abc", "status": "pending",
                    "created_at": "2026-01-01T00:00:00.000Z", "deliveries": [],
                    "recipient": {"external_id": "ann", "path": "/console/users/ann"},
                    "flow": {"handle": "welcome", "path": "/console/flows/welcome"}}]),
                next => "/console/notifications?after=x&recipient=a%26b",
                recipient => "a\"b",
                since_choices => SINCE.iter().map(|(v, w, _)| (*v, *w)).collect::<Vec<_>>(),
            },
        );
        let b = body(r);
        assert!(b.contains("href=\"/console/notifications/abc\""), "{b}");
        assert!(
            b.contains("<a href=\"&#x2f;console&#x2f;flows&#x2f;welcome\">welcome</a>"),
            "{b}"
        );
        assert!(b.contains("value=\"a&quot;b\""), "{b}");
        assert!(b.contains("after=x&amp;recipient=a%26b"), "{b}");
        assert!(b.contains("aria-current=\"page\""));
    }
}
