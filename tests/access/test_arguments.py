"""The argument-fit check (``access/arguments.py``): it accepts what FastMCP accepts, checks a
mounted tool with the child's own validator, and costs what FastMCP's own validation costs,
whatever the input (#21).

A caller the server cannot follow (2026-07-28 HTTP without auth) is judged by its call's
arguments alone. The check used to run pure-Python ``jsonschema`` on the event loop, so one
unauthenticated call stalled every client for seconds: ``uniqueItems`` of a ``set[str]`` is
quadratic there, a ``pattern`` like ``^(\\w+\\s?)*$`` backtracks exponentially. It now asks
the validator FastMCP itself runs (pydantic-core: linear, Rust regexes), so the same call
costs what plain FastMCP costs (``benchmarks/measure/hostile.py`` times it).

Each attack below stalled the loop 4-11 s on the old code; the tests measure the loop's
longest stall while the attack is served (a heartbeat task) against its longest stall while
the same call with harmless arguments of the same size is served, in the same test: a ratio,
so a loaded machine, which stalls both alike, cannot fail it (issue 34).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import pytest
from fastmcp import FastMCP
from fastmcp.server import create_proxy
from fastmcp.tools.base import Tool
from pydantic import Field

from fastmcp_progressive import ProgressiveDisclosure, ResolutionSettings
from fastmcp_progressive.access import arguments
from fastmcp_progressive.access.arguments import ArgumentChecker
from tests.conftest import connect, serve_http
from tests.resolution.test_server import opened, raw_resolve, resolve_error

STALL_RATIO = 20
"""How many times longer than while serving harmless arguments the loop may stall while
serving an attack: generous (the fixed check stalls it alike; the old one hundreds of times
longer, 4-11 s against a few milliseconds; the heartbeat's 5 ms tick is the floor of both)."""
REPEATS = 3
"""Attacks and harmless calls measured, alternately: the attack's shortest stall is
compared, so one stall of a loaded machine landing on one attack cannot decide."""

WORDS_PATTERN = r"^(\w+\s?)*$"
ATTACKS: dict[str, tuple[str, dict[str, Any]]] = {
    "unique-items": ("tags", {"labels": [f"s{i}" for i in range(14_000)] + [1]}),
    "backtracking-pattern": ("words", {"text": "a" * 26 + "!"}),
}
HARMLESS: dict[str, dict[str, Any]] = {  # the same sizes, valid: nothing to backtrack over
    "unique-items": {"labels": [f"s{i}" for i in range(14_001)]},
    "backtracking-pattern": {"text": "a" * 27},
}


def attack_server(*, progressive: bool = True, **options: Any) -> FastMCP:
    mcp = FastMCP("attacked")

    @mcp.tool
    def tags(labels: set[str]) -> int:
        """Count distinct labels."""
        return len(labels)

    @mcp.tool
    def words(text: Annotated[str, Field(pattern=WORDS_PATTERN)]) -> int:
        """Count words."""
        return len(text.split())

    @mcp.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    if progressive:
        mcp.add_middleware(ProgressiveDisclosure(**options))
    return mcp


class Heartbeat:
    """The event loop's longest stall while running: a task ticking every 5 ms."""

    def __init__(self) -> None:
        self.longest = 0.0

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Heartbeat]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._beat)
            try:
                yield self
            finally:
                tg.cancel_scope.cancel()

    async def _beat(self) -> None:
        last = time.monotonic()
        while True:
            await anyio.sleep(BEAT)
            now = time.monotonic()
            self.longest = max(self.longest, now - last)
            last = now


BEAT = 0.005
"""The heartbeat's period: the shortest stall it can tell."""


async def longest_stall(serve: Callable[[], Awaitable[Any]]) -> float:
    """The event loop's longest stall while ``serve()`` runs."""
    async with Heartbeat().running() as heart:
        await serve()
    return heart.longest


