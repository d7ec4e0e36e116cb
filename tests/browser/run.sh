#!/usr/bin/env bash
# Runs the headless-Chromium tests of /inbox, of the preference page
# (/p/{token}), of the one-click unsubscribe page (/u/{token}) and of the
# console's sign-in (/console/login) and pages (/console, with axe-core from
# node_modules; its walk also runs on a three-node cluster, which needs
# PostgreSQL on HERALD_TEST_PG, default 127.0.0.1:5432 with trust auth, and
# Debian's nats-server, as .ci/run provides): installs Debian's chromium
# when it is missing, the npm dependencies (npm ci), then the tests (each
# runs even when another failed; the exit code is non-zero when either did). Builds nothing:
# HERALD_BIN (default target/debug/herald) must exist, e.g. after `cargo build`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

if [ ! -x /usr/bin/chromium ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi
command -v node >/dev/null 2>&1 || { echo "node (>= 20) is required" >&2; exit 1; }

(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

export HERALD_BIN="${HERALD_BIN:-$root/target/debug/herald}"
if [ ! -x "$HERALD_BIN" ]; then
  echo "no herald binary at $HERALD_BIN (run cargo build first)" >&2
  exit 1
fi
cd "$root"
status=0
node tests/browser/inbox.test.mjs || status=1
node tests/browser/preferences.test.mjs || status=1
node tests/browser/unsubscribe.test.mjs || status=1
node tests/browser/console_login.test.mjs || status=1
node tests/browser/console_pages.test.mjs || status=1
exit "$status"
