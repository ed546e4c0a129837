"""Who is asking: the identity grants are kept under, per protocol era and transport.

Grants must follow "the caller", and what a caller is depends on the protocol era:
a handshake-era (legacy) connection has a real MCP session; a 2026-07-28 (modern)
request has no session, and the protocol forbids relying on earlier requests over the same
connection (its tool list "MUST NOT vary per-connection or as a side effect of other
requests on the connection"; it MAY vary by the authorization presented). So a modern
caller is what the request itself presents: its authenticated principal, or nobody
(``anonymous``: its calls are judged by themselves, ``ClientSettings.anonymous``), on
every transport, stdio and in-memory included. Legacy HTTP with ``stateless_http=True``
has no identity either. The era comes from FastMCP's public request context; the one
private fact this needs (the connection behind a session) is read in
``fastmcp_internals.py``, like every other one.

Example:
    ```python
    caller = identify(context.fastmcp_context)
    if caller.kind == "session":
        ...  # caller.key is the MCP session id, caller.anchor the connection
    ```
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fastmcp.server.context import Context
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from fastmcp_progressive.fastmcp_internals import keep_on, kept_on, request_connection
from fastmcp_progressive.options import SECRET_HEADERS

CallerKind = Literal["session", "principal", "anonymous", "internal"]
Era = Literal["legacy", "modern"]


@dataclass(frozen=True)
class Caller:
    """The identity grants are kept under, plus what a mode decision may look at.

    ``kind`` says how the identity was found; ``key`` is unique within the kind (None for
    ``anonymous`` and ``internal``); ``anchor`` is the live object whose lifetime bounds
    the identity (the legacy connection), when there is one.
    """

    kind: CallerKind
    era: Era
    key: str | None = None
    anchor: Any = field(default=None, compare=False, repr=False)
    transport: Literal["http", "duplex"] = "duplex"
    channel: str | None = None
    """FastMCP's name for the transport (``ctx.transport``): ``"stdio"``,
    ``"streamable-http"``, ``"sse"``, or None in memory."""
    client_name: str | None = None
    client_version: str | None = None
    principal: str | None = None
    extensions: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    capabilities: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    """The client capabilities it advertised (``"elicitation"``, ``"sampling"``, ...)."""
    headers: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)


INTERNAL = Caller(kind="internal", era="legacy")
"""A call made with no client request in flight (e.g. ``await mcp.call_tool(...)``)."""


_MEMO_ATTRIBUTE = "_fastmcp_progressive_caller"


def identify(ctx: Context | None) -> Caller:
    """Describe the client behind the request ``ctx`` belongs to (computed once per context)."""
    if ctx is None:
        return INTERNAL
    known: Caller | None = kept_on(ctx, _MEMO_ATTRIBUTE)
    if known is not None:
        return known
    caller = _identify(ctx)
    keep_on(ctx, _MEMO_ATTRIBUTE, caller)
    return caller


def is_modern(protocol_version: str | None) -> bool:
    """Whether a negotiated protocol version is of the 2026-07-28 era (sessionless).

    The public form of FastMCP's own check (``Context._is_modern_protocol``): the
    request context's ``protocol_version`` against ``mcp_types``' list of modern versions.
    """
    return protocol_version in MODERN_PROTOCOL_VERSIONS


def _identify(ctx: Context) -> Caller:
    rc = ctx.request_context
    if rc is None:
        return INTERNAL
    modern = is_modern(rc.protocol_version)
    http = rc.request is not None
    session = rc.session
    connection = request_connection(session)
    principal = _principal()
    base: dict[str, Any] = {
        "era": "modern" if modern else "legacy",
        "transport": "http" if http else "duplex",
        "channel": ctx.transport,
        "principal": principal,
        "headers": _headers(rc.request),
        "extensions": _client_extensions(session),
        "capabilities": _client_capabilities(session),
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
    # no authorization presented: nothing of the connection (its stream, its earlier
    # requests) may stand in for one on 2026-07-28, on stdio and in memory as on HTTP
    return Caller(kind="anonymous", **base)




def _principal() -> str | None:
    from fastmcp.server.sessions import current_principal

    return current_principal()


def _headers(request: Any) -> Mapping[str, str]:
    if request is None:
        return {}
    return {k.lower(): v for k, v in request.headers.items() if k.lower() not in SECRET_HEADERS}


def _client_info(session: Any) -> dict[str, str | None]:
    params = getattr(session, "client_params", None)
    info = getattr(params, "client_info", None)
    return {
        "client_name": getattr(info, "name", None),
        "client_version": getattr(info, "version", None),
    }


_CAPABILITIES = ("sampling", "elicitation", "roots", "tasks", "experimental")


def _client_capabilities(session: Any) -> frozenset[str]:
    caps = getattr(session, "client_capabilities", None)
    return frozenset(name for name in _CAPABILITIES if getattr(caps, name, None) is not None)


def _client_extensions(session: Any) -> Mapping[str, Any]:
    caps = getattr(session, "client_capabilities", None)
    extensions = getattr(caps, "extensions", None)
    return dict(extensions) if isinstance(extensions, Mapping) else {}
