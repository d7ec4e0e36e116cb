"""Topics, the project's settings and signing key, partials, layouts and
translations: every method of those namespaces, sync client."""

from __future__ import annotations

import pytest
from conftest import active_flow, hexid, wait_for

from herald_sdk import Herald, HeraldError, models


def test_topics_and_subscriptions(herald: Herald) -> None:
    key = f"t-{hexid()}"
    users = [f"s-{hexid()}" for _ in range(3)]
    for u in users:
        herald.users.upsert(u, first_name="Sub")
    t = herald.topics.upsert(key, name="Release notes")
    assert isinstance(t, models.Topic) and t.key == key and t.subscribers_count == 0
    assert herald.topics.upsert(key, {"description": "news"}).description == "news"
    assert herald.topics.get(key).name == "Release notes"
    assert any(x.key == key for x in herald.topics.list(limit=100))

    sub = herald.topics.subscribe(key, users[0])
    assert isinstance(sub, models.Subscription) and sub.user_external_id == users[0]
    with pytest.raises(HeraldError) as e:
        herald.topics.subscribe(key, users[0])
    assert e.value.status == 409 and e.value.details.get("reason") == "subscription_already_exists"
    bulk = herald.topics.subscribe_many(key, users)
    assert isinstance(bulk, models.BulkSubscriptionResult) and bulk.created == 2
    assert bulk.topic.subscribers_count == 3
    assert sorted(s.user_external_id for s in herald.topics.subscriptions(key, limit=2)) == sorted(users)

    flow = active_flow(herald)
    run = herald.flows.run(flow.handle, topic=key, data={"n": 1})
    wait_for("3 notifications of the topic run",
             lambda: len(list(herald.notifications.list(flow_run_id=str(run.id)))) == 3)

    assert herald.topics.unsubscribe(key, users[0]) is None
    assert herald.topics.get(key).subscribers_count == 2
    assert herald.topics.delete(key) is None
    with pytest.raises(HeraldError):
        herald.topics.get(key)


def test_project_settings_clock_and_keys(herald: Herald) -> None:
    p = herald.project.get()
    assert isinstance(p, models.Project) and p.clock == "real"
    assert herald.project.update(timezone="Europe/Paris").timezone == "Europe/Paris"
    p = herald.project.update({"branding": {"name": "Acme", "primary_color": "#112233"}})
    assert p.branding is not None and p.branding.name == "Acme"

    with pytest.raises(HeraldError) as e:
        herald.project.advance_clock(by="1h")
    assert e.value.status == 409 and e.value.details.get("reason") == "clock_not_test"
    frozen = herald.project.update(clock="test")
    before = frozen.clock_time
    after = herald.project.advance_clock(by="1h")
    assert after.clock == "test" and after.clock_time is not None and after.clock_time > before
    herald.project.update(clock="real", timezone=None, branding=None)

    pair = herald.project.generate_signing_key()
    assert isinstance(pair, models.SigningKeyPair) and "PRIVATE KEY" in pair.private_key
    assert herald.project.get().signing_key_configured is True
    assert herald.project.delete_signing_key() is None
    assert herald.project.get().signing_key_configured is False
    stored = herald.project.set_signing_key(pair.public_key)
    assert stored.signing_key_configured is True
    herald.project.delete_signing_key()

    ext = f"u-{hexid()}"
    herald.users.upsert(ext, first_name="Link")
    link = herald.users.preference_link(ext)
    assert herald.project.rotate_link_secret() is None
    import httpx

    assert httpx.get(link.url, timeout=10).status_code == 404  # links issued before the rotation stop working

    # a new secret key, shown once; the one this client holds works for the grace period
    rotated = herald.project.rotate_secret_key(grace_seconds=86400)
    assert rotated.secret_key.startswith("sk_")
    assert rotated.previous_secret_expires_at is not None
    assert herald.project.get().name


def test_partials_layouts_translations(herald: Herald) -> None:
    h = f"p{hexid()}"
    part = herald.partials.upsert(h, "Footer {{ brand.name }}")
    assert isinstance(part, models.Partial) and part.handle == h
    assert herald.partials.get(h).content == "Footer {{ brand.name }}"
    assert any(x.handle == h for x in herald.partials.list())

    lay = herald.layouts.upsert(h, name="Main", html="<html><body>{{ content }}</body></html>", text="{{ content }}")
    assert isinstance(lay, models.Layout) and lay.name == "Main"
    assert herald.layouts.get(h).text == "{{ content }}"
    assert any(x.handle == h for x in herald.layouts.list())

    tr = herald.translations.upsert("fr-ca", {"welcome": {"subject": "Bienvenue {{ name }}"}})
    assert isinstance(tr, models.Translation) and tr.locale == "fr-CA"
    assert herald.translations.get("fr-CA").messages["welcome"]["subject"] == "Bienvenue {{ name }}"
    summaries = herald.translations.list()
    assert any(s.locale == "fr-CA" and s.message_count == 1 for s in summaries)

    assert herald.translations.delete("fr-CA") is None
    assert herald.layouts.delete(h) is None
    assert herald.partials.delete(h) is None
    with pytest.raises(HeraldError) as e:
        herald.partials.get(h)
    assert e.value.code == "not_found"
