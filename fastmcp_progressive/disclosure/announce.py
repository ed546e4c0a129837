"""The handshake: how a client learns of the extension (``initialize``, ``server/discover``).

The capabilities name the extension, its resource, the client's listing level and its
bridge; with ``AddedComponents(instructions=True)`` the server's instructions gain a
paragraph on the workflow. Both say what this client's own listing holds: a client served
in ``full`` (a host that defers tools itself) lists no bridge and is never gated, so it is
told neither to call ``describe_tools`` nor to expect a refusal.

Example:
    ```python
    result = announce(result, level, "describe_tools", payloads.instructions("describe_tools"))
    ```
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import mcp_types as mt

from fastmcp_progressive import payloads
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.disclosure.groups import GROUPING_EXTENSION_ID
from fastmcp_progressive.hosts import Level


def announce(result: Any, level: Level, bridge_name: str | None, instructions: str | None,
             *served: str) -> Any:
    """``result`` advertising the extension to a client served at ``level``, with the
    workflow paragraph ``instructions`` (None: off) below ``full``; the advertisement is how
    clients find the extension, so it stays when the paragraph is turned off. ``served``:
    further extensions answered, each advertised with empty settings (tool resolution)."""
    if not isinstance(result, (mt.InitializeResult, mt.DiscoverResult)):
        return result
    full = level == "full"
    joined = result.instructions or ""
    if instructions and not full and instructions not in joined:
        joined = f"{joined}\n\n{instructions}" if joined else instructions
    capabilities = result.capabilities
    extensions = {**(capabilities.extensions or {}), payloads.EXTENSION_ID: {
        "resource": payloads.DESCRIPTIONS_URI, "listing": level,
        "bridge_tool": bridge_name if not full else None,
    }, GROUPING_EXTENSION_ID: {"listChanged": True}, **{other: {} for other in served}}
    return result.model_copy(update={
        "instructions": joined or result.instructions,
        "capabilities": capabilities.model_copy(update={"extensions": extensions}),
    })


def announcing_to(caller: Caller, message: Any) -> Caller:
    """The client an ``initialize`` / ``server/discover`` answer goes to.

    On ``initialize`` the session has not stored the client's ``clientInfo`` and
    capabilities yet, so they are taken from the request itself (the level decision needs
    the name for the host table and the extension settings for a requested mode).
    """
    params = getattr(message, "params", None)
    info = getattr(params, "client_info", None)
    if info is None or caller.client_name is not None:
        return caller
    extensions = getattr(getattr(params, "capabilities", None), "extensions", None)
    return replace(
        caller,
        client_name=getattr(info, "name", None),
        client_version=getattr(info, "version", None),
        extensions=dict(extensions) if isinstance(extensions, dict) else caller.extensions,
    )
