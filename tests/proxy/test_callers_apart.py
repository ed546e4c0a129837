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

import json
import sys
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as mt
import pytest
from fastmcp import Client, Context, FastMCP
from fastmcp.client.transports import FastMCPTransport
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.server.providers.proxy import FastMCPProxy, ProxyClient

from fastmcp_progressive.proxy.forwarding import RoutingProxyClient
from fastmcp_progressive.proxy.front import check_upstream, progressive_proxy
from fastmcp_progressive.proxy.gateway import progressive_gateway, upstreams_of
from fastmcp_progressive.proxy.upstream import Upstream
from tests.conftest import TOKENS, connect, serve_http
from tests.waiting import PATIENCE, until

ASKING_UPSTREAM = """
import json
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
    deadline = time.monotonic() + 60
    while len(list(folder.iterdir())) < party:  # a poll with a deadline, not a timed wait
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {len(list(folder.iterdir()))} of {party} calls came")
        await anyio.sleep(0.01)


async def wait_for(path: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():  # a poll with a deadline, not a timed wait
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path} never came")
        await anyio.sleep(0.01)


@mcp.tool
async def ask(who: str, ctx: Context, barrier: str = "", party: int = 2) -> dict:
    '''Log, report progress, elicit and sample on behalf of ``who``.'''
    if barrier:
        await all_in_flight(barrier, who, party)
    return await asks(who, ctx)


@mcp.tool
async def ask_later(who: str, folder: str, ctx: Context) -> dict:
    '''Work on after the caller gave up (as a server that ignores cancellation does):
    once <folder>/go-<who> exists, ask for ``who``; the outcome goes to <folder>/<who>.json.'''
    here = Path(folder)
    (here / f"arrived-{who}").touch()
    with anyio.CancelScope(shield=True):
        await wait_for(here / f"go-{who}")
        out = await asks(who, ctx)
        (here / f"{who}.json").write_text(json.dumps(out))
    return out


async def asks(who: str, ctx: Context) -> dict:
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
    assert await check_upstream(proxy) == 2  # one process, one session, started up front
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
async def log_elicit_and_sample(who: str, ctx: Context) -> dict[str, str]:
    """What an in-memory upstream's ``ask`` does once released: a log line, an elicitation
    and a sampling request, each naming ``who``; a refusal is recorded as the answer."""
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
        return await log_elicit_and_sample(who, ctx)

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
                with anyio.fail_after(PATIENCE):
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
            assert isinstance(client, RoutingProxyClient) and client.outstanding == 0
            await call("alice")  # the barrier is open: alone, everything reaches alice
            assert results["alice"] == {"elicit": "answer from alice",
                                        "sample": "sample from alice"}
            assert seen.logs["alice"][-1].count("log for alice") == 1
    finally:
        await upstream.close()


# -- a call its client gave up on: the upstream still works on it, still asks for it ----------
class Stage:
    """An upstream whose ``ask`` works on after its caller gave up (shielded, as a server
    that ignores cancellation does), each step held by the test."""

    def __init__(self) -> None:
        self.arrived = {me: anyio.Event() for me in CALLERS}
        self.go = {me: anyio.Event() for me in CALLERS}
        self.finished = {me: anyio.Event() for me in CALLERS}
        self.results: dict[str, dict[str, str]] = {}
        self.server = FastMCP("asks")

        @self.server.tool
        async def ask(who: str, ctx: Context) -> dict[str, str]:
            self.arrived[who].set()
            with anyio.CancelScope(shield=True):
                await self.go[who].wait()
                out = await log_elicit_and_sample(who, ctx)
            self.results[who] = out
            self.finished[who].set()
            return out


class FrontEnds(Middleware):
    """Sets ``ended[who]`` when the front stops serving ``who``'s call (answered or not)."""

    def __init__(self) -> None:
        self.ended = {me: anyio.Event() for me in CALLERS}

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        try:
            return await call_next(context)
        finally:
            self.ended[context.message.arguments["who"]].set()


