//! Admin API flow previews: a stored flow's channel steps
//! (`POST /admin/v1/flows/{id}/preview`, drafts included) or an unsaved
//! flow's (`POST /admin/v1/flows/preview`, the flow's body with the
//! preview's fields beside it), rendered for one recipient as a run would
//! render them, with nothing stored, sent or counted.

use super::endpoint::{Endpoint, Serve};
use super::flows::{find_flow, new_flow};
use super::ok;
use crate::auth::Admin;
use crate::bodies::flows::{FlowInput, FlowPreview, PreviewBody, PREVIEW_KEYS};
use crate::errors::ApiResult;
use crate::extract::{path_str, typed, Body};
use crate::openapi::{flow_param, Content, Op};
use crate::state::{AppState, State};
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::{Error, Validator};
use serde_json::{Map, Value};

/// `POST /admin/v1/flows/{id}/preview`
pub fn preview_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/flows/{id}/preview",
        "previewFlow",
        "Render a flow's channel steps for one recipient; nothing is stored or sent",
    )
    .param(flow_param())
    .body("PreviewBody", true)
    .ok(
        200,
        "Each channel step's content",
        Content::Json("FlowPreview"),
    )
    .errors(&[404])
    .to(preview)
}

pub async fn preview(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let flow = find_flow(&st, a.project.id, path_str(&req, "id")?).await?;
    let fields: PreviewBody = typed(&m)?;
    let mut v = Validator::new();
    let id = flow.id;
    let input = fields.validate(flow, &mut v);
    render(&st, &a, Some(id), input, v).await
}

/// `POST /admin/v1/flows/preview`
pub fn preview_unsaved_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/flows/preview",
        "previewUnsavedFlow",
        "Render an unsaved flow's channel steps for one recipient; nothing is stored or sent",
    )
    .body("UnsavedFlowPreview", true)
    .ok(
        200,
        "Each channel step's content",
        Content::Json("FlowPreview"),
    )
    .to(preview_unsaved)
    // other methods are the flow's whose handle is `preview`
    .exclusive()
}

/// The flow's body is checked as `POST /admin/v1/flows` checks it (its
/// errors at the same paths), except that `handle` and `name` may be left
/// out.
pub async fn preview_unsaved(a: Admin, body: Body, st: State) -> ApiResult<HttpResponse> {
    let mut m = body.object()?;
    let mut preview = Map::new();
    for k in PREVIEW_KEYS {
        if let Some(x) = m.remove(k) {
            preview.insert(k.to_string(), x);
        }
    }
    // Absent or null: an unsaved flow needs no handle or name.
    for (k, default) in [("handle", "preview"), ("name", "Preview")] {
        if m.get(k).is_none_or(Value::is_null) {
            m.insert(k.to_string(), Value::from(default));
        }
    }
    let flow_input: FlowInput = typed(&m)?;
    let fields: PreviewBody = typed(&preview)?;
    let mut v = Validator::new();
    let flow = new_flow(&st, a.project.id, flow_input, &mut v)
        .await?
        .into_draft();
    let input = fields.validate(flow, &mut v);
    render(&st, &a, None, input, v).await
}

async fn render(
    st: &AppState, a: &Admin, flow_id: Option<uuid::Uuid>,
    input: Option<herald_engine::delivery::PreviewInput>, v: Validator,
) -> ApiResult<HttpResponse> {
    v.finish()?;
    let mut input = input.ok_or_else(|| Error::internal("a preview body that checks out"))?;
    input.timezone = a.project.timezone.clone();
    let p = st.engine.preview_flow(a.project.clone(), input).await?;
    Ok(ok(FlowPreview::from_preview(flow_id, &p)))
}
