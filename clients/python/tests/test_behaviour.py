"""The client's behaviour around the endpoints: automatic idempotency keys,
retries (429 from a herald started with a low --admin-rate, 503 from the
tests' proxy, network errors), no retry on a 422, typed errors, and walking
2,500 notifications across pages."""

from __future__ import annotations

import time
from typing import Any, Dict, Iterator, List

import httpx
import pytest
from conftest import SERVER_ARGS, active_flow, client_for, hexid, wait_for
from herald_server import HeraldServer
from proxy import Proxy

from herald_sdk import Herald, HeraldConnectionError, HeraldError, RetryConfig

FAST = RetryConfig(max_retries=3, initial_delay=0.05, max_delay=0.5)


def recording_client() -> "tuple[httpx.Client, List[httpx.Response]]":
    """An httpx client that records every answer the SDK got (retries included)."""
    seen: List[httpx.Response] = []
    return httpx.Client(timeout=30, event_hooks={"response": [seen.append]}), seen


def via(proxy: Proxy, server: HeraldServer, **kw: Any) -> Herald:
    return Herald(public_key=server.public_key, secret_key=server.secret_key, base_url=proxy.url, **kw)


def test_lost_answer_is_retried_and_replayed_with_the_automatic_key(herald: Herald, server: HeraldServer) -> None:
    flow = active_flow(herald)
    runs = {"n": 0}

    def plan(method: str, path: str) -> str:
        if method == "POST" and path.endswith("/run"):
            runs["n"] += 1
            return "lose" if runs["n"] == 1 else "forward"
        return "forward"

    proxy = Proxy(server.base_url, plan)
    try:
        with via(proxy, server, retry=FAST) as h:
            run = h.flows.run(flow.handle, recipients=[f"u-{hexid()}"], data={"n": 1})
        sent = [s for s in proxy.seen if str(s["path"]).endswith("/run")]
        assert len(sent) == 2
        keys = {s["headers"].get("idempotency-key") for s in sent}  # type: ignore[union-attr]
        assert len(keys) == 1 and None not in keys, "both attempts carry the one automatic key"
        first, second = proxy.upstream_answers[-2:]
        assert first.status_code == 202 and second.status_code == 202
        assert second.headers.get("idempotent-replayed") == "true"
        assert second.json()["id"] == first.json()["id"] == str(run.id)
        assert len(list(herald.notifications.list(flow_id=flow.handle))) == 1, "the run happened once"
    finally:
        proxy.close()


def test_unkeyed_post_is_not_retried_after_a_lost_answer(herald: Herald, server: HeraldServer) -> None:
    flow = active_flow(herald)
    proxy = Proxy(server.base_url, lambda m, p: "lose" if p.endswith("/run") else "forward")
    try:
        with via(proxy, server, retry=FAST) as h:
            with pytest.raises(HeraldConnectionError) as e:
                h.flows.run(flow.handle, recipients=[f"u-{hexid()}"], idempotency_key=None)
        assert e.value.code == "connection_error" and e.value.status == 0
        sent = [s for s in proxy.seen if str(s["path"]).endswith("/run")]
        assert len(sent) == 1 and "idempotency-key" not in sent[0]["headers"]  # type: ignore[operator]
    finally:
        proxy.close()


def test_explicit_idempotency_key(herald: Herald) -> None:
    flow = active_flow(herald)
    ext = f"u-{hexid()}"
    key = f"signup-{hexid()}"
    a = herald.flows.run(flow.handle, recipients=[ext], data={"n": 1}, idempotency_key=key)
    b = herald.flows.run(flow.handle, recipients=[ext], data={"n": 1}, idempotency_key=key)
    assert a.id == b.id
    with pytest.raises(HeraldError) as e:
        herald.flows.run(flow.handle, recipients=[ext], data={"n": 2}, idempotency_key=key)
    assert e.value.code == "idempotency_key_reused" and e.value.status == 409
    assert e.value.details["idempotency_key"] == key and e.value.details["resource"] == "flow_run"
    # Without a key, two calls are two runs.
    c = herald.flows.run(flow.handle, recipients=[ext], data={"n": 1})
    d = herald.flows.run(flow.handle, recipients=[ext], data={"n": 1})
    assert len({a.id, c.id, d.id}) == 3


def test_503_is_retried_after_retry_after(herald: Herald, server: HeraldServer) -> None:
    count = {"n": 0}

    def plan(method: str, path: str) -> str:
        count["n"] += 1
        return "503" if count["n"] == 1 else "forward"

    proxy = Proxy(server.base_url, plan, retry_after="1")
    try:
        with via(proxy, server, retry=FAST) as h:
            t0 = time.monotonic()
            p = h.project.get()
            elapsed = time.monotonic() - t0
        assert p.id is not None
        assert [s["action"] for s in proxy.seen] == ["503", "forward"]
        assert elapsed >= 1.0, f"Retry-After: 1 was not honoured ({elapsed:.3f}s)"
    finally:
        proxy.close()


