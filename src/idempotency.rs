//! Idempotency keys for creating POSTs (docs/API.md §5): the same key, method,
//! path and canonical payload within 24 h replays the stored 2xx response with
//! `idempotent-replayed: true`; another payload is 409 `idempotency_key_reused`.
//! Requests sharing a key are serialised, so the second one replays the first.

use crate::errors::{ApiError, ApiResult};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use dashmap::DashMap;
use herald_engine::model::Timestamp;
use herald_engine::storage::IdempotentResponse;
use herald_engine::{Engine, Error};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::future::Future;
use std::sync::Arc;
use uuid::Uuid;

#[derive(Default)]
pub struct Locks(DashMap<Vec<u8>, Arc<tokio::sync::Mutex<()>>>);

impl Locks {
    /// The lock of one key of one project, and its map key. Keyed by project
    /// and scope: two tenants using the same key never wait on each other (the
    /// stored record is per project already).
    fn lock_for(&self, project: &Uuid, scope: &[u8]) -> (Vec<u8>, Arc<tokio::sync::Mutex<()>>) {
        let key: Vec<u8> = project.as_bytes().iter().chain(scope).copied().collect();
        let lock = self.0.entry(key.clone()).or_default().clone();
        (key, lock)
    }

    /// Runs `f` holding the lock of one key of one project: requests sharing
    /// a key run one after the other, so the second one finds the first's
    /// answer stored. The lock is forgotten once nobody holds or awaits it.
    pub async fn locked<T>(&self, project: &Uuid, scope: &[u8], f: impl Future<Output = T>) -> T {
        let (lock_key, lock) = self.lock_for(project, scope);
        let guard = lock.lock().await;
        let out = f.await;
        drop(guard);
        drop(lock);
        self.0
            .remove_if(&lock_key, |_, v| Arc::strong_count(v) == 1);
        out
    }
}

/// A request's idempotency key, resolved.
#[derive(Clone)]
pub struct Idem {
    pub key: String,
    /// Hash of method, path and key: what the record is stored under.
    pub scope: Vec<u8>,
    /// Hash of the canonical payload (without `idempotency_key`).
    pub payload_hash: Vec<u8>,
}

/// Reads the key from the `Idempotency-Key` header or the body's `idempotency_key`.
pub fn prepare(req: &HttpRequest, body: &Map<String, Value>) -> ApiResult<Option<Idem>> {
    let header = match req.headers().get("idempotency-key") {
        Some(h) => Some(
            h.to_str()
                .map_err(|_| {
                    ApiError(Error::field(
                        "idempotency_key",
                        "format",
                        "must be printable text",
                    ))
                })?
                .to_string(),
        ),
        None => None,
    };
    let in_body = match body.get("idempotency_key") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(Error::field("idempotency_key", "format", "must be a string").into())
        }
    };
    let key = match (header, in_body) {
        (Some(h), Some(b)) if h != b => {
            return Err(
                Error::field("idempotency_key", "format", "header and body keys differ").into(),
            )
        }
        (Some(k), _) | (None, Some(k)) => k,
        (None, None) => return Ok(None),
    };
    if key.is_empty() || key.chars().count() > 255 {
        return Err(Error::field("idempotency_key", "length", "1 to 255 characters").into());
    }
    let mut h = Sha256::new();
    h.update(req.method().as_str().as_bytes());
    h.update(b" ");
    h.update(req.path().as_bytes());
    h.update(b" ");
    h.update(key.as_bytes());
    let scope = h.finalize().to_vec();
    let mut payload = body.clone();
    payload.remove("idempotency_key");
    // serde_json's Map is ordered by key, so this serialisation is canonical.
    let canon = serde_json::to_vec(&Value::Object(payload)).unwrap_or_default();
    let payload_hash = Sha256::digest(&canon).to_vec();
    Ok(Some(Idem {
        key,
        scope,
        payload_hash,
    }))
}

/// A success to answer with, and whether the handler already stored it for replay
/// (a flow run stores it in the same commit as the run).
pub struct Created {
    pub status: StatusCode,
    pub body: Vec<u8>,
    pub stored: bool,
}

