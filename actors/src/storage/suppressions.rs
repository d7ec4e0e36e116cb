//! `SuppressionRepo`: a project's suppressed addresses and the soft bounces
//! counted towards suppressing one. The backend stores and returns facts;
//! what suppresses an address, and how addresses are normalised, is the
//! engine's (`crate::suppression`).

use super::{Page, PageReq};
use crate::error::Result;
use crate::model::{ChannelType, Suppression};
use uuid::Uuid;

/// One address as the suppression list keys it: a channel type and the
/// address normalised (`suppression::normalize`).
pub type AddressKey<'a> = (ChannelType, &'a str);

/// A project's suppression list.
pub trait SuppressionRepo {
    /// Stores `s` unless its address is suppressed already, under the
    /// address's lock: the suppression stored, and true when it is `s`, new.
    fn put_suppression(&self, project: &Uuid, s: Suppression) -> Result<(Suppression, bool)>;
    /// The suppressions of these addresses, in their order (`None`: not
    /// suppressed). A backend behind a network reads them in one round trip.
    fn suppressions_of(
        &self, project: &Uuid, keys: &[AddressKey<'_>],
    ) -> Result<Vec<Option<Suppression>>>;
    /// A page of the list, newest first (of one channel type when given),
    /// paged by the suppressions' ids.
    fn suppressions_page(
        &self, project: &Uuid, ct: Option<ChannelType>, req: &PageReq,
    ) -> Result<Page<Suppression>>;
    /// Removes an address's suppression (and its soft bounces); true when
    /// there was one.
    fn remove_suppression(&self, project: &Uuid, key: AddressKey<'_>) -> Result<bool>;
    /// Records a soft bounce of the address at `at_ms` and forgets those
    /// before `keep_since_ms`: the times kept (the new one included), under
    /// the address's lock.
    fn add_soft_bounce(
        &self, project: &Uuid, key: AddressKey<'_>, at_ms: i64, keep_since_ms: i64,
    ) -> Result<Vec<i64>>;
}
