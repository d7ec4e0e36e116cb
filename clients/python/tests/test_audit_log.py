"""The audit log, sync and async clients: a change made through the SDK is
an entry by ``api`` with the resource before and after, listed newest first
and filtered by resource type and actor across pages."""

from __future__ import annotations

import pytest
from conftest import hexid
from herald_server import HeraldServer

from herald_sdk import AsyncHerald, Herald, models


def test_changes_are_listed_newest_first_by_api_with_before_and_after(herald: Herald) -> None:
    key = f"audit-{hexid()}"
    herald.topics.upsert(key, name="First")
    herald.topics.upsert(key, name="Second")
    herald.topics.delete(key)
    mine = [e for e in herald.audit_log.list(resource_type="topic", limit=2) if e.resource_key == key]
    assert all(isinstance(e, models.AuditEntry) for e in mine)
    assert [e.action for e in mine] == ["topic.deleted", "topic.updated", "topic.created"]
    assert {e.who for e in mine} == {"api"}
    updated = mine[1]
    assert updated.before is not None and updated.before["name"] == "First"
    assert updated.after is not None and updated.after["name"] == "Second"
    assert mine[0].after is None
    assert [e for e in herald.audit_log.list(who="operator") if e.resource_key == key] == []


@pytest.mark.asyncio
async def test_the_async_client_lists_the_log(server: HeraldServer) -> None:
    async with AsyncHerald(public_key=server.public_key, secret_key=server.secret_key,
                           base_url=server.base_url) as h:
        key = f"audit-async-{hexid()}"
        await h.topics.upsert(key, name="A")
        entries = [e async for e in h.audit_log.list(resource_type="topic") if e.resource_key == key]
        assert [e.action for e in entries] == ["topic.created"]
