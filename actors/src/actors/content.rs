//! The engine's operations on a project's content: partials,
//! layouts and translation catalogs stored, read and deleted, the project's
//! content defaults (`default_locale`, `default_layout`), and the check of a
//! flow's templates against them. Every change bumps the project's
//! `content_version`, which keys the compiled content (`render::content`).
//!
//! The check of a change and its write are two steps, like a category's
//! (`actors::catalog`): two concurrent saves may each pass a check the
//! other would fail (a partial deleted while a flow naming it is saved).
//! A render then reports the missing template as a `template_error`.

use super::engine::Engine;
use super::ops::update_project_audited;
use crate::audit::{redact, Actor, AuditChange};
use crate::error::Validator;
use crate::error::{Error, Result};
use crate::model::{ContentBody, ContentKind, ContentRecord, Flow, Project, Timestamp};
use crate::rules::audit::record;
use crate::rules::content::{self as rules, MAX_INCLUDE_DEPTH};
use crate::storage::{ProjectRef, Storage};
use std::collections::HashMap;
use uuid::Uuid;

/// The partials of `all` as an include graph (handle → what it includes;
/// a source that does not scan includes nothing).
fn graph<'a>(all: impl Iterator<Item = &'a ContentRecord>) -> HashMap<String, Vec<String>> {
    all.filter_map(|r| match &r.body {
        ContentBody::Partial { content } => {
            Some((r.key.clone(), rules::includes(content).unwrap_or_default()))
        }
        _ => None,
    })
    .collect()
}

/// Every template source of a flow's steps.
fn flow_sources(f: &Flow) -> impl Iterator<Item = &String> {
    f.steps
        .iter()
        .filter_map(|s| s.template.as_ref())
        .flat_map(|t| t.parts().into_iter().flatten())
}

/// Bumps the project's content version (and applies `f` to it).
fn bump(s: &dyn Storage, project: &Uuid, f: impl FnOnce(&mut Project) + Send) -> Result<Project> {
    s.update_project(
        project,
        Box::new(move |p| {
            f(p);
            p.content_version += 1;
        }),
    )
}

/// The bounds of a kind: records, bytes per record, and its name.
fn bounds(kind: ContentKind) -> (usize, usize) {
    match kind {
        ContentKind::Partial => (rules::MAX_PARTIALS, rules::MAX_PARTIAL_BYTES),
        ContentKind::Layout => (rules::MAX_LAYOUTS, rules::MAX_LAYOUT_BYTES),
        ContentKind::Translation => (rules::MAX_LOCALES, rules::MAX_CATALOG_BYTES),
    }
}

/// Checks a content record to store in place of its kind and key among
/// `all` (the project's): bounds, sources that compile, stay within their
/// limits without data and include partials that exist, not too deep.
fn check_put(
    all: &[ContentRecord], key: &str, body: &ContentBody, limits: &crate::render::Limits,
) -> Result<()> {
    let mut v = Validator::new();
    let kind = body.kind();
    let (max_records, max_bytes) = bounds(kind);
    let exists = all.iter().any(|r| r.kind() == kind && r.key == key);
    if !exists && all.iter().filter(|r| r.kind() == kind).count() >= max_records {
        v.push(
            "key",
            "length",
            format!(
                "a project has at most {max_records} of these ({})",
                kind.as_str()
            ),
        );
    }
    if body.size() > max_bytes {
        v.push(
            "body",
            "length",
            format!(
                "at most {max_bytes} bytes of templates per {}",
                kind.as_str()
            ),
        );
    }
    if let ContentBody::Translation { messages } = body {
        if messages.len() > rules::MAX_MESSAGES {
            v.push(
                "messages",
                "length",
                format!("at most {} messages per catalog", rules::MAX_MESSAGES),
            );
        }
    }
    v.finish()?;
    let mut v = Validator::new();
    // The partials as they would be after the change.
    let mut g = graph(all.iter().filter(|r| !(r.kind() == kind && r.key == key)));
    if let ContentBody::Partial { content } = body {
        g.insert(
            key.to_string(),
            rules::includes(content).unwrap_or_default(),
        );
    }
    for (path, src) in body.sources() {
        if let Err(e) = crate::render::check(src) {
            v.push(path, "format", format!("template does not compile: {e}"));
        } else if let Err(e) = rules::check_includes(src, &g) {
            v.push(path, "format", e);
        } else if let Err(e) = crate::render::probe(src, limits) {
            v.push(path, "format", format!("template is over its limits: {e}"));
        }
    }
    if kind == ContentKind::Partial && v.is_empty() {
        // A partial others include may now nest them too deep.
        let d = rules::depths(&g);
        if let Some((h, _)) = d.iter().find(|(_, n)| **n > MAX_INCLUDE_DEPTH) {
            v.push(
                "content",
                "format",
                format!("partials/{h} would nest partials more than {MAX_INCLUDE_DEPTH} deep"),
            );
        }
    }
    v.finish()
}

impl Engine {
    /// Stores a content record (a partial, a layout or a catalog) once
    /// checked (`check_put`): the record, and whether it is new.
    /// `<kind>.created` or `<kind>.updated` (`partial.updated`) in the
    /// audit log.
    pub async fn put_content(
        &self, project: Uuid, actor: Actor, key: String, body: ContentBody,
    ) -> Result<(ContentRecord, bool)> {
        let limits = self.template_limits();
        self.run(move |s| {
            let all = s.contents(&project, None)?;
            check_put(&all, &key, &body, &limits)?;
            let now = Timestamp::now();
            let kind = body.kind();
            let before = all.iter().find(|r| r.kind() == kind && r.key == key);
            let r = ContentRecord {
                created_at: before.map_or(now, |b| b.created_at),
                updated_at: now,
                key,
                body,
            };
            let created = s.put_content(&project, &r)?;
            bump(s, &project, |_| {})?;
            let verb = if created { "created" } else { "updated" };
            let mut change = AuditChange::new(&format!("{}.{verb}", kind.as_str()), &r.key)
                .key(&r.key)
                .after(redact::content(&r));
            if let Some(b) = before {
                change = change.before(redact::content(b));
            }
            record(s, &project, &actor, change)?;
            Ok((r, created))
        })
        .await
    }

