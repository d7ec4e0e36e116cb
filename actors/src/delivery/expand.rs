//! Expanding a topic run (`expand_topic`): which subscribers of each chunk
//! get a notification, staged as `accept` stages a recipient, and the run's
//! record as of each chunk; a backend stores each chunk as one atomic change
//! (`RunRepo::commit_chunk`).

use super::accept::Stager;
use crate::error::{Error, Result};
use crate::model::FlowRun;
use crate::render::Limits;
use crate::storage::{
    Prepared, QueueItem, StagedChunk, StagedNotification, Storage, SubscriberChunk, UserFrames,
    WrittenChunk,
};
use std::collections::HashSet;
use uuid::Uuid;

/// Chunks of at least this many recipients are staged by two threads.
const PARALLEL_STAGING: usize = 64;

/// Expands a topic run into notifications, up to `n` subscribers per commit,
/// until it is complete, calling `out` after each chunk's commit with the
/// deliveries queued and the frames of in-app deliveries settled at once
/// (both to be released once durable); `out` returning false stops after
/// that chunk. Subscribers whose subscription is newer than the run are not
/// part of it.
///
/// Two threads share the work: this one stages chunk k+1 (subscribers,
/// users, preferences, rendering) and has the backend prepare it
/// (`RunRepo::prepare_chunk`: sled encodes its records) while a scoped
/// helper has chunk k committed (`RunRepo::commit_chunk`). Each commit is atomic with the run's
/// expansion cursor, so a crash resumes after the last committed chunk. Only
/// one expansion of a run may be in progress (its actor's).
///
/// The first chunks are smaller (n/8, doubling up to n): the first frames
/// wait for one prepare and one commit, and a small chunk starts the
/// two threads' pipeline (and the sockets) sooner.
pub(crate) fn expand_topic(
    s: &dyn Storage, limits: Limits, project: &Uuid, run_id: &Uuid, n: usize,
    out: &mut (dyn FnMut(Vec<QueueItem>, UserFrames) -> bool + Send),
) -> Result<()> {
    expand_topic_with(s, limits, project, run_id, n, out, &mut || Ok(()))
}

/// How many times in a row an expansion restarts because a chunk went stale
/// before it gives up (its actor tries again later).
const STALE_RESTARTS: usize = 16;

/// `expand_topic`, calling `before_commit` before each chunk's commit (tests
/// change the store there). A chunk whose decisions went stale
/// (`Error::stale_chunk`: between staging and commit, another run opened or
/// closed a batch, or counted in a throttle, of one of its recipients)
/// stored nothing: the expansion starts again from the cursor committed
/// last, as after a crash, and stages it anew.
pub(crate) fn expand_topic_with(
    s: &dyn Storage, limits: Limits, project: &Uuid, run_id: &Uuid, n: usize,
    out: &mut (dyn FnMut(Vec<QueueItem>, UserFrames) -> bool + Send),
    before_commit: &mut (dyn FnMut() -> Result<()> + Send),
) -> Result<()> {
    let mut restarts = 0;
    loop {
        match expand_once(s, limits, project, run_id, n, out, before_commit) {
            Err(e) if e.is_stale_chunk() && restarts < STALE_RESTARTS => {
                restarts += 1;
                tracing::debug!(flow_run_id = %run_id, restarts, "a topic chunk went stale; staging it again");
            }
            done => return done,
        }
    }
}

