"""The package's own MCP components, registered with FastMCP so FastMCP routes them itself.

A resource answered only from middleware works for a client talking straight to the
server, and nowhere else: a FastMCP proxy forwards a ``resources/read`` only for a URI its
backend lists (a fixed resource or a template), ``AuthMiddleware`` refuses a read or a
call it cannot look up, and a parent server that mounts ours routes ``kid_describe_tools``
only to a tool the child really has. So the descriptions resource (fixed URI and the
template ``resource:///tool_descriptions{?tools}``), the bridge tool and the guidance
prompt are real components, served by one ``Provider`` that the middleware adds to the
server on the first request it sees (``add_middleware`` has no hook of its own). A real
tool or prompt of the same name registered by the user still wins: providers come after
the server's own components.

The middleware keeps answering these reads and calls itself, before any inner middleware
(a response cache placed inside it would otherwise replay one caller's answer, and its
grant, to another). The components' own functions answer the same way for the paths that
skip middleware (``mcp.call_tool(..., run_middleware=False)``).

Example:
    ```python
    components = DisclosureComponents(owner=middleware)
    register(server, components)  # idempotent, once per server
    ```
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from fastmcp import FastMCP
from fastmcp.prompts.base import Prompt
from fastmcp.resources.base import Resource
from fastmcp.resources.function_resource import FunctionResource
from fastmcp.resources.template import ResourceTemplate
from fastmcp.server.context import Context
from fastmcp.server.dependencies import get_context
from fastmcp.server.providers.base import Provider
from fastmcp.tools.base import Tool, ToolResult
from fastmcp.utilities.versions import VersionSpec

from . import payloads
from .bridge import bridge_tool

TEMPLATE_URI = payloads.DESCRIPTIONS_URI + "{?tools}"
"""The descriptions resource as an RFC 6570 template, so FastMCP and proxies match queries."""

ReadAnswer = Callable[[Context, str], Awaitable[str]]
BridgeAnswer = Callable[[Context, dict[str, Any] | None], Awaitable[ToolResult]]


class DisclosureComponents(Provider):
    """The descriptions resource and template, the bridge tool and the guidance prompt."""

    def __init__(
        self,
        *,
        read: ReadAnswer,
        bridge: BridgeAnswer,
        bridge_name: str | None,
        prompt: Prompt | None,
        description: str = payloads.RESOURCE_DESCRIPTION,
    ) -> None:
        super().__init__()
        self._read = read
        self.resource = FunctionResource.from_function(
            self._read_bare,
            payloads.DESCRIPTIONS_URI,
            name=payloads.RESOURCE_NAME,
            title=payloads.RESOURCE_TITLE,
            description=description,
            mime_type="application/json",
        )
        self.template = ResourceTemplate.from_function(
            self._read_selection,
            uri_template=TEMPLATE_URI,
            name=payloads.RESOURCE_NAME + "_selection",
            title=payloads.RESOURCE_TITLE,
            description=description,
            mime_type="application/json",
        )
        self.bridge = bridge_tool(bridge_name, bridge) if bridge_name else None
        self.prompt = prompt
        self._homes: list[tuple[weakref.ref[FastMCP[Any]], Any]] = []

    def _active(self) -> bool:
        """Whether the middleware that added us is still on the server (it may be removed)."""
        for home, owner in self._homes:
            server = home()
            if server is not None and any(m is owner for m in server.middleware):
                return True
        return False

    async def _read_bare(self) -> str:
        return await self._read(get_context(), payloads.DESCRIPTIONS_URI)

    async def _read_selection(self, tools: str = "") -> str:
        ctx = get_context()
        return await self._read(ctx, payloads.resource_uri_for(tools.split(",")) if tools
                                else payloads.DESCRIPTIONS_URI)

    async def _list_tools(self) -> Sequence[Tool]:
        return [self.bridge] if self.bridge is not None and self._active() else []

    async def _get_tool(self, name: str, version: VersionSpec | None = None) -> Tool | None:
        """FastMCP asks every provider for the tool of each call: only the bridge's name
        needs looking at (the default lists our tools to answer)."""
        if self.bridge is None or name != self.bridge.name:
            return None
        return await super()._get_tool(name, version)

    async def _list_resources(self) -> Sequence[Resource]:
        return [self.resource] if self._active() else []

    async def _list_resource_templates(self) -> Sequence[ResourceTemplate]:
        return [self.template] if self._active() else []

    async def _list_prompts(self) -> Sequence[Prompt]:
        return [self.prompt] if self.prompt is not None and self._active() else []


_registered: weakref.WeakKeyDictionary[FastMCP[Any], set[int]] = weakref.WeakKeyDictionary()


def install(middleware: Any, server: FastMCP[Any], components: DisclosureComponents) -> None:
    """Add ``components`` once to the server ``middleware`` belongs to.

    ``server`` is the one serving the request; a mounted child's middleware runs with the
    parent's context, so the owner is looked for among the servers mounted below it.
    """
    if id(components) in _registered.get(server, ()):
        return  # the common case, once per request: nothing to walk
    home = owning_server(server, middleware)
    if home is None:
        return
    done = _registered.setdefault(home, set())
    if id(components) not in done:
        done.add(id(components))
        components._homes.append((weakref.ref(home), middleware))
        home.add_provider(components)


def owning_server(server: FastMCP[Any], middleware: Any) -> FastMCP[Any] | None:
    """The server whose middleware list holds ``middleware``: ``server`` or one mounted in it."""
    seen: set[int] = set()
    pending = [server]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if any(m is middleware for m in current.middleware):
            return current
        pending.extend(
            child for child in (getattr(p, "server", None) for p in current.providers)
            if isinstance(child, FastMCP)
        )
    return None
