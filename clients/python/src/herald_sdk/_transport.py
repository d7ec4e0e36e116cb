"""HTTP transport shared by Herald and AsyncHerald: auth headers, automatic
idempotency keys, retries with backoff and jitter, error mapping.

Retries are decided here once for both clients so that the sync and async
clients behave the same way. What is retried, and why it is safe:

- 429 ``rate_limited`` and 503 ``service_unavailable``: Herald checks the rate
  limit and the store's ability to write before doing anything (docs/API.md §3,
  "Order of checks"), so nothing happened and the request can be sent again,
  after ``Retry-After`` when the answer has one.
- network errors: a connection that was never made is always safe to retry;
  one that broke after the request went out is retried only for idempotent
  methods (GET, PUT, DELETE) and for POSTs carrying an ``Idempotency-Key``,
  whose repeat replays the first answer instead of acting twice.
- never any other 4xx: the same request would get the same answer.
"""

from __future__ import annotations

import email.utils
import json as _json
import logging
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Union

import httpx

from ._errors import HeraldConnectionError, HeraldError
from ._version import __version__

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 3

log = logging.getLogger("herald_sdk")

_RETRY_STATUSES = frozenset({429, 503})
_IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


class _Auto:
    """Marker: make an idempotency key up for this request (the default on creating calls)."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Any = _Auto()


@dataclass
class RetryConfig:
    """How failed requests are retried.

    ``max_retries`` is the number of retries after the first attempt (0: none).
    The n-th retry waits ``Retry-After`` when the answer has one, else a random
    time between half and all of ``min(max_delay, initial_delay * 2**n)``
    (exponential backoff with jitter, so that many clients do not retry in step).
    A ``Retry-After`` longer than ``max_retry_after`` is not waited for: the
    error is raised at once rather than blocking the caller for minutes.
    """

    max_retries: int = DEFAULT_MAX_RETRIES
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def backoff(self, retry: int) -> float:
        cap = min(self.max_delay, self.initial_delay * (2**retry))
        return cap / 2 + random.uniform(0, cap / 2)


@dataclass
class Request:
    """One API call as a resource method describes it; the transport sends it."""

    method: str
    path: str
    params: Optional[Mapping[str, Any]] = None
    json: Any = None
    # AUTO: a fresh key per call (the same key on each retry); None: no header.
    idempotency_key: Any = None
    cast: Optional[Callable[[Any], Any]] = None
    headers: Dict[str, str] = field(default_factory=dict)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _clean_params(params: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in (params or {}).items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif hasattr(v, "isoformat"):
            v = v.isoformat()
        out[k] = v
    return out


def _dump(value: Any) -> Any:
    """Request bodies may hold the SDK's models: send them as the API's JSON."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_unset=True, by_alias=True)
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_dump(v) for v in value]
    return value


