//! Admin API flows: CRUD by id or handle, status transitions, and runs.

use super::{list as list_page, ok};
use crate::auth::Admin;
use crate::errors::{ApiError, ApiResult};
use crate::extract::{path_str, Body, Fields, Query};
use crate::idempotency::{self, Created};
use crate::pagination;
use crate::state::{AppState, State};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use herald_actors::model::{new_id, Flow, FlowStatus, Step, Template, Timestamp};
use herald_actors::store::{AcceptInput, ActorSpec, RunRecipient};
use herald_actors::{render, validate, Error, Validator};
use serde_json::{Map, Value};
use uuid::Uuid;

pub const MAX_RECIPIENTS: usize = 1000;
const MAX_TEMPLATE: usize = 64 * 1024;

/// Looks a flow up by the path's `{id}`: a UUID is an id, anything else a handle.
pub async fn find_flow(st: &AppState, project: Uuid, key: String) -> ApiResult<Flow> {
    st.run(move |s| {
        let f = match Uuid::parse_str(&key) {
            Ok(id) => s.flow(&project, &id)?,
            Err(_) => s.flow_by_handle(&project, &key)?,
        };
        f.ok_or_else(|| Error::not_found("flow", &key))
    })
    .await
}

/// Parses and checks `steps` (channel ids of this project, templates compile).
const MAX_STEPS: usize = 50;

async fn parse_steps(
    st: &AppState,
    project: Uuid,
    raw: &Value,
    v: &mut Validator,
) -> ApiResult<Vec<Step>> {
    let Value::Array(items) = raw else {
        v.push("steps", "format", "must be an array");
        return Ok(vec![]);
    };
    // Delivery ids carry the step index in one byte (`model::delivery_id`).
    if items.len() > MAX_STEPS {
        v.push(
            "steps",
            "length",
            format!("a flow has at most {MAX_STEPS} steps"),
        );
        return Ok(vec![]);
    }
    let channels = st.run(move |s| s.all_channels(&project)).await?;
    let limits = st.engine.storage().template_limits();
    // Sources to render once with an empty context (see `render::probe`), on
    // the blocking pool after the loop: (field path, source).
    let mut probes: Vec<(String, String)> = vec![];
    let mut steps = vec![];
    for (i, item) in items.iter().enumerate() {
        let p = format!("steps.{i}");
        let Value::Object(o) = item else {
            v.push(p, "format", "must be an object");
            continue;
        };
        match o.get("type").and_then(|t| t.as_str()) {
            Some("channel") => {
                let cid = match o.get("channel_id") {
                    Some(Value::String(s)) => match Uuid::parse_str(s) {
                        Ok(id) if channels.iter().any(|c| c.id == id) => Some(id),
                        _ => {
                            v.push(
                                format!("{p}.channel_id"),
                                "inclusion",
                                "no channel with this id in the project",
                            );
                            None
                        }
                    },
                    None | Some(Value::Null) => {
                        v.push(format!("{p}.channel_id"), "required", "is required");
                        None
                    }
                    Some(_) => {
                        v.push(format!("{p}.channel_id"), "format", "must be a UUID string");
                        None
                    }
                };
                let is_email = cid
                    .and_then(|id| channels.iter().find(|c| c.id == id))
                    .is_some_and(|c| c.channel_type == herald_actors::model::ChannelType::Email);
                let mut t = Template::default();
                match o.get("template") {
                    Some(Value::Object(tm)) => {
                        let f = Fields {
                            map: tm,
                            prefix: format!("{p}.template"),
                        };
                        for (part, slot) in [
                            ("subject", &mut t.subject),
                            ("body", &mut t.body),
                            ("html", &mut t.html),
                            ("url", &mut t.url),
                        ] {
                            if let Some(Some(src)) = f.opt_str(part, MAX_TEMPLATE, v) {
                                if let Err(e) = render::check(&src) {
                                    v.push(
                                        format!("{p}.template.{part}"),
                                        "format",
                                        format!("template does not compile: {e}"),
                                    );
                                } else {
                                    probes.push((format!("{p}.template.{part}"), src.clone()));
                                }
                                *slot = Some(src);
                            }
                        }
                        if t.body.is_none() && tm.get("body").is_none_or(|b| b.is_null()) {
                            v.push(format!("{p}.template.body"), "required", "is required");
                        }
                        if is_email
                            && t.subject.is_none()
                            && tm.get("subject").is_none_or(|b| b.is_null())
                        {
                            v.push(
                                format!("{p}.template.subject"),
                                "required",
                                "an email step needs a subject",
                            );
                        }
                    }
                    None | Some(Value::Null) => {
                        v.push(format!("{p}.template"), "required", "is required")
                    }
                    Some(_) => v.push(format!("{p}.template"), "format", "must be an object"),
                }
                steps.push(Step {
                    kind: "channel".into(),
                    channel_id: cid,
                    template: Some(t),
                    seconds: None,
                });
            }
            Some("delay") => {
                let secs = match o.get("seconds") {
                    Some(n) => match n.as_u64() {
                        Some(s) if s <= 30 * 86_400 => Some(s),
                        _ => {
                            v.push(
                                format!("{p}.seconds"),
                                "number",
                                "whole seconds from 0 to 2592000",
                            );
                            None
                        }
                    },
                    None => {
                        v.push(format!("{p}.seconds"), "required", "is required");
                        None
                    }
                };
                steps.push(Step {
                    kind: "delay".into(),
                    channel_id: None,
                    template: None,
                    seconds: secs,
                });
            }
            Some("batch") => v.push(
                format!("{p}.type"),
                "inclusion",
                "batch steps are not supported yet",
            ),
            Some(_) => v.push(format!("{p}.type"), "inclusion", "one of channel, delay"),
            None => v.push(format!("{p}.type"), "required", "is required"),
        }
    }
    // A template over its limits with no data at all always will be: refused
    // now rather than failing every delivery. Rendering is bounded by the same
    // limits, so this costs at most a budget per field.
    if !probes.is_empty() {
        let failed = st
            .run(move |_| {
                Ok(probes
                    .into_iter()
                    .filter_map(|(field, src)| {
                        render::probe(&src, &limits).err().map(|e| (field, e))
                    })
                    .collect::<Vec<_>>())
            })
            .await?;
        for (field, e) in failed {
            v.push(field, "format", format!("template is over its limits: {e}"));
        }
    }
    Ok(steps)
}

