"""Shared fixtures of herald-sdk's tests: a real herald per test session (temp
data dir, free port, see scripts/herald_server.py), clients for it, helpers
to set up flows, and polling waits with deadlines so that no test can hang.
"""

from __future__ import annotations

import secrets
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from herald_server import HeraldServer  # noqa: E402

from herald_sdk import Herald  # noqa: E402

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


@pytest.fixture(scope="session")
def herald(server: HeraldServer) -> Iterator[Herald]:
    h = client_for(server)
    yield h
    h.close()


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
