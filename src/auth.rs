//! Authentication (docs/API.md §2) and rate limiting (§5), as extractors: `Admin` for
//! the Admin API, `UserCtx` for the User API. Checks run in the order of the table
//! in docs/API.md §2; secrets are compared in constant time and never logged.

use crate::errors::ApiError;
use crate::state::{AppState, State};
use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use governor::clock::{Clock, DefaultClock};
use herald_engine::model::{Project, User};
use herald_engine::{Error, ErrorCode};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use std::sync::Arc;
use subtle::ConstantTimeEq;

pub const API_KEY: &str = "x-service-api-key";
pub const SECRET_KEY: &str = "x-service-secret-key";
pub const USER_KEY: &str = "x-service-user-key";
pub const USER_ID: &str = "x-service-user-id";

/// An authenticated Admin API caller.
#[derive(Clone)]
pub struct Admin {
    pub project: Arc<Project>,
    /// Who calls: `Actor::Api` for the secret key; the audit log names it.
    pub actor: herald_engine::audit::Actor,
}

/// An authenticated User API caller: the project and the user it acts for.
#[derive(Clone)]
pub struct UserCtx {
    pub project: Arc<Project>,
    pub user: User,
}

/// A header's value; empty counts as absent (docs/API.md §2).
fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn state(req: &HttpRequest) -> State {
    req.app_data::<State>()
        .cloned()
        .expect("app state registered")
}

pub(crate) fn rate_limited(wait_secs: u64, limit: u32) -> ApiError {
    let secs = wait_secs.max(1);
    ApiError(
        Error::new(
            ErrorCode::RateLimited,
            format!("rate limit exceeded; retry in {secs} s"),
        )
        .with("retry_after", secs)
        .with("limit", limit)
        .with("window", "1s"),
    )
}

pub(crate) fn wait_secs(nu: &governor::NotUntil<governor::clock::QuantaInstant>) -> u64 {
    let d = nu.wait_time_from(DefaultClock::default().now());
    (d.as_millis() as u64).div_ceil(1000)
}

/// Looks up the project of the request's api key.
pub async fn project_of(st: &AppState, req: &HttpRequest) -> Result<Arc<Project>, ApiError> {
    let pk = header(req, API_KEY)
        .ok_or_else(|| Error::unauthenticated("api_key", "missing_api_key"))?
        .to_string();
    // Hot path: a known key never leaves the async thread.
    let p = st.engine.project_by_api_key(pk).await?;
    if let Some(p) = &p {
        // In a cluster: a test clock another node moved is this node's too.
        st.engine.observe_project(p);
    }
    p.ok_or_else(|| ApiError(Error::unauthenticated("api_key", "invalid_api_key")))
}

pub async fn admin(req: &HttpRequest) -> Result<Admin, ApiError> {
    let st = state(req);
    if header(req, API_KEY).is_none() && crate::console::auth::session_token(req).is_some() {
        return console_member(&st, req).await;
    }
    let project = project_of(&st, req).await?;
    let sk = header(req, SECRET_KEY)
        .ok_or_else(|| Error::unauthenticated("secret_key", "missing_secret_key"))?;
    let given = herald_engine::backend::hash_secret(sk);
    // The current secret, or the one a rotation replaced while its grace
    // period lasts. Both comparisons always run, in constant time, so the
    // timing tells nothing about which one (if any) matched.
    let now = herald_engine::model::Timestamp::now();
    let (previous, live) = match project.previous_secret_live(now) {
        Some(h) => (h, 1u8),
        None => (project.secret_hash.as_slice(), 0u8),
    };
    let matched =
        given.ct_eq(&project.secret_hash) | (given.ct_eq(previous) & subtle::Choice::from(live));
    if !bool::from(matched) {
        return Err(Error::unauthenticated("secret_key", "invalid_secret_key").into());
    }
    st.limits.housekeeping();
    if let Err(nu) = st.limits.admin.check_key(&project.id) {
        return Err(rate_limited(wait_secs(&nu), st.limits.admin_rate));
    }
    Ok(Admin {
        project,
        actor: herald_engine::audit::Actor::Api,
    })
}

/// The Admin API for a console page's script: the session cookie, and the
/// session's CSRF token in `X-CSRF-Token` on every request (403 without it
/// or with another: a cookie alone never acts), then the member's role
/// (`console_change`). The admin rate limit applies as for the secret key.
async fn console_member(st: &State, req: &HttpRequest) -> Result<Admin, ApiError> {
    use herald_engine::console;
    let s = crate::console::auth::live_session(st, req)
        .await?
        .ok_or_else(|| Error::unauthenticated("console_session", "invalid_session"))?;
    let given = header(req, crate::console::auth::CSRF_HEADER).unwrap_or("");
    if !console::csrf_matches(given, &s.session.csrf) {
        return Err(ApiError(
            Error::new(
                ErrorCode::Forbidden,
                "a console session's request must carry its CSRF token in X-CSRF-Token",
            )
            .with("reason", "csrf"),
        ));
    }
    console::require(s.member.role, console_change(req))?;
    let project = Arc::new(s.project);
    st.engine.observe_project(&project);
    st.limits.housekeeping();
    if let Err(nu) = st.limits.admin.check_key(&project.id) {
        return Err(rate_limited(wait_secs(&nu), st.limits.admin_rate));
    }
    Ok(Admin {
        project,
        actor: herald_engine::audit::Actor::Member {
            email: s.member.email,
        },
    })
}