pub async fn create(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let idem = idempotency::prepare(&req, &m)?;
    let f = Fields::new(&m);
    let mut v = Validator::new();
    let handle = f.req_str("handle", 64, &mut v);
    if let Some(h) = &handle {
        if !validate::is_handle(h) {
            v.push(
                "handle",
                "format",
                "lowercase letters, digits, _ and -, at most 64, not a UUID",
            );
        }
    }
    let name = f.req_str("name", 200, &mut v);
    let description = f.opt_str("description", 1000, &mut v).flatten();
    let pid = a.project.id;
    let steps = match m.get("steps") {
        None | Some(Value::Null) => vec![],
        Some(raw) => parse_steps(&st, pid, raw, &mut v).await?,
    };
    v.finish()?;
    idempotency::once(&st.idempotency, &st.engine, pid, idem, "flow", |_| async {
        let (id, now) = new_id();
        let flow = Flow {
            id,
            handle: handle.expect("validated"),
            name: name.expect("validated"),
            description,
            status: FlowStatus::Draft,
            steps,
            created_at: now,
            updated_at: now,
        };
        let f2 = flow.clone();
        st.engine.create_flow(pid, f2).await?;
        Ok(Created {
            status: StatusCode::CREATED,
            body: flow.view().to_string().into_bytes(),
            stored: false,
        })
    })
    .await
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let paging = pagination::parse(
        &q,
        st.engine.storage().cursor_key(),
        &a.project.id,
        "flows",
        &[],
    )?;
    let pid = a.project.id;
    let pr = paging.req.clone();
    let page = st.run(move |s| s.list_flows(&pid, &pr)).await?;
    Ok(list_page(&paging, &page, Flow::view))
}

