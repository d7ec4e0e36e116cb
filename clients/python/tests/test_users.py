"""Users, preferences, categories, erasures: every method of those namespaces
against the real server, sync client."""

from __future__ import annotations

import pytest
from conftest import active_flow, hexid, wait_for

from herald_sdk import Herald, HeraldError, Page, models


def test_upsert_get_list_delete(herald: Herald) -> None:
    ext = f"u-{hexid()}"
    created = herald.users.upsert(ext, {"first_name": "Ada"}, email="ada@example.com")
    assert isinstance(created, models.User)
    assert created.external_id == ext and created.first_name == "Ada" and created.email == "ada@example.com"
    updated = herald.users.upsert(ext, last_name="Lovelace")
    assert updated.first_name == "Ada" and updated.last_name == "Lovelace"
    assert herald.users.get(ext).id == created.id

    page = herald.users.list(limit=1).first_page()
    assert isinstance(page, Page) and len(page.items) == 1 and page.limit == 1
    assert any(u.external_id == ext for u in herald.users.list(limit=50))

    assert herald.users.delete(ext) is None
    with pytest.raises(HeraldError) as e:
        herald.users.get(ext)
    assert e.value.code == "not_found" and e.value.status == 404
    assert e.value.details.get("resource") == "user" and e.value.details.get("id") == ext


def test_external_id_is_url_encoded(herald: Herald) -> None:
    ext = f"a/b c?{hexid()}#é"
    herald.users.upsert(ext, first_name="Odd")
    assert herald.users.get(ext).external_id == ext


def test_erase_and_erasures(herald: Herald) -> None:
    ext = f"u-{hexid()}"
    flow = active_flow(herald)
    herald.flows.run(flow.handle, recipients=[ext], data={"n": 1})
    erasure = herald.users.delete(ext, erase=True)
    # None when it finished within the request (204), else the running erasure (202).
    assert erasure is None or isinstance(erasure, models.Erasure)
    with pytest.raises(HeraldError):
        herald.users.get(ext)

    # A bulk erasure always names its erasures, whatever their state: poll one.
    other = f"u-{hexid()}"
    herald.flows.run(flow.handle, recipients=[other], data={"n": 2})
    res = herald.users.bulk_delete([other], erase=True)
    assert res.deleted == 1 and res.erasures is not None and len(res.erasures) == 1
    eid = str(res.erasures[0].erasure.id)
    done = wait_for("the erasure", lambda: (lambda e: e if e.status == "complete" else None)(herald.erasures.get(eid)))
    assert isinstance(done, models.Erasure) and done.notifications_removed == 1


def test_bulk_upsert_and_bulk_delete(herald: Herald) -> None:
    a, b = f"a-{hexid()}", f"b-{hexid()}"
    res = herald.users.bulk_upsert([{"external_id": a, "email": "a@example.com"}, {"external_id": b, "email": "nope"}])
    assert isinstance(res, models.BulkUsersResult)
    first, second = res.results[0], res.results[1]
    assert first.model_dump()["status"] == "created"
    assert second.model_dump()["error"]["code"] == "validation_failed"
    gone = herald.users.bulk_delete([a, "nobody-" + hexid()], erase=False)
    assert gone.deleted == 1 and len(gone.not_found) == 1


def test_preferences_and_defaults_and_categories(herald: Herald) -> None:
    ext = f"u-{hexid()}"
    herald.users.upsert(ext, first_name="Pref")
    cat = f"c-{hexid()}"
    c = herald.categories.upsert(cat, name="Comments", description="Replies")
    assert isinstance(c, models.Category) and c.handle == cat and c.name == "Comments"
    assert herald.categories.get(cat).description == "Replies"
    assert any(x.handle == cat for x in herald.categories.list())

    prefs = herald.users.update_preferences(ext, {"channel_types": {"email": False}}, explain=True)
    assert isinstance(prefs, models.Preferences)
    dumped = prefs.model_dump()
    assert dumped["channel_types"]["email"] is False
    assert dumped["explain"]["channel_types"]["email"] == "user"
    assert cat in dumped["categories"]
    assert herald.users.get_preferences(ext).model_dump()["channel_types"]["email"] is False

    d = herald.preferences.defaults.update(categories={cat: {"enabled": False}})
    assert d.model_dump()["categories"][cat]["enabled"] is False
    assert herald.preferences.defaults.get(explain=True).model_dump()["explain"]["categories"][cat]["enabled"] == "default"
    herald.preferences.defaults.update(categories={cat: {"enabled": True}})

    assert herald.categories.delete(cat) is None
    with pytest.raises(HeraldError) as e:
        herald.categories.get(cat)
    assert e.value.code == "not_found"


def test_feed_and_preference_link(herald: Herald) -> None:
    ext = f"u-{hexid()}"
    herald.users.upsert(ext, first_name="Feed")
    flow = active_flow(herald)
    for n in range(3):
        herald.flows.run(flow.handle, recipients=[ext], data={"title": f"T{n}", "n": n})
    wait_for("3 feed entries", lambda: len(herald.users.feed(ext, limit=10).first_page().items) == 3)
    page = herald.users.feed(ext, limit=2).first_page()
    assert page.meta["unread_count"] == 3 and page.has_more_after
    entries = list(herald.users.feed(ext, limit=2))
    assert len(entries) == 3 and all(isinstance(x, models.FeedEntry) for x in entries)
    assert sorted(e.data.model_dump()["body"] if hasattr(e.data, "model_dump") else e.data["body"]
                  for e in entries) == ["n=0", "n=1", "n=2"]

    link = herald.users.preference_link(ext, expires_in="7d")
    assert isinstance(link, models.PreferenceLink) and "/p/" in link.url and link.token
