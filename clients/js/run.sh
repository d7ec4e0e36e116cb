#!/usr/bin/env bash
# Builds and tests herald-client (clients/js): npm ci, tsc (the package and the
# /inbox page), the committed /inbox bundle checked against a fresh one, then
# node's test runner against the real herald binary (HERALD_BIN, default
# target/debug/herald: build it first, e.g. `cargo build` or `cargo test`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"

command -v node >/dev/null 2>&1 || { echo "node (>= 20) is required" >&2; exit 1; }
export HERALD_BIN="${HERALD_BIN:-$root/target/debug/herald}"
[ -x "$HERALD_BIN" ] || { echo "no herald binary at $HERALD_BIN (run cargo build first)" >&2; exit 1; }

npm ci --no-audit --no-fund --loglevel=error
npx tsc -p tsconfig.json
npx tsc -p tsconfig.inbox.json
node scripts/bundle-inbox.mjs --check

# node 22+ has a global WebSocket; node 20 needs the flag
flags=()
node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' || flags+=(--experimental-websocket)
exec node "${flags[@]}" --test --test-concurrency=2 test/