def test_503_with_a_retry_after_beyond_the_bound_is_raised(server: HeraldServer) -> None:
    proxy = Proxy(server.base_url, lambda m, p: "503", retry_after="120")
    try:
        with via(proxy, server, retry=RetryConfig(max_retries=3, max_retry_after=5)) as h:
            t0 = time.monotonic()
            with pytest.raises(HeraldError) as e:
                h.project.get()
        assert time.monotonic() - t0 < 2
        assert e.value.code == "service_unavailable" and e.value.status == 503
        assert e.value.headers["retry-after"] == "120" and len(proxy.seen) == 1
    finally:
        proxy.close()


def test_no_retry_on_422_and_typed_error(server: HeraldServer) -> None:
    http, seen = recording_client()
    rid = f"sdk-test-{hexid()}"
    with client_for(server, http_client=http, retry=FAST, default_headers={"x-request-id": rid}) as h:
        with pytest.raises(HeraldError) as e:
            h.users.upsert(f"u-{hexid()}", email="not-an-email")
    http.close()
    assert len(seen) == 1, "a 422 is not retried"
    err = e.value
    assert err.code == "validation_failed" and err.status == 422 and err.request_id == rid
    assert err.fields == [{"field": "email", "reason": "format", "message": err.fields[0]["message"]}]
    assert err.type == "https://herald.dev/errors#validation_failed-422"


def test_unauthenticated_and_request_id(server: HeraldServer) -> None:
    with Herald(public_key=server.public_key, secret_key="sk_test_wrong", base_url=server.base_url) as h:
        with pytest.raises(HeraldError) as e:
            h.project.get()
    assert e.value.code == "unauthenticated" and e.value.status == 401
    assert e.value.details == {"auth": "secret_key", "reason": "invalid_secret_key"}
    assert e.value.request_id and e.value.request_id == e.value.headers["x-request-id"]


def test_network_errors_are_retried_then_raised() -> None:
    http, _ = recording_client()
    attempts: List[Any] = []
    http.event_hooks["request"] = [attempts.append]
    # A port nothing listens on: bind one, note it, close it.
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with Herald(public_key="pk_x", secret_key="sk_x", base_url=f"http://127.0.0.1:{port}", http_client=http,
                retry=RetryConfig(max_retries=2, initial_delay=0.01, max_delay=0.05)) as h:
        with pytest.raises(HeraldConnectionError):
            h.project.get()
    http.close()
    assert len(attempts) == 3


@pytest.fixture(scope="module")
def slow_server() -> Iterator[HeraldServer]:
    s = HeraldServer([*SERVER_ARGS, "--admin-rate", "2"])
    try:
        yield s
    finally:
        s.stop()


def test_429_is_retried_honouring_retry_after(slow_server: HeraldServer) -> None:
    # Without retries, the rate limit surfaces as a typed error.
    with client_for(slow_server, max_retries=0) as h:
        err = None
        for _ in range(30):
            try:
                h.project.get()
            except HeraldError as e:
                err = e
                break
    assert err is not None and err.code == "rate_limited" and err.status == 429
    assert int(err.headers["retry-after"]) >= 1 and err.details["retry_after"] >= 1

    # With them, every call succeeds, each 429 waited out for its Retry-After.
    log: List[Any] = []
    http = httpx.Client(timeout=30, event_hooks={
        "request": [lambda r: log.append(("request", time.monotonic(), None))],
        "response": [lambda r: log.append(("response", time.monotonic(), r))]})
    with client_for(slow_server, http_client=http, retry=FAST) as h:
        for _ in range(8):
            assert h.project.get().id is not None
    http.close()
    statuses = [r.status_code for kind, _, r in log if kind == "response"]
    assert 429 in statuses and statuses.count(200) == 8 and statuses[-1] == 200
    for i, (kind, at, r) in enumerate(log):
        if kind == "response" and r.status_code == 429:
            waited = log[i + 1][1] - at
            assert waited >= float(r.headers["retry-after"]), f"retried after {waited:.3f}s"


def test_iterate_2500_notifications_across_pages(herald: Herald) -> None:
    flow = active_flow(herald)
    tag = hexid()
    total = 0
    for size in (1000, 1000, 500):
        recipients: List[Dict[str, Any]] = [{"external_id": f"it-{tag}-{total + i}"} for i in range(size)]
        herald.flows.run(flow.handle, recipients=recipients, data={"n": 1})
        total += size
    wait_for("2,500 notifications",
             lambda: sum(len(p) for p in herald.notifications.list(flow_id=flow.handle, limit=1000).iter_pages()) == 2500,
             timeout=90, interval=0.5)
    pages = list(herald.notifications.list(flow_id=flow.handle, limit=100).iter_pages())
    assert len(pages) == 25 and all(len(p.items) == 100 for p in pages)
    ids = [n.id for n in herald.notifications.list(flow_id=flow.handle, limit=100)]
    assert len(ids) == 2500 and len(set(ids)) == 2500
    # Newest first, as the API lists them (ids are UUIDv7: they sort by creation).
    assert [str(i) for i in ids] == sorted((str(i) for i in ids), reverse=True)
    # The default page size walks them too.
    assert sum(1 for _ in herald.notifications.list(flow_id=flow.handle)) == 2500
