//! The storage contract: one suite of facts every backend must show at the
//! level of the storage traits (`herald_engine::storage`), run against each
//! backend — sled on a temporary directory, PostgreSQL on a database of its
//! own that the test makes and drops (skipped, with a note, when no server
//! answers at `HERALD_TEST_PG`, by default `postgres://postgres@127.0.0.1:5432`).
//!
//! Why: the engine's rules (`herald_engine::rules`) are written once and
//! trust each backend to report the same facts (absence, a taken key, the
//! order of a page, when a change is durable); a backend that answered
//! differently would change what clients see on it alone.

use herald_engine::error::ErrorCode;
use herald_engine::events::WebhookEndpoint;
use herald_engine::model::{new_id, Timestamp, UserPatch};
use herald_engine::rules::records::new_push_subscription;
use herald_engine::storage::{
    EndpointWrite, IdempotentResponse, PageReq, PresenceWrite, PushKey, Storage, StoredPresence,
    Ticket, TopicPatch,
};
use herald_engine::store::{PgStore, Store};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// The PostgreSQL server the suite makes its database on.
fn pg_server() -> String {
    std::env::var("HERALD_TEST_PG").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

/// Runs one statement on the server's `postgres` database, on a thread of
/// its own (the caller may be inside a runtime).
fn pg_admin(sql: String) -> Result<(), String> {
    let url = format!("{}/postgres", pg_server());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            use sqlx::Connection;
            let mut c = sqlx::PgConnection::connect(&url)
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            sqlx::raw_sql(&sql)
                .execute(&mut c)
                .await
                .map_err(|e| format!("{sql}: {e}"))?;
            let _ = c.close().await;
            Ok(())
        })
    })
    .join()
    .map_err(|_| "the database thread panicked".to_string())?
}

/// A backend under test, and what to remove once the test is done.
struct Backend {
    name: &'static str,
    store: Arc<dyn Storage>,
    _dir: Option<tempfile::TempDir>,
    database: Option<String>,
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Some(db) = &self.database {
            let _ = pg_admin(format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"));
        }
    }
}

/// Every backend this machine can run: sled always, PostgreSQL when its
/// server answers.
fn backends() -> Vec<Backend> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let sled: Arc<dyn Storage> = Arc::new(Store::open(dir.path()).expect("open sled"));
    let mut out = vec![Backend {
        name: "sled",
        store: sled,
        _dir: Some(dir),
        database: None,
    }];
    let db = format!("herald_contract_{}", Uuid::now_v7().simple());
    match pg_admin(format!("CREATE DATABASE {db}")) {
        Ok(()) => {
            let url = format!("{}/{db}", pg_server());
            let pg: Arc<dyn Storage> = Arc::new(PgStore::open(&url).expect("open PostgreSQL"));
            out.push(Backend {
                name: "pg",
                store: pg,
                _dir: None,
                database: Some(db),
            });
        }
        Err(e) => eprintln!("PostgreSQL not available, its half of the contract skipped: {e}"),
    }
    out
}

/// A new project on `st`: its id.
fn project(st: &dyn Storage, name: &str) -> Uuid {
    st.create_project(name, None).expect("create a project");
    st.project_by_name(name).unwrap().expect("the project").id
}

fn endpoint() -> WebhookEndpoint {
    let (id, now) = new_id();
    WebhookEndpoint {
        id,
        url: "https://example.com/events".into(),
        event_types: None,
        enabled: true,
        disabled_reason: None,
        created_at: now,
        updated_at: now,
    }
}

fn patch(first: &str) -> UserPatch {
    UserPatch {
        first_name: Some(Some(first.into())),
        ..Default::default()
    }
}

