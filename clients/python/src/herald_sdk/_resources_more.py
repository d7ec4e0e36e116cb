"""Resource namespaces of the Admin API, part two: topics, the suppression
list, the audit log, event endpoints, the project and its settings, and content (partials,
layouts, translations).

Same conventions as _resources_core: typed models back, ``None`` for a 204,
``Pager`` for paginated lists, a ``list`` for the unpaged ones.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from . import models as m
from ._base import AUTO, Request, Resource, body_of, cast, cast_list, seg
from ._pagination import Pager

Body = Optional[Mapping[str, Any]]


class Topics(Resource):
    """``/admin/v1/topics``: named audiences to run flows for (docs/API.md §10)."""

    def upsert(self, key: str, fields: Body = None, **kw: Any) -> m.Topic:
        """Creates or updates a topic: ``name``, ``description``."""
        return self._send(Request("PUT", f"/admin/v1/topics/{seg(key)}", json=body_of(fields, kw), cast=cast(m.Topic)))

    def get(self, key: str) -> m.Topic:
        return self._send(Request("GET", f"/admin/v1/topics/{seg(key)}", cast=cast(m.Topic)))

    def list(self, *, limit: Optional[int] = None, after: Optional[str] = None, before: Optional[str] = None) -> "Pager[m.Topic]":
        return self._pager("/admin/v1/topics", {"limit": limit, "after": after, "before": before}, m.Topic)

    def delete(self, key: str) -> None:
        return self._send(Request("DELETE", f"/admin/v1/topics/{seg(key)}"))

    def subscriptions(self, key: str, *, limit: Optional[int] = None, after: Optional[str] = None,
                      before: Optional[str] = None) -> "Pager[m.Subscription]":
        """The topic's subscriptions (paginated)."""
        return self._pager(f"/admin/v1/topics/{seg(key)}/subscriptions",
                           {"limit": limit, "after": after, "before": before}, m.Subscription)

    def subscribe(self, key: str, external_id: str, *, idempotency_key: Optional[str] = AUTO) -> m.Subscription:
        """Subscribes one user (409 ``conflict`` when already subscribed)."""
        return self._send(Request("POST", f"/admin/v1/topics/{seg(key)}/subscriptions", json={"external_id": external_id},
                                  idempotency_key=idempotency_key, cast=cast(m.Subscription)))

    def subscribe_many(self, key: str, external_ids: Sequence[str], *,
                       idempotency_key: Optional[str] = AUTO) -> m.BulkSubscriptionResult:
        """Subscribes up to 1,000 users at once (those already subscribed are left as they are)."""
        return self._send(Request("POST", f"/admin/v1/topics/{seg(key)}/subscriptions", json={"users": list(external_ids)},
                                  idempotency_key=idempotency_key, cast=cast(m.BulkSubscriptionResult)))

    def unsubscribe(self, key: str, external_id: str) -> None:
        return self._send(Request("DELETE", f"/admin/v1/topics/{seg(key)}/subscriptions/{seg(external_id)}"))


class Suppressions(Resource):
    """``/admin/v1/suppressions``: the email addresses and phone numbers the
    project no longer sends to, added by hand or by providers' bounce and
    complaint reports (docs/API.md §18)."""

    def list(self, *, channel_type: Optional[str] = None, limit: Optional[int] = None, after: Optional[str] = None,
             before: Optional[str] = None) -> "Pager[m.Suppression]":
        """Every suppression, newest first; ``channel_type="email"`` or ``"sms"`` lists one type."""
        return self._pager("/admin/v1/suppressions",
                           {"channel_type": channel_type, "limit": limit, "after": after, "before": before},
                           m.Suppression)

    def add(self, channel_type: str, address: str, *, reason: Optional[str] = None) -> m.Suppression:
        """Suppresses an address (201), or answers its existing suppression unchanged (200).

        The address is stored normalised (an email lower-cased, a phone in E.164).
        Sent without an idempotency key, unlike the other creating POSTs: Herald
        takes none here, since the address itself makes a second add answer the
        first entry instead of adding another.
        """
        body: Dict[str, Any] = {"channel_type": channel_type, "address": address}
        if reason is not None:
            body["reason"] = reason
        return self._send(Request("POST", "/admin/v1/suppressions", json=body, cast=cast(m.Suppression)))

    def remove(self, channel_type: str, address: str) -> None:
        """Lifts the suppression (404 ``not_found`` when the address is not on the list).

        The address is percent-encoded into the path, a phone's ``+`` as ``%2B``.
        """
        return self._send(Request("DELETE", f"/admin/v1/suppressions/{seg(channel_type)}/{seg(address)}"))


