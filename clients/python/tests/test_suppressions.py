"""The suppression list, sync and async clients: add (201 new, 200 existing,
normalised, no Idempotency-Key), list with the channel_type filter across
pages, remove with a phone number's ``+`` encoded as ``%2B`` in the path, and
the errors."""

from __future__ import annotations

from typing import Any, List, Tuple

import httpx
import pytest
from conftest import client_for, hexid
from herald_server import HeraldServer

from herald_sdk import AsyncHerald, Herald, HeraldError, Page, models


def recording(server: HeraldServer) -> Tuple[Herald, List[Tuple[str, str, int, Any]], httpx.Client]:
    """A client whose exchanges are logged: (method, raw path, status, Idempotency-Key)."""
    log: List[Tuple[str, str, int, Any]] = []

    def on_response(r: httpx.Response) -> None:
        log.append((r.request.method, r.request.url.raw_path.decode().split("?")[0], r.status_code,
                    r.request.headers.get("idempotency-key")))

    http = httpx.Client(timeout=30, event_hooks={"response": [on_response]})
    return client_for(server, http_client=http), log, http


def test_add_is_201_then_200_normalised_and_sent_without_a_key(server: HeraldServer, herald: Herald) -> None:
    h, log, http = recording(server)
    try:
        local = f"Bounced-{hexid()}"
        first = h.suppressions.add("email", f"  {local}@Example.COM ")
        assert isinstance(first, models.Suppression)
        assert (first.channel_type, first.address, first.reason) == ("email", f"{local.lower()}@example.com", "manual")
        again = h.suppressions.add("email", f"{local.lower()}@example.com", reason="manual")
        assert again.created_at == first.created_at
        assert [(m, p, s, k) for m, p, s, k in log] == [
            ("POST", "/admin/v1/suppressions", 201, None),
            ("POST", "/admin/v1/suppressions", 200, None),
        ]
        assert herald.suppressions.remove("email", first.address) is None
    finally:
        h.close()
        http.close()


def test_list_filters_by_channel_type_across_pages(herald: Herald) -> None:
    tag = hexid(3)
    emails = [herald.suppressions.add("email", f"p{i}-{tag}@example.com").address for i in range(5)]
    phones = [herald.suppressions.add("sms", f"+1555{int(tag, 16) % 10000:04d}{i:03d}").address for i in range(5)]
    try:
        pages = list(herald.suppressions.list(channel_type="sms", limit=2).iter_pages())
        assert all(len(p) <= 2 for p in pages) and len(pages) >= 3
        sms = [s for p in pages for s in p]
        assert all(isinstance(s, models.Suppression) and s.channel_type == "sms" for s in sms)
        # newest first; other tests' entries (none of these) may be interleaved
        assert [s.address for s in sms if s.address in phones] == phones[::-1]
        email = [s.address for s in herald.suppressions.list(channel_type="email", limit=2)]
        assert [a for a in email if a in emails] == emails[::-1] and not set(phones) & set(email)
        first = herald.suppressions.list(channel_type="sms", limit=2).first_page()
        assert isinstance(first, Page) and first.has_more_after
        second = herald.suppressions.list(channel_type="sms", limit=2).page(after=first.after)
        assert all(s.channel_type == "sms" for s in second)
        assert {s.address for s in second}.isdisjoint({s.address for s in first})
        assert {s.address for s in herald.suppressions.list(limit=3)} >= set(emails) | set(phones)
    finally:
        for a in emails:
            herald.suppressions.remove("email", a)
        for a in phones:
            herald.suppressions.remove("sms", a)
    left = {s.address for s in herald.suppressions.list()}
    assert left.isdisjoint(set(emails) | set(phones))


def test_remove_sends_the_plus_of_a_phone_as_2b(server: HeraldServer, herald: Herald) -> None:
    phone = "+1555" + str(int(hexid(3), 16) % 10**7).zfill(7)
    assert herald.suppressions.add("sms", phone).address == phone
    h, log, http = recording(server)
    try:
        assert h.suppressions.remove("sms", phone) is None
        assert log == [("DELETE", f"/admin/v1/suppressions/sms/%2B{phone[1:]}", 204, None)]
        assert phone not in {s.address for s in herald.suppressions.list(channel_type="sms")}
        with pytest.raises(HeraldError) as e:
            h.suppressions.remove("sms", phone)
        assert e.value.status == 404 and e.value.details.get("resource") == "suppression"
    finally:
        h.close()
        http.close()


def test_errors_name_the_field(herald: Herald) -> None:
    with pytest.raises(HeraldError) as e:
        herald.suppressions.add("push", "x")
    assert e.value.status == 422 and any(f["field"] == "channel_type" for f in e.value.fields)
    with pytest.raises(HeraldError) as e:
        herald.suppressions.add("sms", "555-1234")
    assert e.value.status == 422 and any(f["field"] == "address" and f["reason"] == "format" for f in e.value.fields)
    with pytest.raises(HeraldError) as e:
        herald.suppressions.add("email", "a@example.com", reason="complaint")
    assert e.value.status == 422 and any(f["field"] == "reason" for f in e.value.fields)
    with pytest.raises(HeraldError) as e:
        herald.suppressions.list(channel_type="push").first_page()
    assert e.value.status == 400 and e.value.details.get("param") == "channel_type"


@pytest.mark.asyncio
async def test_async_add_list_remove(server: HeraldServer) -> None:
    async with AsyncHerald(public_key=server.public_key, secret_key=server.secret_key,
                           base_url=server.base_url) as h:
        phone = "+4420" + str(int(hexid(3), 16) % 10**8).zfill(8)
        s = await h.suppressions.add("sms", phone)
        assert isinstance(s, models.Suppression) and s.address == phone
        seen = [x.address async for x in h.suppressions.list(channel_type="sms", limit=1)]
        assert phone in seen
        assert await h.suppressions.remove("sms", phone) is None
        with pytest.raises(HeraldError) as e:
            await h.suppressions.remove("sms", phone)
        assert e.value.status == 404
