"""A two-minute tour: a real MCP client talks to the demo server over stdio.

It prints what the listing costs without and with progressive disclosure, a call refused
before the tool's description was fetched, the fetch, and the same call accepted after.

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
from mcp.client.extension import advertise

from fastmcp_progressive import DESCRIPTIONS_URI, EXTENSION_ID

SERVER = Path(__file__).parent / "demo_server.py"


def count_tokens(tools: list[Any]) -> tuple[int, int]:
    """(tokens the model sees: name + description + inputSchema, tokens of the wire result)."""
    from bpe_openai import get_encoding

    enc = get_encoding("o200k_base")
    dumped = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]
    visible = sum(
        len(enc.encode(t["name"]))
        + len(enc.encode(t.get("description") or ""))
        + len(enc.encode(json.dumps(t["inputSchema"], separators=(",", ":"))))
        for t in dumped
    )
    wire = len(enc.encode(json.dumps({"tools": dumped}, separators=(",", ":"))))
    return visible, wire


def show(title: str, body: str) -> None:
    print(f"\n== {title}")
    print(textwrap.indent(body, "   "))


def transport() -> PythonStdioTransport:
    quiet = {"FASTMCP_LOG_LEVEL": "WARNING", "FASTMCP_SHOW_SERVER_BANNER": "false"}
    return PythonStdioTransport(script_path=SERVER, python_cmd=sys.executable, env=quiet)


async def main() -> None:
    full = Client(transport(), extensions=[advertise(EXTENSION_ID, {"mode": "full"})])
    async with full:
        before = count_tokens(await full.list_tools())

    async with Client(transport()) as client:
        tools = await client.list_tools()
        after = count_tokens(tools)
        show(
            "tools/list",
            f"{len(tools)} tools. Model-visible tokens (name + description + inputSchema): "
            f"{before[0]} as registered -> {after[0]} progressive "
            f"({100 * (1 - after[0] / before[0]):.0f}% fewer).\n"
            f"Whole tools/list result: {before[1]} -> {after[1]} tokens.\n"
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
            f"required: {definition['inputSchema'].get('required')}\n"
            f"first example: {json.dumps(definition['examples'][0]['input'])}",
        )

        accepted = await client.call_tool("refund_order", args, raise_on_error=False)
        show("call refund_order again", f"is_error={accepted.is_error}: {accepted.data}")


if __name__ == "__main__":
    asyncio.run(main())
