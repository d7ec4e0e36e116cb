//! The PostgreSQL store itself: `herald migrate`, a schema newer than the
//! binary refused, `herald project create --store`, what only the embedded
//! store has (the backup endpoint), a database that becomes unreachable
//! and comes back (through a relay the test cuts), and the event outbox's
//! sweep on the store itself, decision traces written before their compact
//! form, and a deleted project's rows. These run in the `api_pg`
//! binary, where a PostgreSQL server is at hand.

use crate::engine_helpers::{
    active_flow, channel_step, in_app_channel, run_flow, run_notifications, s, wait_run_processed,
    Deadline,
};
use crate::helpers::*;
use serde_json::json;
use std::process::{Command, Stdio};
use std::time::Duration;

/// True (with a note) outside the PostgreSQL run.
fn not_on_postgres() -> bool {
    if !pg_mode() {
        eprintln!("skipped: this test runs in the api_pg binary, on PostgreSQL");
    }
    !pg_mode()
}

fn herald(args: &[&str]) -> CmdOutput {
    let mut cmd = Command::new(herald_bin());
    cmd.args(args)
        .env_remove("HERALD_STORE")
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null());
    run_with_timeout(cmd, Duration::from_secs(60))
}

#[test]
fn migrate_applies_once_then_is_a_no_op() {
    if not_on_postgres() {
        return;
    }
    let url = pg_new_database();
    let first = herald(&["migrate", "--store", &url]);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    // every migration file of the source tree, by its number
    let mut versions: Vec<i64> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/actors/migrations"))
            .unwrap()
            .filter_map(|e| {
                let name = e.ok()?.file_name().to_string_lossy().into_owned();
                name.split('_').next()?.parse().ok()
            })
            .collect();
    versions.sort();
    let want = format!(
        "applied migrations {versions:?}; schema is at version {}",
        versions.last().unwrap()
    );
    assert!(first.stdout.contains(&want), "{want}: {first:?}");
    let again = herald(&["migrate", "--store", &url]);
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    assert!(again.stdout.contains("schema is current"), "{again:?}");
    // a directory is not a database to migrate
    let dir = herald(&["migrate", "--store", "/tmp/herald-data"]);
    assert_eq!(dir.status.code(), Some(1), "{dir:?}");
    assert!(dir.stderr.contains("PostgreSQL URL"), "{dir:?}");
    pg_drop_database(&url);
}

#[test]
fn a_schema_newer_than_the_binary_is_refused() {
    if not_on_postgres() {
        return;
    }
    let url = pg_new_database();
    let m = herald(&["migrate", "--store", &url]);
    assert_eq!(m.status.code(), Some(0), "{m:?}");
    pg_exec(
        &url,
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (99990101000000, 'from a newer Herald', true, '\\x00', 0)",
    )
    .unwrap();
    let serve = herald(&["serve", "--store", &url, "--bind", "127.0.0.1:0"]);
    assert_eq!(serve.status.code(), Some(1), "{serve:?}");
    assert!(
        serve.stderr.contains("newer than this Herald knows"),
        "{serve:?}"
    );
    assert!(!serve.stdout.contains("listening on"), "{serve:?}");
    let migrate = herald(&["migrate", "--store", &url]);
    assert_eq!(migrate.status.code(), Some(1), "{migrate:?}");
    assert!(migrate.stderr.contains("newer than this Herald knows"));
    pg_drop_database(&url);
}

