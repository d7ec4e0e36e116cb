//! Admin API channels (API.md §6, §10): provider config with write-only secrets.

use super::{list as list_page, no_content, ok};
use crate::auth::Admin;
use crate::bodies::{
    self,
    channels::{ChannelInput, ChannelUpdate, NewChannel},
};
use crate::errors::{ApiError, ApiResult};
use crate::extract::{path_uuid, typed, Body, Query};
use crate::idempotency::{self, Created};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_actors::model::{new_id, Channel};
use herald_actors::{providers, Error};

pub async fn create(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let idem = idempotency::prepare(&req, &m)?;
    let NewChannel {
        channel_type: ctype,
        provider,
        name,
        mut config,
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
            created_at: now,
            updated_at: now,
        };
        let created = Created::new(&bodies::channels::Channel::from(&c));
        st.engine.put_channel(pid, c).await?;
        Ok(created)
    })
    .await
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let paging = pagination::parse(&q, st.cursor_key(), &a.project.id, "channels", &[])?;
    let pid = a.project.id;
    let pr = paging.req.clone();
    let page = st.run(move |s| s.list_channels(&pid, &pr)).await?;
    Ok(list_page(&paging, &page, |c| {
        bodies::channels::Channel::from(c)
    }))
}

pub async fn get(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let pid = a.project.id;
    let c = st
        .run(move |s| s.channel(&pid, &id))
        .await?
        .ok_or_else(|| Error::not_found("channel", id))?;
    Ok(ok(bodies::channels::Channel::from(&c)))
}

pub async fn update(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let input: ChannelUpdate = typed(&body.object()?)?;
    let pid = a.project.id;
    let egress = st.engine.egress().clone();
    let c = st
        .engine
        .update_channel(pid, id, move |c| {
            input.apply(c, &egress)?;
            providers::complete_config(&c.provider, &mut c.config);
            Ok(())
        })
        .await?;
    Ok(ok(bodies::channels::Channel::from(&c)))
}

pub async fn delete(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let pid = a.project.id;
    st.engine.delete_channel(pid, id).await?;
    Ok(no_content())
}

pub async fn revoke(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let pid = a.project.id;
    let c = st.engine.revoke_channel(pid, id).await?;
    Ok(ok(bodies::channels::Channel::from(&c)))
}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        e.0
    }
}
