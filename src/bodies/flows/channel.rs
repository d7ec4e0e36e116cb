//! A channel step as a request gives it, checked: its channel of the
//! project, its template's parts (compiling, within their lengths; the
//! sources to probe), its action buttons and an email step's layout. A
//! route step's channels are checked the same way (`route`).

use super::given::StepInput;
use crate::extract::{Given, Obj};
use herald_engine::delivery::window::SendWindow;
use herald_engine::model::{self, ChannelType, MAX_ACTIONS, MAX_TEMPLATE};
use herald_engine::Validator;
use serde_json::Value;
use uuid::Uuid;

/// One channel step at path `p`; its template sources join `probes`.
pub(super) fn channel_step(
    s: &StepInput, p: &str, channels: &[model::Channel], probes: &mut Vec<(String, String)>,
    v: &mut Validator,
) -> model::Step {
    let channel = match &s.channel_id {
        Given::Value(id) => {
            let found = Uuid::parse_str(id)
                .ok()
                .and_then(|id| channels.iter().find(|c| c.id == id));
            if found.is_none() {
                v.push(
                    format!("{p}.channel_id"),
                    "inclusion",
                    "no channel with this id in the project",
                );
            }
            found
        }
        Given::Absent | Given::Null => {
            v.push(format!("{p}.channel_id"), "required", "is required");
            None
        }
        Given::Wrong(_) => {
            v.push(format!("{p}.channel_id"), "format", "must be a UUID string");
            None
        }
    };
    let mut t = model::Template::default();
    match &s.template {
        Given::Value(Obj(tm)) => {
            for (part, given, slot) in [
                ("subject", &tm.subject, &mut t.subject),
                ("body", &tm.body, &mut t.body),
                ("html", &tm.html, &mut t.html),
                ("url", &tm.url, &mut t.url),
            ] {
                let path = format!("{p}.template.{part}");
                if let Some(Some(src)) = given.text(&path, MAX_TEMPLATE, v) {
                    if let Err(e) = herald_engine::render::check(&src) {
                        v.push(path, "format", format!("template does not compile: {e}"));
                    } else {
                        probes.push((path, src.clone()));
                    }
                    *slot = Some(src);
                }
            }
            // An unknown channel has its own error: its actions are not refused too.
            let in_app = channel.is_none_or(|c| c.channel_type == ChannelType::InApp);
            t.actions = template_actions(
                &tm.actions,
                &format!("{p}.template.actions"),
                in_app,
                probes,
                v,
            );
            if matches!(tm.body, Given::Absent | Given::Null) {
                v.push(format!("{p}.template.body"), "required", "is required");
            }
            let is_email = channel.is_some_and(|c| c.channel_type == ChannelType::Email);
            if is_email && matches!(tm.subject, Given::Absent | Given::Null) {
                v.push(
                    format!("{p}.template.subject"),
                    "required",
                    "an email step needs a subject",
                );
            }
        }
        Given::Absent | Given::Null => v.push(format!("{p}.template"), "required", "is required"),
        Given::Wrong(_) => v.push(format!("{p}.template"), "format", "must be an object"),
    }
    let fallback_channel_ids =
        super::fallbacks::fallbacks(&s.fallback_channel_ids, p, channel, channels, v);
    model::Step {
        kind: "channel".into(),
        channel_id: channel.map(|c| c.id),
        template: Some(t),
        seconds: None,
        cond: None,
        limit: None,
        window: None,
        send_window: s
            .send_window
            .as_ref()
            .and_then(|w| SendWindow::parse(w, p, v)),
        max_window: None,
        layout: None,
        fallback_channel_ids,
        success: None,
        channels: vec![],
    }
}

/// A channel step's `layout`: only an email step takes one (absent: the
/// project's default; null: none).
pub(super) fn layout_of(
    s: &StepInput, p: &str, channels: &[model::Channel], v: &mut Validator,
) -> Option<Option<String>> {
    let path = format!("{p}.layout");
    let layout = match &s.layout {
        Given::Absent => return None,
        Given::Null => return Some(None),
        Given::Value(h) if herald_engine::rules::content::is_content_handle(h) => h.clone(),
        _ => {
            v.push(path, "format", "a layout's handle or null");
            return None;
        }
    };
    // An unknown channel has its own error: its layout is not refused too.
    let channel = match &s.channel_id {
        Given::Value(id) => channels.iter().find(|c| c.id.to_string() == *id),
        _ => None,
    };
    if channel.is_some_and(|c| c.channel_type != ChannelType::Email) {
        v.push(path, "exclusion", "only an email step takes a layout");
        return None;
    }
    Some(Some(layout))
}

/// The action buttons of a channel step's template at `path`: at most
/// `MAX_ACTIONS`, only on an in_app step, each a non-empty `label` and `url`
/// checked as the template's other parts are (length, compiling); their
/// sources join `probes`.
fn template_actions(
    given: &Given<Vec<Value>>, path: &str, in_app: bool, probes: &mut Vec<(String, String)>,
    v: &mut Validator,
) -> Vec<model::ActionTemplate> {
    let items = match given {
        Given::Absent | Given::Null => return vec![],
        Given::Wrong(_) => {
            v.push(path, "format", "must be an array of {label, url}");
            return vec![];
        }
        Given::Value(items) => items,
    };
    if items.is_empty() {
        return vec![];
    }
    if !in_app {
        v.push(path, "exclusion", "only an in_app step has actions");
        return vec![];
    }
    if items.len() > MAX_ACTIONS {
        v.push(path, "length", format!("at most {MAX_ACTIONS} actions"));
        return vec![];
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Some(obj) = item.as_object() else {
            v.push(
                format!("{path}.{i}"),
                "format",
                "must be an object {label, url}",
            );
            continue;
        };
        let mut part = |name: &str| -> Option<String> {
            let at = format!("{path}.{i}.{name}");
            match obj.get(name) {
                None | Some(Value::Null) => {
                    v.push(at, "required", "is required");
                    None
                }
                Some(Value::String(s)) if s.is_empty() => {
                    v.push(at, "required", "must not be empty");
                    None
                }
                Some(Value::String(s)) if s.chars().count() > MAX_TEMPLATE => {
                    v.push(at, "length", format!("at most {MAX_TEMPLATE} characters"));
                    None
                }
                Some(Value::String(s)) => {
                    if let Err(e) = herald_engine::render::check(s) {
                        v.push(at, "format", format!("template does not compile: {e}"));
                        return None;
                    }
                    probes.push((at, s.clone()));
                    Some(s.clone())
                }
                Some(_) => {
                    v.push(at, "format", "must be a string");
                    None
                }
            }
        };
        let (label, url) = (part("label"), part("url"));
        if let (Some(label), Some(url)) = (label, url) {
            out.push(model::ActionTemplate { label, url });
        }
    }
    out
}
