//! Builds the application: opens the store, makes sure project `default` exists,
//! starts the engine, binds the listener and wires the routes and middleware.

use crate::configuration::Settings;
use crate::errors::REQUEST_ID;
use crate::errors::{ApiError, ApiResult};
use crate::ops_access::{write_ops_file, Ops, BACKUP_PATH};
use crate::state::{AppState, Limits};
use actix_web::body::BoxBody;
use actix_web::dev::{Server, ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, App, HttpMessage, HttpRequest, HttpResponse};
use herald_engine::backend::{DirLock, PgStore};
use herald_engine::model::ChannelType;
use herald_engine::{Engine, EngineConfig, Error, Storage, Store};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

pub struct Application {
    server: Server,
    state: Arc<AppState>,
    port: u16,
    engine: Engine,
    /// The embedded store, when the state is there (flushed at the end).
    store: Option<Store>,
    /// The PostgreSQL store, when the state is there (its pool closed at the end).
    pg: Option<PgStore>,
    /// `DATA_DIR/ops.json`, removed on a clean stop.
    ops_file: Option<PathBuf>,
    /// The data directory's lock (the embedded store), held to the end.
    _dir_lock: Option<DirLock>,
}

fn valid_request_id(s: &str) -> bool {
    (1..=200).contains(&s.len()) && s.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// The outermost middleware: the request id (docs/API.md §3), one `request` span per
/// request (request id, method, route pattern, project id once known) and one
/// completion line at info level with the status and latency. While a backup
/// snapshot is taken, requests that may write wait here.
async fn request_scope(
    req: ServiceRequest, next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let rid = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|s| valid_request_id(s))
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let method = req.method().clone();
    let route = req
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_string());
    let span = tracing::info_span!(
        "request",
        request_id = %rid,
        method = %method,
        route = %route,
        project_id = tracing::field::Empty,
    );
    let writes = !matches!(method.as_str(), "GET" | "HEAD" | "OPTIONS");
    let gate = req
        .app_data::<web::Data<Ops>>()
        .map(|o| o.clone().into_inner());
    let started = Instant::now();
    let rid_scope = rid.clone();
    let fut = async move {
        let _pass = match (&gate, writes) {
            (Some(g), true) => Some(g.gate.read().await),
            _ => None,
        };
        let res = next.call(req).await;
        let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        match res {
            Ok(mut res) => {
                // Only when `record_project` could not (the live feed authenticates
                // in its handler): recording a field again makes the human format
                // print it twice on every line of the span.
                let recorded = res
                    .request()
                    .extensions()
                    .get::<ProjectRecorded>()
                    .is_some();
                if let (false, Some(p)) = (recorded, project_of(res.request())) {
                    tracing::Span::current().record("project_id", tracing::field::display(p));
                }
                tracing::info!(
                    status = res.status().as_u16(),
                    latency_ms = (latency_ms * 1000.0).round() / 1000.0,
                    "request completed"
                );
                if let Ok(v) = actix_web::http::header::HeaderValue::from_str(&rid) {
                    res.headers_mut().insert(
                        actix_web::http::header::HeaderName::from_static("x-request-id"),
                        v,
                    );
                }
                Ok(res)
            }
            Err(e) => {
                tracing::info!(
                    status = e.as_response_error().status_code().as_u16(),
                    latency_ms = (latency_ms * 1000.0).round() / 1000.0,
                    "request completed"
                );
                Err(e)
            }
        }
    };
    REQUEST_ID.scope(rid_scope, fut.instrument(span)).await
}

/// The project a request authenticated as, if any.
fn project_of(req: &HttpRequest) -> Option<uuid::Uuid> {
    let ext = req.extensions();
    ext.get::<crate::auth::Admin>()
        .map(|a| a.project.id)
        .or_else(|| ext.get::<crate::auth::UserCtx>().map(|u| u.project.id))
}

/// Inside authentication: puts the project id on the request span, so every line
/// the handler logs carries it.
async fn record_project(
    req: ServiceRequest, next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if let Some(p) = project_of(req.request()) {
        tracing::Span::current().record("project_id", tracing::field::display(p));
        req.extensions_mut().insert(ProjectRecorded);
    }
    next.call(req).await
}

/// Marks a request whose project id is on its span already (by `record_project`).
#[derive(Clone, Copy)]
struct ProjectRecorded;

// ================================================================ backups of a running server

