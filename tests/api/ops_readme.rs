//! The README's "Operations" section documents every command-line flag of
//! `herald serve`, `herald backup` and `herald restore`, with its environment
//! variable: this test fails when a flag is added without documenting it.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::helpers::*;

fn help(args: &[&str]) -> String {
    let mut cmd = Command::new(herald_bin());
    cmd.args(args).arg("--help").stdin(Stdio::null());
    let out = run_with_timeout(cmd, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{args:?} --help: {out:?}");
    out.stdout
}

/// `(--flag, Some(HERALD_ENV))` of every option in a clap help text.
fn flags(help: &str) -> Vec<(String, Option<String>)> {
    let mut out = vec![];
    let lines: Vec<&str> = help.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let flag = t.split([' ', ',', '=']).find(|w| w.starts_with("--"));
        let Some(flag) = flag else { continue };
        if !t.starts_with("--") && !t.starts_with('-') {
            continue;
        }
        if flag == "--help" || flag == "--version" {
            continue;
        }
        // clap prints `[env: NAME=]` in the option's description, maybe a line or two below
        let env = lines[i..(i + 4).min(lines.len())].iter().find_map(|l| {
            let s = l.find("[env: ")? + 6;
            let rest = &l[s..];
            let e = rest.find(['=', ']'])?;
            Some(rest[..e].to_string())
        });
        out.push((flag.to_string(), env));
    }
    out
}

fn operations_section() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let start = readme
        .find("\n## Operations")
        .expect("README has an `## Operations` section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map(|i| i + 3).unwrap_or(rest.len());
    rest[..end].to_string()
}

#[test]
fn readme_documents_every_serve_flag_and_variable() {
    let ops = operations_section();
    let serve = flags(&help(&["serve"]));
    assert!(serve.len() >= 8, "parsed serve --help: {serve:?}");
    for (flag, env) in &serve {
        let row = ops
            .lines()
            .find(|l| l.starts_with('|') && l.contains(&format!("`{flag}`")))
            .unwrap_or_else(|| panic!("README Operations: no table row for `{flag}`"));
        let env = env
            .as_deref()
            .unwrap_or_else(|| panic!("{flag} has no environment variable"));
        assert!(
            row.contains(&format!("`{env}`")),
            "README row for `{flag}` must name `{env}`: {row}"
        );
    }
    // and no documented serve flag that no longer exists
    for line in ops.lines().filter(|l| l.starts_with("| `--")) {
        let flag = line.split('`').nth(1).unwrap();
        assert!(
            serve.iter().any(|(f, _)| f == flag),
            "README documents `{flag}`, which `herald serve --help` does not list"
        );
    }
}

#[test]
fn readme_documents_backup_restore_and_endpoints() {
    let ops = operations_section();
    for cmd in ["backup", "restore"] {
        for (flag, _) in flags(&help(&[cmd])) {
            assert!(
                ops.contains(&format!("herald {cmd}")) && ops.contains(&flag),
                "README Operations must show `herald {cmd}` with `{flag}`"
            );
        }
    }
    for needle in [
        "/openapi.json",
        "/docs",
        "--log-format json",
        "RUST_LOG",
        "FORMAT",
        "ops.json",
    ] {
        assert!(ops.contains(needle), "README Operations mentions {needle}");
    }
}

/// The first ```` ```sh ```` block after `## {heading}` in README.md.
fn readme_sh_block(heading: &str) -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let at = readme
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README has a `## {heading}` section"));
    let rest = &readme[at..];
    let start = rest.find("\n```sh\n").expect("a ```sh block") + "\n```sh\n".len();
    let end = rest[start..].find("\n```").expect("the block's end");
    rest[start..start + end].to_string()
}

/// Runs a script with `bash -c` (no proxy variables), for at most a minute.
fn bash(script: &str) -> CmdOutput {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(script).stdin(Stdio::null());
    for v in [
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "all_proxy",
    ] {
        cmd.env_remove(v);
    }
    run_with_timeout(cmd, Duration::from_secs(60))
}

