//! What a packager needs besides the binary. The LICENSE is the MIT
//! licence Cargo.toml declares; `contrib/herald.service` carries the hardening
//! the README promises and passes `systemd-analyze verify` (the check CI runs,
//! `.ci/systemd-verify.sh`, here against the binary these tests start).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::helpers::*;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn license_is_the_declared_mit_licence() {
    let cargo = read("Cargo.toml");
    assert!(
        cargo.contains("license = \"MIT\""),
        "Cargo.toml declares MIT"
    );
    let license = read("LICENSE");
    assert!(license.starts_with("MIT License"), "{license}");
    assert!(license.contains("Copyright (c) 2026 The Herald authors"));
    assert!(license.contains("THE SOFTWARE IS PROVIDED \"AS IS\""));
    assert!(read("README.md").contains("[LICENSE](LICENSE)"));
}

#[test]
fn service_unit_is_hardened_and_verifies() {
    let unit = read("contrib/herald.service");
    for line in [
        "ExecStart=/usr/local/bin/herald serve",
        "DynamicUser=yes",
        "StateDirectory=herald",
        "Environment=HERALD_DATA_DIR=/var/lib/herald",
        "Environment=HERALD_SECRET_KEY_FILE=/var/lib/herald/secret.key",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "NoNewPrivileges=yes",
        "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
        "Restart=on-failure",
    ] {
        assert!(
            unit.lines().any(|l| l == line),
            "contrib/herald.service has `{line}`"
        );
    }
    assert!(unit.contains("MemoryMax="), "a MemoryMax= suggestion");
    let readme = read("README.md");
    assert!(readme.contains("contrib/herald.service"));
    assert!(read(".ci/run").contains("bash .ci/systemd-verify.sh"));

    // the CI check itself, when this machine has systemd-analyze (CI installs it)
    let have = Command::new("sh")
        .arg("-c")
        .arg("command -v systemd-analyze")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if have {
        let mut cmd = Command::new("bash");
        cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/systemd-verify.sh"))
            .env("HERALD_BIN", herald_bin())
            .stdin(Stdio::null());
        let out = run_with_timeout(cmd, Duration::from_secs(60));
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(out.stdout.contains("verified"), "{out:?}");
    }
}
