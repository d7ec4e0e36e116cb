//! Templates: MiniJinja over `recipient`, `actor`, `data` and `flow`.
//!
//! A run compiles its flow's templates once (`RunRenderer`) and renders them per
//! recipient; undefined variables (at any depth) render as empty strings.

use crate::model::{Flow, Rendered, Template};
use minijinja::{Environment, UndefinedBehavior};
use serde_json::Value;

fn env() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Chainable);
    // Notifications are not HTML pages; escaping is the channel's business (the
    // email `html` part is written by the flow author, who controls its markup).
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env
}

/// Checks that a template source compiles; the error text on failure.
pub fn check(src: &str) -> Result<(), String> {
    let env = env();
    env.template_from_str(src)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The compiled templates of one flow.
pub struct RunRenderer {
    env: Environment<'static>,
}

/// The parts of a template context that every recipient of a run shares
/// (`actor`, `data`, `flow`), converted to template values once per run: only
/// the recipient is converted per notification.
pub struct Shared {
    actor: minijinja::Value,
    data: minijinja::Value,
    flow: minijinja::Value,
}

impl Shared {
    pub fn new(actor: &Value, data: &Value, flow: &Value) -> Self {
        Shared {
            actor: minijinja::Value::from_serialize(actor),
            data: minijinja::Value::from_serialize(data),
            flow: minijinja::Value::from_serialize(flow),
        }
    }

    /// The context for one recipient.
    pub fn context(&self, recipient: &impl serde::Serialize) -> minijinja::Value {
        minijinja::context! {
            recipient => minijinja::Value::from_serialize(recipient),
            actor => self.actor.clone(),
            data => self.data.clone(),
            flow => self.flow.clone(),
        }
    }
}

const PARTS: [&str; 4] = ["subject", "body", "html", "url"];

impl RunRenderer {
    pub fn new(flow: &Flow) -> Self {
        let mut env = env();
        for (i, step) in flow.steps.iter().enumerate() {
            if let Some(t) = &step.template {
                for (part, src) in PARTS.iter().zip([&t.subject, &t.body, &t.html, &t.url]) {
                    if let Some(src) = src {
                        // Compiled at save already; a failure here means the stored
                        // flow predates a check, and rendering reports it per delivery.
                        let _ = env.add_template_owned(format!("{i}.{part}"), src.clone());
                    }
                }
            }
        }
        RunRenderer { env }
    }

    /// Renders step `i` for one recipient. `ctx` holds recipient, actor, data, flow
    /// (see `Shared::context`).
    pub fn render(
        &self,
        i: usize,
        t: &Template,
        ctx: &minijinja::Value,
    ) -> Result<Rendered, String> {
        let one = |part: &str, src: &Option<String>| -> Result<Option<String>, String> {
            match src {
                None => Ok(None),
                Some(_) => {
                    let tpl = self
                        .env
                        .get_template(&format!("{i}.{part}"))
                        .map_err(|e| format!("template {part}: {e}"))?;
                    tpl.render(ctx)
                        .map(Some)
                        .map_err(|e| format!("template {part}: {e}"))
                }
            }
        };
        Ok(Rendered {
            subject: one("subject", &t.subject)?.unwrap_or_default(),
            body: one("body", &t.body)?.unwrap_or_default(),
            html: one("html", &t.html)?,
            url: one("url", &t.url)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{new_id, FlowStatus, Step};

    #[test]
    fn renders_with_context_and_undefined_is_empty() {
        let (id, now) = new_id();
        let flow = Flow {
            id,
            handle: "f".into(),
            name: "F".into(),
            description: None,
            status: FlowStatus::Active,
            steps: vec![Step {
                kind: "channel".into(),
                channel_id: None,
                template: Some(Template {
                    subject: Some("{{ flow.name }}".into()),
                    body: Some("Hi {{ recipient.first_name }}{{ data.missing.deeper }}!".into()),
                    html: None,
                    url: None,
                }),
                seconds: None,
            }],
            created_at: now,
            updated_at: now,
        };
        let r = RunRenderer::new(&flow);
        let ctx = Shared::new(
            &serde_json::Value::Null,
            &serde_json::json!({}),
            &serde_json::json!({"name": "F"}),
        )
        .context(&serde_json::json!({"first_name": "Ada"}));
        let out = r
            .render(0, flow.steps[0].template.as_ref().unwrap(), &ctx)
            .unwrap();
        assert_eq!(out.body, "Hi Ada!");
        assert_eq!(out.subject, "F");
        assert!(check("{{ broken ").is_err());
    }
}
