//! Quotas per project: what one delivery's rendered content may take, what
//! one run's deliveries may take together, and how much a project may keep
//! stored (its storage quota), with the usage counter that quota is checked
//! against.
//!
//! Why: without them a short run request can write gigabytes (5 steps × 3
//! template parts × 100 recipients, each part at the render cap), and one
//! tenant can fill the disk every tenant shares. The bounds are operator
//! settings (`--max-delivery-bytes`, `--max-run-bytes`,
//! `--project-quota-bytes`), set once at startup like the retention default
//! (`retention::set_default`): every staging path needs them, and threading
//! them through each would change every caller for three numbers.
//!
//! The usage counter is an estimate, kept by the backends (`UsageRepo`):
//! each stored notification counts `NOTIFICATION_COST` and each of its
//! deliveries `DELIVERY_COST` plus its rendered content (subject, body,
//! html and url, in bytes). It goes up when a run, a topic chunk or a
//! batch's close stores content, and down by the same measure, read from
//! the records removed, when retention or an erasure removes them. The feed
//! entries, live-feed events and decision traces that go with a delivery
//! are in the fixed costs, not measured one by one.

use crate::error::{Error, ErrorCode, Result};
use crate::model::{DeliveryError, DeliveryErrorCode, DeliveryStatus, Rendered};
use crate::storage::{QueueItem, StagedNotification, Storage};
use serde_json::json;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use uuid::Uuid;

/// Default of `--max-delivery-bytes`: 1 MiB for all the parts of one
/// delivery together. Four parts at the default render cap (256 KiB each)
/// just fit, so no template the renderer accepts is refused by default for
/// one delivery alone.
pub const DEFAULT_MAX_DELIVERY_BYTES: u64 = 1024 * 1024;

/// Default of `--max-run-bytes`: 256 MiB of rendered content per run (per
/// topic chunk for a topic run). A few hundred recipients at the
/// per-delivery bound; a run past it is almost surely a mistake or abuse,
/// and it bounds what one request can make the node write.
pub const DEFAULT_MAX_RUN_BYTES: u64 = 256 * 1024 * 1024;

/// Default of `--project-quota-bytes`: 0, no quota. A self-hosted node
/// usually has one tenant, which a default quota would only stop at an
/// arbitrary size; an operator who shares a node between tenants sets one
/// (docs/SECURITY.md, "Quotas").
pub const DEFAULT_PROJECT_QUOTA_BYTES: u64 = 0;

/// What a stored notification counts besides its deliveries: its record,
/// its indexes, its trace and its run's share (measured on sled at about
/// 1 KiB per notification with one in-app delivery, see docs/PERFORMANCE.md).
pub const NOTIFICATION_COST: u64 = 512;

/// What a stored delivery counts besides its rendered content: its fields,
/// indexes, queue entry, feed entry and live-feed event.
pub const DELIVERY_COST: u64 = 512;

static MAX_DELIVERY: AtomicU64 = AtomicU64::new(DEFAULT_MAX_DELIVERY_BYTES);
static MAX_RUN: AtomicU64 = AtomicU64::new(DEFAULT_MAX_RUN_BYTES);
static PROJECT_QUOTA: AtomicU64 = AtomicU64::new(DEFAULT_PROJECT_QUOTA_BYTES);

/// The operator's bounds (0 for `max_delivery_bytes` or `max_run_bytes`
/// means no bound; `project_quota_bytes` 0 means no quota).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub max_delivery_bytes: u64,
    pub max_run_bytes: u64,
    /// The quota of projects that set none.
    pub project_quota_bytes: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_delivery_bytes: DEFAULT_MAX_DELIVERY_BYTES,
            max_run_bytes: DEFAULT_MAX_RUN_BYTES,
            project_quota_bytes: DEFAULT_PROJECT_QUOTA_BYTES,
        }
    }
}

