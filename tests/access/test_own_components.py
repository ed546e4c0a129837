"""Our own components (the ``describe_tools`` bridge, the ``run_tool`` dispatch bridge, the
descriptions resource) are recognised by what survives a copy, not by identity (#27).

FastMCP's ``ResponseCachingMiddleware`` behind ours (the README's order) hands back tools
rebuilt from its cache; recognised by identity, our bridges were taken for a user's tools:
every uncapped listing carried ``run_tool`` and the bridge's ``groups`` argument.
"""

from __future__ import annotations

from typing import Any

import mcp_types as mt
import pytest
from fastmcp import Client
from fastmcp.server.middleware.caching import ResponseCachingMiddleware

from tests.conftest import ERAS, Era, build_server, connect


def dumped(items: list[Any]) -> list[dict[str, Any]]:
    return [item.model_dump(mode="json", exclude_none=True) for item in items]


async def listings(client: Client[Any]) -> dict[str, list[dict[str, Any]]]:
    return {"tools": dumped(await client.list_tools()),
            "resources": dumped(await client.list_resources()),
            "templates": dumped(await client.list_resource_templates()),
            "prompts": dumped(await client.list_prompts())}


@pytest.mark.parametrize("client_name", ["some-agent", "claude-code"])  # progressive, full
@pytest.mark.parametrize("era", ERAS)
async def test_the_listing_through_a_response_cache_equals_the_listing_without_one(
    era: Era, client_name: str,
) -> None:
    plain = build_server()
    cached = build_server()
    cached.add_middleware(ResponseCachingMiddleware())
    info = mt.Implementation(name=client_name, version="1")
    async with (connect(plain, era, client_info=info) as direct,
                connect(cached, era, client_info=info) as through_cache):
        expected = await listings(direct)
        for _ in range(2):  # the first listing fills the cache, the second is served by it
            assert await listings(through_cache) == expected
    names = [t["name"] for t in expected["tools"]]
    assert "run_tool" not in names
    assert ("describe_tools" in names) == (client_name != "claude-code")
