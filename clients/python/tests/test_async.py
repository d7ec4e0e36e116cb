"""AsyncHerald against the real server: a representative set of methods,
``async for`` over paginated lists, typed errors, the automatic idempotency
key on a retried run and a 503 retry through the tests' proxy."""

from __future__ import annotations

import asyncio
import time

import pytest
from conftest import active_flow, hexid, wait_for
from herald_server import HeraldServer
from proxy import Proxy

from herald_sdk import AsyncHerald, AsyncPager, Herald, HeraldError, Page, Pager, RetryConfig, models

FAST = RetryConfig(max_retries=3, initial_delay=0.05, max_delay=0.5)


def aclient(server: HeraldServer, base_url: str = "") -> AsyncHerald:
    return AsyncHerald(public_key=server.public_key, secret_key=server.secret_key,
                       base_url=base_url or server.base_url, retry=FAST)


@pytest.mark.asyncio
async def test_async_users_flows_and_iteration(server: HeraldServer, herald: Herald) -> None:
    flow = active_flow(herald)
    async with aclient(server) as h:
        exts = [f"a-{hexid()}" for _ in range(5)]
        users = await asyncio.gather(*(h.users.upsert(e, first_name="Async") for e in exts))
        assert all(isinstance(u, models.User) for u in users)
        assert (await h.users.get(exts[0])).first_name == "Async"

        run = await h.flows.run(flow.handle, recipients=exts, data={"title": "T", "n": 1})
        assert isinstance(run, models.FlowRunAccepted) and run.recipients_count == 5

        seen = []
        async for n in h.notifications.list(flow_run_id=str(run.id), limit=2):
            seen.append(n)
        assert len(seen) == 5 and all(isinstance(n, models.Notification) for n in seen)
        page = await h.notifications.list(flow_run_id=str(run.id), limit=2).first_page()
        assert isinstance(page, Page) and len(page) == 2 and page.has_more_after
        nxt = await h.notifications.list(flow_run_id=str(run.id), limit=2).page(after=page.after)
        assert {n.id for n in nxt}.isdisjoint({n.id for n in page})

        got = await h.flow_runs.get(str(run.id))
        assert got.id == run.id
        assert (await h.flows.get(flow.handle)).status == "active"
        assert any(c.type == "in_app" for c in await h.channels.list().first_page())
        assert isinstance(await h.project.get(), models.Project)
        cats = await h.categories.list()
        assert isinstance(cats, list)


@pytest.mark.asyncio
async def test_async_errors(server: HeraldServer) -> None:
    async with aclient(server) as h:
        with pytest.raises(HeraldError) as e:
            await h.users.get(f"missing-{hexid()}")
        assert e.value.code == "not_found" and e.value.details["resource"] == "user"
        with pytest.raises(HeraldError) as e:
            await h.flows.create(handle="Not A Handle", name="x")
        assert e.value.code == "validation_failed"
        assert any(f["field"] == "handle" for f in e.value.fields)


@pytest.mark.asyncio
async def test_async_retries_503_and_replays_a_lost_run(server: HeraldServer, herald: Herald) -> None:
    flow = active_flow(herald)
    state = {"n": 0, "runs": 0}

    def plan(method: str, path: str) -> str:
        state["n"] += 1
        if state["n"] == 1:
            return "503"
        if path.endswith("/run"):
            state["runs"] += 1
            return "lose" if state["runs"] == 1 else "forward"
        return "forward"

    proxy = Proxy(server.base_url, plan, retry_after="1")
    try:
        async with aclient(server, proxy.url) as h:
            t0 = time.monotonic()
            assert (await h.project.get()).id is not None
            assert time.monotonic() - t0 >= 1.0
            run = await h.flows.run(flow.handle, recipients=[f"u-{hexid()}"], data={"n": 1})
        assert proxy.upstream_answers[-1].headers.get("idempotent-replayed") == "true"
        wait_for("the run's notification", lambda: len(list(herald.notifications.list(flow_run_id=str(run.id)))) == 1)
        assert len(list(herald.notifications.list(flow_id=flow.handle))) == 1
    finally:
        proxy.close()


def test_async_lists_are_async_pagers(server: HeraldServer) -> None:
    h = aclient(server)
    pager = h.users.list()
    assert isinstance(pager, AsyncPager) and not isinstance(pager, Pager)
    with pytest.raises(TypeError):
        list(pager)  # type: ignore[call-overload]
    asyncio.run(h.aclose())
