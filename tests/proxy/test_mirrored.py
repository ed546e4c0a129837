"""Completions and resource subscriptions through ``progressive_proxy`` (``proxy/mirrored.py``).

The upstream is the conformance fixture (``tests/conformance/fixture_server.py``) over stdio,
a real process, which serves completions and subscriptions; the client reaches the front in
memory, in the handshake era (subscriptions exist only there).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from weakref import WeakSet

import anyio
import mcp_types as mt
import pytest
from fastmcp import Client, FastMCP
from fastmcp.client.messages import MessageHandler
from fastmcp.server import create_proxy

from fastmcp_progressive.proxy.front import progressive_proxy
from fastmcp_progressive.proxy.mirrored import Mirrored
from tests.conftest import ERAS, Era, connect

pytestmark = [
    pytest.mark.slow,  # an upstream process per test
    pytest.mark.filterwarnings("ignore:resources/.* is removed as of 2026-07-28"),  # not ours
]
FIXTURE = [sys.executable, "-m", "tests.conformance.fixture_server"]
WATCHED = "test://watched-resource"
HELPERS = ["touch_watched_resource", "subscriptions"]
BOUND = 20.0


class UpdatedRecorder(MessageHandler):
    """The URIs of the ``notifications/resources/updated`` a client got."""

    def __init__(self) -> None:
        super().__init__()
        self.uris: list[str] = []
        self.arrived = anyio.Event()

    async def on_resource_updated(self, message: mt.ResourceUpdatedNotification) -> None:
        self.uris.append(str(message.params.uri))
        self.arrived.set()


@asynccontextmanager
async def front(era: Era = "legacy", **kwargs: Any) -> AsyncIterator[Client[Any]]:
    async with connect(progressive_proxy(FIXTURE, exempt_tools=HELPERS), era,
                       **kwargs) as client:
        yield client


def capabilities_of(client: Client[Any]) -> mt.ServerCapabilities:
    """What the front advertised, in either era."""
    assert client.server_capabilities is not None
    return client.server_capabilities


@pytest.mark.parametrize("era", ERAS)
async def test_the_front_advertises_and_answers_the_upstreams_completions(era: Era) -> None:
    """Was -32601 (method not found) and no ``completions`` capability."""
    async with front(era) as client:
        assert capabilities_of(client).completions is not None
        ref = mt.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
        completion = await client.complete(ref, {"name": "arg1", "value": "par"})
    assert completion.values == ["paris", "park", "party"]


async def test_subscriptions_reach_the_upstream_and_its_updates_the_subscriber() -> None:
    """Was -32601 for both methods and ``subscribe: false`` while the upstream had them."""
    recorder = UpdatedRecorder()
    async with front(message_handler=recorder) as client:
        resources = capabilities_of(client).resources
        assert resources is not None and resources.subscribe
        await client.session.subscribe_resource(WATCHED)
        assert (await client.call_tool("subscriptions", {})).data == [WATCHED]
        await client.call_tool("touch_watched_resource", {})
        with anyio.fail_after(BOUND):
            await recorder.arrived.wait()
        assert recorder.uris == [WATCHED]
        await client.session.unsubscribe_resource(WATCHED)
        assert (await client.call_tool("subscriptions", {})).data == []


async def test_the_upstream_stays_subscribed_while_another_session_is() -> None:
    """One upstream session serves every front session: the upstream is unsubscribed only
    when the last front session subscribed leaves."""
    proxy = progressive_proxy(FIXTURE, exempt_tools=HELPERS)
    async with connect(proxy, "legacy") as first, connect(proxy, "legacy") as second:
        await first.session.subscribe_resource(WATCHED)
        await second.session.subscribe_resource(WATCHED)
        await first.session.unsubscribe_resource(WATCHED)
        assert (await second.call_tool("subscriptions", {})).data == [WATCHED]
        await second.session.unsubscribe_resource(WATCHED)
        assert (await second.call_tool("subscriptions", {})).data == []



async def test_a_closed_connection_is_forgotten_and_kept_in_no_weak_map() -> None:
    """#35: the URIs a connection subscribed to live in its own ``state``, and the
    connection is dropped by its close callback (it was a ``WeakSet`` per URI)."""
    proxy = progressive_proxy(FIXTURE, exempt_tools=HELPERS)
    [mirrored] = [m for m in proxy.middleware if isinstance(m, Mirrored)]
    assert not any(isinstance(v, WeakSet) for v in vars(mirrored).values())
    async with connect(proxy, "legacy") as first:
        async with connect(proxy, "legacy") as second:
            await second.session.subscribe_resource(WATCHED)
            assert len(mirrored._connections) == 1
        await first.session.subscribe_resource(WATCHED)  # the upstream still subscribed
        assert len(mirrored._connections) == 1  # the second's went with its connection
        assert (await first.call_tool("subscriptions", {})).data == [WATCHED]

async def test_an_upstream_without_them_gets_neither_advertised() -> None:
    """Mirrored, not invented: an upstream with no completions and no subscriptions."""
    upstream = FastMCP("bare")
    upstream.tool(lambda: "ok", name="noop")
    async with connect(progressive_proxy(create_proxy(upstream)), "legacy") as client:
        capabilities = capabilities_of(client)
        assert capabilities.completions is None
        assert capabilities.resources is None or not capabilities.resources.subscribe
