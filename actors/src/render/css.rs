//! An email's CSS inlined into its elements (css-inline): what a layout's
//! `<style>` block becomes in every email it wraps.
//!
//! Inlining parses the email, matches every rule against every element and
//! writes the email again, per recipient, since each recipient's email has
//! a step's HTML of their own. When the layout and its CSS allow it
//! (`css_split`), the layout around the step's HTML (the *frame*, the same
//! for most recipients of a run, or one per locale) is inlined once per
//! thread and kept (the last few met), and
//! only the step's HTML is inlined per recipient, with the frame's CSS:
//! the same bytes for a fraction of the work. Where the step's template
//! source allows it, `css_source` inlines that source once instead, and a
//! recipient's email takes no inlining at all (`frame`, `fragment`).

use super::css_split::{fragment_ok, frame_css, MARKER};
use super::{stack, Limits};
use std::cell::RefCell;
use std::rc::Rc;

/// `html` (a layout's output, with `step_html` in it where the layout put
/// `content`) with the rules of its `<style>` blocks inlined into the
/// elements they match (`@media` rules stay in a `<style>` block); linked
/// stylesheets are never fetched. On the render stack (the HTML is a
/// tenant's, nested as deep as it likes), bounded by the output cap.
pub(super) fn inline(
    html: &str, step_html: Option<&str>, limits: &Limits,
) -> Result<String, String> {
    // Nothing to inline: the HTML as it is (no parse, no re-serialising).
    if !has_style(html) {
        return Ok(html.to_string());
    }
    // Inlining matches every rule against every element: bounded before
    // it starts, as fuel bounds a template (the sizes alone allow seconds).
    let (rules, elements) = css_work(html);
    if rules.saturating_mul(elements) > MAX_CSS_WORK {
        return Err(format!(
            "layout css: {rules} rules over {elements} elements is more than inlining does \
             ({MAX_CSS_WORK} rule × element pairs; template_fuel)"
        ));
    }
    // The recipients of a run often get the same email (a newsletter, a
    // digest with no name in it): the last one inlined on this thread is
    // kept, and an identical input costs a comparison.
    if let Some(hit) = LAST_INLINED.with(|l| {
        l.borrow()
            .as_ref()
            .filter(|(input, _)| input == html)
            .map(|(_, out)| out.clone())
    }) {
        return Ok(hit);
    }
    let out = match step_html.and_then(|step| split(html, step)) {
        Some(out) => out,
        None => whole(html)?,
    };
    if out.len() > limits.max_output {
        return Err(format!(
            "layout: the email with its CSS inlined exceeds the output limit of {} bytes (template_max_output)",
            limits.max_output
        ));
    }
    LAST_INLINED.with(|l| *l.borrow_mut() = Some((html.to_string(), out.clone())));
    Ok(out)
}

/// `html` inlined as a whole.
fn whole(html: &str) -> Result<String, String> {
    stack::run(|| options().build().inline(html)).map_err(|e| format!("layout css: {e}"))
}

/// `html` inlined as its frame (kept) around `step` inlined alone, when
/// `css_split` says that is exact; `None` when it is not, or when either
/// part fails (the whole is then inlined, and reports its own error).
fn split(html: &str, step: &str) -> Option<String> {
    // The step's HTML once in the email (a second copy, or a layout that
    // changed it, leaves nothing to split at).
    let at = html.find(step)?;
    if step.is_empty() || html.rfind(step) != Some(at) || !fragment_ok(step) {
        return None;
    }
    // A frame kept costs its size three times over, per thread: only an
    // email's usual size is kept (a bigger one is inlined whole).
    if html.len() - step.len() > MAX_FRAME_BYTES {
        return None;
    }
    let frame = [&html[..at], MARKER, &html[at + step.len()..]].concat();
    let parts = match known(&frame) {
        Some(FrameState::Split(parts)) => parts,
        Some(FrameState::Whole) => return None,
        // Met twice: worth inlining apart (a frame of one recipient's, with
        // their name in it, costs only this check).
        Some(FrameState::Seen) => made(frame)?,
        None => {
            remember(frame, FrameState::Seen);
            return None;
        }
    };
    let inner = fragment(step, &parts.css)?;
    Some([parts.before.as_str(), &inner, &parts.after].concat())
}

/// The frame `frame` (a layout's output with `MARKER` where the step's HTML
/// goes) inlined, when `css_split` allows it; kept as `split` keeps it, but
/// made when first met: the caller (`css_source`) inlines nothing else.
pub(super) fn frame(frame: &str) -> Option<Rc<Frame>> {
    if frame.len().saturating_sub(MARKER.len()) > MAX_FRAME_BYTES || !has_style(frame) {
        return None;
    }
    match known(frame) {
        Some(FrameState::Split(parts)) => Some(parts),
        Some(FrameState::Whole) => None,
        Some(FrameState::Seen) | None => made(frame.to_string()),
    }
}

