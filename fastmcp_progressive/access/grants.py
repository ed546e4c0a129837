"""Where grants live: which tools each caller has unlocked by reading their descriptions.

Each kind of caller (see ``caller.py``) keeps its grants where its identity lives:

- ``session`` (handshake era): in memory, keyed by MCP session id, dropped when the
  connection closes and bounded by a sliding TTL and a maximum number of sessions for
  connections that never say goodbye; or, with ``shared_sessions=True``, in the key-value
  store like principals (for replicas that share sticky-less session ids);
- ``principal`` (2026-07-28 with auth): in a key-value store (``store=``, by default the
  serving FastMCP server's own session-state store, handed over lazily as
  ``server_store``), one key per (principal, tool) with a TTL, so a shared backend
  (Redis, ...) lets replicas agree;
- ``anonymous``: only under the ``"shared"`` policy, one process-wide set (not isolated).

At most ``store_operations`` store operations (8 by default) run at once in this process,
and at most ``OPERATIONS_PER_CALLER`` of them for one caller; the rest wait their turn
within ``store_timeout``, handed out in turn across clients (``_FairSlots``), first come
first served within one. A store has a connection cap (Redis ``maxclients``); a burst past
it had the store refuse connections, and each refusal counted as a failure of whichever
caller's operation it hit, so one principal's burst decided other principals' answers. Now
a burst waits, mostly in its own queue. A client is a principal, with all of its sessions:
under ``shared_sessions`` one principal opening 200 sessions had them queue ahead of every
other caller, first come first served, so another session's granted call timed out
(``GRANT_STORE_UNAVAILABLE`` under ``"closed"``); now it waits for at most one operation of
that principal. Sessions with no principal (no auth) cannot be told apart: each is a client.

A key-value store that fails or does not answer within ``store_timeout`` seconds never
hangs a request: ``has`` answers per ``on_store_error`` (``"open"``: treat as granted,
``"closed"``: raise ``GrantStoreUnavailable``), ``add`` logs and carries on. After a failure
the store is left alone *for that caller* for ``STORE_RETRY_SECONDS`` (its calls answer per
policy at once), so an outage costs each caller one ``store_timeout`` wait per second, not
one per request. The pause is per caller, never global: one caller's failures (a burst past
Redis ``maxclients``, a write Redis refuses) decide only that caller's calls; every other
caller's lookup still goes to the store and is answered by what the store says. A pause is
an instant kept per key, as a confirmed grant is, so both share one bounded map (``_until``).

Grants kept in the store are also confirmed in memory: a grant this process wrote or found
is trusted for up to ``CONFIRMED_SECONDS`` without asking the store again (a store lookup
is most of a granted call's overhead). Each grant stored carries its wall-clock expiry, so
a confirmation never outlives the grant itself; only positive answers are kept (a grant
another replica writes is seen at once), in an LRU of ``confirmed_size`` entries (about
250 bytes each). Grants are never revoked, only expire; one removed from the store by
hand (a flush) is still honoured by a process that confirmed it, for at most
``CONFIRMED_SECONDS``. Only a store in this process (FastMCP's default ``MemoryStore``)
is trusted this way, and only under ``on_store_error="open"``: a shared store (Redis, ...)
is asked on every call, so replicas and outages are seen at once.

Example:
    ```python
    grants = GrantStore(GrantSettings(ttl=3600, store=RedisStore(...)))  # or no store: the server's
    await grants.add(caller, ["search"])
    await grants.has(caller, "search")  # True
    ```
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from cachetools import LRUCache, TTLCache
from key_value.aio.stores.memory import MemoryStore

from fastmcp_progressive.access.caller import Caller, principal_key
from fastmcp_progressive.fastmcp_internals import on_connection_close
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.settings import GrantSettings, GrantStoreProtocol
from fastmcp_progressive.settings import StoreErrorPolicy as StoreErrorPolicy

logger = get_logger("grants")

GRANTS_COLLECTION = "fastmcp_progressive_grants"
LISTINGS_COLLECTION = "fastmcp_progressive_listings"
"""Where a capped listing's per-caller entries live (``toolcap.py``), beside the grants."""
_SHARED_ANONYMOUS_KEY = "anonymous"
STORE_RETRY_SECONDS = 1.0
CONFIRMED_SECONDS = 5.0
DEFAULT_CONFIRMED_SIZE = 10_000
"""Instants kept at once (``GrantStore._until``, LRU, ~250 B each): grants confirmed and
callers resting; beyond it the oldest is forgotten (a grant is asked of the store again,
a resting caller asks the store again)."""
OPERATIONS_PER_CALLER = 2
"""Most of one caller's store operations running or next in line at once (its others wait
behind them), so another caller waits behind at most this many of each busy caller's."""
T = TypeVar("T")