pub async fn get(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let f = find_flow(&st, a.project.id, path_str(&req, "id")?).await?;
    Ok(ok(f.view()))
}

pub async fn update(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let flow = find_flow(&st, a.project.id, path_str(&req, "id")?).await?;
    let f = Fields::new(&m);
    let mut v = Validator::new();
    if let Some(h) = m.get("handle") {
        if h.as_str() != Some(flow.handle.as_str()) {
            v.push("handle", "exclusion", "a flow's handle cannot change");
        }
    }
    let name = f.opt_str("name", 200, &mut v);
    if matches!(&name, Some(None)) || matches!(&name, Some(Some(n)) if n.is_empty()) {
        v.push("name", "required", "a flow needs a name");
    }
    let description = f.opt_str("description", 1000, &mut v);
    let pid = a.project.id;
    let steps = match m.get("steps") {
        None => None,
        Some(raw) => Some(parse_steps(&st, pid, raw, &mut v).await?),
    };
    v.finish()?;
    let id = flow.id;
    let flow = st
        .engine
        .update_flow(pid, id, move |fl| {
            if fl.status == FlowStatus::Archived {
                return Err(Error::conflict(
                    "flow",
                    Some(id.to_string()),
                    "invalid_transition",
                    "an archived flow cannot change",
                )
                .with("current_status", "archived")
                .with("allowed_transitions", Vec::<String>::new()));
            }
            if let Some(Some(n)) = name {
                fl.name = n;
            }
            if let Some(d) = description {
                fl.description = d;
            }
            if let Some(st) = steps {
                fl.steps = st;
            }
            fl.updated_at = Timestamp::now();
            Ok(())
        })
        .await?;
    Ok(ok(flow.view()))
}

fn allowed(from: FlowStatus) -> Vec<&'static str> {
    match from {
        FlowStatus::Draft => vec!["active", "archived"],
        FlowStatus::Active => vec!["draft", "archived"],
        FlowStatus::Archived => vec![],
    }
}

async fn transition(
    a: Admin,
    req: HttpRequest,
    st: State,
    to: FlowStatus,
) -> ApiResult<HttpResponse> {
    let flow = find_flow(&st, a.project.id, path_str(&req, "id")?).await?;
    let pid = a.project.id;
    let id = flow.id;
    let channels = st.run(move |s| s.all_channels(&pid)).await?;
    let flow = st
        .engine
        .update_flow(pid, id, move |fl| {
            if fl.status == to {
                return Ok(());
            }
            if fl.status == FlowStatus::Archived {
                return Err(Error::conflict(
                    "flow",
                    Some(id.to_string()),
                    "invalid_transition",
                    "an archived flow cannot change status",
                )
                .with("current_status", fl.status.as_str())
                .with("allowed_transitions", allowed(fl.status)));
            }
            if to == FlowStatus::Active {
                if !fl.steps.iter().any(|s| s.kind == "channel") {
                    return Err(Error::field(
                        "steps",
                        "required",
                        "an active flow needs at least one channel step",
                    ));
                }
                for s in fl.steps.iter().filter_map(|s| s.channel_id) {
                    match channels.iter().find(|c| c.id == s) {
                        Some(c) => c.usable()?,
                        None => {
                            return Err(Error::conflict(
                                "channel",
                                Some(s.to_string()),
                                "provider_not_configured",
                                "a step's channel no longer exists",
                            )
                            .with("current_status", "unconfigured"))
                        }
                    }
                }
            }
            fl.status = to;
            fl.updated_at = Timestamp::now();
            Ok(())
        })
        .await?;
    Ok(ok(flow.view()))
}

pub async fn activate(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    transition(a, req, st, FlowStatus::Active).await
}
pub async fn deactivate(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    transition(a, req, st, FlowStatus::Draft).await
}
pub async fn archive(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    transition(a, req, st, FlowStatus::Archived).await
}