/// Sets the operator's bounds, at startup.
pub fn set_bounds(b: Bounds) {
    MAX_DELIVERY.store(b.max_delivery_bytes, Ordering::Relaxed);
    MAX_RUN.store(b.max_run_bytes, Ordering::Relaxed);
    PROJECT_QUOTA.store(b.project_quota_bytes, Ordering::Relaxed);
}

/// The operator's bounds in force.
pub fn bounds() -> Bounds {
    Bounds {
        max_delivery_bytes: MAX_DELIVERY.load(Ordering::Relaxed),
        max_run_bytes: MAX_RUN.load(Ordering::Relaxed),
        project_quota_bytes: PROJECT_QUOTA.load(Ordering::Relaxed),
    }
}

/// The storage quota in force for a project whose own setting is `own`
/// (`None`: the operator's default); 0 is none.
pub fn effective_quota(own: Option<u64>) -> u64 {
    own.unwrap_or_else(|| PROJECT_QUOTA.load(Ordering::Relaxed))
}

/// The bytes of a delivery's rendered content, all its parts together.
pub fn content_bytes(r: &Rendered) -> u64 {
    (r.subject.len()
        + r.body.len()
        + r.html.as_deref().map_or(0, str::len)
        + r.url.as_deref().map_or(0, str::len)
        + r.actions
            .iter()
            .map(|a| a.label.len() + a.url.len())
            .sum::<usize>()) as u64
}

/// What a stored delivery with this rendered content counts.
pub fn delivery_cost(r: &Rendered) -> u64 {
    DELIVERY_COST + content_bytes(r)
}

/// What a stored notification with these deliveries counts.
pub fn notification_cost<'a>(rendered: impl IntoIterator<Item = &'a Rendered>) -> u64 {
    NOTIFICATION_COST + rendered.into_iter().map(delivery_cost).sum::<u64>()
}

/// The same as `notification_cost`, from the count of deliveries and their
/// content's bytes (what a backend reads of records it removes).
pub fn cost_of(deliveries: u64, content: u64) -> u64 {
    NOTIFICATION_COST + deliveries * DELIVERY_COST + content
}

/// `Err(message)` when one delivery's rendered content is over
/// `max_delivery_bytes`: a delivery rendered after the run was accepted (a
/// batch's digest) fails with `template_error` and this message.
pub fn check_rendered(r: &Rendered) -> Result<(), String> {
    let max = MAX_DELIVERY.load(Ordering::Relaxed);
    let n = content_bytes(r);
    if max > 0 && n > max {
        return Err(format!(
            "the rendered content (subject, body, html and url together) is {n} bytes, over the server's max_delivery_bytes of {max}"
        ));
    }
    Ok(())
}

/// 422 for a run refused for its size: `limit_name` is the operator
/// setting exceeded, named in `details.reason` with its value in
/// `details.limit`, and the field error points at `data` (the run's input
/// that the templates made too large).
fn too_large(limit_name: &str, limit: u64, message: String) -> Error {
    let mut e = Error::field("data", "length", message);
    e.message = format!("the run is over the server's {limit_name}");
    e.with("reason", limit_name).with("limit", limit)
}

/// Checks, at acceptance, one staged delivery's content (step `step`, for
/// recipient `recipient`): over `max_delivery_bytes` the whole run is
/// refused with 422.
pub fn check_delivery(r: &Rendered, step: usize, recipient: &str) -> Result<()> {
    let max = MAX_DELIVERY.load(Ordering::Relaxed);
    let n = content_bytes(r);
    if max > 0 && n > max {
        return Err(too_large(
            "max_delivery_bytes",
            max,
            format!(
                "step {step} renders {n} bytes for recipient {recipient:?} (subject, body, html and url together), over max_delivery_bytes of {max}"
            ),
        ));
    }
    Ok(())
}

/// Checks a run's (or a topic chunk's) rendered content, `content` bytes
/// in all: over `max_run_bytes` it is refused with 422.
pub fn check_run(content: u64) -> Result<()> {
    let max = MAX_RUN.load(Ordering::Relaxed);
    if max > 0 && content > max {
        return Err(too_large(
            "max_run_bytes",
            max,
            format!(
                "the run's deliveries render {content} bytes together, over max_run_bytes of {max}"
            ),
        ));
    }
    Ok(())
}

