//! Templates: MiniJinja over `recipient`, `actor`, `data` and `flow`, bounded.
//!
//! A run compiles its flow's templates once (`RunRenderer`) and renders them per
//! recipient; undefined variables (at any depth) render as empty strings.
//!
//! Every render is bounded (`Limits`): a budget of MiniJinja fuel (instructions
//! executed) and a cap on each rendered field's size. A template is written by a
//! tenant and runs on threads every tenant shares, so neither a loop nor a huge
//! output may cost more than the budget: over either, the delivery fails with
//! `template_error` and a message naming the field and the limit.
//!
//! The output cap is enforced while writing (`Template::render_to_write` into a
//! writer that refuses to grow past the cap), so the stored text never exceeds
//! it. Values built inside an expression before anything is written (`"x" * n`,
//! `s ~ s`, `"%999999999s"|format(x)`, `[1]|batch(n)`, a `{% set %}` block
//! capturing a loop) are bounded by a memory budget per render
//! (`Limits::max_memory`): MiniJinja is patched (vendor/README.md) to count the
//! net bytes a render allocates (fed by the global allocator, `alloc.rs`),
//! to check the count before every instruction, and to refuse an operation
//! whose result would take it over before it allocates. Iteration is counted
//! too (`Limits::max_items`), so a lazy sequence of 10^18 items cannot keep a
//! thread busy. Compiling (which folds constant expressions) runs under the
//! same budget. A render over it fails with `template_error` like one over the
//! fuel or output cap; a field that exceeded its limits `STRIKES` times is not
//! rendered again in the same run.
//!
//! A project's content (partials, layouts, `t()`) is applied by `content`:
//! `RunRenderer::render_step` is what staging and a batch's close call.

use crate::model::{Flow, Rendered, RenderedAction, Template, MAX_ACTIONS, TEMPLATE_PARTS};
pub mod alloc;
pub mod content;
mod css;
mod css_source;
mod css_split;
mod stack;

use minijinja::{Environment, ErrorKind, UndefinedBehavior};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// The bounds of one render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// MiniJinja fuel per rendered field (about one unit per instruction).
    pub fuel: u64,
    /// Bytes one rendered field may hold.
    pub max_output: usize,
}

/// See `Limits::default` for how these were chosen.
pub const DEFAULT_FUEL: u64 = 100_000;
pub const DEFAULT_MAX_OUTPUT: usize = 256 * 1024;

/// The memory budget of one render before the output cap's share: enough for
/// a context of a few MB (the run's `data` converted to template values) and
/// the values a template makes from it, small enough that both cores rendering
/// at once cannot approach a node's memory limit.
pub const BASE_MEMORY: usize = 16 * 1024 * 1024;

/// The stack a render runs on. A template can nest a list in itself once per
/// few instructions (`{% set ns.l = [ns.l] %}` in a loop: about 12,000 levels
/// under the default fuel), and dropping or comparing such a value recurses
/// once per level (a few hundred bytes each in a release build, about 5 KiB in
/// a debug one); a thread's usual 2 MiB would overflow, which aborts the
/// process. Formatting and serialising are cut at 200 levels by the patched
/// MiniJinja. One region per thread, mapped once without reserving memory
/// (`stack`): only the pages a render touches are used.
pub const RENDER_STACK: usize = 256 * 1024 * 1024;

impl Limits {
    /// Net bytes one render may allocate: `BASE_MEMORY` plus eight times the
    /// output cap (the output itself, and room to build it from parts).
    pub fn max_memory(&self) -> usize {
        BASE_MEMORY.saturating_add(self.max_output.saturating_mul(8))
    }

    /// Items one render may iterate over (loops, filters, formatting): ten per
    /// unit of fuel, so a filter walking a lazy sequence is bounded like the
    /// instructions around it.
    pub fn max_items(&self) -> u64 {
        self.fuel.saturating_mul(10)
    }

    /// Runs `f` (a compile or a render) under this budget, on a stack of
    /// `RENDER_STACK` bytes.
    fn scoped<T>(&self, f: impl FnOnce() -> T) -> (T, bool) {
        stack::run(|| {
            let _scope = minijinja::budget::enter(self.max_memory(), self.max_items());
            let out = f();
            (out, minijinja::budget::tripped())
        })
    }

