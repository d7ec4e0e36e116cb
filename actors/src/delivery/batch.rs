//! Batch (digest) steps (`{"type": "batch", "window": "15m", "key": "…",
//! "max": 100}`): per flow, recipient and rendered key, the first run to
//! reach the step opens a batch and waits; the runs that reach it while it is
//! open join it as activities and end there for that recipient (their
//! notifications record `batched` and the opener's id); when the window
//! ends, or `max` activities are in, the opener's run goes on with
//! `batch.activities`, `batch.count` and `batch.actors` in its templates.
//!
//! - Staging decides open or join (`reach`) from the key's latest batch, as
//!   the throttle step does with its counter; the backend applies the
//!   decision in the notification's own atomic change, under the batch's
//!   lock, and refuses a run with explicit recipients (`Stale`, staged
//!   again) when the batch is no longer as decided (closed meanwhile, or
//!   another run opened one).
//! - The opener's deliveries after the step are staged due at the close,
//!   not rendered (`Delivery::batch`). When one comes due (`due`), the batch
//!   is read: still open and its close moved later (a sliding window) → the
//!   delivery waits again until then (`Outcome::Wait`); else it is rendered
//!   with the batch, and the backend closes the batch and stores the content
//!   in one change, provided no activity joined since the render
//!   (`BatchRepo::close_batch`), else it renders again.
//! - A join that reaches `max` closes the batch in its own change and moves
//!   the opener's waiting deliveries to now (`join`), dispatched once durable.
//! - Times are project times (`delivery::clock`), so the test clock drives
//!   windows.

use super::clock::Span;
use crate::error::Result;
use crate::model::{DeliveryError, DeliveryErrorCode, Rendered, Step, Timestamp, User};
use crate::render::{Limits, RunRenderer};
use crate::storage::{
    Batch, BatchActivity, BatchClose, BatchCloseReason, BatchKey, BatchWaiting, BatchWrite,
    Outcome, QueueItem, Storage,
};
use serde_json::{json, Value};
use uuid::Uuid;

/// The step's window and sliding bound in milliseconds.
pub fn spans(step: &Step) -> (i64, Option<i64>) {
    let ms = |w: &Option<String>| {
        w.as_deref()
            .and_then(|w| Span::parse(w).ok())
            .map(|s| s.millis())
    };
    (ms(&step.window).unwrap_or(0), ms(&step.max_window))
}

/// Applies a join to `b`: the activity is added, a sliding window's close
/// moves to the activity plus the window (bounded by the opening plus
/// `max_window`), and reaching `max` closes the batch at the activity. When
/// it closed here, the opener's waiting deliveries as queued anew (due at
/// the close plus their offsets).
pub fn join(project: &Uuid, b: &mut Batch, a: BatchActivity) -> Option<Vec<QueueItem>> {
    let at = a.at_ms;
    b.activities.push(a);
    if let Some(maxw) = b.max_window_ms {
        let close = at
            .saturating_add(b.window_ms)
            .min(b.opened_at_ms.saturating_add(maxw));
        b.closes_at_ms = b.closes_at_ms.max(close);
    }
    if b.max.is_some_and(|m| b.activities.len() >= m as usize) {
        b.closes_at_ms = at;
        b.closed = Some((at, BatchCloseReason::Max));
        return Some(requeued(project, b));
    }
    None
}

/// The opener's waiting deliveries as due after the batch's close.
pub fn requeued(project: &Uuid, b: &Batch) -> Vec<QueueItem> {
    b.waiting
        .iter()
        .map(|w| QueueItem {
            project: *project,
            delivery_id: w.delivery_id,
            channel_type: w.channel_type,
            due_ms: b.closes_at_ms.saturating_add(w.offset_ms),
        })
        .collect()
}

/// How staging decided a run reaching a batch step.
pub(crate) enum Reached {
    /// It opens `Batch` (its waiting deliveries are filled in by staging);
    /// its later steps wait until the close.
    Opens(Batch),
    /// It joins the open batch of notification `into`, which then holds
    /// `count` activities.
    Joins {
        write: BatchWrite,
        into: Uuid,
        count: usize,
    },
}