#[tokio::test]
async fn a_project_created_on_the_database_is_served() {
    if not_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // the database of this directory (made now), used by the command and the server
    let url = pg_url_for(dir.path());
    let out = herald(&["project", "create", "acme", "--store", &url]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let keys = printed_keys(&out.stdout.lines().map(str::to_string).collect::<Vec<_>>())
        .expect("the keys of the new project");
    let app = spawn_with_dir(dir, &Keys::random(), &[]);
    let r = app
        .admin_with(&keys, PUT, &format!("{A}/users/{}", new_ext("u")))
        .json(&json!({"first_name": "Ada"}))
        .go()
        .await;
    assert_eq!(r.status, 201, "{r:?}");
    // taken names are refused by the database as by the embedded store
    let again = herald(&["project", "create", "acme", "--store", &url]);
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    assert!(again.stderr.contains("already exists"), "{again:?}");
}

#[tokio::test]
async fn the_backup_endpoint_points_to_pg_dump() {
    if not_on_postgres() {
        return;
    }
    let operator = format!("op_{}", random_hex());
    let app = TestApp::spawn_with(&[], &[("HERALD_OPERATOR_TOKEN", &operator)]);
    let r = app
        .request(GET, "/ops/v1/backup")
        .header("x-herald-ops-token", &operator)
        .go()
        .await;
    let details = assert_error(&r, 400, "bad_request");
    assert_eq!(details["reason"], json!("backend"), "{r}");
    let message = r.json["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("pg_dump"), "{r}");
}

/// A TCP relay to the test server's PostgreSQL that can be cut (every
/// relayed connection closed, new ones refused) and restored.
struct Relay {
    port: u16,
    up: std::sync::Arc<tokio::sync::watch::Sender<bool>>,
}

impl Relay {
    async fn start(target: String) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, _) = tokio::sync::watch::channel(true);
        let up = std::sync::Arc::new(tx);
        let up2 = up.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if !*up2.borrow() {
                    continue; // refused: dropped at once
                }
                let mut down = up2.subscribe();
                let target = target.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::TcpStream::connect(&target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = down.wait_for(|up| !*up) => {}
                    }
                });
            }
        });
        Relay { port, up }
    }

    fn set(&self, up: bool) {
        self.up.send_replace(up);
    }
}

// multi-threaded: the relay's tasks run while the server start blocks a thread
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_database_answers_503_and_recovers_by_itself() {
    if not_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = pg_url_for(dir.path());
    let server = pg_server();
    let hostport = server
        .rsplit('@')
        .next()
        .unwrap()
        .trim_start_matches("postgres://")
        .to_string();
    let relay = Relay::start(hostport.clone()).await;
    let relayed = url.replace(&hostport, &format!("127.0.0.1:{}", relay.port));
    let keys = Keys::random();
    let app = TestApp::start(ServeOptions {
        data_dir: dir.path(),
        bootstrap: Some(&keys),
        args: &[],
        env: &[("HERALD_STORE", &relayed)],
        default_flags: true,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let ext = new_ext("pg-down");
    app.create_user_as(&ext, json!({"first_name": "Ada"})).await;
    assert_eq!(app.request(GET, "/readyz").go().await.status, 200);

    relay.set(false);
    let d = Deadline::new("/readyz to answer 503 with the database cut off", 30);
    loop {
        let r = app.request(GET, "/readyz").go().await;
        if r.status == 503 {
            break;
        }
        d.tick(format!("/readyz {}", r.status)).await;
    }
    // a request that needs the database: 503, not a hang nor a 500
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&ext)))
        .go()
        .await;
    assert_error(&r, 503, "service_unavailable");

    relay.set(true);
    let d = Deadline::new("the server to answer again once the database is back", 30);
    loop {
        let r = app
            .admin(GET, &format!("{A}/users/{}", enc(&ext)))
            .go()
            .await;
        if r.status == 200 {
            assert_eq!(r.json["first_name"], json!("Ada"), "{r}");
            break;
        }
        d.tick(format!("GET user {}", r.status)).await;
    }
    // Readiness follows at its next probe of the database (once a second):
    // a request can get through before it.
    let d = Deadline::new("/readyz to answer 200 once the database is back", 30);
    loop {
        let r = app.request(GET, "/readyz").go().await;
        if r.status == 200 {
            break;
        }
        d.tick(format!("/readyz {}", r.status)).await;
    }
}

