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

EXTENSION_ID = "io.github.fastmcp-progressive/progressive-disclosure"
"""The SEP-2133 extension identifier (``vendor-prefix/name``) clients use to pick a mode."""

RESOURCE_NAME = "tool_descriptions"

MISSING_TOOL_SELECTION = "MISSING_TOOL_SELECTION"
TOOL_DESCRIPTION_REQUIRED = "TOOL_DESCRIPTION_REQUIRED"
TOO_MANY_TOOLS = "TOO_MANY_TOOLS"
QUERY_TOO_LONG = "QUERY_TOO_LONG"
GRANT_STORE_UNAVAILABLE = "GRANT_STORE_UNAVAILABLE"

RESOURCE_TITLE = "Tool descriptions: read one before calling that tool"

RESOURCE_DESCRIPTION = (
    "Full definitions (parameters, examples, error advice) of this server's tools. "
    "Use it in three steps. 1. Choose: the one-line descriptions in tools/list tell you "
    "what each tool does, which is all you need to pick one. "
    f"2. Fetch: read {DESCRIPTIONS_URI}?tools=NAME for the tool you picked "
    f"(several at once: {DESCRIPTIONS_URI}?tools=NAME1,NAME2). "
    "3. Call the tool with the parameters the definition gives. "
    "Fetching a definition unlocks that tool for the rest of your connection; a tool called "
    f"before its definition was fetched answers {TOOL_DESCRIPTION_REQUIRED}. "
    f"Reading without ?tools= answers {MISSING_TOOL_SELECTION}: never fetch everything."
)

INSTRUCTIONS = (
    "This server discloses its tools progressively. tools/list gives each tool a one-line "
    "description, enough to choose; before calling a tool you chose, read "
    f"{DESCRIPTIONS_URI}?tools=NAME (comma-separate several names) to learn its parameters. "
    "That read also unlocks the tool. Do not read the resource without ?tools=."
)


UNKNOWN_TOOL_HINT = "Choose a name tools/list shows, then read it again."


def resource_uri_for(names: Sequence[str]) -> str:
    """The descriptions URI selecting ``names``, each percent-encoded so commas stay inside."""
    return f"{DESCRIPTIONS_URI}?tools=" + ",".join(quote(n, safe="") for n in names)


def description_required(tool: str, bridge_tool: str | None = None) -> dict[str, Any]:
    """The body of a refused ``tools/call``: which resource to read (or bridge to call) first."""
    error: dict[str, Any] = {
        "code": TOOL_DESCRIPTION_REQUIRED,
        "message": (
            f"'{tool}' is locked until you read its full definition. Read the "
            "resource_uri below, then call the tool again with what it describes."
        ),
        "resource_uri": resource_uri_for([tool]),
    }
    if bridge_tool:
        error["message"] += f" If you cannot read resources, call {bridge_tool} instead."
        error["tool_call"] = {"name": bridge_tool, "arguments": {"tools": [tool]}}
    return {"error": error}


def missing_selection(available: Sequence[str]) -> dict[str, Any]:
    """The body of a read without a usable ``tools`` parameter."""
    first = list(available[:2])
    first += ["TOOL_NAME", "OTHER_TOOL"][len(first) :]
    return {
        "error": {
            "code": MISSING_TOOL_SELECTION,
            "message": (
                "Name the tools you want with the 'tools' query parameter: choose them from "
                "tools/list first, then fetch only those."
            ),
            "examples": [resource_uri_for(first[:1]), resource_uri_for(first)],
            "available_tools": list(available),
        }
    }


def too_many_tools(requested: int, limit: int) -> dict[str, Any]:
    """The body of a read naming more tools than one request may."""
    return {
        "error": {
            "code": TOO_MANY_TOOLS,
            "message": (
                f"{requested} tools were requested; one read may name at most {limit}. "
                "Fetch only the tools you are about to call."
            ),
            "limit": limit,
        }
    }


def query_too_long(limit: int) -> dict[str, Any]:
    """The body of a read whose query exceeds the size one request may have."""
    return {
        "error": {
            "code": QUERY_TOO_LONG,
            "message": f"The query is longer than {limit} characters. Name fewer tools.",
            "limit": limit,
        }
    }


def store_unavailable() -> dict[str, Any]:
    """The body of a call refused because the grant store is down (fail-closed policy)."""
    return {
        "error": {
            "code": GRANT_STORE_UNAVAILABLE,
            "message": "The server cannot check tool grants right now. Retry shortly.",
        }
    }


def unknown_tool(name: str) -> dict[str, Any]:
    """The per-tool entry for a name the caller cannot see (unknown, hidden or not allowed).

    Its size depends on the name alone, never on the catalog: 32 unknown names answer in
    a few hundred bytes whether the server holds ten tools or ten thousand.
    """
    return {"error": f"Tool '{name}' not found", "message": UNKNOWN_TOOL_HINT}
