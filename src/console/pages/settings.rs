//! Settings: the project's retention windows, timezone and test clock
//! (switch, advance), and the secret of its preference and unsubscribe
//! links, each changed by the page's script through the Admin API
//! (`PUT /admin/v1/project`, `POST …/clock/advance`,
//! `POST …/rotate_link_secret`); members are on their own page
//! (`/console/settings/members`).

use super::super::render::member_page;
use super::super::Member;
use super::common::failed;
use crate::bodies::Project;
use crate::state::State;
use actix_web::HttpResponse;
use minijinja::context;

const NAV: &str = "/console/settings";

pub async fn page(m: Member, st: State) -> HttpResponse {
    match st.engine.project_with_usage(m.project_id).await {
        Ok((p, bytes)) => member_page(
            &m,
            NAV,
            "pages/settings.html",
            context! { p => Project::with_usage(&p, bytes) },
        ),
        Err(e) => failed(&m, NAV, e),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{body, member};
    use super::*;

    #[test]
    fn settings_show_the_clock_and_fields() {
        let b = body(member_page(
            &member(),
            NAV,
            "pages/settings.html",
            context! { p => serde_json::json!({
                "name": "Acme", "timezone": "Europe/Paris", "clock": "test",
                "clock_time": "2026-01-01T00:00:00.000Z",
                "retention": {"notifications": "90d", "feed": "7d"},
                "usage": {"bytes": 10, "quota_bytes": 100}
            }) },
        ));
        assert!(b.contains("value=\"Europe&#x2f;Paris\""), "{b}");
        assert!(b.contains("id=\"advance\""), "{b}");
        assert!(b.contains("href=\"/console/settings/members\""), "{b}");
    }
}
