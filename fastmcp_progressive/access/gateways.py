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

from fastmcp import FastMCP
from fastmcp.server.transforms import PromptsAsTools, ResourcesAsTools
from fastmcp.server.transforms.search.base import BaseSearchTransform


async def gateway_tools(server: FastMCP) -> frozenset[str]:
    """Tools a server-level transform of FastMCP's generates to reach other components
    (those of the module docstring): gating them would make the model fetch a description
    to be allowed to search. Only FastMCP's own gateway transform types count (a renamed
    search tool included); any other transform, such as a user's rename, un-gates nothing."""
    try:
        from fastmcp.experimental.transforms.code_mode import CodeMode
    except ImportError:  # pragma: no cover - an optional part of FastMCP
        CodeMode = None  # type: ignore[assignment,misc]
    names: set[str] = set()
    for transform in server.transforms:  # by type
        if isinstance(transform, BaseSearchTransform):
            # what its public ``list_tools`` of no tools lists: its search and call tools,
            # under the names it was given
            names.update(tool.name for tool in await transform.list_tools([]))
        elif CodeMode is not None and isinstance(transform, CodeMode):
            names.add(transform.execute_tool_name)
        elif isinstance(transform, ResourcesAsTools):
            names.update(("list_resources", "read_resource"))
        elif isinstance(transform, PromptsAsTools):
            names.update(("list_prompts", "get_prompt"))
    return frozenset(names)
