#!/usr/bin/env bash
# CI entry point of herald-sdk (the Python client): called from the repository
# root as `bash clients/python/run.sh`. Makes (or reuses) a venv under
# target/py-sdk-venv, installs the pinned dev requirements and the package
# (editable), runs the drift check against the real binary and mypy, builds
# the sdist and wheel into target/py-sdk-dist, then runs the whole test suite.
# The herald binary is HERALD_BIN, default <repo root>/target/debug/herald.
set -euo pipefail

PKG="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$PKG/../.." && pwd)"
VENV="$ROOT/target/py-sdk-venv"
PY="${PYTHON:-python3}"
export HERALD_BIN="${HERALD_BIN:-$ROOT/target/debug/herald}"

if [ ! -x "$HERALD_BIN" ]; then
  echo "herald-sdk: no herald binary at $HERALD_BIN (build it first, or set HERALD_BIN)" >&2
  exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
VPY="$VENV/bin/python"
"$VPY" -m pip install --quiet --disable-pip-version-check -r "$PKG/requirements-dev.txt"
"$VPY" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e "$PKG"

echo "== herald-sdk: drift check (herald_sdk.models and the operation table against /openapi.json)"
"$VPY" "$PKG/scripts/gen_models.py" --check

echo "== herald-sdk: type check (mypy: the package, and what callers of both clients see)"
(cd "$PKG" && "$VPY" -m mypy --cache-dir "$ROOT/target/py-sdk-mypy-cache" src/herald_sdk tests/typing/check_types.py)

echo "== herald-sdk: build (sdist + wheel)"
rm -rf "$ROOT/target/py-sdk-dist"
# No isolation: the build backend is the pinned hatchling of requirements-dev.txt.
"$VPY" -m build --no-isolation --sdist --wheel --outdir "$ROOT/target/py-sdk-dist" "$PKG"

echo "== herald-sdk: tests"
cd "$PKG"
# The whole suite (no arguments) must also call every operation of the SDK's
# table through the sync client (tests/conftest.py checks it at the end).
if [ "$#" -eq 0 ]; then export HERALD_SDK_ALL_METHODS=1; fi
timeout 280 "$VPY" -m pytest -q -p no:cacheprovider "$@"
