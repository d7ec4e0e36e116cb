"""Verifies the requests Herald's event endpoints send (docs/API.md §15).

They follow Standard Webhooks: ``webhook-id``, ``webhook-timestamp`` (seconds)
and ``webhook-signature``, a space-separated list of ``v1,<base64 HMAC-SHA256>``
of ``{id}.{timestamp}.{body}`` keyed by the base64-decoded part of the secret
after ``whsec_``. During a secret rotation Herald sends one signature per valid
secret, and a receiver may hold both the old and the new secret: any match of
any secret with any signature passes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Union

from ._errors import WebhookVerificationError

__all__ = ["verify_event", "sign_event", "WebhookVerificationError", "DEFAULT_TOLERANCE"]

DEFAULT_TOLERANCE = 300
"""Seconds a ``webhook-timestamp`` may be off the receiver's clock (either way):
bounds how long a captured request can be replayed."""


def _secret_bytes(secret: str) -> bytes:
    raw = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("an event endpoint secret is `whsec_` followed by base64") from exc


def _header(headers: Any, name: str) -> Optional[str]:
    # Mappings from web frameworks differ in case handling: look both ways.
    getter = getattr(headers, "get", None)
    if getter is None:
        return None
    value = getter(name)
    if value is None:
        for k, v in headers.items():
            if isinstance(k, str) and k.lower() == name:
                return v
        return None
    return value


def sign_event(secret: str, msg_id: str, timestamp: int, body: Union[bytes, str]) -> str:
    """The ``v1,…`` signature Herald sends for this request (for tests and tools)."""
    payload = body.encode() if isinstance(body, str) else body
    signed = f"{msg_id}.{timestamp}.".encode() + payload
    mac = hmac.new(_secret_bytes(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def verify_event(
    body: Union[bytes, str],
    headers: Mapping[str, str],
    secret: Union[str, Sequence[str]],
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> Any:
    """Checks an event request and returns its parsed JSON body.

    ``body`` must be the raw bytes received (a re-serialised body does not match).
    ``secret`` is the endpoint's ``whsec_…`` secret, or a list of them while you
    rotate (the old and the new one). Raises ``WebhookVerificationError`` when a
    header is missing, the timestamp is more than ``tolerance`` seconds away from
    now, or no signature matches any secret.
    """
    secrets: Iterable[str] = [secret] if isinstance(secret, str) else list(secret)
    msg_id = _header(headers, "webhook-id")
    ts = _header(headers, "webhook-timestamp")
    sigs = _header(headers, "webhook-signature")
    if not msg_id or not ts or not sigs:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature header")
    try:
        timestamp = int(ts)
    except ValueError as exc:
        raise WebhookVerificationError("webhook-timestamp is not an integer") from exc
    current = time.time() if now is None else now
    if timestamp < current - tolerance:
        raise WebhookVerificationError("webhook-timestamp is too old")
    if timestamp > current + tolerance:
        raise WebhookVerificationError("webhook-timestamp is in the future")

    payload = body.encode() if isinstance(body, str) else bytes(body)
    received: List[bytes] = []
    for part in sigs.split():
        version, _, value = part.partition(",")
        if version != "v1" or not value:
            continue  # other schemes (v1a…) are not Herald's: skip, as the spec says
        try:
            received.append(base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            continue
    # Signed over the header's text as sent, not a re-formatted number.
    signed = f"{msg_id}.{ts}.".encode() + payload
    for s in secrets:
        expected = hmac.new(_secret_bytes(s), signed, hashlib.sha256).digest()
        for sig in received:
            if hmac.compare_digest(expected, sig):
                try:
                    return json.loads(payload)
                except ValueError as exc:
                    raise WebhookVerificationError("the body is not JSON") from exc
    raise WebhookVerificationError("no signature matches")