/// `step` (HTML without a frame) inlined alone with `css`, on the render
/// stack; `None` when css-inline fails.
pub(super) fn fragment(step: &str, css: &str) -> Option<String> {
    stack::run(|| options().build().inline_fragment(step, css)).ok()
}

/// Whether an email of `rules` CSS rules over `elements` elements may be
/// inlined (`inline` refuses it otherwise).
pub(super) fn within_work(rules: usize, elements: usize) -> bool {
    rules.saturating_mul(elements) <= MAX_CSS_WORK
}

/// What this thread knows of `frame` (moved first among the kept frames).
fn known(frame: &str) -> Option<FrameState> {
    FRAMES.with(|f| {
        let mut f = f.borrow_mut();
        let at = f.iter().position(|(key, _)| *key == frame)?;
        // most recently met first
        let hit = f.remove(at);
        let state = hit.1.clone();
        f.insert(0, hit);
        Some(state)
    })
}

/// Keeps what `frame` is (replacing what was known of it).
fn remember(frame: String, state: FrameState) {
    FRAMES.with(|f| {
        let mut f = f.borrow_mut();
        f.retain(|(key, _)| *key != frame);
        f.insert(0, (frame, state));
        f.truncate(KEPT_FRAMES);
    })
}

/// `frame` inlined around its marker when `css_split` allows it, and kept
/// either way.
fn made(frame: String) -> Option<Rc<Frame>> {
    let parts = frame_css(&frame).and_then(|css| {
        let out = whole(&frame).ok()?;
        let (before, after) = out.split_once(MARKER)?;
        let (rules, elements) = css_work(&frame);
        (!after.contains(MARKER)).then(|| {
            Rc::new(Frame {
                before: before.to_string(),
                after: after.to_string(),
                css,
                rules,
                elements,
            })
        })
    });
    remember(
        frame,
        parts.clone().map_or(FrameState::Whole, FrameState::Split),
    );
    parts
}

/// The inliner's options: the same for a whole email and a step's HTML.
fn options() -> css_inline::InlineOptions<'static> {
    css_inline::CSSInliner::options()
        .load_remote_stylesheets(false)
        .keep_link_tags(false)
        .keep_at_rules(true)
}

/// Frames kept per thread: one per locale or variant of a layout that
/// recipients of one run alternate between (a footer in their language).
const KEPT_FRAMES: usize = 8;

/// The largest frame kept (its HTML without the step's): at most
/// `KEPT_FRAMES` × 3 × this per thread.
const MAX_FRAME_BYTES: usize = 64 * 1024;

/// What a frame met is for `split`.
#[derive(Clone)]
enum FrameState {
    /// Met once.
    Seen,
    /// Shared: a recipient's email borrows it (no copy per recipient).
    Split(Rc<Frame>),
    /// Not split (`css_split` says no, or inlining the frame failed).
    Whole,
}

/// A frame inlined: the email before and after the step's HTML, the CSS
/// its `<style>` blocks had, and the rules and elements `css_work` counts in
/// it (the marker has no element).
pub(super) struct Frame {
    pub before: String,
    pub after: String,
    pub css: String,
    pub rules: usize,
    pub elements: usize,
}

thread_local! {
    /// The last HTML this thread inlined, and the result (`inline`).
    static LAST_INLINED: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
    /// The frames this thread met last (with `MARKER`), most recent first,
    /// and what each inlined to.
    static FRAMES: RefCell<Vec<(String, FrameState)>> = const { RefCell::new(Vec::new()) };
}

/// Rule × element pairs one email's CSS inlining may match: a few hundred
/// rules over a few thousand elements, far above an email's (a few dozen
/// rules over a few hundred elements), small enough to take milliseconds.
const MAX_CSS_WORK: usize = 2_000_000;

/// About how many CSS rules (`{` inside `<style>` blocks) and elements (tags,
/// `<` outside them: an element counts twice) `html` has.
fn css_work(html: &str) -> (usize, usize) {
    let lower = html.to_ascii_lowercase();
    let (mut rules, mut elements) = (0, 0);
    let mut rest = lower.as_str();
    while let Some(at) = rest.find("<style") {
        elements += rest[..at].matches('<').count() + 1;
        let inner = &rest[at..];
        let end = inner.find("</style").unwrap_or(inner.len());
        rules += inner[..end].matches('{').count();
        rest = &inner[end..];
        if let Some(close) = rest.find('>') {
            rest = &rest[close + 1..];
        } else {
            rest = "";
        }
    }
    elements += rest.matches('<').count();
    (rules, elements)
}

/// Whether `html` has a `<style` tag (any case): the only CSS inlined.
fn has_style(html: &str) -> bool {
    html.as_bytes()
        .windows(6)
        .any(|w| w.eq_ignore_ascii_case(b"<style"))
}

#[cfg(test)]
#[path = "css_tests.rs"]
mod tests;
