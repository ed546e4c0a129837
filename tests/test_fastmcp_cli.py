"""FastMCP's own CLI (``fastmcp list``, ``fastmcp call``) against the demo server, run for real.

Each ``fastmcp call`` is a new client: over stdio it even starts the server anew (``fastmcp
run examples/demo_server.py``), lists the tools and calls one, so no grant can follow it to
a second command. The host table marks that client (``fastmcp`` over stdio, with the
CLI's elicitation handler) ``judged_by_arguments``:
its calls are judged by their arguments. Over 2026-07-28 HTTP without auth it is a caller
the server cannot follow anyway. ``key=value`` arguments are typed from the listed schema
(every argument with its type at the default level), and arguments FastMCP's own
validation accepts (``"500"`` for an integer) are never refused by ours.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from fastmcp.client.transports import StdioTransport

from fastmcp_progressive import ListingSettings, ProgressiveDisclosure
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.modes import ModePolicy
from tests.conftest import connect, gated, serve_http
from tests.hosts.serve import demo_server

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo_server.py"
BIN = Path(sys.executable).parent
BOUND = 60.0  # seconds one command may take before the test reports it stuck


async def fastmcp(*args: str) -> tuple[int, str]:
    """Run ``fastmcp ARGS`` (this environment's) and answer its exit status and output."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "COLUMNS": "400", "NO_COLOR": "1"}
    process = await asyncio.create_subprocess_exec(
        str(BIN / "fastmcp"), *args, env=env, cwd=str(ROOT),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(process.communicate(), BOUND)
    assert process.returncode is not None
    return process.returncode, out.decode("utf-8", "replace")


def _quote(output: str) -> dict[str, object]:
    """The JSON object a ``--json`` call printed (FastMCP's structured result)."""
    data = json.loads(output[output.index("{"):])
    structured = data.get("structured_content") or data.get("structuredContent") or data
    assert isinstance(structured, dict)
    return structured


async def test_fastmcp_list_over_stdio_shows_every_argument_with_its_type() -> None:
    code, out = await fastmcp("list", str(DEMO))
    assert code == 0, out
    assert "get_shipping_quote(destination_zip: str, weight_grams: int" in out
    assert "describe_tools(" in out


async def test_fastmcp_call_over_stdio_runs_and_teaches_on_bad_arguments() -> None:
    code, out = await fastmcp("call", str(DEMO), "get_shipping_quote",
                              "destination_zip=12345", "weight_grams=500", "--json")
    assert code == 0, out  # refused on every run before: a new session per command
    assert "price_cents" in out
    code, out = await fastmcp("call", str(DEMO), "get_shipping_quote",
                              "destination_zip=123", "weight_grams=500")
    assert code == 1 and "TOOL_DESCRIPTION_REQUIRED" in out  # the definition, taught
    assert "invalid_arguments" in out


async def test_fastmcp_call_and_list_over_http() -> None:
    server = demo_server()
    async with serve_http(server) as url:
        code, out = await fastmcp("list", url, "--auth", "none")
        assert code == 0 and "weight_grams: int" in out, out
        code, out = await fastmcp("call", url, "get_shipping_quote", "destination_zip=12345",
                                  "weight_grams=500", "--auth", "none", "--json")
        assert code == 0 and "price_cents" in out, out
        # a string FastMCP's own (lax) validation turns into an integer: not refused by ours
        arguments = json.dumps({"destination_zip": "12345", "weight_grams": "500"})
        code, out = await fastmcp("call", url, "get_shipping_quote", "--input-json",
                                  arguments, "--auth", "none", "--json")
        assert code == 0 and "price_cents" in out, out


def _documented(bridge: str) -> list[str]:
    """The ``fastmcp call server.py <bridge> ...`` command docs/callers-and-hosts.md shows,
    as its words, without ``fastmcp call server.py``."""
    page = (ROOT / "docs" / "callers-and-hosts.md").read_text(encoding="utf-8")
    prefix = f"fastmcp call server.py {bridge} "
    lines = [line for line in page.splitlines() if line.startswith(prefix)]
    assert lines, f"docs/callers-and-hosts.md shows no `{prefix}...`"
    return shlex.split(lines[0])[3:]


async def test_an_unlisted_tool_is_reached_the_way_the_docs_show() -> None:
    """#34: ``fastmcp call server.py <unlisted tool>`` answers "not found. Did you mean"
    (the CLI looks the name up in the listing), and no page showed the way in."""
    server = demo_server()
    server.middleware.clear()  # the demo's own, for one with a cap the demo's tools exceed
    server.add_middleware(ProgressiveDisclosure(listing=ListingSettings(max_tools=3)))
    async with serve_http(server) as url:
        code, out = await fastmcp("list", url, "--auth", "none")
        assert code == 0 and "run_tool(" in out and "get_shipping_quote(" not in out, out
        code, out = await fastmcp("call", url, "get_shipping_quote", "destination_zip=12345",
                                  "weight_grams=500", "--auth", "none")
        assert code == 1 and "not found" in out, out
        code, out = await fastmcp("call", url, *_documented("describe_tools"),
                                  "--auth", "none")
        assert code == 0 and "weight_grams" in out, out
        code, out = await fastmcp("call", url, *_documented("run_tool"), "--auth", "none",
                                  "--json")
        assert code == 0 and "price_cents" in out, out


async def test_other_stdio_clients_and_plain_fastmcp_clients_stay_gated() -> None:
    """Only FastMCP's CLI (its name, a real stdio pipe, an elicitation handler) is judged per
    call: a host with its own name over stdio, a plain FastMCP ``Client`` over stdio and
    FastMCP clients in memory keep the spec's gate."""
    import mcp_types as mt

    server_command = [str(BIN / "fastmcp"), "run", str(DEMO), "--no-banner"]
    other = mt.Implementation(name="some-agent", version="1.0")
    transport = StdioTransport(server_command[0], server_command[1:], cwd=str(ROOT))
    async with connect(transport, "legacy", client_info=other) as client:  # type: ignore[arg-type]
        await client.list_tools()  # a host that keeps its session lists first
        assert await gated(client, "get_order", {"order_id": "o-500"})
    async with connect(StdioTransport(server_command[0], server_command[1:], cwd=str(ROOT)),
                       "legacy") as client:  # type: ignore[arg-type]  # FastMCP's own name
        await client.list_tools()
        assert await gated(client, "get_order", {"order_id": "o-500"})
    policy = ModePolicy()
    cli = frozenset({"elicitation"})
    memory = Caller(kind="stream", era="modern", key="s", client_name="fastmcp",
                    capabilities=cli)
    plain = Caller(kind="stream", era="modern", key="s", client_name="fastmcp",
                   channel="stdio")
    stdio = Caller(kind="stream", era="modern", key="s", client_name="fastmcp",
                   channel="stdio", capabilities=cli)
    assert not policy.judged_by_arguments(memory) and not policy.judged_by_arguments(plain)
    assert policy.judged_by_arguments(stdio)
