"""Many MCP servers behind one progressive front: ``proxy --config mcpServers.json``.

Users with several servers list them in the ``mcpServers`` JSON that Claude Desktop, Cursor
and FastMCP's ``MCPConfig`` read. ``progressive_gateway(config)`` serves them all from one
FastMCP server with ``ProgressiveDisclosure`` on, built from FastMCP's own parts:

- the file is read and checked by ``config.py`` (also VS Code's ``servers`` form) and
  parsed by FastMCP's ``MCPConfig`` (``command``/``args``/``env``/``cwd``, or
  ``url``/``transport``/``headers``/``auth``, ``timeout`` in ms), and FastMCP's own per-server
  keys apply: ``tools`` (``ToolTransformConfig`` per tool: rename, describe, ``enabled``),
  ``include_tags``, ``exclude_tags``;
- each server is a FastMCP proxy (``FastMCPProxy`` over the server's one connected
  ``StatefulProxyClient``, see ``upstream.py``) mounted under its name (``mount(namespace=)``:
  tool ``read_file`` of server ``fs`` is ``fs_read_file``), so FastMCP forwards roots,
  sampling, elicitation, logging and progress as it does for any proxy;
- our keys, per server: ``include_tools`` / ``exclude_tools`` (tool names or shell-style
  patterns matching the upstream's own names: before the namespace and before a ``tools``
  rename), and ``disabled: true`` (skipped, as some hosts do).

The servers start concurrently. One that fails to start, or dies, is named: logged with its
name and reason, in the ``resource:///upstreams`` status resource, in the front's
instructions, and in the error a call to its tools answers; the others keep serving.
``upstreams_of(server)`` gives the registry (name, namespace, instructions, state) to code
that describes or groups the servers; each mounted server carries its upstream's
instructions once connected, which is what describes its group (``groups.py``).

Example:
    ```python
    from fastmcp_progressive.proxy.gateway import progressive_gateway

    mcp = progressive_gateway("mcp.json", descriptions_dir="descriptions")
    mcp.run()
    ```
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.mcp_config import (
    MCPConfig,
    TransformingRemoteMCPServer,
    TransformingStdioMCPServer,
)
from fastmcp.server.auth import AuthProvider
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.providers.proxy import ProxyProvider
from fastmcp.server.transforms import ToolTransform, Transform
from fastmcp.tools.base import Tool
from fastmcp.tools.tool_transform import ToolTransformConfig

from fastmcp_progressive.caches import per_server
from fastmcp_progressive.disclosure.groups import first_prose
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.middleware import ProgressiveDisclosure
from fastmcp_progressive.proxy.config import OUR_KEYS, ConfigError, load_config, our_keys
from fastmcp_progressive.proxy.failures import UpstreamFailures
from fastmcp_progressive.proxy.roots import RootsForwarding
from fastmcp_progressive.proxy.upstream import (
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_STARTUP_TIMEOUT,
    Upstream,
)

__all__ = [
    "OUR_KEYS",
    "STATUS_URI",
    "ConfigError",
    "ToolFilter",
    "Upstreams",
    "load_config",
    "progressive_gateway",
    "upstreams_of",
]

logger = get_logger("gateway")

STATUS_URI = "resource:///upstreams"


# -- per-server tool filters -------------------------------------------------------------------
class ToolFilter(Transform):
    """``include_tools`` / ``exclude_tools`` of one server: names or shell-style patterns
    (``read_*``), matched against the server's own tool names (applied before FastMCP's
    ``tools`` renames, so renaming ``delete_all`` to ``tidy`` does not lift
    ``exclude_tools: ["delete_*"]``); a filtered-out tool is neither listed, described
    nor callable. Exclusion wins."""

    def __init__(self, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> None:
        self.include = tuple(include)
        self.exclude = tuple(exclude)

    def __repr__(self) -> str:
        return f"ToolFilter(include={list(self.include)}, exclude={list(self.exclude)})"

    def allows(self, name: str) -> bool:
        if any(fnmatch.fnmatchcase(name, p) for p in self.exclude):
            return False
        return not self.include or any(fnmatch.fnmatchcase(name, p) for p in self.include)

    async def list_tools(self, tools: Sequence[Tool]) -> Sequence[Tool]:
        return [t for t in tools if self.allows(t.name)]

    async def get_tool(self, name: str, call_next: Any, *, version: Any = None) -> Tool | None:
        if not self.allows(name):
            return None
        tool: Tool | None = await call_next(name, version=version)
        return tool


# -- the registry ------------------------------------------------------------------------------
class Upstreams:
    """The servers behind a gateway, in configuration order, by name (= namespace)."""

    def __init__(self, upstreams: Sequence[Upstream]) -> None:
        self._by_name = {u.name or u.label: u for u in upstreams}

    def __iter__(self) -> Iterator[Upstream]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def __getitem__(self, name: str) -> Upstream:
        return self._by_name[name]

    def owning(self, tool_name: str) -> Upstream | None:
        """The upstream whose namespace prefixes ``tool_name`` (longest name first): each
        prefix ending before a ``_`` looked up, not every server's name tried."""
        for at in range(len(tool_name) - 1, 0, -1):
            if tool_name[at] == "_" and tool_name[:at] in self._by_name:
                return self._by_name[tool_name[:at]]
        return None

    async def start_all(self) -> None:
        """Start every upstream not started yet, concurrently; failures are recorded."""
        async with anyio.create_task_group() as group:
            for upstream in self:
                if upstream.state == "not started":
                    group.start_soon(upstream.start)

    async def close_all(self) -> None:
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as group:
                for upstream in self:
                    group.start_soon(upstream.close)

    def status(self) -> list[dict[str, Any]]:
        return [u.status() for u in self]

    def summary(self) -> str:
        """What the front's instructions say about the servers behind it."""
        lines = [f"This server gathers {len(self)} MCP servers; each tool is named "
                 "<server>_<tool>. Status: " + STATUS_URI + "."]
        for upstream in self:
            status = upstream.status()
            if status["state"] == "serving":
                told = first_prose(upstream.instructions or "")  # not its Markdown heading
                lines.append(f"- {upstream.name}: " + (told[:500] if told else "serving"))
            elif status["state"] in ("failed", "exited"):
                lines.append(f"- {upstream.name}: NOT AVAILABLE ({status['reason']})")
            else:
                lines.append(f"- {upstream.name}: {status['state']}")
        return "\n".join(lines)


