//! Wire views: what the APIs, the live feed and the events show of the
//! stored records, each a type of its own built from a record, so a record
//! can change without changing the API. Only views describe themselves to
//! the OpenAPI document (`ToSchema`); the records (`crate::model`) do not.

mod delivery;
mod feed;
mod notification;
mod run;
mod user;

pub use delivery::{DeliveryData, DeliveryView};
pub use feed::{CategoryMeta, FeedEntry, FeedMeta};
pub use notification::{NotificationView, ProcessingStatus};
pub use run::{ChannelTestAccepted, FlowRunAccepted, PendingStatus};
pub use user::UserView;
