"""Generates herald_sdk/models.py from a real herald's /openapi.json, and checks drift.

    python scripts/gen_models.py           # (re)writes src/herald_sdk/models.py
    python scripts/gen_models.py --check   # fails if models.py or the SDK lag the server

It starts the binary (HERALD_BIN, else <repo root>/target/debug/herald) on a
temp dir, fetches /openapi.json and runs datamodel-code-generator (pinned in
requirements-dev.txt) on it. --check regenerates into a temp file and fails
when it differs from the committed models.py, and also when an Admin API
operation (/admin/v1/...) of the document has no SDK method in
herald_sdk/_operations.py (or the table names one that is gone), or when the
operations taking an Idempotency-Key differ from those the SDK sends one on.
"""

from __future__ import annotations

import argparse
import difflib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKG = HERE.parent
MODELS = PKG / "src" / "herald_sdk" / "models.py"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(PKG / "src"))

from herald_server import fetch_openapi  # noqa: E402

HEADER = (
    "Typed models of Herald's API, generated from the server's /openapi.json by\n"
    "datamodel-code-generator (scripts/gen_models.py): do not edit by hand, regenerate.\n"
    "Every model keeps fields it does not know (extra='allow'), so a newer server's\n"
    "answers still load."
)
METHODS = ("get", "put", "post", "delete", "patch")


def generate(spec: bytes, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "openapi.json"
        src.write_bytes(spec)
        exe = Path(sys.executable).parent / "datamodel-codegen"
        cmd = [
            str(exe),
            "--input", str(src),
            "--input-file-type", "openapi",
            "--output", str(out),
            "--output-model-type", "pydantic_v2.BaseModel",
            "--target-python-version", "3.9",
            "--extra-fields", "allow",
            "--use-schema-description",
            "--use-field-description",
            "--field-constraints",
            "--disable-timestamp",
            "--use-double-quotes",
            "--enum-field-as-literal", "all",
            "--custom-file-header", '"""' + HEADER + '"""',
            "--formatters", "black", "isort",
        ]
        subprocess.run(cmd, check=True)


def admin_operations(spec: dict) -> dict:
    ops = {}
    for path, item in spec.get("paths", {}).items():
        if not path.startswith("/admin/v1/") and path != "/admin/v1":
            continue
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            params = list(item.get("parameters", [])) + list(op.get("parameters", []))
            keyed = any(p.get("in") == "header" and p.get("name", "").lower() == "idempotency-key" for p in params)
            ops[(method.upper(), path)] = keyed
    return ops


def check_operations(spec: dict) -> list:
    from herald_sdk import Herald
    from herald_sdk._operations import AUTO_KEYED, OPERATIONS

    problems = []
    served = admin_operations(spec)
    client = Herald(public_key="pk_check", secret_key="sk_check")
    for key in sorted(served):
        if key not in OPERATIONS:
            problems.append(f"no SDK method for {key[0]} {key[1]} (add it and list it in _operations.py)")
    for key, name in sorted(OPERATIONS.items()):
        if key not in served:
            problems.append(f"_operations.py maps {key[0]} {key[1]} ({name}), which /openapi.json no longer has")
        target = client
        for part in name.split("."):
            target = getattr(target, part, None)
        if not callable(target):
            problems.append(f"_operations.py names {name} for {key[0]} {key[1]}, but the client has no such method")
    keyed = {k for k, v in served.items() if v}
    for k in sorted(keyed - AUTO_KEYED):
        problems.append(f"{k[0]} {k[1]} takes an Idempotency-Key but the SDK sends none automatically")
    for k in sorted((AUTO_KEYED & set(served)) - keyed):
        problems.append(f"the SDK sends an Idempotency-Key on {k[0]} {k[1]}, which takes none")
    client.close()
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if models.py or the operation table is out of date")
    ap.add_argument("--spec", help="read the document from this file instead of starting herald")
    args = ap.parse_args()
    spec_bytes = Path(args.spec).read_bytes() if args.spec else fetch_openapi()
    spec = json.loads(spec_bytes)
    if not args.check:
        generate(spec_bytes, MODELS)
        print(f"wrote {MODELS.relative_to(PKG)}")
        problems = check_operations(spec)
        for p in problems:
            print("warning:", p, file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "models.py"
        generate(spec_bytes, fresh)
        new, old = fresh.read_text(), MODELS.read_text() if MODELS.exists() else ""
    problems = check_operations(spec)
    if new != old:
        diff = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "models.py (committed)",
                                            "models.py (from /openapi.json)", n=2))
        print(diff[:6000], file=sys.stderr)
        problems.insert(0, "src/herald_sdk/models.py differs from what /openapi.json generates: "
                           "run `python scripts/gen_models.py` and commit")
    for p in problems:
        print("drift:", p, file=sys.stderr)
    if problems:
        return 1
    print(f"models.py and the SDK's {len(admin_operations(spec))} Admin API operations match /openapi.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