    /// One content record; 404 when there is none.
    pub async fn content(
        &self, project: Uuid, kind: ContentKind, key: String,
    ) -> Result<ContentRecord> {
        self.run(move |s| {
            s.content(&project, kind, &key)?
                .ok_or_else(|| Error::not_found(kind.as_str(), &key))
        })
        .await
    }

    /// Every content record of a kind, by key.
    pub async fn contents(&self, project: Uuid, kind: ContentKind) -> Result<Vec<ContentRecord>> {
        self.run(move |s| s.contents(&project, Some(kind))).await
    }

    /// Deletes a content record; 404 when there is none, 409
    /// `partial_in_use` / `layout_in_use` while a live flow, a layout, a
    /// partial, a catalog or the project's default names it.
    /// `<kind>.deleted` in the audit log.
    pub async fn delete_content(
        &self, project: Uuid, actor: Actor, kind: ContentKind, key: String,
    ) -> Result<()> {
        self.run(move |s| {
            let Some(gone) = s.content(&project, kind, &key)? else {
                return Err(Error::not_found(kind.as_str(), &key));
            };
            let flows = s.live_flows(&project)?;
            let (flows, content): (Vec<String>, Vec<String>) = match kind {
                ContentKind::Partial => {
                    let names = |src: &String| rules::includes(src).is_ok_and(|i| i.contains(&key));
                    let f = flows
                        .iter()
                        .filter(|f| flow_sources(f).any(names))
                        .map(|f| f.handle.clone())
                        .collect();
                    let c = s
                        .contents(&project, None)?
                        .into_iter()
                        .filter(|r| !(r.kind() == kind && r.key == key))
                        .filter(|r| {
                            r.body
                                .sources()
                                .iter()
                                .any(|(_, src)| names(&src.to_string()))
                        })
                        .map(|r| format!("{}/{}", r.kind().as_str(), r.key))
                        .collect();
                    (f, c)
                }
                ContentKind::Layout => {
                    let f = flows
                        .iter()
                        .filter(|f| {
                            f.steps
                                .iter()
                                .any(|st| st.layout.as_ref().and_then(|l| l.as_ref()) == Some(&key))
                        })
                        .map(|f| f.handle.clone())
                        .collect();
                    let p = s.find_project(ProjectRef::Id(&project))?;
                    let default = p.and_then(|p| p.default_layout) == Some(key.clone());
                    let c = if default {
                        vec!["project/default_layout".to_string()]
                    } else {
                        vec![]
                    };
                    (f, c)
                }
                ContentKind::Translation => (vec![], vec![]),
            };
            if !flows.is_empty() || !content.is_empty() {
                let reason = format!("{}_in_use", kind.as_str());
                return Err(Error::conflict(
                    kind.as_str(),
                    Some(key),
                    &reason,
                    format!(
                        "the {} is still named; change what names it first",
                        kind.as_str()
                    ),
                )
                .with("flows", flows)
                .with("content", content));
            }
            s.remove_content(&project, kind, &key)?;
            bump(s, &project, |_| {})?;
            let change = AuditChange::new(&format!("{}.deleted", kind.as_str()), &key)
                .key(&key)
                .before(redact::content(&gone));
            record(s, &project, &actor, change)
        })
        .await
    }

    /// Sets the project's `default_locale` and `default_layout` (`None`:
    /// kept; `Some(None)`: unset); a layout must exist (422 at
    /// `default_layout`).
    /// `project.updated` in the audit log.
    pub async fn set_content_defaults(
        &self, project: Uuid, actor: Actor, locale: Option<Option<String>>,
        layout: Option<Option<String>>,
    ) -> Result<Project> {
        self.run(move |s| {
            if let Some(Some(h)) = &layout {
                if s.content(&project, ContentKind::Layout, h)?.is_none() {
                    return Err(Error::field(
                        "default_layout",
                        "inclusion",
                        "no layout with this handle in the project",
                    ));
                }
            }
            update_project_audited(
                s,
                &project,
                &actor,
                "project.updated",
                Box::new(move |p| {
                    if let Some(l) = locale {
                        p.default_locale = l;
                    }
                    if let Some(l) = layout {
                        p.default_layout = l;
                    }
                    p.content_version += 1;
                }),
            )
        })
        .await
    }

    /// Checks a flow's template sources (field path, source) against the
    /// project's partials and its steps' layouts (field path, handle): the
    /// fields that name content that does not exist or nests too deep.
    pub async fn check_flow_content(
        &self, project: Uuid, sources: Vec<(String, String)>, layouts: Vec<(String, String)>,
    ) -> Result<Vec<(String, String)>> {
        self.run(move |s| {
            let all = s.contents(&project, None)?;
            let g = graph(all.iter());
            let mut out = vec![];
            for (path, src) in sources {
                if let Err(e) = rules::check_includes(&src, &g) {
                    out.push((path, e));
                }
            }
            for (path, h) in layouts {
                let found = all
                    .iter()
                    .any(|r| r.kind() == ContentKind::Layout && r.key == h);
                if !found {
                    out.push((path, format!("no layout {h} in the project")));
                }
            }
            Ok(out)
        })
        .await
    }
}