fn expand_once(
    s: &dyn Storage, limits: Limits, project: &Uuid, run_id: &Uuid, n: usize,
    out: &mut (dyn FnMut(Vec<QueueItem>, UserFrames) -> bool + Send),
    before_commit: &mut (dyn FnMut() -> Result<()> + Send),
) -> Result<()> {
    let run = s
        .flow_run(project, run_id)?
        .ok_or_else(|| Error::not_found("flow_run", run_id))?;
    if run.expanded {
        return Ok(());
    }
    let actor = match run.actor_id {
        Some(a) => s.user(project, &a)?,
        None => None,
    };
    let st = Stager::new(s, limits, *project, &run, actor.as_ref())?;
    let explicit: HashSet<Uuid> = run.explicit_ids.iter().copied().collect();
    let topic = run.topic.clone().unwrap_or_default();
    let mut state = run.clone();
    let shared = s.shares_work();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(Prepared, bool, bool, u64)>(1);
        let committer = scope.spawn(move || -> Result<()> {
            if shared {
                return write_ahead(scope, s, project, rx, out, before_commit);
            }
            for (c, done, _, cost) in rx {
                before_commit()?;
                let (queued, frames) = s.commit_chunk(project, c)?;
                crate::quota::count(s, project, cost);
                if !out(queued, frames) || done {
                    break;
                }
            }
            Ok(())
        });
        let prepared = (|| -> Result<()> {
            let mut size = (n / 8).max(1);
            loop {
                let c = stage_chunk(s, project, &st, &explicit, &topic, &mut state, size)?;
                size = (size * 2).min(n);
                let done = c.run.expanded;
                // Throttle counters and batches are locked by key, and two
                // chunks may share keys: such a chunk is not written beside
                // another (`write_ahead`).
                let serial = c
                    .notifications
                    .iter()
                    .any(|n| n.throttle.is_some() || n.batch.is_some());
                // What the chunk counts in the project's usage, once committed.
                let cost = crate::quota::cost_of_staged(&c.notifications);
                if tx
                    .send((s.prepare_chunk(project, c)?, done, serial, cost))
                    .is_err()
                    || done
                {
                    return Ok(()); // the committer stopped: its result says why
                }
            }
        })();
        drop(tx);
        let committed = committer
            .join()
            .unwrap_or_else(|_| Err(Error::internal("topic expansion panicked")));
        committed.and(prepared)
    })
}

/// Chunks written at once by `write_ahead`.
const WRITES_AHEAD: usize = 2;

/// The committer of an expansion on a store nodes share (behind a network,
/// where a chunk's statements and its commit are mostly waiting): up to
/// `WRITES_AHEAD` chunks are written at once (`Storage::write_chunk`, each
/// in its own transaction, on its own thread), and they are committed in
/// the order they were staged, each after the one before it (each adds
/// itself to the run, with the cursor, at its commit). A chunk that failed
/// to write or commit leaves the ones after it uncommitted (rolled back),
/// so the run's cursor is always that of a chunk committed with every
/// chunk before it, as with one chunk at a time. The chunks of one run
/// have distinct recipients, so their feeds' locks are distinct; a chunk
/// that counts in a throttle or joins a batch (locks chunks may share)
/// waits until every chunk before it has committed.
fn write_ahead<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>, s: &'env dyn Storage, project: &'env Uuid,
    rx: std::sync::mpsc::Receiver<(Prepared, bool, bool, u64)>,
    out: &mut (dyn FnMut(Vec<QueueItem>, UserFrames) -> bool + Send),
    before_commit: &mut (dyn FnMut() -> Result<()> + Send),
) -> Result<()> {
    type Writing<'scope, 'env> =
        std::thread::ScopedJoinHandle<'scope, Result<(Box<dyn WrittenChunk + 'env>, u64)>>;
    let mut open: std::collections::VecDeque<Writing<'scope, 'env>> = Default::default();
    // Commits the oldest chunk written; false: stop (the receiver is gone).
    let mut commit_first = |open: &mut std::collections::VecDeque<Writing<'scope, 'env>>| {
        let Some(h) = open.pop_front() else {
            return Ok(true);
        };
        let (written, cost) = h
            .join()
            .unwrap_or_else(|_| Err(Error::internal("writing a topic chunk panicked")))?;
        let (queued, frames) = written.commit()?;
        crate::quota::count(s, project, cost);
        Ok::<_, Error>(out(queued, frames))
    };
    for (c, done, serial, cost) in rx {
        before_commit()?;
        if serial {
            while !open.is_empty() {
                if !commit_first(&mut open)? {
                    return Ok(());
                }
            }
        }
        open.push_back(scope.spawn(move || s.write_chunk(project, c).map(|w| (w, cost))));
        while open.len() >= WRITES_AHEAD || ((done || serial) && !open.is_empty()) {
            if !commit_first(&mut open)? {
                return Ok(());
            }
        }
        if done {
            return Ok(());
        }
    }
    // The stager stopped (its error is the expansion's): what was written
    // before it commits, in order.
    while !open.is_empty() {
        if !commit_first(&mut open)? {
            return Ok(());
        }
    }
    Ok(())
}

