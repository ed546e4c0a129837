"""``describe_tools``: the descriptions resource as a tool, for hosts that cannot read resources.

Several popular hosts never let the model read a resource. Against a gating server such
a model would be locked out: every call answers TOOL_DESCRIPTION_REQUIRED and the remedy
is out of its reach. The bridge tool returns the same JSON as the resource and grants the
same way; it is listed in full and never gated. It costs about 60 listing tokens (see the
README for the measurement) and is on by default; ``SurfaceSettings(bridge_tool=None)``
turns it off.

Example:
    ```python
    await client.call_tool("describe_tools", {"tools": ["create_invoice"]})
    ```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastmcp.server.context import Context
from fastmcp.server.dependencies import get_context
from fastmcp.tools.base import Tool, ToolResult

from .payloads import DEFAULT_BRIDGE_TOOL, DESCRIPTIONS_URI

BRIDGE_TOOL_NAME = DEFAULT_BRIDGE_TOOL


Answer = Callable[[Context, dict[str, Any] | None], Awaitable[ToolResult]]


def bridge_tool(name: str, answer: Answer | None = None) -> Tool:
    """The bridge tool. A real component: FastMCP lists, routes and auths it like any tool.

    ``answer(ctx, arguments)`` builds its result; the middleware normally answers a call
    before it reaches the tool, and the tool's own body answers the same way otherwise.
    """

    async def describe_tools(tools: list[str]) -> ToolResult:
        if answer is None:
            return ToolResult(content=[])
        return await answer(get_context(), {"tools": tools})

    return Tool.from_function(
        describe_tools,
        name=name,
        description=(
            "Get the full definitions (parameters, examples) of the tools you chose; "
            f"call before a tool's first use. Same as reading {DESCRIPTIONS_URI}?tools=..."
        ),
        output_schema=None,
    )


def requested_names(arguments: dict[str, Any] | None) -> list[str] | None:
    """The tool names a bridge call asks for; None when ``tools`` is not a list or a string.

    A string is split on commas, so ``"a,b"`` works like ``["a", "b"]``.
    """
    value = (arguments or {}).get("tools")
    if isinstance(value, str):
        return value.split(",")
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None
