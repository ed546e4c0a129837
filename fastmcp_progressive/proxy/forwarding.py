"""Which front caller an upstream's own requests and notifications go to, on a shared session.

One upstream session serves every front caller (``upstream.py``). What the upstream sends
on its own (elicitation and sampling requests, log messages, progress, list-changed
notifications) names no tool call on stdio, so FastMCP's proxy client relays each to the
front request that last used the session: with two HTTP callers' calls in flight, caller B
was asked caller A's question and B's answer went into A's tool. ``RoutingProxyClient``
replaces those relays, by what the upstream is still working on rather than by who is
still waiting:

- every request sent to the upstream (a call, a listing, a read) is *outstanding* until the
  upstream answers it or the session ends. A front request that gives up (its client timed
  out or went away) stops waiting, but its request stays outstanding: the upstream may
  still be working on it, and may still ask or log on its behalf. So the request is not
  cancelled upstream at once; it runs on detached, and its answer is dropped when it
  comes. Not for ever: after ``ABANDONED_GRACE`` s, or when more than ``MAX_ABANDONED``
  such requests are outstanding (the oldest first), it is cancelled upstream and no
  longer counted, so one request the upstream never answers neither blocks every other
  caller's relays for the whole session nor, repeated, holds memory without bound;
- elicitation, sampling, log messages: to a caller (a handshake session, all of its
  requests) only when every outstanding request is that caller's, and one of them still
  waits to hand it over. Otherwise a request is refused to the upstream with an error
  saying why, and a log message is kept in the proxy's own log instead of relayed;
- progress: to the front request whose call it reports on (the SDK matches the token the
  call was given), while that request waits; exact, so never another caller's;
- roots: to the front session whose roots the upstream holds (``roots_session``), else as
  an elicitation is; before any caller has come, none (an empty list, ``roots.py``);
- tools/resources/prompts list-changed: carry nothing of any caller, so the front request
  that waited last gets them (FastMCP relays them to one front session);
- resources/updated: to ``resource_updated(uri)``, which knows the front sessions subscribed
  to it (``mirrored.py``).

A relay runs in the task of the front request it goes to, while that request waits for
the upstream: there FastMCP's ``get_context()`` is that request's own, so FastMCP's public
relay functions (``default_proxy_elicitation_handler`` and the others) reach its client
with nothing of FastMCP's swapped or read from its private names.

Example:
    ```python
    client = RoutingProxyClient(transport, label="`fs`", mode="legacy", timeout=300)
    await client.hold()   # connect; proxied requests then use `async with client`
    ```
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import mcp_types as mt
from fastmcp.server.dependencies import get_context
from fastmcp.server.providers import proxy as fastmcp_proxy
from fastmcp.server.providers.proxy import StatefulProxyClient
from mcp.client.extension import ClientExtension, advertise

from fastmcp_progressive.fastmcp_internals import request_connection
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.payloads import EXTENSION_ID

logger = get_logger("proxy")

LOGGED_TEXT = 500  # characters of an unrelayed upstream log message kept in our log
ABANDONED_GRACE = 30.0
"""Seconds a request its client gave up on stays outstanding before it is cancelled."""
MAX_ABANDONED = 16
"""Requests their clients gave up on kept outstanding at once; the oldest is cancelled."""
T = TypeVar("T")


def full_listing() -> ClientExtension:
    """What our proxy's upstream client advertises: the extension in ``full`` mode. The
    proxy applies progressive disclosure itself, so an upstream that has the middleware
    serves it every definition and no route of its own, without taking it for a FastMCP
    proxy that hides tools out of its sight (``access/modes.py``: the client's own word
    comes first, and nothing is logged)."""
    return advertise(EXTENSION_ID, {"mode": "full"})


_LIST_CHANGED = (mt.ToolListChangedNotification, mt.ResourceListChangedNotification,
                 mt.PromptListChangedNotification)


class UnroutableRequest(RuntimeError):
    """An upstream request the proxy cannot attribute to one front caller (sent back to
    the upstream as the error of its request)."""


@dataclass(eq=False)
class _Relay:
    """Work for a front request's task (a relay to its client), and how it went."""

    work: Callable[[], Awaitable[Any]]
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: BaseException | None = None

    async def run(self) -> None:
        try:
            self.result = await self.work()
        except Exception as exc:
            self.error = exc
        except BaseException:  # the front request is cancelled while relaying
            self.error = UnroutableRequest("the client request it was for ended while it "
                                           "was relayed")
            raise
        finally:
            self.done.set()

    def refuse(self, why: str) -> None:
        self.error = UnroutableRequest(why)
        self.done.set()

    async def outcome(self) -> Any:
        await self.done.wait()
        if self.error is not None:
            raise self.error
        return self.result


