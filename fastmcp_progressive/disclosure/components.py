"""The package's own MCP components, registered with FastMCP so FastMCP routes them itself.

A resource answered only from middleware works for a client talking straight to the
server, and nowhere else: a FastMCP proxy forwards a ``resources/read`` only for a URI its
backend lists (a fixed resource or a template), ``AuthMiddleware`` refuses a read or a
call it cannot look up, and a parent server that mounts ours routes ``kid_describe_tools``
only to a tool the child really has. So the descriptions resource (fixed URI and the
template ``resource:///tool_descriptions{?tools}``), the bridge tool and the guidance
prompt are real components, added with ``mcp.add_resource``/``add_template``/``add_tool``/
``add_prompt`` to the server the middleware belongs to, on the first request it sees
(``add_middleware`` has no hook of its own). A resource, template or prompt of the same
name or URI the user registered first is kept and ours is not added; a tool of a bridge's
name is refused (``BridgeNameTaken``, every request until it is renamed), since every
refusal would point the model at a tool that does not describe anything.

They go into the server's own ``LocalProvider`` rather than a provider of their own:
FastMCP asks every provider, each in a task of its own, for the tool of every call and
every name a read resolves, so a second provider cost each lookup about a third more.
They stay registered until the middleware's ``close()``, which takes out the ones it
added (removing the middleware from ``mcp.middleware`` alone leaves them in place).

The middleware keeps answering these reads and calls itself, before any inner middleware
(a response cache placed inside it would otherwise replay one caller's answer, and its
grant, to another). The components' own functions answer the same way for the paths that
skip middleware (``mcp.call_tool(..., run_middleware=False)``).

Example:
    ```python
    components = DisclosureComponents(read=..., bridge=..., bridge_name="describe_tools",
                                      prompt=None, dispatch=..., dispatch_name=None)
    await install(middleware, server, components)  # idempotent, once per server
    ```
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from functools import partial
from typing import Any, Literal

from fastmcp import FastMCP
from fastmcp.prompts.base import Prompt
from fastmcp.resources.base import Resource
from fastmcp.resources.function_resource import FunctionResource
from fastmcp.resources.template import ResourceTemplate
from fastmcp.server.context import Context
from fastmcp.server.dependencies import get_context
from fastmcp.tools.base import Tool
from fastmcp.utilities.components import FastMCPComponent

from fastmcp_progressive import payloads
from fastmcp_progressive.access.gate import Bridge
from fastmcp_progressive.disclosure.bridge import Answer, bridge_tool, dispatch_tool
from fastmcp_progressive.fastmcp_internals import local_component
from fastmcp_progressive.payloads import is_descriptions_uri

TEMPLATE_URI = payloads.DESCRIPTIONS_URI + "{?tools}"
"""The descriptions resource as an RFC 6570 template, so FastMCP and proxies match queries."""

ReadAnswer = Callable[[Context, str], Awaitable[str]]


class BridgeNameTaken(ValueError):
    """The server has a tool of the name a bridge tool was given (``AddedComponents``)."""


class DisclosureComponents:
    """The descriptions resource and template, the bridge tool and the guidance prompt."""

    def __init__(self, *, read: ReadAnswer, bridge: Answer, bridge_name: str | None,
                 prompt: Prompt | None, dispatch: Answer, dispatch_name: str | None
                 ) -> None:
        self._read = read
        self.resource = FunctionResource.from_function(
            self._read_bare, payloads.DESCRIPTIONS_URI, name=payloads.RESOURCE_NAME,
            title=payloads.RESOURCE_TITLE, description=payloads.resource_description(bridge_name),
            mime_type="application/json")
        self.template = ResourceTemplate.from_function(
            self._read_selection, uri_template=TEMPLATE_URI,
            name=payloads.RESOURCE_NAME + "_selection",
            title=payloads.RESOURCE_TITLE,  # no description: the resource's teaches, once
            mime_type="application/json")
        self.bridge = bridge_tool(bridge_name, bridge) if bridge_name else None
        self.dispatch = dispatch_tool(dispatch_name, dispatch) if dispatch_name else None
        self.bridge_name, self.dispatch_name = bridge_name or None, dispatch_name or None
        self.names = frozenset(n for n in (self.bridge_name, self.dispatch_name) if n)
        """Our bridges' names (a call of one is always looked up: ``ServerFacts.ours``)."""
        self.prompt = prompt
        ours: tuple[tuple[Bridge, Tool | None], ...] = (("bridge", self.bridge),
                                                         ("dispatch", self.dispatch))
        self.kinds: dict[Any, Bridge] = {
            getattr(tool, "fn", None): kind for kind, tool in ours if tool is not None}
        """Our tools' functions, by kind: a tool FastMCP resolves a call to is ours when it
        runs one of them (a tool of a bridge's name the user registered is the user's)."""
        self._added: list[tuple[weakref.ref[FastMCP[Any]], FastMCPComponent,
                                Callable[[], None]]] = []
        self.registered_on: list[weakref.ref[FastMCP[Any]]] = []
        """The servers these components were added to, or found added below (``install``)."""

    async def _read_bare(self) -> str:
        return await self._read(get_context(), payloads.DESCRIPTIONS_URI)

    async def _read_selection(self, tools: str = "") -> str:
        return await self._read(get_context(), payloads.resource_uri_for(tools.split(","))
                                if tools else payloads.DESCRIPTIONS_URI)

    def is_ours(self, tool: Tool | None) -> bool:
        """Whether a listed ``tool`` is one of our bridges, or a copy of one
        (``same_component``), not one of the user's tools."""
        return same_component(tool, self.bridge) or same_component(tool, self.dispatch)

    def shown(self, listed: Any, kind: Literal["resource", "template"] | None, *,
              full: bool) -> Any:
        """A prompt, resource or template listing as a client is shown it: one descriptions
        entry, ours when listed (``one_descriptions_entry``), and for a client served in
        ``full`` none of our guidance prompt and descriptions resource: their texts teach the
        progressive workflow (``describe_tools``, the refusal), which such a client's listing
        and calls never show. Reads still answer."""
        if kind == "resource":
            listed = one_descriptions_entry(listed, lambda r: str(r.uri),
                                            partial(same_component, ours=self.resource))
        elif kind == "template":
            listed = one_descriptions_entry(listed, lambda t: t.uri_template,
                                            partial(same_component, ours=self.template))
        if not full or not isinstance(listed, Sequence):
            return listed
        ours = [part for part in (self.resource, self.template, self.prompt) if part is not None]
        return [item for item in listed if not any(same_component(item, p) for p in ours)]

    def parts(self) -> list[FastMCPComponent]:
        """Every component this package may add, the optional ones when configured."""
        optional = [c for c in (self.bridge, self.dispatch, self.prompt) if c is not None]
        return [self.resource, self.template, *optional]

    async def add_to(self, server: FastMCP[Any]) -> None:
        """Add each component to ``server`` unless the user registered one of that name;
        a tool of a bridge's name raises ``BridgeNameTaken`` before anything is added."""
        local = server.local_provider
        for field, ours in (("bridge_tool", self.bridge), ("dispatch_tool", self.dispatch)):
            if ours is not None and await local.get_tool(ours.name) is not None:
                raise BridgeNameTaken(
                    f"added.{field} is {ours.name!r}, the name of a tool this server already "
                    f"has: pass another name, e.g. ProgressiveDisclosure(added=AddedComponents("
                    f"{field}='progressive_{ours.name}')), or None")

        def added(component: Any, add: Callable[[Any], Any],
                  remove: Callable[[str], Any], key: str) -> None:
            add(component)
            self._added.append((weakref.ref(server), component, partial(remove, key)))

        uri = str(self.resource.uri)
        if await local.get_resource(uri) is None:
            added(self.resource, server.add_resource, local.remove_resource, uri)
        key = self.template.uri_template
        if all(t.uri_template != key for t in await local.list_resource_templates()):
            added(self.template, server.add_template, local.remove_template, key)
        for tool in (self.bridge, self.dispatch):
            if tool is not None:
                added(tool, server.add_tool, local.remove_tool, tool.name)
        if self.prompt is not None and await local.get_prompt(self.prompt.name) is None:
            added(self.prompt, server.add_prompt, local.remove_prompt, self.prompt.name)

    def remove(self) -> None:
        """Take every component this object added out of the servers it added them to; one
        the user has since replaced under the same name stays."""
        added, self._added = self._added, []
        for home, component, remove in added:
            server = home()
            if server is None or local_component(server.local_provider,
                                                 component.key) is not component:
                continue
            with suppress(KeyError):  # the user removed it already
                remove()
        self.registered_on.clear()


