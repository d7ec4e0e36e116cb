"""Generates herald_sdk/models/ from a real herald's /openapi.json, and checks drift.

    python scripts/gen_models.py           # (re)writes src/herald_sdk/models/
    python scripts/gen_models.py --check   # fails if the models or the SDK lag the server

It starts the binary (HERALD_BIN, else <repo root>/target/debug/herald) on a
temp dir, fetches /openapi.json and runs datamodel-code-generator (pinned in
requirements-dev.txt) on it. --check regenerates into a temp file and fails
when it differs from the committed models, and also when an Admin API
operation (/admin/v1/...) of the document has no SDK method in
herald_sdk/_operations.py (or the table names one that is gone), when a
method does not take one of its operation's query parameters, when the
operations taking an Idempotency-Key differ from those the SDK sends one on,
or when _async_api.py (AsyncHerald's types, scripts/gen_async_api.py) is stale.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKG = HERE.parent
MODELS = PKG / "src" / "herald_sdk" / "models"
PART_LINES = 800  # the repository keeps every file under 900 lines
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(PKG / "src"))

import gen_async_api  # noqa: E402
from herald_server import fetch_openapi  # noqa: E402

HEADER = (
    "Typed models of Herald's API, generated from the server's /openapi.json by\n"
    "datamodel-code-generator (scripts/gen_models.py): do not edit by hand, regenerate.\n"
    "Every model keeps fields it does not know (extra='allow'), so a newer server's\n"
    "answers still load."
)
METHODS = ("get", "put", "post", "delete", "patch")


# Checks on values the server makes when it reads a request; a client reading
# answers must not refuse them (a longer name allowed by a newer server…).
VALUE_CHECKS = ("maxLength", "minLength", "pattern", "minimum", "maximum", "exclusiveMinimum",
                "exclusiveMaximum", "multipleOf", "maxItems", "minItems", "uniqueItems",
                "maxProperties", "minProperties")
KEPT_FORMATS = ("date-time", "uuid")


def for_reading(node: object) -> object:
    """The document as the SDK's models use it: to read answers, tolerantly.

    - value checks (lengths, patterns, ranges) are dropped: Herald enforces them
      on what it is sent, and answers it gives are right by construction;
    - formats other than date-time and uuid (email, uri…) are read as strings;
    - an enum of several values becomes a string whose description lists them,
      so that a value a newer server adds (a delivery status…) does not make a
      whole list unreadable; single-value enums stay (they tell union members
      apart: a step's ``type``).
    """
    if isinstance(node, list):
        return [for_reading(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: for_reading(v) for k, v in node.items() if k not in VALUE_CHECKS}
    if out.get("format") is not None and out.get("format") not in KEPT_FORMATS:
        del out["format"]
    enum = out.get("enum")
    if isinstance(enum, list) and len(enum) > 1 and all(isinstance(v, str) for v in enum):
        del out["enum"]
        listed = ", ".join(f"`{v}`" for v in enum)
        desc = str(out.get("description", "")).rstrip()
        out["description"] = (desc + "\n\n" if desc else "") + f"One of {listed} (others may come)."
    return out


def merge_shapes(schema: dict) -> dict:
    """A component that is one of several inline object shapes (a channel: one per
    provider) as one object: every property of every shape, typed when the
    shapes agree, any JSON when they differ (``config``), a single-value enum
    that varies (``type``, ``provider``) as a string. Reading a channel then
    gives one ``Channel`` with ``.type``, ``.provider`` and ``.config``, not one
    numbered class per provider."""
    key = "oneOf" if "oneOf" in schema else "anyOf" if "anyOf" in schema else None
    shapes = schema.get(key) if key else None
    if not shapes or not all(isinstance(x, dict) and x.get("type") == "object" and "$ref" not in x for x in shapes):
        return schema
    names: list = []
    for shape in shapes:
        names += [n for n in shape.get("properties", {}) if n not in names]
    props = {}
    for name in names:
        seen = [shape["properties"][name] for shape in shapes if name in shape.get("properties", {})]
        if all(x == seen[0] for x in seen):
            props[name] = seen[0]
        elif all("const" in x or (isinstance(x.get("enum"), list) and len(x["enum"]) == 1) for x in seen):
            values = sorted({x["const"] if "const" in x else x["enum"][0] for x in seen})
            props[name] = {"type": "string", "enum": values}
        else:
            props[name] = {"description": seen[0].get("description", "")}
    required = set.intersection(*(set(shape.get("required", [])) for shape in shapes))
    merged = {k: v for k, v in schema.items() if k != key}
    merged.update(type="object", properties=props, required=sorted(required))
    return merged


def split(single: str) -> "dict[str, str]":
    """The generated module as a package of parts under PART_LINES lines each.

    The generator writes one module, each class after those it uses; cutting it
    at class boundaries into consecutive parts keeps that order, each part
    importing from earlier ones the classes it names. ``__init__`` re-exports
    every class, so ``herald_sdk.models.User`` is what callers use.
    """
    import ast
    import re

    tree = ast.parse(single)
    lines = single.splitlines(keepends=True)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    first = classes[0].lineno - 1 - len(classes[0].decorator_list)
    imports = "".join(l for l in lines[:first] if l.startswith(("from ", "import ")) or l.startswith("    ") or l.startswith(")"))
    imports = imports.replace("from __future__ import annotations\n", "")
    chunks: list = [[]]
    size = 0
    for i, node in enumerate(classes):
        end = classes[i + 1].lineno - 1 if i + 1 < len(classes) else len(lines)
        body = "".join(lines[node.lineno - 1 : end])
        n = body.count("\n")
        if size + n > PART_LINES and chunks[-1]:
            chunks.append([])
            size = 0
        chunks[-1].append((node.name, body))
        size += n
    files = {}
    owner: dict = {}
    word = re.compile(r"\b([A-Z][A-Za-z0-9_]*)\b")
    for k, chunk in enumerate(chunks, 1):
        mod = f"_part{k}"
        code = "".join(body for _, body in chunk)
        needed: dict = {}
        for name in sorted(set(word.findall(code))):
            if name in owner:
                needed.setdefault(owner[name], []).append(name)
        local = "".join(f"from .{m} import {', '.join(ns)}\n" for m, ns in sorted(needed.items()))
        files[f"{mod}.py"] = (f'"""Part {k} of herald_sdk.models (see its __init__): generated, do not edit."""\n\n'
                              f"from __future__ import annotations\n\n{imports}{local}\n\n{code.rstrip()}\n")
        for name, _ in chunk:
            owner[name] = mod
    head = '"""' + HEADER + '"""\n\n'
    body = "".join(f"from .{m} import {n}  # noqa: F401\n" for n, m in owner.items())
    names = "".join(f'    "{n}",\n' for n in owner)
    files["__init__.py"] = head + body + "\n__all__ = [\n" + names + "]\n"
    return files


def generate(spec: bytes, out: Path) -> None:
    """Writes the models package into the directory ``out`` (stale parts removed)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "openapi.json"
        doc = json.loads(spec)
        schemas = doc.get("components", {}).get("schemas", {})
        for name in list(schemas):
            schemas[name] = merge_shapes(schemas[name])
        src.write_text(json.dumps(for_reading(doc), indent=1, sort_keys=True))
        exe = Path(sys.executable).parent / "datamodel-codegen"
        single = Path(tmp) / "models.py"
        cmd = [
            str(exe),
            "--input", str(src),
            "--input-file-type", "openapi",
            "--output", str(single),
            "--output-model-type", "pydantic_v2.BaseModel",
            "--target-python-version", "3.10",
            # 3.9 compatible all the same: Optional[...] rather than X | None
            # (pydantic evaluates annotations at runtime), standard collections
            # (list[...], fine on 3.9).
            "--no-use-union-operator",
            "--extra-fields", "allow",
            "--use-schema-description",
            "--disable-timestamp",
            "--use-double-quotes",
            "--enum-field-as-literal", "all",
            # A field typed by a named string or union reads as that value, not a wrapper.
            "--collapse-root-models",
            "--custom-file-header", '"""' + HEADER + '"""',
            "--formatters", "black", "isort",
        ]
        # The generator warns about things of no consequence here (its formatter plans…).
        env = {**os.environ, "PYTHONWARNINGS": "ignore"}
        subprocess.run(cmd, check=True, env=env)
        files = split(single.read_text())
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.py"):
        if old.name not in files:
            old.unlink()
    for name, text in files.items():
        (out / name).write_text(text)


def read_package(d: Path) -> "dict[str, str]":
    return {p.name: p.read_text() for p in sorted(d.glob("*.py"))} if d.exists() else {}


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
            query = [p["name"] for p in params if p.get("in") == "query"]
            ops[(method.upper(), path)] = {"keyed": keyed, "query": query}
    return ops


def check_operations(spec: dict) -> list:
    from herald_sdk import AUTO, Herald
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
            continue
        accepted = inspect.signature(target).parameters
        for q in served.get(key, {}).get("query", []):
            if q not in accepted:
                problems.append(f"{name} takes no `{q}`, a query parameter of {key[0]} {key[1]}")
        param = accepted.get("idempotency_key")
        sends_auto = param is not None and param.default is AUTO
        if (key in AUTO_KEYED) != sends_auto:
            problems.append(f"{name}: its idempotency_key default disagrees with AUTO_KEYED for {key[0]} {key[1]}")
    keyed = {k for k, v in served.items() if v["keyed"]}
    for k in sorted(keyed - AUTO_KEYED):
        problems.append(f"{k[0]} {k[1]} takes an Idempotency-Key but the SDK sends none automatically")
    for k in sorted((AUTO_KEYED & set(served)) - keyed):
        problems.append(f"the SDK sends an Idempotency-Key on {k[0]} {k[1]}, which takes none")
    client.close()
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if the models or the operation table is out of date")
    ap.add_argument("--spec", help="read the document from this file instead of starting herald")
    args = ap.parse_args()
    spec_bytes = Path(args.spec).read_bytes() if args.spec else fetch_openapi()
    spec = json.loads(spec_bytes)
    if not args.check:
        generate(spec_bytes, MODELS)
        print(f"wrote {MODELS.relative_to(PKG)}/")
        gen_async_api.OUT.write_text(gen_async_api.render())
        print(f"wrote {gen_async_api.OUT.relative_to(PKG)}")
        problems = check_operations(spec)
        for p in problems:
            print("warning:", p, file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "models"
        generate(spec_bytes, fresh)
        new, old = read_package(fresh), read_package(MODELS)
    problems = check_operations(spec)
    if gen_async_api.render() != (gen_async_api.OUT.read_text() if gen_async_api.OUT.exists() else ""):
        problems.append("src/herald_sdk/_async_api.py is stale: run `python scripts/gen_models.py` and commit")
    if new != old:
        for name in sorted(set(new) | set(old)):
            a, b = old.get(name, ""), new.get(name, "")
            if a != b:
                diff = "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), f"models/{name} (committed)",
                                                    f"models/{name} (from /openapi.json)", n=2))
                print(diff[:4000], file=sys.stderr)
        problems.insert(0, "src/herald_sdk/models/ differs from what /openapi.json generates: "
                           "run `python scripts/gen_models.py` and commit")
    for p in problems:
        print("drift:", p, file=sys.stderr)
    if problems:
        return 1
    print(f"models/ and the SDK's {len(admin_operations(spec))} Admin API operations match /openapi.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