class AuditLog(Resource):
    """``/admin/v1/audit_log``: every change of the project's configuration,
    by whom (``api``, ``operator`` or a console member's email), with the
    resource before and after, secrets never shown (docs/API.md §19)."""

    def list(self, *, resource_type: Optional[str] = None, who: Optional[str] = None,
             limit: Optional[int] = None, after: Optional[str] = None,
             before: Optional[str] = None) -> "Pager[m.AuditEntry]":
        """Every entry, newest first; ``resource_type="flow"`` or ``who="api"`` keeps those only."""
        return self._pager("/admin/v1/audit_log",
                           {"resource_type": resource_type, "who": who, "limit": limit, "after": after,
                            "before": before},
                           m.AuditEntry)


class EventEndpoints(Resource):
    """``/admin/v1/webhook_endpoints``: URLs Herald POSTs events to (docs/API.md §15).

    Verify what they receive with ``herald_sdk.verify_event``.
    """

    def create(self, endpoint: Body = None, **kw: Any) -> m.WebhookEndpointWithSecret:
        """``url``, ``event_types``, ``enabled``. The answer holds the ``secret``, shown only here.

        Sent without an idempotency key: Herald takes none here (a replayed
        answer would hand the secret out again).
        """
        return self._send(Request("POST", "/admin/v1/webhook_endpoints", json=body_of(endpoint, kw),
                                  cast=cast(m.WebhookEndpointWithSecret)))

    def list(self, *, limit: Optional[int] = None, after: Optional[str] = None, before: Optional[str] = None) -> "Pager[m.WebhookEndpoint]":
        return self._pager("/admin/v1/webhook_endpoints", {"limit": limit, "after": after, "before": before},
                           m.WebhookEndpoint)

    def get(self, endpoint_id: str) -> m.WebhookEndpoint:
        return self._send(Request("GET", f"/admin/v1/webhook_endpoints/{seg(endpoint_id)}", cast=cast(m.WebhookEndpoint)))

    def update(self, endpoint_id: str, fields: Body = None, **kw: Any) -> m.WebhookEndpoint:
        return self._send(Request("PUT", f"/admin/v1/webhook_endpoints/{seg(endpoint_id)}", json=body_of(fields, kw),
                                  cast=cast(m.WebhookEndpoint)))

    def delete(self, endpoint_id: str) -> None:
        return self._send(Request("DELETE", f"/admin/v1/webhook_endpoints/{seg(endpoint_id)}"))

    def rotate_secret(self, endpoint_id: str) -> m.WebhookEndpointWithSecret:
        """A new secret; the previous one keeps signing for 24 hours (both signatures are sent)."""
        return self._send(Request("POST", f"/admin/v1/webhook_endpoints/{seg(endpoint_id)}/rotate_secret",
                                  cast=cast(m.WebhookEndpointWithSecret)))

    def attempts(self, endpoint_id: str, *, limit: Optional[int] = None, after: Optional[str] = None,
                 before: Optional[str] = None) -> "Pager[m.EventAttemptView]":
        """The delivery attempts of the endpoint's events (paginated)."""
        return self._pager(f"/admin/v1/webhook_endpoints/{seg(endpoint_id)}/attempts",
                           {"limit": limit, "after": after, "before": before}, m.EventAttemptView)

    def replay(self, endpoint_id: str, since: Any) -> m.ReplayResult:
        """Sends again every event since ``since`` (RFC 3339 or a datetime) the endpoint wants."""
        since = since.isoformat() if hasattr(since, "isoformat") else since
        return self._send(Request("POST", f"/admin/v1/webhook_endpoints/{seg(endpoint_id)}/replay",
                                  json={"since": since}, cast=cast(m.ReplayResult)))


