//! The suppression list at the level of the engine and its storage, on
//! each backend (sled on a temporary directory, PostgreSQL on a database of
//! its own when a server answers at `HERALD_TEST_PG`, by default
//! `postgres://postgres@127.0.0.1:5432`): what a provider's report does to
//! its address (`suppression::on_report`: hard bounces and complaints at
//! once, soft bounces at the third in 7 days, deliveries and failures
//! never), and the facts `SuppressionRepo` reports (an address stored once,
//! lookups in order, pages by type, removal, project isolation).

use herald_engine::feedback::{BounceKind, ReportKind};
use herald_engine::model::{ChannelType, SuppressionReason, Timestamp, User};
use herald_engine::storage::{PageReq, Storage};
use herald_engine::store::{PgStore, Store};
use herald_engine::suppression;
use std::sync::Arc;
use uuid::Uuid;

const DAY: i64 = 24 * 3600 * 1000;

fn pg_server() -> String {
    std::env::var("HERALD_TEST_PG").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

/// Runs one statement on the server's `postgres` database, on a thread of
/// its own.
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

fn backends() -> Vec<Backend> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let sled: Arc<dyn Storage> = Arc::new(Store::open(dir.path()).expect("open sled"));
    let mut out = vec![Backend {
        name: "sled",
        store: sled,
        _dir: Some(dir),
        database: None,
    }];
    let db = format!("herald_suppr_{}", Uuid::now_v7().simple());
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
        Err(e) => eprintln!("PostgreSQL not available, its half skipped: {e}"),
    }
    out
}

fn project(st: &dyn Storage, name: &str) -> Uuid {
    st.create_project(name, None).expect("create a project");
    st.project_by_name(name).unwrap().expect("the project").id
}

/// The reason the address is suppressed for, if it is.
fn reason(st: &dyn Storage, p: &Uuid, ct: ChannelType, address: &str) -> Option<SuppressionReason> {
    st.suppressions_of(p, &[(ct, address)]).unwrap()[0]
        .as_ref()
        .map(|s| s.reason)
}

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms)
}

#[test]
fn hard_bounces_and_complaints_suppress_at_once_deliveries_never() {
    for b in backends() {
        let st = b.store.as_ref();
        let p = project(st, "reports");
        let now = Timestamp::now();
        let email = ChannelType::Email;
        let hard = ReportKind::Bounced(BounceKind::Hard);
        suppression::on_report(st, &p, email, " Hard@Example.com", hard, now).unwrap();
        assert_eq!(
            reason(st, &p, email, "hard@example.com"),
            Some(SuppressionReason::HardBounce),
            "{}: the address normalised",
            b.name
        );
        suppression::on_report(
            st,
            &p,
            ChannelType::Sms,
            "+15550001111",
            ReportKind::Complained,
            now,
        )
        .unwrap();
        assert_eq!(
            reason(st, &p, ChannelType::Sms, "+15550001111"),
            Some(SuppressionReason::Complaint),
            "{}",
            b.name
        );
        for kind in [ReportKind::Delivered, ReportKind::Failed] {
            suppression::on_report(st, &p, email, "fine@example.com", kind, now).unwrap();
        }
        assert_eq!(
            reason(st, &p, email, "fine@example.com"),
            None,
            "{}",
            b.name
        );
        // a later report keeps the first reason
        suppression::on_report(
            st,
            &p,
            email,
            "hard@example.com",
            ReportKind::Complained,
            now,
        )
        .unwrap();
        assert_eq!(
            reason(st, &p, email, "hard@example.com"),
            Some(SuppressionReason::HardBounce),
            "{}",
            b.name
        );
        // addresses the list does not hold are ignored, not errors
        suppression::on_report(st, &p, ChannelType::Chat, "U123", hard, now).unwrap();
        suppression::on_report(st, &p, email, "not an address", hard, now).unwrap();
        let page = st
            .suppressions_page(
                &p,
                None,
                &PageReq {
                    limit: 10,
                    after: None,
                    before: None,
                },
            )
            .unwrap();
        assert_eq!(page.items.len(), 2, "{}: {:?}", b.name, page.items);
    }
}

#[test]
fn soft_bounces_suppress_at_the_third_in_seven_days() {
    for b in backends() {
        let st = b.store.as_ref();
        let p = project(st, "soft");
        let email = ChannelType::Email;
        let soft = ReportKind::Bounced(BounceKind::Soft);
        let t0 = 1_000 * DAY;
        // two, then a third 8 days after the first: the first no longer counts
        for t in [t0, t0 + 6 * DAY, t0 + 8 * DAY] {
            suppression::on_report(st, &p, email, "full@example.com", soft, at(t)).unwrap();
            assert_eq!(
                reason(st, &p, email, "full@example.com"),
                None,
                "{}",
                b.name
            );
        }
        // a fourth within 7 days of the two before it: three, suppressed
        suppression::on_report(st, &p, email, "full@example.com", soft, at(t0 + 9 * DAY)).unwrap();
        assert_eq!(
            reason(st, &p, email, "full@example.com"),
            Some(SuppressionReason::SoftBounce),
            "{}",
            b.name
        );
        // lifting the suppression forgets the soft bounces: one more does not
        // suppress again
        assert!(st
            .remove_suppression(&p, (email, "full@example.com"))
            .unwrap());
        suppression::on_report(
            st,
            &p,
            email,
            "full@example.com",
            soft,
            at(t0 + 9 * DAY + 1),
        )
        .unwrap();
        assert_eq!(
            reason(st, &p, email, "full@example.com"),
            None,
            "{}",
            b.name
        );
        // another project's bounces are its own
        let q = project(st, "soft-other");
        for t in [t0, t0 + 1, t0 + 2] {
            suppression::on_report(st, &q, email, "shared@example.com", soft, at(t)).unwrap();
        }
        assert_eq!(
            reason(st, &q, email, "shared@example.com"),
            Some(SuppressionReason::SoftBounce),
            "{}",
            b.name
        );
        assert_eq!(
            reason(st, &p, email, "shared@example.com"),
            None,
            "{}",
            b.name
        );
    }
}

