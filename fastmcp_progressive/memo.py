"""A memo keyed by object identity: how listings and definitions skip repeated work.

FastMCP hands the middleware the same registered tool objects on every request, so work
derived from a tool (its reduced listing entry, its full definition) can be kept per
object and dropped when the object goes away, e.g. when a tool is removed or replaced.

Example:
    ```python
    memo = IdentityMemo()
    memo.put(tool, reduced)
    memo.get(tool)  # reduced, until ``tool`` is garbage-collected
    ```
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any

from cachetools import LRUCache


class IdentityMemo:
    """Values keyed by object identity, dropped when the object dies.

    FastMCP tools define ``__eq__`` without ``__hash__``, so a ``WeakKeyDictionary`` cannot
    hold them; an ``id()`` key guarded by a weak reference can, and is also cheaper than
    hashing a model.
    """

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[Any], Any]] = {}

    def get(self, obj: Any) -> Any:
        entry = self._entries.get(id(obj))
        return entry[1] if entry is not None and entry[0]() is obj else None

    def put(self, obj: Any, value: Any) -> None:
        key = id(obj)
        entries = self._entries

        def forget(_: weakref.ref[Any]) -> None:
            current = entries.get(key)
            if current is not None and current[0]() is None:
                del entries[key]

        entries[key] = (weakref.ref(obj, forget), value)

    def __len__(self) -> int:
        return len(self._entries)


class ToolMemo:
    """Per-tool results found by identity first, then by content; bounded.

    A local tool is the same object on every request, so the identity lookup hits at the
    price of one dictionary probe. A mounted server's tools (``FastMCPProviderTool``, then
    a ``Namespace`` copy) and a proxy's (``ProxyTool``) are new objects on every request:
    for those ``key(tool)`` (a tuple of the fields the result depends on) finds the result
    an equal tool produced before. Content entries live in an LRU of ``maxsize``; identity
    entries die with their tool object, so both stay bounded. Only results derived from
    the tool itself are kept here: which tools a caller may see is decided elsewhere on
    every request, so a content hit can never widen visibility.

    Example:
        ```python
        memo = ToolMemo(maxsize=1_000, key=lambda t: (t.name, t.description))
        memo.get(tool) or memo.put(tool, derive(tool))
        ```
    """

    def __init__(self, maxsize: int, key: Callable[[Any], Hashable]) -> None:
        if maxsize < 1:
            raise ValueError("a memo needs room for at least one entry")
        self.maxsize = maxsize
        self._key = key
        self._identity = IdentityMemo()
        self._content: LRUCache[Hashable, Any] = LRUCache(maxsize=maxsize)
        self.content_hits = 0  # results found for a new object by its content (tests)

    def get(self, tool: Any) -> Any:
        """The result kept for ``tool`` (this object, or an equal one), or None."""
        found = self._identity.get(tool)
        if found is not None:
            return found
        found = self._content.get(self._key(tool))
        if found is not None:
            self.content_hits += 1
            self._identity.put(tool, found)
        return found

    def put(self, tool: Any, value: Any) -> None:
        self._content[self._key(tool)] = value
        self._identity.put(tool, value)

    def __len__(self) -> int:
        return len(self._content)
