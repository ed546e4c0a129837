"""The two kinds of bounded cache several wings key by tool or caller, on ``cachetools``.

Every cache the package keeps is a ``cachetools`` cache with a size bound (the list, with
each bound, is in ``docs/architecture.md``). Two keys recur, and live here:

- ``ToolCache``: work derived from a tool (its reduced listing entry, its full definition),
  kept under the tool's *content* (a tuple of the fields the result depends on), so a
  mounted or proxied tool, a new object on every request, finds it too. Computing that key
  costs a few ``repr`` calls (the listing's includes the listed schema), so the key is also
  remembered per tool object: a local tool, the same object on every request, pays one
  lookup. One entry per tool *slot* (its name, by default): new content of a tool replaces
  the result kept for its old content, so an upstream whose descriptions change on every
  listing keeps one entry per tool, not one per listing. A key keeps its long texts (a
  description, a schema's ``repr``) as their SHA-256, not whole: a proxied upstream hands
  out new tool objects on every listing, and a key remembered for each of them held its
  whole description (200 listings of 20 changing 5 KB descriptions kept 19.8 MiB).
- ``IdentityCache``: a value about one object (a caller, a listed tool), not its content.

An extension's mark on a listed tool (its groups, its resolvability, in ``_meta``) is a
copy of that tool; ``with_meta`` keeps one copy per listed tool object and mark, so a
listing whose tools did not change is made of the very same objects again (and whatever is
derived downstream from them by identity, their wire form, is reused).

What the package keeps about a FastMCP *server* (the store grants live in when it was
given none, a gateway's upstreams, the middleware order found right, the gateway tools its
transforms generate) lives in one weak map, ``per_server``: a
dict of slots per server, dropped with the server, so nothing is ever assigned onto
FastMCP's objects and each fact needs no weak map of its own.

Both are keyed by ``id()`` where an object is the key (FastMCP tools define ``__eq__``
without ``__hash__``), guarded by a weak reference so a recycled ``id`` never finds another
object's value. An entry goes when its object dies (the weak reference's callback notes the
``id``; the next use of the cache drops it), not only when least recently used.

Only results derived from the tool itself are kept: which tools a caller may see is decided
on every request elsewhere, so a hit can never widen visibility. A lock guards each cache
(the start-up preload fills them from a thread; ``cachetools`` caches are not thread-safe).

Example:
    ```python
    cache = ToolCache(1_000, key=lambda t: (t.name, t.description))
    cache.get(tool) or cache.put(tool, derive(tool))
    ```
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from cachetools import LRUCache

V = TypeVar("V")

#: Texts in a content key longer than this are kept as their SHA-256 (32 bytes).
LONGEST_KEPT_TEXT = 64


class IdentityCache(Generic[V]):
    """Values about objects, by identity; an object's entry goes when it dies, and the
    least recently used beyond ``maxsize`` go."""

    def __init__(self, maxsize: int) -> None:
        self._entries: LRUCache[int, tuple[weakref.KeyedRef[int, Any], V]] = LRUCache(maxsize)
        self._lock = threading.Lock()
        # The ids of objects that died, appended by their weak references' callbacks: a
        # callback runs wherever the collector does (perhaps inside this cache's lock on
        # this thread), so it only appends (atomic) and the next use drops the entries.
        self._dead: deque[weakref.KeyedRef[int, Any]] = deque()

    def get(self, obj: Any) -> V | None:
        """The value kept for this very object, or None."""
        with self._lock:
            self._drop_dead()
            entry = self._entries.get(id(obj))
        return entry[1] if entry is not None and entry[0]() is obj else None

    def put(self, obj: Any, value: V) -> None:
        ref = weakref.KeyedRef(obj, self._dead.append, id(obj))
        with self._lock:
            self._drop_dead()
            self._entries[id(obj)] = (ref, value)

    def __len__(self) -> int:
        with self._lock:
            self._drop_dead()
            return len(self._entries)

    def _drop_dead(self) -> None:
        """Drop the entries of objects that died (under the lock). An ``id`` already reused
        by a live object keeps that object's entry."""
        while self._dead:
            key = self._dead.popleft().key
            entry = self._entries.get(key)
            if entry is not None and entry[0]() is None:
                del self._entries[key]


