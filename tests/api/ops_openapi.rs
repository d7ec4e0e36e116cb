//! docs/API.md §14: `GET /openapi.json` is an OpenAPI 3.1 document of every route
//! (each route and its operation are one declaration, src/routes/endpoint.rs),
//! and `GET /docs`
//! shows it in a browser without anything fetched from elsewhere.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::helpers::*;

/// Whether the server routes `method path` (the path's parameters filled in
/// with placeholders): an unknown route or method is the only 404 whose
/// details are empty (errors.rs); a missing resource names itself.
async fn is_routed(app: &TestApp, method: &str, path: &str) -> bool {
    let filled: String = path
        .split('/')
        .map(|seg| match seg {
            "{id}" | "{channel_id}" if !path.starts_with("/admin/v1/flows/") => {
                "0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b".to_string()
            }
            "{id}" => "no-such-flow".to_string(),
            "{action}" => "seen".to_string(),
            "{external_id}" => "no-such-user".to_string(),
            "{key}" => "no-such-topic".to_string(),
            s => s.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/");
    let m = Method::from_bytes(method.as_bytes()).expect("an HTTP method");
    let rb = if path.starts_with("/admin/") {
        app.admin(m, &filled)
    } else if path.starts_with("/user/") {
        app.user(m, &filled, "routes-probe")
    } else {
        app.request(m, &filled)
    };
    let rb = if ["POST", "PUT", "PATCH", "DELETE"].contains(&method) {
        rb.json(&json!({}))
    } else {
        rb
    };
    let r = rb.go().await;
    !(r.status == 404 && r.json["error"]["details"] == json!({}))
}

async fn fetch_doc(app: &TestApp) -> Value {
    let r = app.request(GET, "/openapi.json").go().await;
    assert_eq!(r.status, 200, "{r}");
    assert!(
        r.header("content-type")
            .unwrap_or_default()
            .starts_with("application/json"),
        "{r}"
    );
    r.json.clone()
}

/// Follows a local `$ref` (`#/components/...`).
fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => doc
            .pointer(r.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("dangling $ref {r}")),
        None => v,
    }
}