/// Parses a run body into the engine's input (every problem reported at once).
fn parse_run(m: &Map<String, Value>, flow: Flow) -> ApiResult<AcceptInput> {
    let mut v = Validator::new();
    let mut recipients = vec![];
    match m.get("recipients") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            if items.len() > MAX_RECIPIENTS {
                v.push(
                    "recipients",
                    "length",
                    format!("at most {MAX_RECIPIENTS} recipients per run"),
                );
            } else {
                for (i, item) in items.iter().enumerate() {
                    let p = format!("recipients.{i}");
                    match item {
                        Value::String(ext) => {
                            if validate::external_id(ext, &format!("{p}.external_id"), &mut v) {
                                recipients.push(RunRecipient {
                                    external_id: ext.clone(),
                                    patch: Default::default(),
                                });
                            }
                        }
                        Value::Object(o) => {
                            let ext = match o.get("external_id") {
                                Some(Value::String(s)) => {
                                    validate::external_id(s, &format!("{p}.external_id"), &mut v)
                                        .then(|| s.clone())
                                }
                                None | Some(Value::Null) => {
                                    v.push(format!("{p}.external_id"), "required", "is required");
                                    None
                                }
                                Some(_) => {
                                    v.push(
                                        format!("{p}.external_id"),
                                        "format",
                                        "must be a string",
                                    );
                                    None
                                }
                            };
                            let patch = validate::user_patch(o, &p, &mut v);
                            if let Some(ext) = ext {
                                recipients.push(RunRecipient {
                                    external_id: ext,
                                    patch,
                                });
                            }
                        }
                        _ => v.push(p, "format", "must be an object with external_id"),
                    }
                }
            }
        }
        Some(_) => v.push("recipients", "format", "must be an array"),
    }
    let topic = match m.get("topic") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) if !t.is_empty() => Some(t.clone()),
        Some(_) => {
            v.push("topic", "format", "must be a topic key");
            None
        }
    };
    let actor = match m.get("actor") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            validate::external_id(s, "actor", &mut v).then(|| ActorSpec::Existing(s.clone()))
        }
        Some(Value::Object(o)) => {
            let patch = validate::user_patch(o, "actor", &mut v);
            match o.get("external_id") {
                Some(Value::String(s)) if validate::external_id(s, "actor.external_id", &mut v) => {
                    Some(ActorSpec::Inline(s.clone(), patch))
                }
                Some(Value::String(_)) => None,
                _ => {
                    v.push("actor.external_id", "required", "is required");
                    None
                }
            }
        }
        Some(_) => {
            v.push("actor", "format", "must be an external_id or a user object");
            None
        }
    };
    let data = match m.get("data") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(o)) => Value::Object(o.clone()),
        Some(_) => {
            v.push("data", "format", "must be an object");
            Value::Null
        }
    };
    if recipients.is_empty()
        && topic.is_none()
        && !v.fields.iter().any(|f| f.field.starts_with("recipients"))
    {
        v.push(
            "recipients",
            "required",
            "give recipients, a topic, or both",
        );
    }
    v.finish()?;
    Ok(AcceptInput {
        flow,
        recipients,
        actor,
        topic,
        data,
        idempotency: None,
    })
}

pub async fn run(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let flow = find_flow(&st, a.project.id, path_str(&req, "id")?).await?;
    let idem = idempotency::prepare(&req, &m)?;
    let status = flow.status;
    let flow_id = flow.id;
    let mut input = parse_run(&m, flow)?;
    if status != FlowStatus::Active {
        return Err(ApiError(
            Error::conflict(
                "flow",
                Some(flow_id.to_string()),
                "flow_not_active",
                "the flow is not active",
            )
            .with("current_status", status.as_str())
            .with("allowed_statuses", vec!["active"]),
        ));
    }
    let pid = a.project.id;
    let st2 = st.clone();
    idempotency::once(
        &st2.idempotency,
        &st2.engine,
        pid,
        idem,
        "flow_run",
        |idem| async move {
            input.idempotency = idem.map(|i| (i.scope, i.payload_hash));
            // Stored, durable (the 202 promises it), frames pushed, run started.
            let body = st.engine.accept_run(pid, input).await?;
            Ok(Created {
                status: StatusCode::ACCEPTED,
                body,
                stored: true,
            })
        },
    )
    .await
}
