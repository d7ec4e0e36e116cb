//! User API (`/user/v1`): the caller's profile, preferences, feed, push and topic
//! subscriptions. Another user's or project's resource is always a 404.

use super::endpoint::{Endpoint, Serve};
use super::{created, list as list_page, no_content, ok};
use crate::auth::UserCtx;
use crate::bodies;
use crate::bodies::user_api::{
    FeedEntryInteract, FeedEntryPatch, MarkAllResult, MeInput, PushSubscription,
    PushSubscriptionDelete, PushSubscriptionInput, UserChannel,
};
use crate::bodies::{List, Page};
use crate::errors::{ApiError, ApiResult};
use crate::extract::{path_str, path_uuid, typed, Body, Query};
use crate::idempotency::{self, Created};
use crate::openapi::{
    enum_schema, explain_param, feed_category_param, feed_flow_param, feed_status_param,
    path_param, topic_key_param, uuid_param, Content, Op, FEED_ACTIONS,
};
use crate::pagination;
use crate::routes::users::{
    actor_value, feed_page, feed_query, preferences_view, update_preferences, PreferencesOf,
};
use crate::state::{AppState, State};
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::actors::{FeedFilters, MarkAll, Subscriber, UpdateEntry};
use herald_engine::model::{ChannelType, Delivery, FeedCounts};
use herald_engine::storage::{FeedFilter, FeedMark, FeedUpdate};
use herald_engine::views::UserView;
use herald_engine::Error;
use serde_json::Value;
use uuid::Uuid;

/// `GET /user/v1/me`
pub fn me_endpoint() -> Endpoint {
    Op::get("/user/v1/me", "getMe", "The calling user")
        .ok(200, "The user", Content::Json("User"))
        .to(me)
}

pub async fn me(u: UserCtx) -> ApiResult<HttpResponse> {
    Ok(ok(UserView::from(&u.user)))
}

/// `PUT /user/v1/me`
pub fn update_me_endpoint() -> Endpoint {
    Op::put("/user/v1/me", "updateMe", "Update one's own profile")
        .body("UserInput", true)
        .ok(200, "The user", Content::Json("User"))
        .to(update_me)
}

pub async fn update_me(u: UserCtx, body: Body, st: State) -> ApiResult<HttpResponse> {
    let input: MeInput = typed(&body.object()?)?;
    let patch = input.validate(&u.user.external_id)?;
    let (pid, ext) = (u.project.id, u.user.external_id.clone());
    let (user, _) = st.engine.upsert_user(pid, ext, patch).await?;
    Ok(ok(UserView::from(&user)))
}

/// `GET /user/v1/preferences`
pub fn preferences_endpoint() -> Endpoint {
    Op::get(
        "/user/v1/preferences",
        "getMyPreferences",
        "One's preferences",
    )
    .param(explain_param())
    .ok(200, "The preferences", Content::Json("Preferences"))
    .errors(&[400])
    .to(preferences)
}

pub async fn preferences(u: UserCtx, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    Ok(ok(preferences_view(
        &st,
        u.project.id,
        Some(u.user.id),
        &req,
    )
    .await?))
}

/// `PUT /user/v1/preferences`
pub fn put_preferences_endpoint() -> Endpoint {
    Op::put(
        "/user/v1/preferences",
        "putMyPreferences",
        "Update one's preferences",
    )
    .param(explain_param())
    .body("PreferencesInput", true)
    .ok(200, "The full preferences", Content::Json("Preferences"))
    .to(put_preferences)
}

pub async fn put_preferences(
    u: UserCtx, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let input = typed(&body.object()?)?;
    Ok(ok(update_preferences(
        &st,
        u.project.id,
        PreferencesOf::User(Box::new(u.user)),
        input,
        &req,
    )
    .await?))
}

/// `GET /user/v1/feed`
pub fn feed_endpoint() -> Endpoint {
    Op::get("/user/v1/feed", "getFeed", "One's feed")
        .param(feed_status_param())
        .param(feed_flow_param())
        .param(feed_category_param())
        .paged()
        .ok(200, "A page of feed entries", Content::Json("FeedPage"))
        .to(feed)
}

pub async fn feed(u: UserCtx, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let fq = feed_query(&st, u.project.id, &u.user.external_id, &req)?;
    feed_page(&st, &u.project, u.user.id, fq).await
}

/// A feed entry with its actor.
pub async fn entry_view(st: &AppState, project: Uuid, d: Delivery) -> ApiResult<HttpResponse> {
    let actor = match d.actor_id {
        Some(a) => actor_value(st.engine.user_by_id(project, a).await?),
        None => Value::Null,
    };
    Ok(ok(d.feed_entry(&actor)))
}