#[test]
fn a_taken_project_name_is_a_conflict_and_absence_is_none() {
    for b in backends() {
        let st = &*b.store;
        project(st, "acme");
        let e = st.create_project("acme", None).err().unwrap();
        assert_eq!(e.code, ErrorCode::Conflict, "{}", b.name);
        assert!(st.project_by_name("nope").unwrap().is_none(), "{}", b.name);
        assert!(st.project(&Uuid::now_v7()).unwrap().is_none(), "{}", b.name);
        let e = st
            .update_project(&Uuid::now_v7(), Box::new(|_| {}))
            .expect_err("no such project");
        assert_eq!(e.code, ErrorCode::NotFound, "{}", b.name);
    }
}

#[test]
fn rotating_a_secret_keeps_the_previous_one_for_its_grace_on_every_backend() {
    use herald_engine::rules::projects::{hash_secret, rotate_secret};
    for b in backends() {
        let st = &*b.store;
        let keys = st.create_project("p", None).unwrap();
        let (p, secret) = rotate_secret(
            st,
            "p",
            Duration::from_secs(60),
            &herald_engine::audit::Actor::Operator,
        )
        .unwrap();
        assert_eq!(p.secret_hash, hash_secret(&secret), "{}", b.name);
        assert_eq!(
            p.previous_secret_hash.as_deref(),
            Some(hash_secret(&keys.secret_key).as_slice()),
            "{}",
            b.name
        );
        let stored = st.project_by_name("p").unwrap().unwrap();
        assert_eq!(stored.secret_hash, p.secret_hash, "{}", b.name);
        let e = rotate_secret(
            st,
            "nope",
            Duration::ZERO,
            &herald_engine::audit::Actor::Operator,
        )
        .err()
        .unwrap();
        assert_eq!(e.code, ErrorCode::NotFound, "{}", b.name);
    }
}

#[test]
fn upserting_many_users_is_one_change_in_order() {
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "users");
        let (a1, a2, c) = (patch("Ada"), patch("Augusta"), patch("Charles"));
        let done = st
            .upsert_users(&p, &[("ada", &a1), ("charles", &c), ("ada", &a2)])
            .unwrap();
        let flags: Vec<bool> = done.iter().map(|(_, created)| *created).collect();
        assert_eq!(flags, [true, true, false], "{}", b.name);
        // the later item of an external id patched what the earlier left
        assert_eq!(done[0].0.id, done[2].0.id, "{}", b.name);
        let ada = st.user_by_ext(&p, "ada").unwrap().unwrap();
        assert_eq!(ada.first_name.as_deref(), Some("Augusta"), "{}", b.name);
        let (again, created) = st.upsert_user(&p, "ada", &UserPatch::default()).unwrap();
        assert!(!created, "{}", b.name);
        assert_eq!(again.id, ada.id, "{}", b.name);
        let e = st.user_required(&p, "nobody").err().unwrap();
        assert_eq!(e.code, ErrorCode::NotFound, "{}", b.name);
    }
}

#[test]
fn pages_walk_every_item_once_in_the_same_order_on_every_backend() {
    let mut orders = vec![];
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "pages");
        let exts: Vec<String> = (0..7).map(|i| format!("u{i}")).collect();
        let none = UserPatch::default();
        let items: Vec<(&str, &UserPatch)> = exts.iter().map(|e| (e.as_str(), &none)).collect();
        st.upsert_users(&p, &items).unwrap();
        let mut seen = vec![];
        let mut req = PageReq {
            limit: 3,
            after: None,
            before: None,
        };
        loop {
            let page = st.list_users(&p, &req).unwrap();
            assert!(page.items.len() <= 3, "{}", b.name);
            seen.extend(page.items.iter().map(|u| u.external_id.clone()));
            if !page.has_more_after {
                break;
            }
            req.after = page.last_key.clone();
        }
        let mut sorted = seen.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, exts, "{}: every user once", b.name);
        orders.push((b.name, seen));
    }
    for w in orders.windows(2) {
        assert_eq!(
            w[0].1, w[1].1,
            "{} and {} list in one order",
            w[0].0, w[1].0
        );
    }
}

