//! Blocking store work, run on actix's blocking pool and never on an HTTP worker.
//! `AppState::run` and the idempotency records both go through it.

use crate::errors::ApiError;
use herald_actors::{Error, Store};

/// Runs `f` over a clone of `store` on the blocking pool.
pub async fn run<T, F>(store: &Store, f: F) -> Result<T, ApiError>
where
    F: FnOnce(&Store) -> Result<T, Error> + Send + 'static,
    T: Send + 'static,
{
    let store = store.clone();
    match actix_web::web::block(move || f(&store)).await {
        Ok(r) => r.map_err(ApiError),
        Err(e) => Err(ApiError(Error::internal(format!(
            "blocking task failed: {e}"
        )))),
    }
}
