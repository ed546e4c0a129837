"""Spec v2.1 section 6.3: an unknown name's error entry carries ``available_tools``.

Bounded (at most ten names whatever the catalog), useful (the caller's visible names closest
to what was asked, so a typo finds its tool) and safe (never a name the caller may not see;
a hidden name is answered exactly like one that does not exist). Through real clients, in
memory and over streamable HTTP, both protocol eras, the resource and the bridge tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp_types as mt
import pytest
from fastmcp import FastMCP
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool

from fastmcp_progressive import ProgressiveDisclosure
from fastmcp_progressive.disclosure.suggestions import MAX_SUGGESTIONS, Suggestions
from tests.conftest import (
    ERAS,
    TRANSPORTS,
    Era,
    Transport,
    answer_of,
    build_server,
    clients,
    connect,
    fetch,
    serve_http,
)
from tests.servers import add_admin_only_tool, add_numbered_tools


def _entry(body: dict[str, Any], name: str) -> dict[str, Any]:
    entry = body[name]
    assert entry["error"] == f"Tool '{name}' not found"
    return entry  # type: ignore[no-any-return]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
async def test_a_typo_finds_its_tool(transport: Transport, era: Era) -> None:
    server = build_server()
    async with clients(server, transport, era) as (c,):
        body = await fetch(c, "shuot", "ADD", "ehco")
        assert _entry(body, "shuot")["available_tools"][0] == "shout"
        assert _entry(body, "ADD")["available_tools"][0] == "add"
        assert _entry(body, "ehco")["available_tools"][0] == "echo"
        bridged = await c.call_tool("describe_tools", {"tools": ["Shout"]})
        suggested = answer_of(bridged)["Shout"]["available_tools"]
        assert suggested[0] == "shout"
        assert "describe_tools" not in suggested  # the bridge is not a tool worth describing


def _wide_server(tools: int, **options: Any) -> FastMCP:
    server = build_server(**options)
    add_numbered_tools(server, tools, "report_{:04d}", "Report number {}.")
    return server


@pytest.mark.parametrize("era", ERAS)
async def test_at_most_ten_names_whatever_the_catalog(era: Era) -> None:
    server = _wide_server(300)
    async with connect(server, era) as c:
        body = await fetch(c, "report_0o42", "zzz")
    typo = _entry(body, "report_0o42")["available_tools"]
    assert len(typo) == MAX_SUGGESTIONS == 10
    assert typo[0] == "report_0042"
    assert len(_entry(body, "zzz")["available_tools"]) == 10


def _hiding_server(*, with_secret: bool) -> FastMCP:
    """alice sees add/echo/shout and ``wipe_cache``; ``wipe`` (auth: admin) and
    ``wipe_all`` (a listing filter) are hidden from her, when they exist at all."""
    server = build_server(auth=True)

    @server.tool
    def wipe_cache() -> str:
        """Clear the cache."""
        return "ok"

    if with_secret:
        add_admin_only_tool(server)

        @server.tool
        def wipe_all() -> str:
            """Delete everything, everywhere."""
            return "wiped"

        server.add_middleware(HideWipeAll())
    return server


class HideWipeAll(Middleware):
    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        return [t for t in await call_next(context) if t.name != "wipe_all"]


@pytest.mark.parametrize("era", ERAS)
async def test_hidden_names_are_never_suggested_and_answer_like_nonexistent_ones(
    era: Era,
) -> None:
    """The same read against a server holding the hidden tools and one without them gets
    the same bytes: nothing tells a hidden name from a name that does not exist."""
    asked = ("wipe", "wipe_all", "wipe_al", "wip", "wipe_cach")
    answers = []
    for with_secret in (True, False):
        server = _hiding_server(with_secret=with_secret)
        async with serve_http(server) as url, connect(url, era, token="alice-token") as c:
            body = await fetch(c, *asked)
        for name in asked:
            suggested = _entry(body, name)["available_tools"]
            assert not {"wipe", "wipe_all"} & set(suggested)
            assert suggested[0] == "wipe_cache"
        answers.append(body)
    assert answers[0] == answers[1]


class CountingLookups(FastMCP):
    """A server that counts FastMCP's lookups of names it lacks (the costly ones)."""

    misses = 0

    async def get_tool(self, name: str, *args: Any, **kwargs: Any) -> Any:
        tool = await super().get_tool(name, *args, **kwargs)
        if tool is None:
            type(self).misses += 1
        return tool