    fn memory_message(&self) -> String {
        format!(
            "rendering exceeded the memory limit of {} bytes (template_max_memory)",
            self.max_memory()
        )
    }
}

impl Default for Limits {
    /// 100,000 fuel: the templates of the test suites and the README use at
    /// most a few hundred units (a 50-item loop with a filter or two about
    /// 600), so this is two orders of magnitude of headroom, while
    /// `range(100000)` nested with `range(10)` runs out after about 5 ms.
    /// 256 KiB: far above any notification (an email's HTML part included),
    /// small enough that a run of 1,000 recipients cannot store 100 MB each.
    fn default() -> Self {
        Limits {
            fuel: DEFAULT_FUEL,
            max_output: DEFAULT_MAX_OUTPUT,
        }
    }
}

fn env(limits: &Limits) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Chainable);
    // Notifications are not HTML pages; escaping is the channel's business (the
    // email `html` part is written by the flow author, who controls its markup).
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_fuel(Some(limits.fuel.max(1)));
    env
}

/// Checks that a template source compiles; the error text on failure.
pub fn check(src: &str) -> Result<(), String> {
    let limits = Limits::default();
    let env = env(&limits);
    let (r, _) = limits.scoped(|| env.template_from_str(src).map(|_| ()));
    r.map_err(|e| e.to_string())
}

/// Renders a template source once with an empty context (every variable
/// undefined) under `limits`, at save time: a template that already exceeds
/// the budget or the output cap without any data always will, so it is
/// refused then. Any other failure (an undefined variable used as a number,
/// say) depends on the data and is left to run time; so is a source that does
/// not compile (`check` reports it).
pub fn probe(src: &str, limits: &Limits) -> Result<(), String> {
    let env = env(limits);
    let (tpl, _) = limits.scoped(|| env.template_from_str(src));
    let Ok(tpl) = tpl else {
        return Ok(());
    };
    match render_capped(&tpl, minijinja::context! {}, limits) {
        Err(RenderError::Limit(msg)) => Err(msg),
        _ => Ok(()),
    }
}

/// Compiles and renders one template source against a context under
/// `limits`: what a run does for one field, without a flow (the fuzz target,
/// previews). A source that does not compile is an error too.
pub fn render_once(src: &str, ctx: &minijinja::Value, limits: &Limits) -> Result<String, String> {
    let env = env(limits);
    let (tpl, _) = limits.scoped(|| env.template_from_str(src).map_err(|e| e.to_string()));
    let tpl = tpl?;
    render_capped(&tpl, ctx, limits).map_err(|e| match e {
        RenderError::Limit(m) | RenderError::Template(m) => m,
    })
}

/// Why a field did not render.
#[derive(Debug)]
enum RenderError {
    /// Over the fuel budget or the output cap (the message names which).
    Limit(String),
    /// Anything else MiniJinja reports (its message).
    Template(String),
}

/// A writer that refuses to hold more than `max` bytes: the render stops at
/// the first write past the cap instead of building the whole output.
struct Capped {
    buf: Vec<u8>,
    max: usize,
    over: bool,
}

impl std::io::Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() + b.len() > self.max {
            self.over = true;
            return Err(std::io::Error::other("template output limit"));
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn render_capped(
    tpl: &minijinja::Template<'_, '_>, ctx: impl serde::Serialize, limits: &Limits,
) -> Result<String, RenderError> {
    let (r, tripped) = limits.scoped(|| {
        let mut out = Capped {
            buf: Vec::new(),
            max: limits.max_output,
            over: false,
        };
        // Everything the render made is dropped in scope, on its stack: the
        // state, and an error, which holds the template's locals for its
        // debug information.
        let r = match tpl.render_captured_to(ctx, &mut out) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == ErrorKind::OutOfFuel => Err(None),
            Err(e) => Err(Some(e.to_string())),
        };
        (r, out)
    });
    let (r, out) = r;
    if r.is_err() {
        // a deep render ends in an error (fuel, memory): its stack pages go
        stack::release();
    }
    match r {
        Ok(()) => Ok(String::from_utf8(out.buf)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())),
        Err(_) if tripped => Err(RenderError::Limit(limits.memory_message())),
        Err(_) if out.over => Err(RenderError::Limit(format!(
            "the rendered text exceeds the output limit of {} bytes (template_max_output)",
            limits.max_output
        ))),
        Err(None) => Err(RenderError::Limit(format!(
            "rendering exceeded the budget of {} fuel units (template_fuel)",
            limits.fuel
        ))),
        Err(Some(e)) => Err(RenderError::Template(e)),
    }
}

