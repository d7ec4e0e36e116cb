//! `POST /hooks/v1/{channel_id}`: delivery feedback from providers
//! (docs/API.md, "Delivery feedback"). Public: the provider's signature or
//! credentials, checked by the channel's provider's verifier, are the only
//! credential. The body is read raw (at most 1 MiB, as every body) and
//! handed with the headers and the URL the provider called to
//! `Engine::provider_callback`. A refused callback is a wrong credential
//! like a bad API key: it is charged to the caller's address, and an
//! address past its budget is answered 429 before anything is verified
//! (a verification is a signature check, or a certificate fetch for SNS).

use super::endpoint::{Endpoint, Serve};
use super::ok;
use crate::auth::{charge, client_ip, refused_address};
use crate::bodies::hooks::CallbackResult;
use crate::errors::ApiResult;
use crate::extract::{path_uuid, Body};
use crate::openapi::{uuid_param, Content, Op};
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::actors::Callback;

/// `POST /hooks/v1/{channel_id}`
pub fn callback_endpoint() -> Endpoint {
    Op::post(
        "/hooks/v1/{channel_id}",
        "providerCallback",
        "A provider's delivery feedback (status callback or webhook) for a channel",
    )
    .param(uuid_param(
        "channel_id",
        "The channel whose provider calls (SendGrid, Postmark, Mailgun, SES through SNS, Twilio, Vonage).",
    ))
    .ok(
        200,
        "Verified: each report applied, or ignored when it names no message of the \
         channel's project (or says nothing Herald tracks)",
        Content::Json("CallbackResult"),
    )
    .errors(&[400, 401, 404, 422, 429])
    .to(callback)
}

/// The URL the provider called: the server's public URL when it has one
/// (behind a proxy the request's own host is the proxy's view), else the
/// request's scheme, host and path, with the query string either way.
fn called_url(st: &State, req: &HttpRequest) -> String {
    let path_and_query = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.path().to_string(), |p| p.as_str().to_string());
    match st.public_url() {
        "" => {
            let ci = req.connection_info();
            format!("{}://{}{}", ci.scheme(), ci.host(), path_and_query)
        }
        base => format!("{base}{path_and_query}"),
    }
}

pub async fn callback(req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let ip = client_ip(&req);
    if let Some(refused) = ip.and_then(|ip| refused_address(&st, ip)) {
        return Err(refused);
    }
    let channel_id = path_uuid(&req, "channel_id")?;
    let headers = req
        .headers()
        .iter()
        .filter_map(|(n, v)| {
            Some((
                n.as_str().to_ascii_lowercase(),
                v.to_str().ok()?.to_string(),
            ))
        })
        .collect();
    let cb = Callback {
        url: called_url(&st, &req),
        headers,
        body: body.bytes().to_vec(),
    };
    let done = st
        .engine
        .provider_callback(channel_id, cb)
        .await
        .map_err(|e| charge(&st, ip, e))?;
    Ok(ok(CallbackResult::from(done)))
}
