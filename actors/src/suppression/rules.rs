//! When repeated soft bounces suppress an address: a pure rule over the
//! times of the address's recent soft bounces, so both backends (which only
//! keep the times) decide alike.

/// Soft bounces that suppress an address once this many fall within
/// `SOFT_BOUNCE_WINDOW_MS`.
pub const SOFT_BOUNCE_LIMIT: usize = 3;

/// The window soft bounces are counted over: 7 days.
pub const SOFT_BOUNCE_WINDOW_MS: i64 = 7 * 24 * 3600 * 1000;

/// The earliest soft bounce still counted at `now_ms` (older ones may be
/// forgotten).
pub fn window_start(now_ms: i64) -> i64 {
    now_ms.saturating_sub(SOFT_BOUNCE_WINDOW_MS)
}

/// Whether soft bounces at `times` (milliseconds) suppress their address at
/// `now_ms`: `SOFT_BOUNCE_LIMIT` of them in the last 7 days (a report dated
/// after `now_ms`, a provider's clock ahead of ours, counts as now).
pub fn soft_bounces_suppress(times: &[i64], now_ms: i64) -> bool {
    let from = window_start(now_ms);
    times.iter().filter(|t| **t >= from).count() >= SOFT_BOUNCE_LIMIT
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 24 * 3600 * 1000;

    #[test]
    fn three_in_seven_days_suppress() {
        let now = 100 * DAY;
        assert!(!soft_bounces_suppress(&[], now));
        assert!(!soft_bounces_suppress(&[now - DAY, now], now));
        assert!(soft_bounces_suppress(&[now - 6 * DAY, now - DAY, now], now));
        assert!(soft_bounces_suppress(&[now - 7 * DAY, now - DAY, now], now));
    }

    #[test]
    fn older_bounces_do_not_count() {
        let now = 100 * DAY;
        assert!(!soft_bounces_suppress(
            &[now - 8 * DAY, now - 7 * DAY - 1, now - DAY, now],
            now
        ));
        assert!(soft_bounces_suppress(
            &[now - 8 * DAY, now - 2 * DAY, now - DAY, now],
            now
        ));
    }
}