/// `GET /user/v1/feed/{id}`
pub fn entry_endpoint() -> Endpoint {
    Op::get("/user/v1/feed/{id}", "getFeedEntry", "A feed entry")
        .param(uuid_param("id", "The entry's (delivery) id."))
        .ok(200, "The entry", Content::Json("FeedEntry"))
        .errors(&[400, 404])
        .to(entry)
}

pub async fn entry(u: UserCtx, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let (pid, uid) = (u.project.id, u.user.id);
    let d = st.engine.feed_entry(pid, uid, id).await?;
    entry_view(&st, pid, d).await
}

async fn apply(
    u: &UserCtx, st: &AppState, id: Uuid, update: FeedUpdate,
) -> ApiResult<HttpResponse> {
    let (pid, uid) = (u.project.id, u.user.id);
    let (d, _counts): (Delivery, FeedCounts) = st
        .engine
        .ask_user(pid, uid, UpdateEntry { entry: id, update })
        .await??;
    entry_view(st, pid, d).await
}

/// `PATCH /user/v1/feed/{id}`
pub fn patch_entry_endpoint() -> Endpoint {
    Op::patch(
        "/user/v1/feed/{id}",
        "patchFeedEntry",
        "Change a feed entry's state",
    )
    .param(uuid_param("id", "The entry's (delivery) id."))
    .body("FeedEntryPatch", true)
    .ok(200, "The entry", Content::Json("FeedEntry"))
    .errors(&[404, 409])
    .to(patch_entry)
}

pub async fn patch_entry(
    u: UserCtx, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    update_from_body(u, req, body, st, FeedEntryPatch::validate).await
}

/// The update a body of type `B` asks of the entry at `{id}`: 404 before
/// 422 (the entry must be the caller's), then the body's checks, then the
/// engine's.
async fn update_from_body<B: serde::de::DeserializeOwned>(
    u: UserCtx, req: HttpRequest, body: Body, st: State,
    validate: fn(&B) -> herald_engine::Result<FeedUpdate>,
) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let parsed: B = typed(&body.object()?)?;
    let (pid, uid) = (u.project.id, u.user.id);
    st.engine.feed_entry(pid, uid, id).await?;
    let update = validate(&parsed)?;
    apply(&u, &st, id, update).await
}

/// `POST /user/v1/feed/{id}/{action}`
pub fn entry_action_endpoint() -> Endpoint {
    Op::post(
        "/user/v1/feed/{id}/{action}",
        "feedEntryAction",
        "Shortcut: mark an entry seen, read, clicked, archived or unarchived",
    )
    .param(uuid_param("id", "The entry's (delivery) id."))
    .param(path_param(
        "action",
        enum_schema(FEED_ACTIONS),
        "What to do with the entry.",
    ))
    .ok(200, "The entry", Content::Json("FeedEntry"))
    .errors(&[400, 404, 409])
    .to(entry_action)
}

pub async fn entry_action(u: UserCtx, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let mut update = FeedUpdate::default();
    match path_str(&req, "action")?.as_str() {
        "seen" => update.seen = Some(true),
        "read" => update.read = Some(true),
        "clicked" => update.clicked = Some(true),
        "archive" => update.archived = Some(true),
        "unarchive" => update.archived = Some(false),
        _ => return Err(ApiError(Error::no_route())),
    }
    apply(&u, &st, id, update).await
}

async fn mark_all(
    u: UserCtx, st: State, mark: FeedMark, filters: FeedFilters,
) -> ApiResult<HttpResponse> {
    let m = MarkAll { mark, filters };
    let (n, counts) = st.engine.ask_user(u.project.id, u.user.id, m).await??;
    let by_category = st
        .engine
        .feed_counts_by_category(u.project.clone(), u.user.id)
        .await?;
    Ok(ok(MarkAllResult {
        meta: counts.view_with(by_category.as_ref()),
        updated: n,
    }))
}

/// `POST /user/v1/feed/seen_all`
pub fn seen_all_endpoint() -> Endpoint {
    Op::post("/user/v1/feed/seen_all", "seenAll", "Mark every entry seen")
        .ok(
            200,
            "How many entries changed",
            Content::Json("MarkAllResult"),
        )
        .to(seen_all)
}

pub async fn seen_all(u: UserCtx, st: State) -> ApiResult<HttpResponse> {
    mark_all(u, st, FeedMark::Seen, FeedFilters::default()).await
}

/// `POST /user/v1/feed/read_all`
pub fn read_all_endpoint() -> Endpoint {
    Op::post("/user/v1/feed/read_all", "readAll", "Mark every entry read")
        .ok(
            200,
            "How many entries changed",
            Content::Json("MarkAllResult"),
        )
        .to(read_all)
}

