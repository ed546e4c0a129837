"""A two-minute tour: a real MCP client talks to the demo server over stdio.

It prints what the listing costs without and with progressive disclosure; then, with
FastMCP's default client (2026-07-28, no auth: judged by its arguments), a call that runs
and one whose arguments miss the full schema, refused with the definition; then, with a
handshake-era session (a caller the server follows), a call refused before the tool's
description was read, the read, and the same call accepted; last a tool resolution: which
behaviour hints apply to one exact call of a multi-action tool.

    python examples/walkthrough.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import PythonStdioTransport

from fastmcp_progressive import DESCRIPTIONS_URI
from fastmcp_progressive.cli.tokens import Tokens, token_report
from fastmcp_progressive.resolution.client import is_resolvable, resolve_tool, tool_resolution

SERVER = Path(__file__).parent / "demo_server.py"


async def demo_token_figures() -> dict[str, Any]:
    """The demo's token figures, from the function ``fastmcp-progressive tokens`` prints
    (the README quotes the same numbers): the listing without and with the middleware,
    and each tool's full description."""
    from demo_server import mcp as demo  # this folder is on sys.path when run as a script

    return await token_report(demo, None, None, Tokens())


def show(title: str, body: str) -> None:
    print(f"\n== {title}")
    print(textwrap.indent(body, "   "))


def transport() -> PythonStdioTransport:
    quiet = {"FASTMCP_LOG_LEVEL": "WARNING", "FASTMCP_SHOW_SERVER_BANNER": "false"}
    return PythonStdioTransport(script_path=SERVER, python_cmd=sys.executable, env=quiet)


def refusal(result: Any) -> str:
    """A refused call's body, its ``definition`` (the tool's full entry) shown by its keys."""
    error = dict((result.structured_content or {}).get("error", {}))
    taught = error.pop("definition", {})  # the refusal teaches: it carries the definition
    return (json.dumps({"error": error}, indent=2)
            + f"\n(+ error.definition with keys: {', '.join(taught)})")


async def main() -> None:
    figures = await demo_token_figures()
    listing = figures["listing"]
    args = {"order_id": "o-500", "amount_cents": 2500, "reason": "Late delivery credit"}

    # 1. FastMCP's default client: the 2026-07-28 protocol, no auth. It presents no identity
    #    a grant could be kept for, so each call is judged by its own arguments against the
    #    tool's full schema: a call that fits runs at once; one that does not is refused
    #    with the definition it missed.
    async with Client(transport()) as client:
        tools = await client.list_tools()
        show(
            "tools/list (FastMCP's default client: 2026-07-28, no auth)",
            f"{len(tools)} tools. Tokens of the tools/list result (o200k_base): "
            f"{listing['without']:,} as registered -> {listing['with']:,} progressive "
            f"({100 * (1 - listing['with'] / listing['without']):.0f}% fewer).\n"
            f"Model-visible (name + description + inputSchema): {listing['fields_without']:,}"
            f" -> {listing['fields_with']:,} tokens.\n"
            + "\n".join(f"- {t.name}: {t.description}" for t in tools),
        )
        ran = await client.call_tool("refund_order", args, raise_on_error=False)
        show("call refund_order with arguments that fit its full schema",
             f"is_error={ran.is_error}: {ran.data}  (judged by its arguments: it runs)")
        guessed = {"order_id": "o-500", "amount_cents": 0, "reason": "ok"}
        bad = await client.call_tool("refund_order", guessed, raise_on_error=False)
        show(f"call refund_order with {json.dumps(guessed)} (amount >= 1, reason >= 3 chars)",
             refusal(bad))

    # 2. A handshake-era session (mode="legacy"): a caller the server can follow, as is a
    #    principal with auth. It is refused until the tool's definition reached it.
    async with Client(transport(), mode="legacy", extensions=[tool_resolution()]) as client:
        tools = await client.list_tools()  # a session that lists first is one a host keeps
        refused = await client.call_tool("refund_order", args, raise_on_error=False)
        show("handshake-era session: call refund_order before reading its description",
             refusal(refused))

        uri = f"{DESCRIPTIONS_URI}?tools=refund_order"
        contents = await client.read_resource(uri)
        definition = json.loads(contents[0].text)["refund_order"]
        show(
            f"read {uri} (or call describe_tools)",
            f"keys: {', '.join(definition)}\n"
            f"{figures['full_descriptions']['refund_order']['tokens']:,} tokens "
            "(fetched only for the tool in use)\n"
            f"required: {definition['inputSchema'].get('required')}\n"
            f"first example: {json.dumps(definition['examples'][0]['input'])}",
        )

        accepted = await client.call_tool("refund_order", args, raise_on_error=False)
        show("call refund_order again", f"is_error={accepted.is_error}: {accepted.data}")

        notes = next(t for t in tools if t.name == "manage_notes")
        static = notes.annotations.model_dump(by_alias=True, exclude_none=True)  # type: ignore[union-attr]
        lines = [f"static annotations (the worst case, delete): {json.dumps(static)}",
                 f"marked resolvable in tools/list: {is_resolvable(notes)}"]
        for action in ("read", "delete"):
            hints = await resolve_tool(client, "manage_notes",
                                       {"action": action, "order_id": "o-500"})
            lines.append(f"action={action}: " + json.dumps(hints.model_dump(by_alias=True)))
        show("tools/resolve manage_notes (no call made, nothing granted)", "\n".join(lines))


if __name__ == "__main__":
    asyncio.run(main())