ServerStore = Callable[[], GrantStoreProtocol]
"""Gives the serving server's session-state store (where principal grants go by default)."""


class GrantStoreUnavailable(RuntimeError):
    """The key-value store holding grants failed and the policy is to fail closed."""


class GrantStore:
    """Grants per caller, each kind stored where its identity lives (see module docstring)."""

    def __init__(self, settings: GrantSettings | None = None, *,
                 confirmed_size: int = DEFAULT_CONFIRMED_SIZE) -> None:
        settings = settings or GrantSettings()  # checked when it was built
        self.ttl = settings.ttl
        self.shared_sessions = settings.shared_sessions
        self.store_timeout = settings.store_timeout
        self.on_store_error: StoreErrorPolicy = settings.on_store_error
        self.store = settings.store
        # below the store's connection cap: a refused connection would count as a failure
        self._in_flight = _FairSlots(settings.store_operations)
        self._per_caller = min(OPERATIONS_PER_CALLER, settings.store_operations)
        self._turns: dict[str, _Turns] = {}  # callers with operations running or waiting
        self._sessions: TTLCache[str, _SessionGrants] = TTLCache(maxsize=settings.max_sessions,
                                                                 ttl=settings.ttl)
        # time.monotonic() until which: a grant's store key is trusted without a lookup;
        # a caller's ``_rest_key`` has its store operations rest (after its own failure)
        self._until: LRUCache[str, float] = LRUCache(maxsize=max(1, confirmed_size))

    def uses_store(self, caller: Caller) -> bool:
        """Whether ``caller``'s grants live in the key-value store rather than in memory."""
        return caller.kind == "principal" or (caller.kind == "session" and self.shared_sessions)

    def store_for(self, caller: Caller, server_store: ServerStore | None = None
                  ) -> GrantStoreProtocol | None:
        """The key-value store holding ``caller``'s grants (None: they live in memory): the
        configured ``store``, else the serving server's (``server_store()``)."""
        if not self.uses_store(caller):
            return None
        if self.store is not None:
            return self.store
        if server_store is None:
            raise RuntimeError("grants kept in a key-value store need a store")
        return server_store()

    async def has(self, caller: Caller, tool: str, *,
                  server_store: ServerStore | None = None) -> bool:
        """Whether ``caller`` unlocked ``tool``; refreshes the caller's TTL when it did.

        ``server_store`` gives the serving server's session-state store, asked only when
        ``caller``'s grants live in a store and none was configured."""
        if self.held(caller, tool, server_store=server_store):
            return True
        store = self.store_for(caller, server_store)
        if store is None:
            return False
        key = _kv_key(caller, tool)
        try:
            found = await self._bounded(caller,
                                        lambda: store.get(key, collection=GRANTS_COLLECTION))
        except Exception as exc:
            if not isinstance(exc, GrantStoreUnavailable):  # the rest after one is not news
                _log_failure(exc, f"lookup failed ({{}}); failing {self.on_store_error}")
            if self.on_store_error == "closed":
                raise GrantStoreUnavailable("the grant store is not answering") from None
            return True
        if found is not None and self._confirms(store):
            self._confirm(key, found.get("until") if isinstance(found, Mapping) else None)
        return found is not None

    def held(self, caller: Caller, tool: str, *,
             server_store: ServerStore | None = None) -> bool:
        """Whether this process knows ``caller`` unlocked ``tool`` without asking a store:
        a grant held in memory, or a store grant confirmed in memory (``_confirms``).
        False says nothing more: ``has`` asks the store. No store is touched, so a name
        nobody was granted costs no store operation."""
        if self.uses_store(caller):
            until = self._until.get(_kv_key(caller, tool))
            if until is None or time.monotonic() >= until:
                return False
            store = self.store_for(caller, server_store)
            return store is not None and self._confirms(store)
        entry = self._memory_entry(caller, create=False)
        return entry is not None and tool in entry.names

    async def add(self, caller: Caller, tools: Iterable[str], *,
                  server_store: ServerStore | None = None) -> bool:
        """Record that ``caller`` read the descriptions of ``tools`` (``server_store``: as
        for ``has``); False when the grant could not be kept (the store failed or refused
        the write: logged), so nothing may promise it."""
        names = list(tools)
        if not names:
            return True
        store = self.store_for(caller, server_store)
        if store is not None:
            keys = [_kv_key(caller, name) for name in names]
            until = time.time() + self.ttl
            try:
                await self._bounded(caller, lambda: store.put_many(
                    keys, [{"granted": True, "until": until}] * len(keys),
                    collection=GRANTS_COLLECTION, ttl=self.ttl), write=True)
            except Exception as exc:
                _log_failure(exc, "write failed ({}); the grant is not kept")
                return False
            if self._confirms(store):
                for key in keys:
                    self._confirm(key, until)
            return True
        entry = self._memory_entry(caller, create=True)
        if entry is None:
            return False
        entry.names.update(names)
        return True

    # -- a capped listing's entries, kept where the caller's grants are (toolcap.py) -----------
    def keeps_listing(self, caller: Caller) -> bool:
        """Whether ``caller`` has a listing of its own: a caller the server can follow
        (a handshake-era session or an authenticated principal)."""
        return caller.kind in ("session", "principal") and caller.key is not None

    async def listing(self, caller: Caller, *,
                      server_store: ServerStore | None = None) -> list[str] | None:
        """The tools ``caller``'s capped listing holds, most recently added first (None:
        none kept yet, or a store that failed: the caller gets the server's default)."""
        if not self.keeps_listing(caller):
            return None
        store = self.store_for(caller, server_store)
        if store is None:
            entry = self._memory_entry(caller, create=False)
            return list(entry.listed) if entry is not None and entry.listed is not None else None
        try:
            found = await self._bounded(caller, lambda: store.get(
                _kv_key(caller, "listing"), collection=LISTINGS_COLLECTION))
        except Exception as exc:
            if not isinstance(exc, GrantStoreUnavailable):
                _log_failure(exc, "listing lookup failed ({}); the default listing is shown")
            return None
        names = found.get("tools") if isinstance(found, Mapping) else None
        return [n for n in names if isinstance(n, str)] if isinstance(names, list) else None

    async def keep_listing(self, caller: Caller, names: Sequence[str], *,
                           server_store: ServerStore | None = None) -> None:
        """Store ``caller``'s capped listing entries (most recently added first)."""
        if not self.keeps_listing(caller):
            return
        store = self.store_for(caller, server_store)
        if store is None:
            entry = self._memory_entry(caller, create=True)
            if entry is not None:
                entry.listed = list(names)
            return
        try:
            await self._bounded(caller, lambda: store.put_many(
                [_kv_key(caller, "listing")], [{"tools": list(names)}],
                collection=LISTINGS_COLLECTION, ttl=self.ttl), write=True)
        except Exception as exc:
            _log_failure(exc, "listing write failed ({}); the listing may not be kept")

    def _confirms(self, store: GrantStoreProtocol) -> bool:
        """Whether grants in ``store`` may be trusted in memory (the module docstring):
        FastMCP's default ``MemoryStore`` (no replica shares it, none can lose it behind
        our back) under ``on_store_error="open"``."""
        return self.on_store_error == "open" and isinstance(store, MemoryStore)

    def _confirm(self, key: str, until: Any) -> None:
        """Trust a stored grant for a while: ``CONFIRMED_SECONDS`` at most, and never past
        its expiry ``until`` (wall clock); one with no known expiry is not trusted."""
        if not isinstance(until, (int, float)):
            return
        left = min(CONFIRMED_SECONDS, self.ttl, until - time.time())
        if left > 0:
            self._until[key] = time.monotonic() + left

    def release(self, key: str) -> None:
        """Forget a closed legacy session at once instead of waiting for its TTL."""
        self._sessions.pop(key, None)

    async def _bounded(self, caller: Caller, operation: Callable[[], Awaitable[T]], *,
                       write: bool = False) -> T:
        """Run one of ``caller``'s store operations within ``store_timeout``; none while
        that caller rests after its own failure (other callers are never paused by it).

        A ``write`` the store refused with an answer (a read-only replica, ``maxmemory``
        with ``noeviction``) is no outage: its caller's lookups go on being answered by
        the store. Only a write that timed out rests its caller."""
        who = _caller_part(caller)
        client = principal_key(caller.principal) if caller.principal else who  # _FairSlots
        rest = _rest_key(who)
        until = self._until.get(rest)
        if until is not None:
            if time.monotonic() < until:
                raise GrantStoreUnavailable("the grant store failed moments ago")
            self._until.pop(rest, None)
        try:
            with anyio.fail_after(self.store_timeout):
                async with self._turn(who, client):
                    return await operation()
        except Exception as exc:
            if write and not isinstance(exc, TimeoutError):
                raise
            now = time.monotonic()
            if self._until.get(rest, now) > now:  # its concurrent operation failed first:
                raise GrantStoreUnavailable("the grant store failed moments ago") from exc
            # a store that failed may come back without its data: no grant is trusted
            for key in [key for key in self._until if not key.endswith("|")]:  # not a rest
                del self._until[key]
            self._until[rest] = now + STORE_RETRY_SECONDS  # (logged once, by the caller)
            raise

    @asynccontextmanager
    async def _turn(self, who: str, client: str) -> AsyncIterator[None]:
        """Wait for a slot among ``who``'s own (FIFO), then among the process's, handed out
        in turn across clients: a burst of one client's operations queues behind itself."""
        if (turns := self._turns.get(who)) is None:
            turns = self._turns[who] = _Turns(anyio.Semaphore(self._per_caller, fast_acquire=True))
        turns.users += 1
        try:
            async with turns.slots, self._in_flight.slot(client):
                yield
        finally:
            turns.users -= 1
            if not turns.users:
                del self._turns[who]

    def _memory_entry(self, caller: Caller, *, create: bool) -> _SessionGrants | None:
        """What this process keeps for a session (or the shared anonymous set), its TTL
        slid; None when nothing is kept (made when ``create``) or grants live elsewhere."""
        key = caller.key if caller.kind == "session" else _SHARED_ANONYMOUS_KEY
        if caller.kind not in ("session", "anonymous") or key is None:
            return None
        entry = self._sessions.get(key)
        if entry is None and create:
            entry = _SessionGrants()
            self._sessions[key] = entry
            if caller.kind == "session":
                on_connection_close(caller.anchor, lambda: self.release(key),
                                    marker="fastmcp_progressive.access.grants")
        if entry is None:
            return None
        now = time.monotonic()
        if now - entry.refreshed > self.ttl / 10:  # the TTL slides with activity, re-inserting
            entry.refreshed = now  # at most ten times per TTL (a re-insert is not free)
            self._sessions[key] = entry
        return entry


