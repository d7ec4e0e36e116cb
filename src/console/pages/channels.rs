//! Channels: the list (type, provider, health, sandbox, revoked) and one
//! channel's form (`/console/channels/{id}`, or `new` to create one). The
//! form's fields are built by the page's script from the provider's
//! configuration schema in `/openapi.json` (`components.schemas.*Config`),
//! so a provider's fields are described once, in the engine's specs;
//! secrets come masked (`********`) and are sent only when typed anew.

use super::super::render::member_page;
use super::super::Member;
use super::common::failed;
use crate::bodies::channels::Channel as ChannelBody;
use crate::extract::{path_str, Query};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::providers;
use minijinja::context;
use serde::Serialize;

const NAV: &str = "/console/channels";

/// A provider as the form's choice shows it.
#[derive(Serialize)]
struct ProviderChoice {
    name: &'static str,
    channel_type: &'static str,
    summary: &'static str,
}

pub async fn list(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let q = Query::of(&req);
    let paging =
        match pagination::parse(&q, st.cursor_key(), &m.project_id, "console.channels", &[]) {
            Ok(p) => p,
            Err(e) => return failed(&m, NAV, e.0),
        };
    let page = match st
        .engine
        .list_channels_with_health(m.project_id, paging.req.clone())
        .await
    {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e),
    };
    let next = super::common::next_link(NAV, &[], paging.page_object(&page).after);
    let items: Vec<ChannelBody> = page
        .items
        .iter()
        .map(|(c, h)| ChannelBody::with_health(c, h.clone()))
        .collect();
    member_page(
        &m,
        NAV,
        "pages/channels.html",
        context! { items => items, next => next },
    )
}

pub async fn one(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let key = match path_str(&req, "id") {
        Ok(k) => k,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let channel = if key == "new" {
        None
    } else {
        let id = match uuid::Uuid::parse_str(&key) {
            Ok(id) => id,
            Err(_) => {
                let e = herald_engine::Error::not_found("channel", &key);
                return failed(&m, NAV, e);
            }
        };
        match st.engine.channel_with_health(m.project_id, id).await {
            Ok((c, h)) => Some(ChannelBody::with_health(&c, h)),
            Err(e) => return failed(&m, NAV, e),
        }
    };
    let providers: Vec<ProviderChoice> = providers::specs()
        .map(|p| ProviderChoice {
            name: p.name,
            channel_type: p.channel_type.as_str(),
            summary: p.summary,
        })
        .collect();
    member_page(
        &m,
        NAV,
        "pages/channel.html",
        context! {
            channel_json => super::flows::inert_json(&channel),
            channel => channel,
            providers => providers,
            mask => providers::MASK,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{body, member};
    use super::*;

    #[test]
    fn the_list_shows_health_and_never_a_config() {
        let b = body(member_page(
            &member(),
            NAV,
            "pages/channels.html",
            context! { items => serde_json::json!([{
                "id": "c1", "name": "Mail <x>", "type": "email", "provider": "smtp",
                "health": {"state": "healthy"}, "sandbox": true, "status": "active",
                "config": {"password": "********"}
            }]) },
        ));
        assert!(b.contains("Mail &lt;x&gt;"), "{b}");
        assert!(b.contains("healthy"), "{b}");
        assert!(!b.contains("********"), "{b}");
    }
}