#[test]
fn the_list_stores_an_address_once_and_pages_by_type() {
    for b in backends() {
        let st = b.store.as_ref();
        let p = project(st, "list");
        let (first, new) =
            suppression::add_manual(st, &p, ChannelType::Email, "A@Example.com").unwrap();
        assert!(new, "{}", b.name);
        assert_eq!(first.address, "a@example.com");
        let (again, new) =
            suppression::add_manual(st, &p, ChannelType::Email, "a@example.com").unwrap();
        assert!(!new, "{}", b.name);
        assert_eq!(again, first, "{}", b.name);
        suppression::add_manual(st, &p, ChannelType::Sms, "+15550002222").unwrap();
        suppression::add_manual(st, &p, ChannelType::Email, "b@example.com").unwrap();
        let err = suppression::add_manual(st, &p, ChannelType::Chat, "x").unwrap_err();
        assert_eq!(err.code.status(), 422, "{}", b.name);
        let err = suppression::add_manual(st, &p, ChannelType::Sms, "555").unwrap_err();
        assert_eq!(err.code.status(), 422, "{}", b.name);

        let found = st
            .suppressions_of(
                &p,
                &[
                    (ChannelType::Sms, "+15550002222"),
                    (ChannelType::Email, "nobody@example.com"),
                    (ChannelType::Email, "a@example.com"),
                    // the same address under another channel type
                    (ChannelType::Sms, "a@example.com"),
                ],
            )
            .unwrap();
        let got: Vec<Option<&str>> = found
            .iter()
            .map(|s| s.as_ref().map(|s| s.address.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![Some("+15550002222"), None, Some("a@example.com"), None],
            "{}",
            b.name
        );

        let req = |after: Option<Vec<u8>>| PageReq {
            limit: 1,
            after,
            before: None,
        };
        let mut seen = vec![];
        let mut after = None;
        loop {
            let page = st
                .suppressions_page(&p, Some(ChannelType::Email), &req(after))
                .unwrap();
            seen.extend(page.items.iter().map(|s| s.address.clone()));
            if !page.has_more_after {
                break;
            }
            after = page.last_key;
        }
        assert_eq!(seen, vec!["b@example.com", "a@example.com"], "{}", b.name);
        let sms = st
            .suppressions_page(&p, Some(ChannelType::Sms), &req(None))
            .unwrap();
        assert_eq!(sms.items.len(), 1, "{}", b.name);
        assert!(!sms.has_more_after, "{}", b.name);

        // the rule at send time reads the recipient's address
        let now = Timestamp::now();
        let mut u = User {
            id: Uuid::now_v7(),
            external_id: "u1".into(),
            first_name: None,
            last_name: None,
            email: Some(" A@EXAMPLE.com".into()),
            phone: Some("+15550003333".into()),
            avatar: None,
            locale: None,
            timezone: None,
            custom_fields: Default::default(),
            created_at: now,
            updated_at: now,
        };
        let skip = suppression::skip_if_suppressed(st, &p, ChannelType::Email, Some(&u)).unwrap();
        assert_eq!(
            skip.map(|e| e.code),
            Some("suppressed".to_string()),
            "{}",
            b.name
        );
        assert!(
            suppression::skip_if_suppressed(st, &p, ChannelType::Sms, Some(&u))
                .unwrap()
                .is_none()
        );
        assert!(
            suppression::skip_if_suppressed(st, &p, ChannelType::Chat, Some(&u))
                .unwrap()
                .is_none()
        );
        u.email = None;
        assert!(
            suppression::skip_if_suppressed(st, &p, ChannelType::Email, Some(&u))
                .unwrap()
                .is_none()
        );

        // removal, and another project's list
        let q = project(st, "list-other");
        assert!(!st
            .remove_suppression(&q, (ChannelType::Email, "a@example.com"))
            .unwrap());
        assert!(suppression::remove(st, &q, ChannelType::Email, "a@example.com").is_err());
        suppression::remove(st, &p, ChannelType::Email, "A@example.com").unwrap();
        assert!(!st
            .remove_suppression(&p, (ChannelType::Email, "a@example.com"))
            .unwrap());
        assert_eq!(reason(st, &p, ChannelType::Email, "a@example.com"), None);

        // deleting the project deletes its list
        st.delete_project("list").unwrap();
        let left = st
            .suppressions_page(
                &p,
                None,
                &PageReq {
                    limit: 10,
                    after: None,
                    before: None,
                },
            )
            .unwrap();
        assert!(left.items.is_empty(), "{}: {:?}", b.name, left.items);
    }
}