#[test]
fn a_topic_is_created_once_and_patched_after() {
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "topics");
        let (t, created) = st.put_topic(&p, "news", TopicPatch::default()).unwrap();
        assert!(created, "{}", b.name);
        assert_eq!(
            (t.name.as_deref(), t.subscribers_count),
            (None, 0),
            "{}",
            b.name
        );
        let named = TopicPatch {
            name: Some(Some("News".into())),
            description: None,
        };
        let (t2, created) = st.put_topic(&p, "news", named).unwrap();
        assert!(!created, "{}", b.name);
        assert_eq!(t2.id, t.id, "{}", b.name);
        assert_eq!(t2.name.as_deref(), Some("News"), "{}", b.name);
        assert!(st.topic(&p, "other").unwrap().is_none(), "{}", b.name);
        let e = st.delete_topic(&p, "other").err().unwrap();
        assert_eq!(e.code, ErrorCode::NotFound, "{}", b.name);
    }
}

#[test]
fn a_push_subscription_is_registered_once() {
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "push");
        let (u, _) = st.upsert_user(&p, "ada", &UserPatch::default()).unwrap();
        let ch = Uuid::now_v7();
        let first = new_push_subscription(&ch, "tok-1", None, Some("ios".into()));
        let (s1, new) = st.add_push_subscription(&p, &u.id, first).unwrap();
        assert!(new, "{}", b.name);
        let again = new_push_subscription(&ch, "tok-1", None, None);
        let (s2, new) = st.add_push_subscription(&p, &u.id, again).unwrap();
        assert!(!new, "{}", b.name);
        assert_eq!(s2.id, s1.id, "{}: the one stored first", b.name);
        assert_eq!(st.push_subscriptions(&p, &u.id, &ch).unwrap().len(), 1);
        assert!(st
            .remove_push_subscription(
                &p,
                PushKey {
                    user: &u.id,
                    channel: &ch,
                    identifier: "tok-1",
                },
            )
            .unwrap());
        assert!(!st
            .remove_push_subscription(
                &p,
                PushKey {
                    user: &u.id,
                    channel: &ch,
                    identifier: "tok-1",
                },
            )
            .unwrap());
    }
}

#[test]
fn an_endpoint_secret_is_replaced_and_the_previous_one_signs_for_its_grace() {
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "hooks");
        let (ep, old) = st.create_event_endpoint(&p, endpoint()).unwrap();
        let (_, new) = st
            .rotate_event_secret(&p, &ep.id, Duration::from_secs(60))
            .unwrap();
        assert_eq!(
            st.event_secrets(&p, &ep.id).unwrap(),
            [new.clone(), old],
            "{}",
            b.name
        );
        let newest = herald_engine::events::new_secret();
        let secret = EndpointWrite::Secret {
            id: &ep.id,
            secret: &newest,
            grace: Duration::ZERO,
        };
        st.put_event_endpoint(&p, secret).unwrap();
        assert_eq!(
            st.event_secrets(&p, &ep.id).unwrap(),
            [newest],
            "{}",
            b.name
        );
        let e = st
            .put_event_endpoint(
                &p,
                EndpointWrite::Secret {
                    id: &Uuid::now_v7(),
                    secret: &new,
                    grace: Duration::ZERO,
                },
            )
            .err()
            .unwrap();
        assert_eq!(e.code, ErrorCode::NotFound, "{}", b.name);
    }
}

#[test]
fn an_idempotent_response_reads_back_as_stored() {
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "idem");
        assert!(
            st.idempotent_response(&p, b"k1").unwrap().is_none(),
            "{}",
            b.name
        );
        let r = IdempotentResponse {
            payload_hash: vec![1, 2, 3],
            status: 202,
            body: b"{}".to_vec(),
            created_at: herald_engine::model::Timestamp::now(),
        };
        st.put_idempotent_response(&p, b"k1", &r).unwrap();
        let got = st.idempotent_response(&p, b"k1").unwrap().unwrap();
        assert_eq!(
            (got.payload_hash, got.status, got.body),
            (r.payload_hash, 202, r.body),
            "{}",
            b.name
        );
    }
}

