"""herald-sdk: a Python client for Herald's Admin API.

    from herald_sdk import Herald
    herald = Herald(public_key="pk_…", secret_key="sk_…", base_url="http://127.0.0.1:8080")
    herald.flows.run("welcome", recipients=["alice"], data={"tip": "Try the feed"})
"""

from __future__ import annotations

from . import models
from ._base import ResponseShapeWarning
from ._client import AsyncHerald, Herald
from ._errors import HeraldConnectionError, HeraldError, WebhookVerificationError
from ._operations import OPERATIONS
from ._pagination import AsyncPager, Page, Pager
from ._transport import AUTO, RetryConfig
from ._version import __version__
from .webhooks import sign_event, verify_event

__all__ = [
    "Herald",
    "AsyncHerald",
    "HeraldError",
    "HeraldConnectionError",
    "WebhookVerificationError",
    "RetryConfig",
    "ResponseShapeWarning",
    "Page",
    "Pager",
    "AsyncPager",
    "AUTO",
    "OPERATIONS",
    "models",
    "verify_event",
    "sign_event",
    "__version__",
]
