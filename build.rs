//! Build script: records the git commit the binary is built from, for
//! `herald --version` (`herald 0.1.0 (1a2b3c4)`). Without git or a `.git`
//! (a source tarball) the commit is `unknown`; the build never fails over it.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=HERALD_GIT_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    // Build again when HEAD moves: HEAD itself (a checkout), the branch it
    // points to (a commit) and packed refs. Only files that exist are named:
    // cargo reruns a script every time for a missing one. In a worktree the
    // HEAD lives in its own git dir and the branches in the common one.
    let (Some(git_dir), Some(common)) = (
        git(&["rev-parse", "--absolute-git-dir"]),
        git(&["rev-parse", "--git-common-dir"]),
    ) else {
        return;
    };
    let git_dir = PathBuf::from(git_dir);
    let mut common = PathBuf::from(common);
    if common.is_relative() {
        common = std::env::current_dir().unwrap_or_default().join(common);
    }
    let mut watch = vec![git_dir.join("HEAD"), common.join("packed-refs")];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch.push(common.join(&branch));
        watch.push(git_dir.join(&branch));
    }
    for p in watch.into_iter().filter(|p| p.is_file()) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}