#[test]
fn a_ticket_taken_after_a_change_is_durable_once_waited_for() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "durable");
        st.upsert_user(&p, "ada", &UserPatch::default()).unwrap();
        let t1 = st.ticket(Ticket::Now);
        let t2 = st.ticket(Ticket::Now);
        assert!(t2 >= t1, "{}: tickets do not go back", b.name);
        let waited = rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(30), st.wait_durable(t2)).await
        });
        assert!(matches!(waited, Ok(Ok(()))), "{}: {waited:?}", b.name);
        assert!(!st.health_status().degraded, "{}", b.name);
    }
}

#[test]
fn only_a_backend_that_shares_its_work_offers_claims() {
    for b in backends() {
        let st = &*b.store;
        match b.name {
            "sled" => assert!(st.work().is_none() && !st.shares_work()),
            _ => assert!(st.work().is_some() && st.shares_work()),
        }
        // the node id is stable within the process either way
        assert_eq!(st.node_id(), st.node_id(), "{}", b.name);
    }
}

#[test]
fn presence_keeps_the_latest_seen_time_and_the_latest_socket_count() {
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "presence");
        let (ada, _) = st.upsert_user(&p, "ada", &patch("Ada")).unwrap();
        let never = StoredPresence::default();
        assert_eq!(st.presence(&p, &ada.id).unwrap(), never, "{}", b.name);
        let t = |ms| Timestamp::from_millis(ms);
        st.set_presence(&p, &ada.id, PresenceWrite::Seen { at: t(2_000) })
            .unwrap();
        // an earlier time never moves it back
        st.set_presence(&p, &ada.id, PresenceWrite::Seen { at: t(1_000) })
            .unwrap();
        let got = st.presence(&p, &ada.id).unwrap();
        assert_eq!(got.last_seen_at, Some(t(2_000)), "{}", b.name);
        assert!(!got.online, "{}", b.name);

        // A node's socket count: a later version wins, whatever the order
        // the writes land in. Only a store the nodes share keeps it.
        let node = st.node_id();
        let sockets = |sockets, version| PresenceWrite::Sockets {
            node,
            sockets,
            version,
            at: t(3_000),
        };
        st.set_presence(&p, &ada.id, sockets(1, 1)).unwrap();
        let got = st.presence(&p, &ada.id).unwrap();
        assert_eq!(got.online, st.shares_work(), "{}", b.name);
        assert_eq!(got.last_seen_at, Some(t(3_000)), "{}", b.name);
        st.set_presence(&p, &ada.id, sockets(0, 3)).unwrap();
        st.set_presence(&p, &ada.id, sockets(1, 2)).unwrap();
        assert!(!st.presence(&p, &ada.id).unwrap().online, "{}", b.name);

        // A user that does not exist gets nothing; a deleted one loses it.
        let ghost = Uuid::now_v7();
        st.set_presence(&p, &ghost, PresenceWrite::Seen { at: t(5_000) })
            .unwrap();
        assert_eq!(st.presence(&p, &ghost).unwrap(), never, "{}", b.name);
        st.delete_user(&p, "ada").unwrap();
        assert_eq!(st.presence(&p, &ada.id).unwrap(), never, "{}", b.name);
    }
}