/// Decides batch step `step` (index `i`) for notification `nid` of `user`,
/// reached at `at_ms` (project time) with the rendered `key`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reach(
    s: &dyn Storage, project: &Uuid, key: BatchKey, step: &Step, nid: Uuid, at_ms: i64,
    activity: BatchActivity,
) -> Result<Reached> {
    if let Some(b) = s.latest_batch(project, &key)? {
        if b.open_at(at_ms) {
            let count = b.activities.len() + 1;
            return Ok(Reached::Joins {
                write: BatchWrite::Join {
                    key,
                    batch: b.id,
                    activity,
                },
                into: b.id,
                count,
            });
        }
    }
    let (window_ms, max_window_ms) = spans(step);
    let mut b = Batch {
        id: nid,
        key,
        opened_at_ms: at_ms,
        closes_at_ms: at_ms.saturating_add(window_ms),
        window_ms,
        max_window_ms,
        max: step.limit,
        activities: vec![activity],
        waiting: vec![],
        closed: None,
    };
    if b.max.is_some_and(|m| m <= 1) {
        b.closes_at_ms = at_ms;
        b.closed = Some((at_ms, BatchCloseReason::Max));
    }
    Ok(Reached::Opens(b))
}

/// The waiting entry of an opener's delivery due at `due_ms`.
pub(crate) fn waiting(b: &Batch, d: &crate::model::Delivery, due_ms: i64) -> BatchWaiting {
    BatchWaiting {
        delivery_id: d.id,
        channel_type: d.channel_type,
        offset_ms: due_ms - b.closes_at_ms,
    }
}

/// The `batch` of the template context: every activity's `data` and
/// `actor` in order, their count and the distinct actors (by id) in the
/// order they first acted.
pub fn context(b: &Batch) -> Value {
    context_of(&b.activities)
}

/// `context` of a batch holding `activities`.
pub fn context_of(activities: &[BatchActivity]) -> Value {
    let mut actors: Vec<&Value> = vec![];
    for a in activities {
        if a.actor.is_null() {
            continue;
        }
        let same = |x: &&Value| x.get("id") == a.actor.get("id");
        if !actors.iter().any(same) {
            actors.push(&a.actor);
        }
    }
    json!({
        "activities": activities.iter()
            .map(|a| json!({"data": a.data, "actor": a.actor}))
            .collect::<Vec<_>>(),
        "count": activities.len(),
        "actors": actors,
    })
}

/// What an opener's delivery that waits for its batch (`Delivery::batch`)
/// does now that it is due at `now` (project time): `None` when it is
/// rendered and stored, ready for its attempt; `Some(Outcome::Wait)` when the
/// batch closes later; `Some(Outcome::Failed)` when it does not render (or
/// its run or batch is gone).
pub(crate) fn due(
    s: &dyn Storage, limits: Limits, q: &QueueItem, now: Timestamp,
) -> Result<Option<Outcome>> {
    let p = &q.project;
    let fail = |m: String| {
        Ok(Some(Outcome::Failed(DeliveryError::new(
            DeliveryErrorCode::TemplateError,
            m,
        ))))
    };
    // A join may land between the read and the close: read and render again.
    for _ in 0..8 {
        let Some(d) = s.delivery(p, &q.delivery_id)? else {
            return Ok(None);
        };
        if !d.batch || d.status.is_final() {
            return Ok(None);
        }
        let Some(b) = s.batch(p, &d.notification_id)? else {
            return fail("the delivery's batch is gone".into());
        };
        if b.closed.is_none() && now.millis() < b.closes_at_ms {
            let offset = b
                .waiting
                .iter()
                .find(|w| w.delivery_id == d.id)
                .map_or(0, |w| w.offset_ms);
            let at = b.closes_at_ms.saturating_add(offset);
            return Ok(Some(Outcome::Wait {
                at: Timestamp::from_millis(at.max(now.millis())),
            }));
        }
        // A digest over the per-delivery bound fails alone (`quota`).
        let rendered = render(s, limits, p, &d, &b)?
            .and_then(|r| crate::quota::check_rendered(&r).map(|()| r));
        let failed = rendered.as_ref().err().cloned();
        let cost = rendered.as_ref().map_or(0, crate::quota::content_bytes);
        let c = BatchClose {
            batch: b.id,
            count: b.activities.len(),
            delivery_id: d.id,
            rendered,
            at_ms: now.millis(),
            reason: BatchCloseReason::Window,
        };
        if s.close_batch(p, &c)? {
            // Its fixed cost was counted with its run; its content now.
            crate::quota::count(s, p, cost);
            return match failed {
                Some(m) => fail(m),
                None => Ok(window_wait(s, p, &d, now)?.map(|at| Outcome::Wait { at })),
            };
        }
    }
    Err(crate::error::Error::unavailable(
        "the batch kept changing while it was being closed",
    ))
}