async def install(middleware: Any, server: FastMCP[Any], components: DisclosureComponents
                  ) -> None:
    """Add ``components`` once to the server ``middleware`` belongs to.

    ``server`` is the one serving the request; a mounted child's middleware runs with the
    parent's context, so the owner is looked for among the servers mounted below it.
    """
    done = components.registered_on
    if any(ref() is server for ref in done):
        return  # nothing to walk
    home = owning_server(server, middleware)
    if home is None:
        return
    if all(ref() is not home for ref in done):
        done.append(ref := weakref.ref(home))  # before awaiting: a concurrent request adds none
        try:
            await components.add_to(home)
        except BridgeNameTaken:
            done.remove(ref)  # refused again on every request until renamed
            raise
    if home is not server:
        done.append(weakref.ref(server))  # a parent: no walk next time


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


def one_descriptions_entry(listed: Any, address: Callable[[Any], str],
                           is_ours: Callable[[Any], bool]) -> Any:
    """``listed`` with at most one entry at the descriptions address: ours when it is
    there, else the first. A proxied upstream (or a provider of any kind) that lists its
    own ``resource:///tool_descriptions`` or a template like it would otherwise be shown
    beside ours, though every read of that address is answered by the middleware."""
    if not isinstance(listed, Sequence):
        return listed
    at_address = [item for item in listed
                  if is_descriptions_uri(str(address(item)).split("{", 1)[0])]
    if len(at_address) < 2:
        return listed
    keep = next((item for item in at_address if is_ours(item)), at_address[0])
    return [item for item in listed if item is keep or not any(
        item is other for other in at_address)]


_BASES: tuple[type[FastMCPComponent], ...] = (Tool, Resource, ResourceTemplate, Prompt)


def same_component(listed: Any, ours: Any) -> bool:
    """Whether a listed component is ``ours``: itself, a copy FastMCP made of it (the same
    function), or one rebuilt from its public fields as its plain base class, which is
    what FastMCP's ``ResponseCachingMiddleware`` hands back from its cache: no function,
    and ours' key, description and arguments. Identity alone took such a copy for a
    user's component of the same name (#27: every listing through the cache showed
    ``run_tool``). A user's component of the name has a function or a class of its own
    (a proxied upstream's tool is a ``ProxyTool``), or other arguments."""
    if listed is ours:
        return True
    if ours is None or listed is None:
        return False
    fn = getattr(ours, "fn", None)
    if fn is not None and getattr(listed, "fn", None) is fn:
        return True
    return (type(listed) in _BASES and isinstance(ours, type(listed))
            and listed.key == ours.key and listed.description == ours.description
            and getattr(listed, "parameters", None) == getattr(ours, "parameters", None)
            and getattr(listed, "arguments", None) == getattr(ours, "arguments", None))