/// The event outbox on the store itself: an outbox row of an endpoint that
/// no longer exists (an event staged while its endpoint was being deleted)
/// is never due and is swept, the live endpoint's row stays due, and a
/// deleted endpoint takes its outbox along. Rows are put in with SQL, as
/// the change that stages an event cannot be paused between its read of
/// the endpoints and its commit.
#[test]
fn the_event_sweep_removes_outbox_rows_of_deleted_endpoints() {
    use herald_engine::backend::PgStore;
    use herald_engine::events::WebhookEndpoint;
    use herald_engine::model::Timestamp;
    use herald_engine::storage::{
        EventRepo, ProjectRef, ProjectRepo, RetentionRepo, Storage, Sweep,
    };
    if not_on_postgres() {
        return;
    }
    let url = pg_new_database();
    let store = PgStore::open(&url).unwrap();
    store.create_project("sweep", None).unwrap();
    let p = store
        .find_project(ProjectRef::Name("sweep"))
        .unwrap()
        .unwrap()
        .id;
    let now = Timestamp::now();
    let (ep, _) = (&store as &dyn Storage)
        .create_event_endpoint(
            &p,
            WebhookEndpoint {
                id: uuid::Uuid::now_v7(),
                url: "https://example.com/events".into(),
                event_types: None,
                enabled: true,
                disabled_reason: None,
                created_at: now,
                updated_at: now,
            },
        )
        .unwrap();
    let gone = uuid::Uuid::now_v7();
    let row = |endpoint: &uuid::Uuid, seq: u32| {
        format!(
            "INSERT INTO outbox (project, endpoint, seq, id, event_type, resource, body, attempts, first_ms, due_ms)
             VALUES ('{p}', '{endpoint}', {seq}, gen_random_uuid(), 'delivery.sent', gen_random_uuid(), '{{}}', 0, NULL, 0);"
        )
    };
    pg_exec(&url, &(row(&ep.id, 1) + &row(&gone, 2))).unwrap();
    let later = now.millis() + 1;
    let due = store.due_events(later, 10, &[]).unwrap();
    assert_eq!(due.len(), 1, "{due:?}");
    assert_eq!(due[0].endpoint, ep.id);
    assert_eq!(
        store.sweep(Sweep::EventLogs { before_ms: 0 }, 100).unwrap(),
        1
    );
    assert_eq!(store.due_events(later, 10, &[]).unwrap().len(), 1);
    assert_eq!(
        store.sweep(Sweep::EventLogs { before_ms: 0 }, 100).unwrap(),
        0
    );
    store.delete_event_endpoint(&p, &ep.id).unwrap();
    assert!(store.due_events(later, 10, &[]).unwrap().is_empty());
    assert_eq!(
        store.sweep(Sweep::EventLogs { before_ms: 0 }, 100).unwrap(),
        0,
        "nothing left over"
    );
    store.close();
    drop(store);
    pg_drop_database(&url);
}

