"""Running a server author's Python hook (a resolver hook, a mode resolver) safely.

A hook is the operator's code, run on requests: a synchronous one called on the event loop
blocks every client while it runs, one that never returns hangs its request, and one that
raises ``SystemExit`` (or ``KeyboardInterrupt``) from inside a request stops the server.
``call_hook`` runs a synchronous hook in a worker thread (a limiter of its own, so hung
hooks cannot starve FastMCP's own sync tools of threads), an async one on the loop, both
within a time limit, and turns every way a hook can fail (an exception of any kind but the
request's own cancellation, or the time limit) into ``HookFailed`` with a short reason.
The caller decides the safe outcome (fail closed); the hook's thread, if it never returns,
is abandoned rather than waited for.

Example:
    ```python
    limiter = hook_limiter()
    try:
        out = await call_hook(hook, arguments, timeout=1.0, limiter=limiter)
    except HookFailed as failed:
        logger.error("hook failed: %s", failed)
    ```
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

from fastmcp_progressive.payloads import shortened

HOOK_THREADS = 4
"""Worker threads hooks of one kind may hold at once (hung ones included)."""


class HookFailed(Exception):
    """A hook did not give an answer: it raised, or ran past its time limit (its message:
    the short reason)."""


def hook_limiter() -> anyio.CapacityLimiter:
    """The worker threads one kind of hook may use (``HOOK_THREADS``)."""
    return anyio.CapacityLimiter(HOOK_THREADS)


async def call_hook(hook: Callable[[Any], Any], argument: Any, *, timeout: float,
                    limiter: anyio.CapacityLimiter) -> Any:
    """``hook(argument)``, awaited when it gives an awaitable, within ``timeout`` seconds;
    a synchronous hook runs in a worker thread. Raises ``HookFailed`` for any failure; the
    request's own cancellation passes through."""
    cancelled = anyio.get_cancelled_exc_class()
    out: Any = None
    try:
        with anyio.move_on_after(timeout) as scope:
            if inspect.iscoroutinefunction(hook) or inspect.iscoroutinefunction(
                    getattr(hook, "__call__", None)):  # noqa: B004 - an object's async __call__
                out = hook(argument)
            else:
                out = await anyio.to_thread.run_sync(hook, argument, limiter=limiter,
                                                     abandon_on_cancel=True)
            if inspect.isawaitable(out):
                out = await out
    except cancelled:
        raise
    except BaseException as exc:  # SystemExit from a hook must not stop the server
        raise HookFailed(f"raised {type(exc).__name__}: {shortened(str(exc), 200)}") from exc
    if scope.cancelled_caught:
        raise HookFailed(f"did not answer within {timeout:g} s")
    return out
