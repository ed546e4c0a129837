"""The tools FastMCP's own gateway transforms generate: never gated (the gate's rule 2).

A search transform's ``search_tools``/``call_tool``, ``ResourcesAsTools``'
``list_resources``/``read_resource``, ``PromptsAsTools``' pair and CodeMode's ``execute`` are
how a client finds and reaches the real tools. Asked only when a server's transforms
change (``access/gate.py:gateways_of`` keeps the answer per server), so it stays off the
warm request path.

Example:
    ```python
    names = await gateway_tools(mcp)  # frozenset({"search_tools", "call_tool"})
    ```
"""

from __future__ import annotations

from typing import Any

from fastmcp import FastMCP
from fastmcp.server.transforms.search.base import BaseSearchTransform


# -- the tools FastMCP's gateway transforms generate ---------------------------------------------
async def _gateway_names(transform: Any) -> tuple[str, ...]:
    """The tools one of FastMCP's own gateway transforms generates, by its type (a search
    transform: what its public ``list_tools`` of no tools lists, its search and call tools
    under the names it was given)."""
    from fastmcp.server.transforms import PromptsAsTools, ResourcesAsTools

    if isinstance(transform, BaseSearchTransform):
        return tuple(tool.name for tool in await transform.list_tools([]))
    try:
        from fastmcp.experimental.transforms.code_mode import CodeMode
    except ImportError:  # pragma: no cover - an optional part of FastMCP
        CodeMode = None  # type: ignore[assignment,misc]
    if CodeMode is not None and isinstance(transform, CodeMode):
        return (transform.execute_tool_name,)
    if isinstance(transform, ResourcesAsTools):
        return ("list_resources", "read_resource")
    if isinstance(transform, PromptsAsTools):
        return ("list_prompts", "get_prompt")
    return ()


async def gateway_tools(server: FastMCP) -> frozenset[str]:
    """Tools a server-level transform of FastMCP's generates to reach other components.

    A search transform's ``search_tools``/``call_tool`` and ``ResourcesAsTools``'
    ``list_resources``/``read_resource`` are how a client finds and reaches the real tools;
    gating them would make the model fetch a description to be allowed to search. Only
    FastMCP's own gateway transform types count (a renamed search tool included); any other
    transform, such as a user's rename, un-gates nothing.
    """
    names: set[str] = set()
    for transform in server.transforms:
        names.update(await _gateway_names(transform))
    return frozenset(names)