/// Removes snapshot files a server that died mid-backup left in the data dir.
fn remove_stale_snapshots(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with(".backup-") && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// `GET /ops/v1/backup`: a consistent snapshot of the store, streamed. Only
/// with the operator token (see `Ops::authorize`).
async fn backup_handler(req: HttpRequest, st: crate::state::State) -> ApiResult<HttpResponse> {
    let ops = req
        .app_data::<web::Data<Ops>>()
        .cloned()
        .ok_or_else(|| ApiError(Error::internal("ops state missing")))?;
    ops.authorize(&req, &st)?;
    let Some(store) = st.store.clone() else {
        return Err(ApiError(Error::bad_request(
            "backend",
            None,
            "this server keeps its state in PostgreSQL: back it up with pg_dump (see docs/DEPLOY.md)",
        )));
    };
    let _one = ops.backup.lock().await;
    let tmp = st
        .settings
        .data_dir
        .join(format!(".backup-{}.tmp", uuid::Uuid::now_v7()));
    let summary = {
        // API writes wait while the snapshot is taken; the engine's writes are
        // caught by the snapshot's checksum (see `store::backup`).
        let _quiet = ops.gate.write().await;
        let path = tmp.clone();
        web::block(move || store.snapshot_to_file(&path))
            .await
            .map_err(|e| ApiError(Error::internal(format!("backup task failed: {e}"))))?
    };
    let summary = match summary {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e.into());
        }
    };
    let file = tokio::fs::File::open(&tmp).await;
    // The open file outlives its name: nothing is left behind in the data dir.
    let _ = std::fs::remove_file(&tmp);
    let file =
        file.map_err(|e| ApiError(Error::internal(format!("cannot read the snapshot: {e}"))))?;
    tracing::info!(
        entries = summary.entries,
        bytes = summary.bytes,
        attempts = summary.attempts,
        "backup snapshot taken"
    );
    let stream = futures_util::stream::unfold(file, |mut f| async move {
        use tokio::io::AsyncReadExt;
        let mut buf = vec![0u8; 256 * 1024];
        match f.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok::<_, std::io::Error>(web::Bytes::from(buf)), f))
            }
            Err(e) => Some((Err(e), f)),
        }
    });
    Ok(HttpResponse::Ok()
        .content_type("application/octet-stream")
        .insert_header(("x-herald-backup-entries", summary.entries.to_string()))
        .insert_header((
            "x-herald-backup-checksum",
            format!("{:08x}", summary.checksum),
        ))
        .no_chunking(summary.bytes)
        .streaming(stream))
}

// ================================================================ while the store opens

/// How long the store may take to open before the port is served anyway,
/// answering 503 (`Starting`). Opening an empty data dir takes milliseconds;
/// a large one takes as long as sled needs to replay what was written since
/// the last start (docs/PERFORMANCE.md, restart).
const LISTEN_EARLY_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// Test-only: milliseconds to wait before opening the store, so black-box
/// tests can see a slow start (`Starting`) without a large data dir.
const OPEN_DELAY_ENV: &str = "HERALD_TEST_OPEN_DELAY_MS";

/// The server on the bound port while the store opens: `/healthz` answers
/// 200 (the process is alive), everything else, `/readyz` included, 503
/// `service_unavailable` with `Retry-After`, at once: a request never waits
/// for the store; each answer closes its connection. Stopped (gracefully,
/// within a second) just before the real server takes the same listening
/// socket over; connections that arrive in between wait in the socket's
/// backlog.
struct Starting {
    handle: actix_web::dev::ServerHandle,
}

impl Starting {
    fn start(listener: &TcpListener) -> Result<Starting, String> {
        let l = listener.try_clone().map_err(|e| e.to_string())?;
        let server = actix_web::HttpServer::new(|| {
            App::new()
                .wrap(actix_web::middleware::from_fn(request_scope))
                .route(
                    "/healthz",
                    web::get()
                        .to(|| async { crate::routes::ok(crate::bodies::Health { status: "ok" }) }),
                )
                .default_service(web::to(|| async {
                    Err::<HttpResponse, _>(ApiError(Error::unavailable(
                        "the server is starting: its store is opening",
                    )))
                }))
        })
        .workers(1)
        // Every answer closes its connection, so no client keeps one to this
        // server that closes under it when the real server takes over.
        .keep_alive(actix_web::http::KeepAlive::Disabled)
        .disable_signals()
        .shutdown_timeout(1)
        .listen(l)
        .map_err(|e| e.to_string())?
        .run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Ok(Starting { handle })
    }

    async fn stop(self) {
        self.handle.stop(true).await;
    }
}

