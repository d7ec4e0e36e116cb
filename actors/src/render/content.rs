//! A project's content applied to a render (issue 40): partials, email
//! layouts with their CSS inlined, and translations (`t()`).
//!
//! `ContentSet` is a project's content as one staging uses it, built from
//! its records once per `(project id, content_version)` and kept
//! (`cached`): every change of content bumps the project's
//! `content_version` (`actors::content`), and every staging reads the
//! project record already, so a node sees another node's change at its
//! next staging without reading any content record while nothing changed.
//!
//! A flow compiled with content (`RunRenderer::with_content`) gets an
//! environment whose loader serves the set's templates by name
//! (`partials/<handle>`, `layout/<handle>/html|text`, `t/<locale>/<key>`),
//! compiled on first use and kept with the flow's compilation, and a `t()`
//! function. Includes run inside the render that includes them (same fuel,
//! memory and output budget). A message of `t()` is rendered by a render
//! of its own, with the arguments of the call as its context: its fuel is
//! charged to the calling render's item budget (ten items per unit, the
//! ratio `Limits::max_items` has), so a loop of `t()` calls is bounded like
//! any loop, and its allocations count in the same memory budget.
//!
//! `RunRenderer::render_step` is the one function that turns a step into
//! its final `Rendered` (what staging, a batch's close and a flow preview
//! call): the step's parts, then, for an email step with a layout, the
//! layout around them and its CSS inlined.

use super::{compiled, render_capped, stack, Limits, RenderError, RunRenderer};
use crate::model::Flow;
use crate::model::{ChannelType, ContentBody, ContentRecord, Project, Rendered, Step};
use crate::rules::content::{locale_chain, paragraphs, DEFAULT_LOCALE, PARTIALS};
use minijinja::value::{Kwargs, Value};
use minijinja::{Environment, State};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::{Arc, LazyLock};
use uuid::Uuid;

/// A project's content, as renders use it.
#[derive(Debug, Default)]
pub struct ContentSet {
    pub project: Uuid,
    pub version: u64,
    partials: HashMap<String, String>,
    /// handle → (html, text)
    layouts: HashMap<String, (String, Option<String>)>,
    /// lower-case locale → key → message
    catalogs: HashMap<String, BTreeMap<String, String>>,
    default_locale: String,
    default_layout: Option<String>,
}

impl ContentSet {
    /// The set of project `p` made of its content records.
    pub fn new(p: &Project, records: Vec<ContentRecord>) -> ContentSet {
        let mut set = ContentSet {
            project: p.id,
            version: p.content_version,
            default_locale: p
                .default_locale
                .clone()
                .unwrap_or_else(|| DEFAULT_LOCALE.to_string()),
            default_layout: p.default_layout.clone(),
            ..Default::default()
        };
        for r in records {
            match r.body {
                ContentBody::Partial { content } => {
                    set.partials.insert(r.key, content);
                }
                ContentBody::Layout { html, text, .. } => {
                    set.layouts.insert(r.key, (html, text));
                }
                ContentBody::Translation { messages } => {
                    set.catalogs.insert(r.key.to_ascii_lowercase(), messages);
                }
            }
        }
        set
    }

    /// The source of the template `name` (the environment's loader).
    fn source(&self, name: &str) -> Option<String> {
        if let Some(h) = name.strip_prefix(PARTIALS) {
            return self.partials.get(h).cloned();
        }
        if let Some(rest) = name.strip_prefix("layout/") {
            let (h, part) = rest.rsplit_once('/')?;
            let (html, text) = self.layouts.get(h)?;
            return match part {
                "html" => Some(html.clone()),
                "text" => text.clone(),
                _ => None,
            };
        }
        let (loc, key) = name.strip_prefix("t/")?.split_once('/')?;
        self.catalogs.get(loc)?.get(key).cloned()
    }

    /// The locale of `chain` whose catalog has `key`.
    fn find(&self, chain: &[String], key: &str) -> Option<String> {
        chain
            .iter()
            .find(|l| self.catalogs.get(*l).is_some_and(|c| c.contains_key(key)))
            .cloned()
    }
}

/// Sets of projects, by id; a set of another content version is replaced.
static SETS: LazyLock<dashmap::DashMap<Uuid, Arc<ContentSet>>> =
    LazyLock::new(dashmap::DashMap::new);

/// Projects whose set is kept at most; past it the cache starts over.
const SETS_KEPT: usize = 1024;

/// The content set of project `p` at its `content_version`: the one kept,
/// or one made of the records `read` returns (not called for a project
/// that never had content).
pub fn cached<E>(
    p: &Project, read: impl FnOnce() -> Result<Vec<ContentRecord>, E>,
) -> Result<Arc<ContentSet>, E> {
    if let Some(s) = SETS.get(&p.id) {
        if s.version == p.content_version {
            return Ok(s.clone());
        }
    }
    let records = if p.content_version == 0 {
        vec![]
    } else {
        read()?
    };
    let set = Arc::new(ContentSet::new(p, records));
    if SETS.len() >= SETS_KEPT {
        SETS.clear();
    }
    SETS.insert(p.id, set.clone());
    Ok(set)
}

