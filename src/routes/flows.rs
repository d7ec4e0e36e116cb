//! Admin API flows: CRUD by id or handle, status transitions, and runs.

use super::endpoint::{Endpoint, Serve};
use super::{list as list_page, ok};
use crate::auth::Admin;
use crate::bodies::{
    self,
    flows::{Declared, FlowChange, FlowInput, FlowUpdate, NewFlow, RunInput},
};
use crate::errors::ApiResult;
use crate::extract::{path_str, typed, Body, Query};
use crate::idempotency::{self, Created};
use crate::openapi::{flow_param, Content, Op};
use crate::pagination;
use crate::state::{AppState, State};
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::actors::RunAnswer;
use herald_engine::catalog::FlowEdit;
use herald_engine::model::{Channel, Flow, FlowStatus};
use herald_engine::Validator;
use uuid::Uuid;

/// Looks a flow up by the path's `{id}`: a UUID is an id, anything else a handle.
pub async fn find_flow(st: &AppState, project: Uuid, key: String) -> ApiResult<Flow> {
    Ok(st.engine.flow(project, key).await?)
}

/// The project's channels, loaded only when a body names steps.
async fn channels_if(st: &AppState, project: Uuid, needed: bool) -> ApiResult<Vec<Channel>> {
    if !needed {
        return Ok(vec![]);
    }
    Ok(st.engine.all_channels(project).await?)
}

/// The project's categories when the body names some (a flow's must be
/// declared).
async fn categories_if(st: &AppState, project: Uuid, needed: bool) -> ApiResult<Declared> {
    if !needed {
        return Ok(Declared::new());
    }
    Ok(st.engine.categories(project).await?)
}

/// A template over its limits with no data at all always will be: refused now
/// rather than failing every delivery. Rendering is bounded by the same limits,
/// so this costs at most a budget per field (on the blocking pool).
///
/// The partials the templates include and the layouts the steps name must
/// exist (and nest at most 5 deep): a flow naming missing content is
/// refused at save rather than failing its deliveries.
async fn probe_templates(
    st: &AppState, project: Uuid, steps: &mut bodies::flows::Steps, v: &mut Validator,
) -> ApiResult<()> {
    let probes = std::mem::take(&mut steps.probes);
    let layouts = std::mem::take(&mut steps.layouts);
    if probes.is_empty() && layouts.is_empty() {
        return Ok(());
    }
    let missing = st
        .engine
        .check_flow_content(project, probes.clone(), layouts)
        .await?;
    for (field, e) in missing {
        v.push(field, "inclusion", e);
    }
    let failed = st.engine.probe_templates(probes).await?;
    for (field, e) in failed {
        v.push(field, "format", format!("template is over its limits: {e}"));
    }
    Ok(())
}

/// A new flow's body checked against the project's channels and
/// categories, its templates probed; problems go to `v`.
pub(super) async fn new_flow(
    st: &AppState, project: Uuid, input: FlowInput, v: &mut Validator,
) -> ApiResult<NewFlow> {
    let channels = channels_if(st, project, input.has_steps()).await?;
    let declared = categories_if(st, project, input.has_categories()).await?;
    let mut new = input.validate(&channels, &declared, v);
    probe_templates(st, project, &mut new.steps, v).await?;
    Ok(new)
}

/// `POST /admin/v1/flows`
pub fn create_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/flows",
        "createFlow",
        "Create a flow (status draft)",
    )
    .body("FlowInput", true)
    .idempotent()
    .ok(201, "Created", Content::Json("Flow"))
    .to(create)
}

pub async fn create(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let idem = idempotency::prepare(&req, &m)?;
    let input: FlowInput = typed(&m)?;
    let pid = a.project.id;
    let mut v = Validator::new();
    let new = new_flow(&st, pid, input, &mut v).await?;
    v.finish()?;
    st.once(pid, idem, "flow", |_| async {
        let flow = new.into_draft();
        let created = Created::new(&bodies::flows::Flow::from(&flow));
        st.engine.create_flow(pid, a.actor.clone(), flow).await?;
        Ok(created)
    })
    .await
}

