//! Admin API channels (API.md §6, §10): provider config with write-only secrets.

use super::{list as list_page, no_content, ok};
use crate::auth::Admin;
use crate::errors::{ApiError, ApiResult};
use crate::extract::{path_uuid, Body, Fields, Query};
use crate::idempotency::{self, Created};
use crate::pagination;
use crate::state::State;
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use herald_actors::model::{new_id, Channel, ChannelType};
use herald_actors::{providers, Error, Validator};
use serde_json::{Map, Value};

const MASK: &str = "********";

/// Merges `patch` into `config` key by key: `null` removes a key, the mask keeps
/// the stored secret.
fn merge_config(config: &mut Map<String, Value>, patch: &Map<String, Value>, provider: &str) {
    let secrets = providers::secret_fields(provider);
    for (k, v) in patch {
        match v {
            Value::Null => {
                config.remove(k);
            }
            Value::String(s) if s == MASK && secrets.contains(&k.as_str()) => {}
            other => {
                config.insert(k.clone(), other.clone());
            }
        }
    }
}

/// A web_push channel with neither VAPID key gets a fresh P-256 pair (API.md §10):
/// the public key shows in channel responses (and to users, who subscribe with
/// it), the private key is a secret.
fn ensure_vapid_keys(provider: &str, config: &mut Map<String, Value>) {
    let absent = |k: &str| config.get(k).is_none_or(|v| v.is_null() || v == "");
    if provider == "web_push" && absent("vapid_public_key") && absent("vapid_private_key") {
        let (public, private) = providers::web_push::generate_vapid_keys();
        config.insert("vapid_public_key".into(), Value::String(public));
        config.insert("vapid_private_key".into(), Value::String(private));
    }
}

pub async fn create(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let idem = idempotency::prepare(&req, &m)?;
    let f = Fields::new(&m);
    let mut v = Validator::new();
    let ctype = match f.req_str("type", 64, &mut v) {
        Some(t) => match ChannelType::parse(&t) {
            Some(t) => Some(t),
            None => {
                v.push(
                    "type",
                    "inclusion",
                    "one of chat, email, in_app, mobile_push, sms, web_push",
                );
                None
            }
        },
        None => None,
    };
    let provider = f.req_str("provider", 64, &mut v);
    if let (Some(t), Some(p)) = (ctype, &provider) {
        if providers::provider_type(p) != Some(t) {
            v.push(
                "provider",
                "inclusion",
                format!("not a provider of channel type {}", t.as_str()),
            );
        }
    }
    let name = f.opt_str("name", 200, &mut v).flatten();
    let mut config = Map::new();
    if let Some(c) = f.opt_object("config", &mut v) {
        if let Some(p) = &provider {
            merge_config(&mut config, c, p);
            providers::validate_config(p, &config, st.engine.egress(), &mut v);
        }
    }
    v.finish()?;
    let (ctype, provider) = (ctype.expect("validated"), provider.expect("validated"));
    ensure_vapid_keys(&provider, &mut config);
    let pid = a.project.id;
    idempotency::once(
        &st.idempotency,
        &st.engine,
        pid,
        idem,
        "channel",
        |_| async {
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
            let c2 = c.clone();
            st.engine.put_channel(pid, c2).await?;
            Ok(Created {
                status: StatusCode::CREATED,
                body: c.view().to_string().into_bytes(),
                stored: false,
            })
        },
    )
    .await
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let paging = pagination::parse(
        &q,
        st.engine.storage().cursor_key(),
        &a.project.id,
        "channels",
        &[],
    )?;
    let pid = a.project.id;
    let pr = paging.req.clone();
    let page = st.run(move |s| s.list_channels(&pid, &pr)).await?;
    Ok(list_page(&paging, &page, Channel::view))
}

pub async fn get(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let pid = a.project.id;
    let c = st
        .run(move |s| s.channel(&pid, &id))
        .await?
        .ok_or_else(|| Error::not_found("channel", id))?;
    Ok(ok(c.view()))
}

pub async fn update(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let m = body.object()?;
    let pid = a.project.id;
    let egress = st.engine.egress().clone();
    let c = st
        .engine
        .update_channel(pid, id, move |c| {
            let f = Fields::new(&m);
            let mut v = Validator::new();
            if let Some(t) = m.get("type") {
                if t.as_str() != Some(c.channel_type.as_str()) {
                    v.push("type", "exclusion", "a channel's type cannot change");
                }
            }
            if let Some(p) = m.get("provider") {
                if p.as_str() != Some(c.provider.as_str()) {
                    v.push(
                        "provider",
                        "exclusion",
                        "a channel's provider cannot change",
                    );
                }
            }
            let name = f.opt_str("name", 200, &mut v);
            if let Some(cfg) = f.opt_object("config", &mut v) {
                let mut merged = c.config.clone();
                merge_config(&mut merged, cfg, &c.provider);
                providers::validate_config(&c.provider, &merged, &egress, &mut v);
                providers::check_secret_restated(
                    &c.provider,
                    &c.config,
                    &merged,
                    cfg,
                    MASK,
                    &mut v,
                );
                if v.is_empty() {
                    c.config = merged;
                    c.revoked = false;
                }
            }
            v.finish()?;
            ensure_vapid_keys(&c.provider, &mut c.config);
            if let Some(Some(n)) = name {
                c.name = n;
            }
            Ok(())
        })
        .await?;
    Ok(ok(c.view()))
}

pub async fn delete(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let pid = a.project.id;
    st.engine
        .delete_channel(pid, id, move |s| {
            let c = s
                .channel(&pid, &id)?
                .ok_or_else(|| Error::not_found("channel", id))?;
            if c.builtin {
                return Err(Error::conflict(
                    "channel",
                    Some(id.to_string()),
                    "invalid_transition",
                    "the built-in in_app channel cannot be deleted",
                )
                .with("current_status", c.status().as_str()));
            }
            if s.channel_in_active_flow(&pid, &id)? {
                return Err(Error::conflict(
                    "channel",
                    Some(id.to_string()),
                    "invalid_transition",
                    "an active flow uses this channel",
                )
                .with("current_status", c.status().as_str()));
            }
            Ok(())
        })
        .await?;
    Ok(no_content())
}

pub async fn revoke(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "channel_id")?;
    let pid = a.project.id;
    let c = st
        .engine
        .update_channel(pid, id, move |c| {
            if c.provider == "in_app" {
                return Err(Error::conflict(
                    "channel",
                    Some(c.id.to_string()),
                    "invalid_transition",
                    "the in_app channel cannot be revoked",
                )
                .with("current_status", c.status().as_str()));
            }
            c.revoked = true;
            Ok(())
        })
        .await?;
    Ok(ok(c.view()))
}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        e.0
    }
}