thread_local! {
    /// The keys `t()` found in no catalog during the current render
    /// (`render_step` takes them for the trace).
    static MISSING: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Missing keys kept per render at most (each is a trace entry).
const MISSING_KEPT: usize = 10;

/// Gives `env` the set's templates (by its loader) and `t()`.
pub(super) fn install(env: &mut Environment<'static>, set: &Arc<ContentSet>) {
    let loader = set.clone();
    env.set_loader(move |name| Ok(loader.source(name)));
    let set = set.clone();
    env.add_function(
        "t",
        move |state: &State, key: String, kwargs: Kwargs| -> Result<Value, minijinja::Error> {
            let locale = state
                .lookup("recipient")
                .and_then(|r| r.get_attr("locale").ok())
                .and_then(|l| l.as_str().map(str::to_string));
            let chain = locale_chain(locale.as_deref(), &set.default_locale);
            let Some(loc) = set.find(&chain, &key) else {
                MISSING.with(|m| {
                    let mut m = m.borrow_mut();
                    if m.len() < MISSING_KEPT && !m.contains(&key) {
                        m.push(key.clone());
                    }
                });
                return Ok(Value::from(key));
            };
            let tpl = state.env().get_template(&format!("t/{loc}/{key}"))?;
            let out = tpl.render_captured(Value::from(kwargs))?;
            let used = out.state().fuel_levels().map_or(0, |(used, _)| used);
            minijinja::budget::charge(used.saturating_mul(10))?;
            Ok(Value::from(out.into_output()))
        },
    );
}

/// A step rendered with its content: the final `Rendered`, and the
/// translation keys no catalog had (each a `translation_missing` trace
/// entry).
#[derive(Debug, Default)]
pub struct Applied {
    pub rendered: Rendered,
    pub missing: Vec<String>,
}

impl RunRenderer {
    /// With the project's content (partials, layouts, `t()`).
    pub fn with_content(flow: &Flow, limits: Limits, set: Option<Arc<ContentSet>>) -> Self {
        RunRenderer {
            env: compiled(flow, &limits, set.as_ref()),
            limits,
            strikes: flow.steps.iter().map(|_| Default::default()).collect(),
            first_limit: Mutex::new(HashMap::new()),
            content: set,
        }
    }

    /// Renders step `i` (`step`) for one recipient on a channel of type
    /// `channel`: its template's parts, then, for an email step with a
    /// layout (the step's, or the project's default unless the step says
    /// `null`), the layout around them with its CSS inlined.
    pub fn render_step(
        &self, i: usize, step: &Step, ctx: &Value, channel: ChannelType,
    ) -> Result<Applied, String> {
        MISSING.with(|m| m.borrow_mut().clear());
        let template = step.template.clone().unwrap_or_default();
        let r = self.render(i, &template, ctx);
        let missing = MISSING.with(|m| std::mem::take(&mut *m.borrow_mut()));
        let mut rendered = r?;
        let layout = match (&self.content, &step.layout) {
            (Some(_), Some(Some(h))) => Some(h.clone()),
            (Some(set), None) => set.default_layout.clone(),
            _ => None,
        };
        if let (ChannelType::Email, Some(h)) = (channel, layout) {
            rendered = self.wrap(&h, rendered, ctx)?;
        }
        Ok(Applied { rendered, missing })
    }

    /// `r` in layout `h`: its HTML part (the step's `html`, or its body as
    /// paragraphs) as the layout's `content`, CSS inlined; its text part
    /// the layout's `text` around the body (the body alone without one).
    fn wrap(&self, h: &str, mut r: Rendered, ctx: &Value) -> Result<Rendered, String> {
        let part = |which: &str, content: String| -> Result<Option<String>, String> {
            let Ok(tpl) = self.env.get_template(&format!("layout/{h}/{which}")) else {
                return Ok(None);
            };
            let ctx =
                minijinja::context! { content => Value::from_safe_string(content), ..ctx.clone() };
            render_capped(&tpl, ctx, &self.limits)
                .map(Some)
                .map_err(|e| match e {
                    RenderError::Limit(m) | RenderError::Template(m) => {
                        format!("layout {h} {which}: {m}")
                    }
                })
        };
        let inner = r.html.take().unwrap_or_else(|| paragraphs(&r.body));
        let html = part("html", inner)?
            .ok_or_else(|| format!("layout {h}: the layout no longer exists"))?;
        r.html = Some(inline_css(&html, &self.limits)?);
        if let Some(text) = part("text", r.body.clone())? {
            r.body = text;
        }
        Ok(r)
    }
}

/// `html` with the rules of its `<style>` blocks inlined into the elements
/// they match (`@media` rules stay in a `<style>` block); linked stylesheets
/// are never fetched. On the render stack (the HTML is a tenant's, nested
/// as deep as it likes), bounded by the output cap.
fn inline_css(html: &str, limits: &Limits) -> Result<String, String> {
    let out = stack::run(|| {
        css_inline::CSSInliner::options()
            .load_remote_stylesheets(false)
            .keep_link_tags(false)
            .keep_at_rules(true)
            .build()
            .inline(html)
    })
    .map_err(|e| format!("layout css: {e}"))?;
    if out.len() > limits.max_output {
        return Err(format!(
            "layout: the email with its CSS inlined exceeds the output limit of {} bytes (template_max_output)",
            limits.max_output
        ));
    }
    Ok(out)
}