/// Trace parts written as JSON (before schema version 5) are read with the
/// compact ones, in order; deleting a project deletes its rows from every
/// table, also from those without a foreign key to `projects`.
#[tokio::test]
async fn json_trace_parts_are_read_and_a_deleted_projects_rows_are_gone() {
    if not_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = pg_url_for(dir.path());
    let app = spawn_with_dir(dir, &Keys::random(), &[]);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(&app, "pg-del", json!([channel_step(&inapp, None, "Hi")])).await;
    let exts: Vec<String> = (0..3).map(|_| new_ext("del")).collect();
    for e in &exts {
        app.create_user_as(e, json!({})).await;
    }
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": exts})).await;
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    let nid = s(&run_notifications(&app, &s(&run["id"])).await[0]["id"]);
    let path = format!("{A}/notifications/{nid}/trace");
    let before = app.admin(GET, &path).go().await.ok(200);
    let n = before["entries"].as_array().unwrap().len();
    assert!(n >= 4, "{before}");
    let parts = pg_query(
        &url,
        &[format!(
            "SELECT count(*)::text FROM trace WHERE notification_id = '{nid}' AND part IS NOT NULL AND entries IS NULL"
        )],
    )
    .unwrap();
    assert_eq!(parts, ["1"], "the run's part is in the compact form");
    // a part as an earlier Herald wrote it: JSON entries, read after the first
    let old = json!([{"at": "2026-01-02T03:04:05.678Z", "code": "attempt",
                      "args": {"step": 0, "status": "sent", "note": "written as JSON"}}]);
    pg_exec(
        &url,
        &format!(
            "INSERT INTO trace (project, notification_id, entries)
             SELECT project, id, '{old}'::jsonb FROM notifications WHERE id = '{nid}'"
        ),
    )
    .unwrap();
    let after = app.admin(GET, &path).go().await.ok(200);
    let entries = after["entries"].as_array().unwrap();
    assert_eq!(entries.len(), n + 1, "{after}");
    assert_eq!(entries[..n], before["entries"].as_array().unwrap()[..]);
    assert_eq!(entries[n]["code"], json!("attempt"), "{after}");
    assert_eq!(
        entries[n]["args"]["note"],
        json!("written as JSON"),
        "{after}"
    );
    // a row with neither form, or both, is refused by the schema
    let both = pg_exec(
        &url,
        &format!(
            "INSERT INTO trace (project, notification_id, entries, part)
             SELECT project, id, '[]'::jsonb, '\\x02'::bytea FROM notifications WHERE id = '{nid}'"
        ),
    );
    assert!(both.unwrap_err().contains("trace_one_form"));

    // every table with a `project` column holds none of the deleted one's rows
    let project: Vec<String> = pg_query(&url, &["SELECT id::text FROM projects".into()]).unwrap();
    assert_eq!(project.len(), 1);
    let tables = pg_query(
        &url,
        &["SELECT table_name::text FROM information_schema.columns
           WHERE column_name = 'project' AND table_schema = 'public' ORDER BY 1"
            .into()],
    )
    .unwrap();
    let count = |table: &str| {
        pg_query(
            &url,
            &[format!(
                "SELECT count(*)::text FROM {table} WHERE project = '{}'",
                project[0]
            )],
        )
        .unwrap()[0]
            .parse::<u64>()
            .unwrap()
    };
    for t in [
        "notifications",
        "deliveries",
        "trace",
        "feed",
        "feed_state",
        "feed_events",
    ] {
        assert!(tables.iter().any(|x| x == t), "{t} in {tables:?}");
        assert!(count(t) > 0, "{t} holds the run's rows");
    }
    let out = herald(&["project", "delete", "default", "--yes", "--store", &url]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for t in &tables {
        assert_eq!(count(t), 0, "rows of the deleted project left in {t}");
    }
}

/// The notifications of `run` as the Admin API lists them (`flow_id` and
/// `status` filters, as the console's Messages page uses them).
async fn listed(app: &TestApp, query: &[(&str, &str)]) -> Vec<String> {
    crate::engine_helpers::list_all(app, &format!("{A}/notifications"), query)
        .await
        .iter()
        .map(|n| s(&n["id"]))
        .collect()
}

/// An app on a database of its own, found again by a restart on `dir`:
/// the app, the database's URL and the id of its project's in-app channel.
async fn spawn_on_own_database(dir: &std::path::Path, keys: &Keys) -> (TestApp, String, String) {
    let url = pg_url_for(dir);
    let app = TestApp::spawn_on(dir, keys);
    let inapp = in_app_channel(&app).await;
    (app, url, inapp)
}

/// `n` new users, their external ids starting with `prefix`.
async fn new_users(app: &TestApp, prefix: &str, n: usize) -> Vec<String> {
    let exts: Vec<String> = (0..n).map(|_| new_ext(prefix)).collect();
    for e in &exts {
        app.create_user_as(e, json!({})).await;
    }
    exts
}

#[tokio::test]
async fn notifications_written_as_json_are_migrated_read_and_rewritten_compact() {
    if not_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let (mut app, url, inapp) = spawn_on_own_database(dir.path(), &keys).await;
    let now = active_flow(&app, "pg-now", json!([channel_step(&inapp, None, "Hi")])).await;
    let later = active_flow(
        &app,
        "pg-later",
        json!([
            crate::engine_helpers::delay_step(8),
            channel_step(&inapp, None, "Later")
        ]),
    )
    .await;
    let exts = new_users(&app, "mig", 3).await;
    let done = run_flow(&app, &s(&now["id"]), json!({"recipients": exts})).await;
    wait_run_processed(&app, &s(&done["id"]), 30).await;
    // one notification still pending: its step comes due after the restart
    let pending = run_flow(&app, &s(&later["id"]), json!({"recipients": [exts[0]]})).await;
    let pending_n = s(&run_notifications(&app, &s(&pending["id"])).await[0]["id"]);
    // rows of `table` in the compact form, then in the JSON form
    let forms_of = |url: &str, table: &str| {
        pg_query(
            url,
            &[format!(
                "SELECT count(*) FILTER (WHERE body IS NOT NULL AND doc IS NULL)::text || ' '
                     || count(*) FILTER (WHERE doc IS NOT NULL AND body IS NULL)::text
                 FROM {table}"
            )],
        )
        .unwrap()
        .remove(0)
    };
    let forms = |url: &str| forms_of(url, "notifications");
    assert_eq!(forms(&url), "4 0", "written in the compact form");
    app.stop();

    // The database as the schema before the compact form held it: every
    // notification and delivery a JSON document (as the records' serde
    // form, which was how it was written), with a time and a body of its
    // own, to tell they were read from there; no `body` or `flow_id`
    // columns, the flow index on the document, and version 16 not applied.
    let at = "2026-01-02T03:04:05.678Z";
    let mut sql = String::from(
        "ALTER TABLE notifications DROP CONSTRAINT notifications_one_form;
         ALTER TABLE deliveries DROP CONSTRAINT deliveries_one_form;",
    );
    for (table, edit) in [("notifications", "created_at"), ("deliveries", "data")] {
        let rows = pg_query(
            &url,
            &[format!(
                "SELECT id::text || ' ' || encode(body, 'hex') FROM {table}"
            )],
        )
        .unwrap();
        for row in rows {
            let (id, hex) = row.split_once(' ').unwrap();
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            assert_eq!(bytes[0], 1, "the compact form's version byte");
            let mut doc = if table == "notifications" {
                let n: herald_engine::model::Notification =
                    rmp_serde::from_slice(&bytes[1..]).unwrap();
                serde_json::to_value(&n).unwrap()
            } else {
                let d: herald_engine::model::Delivery = rmp_serde::from_slice(&bytes[1..]).unwrap();
                serde_json::to_value(&d).unwrap()
            };
            if edit == "created_at" {
                doc["created_at"] = json!(at);
            } else {
                doc["data"]["body"] = json!("read from JSON");
            }
            let doc = doc.to_string().replace('\'', "''");
            sql +=
                &format!("UPDATE {table} SET body = NULL, doc = '{doc}'::jsonb WHERE id = '{id}';");
        }
    }
    sql += "ALTER TABLE notifications DROP COLUMN body, DROP COLUMN flow_id;
            ALTER TABLE deliveries DROP COLUMN body, DROP COLUMN flow_id;
            CREATE INDEX notifications_by_flow ON notifications (project, (doc->>'flow_id'), id);
            DROP INDEX notifications_by_topic;
            CREATE INDEX notifications_by_topic ON notifications (project, topic, id);
            DELETE FROM _sqlx_migrations WHERE version = 16;";
    pg_exec(&url, &sql).unwrap();
    let m = herald(&["migrate", "--store", &url]);
    assert_eq!(m.status.code(), Some(0), "{m:?}");
    assert!(m.stdout.contains("applied migrations [16]"), "{m:?}");
    assert_eq!(
        forms(&url),
        "0 4",
        "the migration leaves the documents as they are"
    );

    let app = TestApp::spawn_on(dir.path(), &keys);
    let ids: Vec<String> = run_notifications(&app, &s(&done["id"]))
        .await
        .iter()
        .map(|n| s(&n["id"]))
        .collect();
    assert_eq!(ids.len(), 3);
    let one = app
        .admin(GET, &format!("{A}/notifications/{}", ids[0]))
        .go()
        .await
        .ok(200);
    assert!(
        s(&one["created_at"]).starts_with("2026-01-02T03:04:05"),
        "read from the JSON document: {one}"
    );
    let d = crate::engine_helpers::delivery_of(&one, "in_app");
    assert_eq!(d["data"]["body"], json!("read from JSON"), "{one}");
    // the feed reads entries of either form, and filters by flow on both
    // (the column, else the document's)
    let feed = |flow: String| {
        let app = &app;
        let ext = exts[1].clone();
        async move {
            let r = app
                .user(GET, &format!("{U}/feed"), &ext)
                .query(&[("flow", flow)])
                .go()
                .await;
            r.page()["items"].as_array().unwrap().clone()
        }
    };
    let items = feed(s(&now["id"])).await;
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(
        items[0]["data"]["body"],
        json!("read from JSON"),
        "{items:?}"
    );
    assert!(feed(s(&later["id"])).await.is_empty());
    // the flow filter finds rows of either form (the column, else the
    // document's flow, one expression the migration indexed)
    let mut by_flow = listed(&app, &[("flow_id", &s(&now["id"]))]).await;
    by_flow.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(by_flow, want);
    let later_ones = listed(&app, &[("flow_id", &s(&later["id"]))]).await;
    assert_eq!(later_ones, std::slice::from_ref(&pending_n));
    // a new run's notifications are compact and listed beside the old
    let again = run_flow(&app, &s(&now["id"]), json!({"recipients": [exts[1]]})).await;
    wait_run_processed(&app, &s(&again["id"]), 30).await;
    assert_eq!(listed(&app, &[("flow_id", &s(&now["id"]))]).await.len(), 4);
    let items = feed(s(&now["id"])).await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(
        items[0]["data"]["body"],
        json!("Hi"),
        "the new one first: {items:?}"
    );
    // the pending one is processed when its step comes due, and rewritten
    // in the compact form then
    let d = Deadline::new("the delayed notification processed", 30);
    loop {
        let n = app
            .admin(GET, &format!("{A}/notifications/{pending_n}"))
            .go()
            .await
            .ok(200);
        if n["processed"] == json!(true) || n["status"] == json!("processed") {
            break;
        }
        assert!(!d.expired(), "{n}");
        d.tick(&n).await;
    }
    assert_eq!(forms(&url), "2 3");
    // the new run's, and the delayed one's (rewritten when sent)
    assert_eq!(forms_of(&url, "deliveries"), "2 3");
    let still_json = pg_query(
        &url,
        &[format!(
            "SELECT (doc IS NULL)::text FROM notifications WHERE id = '{pending_n}'"
        )],
    )
    .unwrap();
    assert_eq!(still_json, ["true"], "rewritten compact when processed");
    // a row with both forms, or neither, is refused by the schema
    let both = pg_exec(
        &url,
        &format!("UPDATE notifications SET doc = '{{}}'::jsonb WHERE id = '{pending_n}'"),
    );
    assert!(both.unwrap_err().contains("notifications_one_form"));
}

/// A settle rewrites a notification's row only when its record changes (it
/// became processed): a notification whose first step was settled and whose
/// second waits keeps the row its run wrote, as the waiting delivery does.
#[tokio::test]
async fn a_settle_leaves_a_notification_row_alone_until_it_is_processed() {
    if not_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (app, url, inapp) = spawn_on_own_database(dir.path(), &Keys::random()).await;
    let flow = active_flow(
        &app,
        "pg-two-steps",
        json!([
            // (an in-app step due at once is sent in the run's own
            // transaction: a delay puts the first through a settle)
            crate::engine_helpers::delay_step(1),
            channel_step(&inapp, None, "Now"),
            crate::engine_helpers::delay_step(4),
            channel_step(&inapp, None, "Later")
        ]),
    )
    .await;
    let ext = new_users(&app, "settle-row", 1).await;
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": ext})).await;
    let nid = s(&run_notifications(&app, &s(&run["id"])).await[0]["id"]);
    // the transaction that last wrote each row
    let xmins = || {
        pg_query(
            &url,
            &[format!(
                "SELECT 'n ' || xmin::text FROM notifications WHERE id = '{nid}'
                 UNION ALL
                 SELECT 'd ' || status || ' ' || xmin::text FROM deliveries
                 WHERE notification_id = '{nid}'"
            )],
        )
        .unwrap()
    };
    let d = Deadline::new("the first step sent", 30);
    let first_sent = loop {
        let n = app
            .admin(GET, &format!("{A}/notifications/{nid}"))
            .go()
            .await
            .ok(200);
        let ds = crate::engine_helpers::deliveries(&n);
        let sent: Vec<_> = ds.iter().filter(|d| d["status"] == json!("sent")).collect();
        if sent.len() == 1 && ds.len() == 2 {
            assert_eq!(n["status"], json!("pending"), "{n}");
            break n;
        }
        assert!(!d.expired(), "{n}");
        d.tick(&n).await;
    };
    let rows = xmins();
    let n_xmin = rows.iter().find_map(|r| r.strip_prefix("n ")).unwrap();
    // each delivery's row by its status: (status, xmin)
    let d_xmins: Vec<(&str, &str)> = rows
        .iter()
        .filter_map(|r| r.strip_prefix("d "))
        .map(|r| r.split_once(' ').unwrap())
        .collect();
    let xmin_of = |status: &str| {
        let found: Vec<&str> = d_xmins
            .iter()
            .filter(|d| d.0 == status)
            .map(|d| d.1)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "one {status} delivery: {rows:?} {first_sent}"
        );
        found[0]
    };
    let (sent, waiting) = (xmin_of("sent"), xmin_of("pending"));
    assert_ne!(
        n_xmin, sent,
        "the settle of the first step did not rewrite the notification: {rows:?}"
    );
    assert_eq!(
        n_xmin, waiting,
        "the notification's row is still the one written with its waiting delivery: {rows:?}"
    );
    // when its last step is sent it becomes processed, and its row is rewritten
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    let rows = xmins();
    let last = rows.iter().find_map(|r| r.strip_prefix("n ")).unwrap();
    assert!(
        last != n_xmin && last != sent,
        "rewritten when processed: {rows:?}"
    );
}