async def assert_never_stalls(attack: Callable[[], Awaitable[Any]],
                              harmless: Callable[[], Awaitable[Any]]) -> None:
    """The loop stalls no longer serving ``attack`` than serving ``harmless`` (the same call
    with harmless arguments), within ``STALL_RATIO``: both measured here, alternately."""
    attacks: list[float] = []
    harmlesses: list[float] = []
    for _ in range(REPEATS):
        attacks.append(await longest_stall(attack))
        harmlesses.append(await longest_stall(harmless))
    # a stall shorter than the heartbeat's own period is not measured (both read 0.000 s
    # when a call ends before the first beat): the harmless call counts at least one period
    assert min(attacks) < STALL_RATIO * max(*harmlesses, BEAT), (
        f"the event loop stalled {min(attacks):.3f}s serving the attack, "
        f"{max(harmlesses):.3f}s serving harmless arguments")


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_an_attack_call_never_stalls_the_server(attack: str) -> None:
    name, arguments = ATTACKS[attack]
    async with serve_http(attack_server()) as url, connect(url, "modern") as attacker, \
            connect(url, "modern") as other:
        assert (await other.call_tool("echo", {"text": "warm"})).data == "warm"
        answers: list[Any] = []
        results: list[Any] = []

        def served_beside_another_call(args: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
            async def serve() -> None:
                async with anyio.create_task_group() as tg:
                    async def other_calls() -> None:
                        answers.append((await other.call_tool("echo", {"text": "hi"})).data)

                    tg.start_soon(other_calls)
                    results.append(await attacker.call_tool(name, args, raise_on_error=False))
            return serve

        await assert_never_stalls(served_beside_another_call(arguments),
                                  served_beside_another_call(HARMLESS[attack]))
        assert answers == ["hi"] * 2 * REPEATS
    result = results[0]  # each call judged alone (no identity): each attack refused alike
    assert [r.structured_content["error"] for r in results[::2]] == [
        result.structured_content["error"]] * REPEATS
    error = result.structured_content["error"]  # the teaching refusal, with the problem
    assert error["code"] == "TOOL_DESCRIPTION_REQUIRED"
    assert error["invalid_arguments"].startswith("arguments.")


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_an_attack_on_tools_resolve_never_stalls_the_server(attack: str) -> None:
    name, arguments = ATTACKS[attack]
    hooks = {name: lambda args: None}  # resolvable through a hook
    server = attack_server(resolution=ResolutionSettings(resolvers=hooks))
    errors: list[Any] = []
    async with opened(server, "modern") as client:
        async def attacked() -> None:
            errors.append(await resolve_error(client, name, arguments))

        async def harmless() -> None:
            await raw_resolve(client, name, HARMLESS[attack])

        await assert_never_stalls(attacked, harmless)
    error = errors[0]
    assert error.error.code == -32602 and "arguments." in error.error.message


async def test_the_check_accepts_what_fastmcp_accepts() -> None:
    """Same semantics as FastMCP's validation: its lax coercions pass, a set's JSON list
    passes, what FastMCP refuses is refused with the place named."""
    checker = ArgumentChecker()
    mcp = attack_server()
    tags = await mcp.get_tool("tags")
    words = await mcp.get_tool("words")
    assert tags is not None and words is not None
    assert await checker.problem(tags, {"labels": ["a", "a", "b"]}) is None
    assert await checker.problem(words, {"text": "two words"}) is None
    add = Tool.from_function(_add)
    assert await checker.problem(add, {"a": "5", "b": 2}) is None  # FastMCP's lax "5" -> 5
    assert await checker.problem(add, {"a": 1}) == "arguments: 'b' is a required property"
    assert await checker.problem(add, {"a": 1, "b": 2, "c": 3}) == (
        "arguments: additional property 'c' is not allowed")
    assert str(await checker.problem(add, {"a": 1, "b": "two"})).startswith(
        "arguments.b: Input should")
    assert len(checker._validators) == 3


def _add(a: int, b: int) -> int:
    return a + b


async def test_a_tool_fastmcp_does_not_validate_is_checked_by_names_only() -> None:
    """A proxied tool's values are its upstream's to judge: the check looks at names only,
    in time linear in the arguments, whatever the upstream's schema says."""
    upstream = attack_server(progressive=False)
    proxy = create_proxy(upstream)
    tool = await proxy.get_tool("words")
    assert tool is not None and getattr(tool, "fn", None) is None
    checker = ArgumentChecker()
    assert await checker.problem(tool, {"text": "a" * 10_000 + "!"}) is None  # upstream judges
    assert await checker.problem(tool, {}) == "arguments: 'text' is a required property"
    assert await checker.problem(tool, {"text": "x", "y": 1}) == (
        "arguments: additional property 'y' is not allowed")
    assert await checker.problem(tool, ["x"]) == "arguments: must be an object"


async def test_problems_are_bounded_and_the_validators_kept_are_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arguments, "DEFAULT_VALIDATORS", 2)
    checker = ArgumentChecker()
    tools = [Tool.from_function(f) for f in (_add, _many, _add2)]
    for tool in tools:
        assert await checker.problem(tool, {}) is not None
    assert len(checker._validators) == 2
    long = await checker.problem(tools[1], {"items": [1, "x" * 1000] * 50})
    assert long is not None and long.startswith("arguments.items[1]:") and len(long) <= 300


def _many(items: list[int]) -> int:
    return len(items)


def _add2(a: int, b: int) -> int:
    return a + b


async def test_a_mounted_tool_is_checked_with_the_childs_own_validator() -> None:
    """Through a mount the gate sees a delegating copy; the check asks the child's tool, so
    a wrong value still gets the teaching refusal (not the child's bare error) and the
    attacks cost what the child's own validation costs."""
    child = attack_server(progressive=False)
    parent = FastMCP("parent")
    parent.mount(child, namespace="c")
    parent.add_middleware(ProgressiveDisclosure())
    async with connect(parent, "modern") as client:
        result = await client.call_tool("c_tags", {"labels": ["a", 1]}, raise_on_error=False)
        error = result.structured_content["error"]
        assert error["code"] == "TOOL_DESCRIPTION_REQUIRED"
        assert error["invalid_arguments"].startswith("arguments.labels")
        assert (await client.call_tool("c_tags", {"labels": ["a", "a", "b"]})).data == 2
        name, arguments = ATTACKS["backtracking-pattern"]

        async def attacked() -> None:
            await client.call_tool(f"c_{name}", arguments, raise_on_error=False)

        async def harmless() -> None:
            await client.call_tool(f"c_{name}", HARMLESS["backtracking-pattern"],
                                   raise_on_error=False)

        await assert_never_stalls(attacked, harmless)
