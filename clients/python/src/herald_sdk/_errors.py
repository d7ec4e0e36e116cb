"""Typed errors of the SDK: every non-2xx answer of Herald becomes a HeraldError.

Herald answers every failure with one error object (docs/API.md §3):
``{"error": {"type", "code", "message", "status", "request_id", "details"}}``.
``code`` is what callers should match on, so it is the first thing exposed.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import httpx


class HeraldError(Exception):
    """An error answered by Herald (or a transport failure, ``code`` ``connection_error``).

    Attributes:
        code: the API's error code (``not_found``, ``validation_failed``, ``rate_limited``…).
        status: the HTTP status (0 when no answer came back).
        message: the API's human-readable message.
        details: the error's ``details`` object (``fields`` for a 422, ``reason``…).
        request_id: the request's id (the ``x-request-id`` header, else the body's).
        type: the error's ``type`` URL.
        headers: the response headers (``Retry-After``…), empty without a response.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: int,
        details: Optional[Dict[str, Any]] = None,
        request_id: Optional[str] = None,
        type: Optional[str] = None,
        headers: Optional[httpx.Headers] = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.details: Dict[str, Any] = details if details is not None else {}
        self.request_id = request_id
        self.type = type
        self.headers = headers if headers is not None else httpx.Headers()
        self.body = body

    @property
    def fields(self) -> List[Dict[str, Any]]:
        """The ``details.fields`` of a 422 ``validation_failed`` (empty otherwise)."""
        fields = self.details.get("fields")
        return fields if isinstance(fields, list) else []

    def __str__(self) -> str:
        rid = f", request_id={self.request_id}" if self.request_id else ""
        return f"{self.code} ({self.status}): {self.message}{rid}"

    def __repr__(self) -> str:
        return f"HeraldError(code={self.code!r}, status={self.status}, message={self.message!r})"

    @classmethod
    def from_response(cls, response: httpx.Response) -> "HeraldError":
        """Builds the error from an answer, whatever its body (a proxy's HTML page included)."""
        body: Any = None
        try:
            body = response.json()
        except ValueError:
            body = None
        err = body.get("error") if isinstance(body, dict) else None
        request_id = response.headers.get("x-request-id")
        if isinstance(err, dict):
            details = err.get("details")
            return cls(
                str(err.get("message") or response.reason_phrase or "error"),
                code=str(err.get("code") or "unknown"),
                status=response.status_code,
                details=details if isinstance(details, dict) else {},
                request_id=request_id or err.get("request_id"),
                type=err.get("type"),
                headers=response.headers,
                body=body,
            )
        # Not Herald's error object (a proxy or load balancer answered): keep the status.
        text = response.text[:200] if response.content else ""
        return cls(
            f"HTTP {response.status_code}: {text or response.reason_phrase}",
            code=_CODE_BY_STATUS.get(response.status_code, "unknown"),
            status=response.status_code,
            request_id=request_id,
            headers=response.headers,
            body=body if body is not None else text,
        )


class HeraldConnectionError(HeraldError):
    """No answer came back (refused connection, timeout, reset) after every retry."""

    def __init__(self, message: str, *, cause: Optional[BaseException] = None) -> None:
        super().__init__(message, code="connection_error", status=0)
        self.__cause__ = cause


class WebhookVerificationError(Exception):
    """An event endpoint's request failed verification (signature, timestamp or headers)."""


_CODE_BY_STATUS = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    408: "request_timeout",
    409: "conflict",
    422: "validation_failed",
    429: "rate_limited",
    431: "headers_too_large",
    500: "internal_error",
    502: "bad_gateway",
    503: "service_unavailable",
    504: "gateway_timeout",
}