class HideSecret(Middleware):
    async def on_list_tools(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Sequence[Tool]]) -> Sequence[Tool]:
        return [t for t in await call_next(context) if t.name != "secret"]


@pytest.mark.parametrize("route", ["run_tool", "describe_tools"])
async def test_a_name_a_filter_hides_costs_the_lookups_an_unknown_name_costs(route: str) -> None:
    """#33: FastMCP finds an existing name fast and an unknown one by scanning everything;
    a name another middleware's listing filter hides answered 21-23% faster than an absent
    one. It now costs the same lookups, so timing tells neither apart."""
    server = CountingLookups("s")
    for i in range(60):
        server.tool(lambda: 1, name=f"t{i}")
    server.tool(lambda: 1, name="secret")
    server.add_middleware(ProgressiveDisclosure())
    server.add_middleware(HideSecret())
    async with connect(server, "legacy") as client:
        await client.list_tools()
        misses: dict[str, int] = {}
        for name in ("secret", "absent"):
            arguments = {"name": name} if route == "run_tool" else {"tools": [name]}
            CountingLookups.misses = 0
            answer = await client.call_tool(route, arguments, raise_on_error=False)
            misses[name] = CountingLookups.misses
            assert "not found" in answer.content[0].text  # type: ignore[union-attr]
    assert misses["secret"] == misses["absent"] >= 1


async def test_disabled_tools_are_not_suggested() -> None:
    server = build_server()
    server.disable(names={"shout"})
    async with connect(server, "modern") as c:
        body = await fetch(c, "shout", "shou")
    assert "shout" not in body["shout"]["available_tools"]
    assert body["shout"] == body["shou"] | {"error": "Tool 'shout' not found"}


async def test_suggestions_under_a_mount_carry_the_prefix() -> None:
    parent = FastMCP("parent")
    parent.mount(build_server(), "kid")
    async with connect(parent, "legacy") as c:
        await c.list_tools()
        result = await c.call_tool("kid_describe_tools", {"tools": ["kid_shuot"]})
    assert answer_of(result)["shuot"]["available_tools"][0] == "kid_shout"


def closest(asked: str, visible: list[str]) -> list[str]:
    """A fresh index's answer (nothing kept from an earlier listing)."""
    return Suggestions().closest(asked, visible)


def test_ranking_rules() -> None:
    names = ["list_invoices", "create_invoice", "delete_invoice", "ping"]
    assert closest("create_invoce", names)[0] == "create_invoice"
    assert closest("Create-Invoice", names)[0] == "create_invoice"
    assert closest("invoice", names)[:3] != ["ping"]
    assert closest("qqqq", names) == names  # nothing in common: listing order
    assert closest("x", []) == []
    assert closest("x" * 100_000, names) == closest("x" * 64, names)  # cut, bounded
    only_visible = Suggestions()
    for asked in ("ping", "pin", "secret"):
        assert set(only_visible.closest(asked, names)) <= set(names)


def test_a_kept_index_answers_as_a_fresh_one() -> None:
    names = [f"tool_{i}" for i in range(500)]
    kept = Suggestions()
    for asked in ("tool_42", "tol_42", "tool_42"):
        assert kept.closest(asked, names) == closest(asked, names)
    assert kept.closest("tool_42", names[:100]) == closest("tool_42", names[:100])


def test_middleware_keeps_its_own_index() -> None:
    first, second = ProgressiveDisclosure(), ProgressiveDisclosure()
    assert isinstance(first.describer.suggestions, Suggestions)  # the describe path's
    assert first.describer.suggestions is not second.describer.suggestions
