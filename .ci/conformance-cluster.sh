#!/usr/bin/env bash
# The contract checker (../shared/conformance) against one node of a
# three-node cluster: three `herald serve` processes on one fresh PostgreSQL
# database and a nats-server of this script's own, the checker talking to
# the second node (whatever it accepts may be delivered by any of the three:
# they share the work through their leases). Everything it starts is stopped
# and the database dropped on exit.
#
# Usage: .ci/conformance-cluster.sh [HERALD_BINARY] [check.py arguments...]
# Needs PostgreSQL on HERALD_TEST_PG (default postgres://postgres@127.0.0.1:5432,
# trust auth) and nats-server (Debian's package), as .ci/run provides.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${1:-target/debug/herald}
shift || true
CHECK=../shared/conformance/check.py
PG=${HERALD_TEST_PG:-postgres://postgres@127.0.0.1:5432}
PG=${PG%/}
NATS=$(command -v nats-server || echo /usr/sbin/nats-server)
[ -x "$NATS" ] || { echo "conformance-cluster: nats-server is not installed" >&2; exit 1; }
[ -f "$CHECK" ] || { echo "conformance-cluster: $CHECK not found" >&2; exit 1; }

WORK=$(mktemp -d)
DB="herald_conformance_$$_$RANDOM"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  psql "$PG/postgres" -qAtc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The bus.
NATS_PORT=$(free_port)
"$NATS" -a 127.0.0.1 -p "$NATS_PORT" >"$WORK/nats.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do
  (echo >"/dev/tcp/127.0.0.1/$NATS_PORT") 2>/dev/null && break
  sleep 0.1
done

# The database, and the keys of project `default` (created by the first node).
psql "$PG/postgres" -qAtc "CREATE DATABASE $DB" >/dev/null
PK="pk_test_$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
SK="sk_test_$(python3 -c 'import secrets; print(secrets.token_hex(16))')"

# Three nodes, each on a free port; the address each prints once listening.
ADDRS=()
for i in 1 2 3; do
  HERALD_BOOTSTRAP_PUBLIC_KEY=$PK HERALD_BOOTSTRAP_SECRET_KEY=$SK RUST_LOG=warn \
    "$BIN" serve --bind 127.0.0.1:0 --data-dir "$WORK/node$i" \
      --store "$PG/$DB" --bus "nats://127.0.0.1:$NATS_PORT" \
      >"$WORK/node$i.out" 2>"$WORK/node$i.err" &
  PIDS+=($!)
  addr=""
  for _ in $(seq 1 600); do
    addr=$(sed -n 's/^listening on http:\/\///p' "$WORK/node$i.out" | head -1)
    [ -n "$addr" ] && break
    kill -0 "${PIDS[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$addr" ]; then
    echo "conformance-cluster: node $i did not start" >&2
    cat "$WORK/node$i.err" >&2
    exit 1
  fi
  ADDRS+=("$addr")
done
echo "conformance-cluster: nodes ${ADDRS[*]} on $DB, bus 127.0.0.1:$NATS_PORT; checking ${ADDRS[1]}"

status=0
python3 "$CHECK" --url "http://${ADDRS[1]}" --public-key "$PK" --secret-key "$SK" "$@" || status=$?
if [ "$status" -ne 0 ]; then
  for i in 1 2 3; do echo "--- node $i stderr (last 40 lines)"; tail -40 "$WORK/node$i.err"; done >&2
fi
exit "$status"