class BaseTransport:
    """What both transports share: configuration, request building, decisions."""

    def __init__(
        self,
        *,
        public_key: str,
        secret_key: str,
        base_url: str,
        timeout: Union[float, httpx.Timeout],
        retry: RetryConfig,
        default_headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        if not public_key or not secret_key:
            raise ValueError("public_key and secret_key are required (the project's pk_… and sk_… keys)")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retry = retry
        self.headers = {
            "x-service-api-key": public_key,
            "x-service-secret-key": secret_key,
            "accept": "application/json",
            "user-agent": f"herald-sdk-python/{__version__}",
        }
        self.headers.update(default_headers or {})

    def build(self, req: Request) -> Dict[str, Any]:
        headers = dict(req.headers)
        key = req.idempotency_key
        if key is AUTO:
            key = str(uuid.uuid4())
        if key is not None:
            headers["idempotency-key"] = str(key)
        kwargs: Dict[str, Any] = {
            "method": req.method,
            "url": req.path,
            "params": _clean_params(req.params),
            "headers": headers,
        }
        if req.json is not None:
            kwargs["content"] = _json.dumps(_dump(req.json)).encode()
            headers["content-type"] = "application/json"
        return kwargs

    def retry_delay(self, attempt: int, response: Optional[httpx.Response]) -> Optional[float]:
        """How long to wait before retry number ``attempt`` (0-based); None: do not retry."""
        if attempt >= self.retry.max_retries:
            return None
        if response is not None:
            after = parse_retry_after(response.headers.get("retry-after"))
            if after is not None:
                if after > self.retry.max_retry_after:
                    return None
                # A little jitter on top so that clients told the same second spread out.
                return after + random.uniform(0, min(0.25, after * 0.1 + 0.05))
        return self.retry.backoff(attempt)

    @staticmethod
    def log_retry(req: Request, attempt: int, delay: float) -> None:
        log.info("herald-sdk: %s %s: retry %d in %.2fs", req.method, req.path, attempt + 1, delay)

    @staticmethod
    def may_retry_after_error(kwargs: Dict[str, Any], exc: httpx.TransportError) -> bool:
        if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)):
            return True  # the request never left
        return kwargs["method"] in _IDEMPOTENT_METHODS or "idempotency-key" in kwargs["headers"]

    @staticmethod
    def finish(req: Request, response: httpx.Response) -> Any:
        if response.status_code >= 300:
            raise HeraldError.from_response(response)
        if response.status_code == 204 or not response.content:
            return None
        data = response.json()
        return req.cast(data) if req.cast is not None else data


class SyncTransport(BaseTransport):
    def __init__(self, *, http_client: Optional[httpx.Client] = None, **kw: Any) -> None:
        super().__init__(**kw)
        self._own = http_client is None
        self.client = http_client or httpx.Client(timeout=self.timeout)

    def send(self, req: Request) -> Any:
        kwargs = self.build(req)
        kwargs["url"] = self.base_url + kwargs["url"]
        kwargs["headers"] = {**self.headers, **kwargs["headers"]}
        attempt = 0
        while True:
            try:
                response = self.client.request(**kwargs)
            except httpx.TransportError as exc:
                delay = self.retry_delay(attempt, None) if self.may_retry_after_error(kwargs, exc) else None
                if delay is None:
                    raise HeraldConnectionError(f"{req.method} {req.path}: {exc!r}", cause=exc) from exc
            else:
                if response.status_code not in _RETRY_STATUSES:
                    return self.finish(req, response)
                delay = self.retry_delay(attempt, response)
                if delay is None:
                    return self.finish(req, response)
                response.close()
            self.log_retry(req, attempt, delay)
            time.sleep(delay)
            attempt += 1

    def close(self) -> None:
        if self._own:
            self.client.close()


class AsyncTransport(BaseTransport):
    def __init__(self, *, http_client: Optional[httpx.AsyncClient] = None, **kw: Any) -> None:
        super().__init__(**kw)
        self._own = http_client is None
        self.client = http_client or httpx.AsyncClient(timeout=self.timeout)

    async def send(self, req: Request) -> Any:
        import asyncio

        kwargs = self.build(req)
        kwargs["url"] = self.base_url + kwargs["url"]
        kwargs["headers"] = {**self.headers, **kwargs["headers"]}
        attempt = 0
        while True:
            try:
                response = await self.client.request(**kwargs)
            except httpx.TransportError as exc:
                delay = self.retry_delay(attempt, None) if self.may_retry_after_error(kwargs, exc) else None
                if delay is None:
                    raise HeraldConnectionError(f"{req.method} {req.path}: {exc!r}", cause=exc) from exc
            else:
                if response.status_code not in _RETRY_STATUSES:
                    return self.finish(req, response)
                delay = self.retry_delay(attempt, response)
                if delay is None:
                    return self.finish(req, response)
                await response.aclose()
            self.log_retry(req, attempt, delay)
            await asyncio.sleep(delay)
            attempt += 1

    async def aclose(self) -> None:
        if self._own:
            await self.client.aclose()
