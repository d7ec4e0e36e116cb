//! The rules of a project's catalog: which status changes a flow may make,
//! when a flow may still be edited, and when a channel may be deleted or
//! revoked. Each rule is a pure function over records returning a typed
//! refusal (`CatalogError`), which maps to the API's error table in one
//! place (`From<CatalogError> for Error`); the engine (`actors::catalog`)
//! calls them under the record's lock, whichever backend holds it.

use crate::error::Error;
use crate::model::{Category, Channel, ChannelStatus, Flow, FlowStatus, Project, Timestamp};
use uuid::Uuid;

/// Why the catalog refused a change.
#[derive(Debug, Clone, PartialEq)]
pub enum CatalogError {
    /// An archived flow is final: neither its status nor its content change.
    FlowArchived { flow: Uuid, status_change: bool },
    /// Activating a flow without a channel step.
    NoChannelStep,
    /// Activating a flow one of whose steps names a channel that is gone.
    ChannelGone { channel: Uuid },
    /// Activating a flow one of whose channels cannot send (revoked or not
    /// configured).
    ChannelUnusable {
        channel: Uuid,
        status: ChannelStatus,
    },
    /// The built-in in_app channel is part of every project.
    BuiltinChannel {
        channel: Uuid,
        status: ChannelStatus,
        revoke: bool,
    },
    /// Deleting a channel an active flow sends through.
    ChannelInUse {
        channel: Uuid,
        status: ChannelStatus,
    },
    /// An active commercial flow on a server without a public URL: its
    /// email's unsubscribe link would have nowhere to point.
    PublicUrlRequired { flow: Uuid, status: FlowStatus },
    /// Running a flow that is not active.
    FlowNotActive { flow: Uuid, status: FlowStatus },
    /// Declaring a category past `MAX_CATEGORIES`.
    TooManyCategories,
    /// Deleting a category a flow that is not archived names.
    CategoryInUse {
        category: String,
        flows: Vec<String>,
    },
}

/// The most preference categories a project declares: they are kept on the
/// project's record, which every staging reads.
pub const MAX_CATEGORIES: usize = 100;

/// The most categories one flow belongs to.
pub const MAX_FLOW_CATEGORIES: usize = 10;

/// Declares (or renames) the category `handle` of `p`; whether it is new.
pub fn put_category(
    p: &mut Project, handle: &str, name: String, description: Option<String>, now: Timestamp,
) -> Result<bool, CatalogError> {
    if let Some(c) = p.categories.get_mut(handle) {
        c.name = name;
        c.description = description;
        c.updated_at = now;
        return Ok(false);
    }
    if p.categories.len() >= MAX_CATEGORIES {
        return Err(CatalogError::TooManyCategories);
    }
    let c = Category {
        name,
        description,
        created_at: now,
        updated_at: now,
    };
    p.categories.insert(handle.to_string(), c);
    Ok(true)
}

/// Whether the category `handle` may be deleted: no flow of `flows` (the
/// project's live flows) names it, as a flow's categories must be declared.
pub fn may_delete_category(handle: &str, flows: &[Flow]) -> Result<(), CatalogError> {
    let using: Vec<String> = flows
        .iter()
        .filter(|f| f.categories.iter().any(|c| c == handle))
        .map(|f| f.handle.clone())
        .collect();
    if using.is_empty() {
        Ok(())
    } else {
        Err(CatalogError::CategoryInUse {
            category: handle.to_string(),
            flows: using,
        })
    }
}

/// Removes the category `handle` with the project's default for it; whether
/// there was one. Users' own settings of it stay stored, inert, and apply
/// again if a category of that handle is declared again.
pub fn delete_category(p: &mut Project, handle: &str) -> bool {
    p.preference_defaults.categories.remove(handle);
    p.categories.remove(handle).is_some()
}

/// The statuses a flow in `from` may move to.
pub fn allowed_transitions(from: FlowStatus) -> Vec<&'static str> {
    match from {
        FlowStatus::Draft => vec!["active", "archived"],
        FlowStatus::Active => vec!["draft", "archived"],
        FlowStatus::Archived => vec![],
    }
}

