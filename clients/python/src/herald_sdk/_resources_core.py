"""Resource namespaces of the Admin API, part one: users and preferences,
categories, channels, flows and runs, notifications, deliveries, erasures.

Every method returns the typed model of herald_sdk.models (attribute access; unknown
fields kept; ``.model_dump()`` for a dict), ``None`` for a 204, a ``Pager``
for a paginated list and a plain ``list`` of models for the unpaged ones.
Bodies are given as a mapping and/or keyword arguments (docs/API.md has
every field); the SDK does not re-validate them: Herald's 422 says exactly
what is wrong, field by field.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import models as m
from ._base import AUTO, Request, Resource, body_of, cast, cast_list, seg
from ._pagination import Pager

Body = Optional[Mapping[str, Any]]


def _page_params(limit: Optional[int], after: Optional[str], before: Optional[str], **filters: Any) -> Dict[str, Any]:
    return {"limit": limit, "after": after, "before": before, **filters}


class Users(Resource):
    """``/admin/v1/users``: your users, their preferences and feeds (docs/API.md §6)."""

    def upsert(self, external_id: str, fields: Body = None, **kw: Any) -> m.User:
        """Creates or updates a user (only the given fields change; ``None`` clears one)."""
        return self._send(Request("PUT", f"/admin/v1/users/{seg(external_id)}", json=body_of(fields, kw), cast=cast(m.User)))

    def get(self, external_id: str) -> m.User:
        return self._send(Request("GET", f"/admin/v1/users/{seg(external_id)}", cast=cast(m.User)))

    def list(self, *, limit: Optional[int] = None, after: Optional[str] = None, before: Optional[str] = None) -> "Pager[m.User]":
        """Every user, newest first: iterate it, or ``.first_page()``."""
        return self._pager("/admin/v1/users", _page_params(limit, after, before), m.User)

    def delete(self, external_id: str, *, erase: bool = False) -> Optional[m.Erasure]:
        """Deletes the user; ``erase=True`` erases their notifications too.

        ``None`` when done within the request (204), else the running ``Erasure`` (202):
        poll ``herald.erasures.get(id)``.
        """
        params = {"erase": True} if erase else None
        return self._send(Request("DELETE", f"/admin/v1/users/{seg(external_id)}", params=params, cast=cast(m.Erasure)))

    def bulk_upsert(self, users: Sequence[Mapping[str, Any]], *, idempotency_key: Optional[str] = AUTO) -> m.BulkUsersResult:
        """Creates or updates up to 1,000 users at once; one result per item."""
        return self._send(Request("POST", "/admin/v1/users/bulk", json={"users": list(users)},
                                  idempotency_key=idempotency_key, cast=cast(m.BulkUsersResult)))

    def bulk_delete(self, external_ids: Sequence[str], *, erase: Optional[bool] = None,
                    idempotency_key: Optional[str] = AUTO) -> m.BulkDeleteResult:
        """Deletes (``erase=True``: erases) up to 1,000 users at once."""
        body: Dict[str, Any] = {"external_ids": list(external_ids)}
        if erase is not None:
            body["erase"] = erase
        return self._send(Request("POST", "/admin/v1/users/bulk_delete", json=body,
                                  idempotency_key=idempotency_key, cast=cast(m.BulkDeleteResult)))

    def get_preferences(self, external_id: str, *, explain: Optional[bool] = None) -> m.Preferences:
        return self._send(Request("GET", f"/admin/v1/users/{seg(external_id)}/preferences",
                                  params={"explain": explain}, cast=cast(m.Preferences)))

    def update_preferences(self, external_id: str, preferences: Body = None, *, explain: Optional[bool] = None,
                           **kw: Any) -> m.Preferences:
        """Changes the given parts (``channel_types``, ``categories``, ``flows``, ``quiet_hours``)."""
        return self._send(Request("PUT", f"/admin/v1/users/{seg(external_id)}/preferences", params={"explain": explain},
                                  json=body_of(preferences, kw), cast=cast(m.Preferences)))

    def feed(self, external_id: str, *, status: Optional[str] = None, flow: Optional[str] = None,
             category: Optional[str] = None, limit: Optional[int] = None, after: Optional[str] = None,
             before: Optional[str] = None) -> "Pager[m.FeedEntry]":
        """The user's in-app feed as the User API shows it (pages carry ``meta`` counts)."""
        return self._pager(f"/admin/v1/users/{seg(external_id)}/feed",
                           _page_params(limit, after, before, status=status, flow=flow, category=category), m.FeedEntry)

    def preference_link(self, external_id: str, *, expires_in: Optional[str] = None) -> m.PreferenceLink:
        """A signed link to the user's hosted preference page (``expires_in`` like ``"7d"``)."""
        body = {"expires_in": expires_in} if expires_in is not None else {}
        return self._send(Request("POST", f"/admin/v1/users/{seg(external_id)}/preference_link", json=body,
                                  cast=cast(m.PreferenceLink)))