#[test]
fn socket_counts_written_in_one_batch_read_back_per_user() {
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "presence-batch");
        let (ada, _) = st.upsert_user(&p, "ada", &patch("Ada")).unwrap();
        let (bob, _) = st.upsert_user(&p, "bob", &patch("Bob")).unwrap();
        let (cy, _) = st.upsert_user(&p, "cy", &patch("Cy")).unwrap();
        let t = |ms| Timestamp::from_millis(ms);
        let node = st.node_id();
        let sockets = |sockets, version, at| PresenceWrite::Sockets {
            node,
            sockets,
            version,
            at: t(at),
        };
        st.set_presence(&p, &cy.id, sockets(1, 1, 1_000)).unwrap();
        let ghost = Uuid::now_v7();
        // Two users come online, one goes offline (a later version), and a
        // user who does not exist is passed over: one batch.
        st.set_presences(&[
            (p, ada.id, sockets(2, 5, 4_000)),
            (p, ghost, sockets(1, 6, 4_000)),
            (p, bob.id, sockets(1, 7, 5_000)),
            (p, cy.id, sockets(0, 8, 6_000)),
        ])
        .unwrap();
        let shared = st.shares_work();
        for (u, online, seen) in [
            (ada.id, shared, 4_000),
            (bob.id, shared, 5_000),
            (cy.id, false, 6_000),
        ] {
            let got = st.presence(&p, &u).unwrap();
            assert_eq!(got.online, online, "{}", b.name);
            assert_eq!(got.last_seen_at, Some(t(seen)), "{}", b.name);
        }
        assert_eq!(st.presence(&p, &ghost).unwrap(), StoredPresence::default());
        // An earlier version in a later batch changes nothing.
        st.set_presences(&[
            (p, cy.id, sockets(3, 2, 7_000)),
            (p, bob.id, sockets(0, 9, 7_000)),
        ])
        .unwrap();
        assert!(!st.presence(&p, &cy.id).unwrap().online, "{}", b.name);
        assert!(!st.presence(&p, &bob.id).unwrap().online, "{}", b.name);
    }
}

#[test]
fn users_seen_in_one_batch_move_forward_only_and_skip_the_unknown() {
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "seen-batch");
        let (ada, _) = st.upsert_user(&p, "ada", &patch("Ada")).unwrap();
        let (bob, _) = st.upsert_user(&p, "bob", &patch("Bob")).unwrap();
        let (cy, _) = st.upsert_user(&p, "cy", &patch("Cy")).unwrap();
        let t = |ms| Timestamp::from_millis(ms);
        let seen = |ms| PresenceWrite::Seen { at: t(ms) };
        st.set_presence(&p, &cy.id, seen(9_000)).unwrap();
        let ghost = Uuid::now_v7();
        // Seen writes of several users, one of them unknown, and one
        // earlier than what is stored: one batch.
        st.set_presences(&[
            (p, ada.id, seen(4_000)),
            (p, ghost, seen(4_000)),
            (p, bob.id, seen(5_000)),
            (p, cy.id, seen(6_000)),
        ])
        .unwrap();
        for (u, at) in [(ada.id, 4_000), (bob.id, 5_000), (cy.id, 9_000)] {
            let got = st.presence(&p, &u).unwrap();
            assert!(!got.online, "{}", b.name);
            assert_eq!(got.last_seen_at, Some(t(at)), "{}", b.name);
        }
        assert_eq!(st.presence(&p, &ghost).unwrap(), StoredPresence::default());
        // A batch that mixes both kinds writes both.
        let node = st.node_id();
        st.set_presences(&[
            (p, ada.id, seen(10_000)),
            (
                p,
                bob.id,
                PresenceWrite::Sockets {
                    node,
                    sockets: 1,
                    version: 3,
                    at: t(11_000),
                },
            ),
        ])
        .unwrap();
        assert_eq!(
            st.presence(&p, &ada.id).unwrap().last_seen_at,
            Some(t(10_000)),
            "{}",
            b.name
        );
        let bob_now = st.presence(&p, &bob.id).unwrap();
        assert_eq!(bob_now.last_seen_at, Some(t(11_000)), "{}", b.name);
        assert_eq!(bob_now.online, st.shares_work(), "{}", b.name);
    }
}