pub async fn read_all(u: UserCtx, st: State) -> ApiResult<HttpResponse> {
    mark_all(u, st, FeedMark::Read, FeedFilters::default()).await
}

/// `POST /user/v1/feed/archive_all`
pub fn archive_all_endpoint() -> Endpoint {
    Op::post(
        "/user/v1/feed/archive_all",
        "archiveAll",
        "Archive every entry (of a status, of a flow, of a category)",
    )
    .param(feed_status_param())
    .param(feed_flow_param())
    .param(feed_category_param())
    .ok(
        200,
        "How many entries changed",
        Content::Json("MarkAllResult"),
    )
    .errors(&[400])
    .to(archive_all)
}

/// Archives the entries `GET /user/v1/feed` with the same `status`, `flow`
/// and `category` lists (every entry not archived by default).
pub async fn archive_all(u: UserCtx, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let filters = FeedFilters {
        status: q.choice("status", FeedFilter::parse)?.unwrap_or_default(),
        flow: q.get("flow").map(str::to_string),
        category: q.get("category").map(str::to_string),
    };
    mark_all(u, st, FeedMark::Archived, filters).await
}

/// `POST /user/v1/feed/{id}/interact`
pub fn interact_endpoint() -> Endpoint {
    Op::post(
        "/user/v1/feed/{id}/interact",
        "interactFeedEntry",
        "Press one of an entry's action buttons",
    )
    .param(uuid_param("id", "The entry's (delivery) id."))
    .body("FeedEntryInteract", true)
    .ok(200, "The entry", Content::Json("FeedEntry"))
    .errors(&[400, 404])
    .to(interact)
}

pub async fn interact(
    u: UserCtx, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    update_from_body(u, req, body, st, FeedEntryInteract::validate).await
}

/// `GET /user/v1/channels/{channel_id}`
pub fn channel_endpoint() -> Endpoint {
    Op::get(
        "/user/v1/channels/{channel_id}",
        "getMyChannel",
        "A channel as a user sees it (e.g. the web push public key)",
    )
    .param(uuid_param("channel_id", "The channel's id."))
    .ok(200, "The channel", Content::Json("UserChannel"))
    .errors(&[400, 404])
    .to(channel)
}

/// A channel as a user may see it: no config except the web push public key.
pub async fn channel(u: UserCtx, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let pid = u.project.id;
    let c = st.engine.channel(pid, id).await?;
    Ok(ok(UserChannel::from(&c)))
}

/// The channel of a push-subscription request: 404 unknown, 422 wrong type, 409 not usable.
async fn push_channel(
    st: &AppState, project: Uuid, id: Uuid, check_status: bool,
) -> ApiResult<herald_engine::model::Channel> {
    let c = st.engine.channel(project, id).await?;
    if !matches!(
        c.channel_type,
        ChannelType::WebPush | ChannelType::MobilePush
    ) {
        return Err(Error::field(
            "channel_id",
            "inclusion",
            "only web_push and mobile_push channels take subscriptions",
        )
        .into());
    }
    if check_status {
        c.usable()?;
    }
    Ok(c)
}

/// `GET /user/v1/channels/{channel_id}/subscriptions`
pub fn push_subscriptions_endpoint() -> Endpoint {
    Op::get(
        "/user/v1/channels/{channel_id}/subscriptions",
        "listPushSubscriptions",
        "One's push subscriptions on a channel",
    )
    .param(uuid_param("channel_id", "The channel's id."))
    .ok(
        200,
        "The subscriptions",
        Content::Json("PushSubscriptionList"),
    )
    .errors(&[400, 404, 422])
    .to(push_subscriptions)
}

pub async fn push_subscriptions(
    u: UserCtx, req: HttpRequest, st: State,
) -> ApiResult<HttpResponse> {
    let cid = path_uuid(&req, "channel_id")?;
    let (pid, uid) = (u.project.id, u.user.id);
    push_channel(&st, pid, cid, false).await?;
    let subs = st.engine.push_subscriptions(pid, uid, cid).await?;
    let items: Vec<PushSubscription> = subs.iter().map(PushSubscription::from).collect();
    // all of them on one page
    let page = Page {
        after: None,
        before: None,
        has_more_after: false,
        has_more_before: false,
        limit: items.len().max(1),
    };
    Ok(ok(List { items, page }))
}

/// `POST /user/v1/channels/{channel_id}/subscriptions`
pub fn add_push_subscription_endpoint() -> Endpoint {
    Op::post(
        "/user/v1/channels/{channel_id}/subscriptions",
        "addPushSubscription",
        "Register a device or browser push subscription",
    )
    .param(uuid_param("channel_id", "The channel's id."))
    .body("PushSubscriptionInput", true)
    .ok(201, "Registered", Content::Json("PushSubscription"))
    .ok(200, "Already registered", Content::Json("PushSubscription"))
    .errors(&[404, 409])
    .to(add_push_subscription)
}