class ToolCache(Generic[V]):
    """Results per tool content, one per slot, with the content key remembered per tool
    object; at most ``maxsize`` results and ``maxsize`` remembered keys."""

    def __init__(self, maxsize: int, key: Callable[[Any], Hashable],
                 slot: Callable[[Any], Hashable] | None = None) -> None:
        if maxsize < 1:
            raise ValueError("a cache needs room for at least one entry")
        self.maxsize = maxsize
        self._key = key
        self._slot = slot or _first
        self._keys: IdentityCache[Hashable] = IdentityCache(maxsize)  # compact keys
        self._values: LRUCache[Hashable, tuple[Hashable, V]] = LRUCache(maxsize)
        self._lock = threading.Lock()

    def get(self, tool: Any) -> V | None:
        """The result kept for ``tool`` (this object, or one with equal content), or None."""
        key = self._content_key(tool)
        with self._lock:
            entry = self._values.get(self._slot(key))
        return entry[1] if entry is not None and entry[0] == key else None

    def put(self, tool: Any, value: V) -> None:
        """Keep ``value`` for ``tool``'s content, replacing what its slot held before."""
        key = self._content_key(tool)
        with self._lock:
            self._values[self._slot(key)] = (key, value)

    def __len__(self) -> int:
        return len(self._values)

    def _content_key(self, tool: Any) -> Hashable:
        """The content key remembered for this very object, else computed (compact) and
        remembered. An equal key already kept is shared rather than kept twice, so
        remembering a key for each of a proxy's fresh tool objects costs a reference, not
        another copy."""
        key = self._keys.get(tool)
        if key is None:
            key = compact(self._key(tool))
            with self._lock:
                kept = self._values.get(self._slot(key))
            if kept is not None and kept[0] == key:
                key = kept[0]
            self._keys.put(tool, key)
        return key


MARKS_KEPT = 100_000
"""Listed tool objects whose marked copies are kept (the listing's own caches keep those
objects alive; two marks, groups and resolution, 50,000 tools each)."""
_marks: IdentityCache[dict[str, tuple[Any, Any]]] = IdentityCache(MARKS_KEPT)


def with_meta(tool: Any, key: str, value: Any) -> Any:
    """``tool`` (a FastMCP component) with ``value`` under ``key`` in its ``_meta``: the same
    copy again while this very object is marked with an equal value."""
    kept = _marks.get(tool)
    if kept is None:
        kept = {}
        _marks.put(tool, kept)
    entry = kept.get(key)
    if entry is None or entry[0] != value:
        entry = kept[key] = (value, tool.model_copy(update={"meta": {**(tool.meta or {}),
                                                                     key: value}}))
    return entry[1]


_per_server: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
_per_server_lock = threading.Lock()


def per_server(server: Any) -> dict[str, Any]:
    """The package's slots for ``server`` (one key per fact, named by the module keeping
    it), made empty on first use and dropped with the server."""
    with _per_server_lock:
        return _per_server.setdefault(server, {})


server_slots: Callable[[Any], dict[str, Any] | None] = _per_server.get
"""The package's slots for ``server`` if any were made (None: none yet), making nothing: a
read on every request (the middleware's order, a call's gateway tools) is the map's own
lookup, as cheap as a weak map of its own was."""


def compact(key: Hashable) -> Hashable:
    """``key`` with each text longer than ``LONGEST_KEPT_TEXT`` (in it, or in its tuples)
    replaced by its SHA-256: equal keys stay equal, a different text gives a different
    digest, and other items (numbers, ``None``, objects) are kept as they are, so they
    compare as before."""
    if isinstance(key, str) and len(key) > LONGEST_KEPT_TEXT:
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    if isinstance(key, tuple):
        return tuple(compact(item) for item in key)
    return key


def _first(key: Hashable) -> Hashable:
    """The default slot: a tuple key's first item (the tool's name), else the key itself."""
    return key[0] if isinstance(key, tuple) and key else key
