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