/// When the step of `d` has a send window that is shut at `now`, the
/// instant it opens; then, when the recipient's quiet hours hold it there,
/// the instant they end (`rules::critical::quiet_hours_end`). Staging
/// placed the step at the batch's planned close; a batch that closed
/// earlier (`max`) or later (a sliding window) reaches it at another time,
/// so both are checked again here, once the digest is rendered, and the
/// digest waits for them rather than going out at night.
fn window_wait(
    s: &dyn Storage, p: &Uuid, d: &crate::model::Delivery, now: Timestamp,
) -> Result<Option<Timestamp>> {
    let Some(run) = s.flow_run(p, &d.flow_run_id)? else {
        return Ok(None);
    };
    let i = crate::trace::step_of(&d.id) as usize;
    let user = s.user(p, &d.recipient_id)?;
    let tz = user
        .as_ref()
        .and_then(|u| u.timezone.as_deref())
        .or(run.timezone.as_deref());
    let mut at = now.millis();
    if let Some(w) = run.flow.steps.get(i).and_then(|st| st.send_window.as_ref()) {
        at = w.next_open(at, super::window::timezone(tz));
    }
    // The feed is never quiet: an in-app digest reads no preferences.
    if d.channel_type != crate::model::ChannelType::InApp {
        let prefs = s.preferences(p, &d.recipient_id)?;
        let defaults = s
            .find_project(crate::storage::ProjectRef::Id(p))?
            .map(|p| p.preference_defaults)
            .unwrap_or_default();
        let layers = crate::rules::preferences::Layers::new(&prefs, &defaults);
        if let Some(end) = crate::rules::critical::quiet_hours_end(
            layers.quiet_hours(),
            &run.flow,
            d.channel_type,
            tz,
            at,
        ) {
            at = end;
        }
    }
    Ok((at > now.millis()).then(|| Timestamp::from_millis(at)))
}

/// Renders the opener's delivery `d` with its run's context and `batch`.
fn render(
    s: &dyn Storage, limits: Limits, p: &Uuid, d: &crate::model::Delivery, b: &Batch,
) -> Result<std::result::Result<Rendered, String>> {
    let Some(run) = s.flow_run(p, &d.flow_run_id)? else {
        return Ok(Err("the delivery's run is gone".into()));
    };
    let i = crate::trace::step_of(&d.id) as usize;
    let Some(step) = run.flow.steps.get(i).filter(|st| st.template.is_some()) else {
        return Ok(Err("the delivery's step has no template".into()));
    };
    let project = s.find_project(crate::storage::ProjectRef::Id(p))?;
    let recipient: Option<User> = s.user(p, &d.recipient_id)?;
    let actor = match d.actor_id {
        Some(a) => s.user(p, &a)?,
        None => None,
    };
    let ctx = minijinja::context! {
        recipient => minijinja::Value::from_serialize(&recipient),
        actor => minijinja::Value::from_serialize(super::frames::actor_json(actor.as_ref())),
        data => minijinja::Value::from_serialize(&run.data),
        flow => minijinja::Value::from_serialize(
            json!({"id": run.flow.id, "handle": run.flow.handle, "name": run.flow.name})),
        batch => minijinja::Value::from_serialize(context(b)),
        brand => match project.as_ref().and_then(|p| p.branding.clone()) {
            Some(b) => minijinja::Value::from_serialize(b),
            None => minijinja::Value::UNDEFINED,
        },
        preferences_url => crate::rules::preference_link::MARK,
        unsubscribe_url => crate::rules::unsubscribe_link::MARK,
    };
    let content = match &project {
        Some(pr) => Some(crate::render::content::cached(pr, || s.contents(p, None))?),
        None => None,
    };
    // A digest's missing translations are not traced: its trace entries are
    // written by the close (`Closing`), which takes the rendered content only.
    let r = RunRenderer::with_content(&run.flow, limits, content);
    let mut out = r
        .render_step(i, step, &ctx, d.channel_type)
        .map(|a| a.rendered);
    // an in-app entry is read inside the product: no preference link, no
    // unsubscribe link
    if let (Ok(data), crate::model::ChannelType::InApp) = (&mut out, d.channel_type) {
        crate::rules::preference_link::fill(data, "");
        crate::rules::unsubscribe_link::fill(data, "");
    }
    Ok(out)
}