/// `GET /admin/v1/flows`
pub fn list_endpoint() -> Endpoint {
    Op::get("/admin/v1/flows", "listFlows", "List flows")
        .paged()
        .ok(200, "A page of flows", Content::Json("FlowList"))
        .to(list)
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let paging = pagination::parse(&q, st.cursor_key(), &a.project.id, "flows", &[])?;
    let pid = a.project.id;
    let page = st.engine.list_flows(pid, paging.req.clone()).await?;
    Ok(list_page(&paging, &page, |f| bodies::flows::Flow::from(f)))
}

/// `GET /admin/v1/flows/{id}`
pub fn get_endpoint() -> Endpoint {
    Op::get("/admin/v1/flows/{id}", "getFlow", "A flow, by id or handle")
        .param(flow_param())
        .ok(200, "The flow", Content::Json("Flow"))
        .errors(&[404])
        .to(get)
}

pub async fn get(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let f = find_flow(&st, a.project.id, path_str(&req, "id")?).await?;
    Ok(ok(bodies::flows::Flow::from(&f)))
}

/// `PUT /admin/v1/flows/{id}`
pub fn update_endpoint() -> Endpoint {
    Op::put("/admin/v1/flows/{id}", "updateFlow", "Update a flow")
        .param(flow_param())
        .body("FlowUpdate", true)
        .ok(200, "The flow", Content::Json("Flow"))
        .errors(&[404, 409])
        .to(update)
}

pub async fn update(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let flow = find_flow(&st, a.project.id, path_str(&req, "id")?).await?;
    let input: FlowUpdate = typed(&m)?;
    let pid = a.project.id;
    let channels = channels_if(&st, pid, input.has_steps()).await?;
    let declared = categories_if(&st, pid, input.has_categories()).await?;
    let mut v = Validator::new();
    let mut change = input.validate(&flow, &channels, &declared, &mut v);
    if let Some(steps) = &mut change.steps {
        probe_templates(&st, pid, steps, &mut v).await?;
    }
    v.finish()?;
    let FlowChange {
        name,
        description,
        steps,
        critical,
        commercial,
        categories,
    } = change;
    let edit = FlowEdit {
        name,
        description,
        steps: steps.map(|s| s.steps),
        critical,
        commercial,
        categories,
    };
    let flow = st
        .engine
        .edit_flow(pid, a.actor.clone(), flow.id, edit)
        .await?;
    Ok(ok(bodies::flows::Flow::from(&flow)))
}

async fn transition(
    a: Admin, req: HttpRequest, st: State, to: FlowStatus,
) -> ApiResult<HttpResponse> {
    let flow = find_flow(&st, a.project.id, path_str(&req, "id")?).await?;
    let flow = st
        .engine
        .set_flow_status(a.project.id, a.actor.clone(), flow.id, to)
        .await?;
    Ok(ok(bodies::flows::Flow::from(&flow)))
}

/// `POST /admin/v1/flows/{id}/activate`
pub fn activate_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/flows/{id}/activate",
        "activateFlow",
        "Activate a flow",
    )
    .param(flow_param())
    .ok(200, "The flow", Content::Json("Flow"))
    .errors(&[404, 409, 422])
    .to(activate)
}

pub async fn activate(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    transition(a, req, st, FlowStatus::Active).await
}
/// `POST /admin/v1/flows/{id}/deactivate`
pub fn deactivate_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/flows/{id}/deactivate",
        "deactivateFlow",
        "Return a flow to draft",
    )
    .param(flow_param())
    .ok(200, "The flow", Content::Json("Flow"))
    .errors(&[404, 409])
    .to(deactivate)
}

pub async fn deactivate(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    transition(a, req, st, FlowStatus::Draft).await
}
/// `POST /admin/v1/flows/{id}/archive`
pub fn archive_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/flows/{id}/archive",
        "archiveFlow",
        "Archive a flow (final)",
    )
    .param(flow_param())
    .ok(200, "The flow", Content::Json("Flow"))
    .errors(&[404, 409])
    .to(archive)
}

