//! Expanding a topic run: which subscribers of each chunk get a notification.

use crate::model::FlowRun;
use std::collections::HashSet;
use uuid::Uuid;

/// Takes the next chunk of the topic's subscriptions `(subscription, user)`,
/// asked for `n`, in subscription order: the run notifies the users who
/// subscribed before it was accepted (ids are UUIDv7, so a later subscription
/// has a greater id than the run) and are not among its explicit recipients
/// (they have their notification already). Pushes them to `todo`, advances
/// the run's cursor, and says whether the expansion is done after this chunk.
pub(crate) fn select(
    run: &mut FlowRun,
    chunk: &[(Uuid, Uuid)],
    n: usize,
    explicit: &HashSet<Uuid>,
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