/// Stages the next chunk of a topic run's expansion from `state` (the run as
/// it will be after the chunks already staged), which it advances.
fn stage_chunk(
    s: &dyn Storage, project: &Uuid, st: &Stager, explicit: &HashSet<Uuid>, topic: &str,
    state: &mut FlowRun, n: usize,
) -> Result<StagedChunk> {
    let of = SubscriberChunk {
        topic,
        after: state.expand_cursor.as_ref(),
        n,
    };
    let chunk = s.topic_subscribers_chunk(project, of)?;
    let mut todo = Vec::with_capacity(chunk.len());
    let done = select(state, &chunk, n, explicit, &mut todo);
    let stage = |uids: &[Uuid]| -> Result<(Vec<StagedNotification>, Vec<QueueItem>)> {
        let users = s.users_with_preferences(project, uids)?;
        st.stage_read(s, &users)
    };
    // Reading users and preferences and rendering is most of a chunk's
    // cost and each recipient's own: two threads share a large chunk.
    let (notifications, queued) = if todo.len() >= PARALLEL_STAGING {
        let (a, b) = todo.split_at(todo.len() / 2);
        std::thread::scope(|scope| {
            let other = scope.spawn(|| stage(b));
            let first = stage(a);
            let second = other
                .join()
                .unwrap_or_else(|_| Err(Error::internal("staging panicked")));
            let (mut ns, mut qs) = first?;
            let (ns2, qs2) = second?;
            ns.extend(ns2);
            qs.extend(qs2);
            Ok::<_, Error>((ns, qs))
        })?
    } else {
        stage(&todo)?
    };
    // The size bounds and the quota, per chunk (`quota::bound_chunk`).
    let (mut notifications, mut queued) = (notifications, queued);
    crate::quota::bound_chunk(s, project, &mut notifications, &mut queued)?;
    state.notifications_count += notifications.len() as u64;
    state.expanded = done;
    Ok(StagedChunk {
        run: state.clone(),
        notifications,
        queued,
    })
}

