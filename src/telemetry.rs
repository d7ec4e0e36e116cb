//! Logging through `tracing` (README, Operations): human-readable by default, one JSON
//! object per line with `--log-format json`; the level comes from `RUST_LOG`
//! (default `info`). Logs go to stderr (stdout carries the `listening on` line
//! and generated keys).
//!
//! Every HTTP request runs in a `request` span with `request_id`, `method`,
//! `route` (the route pattern, never the concrete path, so no id or key in a URL
//! is logged) and `project_id` once authenticated, and ends with one
//! `request completed` line at info level carrying `status` and `latency_ms`
//! (see `startup::request_scope`). In JSON each line carries its spans' fields
//! under `span` (the innermost) and `spans` (all of them).
//!
//! Secrets are never logged: no header value, request body, channel config or
//! key is ever put on a span or an event.
//!
//! Logging never holds anything up. A line is queued (bounded) and written to
//! stderr by one thread of its own; a line that finds the queue full is
//! dropped and counted, and a write that fails is ignored. So stderr on a full
//! disk (ENOSPC) or a log pipe nobody reads (a stuck collector) costs log lines,
//! never a request or the shutdown. Writing from the logging thread itself, as
//! `tracing_subscriber`'s default writer does, blocked every logging thread on
//! a pipe that was not read; and on a write error the subscriber reported it
//! with `eprintln!`, which panics when stderr cannot be written: every request
//! (it logs a line) ended in a panic and an empty reply.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::{fmt, EnvFilter};

/// The filter when `RUST_LOG` is not set.
pub const DEFAULT_FILTER: &str = "info,sled=warn";

/// Lines waiting for the writer thread at most (about 2 MiB of typical lines).
const QUEUE_LINES: usize = 8192;

/// The queue to the writer thread, shared by every logging thread.
pub struct Sink {
    tx: SyncSender<Vec<u8>>,
    /// Lines queued and not yet written (or given up on).
    pending: AtomicU64,
    /// Lines dropped because the queue was full, since the last note of it.
    dropped: AtomicU64,
}

static SINK: OnceLock<Sink> = OnceLock::new();

impl Sink {
    /// The sink and its writer thread, started once per process.
    fn get() -> &'static Sink {
        SINK.get_or_init(|| {
            let (tx, rx) = sync_channel(QUEUE_LINES);
            let spawned = std::thread::Builder::new()
                .name("herald-log-writer".into())
                .spawn(move || write_lines(rx));
            if spawned.is_err() {
                // no writer: every line is dropped (the queue fills), nothing waits
            }
            Sink {
                tx,
                pending: AtomicU64::new(0),
                dropped: AtomicU64::new(0),
            }
        })
    }

    /// Queues one line; never blocks.
    fn push(&self, line: Vec<u8>) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        match self.tx.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.pending.fetch_sub(1, Ordering::SeqCst);
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The writer thread: each line to stderr, errors ignored (see the module doc).
fn write_lines(rx: Receiver<Vec<u8>>) {
    let mut err = std::io::stderr();
    for line in rx {
        let _ = err.write_all(&line);
        if let Some(s) = SINK.get() {
            s.pending.fetch_sub(1, Ordering::SeqCst);
            let dropped = s.dropped.swap(0, Ordering::Relaxed);
            if dropped > 0 {
                // through the subscriber, so it has the configured format
                tracing::warn!(
                    dropped,
                    "log lines dropped: stderr did not take them in time"
                );
            }
        }
    }
}

/// What `tracing_subscriber` writes one event through: the formatted line
/// (it writes each event with one `write_all`) goes to the queue whole.
pub struct LineWriter(&'static Sink);

impl Write for LineWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.push(buf.to_vec());
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The `MakeWriter` of the subscriber.
#[derive(Clone, Copy)]
pub struct Lossy;

impl<'a> MakeWriter<'a> for Lossy {
    type Writer = LineWriter;
    fn make_writer(&'a self) -> LineWriter {
        LineWriter(Sink::get())
    }
}

pub fn init(format: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    // `log_internal_errors(false)`: a failed write is not reported with
    // `eprintln!` (which panics when stderr cannot be written).
    let res = if format == "json" {
        fmt()
            .with_env_filter(filter)
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .with_writer(Lossy)
            .log_internal_errors(false)
            .try_init()
    } else {
        // colours only for a terminal, and never with NO_COLOR set
        let ansi = std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal();
        fmt()
            .with_env_filter(filter)
            .with_ansi(ansi)
            .with_writer(Lossy)
            .log_internal_errors(false)
            .try_init()
    };
    let _ = res; // already initialised (tests, repeated calls)
}

/// Waits until the queued lines are written, for at most `timeout` (stderr
/// may never take them): before the process exits, so its last lines are seen.
pub fn flush(timeout: Duration) {
    let Some(s) = SINK.get() else { return };
    let deadline = Instant::now() + timeout;
    while s.pending.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A line for stderr that must not block nor panic (`eprintln!` does both
/// on a full disk or a stuck pipe): through the queue, after the log lines
/// before it; written unless stderr cannot take it.
pub fn stderr_line(msg: &str) {
    Sink::get().push(format!("{msg}\n").into_bytes());
}

/// The last words of a process that is about to exit: `msg` as an error log
/// line and as `error: msg` on stderr, waiting at most a second for them to
/// be written.
pub fn last_words(msg: &str) {
    tracing::error!("{msg}");
    stderr_line(&format!("error: {msg}"));
    flush(Duration::from_secs(1));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_lines_without_waiting() {
        let (tx, rx) = sync_channel(2);
        let s = Sink {
            tx,
            pending: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        };
        let t = Instant::now();
        for _ in 0..10 {
            s.push(b"x\n".to_vec());
        }
        assert!(t.elapsed() < Duration::from_secs(1));
        assert_eq!(s.pending.load(Ordering::SeqCst), 2);
        assert_eq!(s.dropped.load(Ordering::SeqCst), 8);
        drop(rx);
        s.push(b"y\n".to_vec());
        assert_eq!(s.dropped.load(Ordering::SeqCst), 9, "no reader: dropped");
    }
}
