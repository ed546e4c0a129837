"""Every FastMCP and MCP SDK internal this package touches, each behind one small function.

FastMCP 4 has no public API for a few facts the middleware needs: the connection behind a
handshake-era session, whether a ``tools/call`` is nested in another, the wire request a
mounted child was reached by, a ``LocalProvider``'s component dict, and a handful more.
This module is the only place that reads a private attribute, imports a private name or
relies on a FastMCP object's undocumented shape. Nothing here replaces, wraps or assigns
FastMCP or MCP SDK code or state: we are guests in FastMCP's process (what we keep per
FastMCP object lives in weak maps of our own). Each function's docstring says what public
API it stands in for (or that there is none yet) and the FastMCP releases it was verified
on; ``tests/test_fastmcp_contract.py`` holds one test per function, named after it, that
fails naming the FastMCP attribute that moved, a test that lists the private names read
here (``READ_PRIVATE_NAMES``, at most 12: ``_connection``, ``_client_tool_call``,
``_is_client_tool_call``, ``_srctx``, ``_lifespan_result_set``, ``_mcp_server``,
``_state_storage``, ``_components``, ``_server``, ``_original_name``, ``_prefix``,
``_inner``), and a test that fails when a private name is read anywhere else in the package.

Where a public API exists it is used instead, outside this module: the era of a request
(``request_context.protocol_version`` against ``mcp_types.version``'s list, in
``caller.py``) and the server's transforms (``FastMCP.transforms``, in ``catalog.py``).

Verified on fastmcp 4.1.2 (mcp 2.3.0) and fastmcp 4.2.3 (``VERIFIED_ON``).

Example:
    ```python
    connection = request_connection(ctx.request_context.session)
    state = connection_state(connection)  # lives exactly as long as the connection
    ```
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, get_type_hints

from fastmcp_progressive.caches import per_server

VERIFIED_ON = ("4.1.2", "4.2.3")
"""The FastMCP releases every function here was checked against (contract tests)."""


# -- requests ------------------------------------------------------------------------------
def request_connection(session: Any) -> Any | None:
    """The SDK ``Connection`` behind a request's ``ServerSession`` (private ``_connection``).

    Stands in for: nothing public. The SDK's ``Context.connection`` is not what FastMCP
    hands to middleware, and FastMCP exposes no connection. None when a release moves it
    (every caller then counts as one without a connection: anonymous, never widened).
    Verified on FastMCP 4.1.2 and 4.2.3.
    """
    return getattr(session, "_connection", None)


def is_nested_tool_call() -> bool:
    """True while a tool body (a search proxy, CodeMode) calls another tool of the server.

    Stands in for: nothing public. Reads FastMCP's private context variable
    ``fastmcp.server.dependencies._client_tool_call`` and ``_is_client_tool_call()``.
    Verified on FastMCP 4.1.2 and 4.2.3.
    """
    from fastmcp.server.dependencies import _client_tool_call, _is_client_tool_call

    return _client_tool_call.get() is not None and not _is_client_tool_call()


def serving_tool_call() -> bool:
    """True inside a client's ``tools/call``, i.e. after FastMCP began dispatching it.

    A ``tools/list`` seen then comes from inside a tool (a search transform's catalog), not
    from the client; the hidden listing the SDK runs before a modern HTTP call is not inside.
    Stands in for: nothing public (private ``dependencies._client_tool_call``).
    Verified on FastMCP 4.1.2 and 4.2.3.
    """
    from fastmcp.server.dependencies import _client_tool_call

    return _client_tool_call.get() is not None


def wire_param(ctx: Any | None, key: str) -> str | None:
    """The text param ``key`` of the JSON-RPC request the client sent (private ``_srctx.params``
    of FastMCP's request context, its documented "escape hatch" to the SDK context); None
    when there is none.

    Under a mount FastMCP hands the child its own names; the wire still has the parent's.
    A 2026-07-28 HTTP call's hidden listing (FastMCP < 4.2) names no tool of its own.
    Stands in for: nothing public (``MiddlewareContext.message`` holds the child's names).
    Verified on FastMCP 4.1.2 and 4.2.3.
    """
    rc = ctx.request_context if ctx is not None else None
    params = getattr(getattr(rc, "_srctx", None), "params", None)
    value = params.get(key) if isinstance(params, Mapping) else None
    return value if isinstance(value, str) else None


def request_servers(ctx: Any | None) -> list[Any]:
    """The FastMCP servers a request passes through, ``ctx.fastmcp`` first, then each
    server that mounted it and handed the request on, up to the one the client talks to.

    FastMCP enters a ``Context`` per server a request reaches (the parent's, then a mounted
    child's in ``call_tool``/``list_tools``); each ``Context.__aenter__`` keeps the token of
    its ``_current_context.set``, whose public ``Token.old_value`` is the enclosing context.
    Stands in for: nothing public (a child's middleware is told only ``ctx.fastmcp``, the
    child). Reads the private ``Context._tokens``. An empty or moved list answers
    ``[ctx.fastmcp]``: the request is then taken as the child's own. Verified on FastMCP
    4.1.2 and 4.2.3.
    """
    servers: list[Any] = []
    current, hops = ctx, 0
    while current is not None and hops < 64:
        server = getattr(current, "fastmcp", None)
        if server is not None and (not servers or servers[-1] is not server):
            servers.append(server)
        tokens = getattr(current, "_tokens", None)
        enclosing = tokens[0].old_value if isinstance(tokens, list) and tokens else None
        current = enclosing if enclosing is not None and hasattr(enclosing, "fastmcp") else None
        hops += 1
    return servers


# -- handshake-era connections ----------------------------------------------------------------
def on_connection_close(anchor: Any, callback: Callable[[], None], *, marker: str) -> bool:
    """Run ``callback()`` once when the legacy connection ``anchor`` closes.

    ``marker`` names the subscriber: each marker registers at most one callback per
    connection, and different markers do not shadow each other. False when ``anchor`` is
    not a connection with an exit stack (nothing will ever be called). Uses the SDK
    connection's ``exit_stack`` and ``state``, as FastMCP's own operations do.
    Stands in for: nothing public. Verified on FastMCP 4.1.2 and 4.2.3.
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
    """Await ``closer()`` when the legacy connection ``anchor`` closes (its async exit
    stack); False when ``anchor`` has none (nothing will ever be awaited).

    Stands in for: nothing public. Verified on FastMCP 4.1.2 and 4.2.3.
    """
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
    Stands in for: nothing public (``ctx.set_state`` is per request on 2026-07-28).
    Verified on FastMCP 4.1.2 and 4.2.3.
    """
    state = getattr(anchor, "state", None)
    return state if isinstance(state, dict) else None


# -- the server ------------------------------------------------------------------------------
def server_running(server: Any) -> bool:
    """Whether a FastMCP server is inside its lifespan (private ``_lifespan_result_set``).

    The lifespan is reference-counted over connections, so this turns False only when the
    last one (in-memory client, HTTP app) has left. If a FastMCP release drops the
    attribute the answer stays True: a watcher then runs until closed, never stops early.
    Stands in for: nothing public. Verified on FastMCP 4.1.2 and 4.2.3.
    """
    return bool(getattr(server, "_lifespan_result_set", True))


def server_info_stamp(server: Any) -> dict[str, Any] | None:
    """The ``serverInfo`` a 2026-07-28 result carries in ``_meta`` (the low-level server's
    public ``server_info_stamp``, reached through FastMCP's private ``_mcp_server``).

    The SDK stamps it on results it serializes; a middleware that answers a method itself
    (``tools/resolve``) must add it. None when a FastMCP release moves it: the answer then
    goes out without the (display-only) stamp rather than failing.
    Stands in for: nothing public. Verified on FastMCP 4.1.2 and 4.2.3.
    """
    stamp = getattr(getattr(server, "_mcp_server", None), "server_info_stamp", None)
    return stamp if isinstance(stamp, dict) else None


def serve_method(server: Any, method: str, params_type: type[Any],
                 handler: Callable[[Any, Any], Awaitable[Any]]) -> None:
    """Answer ``method``, a request FastMCP itself does not serve (``resources/subscribe``,
    ``resources/unsubscribe``), on the server's low-level MCP server: the SDK's public
    ``add_request_handler``, reached through FastMCP's private ``_mcp_server``.

    A new method only, never one FastMCP already answers (that would replace its handler:
    ``ValueError``). The SDK derives the matching capability from the handler being there
    (``resources.subscribe``), so it is advertised exactly when the method is served.
    ``handler(request_context, params)`` gets the SDK's ``ServerRequestContext``.
    Stands in for: nothing public. Verified on FastMCP 4.1.2 and 4.2.3.
    """
    low_level: Any = getattr(server, "_mcp_server", None)
    add = getattr(low_level, "add_request_handler", None)
    if add is None or not hasattr(low_level, "get_request_handler"):
        raise RuntimeError(f"this FastMCP release serves no extra request methods ({method})")
    if low_level.get_request_handler(method) is not None:
        raise ValueError(f"{method} is already served; not replacing FastMCP's handler")
    add(method, params_type, handler)


async def whole_catalog(server: Any) -> list[Any]:
    """Every tool ``server`` offers anyone: its providers' tools through its own transforms,
    those it disabled left out, before any session's visibility, component ``auth`` or
    middleware (what no single caller's listing shows: the net-cost notice judges this).

    ``FastMCP.list_tools`` applies the current request's session transforms and auth; the
    catalog itself is what it starts from, its base class ``Provider.list_tools`` (called
    on the server, not replaced), filtered by the public ``is_enabled``.
    Stands in for: nothing public. Verified on FastMCP 4.2.3.
    """
    from fastmcp.server.providers.base import Provider
    from fastmcp.server.transforms.visibility import is_enabled

    return [tool for tool in await Provider.list_tools(server) if is_enabled(tool)]


def state_storage(ctx: Any) -> Any:
    """The server's session-state key-value store (``FastMCP(session_state_store=...)``,
    private ``_state_storage``); when none was given, a ``MemoryStore`` of ours for that
    server (FastMCP creates its own default only on first use of ``ctx`` state, and we do
    not create it for it), kept per server and dropped with it.

    Stands in for: nothing public (``ctx.get_state`` wraps values and scopes keys per
    session). Verified on FastMCP 4.1.2 and 4.2.3.
    """
    server = ctx.fastmcp
    given = getattr(server, "_state_storage", None)
    if given is not None:
        return given
    slots = per_server(server)
    own = slots.get(_OWN_STORE)
    if own is None:
        from key_value.aio.stores.memory import MemoryStore

        own = slots[_OWN_STORE] = MemoryStore()
    return own


_OWN_STORE = "fastmcp_internals.state_storage"
"""The ``per_server`` slot of the store grants are kept in, for a server given none."""


# -- a LocalProvider's components (components.py) -------------------------------------------
def local_component(provider: Any, key: str) -> Any | None:
    """The component a ``LocalProvider`` holds under ``key`` (its private ``_components``
    dict), or None, also when a FastMCP release moves it
    (the caller then leaves things as they are). ``components.py`` removes one of ours only
    while it is still the one registered: a tool the user added later under the same name
    is never taken out. ``gate.py:registered`` reads the tool the server's own provider
    holds under a name, for a call judged by its arguments (a miss: FastMCP's lookup).
    Stands in for: nothing public (the provider's lookups are async, apply transforms and
    scan every component; FastMCP has no catalog-changed signal).
    Verified on FastMCP 4.1.2 and 4.2.3.
    """
    components = getattr(provider, "_components", None)
    return components.get(key) if isinstance(components, dict) else None


# -- tools -----------------------------------------------------------------------------------
def default_title(name: str) -> str:
    """The title FastMCP derives for a tool without one, from its name.

    Mirrors the private ``fastmcp.tools.base._default_title`` (not imported: a private
    function may go without notice; the contract test compares the two by behaviour).
    Stands in for: nothing public. Verified on FastMCP 4.1.2 and 4.2.3.
    """
    return name.replace("_", " ").replace("-", " ").title()


def argument_validator(tool: Any) -> Callable[[Any], None] | None:
    """FastMCP's own argument validation of ``tool``, without running the tool: a function
    that raises ``pydantic.ValidationError`` exactly when ``FunctionTool.run`` would refuse
    the arguments (same pydantic-core validation, same ``strict_input_validation``).

    None for a tool FastMCP does not validate itself in this process (proxied, mounted,
    transformed or custom ``Tool`` subclasses). Mirrors how ``FunctionTool.run`` validates,
    from public API only: a ``TypeAdapter`` of a no-op with the signature of the public
    ``dependencies.without_injected_parameters(tool.fn)`` (so nothing of the tool, body or
    dependencies, runs), strict when the running server's public
    ``FastMCP.strict_input_validation`` says so, JSON data then validated in JSON mode as
    FastMCP does (so an enum or a datetime sent as JSON still passes). Relies on that
    undocumented mirroring; reads no private name. Verified on FastMCP 4.1.2 and 4.2.3.
    """
    from fastmcp.server.dependencies import get_context, without_injected_parameters
    from fastmcp.tools.function_tool import FunctionTool
    from pydantic import TypeAdapter
    from pydantic_core import to_json

    if not isinstance(tool, FunctionTool) or type(tool).run is not FunctionTool.run:
        return None
    exec_fn = without_injected_parameters(tool.fn, run_in_thread=tool.run_in_thread)

    def mirror(*args: Any, **kwargs: Any) -> None:
        return None

    signature = inspect.signature(exec_fn)
    try:
        hints = get_type_hints(exec_fn, include_extras=True)
    except Exception:  # unresolvable names: the signature's own annotations, as FastMCP
        hints = {}
    annotations = {
        name: hints.get(name, param.annotation) for name, param in signature.parameters.items()
        if name in hints or param.annotation is not inspect.Parameter.empty}
    mirror.__signature__ = signature  # type: ignore[attr-defined]
    mirror.__annotations__ = annotations
    mirror.__module__ = getattr(exec_fn, "__module__", mirror.__module__)
    mirror.__name__ = mirror.__qualname__ = getattr(exec_fn, "__name__", "tool")
    adapter: TypeAdapter[Any] = TypeAdapter(mirror)  # type: ignore[arg-type]

    def validate(arguments: Any) -> None:
        try:
            strict = bool(get_context().fastmcp.strict_input_validation)
        except RuntimeError:  # outside a request: lax, as FastMCP is there
            strict = False
        if strict and _is_json_data(arguments):
            adapter.validate_json(to_json(arguments), strict=True)
        else:
            adapter.validate_python(arguments, strict=True if strict else None)

    return validate


def _is_json_data(value: Any) -> bool:
    """Whether ``value`` is built only from what a JSON parser produces (FastMCP validates
    such arguments in JSON mode when strict)."""
    if value is None or isinstance(value, str | int | float):
        return True
    if isinstance(value, list):
        return all(_is_json_data(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_data(v) for k, v in value.items())
    return False


def delegate_of(tool: Any) -> tuple[Any, str] | None:
    """``(child server, the child's own name)`` when ``tool`` is a mount's delegating copy
    (private ``FastMCPProviderTool._server`` and ``_original_name``), else None.

    Stands in for: nothing public. Verified on FastMCP 4.1.2 and 4.2.3.
    """
    from fastmcp.server.providers.fastmcp_provider import FastMCPProviderTool

    if not isinstance(tool, FastMCPProviderTool):
        return None
    server, name = getattr(tool, "_server", None), getattr(tool, "_original_name", None)
    return (server, name) if server is not None and isinstance(name, str) else None


# -- the client side (proxy/front.py, upstream.py, backend_sessions.py) ---------------------------
CONNECT_FAILED = "Client failed to connect: "
"""How FastMCP's client words a failed connection (``fastmcp.client.client``), before the
reason. Stands in for: nothing public (the error is a plain ``RuntimeError``)."""


def connect_failure(error: BaseException) -> str | None:
    """Why FastMCP's client could not connect, when ``error`` is that failure.

    Matches FastMCP's message text (``CONNECT_FAILED``). Verified on FastMCP 4.1.2 and 4.2.3.
    """
    text = str(error)
    return text.rsplit(CONNECT_FAILED, 1)[-1] if CONNECT_FAILED in text else None


# -- mount namespaces and list pages (groups.py) --------------------------------------------------
def mounted_namespaces(server: Any, *, with_plain: bool = False
                       ) -> list[tuple[str, Any]]:
    """``(namespace, mounted server or None)`` for each provider of ``server`` added with a
    namespace (``mount(child, namespace="kid")``, ``add_provider(p, namespace=...)``).

    Each such provider is one group (``groups.py``); the mounted server's instructions
    describe it. Stands in for: nothing public. Reads the public ``providers`` and
    ``Provider.transforms``, the private ``Namespace._prefix`` and the private
    ``_WrappedProvider._inner`` (the wrapper ``add_provider`` puts around a namespaced
    provider), down to a ``FastMCPProvider``'s public ``server``. Verified on FastMCP
    4.1.2 and 4.2.3.
    """
    from fastmcp.server.providers.fastmcp_provider import FastMCPProvider
    from fastmcp.server.transforms.namespace import Namespace

    found: list[tuple[str, Any]] = []
    for provider in getattr(server, "providers", ()):
        prefix = None
        for transform in getattr(provider, "transforms", ()):
            if isinstance(transform, Namespace):
                prefix = transform._prefix
        if not with_plain and (not isinstance(prefix, str) or not prefix):
            continue
        inner, depth = provider, 0
        while not isinstance(inner, FastMCPProvider) and depth < 8:
            inner, depth = getattr(inner, "_inner", None), depth + 1
            if inner is None:
                break
        found.append((prefix if isinstance(prefix, str) else "",
                      inner.server if isinstance(inner, FastMCPProvider) else None))
    return found