class Project(Resource):
    """``/admin/v1/project``: the project's settings (security mode, retention,
    branding, clock, quota, content defaults…) and its signing key."""

    def get(self) -> m.Project:
        return self._send(Request("GET", "/admin/v1/project", cast=cast(m.Project)))

    def update(self, fields: Body = None, **kw: Any) -> m.Project:
        """Changes the given settings, e.g. ``update(security_mode=True)``."""
        return self._send(Request("PUT", "/admin/v1/project", json=body_of(fields, kw), cast=cast(m.Project)))

    def advance_clock(self, *, by: Optional[str] = None, to: Any = None) -> m.Project:
        """Moves a test clock forward: ``by="1h"`` or ``to=<RFC 3339 / datetime>``."""
        body: Dict[str, Any] = {}
        if by is not None:
            body["by"] = by
        if to is not None:
            body["to"] = to.isoformat() if hasattr(to, "isoformat") else to
        return self._send(Request("POST", "/admin/v1/project/clock/advance", json=body, cast=cast(m.Project)))

    def generate_signing_key(self) -> m.SigningKeyPair:
        """A new RSA key pair for user tokens; the private key is in this answer only."""
        return self._send(Request("POST", "/admin/v1/project/signing_key", cast=cast(m.SigningKeyPair)))

    def set_signing_key(self, public_key: str) -> m.Project:
        """Stores your own RSA public key (PEM) to verify user tokens with."""
        return self._send(Request("PUT", "/admin/v1/project/signing_key", json={"public_key": public_key},
                                  cast=cast(m.Project)))

    def delete_signing_key(self) -> None:
        return self._send(Request("DELETE", "/admin/v1/project/signing_key"))

    def rotate_link_secret(self) -> None:
        """Every preference-page link issued before stops working."""
        return self._send(Request("POST", "/admin/v1/project/rotate_link_secret"))

    def rotate_secret_key(self, grace_seconds: Optional[int] = None) -> m.RotatedSecret:
        """A new secret key, in this answer only; the replaced one keeps working
        for ``grace_seconds`` (default a day, 0: refused at once)."""
        body = {} if grace_seconds is None else {"grace_seconds": grace_seconds}
        return self._send(Request("POST", "/admin/v1/project/rotate_secret", json=body,
                                  cast=cast(m.RotatedSecret)))


class Partials(Resource):
    """``/admin/v1/partials``: template pieces to ``{% include "partials/NAME" %}`` (docs/API.md §17)."""

    def upsert(self, handle: str, content: str) -> m.Partial:
        return self._send(Request("PUT", f"/admin/v1/partials/{seg(handle)}", json={"content": content},
                                  cast=cast(m.Partial)))

    def get(self, handle: str) -> m.Partial:
        return self._send(Request("GET", f"/admin/v1/partials/{seg(handle)}", cast=cast(m.Partial)))

    def list(self) -> List[m.Partial]:
        return self._send(Request("GET", "/admin/v1/partials", cast=cast_list(m.Partial)))

    def delete(self, handle: str) -> None:
        return self._send(Request("DELETE", f"/admin/v1/partials/{seg(handle)}"))


class Layouts(Resource):
    """``/admin/v1/layouts``: email layouts (``name``, ``html``, ``text``)."""

    def upsert(self, handle: str, fields: Body = None, **kw: Any) -> m.Layout:
        return self._send(Request("PUT", f"/admin/v1/layouts/{seg(handle)}", json=body_of(fields, kw), cast=cast(m.Layout)))

    def get(self, handle: str) -> m.Layout:
        return self._send(Request("GET", f"/admin/v1/layouts/{seg(handle)}", cast=cast(m.Layout)))

    def list(self) -> List[m.Layout]:
        return self._send(Request("GET", "/admin/v1/layouts", cast=cast_list(m.Layout)))

    def delete(self, handle: str) -> None:
        return self._send(Request("DELETE", f"/admin/v1/layouts/{seg(handle)}"))


class Translations(Resource):
    """``/admin/v1/translations``: a catalog of messages per locale, for ``t()``."""

    def upsert(self, locale: str, messages: Mapping[str, Any]) -> m.Translation:
        """Sets the locale's catalog, replaced whole."""
        return self._send(Request("PUT", f"/admin/v1/translations/{seg(locale)}", json={"messages": messages},
                                  cast=cast(m.Translation)))

    def get(self, locale: str) -> m.Translation:
        return self._send(Request("GET", f"/admin/v1/translations/{seg(locale)}", cast=cast(m.Translation)))

    def list(self) -> List[Any]:
        """One summary per locale: ``locale``, ``message_count``, ``updated_at``."""
        return self._send(Request("GET", "/admin/v1/translations", cast=cast_list(m.TranslationSummary)))

    def delete(self, locale: str) -> None:
        return self._send(Request("DELETE", f"/admin/v1/translations/{seg(locale)}"))