/// The Admin API paths that manage the project's keys (its user-JWT
/// signing key, the secret of its preference and unsubscribe links): an
/// owner's only.
const KEY_PATHS: &[&str] = &[
    "/admin/v1/project/signing_key",
    "/admin/v1/project/rotate_link_secret",
    "/admin/v1/project/rotate_secret",
];

/// What an Admin API request does, as console roles see it: a GET (or
/// HEAD) reads, and so does a flow preview (a POST that stores nothing and
/// sends nothing, so a viewer sees what a flow renders); a change of a key
/// path manages keys; any other method changes the configuration.
fn console_change(req: &HttpRequest) -> herald_engine::console::Change {
    use herald_engine::console::Change;
    let m = req.method();
    if m == actix_web::http::Method::GET || m == actix_web::http::Method::HEAD {
        return Change::Read;
    }
    // By the route matched, not the path: a flow whose handle is `preview`
    // is changed through routes that end otherwise.
    if m == actix_web::http::Method::POST
        && matches!(
            req.match_pattern().as_deref(),
            Some("/admin/v1/flows/preview" | "/admin/v1/flows/{id}/preview")
        )
    {
        return Change::Read;
    }
    // Judged on the decoded path and on the route it matched, by their
    // ends: a spelling of the path that reaches a key route is a key path.
    let path = percent_encoding::percent_decode_str(req.path()).decode_utf8_lossy();
    let pattern = req.match_pattern().unwrap_or_default();
    let is_key = |p: &str| {
        let p = p.trim_end_matches('/');
        KEY_PATHS
            .iter()
            .any(|k| p.ends_with(&k["/admin/v1".len()..]))
    };
    if is_key(&path) || is_key(&pattern) {
        Change::Keys
    } else {
        Change::Configuration
    }
}

#[derive(serde::Deserialize)]
struct Claims {
    sub: Option<String>,
}

/// Parsed signing keys by PEM: parsing RSA PEM on every User API request cost
/// more than verifying the signature. Bounded; cleared when full.
fn decoding_key(pem: &str) -> Option<Arc<DecodingKey>> {
    static KEYS: std::sync::LazyLock<dashmap::DashMap<String, Arc<DecodingKey>>> =
        std::sync::LazyLock::new(dashmap::DashMap::new);
    if let Some(k) = KEYS.get(pem) {
        return Some(k.clone());
    }
    let k = Arc::new(DecodingKey::from_rsa_pem(pem.as_bytes()).ok()?);
    if KEYS.len() >= 1024 {
        KEYS.clear();
    }
    KEYS.insert(pem.to_string(), k.clone());
    Some(k)
}

/// Verifies a user JWT against the project's signing key; returns `sub`.
pub fn verify_jwt(project: &Project, token: &str) -> Result<String, Error> {
    let bad = || Error::unauthenticated("user_key_jwt", "invalid_signature");
    let Some(pem) = &project.signing_key else {
        return Err(if project.security_mode {
            Error::unauthenticated("user_key_jwt", "signing_key_not_configured")
        } else {
            bad()
        });
    };
    let header = jsonwebtoken::decode_header(token).map_err(|_| bad())?;
    if header.alg != Algorithm::RS256 {
        return Err(bad());
    }
    let key = decoding_key(pem).ok_or_else(bad)?;
    let mut v = Validation::new(Algorithm::RS256);
    v.leeway = 30;
    v.validate_exp = true;
    v.validate_nbf = true;
    v.validate_aud = false;
    v.required_spec_claims = Default::default();
    match jsonwebtoken::decode::<Claims>(token, &key, &v) {
        Ok(data) => data.claims.sub.filter(|s| !s.is_empty()).ok_or_else(bad),
        Err(e) => match e.kind() {
            jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                Err(Error::unauthenticated("user_key_jwt", "token_expired"))
            }
            _ => Err(bad()),
        },
    }
}

/// The user a set of User API credentials names (shared with the WebSocket auth frame).
pub async fn user_for(
    st: &AppState, project: Arc<Project>, user_key: Option<&str>, user_id: Option<&str>,
) -> Result<UserCtx, ApiError> {
    if project.security_mode && project.signing_key.is_none() {
        return Err(Error::unauthenticated("user_key_jwt", "signing_key_not_configured").into());
    }
    let ext = match (user_key, user_id) {
        (Some(token), _) => verify_jwt(&project, token)?,
        (None, Some(id)) if !project.security_mode => id.to_string(),
        _ => return Err(Error::unauthenticated("user_key_jwt", "missing_user_key").into()),
    };
    let pid = project.id;
    let user = st.engine.user_by_ext_cached(pid, ext).await?;
    let user: Arc<User> =
        user.ok_or_else(|| Error::unauthenticated("user_key_jwt", "user_not_found"))?;
    let user = User::clone(&user);
    st.limits.housekeeping();
    if let Err(nu) = st.limits.user.check_key(&(project.id, user.id)) {
        return Err(rate_limited(wait_secs(&nu), st.limits.user_rate));
    }
    // The user was seen (`recipient.last_seen_at`; the engine writes it at
    // most once a minute per user).
    st.engine.user_seen(pid, user.id);
    Ok(UserCtx { project, user })
}