async def test_a_call_its_client_gave_up_on_keeps_its_questions_from_the_next_caller() -> None:
    stage = Stage()
    upstream = Upstream("http://upstream.invalid/mcp", name="asks",
                        transport=FastMCPTransport(stage.server))
    proxy = FastMCPProxy(client_factory=upstream.connected, name="front")
    front = FrontEnds()
    proxy.add_middleware(front)
    seen = Seen()
    try:
        async with AsyncExitStack() as stack:
            stack.callback(lambda: [go.set() for go in stage.go.values()])  # on failure too
            clients = {me: await stack.enter_async_context(
                Client(proxy, mode="legacy", **seen.handlers(me))) for me in CALLERS}
            answers: dict[str, dict[str, str]] = {}

            async def call(me: str, scope: anyio.CancelScope) -> None:
                with scope:
                    result = await clients[me].call_tool("ask", {"who": me},
                                                         progress_handler=seen.progress_of(me))
                    answers[me] = result.structured_content or {}

            async with anyio.create_task_group() as group:
                alice_gives_up = anyio.CancelScope()
                group.start_soon(call, "alice", alice_gives_up)
                with anyio.fail_after(PATIENCE):
                    await stage.arrived["alice"].wait()
                alice_gives_up.cancel()  # alice's client stops waiting; the upstream works on
                with anyio.fail_after(PATIENCE):
                    await front.ended["alice"].wait()
                group.start_soon(call, "bob", anyio.CancelScope())
                with anyio.fail_after(PATIENCE):
                    await stage.arrived["bob"].wait()
                stage.go["alice"].set()  # the upstream asks for alice with bob's call in flight
                with anyio.fail_after(PATIENCE):
                    await stage.finished["alice"].wait()
                for kind in ("elicit", "sample"):
                    assert stage.results["alice"][kind].startswith("refused:"), stage.results
                    assert "more than one client" in stage.results["alice"][kind]
                seen.only_own("bob", "bob")
                client = await upstream.connected()
                assert isinstance(client, RoutingProxyClient)
                # alice's call was outstanding until the upstream answered it; now bob's alone
                await until(lambda: client.outstanding == 1, what="alice's call answered")
                stage.go["bob"].set()
            assert answers["bob"] == {"elicit": "answer from bob", "sample": "sample from bob"}
            assert "alice" not in answers
            seen.only_own("bob", "bob")
            assert len(seen.logs["bob"]) == 1 and "log for bob" in seen.logs["bob"][0]
            assert not seen.asked["alice"] and not seen.logs["alice"]
    finally:
        await upstream.close()


@pytest.mark.slow  # an upstream process behind a real HTTP gateway
async def test_over_http_an_abandoned_calls_questions_never_reach_the_next_caller(
    tmp_path: Path,
) -> None:
    """The issue's run: a gateway over HTTP, one stdio upstream; alice's client gives up
    on a call the upstream works on, bob calls, then the upstream asks and logs for alice."""
    app = tmp_path / "asks.py"
    app.write_text(ASKING_UPSTREAM, encoding="utf-8")
    folder = tmp_path / "stage"
    folder.mkdir()
    gateway = progressive_gateway(
        {"mcpServers": {"asks": {"command": sys.executable, "args": [str(app)]}}},
        startup_timeout=30, exempt_tools=["asks_ask_later"],
        auth=StaticTokenVerifier(tokens=TOKENS))
    front = FrontEnds()
    gateway.add_middleware(front)
    seen = Seen()
    async with AsyncExitStack() as stack:
        # whatever happens, the upstream's held calls end (the test's own clean-up)
        stack.callback(lambda: [(folder / f"go-{me}").touch() for me in CALLERS])
        url = await stack.enter_async_context(serve_http(gateway))
        clients: dict[str, Client[Any]] = {
            me: await stack.enter_async_context(
                connect(url, "legacy", token=token, **seen.handlers(me)))
            for me, token in CALLERS.items()
        }
        answers: dict[str, dict[str, str]] = {}

        async def call(me: str, scope: anyio.CancelScope) -> None:
            with scope:
                result = await clients[me].call_tool(
                    "asks_ask_later", {"who": me, "folder": str(folder)},
                    progress_handler=seen.progress_of(me))
                answers[me] = result.structured_content or {}

        async with anyio.create_task_group() as group:
            alice_gives_up = anyio.CancelScope()
            group.start_soon(call, "alice", alice_gives_up)
            await until(lambda: (folder / "arrived-alice").exists(), what="alice's call upstream")
            alice_gives_up.cancel()  # as alice's client timing out does
            with anyio.fail_after(PATIENCE):
                await front.ended["alice"].wait()
            group.start_soon(call, "bob", anyio.CancelScope())
            await until(lambda: (folder / "arrived-bob").exists(), what="bob's call upstream")
            (folder / "go-alice").touch()  # the upstream logs and asks for alice now
            await until(lambda: (folder / "alice.json").exists(), what="alice's outcome")
            alice = json.loads((folder / "alice.json").read_text())
            for kind in ("elicit", "sample"):
                assert alice[kind].startswith("refused:") and "more than one client" in alice[kind]
            client = await upstreams_of(gateway)["asks"].connected()
            assert isinstance(client, RoutingProxyClient)
            await until(lambda: client.outstanding == 1,
                        what="the upstream answered alice's call")
            (folder / "go-bob").touch()
        assert answers == {"bob": {"elicit": "answer from bob", "sample": "sample from bob"}}
        seen.only_own("bob", "bob")
        assert not seen.asked["alice"] and not seen.logs["alice"]
        assert len(seen.logs["bob"]) == 1 and "log for bob" in seen.logs["bob"][0]