class _FairSlots:
    """At most ``size`` holders at once; a freed slot goes to the next client in turn (the
    one waiting longest since it was last served), and within a client first come first
    served. One event loop's tasks only (as ``anyio.Semaphore``)."""

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiting: dict[str, deque[anyio.Event]] = {}  # in turn order: served -> last

    @asynccontextmanager
    async def slot(self, client: str) -> AsyncIterator[None]:
        if self._free and not self._waiting:
            self._free -= 1
        else:
            handed = anyio.Event()
            self._waiting.setdefault(client, deque()).append(handed)
            try:
                await handed.wait()
            except BaseException:  # cancelled (timed out): give up the place or the slot
                if handed.is_set():
                    self._release()
                else:
                    queue = self._waiting[client]
                    queue.remove(handed)
                    if not queue:
                        del self._waiting[client]
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        """Hand the slot to the first waiter of the client next in turn, else free it."""
        if not self._waiting:
            self._free += 1
            return
        client = next(iter(self._waiting))
        queue = self._waiting.pop(client)
        queue.popleft().set()
        if queue:
            self._waiting[client] = queue  # its next operation waits for its next turn


@dataclass
class _Turns:
    """One caller's slots for store operations, and how many of its operations hold or
    wait for one (the entry leaves with the last)."""

    slots: anyio.Semaphore
    users: int = 0


