"""Channels, flows, runs, notifications, deliveries: every method of those
namespaces against the real server, sync client."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import active_flow, hexid, in_app_channel_id, wait_for

from herald_sdk import Herald, HeraldError, models


def test_channels(herald: Herald) -> None:
    ch = herald.channels.create(type="email", provider="smtp", name="Mail")
    assert isinstance(ch, models.Channel) and ch.status == "unconfigured" and ch.name == "Mail"
    assert herald.channels.get(str(ch.id)).id == ch.id
    assert herald.channels.update(str(ch.id), name="Mail 2", sandbox=True).name == "Mail 2"
    assert any(c.id == ch.id for c in herald.channels.list(limit=2))
    assert herald.channels.revoke(str(ch.id)).status == "revoked"
    assert herald.channels.delete(str(ch.id)) is None
    with pytest.raises(HeraldError) as e:
        herald.channels.get(str(ch.id))
    assert e.value.code == "not_found"


def test_channels_test_channel(herald: Herald) -> None:
    inapp = in_app_channel_id(herald)
    ext = f"tested-{hexid()}"
    herald.users.upsert(ext)
    sent = herald.channels.test_channel(inapp, ext, {"body": "Is it on?"})
    assert isinstance(sent, models.ChannelTestAccepted) and str(sent.channel_id) == inapp

    def processed() -> Any:
        got = herald.notifications.get(str(sent.notification_id))
        return got if got.status == "processed" else None

    n = wait_for("the test notification", processed)
    assert str(n.test_channel_id) == inapp and n.flow_run_id == sent.flow_run_id
    with pytest.raises(HeraldError) as e:
        herald.channels.test_channel(inapp, f"nobody-{hexid()}")
    assert e.value.status == 422


def test_flow_lifecycle(herald: Herald) -> None:
    handle = f"f-{hexid()}"
    flow = herald.flows.create({"handle": handle, "name": "Lifecycle"},
                               steps=[{"type": "channel", "channel_id": in_app_channel_id(herald),
                                       "template": {"body": "Hi {{ recipient.first_name }}"}}])
    assert isinstance(flow, models.Flow) and flow.status == "draft" and flow.handle == handle
    assert herald.flows.get(handle).id == flow.id
    assert herald.flows.update(handle, description="d").description == "d"
    assert herald.flows.activate(handle).status == "active"
    assert any(f.id == flow.id and f.status == "active" for f in herald.flows.list(limit=100))
    assert herald.flows.deactivate(str(flow.id)).status == "draft"
    with pytest.raises(HeraldError) as e:
        herald.flows.run(handle, recipients=["x"])
    assert e.value.status == 409 and e.value.details.get("reason") == "flow_not_active"
    assert herald.flows.archive(handle).status == "archived"


def test_preview(herald: Herald) -> None:
    flow = active_flow(herald)
    p = herald.flows.preview(flow.handle, {"external_id": f"p-{hexid()}", "first_name": "Ada"},
                             data={"title": "Hello", "n": 7})
    assert isinstance(p, models.FlowPreview) and str(p.flow_id) == str(flow.id)
    step = p.steps[0].model_dump()
    assert step["content"]["subject"] == "Hello" and step["content"]["body"] == "n=7"

    unsaved = {"steps": [{"type": "channel", "channel_id": in_app_channel_id(herald),
                          "template": {"body": "Hi {{ recipient.first_name }}"}}]}
    q = herald.flows.preview_unsaved(unsaved, {"external_id": "nobody-yet", "first_name": "Bo"})
    assert q.flow_id is None and q.steps[0].model_dump()["content"]["body"] == "Hi Bo"


def test_run_notifications_deliveries_trace(herald: Herald) -> None:
    flow = active_flow(herald)
    ext = f"u-{hexid()}"
    run = herald.flows.run(flow.handle, recipients=[{"external_id": ext, "first_name": "Ada"}], data={"title": "T", "n": 1})
    assert isinstance(run, models.FlowRunAccepted) and run.recipients_count == 1

    got = wait_for("the run processed", lambda: (lambda r: r if r.status == "processed" else None)(
        herald.flow_runs.get(str(run.id))))
    assert isinstance(got, models.FlowRun) and got.notifications_count == 1

    notes = list(herald.notifications.list(flow_run_id=str(run.id)))
    assert len(notes) == 1 and isinstance(notes[0], models.Notification)
    n = herald.notifications.get(str(notes[0].id))
    assert n.status == "processed" and n.recipient is not None
    trace = herald.notifications.trace(str(n.id))
    assert isinstance(trace, models.NotificationTrace)
    codes = [e.code for e in trace.entries]
    assert codes[0] == "flow.reached" and "delivery.final" in codes

    dels = list(herald.deliveries.list(notification_id=str(n.id), channel_type="in_app", status="sent"))
    assert len(dels) == 1 and isinstance(dels[0], models.Delivery)
    d = herald.deliveries.get(str(dels[0].id))
    assert d.status == "sent" and d.channel_type == "in_app"


def test_scheduled_run_and_cancel(herald: Herald) -> None:
    flow = active_flow(herald)
    ext = f"u-{hexid()}"
    run = herald.flows.run(flow.handle, recipients=[ext], data={"n": 1}, send_at="2099-01-01T00:00:00Z",
                           cancellation_key="k-1")
    assert herald.flow_runs.get(str(run.id)).status == "scheduled"
    res = herald.flows.cancel(flow.handle, "k-1", recipients=[ext])
    assert isinstance(res, models.CancelResult) and res.canceled == 1
    assert herald.flows.cancel(flow.handle, "k-1").canceled == 0
