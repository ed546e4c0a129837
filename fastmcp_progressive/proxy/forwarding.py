"""Which front caller an upstream's own requests and notifications go to, on a shared session.

One upstream session serves every front caller (``upstream.py``). What the upstream sends
on its own (elicitation and sampling requests, log messages, progress, list-changed
notifications) names no tool call on stdio, so FastMCP's proxy client relays each to the
front request that last used the session: with two HTTP callers' calls in flight, caller B
was asked caller A's question and B's answer went into A's tool. ``RoutingProxyClient``
replaces those relays. It keeps the front requests using it right now (each ``async with``
a proxied request makes), and relays by these rules:

- progress: to the front request whose call it reports on (the SDK matches the token the
  backend call was given), always exact;
- elicitation, sampling, log messages: to the one front caller (a handshake session, all
  of its requests) with requests in flight; with several callers in flight, or none, a
  request is refused to the upstream with an error saying why, and a log message is kept
  in the proxy's own log instead of relayed, rather than guessed;
- roots: to the front session whose roots the upstream holds (``RootsForwarding``), else
  the one caller in flight;
- tools/resources/prompts list-changed: carry nothing of any caller, so the most recent
  front request in flight gets them (FastMCP relays them to one front session).

Example:
    ```python
    client = RoutingProxyClient(transport, label="`fs`", mode="legacy")
    await client.hold()   # connect; proxied requests then use `async with client`
    ```
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import mcp_types as mt
from fastmcp.server.dependencies import get_context
from fastmcp.server.providers import proxy as fastmcp_proxy
from fastmcp.server.providers.proxy import StatefulProxyClient

from fastmcp_progressive.fastmcp_internals import (
    front_request,
    relay_as,
    request_connection,
    shared_slot_relays,
)
from fastmcp_progressive.log import get_logger

logger = get_logger("proxy")

LOGGED_TEXT = 500  # characters of an unrelayed upstream log message kept in our log


class UnroutableRequest(RuntimeError):
    """An upstream request the proxy cannot attribute to one front caller (sent back to
    the upstream as the error of its request)."""


@dataclass(eq=False)
class _Use:
    """One ``async with`` of the client: by a front request (``front``, its ``caller``)
    or by the proxy itself (both None)."""

    client: RoutingProxyClient
    front: Any
    caller: Any


_LIST_CHANGED = (mt.ToolListChangedNotification, mt.ResourceListChangedNotification,
                 mt.PromptListChangedNotification)

_USES: ContextVar[tuple[_Use, ...]] = ContextVar("fastmcp_progressive_upstream_uses",
                                                 default=())
"""The uses the current task has open (``async with`` nests per task)."""


class RoutingProxyClient(StatefulProxyClient[Any]):
    """FastMCP's stateful proxy client with per-caller relays (see the module docstring).

    ``roots_front`` answers the front request whose roots the upstream should get (None:
    none yet); ``roots_answered`` is called after each answer to the upstream's
    ``roots/list``. ``hold()`` connects without counting as a front request's use.
    """

    def __init__(
        self,
        transport: Any,
        *,
        label: str,
        roots_front: Callable[[], Any] = lambda: None,
        roots_answered: Callable[[], None] = lambda: None,
        **kwargs: Any,
    ) -> None:
        self.label = label
        self._roots_front = roots_front
        self._roots_answered = roots_answered
        self._uses: list[_Use] = []
        super().__init__(
            transport,
            roots=self._relay_roots,
            sampling_handler=self._relay_sampling,
            elicitation_handler=self._relay_elicitation,
            log_handler=self._relay_log,
            progress_handler=self._unrouted_progress,
            message_handler=self._relay_message,
            **kwargs,
        )
        leftover = shared_slot_relays(self)  # a relay FastMCP added since: it could reach anyone
        if leftover:
            logger.warning("FastMCP relays %s from upstream %s to the last caller, not "
                           "per caller", ", ".join(sorted(leftover)), label)

    # -- who is using the session ------------------------------------------------------------
    async def hold(self) -> None:
        """Connect (or keep connected) for the proxy's lifetime: not a front request's use."""
        await super().__aenter__()  # type: ignore[no-untyped-call]

    async def __aenter__(self) -> RoutingProxyClient:
        await super().__aenter__()  # type: ignore[no-untyped-call]
        use = _Use(self, *_current_front())
        self._uses.append(use)
        _USES.set((*_USES.get(), use))
        return self

    async def __aexit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        open_uses = _USES.get()
        mine = next((u for u in reversed(open_uses) if u.client is self), None)
        if mine is not None:
            _USES.set(tuple(u for u in open_uses if u is not mine))
            if mine in self._uses:
                self._uses.remove(mine)
        await super().__aexit__(exc_type, exc_val, exc_tb)

    @property
    def callers_in_flight(self) -> int:
        """How many front callers (the proxy itself counting as one) use the session now."""
        return len({id(u.caller if u.caller is not None else u) for u in self._uses})

    def _sole_caller_front(self) -> Any:
        """The latest front request of the one caller using the session; None when no
        caller or several do (or the proxy's own use is among them)."""
        if not self._uses or self.callers_in_flight != 1:
            return None
        return self._uses[-1].front

    def _why_not(self, what: str) -> str:
        count = self.callers_in_flight
        sent = f"upstream MCP server {self.label} sent {what} while"
        if count == 0 or not any(u.front is not None for u in self._uses):
            return (f"{sent} no client request was in flight on its session; the proxy "
                    "has no client to relay it to")
        # no count: the upstream's tool may hand this to its caller, who need not learn it
        return (f"{sent} requests of more than one client were in flight on its one shared "
                "session; the proxy cannot tell which client it is for, so it refuses it "
                "rather than risk reaching the wrong one")

    def _front_for(self, what: str) -> Any:
        front = self._sole_caller_front()
        if front is None:
            raise UnroutableRequest(self._why_not(what))
        return front

    # -- the relays -----------------------------------------------------------------------
    async def _relay_elicitation(self, message: str, response_type: Any, params: Any,
                                 context: Any) -> Any:
        relay_as(self._front_for("an elicitation request"))
        return await fastmcp_proxy.default_proxy_elicitation_handler(
            message, response_type, params, context)

    async def _relay_sampling(self, messages: Any, params: Any, context: Any) -> Any:
        relay_as(self._front_for("a sampling request"))
        return await fastmcp_proxy.default_proxy_sampling_handler(messages, params, context)

    async def _relay_roots(self, context: Any) -> Any:
        try:
            front = self._roots_front() or self._front_for("a roots/list request")
            relay_as(front)
            return await fastmcp_proxy.default_proxy_roots_handler(context)
        finally:
            self._roots_answered()

    async def _relay_log(self, message: Any) -> None:
        front = self._sole_caller_front()
        if front is None:
            text = str(getattr(message, "data", message))[:LOGGED_TEXT]
            logger.info("%s; its log message, not relayed: %s",
                        self._why_not("a log message"), text)
            return
        relay_as(front)
        await fastmcp_proxy.default_proxy_log_handler(message)

    async def _relay_message(self, message: Any) -> None:
        relay = getattr(fastmcp_proxy, "default_proxy_message_handler", None)
        if relay is None or not isinstance(message, _LIST_CHANGED):  # FastMCP 4.1: none
            return
        front = next((u.front for u in reversed(self._uses) if u.front is not None), None)
        if front is not None:
            relay_as(front)
            await relay(message)

    async def _unrouted_progress(self, progress: float, total: float | None,
                                 message: str | None) -> None:
        logger.debug("progress from upstream %s outside a proxied tool call, not relayed: "
                     "%s/%s %s", self.label, progress, total, message)

    def _progress_to(self, front: Any) -> Callable[..., Any]:
        async def relay(progress: float, total: float | None, message: str | None) -> None:
            relay_as(front)
            await fastmcp_proxy.default_proxy_progress_handler(progress, total, message)

        return relay

    async def call_tool_mcp(self, name: str, arguments: dict[str, Any],
                            progress_handler: Any = None, timeout: Any = None,
                            meta: dict[str, Any] | None = None) -> mt.CallToolResult:
        """FastMCP's ``call_tool_mcp``; the call's progress goes to the front request
        making it (the SDK matches each progress notification to its call)."""
        if progress_handler is None:
            mine = next((u for u in reversed(_USES.get()) if u.client is self), None)
            if mine is not None and mine.front is not None:
                progress_handler = self._progress_to(mine.front)
        result: mt.CallToolResult = await super().call_tool_mcp(
            name, arguments, progress_handler=progress_handler, timeout=timeout, meta=meta)
        return result


def _current_front() -> tuple[Any, Any]:
    """The front request being served here (``front_request``) and its caller (its
    handshake connection, or the request itself), or (None, None) for the proxy's own."""
    try:
        ctx = get_context()
    except RuntimeError:
        return None, None
    rc = ctx.request_context
    if rc is None:
        return None, None
    return front_request(ctx), request_connection(rc.session) or rc
