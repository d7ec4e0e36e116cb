//! Admin API channels (API.md §7): provider config with write-only secrets,
//! and a channel's test send.

use super::endpoint::{Endpoint, Serve};
use super::{accepted as accepted_json, list as list_page, no_content, ok};
use crate::auth::Admin;
use crate::bodies::{
    self,
    channels::{ChannelInput, ChannelTestInput, ChannelUpdate, NewChannel},
};
use crate::errors::{ApiError, ApiResult};
use crate::extract::{path_uuid, typed, Body, Query};
use crate::idempotency::{self, Created};
use crate::openapi::{uuid_param, Content, Op};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::actors::ChannelTest;
use herald_engine::model::{new_id, Channel};
use herald_engine::storage::RunTiming;
use herald_engine::{providers, Error};

/// `POST /admin/v1/channels`
pub fn create_endpoint() -> Endpoint {
    Op::post("/admin/v1/channels", "createChannel", "Create a channel")
        .body("ChannelInput", true)
        .idempotent()
        .ok(201, "Created", Content::Json("Channel"))
        .to(create)
}

pub async fn create(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let idem = idempotency::prepare(&req, &m)?;
    let NewChannel {
        channel_type: ctype,
        provider,
        name,
        mut config,
        sandbox,
    } = typed::<ChannelInput>(&m)?.validate(st.engine.egress())?;
    providers::complete_config(&provider, &mut config);
    let pid = a.project.id;
    st.once(pid, idem, "channel", |_| async {
        let (id, now) = new_id();
        let c = Channel {
            id,
            channel_type: ctype,
            name: name.unwrap_or_else(|| provider.clone()),
            provider,
            config,
            revoked: false,
            builtin: false,
            sandbox,
            created_at: now,
            updated_at: now,
        };
        let created = Created::new(&bodies::channels::Channel::from(&c));
        st.engine.put_channel(pid, a.actor.clone(), c).await?;
        Ok(created)
    })
    .await
}

/// `GET /admin/v1/channels`
pub fn list_endpoint() -> Endpoint {
    Op::get("/admin/v1/channels", "listChannels", "List channels")
        .paged()
        .ok(200, "A page of channels", Content::Json("ChannelList"))
        .to(list)
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let paging = pagination::parse(&q, st.cursor_key(), &a.project.id, "channels", &[])?;
    let page = st
        .engine
        .list_channels_with_health(a.project.id, paging.req.clone())
        .await?;
    Ok(list_page(&paging, &page, |(c, h)| {
        bodies::channels::Channel::with_health(c, h.clone())
    }))
}

/// `GET /admin/v1/channels/{channel_id}`
pub fn get_endpoint() -> Endpoint {
    Op::get("/admin/v1/channels/{channel_id}", "getChannel", "A channel")
        .param(uuid_param("channel_id", "The channel's id."))
        .ok(200, "The channel", Content::Json("Channel"))
        .errors(&[400, 404])
        .to(get)
}

pub async fn get(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let pid = a.project.id;
    let (c, h) = st.engine.channel_with_health(pid, id).await?;
    Ok(ok(bodies::channels::Channel::with_health(&c, h)))
}

/// `PUT /admin/v1/channels/{channel_id}`
pub fn update_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/channels/{channel_id}",
        "updateChannel",
        "Update a channel (config merged key by key)",
    )
    .param(uuid_param("channel_id", "The channel's id."))
    .body("ChannelUpdate", true)
    .ok(200, "The channel", Content::Json("Channel"))
    .errors(&[404])
    .to(update)
}

pub async fn update(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let input: ChannelUpdate = typed(&body.object()?)?;
    let pid = a.project.id;
    let egress = st.engine.egress().clone();
    let c = st
        .engine
        .update_channel(pid, a.actor.clone(), id, move |c| {
            input.apply(c, &egress)?;
            providers::complete_config(&c.provider, &mut c.config);
            Ok(())
        })
        .await?;
    let h = st.engine.known_health(&c);
    Ok(ok(bodies::channels::Channel::with_health(&c, h)))
}

/// `DELETE /admin/v1/channels/{channel_id}`
pub fn delete_endpoint() -> Endpoint {
    Op::delete(
        "/admin/v1/channels/{channel_id}",
        "deleteChannel",
        "Delete a channel",
    )
    .param(uuid_param("channel_id", "The channel's id."))
    .ok(204, "Deleted", Content::Empty)
    .errors(&[400, 404, 409])
    .to(delete)
}

pub async fn delete(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let pid = a.project.id;
    st.engine.delete_channel(pid, a.actor.clone(), id).await?;
    Ok(no_content())
}

/// `POST /admin/v1/channels/{channel_id}/revoke`
pub fn revoke_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/channels/{channel_id}/revoke",
        "revokeChannel",
        "Revoke a channel's provider credentials",
    )
    .param(uuid_param("channel_id", "The channel's id."))
    .ok(200, "The channel", Content::Json("Channel"))
    .errors(&[400, 404, 409])
    .to(revoke)
}

pub async fn revoke(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let pid = a.project.id;
    let c = st.engine.revoke_channel(pid, a.actor.clone(), id).await?;
    let h = st.engine.known_health(&c);
    Ok(ok(bodies::channels::Channel::with_health(&c, h)))
}

/// `POST /admin/v1/channels/{channel_id}/test`
pub fn test_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/channels/{channel_id}/test",
        "testChannel",
        "Send one test message through a channel to a user",
    )
    .param(uuid_param("channel_id", "The channel's id."))
    .body("ChannelTestInput", true)
    .ok(
        202,
        "Accepted and stored durably; delivered through the channel",
        Content::Json("ChannelTestAccepted"),
    )
    .errors(&[400, 404, 409])
    .to(test)
}

/// A test send goes through the delivery pipeline as a run does, so the
/// answer is the run's 202 with the notification to follow.
pub async fn test(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let (user, data) = typed::<ChannelTestInput>(&body.object()?)?.validate()?;
    let timing = RunTiming {
        timezone: a.project.timezone.clone(),
        quota_bytes: a.project.quota_bytes,
        ..Default::default()
    };
    let t = ChannelTest {
        channel_id: id,
        user,
        data,
        timing,
    };
    let accepted = st.engine.test_channel(a.project.id, t).await?;
    Ok(accepted_json(accepted))
}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        e.0
    }
}
