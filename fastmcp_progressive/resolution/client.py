"""Calling ``tools/resolve`` from a ``fastmcp.Client``: the client side of tool resolution.

No MCP SDK has a method for the experimental extension yet, so this module gives hosts
(and our tests) three small pieces that work on both protocol eras and every transport:

- ``tool_resolution()``: the capability to pass in ``Client(extensions=[...])``. The
  server checks it on every 2026-07-28 request and at ``initialize`` on the handshake era.
- ``is_resolvable(tool)``: whether a listed tool is marked resolvable.
- ``resolve_tool(client, name, arguments)``: the four hints for exactly these arguments.
  Errors arrive as ``mcp.shared.exceptions.MCPError``: ``-32601`` (server without the
  method) and ``-32603`` (no trustworthy answer) mean "use the static annotations";
  ``-32602`` means the name or the arguments are wrong; ``-32021`` that the client did
  not advertise the extension.

A resolution is advice for the one call that follows with the same arguments: never
cache it, and expect ``tools/call`` to check everything again (it grants nothing).

Example:
    ```python
    from fastmcp import Client
    from fastmcp_progressive.resolution.client import resolve_tool, tool_resolution

    async with Client(url, extensions=[tool_resolution()]) as client:
        hints = await resolve_tool(client, "manage_notes", {"action": "read", "note_id": "n1"})
        if hints.read_only:
            await client.call_tool("manage_notes", {"action": "read", "note_id": "n1"})
    ```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

import mcp_types as mt
from mcp.client.extension import ClientExtension, NotificationBinding, advertise
from pydantic import BaseModel, ConfigDict, Field

from fastmcp_progressive.disclosure.groups import (
    GROUPING_EXTENSION_ID,
    GROUPS_CHANGED_METHOD,
    GROUPS_LIST_METHOD,
    GROUPS_META_KEY,
)
from fastmcp_progressive.resolution.server import RESOLUTION_EXTENSION_ID, RESOLVE_METHOD


class ResolveToolParams(mt.RequestParams):
    """``tools/resolve`` params: the tool as listed and the complete arguments."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ResolveToolRequest(mt.Request[ResolveToolParams, Literal["tools/resolve"]]):
    """The request; its ``name`` also rides the ``Mcp-Name`` header on 2026-07-28 HTTP."""

    method: Literal["tools/resolve"] = RESOLVE_METHOD  # type: ignore[assignment]
    name_param = "name"


class ResolvedHints(BaseModel):
    """The four behaviour hints that apply to one exact call."""

    model_config = ConfigDict(populate_by_name=True, frozen=True)

    read_only: bool = Field(alias="readOnlyHint")
    destructive: bool = Field(alias="destructiveHint")
    idempotent: bool = Field(alias="idempotentHint")
    open_world: bool = Field(alias="openWorldHint")


class ResolveToolResult(mt.Result):
    """A ``tools/resolve`` result: the tool's name and all four hints, nothing else."""

    result_type: str | None = None
    name: str
    annotations: ResolvedHints


def tool_resolution() -> ClientExtension:
    """The client capability that lets a server answer ``tools/resolve``."""
    return advertise(RESOLUTION_EXTENSION_ID, {})


def is_resolvable(tool: Any) -> bool:
    """Whether a tool from ``list_tools()`` is marked resolvable by the server."""
    meta = getattr(tool, "meta", None)
    mark = meta.get(RESOLUTION_EXTENSION_ID) if isinstance(meta, Mapping) else None
    return isinstance(mark, Mapping) and mark.get("resolvable") is True


async def resolve_tool(client: Any, name: str, arguments: Mapping[str, Any] | None = None, *,
                       timeout: float | None = None) -> ResolvedHints:
    """Ask the server which hints apply when ``name`` is called with exactly ``arguments``.

    ``client`` is a connected ``fastmcp.Client`` (or an ``mcp.ClientSession``) built with
    ``extensions=[tool_resolution()]``. Raises ``MCPError`` as the module docstring says.
    """
    session = getattr(client, "session", client)
    request = ResolveToolRequest(params=ResolveToolParams(name=name,
                                                          arguments=dict(arguments or {})))
    result = await session.send_request(request, ResolveToolResult,
                                        request_read_timeout_seconds=timeout)
    return result.annotations  # type: ignore[no-any-return]


# -- groups (io.modelcontextprotocol/grouping) ----------------------------------------------------
class ListGroupsRequest(mt.Request[mt.PaginatedRequestParams | None, Literal["groups/list"]]):
    """``groups/list`` (paginated like the other lists)."""

    method: Literal["groups/list"] = GROUPS_LIST_METHOD  # type: ignore[assignment]
    params: mt.PaginatedRequestParams | None = None


class ListGroupsResult(mt.PaginatedResult):
    """One page of groups: the draft's ``Group`` objects as plain dicts."""

    groups: list[dict[str, Any]]
    result_type: str | None = None


class _Grouping(ClientExtension):
    """The grouping extension on the client: its capability, and the server's
    ``notifications/groups/list_changed`` delivered to a callback."""

    identifier = GROUPING_EXTENSION_ID

    def __init__(self, on_groups_changed: Callable[[], Awaitable[None]] | None) -> None:
        self._on_changed = on_groups_changed

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        callback = self._on_changed
        if callback is None:
            return ()

        async def changed(_: mt.NotificationParams) -> None:
            await callback()

        return (NotificationBinding(method=GROUPS_CHANGED_METHOD,
                                    params_type=mt.NotificationParams, handler=changed),)


def grouping(on_groups_changed: Callable[[], Awaitable[None]] | None = None
             ) -> ClientExtension:
    """The client capability that makes a server show groups (``_meta`` on listed tools,
    ``groups/list``); ``on_groups_changed`` is awaited on each
    ``notifications/groups/list_changed`` (call ``list_groups`` again then)."""
    return _Grouping(on_groups_changed)


def tool_groups(tool: Any) -> list[str]:
    """The groups a tool from ``list_tools()`` belongs to (``[]`` when none are shown)."""
    meta = getattr(tool, "meta", None)
    found = meta.get(GROUPS_META_KEY) if isinstance(meta, Mapping) else None
    return [g for g in found if isinstance(g, str)] if isinstance(found, list) else []


async def list_groups(client: Any, *, timeout: float | None = None) -> list[dict[str, Any]]:
    """Every group the server shows this client, all pages."""
    session = getattr(client, "session", client)
    groups: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params = mt.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        page = await session.send_request(ListGroupsRequest(params=params), ListGroupsResult,
                                          request_read_timeout_seconds=timeout)
        groups.extend(page.groups)
        cursor = page.next_cursor
        if not cursor:
            return groups