@dataclass
class _SessionGrants:
    names: set[str] = field(default_factory=set)
    listed: list[str] | None = None
    refreshed: float = field(default_factory=time.monotonic)


def _kv_key(caller: Caller, tool: str) -> str:
    """The store key of one grant: at most 147 ASCII characters from ``[A-Za-z0-9_.:|-]``.

    Every py-key-value backend accepts such a key (memcached stops at 250 bytes and at
    spaces or control characters; others escape what they dislike), so no caller's input
    can make the store fail, and with it every other caller's answer. Short, plain parts
    are kept readable; any other part is replaced by its SHA-256.
    """
    return f"{_caller_part(caller)}|{_key_part(tool)}"


def _caller_part(caller: Caller) -> str:
    """The first part of ``caller``'s store keys (whose operations rest together)."""
    prefix = caller.key if caller.kind == "principal" else f"session:{caller.key}"
    return _key_part(prefix or "")


def _rest_key(who: str) -> str:
    """The ``_until`` key of a caller's rest: its store-key prefix ``who`` with an empty
    tool part, which no grant's key has (``_key_part`` never gives an empty part)."""
    return who + "|"


_PLAIN_KEY_PART = re.compile(r"[A-Za-z0-9_.:-]{1,80}")


def _key_part(text: str) -> str:
    if _PLAIN_KEY_PART.fullmatch(text) and not text.startswith("h-"):
        return text
    return "h-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _log_failure(exc: BaseException, what: str) -> None:
    """One error line for a store failure, ``what`` formatted with its short reason."""
    reason = "timed out" if isinstance(exc, TimeoutError) else type(exc).__name__
    logger.error("grant store " + what.format(reason))
