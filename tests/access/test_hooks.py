"""The operator's Python hooks run bounded and off the event loop (#21).

A synchronous resolver hook (``ResolutionSettings.resolvers``) or mode resolver
(``ClientSettings.level_resolver``) used to run on the event loop: one that blocks stalled
every client, and ``SystemExit`` raised in one stopped the server. Both now run in a worker
thread within a time limit; any failure is logged and fails closed (``-32603`` for a hook,
the progressive level for a mode resolver).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import anyio
import mcp_types as mt
import pytest
from mcp.client.extension import advertise

from fastmcp_progressive import EXTENSION_ID, ClientSettings, ResolutionSettings
from fastmcp_progressive.access.hooks import HookFailed, call_hook, hook_limiter
from fastmcp_progressive.options import MAX_HOOK_TIMEOUT
from fastmcp_progressive.settings import ClientInfo
from tests.conftest import build_server, connect
from tests.resolution.test_server import opened, raw_resolve, resolve_error
from tests.waiting import PATIENCE, until

LOGGER = "fastmcp_progressive"
HOLD = MAX_HOOK_TIMEOUT  # the longest a hook may be given (60 s)
"""Longest a blocking hook holds its thread until the test releases it (the old code held
the whole loop that long): never reached, so another client's answer, however slow the
machine, comes while the hook still blocks."""


class Blocker:
    """A synchronous hook that blocks its thread until released (or ``HOLD`` seconds)."""

    def __init__(self, answer: Any = None) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.returned = threading.Event()
        self.answer = answer

    def __call__(self, argument: Any) -> Any:
        self.entered.set()
        self.release.wait(HOLD)
        self.returned.set()
        return self.answer


async def test_a_blocking_resolver_hook_never_blocks_another_client() -> None:
    hook = Blocker()
    server = build_server(resolution=ResolutionSettings(resolvers={"add": hook}))
    async with opened(server, "modern") as slow, opened(server, "modern") as other:
        async with anyio.create_task_group() as tg:
            tg.start_soon(raw_resolve, slow, "add", {"a": 1, "b": 2})
            await until(hook.entered.is_set, HOLD, "the hook to start")
            assert (await other.call_tool("echo", {"text": "hi"})).data == "hi"
            answered_while_blocked = not hook.returned.is_set()
            hook.release.set()
    assert answered_while_blocked


async def test_a_hook_past_its_time_limit_answers_32603(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hook = Blocker()
    server = build_server(resolution=ResolutionSettings(resolvers={"add": hook},
                                                        hook_timeout=0.2))
    caplog.set_level(logging.ERROR, LOGGER)
    try:
        async with opened(server, "modern") as client:
            error = await resolve_error(client, "add", {"a": 1, "b": 2})
    finally:
        hook.release.set()
    assert error.error.code == -32603
    assert "did not answer within 0.2 s" in caplog.text and "'add'" in caplog.text


@pytest.mark.parametrize("raised", [SystemExit(3), KeyboardInterrupt(), RuntimeError("boom")])
async def test_a_hook_raising_anything_answers_32603_and_the_server_goes_on(
    raised: BaseException, caplog: pytest.LogCaptureFixture,
) -> None:
    def hook(arguments: dict[str, Any]) -> None:
        raise raised

    async def async_hook(arguments: dict[str, Any]) -> None:
        raise raised

    server = build_server(resolution=ResolutionSettings(resolvers={"add": hook,
                                                                   "echo": async_hook}))
    caplog.set_level(logging.ERROR, LOGGER)
    async with opened(server, "modern") as client:
        for name, arguments in (("add", {"a": 1, "b": 2}), ("echo", {"text": "x"})):
            error = await resolve_error(client, name, arguments)
            assert error.error.code == -32603
        assert (await client.call_tool("add", {"a": 1, "b": 2}, raise_on_error=False))
    assert f"raised {type(raised).__name__}" in caplog.text


def _slow_for(name: str, blocker: Blocker) -> Any:
    def resolver(client: ClientInfo) -> str | None:
        return blocker(client) if client.name == name else None
    return resolver


async def test_a_blocking_level_resolver_never_blocks_another_client() -> None:
    blocker = Blocker()
    server = build_server(clients=ClientSettings(level_resolver=_slow_for("slow", blocker),
                                                 level_resolver_timeout=HOLD))
    async with connect(server, "modern") as other:
        async with anyio.create_task_group() as tg:
            async def slow_client() -> None:
                async with connect(server, "modern",
                                   client_info=mt.Implementation(name="slow", version="1")) as c:
                    await c.list_tools()

            tg.start_soon(slow_client)
            await until(blocker.entered.is_set, HOLD, "the resolver to start")
            assert (await other.call_tool("echo", {"text": "hi"},
                                          raise_on_error=False)) is not None
            answered_while_blocked = not blocker.returned.is_set()
            blocker.release.set()
    assert answered_while_blocked


FULL = advertise(EXTENSION_ID, {"mode": "full"})


@pytest.mark.parametrize("failure", ["timeout", "SystemExit", "bad answer"])
async def test_a_failing_level_resolver_fails_closed(
    failure: str, caplog: pytest.LogCaptureFixture,
) -> None:
    """The client asks for ``full`` itself; the operator's resolver fails: the request
    gets the progressive level (gated), never full, and the server goes on."""
    blocker = Blocker("full")

    def resolver(client: ClientInfo) -> Any:
        if failure == "timeout":
            return blocker(client)
        if failure == "SystemExit":
            raise SystemExit(1)
        return "everything"

    server = build_server(clients=ClientSettings(level_resolver=resolver,
                                                 level_resolver_timeout=0.2))
    caplog.set_level(logging.ERROR, LOGGER)
    try:
        async with connect(server, "modern", extensions=[FULL]) as client:
            add = next(t for t in await client.list_tools() if t.name == "add")
            assert add.input_schema.get("required") != ["a", "b"] or (
                add.description != "Add two integers. Returns their sum as an integer.")
            result = await client.call_tool("add", {"a": 1, "b": 2}, raise_on_error=False)
            assert result.data == 3 or result.is_error  # served, not crashed
    finally:
        blocker.release.set()
    assert "level resolver" in caplog.text and "progressive level" in caplog.text


async def test_call_hook_passes_cancellation_through() -> None:
    blocker = Blocker()
    limiter = hook_limiter()
    try:
        with anyio.move_on_after(0.1) as scope:
            await call_hook(blocker, None, timeout=HOLD, limiter=limiter)
        assert scope.cancelled_caught  # cancelled, not turned into HookFailed
    finally:
        blocker.release.set()
    with pytest.raises(HookFailed, match="raised ValueError: x"):
        await call_hook(lambda _: (_ for _ in ()).throw(ValueError("x")), None,
                        timeout=PATIENCE, limiter=limiter)


def test_a_resolver_asked_outside_a_request_fails_closed_too() -> None:
    """A caller no request prepared (the resolver then runs in line) gets the same safe
    outcome: SystemExit is caught, the level is the progressive one."""
    from fastmcp_progressive.access.caller import Caller
    from fastmcp_progressive.access.modes import ModePolicy

    def resolver(client: ClientInfo) -> str:
        raise SystemExit(2)

    policy = ModePolicy(ClientSettings(level_resolver=resolver))
    caller = Caller(kind="anonymous", era="modern", client_name="x",
                    extensions={EXTENSION_ID: {"mode": "full"}})
    assert policy.level(caller) != "full"