/// Moves `flow` to `to` (nothing when it is there already). Activating needs
/// a channel step and every step's channel able to send; `channels` are the
/// project's.
pub fn set_status(
    flow: &mut Flow, to: FlowStatus, channels: &[Channel], now: Timestamp,
) -> Result<(), CatalogError> {
    if flow.status == to {
        return Ok(());
    }
    if flow.status == FlowStatus::Archived {
        return Err(CatalogError::FlowArchived {
            flow: flow.id,
            status_change: true,
        });
    }
    if to == FlowStatus::Active {
        if !flow
            .steps
            .iter()
            .any(|s| s.kind == "channel" || s.kind == "route")
        {
            return Err(CatalogError::NoChannelStep);
        }
        // a step's backups and a route step's channels are checked as its
        // channel is: a flow goes live only with every channel it may send
        // through usable
        let ids = flow.steps.iter().flat_map(|s| {
            s.channel_id
                .into_iter()
                .chain(s.fallback_channel_ids.iter().copied())
                .chain(s.channels.iter().flat_map(|c| {
                    std::iter::once(c.channel_id).chain(c.fallback_channel_ids.iter().copied())
                }))
        });
        for id in ids {
            let Some(c) = channels.iter().find(|c| c.id == id) else {
                return Err(CatalogError::ChannelGone { channel: id });
            };
            if c.status() != ChannelStatus::Active {
                return Err(CatalogError::ChannelUnusable {
                    channel: id,
                    status: c.status(),
                });
            }
        }
    }
    flow.status = to;
    flow.updated_at = now;
    Ok(())
}

/// Whether `flow`, as a status change or an edit leaves it, may be so on
/// this server: an active commercial flow's email carries an unsubscribe
/// link (`rules::unsubscribe_link`), which needs the operator's public URL
/// (`public_url`: whether one was given). A draft may be commercial
/// without it.
pub fn commercial_sendable(flow: &Flow, public_url: bool) -> Result<(), CatalogError> {
    if flow.commercial && flow.status == FlowStatus::Active && !public_url {
        return Err(CatalogError::PublicUrlRequired {
            flow: flow.id,
            status: flow.status,
        });
    }
    Ok(())
}

/// Whether a run of flow `id`, in `status`, may be accepted: only an
/// active flow runs.
pub fn runnable(id: Uuid, status: FlowStatus) -> Result<(), CatalogError> {
    if status != FlowStatus::Active {
        return Err(CatalogError::FlowNotActive { flow: id, status });
    }
    Ok(())
}

/// What an edit of a flow changes (`None`: left as it is).
#[derive(Debug, Clone, Default)]
pub struct FlowEdit {
    pub name: Option<String>,
    pub description: Option<Option<String>>,
    pub steps: Option<Vec<crate::model::Step>>,
    pub critical: Option<bool>,
    pub commercial: Option<bool>,
    pub categories: Option<Vec<String>>,
}

/// Applies an edit: an archived flow no longer changes.
pub fn edit(flow: &mut Flow, edit: FlowEdit, now: Timestamp) -> Result<(), CatalogError> {
    if flow.status == FlowStatus::Archived {
        return Err(CatalogError::FlowArchived {
            flow: flow.id,
            status_change: false,
        });
    }
    if let Some(n) = edit.name {
        flow.name = n;
    }
    if let Some(d) = edit.description {
        flow.description = d;
    }
    if let Some(s) = edit.steps {
        flow.steps = s;
    }
    if let Some(c) = edit.critical {
        flow.critical = c;
    }
    if let Some(c) = edit.commercial {
        flow.commercial = c;
    }
    if let Some(c) = edit.categories {
        flow.categories = c;
    }
    flow.updated_at = now;
    Ok(())
}

/// Whether `channel` may be deleted: not the built-in one, and no active
/// flow of `flows` (the project's live flows) sends through it.
pub fn may_delete(channel: &Channel, flows: &[Flow]) -> Result<(), CatalogError> {
    let in_active_flow = flows.iter().any(|f| {
        f.status == FlowStatus::Active
            && f.steps.iter().any(|s| {
                s.channel_id.as_ref() == Some(&channel.id)
                    || s.fallback_channel_ids.contains(&channel.id)
                    || s.channels.iter().any(|c| {
                        c.channel_id == channel.id || c.fallback_channel_ids.contains(&channel.id)
                    })
            })
    });
    if channel.builtin {
        return Err(CatalogError::BuiltinChannel {
            channel: channel.id,
            status: channel.status(),
            revoke: false,
        });
    }
    if in_active_flow {
        return Err(CatalogError::ChannelInUse {
            channel: channel.id,
            status: channel.status(),
        });
    }
    Ok(())
}

/// Revokes the channel's provider access (the in_app channel has none).
pub fn revoke(channel: &mut Channel) -> Result<(), CatalogError> {
    if channel.provider == "in_app" {
        return Err(CatalogError::BuiltinChannel {
            channel: channel.id,
            status: channel.status(),
            revoke: true,
        });
    }
    channel.revoked = true;
    Ok(())
}