class Erasures(Resource):
    """``/admin/v1/erasures``: the progress of a user's erasure."""

    def get(self, erasure_id: str) -> m.Erasure:
        return self._send(Request("GET", f"/admin/v1/erasures/{seg(erasure_id)}", cast=cast(m.Erasure)))


class Categories(Resource):
    """``/admin/v1/categories``: preference categories flows belong to (unpaged)."""

    def upsert(self, handle: str, fields: Body = None, **kw: Any) -> m.Category:
        """Declares or changes a category: ``name``, ``description``."""
        return self._send(Request("PUT", f"/admin/v1/categories/{seg(handle)}", json=body_of(fields, kw), cast=cast(m.Category)))

    def get(self, handle: str) -> m.Category:
        return self._send(Request("GET", f"/admin/v1/categories/{seg(handle)}", cast=cast(m.Category)))

    def list(self) -> List[m.Category]:
        return self._send(Request("GET", "/admin/v1/categories", cast=cast_list(m.Category)))

    def delete(self, handle: str) -> None:
        return self._send(Request("DELETE", f"/admin/v1/categories/{seg(handle)}"))


class PreferenceDefaults(Resource):
    """``/admin/v1/preferences/defaults``: what users who set nothing get."""

    def get(self, *, explain: Optional[bool] = None) -> m.Preferences:
        return self._send(Request("GET", "/admin/v1/preferences/defaults", params={"explain": explain},
                                  cast=cast(m.Preferences)))

    def update(self, preferences: Body = None, *, explain: Optional[bool] = None, **kw: Any) -> m.Preferences:
        return self._send(Request("PUT", "/admin/v1/preferences/defaults", params={"explain": explain},
                                  json=body_of(preferences, kw), cast=cast(m.Preferences)))


class Preferences(Resource):
    """``herald.preferences.defaults``: the project's default preferences."""

    def __init__(self, send: Any, pager: Any = Pager) -> None:
        super().__init__(send, pager)
        self.defaults = PreferenceDefaults(send, pager)


class Channels(Resource):
    """``/admin/v1/channels``: configured ways to deliver (docs/API.md §7)."""

    def create(self, channel: Body = None, *, idempotency_key: Optional[str] = AUTO, **kw: Any) -> m.Channel:
        """``type``, ``provider``, ``name``, ``config``, ``sandbox``."""
        return self._send(Request("POST", "/admin/v1/channels", json=body_of(channel, kw),
                                  idempotency_key=idempotency_key, cast=cast(m.Channel)))

    def get(self, channel_id: str) -> m.Channel:
        return self._send(Request("GET", f"/admin/v1/channels/{seg(channel_id)}", cast=cast(m.Channel)))

    def list(self, *, limit: Optional[int] = None, after: Optional[str] = None, before: Optional[str] = None) -> "Pager[m.Channel]":
        return self._pager("/admin/v1/channels", _page_params(limit, after, before), m.Channel)

    def update(self, channel_id: str, fields: Body = None, **kw: Any) -> m.Channel:
        """``name``, ``config`` (merged key by key), ``sandbox``."""
        return self._send(Request("PUT", f"/admin/v1/channels/{seg(channel_id)}", json=body_of(fields, kw),
                                  cast=cast(m.Channel)))

    def delete(self, channel_id: str) -> None:
        return self._send(Request("DELETE", f"/admin/v1/channels/{seg(channel_id)}"))

    def revoke(self, channel_id: str) -> m.Channel:
        return self._send(Request("POST", f"/admin/v1/channels/{seg(channel_id)}/revoke", cast=cast(m.Channel)))

    def test_channel(self, channel_id: str, user_id: str,
                     data: Optional[Mapping[str, Any]] = None) -> m.ChannelTestAccepted:
        """One test message through the channel to an existing user (202: the run
        and its notification, which carries ``test_channel_id``); ``data``'s
        ``subject`` and ``body`` replace the test's own. Each call sends another."""
        body: Dict[str, Any] = {"user_id": user_id}
        if data is not None:
            body["data"] = dict(data)
        return self._send(Request("POST", f"/admin/v1/channels/{seg(channel_id)}/test", json=body,
                                  cast=cast(m.ChannelTestAccepted)))


