//! The server's process: its output, captured line by line, how the harness
//! waits for it to serve, and running `herald` commands to completion.

use super::*;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ================================================================ the process

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Output of a child process, drained by background threads so the child
/// never blocks on a full pipe.
#[derive(Clone, Default)]
pub struct Output(Arc<Mutex<Vec<(Stream, String)>>>);

impl Output {
    pub fn lines(&self) -> Vec<(Stream, String)> {
        self.0.lock().unwrap().clone()
    }
    pub fn stdout_lines(&self) -> Vec<String> {
        self.stream(Stream::Stdout)
    }
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stream(Stream::Stderr)
    }
    fn stream(&self, which: Stream) -> Vec<String> {
        self.lines()
            .into_iter()
            .filter(|(s, _)| *s == which)
            .map(|(_, l)| l)
            .collect()
    }
    pub fn text(&self) -> String {
        self.lines()
            .into_iter()
            .map(|(s, l)| format!("[{}] {l}", if s == Stream::Stdout { "out" } else { "err" }))
            .collect::<Vec<_>>()
            .join("\n")
    }
    pub fn tail(&self, n: usize) -> String {
        let lines = self.lines();
        let start = lines.len().saturating_sub(n);
        lines[start..]
            .iter()
            .map(|(s, l)| format!("[{}] {l}", if *s == Stream::Stdout { "out" } else { "err" }))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The server's test knob that delays opening its store (see `wait_until_serving`).
pub const OPEN_DELAY_ENV: &str = "HERALD_TEST_OPEN_DELAY_MS";

/// A server whose store takes more than a second to open (a loaded machine,
/// a PostgreSQL migration) listens early and answers 503 "the server is
/// starting" until it is open (docs/API.md §14): a test starts once it
/// serves. Raw HTTP/1.1 on a std socket, as `start` is not async.
pub(crate) fn wait_until_serving(address: &str) -> Result<(), String> {
    use std::io::Write;
    let host = address.trim_start_matches("http://").trim_end_matches('/');
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let starting = (|| -> std::io::Result<bool> {
            let mut s = std::net::TcpStream::connect(host)?;
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            s.write_all(
                format!("GET /readyz HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n")
                    .as_bytes(),
            )?;
            let mut buf = String::new();
            s.read_to_string(&mut buf)?;
            Ok(buf.is_empty() || buf.contains("the server is starting"))
        })();
        if let Ok(false) = starting {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "herald serve listened on {address} but did not serve within {START_TIMEOUT:?} ({starting:?})"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Extracts `http://ADDR` from a line containing `listening on http://ADDR`.
fn parse_listen(line: &str) -> Option<String> {
    let i = line.find("listening on http://")?;
    let rest = &line[i + "listening on ".len()..];
    let end = rest
        .find(|c: char| c.is_whitespace() || "\"'<>,;\\".contains(c))
        .unwrap_or(rest.len());
    let url = rest[..end].trim_end_matches(['.', ')']);
    Some(url.to_string())
}

pub(crate) fn pump<R: Read + Send + 'static>(
    reader: R, stream: Stream, out: Output, listen: Option<mpsc::Sender<String>>,
) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(reader);
        let mut buf = Vec::new();
        let mut sent = false;
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = strip_ansi(String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']));
            let url = if sent { None } else { parse_listen(&line) };
            // record the line before telling the waiter, so it is visible then
            out.0.lock().unwrap().push((stream, line));
            if let (Some(tx), Some(url)) = (&listen, url) {
                let _ = tx.send(url);
                sent = true;
            }
        }
        // dropping `listen` tells the waiter that stdout closed
    });
}

/// The `public_key: pk_…` / `secret_key: sk_…` pair printed on stdout, if any.
pub fn printed_keys(stdout: &[String]) -> Option<Keys> {
    let find = |label: &str, prefix: &str| {
        stdout.iter().find_map(|l| {
            let i = l.find(label)?;
            let tok = l[i + label.len()..]
                .split_whitespace()
                .next()?
                .trim_matches(|c| c == '"' || c == '\'' || c == ',');
            tok.starts_with(prefix).then(|| tok.to_string())
        })
    };
    Some(Keys {
        public_key: find("public_key: ", "pk_")?,
        secret_key: find("secret_key: ", "sk_")?,
    })
}

/// Result of a finished one-shot command such as `herald project create`.
#[derive(Debug)]
pub struct CmdOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `herald project create NAME --data-dir DIR` (with a 60 s timeout).
pub fn project_create(name: &str, data_dir: &Path) -> CmdOutput {
    let mut cmd = base_command();
    cmd.arg("project")
        .arg("create")
        .arg(name)
        .arg("--data-dir")
        .arg(data_dir)
        .stdin(Stdio::null());
    with_store(&mut cmd, data_dir);
    run_with_timeout(cmd, Duration::from_secs(60))
}

pub fn run_with_timeout(mut cmd: Command, timeout: Duration) -> CmdOutput {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn herald");
    let out = Output::default();
    pump(
        child.stdout.take().unwrap(),
        Stream::Stdout,
        out.clone(),
        None,
    );
    pump(
        child.stderr.take().unwrap(),
        Stream::Stderr,
        out.clone(),
        None,
    );
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "command {cmd:?} did not exit within {timeout:?}; output:\n{}",
                out.text()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // let the pumps drain what is left in the pipes
    std::thread::sleep(Duration::from_millis(100));
    let join = |s: Stream| {
        out.lines()
            .into_iter()
            .filter(|(st, _)| *st == s)
            .map(|(_, l)| format!("{l}\n"))
            .collect::<String>()
    };
    CmdOutput {
        status,
        stdout: join(Stream::Stdout),
        stderr: join(Stream::Stderr),
    }
}
