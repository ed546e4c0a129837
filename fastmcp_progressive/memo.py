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
from typing import Any


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