impl From<CatalogError> for Error {
    fn from(e: CatalogError) -> Error {
        let conflict = |resource: &str, id: &Uuid, reason: &str, message: &str| {
            Error::conflict(resource, Some(id.to_string()), reason, message)
        };
        match e {
            CatalogError::FlowArchived {
                flow,
                status_change,
            } => {
                let message = if status_change {
                    "an archived flow cannot change status"
                } else {
                    "an archived flow cannot change"
                };
                conflict("flow", &flow, "invalid_transition", message)
                    .with("current_status", "archived")
                    .with("allowed_transitions", Vec::<String>::new())
            }
            CatalogError::NoChannelStep => Error::field(
                "steps",
                "required",
                "an active flow needs at least one channel step",
            ),
            CatalogError::ChannelGone { channel } => conflict(
                "channel",
                &channel,
                "provider_not_configured",
                "a step's channel no longer exists",
            )
            .with("current_status", "unconfigured"),
            CatalogError::ChannelUnusable { channel, status } => {
                Channel::unusable(&channel, status)
                    .unwrap_or_else(|| Error::internal("an active channel was refused as unusable"))
            }
            CatalogError::BuiltinChannel {
                channel,
                status,
                revoke,
            } => {
                let message = if revoke {
                    "the in_app channel cannot be revoked"
                } else {
                    "the built-in in_app channel cannot be deleted"
                };
                conflict("channel", &channel, "invalid_transition", message)
                    .with("current_status", status.as_str())
            }
            CatalogError::FlowNotActive { flow, status } => {
                conflict("flow", &flow, "flow_not_active", "the flow is not active")
                    .with("current_status", status.as_str())
                    .with("allowed_statuses", vec!["active"])
            }
            CatalogError::PublicUrlRequired { flow, status } => conflict(
                "flow",
                &flow,
                "public_url_required",
                "an active commercial flow needs the server's public URL (--public-url, \
                 HERALD_PUBLIC_URL) for its unsubscribe link",
            )
            .with("current_status", status.as_str()),
            CatalogError::TooManyCategories => Error::field(
                "handle",
                "length",
                format!("a project declares at most {MAX_CATEGORIES} categories"),
            ),
            CatalogError::CategoryInUse { category, flows } => Error::conflict(
                "category",
                Some(category),
                "category_in_use",
                "flows that are not archived belong to this category",
            )
            .with("flows", flows),
            CatalogError::ChannelInUse { channel, status } => conflict(
                "channel",
                &channel,
                "invalid_transition",
                "an active flow uses this channel",
            )
            .with("current_status", status.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Step;

    fn flow(status: FlowStatus, steps: Vec<Step>) -> Flow {
        let now = Timestamp::now();
        Flow {
            id: Uuid::now_v7(),
            handle: "f".into(),
            name: "f".into(),
            description: None,
            status,
            steps,
            critical: false,
            commercial: false,
            categories: vec![],
            created_at: now,
            updated_at: now,
        }
    }

    #[test]
    fn an_active_commercial_flow_needs_a_public_url() {
        let mut f = flow(FlowStatus::Active, vec![]);
        assert!(commercial_sendable(&f, false).is_ok());
        f.commercial = true;
        assert!(matches!(
            commercial_sendable(&f, false),
            Err(CatalogError::PublicUrlRequired { .. })
        ));
        assert!(commercial_sendable(&f, true).is_ok());
        f.status = FlowStatus::Draft;
        assert!(commercial_sendable(&f, false).is_ok());
    }

    #[test]
    fn an_archived_flow_is_final() {
        let mut f = flow(FlowStatus::Archived, vec![]);
        let e = set_status(&mut f, FlowStatus::Active, &[], Timestamp::now()).unwrap_err();
        assert!(matches!(e, CatalogError::FlowArchived { .. }));
        assert!(edit(&mut f, FlowEdit::default(), Timestamp::now()).is_err());
        assert_eq!(f.status, FlowStatus::Archived);
        // the same status is no change, even for an archived flow
        assert!(set_status(&mut f, FlowStatus::Archived, &[], Timestamp::now()).is_ok());
        assert!(allowed_transitions(FlowStatus::Archived).is_empty());
    }

    #[test]
    fn activating_needs_a_channel_step_whose_channel_exists() {
        let mut f = flow(FlowStatus::Draft, vec![]);
        let e = set_status(&mut f, FlowStatus::Active, &[], Timestamp::now()).unwrap_err();
        assert_eq!(e, CatalogError::NoChannelStep);
        let step: Step = serde_json::from_value(serde_json::json!({
            "kind": "channel", "channel_id": Uuid::now_v7(), "template": null, "seconds": null
        }))
        .unwrap();
        let mut f = flow(FlowStatus::Draft, vec![step]);
        let e = set_status(&mut f, FlowStatus::Active, &[], Timestamp::now()).unwrap_err();
        assert!(matches!(e, CatalogError::ChannelGone { .. }));
        assert_eq!(
            f.status,
            FlowStatus::Draft,
            "a refused change leaves the flow"
        );
        // deactivating needs nothing
        let mut f = flow(FlowStatus::Active, vec![]);
        set_status(&mut f, FlowStatus::Draft, &[], Timestamp::now()).unwrap();
        assert_eq!(f.status, FlowStatus::Draft);
    }
}
