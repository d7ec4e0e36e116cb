"""Checked by mypy in run.sh, never run: the types a caller's type checker sees.

The resource classes serve both clients, so AsyncHerald's awaitable types come
from _async_api.py; a wrong or stale one fails these assertions.
"""

from __future__ import annotations

from typing import List, Optional

from typing_extensions import assert_type

from herald_sdk import AsyncHerald, AsyncPager, Herald, Page, Pager, models


def sync_client(h: Herald) -> None:
    assert_type(h.users.get("alice"), models.User)
    assert_type(h.flows.run("welcome", recipients=["alice"]), models.FlowRunAccepted)
    assert_type(h.notifications.list(status="processed"), Pager[models.Notification])
    for n in h.notifications.list():
        assert_type(n, models.Notification)
    assert_type(h.users.list().first_page(), Page[models.User])
    assert_type(h.categories.list(), List[models.Category])
    assert_type(h.users.delete("alice", erase=True), Optional[models.Erasure])
    assert_type(h.preferences.defaults.get(), models.Preferences)
    assert_type(h.suppressions.add("sms", "+15551234567"), models.Suppression)
    assert_type(h.suppressions.list(channel_type="email"), Pager[models.Suppression])
    assert_type(h.suppressions.remove("sms", "+15551234567"), None)


async def async_client(h: AsyncHerald) -> None:
    assert_type(await h.users.get("alice"), models.User)
    assert_type(await h.flows.run("welcome", recipients=["alice"]), models.FlowRunAccepted)
    pager = h.notifications.list(status="processed")
    assert_type(pager, AsyncPager[models.Notification])
    async for n in pager:
        assert_type(n, models.Notification)
    assert_type(await h.channels.list().first_page(), Page[models.Channel])
    assert_type(await h.categories.list(), List[models.Category])
    assert_type(await h.preferences.defaults.update(channel_types={"email": False}), models.Preferences)
    assert_type(await h.suppressions.add("email", "a@example.com"), models.Suppression)
    assert_type(h.suppressions.list(channel_type="sms"), AsyncPager[models.Suppression])
    assert_type(await h.suppressions.remove("email", "a@example.com"), None)
    assert_type(await h.event_endpoints.create(url="https://example.com"), models.WebhookEndpointWithSecret)