/// The README's "First requests", run verbatim (extracted from
/// README.md, so the two cannot drift) with `bash`, `curl` and `python3`
/// against the built binary on its first start: only the keys and the address
/// the server printed are put into the block's first line. Every request
/// answers as the walk-through says, and alice's feed shows the rendered
/// message, unread; then the block's last part (from `# alice reads`), run
/// once the entry is there, marks it read.
#[test]
fn readme_first_requests_work_verbatim() {
    let whole = readme_sh_block("First requests");
    let split = whole
        .find("\n# alice reads")
        .expect("the block ends by marking alice's entry read (`# alice reads …`)");
    let (block, reads) = (&whole[..split], &whole[split + 1..]);
    let first = block.lines().next().unwrap_or_default();
    assert_eq!(
        first, "PK=pk_…; SK=sk_…; H=http://127.0.0.1:8080",
        "the block starts by naming the keys and the address"
    );
    // the first start, as the README shows it: no bootstrap keys, so the
    // server creates project default and prints its keys
    let tmp = tempfile::tempdir().expect("tempdir");
    let app = TestApp::start(ServeOptions {
        data_dir: tmp.path(),
        bootstrap: None,
        args: &[],
        env: &[],
        default_flags: true,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let stdout = app.output.stdout_lines();
    assert!(
        stdout.iter().any(|l| l == "created project default"),
        "{stdout:?}"
    );
    assert!(
        app.public_key.starts_with("pk_") && app.secret_key.starts_with("sk_"),
        "printed keys: {stdout:?}"
    );
    let script = block.replacen(
        first,
        &format!(
            "PK={}; SK={}; H={}",
            app.public_key, app.secret_key, app.address
        ),
        1,
    );
    let out = bash(&script);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // curl -s prints each answer without a newline: a stream of JSON values
    let answers: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&out.stdout)
        .into_iter::<serde_json::Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("the answers are JSON ({e}): {}", out.stdout));
    assert_eq!(
        answers.len(),
        5,
        "user, flow, activation, run, feed: {answers:?}"
    );
    assert_eq!(answers[0]["external_id"], "alice", "{}", answers[0]);
    assert_eq!(answers[0]["email"], "alice@example.com");
    assert_eq!(answers[1]["handle"], "welcome", "{}", answers[1]);
    assert_eq!(answers[2]["status"], "active", "{}", answers[2]);
    assert_eq!(answers[3]["status"], "pending", "{}", answers[3]);
    assert!(answers[4]["items"].is_array(), "{}", answers[4]);

    // the delivery is asynchronous: ask again with the block's own last
    // command (what alice sees) until the entry is there
    let feed_cmd = block
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .expect("the block's last command");
    assert!(feed_cmd.contains("/user/v1/feed"), "{feed_cmd}");
    // the block's first line as run, and its shell functions
    let prelude: Vec<&str> = script
        .lines()
        .take(1)
        .chain(block.lines().filter(|l| l.contains("() {")))
        .collect();
    let prelude = prelude.join("\n");
    let ask = format!("{prelude}\n{feed_cmd}");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let feed = loop {
        let out = bash(&ask);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let feed: serde_json::Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("the feed is JSON ({e}): {}", out.stdout));
        if feed["items"].as_array().is_some_and(|i| !i.is_empty()) {
            break feed;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "alice's feed stayed empty: {feed}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let items = feed["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{feed}");
    assert_eq!(items[0]["data"]["subject"], "Hi", "{feed}");
    assert_eq!(
        items[0]["data"]["body"], "Welcome, Alice! Try the feed.",
        "{feed}"
    );
    assert_eq!(items[0]["read"], false, "{feed}");
    assert_eq!(feed["meta"]["unread_count"], 1, "{feed}");

    // alice reads it: the PATCH answers the entry, read
    let out = bash(&format!("{prelude}\n{reads}"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let entry: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("the answer is one JSON entry ({e}): {}", out.stdout));
    assert_eq!(entry["id"], items[0]["id"], "{entry}");
    assert_eq!(entry["read"], true, "{entry}");
    assert!(entry["read_at"].is_string(), "{entry}");
    let out = bash(&ask);
    let feed: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("the feed is JSON ({e}): {}", out.stdout));
    assert_eq!(feed["items"][0]["read"], true, "{feed}");
    assert_eq!(feed["meta"]["unread_count"], 0, "{feed}");
}

/// The help text of one option of a clap help text, whitespace collapsed.
fn option_help(help: &str, flag: &str) -> String {
    let lines: Vec<&str> = help.lines().collect();
    let at = lines
        .iter()
        .position(|l| {
            let t = l.trim_start();
            t.starts_with('-') && t.split([' ', ',', '=']).any(|w| w == flag)
        })
        .unwrap_or_else(|| panic!("{flag} in --help"));
    let mut text = vec![lines[at]];
    for l in &lines[at + 1..] {
        if l.trim_start().starts_with('-') {
            break;
        }
        text.push(l);
    }
    text.join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `herald serve --help` shows the defaults the README's table
/// lists (`[default: …]`), and words `--workers` as the README does.
#[test]
fn serve_help_shows_the_readme_defaults() {
    let ops = operations_section();
    let help = help(&["serve"]);
    let mut checked = 0;
    for row in ops.lines().filter(|l| l.starts_with("| `--")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (flag, default) = (cells[1].trim_matches('`'), cells[3]);
        if default == "—" {
            continue;
        }
        let default = default.trim_matches('`');
        let text = option_help(&help, flag);
        assert!(
            text.contains(&format!("[default: {default}]")),
            "`herald serve --help` for {flag} must show [default: {default}] as the README does: {text}"
        );
        checked += 1;
    }
    assert!(checked >= 15, "README rows with a default: {checked}");
    let workers = option_help(&help, "--workers");
    let row = ops
        .lines()
        .find(|l| l.starts_with("| `--workers`"))
        .expect("README row for --workers");
    let meaning = row.split('|').nth(4).unwrap().trim();
    assert!(
        workers.contains(meaning),
        "--workers is worded as in the README ({meaning}): {workers}"
    );
}

/// The first ```` ```sh ```` block after the paragraph that starts with `lead`.
fn readme_sh_block_after(lead: &str) -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let at = readme
        .find(&format!("\n{lead}"))
        .unwrap_or_else(|| panic!("README has a paragraph `{lead}`"));
    let rest = &readme[at..];
    let start = rest.find("\n```sh\n").expect("a ```sh block") + "\n```sh\n".len();
    let end = rest[start..].find("\n```").expect("the block's end");
    rest[start..start + end].to_string()
}

/// The README's "Trying email locally" left out `--egress-allow`, so its
/// channel (an SMTP sink on 127.0.0.1) was refused with a 422 until the server
/// was restarted with it. Its `herald serve` line, with the egress guard on as
/// in production, lets its `curl` create the channel; without the line's
/// arguments the same `curl` gets the 422 the README warns of.
#[test]
fn readme_trying_email_locally_works() {
    let block = readme_sh_block_after("Trying email locally");
    let serve = block
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("herald serve"))
        .expect("the block starts the server with `herald serve`");
    let serve = serve.split('#').next().unwrap_or_default();
    let args: Vec<&str> = serve.split_whitespace().collect();
    assert!(
        args.contains(&"--egress-allow"),
        "the server is started with --egress-allow: {block}"
    );
    // the channel request (the block's curl command with its continuation lines)
    let from = block.find("curl ").expect("a curl command in the block");
    let curl = &block[from..];
    assert!(curl.contains("localhost:8080/admin/v1/channels"), "{curl}");
    let create = |app: &TestApp| {
        let host = app.address.trim_start_matches("http://");
        let script = format!(
            "PK={}; SK={}\n{}",
            app.public_key,
            app.secret_key,
            curl.replace("localhost:8080", host)
        );
        let out = bash(&script);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        serde_json::from_str::<serde_json::Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("the answer is JSON ({e}): {}", out.stdout))
    };

    let guarded = TestApp::spawn_with(&[], &[GUARD_ON]);
    let refused = create(&guarded);
    assert_eq!(refused["error"]["status"], 422, "{refused}");
    let field = &refused["error"]["details"]["fields"][0];
    assert_eq!(field["field"], "config.host", "{refused}");
    assert_eq!(field["reason"], "exclusion", "{refused}");
    drop(guarded);

    let app = TestApp::spawn_with(&args, &[GUARD_ON]);
    let channel = create(&app);
    assert_eq!(channel["type"], "email", "{channel}");
    assert_eq!(channel["provider"], "smtp", "{channel}");
    assert_eq!(channel["config"]["host"], "127.0.0.1", "{channel}");
}

