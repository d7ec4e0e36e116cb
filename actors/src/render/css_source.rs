//! A step's `html` template with its layout's CSS inlined into the
//! template's source, once, so that a recipient's email costs MiniJinja
//! renders only and no CSS inlining.
//!
//! `css_split` already inlines the layout around the step's HTML (the
//! frame) once; what was left per recipient is css-inline on the step's
//! rendered HTML. When the layout's CSS is context free (`css_split`), an
//! element's inlined `style` depends only on that element's own tag. If the
//! template tags of the step's source sit only where text goes, rendering
//! then changes only the text between elements and how often each part
//! repeats. Inlining the source once and rendering that gives the bytes
//! that rendering first and inlining afterwards would give. This module
//! decides that conservatively and from the source alone. Anything it is
//! not sure of falls back to rendering, then inlining per recipient:
//!
//! - **The tags** (`split_source`): `{{ … }}`, `{# … #}` and the statements
//!   `if`/`elif`/`else`/`endif`, `for`/`endfor` (not `recursive`),
//!   `with`/`endwith` and `set x = …`, without whitespace control (`-`,
//!   `+`: a trim would reach text the parser rewrites, `&#32;`). No
//!   `include` (a partial may write markup), macro, `call`, `filter` or
//!   `set` block: each of these makes the source's text a value that a filter
//!   could measure or rewrite before it is written. There is no `{` or `}`
//!   outside the tags and no `{`, `}` or odd quote inside them. That makes
//!   this scanner find exactly the tags MiniJinja finds.
//! - **Where they are** (`inlined_source`): each tag is replaced by a
//!   unique alphanumeric placeholder (in an HTML comment for a tag that
//!   writes nothing: a comment stays where it is in a table, where text is
//!   moved out), and the result must pass `css_split::fragment_ok`'s checks
//!   (strict nesting, ordinary elements). A value's placeholder must sit in
//!   text, not directly in a table, table section or row; a statement's
//!   not directly in a `table` (a row there opens an implied `tbody` the
//!   statement would end up in); neither in a `pre` (its first newline is
//!   dropped). No character reference may be left open before either
//!   (`&no` + `t;`), and no text may hold a lone `<`. The tags of one block
//!   (`if` … `endif`) must sit among the same open elements. A block
//!   repeated or left out then leaves every element where the source has
//!   it.
//! - **The inlined source**: each placeholder is found once and in order;
//!   each piece between two placeholders has the elements its source has
//!   (an implied `tbody` aside, which holds no placeholder) and is empty
//!   exactly when its source is (MiniJinja's fuel counts each piece once). No brace was added,
//!   and the last piece still ends in a newline exactly when the source
//!   does (MiniJinja drops one trailing newline). A piece may get shorter
//!   (`&copy;` is written `©`): the most any piece shrank (`Inlined::
//!   longest`) bounds how long the per-recipient path's HTML can be, and a
//!   recipient whose bound passes an output cap is rendered as before, so
//!   that path's cap errors stay its own.
//! - **What is written** (`inert`): the values a render writes are checked
//!   as they are written. A value with `<`, `>`, `&`, a non-breaking space,
//!   `\r`, NUL or the frame's marker character would be markup or would be
//!   written again by the parser, so it fails the render, and that
//!   recipient's email is rendered and inlined as before. Autoescape is off
//!   for every part (`render::env`): a value is written as it is.
//! - **The layout** (`layout_ok`): the frame is rendered with the marker as
//!   `content`. That matches the email only if `content` is written once,
//!   as it is. So the layout's source has `{{ content }}` once, in no
//!   capturing statement, no other tag naming `content` or `debug`, and
//!   includes and imports of partials only. No partial names `content` or
//!   `debug`.
//!
//! Plans are kept per project content version, fuel, layout, frame CSS and
//! source (`PLANS`, bounded), so a run of any size inlines its step's
//! source once.

