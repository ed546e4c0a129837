"""Composition with FastMCP's own pieces, exactly as ``docs/deployment.md``'s snippets show them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.server.middleware import MiddlewareContext
from fastmcp.server.middleware.rate_limiting import RateLimitingMiddleware
from fastmcp.server.transforms import ResourcesAsTools

from fastmcp_progressive import DESCRIPTIONS_URI
from fastmcp_progressive.access.caller import identify
from fastmcp_progressive.payloads import is_descriptions_uri
from fastmcp_progressive.resolution.client import resolve_tool, tool_resolution
from tests.conftest import build_server, connect, gated

ROOT = Path(__file__).resolve().parents[1]


async def test_resources_as_tools_reaches_descriptions_and_grants() -> None:
    server = build_server()
    server.add_transform(ResourcesAsTools(server))
    async with connect(server, "legacy") as c:
        listed = {t.name: t for t in await c.list_tools()}
        assert listed["read_resource"].input_schema.get("properties")  # gateway: listed in full
        assert await gated(c)
        read = await c.call_tool("read_resource", {"uri": f"{DESCRIPTIONS_URI}?tools=add"})
        assert '"required":["a","b"]' in read.content[0].text.replace(" ", "")  # type: ignore[union-attr]
        assert not await gated(c)


# docs/deployment.md snippet: rate-limit description fetches per caller, nothing else.
class DescriptionFetchLimit(RateLimitingMiddleware):
    async def on_request(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        uri = str(getattr(context.message, "uri", ""))
        if context.method == "resources/read" and is_descriptions_uri(uri):
            return await super().on_request(context, call_next)
        return await call_next(context)


def _caller_id(context: MiddlewareContext[Any]) -> str:
    return identify(context.fastmcp_context).key or "anonymous"


async def test_rate_limiting_description_fetches() -> None:
    server = build_server()
    progressive = server.middleware.pop()  # the limiter must sit outside (before) it
    server.add_middleware(
        DescriptionFetchLimit(
            max_requests_per_second=0.001, burst_capacity=2, get_client_id=_caller_id
        )
    )
    server.add_middleware(progressive)
    async with connect(server, "legacy") as a, connect(server, "legacy") as b:
        for _ in range(2):
            await a.read_resource(f"{DESCRIPTIONS_URI}?tools=add")
        with pytest.raises(Exception, match="Rate limit exceeded"):
            await a.read_resource(f"{DESCRIPTIONS_URI}?tools=add")
        assert (await a.call_tool("add", {"a": 1, "b": 1})).data == 2  # calls are not limited
        await b.read_resource(f"{DESCRIPTIONS_URI}?tools=add")  # another caller's own bucket


@pytest.mark.slow  # `fastmcp run` in a process
async def test_demo_server_over_stdio_with_fastmcp_run() -> None:
    fastmcp_cli = Path(sys.executable).parent / "fastmcp"
    transport = StdioTransport(
        command=str(fastmcp_cli),
        args=["run", str(ROOT / "examples" / "demo_server.py"), "--no-banner"],
        env={"FASTMCP_LOG_LEVEL": "WARNING"},
    )
    async with Client(transport, mode="legacy", extensions=[tool_resolution()]) as c:
        names = [t.name for t in await c.list_tools()]
        assert len(names) == 10 and "refund_order" in names and "manage_notes" in names
        described = json.loads(
            (await c.read_resource(f"{DESCRIPTIONS_URI}?tools=get_shipping_quote"))[0].text  # type: ignore[union-attr]
        )
        assert described["get_shipping_quote"]["examples"][0]["input"]["speed"] == "express"
        quote = await c.call_tool(
            "get_shipping_quote", {"destination_zip": "94103", "weight_grams": 2000}
        )
        assert quote.structured_content == {"speed": "ground", "price_cents": 720}
        read = await resolve_tool(c, "manage_notes", {"action": "read", "order_id": "o-500"})
        assert read.read_only and not read.destructive  # tool resolution, handshake-era stdio


@pytest.mark.slow  # the walkthrough and its stdio server as processes
def test_walkthrough_runs_as_the_readme_says() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "walkthrough.py")],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "TOOL_DESCRIPTION_REQUIRED" in out
    assert "is_error=False: refunded 2500 cents" in out
    assert "fewer" in out
    # tool resolution over stdio (2026-07-28): a read of the multi-action tool is read-only
    assert 'action=read: {"readOnlyHint": true, "destructiveHint": false' in out
    assert 'action=delete: {"readOnlyHint": false, "destructiveHint": true' in out
