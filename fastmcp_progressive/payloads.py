"""The JSON bodies the extension defines and the texts we show to models, in one place.

Every string a client or a model reads from this package is built here, so wording stays
consistent between the resource listing, the error bodies and the server instructions,
and a reviewer can read all of it on one screen.

Example:
    ```python
    from fastmcp_progressive.payloads import description_required
    description_required("create_invoice")["error"]["code"]  # "TOOL_DESCRIPTION_REQUIRED"
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

DESCRIPTIONS_URI = "resource:///tool_descriptions"
"""The URI of the descriptions resource, without a query."""


def is_descriptions_uri(uri: str) -> bool:
    """Whether ``uri`` addresses the descriptions resource (with or without a query).

    The one test for "is this our resource": reads (the middleware) and a client's
    ``resources/list`` (``guidance.uses_progressive_disclosure``) both ask it.
    """
    base = uri.split("?", 1)[0].split("#", 1)[0]
    return base.rstrip("/") == DESCRIPTIONS_URI or base == "resource://tool_descriptions"


EXTENSION_ID = "io.github.fastmcp-progressive/progressive-disclosure"
"""The SEP-2133 extension identifier (``vendor-prefix/name``) clients use to pick a mode."""

RESOURCE_NAME = "tool_descriptions"

MISSING_TOOL_SELECTION = "MISSING_TOOL_SELECTION"
TOOL_DESCRIPTION_REQUIRED = "TOOL_DESCRIPTION_REQUIRED"
TOO_MANY_TOOLS = "TOO_MANY_TOOLS"
QUERY_TOO_LONG = "QUERY_TOO_LONG"
GRANT_STORE_UNAVAILABLE = "GRANT_STORE_UNAVAILABLE"
INVALID_QUERY = "INVALID_QUERY"

RESOURCE_TITLE = "Tool definitions"

BRIDGE_TOOL_NAME = "describe_tools"
"""The ``describe_tools`` bridge's default name (``AddedComponents.bridge_tool``), for the
default texts too."""
DISPATCH_TOOL_NAME = "run_tool"
"""The ``run_tool`` dispatch bridge's default name (``AddedComponents.dispatch_tool``). Not
``call_tool``: Semantic Kernel's MCP plugin skips a tool whose name is one of its own
attributes (it has a ``call_tool`` method), and FastMCP's search transforms list a
``call_tool`` of their own."""


def resource_description(bridge_tool: str | None) -> str:
    """The descriptions resource's description: what the spec (section 4.2) asks of it, its
    tie to ``tools/list``, fetching first, the ``?tools=`` syntax and what calling first
    answers, in one sentence. Every client that lists resources is sent it, so it is as
    short as that allows; the answers themselves (a refusal's ``definition``) teach the rest."""
    bridge = f"call {bridge_tool} or " if bridge_tool else ""
    return (f"Full definitions of the tools in tools/list: {bridge}read "
            f"{DESCRIPTIONS_URI}?tools=NAME,NAME before a tool's first call; calling first "
            f"answers {TOOL_DESCRIPTION_REQUIRED}.")


def instructions(bridge_tool: str | None) -> str:
    """The workflow paragraph appended to the server's instructions. It names the bridge
    first: hosts that pass instructions to the model mostly do not let it read resources."""
    fetch = (f'{bridge_tool}({{"tools": ["NAME"]}}) or read {DESCRIPTIONS_URI}?tools=NAME'
             if bridge_tool else f"read {DESCRIPTIONS_URI}?tools=NAME")
    return (f"Tools are listed in brief. Before a tool's first call, get its definition: "
            f"{fetch}. A call refused with {TOOL_DESCRIPTION_REQUIRED} includes the definition: "
            "call again to match it.")


UNKNOWN_TOOL_HINT = (
    "Choose a name tools/list shows (available_tools: the closest ones), then read it again.")


def resource_uri_for(names: Sequence[str]) -> str:
    """The descriptions URI selecting ``names``, each percent-encoded so commas stay inside."""
    return f"{DESCRIPTIONS_URI}?tools=" + ",".join(quote(n, safe="") for n in names)


def description_required(tool: str, bridge_tool: str | None = None, *,
                         definition: dict[str, Any] | None = None,
                         problem: str | None = None) -> dict[str, Any]:
    """The body of a refused ``tools/call``, which teaches: it carries the tool's full
    ``definition`` (the entry a read returns) so the model can call again at once, and,
    when the call's arguments were checked, the ``problem`` found in them. ``resource_uri``
    and ``tool_call`` (the bridge) say where definitions come from."""
    message = (f"The arguments do not fit '{tool}' ({problem})." if problem is not None
               else f"'{tool}' runs only once you know its full definition.")
    if definition is not None:
        message += (" Its definition is included below: call the tool again with arguments "
                    "that match definition.inputSchema.")
    else:
        message += " Fetch its definition, then call the tool again with what it describes."
    message += (f" To learn other tools first, call {bridge_tool} (or read resource_uri)."
                if bridge_tool else " To learn other tools first, read their resource_uri.")
    error: dict[str, Any] = {"code": TOOL_DESCRIPTION_REQUIRED, "message": message,
                             "resource_uri": resource_uri_for([tool])}
    if bridge_tool:
        error["tool_call"] = {"name": bridge_tool, "arguments": {"tools": [tool]}}
    if problem is not None:
        error["invalid_arguments"] = problem
    if definition is not None:
        error["definition"] = definition
    return {"error": error}


def missing_selection(available: Sequence[str]) -> dict[str, Any]:
    """The body of a read without a usable ``tools`` parameter."""
    first = list(available[:2])
    first += ["TOOL_NAME", "OTHER_TOOL"][len(first) :]
    return {"error": {
        "code": MISSING_TOOL_SELECTION,
        "message": ("Name the tools you want with the 'tools' query parameter: choose them "
                    "from tools/list first, then fetch only those."),
        "examples": [resource_uri_for(first[:1]), resource_uri_for(first)],
        "available_tools": list(available)}}


def too_many_tools(requested: int, limit: int) -> dict[str, Any]:
    """The body of a read naming more tools than one request may."""
    return {"error": {"code": TOO_MANY_TOOLS, "message": (
        f"{requested} tools were requested; one read may name at most {limit}. "
        "Fetch only the tools you are about to call."), "limit": limit}}


def query_too_long(limit: int) -> dict[str, Any]:
    """The body of a read whose query exceeds the size one request may have."""
    return {"error": {"code": QUERY_TOO_LONG, "message": (
        f"The query is longer than {limit} characters. Name fewer tools."), "limit": limit}}


QUERY_NOT_OFFERED = (
    "Every tool is listed to you, so describe_tools takes no query here: name the tools "
    "you want, describe_tools(tools=[...]).")
"""The problem of a query from a client whose host profile lists it every tool."""


def invalid_query(problem: str) -> dict[str, Any]:
    """The body of a ``describe_tools`` call whose ``query`` cannot be searched."""
    return {"error": {"code": INVALID_QUERY, "message": problem}}


def no_match(bridge: str, groups: tuple[list[str], int]) -> dict[str, Any]:
    """What a query matching no tool adds to its answer: the way on, through the groups
    (``groups``: the names the caller may ask for, and how many were left off)."""
    names, left_off = groups
    if not names:
        return {"message": "No tool matches these words. Try other words, or choose a "
                           "tool from tools/list."}
    body: dict[str, Any] = {
        "message": f"No tool matches these words. Try other words, or {bridge}(groups=[...]) "
                   "with names from available_groups: it lists a group's tools, one line each.",
        "available_groups": names,
    }
    if left_off:
        body["available_groups_left_off"] = left_off
    return body


def store_unavailable() -> dict[str, Any]:
    """The body of a call refused because the grant store is down (fail-closed policy)."""
    return {"error": {"code": GRANT_STORE_UNAVAILABLE,
                      "message": "The server cannot check tool grants right now. Retry shortly."}}


def unknown_tool(name: str, available: Sequence[str] = ()) -> dict[str, Any]:
    """The per-tool entry for a name the caller cannot see (unknown, hidden or not allowed).

    ``available_tools`` (spec v2.1 section 6.3) holds the visible names closest to ``name``
    (``suggestions.py``): at most ten whatever the catalog, so 32 unknown names answer in a
    few kilobytes whether the server holds ten tools or ten thousand, and the same for a
    hidden name as for one that does not exist.
    """
    return {"error": f"Tool '{name}' not found", "message": UNKNOWN_TOOL_HINT,
            "available_tools": list(available)}


INVALID_DISPATCH = "INVALID_DISPATCH"
UNKNOWN_TOOL = "UNKNOWN_TOOL"
TOOL_FAILED = "TOOL_FAILED"


def shortened(text: str, limit: int = 128) -> str:
    """``text`` cut to ``limit`` characters and marked ``...`` when longer (a name or a
    reason echoed back: a client's input never makes an answer large)."""
    return text if len(text) <= limit else text[:limit] + "..."


def dispatch_usage(dispatch: str) -> dict[str, Any]:
    """The body of a dispatch-bridge call without a tool name and an arguments object."""
    return {"error": {"code": INVALID_DISPATCH, "message": (
        f"Call {dispatch} with {{\"name\": \"<tool>\", \"arguments\": {{...}}}}: the name "
        "of another tool of this server and the arguments its definition asks for.")}}


def dispatch_unknown(name: str, bridge: str | None) -> dict[str, Any]:
    """The body of a dispatch to a tool the caller cannot see (unknown, hidden, not allowed):
    the same for each, so the answer reveals nothing."""
    hint = (f' {bridge}(query="...") finds tools by words; {bridge}(groups=[...]) lists the '
            "tools of each group." if bridge else "")
    return {"error": {"code": UNKNOWN_TOOL,
                      "message": f"Tool '{shortened(name)}' not found.{hint}"}}


def dispatch_not_offered(name: str) -> dict[str, Any]:
    """The body of a dispatch by a caller whose listing shows every tool: it calls the
    tool by its own name, through every server in front of this one."""
    return {"error": {"code": UNKNOWN_TOOL,
                      "message": f"Every tool is listed to you: call '{shortened(name)}' by its "
                                 "own name."}}


def dispatch_failed(name: str, reason: str) -> dict[str, Any]:
    """The body of a dispatched call FastMCP answered with an error of its own."""
    return {"error": {"code": TOOL_FAILED, "tool": shortened(name), "message": reason[:2000]}}