class UpstreamSummary(Middleware):
    """The servers' summary (``Upstreams.summary``) after the front's own instructions."""

    def __init__(self, upstreams: Upstreams) -> None:
        self.upstreams = upstreams

    async def on_initialize(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Any]) -> Any:
        return _with_summary(await call_next(context), self.upstreams.summary())

    async def on_discover(self, context: MiddlewareContext[Any],
                          call_next: CallNext[Any, Any]) -> Any:
        return _with_summary(await call_next(context), self.upstreams.summary())


class DownUpstreams(Middleware):
    """A call to a tool of a server that failed or died answers an error naming the
    server and why (FastMCP alone would answer "unknown tool")."""

    def __init__(self, upstreams: Upstreams) -> None:
        self.upstreams = upstreams

    async def on_call_tool(self, context: MiddlewareContext[mt.CallToolRequestParams],
                           call_next: CallNext[Any, Any]) -> Any:
        upstream = self.upstreams.owning(context.message.name)
        if upstream is not None:
            status = upstream.status()
            if status["state"] in ("failed", "exited"):
                raise ToolError(status["reason"] or f"upstream {upstream.label} is down")
        return await call_next(context)


def _with_summary(result: Any, summary: str) -> Any:
    if not isinstance(result, (mt.InitializeResult, mt.DiscoverResult)):
        return result
    own = (result.instructions or "").strip()
    return result.model_copy(update={"instructions": f"{own}\n\n{summary}" if own else summary})


