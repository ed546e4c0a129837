"""One upstream session, several callers: what the upstream asks or says reaches only its own.

A command upstream runs once and one session serves every front caller (``upstream.py``).
The upstream's own requests (elicitation, sampling) and notifications (log messages,
progress) carry nothing on stdio that names the tool call they belong to. FastMCP's proxy
client relayed each of them to whichever front request had last used the session, so over
HTTP, with two callers' tool calls in flight, caller B was asked caller A's question and B's
answer went into A's tool. Here a real streamable-HTTP front on 127.0.0.1 serves two
authenticated callers whose calls are held (a barrier of files the upstream's tool writes,
no sleeps) until both are in flight on the one upstream session.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp.types as mt
import pytest
from fastmcp import Client, Context, FastMCP
from fastmcp.client.transports import FastMCPTransport
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.providers.proxy import FastMCPProxy

from fastmcp_progressive.proxy.forwarding import RoutingProxyClient
from fastmcp_progressive.proxy.front import check_upstream, progressive_proxy
from fastmcp_progressive.proxy.upstream import Upstream
from tests.conftest import TOKENS, connect, serve_http

ASKING_UPSTREAM = """
import time
from pathlib import Path

import anyio
import mcp.types as mt
from fastmcp import Context, FastMCP

mcp = FastMCP("asks")


async def all_in_flight(barrier: str, who: str, party: int) -> None:
    '''Hold this call until ``party`` calls have reached the barrier folder.'''
    folder = Path(barrier)
    (folder / who).touch()
    deadline = time.monotonic() + 30
    while len(list(folder.iterdir())) < party:  # a poll with a deadline, not a timed wait
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {len(list(folder.iterdir()))} of {party} calls came")
        await anyio.sleep(0.01)


@mcp.tool
async def ask(who: str, ctx: Context, barrier: str = "", party: int = 2) -> dict:
    '''Log, report progress, elicit and sample on behalf of ``who``.'''
    if barrier:
        await all_in_flight(barrier, who, party)
    await ctx.info(f"log for {who}")
    await ctx.report_progress(1, 2, f"progress for {who}")
    out = {}
    try:
        answer = await ctx.elicit(f"question for {who}", str)
        out["elicit"] = answer.data if answer.action == "accept" else answer.action
    except Exception as exc:
        out["elicit"] = f"refused: {exc}"
    try:
        sampled = await ctx.session.create_message(
            messages=[mt.SamplingMessage(role="user", content=mt.TextContent(
                type="text", text=f"prompt for {who}"))],
            max_tokens=20, related_request_id=ctx.request_id)
        out["sample"] = sampled.content.text
    except Exception as exc:
        out["sample"] = f"refused: {exc}"
    return out


mcp.run(show_banner=False)
"""

CALLERS = {"alice": "alice-token", "bob": "bob-token"}


class Seen:
    """What each front caller's handlers received, by caller."""

    def __init__(self) -> None:
        self.asked: dict[str, list[str]] = defaultdict(list)
        self.prompts: dict[str, list[str]] = defaultdict(list)
        self.logs: dict[str, list[str]] = defaultdict(list)
        self.progress: dict[str, list[str]] = defaultdict(list)

    def handlers(self, me: str) -> dict[str, Any]:
        async def elicit(message: str, response_type: Any, params: Any, context: Any) -> Any:
            self.asked[me].append(message)
            return f"answer from {me}"

        async def sample(messages: Any, params: Any, context: Any) -> str:
            self.prompts[me].append(messages[0].content.text)
            return f"sample from {me}"

        async def log(message: Any) -> None:
            if "for " in str(message.data):
                self.logs[me].append(str(message.data))

        return {"elicitation_handler": elicit, "sampling_handler": sample, "log_handler": log}

    def progress_of(self, me: str) -> Any:
        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            self.progress[me].append(message or "")

        return on_progress

    def only_own(self, me: str, who: str) -> None:
        """Everything caller ``me`` saw was about a call of ``who`` (``me`` or its own)."""
        for kind, seen in (("elicitation", self.asked[me]), ("sampling", self.prompts[me]),
                           ("log", self.logs[me]), ("progress", self.progress[me])):
            strangers = [text for text in seen if f"for {who}" not in text]
            assert not strangers, f"{me} received another caller's {kind}: {strangers}"


def own_or_refused(result: dict[str, str], me: str) -> None:
    """The tool got ``me``'s own answer, or a refusal that says why; never another's."""
    for kind, answer in (("elicit", f"answer from {me}"), ("sample", f"sample from {me}")):
        got = result[kind]
        if got == answer:
            continue
        assert got.startswith("refused:"), f"{me}'s tool got {got!r} for its {kind}"
        assert "cannot tell which" in got and "in flight" in got, got
        assert "2 clients" not in got  # how many others call is not the caller's to learn