/// Migration 17 on a database holding data: a notification's deliveries
/// are read by their key range, and go with it, without the index and
/// foreign key the schema before had.
#[tokio::test]
async fn deliveries_read_by_key_range_after_migrating_a_database_holding_data() {
    if not_on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let (mut app, url, inapp) = spawn_on_own_database(dir.path(), &keys).await;
    let flow = active_flow(
        &app,
        "pg-range",
        json!([
            channel_step(&inapp, None, "Now"),
            crate::engine_helpers::delay_step(6),
            channel_step(&inapp, None, "Later")
        ]),
    )
    .await;
    let exts = new_users(&app, "range", 3).await;
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": exts})).await;
    // by recipient, in the order of `exts`
    let ns = run_notifications(&app, &s(&run["id"])).await;
    let ids: Vec<String> = exts
        .iter()
        .filter_map(|e| {
            ns.iter()
                .find(|n| n["recipient"]["external_id"] == json!(e))
                .map(|n| s(&n["id"]))
        })
        .collect();
    assert_eq!(ids.len(), 3);
    app.stop();
    // the schema as version 16 left it
    pg_exec(
        &url,
        "DROP FUNCTION deliveries_from(uuid);
         CREATE INDEX deliveries_by_notification ON deliveries (project, notification_id);
         CREATE INDEX deliveries_pending ON deliveries (project, notification_id) WHERE status = 'pending';
         ALTER TABLE deliveries ADD CONSTRAINT deliveries_project_notification_id_fkey
           FOREIGN KEY (project, notification_id) REFERENCES notifications (project, id) ON DELETE CASCADE;
         DELETE FROM _sqlx_migrations WHERE version = 17;",
    )
    .unwrap();
    let m = herald(&["migrate", "--store", &url]);
    assert_eq!(m.status.code(), Some(0), "{m:?}");
    assert!(m.stdout.contains("applied migrations [17]"), "{m:?}");
    let left = pg_query(
        &url,
        &["SELECT count(*)::text FROM pg_indexes WHERE indexname IN
             ('deliveries_by_notification', 'deliveries_pending')"
            .into()],
    )
    .unwrap();
    assert_eq!(left, ["0"]);

    // each notification's two deliveries, by the API and by the settle of
    // the delayed step (which loads them by their range)
    let app = TestApp::spawn_on(dir.path(), &keys);
    for id in &ids {
        let n = app
            .admin(GET, &format!("{A}/notifications/{id}"))
            .go()
            .await
            .ok(200);
        assert_eq!(crate::engine_helpers::deliveries(&n).len(), 2, "{n}");
        let listed = app
            .admin(GET, &format!("{A}/deliveries"))
            .query(&[("notification_id", id.as_str())])
            .go()
            .await
            .ok(200);
        assert_eq!(listed["items"].as_array().unwrap().len(), 2, "{listed}");
    }
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    let n = app
        .admin(GET, &format!("{A}/notifications/{}", ids[1]))
        .go()
        .await
        .ok(200);
    let ds = crate::engine_helpers::deliveries(&n);
    assert!(ds.iter().all(|d| d["status"] == json!("sent")), "{n}");
    // an erased user's notifications take their deliveries, and only theirs
    let r = app
        .admin(DELETE, &format!("{A}/users/{}", exts[0]))
        .query(&[("erase", "true")])
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    let count = |id: &str| {
        pg_query(
            &url,
            &[format!(
                "SELECT count(*)::text FROM deliveries WHERE notification_id = '{id}'"
            )],
        )
        .unwrap()
    };
    assert_eq!(count(&ids[0]), ["0"]);
    assert_eq!(count(&ids[1]), ["2"]);
    assert_eq!(count(&ids[2]), ["2"]);
}
