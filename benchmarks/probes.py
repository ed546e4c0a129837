"""The three client requests the benchmarks time, each as a ``Probe``.

All use the raw ``*_mcp`` client calls: they return the protocol result without the
convenience parsing of ``list_tools()`` / ``call_tool()``, so client-side work that is
the same for plain and ours does not dilute a ratio. Listings bypass the client's
response cache, or a repeated listing would never reach the server.

Example:
    ```python
    probe = read(client, uri, timer)   # timer: the ServerTimer inside that server
    ```
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastmcp import Client

from .timing import Probe, ServerTimer


def listing(client: Client[Any], timer: ServerTimer | None = None,
            prepare: Callable[[], Any] | None = None) -> Probe:
    """``tools/list`` (its first page), client cache bypassed; server time when ``timer``
    observes listings; ``prepare`` run untimed before each."""
    async def run() -> Any:
        return await client.list_tools_mcp(cache_mode="bypass")

    server = (lambda: timer.take("tools/list")) if timer is not None else None
    return Probe(run, prepare=prepare, server=server)


def call(client: Client[Any], name: str, arguments: dict[str, Any],
         timer: ServerTimer | None = None) -> Probe:
    """``tools/call`` of ``name`` with ``arguments``."""
    async def run() -> Any:
        return await client.call_tool_mcp(name, arguments)

    server = (lambda: timer.take("tools/call")) if timer is not None else None
    return Probe(run, server=server)


def read(client: Client[Any], uri: str, timer: ServerTimer | None = None,
         prepare: Callable[[], Any] | None = None) -> Probe:
    """``resources/read`` of ``uri``, ``prepare`` run untimed before each read."""
    async def run() -> Any:
        return await client.read_resource_mcp(uri)

    server = (lambda: timer.take("resources/read")) if timer is not None else None
    return Probe(run, prepare=prepare, server=server)


def call_each(client: Client[Any], calls: list[tuple[str, dict[str, Any]]],
              timer: ServerTimer | None = None) -> Probe:
    """``tools/call`` of the next of ``calls`` each time (round robin).

    For refusals: ours grants a tool when it refuses it (the refusal carries the
    definition), so a refused call is only measured on tools the caller never saw.
    """
    turn = iter(range(1 << 62))

    async def run() -> Any:
        name, arguments = calls[next(turn) % len(calls)]
        return await client.call_tool_mcp(name, arguments)

    server = (lambda: timer.take("tools/call")) if timer is not None else None
    return Probe(run, server=server)