# -- the Python form -----------------------------------------------------------------------------
def progressive_gateway(
    config: MCPConfig | Mapping[str, Any] | str | os.PathLike[str],
    *,
    descriptions_dir: str | os.PathLike[str] | None = None,
    name: str | None = None,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
    auth: AuthProvider | None = None,
    instructions: str | None = None,
    dereference_schemas: bool = False,
    **options: Any,
) -> FastMCP[Any]:
    """One FastMCP server serving every server of an ``mcpServers`` configuration.

    Args:
        config: a path to the JSON file, its content as a dict, or an ``MCPConfig``.
        descriptions_dir: description files for the served tools, named as listed
            (``<server>_<tool>.json``).
        name: the front's server name (default ``progressive gateway``).
        startup_timeout / request_timeout: defaults for every server (an entry's own
            ``timeout``, in ms, overrides the request timeout).
        auth: the front's own auth (FastMCP ``AuthProvider``).
        instructions: the front's own instructions, before the servers' summary.
        dereference_schemas: inline each ``$ref`` of the servers' schemas (off: as they
            are, as ``progressive_proxy``).
        **options: further ``ProgressiveDisclosure`` settings.

    Servers start concurrently when the server's lifespan starts (or with
    ``await upstreams_of(server).start_all()``), and stop with it.
    """
    parsed = load_config(config)
    disclosure = ProgressiveDisclosure(descriptions_dir, **options)
    chosen: list[tuple[Upstream, Any]] = []
    for server_name, entry in parsed.mcpServers.items():
        include, exclude, disabled = our_keys("the configuration", server_name, entry)
        if disabled:
            logger.info("upstream `%s` is disabled in the configuration; skipped", server_name)
            continue
        try:
            upstream = Upstream.from_config(server_name, entry,
                                            startup_timeout=startup_timeout,
                                            request_timeout=request_timeout)
        except ValueError as exc:  # a bad cwd, env or timeout: say which server
            raise ConfigError(f"server {server_name!r}: {exc}") from None
        chosen.append((upstream, (entry, include, exclude)))
    if not chosen:
        raise ConfigError("every server in the configuration is disabled")
    upstreams = Upstreams([u for u, _ in chosen])

    @asynccontextmanager
    async def run_upstreams(_server: FastMCP[Any]) -> AsyncIterator[dict[str, Any]]:
        await upstreams.start_all()
        try:
            yield {}
        finally:
            await upstreams.close_all()

    front: FastMCP[Any] = FastMCP(name or "progressive gateway", instructions=instructions,
                                  lifespan=run_upstreams, auth=auth,
                                  dereference_schemas=dereference_schemas)
    for upstream, (entry, include, exclude) in chosen:
        front.mount(_server_for(upstream, entry, include, exclude, dereference_schemas),
                    namespace=upstream.name)

    @front.resource(STATUS_URI, name="upstreams", mime_type="application/json",
                    description="The servers behind this gateway: state (serving, failed, "
                                "exited) and why, and how many tools each serves.")
    def status() -> str:
        return json.dumps({"upstreams": upstreams.status()}, indent=2)

    # Outermost first: down servers named, roots, the middleware, then the summary (inside
    # the middleware, so its paragraph about descriptions follows the servers' summary).
    for middleware in (DownUpstreams(upstreams), RootsForwarding(lambda: list(upstreams)),
                       disclosure, UpstreamSummary(upstreams)):
        front.add_middleware(middleware)
    per_server(front)[_REGISTRY] = upstreams
    return front


class UpstreamProvider(ProxyProvider):
    """FastMCP's proxy provider for one upstream, listing nothing while it is down.

    A server that failed to start or died is named where it matters (status resource,
    instructions, a call to its tools); its listings are empty rather than a failure each
    time (with a traceback in the log) that would also retry a dead server per listing.
    """

    def __init__(self, upstream: Upstream) -> None:
        super().__init__(upstream.connected)
        self.upstream = upstream

    def _down(self) -> bool:
        return self.upstream.status()["state"] in ("failed", "exited")

    async def _list_tools(self) -> Sequence[Tool]:
        return [] if self._down() else await super()._list_tools()

    async def _list_resources(self) -> Sequence[Any]:
        return [] if self._down() else await super()._list_resources()

    async def _list_resource_templates(self) -> Sequence[Any]:
        return [] if self._down() else await super()._list_resource_templates()

    async def _list_prompts(self) -> Sequence[Any]:
        return [] if self._down() else await super()._list_prompts()


def _server_for(upstream: Upstream, entry: Any, include: Sequence[str],
                exclude: Sequence[str], dereference_schemas: bool) -> FastMCP[Any]:
    """One server's FastMCP proxy, with its filters, to be mounted under its name."""

    child: FastMCP[Any] = FastMCP(upstream.name or upstream.label,
                                  dereference_schemas=dereference_schemas)
    child.add_provider(UpstreamProvider(upstream))

    def keep_instructions(connected: Upstream) -> None:
        # the mounted server's instructions describe its group (groups.py)
        child.instructions = connected.instructions

    upstream.on_connected.append(keep_instructions)
    child.add_middleware(UpstreamFailures(upstream))
    if include or exclude:  # first: it sees the upstream's own names, before any rename
        child.add_transform(ToolFilter(include, exclude))
    if isinstance(entry, (TransformingStdioMCPServer, TransformingRemoteMCPServer)):
        # FastMCP's own keys, applied in the order its MCPConfig proxy applies them
        if entry.tools:
            child.add_transform(ToolTransform({
                tool: c if isinstance(c, ToolTransformConfig)
                else ToolTransformConfig.model_validate(c)
                for tool, c in entry.tools.items()}))
        if entry.include_tags is not None:
            child.enable(tags=set(entry.include_tags), only=True)
        if entry.exclude_tags:
            child.disable(tags=set(entry.exclude_tags))
    return child


_REGISTRY = "proxy.gateway.upstreams"
"""The ``per_server`` slot of a ``progressive_gateway`` server's upstreams' registry
(dropped with the server; kept there, not on the FastMCP object)."""


def upstreams_of(server: FastMCP[Any]) -> Upstreams:
    """The registry of a ``progressive_gateway`` server (name, namespace, instructions,
    state of each upstream)."""
    upstreams: Upstreams | None = per_server(server).get(_REGISTRY)
    if upstreams is None:
        raise ValueError(f"{server.name!r} was not made by progressive_gateway")
    return upstreams