pub async fn add_push_subscription(
    u: UserCtx, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let cid = path_uuid(&req, "channel_id")?;
    let input: PushSubscriptionInput = typed(&body.object()?)?;
    let (pid, uid) = (u.project.id, u.user.id);
    let c = push_channel(&st, pid, cid, false).await?;
    let new = input.validate(c.channel_type, st.engine.egress())?;
    push_channel(&st, pid, cid, true).await?;
    let (sub, was_created) = st
        .engine
        .add_push_subscription(pid, uid, cid, new.identifier, new.keys, new.platform)
        .await?;
    let body = PushSubscription::from(&sub);
    Ok(if was_created { created(body) } else { ok(body) })
}

/// `DELETE /user/v1/channels/{channel_id}/subscriptions`
pub fn remove_push_subscription_endpoint() -> Endpoint {
    Op::delete(
        "/user/v1/channels/{channel_id}/subscriptions",
        "removePushSubscription",
        "Remove a push subscription",
    )
    .param(uuid_param("channel_id", "The channel's id."))
    .body("PushSubscriptionDelete", true)
    .ok(204, "Removed", Content::Empty)
    .errors(&[404])
    .to(remove_push_subscription)
}

pub async fn remove_push_subscription(
    u: UserCtx, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let cid = path_uuid(&req, "channel_id")?;
    let input: PushSubscriptionDelete = typed(&body.object()?)?;
    let (pid, uid) = (u.project.id, u.user.id);
    push_channel(&st, pid, cid, false).await?;
    let identifier = input.validate()?;
    let existed = st
        .engine
        .remove_push_subscription(pid, uid, cid, identifier)
        .await?;
    if !existed {
        return Err(
            Error::new(herald_engine::ErrorCode::NotFound, "subscription not found")
                .with("resource", "subscription")
                .into(),
        );
    }
    Ok(no_content())
}

/// `GET /user/v1/subscriptions`
pub fn topic_subscriptions_endpoint() -> Endpoint {
    Op::get(
        "/user/v1/subscriptions",
        "listMySubscriptions",
        "One's topic subscriptions",
    )
    .paged()
    .ok(
        200,
        "A page of subscriptions",
        Content::Json("SubscriptionList"),
    )
    .to(topic_subscriptions)
}

pub async fn topic_subscriptions(
    u: UserCtx, req: HttpRequest, st: State,
) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let paging = pagination::parse(
        &q,
        st.cursor_key(),
        &u.project.id,
        &format!("my_subs:{}", u.user.id),
        &[],
    )?;
    let (pid, uid) = (u.project.id, u.user.id);
    let page = st
        .engine
        .user_subscriptions(pid, uid, paging.req.clone())
        .await?;
    Ok(list_page(&paging, &page, |s| bodies::Subscription::from(s)))
}

/// `POST /user/v1/topics/{key}/subscriptions`
pub fn subscribe_endpoint() -> Endpoint {
    Op::post(
        "/user/v1/topics/{key}/subscriptions",
        "subscribeMe",
        "Subscribe to a topic",
    )
    .param(topic_key_param())
    .body("TopicSubscribeInput", false)
    .idempotent()
    .ok(201, "Subscribed", Content::Json("Subscription"))
    .errors(&[404, 409])
    .to(subscribe)
}

pub async fn subscribe(
    u: UserCtx, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let key = path_str(&req, "key")?;
    let m = body.object_or_empty()?;
    let idem = idempotency::prepare(&req, &m)?;
    let pid = u.project.id;
    let user = u.user.clone();
    let st2 = st.clone();
    st2.once(pid, idem, "subscription", |_| async move {
        let sub = st
            .engine
            .subscribe(pid, key, Subscriber::Known(Box::new(user)))
            .await?;
        Ok(Created::new(&bodies::Subscription::from(&sub)))
    })
    .await
}

/// `DELETE /user/v1/topics/{key}/subscriptions`
pub fn unsubscribe_endpoint() -> Endpoint {
    Op::delete(
        "/user/v1/topics/{key}/subscriptions",
        "unsubscribeMe",
        "Unsubscribe from a topic",
    )
    .param(topic_key_param())
    .ok(204, "Unsubscribed", Content::Empty)
    .errors(&[404])
    .to(unsubscribe)
}

pub async fn unsubscribe(u: UserCtx, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let key = path_str(&req, "key")?;
    let pid = u.project.id;
    let user = u.user.clone();
    st.engine
        .unsubscribe(pid, key, Subscriber::Known(Box::new(user)))
        .await?;
    Ok(no_content())
}
