//! The engine's operations on a project's suppression list
//! (`crate::suppression`): the list read, an address added by hand or
//! removed, and a provider's report applied to its address. Each is one
//! storage job on the blocking pool.

use super::engine::Engine;
use crate::error::Result;
use crate::feedback::ReportKind;
use crate::model::{ChannelType, Suppression, Timestamp};
use crate::storage::{Page, PageReq};
use uuid::Uuid;

impl Engine {
    /// A page of the project's suppressions, newest first (of one channel
    /// type when given).
    pub async fn list_suppressions(
        &self, project: Uuid, ct: Option<ChannelType>, req: PageReq,
    ) -> Result<Page<Suppression>> {
        self.run(move |s| s.suppressions_page(&project, ct, &req))
            .await
    }

    /// Suppresses an address by hand (reason `manual`): the suppression and
    /// whether it is new (false: the address was suppressed already, and
    /// its suppression is returned as it is). 422 when the channel type is
    /// not email or sms, or the address is not one of its form.
    pub async fn add_suppression(
        &self, project: Uuid, ct: ChannelType, address: String,
    ) -> Result<(Suppression, bool)> {
        self.run(move |s| crate::suppression::add_manual(s, &project, ct, &address))
            .await
    }

    /// Lifts an address's suppression (its soft bounces are forgotten too);
    /// 404 when it is not suppressed.
    pub async fn remove_suppression(
        &self, project: Uuid, ct: ChannelType, address: String,
    ) -> Result<()> {
        self.run(move |s| crate::suppression::remove(s, &project, ct, &address))
            .await
    }

    /// Applies what a provider reported about a message to its address
    /// (`suppression::on_report`).
    pub async fn suppression_report(
        &self, project: Uuid, ct: ChannelType, address: String, kind: ReportKind, at: Timestamp,
    ) -> Result<()> {
        self.run(move |s| crate::suppression::on_report(s, &project, ct, &address, kind, at))
            .await
    }
}
