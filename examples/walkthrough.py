"""A two-minute tour: a real MCP client talks to the demo server over stdio.

It prints what the listing costs without and with progressive disclosure, a call refused
before the tool's description was fetched, the fetch, and the same call accepted after;
then a tool resolution: which behaviour hints apply to one exact call of a multi-action tool.

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
from fastmcp_progressive.cli.tokens import token_report
from fastmcp_progressive.resolution.client import is_resolvable, resolve_tool, tool_resolution

SERVER = Path(__file__).parent / "demo_server.py"


async def demo_token_figures() -> dict[str, Any]:
    """The demo's token figures, from the function ``fastmcp-progressive tokens`` prints
    (the README quotes the same numbers): the listing without and with the middleware,
    and each tool's full description."""
    from demo_server import mcp as demo  # this folder is on sys.path when run as a script

    return await token_report(demo, None, None)


def show(title: str, body: str) -> None:
    print(f"\n== {title}")
    print(textwrap.indent(body, "   "))


def transport() -> PythonStdioTransport:
    quiet = {"FASTMCP_LOG_LEVEL": "WARNING", "FASTMCP_SHOW_SERVER_BANNER": "false"}
    return PythonStdioTransport(script_path=SERVER, python_cmd=sys.executable, env=quiet)


async def main() -> None:
    figures = await demo_token_figures()
    listing = figures["listing"]
    # A handshake-era session: the spec's gate keys grants to it. On 2026-07-28 a caller
    # without auth presents no identity, so each call is judged by itself instead (its
    # arguments against the full schema; see the README's "Who the caller is").
    async with Client(transport(), mode="legacy", extensions=[tool_resolution()]) as client:
        tools = await client.list_tools()
        show(
            "tools/list",
            f"{len(tools)} tools. Tokens of the tools/list result (o200k_base): "
            f"{listing['without']:,} as registered -> {listing['with']:,} progressive "
            f"({100 * (1 - listing['with'] / listing['without']):.0f}% fewer).\n"
            f"Model-visible (name + description + inputSchema): {listing['fields_without']:,}"
            f" -> {listing['fields_with']:,} tokens.\n"
            + "\n".join(f"- {t.name}: {t.description}" for t in tools),
        )
        args = {"order_id": "o-500", "amount_cents": 2500, "reason": "Late delivery credit"}
        refused = await client.call_tool("refund_order", args, raise_on_error=False)
        error = dict((refused.structured_content or {}).get("error", {}))
        taught = error.pop("definition", {})  # the refusal teaches: it carries the definition
        show(
            "call refund_order before reading its description",
            json.dumps({"error": error}, indent=2)
            + f"\n(+ error.definition with keys: {', '.join(taught)})",
        )

        uri = f"{DESCRIPTIONS_URI}?tools=refund_order"
        contents = await client.read_resource(uri)
        definition = json.loads(contents[0].text)["refund_order"]
        show(
            f"read {uri}",
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
