"""Waiting in tests, written once: poll a condition with a deadline, or wait on an event.

Tests never sleep to synchronise. They wait on an event (``watcher_ready``), or poll a
condition until it holds and fail, saying what they waited for, once the deadline passes.
A deadline only bounds a hang: ``PATIENCE`` (300 s) by default, which a passing test never
comes near even on 2 cores beside 8 busy processes and two other suites; what a test
asserts is counted work (requests, calls, bytes), never how long something took (issue 34).

- ``until(check, timeout, what)``: async; ``check`` may be sync or async; fails the test.
- ``reached(check, timeout)``: the same poll, answering whether it held in time.
- ``until_sync(check, timeout, what, process=...)``: for plain threads and process start-up;
  stops early, saying so, when the ``process`` being waited for has exited.
- ``finishes(fn, what)``: ``fn()`` on a daemon thread; fails the test, instead of hanging
  it, when it has not returned within the deadline (a call that may block forever).
- ``free_port()`` / ``port_open(port)``: a port to start a server on, and whether it listens.
- ``watcher_ready(middleware)`` / ``watcher_armed(middleware)``: the description-file
  watcher has armed (async / sync).
- ``ListChangedRecorder``: a client message handler that counts
  ``notifications/tools/list_changed`` and lets a test await the next one.

Example:
    ```python
    await until(lambda: recorder.count == 2, what="two list_changed notifications")
    until_sync(lambda: port_open(port), PATIENCE, "redis-server", process=proc)
    ```
"""

from __future__ import annotations

import inspect
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import mcp_types as mt
from fastmcp.client.messages import MessageHandler

from fastmcp_progressive import ProgressiveDisclosure
from tests.parts import parts

T = TypeVar("T")
Check = Callable[[], Any]
"""A condition: returns something truthy once it holds (an awaitable for async checks)."""

PATIENCE = 300.0
"""Seconds a test waits for something before it fails as hung: a deadline, never a
measurement. Generous on purpose: a loaded 2-core machine is slow, not stuck (at 60 s, three
suites run at once beside 8 busy loops missed it: a proxy's start, a replica's recovery)."""
WATCHER_SECONDS = PATIENCE


async def _holds(check: Check) -> bool:
    value = check()
    if inspect.isawaitable(value):
        value = await value
    return bool(value)


async def reached(check: Check, timeout: float, *, interval: float = 0.01) -> bool:
    """Poll ``check`` every ``interval`` seconds; whether it held within ``timeout``."""
    deadline = time.monotonic() + timeout
    while not await _holds(check):
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(interval)
    return True


async def until(check: Check, timeout: float = PATIENCE, what: str = "", *,
                interval: float = 0.01) -> None:
    """Poll ``check`` until it holds; fail the test after ``timeout`` seconds."""
    if not await reached(check, timeout, interval=interval):
        raise AssertionError(f"timed out after {timeout}s waiting for {what or check}")


def until_sync(check: Callable[[], bool], timeout: float, what: str, *,
               interval: float = 0.02, process: subprocess.Popen[Any] | None = None) -> None:
    """Blocking ``until``: raises ``TimeoutError``, or ``RuntimeError`` once ``process``
    (the thing being waited for) has exited."""
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode} while starting")
        if check():
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not ready within {timeout}s")
        time.sleep(interval)


def finishes(fn: Callable[[], T], what: str, timeout: float = PATIENCE) -> T:
    """``fn()``'s value, run on a daemon thread so a call blocked for good (a FIFO opened
    for reading) fails the test after ``timeout`` seconds instead of hanging the suite."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(fn())
        except BaseException as exc:  # re-raised on the test's thread
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"finishes: {what}", daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"{what} still runs after {timeout}s: hung"
    if failure:
        raise failure[0]
    return outcome[0]


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (for a server process this test starts)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_open(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _ready_event(middleware: ProgressiveDisclosure) -> Any:
    watcher = parts(middleware).hot_reload.watcher
    assert watcher is not None, "the middleware has no description-file watcher"
    return watcher.ready


def watcher_armed(middleware: ProgressiveDisclosure, timeout: float = WATCHER_SECONDS) -> None:
    """Block until the middleware's description-file watcher has armed."""
    assert _ready_event(middleware).wait(timeout), "watcher never armed"


async def watcher_ready(middleware: ProgressiveDisclosure,
                        timeout: float = WATCHER_SECONDS) -> None:
    """Wait (off the event loop) until the description-file watcher has armed."""
    ready = _ready_event(middleware)
    assert await anyio.to_thread.run_sync(ready.wait, timeout), "watcher never armed"


class ListChangedRecorder(MessageHandler):
    """Counts tools/list_changed notifications and lets a test await the next one.

    ``times`` holds one entry per notification, its ordinal (1, 2, ...): how many arrived
    and in which order, never when (no clock: issue 34)."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[int] = []
        self._event = anyio.Event()

    @property
    def count(self) -> int:
        return len(self.times)

    async def on_tool_list_changed(self, message: mt.ToolListChangedNotification) -> None:
        self.times.append(len(self.times) + 1)
        self._event.set()

    async def next(self, timeout: float = PATIENCE) -> int:
        """The ordinal of the next notification (one already received counts)."""
        with anyio.fail_after(timeout):
            await self._event.wait()
        self._event = anyio.Event()
        return self.times[-1]