/// The reason in `details` of a run refused for the project's quota.
pub const QUOTA_EXCEEDED: &str = "quota_exceeded";

/// Checks that storing `adding` bytes more keeps the project (now at
/// `usage`) within its quota `quota` (0: none): else 409 `conflict` reason
/// `quota_exceeded`, `details.limit` the quota. A 409 rather than a 429: the
/// project's state forbids the run until retention (or an erasure, or a
/// larger quota) frees room, and no `Retry-After` could say when.
pub fn check_quota(project: &Uuid, usage: u64, adding: u64, quota: u64) -> Result<()> {
    if quota == 0 || usage.saturating_add(adding) <= quota {
        return Ok(());
    }
    Err(Error::conflict(
        "project",
        Some(project.to_string()),
        QUOTA_EXCEEDED,
        format!(
            "the project's storage quota of {quota} bytes is used ({usage} bytes stored); this run would store {adding} more"
        ),
    )
    .with("limit", quota))
}

/// Whether `e` is a refusal for the project's quota.
pub fn is_quota_exceeded(e: &Error) -> bool {
    e.code == ErrorCode::Conflict
        && e.details.get("reason").and_then(|r| r.as_str()) == Some(QUOTA_EXCEEDED)
}

/// Checks a run staged for acceptance (its explicit recipients' staged
/// notifications; `name(i)` names the recipient of the `i`th) before it is
/// stored: each delivery against `max_delivery_bytes`, their content
/// together against `max_run_bytes` (422 for either), then what they would
/// count against the project's quota (`own_quota`: the project's setting;
/// 409). What the run counts, for `count` once it is stored.
pub(crate) fn admit(
    s: &dyn Storage, project: &Uuid, own_quota: Option<u64>, ns: &[StagedNotification],
    name: &dyn Fn(usize) -> String,
) -> Result<u64> {
    let mut content = 0u64;
    let mut cost = 0u64;
    for (i, sn) in ns.iter().enumerate() {
        for d in &sn.deliveries {
            if check_rendered(&d.data).is_err() {
                check_delivery(&d.data, crate::trace::step_of(&d.id) as usize, &name(i))?;
            }
            content += content_bytes(&d.data);
        }
        cost += notification_cost(sn.deliveries.iter().map(|d| &d.data));
    }
    check_run(content)?;
    let quota = effective_quota(own_quota);
    if quota > 0 {
        check_quota(project, s.usage_bytes(project)?, cost, quota)?;
    }
    Ok(cost)
}

/// What staged notifications count, once stored.
pub(crate) fn cost_of_staged(ns: &[StagedNotification]) -> u64 {
    ns.iter()
        .map(|sn| notification_cost(sn.deliveries.iter().map(|d| &d.data)))
        .sum()
}

/// Counts `cost` bytes, just stored, in the project's usage. The write it
/// counts is done: a counter that cannot be written now (a full disk) is
/// logged and left low by it rather than failing what was stored.
pub(crate) fn count(s: &dyn Storage, project: &Uuid, cost: u64) {
    if let Err(e) = s.add_usage(project, cost.min(i64::MAX as u64) as i64) {
        tracing::warn!(project = %project, error = %e, "cannot count stored bytes in the project's usage");
    }
}