impl Created {
    /// A 201 with `body` as JSON, for `once` to store.
    pub fn new(body: &impl serde::Serialize) -> Created {
        Created {
            status: StatusCode::CREATED,
            body: serde_json::to_vec(body).expect("a response body serialises"),
            stored: false,
        }
    }
}

/// Runs `f` at most once per key (see the module doc): `locks` serialise the
/// requests sharing a key, the engine keeps the responses to replay.
pub async fn once<F, Fut>(
    locks: &Locks, engine: &Engine, project: Uuid, idem: Option<Idem>, resource: &str, f: F,
) -> ApiResult<HttpResponse>
where
    F: FnOnce(Option<Idem>) -> Fut,
    Fut: Future<Output = ApiResult<Created>>,
{
    let Some(idem) = idem else {
        let c = f(None).await?;
        return Ok(respond(c.status.as_u16(), c.body, false));
    };
    let scope = idem.scope.clone();
    locks
        .locked(&project, &scope, async {
            let existing = engine
                .idempotent_response(project, idem.scope.clone())
                .await?;
            if let Some(r) = existing {
                return replay_or_reused(&idem, r, resource);
            }
            match f(Some(idem.clone())).await {
                Ok(c) => {
                    if !c.stored {
                        let rec = IdempotentResponse {
                            payload_hash: idem.payload_hash.clone(),
                            status: c.status.as_u16(),
                            body: c.body.clone(),
                            created_at: Timestamp::now(),
                        };
                        let scope = idem.scope.clone();
                        engine.put_idempotent_response(project, scope, rec).await?;
                    }
                    Ok(respond(c.status.as_u16(), c.body, false))
                }
                Err(e) => after_race(engine, project, &idem, resource, e.0).await,
            }
        })
        .await
}

/// The answer to a request whose key has a stored response: the response
/// again when the payload is the same, else 409 `idempotency_key_reused`.
pub fn replay_or_reused(
    idem: &Idem, r: IdempotentResponse, resource: &str,
) -> ApiResult<HttpResponse> {
    if r.payload_hash == idem.payload_hash {
        Ok(respond(r.status, r.body, true))
    } else {
        Err(reused(idem, resource))
    }
}

/// The answer to a request with a key that failed with `e`: when the same
/// key committed first on another node (the lock serialises this node's
/// requests only), answer as that one did.
pub async fn after_race(
    engine: &Engine, project: Uuid, idem: &Idem, resource: &str, e: Error,
) -> ApiResult<HttpResponse> {
    if !e.is_idempotency_race() {
        return Err(ApiError(e));
    }
    match engine
        .idempotent_response(project, idem.scope.clone())
        .await?
    {
        Some(r) => replay_or_reused(idem, r, resource),
        None => Err(ApiError(e)),
    }
}

/// A fresh 2xx (`replayed`: false) or a stored one again, as JSON.
pub fn respond(status: u16, body: Vec<u8>, replayed: bool) -> HttpResponse {
    let mut b = HttpResponse::build(StatusCode::from_u16(status).unwrap_or(StatusCode::OK));
    if replayed {
        b.insert_header(("idempotent-replayed", "true"));
    }
    b.content_type("application/json").body(body)
}

fn reused(idem: &Idem, resource: &str) -> ApiError {
    ApiError(
        Error::new(
            herald_engine::ErrorCode::IdempotencyKeyReused,
            "this idempotency key was used with another payload",
        )
        .with("idempotency_key", idem.key.clone())
        .with("resource", resource),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_same_key_of_two_projects_takes_two_locks() {
        let locks = Locks::default();
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        let (_, la) = locks.lock_for(&a, b"scope");
        let held = la.lock().await;
        // project B's same scope is free while A holds its own
        let (_, lb) = locks.lock_for(&b, b"scope");
        assert!(lb.try_lock().is_ok(), "B waits behind A");
        // the same project's same scope is the same lock
        let (_, la2) = locks.lock_for(&a, b"scope");
        assert!(la2.try_lock().is_err(), "A's second request must wait");
        drop(held);
    }
}
