//! A feed entry as its recipient sees it (`FeedEntry`, borrowed from the
//! record by `Delivery::feed_entry`) and the feed's counts (`FeedMeta`).

use crate::model::{CategoryCounts, Delivery, FeedCounts, Rendered, Timestamp};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use uuid::Uuid;

/// An in_app delivery as its recipient sees it (id = delivery id).
// docs/API.md §11. Borrowed from the record: the live feed and the feed pages
// serialise it without an intermediate JSON tree. Fields in the order a JSON
// object of the same keys would print them.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeedEntry<'a> {
    #[schema(value_type = Option<super::UserView>)]
    pub actor: &'a Value,
    pub archived: bool,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub archived_at: Option<Timestamp>,
    pub clicked: bool,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub clicked_at: Option<Timestamp>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    #[schema(value_type = super::DeliveryData)]
    pub data: &'a Rendered,
    pub flow_id: Uuid,
    pub id: Uuid,
    /// The index in `data.actions` of the action the recipient last pressed.
    pub interacted_action: Option<u8>,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub interacted_at: Option<Timestamp>,
    pub notification_id: Uuid,
    pub read: bool,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub read_at: Option<Timestamp>,
    pub seen: bool,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub seen_at: Option<Timestamp>,
    #[schema(value_type = Option<String>)]
    pub topic: &'a Option<String>,
}

impl Delivery {
    /// The feed entry as the user sees it, serialised straight from the record
    /// (no intermediate JSON tree on the hot paths).
    pub fn feed_entry<'a>(&'a self, actor: &'a Value) -> FeedEntry<'a> {
        FeedEntry {
            actor,
            archived: self.archived_at.is_some(),
            archived_at: self.archived_at,
            clicked: self.clicked_at.is_some(),
            clicked_at: self.clicked_at,
            created_at: self.feed_time(),
            data: &self.data,
            flow_id: self.flow_id,
            id: self.id,
            interacted_action: self.interacted_action,
            interacted_at: self.interacted_at,
            notification_id: self.notification_id,
            read: self.read_at.is_some(),
            read_at: self.read_at,
            seen: self.seen_at.is_some(),
            seen_at: self.seen_at,
            topic: &self.topic,
        }
    }
}

impl FeedCounts {
    pub fn view(&self) -> FeedMeta {
        FeedMeta {
            unread_count: self.unread,
            unseen_count: self.unseen,
            by_category: None,
        }
    }

    /// The counts with those per category, when the project declares any.
    pub fn view_with(&self, by_category: Option<&CategoryCounts>) -> FeedMeta {
        FeedMeta {
            by_category: by_category.map(|m| {
                m.iter()
                    .map(|(k, c)| {
                        let c = CategoryMeta {
                            unread_count: c.unread,
                            unseen_count: c.unseen,
                        };
                        (k.clone(), c)
                    })
                    .collect()
            }),
            ..self.view()
        }
    }
}

/// Counts of the feed, archived entries left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct FeedMeta {
    pub unread_count: u64,
    pub unseen_count: u64,
    /// The same counts per preference category, by handle: every category
    /// the project declares, counting the entries of the flows that name it
    /// now (an entry of a flow in two categories counts in both). Present
    /// when the project declares categories, on the first page of a feed
    /// (no cursor), in the live feed's `hello` and `feed.counts` frames and
    /// in a mark-all answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_category: Option<BTreeMap<String, CategoryMeta>>,
}

/// One category's counts in `FeedMeta::by_category`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct CategoryMeta {
    pub unread_count: u64,
    pub unseen_count: u64,
}