/// The compiled templates of one flow, with the run's record of fields that
/// went over their limits.
pub struct RunRenderer {
    env: Arc<Environment<'static>>,
    limits: Limits,
    /// Per step and part: how many recipients of this run the field exceeded
    /// its limits for, and the first such message. After `STRIKES` the field is
    /// no longer rendered for this run (see `render`).
    strikes: Vec<[AtomicU32; TEMPLATE_PARTS]>,
    first_limit: Mutex<HashMap<(usize, usize), String>>,
    /// The project's content the flow was compiled with (`content`).
    content: Option<Arc<content::ContentSet>>,
}

/// Recipients of one run a field may exceed its limits for before the rest of
/// the run fails it without rendering. Fuel bounds the instructions of a render,
/// not the work of one instruction: `{{ "x" * data.n }}` with `n` = 100,000,000
/// costs about 100 ms of CPU per recipient (measured, release build) before the
/// output cap refuses it, 30 s for 300 recipients. A field that exceeded its
/// limits three times is taken to be broken for the run; the price is that a
/// field which only overflows for some recipients' data fails for the rest of
/// that run once three have overflowed.
pub const STRIKES: u32 = 3;

/// The parts of a template context that every recipient of a run shares
/// (`actor`, `data`, `flow`), converted to template values once per run: only
/// the recipient is converted per notification.
pub struct Shared {
    actor: minijinja::Value,
    data: minijinja::Value,
    flow: minijinja::Value,
    brand: minijinja::Value,
}

impl Shared {
    pub fn new(actor: &Value, data: &Value, flow: &Value) -> Self {
        Shared {
            actor: minijinja::Value::from_serialize(actor),
            data: minijinja::Value::from_serialize(data),
            flow: minijinja::Value::from_serialize(flow),
            brand: minijinja::Value::UNDEFINED,
        }
    }

    /// With the project's branding as `brand` (left undefined without one).
    pub fn with_brand(mut self, brand: Option<&crate::model::Branding>) -> Self {
        if let Some(b) = brand {
            self.brand = minijinja::Value::from_serialize(b);
        }
        self
    }

    /// The context for one recipient.
    pub fn context(&self, recipient: &impl serde::Serialize) -> minijinja::Value {
        minijinja::context! {
            recipient => minijinja::Value::from_serialize(recipient),
            actor => self.actor.clone(),
            data => self.data.clone(),
            flow => self.flow.clone(),
            brand => self.brand.clone(),
            preferences_url => crate::rules::preference_link::MARK,
            unsubscribe_url => crate::rules::unsubscribe_link::MARK,
        }
    }
}

const PARTS: [&str; TEMPLATE_PARTS] = [
    "subject",
    "body",
    "html",
    "url",
    "actions.0.label",
    "actions.0.url",
    "actions.1.label",
    "actions.1.url",
];

/// A flow's templates compiled under a fuel limit, with the sources they were
/// compiled from.
struct Compiled {
    sources: Sources,
    /// The content set's project and version (`None`: without content).
    content: Option<(uuid::Uuid, u64)>,
    env: Arc<Environment<'static>>,
}

/// Flows compiled, by `(flow id, fuel)`: the runs of a flow share one
/// compilation while its templates stay the same (a hit is checked against
/// the sources, so an edited flow compiles again). Compiling cost more than
/// rendering for the one recipient of a transactional run
/// (docs/PERFORMANCE.md).
static COMPILED: std::sync::LazyLock<dashmap::DashMap<(uuid::Uuid, u64), Compiled>> =
    std::sync::LazyLock::new(dashmap::DashMap::new);

/// Flows kept compiled at most; past it the cache starts over.
const COMPILED_KEPT: usize = 1024;

