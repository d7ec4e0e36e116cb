//! Issue 35: no template can exhaust memory. Every template of the probe that
//! aborted the process is, against the real binary held to a 4 GiB address
//! space (`prlimit`, as docs/SECURITY.md tells operators to set), a 422 when
//! the flow is saved or a `template_error` when a run's data takes it over;
//! the server stays up and its resident memory stays small. The digest that
//! crash-looped a node fails once, with `template_error`.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

/// Over their limits without data: refused at save.
const AT_SAVE: &[&str] = &[
    r#"{{ "%999999999s"|format("x") }}"#,
    r#"{{ "a\nb"|indent(1000000000) }}"#,
    r#"{{ ("x" * 100000)|replace("x", "y" * 100000) }}"#,
    r#"{{ range(50)|join("x" * 100000000) }}"#,
    r#"{{ [1]|slice(100000000)|list|length }}"#,
    r#"{{ ("x" * 100000000)|list|length }}"#,
    r#"{{ [1]|batch(100000000, 0)|length }}"#,
    r#"{% set s = "x" * 1000000 %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{% set s = s ~ s %}{{ s|length }}"#,
];

/// Over their limits with the run's data (`data.n` = 999,999,999): saved,
/// then each delivery fails with `template_error`.
const AT_RUN: &[&str] = &[
    r#"{{ ("%" ~ data.n ~ "s")|format("x") }}"#,
    r#"{{ "a\nb"|indent(data.n) }}"#,
    r#"{{ range(50)|join("x" * data.n) }}"#,
    r#"{{ [1]|batch(data.n, 0)|length }}"#,
    r#"{{ ("x" * (data.n // 10))|list|length }}"#,
];

fn limit_address_space(pid: u32) {
    let st = std::process::Command::new("prlimit")
        .args(["--pid", &pid.to_string(), "--as=4294967296"])
        .status()
        .expect("run prlimit");
    assert!(st.success(), "prlimit: {st}");
}

fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn flow(channel: &str, tag: &str, body: &str) -> Value {
    json!({"handle": handle(tag), "name": "Memory", "steps": [
        {"type": "channel", "channel_id": channel, "template": {"subject": "s", "body": body}}]})
}

#[tokio::test]
async fn templates_that_aborted_the_process_are_refused_or_fail_with_the_server_up() {
    if single_node_only("reads one process's memory") {
        return;
    }
    let app = TestApp::spawn();
    limit_address_space(app.pid());
    let inapp = in_app_channel(&app).await;

    for src in AT_SAVE {
        let r = app
            .admin(POST, &format!("{A}/flows"))
            .json(&flow(&inapp, "save", src))
            .go()
            .await;
        let d = assert_validation(&r, &[("steps.0.template.body", "format")]);
        let msg = d["fields"][0]["message"].as_str().unwrap_or_default();
        assert!(msg.contains("template_"), "{src}: {r}");
    }

    for src in AT_RUN {
        let r = app
            .admin(POST, &format!("{A}/flows"))
            .json(&flow(&inapp, "run", src))
            .go()
            .await;
        let f = r.ok(201);
        activate(&app, &s(&f["id"])).await;
        let ext = new_ext("mem");
        let r = app
            .admin(POST, &format!("{A}/flows/{}/run", s(&f["id"])))
            .json(&json!({"recipients": [ext], "data": {"n": 999_999_999}}))
            .go()
            .await;
        let run = r.ok(202);
        let ns = run_notifications(&app, &s(&run["id"])).await;
        let d = delivery_of(&ns[0], "in_app");
        let d = wait_delivery_final(&app, &s(&d["id"]), 30).await;
        assert_eq!(d["status"], json!("failed"), "{src}: {d}");
        assert_eq!(d["error"]["code"], json!("template_error"), "{src}: {d}");
        assert!(
            d["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("template_"),
            "{src}: {d}"
        );
    }

    // issue 35's crash loop: a digest sized by its batch's data, saved (no
    // batch at save), run, and failed when its batch closes
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("bb"), "name": "bb", "steps": [
            {"type": "batch", "window": "1s"},
            {"type": "channel", "channel_id": inapp, "template": {"body":
                "{{ ('%' ~ (batch.activities[0].data.n if batch else 1) ~ 's')|format('x') }}"}}]}))
        .go()
        .await;
    let f = r.ok(201);
    activate(&app, &s(&f["id"])).await;
    let run = run_flow(
        &app,
        &s(&f["id"]),
        json!({"recipients": ["u1"], "data": {"n": 999_999_999}}),
    )
    .await;
    let ns = run_notifications(&app, &s(&run["id"])).await;
    let d = delivery_of(&ns[0], "in_app");
    let d = wait_delivery_final(&app, &s(&d["id"]), 30).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("template_error"), "{d}");

    // still up, and small: nothing near a 100 MB value was ever built
    let r = app.request(GET, "/healthz").go().await;
    assert_eq!(r.status, 200, "{r}");
    let rss = resident_kib(app.pid());
    assert!(rss < 1024 * 1024, "resident {rss} KiB");
}
