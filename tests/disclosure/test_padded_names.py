"""A tool named with leading or trailing spaces is unlocked through its refusal's own
``resource_uri`` and ``tool_call``: the URI percent-encodes the spaces and the read keeps
them, while a name typed with stray spaces still finds the plain tool."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastmcp.tools.base import Tool

from fastmcp_progressive.disclosure.describer import parse_selection
from fastmcp_progressive.payloads import resource_uri_for
from tests.conftest import (
    ERAS,
    FOLLOWED_IN_MEMORY,
    Era,
    answer_of,
    build_server,
    connect,
    read_json,
)

PADDED = (" padded", "padded ", " both ends ")


def _server() -> Any:
    server = build_server()
    for name in PADDED:
        server.add_tool(Tool.from_function(lambda: "ran", name=name, description="Padded."))
    return server


def test_resource_uri_round_trips_every_name() -> None:
    for name in (*PADDED, "a,b", "100%", "x&tools=y", "é t", "\t"):
        selection = parse_selection(resource_uri_for([name]), limit=32)
        assert selection.names == ((name,) if name.strip() else ())


@pytest.mark.parametrize("era", FOLLOWED_IN_MEMORY)
@pytest.mark.parametrize("via", ["resource_uri", "tool_call"])
async def test_padded_tool_unlocks_through_its_refusal(era: Era, via: str) -> None:
    server = _server()
    async with connect(server, era) as c:
        await c.list_tools()
        for name in PADDED:
            refused = await c.call_tool(name, {}, raise_on_error=False)
            error = refused.structured_content["error"]  # type: ignore[index]
            assert error["code"] == "TOOL_DESCRIPTION_REQUIRED"
            if via == "resource_uri":
                body = await read_json(c, error["resource_uri"])
            else:
                call = error["tool_call"]
                body = answer_of(await c.call_tool(call["name"], call["arguments"]))
            assert list(body) == [name] and body[name]["name"] == name
        # a fresh client that only read (never refused) runs each padded tool at once
    async with connect(server, era) as c:
        await c.list_tools()
        for name in PADDED:
            await read_json(c, resource_uri_for([name]))
            ran = await c.call_tool(name, {}, raise_on_error=False)
            assert not ran.is_error, json.dumps(ran.structured_content)


@pytest.mark.parametrize("era", ERAS)
async def test_stray_spaces_still_find_the_plain_tool(era: Era) -> None:
    async with connect(build_server(), era) as c:
        await c.list_tools()
        body = await read_json(c, "resource:///tool_descriptions?tools=%20add%20,%20echo,shout%20")
        assert list(body) == ["add", "echo", "shout"]
        bridged = await c.call_tool("describe_tools", {"tools": [" add", "add "]})
        assert list(answer_of(bridged)) == ["add"]
        assert "error" in (await read_json(c, "resource:///tool_descriptions?tools=%20nosuch"))[
            "nosuch"]