/// The flow's template sources by slot (`Flow::template_slots`: a step's
/// own, a route channel's).
type Sources = Vec<(usize, [Option<String>; TEMPLATE_PARTS])>;

fn sources(flow: &Flow) -> Sources {
    flow.template_slots()
        .into_iter()
        .map(|(i, t)| (i, t.parts().map(|p| p.cloned())))
        .collect()
}

fn same_sources(flow: &Flow, compiled: &Sources) -> bool {
    let slots = flow.template_slots();
    slots.len() == compiled.len()
        && slots.iter().zip(compiled).all(|((i, t), (j, c))| {
            i == j && t.parts().into_iter().zip(c).all(|(a, b)| a == b.as_ref())
        })
}

/// The flow's templates compiled under `limits` (see `COMPILED`).
fn compiled(
    flow: &Flow, limits: &Limits, set: Option<&Arc<content::ContentSet>>,
) -> Arc<Environment<'static>> {
    let key = (flow.id, limits.fuel);
    let version = set.map(|s| (s.project, s.version));
    if let Some(c) = COMPILED.get(&key) {
        if c.content == version && same_sources(flow, &c.sources) {
            return c.env.clone();
        }
    }
    let mut env = env(limits);
    if let Some(set) = set {
        content::install(&mut env, set);
    }
    // Compiling folds constant expressions (`"x" * 100000000`): bounded too.
    let _scope = minijinja::budget::enter(limits.max_memory(), limits.max_items());
    for (i, t) in flow.template_slots() {
        for (part, src) in PARTS.iter().zip(t.parts()) {
            if let Some(src) = src {
                // Compiled at save already; a failure here means the stored
                // flow predates a check, and rendering reports it per delivery.
                let _ = env.add_template_owned(format!("{i}.{part}"), src.clone());
            }
        }
    }
    let env = Arc::new(env);
    if COMPILED.len() >= COMPILED_KEPT {
        COMPILED.clear();
    }
    COMPILED.insert(
        key,
        Compiled {
            sources: sources(flow),
            content: version,
            env: env.clone(),
        },
    );
    env
}

impl RunRenderer {
    pub fn new(flow: &Flow, limits: Limits) -> Self {
        Self::with_content(flow, limits, None)
    }

    /// Renders step `i` for one recipient. `ctx` holds recipient, actor, data, flow
    /// (see `Shared::context`).
    pub fn render(
        &self, i: usize, t: &Template, ctx: &minijinja::Value,
    ) -> Result<Rendered, String> {
        self.render_with(i, t, ctx, &|| None)
    }

    /// `render`, with the `html` part taken from `html` when it gives one
    /// (a part the run no longer renders, `STRIKES`, is not asked for).
    fn render_with(
        &self, i: usize, t: &Template, ctx: &minijinja::Value, html: &dyn Fn() -> Option<String>,
    ) -> Result<Rendered, String> {
        let one = |p: usize, src: Option<&String>| -> Result<Option<String>, String> {
            let part = PARTS[p];
            if src.is_none() {
                return Ok(None);
            }
            let strikes = self.strikes.get(i).map(|s| &s[p]);
            if strikes.is_some_and(|s| s.load(Ordering::Relaxed) >= STRIKES) {
                let first = self.first_limit.lock().unwrap_or_else(|e| e.into_inner());
                let why = first.get(&(i, p)).map(String::as_str).unwrap_or("");
                return Err(format!(
                    "template {part}: not rendered: {why} for {STRIKES} earlier recipients of this run"
                ));
            }
            if let Some(done) = (p == 2).then(html).flatten() {
                return Ok(Some(done));
            }
            let tpl = self
                .env
                .get_template(&format!("{i}.{part}"))
                .map_err(|e| format!("template {part}: {e}"))?;
            match render_capped(&tpl, ctx, &self.limits) {
                Ok(s) => Ok(Some(s)),
                Err(RenderError::Limit(msg)) => {
                    if let Some(s) = strikes {
                        self.first_limit
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .entry((i, p))
                            .or_insert_with(|| msg.clone());
                        s.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(format!("template {part}: {msg}"))
                }
                Err(RenderError::Template(e)) => Err(format!("template {part}: {e}")),
            }
        };
        let parts = t.parts();
        let mut actions = Vec::with_capacity(t.actions.len());
        for a in 0..t.actions.len().min(MAX_ACTIONS) {
            actions.push(RenderedAction {
                label: one(4 + 2 * a, parts[4 + 2 * a])?.unwrap_or_default(),
                url: one(5 + 2 * a, parts[5 + 2 * a])?.unwrap_or_default(),
            });
        }
        let rendered = Rendered {
            subject: one(0, parts[0])?.unwrap_or_default(),
            body: one(1, parts[1])?.unwrap_or_default(),
            html: one(2, parts[2])?,
            url: one(3, parts[3])?,
            actions,
        };
        fault::abort_if_marked(&rendered);
        Ok(rendered)
    }
}

/// A test build's fault: a render whose output holds `fault::MARKER` aborts
/// the process, as a template did before renders were bounded (the crash rule
/// of `actors::poison` is tested with it). Only in debug builds, and only
/// when `HERALD_FAULT_ABORT_ON_MARKER` is set: a release build never aborts.
mod fault {
    pub const MARKER: &str = "HERALD_FAULT_ABORT";