pub async fn archive(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    transition(a, req, st, FlowStatus::Archived).await
}

/// `POST /admin/v1/flows/{id}/run`
pub fn run_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/flows/{id}/run",
        "runFlow",
        "Run a flow for recipients",
    )
    .param(flow_param())
    .body("RunInput", true)
    .idempotent()
    .ok(
        202,
        "Accepted and stored durably",
        Content::Json("FlowRunAccepted"),
    )
    .errors(&[404, 409])
    .to(run)
}

pub async fn run(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let key = path_str(&req, "id")?;
    let pid = a.project.id;
    // One code path with or without an idempotency key: the flow's lookup,
    // the key's stored answer, the body's checks and the acceptance are one
    // storage job (one hop to the blocking pool). The errors come in one
    // order: an unknown flow (404), the key's problem (422), a reused key
    // (409), the body's problems (422), an inactive flow (409).
    let idem = idempotency::prepare(&req, &m);
    let known = idem.as_ref().ok().cloned().flatten();
    let units = match m.get("recipients") {
        Some(serde_json::Value::Array(items)) => items.len(),
        _ => 1,
    };
    let (tz, quota) = (a.project.timezone.clone(), a.project.quota_bytes);
    let key_facts = idem
        .map(|i| i.map(|i| (i.scope, i.payload_hash)))
        .map_err(|e| e.0);
    let accept = st.engine.run_flow(pid, units, key, key_facts, move |flow| {
        let mut input = typed::<RunInput>(&m)?.validate(flow)?;
        input.timing.timezone = tz;
        input.timing.quota_bytes = quota;
        Ok(input)
    });
    // Stored, durable (the 202 promises it), frames pushed, run started.
    let answer = match &known {
        Some(k) => st.idempotency.locked(&pid, &k.scope, accept).await,
        None => accept.await,
    };
    match (answer, &known) {
        (Ok(RunAnswer::Accepted(body)), _) => Ok(idempotency::respond(202, body, false)),
        (Ok(RunAnswer::Stored(r)), Some(k)) => idempotency::replay_or_reused(k, r, "flow_run"),
        // Only a key finds a stored answer; none is none.
        (Ok(RunAnswer::Stored(r)), None) => Ok(idempotency::respond(r.status, r.body, true)),
        (Err(e), Some(k)) => idempotency::after_race(&st.engine, pid, k, "flow_run", e).await,
        (Err(e), None) => Err(e.into()),
    }
}

/// `POST /admin/v1/flows/{id}/cancel`
pub fn cancel_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/flows/{id}/cancel",
        "cancelFlowRuns",
        "Stop the waiting deliveries of the flow's runs with a cancellation key",
    )
    .param(flow_param())
    .body("CancelInput", true)
    .ok(200, "What was canceled", Content::Json("CancelResult"))
    .errors(&[404])
    .to(cancel)
}

/// `POST /admin/v1/flows/{id}/cancel`: stops the waiting deliveries of the
/// flow's runs that carry the cancellation key (of the named recipients
/// only, when given). Idempotent: a repeat finds nothing left to stop.
pub async fn cancel(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let (key, recipients) = typed::<bodies::workflow::CancelInput>(&body.object()?)?.validate()?;
    let flow = find_flow(&st, a.project.id, path_str(&req, "id")?).await?;
    let pid = a.project.id;
    // Recipients named by external id; one that is no user has nothing to stop.
    let recipients = match recipients {
        None => None,
        Some(exts) => Some(st.engine.user_ids(pid, exts).await?),
    };
    let n = st
        .engine
        .cancel_runs(
            pid,
            herald_engine::delivery::cancel::CancelRequest {
                flow_id: flow.id,
                key,
                recipients,
            },
        )
        .await?;
    Ok(ok(bodies::workflow::CancelResult { canceled: n as u64 }))
}