use super::content::ContentSet;
use super::css_split::{fragment_walk, open_reference, Seen};
use super::{css, env, render_capped, Limits};
use minijinja::{Environment, Error, ErrorKind, Output, State, Value};
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, LazyLock, Mutex};

/// The step's HTML source inlined and compiled for one layout's CSS: `None`
/// when the checks said no (remembered, so a run does not try again).
struct Plan {
    project: uuid::Uuid,
    version: u64,
    fuel: u64,
    layout: String,
    css: String,
    src: String,
    env: Option<Arc<Inlined>>,
}

/// A plan's compiled template, and how much shorter than its output the
/// per-recipient path's HTML can be.
pub(super) struct Inlined {
    env: Environment<'static>,
    /// The largest ratio of a piece of the source's text to the same piece
    /// inlined (at least 1).
    stretch: f64,
}

impl Inlined {
    /// The step's HTML rendered from the inlined source for one recipient;
    /// `None` when the render fails or writes a value that is not inert
    /// (the caller renders and inlines as before, which reports any error).
    pub(super) fn render(&self, ctx: &Value, limits: &Limits) -> Option<String> {
        let tpl = self.env.get_template(NAME).ok()?;
        render_capped(&tpl, ctx, limits).ok()
    }

    /// The longest the step's HTML rendered from its source (not inlined)
    /// can be when the inlined render wrote `len` bytes.
    pub(super) fn longest(&self, len: usize) -> usize {
        (len as f64 * self.stretch).ceil() as usize
    }
}

/// Plans by a hash of what they were made of (each checked on a hit).
static PLANS: LazyLock<Mutex<HashMap<u64, Arc<Plan>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Plans kept at most; past it the cache starts over.
const PLANS_KEPT: usize = 256;

static HASHER: LazyLock<std::collections::hash_map::RandomState> =
    LazyLock::new(std::collections::hash_map::RandomState::new);

/// The name of the inlined template in its environment.
const NAME: &str = "html";

/// Placeholders start with this (a source containing it has no plan).
const PLACEHOLDER: &str = "hErAlDtAg";

/// Tags one source may have for a plan (placeholders are numbered in six
/// digits).
const MAX_TAGS: usize = 10_000;

/// An environment whose template `NAME` renders the step's HTML (source
/// `src`) with `css` inlined, for layout `layout` of `set`, when this
/// module's checks allow it.
pub(super) fn plan(
    set: &Arc<ContentSet>, limits: &Limits, layout: &str, css: &str, src: &str,
) -> Option<Arc<Inlined>> {
    let key = HASHER.hash_one((set.project, set.version, limits.fuel, layout, css, src));
    let same = |p: &Plan| {
        p.project == set.project
            && p.version == set.version
            && p.fuel == limits.fuel
            && p.layout == layout
            && p.css == css
            && p.src == src
    };
    if let Some(p) = plans().get(&key).filter(|p| same(p)) {
        return p.env.clone();
    }
    let env = build(set, limits, layout, css, src).map(Arc::new);
    let mut plans = plans();
    if plans.len() >= PLANS_KEPT {
        plans.clear();
    }
    plans.insert(
        key,
        Arc::new(Plan {
            project: set.project,
            version: set.version,
            fuel: limits.fuel,
            layout: layout.to_string(),
            css: css.to_string(),
            src: src.to_string(),
            env: env.clone(),
        }),
    );
    env
}

fn plans() -> std::sync::MutexGuard<'static, HashMap<u64, Arc<Plan>>> {
    PLANS.lock().unwrap_or_else(|e| e.into_inner())
}

/// What `eligible` found, by a hash of what it looked at.
struct Looked {
    project: uuid::Uuid,
    version: u64,
    layout: String,
    src: String,
    ok: bool,
}

