//! The engine's delivery metrics, counted per batch of deliveries written.

use crate::model::{ChannelType, Delivery, DeliveryStatus, Timestamp};
use std::collections::HashMap;

/// Engine metrics of a batch of deliveries as written (final statuses counted,
/// a pending one after an attempt as a retry, a sent one with how long it took
/// from the run's acceptance), recorded once per series instead of once per
/// delivery: each `metrics` macro call builds its labels and looks its series up
/// in the registry, which showed in the fan-out profile. Recorded on `flush` and
/// on drop.
#[derive(Default)]
pub(crate) struct Tally {
    /// (channel type, final status or retry, delivery latency in ms) → count.
    counts: HashMap<(ChannelType, Option<DeliveryStatus>, i64), usize>,
}

impl Tally {
    /// Counts a written delivery: final ones by status (and the latency of sent
    /// ones), retried ones as retries.
    pub(crate) fn add(&mut self, d: &Delivery, now: Timestamp) {
        let key = if d.status.is_final() {
            let ms = if d.status == DeliveryStatus::Sent {
                (now.millis() - d.created_at.millis()).max(0)
            } else {
                0
            };
            (d.channel_type, Some(d.status), ms)
        } else if d.attempts > 0 {
            (d.channel_type, None, 0)
        } else {
            return;
        };
        *self.counts.entry(key).or_default() += 1;
    }

    /// Records the metrics of deliveries just written, at once.
    pub(crate) fn record(ds: &[Delivery], now: Timestamp) {
        let mut tally = Tally::default();
        for d in ds {
            tally.add(d, now);
        }
    }

    pub(crate) fn flush(&mut self) {
        for ((ct, status, ms), n) in self.counts.drain() {
            let ct = ct.as_str();
            match status {
                Some(s) => {
                    metrics::counter!("herald_deliveries_total", "channel_type" => ct, "status" => s.as_str())
                        .increment(n as u64);
                    if s == DeliveryStatus::Sent {
                        metrics::histogram!("herald_flow_run_delivery_seconds", "channel_type" => ct)
                            .record_many(ms as f64 / 1000.0, n);
                    }
                }
                None => {
                    metrics::counter!("herald_delivery_retries_total", "channel_type" => ct)
                        .increment(n as u64);
                }
            }
        }
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        self.flush();
    }
}
