"""The two entry points: ``Herald`` (blocking) and ``AsyncHerald`` (asyncio).

Both hold the same resource namespaces (``users``, ``flows``,
``notifications``…); on ``AsyncHerald`` every method returns an awaitable and
lists are walked with ``async for``.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

import httpx

from ._pagination import AsyncPager, Pager
from ._resources_core import (
    Categories,
    Channels,
    Deliveries,
    Erasures,
    FlowRuns,
    Flows,
    Notifications,
    Preferences,
    Users,
)
from ._resources_more import (
    AuditLog,
    EventEndpoints,
    Layouts,
    Partials,
    Project,
    Suppressions,
    Topics,
    Translations,
)
from ._transport import (
    DEFAULT_BASE_URL,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    AsyncTransport,
    RetryConfig,
    SyncTransport,
)


def _settings(public_key: Optional[str], secret_key: Optional[str], base_url: Optional[str],
              max_retries: Optional[int], retry: Optional[RetryConfig]) -> dict:
    # `max_retries` is the common knob; `retry` tunes the rest. Given both, `max_retries` wins.
    if retry is None:
        retry = RetryConfig(max_retries=DEFAULT_MAX_RETRIES if max_retries is None else max_retries)
    elif max_retries is not None:
        retry = dataclasses.replace(retry, max_retries=max_retries)
    return {
        "public_key": public_key or os.environ.get("HERALD_PUBLIC_KEY", ""),
        "secret_key": secret_key or os.environ.get("HERALD_SECRET_KEY", ""),
        "base_url": base_url or os.environ.get("HERALD_BASE_URL", DEFAULT_BASE_URL),
        "retry": retry,
    }


class _Namespaces:
    """Attaches every resource namespace to a client, around its transport's send."""

    def _attach(self, send: Any, pager: Any) -> None:
        self.users = Users(send, pager)
        self.erasures = Erasures(send, pager)
        self.preferences = Preferences(send, pager)
        self.categories = Categories(send, pager)
        self.channels = Channels(send, pager)
        self.flows = Flows(send, pager)
        self.flow_runs = FlowRuns(send, pager)
        self.notifications = Notifications(send, pager)
        self.deliveries = Deliveries(send, pager)
        self.topics = Topics(send, pager)
        self.suppressions = Suppressions(send, pager)
        self.audit_log = AuditLog(send, pager)
        self.event_endpoints = EventEndpoints(send, pager)
        # The API's path name for the same thing.
        self.webhook_endpoints = self.event_endpoints
        self.project = Project(send, pager)
        self.partials = Partials(send, pager)
        self.layouts = Layouts(send, pager)
        self.translations = Translations(send, pager)


class Herald(_Namespaces):
    """A blocking client of Herald's Admin API.

    ``public_key``/``secret_key`` are the project's ``pk_…``/``sk_…`` keys (default:
    ``HERALD_PUBLIC_KEY``/``HERALD_SECRET_KEY``), ``base_url`` the server
    (default ``HERALD_BASE_URL``, else ``http://127.0.0.1:8080``). ``max_retries``
    (default 3) retries 429, 503 and network errors; ``retry`` (a ``RetryConfig``)
    tunes the backoff;
    ``timeout`` is seconds per attempt (or an ``httpx.Timeout``).
    """

    def __init__(
        self,
        public_key: Optional[str] = None,
        secret_key: Optional[str] = None,
        base_url: Optional[str] = None,
        max_retries: Optional[int] = None,
        timeout: Union[float, httpx.Timeout] = DEFAULT_TIMEOUT,
        *,
        retry: Optional[RetryConfig] = None,
        http_client: Optional[httpx.Client] = None,
        default_headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        self._transport = SyncTransport(
            http_client=http_client,
            timeout=timeout,
            default_headers=default_headers,
            **_settings(public_key, secret_key, base_url, max_retries, retry),
        )
        self._attach(self._transport.send, Pager)

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    def close(self) -> None:
        """Closes the connection pool (not an ``http_client`` you passed in)."""
        self._transport.close()

    def __enter__(self) -> "Herald":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if TYPE_CHECKING:
    # What a type checker sees of AsyncHerald's namespaces: every method awaitable
    # (_async_api.py, rendered from the resource classes by scripts/gen_async_api.py).
    from ._async_api import AsyncNamespaces as _AsyncBase
else:
    _AsyncBase = _Namespaces


class AsyncHerald(_AsyncBase):
    """The asyncio client: the same namespaces and arguments as ``Herald``,
    every method awaitable, lists walked with ``async for``."""

    def __init__(
        self,
        public_key: Optional[str] = None,
        secret_key: Optional[str] = None,
        base_url: Optional[str] = None,
        max_retries: Optional[int] = None,
        timeout: Union[float, httpx.Timeout] = DEFAULT_TIMEOUT,
        *,
        retry: Optional[RetryConfig] = None,
        http_client: Optional[httpx.AsyncClient] = None,
        default_headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        self._transport = AsyncTransport(
            http_client=http_client,
            timeout=timeout,
            default_headers=default_headers,
            **_settings(public_key, secret_key, base_url, max_retries, retry),
        )
        _Namespaces._attach(self, self._transport.send, AsyncPager)  # type: ignore[arg-type]

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> "AsyncHerald":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
