//! Admin API topics and their subscriptions.

use super::endpoint::{Endpoint, Serve};
use super::{created, list as list_page, no_content, ok};
use crate::auth::Admin;
use crate::bodies::bulk::{BulkSubscriptionInput, BulkSubscriptionResult};
use crate::bodies::{self, SubscriptionInput, TopicInput};
use crate::errors::ApiResult;
use crate::extract::{path_str, typed, Body, Query};
use crate::idempotency::{self, Created};
use crate::openapi::{external_id_param, topic_key_param, Content, Op};
use crate::pagination;
use crate::state::State;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::actors::Subscriber;
use herald_engine::{validate, Error};

fn topic_key(req: &HttpRequest) -> ApiResult<String> {
    let key = path_str(req, "key")?;
    if !validate::is_handle(&key) {
        return Err(Error::field(
            "key",
            "format",
            "a topic key is like a handle: ^[a-z0-9][a-z0-9_-]{0,63}$",
        )
        .into());
    }
    Ok(key)
}

/// `PUT /admin/v1/topics/{key}`
pub fn put_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/topics/{key}",
        "putTopic",
        "Create or update a topic",
    )
    .param(topic_key_param())
    .body("TopicInput", false)
    .ok(201, "Created", Content::Json("Topic"))
    .ok(200, "Updated", Content::Json("Topic"))
    .to(put)
}

pub async fn put(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object_or_empty()?;
    let key = topic_key(&req)?;
    let bodies::TopicChange { name, description } = typed::<TopicInput>(&m)?.validate()?;
    let pid = a.project.id;
    let (t, was_created) = st
        .engine
        .put_topic(pid, a.actor.clone(), key, name, description)
        .await?;
    let body = bodies::Topic::from(&t);
    Ok(if was_created { created(body) } else { ok(body) })
}

/// `GET /admin/v1/topics/{key}`
pub fn get_endpoint() -> Endpoint {
    Op::get("/admin/v1/topics/{key}", "getTopic", "A topic")
        .param(topic_key_param())
        .ok(200, "The topic", Content::Json("Topic"))
        .errors(&[404])
        .to(get)
}

pub async fn get(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let key = path_str(&req, "key")?;
    let pid = a.project.id;
    let t = st.engine.topic(pid, key).await?;
    Ok(ok(bodies::Topic::from(&t)))
}

/// `GET /admin/v1/topics`
pub fn list_endpoint() -> Endpoint {
    Op::get("/admin/v1/topics", "listTopics", "List topics")
        .paged()
        .ok(200, "A page of topics", Content::Json("TopicList"))
        .to(list)
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let paging = pagination::parse(&q, st.cursor_key(), &a.project.id, "topics", &[])?;
    let page = st
        .engine
        .list_topics(a.project.id, paging.req.clone())
        .await?;
    Ok(list_page(&paging, &page, |t| bodies::Topic::from(t)))
}

/// `DELETE /admin/v1/topics/{key}`
pub fn delete_endpoint() -> Endpoint {
    Op::delete("/admin/v1/topics/{key}", "deleteTopic", "Delete a topic")
        .param(topic_key_param())
        .ok(204, "Deleted", Content::Empty)
        .errors(&[404])
        .to(delete)
}

pub async fn delete(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let key = path_str(&req, "key")?;
    let pid = a.project.id;
    st.engine.delete_topic(pid, a.actor.clone(), key).await?;
    Ok(no_content())
}

/// `GET /admin/v1/topics/{key}/subscriptions`
pub fn subscriptions_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/topics/{key}/subscriptions",
        "listTopicSubscriptions",
        "A topic's subscriptions",
    )
    .param(topic_key_param())
    .paged()
    .ok(
        200,
        "A page of subscriptions",
        Content::Json("SubscriptionList"),
    )
    .errors(&[404])
    .to(subscriptions)
}

pub async fn subscriptions(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let key = path_str(&req, "key")?;
    let q = Query::of(&req);
    let paging = pagination::parse(
        &q,
        st.cursor_key(),
        &a.project.id,
        &format!("topic_subs:{key}"),
        &[],
    )?;
    let page = st
        .engine
        .topic_subscriptions(a.project.id, key, paging.req.clone())
        .await?;
    Ok(list_page(&paging, &page, |s| bodies::Subscription::from(s)))
}

/// `POST /admin/v1/topics/{key}/subscriptions`
pub fn subscribe_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/topics/{key}/subscriptions",
        "subscribeUser",
        "Subscribe a user to a topic",
    )
    .param(topic_key_param())
    .body("SubscriptionRequest", true)
    .idempotent()
    .ok(201, "Subscribed (one user)", Content::Json("Subscription"))
    .ok(
        200,
        "Up to 1,000 users subscribed in one durable commit",
        Content::Json("BulkSubscriptionResult"),
    )
    .errors(&[404, 409])
    .to(subscribe)
}

pub async fn subscribe(
    a: Admin, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let key = path_str(&req, "key")?;
    let m = body.object()?;
    let idem = idempotency::prepare(&req, &m)?;
    let pid = a.project.id;
    st.engine.topic(pid, key.clone()).await?;
    if BulkSubscriptionInput::is_bulk(&m) {
        let exts = typed::<BulkSubscriptionInput>(&m)?.validate()?;
        return subscribe_many(pid, key, exts, idem, st).await;
    }
    let ext = typed::<SubscriptionInput>(&m)?.validate()?;
    let st2 = st.clone();
    st2.once(pid, idem, "subscription", |_| async move {
        let sub = st
            .engine
            .subscribe(pid, key, Subscriber::External(ext))
            .await?;
        Ok(Created::new(&bodies::Subscription::from(&sub)))
    })
    .await
}

/// The bulk form of `subscribe`: every user must exist (an unknown one is a
/// 422 at `users.{i}`, as the single form's `external_id`, and nothing is
/// stored); users already subscribed are no error. One durable commit.
async fn subscribe_many(
    pid: uuid::Uuid, key: String, exts: Vec<String>, idem: Option<idempotency::Idem>, st: State,
) -> ApiResult<HttpResponse> {
    let st2 = st.clone();
    st2.once(pid, idem, "subscription", |_| async move {
        let (topic, created) = st.engine.subscribe_many(pid, key, exts).await?;
        Ok(Created {
            status: StatusCode::OK,
            ..Created::new(&BulkSubscriptionResult {
                created,
                topic: bodies::Topic::from(&topic),
            })
        })
    })
    .await
}

/// `DELETE /admin/v1/topics/{key}/subscriptions/{external_id}`
pub fn unsubscribe_endpoint() -> Endpoint {
    Op::delete(
        "/admin/v1/topics/{key}/subscriptions/{external_id}",
        "unsubscribeUser",
        "Unsubscribe a user from a topic",
    )
    .param(topic_key_param())
    .param(external_id_param())
    .ok(204, "Unsubscribed", Content::Empty)
    .errors(&[404])
    .to(unsubscribe)
}

pub async fn unsubscribe(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let key = path_str(&req, "key")?;
    let ext = path_str(&req, "external_id")?;
    let pid = a.project.id;
    st.engine
        .unsubscribe(pid, key, Subscriber::External(ext))
        .await?;
    Ok(no_content())
}
