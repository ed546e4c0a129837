"""Bad ``?tools=`` queries each get the specified answer, never an exception.

Driven through the low-level ``mcp.ClientSession`` (``client.session``), which sends the
URI string exactly as given, over streamable HTTP on 127.0.0.1 in both eras.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.client.session import ClientSession

from fastmcp_progressive import DESCRIPTIONS_URI, AddedComponents
from fastmcp_progressive.disclosure.describer import parse_selection, selection_from_names
from fastmcp_progressive.payloads import UNKNOWN_TOOL_HINT
from tests.conftest import ERAS, Era, build_server, connect, gated, read_json, serve_http
from tests.servers import ADD_TYPED

AVAILABLE = ["add", "echo", "shout"]


async def raw_read(session: ClientSession, query: str) -> Any:
    result = await session.read_resource(DESCRIPTIONS_URI + query)
    assert len(result.contents) == 1
    content = result.contents[0]
    assert content.uri == DESCRIPTIONS_URI + query  # echoed verbatim
    return json.loads(content.text)  # type: ignore[union-attr]


CASES: list[tuple[str, Any]] = [
    ("", "MISSING_TOOL_SELECTION"),
    ("?tools=", "MISSING_TOOL_SELECTION"),
    ("?tools=,,%20, ", "MISSING_TOOL_SELECTION"),
    ("?other=add", "MISSING_TOOL_SELECTION"),
    ("?tools=nope", {"nope": "unknown"}),
    ("?tools=../../etc/passwd", {"../../etc/passwd": "unknown"}),
    ("?tools=..%2F..%2Fetc%2Fpasswd", {"../../etc/passwd": "unknown"}),
    ("?tools=%2Fetc%2Fpasswd", {"/etc/passwd": "unknown"}),
    ("?tools=%C3%A9cho,%E2%9C%93", {"écho": "unknown", "✓": "unknown"}),
    ("?tools=add%2Cecho", {"add,echo": "unknown"}),
    ("?tools=add,echo", {"add": "ok", "echo": "ok"}),
    ("?tools=%20add%20,add,ADD", {"add": "ok", "ADD": "unknown"}),
    ("?tools=add&tools=echo", {"add": "ok", "echo": "ok"}),
    ("?tools=%FF%FE", {"\ufffd\ufffd": "unknown"}),
    ("?tools=a%00b", {"a\x00b": "unknown"}),
    ("?tools=" + ",".join(f"t{i}" for i in range(10_000)), "TOO_MANY_TOOLS"),
    ("?tools=" + "x" * 70_000, "QUERY_TOO_LONG"),
]


@pytest.mark.parametrize("era", ERAS)
async def test_bad_queries_over_low_level_session(era: Era) -> None:
    server = build_server(auth=True)
    async with serve_http(server) as url, connect(url, era, token="alice-token") as client:
        session = client.session
        for query, expected in CASES:
            body = await raw_read(session, query)
            label = query[:60]
            if isinstance(expected, str):
                assert body["error"]["code"] == expected, label
                if expected == "MISSING_TOOL_SELECTION":
                    assert body["error"]["available_tools"] == AVAILABLE
                continue
            assert list(body) == list(expected), label
            for name, outcome in expected.items():
                if outcome == "ok":
                    assert body[name]["name"] == name, label
                else:
                    assert body[name] == {
                        "error": f"Tool '{name}' not found",
                        "message": UNKNOWN_TOOL_HINT,
                        "available_tools": body[name]["available_tools"],
                    }, label
                    assert set(body[name]["available_tools"]) <= set(AVAILABLE), label
        # the server still serves normally afterwards, and nothing bad was granted
        refused = await session.call_tool("shout", {"text": "x"})
        assert refused.is_error
        assert refused.structured_content["error"]["code"] == "TOOL_DESCRIPTION_REQUIRED"  # type: ignore[index]


@pytest.mark.parametrize("era", ERAS)
async def test_low_level_session_sees_spec_wire_shapes(era: Era) -> None:
    server = build_server(auth=True)
    async with serve_http(server) as url, connect(url, era, token="alice-token") as client:
        session = client.session
        listed = await session.list_tools()
        wire = listed.model_dump(by_alias=True, exclude_none=True, mode="json")["tools"]
        assert wire[0] == {
            "name": "add",
            "description": "Add two integers.",
            "inputSchema": ADD_TYPED,
        }
        refused = await session.call_tool("add", {"a": 1, "b": 2})
        dumped = refused.model_dump(by_alias=True, exclude_none=True, mode="json")
        assert dumped["isError"] is True
        assert (
            dumped["structuredContent"]["error"]["resource_uri"] == f"{DESCRIPTIONS_URI}?tools=add"
        )
        assert json.loads(dumped["content"][0]["text"]) == dumped["structuredContent"]
        await raw_read(session, "?tools=add")
        accepted = await session.call_tool("add", {"a": 1, "b": 2})
        assert not accepted.is_error


async def test_max_tools_per_read_is_configurable() -> None:
    server = build_server(added=AddedComponents(max_tools_per_read=2))
    async with connect(server, "legacy") as client:
        body = await raw_read(client.session, "?tools=add,echo,shout")
    assert body["error"] == {
        "code": "TOO_MANY_TOOLS",
        "message": body["error"]["message"],
        "limit": 2,
    }
    assert "3 tools" in body["error"]["message"]


async def test_a_fragment_is_not_a_query_and_grants_nothing() -> None:
    async with connect(build_server(), "legacy") as c:
        body = await read_json(c, f"{DESCRIPTIONS_URI}#?tools=add")
        assert body["error"]["code"] == "MISSING_TOOL_SELECTION"
        assert await gated(c, "add")


def test_blank_names_count_toward_no_limit() -> None:
    blanks = ",".join(["%20"] * 40 + ["add"])
    assert parse_selection(f"{DESCRIPTIONS_URI}?tools={blanks}", limit=32).names == ("add",)
    assert selection_from_names([" "] * 40 + ["add"], limit=32).names == ("add",)
    assert selection_from_names([f"t{i}" for i in range(33)], limit=32).names == ()