class FlowRuns(Resource):
    """``/admin/v1/flow_runs``: a run's progress."""

    def get(self, run_id: str) -> m.FlowRun:
        return self._send(Request("GET", f"/admin/v1/flow_runs/{seg(run_id)}", cast=cast(m.FlowRun)))


class Flows(Resource):
    """``/admin/v1/flows``: what to send, and runs of it (docs/API.md §8, §9).

    ``flow`` arguments take a flow's id or its handle.
    """

    def create(self, flow: Body = None, *, idempotency_key: Optional[str] = AUTO, **kw: Any) -> m.Flow:
        """``handle``, ``name``, ``description``, ``steps``, ``critical``, ``categories``; created ``draft``."""
        return self._send(Request("POST", "/admin/v1/flows", json=body_of(flow, kw),
                                  idempotency_key=idempotency_key, cast=cast(m.Flow)))

    def get(self, flow: str) -> m.Flow:
        return self._send(Request("GET", f"/admin/v1/flows/{seg(flow)}", cast=cast(m.Flow)))

    def list(self, *, limit: Optional[int] = None, after: Optional[str] = None, before: Optional[str] = None) -> "Pager[m.Flow]":
        return self._pager("/admin/v1/flows", _page_params(limit, after, before), m.Flow)

    def update(self, flow: str, fields: Body = None, **kw: Any) -> m.Flow:
        return self._send(Request("PUT", f"/admin/v1/flows/{seg(flow)}", json=body_of(fields, kw), cast=cast(m.Flow)))

    def activate(self, flow: str) -> m.Flow:
        return self._send(Request("POST", f"/admin/v1/flows/{seg(flow)}/activate", cast=cast(m.Flow)))

    def deactivate(self, flow: str) -> m.Flow:
        return self._send(Request("POST", f"/admin/v1/flows/{seg(flow)}/deactivate", cast=cast(m.Flow)))

    def archive(self, flow: str) -> m.Flow:
        return self._send(Request("POST", f"/admin/v1/flows/{seg(flow)}/archive", cast=cast(m.Flow)))

    def run(self, flow: str, recipients: Optional[Sequence[Union[str, Mapping[str, Any]]]] = None,
            data: Optional[Mapping[str, Any]] = None, *, topic: Optional[str] = None, actor: Any = None,
            send_at: Any = None, cancellation_key: Optional[str] = None,
            idempotency_key: Optional[str] = AUTO, **kw: Any) -> m.FlowRunAccepted:
        """Runs an active flow (202). A recipient is an external id or a user object.

        A fresh ``Idempotency-Key`` is sent unless you give one (or ``None`` for none):
        a retry after a lost answer then replays the run instead of sending twice.
        """
        body: Dict[str, Any] = dict(kw)
        if recipients is not None:
            body["recipients"] = [{"external_id": r} if isinstance(r, str) else r for r in recipients]
        for k, v in (("data", data), ("topic", topic), ("actor", actor), ("send_at", send_at),
                     ("cancellation_key", cancellation_key)):
            if v is not None:
                body[k] = v.isoformat() if hasattr(v, "isoformat") else v
        return self._send(Request("POST", f"/admin/v1/flows/{seg(flow)}/run", json=body,
                                  idempotency_key=idempotency_key, cast=cast(m.FlowRunAccepted)))

    def cancel(self, flow: str, cancellation_key: str, recipients: Optional[Sequence[str]] = None) -> m.CancelResult:
        """Cancels the waiting deliveries of the flow's runs with that key."""
        body: Dict[str, Any] = {"cancellation_key": cancellation_key}
        if recipients is not None:
            body["recipients"] = list(recipients)
        return self._send(Request("POST", f"/admin/v1/flows/{seg(flow)}/cancel", json=body, cast=cast(m.CancelResult)))

    def preview(self, flow: str, user: Union[str, Mapping[str, Any]], *, data: Optional[Mapping[str, Any]] = None,
                actor: Any = None, locale: Optional[str] = None) -> m.FlowPreview:
        """Renders a saved flow's channel steps for one recipient; stores and sends nothing."""
        body = _preview_body(user, data, actor, locale)
        return self._send(Request("POST", f"/admin/v1/flows/{seg(flow)}/preview", json=body, cast=cast(m.FlowPreview)))

    def preview_unsaved(self, flow: Mapping[str, Any], user: Union[str, Mapping[str, Any]], *,
                        data: Optional[Mapping[str, Any]] = None, actor: Any = None,
                        locale: Optional[str] = None) -> m.FlowPreview:
        """The same for a flow body that is not saved (``steps``…; handle and name optional)."""
        body = dict(flow)
        body.update(_preview_body(user, data, actor, locale))
        return self._send(Request("POST", "/admin/v1/flows/preview", json=body, cast=cast(m.FlowPreview)))


