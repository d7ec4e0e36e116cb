//! Overview: the last 24 hours' notifications and deliveries by status and
//! channel type, failures first, and the project's health (deliveries
//! waiting, the oldest of them), from the engine's `overview` read.

use super::super::render::member_page;
use super::super::Member;
use super::common::failed;
use crate::state::State;
use actix_web::HttpResponse;
use herald_engine::actors::OVERVIEW_CAP;
use minijinja::context;

const WINDOW_MS: i64 = 24 * 3_600_000;

pub async fn page(m: Member, st: State) -> HttpResponse {
    match st.engine.overview(m.project_id, WINDOW_MS).await {
        Ok(o) => member_page(
            &m,
            "/console",
            "pages/overview.html",
            context! { o => o, cap => OVERVIEW_CAP },
        ),
        Err(e) => failed(&m, "/console", e),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{body, member};
    use super::*;

    #[test]
    fn counts_show_failures_first_and_say_when_capped() {
        let o = serde_json::json!({
            "since": "2026-01-01T00:00:00.000Z", "notifications": 3,
            "notifications_by_status": [{"key": "processed", "count": 3}],
            "deliveries": 4,
            "deliveries_by_status": [{"key": "failed", "count": 1}, {"key": "sent", "count": 3}],
            "by_channel": [{"channel_type": "email", "total": 4,
                "by_status": [{"key": "failed", "count": 1}, {"key": "sent", "count": 3}]}],
            "capped": true, "pending": 0, "pending_capped": false, "oldest_pending": null
        });
        let b = body(member_page(
            &member(),
            "/console",
            "pages/overview.html",
            context! { o => o, cap => OVERVIEW_CAP },
        ));
        assert!(b.find("failed").unwrap() < b.rfind("sent").unwrap());
        assert!(b.contains("at least"), "{b}");
        assert!(b.contains("No delivery is waiting"), "{b}");
    }
}
