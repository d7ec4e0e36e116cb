#!/usr/bin/env bash
# The client packages' versions are the server's (README, "SDKs and React
# components"): fails when a package.json or pyproject.toml in clients/ says
# another version than Cargo.toml's.
set -euo pipefail
cd "$(dirname "$0")/.."
server=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
status=0
for f in clients/*/package.json clients/*/pyproject.toml; do
  v=$(python3 - "$f" <<'PY'
import json, sys, tomllib
f = sys.argv[1]
if f.endswith(".json"):
    print(json.load(open(f))["version"])
else:
    print(tomllib.load(open(f, "rb"))["project"]["version"])
PY
)
  if [ "$v" != "$server" ]; then
    echo "$f: version $v, but the server is $server" >&2
    status=1
  fi
done
[ "$status" = 0 ] && echo "client packages at the server's version $server"
exit "$status"