def _preview_body(user: Any, data: Any, actor: Any, locale: Optional[str]) -> Dict[str, Any]:
    body: Dict[str, Any] = {"user": user}
    for k, v in (("data", data), ("actor", actor), ("locale", locale)):
        if v is not None:
            body[k] = v
    return body


class Notifications(Resource):
    """``/admin/v1/notifications``: one recipient's share of a run (docs/API.md §9, §16)."""

    def list(self, *, status: Optional[str] = None, topic: Optional[str] = None, flow_id: Optional[str] = None,
             flow_run_id: Optional[str] = None, recipient: Optional[str] = None, created_after: Any = None,
             created_before: Any = None, limit: Optional[int] = None, after: Optional[str] = None,
             before: Optional[str] = None) -> "Pager[m.Notification]":
        params = _page_params(limit, after, before, status=status, topic=topic, flow_id=flow_id,
                              flow_run_id=flow_run_id, recipient=recipient, created_after=created_after,
                              created_before=created_before)
        return self._pager("/admin/v1/notifications", params, m.Notification)

    def get(self, notification_id: str) -> m.Notification:
        return self._send(Request("GET", f"/admin/v1/notifications/{seg(notification_id)}", cast=cast(m.Notification)))

    def trace(self, notification_id: str) -> m.NotificationTrace:
        """Every decision the engine took for the notification, and why."""
        return self._send(Request("GET", f"/admin/v1/notifications/{seg(notification_id)}/trace",
                                  cast=cast(m.NotificationTrace)))


class Deliveries(Resource):
    """``/admin/v1/deliveries``: one channel step of one notification."""

    def list(self, *, status: Optional[str] = None, channel_type: Optional[str] = None,
             channel_id: Optional[str] = None, notification_id: Optional[str] = None,
             recipient: Optional[str] = None, created_after: Any = None, created_before: Any = None,
             limit: Optional[int] = None, after: Optional[str] = None, before: Optional[str] = None) -> "Pager[m.Delivery]":
        params = _page_params(limit, after, before, status=status, channel_type=channel_type, channel_id=channel_id,
                              notification_id=notification_id, recipient=recipient, created_after=created_after,
                              created_before=created_before)
        return self._pager("/admin/v1/deliveries", params, m.Delivery)

    def get(self, delivery_id: str) -> m.Delivery:
        return self._send(Request("GET", f"/admin/v1/deliveries/{seg(delivery_id)}", cast=cast(m.Delivery)))
