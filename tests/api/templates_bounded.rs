//! Templates are bounded. A template over its render
//! budget (`--template-fuel`) or output cap (`--template-max-output`) with no
//! data at all is refused when the flow is saved (422 at the field's path); one
//! that goes over with a run's data fails its delivery with `template_error`
//! naming the limit. A run's body, its `data` included, stays within 1 MiB.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

const NESTED: &str = "{% for i in range(100000) %}{% for j in range(10) %}{% endfor %}{% endfor %}";

fn flow_body(template: Value) -> Value {
    json!({"handle": handle("bounded"), "name": "Bounded", "steps": [
        {"type": "channel", "channel_id": "IN_APP", "template": template}]})
}

async fn post_flow(app: &TestApp, template: Value) -> Resp {
    let mut body = flow_body(template);
    body["steps"][0]["channel_id"] = json!(in_app_channel(app).await);
    app.admin(POST, &format!("{A}/flows"))
        .json(&body)
        .go()
        .await
}

#[tokio::test]
async fn templates_over_their_limits_without_data_are_refused_when_saved() {
    let app = TestApp::spawn();
    // a loop that runs out of fuel, in the body
    let r = post_flow(&app, json!({"subject": "Hi", "body": NESTED})).await;
    let d = assert_validation(&r, &[("steps.0.template.body", "format")]);
    assert!(
        d["fields"][0]["message"]
            .as_str()
            .unwrap()
            .contains("template_fuel"),
        "{r}"
    );
    // an output over 256 KiB, in the subject
    let r = post_flow(
        &app,
        json!({"subject": "{{ \"x\" * 300000 }}", "body": "b"}),
    )
    .await;
    let d = assert_validation(&r, &[("steps.0.template.subject", "format")]);
    assert!(
        d["fields"][0]["message"]
            .as_str()
            .unwrap()
            .contains("template_max_output"),
        "{r}"
    );
    // the same through PUT
    let r = post_flow(&app, json!({"body": "fine"})).await;
    let f = r.ok(201);
    let mut steps = flow_body(json!({"body": NESTED}))["steps"].clone();
    steps[0]["channel_id"] = json!(in_app_channel(&app).await);
    let r = app
        .admin(PUT, &format!("{A}/flows/{}", s(&f["id"])))
        .json(&json!({"steps": steps}))
        .go()
        .await;
    assert_validation(&r, &[("steps.0.template.body", "format")]);

    // undefined variables, even where they would fail, do not fail saving;
    // nor do loops and outputs whose size depends on the data
    for body in [
        "{{ data.n + 1 }} {{ recipient.first_name }}",
        "{% for i in range(data.n) %}{{ i }}{% endfor %}",
        "{{ \"x\" * data.big }}",
        "{% for i in range(50) %}<li>{{ i }} {{ recipient.first_name|upper }}</li>{% endfor %}",
    ] {
        let r = post_flow(&app, json!({"subject": "s", "body": body})).await;
        r.ok(201);
    }
}

#[tokio::test]
async fn the_limits_are_configurable_and_a_delivery_over_them_fails_naming_the_limit() {
    let app = TestApp::spawn_with(
        &["--template-max-output", "100"],
        &[("HERALD_TEMPLATE_FUEL", "500")],
    );
    // saving checks with the configured limits
    let r = post_flow(&app, json!({"body": "{{ \"x\" * 101 }}"})).await;
    assert_validation(&r, &[("steps.0.template.body", "format")]);
    let r = post_flow(
        &app,
        json!({"body": "{% for i in range(1000) %}{% endfor %}"}),
    )
    .await;
    assert_validation(&r, &[("steps.0.template.body", "format")]);

    let r = post_flow(
        &app,
        json!({"subject": "{% for i in range(data.n) %}{% endfor %}", "body": "{{ \"x\" * data.len }}"}),
    )
    .await;
    let flow = activate(&app, &s(&r.ok(201)["id"])).await;
    let ext = new_ext("bounded");
    let deliver = |data: Value| {
        let app = &app;
        let flow = &flow;
        let ext = ext.clone();
        async move {
            let (_, n) = run_one(
                app,
                &s(&flow["id"]),
                json!({"recipients": [ext], "data": data}),
            )
            .await;
            deliveries(&n).remove(0)
        }
    };
    // within both limits: sent, rendered in full
    let d = deliver(json!({"n": 10, "len": 100})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["data"]["body"], json!("x".repeat(100)), "{d}");
    // over the output cap
    let d = deliver(json!({"n": 10, "len": 101})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("template_error"), "{d}");
    let msg = s(&d["error"]["message"]);
    assert!(
        msg.contains("template body") && msg.contains("100 bytes (template_max_output)"),
        "{msg}"
    );
    // over the fuel budget
    let d = deliver(json!({"n": 1000, "len": 1})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    let msg = s(&d["error"]["message"]);
    assert!(
        msg.contains("template subject") && msg.contains("500 fuel units (template_fuel)"),
        "{msg}"
    );

    // zero is refused at startup
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(herald_bin());
    cmd.args([
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--template-fuel",
        "0",
        "--data-dir",
    ])
    .arg(tmp.path());
    let out = run_with_timeout(cmd, std::time::Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[tokio::test]
async fn a_run_body_over_one_mib_is_refused_with_its_data() {
    const MIB: usize = 1024 * 1024;
    let app = TestApp::spawn();
    let r = post_flow(&app, json!({"body": "{{ data.blob|length }}"})).await;
    let flow = activate(&app, &s(&r.ok(201)["id"])).await;
    let fid = s(&flow["id"]);
    let ext = new_ext("mib");
    let body = |blob_len: usize| {
        serde_json::to_vec(&json!({"recipients": [ext], "data": {"blob": "y".repeat(blob_len)}}))
            .unwrap()
    };
    // just under 1 MiB: accepted, and the data reaches the template whole
    let ok = body(MIB - 200);
    assert!(ok.len() <= MIB);
    let r = app
        .admin(POST, &format!("{A}/flows/{fid}/run"))
        .header("content-type", "application/json")
        .body(ok)
        .go()
        .await;
    let run = r.ok(202);
    let ns = run_notifications(&app, &s(&run["id"])).await;
    assert_eq!(
        deliveries(&ns[0])[0]["data"]["body"],
        json!((MIB - 200).to_string())
    );
    // over 1 MiB because of its data: the contract's 422 `body` `length`
    let big = body(MIB + 1);
    let r = app
        .admin(POST, &format!("{A}/flows/{fid}/run"))
        .header("content-type", "application/json")
        .body(big)
        .go()
        .await;
    assert_eq!(r.status, 422, "{r}");
    assert_validation(&r, &[("body", "length")]);
    let r = app.admin(GET, &format!("{A}/notifications")).go().await;
    assert_eq!(
        r.page()["items"].as_array().unwrap().len(),
        1,
        "no second run: {r}"
    );
}