@pytest.mark.slow  # an upstream process behind a real HTTP front
async def test_two_callers_never_get_each_others_upstream_requests_or_logs(
    tmp_path: Path,
) -> None:
    app = tmp_path / "asks.py"
    app.write_text(ASKING_UPSTREAM, encoding="utf-8")
    proxy = progressive_proxy([sys.executable, str(app)], startup_timeout=30,
                              exempt_tools=["ask"], auth=StaticTokenVerifier(tokens=TOKENS))
    assert await check_upstream(proxy) == 1  # one process, one session, started up front
    seen = Seen()
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(serve_http(proxy))
        clients: dict[str, Client[Any]] = {
            me: await stack.enter_async_context(
                connect(url, "legacy", token=token, **seen.handlers(me)))
            for me, token in CALLERS.items()
        }
        results: dict[str, dict[str, str]] = {}

        async def call(me: str, who: str, barrier: Path | None, party: int = 2) -> None:
            arguments: dict[str, Any] = {"who": who}
            if barrier is not None:
                arguments |= {"barrier": str(barrier), "party": party}
            with anyio.fail_after(60):
                result = await clients[me].call_tool("ask", arguments,
                                                     progress_handler=seen.progress_of(me))
            results[who] = result.structured_content or {}

        # Both callers' calls held on the upstream until both are in flight.
        together = tmp_path / "together"
        together.mkdir()
        async with anyio.create_task_group() as group:
            for me in CALLERS:
                group.start_soon(call, me, me, together)
        for me in CALLERS:
            seen.only_own(me, me)
        # the first to ask did so with both in flight: refused, not guessed
        assert any(results[me]["elicit"].startswith("refused:") for me in CALLERS)
        for me in CALLERS:
            own_or_refused(results[me], me)
            # progress names its request (its token): it reaches its own caller, always
            assert seen.progress[me] == [f"progress for {me}"]

        # One caller alone: everything reaches it (the bookkeeping of the two is gone).
        await call("alice", "alice", None)
        assert results["alice"] == {"elicit": "answer from alice", "sample": "sample from alice"}
        assert seen.asked["alice"][-1] == "question for alice"
        assert seen.logs["alice"][-1].count("log for alice") == 1
        assert not [text for text in seen.asked["bob"] if "alice" in text]

        # Two calls of the same caller (one session) in flight: still that caller's own.
        same = tmp_path / "same"
        same.mkdir()
        async with anyio.create_task_group() as group:
            for n in (1, 2):
                group.start_soon(call, "bob", f"bob-{n}", same)
        for n in (1, 2):
            assert results[f"bob-{n}"] == {"elicit": "answer from bob",
                                           "sample": "sample from bob"}
        seen.only_own("bob", "bob")
        seen.only_own("alice", "alice")


# -- the same rules in one process (inner loop): an in-memory upstream, two in-memory sessions --
def held_upstream(party: int) -> FastMCP:
    """``ask`` holds each call until ``party`` calls are in (an event), then asks."""
    mcp = FastMCP("asks")
    arrived: list[str] = []
    everyone = anyio.Event()

    @mcp.tool
    async def ask(who: str, ctx: Context) -> dict[str, str]:
        arrived.append(who)
        if len(arrived) >= party:
            everyone.set()
        await everyone.wait()
        await ctx.info(f"log for {who}")
        out: dict[str, str] = {}
        try:
            answer = await ctx.elicit(f"question for {who}", str)
            out["elicit"] = str(answer.data)
        except Exception as exc:
            out["elicit"] = f"refused: {exc}"
        try:
            sampled = await ctx.session.create_message(
                messages=[mt.SamplingMessage(role="user", content=mt.TextContent(
                    type="text", text=f"prompt for {who}"))],
                max_tokens=20, related_request_id=ctx.request_id)
            out["sample"] = sampled.content.text  # type: ignore[union-attr]
        except Exception as exc:
            out["sample"] = f"refused: {exc}"
        return out

    return mcp


async def test_in_memory_callers_get_only_their_own_and_a_lone_caller_gets_everything() -> None:
    upstream = Upstream("http://upstream.invalid/mcp", name="asks",
                        transport=FastMCPTransport(held_upstream(party=2)))
    proxy = FastMCPProxy(client_factory=upstream.connected, name="front")
    seen = Seen()
    results: dict[str, dict[str, str]] = {}
    try:
        async with AsyncExitStack() as stack:
            clients = {me: await stack.enter_async_context(
                Client(proxy, mode="legacy", **seen.handlers(me))) for me in CALLERS}

            async def call(me: str) -> None:
                with anyio.fail_after(20):
                    result = await clients[me].call_tool("ask", {"who": me})
                results[me] = result.structured_content or {}

            async with anyio.create_task_group() as group:
                for me in CALLERS:
                    group.start_soon(call, me)
            for me in CALLERS:
                seen.only_own(me, me)
            assert any(results[me]["elicit"].startswith("refused:") for me in CALLERS)
            for me in CALLERS:
                own_or_refused(results[me], me)
            client = await upstream.connected()
            assert isinstance(client, RoutingProxyClient) and client.callers_in_flight == 0
            await call("alice")  # the barrier is open: alone, everything reaches alice
            assert results["alice"] == {"elicit": "answer from alice",
                                        "sample": "sample from alice"}
            assert seen.logs["alice"][-1].count("log for alice") == 1
    finally:
        await upstream.close()
