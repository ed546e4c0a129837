"""Recognising sessions opened for one tool call: callers the server cannot follow.

Some hosts (LangChain's ``MultiServerMCPClient.get_tools()``, LlamaIndex's default
``BasicMCPClient``) open a brand-new session for every tool call: handshake, call, close.
A grant made in one such session is gone by the next call, so the spec's gate would
refuse that model forever. What gives them away is the order of requests: their session's
first real request is the ``tools/call`` itself, while a host that keeps its session lists
tools, reads a description or calls the bridge before (or instead of) calling a tool.

So each session (handshake era) remembers which came first. The mark lives on the
connection's own scratch state, so it is released when the connection ends, with no table
to bound or sweep. 2026-07-28 callers are never judged this way: that protocol forbids
relying on earlier requests over the same connection, so a caller there is its principal
or nobody (``caller.py``).

Example:
    ```python
    engagement = Engagement()
    engagement.note_request(caller, "tools/list")  # a host that keeps its session
    engagement.opened_with_call(caller)            # False: the spec's gate applies
    ```
"""

from __future__ import annotations

from typing import Literal

from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.fastmcp_internals import connection_state

First = Literal["call", "other"]
_STATE_KEY = "fastmcp_progressive.first_request"
IGNORED_METHODS = frozenset({"initialize", "ping", "server/discover", "logging/setLevel",
                             "tools/resolve"})
"""Requests that say nothing about the host: every client sends them whatever it does next,
or (``tools/resolve``) right before the call they advise, in the call's own session."""


class Engagement:
    """Per handshake-era session: was its first real request a ``tools/call``?"""

    def note_request(self, caller: Caller, method: str) -> None:
        """Record a request other than a tool call (no-op once the first one is known)."""
        if method in IGNORED_METHODS or method == "tools/call":
            return
        self._settle(caller, "other")

    def note_bridge_call(self, caller: Caller) -> None:
        """A call of the bridge tool engages with the workflow like a read does."""
        self._settle(caller, "other")

    def opened_with_call(self, caller: Caller) -> bool:
        """Whether ``caller``'s first real request was a tool call (this one, if none yet).

        Only handshake-era sessions are judged; other callers answer False.
        """
        return self._settle(caller, "call") == "call"

    def _settle(self, caller: Caller, first: First) -> First | None:
        """Record ``first`` unless something came before; return what came first."""
        if caller.kind == "session":
            state = connection_state(caller.anchor)
            if state is None:
                return None
            return state.setdefault(_STATE_KEY, first)  # type: ignore[no-any-return]
        return None