static ELIGIBLE: LazyLock<Mutex<HashMap<u64, Looked>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Whether the step's HTML source `src` in layout `layout` of `set` may have
/// a plan: the layout or a partial has a `<style>` block (without one
/// nothing is inlined), and the checks that do not depend on the CSS pass.
/// Asked before the frame is rendered, so that a recipient of a step that
/// can have no plan pays nothing for the attempt; kept like `PLANS`.
pub(super) fn eligible(set: &ContentSet, layout: &str, src: &str) -> bool {
    let key = HASHER.hash_one((set.project, set.version, layout, src));
    let mut looked = ELIGIBLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(l) = looked.get(&key) {
        if l.project == set.project
            && l.version == set.version
            && l.layout == layout
            && l.src == src
        {
            return l.ok;
        }
    }
    let styled = |html: &str| html.to_ascii_lowercase().contains("<style");
    let ok = set
        .source(&format!("layout/{layout}/html"))
        .is_some_and(|html| styled(&html) || set.partial_sources().any(styled))
        && layout_ok(set, layout)
        && marked(src).is_some();
    if looked.len() >= PLANS_KEPT {
        looked.clear();
    }
    looked.insert(
        key,
        Looked {
            project: set.project,
            version: set.version,
            layout: layout.to_string(),
            src: src.to_string(),
            ok,
        },
    );
    ok
}

/// Writes `value` as the default formatter does (autoescape is off), if it
/// is inert text (module docs); an error otherwise.
fn inert(out: &mut Output, state: &State, value: &Value) -> Result<(), Error> {
    let shown;
    let text = match value.as_str() {
        Some(s) => s,
        None => {
            shown = value.to_string();
            &shown
        }
    };
    if text.contains(['<', '>', '&', '\u{a0}', '\r', '\0', '\u{E000}']) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "a value with markup in an inlined template",
        ));
    }
    minijinja::escape_formatter(out, state, value)
}

/// The compiled template of a plan, or `None` (module docs).
fn build(
    set: &Arc<ContentSet>, limits: &Limits, layout: &str, css: &str, src: &str,
) -> Option<Inlined> {
    if !layout_ok(set, layout) {
        return None;
    }
    let (source, stretch) = inlined_source(src, css)?;
    let mut env = env(limits);
    super::content::install(&mut env, set);
    env.set_formatter(inert);
    // Compiling folds constant expressions: bounded as `compiled` bounds it.
    let _scope = minijinja::budget::enter(limits.max_memory(), limits.max_items());
    env.add_template_owned(NAME, source).ok()?;
    Some(Inlined { env, stretch })
}

/// `src` with `css` inlined into its markup, its tags kept, when the module's
/// checks allow it; and the largest ratio of a piece of its text to the same
/// piece inlined.
pub(super) fn inlined_source(src: &str, css: &str) -> Option<(String, f64)> {
    let Marked {
        texts,
        tags,
        marks,
        marked,
    } = marked(src)?;
    let out = css::fragment(&marked, css)?;
    // The inlined texts between placeholders, in order, each placeholder once.
    let mut pieces = Vec::with_capacity(texts.len());
    let mut rest = out.as_str();
    for m in &marks {
        let at = rest.find(m.as_str())?;
        pieces.push(&rest[..at]);
        rest = &rest[at + m.len()..];
    }
    pieces.push(rest);
    if out.matches(PLACEHOLDER).count() != tags.len() {
        return None;
    }
    // The parser kept every piece's elements as the source has them: it
    // moved none across a placeholder and added none but the `tbody` of a
    // row written directly in a table (which holds no placeholder, so the
    // `tbody` holds whole rows, as it does around rows rendered).
    let same_shape = texts.iter().zip(&pieces).all(|(was, now)| {
        now.is_empty() == was.is_empty()
            && !now.contains(['{', '}'])
            && tags_in(was).eq(tags_in(now))
    });
    let stretch = texts
        .iter()
        .zip(&pieces)
        .filter(|(_, now)| !now.is_empty())
        .map(|(was, now)| was.len() as f64 / now.len() as f64)
        .fold(1.0, f64::max);
    let last_newline = texts.last()?.ends_with('\n') == pieces.last()?.ends_with('\n');
    if !same_shape || !last_newline {
        return None;
    }
    let mut source = String::with_capacity(out.len() + src.len());
    for (k, piece) in pieces.iter().enumerate() {
        source.push_str(piece);
        if let Some(t) = tags.get(k) {
            source.push_str(t.text);
        }
    }
    Some((source, stretch))
}

