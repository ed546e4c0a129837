"""Who is asking: the one place that reads FastMCP's request internals.

Grants must follow "the caller", and what a caller is depends on the protocol era:
a handshake-era (legacy) connection has a real MCP session; a 2026-07-28 (modern)
request has no session, so the caller is the authenticated principal, or on stdio and
in-memory transports the client's stream; modern HTTP without auth (and legacy HTTP with
``stateless_http=True``) has no identity at all. Every private FastMCP attribute this
package relies on is read in this module, each behind a small function with its own test,
so a FastMCP release that moves one breaks one test here and nothing silently.

Example:
    ```python
    caller = identify(context.fastmcp_context)
    if caller.kind == "session":
        ...  # caller.key is the MCP session id, caller.anchor the connection
    ```
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from fastmcp.server.context import Context

CallerKind = Literal["session", "principal", "stream", "anonymous", "internal"]
Era = Literal["legacy", "modern"]


@dataclass(frozen=True)
class Caller:
    """The identity grants are kept under, plus what a mode decision may look at.

    ``kind`` says how the identity was found; ``key`` is unique within the kind (None for
    ``anonymous`` and ``internal``); ``anchor`` is the live object whose lifetime bounds
    the identity (the legacy connection or the modern stream), when there is one.
    """

    kind: CallerKind
    era: Era
    key: str | None = None
    anchor: Any = field(default=None, compare=False, repr=False)
    transport: Literal["http", "duplex"] = "duplex"
    client_name: str | None = None
    client_version: str | None = None
    principal: str | None = None
    extensions: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)


INTERNAL = Caller(kind="internal", era="legacy")
"""A call made with no client request in flight (e.g. ``await mcp.call_tool(...)``)."""


_MEMO_ATTRIBUTE = "_fastmcp_progressive_caller"


def identify(ctx: Context | None) -> Caller:
    """Describe the client behind the request ``ctx`` belongs to (computed once per context)."""
    if ctx is None:
        return INTERNAL
    known: Caller | None = getattr(ctx, _MEMO_ATTRIBUTE, None)
    if known is not None:
        return known
    caller = _identify(ctx)
    setattr(ctx, _MEMO_ATTRIBUTE, caller)
    return caller


def _identify(ctx: Context) -> Caller:
    rc = ctx.request_context
    if rc is None:
        return INTERNAL
    modern = ctx._is_modern_protocol()
    http = rc.request is not None
    session = rc.session
    connection = getattr(session, "_connection", None)
    principal = _principal()
    base: dict[str, Any] = {
        "era": "modern" if modern else "legacy",
        "transport": "http" if http else "duplex",
        "principal": principal,
        "headers": _headers(rc.request),
        "extensions": _client_extensions(session),
        **_client_info(session),
    }
    if not modern:
        if http and getattr(connection, "session_id", None) is None and ctx.transport != "sse":
            # legacy HTTP with stateless_http=True: a new "session" per request. An SSE
            # connection has no Mcp-Session-Id either, but it is one live session.
            return Caller(kind="anonymous", **base)
        return Caller(kind="session", key=ctx.session_id, anchor=connection, **base)
    if principal is not None:
        digest = hashlib.sha256(principal.encode("utf-8", "surrogatepass")).hexdigest()
        return Caller(kind="principal", key=f"user:{digest}", **base)
    if http or connection is None:
        return Caller(kind="anonymous", **base)
    # stdio / in-memory: one outbound object per client stream, alive as long as it is
    outbound = connection.outbound
    return Caller(kind="stream", key=f"stream:{id(outbound):x}", anchor=outbound, **base)


def is_nested_tool_call() -> bool:
    """True while a tool body (a search proxy, CodeMode) calls another tool of the server."""
    from fastmcp.server.dependencies import _client_tool_call, _is_client_tool_call

    return _client_tool_call.get() is not None and not _is_client_tool_call()


def serving_tool_call() -> bool:
    """True inside a client's ``tools/call``, i.e. after FastMCP began dispatching it.

    A ``tools/list`` seen then comes from inside a tool (a search transform's catalog), not
    from the client; the hidden listing the SDK runs before a modern HTTP call is not inside.
    """
    from fastmcp.server.dependencies import _client_tool_call

    return _client_tool_call.get() is not None


def on_connection_close(anchor: Any, callback: Callable[[], None], *, marker: str) -> bool:
    """Run ``callback()`` once when the legacy connection ``anchor`` closes.

    ``marker`` names the subscriber: each marker registers at most one callback per
    connection, and different markers do not shadow each other. False when ``anchor`` is
    not a connection with an exit stack (nothing will ever be called).
    """
    stack = getattr(anchor, "exit_stack", None)
    state = getattr(anchor, "state", None)
    if stack is None or not isinstance(state, dict):
        return False
    if not state.get(marker):
        state[marker] = True
        stack.callback(callback)
    return True


def close_with_connection(anchor: Any, closer: Callable[[], Awaitable[Any]]) -> bool:
    """Await ``closer()`` when the legacy connection ``anchor`` closes (its private async
    exit stack); False when ``anchor`` has none (nothing will ever be awaited)."""
    stack = getattr(anchor, "exit_stack", None)
    push = getattr(stack, "push_async_callback", None)
    if push is None:
        return False
    push(closer)
    return True


def connection_state(anchor: Any) -> dict[str, Any] | None:
    """The per-connection scratch ``state`` dict of a legacy connection ``anchor``.

    It lives exactly as long as the connection, so what is kept there is released on
    close with nothing to clean up. None when ``anchor`` has no such dict.
    """
    state = getattr(anchor, "state", None)
    return state if isinstance(state, dict) else None


def server_running(server: Any) -> bool:
    """Whether a FastMCP server is inside its lifespan (private ``_lifespan_result_set``).

    The lifespan is reference-counted over connections, so this turns False only when the
    last one (in-memory client, HTTP app) has left. If a FastMCP release drops the
    attribute the answer stays True: a watcher then runs until closed, never stops early.
    """
    return bool(getattr(server, "_lifespan_result_set", True))


def wire_params(ctx: Context | None) -> Mapping[str, Any] | None:
    """The params of the JSON-RPC request the client sent (private ``_srctx.params``).

    Under a mount FastMCP hands the child its own names; the wire still has the parent's.
    """
    rc = ctx.request_context if ctx is not None else None
    params = getattr(getattr(rc, "_srctx", None), "params", None)
    return params if isinstance(params, Mapping) else None


def cached_methods(middleware: Any) -> frozenset[str]:
    """Which of list_tools / read_resource / call_tool a ``ResponseCachingMiddleware``
    caches (its private ``_<method>_settings``; all three when they cannot be read)."""
    methods = ("list_tools", "read_resource", "call_tool")
    return frozenset(
        m for m in methods
        if (getattr(middleware, f"_{m}_settings", None) or {}).get("enabled") is not False
    )


def server_info_stamp(server: Any) -> dict[str, Any] | None:
    """The ``serverInfo`` a 2026-07-28 result carries in ``_meta`` (private ``_mcp_server``).

    The SDK stamps it on results it serializes; a middleware that answers a method itself
    (``tools/resolve``) must add it. None when a FastMCP release moves it: the answer then
    goes out without the (display-only) stamp rather than failing.
    """
    stamp = getattr(getattr(server, "_mcp_server", None), "server_info_stamp", None)
    return stamp if isinstance(stamp, dict) else None


def state_storage(ctx: Context) -> Any:
    """The server's session-state key-value store (``FastMCP(session_state_store=...)``)."""
    ctx.fastmcp._state_store  # noqa: B018  (creates the default MemoryStore on first use)
    return ctx.fastmcp._state_storage


_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def _principal() -> str | None:
    from fastmcp.server.sessions import current_principal

    return current_principal()


def _headers(request: Any) -> Mapping[str, str]:
    if request is None:
        return {}
    return {k.lower(): v for k, v in request.headers.items() if k.lower() not in _SECRET_HEADERS}


def _client_info(session: Any) -> dict[str, str | None]:
    params = getattr(session, "client_params", None)
    info = getattr(params, "client_info", None)
    return {
        "client_name": getattr(info, "name", None),
        "client_version": getattr(info, "version", None),
    }


def _client_extensions(session: Any) -> Mapping[str, Any]:
    caps = getattr(session, "client_capabilities", None)
    extensions = getattr(caps, "extensions", None)
    return dict(extensions) if isinstance(extensions, Mapping) else {}


# -- catalog lookups (lookup.py) -----------------------------------------------------------
def local_tool_providers(server: Any) -> tuple[list[Any], bool]:
    """The plain ``LocalProvider`` objects behind ``server`` (mounted servers included), and
    whether every tool provider in the tree is one of them or a mount of a server that is.

    Reads the public ``providers`` list and ``FastMCPProvider.server``; a provider of any
    other kind (proxy, OpenAPI, file system, a ``LocalProvider`` subclass) makes the answer
    "not only local", and its lookups are left entirely to FastMCP.
    """
    from fastmcp.server.providers.fastmcp_provider import FastMCPProvider
    from fastmcp.server.providers.local_provider import LocalProvider

    found: list[Any] = []
    only_local = True
    pending, seen = [server], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for provider in getattr(current, "providers", ()):
            if type(provider) is LocalProvider:
                found.append(provider)
            elif isinstance(provider, FastMCPProvider):
                pending.append(provider.server)
            else:
                only_local = False
    return found, only_local


class _TrackedComponents(dict):  # type: ignore[type-arg]
    """A ``LocalProvider``'s component dict that counts its own changes."""

    version = 0

    def _changed(self) -> None:
        self.version += 1

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self._changed()

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        self._changed()

    def pop(self, *args: Any) -> Any:
        self._changed()
        return super().pop(*args)

    def popitem(self) -> Any:
        self._changed()
        return super().popitem()

    def clear(self) -> None:
        super().clear()
        self._changed()

    def update(self, *args: Any, **kwargs: Any) -> None:
        super().update(*args, **kwargs)
        self._changed()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._changed()
        return super().setdefault(key, default)

    def __ior__(self, other: Any) -> Any:  # type: ignore[misc]
        self._changed()
        return super().__ior__(other)


def tool_components(provider: Any) -> tuple[tuple[int, int], list[Any]]:
    """A ``LocalProvider``'s components (private ``_components``) and a token that changes
    whenever they do.

    The dict is swapped once for a subclass that counts writes (the same keys and values;
    FastMCP's own reads and writes go through unchanged), so an index built from it can be
    kept until the token moves: any add, replace or removal moves it, and so does a new
    dict assigned in its place.
    """
    components = provider._components
    if type(components) is not _TrackedComponents:
        components = _TrackedComponents(components)
        provider._components = components
    return (id(components), components.version), list(components.values())


def components_token(provider: Any) -> tuple[int, int] | None:
    """The token ``tool_components`` last handed out for ``provider``, if still current."""
    components = provider._components
    if type(components) is not _TrackedComponents:
        return None
    return (id(components), components.version)


def replace_tool_getter(provider: Any, make: Callable[[Any], Any]) -> None:
    """Give one ``LocalProvider`` instance the ``_get_tool`` that ``make(original)`` returns.

    Installed once per provider (a marker attribute remembers it); the replacement must
    answer exactly as the original (``Provider.get_tool`` calls ``self._get_tool``).
    """
    if getattr(provider, "_fastmcp_progressive_lookup", False):
        return
    provider._get_tool = make(provider._get_tool)
    provider._fastmcp_progressive_lookup = True


def search_tool_names(transform: Any) -> tuple[str, str]:
    """The (search, call) tool names of a FastMCP search transform (private attributes)."""
    return (transform._search_tool_name, transform._call_tool_name)


@contextmanager
def every_hook() -> Iterator[None]:
    """Run middleware with all of its hooks inside the block, whatever phase the request is in.

    FastMCP's ``Middleware.__call__`` picks which hooks run from a private context variable
    (``_dispatch_phase``): a request FastMCP does not route to a component (a custom method
    answered in ``on_request``) runs only ``on_message``/``on_request``, so a typed
    ``on_list_tools`` filter would be skipped when a lookup asks the middleware.
    """
    from fastmcp.server.middleware.middleware import _dispatch_phase

    token = _dispatch_phase.set("all")
    try:
        yield
    finally:
        _dispatch_phase.reset(token)


def stdio_session_ended(transport: Any) -> bool:
    """Whether a kept-alive FastMCP stdio transport's process has exited by itself.

    Reads ``_connect_task`` (the task owning the process) and ``_is_session_dead()``, what
    FastMCP itself checks before silently starting a new process; the proxy reports the
    death instead. False when the transport never started or was disconnected.
    """
    task = getattr(transport, "_connect_task", None)
    if task is None:
        return False
    return bool(task.done() or transport._is_session_dead())
