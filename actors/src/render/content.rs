//! A project's content applied to a render: partials, email
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
//! layout around them and its CSS inlined (from sources inlined once,
//! `css_source`, where that gives the same bytes).

use super::{
    compiled, css, css_source, css_split, render_capped, Limits, RenderError, RunRenderer,
};
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

    /// The sources of the set's partials.
    pub(super) fn partial_sources(&self) -> impl Iterator<Item = &str> {
        self.partials.values().map(String::as_str)
    }

    /// The source of the template `name` (the environment's loader).
    pub(super) fn source(&self, name: &str) -> Option<String> {
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
    /// How many `t()` messages are being rendered inside each other on
    /// this thread: a message may call `t()`, and one that calls itself
    /// would otherwise recurse until the stack ran out.
    static T_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `t()` messages rendered inside each other at most (as partials nest).
const T_DEPTH_MAX: usize = crate::rules::content::MAX_INCLUDE_DEPTH;

/// One level of `T_DEPTH`, left when dropped.
struct Nested;

impl Nested {
    fn enter() -> Option<Nested> {
        T_DEPTH.with(|d| {
            (d.get() < T_DEPTH_MAX).then(|| {
                d.set(d.get() + 1);
                Nested
            })
        })
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        T_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
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
            let _level = Nested::enter().ok_or_else(|| {
                minijinja::Error::new(
                    minijinja::ErrorKind::InvalidOperation,
                    format!("t(\"{key}\"): messages call t() more than {T_DEPTH_MAX} deep"),
                )
            })?;
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
    ///
    /// When the layout's frame and the step's `html` source allow it
    /// (`css_source`), the step's HTML is rendered from its source inlined
    /// once, into the frame inlined once: the same bytes without inlining
    /// per recipient. A recipient for whom that path gives up (a value with
    /// markup in it, an error) is rendered as before.
    pub fn render_step(
        &self, i: usize, step: &Step, ctx: &Value, channel: ChannelType,
    ) -> Result<Applied, String> {
        let none;
        let template = match &step.template {
            Some(t) => t,
            None => {
                none = crate::model::Template::default();
                &none
            }
        };
        let layout = match (&self.content, &step.layout) {
            (Some(_), Some(Some(h))) => Some(h.clone()),
            (Some(set), None) => set.default_layout.clone(),
            _ => None,
        };
        let layout = layout.filter(|_| channel == ChannelType::Email);
        let fast = layout.as_deref().and_then(|h| self.fast(h, template, ctx));
        // After the frame's render: the layout's own keys are not reported.
        MISSING.with(|m| m.borrow_mut().clear());
        let used = std::cell::Cell::new(false);
        let r = match &fast {
            Some(f) => self.render_with(i, template, ctx, &|| {
                let kept = MISSING.with(|m| m.borrow().len());
                let out = f.html(ctx, &self.limits);
                match out {
                    Some(_) => used.set(true),
                    // the part is rendered again: its keys again
                    None => MISSING.with(|m| m.borrow_mut().truncate(kept)),
                }
                out
            }),
            None => self.render(i, template, ctx),
        };
        let missing = MISSING.with(|m| std::mem::take(&mut *m.borrow_mut()));
        let mut rendered = r?;
        if let Some(h) = layout {
            rendered = match fast.filter(|_| used.get()) {
                Some(f) => {
                    #[cfg(test)]
                    FAST_USED.with(|n| n.set(n.get() + 1));
                    let inner = rendered.html.take().unwrap_or_default();
                    rendered.html =
                        Some([f.frame.before.as_str(), &inner, &f.frame.after].concat());
                    self.wrap_text(&h, rendered, ctx)?
                }
                None => self.wrap(&h, rendered, ctx)?,
            };
        }
        Ok(Applied { rendered, missing })
    }

    /// What the inlined path needs for one recipient: the layout's frame
    /// inlined and the step's source inlined for its CSS; `None` where it
    /// does not apply.
    fn fast(&self, h: &str, template: &crate::model::Template, ctx: &Value) -> Option<Fast> {
        #[cfg(test)]
        if SLOW_ONLY.with(|s| s.get()) {
            return None;
        }
        let set = self.content.as_ref()?;
        let src = template.html.as_ref()?;
        if !css_source::eligible(set, h, src) {
            return None;
        }
        let frame = self
            .layout_part(h, "html", css_split::MARKER.to_string(), ctx)
            .ok()??;
        let frame_len = frame.len();
        let frame = css::frame(&frame)?;
        let inlined = css_source::plan(set, &self.limits, h, &frame.css, src)?;
        Some(Fast {
            frame,
            frame_len,
            inlined,
        })
    }

    /// Layout `h`'s part `which` around `content` (`None`: it has none).
    fn layout_part(
        &self, h: &str, which: &str, content: String, ctx: &Value,
    ) -> Result<Option<String>, String> {
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
    }

    /// `r` in layout `h`: its HTML part (the step's `html`, or its body as
    /// paragraphs) as the layout's `content`, CSS inlined; its text part
    /// the layout's `text` around the body (the body alone without one).
    fn wrap(&self, h: &str, mut r: Rendered, ctx: &Value) -> Result<Rendered, String> {
        let inner = r.html.take().unwrap_or_else(|| paragraphs(&r.body));
        let html = self
            .layout_part(h, "html", inner.clone(), ctx)?
            .ok_or_else(|| format!("layout {h}: the layout no longer exists"))?;
        r.html = Some(css::inline(&html, Some(&inner), &self.limits)?);
        self.wrap_text(h, r, ctx)
    }

    /// `r`'s body in layout `h`'s `text` (the body alone without one).
    fn wrap_text(&self, h: &str, mut r: Rendered, ctx: &Value) -> Result<Rendered, String> {
        if let Some(text) = self.layout_part(h, "text", r.body.clone(), ctx)? {
            r.body = text;
        }
        Ok(r)
    }
}

/// The inlined path's state for one recipient (`RunRenderer::fast`).
struct Fast {
    frame: std::rc::Rc<css::Frame>,
    /// The length of the layout's output around the marker.
    frame_len: usize,
    inlined: Arc<css_source::Inlined>,
}

impl Fast {
    /// The step's HTML, inlined, when rendering it from the inlined source
    /// works and the email stays within what the per-recipient path allows
    /// (the step's, the layout's and the email's output caps, the CSS work
    /// bound), bounding the per-recipient path's HTML by `longest` (it has
    /// as many elements).
    fn html(&self, ctx: &Value, limits: &Limits) -> Option<String> {
        let inner = self.inlined.render(ctx, limits)?;
        let step_len = self.inlined.longest(inner.len());
        let layout_len = self.frame_len - css_split::MARKER.len() + step_len;
        let email_len = self.frame.before.len() + inner.len() + self.frame.after.len();
        let elements = self.frame.elements + inner.matches('<').count();
        (!inner.is_empty()
            && step_len <= limits.max_output
            && layout_len <= limits.max_output
            && email_len <= limits.max_output
            && css::within_work(self.frame.rules, elements))
        .then_some(inner)
    }
}

#[cfg(test)]
thread_local! {
    /// Set by a test to render every step as if no plan applied.
    pub(super) static SLOW_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Emails this thread rendered through the inlined path.
    pub(super) static FAST_USED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContentKind, Timestamp};
    use crate::render::Shared;

    fn record(key: &str, body: ContentBody) -> ContentRecord {
        let now = Timestamp::now();
        ContentRecord {
            key: key.into(),
            body,
            created_at: now,
            updated_at: now,
        }
    }

    fn catalog(locale: &str, pairs: &[(&str, &str)]) -> ContentRecord {
        let messages = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        record(locale, ContentBody::Translation { messages })
    }

    fn project(version: u64) -> Project {
        let mut p = Project::new(Uuid::now_v7(), "p", "pk", vec![], Timestamp::now());
        p.content_version = version;
        p
    }

    fn render(
        body: &str, records: Vec<ContentRecord>, recipient: serde_json::Value, limits: Limits,
    ) -> Result<Applied, String> {
        let p = project(1);
        let set = Arc::new(ContentSet::new(&p, records));
        let f = crate::render::tests::flow("s", body);
        let r = RunRenderer::with_content(&f, limits, Some(set));
        let ctx = Shared::new(
            &serde_json::Value::Null,
            &serde_json::json!({}),
            &serde_json::json!({}),
        )
        .context(&recipient);
        r.render_step(0, &f.steps[0], &ctx, ChannelType::InApp)
    }

    #[test]
    fn t_follows_the_chain_and_reports_missing_keys() {
        let records = vec![
            catalog("fr", &[("hi", "Salut {{ name }}")]),
            catalog("en", &[("hi", "Hi {{ name }}"), ("bye", "Bye")]),
        ];
        let a = render(
            r#"{{ t("hi", name="Ada") }}|{{ t("bye") }}|{{ t("gone") }}"#,
            records,
            serde_json::json!({"locale": "fr-CA"}),
            Limits::default(),
        )
        .unwrap();
        assert_eq!(a.rendered.body, "Salut Ada|Bye|gone");
        assert_eq!(a.missing, ["gone"]);
    }

    #[test]
    fn a_message_calling_itself_fails_instead_of_recursing() {
        let records = vec![catalog("en", &[("a", "x{{ t('a') }}")])];
        let e = render(
            "{{ t('a') }}",
            records,
            serde_json::json!({}),
            Limits::default(),
        )
        .unwrap_err();
        assert!(e.contains("more than 5 deep"), "{e}");
        // and the thread's depth is back to zero
        assert_eq!(T_DEPTH.with(|d| d.get()), 0);
    }

    #[test]
    fn messages_spend_the_calling_render_s_budget() {
        // each message loops 1,000 times: 200 calls cost far more than the
        // fuel of one render, though each call alone is well within it
        let records = vec![catalog(
            "en",
            &[("slow", "{% for i in range(1000) %}{% endfor %}.")],
        )];
        let body = "{% for i in range(200) %}{{ t('slow') }}{% endfor %}";
        let e = render(
            body,
            records.clone(),
            serde_json::json!({}),
            Limits::default(),
        )
        .unwrap_err();
        assert!(e.contains("template_"), "{e}");
        let ok = render(
            "{% for i in range(3) %}{{ t('slow') }}{% endfor %}",
            records,
            serde_json::json!({}),
            Limits::default(),
        )
        .unwrap();
        assert_eq!(ok.rendered.body, "...");
    }

    #[test]
    fn a_set_is_kept_per_content_version() {
        let mut p = project(3);
        let reads = std::cell::Cell::new(0);
        let read = || {
            reads.set(reads.get() + 1);
            Ok::<_, ()>(vec![record(
                "f",
                ContentBody::Partial {
                    content: "x".into(),
                },
            )])
        };
        let a = cached(&p, read).unwrap();
        let b = cached(&p, read).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(reads.get(), 1);
        p.content_version = 4;
        let c = cached(&p, read).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(reads.get(), 2);
        assert_eq!(c.source("partials/f").as_deref(), Some("x"));
        assert_eq!(ContentKind::Partial.as_str(), "partial");
    }
}

/// What content adds to a render (run by hand, in release:
/// `cargo test -p herald-engine --release --lib render::content::cost -- --ignored --nocapture`).
#[cfg(test)]
mod cost {
    use super::*;
    use crate::model::{Template, Timestamp};
    use crate::render::Shared;

    fn step(html: &str, subject: &str, layout: Option<Option<String>>) -> crate::model::Flow {
        let mut f = crate::render::tests::flow(
            subject,
            "Hello {{ recipient.first_name }}, your order {{ data.order }} shipped.",
        );
        f.steps[0].template = Some(Template {
            html: Some(html.into()),
            ..f.steps[0].template.clone().unwrap()
        });
        f.steps[0].layout = layout;
        f
    }

    /// `f` with the inlined path off (`css_source`): what a layout with
    /// CSS cost before it.
    fn slow<T>(f: impl FnOnce() -> T) -> T {
        SLOW_ONLY.with(|s| s.set(true));
        let out = f();
        SLOW_ONLY.with(|s| s.set(false));
        out
    }

    /// The best of 5 rounds, per render, over `ctxs` in turn.
    fn time(r: &RunRenderer, f: &crate::model::Flow, ctxs: &[Value]) -> std::time::Duration {
        (0..5)
            .map(|_| {
                let t = std::time::Instant::now();
                for ctx in ctxs {
                    r.render_step(0, &f.steps[0], ctx, ChannelType::Email)
                        .unwrap();
                }
                t.elapsed() / ctxs.len() as u32
            })
            .min()
            .unwrap()
    }

    #[test]
    #[ignore]
    fn measure() {
        let now = Timestamp::now();
        let rec = |key: &str, body| ContentRecord {
            key: key.into(),
            body,
            created_at: now,
            updated_at: now,
        };
        let mut p = Project::new(Uuid::now_v7(), "p", "pk", vec![], now);
        p.content_version = 1;
        p.default_layout = Some("main".into());
        let set = Arc::new(ContentSet::new(
            &p,
            vec![
                rec("footer", ContentBody::Partial {
                    content: r#"<p class="footer">Acme · <a href="{{ preferences_url }}">{{ t("footer.prefs") }}</a></p>"#.into(),
                }),
                rec("main", ContentBody::Layout {
                    name: "Main".into(),
                    html: r#"<html><head><style>body { font-family: sans-serif } .card { padding: 24px; border: 1px solid #e5e7eb } p { margin: 0 0 12px } .footer { color: #6b7280; font-size: 12px }</style></head><body><div class="card">{{ content }}</div>{% include "partials/footer" %}</body></html>"#.into(),
                    text: Some("{{ content }}\n-- Acme".into()),
                }),
                rec("bare", ContentBody::Layout {
                    name: "Bare".into(),
                    html: r#"<html><body><div class="card">{{ content }}</div>{% include "partials/footer" %}</body></html>"#.into(),
                    text: Some("{{ content }}\n-- Acme".into()),
                }),
                rec("en", ContentBody::Translation {
                    messages: [
                        ("order.subject".to_string(), "Order {{ n }} shipped".to_string()),
                        ("footer.prefs".to_string(), "Email preferences".to_string()),
                    ]
                    .into_iter()
                    .collect(),
                }),
            ],
        ));
        let shared = Shared::new(
            &serde_json::Value::Null,
            &serde_json::json!({"order": 42}),
            &serde_json::json!({"name": "F"}),
        );
        // 2,000 recipients, each with a name of their own
        let ctxs: Vec<Value> = (0..2000)
            .map(|i| {
                shared.context(
                    &serde_json::json!({"first_name": format!("Ada{i}"), "locale": "en-GB"}),
                )
            })
            .collect();
        let same = vec![ctxs[0].clone(); 2000];
        let html = r#"<p>Hello <b>{{ recipient.first_name }}</b>,</p><p>your order {{ data.order }} shipped.</p>"#;
        let plain = step(html, "Order {{ data.order }} shipped", None);
        let rich = step(html, r#"{{ t("order.subject", n=data.order) }}"#, None);
        let no_layout = step(
            html,
            r#"{{ t("order.subject", n=data.order) }}"#,
            Some(None),
        );
        let bare = step(
            html,
            r#"{{ t("order.subject", n=data.order) }}"#,
            Some(Some("bare".into())),
        );
        let plain_r = RunRenderer::new(&plain, Limits::default());
        let rich_r = RunRenderer::with_content(&rich, Limits::default(), Some(set.clone()));
        let no_layout_r =
            RunRenderer::with_content(&no_layout, Limits::default(), Some(set.clone()));
        let bare_r = RunRenderer::with_content(&bare, Limits::default(), Some(set));
        let a = time(&plain_r, &plain, &ctxs);
        let rows = [
            ("t() and no layout", time(&no_layout_r, &no_layout, &ctxs)),
            (
                "layout without <style> + partial + t()",
                time(&bare_r, &bare, &ctxs),
            ),
            ("layout + CSS + partial + t()", time(&rich_r, &rich, &ctxs)),
            (
                "the same, CSS inlined per recipient (no plan)",
                slow(|| time(&rich_r, &rich, &ctxs)),
            ),
            (
                "the same, one email for every recipient",
                time(&rich_r, &rich, &same),
            ),
        ];
        println!("plain: {a:?} per render");
        for (what, t) in rows {
            println!("{what}: {t:?} ({:.2}x)", t.as_secs_f64() / a.as_secs_f64());
        }
    }
}