/// A source with its tags replaced by placeholders that pass the checks
/// made before inlining (`marked`).
struct Marked<'a> {
    texts: Vec<&'a str>,
    tags: Vec<Tag<'a>>,
    marks: Vec<String>,
    marked: String,
}

/// `src` with its tags replaced by placeholders, when the checks that do
/// not depend on the CSS allow it (module docs).
fn marked(src: &str) -> Option<Marked<'_>> {
    if src.contains(PLACEHOLDER) {
        return None;
    }
    let (texts, tags) = split_source(src)?;
    if tags.len() > MAX_TAGS {
        return None;
    }
    let marks: Vec<String> = tags
        .iter()
        .enumerate()
        .map(|(k, t)| mark(k, t.kind))
        .collect();
    let mut marked = String::with_capacity(src.len() + tags.len() * 24);
    for (k, text) in texts.iter().enumerate() {
        marked.push_str(text);
        if let Some(m) = marks.get(k) {
            marked.push_str(m);
        }
    }
    // The elements open around each placeholder (their ordinals).
    let mut around: Vec<Option<Vec<usize>>> = vec![None; tags.len()];
    let ok = fragment_walk(&marked, &mut |seen, stack, ordinals| {
        let text = match seen {
            Seen::Text(text) => text,
            Seen::Comment { body, before } => {
                // a statement's placeholder: anywhere but directly in a
                // table, where a row opens an implied `tbody` around it
                let k = body
                    .strip_prefix(PLACEHOLDER)
                    .filter(|n| n.len() == 7 && n.ends_with('z'))
                    .and_then(|n| n[..6].parse::<usize>().ok());
                let Some(k) = k.filter(|k| *k < tags.len() && tags[*k].kind != Kind::Write) else {
                    return false;
                };
                if around[k].is_some()
                    || stack.last().is_some_and(|n| n == "table")
                    || stack.iter().any(|n| n == "pre")
                    || open_reference(before)
                {
                    return false;
                }
                around[k] = Some(ordinals.to_vec());
                return true;
            }
        };
        if text.contains('<') {
            return false;
        }
        let mut rest = text;
        let mut seen = 0;
        while let Some(at) = rest.find(PLACEHOLDER) {
            let before = &text[..seen + at];
            let digits = &rest[at + PLACEHOLDER.len()..];
            let number = digits
                .get(..6)
                .filter(|_| digits.as_bytes().get(6) == Some(&b'z'));
            let Some(k) = number.and_then(|d| d.parse::<usize>().ok()) else {
                return false;
            };
            let in_table = matches!(
                stack.last().map(String::as_str),
                Some("table" | "tbody" | "thead" | "tfoot" | "tr")
            );
            if k >= around.len()
                || tags[k].kind != Kind::Write
                || around[k].is_some()
                || in_table
                || stack.iter().any(|n| n == "pre")
                || open_reference(before)
            {
                return false;
            }
            around[k] = Some(ordinals.to_vec());
            let step = at + PLACEHOLDER.len() + 7;
            seen += step;
            rest = &rest[step..];
        }
        true
    });
    if !ok || around.iter().any(Option::is_none) || !balanced(&tags, &around) {
        return None;
    }
    Some(Marked {
        texts,
        tags,
        marks,
        marked,
    })
}