#[tokio::test]
async fn openapi_document_is_3_1_and_covers_every_route() {
    let app = TestApp::spawn();
    let doc = fetch_doc(&app).await;
    assert!(
        doc["openapi"].as_str().unwrap_or("").starts_with("3.1"),
        "openapi version: {}",
        doc["openapi"]
    );
    assert_eq!(doc["info"]["title"], json!("Herald"));
    assert!(doc["info"]["version"].is_string());

    // The routes and the document come from the same declarations
    // (src/routes/endpoint.rs), so every route is documented by construction;
    // what is documented must also be served, and what is not is not.
    let paths = doc["paths"].as_object().expect("paths");
    let mut documented = BTreeSet::new();
    for (path, item) in paths {
        assert!(path.starts_with('/'), "full path: {path}");
        for (m, _) in item.as_object().unwrap() {
            if ["get", "put", "post", "delete", "patch"].contains(&m.as_str()) {
                documented.insert((m.to_ascii_uppercase(), path.clone()));
            }
        }
    }
    assert!(documented.len() > 50, "operations: {documented:?}");
    // the User API answers for an existing user only
    app.create_user_as("routes-probe", json!({})).await;
    let mut unrouted = vec![];
    for (m, path) in &documented {
        if !is_routed(&app, m, path).await {
            unrouted.push((m, path));
        }
    }
    assert!(
        unrouted.is_empty(),
        "documented but not routed: {unrouted:?}"
    );
    for (m, path) in [
        ("PATCH", "/admin/v1/users"),
        ("DELETE", "/admin/v1/flows"),
        ("POST", "/healthz"),
        ("PUT", "/user/v1/feed"),
    ] {
        assert!(
            !documented.contains(&(m.to_string(), path.to_string())),
            "{m} {path} is not an operation"
        );
        assert!(
            !is_routed(&app, m, path).await,
            "routed but not documented: {m} {path}"
        );
    }
    // full paths, e.g. the run endpoint
    assert!(paths.contains_key("/admin/v1/flows/{id}/run"));

    // every path parameter is declared, every $ref resolves, every operation has an id
    let mut ids = BTreeSet::new();
    for (path, item) in paths {
        for (m, op) in item.as_object().unwrap() {
            let id = op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{m} {path}: operationId"));
            assert!(ids.insert(id.to_string()), "duplicate operationId {id}");
            let declared: BTreeSet<String> = op["parameters"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .filter(|p| p["in"] == json!("path"))
                        .map(|p| p["name"].as_str().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default();
            let in_path: BTreeSet<String> = path
                .split('/')
                .filter(|s| s.starts_with('{'))
                .map(|s| s.trim_matches(|c| c == '{' || c == '}').to_string())
                .collect();
            assert_eq!(declared, in_path, "{m} {path}: path parameters");
            let responses = op["responses"].as_object().expect("responses");
            assert!(
                // 101: the WebSocket upgrade; 303: the preference page's form post
                responses
                    .keys()
                    .any(|k| k.starts_with('2') || k == "101" || k == "303"),
                "{m} {path}: a success response"
            );
            for (code, r) in responses {
                let r = resolve(&doc, r);
                assert!(r["description"].is_string(), "{m} {path} {code}");
                if let Some(content) = r["content"].as_object() {
                    for c in content.values() {
                        if let Some(s) = c.get("schema") {
                            resolve(&doc, s);
                        }
                    }
                }
            }
            if path.starts_with("/admin/") || path.starts_with("/user/") {
                for code in ["401", "429", "500"] {
                    assert!(responses.contains_key(code), "{m} {path}: {code}");
                }
            }
            if op.get("requestBody").is_some() {
                for code in ["400", "422"] {
                    assert!(responses.contains_key(code), "{m} {path}: {code}");
                }
            }
        }
    }
    let text = doc.to_string();
    let mut at = 0;
    while let Some(i) = text[at..].find("\"$ref\":\"") {
        let start = at + i + 8;
        let end = start + text[start..].find('"').unwrap();
        let r = &text[start..end];
        assert!(
            doc.pointer(r.trim_start_matches('#')).is_some(),
            "dangling $ref {r}"
        );
        at = end;
    }
}

#[tokio::test]
async fn openapi_document_names_the_schemas_and_security_schemes() {
    let app = TestApp::spawn();
    let doc = fetch_doc(&app).await;
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    for name in [
        "User",
        "Channel",
        "Flow",
        "Topic",
        "Subscription",
        "FlowRun",
        "Notification",
        "Delivery",
        "FeedEntry",
        "Preferences",
        "Page",
        "Error",
    ] {
        assert!(schemas.contains_key(name), "schema {name}");
    }
    assert_eq!(
        doc["components"]["schemas"]["Error"]["properties"]["error"]["$ref"],
        json!("#/components/schemas/ErrorBody")
    );

    let schemes = doc["components"]["securitySchemes"]
        .as_object()
        .expect("securitySchemes");
    let headers: BTreeSet<&str> = schemes
        .values()
        .map(|s| {
            assert_eq!(s["type"], json!("apiKey"), "{s}");
            assert_eq!(s["in"], json!("header"), "{s}");
            s["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        headers,
        BTreeSet::from([
            "x-service-api-key",
            "x-service-secret-key",
            "x-service-user-key",
            "x-service-user-id"
        ])
    );
    let header_of = |scheme: &str| schemes[scheme]["name"].as_str().unwrap().to_string();
    // security requirement alternatives of an operation, as sets of header names
    let security = |path: &str, method: &str| -> BTreeSet<BTreeSet<String>> {
        doc["paths"][path][method]["security"]
            .as_array()
            .unwrap_or_else(|| panic!("{method} {path}: security"))
            .iter()
            .map(|req| {
                req.as_object()
                    .unwrap()
                    .keys()
                    .map(|k| header_of(k))
                    .collect()
            })
            .collect()
    };
    let admin = BTreeSet::from([BTreeSet::from([
        "x-service-api-key".to_string(),
        "x-service-secret-key".to_string(),
    ])]);
    let user = BTreeSet::from([
        BTreeSet::from([
            "x-service-api-key".to_string(),
            "x-service-user-key".to_string(),
        ]),
        BTreeSet::from([
            "x-service-api-key".to_string(),
            "x-service-user-id".to_string(),
        ]),
    ]);
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let want = if path.starts_with("/admin/") {
                admin.clone()
            } else if path.starts_with("/user/") {
                user.clone()
            } else {
                BTreeSet::new()
            };
            assert_eq!(security(path, method), want, "{method} {path}");
        }
    }

    // lists: pagination and filters
    let params = |path: &str| -> BTreeSet<String> {
        doc["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| resolve(&doc, p)["name"].as_str().unwrap().to_string())
            .collect()
    };
    for p in ["limit", "after", "before"] {
        assert!(params("/admin/v1/users").contains(p), "{p}");
    }
    for p in [
        "status",
        "topic",
        "created_after",
        "created_before",
        "flow_id",
        "flow_run_id",
        "recipient",
    ] {
        assert!(params("/admin/v1/notifications").contains(p), "{p}");
    }
    for p in [
        "status",
        "channel_type",
        "channel_id",
        "notification_id",
        "recipient",
    ] {
        assert!(params("/admin/v1/deliveries").contains(p), "{p}");
    }
    // a run's 202 and its conflict
    let run = &doc["paths"]["/admin/v1/flows/{id}/run"]["post"];
    assert!(run["responses"]["202"].is_object(), "{run}");
    assert!(run["responses"]["409"].is_object(), "{run}");
    assert!(run["requestBody"].is_object(), "{run}");
}

#[tokio::test]
async fn docs_page_is_served_without_external_urls() {
    let app = TestApp::spawn();
    let r = app.request(GET, "/docs").go().await;
    assert_eq!(r.status, 200, "{r}");
    assert!(
        r.header("content-type")
            .unwrap_or_default()
            .starts_with("text/html"),
        "{r}"
    );
    let html = &r.text;
    assert!(html.contains("openapi.json"), "the page loads the document");
    for needle in ["http://", "https://", "//cdn", "src=\"//", "href=\"//"] {
        assert!(
            !html.contains(needle),
            "/docs must not reference anything outside the binary: found {needle:?}"
        );
    }
    assert!(!html.contains("<script src"), "scripts are inline");
    assert!(
        !html.contains("<link rel=\"stylesheet\""),
        "styles are inline"
    );
    // no credentials needed for either
    let d = app.request(GET, "/openapi.json").go().await;
    assert_eq!(d.status, 200, "{d}");
    assert!(d.header("x-request-id").is_some(), "{d}");
}

/// A channel's `config` is described per provider (a `oneOf` by
/// `provider` in the create body and the response, each alternative fixing
/// `type` and `provider` and naming every field, required ones and secrets),
/// and nothing in the document points at a file the user does not have.
#[tokio::test]
async fn openapi_describes_each_providers_config() {
    let app = TestApp::spawn();
    let doc = fetch_doc(&app).await;
    assert!(
        !doc.to_string().contains("API.md"),
        "the document must not point at API.md"
    );
    let schemas = &doc["components"]["schemas"];
    // provider -> (type, required, secrets), as the README's table says
    let want: &[(&str, &str, &[&str], &[&str])] = &[
        ("in_app", "in_app", &[], &[]),
        ("webhook", "chat", &["url"], &["secret"]),
        ("slack_webhook", "chat", &["url"], &["url"]),
        ("slack", "chat", &["token"], &["token"]),
        ("discord", "chat", &["url"], &["url"]),
        ("teams", "chat", &["url"], &["url"]),
        ("smtp", "email", &["host", "port", "from"], &["password"]),
        ("sendgrid", "email", &["api_key", "from"], &["api_key"]),
        (
            "postmark",
            "email",
            &["server_token", "from"],
            &["server_token", "webhook_password"],
        ),
        (
            "mailgun",
            "email",
            &["api_key", "domain", "from"],
            &["api_key", "webhook_signing_key"],
        ),
        ("resend", "email", &["api_key", "from"], &["api_key"]),
        (
            "ses",
            "email",
            &["access_key_id", "secret_access_key", "region", "from"],
            &["secret_access_key"],
        ),
        (
            "twilio",
            "sms",
            &["account_sid", "auth_token", "from"],
            &["auth_token"],
        ),
        (
            "vonage",
            "sms",
            &["api_key", "api_secret", "from"],
            &["api_secret", "signature_secret"],
        ),
        (
            "messagebird",
            "sms",
            &["access_key", "originator"],
            &["access_key"],
        ),
        ("web_push", "web_push", &["subject"], &["vapid_private_key"]),
        (
            "fcm",
            "mobile_push",
            &["project_id", "service_account"],
            &["service_account"],
        ),
        (
            "apns",
            "mobile_push",
            &["team_id", "key_id", "private_key", "topic"],
            &["private_key"],
        ),
        ("expo", "mobile_push", &[], &["access_token"]),
    ];
    let alternatives = |name: &str, key: &str| -> Vec<Value> {
        schemas[name][key]
            .as_array()
            .unwrap_or_else(|| panic!("{name}.{key}: {}", schemas[name]))
            .clone()
    };
    let input = alternatives("ChannelInput", "oneOf");
    let update = alternatives("ChannelUpdate", "anyOf");
    let output = alternatives("Channel", "oneOf");
    assert_eq!(
        input.len(),
        want.len(),
        "one create alternative per provider"
    );
    assert_eq!(
        output.len(),
        want.len(),
        "one response alternative per provider"
    );
    assert_eq!(
        update.len(),
        want.len(),
        "one update alternative per provider"
    );
    let find = |alts: &[Value], provider: &str| -> Value {
        alts.iter()
            .find(|a| a["properties"]["provider"]["const"] == json!(provider))
            .unwrap_or_else(|| panic!("no alternative with provider const {provider}"))
            .clone()
    };
    for &(provider, ctype, required, secrets) in want {
        let a = find(&input, provider);
        assert_eq!(a["properties"]["type"]["enum"], json!([ctype]), "{a}");
        let config = resolve(&doc, &a["properties"]["config"]).clone();
        let props = config["properties"].as_object().expect("config properties");
        let req: Vec<&str> = config["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(req, required, "{provider}: required config fields");
        for (k, p) in props {
            let secret = p["writeOnly"] == json!(true);
            assert_eq!(secret, secrets.contains(&k.as_str()), "{provider}.{k}: {p}");
            assert!(
                p["description"].is_string() || k == "retry",
                "{provider}.{k}"
            );
        }
        if provider != "in_app" {
            assert!(props.contains_key("retry"), "{provider}: retry");
        }
        for s in secrets {
            assert!(
                props[*s]["description"]
                    .as_str()
                    .unwrap()
                    .contains("********"),
                "{provider}.{s}: says how it reads back"
            );
            // what reads back: the mask
            let out = find(&output, provider);
            assert_eq!(
                out["properties"]["config"]["properties"][*s]["const"],
                json!("********"),
                "{provider}.{s}"
            );
        }
        let up = find(&update, provider);
        for k in props.keys() {
            assert!(
                up["properties"]["config"]["properties"].get(k).is_some(),
                "{provider}: update config names {k}"
            );
        }
    }
    // the webhook secret's format and how to make one are stated
    let hook = resolve(&doc, &find(&input, "webhook")["properties"]["config"]).clone();
    assert!(hook["properties"]["secret"]["pattern"]
        .as_str()
        .unwrap()
        .starts_with("^whsec_"));
    assert!(hook["properties"]["secret"]["description"]
        .as_str()
        .unwrap()
        .contains("openssl rand -base64 32"));
    assert_eq!(hook["properties"]["url"]["format"], json!("uri"));

    // a created channel reads back as its alternative says: only described
    // keys, the secret masked, every required property of the channel present
    let r = app
        .admin(POST, &format!("{A}/channels"))
        .json(&json!({"type": "email", "provider": "smtp", "config": {
            "host": "smtp.example.com", "port": 587, "tls": "starttls", "username": "u",
            "password": "p4ss", "from": "Herald <noreply@example.com>",
            "retry": {"max_attempts": 3}}}))
        .go()
        .await;
    let c = r.ok(201);
    let out = find(&output, "smtp");
    for k in out["required"].as_array().unwrap() {
        assert!(c.get(k.as_str().unwrap()).is_some(), "{k} in {c}");
    }
    let described = out["properties"]["config"]["properties"]
        .as_object()
        .unwrap();
    for (k, v) in c["config"].as_object().unwrap() {
        let p = described
            .get(k)
            .unwrap_or_else(|| panic!("config.{k} is not described"));
        if let Some(mask) = p.get("const") {
            assert_eq!(v, mask, "config.{k}");
        }
    }
    assert_eq!(c["config"]["password"], json!("********"));
}

/// `/docs` showed Markdown backticks literally. The page renders code
/// spans as `<code>`: its `codeSpans` function, run with node, splits a text at
/// backticks, and every description goes through it.
#[tokio::test]
async fn docs_page_renders_code_spans() {
    let app = TestApp::spawn();
    let r = app.request(GET, "/docs").go().await;
    assert_eq!(r.status, 200, "{r}");
    let html = &r.text;
    let start = html.find("// codeSpans:begin").expect("codeSpans in /docs");
    let end = html.find("// codeSpans:end").expect("end of codeSpans");
    let f = &html[start..end];
    let script = format!(
        "{f}\nprocess.stdout.write(JSON.stringify([codeSpans('a `x` b `y`'), codeSpans('no code'), codeSpans('odd ` tick')]));"
    );
    let mut cmd = std::process::Command::new("node");
    cmd.arg("-e").arg(script);
    let out = run_with_timeout(cmd, std::time::Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let got: Value = serde_json::from_str(&out.stdout).expect("JSON from node");
    assert_eq!(
        got,
        json!([
            [{"code": false, "text": "a "}, {"code": true, "text": "x"},
             {"code": false, "text": " b "}, {"code": true, "text": "y"}],
            [{"code": false, "text": "no code"}],
            [{"code": false, "text": "odd ` tick"}]
        ])
    );
    // descriptions, summaries and the intro go through it, not textContent
    for plain in [
        "text: op.description",
        "text: r.description",
        "text: t.description",
        "text: s.description",
        "text: p.description",
        "textContent = doc.info.description",
    ] {
        assert!(!html.contains(plain), "rendered as plain text: {plain}");
    }
}

/// `/docs` showed the body of `POST /admin/v1/flows/{id}/run` as only
/// `recipients` or `topic`: an object with an `anyOf` beside its properties
/// was drawn as the `anyOf` alone. The page's schema text (its `render`, run
/// with node on the served document) shows every property of every schema,
/// then the rule its alternatives add.
#[tokio::test]
async fn docs_page_shows_every_property_beside_a_one_of() {
    let app = TestApp::spawn();
    let doc = fetch_doc(&app).await;
    let r = app.request(GET, "/docs").go().await;
    assert_eq!(r.status, 200, "{r}");
    let html = &r.text;
    let start = html
        .find("// schemaText:begin")
        .expect("schemaText in /docs");
    let end = html.find("// schemaText:end").expect("end of schemaText");
    let f = &html[start..end];
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("openapi.json");
    std::fs::write(&path, doc.to_string()).expect("write the document");
    let script = format!(
        "var doc = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));\n{f}\n\
         var out = {{}};\n\
         Object.keys(doc.components.schemas).forEach(function (n) {{\n\
           out[n] = render({{ $ref: '#/components/schemas/' + n }});\n\
         }});\n\
         out['run body'] = render(doc.paths['/admin/v1/flows/{{id}}/run'].post.requestBody.content['application/json'].schema);\n\
         process.stdout.write(JSON.stringify(out));"
    );
    let mut cmd = std::process::Command::new("node");
    cmd.arg("-e").arg(script).arg(&path);
    let out = run_with_timeout(cmd, std::time::Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let texts: Value = serde_json::from_str(&out.stdout).expect("JSON from node");
    // a top-level line `  name:` or `  name?:` per property
    let shows = |text: &str, k: &str| {
        text.lines()
            .any(|l| l.starts_with(&format!("  {k}:")) || l.starts_with(&format!("  {k}?:")))
    };
    let run = texts["run body"].as_str().unwrap();
    for k in [
        "recipients",
        "topic",
        "actor",
        "data",
        "idempotency_key",
        "send_at",
        "cancellation_key",
    ] {
        assert!(
            shows(run, k),
            "/docs shows the run body without {k}:\n{run}"
        );
    }
    assert!(
        run.contains("at least one of:")
            && run.contains("- recipients given")
            && run.contains("- topic given"),
        "the recipients-or-topic rule:\n{run}"
    );
    let clock = texts["ClockAdvance"].as_str().unwrap();
    for k in ["by", "to"] {
        assert!(shows(clock, k), "ClockAdvance without {k}:\n{clock}");
    }
    assert!(clock.contains("exactly one of:"), "{clock}");
    // and no schema anywhere loses a property that way
    for (name, s) in doc["components"]["schemas"].as_object().unwrap() {
        let Some(props) = s["properties"].as_object() else {
            continue;
        };
        let text = texts[name.as_str()].as_str().unwrap();
        for k in props.keys() {
            assert!(shows(text, k), "/docs shows {name} without {k}:\n{text}");
        }
    }
}

/// The `pattern` of property `prop` of schema `schema`, compiled.
fn pattern(doc: &Value, schema: &str, prop: &str) -> regex::Regex {
    let p = doc["components"]["schemas"][schema]["properties"][prop]["pattern"]
        .as_str()
        .unwrap_or_else(|| panic!("{schema}.{prop} has a pattern"));
    regex::Regex::new(p).expect("the pattern compiles")
}

#[tokio::test]
async fn openapi_patterns_allow_what_the_server_accepts_and_no_more() {
    let app = TestApp::spawn();
    let doc = fetch_doc(&app).await;

    // a throttle step's window: the document and the server agree on each value
    let window = pattern(&doc, "ThrottleStep", "window");
    assert_eq!(
        window.as_str(),
        pattern(&doc, "ClockAdvance", "by").as_str(),
        "one duration pattern"
    );
    for (i, (w, ok)) in [
        ("90s", true),
        ("15m", true),
        ("1h", true),
        ("2d", true),
        ("1h 30m", true),
        ("", false),
        ("0s", false),
        ("soon", false),
        ("99999d", false),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(window.is_match(w), ok, "document on window {w:?}");
        let body = json!({"handle": format!("throttle-{i}"), "name": "Throttle",
            "steps": [{"type": "throttle", "limit": 1, "window": w}]});
        let r = app.admin(POST, "/admin/v1/flows").json(&body).go().await;
        if ok {
            assert_eq!(r.status, 201, "server on window {w:?}: {r}");
        } else {
            assert_validation(&r, &[("steps.0.window", "format")]);
        }
    }

    // retention windows
    let retention = pattern(&doc, "RetentionInput", "feed");
    for (w, ok) in [
        ("15m", true),
        ("2h", true),
        ("90d", true),
        ("0m", false),
        ("15x", false),
        ("", false),
    ] {
        assert_eq!(retention.is_match(w), ok, "document on retention {w:?}");
        let r = app
            .admin(PUT, "/admin/v1/project")
            .json(&json!({"retention": {"feed": w}}))
            .go()
            .await;
        if ok {
            assert_eq!(r.status, 200, "server on retention {w:?}: {r}");
        } else {
            assert_validation(&r, &[("retention.feed", "format")]);
        }
    }

    // an event endpoint's URL: http(s) only, in both bodies
    for schema in ["WebhookEndpointInput", "WebhookEndpointUpdate"] {
        let url = pattern(&doc, schema, "url");
        assert!(url.is_match("https://example.com/events"), "{schema}");
        assert!(!url.is_match("ftp://example.com/events"), "{schema}");
        assert!(!url.is_match(""), "{schema}");
    }
    let r = app
        .admin(POST, "/admin/v1/webhook_endpoints")
        .json(&json!({"url": "ftp://example.com/events"}))
        .go()
        .await;
    assert_validation(&r, &[("url", "format")]);

    // date-times: the pattern beside `format: date-time`
    let at = pattern(&doc, "RunInput", "send_at");
    assert!(at.is_match("2026-11-24T10:00:00Z"));
    assert!(at.is_match("2026-11-24T10:00:00.250+01:00"));
    assert!(!at.is_match(""));
    assert!(!at.is_match("2026-11-24"));
}

#[tokio::test]
async fn openapi_states_the_workflow_rules_a_type_cannot() {
    let app = TestApp::spawn();
    let doc = fetch_doc(&app).await;
    let schemas = &doc["components"]["schemas"];

    // a condition: rules (1 to 20), or an object with exactly `all` or `any`
    for (step, cond) in [
        ("DelayStep", "Condition"),
        ("ThrottleStep", "Condition"),
        ("ChannelStepInput", "StepCondition"),
    ] {
        assert_eq!(
            schemas[step]["properties"]["if"]["oneOf"][0]["$ref"],
            json!(format!("#/components/schemas/{cond}")),
            "{step}.if"
        );
        let forms = schemas[cond]["oneOf"].as_array().expect("oneOf");
        assert_eq!(forms[0]["type"], json!("array"));
        assert_eq!(forms[0]["minItems"], json!(1));
        assert_eq!(forms[0]["maxItems"], json!(20));
        for (form, key) in [(&forms[1], "all"), (&forms[2], "any")] {
            assert_eq!(form["required"], json!([key]), "{cond}");
            assert_eq!(form["additionalProperties"], json!(false), "{cond}");
        }
    }
    // `{}` is none of the forms, and the server refuses it
    let r = app
        .admin(POST, "/admin/v1/flows")
        .json(&json!({"handle": "empty-if", "name": "Empty if",
            "steps": [{"type": "delay", "seconds": 1, "if": {}}]}))
        .go()
        .await;
    assert_validation(&r, &[("steps.0.if", "format")]);

    // the clock moves by a span or to an instant, never both
    let clock = schemas["ClockAdvance"]["oneOf"].as_array().expect("oneOf");
    assert_eq!(clock[0]["required"], json!(["by"]));
    assert_eq!(clock[0]["properties"]["to"]["type"], json!("null"));
    assert_eq!(clock[1]["required"], json!(["to"]));
    assert_eq!(clock[1]["properties"]["by"]["type"], json!("null"));

    // required and referenced where the server needs them
    assert_eq!(
        schemas["CancelInput"]["required"],
        json!(["cancellation_key"])
    );
    assert_eq!(
        schemas["ProjectUpdate"]["properties"]["timezone"]["oneOf"][0]["$ref"],
        json!("#/components/schemas/TimeZone")
    );
    assert_eq!(
        schemas["WebhookEndpointUpdate"]["properties"]["url"]["type"],
        json!("string"),
        "absent keeps the URL; null is no URL"
    );
    assert!(
        doc["paths"]["/admin/v1/erasures/{id}"]["get"]["responses"]["400"].is_object(),
        "a malformed erasure id is a documented 400"
    );
    let r = app.admin(GET, "/admin/v1/erasures/not-a-uuid").go().await;
    assert_error(&r, 400, "bad_request");
}