/// Takes the next chunk of the topic's subscriptions `(subscription, user)`,
/// asked for `n`, in subscription order: the run notifies the users who
/// subscribed before it was accepted (ids are UUIDv7, so a later subscription
/// has a greater id than the run) and are not among its explicit recipients
/// (they have their notification already). Pushes them to `todo`, advances
/// the run's cursor, and says whether the expansion is done after this chunk.
pub(crate) fn select(
    run: &mut FlowRun, chunk: &[(Uuid, Uuid)], n: usize, explicit: &HashSet<Uuid>,
    todo: &mut Vec<Uuid>,
) -> bool {
    let mut done = chunk.len() < n;
    for (sid, uid) in chunk {
        if *sid > run.id {
            done = true;
            break;
        }
        run.expand_cursor = Some(*sid);
        if !explicit.contains(uid) {
            todo.push(*uid);
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::accept::accept_run;
    use crate::model::{Flow, UserPatch};
    #[allow(unused_imports)]
    use crate::storage::*;
    use crate::storage::{AcceptInput, NotificationFilter, PageReq, RunRecipient};
    use crate::store::Store;
    use serde_json::json;

    fn run(flow: &Flow, to: Option<&str>, topic: Option<&str>, i: u64) -> AcceptInput {
        AcceptInput {
            flow: flow.clone(),
            recipients: to
                .map(|ext| RunRecipient {
                    external_id: ext.into(),
                    patch: UserPatch::default(),
                })
                .into_iter()
                .collect(),
            actor: None,
            topic: topic.map(str::to_string),
            data: json!({ "i": i }),
            idempotency: None,
            timing: Default::default(),
            test_channel_id: None,
        }
    }

    fn flow(step: serde_json::Value) -> Flow {
        serde_json::from_value(json!({
            "id": Uuid::now_v7(), "handle": "f", "name": "F", "description": null,
            "status": "active", "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z", "steps": [step],
        }))
        .unwrap()
    }

    fn notifs(store: &Store, p: &Uuid, run: &Uuid) -> Vec<crate::model::Notification> {
        let f = NotificationFilter {
            flow_run_id: Some(*run),
            ..Default::default()
        };
        let req = PageReq {
            limit: 10,
            ..Default::default()
        };
        store.list_notifications(p, &f, &req).unwrap().items
    }

    /// A subscriber `u1` of topic `t` in a fresh store.
    fn subscriber(dir: &std::path::Path) -> (Store, Uuid) {
        let store = Store::open(dir).unwrap();
        let p = Uuid::now_v7();
        let (u, _) = store.upsert_user(&p, "u1", &UserPatch::default()).unwrap();
        store.put_topic(&p, "t", Default::default()).unwrap();
        (&store as &dyn crate::storage::Storage)
            .subscribe(&p, "t", &u)
            .unwrap();
        (store, p)
    }

    /// Expands `topic_run` with another run of `flow` for `u1` accepted
    /// just before the first chunk's commit; that run, after checking the
    /// chunk was committed on its second staging.
    fn expand_racing(
        store: &Store, p: &Uuid, flow: &Flow, topic_run: &Uuid,
    ) -> crate::storage::AcceptedRun {
        let mut other = None;
        let mut commits = 0;
        expand_topic_with(
            store,
            crate::render::Limits::default(),
            p,
            topic_run,
            100,
            &mut |_, _| true,
            &mut || {
                commits += 1;
                if other.is_none() {
                    other = Some(accept_run(
                        store,
                        crate::render::Limits::default(),
                        p,
                        run(flow, Some("u1"), None, 2),
                    )?);
                }
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(commits, 2, "the chunk was staged and committed again");
        other.unwrap()
    }

    /// A topic chunk staged to pass a throttle (1 per hour) whose last slot
    /// another run took before the chunk committed: the chunk is staged
    /// again and its subscriber is throttled, not let through as a second.
    #[test]
    fn a_topic_chunk_whose_throttle_filled_meanwhile_is_staged_again() {
        let dir = tempfile::tempdir().unwrap();
        let (store, p) = subscriber(dir.path());
        let flow = flow(
            json!({"kind": "throttle", "channel_id": null, "template": null,
            "seconds": null, "window": "1h", "limit": 1}),
        );
        let topic_run = accept_run(
            &store,
            crate::render::Limits::default(),
            &p,
            run(&flow, None, Some("t"), 1),
        )
        .unwrap();
        let other = expand_racing(&store, &p, &flow, &topic_run.run.id);
        let passed = notifs(&store, &p, &other.run.id).remove(0);
        assert_eq!(passed.stopped, None, "{passed:?}");
        let from_topic = notifs(&store, &p, &topic_run.run.id);
        assert_eq!(from_topic.len(), 1);
        assert_eq!(
            from_topic[0].stopped,
            Some(crate::model::StopReason::Throttled),
            "{:?}",
            from_topic[0]
        );
    }

    /// A topic chunk staged to join a batch that another run's join closed
    /// (`max`) before the chunk committed: the chunk stores nothing and is
    /// staged again, so its recipient opens a batch of its own instead of
    /// being recorded as joined into a digest that went out without it.
    #[test]
    fn a_topic_chunk_whose_batch_closed_meanwhile_is_staged_again() {
        let dir = tempfile::tempdir().unwrap();
        let (store, p) = subscriber(dir.path());
        let flow = flow(
            json!({"kind": "batch", "channel_id": null, "template": null,
            "seconds": null, "window": "1h", "limit": 2}),
        );
        let opener = accept_run(
            &store,
            crate::render::Limits::default(),
            &p,
            run(&flow, Some("u1"), None, 0),
        )
        .unwrap();
        let topic_run = accept_run(
            &store,
            crate::render::Limits::default(),
            &p,
            run(&flow, None, Some("t"), 1),
        )
        .unwrap();
        // The second activity: `max` closes the opener's batch.
        let closer = expand_racing(&store, &p, &flow, &topic_run.run.id);

        let first = notifs(&store, &p, &opener.run.id).remove(0);
        let closing = notifs(&store, &p, &closer.run.id).remove(0);
        let from_topic = notifs(&store, &p, &topic_run.run.id);
        assert_eq!(from_topic.len(), 1, "one notification for the subscriber");
        assert_eq!(closing.batched_into, Some(first.id));
        let b = store.batch(&p, &first.id).unwrap().unwrap();
        assert!(b.closed.is_some());
        let ids: Vec<Uuid> = b.activities.iter().map(|a| a.notification_id).collect();
        assert_eq!(ids, vec![first.id, closing.id]);
        // The subscriber's run opened the next batch, holding its activity.
        assert_eq!(from_topic[0].batched_into, None, "{:?}", from_topic[0]);
        let next = store.batch(&p, &from_topic[0].id).unwrap().unwrap();
        assert!(next.closed.is_none());
        assert_eq!(next.activities.len(), 1);
        assert_eq!(next.activities[0].notification_id, from_topic[0].id);
    }
}