/// What a close (`close`) changes.
pub(crate) struct Closing {
    /// The batch closed now: the backend stores it.
    pub(crate) batch: bool,
    /// The delivery took its content now: the backend stores it.
    pub(crate) delivery: bool,
    /// The opener's trace entries: `batch.closed` when the batch closed now,
    /// then the delivery's `template.rendered` (or `template.failed`) when it
    /// was rendered now. Staging wrote no template entry for it: a step
    /// after a batch is rendered here, at the close.
    pub(crate) trace: Vec<crate::trace::TraceEntry>,
}

/// Applies `c` to the batch `b` and to the opener's delivery `d` (`None`:
/// gone), both as read under the batch's lock, at `now` (wall time): each
/// backend's `close_batch` calls it and stores what it says. `None`, nothing
/// changed, when the close is refused: an activity joined since the render,
/// or the batch may not close yet.
pub(crate) fn close(
    b: &mut Batch, d: Option<&mut crate::model::Delivery>, c: &BatchClose, now: Timestamp,
) -> Option<Closing> {
    if b.activities.len() != c.count {
        return None;
    }
    let mut out = Closing {
        batch: false,
        delivery: false,
        trace: vec![],
    };
    if b.closed.is_none() {
        if c.at_ms < b.closes_at_ms {
            return None;
        }
        b.closed = Some((c.at_ms, c.reason));
        out.batch = true;
        out.trace.push(closed_entry(b, now));
    }
    if let Some(d) = d.filter(|d| d.batch) {
        d.batch = false;
        d.data = c.rendered.clone().unwrap_or_default();
        d.updated_at = now;
        out.delivery = true;
        let step = crate::trace::step_of(&d.id);
        out.trace.push(match &c.rendered {
            Ok(_) => crate::trace::entry(now, "template.rendered", json!({"step": step})),
            Err(e) => {
                crate::trace::entry(now, "template.failed", json!({"step": step, "error": e}))
            }
        });
    }
    Some(out)
}

/// The trace entry of a batch's close.
pub fn closed_entry(b: &Batch, now: Timestamp) -> crate::trace::TraceEntry {
    let (at, reason) = b
        .closed
        .unwrap_or((b.closes_at_ms, BatchCloseReason::Window));
    crate::trace::entry(
        now,
        "batch.closed",
        json!({"step": b.key.step, "key": b.key.key, "count": b.activities.len(),
            "reason": reason, "at": Timestamp::from_millis(at)}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(window: i64, maxw: Option<i64>, max: Option<u32>) -> Batch {
        Batch {
            id: Uuid::now_v7(),
            key: BatchKey {
                flow_id: Uuid::nil(),
                recipient: Uuid::nil(),
                step: 0,
                key: String::new(),
            },
            opened_at_ms: 1_000,
            closes_at_ms: 1_000 + window,
            window_ms: window,
            max_window_ms: maxw,
            max,
            activities: vec![act(1_000)],
            waiting: vec![BatchWaiting {
                delivery_id: Uuid::nil(),
                channel_type: crate::model::ChannelType::InApp,
                offset_ms: 5,
            }],
            closed: None,
        }
    }

    fn act(at: i64) -> BatchActivity {
        BatchActivity {
            notification_id: Uuid::nil(),
            data: json!({}),
            actor: Value::Null,
            at_ms: at,
        }
    }

    #[test]
    fn a_sliding_window_moves_the_close_within_its_bound() {
        let p = Uuid::nil();
        let mut b = batch(100, Some(250), None);
        assert!(join(&p, &mut b, act(1_050)).is_none());
        assert_eq!(b.closes_at_ms, 1_150);
        join(&p, &mut b, act(1_200));
        assert_eq!(b.closes_at_ms, 1_250, "bounded by the opening + max_window");
        let mut f = batch(100, None, None);
        join(&p, &mut f, act(1_090));
        assert_eq!(f.closes_at_ms, 1_100, "a fixed window does not move");
    }

    #[test]
    fn reaching_max_closes_at_once_and_requeues_the_waiting() {
        let p = Uuid::nil();
        let mut b = batch(100, None, Some(3));
        assert!(join(&p, &mut b, act(1_010)).is_none());
        let q = join(&p, &mut b, act(1_020)).unwrap();
        assert_eq!(b.closed, Some((1_020, BatchCloseReason::Max)));
        assert_eq!(q[0].due_ms, 1_025);
        assert!(!b.open_at(1_021));
        let ctx = context(&b);
        assert_eq!(ctx["count"], 3);
    }
}