pub async fn user(req: &HttpRequest) -> Result<UserCtx, ApiError> {
    let st = state(req);
    let project = project_of(&st, req).await?;
    user_for(&st, project, header(req, USER_KEY), header(req, USER_ID)).await
}

/// The address a request came from (the TCP peer: a proxy in front of Herald
/// shares one budget of wrong credentials among its clients).
pub fn client_ip(req: &HttpRequest) -> Option<std::net::IpAddr> {
    req.peer_addr().map(|a| a.ip())
}

/// 429 for an address that used up its budget of wrong credentials.
pub fn refused_address(st: &AppState, ip: std::net::IpAddr) -> Option<ApiError> {
    let secs = st.limits.auth_blocked(ip)?;
    Some(ApiError(
        Error::new(
            ErrorCode::RateLimited,
            format!("too many failed authentications from this address; retry in {secs} s"),
        )
        .with("retry_after", secs)
        .with("limit", st.limits.auth_failures_per_minute)
        .with("window", "1m"),
    ))
}

/// Charges a failed authentication to the client's address when it presented a
/// wrong credential (a guess); missing credentials and expired tokens are not
/// guesses and cost nothing. Returns what to answer: the failure itself, or the
/// 429 when this guess was over the address's budget.
pub fn charge(st: &AppState, ip: Option<std::net::IpAddr>, e: Error) -> Error {
    let guess = e.code == ErrorCode::Unauthenticated
        && matches!(
            e.details.get("reason").and_then(|r| r.as_str()),
            Some(
                "invalid_api_key"
                    | "invalid_secret_key"
                    | "invalid_signature"
                    | "invalid_ops_token"
            )
        );
    match ip {
        Some(ip) if guess && !st.limits.auth_failed(ip) => {
            refused_address(st, ip).map_or(e, |l| l.0)
        }
        _ => e,
    }
}

/// Paths that authenticate in the handler instead (the WebSocket endpoint, whose
/// browser clients send their user key in the first frame).
const SELF_AUTH: &[&str] = &["/user/v1/feed/live"];

/// Authenticates every request under `/admin/` and `/user/` — known routes or not —
/// before anything else looks at it (docs/API.md §3: authentication, then rate limit,
/// then body size...). The result is left in the request's extensions for the
/// `Admin` / `UserCtx` extractors.
pub async fn middleware(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<actix_web::body::BoxBody>,
) -> Result<actix_web::dev::ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    // Decide on the fully percent-decoded path, never on the raw one: the router
    // matches a path whose unreserved characters it decoded (`/%61dmin/…` is
    // `/admin/…` to it), and an encoded `/` (`/admin%2Fv1`) must not dodge
    // authentication either.
    // Decoded once; bytes that are not UTF-8 are answered below, after
    // authentication, and meanwhile judged by their lossy decoding.
    let (path, utf8) = match percent_encoding::percent_decode_str(req.path()).decode_utf8() {
        Ok(p) => (p, true),
        Err(_) => (
            percent_encoding::percent_decode_str(req.path()).decode_utf8_lossy(),
            false,
        ),
    };
    let routed = req.match_info().as_str();
    let under = |p: &str, base: &str| {
        p.strip_prefix(base)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    let admin_path = under(&path, "/admin") || under(routed, "/admin");
    let user_path =
        (under(&path, "/user") || under(routed, "/user")) && !SELF_AUTH.contains(&routed);
    if admin_path || user_path {
        let st = state(req.request());
        let ip = client_ip(req.request());
        if let Some(e) = ip.and_then(|ip| refused_address(&st, ip)) {
            return Ok(req.error_response(e));
        }
        let r = if admin_path {
            admin(req.request()).await.map(|a| {
                req.extensions_mut().insert(a);
            })
        } else {
            user(req.request()).await.map(|u| {
                req.extensions_mut().insert(u);
            })
        };
        if let Err(e) = r {
            return Ok(req.error_response(ApiError(charge(&st, ip, e.0))));
        }
    }
    // The router decodes the path lossily (`%FF` and `%FE` both become U+FFFD),
    // so bytes that are not UTF-8 are refused here, after authentication.
    if !utf8 {
        let e = Error::invalid_param("path", "the path must be percent-encoded UTF-8");
        return Ok(req.error_response(ApiError(e)));
    }
    next.call(req).await
}

fn from_extensions<T: Clone + 'static>(req: &HttpRequest) -> Result<T, ApiError> {
    req.extensions().get::<T>().cloned().ok_or_else(|| {
        ApiError(Error::internal(
            "route registered outside the authenticated paths",
        ))
    })
}

impl FromRequest for Admin {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;
    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(from_extensions(req))
    }
}

impl FromRequest for UserCtx {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;
    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(from_extensions(req))
    }
}