#[test]
fn a_channels_health_reads_back_as_stored_and_goes_with_the_channel() {
    use herald_engine::events::EventType;
    use herald_engine::model::{Channel, ChannelHealth, HealthState, Timestamp};
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "health");
        let (id, now) = new_id();
        st.put_channel(&p, &Channel::builtin_in_app(id, now))
            .unwrap();
        assert_eq!(st.channel_health(&p, &id).unwrap(), None, "{}", b.name);
        let degraded = ChannelHealth {
            state: HealthState::Degraded,
            since: Timestamp::from_millis(now.millis()),
            last_error: Some("HTTP 503".into()),
        };
        let data = serde_json::json!({"channel_id": id});
        st.set_channel_health(&p, &id, &degraded, EventType::ChannelDegraded, &data)
            .unwrap();
        assert_eq!(
            st.channel_health(&p, &id).unwrap().as_ref(),
            Some(&degraded),
            "{}",
            b.name
        );
        let ok = ChannelHealth {
            state: HealthState::Ok,
            ..degraded.clone()
        };
        st.set_channel_health(&p, &id, &ok, EventType::ChannelRecovered, &data)
            .unwrap();
        assert_eq!(st.channel_health(&p, &id).unwrap(), Some(ok), "{}", b.name);
        let other = Uuid::now_v7();
        assert_eq!(st.channel_health(&p, &other).unwrap(), None, "{}", b.name);
        st.delete_channel(&p, &id).unwrap();
        assert_eq!(st.channel_health(&p, &id).unwrap(), None, "{}", b.name);
    }
}

