//! The PostgreSQL store when a table is slow to answer: work that does not
//! touch it goes on. A run's actor checks now and then whether its run is
//! processed; that read waits for the database, and it must wait off the
//! actor threads, which also run the delivery actors and the users' live
//! feeds. Runs in the `api_pg` binary.

use crate::engine_helpers::*;
use crate::helpers::*;
use serde_json::json;
use std::time::{Duration, Instant};

/// Holds `LOCK TABLE flow_runs IN ACCESS EXCLUSIVE MODE` in a transaction of
/// its own for `hold`, from a thread of its own: every read of a run waits
/// for it meanwhile. Returns once the lock is taken, with the thread that
/// gives it back.
fn hold_runs_table(url: &str, hold: Duration) -> std::thread::JoinHandle<Result<(), String>> {
    let url = url.to_string();
    let (taken_tx, taken_rx) = std::sync::mpsc::channel();
    let t = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            use sqlx::Connection;
            let mut c = sqlx::PgConnection::connect(&url)
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let mut tx = c.begin().await.map_err(|e| e.to_string())?;
            sqlx::raw_sql("LOCK TABLE flow_runs IN ACCESS EXCLUSIVE MODE")
                .execute(&mut *tx)
                .await
                .map_err(|e| e.to_string())?;
            let _ = taken_tx.send(());
            tokio::time::sleep(hold).await;
            tx.rollback().await.map_err(|e| e.to_string())
        })
    });
    taken_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the runs table locked within 10 s");
    t
}

/// Runs whose actors check on them while the runs table is locked do not
/// hold up the deliveries that come due meanwhile: the webhooks go out while
/// the lock is held, not after.
#[tokio::test]
async fn deliveries_go_out_while_run_reads_wait_on_the_database() {
    // One node: the cluster suite gives each node a pool of 4 connections,
    // and under this lock every waiting read of a run holds one (the runs'
    // checks, the run-lease renewal, a settle's count-down), so a node has
    // none left for an attempt's reads: the lock, not the actor threads,
    // is what would hold the deliveries there.
    if !pg_mode() || cluster_mode() {
        eprintln!("skipped: this test runs in the api_pg binary, on one PostgreSQL node");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = pg_url_for(dir.path());
    let app = spawn_with_dir(dir, &Keys::random(), &[]);
    let server = mock_server().await;
    mock_always(&server, 200).await;
    let ch = create_webhook_channel(&app, &hook_url(&server), None).await;
    let flow = active_flow(
        &app,
        "slowreads",
        json!([
            delay_step(2),
            channel_step(s(&ch["id"]).as_str(), None, "hi")
        ]),
    )
    .await;
    const RUNS: usize = 8;
    let mut runs = vec![];
    for i in 0..RUNS {
        let ext = new_ext(&format!("slow{i}"));
        app.create_user_as(&ext, json!({})).await;
        let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": [ext]})).await;
        runs.push(s(&run["id"]));
    }
    // The runs' actors read their runs every second; the deliveries come
    // due two seconds after their runs. The lock outlasts both by far.
    let hold = Duration::from_secs(8);
    let taken = Instant::now();
    let holder = hold_runs_table(&url, hold);
    // Polled until all are in or the lock is given back.
    let n = loop {
        let n = received(&server).await.len();
        if n >= RUNS || taken.elapsed() >= hold {
            break n;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        n, RUNS,
        "webhooks received while the runs table was locked ({hold:?})"
    );
    holder.join().expect("lock thread").expect("lock");
    // Once the table answers again, the runs finish.
    for run in &runs {
        wait_run_processed(&app, run, 30).await;
    }
}