/// Bounds a topic run's chunk, staged from `state`, before it is written:
/// the chunk is checked like a run (`admit`'s bounds, the run total per
/// chunk) and against the project's quota. A delivery over
/// `max_delivery_bytes` fails alone with `template_error`; a chunk over
/// `max_run_bytes` or the quota has every delivery fail (`template_error`
/// or `quota_exceeded`), its content dropped: the run was accepted and its
/// notifications are recorded, nothing is sent and next to nothing stored.
pub(crate) fn bound_chunk(
    s: &dyn Storage, project: &Uuid, ns: &mut [StagedNotification], queued: &mut Vec<QueueItem>,
) -> Result<()> {
    let mut failed: HashSet<Uuid> = HashSet::new();
    let mut content = 0u64;
    for sn in ns.iter_mut() {
        for i in 0..sn.deliveries.len() {
            if let Err(m) = check_rendered(&sn.deliveries[i].data) {
                failed.insert(sn.deliveries[i].id);
                fail_delivery(sn, i, DeliveryErrorCode::TemplateError, &m);
            }
            content += content_bytes(&sn.deliveries[i].data);
        }
    }
    let over = match check_run(content) {
        Err(e) => Some((
            DeliveryErrorCode::TemplateError,
            e.details["fields"][0]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )),
        Ok(()) => {
            let quota = match s.project(project)? {
                Some(p) => effective_quota(p.quota_bytes),
                None => 0,
            };
            let cost = cost_of_staged(ns);
            match quota {
                0 => None,
                q => check_quota(project, s.usage_bytes(project)?, cost, q)
                    .err()
                    .map(|e| (DeliveryErrorCode::QuotaExceeded, e.message)),
            }
        }
    };
    if let Some((code, message)) = over {
        for sn in ns.iter_mut() {
            for i in 0..sn.deliveries.len() {
                failed.insert(sn.deliveries[i].id);
                fail_delivery(sn, i, code, &message);
            }
        }
    }
    if !failed.is_empty() {
        queued.retain(|q| !failed.contains(&q.delivery_id));
    }
    Ok(())
}

/// Fails delivery `i` of a staged notification before it is stored: its
/// content dropped, out of the feed and the queue (the caller takes it out
/// of the chunk's queue items), and the notification settled once nothing
/// of it waits.
fn fail_delivery(sn: &mut StagedNotification, i: usize, code: DeliveryErrorCode, message: &str) {
    let d = &mut sn.deliveries[i];
    // Staged `sent` is an in-app delivery settled with the chunk, not yet
    // stored: it fails like a pending one. Skipped and failed ones keep
    // their outcome.
    if matches!(d.status, DeliveryStatus::Pending | DeliveryStatus::Sent) {
        d.status = DeliveryStatus::Failed;
        d.error = Some(DeliveryError::new(code, message));
        d.attempts = 0;
    }
    d.data = Rendered::default();
    d.sent_at = None;
    d.next_attempt_at = None;
    d.gate = None;
    d.batch = false;
    sn.to_feed.retain(|(j, _)| *j != i);
    let waiting = sn
        .deliveries
        .iter()
        .any(|d| d.status == DeliveryStatus::Pending);
    if !waiting && sn.pending {
        sn.pending = false;
        sn.n.processed = true;
        sn.n.processed_at = Some(sn.n.created_at);
    }
}

/// The `usage` object of `GET /admin/v1/project`.
pub fn usage_json(bytes: u64, quota: u64) -> serde_json::Value {
    json!({"bytes": bytes, "quota_bytes": quota})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: usize) -> Rendered {
        Rendered {
            subject: "s".repeat(n),
            body: "b".repeat(n),
            html: Some("h".repeat(n)),
            url: None,
            actions: vec![],
        }
    }

    #[test]
    fn costs_count_every_part_and_the_fixed_costs() {
        assert_eq!(content_bytes(&r(10)), 30);
        assert_eq!(notification_cost([&r(10), &r(0)]), 512 + 512 + 30 + 512);
        assert_eq!(cost_of(2, 30), notification_cost([&r(10), &r(0)]));
    }

    #[test]
    fn the_quota_refuses_what_would_go_over_it_and_zero_is_none() {
        let p = Uuid::now_v7();
        assert!(check_quota(&p, 10, 1_000_000, 0).is_ok());
        assert!(check_quota(&p, 10, 90, 100).is_ok());
        let e = check_quota(&p, 10, 91, 100).unwrap_err();
        assert_eq!(e.code.status(), 409);
        assert!(is_quota_exceeded(&e));
        assert_eq!(e.details["limit"], 100);
        assert_eq!(e.details["resource"], "project");
    }
}
