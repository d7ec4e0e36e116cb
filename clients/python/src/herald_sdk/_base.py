"""What every resource namespace shares: the send function and small helpers.

A resource method builds a ``Request`` and returns ``self._send(request)``.
On ``Herald`` that is the answer; on ``AsyncHerald`` the same method returns
an awaitable of it, so one definition of each endpoint serves both clients and
they cannot drift apart.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Type, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, RootModel, ValidationError

from ._pagination import Pager
from ._transport import AUTO, Request

M = TypeVar("M", bound=BaseModel)


class ResponseShapeWarning(UserWarning):
    """An answer did not match its model (a server newer or older than the SDK)."""

__all__ = ["ResponseShapeWarning", "Resource", "AUTO", "Request", "seg", "body_of", "cast", "cast_list"]


def seg(value: Any) -> str:
    """One path segment: user external ids may hold any character (docs/API.md §1)."""
    return quote(str(value), safe="")


def body_of(body: Optional[Mapping[str, Any]], fields: Mapping[str, Any]) -> Dict[str, Any]:
    """A request body from a mapping and/or keyword fields (keywords win)."""
    out: Dict[str, Any] = dict(body or {})
    out.update(fields)
    return out


def cast(model: Type[M]) -> Callable[[Any], M]:
    """Turns an answer into ``model`` (unknown fields kept, see herald_sdk.models).

    A schema that is one of several shapes (a channel: one per provider) is a
    ``RootModel`` of a union; callers get the member that matched, not the wrapper.
    """
    def conv(raw: Any) -> M:
        try:
            value = model.model_validate(raw)
        except ValidationError as exc:
            # The call succeeded on the server (a run may have started): failing
            # now would invite a retry that acts twice. Hand back what came, unchecked.
            warnings.warn(f"herald-sdk: an answer does not match {model.__name__}, returned unchecked: {exc}",
                          ResponseShapeWarning, stacklevel=4)
            return model.model_construct(**raw) if isinstance(raw, dict) else raw
        return value.root if isinstance(value, RootModel) else value

    return conv


def cast_list(model: Type[M]) -> Callable[[Any], List[M]]:
    """For the unpaged lists, ``{"data": [...]}``: the list of models."""
    one = cast(model)

    def conv(raw: Any) -> List[M]:
        return [one(x) for x in raw.get("data", [])]

    return conv


class Resource:
    """A namespace: the client's send function and its kind of pager."""

    def __init__(self, send: Callable[[Request], Any], pager: Type[Any] = Pager) -> None:
        self._send = send
        self._pager_cls = pager

    def _pager(self, path: str, params: Dict[str, Any], model: Optional[Type[M]]) -> Any:
        return self._pager_cls(self._send, path, params, cast(model) if model else None)