def test_every_relay_of_fastmcps_proxy_client_is_ours() -> None:
    """FastMCP relays what it still handles itself to the one front request a proxy client
    last served; a relay it adds in a later release would reach anyone. Reads FastMCP's
    private ``ProxyClient._proxy_restoring_handler_keys`` (the relays it installed)."""
    plain = ProxyClient(FastMCP("backend"))
    assert {"roots", "sampling_handler", "elicitation_handler", "log_handler",
            "progress_handler"} <= plain._proxy_restoring_handler_keys
    routing = RoutingProxyClient(FastMCP("backend"), label="`backend`")
    assert routing._proxy_restoring_handler_keys == set()


# -- calls the upstream never answers (#34) ------------------------------------------------------
class NeverAnswers:
    """An upstream whose ``hang`` never returns: ``obeys`` a cancellation (counted in
    ``cancelled``) or ignores it (shielded until ``release``); ``ask`` asks at once."""

    def __init__(self, *, obeys: bool) -> None:
        self.arrived = 0
        self.cancelled = 0
        self.release = anyio.Event()
        self.server = FastMCP("never")

        @self.server.tool
        async def hang() -> str:
            self.arrived += 1
            try:
                with anyio.CancelScope(shield=not obeys):
                    await self.release.wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled += 1
                raise
            return "late"

        @self.server.tool
        async def ask(who: str, ctx: Context) -> dict[str, str]:
            return await log_elicit_and_sample(who, ctx)


class EndedCalls(Middleware):
    """Counts the front's tool calls that ended (answered or given up)."""

    ended = 0

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        try:
            return await call_next(context)
        finally:
            self.ended += 1


async def give_up_on_hangs(client: Client[Any], upstream: NeverAnswers, front: EndedCalls,
                           times: int) -> None:
    """``times`` calls of ``hang``, each given up by its client once it reached the upstream
    and the front has stopped serving it (as a client timing out does)."""
    for _ in range(times):
        arrived, ended = upstream.arrived, front.ended
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "hang", {})
            await until(lambda a=arrived: upstream.arrived > a, 10, "the call upstream")
            group.cancel_scope.cancel()
        await until(lambda e=ended: front.ended > e, 10, "the front to stop serving it")


@asynccontextmanager
async def fronted(upstream: NeverAnswers,
                  grace: float | None) -> AsyncIterator[tuple[FastMCP, EndedCalls,
                                                              RoutingProxyClient]]:
    """A front proxying ``upstream`` in memory, calls given up on kept ``grace`` s: the
    front, its ended-call count and the upstream's one client; ``hang`` released after."""
    backend = Upstream("http://upstream.invalid/mcp", name="never",
                       transport=FastMCPTransport(upstream.server))
    proxy = FastMCPProxy(client_factory=backend.connected, name="front")
    front = EndedCalls()
    proxy.add_middleware(front)
    try:
        routing = await backend.connected()
        assert isinstance(routing, RoutingProxyClient)
        routing.abandoned_grace = grace
        yield proxy, front, routing
    finally:
        upstream.release.set()
        await backend.close()


async def test_calls_given_up_on_are_bounded_the_oldest_cancelled_upstream() -> None:
    """40 calls the upstream never answers, each given up by its client: at most
    ``MAX_ABANDONED`` stay outstanding, the older ones cancelled upstream (all 40 stayed,
    each holding its request's memory, for the whole session)."""
    from fastmcp_progressive.proxy.forwarding import MAX_ABANDONED

    upstream = NeverAnswers(obeys=True)
    async with fronted(upstream, None) as (proxy, front, routing):  # only the count bounds
        async with Client(proxy, mode="legacy") as client:
            await give_up_on_hangs(client, upstream, front, 40)
            assert routing.outstanding == MAX_ABANDONED
            await until(lambda: upstream.cancelled == 40 - MAX_ABANDONED, 10,
                        "the older calls cancelled upstream")


async def test_relaying_recovers_once_a_call_given_up_on_has_had_its_grace() -> None:
    """alice gives up on a call the upstream never answers (it ignores cancellation): bob's
    questions were refused for the whole session ("more than one client"). After the grace
    her call is cancelled upstream and no longer counted; bob is asked his own question."""
    upstream = NeverAnswers(obeys=False)
    seen = Seen()
    async with fronted(upstream, 0.5) as (proxy, front, routing), AsyncExitStack() as stack:
        clients = {me: await stack.enter_async_context(
            Client(proxy, mode="legacy", **seen.handlers(me))) for me in CALLERS}
        await give_up_on_hangs(clients["alice"], upstream, front, 1)
        await until(lambda: routing.outstanding == 0, 10, "alice's call given up")
        answer = await clients["bob"].call_tool("ask", {"who": "bob"})
    assert answer.structured_content == {"elicit": "answer from bob",
                                         "sample": "sample from bob"}
    seen.only_own("bob", "bob")
    assert upstream.cancelled == 0  # it ignored the cancellation, and was let be
