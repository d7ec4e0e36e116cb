//! The PostgreSQL store itself: `herald migrate`, a schema newer than the
//! binary refused, `herald project create --store`, what only the embedded
//! store has (the backup endpoint), a database that becomes unreachable
//! and comes back (through a relay the test cuts), and the event outbox's
//! sweep on the store itself. These run in the `api_pg`
//! binary, where a PostgreSQL server is at hand.

use crate::engine_helpers::Deadline;
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
    assert!(
        first
            .stdout
            .contains("applied migrations [1, 2, 3]; schema is at version 3"),
        "{first:?}"
    );
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
    assert_eq!(app.request(GET, "/readyz").go().await.status, 200);
}

/// The event outbox on the store itself: an outbox row of an endpoint that
/// no longer exists (an event staged while its endpoint was being deleted)
/// is never due and is swept, the live endpoint's row stays due, and a
/// deleted endpoint takes its outbox along. Rows are put in with SQL, as
/// the change that stages an event cannot be paused between its read of
/// the endpoints and its commit.
#[test]
fn the_event_sweep_removes_outbox_rows_of_deleted_endpoints() {
    use herald_actors::events::WebhookEndpoint;
    use herald_actors::model::Timestamp;
    use herald_actors::storage::{EventRepo, ProjectRepo};
    use herald_actors::store::PgStore;
    if not_on_postgres() {
        return;
    }
    let url = pg_new_database();
    let store = PgStore::open(&url).unwrap();
    store.create_project("sweep", None).unwrap();
    let p = store.project_by_name("sweep").unwrap().unwrap().id;
    let now = Timestamp::now();
    let (ep, _) = store
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
    assert_eq!(store.sweep_event_logs(0, 100).unwrap(), 1);
    assert_eq!(store.due_events(later, 10, &[]).unwrap().len(), 1);
    assert_eq!(store.sweep_event_logs(0, 100).unwrap(), 0);
    store.delete_event_endpoint(&p, &ep.id).unwrap();
    assert!(store.due_events(later, 10, &[]).unwrap().is_empty());
    assert_eq!(
        store.sweep_event_logs(0, 100).unwrap(),
        0,
        "nothing left over"
    );
    store.close();
    drop(store);
    pg_drop_database(&url);
}
