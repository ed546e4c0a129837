"""Resolving the names of one request without a catalog scan per name.

FastMCP's ``get_tool`` is the exact answer to "may this caller use tool X" (transforms,
versions, ``mcp.disable``, session visibility, component ``auth``, injected tools), but a
``LocalProvider`` finds a name by scanning every component it holds: a read of 20 names
at 10,000 tools is 20 scans. Inside ``batch()``, each plain ``LocalProvider`` of the
server answers its lookups from a name index, with the same rules as its own scan (all
versions of the name, the version filter, the highest one), so every FastMCP rule still
applies and only the scan is gone. The index is kept until the provider's components
change (``fastmcp_internals.tool_components`` counts every write to them).

Inside a batch whose providers all answer from memory, but for at most one (a proxy's),
FastMCP also asks its providers in turn rather than in a task each
(``run_provider_lookups_in_line``): that task was half of what one lookup cost, and with a
single provider that waits there is nothing to overlap it with.

The batch also records whether a lookup met a versioned tool. ``Catalog`` first asks
FastMCP for a name across all versions, which skips ``get_tool``'s second pass over the
whole catalog (the "highest version is disabled, try the next one" fallback); it repeats
the plain lookup only when the name has versions or a provider is not indexable. A name
hidden by auth and an unknown name therefore cost the same.

Example:
    ```python
    with batch(server) as lookups:
        tool = await lookups.get(server, "create_invoice")
    ```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from fastmcp.tools.base import Tool
from fastmcp.utilities.versions import VersionSpec, version_sort_key

from fastmcp_progressive.fastmcp_internals import (
    components_token,
    keep_on,
    kept_on,
    local_tool_providers,
    replace_tool_getter,
    run_provider_lookups_in_line,
    tool_components,
)

ALL_VERSIONS = VersionSpec()
"""A version filter every version matches: asks ``get_tool`` for the highest one only."""

GetTool = Callable[[str, VersionSpec | None], Awaitable[Tool | None]]


@dataclass
class Batch:
    """One request's name indexes (per provider) and what its last lookup met."""

    foreign: int
    """Tool providers in the server's tree that are neither ``LocalProvider``s nor mounts."""
    indexes: dict[int, dict[str, list[Tool]]] = field(default_factory=dict)
    versioned: bool = False

    @property
    def exact(self) -> bool:
        """Every provider is indexed: lookups may ask across versions first."""
        return self.foreign == 0

    @property
    def in_line(self) -> bool:
        """At most one provider may wait (a proxy's): nothing for its task to overlap."""
        return self.foreign <= 1

    async def get(self, server: Any, name: str) -> Tool | None:
        """``server.get_tool(name)``, answered from the indexes where they are exact."""
        if not self.exact:
            return await server.get_tool(name)  # type: ignore[no-any-return]
        self.versioned = False
        tool: Tool | None = await server.get_tool(name, ALL_VERSIONS)
        if tool is None and self.versioned:
            tool = await server.get_tool(name)  # FastMCP's fallback to a lower version
        return tool


_current: ContextVar[Batch | None] = ContextVar("fastmcp_progressive_lookups", default=None)


def _in_line_batch() -> bool:
    current = _current.get()
    return current is not None and current.in_line


# at most one provider of the batch waits on anything: no task per provider per lookup
run_provider_lookups_in_line(_in_line_batch)


@contextmanager
def batch(server: Any) -> Iterator[Batch]:
    """Share one name index per provider among the lookups made inside the block."""
    providers, foreign = local_tool_providers(server)
    for provider in providers:
        replace_tool_getter(provider, partial(_indexed, provider))
    current = Batch(foreign)
    token = _current.set(current)
    try:
        yield current
    finally:
        _current.reset(token)


def _indexed(provider: Any, original: GetTool) -> GetTool:
    async def get_tool(name: str, version: VersionSpec | None = None) -> Tool | None:
        current = _current.get()
        if current is None:
            return await original(name, version)
        index = current.indexes.get(id(provider))
        if index is None:
            index = current.indexes[id(provider)] = _index_of(provider)
        matching = index.get(name, ())
        if any(t.version is not None for t in matching):
            current.versioned = True
        if version:
            matching = [t for t in matching if version.matches(t.version)]
        return max(matching, key=version_sort_key) if matching else None

    return get_tool


_INDEX_ATTRIBUTE = "_fastmcp_progressive_index"


def _index_of(provider: Any) -> dict[str, list[Tool]]:
    """The provider's name index, rebuilt only when its components changed."""
    kept: tuple[tuple[int, int], dict[str, list[Tool]]] | None = kept_on(
        provider, _INDEX_ATTRIBUTE
    )
    token = components_token(provider)
    if kept is not None and kept[0] == token:
        return kept[1]
    token, components = tool_components(provider)
    index = _index(components)
    keep_on(provider, _INDEX_ATTRIBUTE, (token, index))
    return index


def _index(components: list[Any]) -> dict[str, list[Tool]]:
    index: dict[str, list[Tool]] = {}
    for component in components:
        if isinstance(component, Tool):
            index.setdefault(component.name, []).append(component)
    return index