impl Application {
    /// `operator_token`: `HERALD_OPERATOR_TOKEN`, accepted by the operator
    /// API from any address (kept out of `Settings`, whose Debug form would show it).
    pub async fn build(
        settings: Settings, bootstrap: Option<(String, String)>, workers: usize,
        operator_token: Option<String>,
    ) -> Result<Application, String> {
        herald_engine::retention::set_default(settings.retention);
        herald_engine::quota::set_bounds(herald_engine::quota::Bounds {
            max_delivery_bytes: settings.max_delivery_bytes,
            max_run_bytes: settings.max_run_bytes,
            project_quota_bytes: settings.project_quota_bytes,
        });
        let limits = herald_engine::render::Limits {
            fuel: settings.template_fuel,
            max_output: settings.template_max_output,
        };
        // The data directory's lock before anything else, the port and the
        // `listening on` line included: a second server on a directory in
        // use stops here, naming it. The store's own lock is taken as it
        // opens, which may be after the port is served (below).
        let dir_lock = match settings.postgres_url() {
            Some(_) => None,
            None => Some(DirLock::take(&settings.data_dir).map_err(|e| e.message)?),
        };
        // Bound first: when opening the store takes a while (sled replays
        // what was written since the last start, seconds on a large data
        // dir), the port answers 503 `service_unavailable` meanwhile instead
        // of refusing connections (see `Starting`).
        let listener = TcpListener::bind(&settings.bind)
            .map_err(|e| format!("cannot bind {}: {e}", settings.bind))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let settings_ref = &settings;
        let opening = async move {
            let settings = settings_ref;
            if let Some(ms) = std::env::var(OPEN_DELAY_ENV)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
            {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            }
            let from_env = bootstrap.is_some();
            // Project `default`: created when absent (a renamed one is still it);
            // keys printed only when generated.
            let (storage, cursor_key, store, pg, created): (Arc<dyn Storage>, _, _, _, _) =
                match settings.postgres_url() {
                    Some(url) => {
                        let url = url.to_string();
                        let max = settings.pg_max_connections;
                        let pg = web::block(move || PgStore::open_with(&url, max))
                            .await
                            .map_err(|e| e.to_string())?
                            .map_err(|e| e.message)?;
                        let p = pg.clone();
                        let created = web::block(move || p.ensure_default_project(bootstrap))
                            .await
                            .map_err(|e| e.to_string())?
                            .map_err(|e| e.message)?;
                        pg.set_lease(std::time::Duration::from_secs(settings.lease_seconds));
                        let key = *pg.cursor_key();
                        (Arc::new(pg.clone()), key, None, Some(pg), created)
                    }
                    None => {
                        let dir = settings.data_dir.clone();
                        let key_file = settings.secret_key_path();
                        let store = web::block(move || Store::open_with(&dir, Some(&key_file)))
                            .await
                            .map_err(|e| e.to_string())?
                            .map_err(|e| e.message)?;
                        let created = store
                            .ensure_default_project(bootstrap)
                            .map_err(|e| e.message)?;
                        // writes stop short of a full disk (store::health)
                        store.set_space_reserve(settings.min_free_space);
                        let key = *store.cursor_key();
                        (Arc::new(store.clone()), key, Some(store), None, created)
                    }
                };
            if let (Some(keys), false) = (created, from_env) {
                println!("created project default");
                println!("public_key: {}", keys.public_key);
                println!("secret_key: {}", keys.secret_key);
            }
            let panic_once = std::env::var("HERALD_FAULT_PANIC_ONCE")
                .ok()
                .map(|s| {
                    s.split(',')
                        .filter_map(|t| ChannelType::parse(t.trim()))
                        .collect()
                })
                .unwrap_or_default();
            let egress = settings.egress_policy()?;
            if egress.allow_private {
                tracing::info!(
                    "egress guard off: providers may send to private and loopback addresses"
                );
            } else if !egress.allow.is_empty() {
                tracing::info!(allow = ?egress.allow, "egress guard on, with ranges allowed");
            }
            let engine = Engine::start(
                storage,
                cursor_key,
                EngineConfig {
                    threads: settings.engine_threads.max(1),
                    project_inflight: settings.project_inflight.max(1),
                    concurrency: settings.delivery_concurrency.max(1),
                    panic_once,
                    egress,
                    event_retry_horizon: std::time::Duration::from_secs(
                        settings.event_retry_horizon,
                    ),
                    claim_poll: std::time::Duration::from_millis(settings.claim_poll_ms),
                    // the crash journal (herald_engine::actors::poison) beside
                    // the embedded store; nodes on PostgreSQL have none yet
                    // (their data directories may be shared, and a node's
                    // work outlives it on another node)
                    journal_dir: store.is_some().then(|| settings.data_dir.clone()),
                    template_limits: limits,
                    sns_trusted_cert_host: settings.sns_trusted_cert_host.clone(),
                    channel_cooldown: std::time::Duration::from_millis(
                        settings.channel_cooldown_ms,
                    ),
                },
            )
            .map_err(|e| e.message)?;
            Ok::<_, String>((store, pg, engine))
        };
        let mut opening = Box::pin(opening);
        let opened = tokio::time::timeout(LISTEN_EARLY_AFTER, &mut opening).await;
        let (store, pg, engine, early) = match opened {
            Ok(r) => {
                let (store, pg, engine) = r?;
                (store, pg, engine, false)
            }
            Err(_) => {
                let starting = Starting::start(&listener)?;
                println!("listening on http://{addr}");
                tracing::info!(%addr, "herald is listening; requests answer 503 until the store is open");
                let t = Instant::now();
                let r = (&mut opening).await;
                starting.stop().await;
                let (store, pg, engine) = r?;
                tracing::info!(
                    seconds = t.elapsed().as_secs_f64(),
                    "store open: serving requests"
                );
                (store, pg, engine, true)
            }
        };
        drop(opening);
        crate::metrics::install();
        if pg.is_some() {
            metrics::counter!("herald_pg_pool_acquire_waits_total").increment(0);
            metrics::counter!("herald_pg_pool_acquire_timeouts_total").increment(0);
        }
        // In a cluster: the bus, before the server takes requests whose
        // frames and changes the other nodes must hear of.
        let bus = match settings.bus.clone() {
            Some(url) => Some(crate::live::bus::start(&url, &engine).await?),
            None => None,
        };
        // Links are built from this, never from a request's Host header.
        let mut settings = settings;
        let given = settings.public_url.is_some();
        settings
            .public_url
            .get_or_insert_with(|| format!("http://{addr}"));
        if let Some(u) = &settings.public_url {
            engine.set_public_url(u.clone(), given);
        }
        let state = Arc::new(AppState {
            store: store.clone(),
            engine: engine.clone(),
            limits: Limits::new(
                settings.admin_rate,
                settings.user_rate,
                settings.auth_failures_per_minute,
            ),
            settings,
            idempotency: Default::default(),
            live: Default::default(),
        });
        if let Some(bus) = &bus {
            crate::live::bus::attach(bus, &state);
        }
        let data = web::Data::new(state.clone());
        let ops = Arc::new(Ops::new(addr, operator_token));
        let ops_data = web::Data::from(ops.clone());
        let local = addr;
        let app = move || {
            App::new()
                .app_data(data.clone())
                .app_data(web::PayloadConfig::new(crate::extract::MAX_BODY * 64))
                .app_data(ops_data.clone())
                // innermost first: the project id joins the request span once known
                .wrap(actix_web::middleware::from_fn(record_project))
                .wrap(actix_web::middleware::from_fn(crate::auth::middleware))
                .wrap(actix_web::middleware::from_fn(crate::metrics::middleware))
                .wrap(actix_web::middleware::from_fn(request_scope))
                .service(
                    web::resource(BACKUP_PATH)
                        .route(web::get().to(backup_handler))
                        .default_service(web::to(|| async {
                            Err::<HttpResponse, _>(ApiError(Error::no_route()))
                        })),
                )
                .configure(crate::routes::ops::configure)
                .configure(crate::console::configure)
                .configure(crate::routes::configure)
        };
        // actix-server directly rather than `HttpServer`, which cannot wrap a
        // connection's stream: `edge::ErrorBodies` gives the dispatcher's own
        // 431/400/408 answers the error object. Same settings as `HttpServer`'s
        // defaults (keep-alive 5 s, request head within 5 s, HTTP/1.1).
        let builder = actix_server::Server::build();
        // Idle keep-alive connections close as soon as a graceful stop begins
        // (as `HttpServer` arranges), instead of holding the stop for seconds.
        let stopping = builder.graceful_shutdown_signal();
        let server = builder
            .workers(workers.max(1))
            // A live socket leaves the worker's count once accepted (it runs
            // as a task of its own, src/live/upgrade.rs), but sockets still
            // being greeted count, and the default cap (25,600 per worker)
            // is no limit a node should add to its open files.
            .max_concurrent_connections(1 << 20)
            .shutdown_timeout(5)
            // Signals are ours (see `run_until_stopped`): sockets get a 1001 close first.
            .disable_signals()
            .listen("herald", listener, move || {
                use actix_service::ServiceFactoryExt;
                let stopping = stopping.clone();
                let h1 = actix_http::HttpService::build()
                    .graceful_shutdown_signal(move || {
                        let stopping = stopping.clone();
                        async move { stopping.notified().await }
                    })
                    .local_addr(local)
                    // WebSocket upgrades: the live feed's sockets leave the
                    // HTTP layer once accepted (src/live/upgrade.rs).
                    .upgrade(crate::live::upgrade::service(actix_service::map_config(
                        app(),
                        |_| actix_web::dev::AppConfig::default(),
                    )))
                    .h1(actix_service::map_config(app(), |_| {
                        actix_web::dev::AppConfig::default()
                    }));
                actix_service::fn_service(|io: actix_web::rt::net::TcpStream| {
                    let peer = io.peer_addr().ok();
                    let _ = io.set_nodelay(true);
                    std::future::ready(Ok::<_, actix_http::error::DispatchError>((
                        crate::edge::ErrorBodies::new(io),
                        peer,
                    )))
                })
                .and_then(h1)
            })
            .map_err(|e| e.to_string())?
            .run();
        // The ops file lets `herald backup` and `herald project` reach this
        // server through its data directory (on PostgreSQL, when one exists).
        let ops_file = if store.is_some() || state.settings.data_dir.is_dir() {
            remove_stale_snapshots(&state.settings.data_dir);
            match write_ops_file(&state.settings.data_dir, addr, &ops.token) {
                Ok(p) => Some(p),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot write the ops file: `herald backup` will not reach this server");
                    None
                }
            }
        } else {
            None
        };
        // Tests and operators read this line; it goes to stdout whatever the log
        // setup (printed already when the store took long to open).
        if !early {
            println!("listening on http://{addr}");
            tracing::info!(%addr, "herald is listening");
        }
        Ok(Application {
            server,
            state,
            port: addr.port(),
            engine,
            store,
            pg,
            ops_file,
            _dir_lock: dir_lock,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves until SIGTERM/SIGINT, then stops the engine and flushes the store.
    /// The whole shutdown takes at most `shutdown_grace` seconds: past that (a
    /// request or the final flush stuck on a failing disk) the process exits
    /// with status 1 and says so; a final flush that fails exits 1 as well.
    pub async fn run_until_stopped(self) -> Result<(), String> {
        let handle = self.server.handle();
        let state = self.state.clone();
        let grace = std::time::Duration::from_secs(self.state.settings.shutdown_grace);
        actix_web::rt::spawn(async move {
            wait_for_signal().await;
            // A plain thread: it must fire even if every runtime thread is
            // stuck. Its last words go through the log queue, which neither
            // blocks nor panics on a full disk (`telemetry`), and `_exit`
            // flushes nothing that could block (stdout to a stuck pipe).
            let _ = std::thread::Builder::new()
                .name("herald-shutdown-grace".into())
                .spawn(move || {
                    std::thread::sleep(grace.saturating_sub(LAST_WORDS));
                    let msg = format!(
                        "shutdown did not finish within its grace period of {} s (--shutdown-grace); exiting with status 1 (unfinished deliveries resume on the next start)",
                        grace.as_secs()
                    );
                    crate::telemetry::last_words(&msg);
                    // SAFETY: `_exit` ends the process at once; nothing of
                    // this process's state needs to outlive it.
                    unsafe { libc::_exit(1) }
                });
            tracing::info!("signal received: closing live sockets, finishing requests");
            state.live.close_all();
            // Give the close frames a moment to go out before connections are dropped.
            for _ in 0..20 {
                if state.live.is_empty() {
                    break;
                }
                actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            handle.stop(true).await;
        });
        let r = self.server.await.map_err(|e| e.to_string());
        tracing::info!("shutting down: stopping engine, flushing store");
        self.engine.shutdown();
        let store = self.store.clone();
        let pg = self.pg.clone();
        // PostgreSQL has every commit durable already: its pool only closes.
        let flushed = web::block(move || match (store, pg) {
            (Some(s), _) => s.flush(),
            (None, Some(p)) => {
                p.close();
                Ok(())
            }
            (None, None) => Ok(()),
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.message));
        if let Some(p) = &self.ops_file {
            let _ = std::fs::remove_file(p);
        }
        if let Err(e) = flushed {
            tracing::error!(error = %e, "the final flush of the store failed");
            return Err(format!(
                "the final flush of the store failed ({e}); writes that were acknowledged are on disk"
            ));
        }
        r
    }
}

/// What the shutdown grace keeps for its last log lines: the process exits
/// `--shutdown-grace` seconds after the signal at the latest, these included.
const LAST_WORDS: std::time::Duration = std::time::Duration::from_secs(1);

/// SIGTERM or SIGINT.
async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).expect("install SIGTERM handler");
        let mut int = signal(SignalKind::interrupt()).expect("install SIGINT handler");
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
