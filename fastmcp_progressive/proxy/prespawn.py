"""Start ``proxy``'s upstream commands first, while the proxy itself is still importing.

A host waits for the proxy, and the proxy waits for its upstreams: both start from zero,
one after the other (Python importing FastMCP, then node or Python starting each server).
``fastmcp-progressive proxy`` therefore starts its command upstreams before anything heavy
is imported (``launch.py`` calls ``start`` with the command line), so they boot on the other
cores while we import. Later, when FastMCP's stdio transport asks the MCP SDK for the
process, it gets the one already running (``take``, through the spawn hook in
``fastmcp_internals.record_spawned_pids``), with the same command, arguments, environment
and folder it would have used, in its own session, stderr already captured
(``StderrTail``). Anything unclear (an unreadable config, a URL) starts nothing early: the
normal path then starts it. Processes never taken are stopped at exit.

Only the standard library and anyio are imported here.

Example:
    ```python
    prespawn.start(["--config", "mcp.json"])   # before importing the proxy
    ```
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import anyio.abc

from fastmcp_progressive.proxy.stderr_tail import StderrTail

Key = tuple[tuple[str, ...], str | None]
_waiting: dict[Key, tuple[subprocess.Popen[bytes], StderrTail]] = {}
CONFIG_ENV = "FASTMCP_PROGRESSIVE_CONFIG"


def start(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> int:
    """Start the command upstreams ``proxy ARGV`` will serve; how many were started."""
    environ = os.environ if environ is None else environ
    wanted = _commands(list(argv), environ)
    for name, command, env, cwd in wanted:
        key: Key = (tuple(command), cwd)
        if key in _waiting:
            continue
        tail = StderrTail(prefix=f"[{name}] " if name else "")
        try:
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=tail.writer,
                env={**environ, **env}, cwd=cwd, start_new_session=True, close_fds=True,
            )
        except (OSError, ValueError):  # not found, not executable: the normal path says so
            tail.close()
            continue
        _waiting[key] = (process, tail)
    return len(_waiting)


def tail_for(argv: Sequence[str], cwd: str | None) -> StderrTail | None:
    """The stderr tail of the waiting process for ``argv`` in ``cwd``, if there is one."""
    found = _waiting.get((tuple(argv), cwd))
    return found[1] if found is not None else None


def take(argv: Sequence[str], cwd: str | None) -> Prespawned | None:
    """The waiting process for ``argv`` in ``cwd`` (once), as the MCP SDK's process type."""
    found = _waiting.pop((tuple(argv), cwd), None)
    if found is None:
        return None
    return Prespawned(found[0])


@atexit.register
def _stop_waiting() -> None:
    """Processes started early and never taken (the proxy stopped first) do not outlive us."""
    while _waiting:
        _, (process, tail) = _waiting.popitem()
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            process.wait(timeout=5)
        tail.close()


def _commands(argv: list[str], environ: Mapping[str, str]
              ) -> list[tuple[str, list[str], dict[str, str], str | None]]:
    """``(name, command line, extra environment, folder)`` of each command to start early."""
    if "--" in argv:
        line = argv[argv.index("--") + 1:]
        return [("", line, {}, None)] if line else []
    config = _option(argv, "--config") or environ.get(CONFIG_ENV)
    if not config:
        return []
    try:
        with open(config, encoding="utf-8") as handle:
            raw = json.load(handle)
    except (OSError, ValueError):
        return []
    servers = raw.get("mcpServers", raw) if isinstance(raw, dict) else None
    if not isinstance(servers, dict):
        return []
    found: list[tuple[str, list[str], dict[str, str], str | None]] = []
    for name, entry in servers.items():
        if not isinstance(entry, dict) or entry.get("disabled") is True:
            continue
        command: Any = entry.get("command")
        args: Any = entry.get("args", [])
        env: Any = entry.get("env", {})
        cwd: Any = entry.get("cwd")
        if not (isinstance(command, str) and command and isinstance(args, list)
                and all(isinstance(a, str) for a in args) and isinstance(env, dict)
                and (cwd is None or isinstance(cwd, str))):
            continue  # anything unusual: the normal path starts (or refuses) it
        found.append((name, [command, *args], {k: str(v) for k, v in env.items()}, cwd))
    return found


def _option(argv: list[str], flag: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--":
            return None
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


# -- the process, as the MCP SDK's stdio client uses it ---------------------------------------
class Prespawned(anyio.abc.Process):
    """An already running ``subprocess.Popen`` behind anyio's process interface (what the
    MCP SDK's stdio client reads, writes, waits for and stops), over non-blocking pipes."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._stdin = _PipeSend(process.stdin.fileno(), process.stdin)
        self._stdout = _PipeReceive(process.stdout.fileno(), process.stdout)

    async def aclose(self) -> None:
        await self._stdin.aclose()
        await self._stdout.aclose()
        await self.wait()

    async def wait(self) -> int:
        while (code := self._process.poll()) is None:
            await anyio.sleep(0.02)
        return code

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()

    def send_signal(self, sig: signal.Signals) -> None:
        self._process.send_signal(sig)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.poll()

    @property
    def stdin(self) -> anyio.abc.ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> None:
        return None


class _PipeReceive(anyio.abc.ByteReceiveStream):
    def __init__(self, fd: int, owner: Any) -> None:
        os.set_blocking(fd, False)
        self._fd, self._owner, self._closed = fd, owner, False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            return data

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._owner.close()


class _PipeSend(anyio.abc.ByteSendStream):
    def __init__(self, fd: int, owner: Any) -> None:
        os.set_blocking(fd, False)
        self._fd, self._owner, self._closed = fd, owner, False

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise anyio.BrokenResourceError from None
            view = view[written:]

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            with contextlib.suppress(OSError):
                self._owner.close()