/// The names of the tags in `html`, in order (`/` first for an end tag),
/// lower case, `tbody` aside.
fn tags_in(html: &str) -> impl Iterator<Item = String> + '_ {
    html.match_indices('<')
        .filter_map(|(at, _)| {
            let rest = &html[at + 1..];
            let (end, name) = match rest.strip_prefix('/') {
                Some(name) => (true, name),
                None => (false, rest),
            };
            let len = name.bytes().take_while(u8::is_ascii_alphanumeric).count();
            let first = name.bytes().next()?;
            first.is_ascii_alphabetic().then(|| {
                let name = name[..len].to_ascii_lowercase();
                if end {
                    format!("/{name}")
                } else {
                    name
                }
            })
        })
        .filter(|name| name.trim_start_matches('/') != "tbody")
}

/// The placeholder of the `k`th tag: the prefix, six digits and a letter,
/// so none is a part of another; in a comment for a tag that writes nothing
/// (a comment stays where it is in a table, where text would be moved).
fn mark(k: usize, kind: Kind) -> String {
    match kind {
        Kind::Write => format!("{PLACEHOLDER}{k:06}z"),
        _ => format!("<!--{PLACEHOLDER}{k:06}z-->"),
    }
}

/// What a template tag does to the text around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Writes a value (`{{ … }}`).
    Write,
    /// Writes nothing (a comment, `set x = …`).
    Quiet,
    /// `if`, `for`, `with`: opens a block.
    Open,
    /// `elif`, `else`: between the parts of a block.
    Between,
    /// `endif`, `endfor`, `endwith`.
    Close,
}

/// One template tag of a source.
struct Tag<'a> {
    text: &'a str,
    kind: Kind,
}

/// `src` as its texts (one more than its tags) and tags, when every tag is
/// one this module reads (module docs).
fn split_source(src: &str) -> Option<(Vec<&str>, Vec<Tag<'_>>)> {
    // NBSP: MiniJinja's whitespace trim and the parser's serialiser treat it
    // differently; CR and NUL are rewritten by the parser.
    if src.contains(['\r', '\0', '\u{a0}']) {
        return None;
    }
    let (mut texts, mut tags) = (Vec::new(), Vec::new());
    let mut rest = src;
    loop {
        let Some(open) = rest.find('{') else {
            if rest.contains('}') {
                return None;
            }
            texts.push(rest);
            return Some((texts, tags));
        };
        if rest[..open].contains('}') {
            return None;
        }
        let delim = *rest.as_bytes().get(open + 1)?;
        let inside = open + 2;
        let close = inside + rest[inside..].find('}')?;
        let (inner, end) = match delim {
            b'{' if rest[close..].starts_with("}}") => (&rest[inside..close], close + 2),
            b'%' | b'#' if close > inside && rest.as_bytes()[close - 1] == delim => {
                (&rest[inside..close - 1], close + 1)
            }
            _ => return None,
        };
        let quotes_even =
            inner.matches('"').count() % 2 == 0 && inner.matches('\'').count() % 2 == 0;
        if inner.contains('{')
            || !quotes_even
            || inner.starts_with(['-', '+'])
            || inner.ends_with(['-', '+'])
        {
            return None;
        }
        let kind = match delim {
            b'%' => statement(inner)?,
            b'#' => Kind::Quiet,
            _ => Kind::Write,
        };
        texts.push(&rest[..open]);
        tags.push(Tag {
            text: &rest[open..end],
            kind,
        });
        rest = &rest[end..];
    }
}

/// The kind of the statement `inner` (inside `{% %}`), if allowed.
fn statement(inner: &str) -> Option<Kind> {
    let mut words = inner.split_whitespace();
    match words.next()? {
        "if" | "with" => Some(Kind::Open),
        "for" if !words.any(|w| w == "recursive") => Some(Kind::Open),
        "elif" | "else" => Some(Kind::Between),
        "endif" | "endfor" | "endwith" => Some(Kind::Close),
        // `set x = …` (assigns); `set x` alone opens a capturing block
        "set" if inner.contains('=') => Some(Kind::Quiet),
        _ => None,
    }
}