#[test]
fn the_audit_log_pages_newest_first_filters_and_goes_with_its_project() {
    use herald_engine::audit::{Actor, AuditChange};
    use herald_engine::storage::AuditFilter;
    for b in backends() {
        let st = &*b.store;
        let p = project(st, "audited");
        let other = project(st, "other");
        let member = Actor::Member {
            email: "ana@example.com".into(),
        };
        let changes = [
            ("topic.created", &Actor::Api),
            ("flow.created", &member),
            ("topic.deleted", &Actor::Api),
            ("key.rotated", &Actor::Operator),
        ];
        for (i, (action, actor)) in changes.iter().enumerate() {
            let e = AuditChange::new(action, i)
                .after(serde_json::json!({"i": i}))
                .entry(actor, Timestamp::now())
                .unwrap();
            st.append_audit(&p, &e).unwrap();
        }
        let e = AuditChange::new("topic.created", "x")
            .after(serde_json::json!({}))
            .entry(&Actor::Api, Timestamp::now())
            .unwrap();
        st.append_audit(&other, &e).unwrap();

        let all = |f: AuditFilter| {
            let req = PageReq {
                limit: 100,
                after: None,
                before: None,
            };
            let page = st.audit_page(&p, &f, &req).unwrap();
            page.items
                .iter()
                .map(|e| e.action.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            all(AuditFilter::default()),
            [
                "key.rotated",
                "topic.deleted",
                "flow.created",
                "topic.created"
            ],
            "{}: newest first, this project's only",
            b.name
        );
        let topics = AuditFilter {
            resource_type: Some("topic".into()),
            who: None,
        };
        assert_eq!(
            all(topics),
            ["topic.deleted", "topic.created"],
            "{}",
            b.name
        );
        let by_member = AuditFilter {
            resource_type: None,
            who: Some("ana@example.com".into()),
        };
        assert_eq!(all(by_member), ["flow.created"], "{}", b.name);

        // a page of 1 after the newest: the next one
        let req = PageReq {
            limit: 1,
            after: None,
            before: None,
        };
        let first = st.audit_page(&p, &AuditFilter::default(), &req).unwrap();
        assert!(first.has_more_after, "{}", b.name);
        let req = PageReq {
            limit: 1,
            after: first.last_key.clone(),
            before: None,
        };
        let second = st.audit_page(&p, &AuditFilter::default(), &req).unwrap();
        assert_eq!(second.items[0].action, "topic.deleted", "{}", b.name);
        let stored = &second.items[0];
        assert_eq!(stored.actor, Actor::Api, "{}", b.name);
        assert_eq!(
            stored.after,
            Some(serde_json::json!({"i": 2})),
            "{}",
            b.name
        );

        st.delete_project("audited").unwrap();
        assert_eq!(
            all(AuditFilter::default()),
            Vec::<String>::new(),
            "{}",
            b.name
        );
    }
}

#[test]
fn console_links_are_used_once_and_members_take_their_sessions_along() {
    use herald_engine::console::{self, Role};
    for b in backends() {
        let st = &*b.store;
        let pid = project(st, "acme");
        let inv = console::add_member(
            st,
            "acme",
            "Ana@Example.com",
            Role::Owner,
            console::LINK_TTL,
        )
        .expect("add a member");
        assert_eq!(inv.member.email, "ana@example.com", "{}", b.name);
        let (p, hash) = console::read_token(&inv.token).unwrap();
        assert_eq!(p, pid, "{}", b.name);
        let link = st.sign_in_link(&pid, &hash).unwrap().expect("the link");
        assert_eq!(link.email, "ana@example.com", "{}", b.name);
        // A second link of the same member: using one uses up both.
        let again = console::add_member(
            st,
            "acme",
            "ana@example.com",
            Role::Owner,
            console::LINK_TTL,
        )
        .unwrap();
        let (_, hash2) = console::read_token(&again.token).unwrap();
        let (token, session) = console::new_session(&inv.member, Timestamp::now());
        assert!(
            st.use_sign_in_link(&pid, &hash, "$argon2id$x", &session)
                .unwrap(),
            "{}",
            b.name
        );
        assert!(
            !st.use_sign_in_link(&pid, &hash, "$argon2id$y", &session)
                .unwrap(),
            "{}",
            b.name
        );
        assert!(
            st.sign_in_link(&pid, &hash2).unwrap().is_none(),
            "{}",
            b.name
        );
        let m = st.console_member(&pid, "ana@example.com").unwrap().unwrap();
        assert_eq!(
            m.password_hash.as_deref(),
            Some("$argon2id$x"),
            "{}",
            b.name
        );
        // A role change keeps the password.
        let mut viewer = m.clone();
        viewer.role = Role::Viewer;
        viewer.password_hash = None;
        st.put_console_member(&viewer, None).unwrap();
        let m = st.console_member(&pid, "ana@example.com").unwrap().unwrap();
        assert_eq!(
            (m.role, m.password_hash.as_deref()),
            (Role::Viewer, Some("$argon2id$x")),
            "{}",
            b.name
        );
        // The session reads back with its member, moves forward only.
        let (_, sh) = console::read_token(&token).unwrap();
        let (s, sm) = st.console_session(&pid, &sh).unwrap().expect("the session");
        assert_eq!(
            (s.csrf.as_str(), sm.role),
            (session.csrf.as_str(), Role::Viewer),
            "{}",
            b.name
        );
        let later = Timestamp::from_millis(s.last_seen.millis() + 120_000);
        st.touch_console_session(&pid, &sh, later).unwrap();
        st.touch_console_session(&pid, &sh, s.last_seen).unwrap();
        let (s2, _) = st.console_session(&pid, &sh).unwrap().unwrap();
        assert_eq!(s2.last_seen, later, "{}", b.name);
        // Removing the member removes the session.
        assert!(
            st.delete_console_member(&pid, "ana@example.com").unwrap(),
            "{}",
            b.name
        );
        assert!(
            !st.delete_console_member(&pid, "ana@example.com").unwrap(),
            "{}",
            b.name
        );
        assert!(
            st.console_session(&pid, &sh).unwrap().is_none(),
            "{}",
            b.name
        );
        assert!(st.console_members(&pid).unwrap().is_empty(), "{}", b.name);
    }
}