/// Markdown files under `dir`, recursively.
fn markdown_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

/// README and docs need nothing outside the repository: the bench's soketi
/// installer was `../shared/peers/soketi/` and the contract checker
/// `../shared/conformance`, folders only CI's clone has beside it. No
/// relative path in README.md, docs/ or benches/ leaves the repository, every
/// repository path the README names exists, and the bench's code names no
/// path outside it.
#[test]
fn readme_and_docs_need_nothing_outside_the_repository() {
    use std::path::{Component, Path, PathBuf};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    markdown_files(&root.join("docs"), &mut files);
    markdown_files(&root.join("benches"), &mut files);
    let up = regex::Regex::new(r"(\.\./)+[^\s`)\]'\x22]*").unwrap();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("a markdown file");
        let dir = f.parent().unwrap();
        for m in up.find_iter(&text) {
            // lexically: how far above the repository root it goes
            let mut at: Vec<Component> = dir.strip_prefix(root).unwrap().components().collect();
            let mut outside = false;
            for c in Path::new(m.as_str()).components() {
                match c {
                    Component::ParentDir if at.pop().is_none() => outside = true,
                    Component::ParentDir => {}
                    c => at.push(c),
                }
            }
            assert!(
                !outside,
                "{} names `{}`, outside the repository",
                f.display(),
                m.as_str()
            );
        }
    }
    // the repository paths the README names (in code spans) exist
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let mut named = 0;
    for span in readme.split('`').skip(1).step_by(2) {
        let Some(word) = span.split_whitespace().next() else {
            continue;
        };
        let word = word.trim_end_matches([',', '.', ';', ':']);
        let repo_path = [
            "benches/", "clients/", "contrib/", "docs/", "src/", "tests/", ".ci/", "actors/",
        ]
        .iter()
        .any(|p| word.starts_with(p));
        if repo_path {
            let p: PathBuf = root.join(word);
            assert!(
                p.exists(),
                "README names `{word}`, which the repository lacks"
            );
            named += 1;
        }
    }
    assert!(named >= 10, "README paths checked: {named}");
    // the soketi peer's scripts are in the repository, and the bench uses them there
    for f in [
        "install_soketi.sh",
        "start_soketi.sh",
        "stop_soketi.sh",
        "package.json",
        "soketi.config.json",
    ] {
        assert!(
            root.join("benches/peers/soketi").join(f).exists(),
            "benches/peers/soketi/{f}"
        );
    }
    for e in std::fs::read_dir(root.join("benches/delivery")).expect("benches/delivery") {
        let p = e.expect("an entry").path();
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        assert!(
            !text.contains("../shared"),
            "{} names a path outside the repository (../shared)",
            p.display()
        );
    }
}
