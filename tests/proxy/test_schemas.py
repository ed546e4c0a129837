"""The upstream's schemas through ``progressive_proxy``: as they are for a client served in
full (``$schema``, ``$defs``, ``additionalProperties``), inlined only when asked
(``dereference_schemas=True``, ``--dereference-schemas``). Before, the front always inlined
them (FastMCP's default), so a client opted out through ``full_clients`` did not get what
the plain server gives (the conformance suite's ``json-schema-2020-12``).
"""

from __future__ import annotations

import sys
from typing import Any

import mcp_types as mt
import pytest

from fastmcp_progressive import ClientSettings
from fastmcp_progressive.proxy.front import progressive_proxy
from fastmcp_progressive.proxy.gateway import progressive_gateway
from tests.conformance.fixture_server import JSON_SCHEMA_2020_12, fixture_server
from tests.conftest import ERAS, Era, connect

TOOL = "json_schema_2020_12_tool"
FULL = ClientSettings(full_clients=("schema-test",))


INFO = mt.Implementation(name="schema-test", version="1.0.0")


async def listed_schema(era: Era, **options: Any) -> dict[str, Any]:
    proxy = progressive_proxy(fixture_server(), **options)
    async with connect(proxy, era, client_info=INFO) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
    return tools[TOOL].input_schema


@pytest.mark.parametrize("era", ERAS)
async def test_a_client_served_in_full_gets_the_upstreams_schema_as_it_is(era: Era) -> None:
    assert await listed_schema(era, clients=FULL) == JSON_SCHEMA_2020_12


@pytest.mark.parametrize("era", ERAS)
async def test_dereferencing_is_there_when_asked(era: Era) -> None:
    schema = await listed_schema(era, clients=FULL, dereference_schemas=True)
    assert "$defs" not in schema
    assert schema["properties"]["address"] == JSON_SCHEMA_2020_12["$defs"]["address"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_progressive_listing_inlines_its_own(era: Era) -> None:
    """No dangling ``$ref``: the reduced schema reads the upstream's ``$defs`` itself."""
    schema = await listed_schema(era)
    assert "$ref" not in str(schema) and "$defs" not in schema
    assert schema["properties"]["address"] == {"type": "object"}


@pytest.mark.slow  # the fixture as a real upstream process
async def test_the_gateway_serves_the_upstreams_schema_as_it_is() -> None:
    config = {"mcpServers": {"fx": {"command": sys.executable,
                                    "args": ["-m", "tests.conformance.fixture_server"]}}}
    async with connect(progressive_gateway(config, clients=FULL), "legacy",
                       client_info=INFO) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
    assert tools[f"fx_{TOOL}"].input_schema == JSON_SCHEMA_2020_12
