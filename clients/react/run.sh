#!/usr/bin/env bash
# Builds and tests herald-react (clients/react): installs Debian's chromium
# when missing, builds herald-client (clients/js: npm ci + tsc, its dist/ is
# this package's dependency), then here: npm ci, the package (tsc + the
# stylesheet), the example app (type-checked against dist/*.d.ts, bundled by
# esbuild with React 19, and again with React 18), `npm pack --dry-run` checked for
# exactly the files meant to ship, and the browser tests (headless Chromium,
# axe-core) against the real herald binary: HERALD_BIN, default
# target/debug/herald (build it first, e.g. `cargo build`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

command -v node >/dev/null 2>&1 || { echo "node (>= 20) is required" >&2; exit 1; }
export HERALD_BIN="${HERALD_BIN:-$root/target/debug/herald}"
[ -x "$HERALD_BIN" ] || { echo "no herald binary at $HERALD_BIN (run cargo build first)" >&2; exit 1; }
if [ ! -x "${CHROMIUM_BIN:-/usr/bin/chromium}" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi

(cd "$root/clients/js" && npm ci --no-audit --no-fund --loglevel=error && npx tsc -p tsconfig.json)

cd "$here"
npm ci --no-audit --no-fund --loglevel=error
node scripts/build.mjs
npx tsc -p example/tsconfig.json
node example/build.mjs
(cd example/react18 && npm ci --no-audit --no-fund --loglevel=error)
node example/build.mjs --react18
node scripts/check-pack.mjs

exec node --test --test-concurrency=1 test/*.test.mjs
