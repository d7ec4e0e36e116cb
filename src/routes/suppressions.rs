//! Admin API: the project's suppression list (addresses it no longer sends
//! to, docs/API.md "Suppressions").

use super::endpoint::{Endpoint, Serve};
use super::{created, list as list_page, no_content, ok};
use crate::auth::Admin;
use crate::bodies::suppressions::{NewSuppression, Suppression, SuppressionInput};
use crate::errors::ApiResult;
use crate::extract::{path_str, typed, Body, Query};
use crate::openapi::{enum_schema, path_param, query_param, str_schema, Content, Op};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::model::ChannelType;
use herald_engine::suppression::address;
use herald_engine::Error;

fn channel_type_schema() -> utoipa::openapi::schema::Schema {
    enum_schema(&address::CHANNEL_TYPES.map(|t| t.as_str()))
}

/// `GET /admin/v1/suppressions`
pub fn list_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/suppressions",
        "listSuppressions",
        "List suppressed addresses",
    )
    .param(query_param(
        "channel_type",
        channel_type_schema(),
        "Only this channel type's addresses.",
    ))
    .paged()
    .ok(
        200,
        "A page of suppressions, newest first",
        Content::Json("SuppressionList"),
    )
    .to(list)
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let ct = q.choice("channel_type", |s| {
        ChannelType::parse(s).filter(|t| address::covers(*t))
    })?;
    let filters = [("channel_type", q.get("channel_type").map(str::to_string))];
    let paging = pagination::parse(&q, st.cursor_key(), &a.project.id, "suppressions", &filters)?;
    let page = st
        .engine
        .list_suppressions(a.project.id, ct, paging.req.clone())
        .await?;
    Ok(list_page(&paging, &page, |s| Suppression::from(s)))
}

/// `POST /admin/v1/suppressions`
pub fn create_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/suppressions",
        "createSuppression",
        "Suppress an address",
    )
    .body("SuppressionInput", true)
    .ok(201, "Suppressed", Content::Json("Suppression"))
    .ok(
        200,
        "Suppressed already: the existing suppression, unchanged",
        Content::Json("Suppression"),
    )
    .to(create)
}

pub async fn create(a: Admin, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let NewSuppression {
        channel_type,
        address,
    } = typed::<SuppressionInput>(&m)?.validate()?;
    let (s, was_created) = st
        .engine
        .add_suppression(a.project.id, channel_type, address)
        .await?;
    let body = Suppression::from(&s);
    Ok(if was_created { created(body) } else { ok(body) })
}

/// `DELETE /admin/v1/suppressions/{channel_type}/{address}`
pub fn delete_endpoint() -> Endpoint {
    Op::delete(
        "/admin/v1/suppressions/{channel_type}/{address}",
        "deleteSuppression",
        "Lift an address's suppression",
    )
    .param(path_param(
        "channel_type",
        channel_type_schema(),
        "`email` or `sms`.",
    ))
    .param(path_param(
        "address",
        str_schema().into(),
        "The address, percent-encoded (the `+` of a phone number as `%2B`).",
    ))
    .ok(204, "Lifted", Content::Empty)
    .errors(&[404, 422])
    .to(delete)
}

pub async fn delete(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let raw_ct = path_str(&req, "channel_type")?;
    let Some(ct) = ChannelType::parse(&raw_ct) else {
        return Err(Error::field("channel_type", "inclusion", "one of email, sms").into());
    };
    let address = path_str(&req, "address")?;
    st.engine
        .remove_suppression(a.project.id, ct, address)
        .await?;
    Ok(no_content())
}
