"""A bounded per-tool memo: how listings and definitions skip repeated work.

Work derived from a tool (its reduced listing entry, its full definition) is kept under
the tool's content (a tuple of the fields the result depends on), so any object with that
content finds it: a local tool, which FastMCP hands out as the same object on every
request, and a mounted or proxied one, which is a new object each time. Computing the
content key costs a few ``repr`` calls, so a second map remembers the key per tool object
(guarded by a weak reference, dropped when the object dies) and a local tool pays one
dictionary probe. Both maps are LRUs of ``maxsize`` entries.

One entry per tool: a result kept for new content of a tool (its ``slot``, by default the
name, the first item of the content key) replaces the one kept for its old content. An
upstream whose descriptions change on every listing therefore keeps one entry per tool,
not one per listing (it kept 327 MiB before), so a memo holds at most the current catalog's
worth of results, whatever changes.

Only results derived from the tool itself are kept here: which tools a caller may see is
decided on every request elsewhere, so a content hit can never widen visibility.

Example:
    ```python
    memo = ToolMemo(maxsize=1_000, key=lambda t: (t.name, t.description))
    memo.get(tool) or memo.put(tool, derive(tool))
    ```
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import suppress
from typing import Any


class ToolMemo:
    """Results per tool content, with the content key remembered per live tool object.

    FastMCP tools define ``__eq__`` without ``__hash__``, so a ``WeakKeyDictionary`` cannot
    hold them; an ``id()`` key guarded by a weak reference can, and is cheaper than
    hashing a model. Both maps are ``OrderedDict``s used as LRUs (their reordering runs
    in C): a warm 10,000-tool listing makes 10,000 lookups, and ``cachetools``' pure
    Python LRU cost three times as much per hit.
    """

    def __init__(self, maxsize: int, key: Callable[[Any], Hashable],
                 slot: Callable[[Any], Hashable] | None = None) -> None:
        if maxsize < 1:
            raise ValueError("a memo needs room for at least one entry")
        self.maxsize = maxsize
        self._key = key
        self._slot = slot or _first
        self._keys: OrderedDict[int, tuple[weakref.ref[Any], Hashable]] = OrderedDict()
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._current: dict[Hashable, Hashable] = {}  # slot -> the content key kept for it
        self._lock = threading.Lock()  # the start-up preload runs in a thread

    def get(self, tool: Any) -> Any:
        """The result kept for ``tool`` (this object, or one with equal content), or None."""
        key = self._content_key(tool)
        values = self._values
        found = values.get(key)
        if found is not None:
            with suppress(KeyError):  # evicted meanwhile by another thread: still valid
                values.move_to_end(key)
        return found

    def put(self, tool: Any, value: Any) -> None:
        """Keep ``value`` for ``tool``'s content, replacing what its slot held before."""
        key = self._content_key(tool)
        slot = self._slot(key)
        with self._lock:
            stale = self._current.get(slot)
            if stale is not None and stale != key:
                self._values.pop(stale, None)
            self._current[slot] = key
            self._keep(self._values, key, value)

    def __len__(self) -> int:
        return len(self._values)

    def _content_key(self, tool: Any) -> Hashable:
        """The content key remembered for this very object, else computed and remembered."""
        entry = self._keys.get(id(tool))
        return entry[1] if entry is not None and entry[0]() is tool else self._remember(tool)

    def _remember(self, tool: Any) -> Hashable:
        key = self._key(tool)
        ident = id(tool)
        keys = self._keys

        def forget(ref: weakref.ref[Any]) -> None:
            current = keys.get(ident)
            if current is not None and current[0] is ref:
                keys.pop(ident, None)

        with self._lock:
            self._keep(keys, ident, (weakref.ref(tool, forget), key))
        return key

    def _keep(self, lru: OrderedDict[Any, Any], key: Hashable, value: Any) -> None:
        """Store ``value`` as the most recent entry of ``lru``, dropping the least recent
        beyond ``maxsize`` (callers hold ``_lock``)."""
        lru[key] = value
        lru.move_to_end(key)
        while len(lru) > self.maxsize:
            dropped, _ = lru.popitem(last=False)
            if lru is self._values:
                slot = self._slot(dropped)
                if self._current.get(slot) == dropped:
                    del self._current[slot]


def _first(key: Hashable) -> Hashable:
    """The default slot: a tuple key's first item (the tool's name), else the key itself."""
    return key[0] if isinstance(key, tuple) and key else key


class IdentityMemo:
    """Values keyed by object identity, dropped when the object dies (so bounded by the
    objects alive): for results about one object, not its content (``resolution/server.py``
    marks the listed tools, which the listing memo keeps)."""

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
