"""Parsing ``resource:///tool_descriptions?tools=a,b`` into the tool names it selects.

Rules: the base URI must be ours; the query is what follows the first ``?`` before any
``#`` (``#?tools=a`` is a fragment, not a query); every ``tools`` parameter counts
(``?tools=a&tools=b`` equals ``?tools=a,b``); each value is split on literal commas first
and only then percent-decoded, so ``a%2Cb`` names the one tool ``a,b``; names are
trimmed, blank ones dropped (they count toward no limit) and duplicates folded in
first-seen order. Names are not cut: a tool of any name length can be read. The work is
bounded: a query longer than ``MAX_QUERY_CHARS``, or bridge names adding up to more than
that (``too_long``), or naming more than the configured number of tools is refused as a
whole.

Example:
    ```python
    parse_selection("resource:///tool_descriptions?tools=a,b%2Cc", limit=32)
    # Selection(names=('a', 'b,c'), count=2)
    ```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import unquote

from fastmcp_progressive.payloads import DESCRIPTIONS_URI

MAX_QUERY_CHARS = 64 * 1024


@dataclass(frozen=True)
class Selection:
    """The names a read selects; ``count`` is how many were asked for (before any cap)."""

    names: tuple[str, ...]
    count: int
    too_long: bool = False

    @property
    def missing(self) -> bool:
        return self.count == 0


def is_descriptions_uri(uri: str) -> bool:
    """Whether ``uri`` addresses the descriptions resource (with or without a query).

    The one test for "is this our resource": reads (the middleware) and a client's
    ``resources/list`` (``guidance.uses_progressive_disclosure``) both ask it.
    """
    base = uri.split("?", 1)[0].split("#", 1)[0]
    return base.rstrip("/") == DESCRIPTIONS_URI or base == "resource://tool_descriptions"


def parse_selection(uri: str, *, limit: int) -> Selection:
    """The tool names ``uri`` selects; ``names`` is empty when more than ``limit`` were asked.

    Over the limit, ``count`` says how many items were asked for so the error can say so.
    """
    before_fragment = uri.split("#", 1)[0]
    query = before_fragment.split("?", 1)[1] if "?" in before_fragment else ""
    if len(query) > MAX_QUERY_CHARS:
        return Selection(names=(), count=query.count(",") + 1, too_long=True)
    items = [
        item
        for pair in query.split("&")
        if unquote(pair.partition("=")[0]).strip() == "tools"
        for item in pair.partition("=")[2].split(",")
    ]
    return selection_from_names([unquote(item, errors="replace") for item in items], limit=limit)


def selection_from_names(raw: list[str], *, limit: int) -> Selection:
    """The same rules for names that arrive as a list (the bridge tool's arguments)."""
    if sum(len(item) for item in raw) > MAX_QUERY_CHARS:
        return Selection(names=(), count=len(raw), too_long=True)
    names = dict.fromkeys(item for item in raw if item.strip())
    if len(names) > limit:
        return Selection(names=(), count=len(names))
    return Selection(names=tuple(names), count=len(names))


T = TypeVar("T")


async def resolve_trimmed(
    names: Sequence[str], look_up: Callable[[Sequence[str]], Awaitable[dict[str, T | None]]]
) -> dict[str, T | None]:
    """``look_up(names)``, with each name that has surrounding whitespace and finds nothing
    looked up again trimmed (answered under the trimmed name; duplicates folded).

    The exact name always wins, so a tool named ``" a"`` and one named ``"a"`` are both
    reachable; a name finding nothing either way is answered under its trimmed form.
    """
    found = await look_up(names)
    retry = [name for name, value in found.items() if value is None and name != name.strip()]
    again = await look_up([name.strip() for name in retry]) if retry else {}
    resolved: dict[str, T | None] = {}
    for name, value in found.items():
        if value is None and name != name.strip():
            name, value = name.strip(), again.get(name.strip())
        if name not in resolved or resolved[name] is None:
            resolved[name] = value
    return resolved
