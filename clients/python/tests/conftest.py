"""Shared fixtures of herald-sdk's tests: a real herald per test session (temp
data dir, free port, see scripts/herald_server.py), clients for it, helpers
to set up flows, and polling waits with deadlines so that no test can hang.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Set, Tuple

import httpx

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from herald_server import HeraldServer  # noqa: E402

from herald_sdk import OPERATIONS, Herald  # noqa: E402

# Event endpoints in the tests post to a listener on 127.0.0.1, which the
# egress guard refuses unless opened.
SERVER_ARGS = ["--egress-allow", "127.0.0.1"]


def hexid(n: int = 4) -> str:
    return secrets.token_hex(n)


def wait_for(what: str, fn: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
    """Polls ``fn`` until it returns something truthy; fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = fn()
            if last:
                return last
        except Exception as exc:  # noqa: BLE001 - reported below if it persists
            last = exc
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what} (last: {last!r})")
        time.sleep(interval)


@pytest.fixture(scope="session")
def server() -> Iterator[HeraldServer]:
    s = HeraldServer(SERVER_ARGS)
    try:
        yield s
    finally:
        s.stop()


def client_for(server: HeraldServer, **kw: Any) -> Herald:
    return Herald(public_key=server.public_key, secret_key=server.secret_key, base_url=server.base_url, **kw)


# (method, path template) of every Admin API operation the session's sync
# client called: checked against the SDK's table at the end of a full run.
CALLED: Set[Tuple[str, str]] = set()


def _template(method: str, path: str) -> Optional[Tuple[str, str]]:
    """The operation of OPERATIONS a concrete request is (the most literal match)."""
    parts = path.split("/")
    best: Optional[Tuple[int, Tuple[str, str]]] = None
    for m, tpl in OPERATIONS:
        t = tpl.split("/")
        if m != method or len(t) != len(parts):
            continue
        if all(a == b or (a.startswith("{") and a.endswith("}")) for a, b in zip(t, parts)):
            literal = sum(1 for a in t if not a.startswith("{"))
            if best is None or literal > best[0]:
                best = (literal, (m, tpl))
    return best[1] if best else None


@pytest.fixture(scope="session")
def herald(server: HeraldServer) -> Iterator[Herald]:
    def record(request: httpx.Request) -> None:
        op = _template(request.method, request.url.raw_path.decode().split("?")[0])
        if op:
            CALLED.add(op)

    http = httpx.Client(timeout=30, event_hooks={"request": [record]})
    h = client_for(server, http_client=http)
    yield h
    h.close()
    http.close()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With HERALD_SDK_ALL_METHODS=1 (run.sh, whole suite): every operation of the
    SDK's table must have been called through the sync client at least once."""
    if os.environ.get("HERALD_SDK_ALL_METHODS") != "1" or exitstatus != 0:
        return
    missing = sorted(set(OPERATIONS) - CALLED)
    if missing:
        lines = "\n".join(f"  {m} {p} ({OPERATIONS[(m, p)]})" for m, p in missing)
        print(f"\nthe sync tests never called these operations:\n{lines}")
        session.exitstatus = 1
    else:
        print(f"\nall {len(OPERATIONS)} Admin API operations were called through the sync client")


def in_app_channel_id(herald: Herald) -> str:
    for ch in herald.channels.list(limit=1000):
        if ch.type == "in_app":
            return str(ch.id)
    raise AssertionError("no in_app channel")


def active_flow(herald: Herald, handle: Optional[str] = None, **extra: Any) -> Any:
    """An active flow with one in_app step (subject ``{{ data.title }}``)."""
    flow = herald.flows.create(
        handle=handle or f"f-{hexid()}",
        name="SDK test",
        steps=[{"type": "channel", "channel_id": in_app_channel_id(herald),
                "template": {"subject": "{{ data.title }}", "body": "n={{ data.n }}"}}],
        **extra,
    )
    return herald.flows.activate(flow.handle)
