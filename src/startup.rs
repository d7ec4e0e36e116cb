//! Builds the application: opens the store, makes sure project `default` exists,
//! starts the engine, binds the listener and wires the routes and middleware.

use crate::configuration::Settings;
use crate::errors::REQUEST_ID;
use crate::state::{AppState, Limits};
use actix_web::dev::{Server, Service};
use actix_web::{web, App, HttpServer};
use herald_actors::model::ChannelType;
use herald_actors::{Engine, EngineConfig, Store};
use std::net::TcpListener;
use std::sync::Arc;

pub struct Application {
    server: Server,
    state: Arc<AppState>,
    port: u16,
    engine: Engine,
    store: Store,
}

fn valid_request_id(s: &str) -> bool {
    (1..=200).contains(&s.len()) && s.bytes().all(|b| (0x20..0x7f).contains(&b))
}

impl Application {
    pub async fn build(
        settings: Settings,
        bootstrap: Option<(String, String)>,
        workers: usize,
    ) -> Result<Application, String> {
        let dir = settings.data_dir.clone();
        let store = web::block(move || Store::open(&dir))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.message)?;
        // Project `default`: created when absent; keys printed only when generated.
        if store
            .project_by_name("default")
            .map_err(|e| e.message)?
            .is_none()
        {
            let from_env = bootstrap.is_some();
            let keys = store
                .create_project("default", bootstrap)
                .map_err(|e| e.message)?;
            if !from_env {
                println!("created project default");
                println!("public_key: {}", keys.public_key);
                println!("secret_key: {}", keys.secret_key);
            }
        }
        let panic_once = std::env::var("HERALD_FAULT_PANIC_ONCE")
            .ok()
            .map(|s| {
                s.split(',')
                    .filter_map(|t| ChannelType::parse(t.trim()))
                    .collect()
            })
            .unwrap_or_default();
        let engine = Engine::start(
            store.clone(),
            EngineConfig {
                threads: settings.engine_threads.max(1),
                panic_once,
                ..Default::default()
            },
        )
        .map_err(|e| e.message)?;
        crate::metrics::install();
        let listener = TcpListener::bind(&settings.bind)
            .map_err(|e| format!("cannot bind {}: {e}", settings.bind))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let state = Arc::new(AppState {
            store: store.clone(),
            engine: engine.clone(),
            limits: Limits::new(settings.admin_rate, settings.user_rate),
            settings,
            idempotency: Default::default(),
            live: Default::default(),
            metrics_sockets: Default::default(),
        });
        let data = web::Data::new(state.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .app_data(web::PayloadConfig::new(crate::extract::MAX_BODY * 64))
                .wrap(actix_web::middleware::from_fn(crate::auth::middleware))
                .wrap(actix_web::middleware::from_fn(crate::metrics::middleware))
                .wrap_fn(|req, srv| {
                    let rid = req
                        .headers()
                        .get("x-request-id")
                        .and_then(|v| v.to_str().ok())
                        .filter(|s| valid_request_id(s))
                        .map(str::to_string)
                        .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
                    let fut = srv.call(req);
                    let rid_scope = rid.clone();
                    REQUEST_ID.scope(rid_scope, async move {
                        let mut res = fut.await?.map_into_boxed_body();
                        if let Ok(v) = actix_web::http::header::HeaderValue::from_str(&rid) {
                            res.headers_mut().insert(
                                actix_web::http::header::HeaderName::from_static("x-request-id"),
                                v,
                            );
                        }
                        Ok::<_, actix_web::Error>(res)
                    })
                })
                .configure(crate::routes::configure)
        })
        .workers(workers.max(1))
        .shutdown_timeout(5)
        // Signals are ours (see `run_until_stopped`): sockets get a 1001 close first.
        .disable_signals()
        .listen(listener)
        .map_err(|e| e.to_string())?
        .run();
        // Tests and operators read this line; it goes to stdout whatever the log setup.
        println!("listening on http://{addr}");
        tracing::info!(%addr, "herald is listening");
        Ok(Application {
            server,
            state,
            port: addr.port(),
            engine,
            store,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves until SIGTERM/SIGINT, then stops the engine and flushes the store.
    pub async fn run_until_stopped(self) -> Result<(), String> {
        let handle = self.server.handle();
        let state = self.state.clone();
        actix_web::rt::spawn(async move {
            wait_for_signal().await;
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
        let _ = web::block(move || store.flush()).await;
        r
    }
}

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
