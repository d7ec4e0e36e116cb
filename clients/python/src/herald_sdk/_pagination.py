"""Cursor pagination over Herald's lists (docs/API.md §4).

A list answers ``{"items": [...], "page": {limit, after, before,
has_more_after, has_more_before}}``, newest first. A pager walks the ``after``
cursors lazily, one request per page, so iterating 100,000 notifications
holds one page in memory at a time: ``Pager`` (``for``) on the blocking
client, ``AsyncPager`` (``async for``) on the asyncio one.
"""

from __future__ import annotations

from typing import (
    Any,
    AsyncIterator,
    Callable,
    Dict,
    Generic,
    Iterator,
    List,
    Optional,
    TypeVar,
)

from ._transport import Request

T = TypeVar("T")


class Page(Generic[T]):
    """One page of a list: ``items`` plus the cursors to its neighbours.

    ``meta`` holds what some lists add beside ``items`` and ``page`` (the feed's
    ``unread_count``…), ``raw`` the whole answer.
    """

    def __init__(self, items: List[T], raw: Dict[str, Any]) -> None:
        self.items = items
        self.raw = raw
        page = raw.get("page") or {}
        self.limit: Optional[int] = page.get("limit")
        self.after: Optional[str] = page.get("after")
        self.before: Optional[str] = page.get("before")
        self.has_more_after: bool = bool(page.get("has_more_after"))
        self.has_more_before: bool = bool(page.get("has_more_before"))
        self.meta: Dict[str, Any] = raw.get("meta") or {}

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"Page(items={len(self.items)}, has_more_after={self.has_more_after})"


class _PagerBase(Generic[T]):
    """A list call not made yet: its path, filters and how to read its items."""

    def __init__(
        self,
        send: Callable[[Request], Any],
        path: str,
        params: Dict[str, Any],
        item: Optional[Callable[[Any], T]],
    ) -> None:
        self._send = send
        self._path = path
        self._params = params
        self._item = item

    def _request(self, after: Optional[str], before: Optional[str]) -> Request:
        params = dict(self._params)
        if after is not None:
            params["after"] = after
            params.pop("before", None)
        if before is not None:
            params["before"] = before
            params.pop("after", None)
        return Request("GET", self._path, params=params, cast=self._to_page)

    def _to_page(self, raw: Dict[str, Any]) -> Page[T]:
        conv = self._item
        items = [conv(x) for x in raw.get("items", [])] if conv else list(raw.get("items", []))
        return Page(items, raw)


class Pager(_PagerBase[T]):
    """A list of the blocking client: ``for x in pager`` walks every item from
    the starting cursor on, fetching page after page as needed; ``first_page()``
    and ``page(after=…, before=…)`` fetch one page."""

    def first_page(self) -> Page[T]:
        """The first page (from the cursor the list was called with, if any)."""
        return self._send(self._request(None, None))  # type: ignore[no-any-return]

    def page(self, *, after: Optional[str] = None, before: Optional[str] = None) -> Page[T]:
        """The page after (older) or before (newer) a cursor of an earlier page."""
        return self._send(self._request(after, before))  # type: ignore[no-any-return]

    def iter_pages(self) -> Iterator[Page[T]]:
        page = self.first_page()
        yield page
        while page.has_more_after and page.after:
            page = self.page(after=page.after)
            yield page

    def __iter__(self) -> Iterator[T]:
        for page in self.iter_pages():
            yield from page.items


class AsyncPager(_PagerBase[T]):
    """A list of the asyncio client: ``async for x in pager`` walks every item;
    ``await first_page()`` and ``await page(after=…, before=…)`` fetch one page."""

    async def first_page(self) -> Page[T]:
        return await self._send(self._request(None, None))  # type: ignore[no-any-return]

    async def page(self, *, after: Optional[str] = None, before: Optional[str] = None) -> Page[T]:
        return await self._send(self._request(after, before))  # type: ignore[no-any-return]

    async def iter_pages(self) -> AsyncIterator[Page[T]]:
        page = await self.first_page()
        yield page
        while page.has_more_after and page.after:
            page = await self.page(after=page.after)
            yield page

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.iter_pages():
            for item in page.items:
                yield item
