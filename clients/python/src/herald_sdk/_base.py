"""What every resource namespace shares: the send function and small helpers.

A resource method builds a ``Request`` and returns ``self._send(request)``.
On ``Herald`` that is the answer; on ``AsyncHerald`` the same method returns
an awaitable of it, so one definition of each endpoint serves both clients and
they cannot drift apart.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Type, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, RootModel

from ._pagination import Pager
from ._transport import AUTO, Request

M = TypeVar("M", bound=BaseModel)

__all__ = ["Resource", "AUTO", "Request", "seg", "body_of", "cast", "cast_list"]


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
    if issubclass(model, RootModel):
        return lambda raw: model.model_validate(raw).root
    return model.model_validate


def cast_list(model: Type[M]) -> Callable[[Any], List[M]]:
    """For the unpaged lists, ``{"data": [...]}``: the list of models."""
    one = cast(model)

    def conv(raw: Any) -> List[M]:
        return [one(x) for x in raw.get("data", [])]

    return conv


class Resource:
    def __init__(self, send: Callable[[Request], Any]) -> None:
        self._send = send

    def _pager(self, path: str, params: Dict[str, Any], model: Optional[Type[M]]) -> "Pager[Any]":
        return Pager(self._send, path, params, cast(model) if model else None)
