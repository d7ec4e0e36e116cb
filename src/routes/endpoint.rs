//! An endpoint: a handler with its route and its OpenAPI operation, declared
//! once beside the handler (`Op::get(..)….to(handler)`). The route table
//! (`routes::endpoints`) is a list of them; registering it serves every
//! handler and documents every operation from the same values, so the routes
//! and `/openapi.json` cannot drift apart.

use super::{fallback, Guarded};
use crate::openapi::Op;
use actix_web::{web, FromRequest, Handler, Responder};
use utoipa::openapi::path::HttpMethod;

/// A handler, where it is served and how it is documented.
pub struct Endpoint {
    pub op: Op,
    route: actix_web::Route,
    /// The resource answers only this method: other methods on its path fall
    /// through to the next resource that matches (see `exclusive`).
    exclusive: bool,
}

impl Endpoint {
    /// Only this endpoint's method reaches its path's resource; other methods
    /// go on to the resources registered after it (e.g. `POST
    /// /admin/v1/users/bulk` leaves `GET /admin/v1/users/bulk` to the user
    /// whose external id is `bulk`).
    pub fn exclusive(mut self) -> Endpoint {
        self.exclusive = true;
        self
    }
}

/// `op.to(handler)`: the endpoint that serves `op` with `handler`, inside
/// `Guarded` (a panic is a 500, not a dropped connection).
pub trait Serve {
    fn to<F, Args>(self, handler: F) -> Endpoint
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static;
}

impl Serve for Op {
    fn to<F, Args>(self, handler: F) -> Endpoint
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        let method = match self.method() {
            HttpMethod::Get => web::get(),
            HttpMethod::Put => web::put(),
            HttpMethod::Post => web::post(),
            HttpMethod::Delete => web::delete(),
            HttpMethod::Patch => web::patch(),
            _ => unreachable!("endpoints answer GET, PUT, POST, DELETE or PATCH"),
        };
        Endpoint {
            route: method.to(Guarded(handler)),
            op: self,
            exclusive: false,
        }
    }
}

/// Serves the endpoints in order: one resource per path (its methods
/// together, any other method answered like an unknown route), in the order
/// their paths first appear, since the first resource whose path matches
/// takes the request.
pub fn register(cfg: &mut web::ServiceConfig, endpoints: Vec<Endpoint>) {
    let mut resources: Vec<(&'static str, actix_web::Resource)> = vec![];
    for e in endpoints {
        let path = e.op.path();
        let at = match resources.iter().position(|(p, _)| *p == path) {
            Some(at) => at,
            None => {
                let mut r = web::resource(path).default_service(web::to(fallback));
                if e.exclusive {
                    r = r.guard(method_guard(e.op.method()));
                }
                resources.push((path, r));
                resources.len() - 1
            }
        };
        let (p, r) = resources.remove(at);
        resources.insert(at, (p, r.route(e.route)));
    }
    for (_, r) in resources {
        cfg.service(r);
    }
}

fn method_guard(m: &HttpMethod) -> impl actix_web::guard::Guard {
    use actix_web::guard;
    let m = match m {
        HttpMethod::Get => actix_web::http::Method::GET,
        HttpMethod::Put => actix_web::http::Method::PUT,
        HttpMethod::Post => actix_web::http::Method::POST,
        HttpMethod::Delete => actix_web::http::Method::DELETE,
        HttpMethod::Patch => actix_web::http::Method::PATCH,
        _ => unreachable!("endpoints answer GET, PUT, POST, DELETE or PATCH"),
    };
    guard::Method(m)
}