/// Whether the tags of every block sit among the same open elements, and
/// blocks nest.
fn balanced(tags: &[Tag<'_>], around: &[Option<Vec<usize>>]) -> bool {
    let mut open: Vec<&Option<Vec<usize>>> = Vec::new();
    for (tag, at) in tags.iter().zip(around) {
        match tag.kind {
            Kind::Write | Kind::Quiet => {}
            Kind::Open => open.push(at),
            Kind::Between => {
                if open.last() != Some(&at) {
                    return false;
                }
            }
            Kind::Close => {
                if open.pop() != Some(at) {
                    return false;
                }
            }
        }
    }
    open.is_empty()
}

/// The template tags of `src`, each as its delimiter's second character and
/// its inside, when no text between them holds a closing delimiter (a tag
/// then ends where MiniJinja ends it, a string in it or not); `None`
/// otherwise.
fn tags_of(src: &str) -> Option<Vec<(u8, &str)>> {
    let mut out = Vec::new();
    let mut rest = src;
    loop {
        let open = rest
            .as_bytes()
            .windows(2)
            .position(|w| w[0] == b'{' && matches!(w[1], b'{' | b'%' | b'#'));
        let text = &rest[..open.unwrap_or(rest.len())];
        if text.contains("}}") || text.contains("%}") || text.contains("#}") {
            return None;
        }
        let Some(open) = open else {
            return Some(out);
        };
        let delim = rest.as_bytes()[open + 1];
        let close = match delim {
            b'{' => "}}",
            b'%' => "%}",
            _ => "#}",
        };
        let end = open + 2 + rest[open + 2..].find(close)?;
        out.push((delim, &rest[open + 2..end]));
        rest = &rest[end + 2..];
    }
}

/// Whether layout `h` of `set` writes its `content` once as it is, and its
/// partials never see it (module docs).
fn layout_ok(set: &ContentSet, h: &str) -> bool {
    let Some(html) = set.source(&format!("layout/{h}/html")) else {
        return false;
    };
    let Some(tags) = tags_of(&html) else {
        return false;
    };
    let mut written = 0;
    for (delim, inner) in tags {
        if !tag_ok(delim, inner) {
            return false;
        }
        if delim == b'%' && !layout_statement(inner) {
            return false;
        }
        if inner.contains("content") {
            if delim != b'{' || inner.trim() != "content" {
                return false;
            }
            written += 1;
        }
    }
    written == 1
        && set.partial_sources().all(|p| {
            tags_of(p).is_some_and(|tags| {
                tags.iter()
                    .all(|(d, inner)| tag_ok(*d, inner) && !inner.contains("content"))
            })
        })
}

/// A tag of a layout or partial: no `debug()` (it shows the whole context),
/// and includes and imports of partials only.
fn tag_ok(delim: u8, inner: &str) -> bool {
    if inner.contains("debug") {
        return false;
    }
    let inner = inner.trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
    let word = inner.split_whitespace().next().unwrap_or("");
    if delim != b'%' || !matches!(word, "include" | "import" | "from" | "extends") {
        return true;
    }
    let arg = inner[word.len()..].trim_start();
    arg.starts_with("\"partials/") || arg.starts_with("'partials/")
}

/// The statements a layout may have around its `content` (none captures
/// what it writes: no `filter`, macro, `call`, `set` block or recursive
/// loop).
fn layout_statement(inner: &str) -> bool {
    let inner = inner.trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
    let mut words = inner.split_whitespace();
    match words.next().unwrap_or("") {
        "if" | "elif" | "else" | "endif" | "with" | "endwith" | "endfor" | "include" | "import"
        | "from" => true,
        "for" => !words.any(|w| w == "recursive"),
        "set" => inner.contains('='),
        _ => false,
    }
}

#[cfg(test)]
#[path = "css_source_tests.rs"]
mod tests;