    pub fn abort_if_marked(r: &crate::model::Rendered) {
        if !cfg!(debug_assertions) {
            return;
        }
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if !*ON.get_or_init(|| std::env::var_os("HERALD_FAULT_ABORT_ON_MARKER").is_some()) {
            return;
        }
        if r.body.contains(MARKER) || r.subject.contains(MARKER) {
            eprintln!("injected fault: a render's output holds {MARKER}; aborting");
            std::process::abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{new_id, FlowStatus, Step};

    /// A flow of one channel step with this subject and body.
    pub(super) fn flow(subject: &str, body: &str) -> Flow {
        let (id, now) = new_id();
        Flow {
            id,
            handle: "f".into(),
            name: "F".into(),
            description: None,
            status: FlowStatus::Active,
            steps: vec![Step {
                kind: "channel".into(),
                channel_id: None,
                template: Some(Template {
                    subject: Some(subject.into()),
                    body: Some(body.into()),
                    html: None,
                    url: None,
                    actions: vec![],
                }),
                seconds: None,
                cond: None,
                limit: None,
                window: None,
                send_window: None,
                max_window: None,
                layout: None,
                fallback_channel_ids: vec![],
                success: None,
                channels: vec![],
            }],
            critical: false,
            commercial: false,
            categories: vec![],
            created_at: now,
            updated_at: now,
        }
    }

    #[test]
    fn renders_with_context_and_undefined_is_empty() {
        let flow = flow(
            "{{ flow.name }}",
            "Hi {{ recipient.first_name }}{{ data.missing.deeper }}!",
        );
        let r = RunRenderer::new(&flow, Limits::default());
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

    #[test]
    fn actions_render_like_the_other_parts_and_an_edit_recompiles_them() {
        let mut flow = flow("s", "b");
        let t = flow.steps[0].template.as_mut().unwrap();
        t.actions = vec![
            crate::model::ActionTemplate {
                label: "Hi {{ recipient.first_name }}".into(),
                url: "https://x/{{ data.id }}".into(),
            },
            crate::model::ActionTemplate {
                label: "No".into(),
                url: "https://x/no".into(),
            },
        ];
        let ctx = Shared::new(
            &serde_json::Value::Null,
            &serde_json::json!({"id": 7}),
            &serde_json::json!({"name": "F"}),
        )
        .context(&serde_json::json!({"first_name": "Ada"}));
        let render = |flow: &Flow| {
            RunRenderer::new(flow, Limits::default())
                .render(0, flow.steps[0].template.as_ref().unwrap(), &ctx)
                .unwrap()
        };
        let out = render(&flow);
        assert_eq!(
            out.actions,
            vec![
                RenderedAction {
                    label: "Hi Ada".into(),
                    url: "https://x/7".into()
                },
                RenderedAction {
                    label: "No".into(),
                    url: "https://x/no".into()
                },
            ]
        );
        // the same flow id with an edited action compiles again
        flow.steps[0].template.as_mut().unwrap().actions[1].label = "Nope {{ data.id }}".into();
        assert_eq!(render(&flow).actions[1].label, "Nope 7");
        // and a template without actions renders none
        flow.steps[0].template.as_mut().unwrap().actions.clear();
        assert!(render(&flow).actions.is_empty());
    }

    #[test]
    fn runs_share_a_flow_compiled_until_its_templates_change() {
        let ctx = Shared::new(
            &serde_json::Value::Null,
            &serde_json::json!({}),
            &serde_json::json!({}),
        )
        .context(&serde_json::json!({}));
        let body = |f: &Flow, l: Limits| {
            RunRenderer::new(f, l)
                .render(0, f.steps[0].template.as_ref().unwrap(), &ctx)
                .unwrap()
                .body
        };
        let mut f = flow("s", "one");
        let a = RunRenderer::new(&f, Limits::default());
        let b = RunRenderer::new(&f, Limits::default());
        assert!(Arc::ptr_eq(&a.env, &b.env), "compiled once");
        assert_eq!(body(&f, Limits::default()), "one");
        // The same flow edited: compiled again, the new text rendered.
        f.steps[0].template.as_mut().unwrap().body = Some("two".into());
        assert_eq!(body(&f, Limits::default()), "two");
        let c = RunRenderer::new(&f, Limits::default());
        assert!(!Arc::ptr_eq(&a.env, &c.env));
        // Another fuel limit is another compilation.
        let tight = Limits {
            fuel: 7,
            ..Limits::default()
        };
        assert!(!Arc::ptr_eq(&c.env, &RunRenderer::new(&f, tight).env));
        // Another flow with the same sources is compiled on its own.
        let g = flow("s", "two");
        assert!(!Arc::ptr_eq(
            &c.env,
            &RunRenderer::new(&g, Limits::default()).env
        ));
    }
}

#[cfg(test)]
mod bounds {
    use super::*;

    fn fuel_used(src: &str, ctx: minijinja::Value) -> u64 {
        let env = env(&Limits {
            fuel: u64::MAX / 4,
            max_output: usize::MAX,
        });
        let tpl = env.template_from_str(src).unwrap();
        let c = tpl.render_captured_to(ctx, std::io::sink()).unwrap();
        let used = c.state().fuel_levels().unwrap().0;
        used
    }

    /// Prints what the defaults cost (run by hand, in release:
    /// `cargo test -p herald-engine --release --lib bounds::measure -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn measure() {
        let ctx = minijinja::context! {
            recipient => minijinja::context!{first_name => "Ada", email => "a@b.c"},
            data => minijinja::context!{items => (0..50).collect::<Vec<i32>>(), tip => "x", n => 100_000_000, m => 100_000, k => 10},
        };
        for src in [
            "Welcome, {{ recipient.first_name }}! {{ data.tip }}",
            "{% for i in data.items %}<li>{{ i }} {{ recipient.first_name|upper }}</li>{% endfor %}",
        ] {
            println!("{src}: fuel {}", fuel_used(src, ctx.clone()));
        }
        let nested = "{% for i in range(100000) %}{% for j in range(10) %}{% endfor %}{% endfor %}";
        for fuel in [10_000u64, 100_000, 1_000_000] {
            let l = Limits {
                fuel,
                max_output: DEFAULT_MAX_OUTPUT,
            };
            let env = env(&l);
            let tpl = env.template_from_str(nested).unwrap();
            let t = std::time::Instant::now();
            let r = render_capped(&tpl, ctx.clone(), &l);
            println!("nested, fuel {fuel}: {:?} in {:?}", r.err(), t.elapsed());
        }
        let l = Limits::default();
        let env = env(&l);
        for src in [
            "{{ \"x\" * 100000000 }}",
            "{{ \"x\" * data.n }}",
            "{{ \"x\" * 1000000 }}",
            "{% for i in range(data.m) %}{% for j in range(data.k) %}{% endfor %}{% endfor %}",
        ] {
            let tpl = env.template_from_str(src).unwrap();
            let t = std::time::Instant::now();
            for _ in 0..10 {
                let _ = render_capped(&tpl, ctx.clone(), &l);
            }
            println!(
                "{src}: {:?} per render: {:?}",
                render_capped(&tpl, ctx.clone(), &l).err(),
                t.elapsed() / 10
            );
        }
    }
}

#[cfg(test)]
mod limits {
    use super::*;

    fn flow(body: &str) -> Flow {
        super::tests::flow("s", body)
    }

    fn ctx(data: serde_json::Value) -> minijinja::Value {
        Shared::new(&Value::Null, &data, &serde_json::json!({"name": "F"}))
            .context(&serde_json::json!({"first_name": "Ada"}))
    }

    #[test]
    fn loops_run_out_of_fuel_quickly_and_the_message_names_the_limit() {
        let f =
            flow("{% for i in range(data.n) %}{% for j in range(10) %}{% endfor %}{% endfor %}");
        let r = RunRenderer::new(&f, Limits::default());
        let t = f.steps[0].template.as_ref().unwrap();
        let start = std::time::Instant::now();
        let err = r
            .render(0, t, &ctx(serde_json::json!({"n": 100000})))
            .unwrap_err();
        assert!(
            start.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
        assert!(err.starts_with("template body: "), "{err}");
        assert!(err.contains("100000 fuel units (template_fuel)"), "{err}");
        // the same template with a small loop renders
        let ok = r.render(0, t, &ctx(serde_json::json!({"n": 20}))).unwrap();
        assert_eq!(ok.body, "");
    }

    #[test]
    fn output_over_the_cap_fails_and_under_it_renders() {
        let f = flow("{{ \"ab\" * data.n }}");
        let limits = Limits {
            fuel: DEFAULT_FUEL,
            max_output: 1000,
        };
        let r = RunRenderer::new(&f, limits);
        let t = f.steps[0].template.as_ref().unwrap();
        let ok = r.render(0, t, &ctx(serde_json::json!({"n": 500}))).unwrap();
        assert_eq!(ok.body.len(), 1000, "exactly the cap is allowed");
        let err = r
            .render(0, t, &ctx(serde_json::json!({"n": 501})))
            .unwrap_err();
        assert!(
            err.contains("output limit of 1000 bytes (template_max_output)"),
            "{err}"
        );
    }

    #[test]
    fn after_three_recipients_over_the_limits_a_field_is_no_longer_rendered() {
        let f = flow("{{ \"x\" * data.n }}{{ recipient.first_name }}");
        let limits = Limits {
            fuel: DEFAULT_FUEL,
            max_output: 100,
        };
        let r = RunRenderer::new(&f, limits);
        let t = f.steps[0].template.as_ref().unwrap();
        let big = ctx(serde_json::json!({"n": 1000}));
        for _ in 0..STRIKES {
            let e = r.render(0, t, &big).unwrap_err();
            assert!(!e.contains("not rendered"), "{e}");
        }
        // now even data that would fit is refused, without rendering
        let e = r
            .render(0, t, &ctx(serde_json::json!({"n": 1})))
            .unwrap_err();
        assert!(e.contains("not rendered"), "{e}");
        assert!(e.contains("output limit of 100 bytes"), "{e}");
        // a new run starts afresh
        let r = RunRenderer::new(&f, limits);
        assert_eq!(
            r.render(0, t, &ctx(serde_json::json!({"n": 1})))
                .unwrap()
                .body,
            "xAda"
        );
    }

    #[test]
    fn probe_refuses_only_templates_over_the_limits_without_data() {
        let l = Limits::default();
        let nested = "{% for i in range(100000) %}{% for j in range(10) %}{% endfor %}{% endfor %}";
        assert!(probe(nested, &l).unwrap_err().contains("template_fuel"));
        assert!(probe("{{ \"x\" * 300000 }}", &l)
            .unwrap_err()
            .contains("template_max_output"));
        // undefined variables, even used in ways that fail, are the data's business
        assert!(probe(
            "{{ data.n + 1 }}{% for i in range(data.n) %}{% endfor %}",
            &l
        )
        .is_ok());
        assert!(probe("Hi {{ recipient.first_name }}", &l).is_ok());
        assert!(probe("{{ broken ", &l).is_ok(), "check reports that");
    }
}

/// The templates that once aborted the process (a node's crash loop): now
/// a limit error at save (no data) or at run time, with memory bounded.
#[cfg(test)]
#[path = "memory_tests.rs"]
mod memory;
