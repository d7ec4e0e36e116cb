//! Flows: the list with each flow's status, and the editor of one flow
//! (`/console/flows/{handle}`; a handle no flow has opens an empty editor
//! that creates it). The editor's steps, Save, Activate, Archive, live
//! preview and Send test are the page's script calling the Admin API; this
//! module gives it the flow as the API shows it and the project's channels
//! (id, name and type only: never their configuration).

use super::super::render::member_page;
use super::super::Member;
use super::common::failed;
use crate::bodies::flows::Flow as FlowBody;
use crate::extract::{path_str, Query};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::ErrorCode;
use minijinja::context;
use serde::Serialize;

const NAV: &str = "/console/flows";

/// A channel as the editor's channel choices show it.
#[derive(Serialize)]
struct ChannelChoice {
    id: uuid::Uuid,
    name: String,
    channel_type: &'static str,
}

pub async fn list(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let q = Query::of(&req);
    let paging = match pagination::parse(&q, st.cursor_key(), &m.project_id, "console.flows", &[]) {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let page = match st.engine.list_flows(m.project_id, paging.req.clone()).await {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e),
    };
    let next = paging
        .page_object(&page)
        .after
        .map(|c| format!("{NAV}?after={}", urlencoding(&c)));
    let items: Vec<FlowBody> = page.items.iter().map(FlowBody::from).collect();
    member_page(
        &m,
        NAV,
        "pages/flows.html",
        context! { items => items, next => next },
    )
}

/// A cursor in a query string (base64url: only `=` could need escaping).
fn urlencoding(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// JSON to sit in a `<script type="application/json">`: a data block, not
/// run (the CSP allows no inline script), with `<` escaped so nothing in it
/// can close the element.
pub(super) fn inert_json(v: &impl Serialize) -> minijinja::Value {
    let s = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    minijinja::Value::from_safe_string(s.replace('<', "\\u003c"))
}

pub async fn editor(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let handle = match path_str(&req, "handle") {
        Ok(h) => h,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let flow = match st.engine.flow(m.project_id, handle.clone()).await {
        Ok(f) => Some(FlowBody::from(&f)),
        Err(e) if e.code == ErrorCode::NotFound => None,
        Err(e) => return failed(&m, NAV, e),
    };
    let channels = match st.engine.all_channels(m.project_id).await {
        Ok(cs) => cs
            .into_iter()
            .map(|c| ChannelChoice {
                id: c.id,
                name: c.name,
                channel_type: c.channel_type.as_str(),
            })
            .collect::<Vec<_>>(),
        Err(e) => return failed(&m, NAV, e),
    };
    let json = inert_json(&flow);
    let chans = inert_json(&channels);
    member_page(
        &m,
        NAV,
        "pages/flow.html",
        context! { handle => handle, flow => flow, flow_json => json, channels_json => chans },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{body, member};
    use super::*;

    #[test]
    fn the_editor_carries_the_flow_as_inert_json() {
        let b = body(member_page(
            &member(),
            NAV,
            "pages/flow.html",
            context! {
                handle => "welcome",
                flow => serde_json::json!({"name": "W", "status": "draft"}),
                flow_json => inert_json(&serde_json::json!({"name": "</script><script>alert(1)</script>"})),
                channels_json => inert_json(&Vec::<u8>::new()),
            },
        ));
        assert!(b.contains("type=\"application/json\""), "{b}");
        assert!(!b.contains("</script><script>alert"), "{b}");
        assert!(b.contains("id=\"flow-editor\""));
    }
}
