"""Whether an outer ``ProgressiveDisclosure`` already let the current ``tools/call`` through.

A tool body may call other tools of its server (a search transform's ``call_tool``,
CodeMode's ``execute``), and a parent server runs a mounted child's tool by calling the
child. Those inner calls are not the client's own, so FastMCP marks them as nested. An
inner call is waved through only when the outer call passed a ``ProgressiveDisclosure``
gate (ours or a parent's): a child mounted under a parent without the middleware keeps
gating its own tools instead of silently running every one.

Unlike the catalog's "listing for myself" flag (one per middleware instance), this flag is
shared by every ``ProgressiveDisclosure`` on purpose: it is how a mounted child's
middleware learns that its parent's gate already passed the call.

Example:
    ```python
    call_next = let_through(call_next)  # whatever this hook passes on is marked as passed
    if is_nested_tool_call() and passed_outer_gate(): ...
    ```
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, TypeVar

from fastmcp.server.middleware import CallNext

_passed: ContextVar[bool] = ContextVar("fastmcp_progressive_passed_gate", default=False)

T = TypeVar("T")
R = TypeVar("R")


def passed_outer_gate() -> bool:
    """True inside a call an outer gate let through."""
    return _passed.get()


def let_through(call_next: CallNext[T, R]) -> CallNext[T, R]:
    """``call_next`` that marks everything it runs as having passed the gate."""

    async def passed(context: Any) -> R:
        token = _passed.set(True)
        try:
            return await call_next(context)
        finally:
            _passed.reset(token)

    return passed