@dataclass(eq=False)
class _Call:
    """One request sent to the upstream, outstanding until the upstream answers it or the
    session ends. ``caller``: the front caller that sent it (None: the proxy itself);
    ``waiting``: its front request still waits for it, and runs the relays queued here."""

    caller: Any
    waiting: bool = True
    queued: list[_Relay] = field(default_factory=list)
    wake: anyio.Event = field(default_factory=anyio.Event)
    sent: asyncio.Future[Any] | None = None  # the request to the upstream, running on
    expiry: asyncio.TimerHandle | None = None  # when it is given up, once abandoned

    def hand(self, relay: _Relay) -> None:
        self.queued.append(relay)
        self.wake.set()

    def leave(self) -> None:
        """The front request stops waiting: relays it did not run are refused."""
        self.waiting = False
        queued, self.queued = self.queued, []
        for relay in queued:
            relay.refuse("the client request it was for ended before it could be relayed")


class RoutingProxyClient(StatefulProxyClient[Any]):
    """FastMCP's stateful proxy client with per-caller relays (see the module docstring).

    ``timeout`` bounds how long a front request waits for each upstream request (None: no
    limit). A request its front request gave up on stays outstanding (see the module
    docstring) for ``abandoned_grace`` s at most, and at most ``max_abandoned`` of them at
    once; then it is cancelled upstream and no longer counted.
    ``roots_session`` answers the front session whose roots the upstream should get (None:
    none yet); ``roots_answered`` is called after each answer to the upstream's
    ``roots/list``. ``hold()`` connects without being a front request's use.
    """

    def __init__(
        self,
        transport: Any,
        *,
        label: str,
        timeout: float | None = None,
        roots_session: Callable[[], Any] = lambda: None,
        roots_answered: Callable[[], None] = lambda: None,
        resource_updated: Callable[[str], Awaitable[None]] | None = None,
        **kwargs: Any,
    ) -> None:
        self.label = label
        self._resource_updated = resource_updated
        self.request_timeout = timeout
        self._roots_session = roots_session
        self._roots_answered = roots_answered
        self._calls: list[_Call] = []
        self._detached: set[asyncio.Future[Any]] = set()
        self.abandoned_grace: float | None = ABANDONED_GRACE
        self.max_abandoned = MAX_ABANDONED
        super().__init__(
            transport,
            timeout=None,  # a front request stops waiting; the upstream's request runs on
            roots=self._relay_roots,
            sampling_handler=self._relay_sampling,
            elicitation_handler=self._relay_elicitation,
            log_handler=self._relay_log,
            progress_handler=self._unrouted_progress,
            message_handler=self._relay_message,
            **kwargs,
        )

    async def hold(self) -> None:
        """Connect (or keep connected) for the proxy's lifetime: not a front request's use."""
        await super().__aenter__()  # type: ignore[no-untyped-call]

    # -- what the upstream is working on ----------------------------------------------------
    @property
    def outstanding(self) -> int:
        """How many requests sent to the upstream it has not answered yet."""
        return len(self._calls)

    async def _send(self, request: Callable[[_Call], Awaitable[T]]) -> T:
        """Send ``request`` to the upstream on behalf of the current front request; wait
        for its answer (at most ``timeout`` s), running the relays handed to it meanwhile.

        The request runs in a task of its own, so a front request that stops waiting
        (cancelled, timed out) leaves it running until the upstream answers or the
        session ends, and counted as outstanding (its caller's) until then.
        """
        call = _Call(_current_caller())
        self._calls.append(call)
        sent = asyncio.ensure_future(request(call))
        call.sent = sent
        self._detached.add(sent)

        def answered(task: asyncio.Future[Any]) -> None:
            self._detached.discard(task)
            if call in self._calls:
                self._calls.remove(call)
            if call.expiry is not None:
                call.expiry.cancel()
            call.wake.set()
            if not task.cancelled() and task.exception() is not None and not call.waiting:
                logger.debug("upstream %s failed a request its client no longer waits "
                             "for: %s", self.label, task.exception())

        sent.add_done_callback(answered)
        try:
            with anyio.fail_after(self.request_timeout):
                while True:
                    while call.queued:  # in order, and what came before the answer first
                        await call.queued.pop(0).run()
                    if sent.done():
                        break
                    call.wake = anyio.Event()
                    if not sent.done() and not call.queued:
                        await call.wake.wait()
        finally:
            call.leave()
            if not sent.done():
                self._abandoned(call)
        return sent.result()

    def _abandoned(self, call: _Call) -> None:
        """``call``'s front request gave up on it: it stays outstanding (the upstream may
        still ask on its behalf) for ``abandoned_grace`` s, and among the latest
        ``max_abandoned`` such calls; then it is given up. Unbounded, one call the upstream
        never answers refused every relay to every other caller for the whole session, and
        each abandoned call held its request's memory for good."""
        if self.abandoned_grace is not None:
            call.expiry = asyncio.get_running_loop().call_later(
                self.abandoned_grace, self._give_up, call,
                f"its client gave up on it over {self.abandoned_grace:g} s ago")
        abandoned = [c for c in self._calls if not c.waiting]
        for oldest in abandoned[:max(0, len(abandoned) - self.max_abandoned)]:
            self._give_up(oldest, f"more than {self.max_abandoned} requests their clients "
                                  "gave up on were outstanding")

    def _give_up(self, call: _Call, why: str) -> None:
        """Cancel ``call`` upstream (the SDK sends ``notifications/cancelled``) and stop
        counting it: what the upstream asks from then on is routed without it."""
        if call not in self._calls:
            return
        self._calls.remove(call)
        if call.expiry is not None:
            call.expiry.cancel()
        if call.sent is not None:
            call.sent.cancel()
        logger.info("upstream %s: a request cancelled, as %s", self.label, why)

    def _route(self, what: str) -> _Call:
        """The waiting call to relay ``what`` through: the latest of the one caller whose
        requests are every request outstanding. Raises ``UnroutableRequest`` otherwise."""
        callers = {id(c.caller) if c.caller is not None else id(c) for c in self._calls}
        sent = f"upstream MCP server {self.label} sent {what} while"
        if len(callers) > 1:
            # no count: the upstream's tool may hand this to its caller, who need not learn it
            raise UnroutableRequest(
                f"{sent} requests of more than one client were in flight on its one shared "
                "session; the proxy cannot tell which client it is for, so it refuses it "
                "rather than risk reaching the wrong one")
        waiting = [c for c in self._calls if c.waiting and c.caller is not None]
        if not waiting:
            raise UnroutableRequest(
                f"{sent} no client request was waiting on its session; the proxy has no "
                "client to relay it to")
        return waiting[-1]

    async def _relay(self, what: str, work: Callable[[], Awaitable[T]]) -> T:
        relay = _Relay(work)
        self._route(what).hand(relay)
        result: T = await relay.outcome()
        return result

    # -- the relays -----------------------------------------------------------------------
    async def _relay_elicitation(self, message: str, response_type: Any, params: Any,
                                 context: Any) -> Any:
        return await self._relay("an elicitation request", lambda: (
            fastmcp_proxy.default_proxy_elicitation_handler(message, response_type, params,
                                                            context)))

    async def _relay_sampling(self, messages: Any, params: Any, context: Any) -> Any:
        return await self._relay("a sampling request", lambda: (
            fastmcp_proxy.default_proxy_sampling_handler(messages, params, context)))

    async def _relay_roots(self, context: Any) -> Any:
        try:
            session = self._roots_session()
            if session is None and all(c.caller is None for c in self._calls):
                return []  # no client yet: no roots (``roots.py``), not a failure
            if session is None:
                return await self._relay("a roots/list request", lambda: (
                    fastmcp_proxy.default_proxy_roots_handler(context)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated in 2026-07-28, not in our era
                return (await session.list_roots()).roots
        finally:
            self._roots_answered()

    async def _relay_log(self, message: Any) -> None:
        try:
            call = self._route("a log message")
        except UnroutableRequest as exc:
            text = str(getattr(message, "data", message))[:LOGGED_TEXT]
            logger.info("%s; its log message, not relayed: %s", exc, text)
            return
        call.hand(_Relay(lambda: fastmcp_proxy.default_proxy_log_handler(message)))

    async def _relay_message(self, message: Any) -> None:
        if isinstance(message, mt.ResourceUpdatedNotification):
            if self._resource_updated is not None:
                await self._resource_updated(str(message.params.uri))
            return
        if not isinstance(message, _LIST_CHANGED):
            return
        waiting = [c for c in self._calls if c.waiting and c.caller is not None]
        if waiting:
            waiting[-1].hand(_Relay(lambda: get_context().send_notification(message)))

    async def _unrouted_progress(self, progress: float, total: float | None,
                                 message: str | None) -> None:
        logger.debug("progress from upstream %s outside a proxied tool call, not relayed: "
                     "%s/%s %s", self.label, progress, total, message)

    # -- the requests a proxy sends ---------------------------------------------------------
    async def call_tool_mcp(self, name: str, arguments: dict[str, Any],
                            progress_handler: Any = None, timeout: Any = None,
                            meta: dict[str, Any] | None = None) -> mt.CallToolResult:
        """FastMCP's ``call_tool_mcp``, sent as ``_send`` says; its progress goes to the
        front request making it while that request waits."""
        parent = super().call_tool_mcp

        async def send(call: _Call) -> mt.CallToolResult:
            async def relay_progress(progress: float, total: float | None,
                                     message: str | None) -> None:
                if call.waiting:
                    call.hand(_Relay(lambda: fastmcp_proxy.default_proxy_progress_handler(
                        progress, total, message)))

            result: mt.CallToolResult = await parent(
                name, arguments, progress_handler=progress_handler or relay_progress,
                timeout=timeout, meta=meta)
            return result

        return await self._send(send)

    async def list_tools_mcp(self, *args: Any, **kwargs: Any) -> Any:
        return await self._send_as_is(super().list_tools_mcp, *args, **kwargs)

    async def list_resources_mcp(self, *args: Any, **kwargs: Any) -> Any:
        return await self._send_as_is(super().list_resources_mcp, *args, **kwargs)

    async def list_resource_templates_mcp(self, *args: Any, **kwargs: Any) -> Any:
        return await self._send_as_is(super().list_resource_templates_mcp, *args, **kwargs)

    async def read_resource_mcp(self, *args: Any, **kwargs: Any) -> Any:
        return await self._send_as_is(super().read_resource_mcp, *args, **kwargs)

    async def list_prompts_mcp(self, *args: Any, **kwargs: Any) -> Any:
        return await self._send_as_is(super().list_prompts_mcp, *args, **kwargs)

    async def get_prompt_mcp(self, *args: Any, **kwargs: Any) -> Any:
        return await self._send_as_is(super().get_prompt_mcp, *args, **kwargs)

    async def complete_mcp(self, *args: Any, **kwargs: Any) -> Any:
        return await self._send_as_is(super().complete_mcp, *args, **kwargs)

    async def ping(self) -> bool:
        answered: bool = await self._send_as_is(super().ping)
        return answered

    async def subscribe_resource(self, uri: str) -> None:
        """``resources/subscribe`` (FastMCP's client has no method for it: the session's)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated in 2026-07-28, not in our era
            await self._send_as_is(self.session.subscribe_resource, uri)

    async def unsubscribe_resource(self, uri: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await self._send_as_is(self.session.unsubscribe_resource, uri)

    async def _send_as_is(self, method: Callable[..., Awaitable[T]], *args: Any,
                          **kwargs: Any) -> T:
        return await self._send(lambda _: method(*args, **kwargs))


def _current_caller() -> Any:
    """The front caller being served here: its handshake connection, or its request (a
    2026-07-28 request stands alone); None for the proxy's own requests."""
    try:
        ctx = get_context()
    except RuntimeError:
        return None
    rc = ctx.request_context
    if rc is None:
        return None
    return request_connection(rc.session) or rc
