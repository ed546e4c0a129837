"""``describe_tools``: the descriptions resource as a tool, for hosts that cannot read resources.

Several popular hosts never let the model read a resource. Against a gating server such
a model would be locked out: every call answers TOOL_DESCRIPTION_REQUIRED and the remedy
is out of its reach. The bridge tool returns the same JSON as the resource and grants the
same way; it is listed in full and never gated. It costs about 65 listing tokens
(``fastmcp-progressive tokens`` counts it in the listing) and is on by default;
``AddedComponents(bridge_tool=None)`` turns it off.

Example:
    ```python
    await client.call_tool("describe_tools", {"tools": ["create_invoice"]})
    await client.call_tool("describe_tools", {"query": "create an invoice"})
    await client.call_tool("describe_tools", {"queries": ["geocode an address", "write a file"]})
    ```

A ``query`` answers with the best matching tools' full definitions, granted like a read
(``search.py``), so a model that cannot see a tool's name still reaches it in one call;
``queries`` asks for a task's several steps at once, each ranked on its own. ``queries`` is
listed (18 tokens) only where a listing is capped, where most tools are found by query; an
uncapped listing names every tool, and its bridge stays at about 65 tokens.

Every bridge argument a caller may leave out is listed with ``"nullable": true`` beside its
one plain type (``listed_bridge_schema``): smolagents requires every listed argument not
marked so, before it sends the call (``validate_tool_arguments``,
``smolagents/tools.py:1404-1407``, 1.26.0; mcpadapt 0.1.19 passes the listed properties as
they are and no ``required``), so without it ``describe_tools({"query": ...})`` never left
the host. ``nullable`` is OpenAPI's word, which other JSON Schema readers ignore, and
``type`` stays one string (Semantic Kernel, AutoGen and DSPy need that:
``listed_schema.py``). The tools accept an explicit ``null`` for each such argument too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from fastmcp.server.context import Context
from fastmcp.server.dependencies import get_context
from fastmcp.tools.base import Tool, ToolResult

Answer = Callable[[Context, dict[str, Any] | None], Awaitable[ToolResult]]


def bridge_tool(name: str, answer: Answer) -> Tool:
    """The bridge tool. A real component: FastMCP lists, routes and auths it like any tool.

    ``answer(ctx, arguments)`` builds its result; the middleware normally answers a call
    before it reaches the tool, and the tool's own body answers the same way otherwise.
    """

    async def describe_tools(tools: list[str] | None = None, groups: list[str] | None = None,
                             query: str | None = None, queries: list[str] | None = None
                             ) -> ToolResult:
        sent = (("tools", tools), ("groups", groups), ("query", query), ("queries", queries))
        return await answer(get_context(), {k: v for k, v in sent if v is not None})

    return Tool.from_function(describe_tools, name=name, description=BRIDGE_DESCRIPTION,
                              output_schema=None)


BRIDGE_DESCRIPTION = ("Full definitions of the tools you name or your query finds. Call before a "
                      "tool's first use.")
"""Listed to every client, so short: what it returns and when to call it."""


def bridge_description_with_groups(lines: list[str], dispatch: str | None) -> str:
    """The bridge's description in a capped listing: it names every group the caller may
    see (``lines``: ``name: summary``), since most tools are not listed by name. With no
    group it offers no ``groups`` argument and no empty ``Groups:`` header (the argument
    could only answer ``available_groups: []``)."""
    call = (f", then call it by name, or through {dispatch}(name, arguments) when it "
            "is not listed" if dispatch else ", then call it by name")
    by_group = ("describe_tools(groups=[...]) lists a group's tools, one line each; "
                if lines else "")
    text = ('Only some tools are listed. describe_tools(query="what to do") gives the best '
            "matching tools' full definitions (queries=[...]: one per step); "
            f"{by_group}describe_tools(tools=[...]) gives a tool's full definition{call}.")
    return text + "\nGroups:\n" + "\n".join(lines) if lines else text


def dispatched_arguments(name: str, inner: dict[str, Any]) -> dict[str, Any]:
    """The arguments a dispatch-bridge call means for tool ``name``.

    Semantic Kernel hands a kernel-function parameter named ``arguments`` the call's whole
    argument set (``functions/kernel_function_from_method.py:167-169``, 1.45.0), so its
    plugin sends ``{"name": n, "arguments": {"name": n, "arguments": {...}}}``: that exact
    shape is unwrapped once; anything else is the tool's arguments as sent.
    """
    if (set(inner) == {"name", "arguments"} and inner["name"] == name
            and isinstance(inner["arguments"], dict)):
        return dict(inner["arguments"])
    return inner


def dispatch_tool(name: str, answer: Answer) -> Tool:
    """The dispatch bridge of a capped listing: calls any tool the caller may see by name,
    through FastMCP's own ``call_tool`` (``toolcap.py``, ``describer.py``), listed only
    when a listing is capped (``ListingSettings(max_tools=...)``)."""

    async def call_tool(name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        return await answer(get_context(), {"name": name, "arguments": arguments or {}})

    return Tool.from_function(call_tool, name=name, output_schema=None, description=(
        "Call a tool of this server that is not listed, by its name, with the arguments its "
        "definition (describe_tools) gives."))


def listed_bridge_schema(bridge: Tool, arguments: Sequence[str]) -> dict[str, Any]:
    """A bridge's input schema as a listing shows it: ``arguments`` only, each with its
    one plain type and without its default, every optional one marked ``"nullable": true``
    (the module docstring says why), and ``required`` as registered."""
    registered = bridge.parameters
    properties = registered.get("properties", {})
    required = [name for name in registered.get("required", ()) if name in arguments]
    schema: dict[str, Any] = {"type": "object", "properties": {
        name: _listed_argument(properties[name], optional=name not in required)
        for name in arguments if name in properties}}
    if required:
        schema["required"] = required
    return schema


def _listed_argument(spec: dict[str, Any], *, optional: bool) -> dict[str, Any]:
    """One bridge argument as listed: ``T | None``'s ``anyOf`` becomes ``T``'s schema."""
    members = [m for m in spec.get("anyOf", ()) if m.get("type") != "null"]
    plain = members[0] if len(members) == 1 else spec
    listed = {k: v for k, v in plain.items() if k != "default"}
    if optional:
        listed["nullable"] = True
    return listed
