#!/usr/bin/env bash
# Builds and tests herald-node (clients/node): npm ci, tsc (and a compile-only
# check of the public types, test/types), the drift check
# (src/schema.ts regenerated from the binary's /openapi.json must equal the
# committed one, and every /admin/v1 operation must have an SDK method),
# npm pack --dry-run, then node's test runner against the real herald binary
# (HERALD_BIN, default target/debug/herald: build it first, e.g. `cargo build`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"

command -v node >/dev/null 2>&1 || { echo "node (>= 18) is required" >&2; exit 1; }
export HERALD_BIN="${HERALD_BIN:-$root/target/debug/herald}"
[ -x "$HERALD_BIN" ] || { echo "no herald binary at $HERALD_BIN (run cargo build first)" >&2; exit 1; }

npm ci --no-audit --no-fund --loglevel=error
rm -rf dist
npx tsc -p tsconfig.json
npx tsc -p tsconfig.typecheck.json   # the public types, as a consumer uses them
node scripts/gen-types.mjs --check
# the tarball holds dist/, the README, CHANGELOG, LICENSE and package.json, nothing else
npm pack --dry-run --ignore-scripts --json 2>/dev/null | node -e '
  const [p] = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const files = p.files.map((f) => f.path).sort();
  const stray = files.filter((f) => !/^(dist\/.*\.(js|d\.ts)|README\.md|CHANGELOG\.md|LICENSE|package\.json)$/.test(f));
  const missing = ["README.md", "CHANGELOG.md", "LICENSE", "package.json", "dist/index.js", "dist/index.d.ts"].filter((f) => !files.includes(f));
  console.log(`npm pack --dry-run: ${p.filename}, ${files.length} files, ${p.size} bytes`);
  if (stray.length || missing.length) { console.error("stray:", stray, "missing:", missing); process.exit(1); }'
exec node --test --test-concurrency=2 --test-timeout=180000 test/*.test.mjs
