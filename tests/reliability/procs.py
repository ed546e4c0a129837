"""Real processes for the reliability tests: a redis-server and replica servers.

Readiness is always a poll with an overall deadline (connect, or PING for Redis), never a
fixed sleep. Every process started here is stopped by the object that started it, by pid.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from tests.waiting import free_port, port_open, until_sync

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
REPLICA_SCRIPT = HERE / "replica_server.py"
REDIS_SERVER = shutil.which("redis-server") or (
    "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
)
SETPRIV = shutil.which("setpriv")
START_DEADLINE = 30.0


def without_file_permission_override() -> list[str] | None:
    """A command prefix under which file permissions apply to this process's children.

    As root, ``chmod 000`` blocks nothing: CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH bypass
    it. ``setpriv`` (util-linux) drops both from the bounding set, so the child runs as
    root but is refused unreadable files like any user. Not root: no prefix needed.
    None when root and ``setpriv`` is missing.
    """
    if os.geteuid() != 0:
        return []
    if SETPRIV is None:
        return None
    return [SETPRIV, "--bounding-set=-dac_override,-dac_read_search", "--"]


def redis_ping(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """``redis-server`` on 127.0.0.1:``port`` with a temp dir, no persistence."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        if REDIS_SERVER is None:
            raise RuntimeError("redis-server is not installed")
        self.directory = directory
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.frozen = False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        assert REDIS_SERVER is not None
        self.directory.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.directory), "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        until_sync(lambda: redis_ping(self.port), START_DEADLINE, "redis-server",
                   process=self.proc)
        return self

    def freeze(self) -> None:
        """SIGSTOP: the socket still accepts (kernel backlog) but nothing answers."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.frozen = True

    def thaw(self) -> None:
        if self.proc is not None and self.frozen:
            os.kill(self.proc.pid, signal.SIGCONT)
        self.frozen = False

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        if self.frozen:  # a stopped process never handles SIGTERM
            os.kill(proc.pid, signal.SIGCONT)
            self.frozen = False
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


class Replica:
    """``replica_server.py PORT REDIS_URL ...`` as a subprocess; its stderr kept in a file."""

    def __init__(
        self,
        redis_url: str,
        log_dir: Path,
        *options: str,
        name: str = "replica",
        prefix: Sequence[str] = (),
    ) -> None:
        self.port = free_port()
        self.redis_url = redis_url
        self.options: Sequence[str] = options
        self.name = name
        self.prefix = prefix
        self.log_path = log_dir / f"{name}-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def launch(self) -> Replica:
        """Start the process without waiting (several can start at once)."""
        self._log = open(self.log_path, "wb")  # noqa: SIM115 (closed in stop)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", FASTMCP_CHECK_FOR_UPDATES="off",
                   COLUMNS="400")  # rich log lines unwrapped: the tests match them whole
        self.proc = subprocess.Popen(
            [*self.prefix, sys.executable, str(REPLICA_SCRIPT), str(self.port),
             self.redis_url, *self.options],
            cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, env=env,
        )
        return self

    def wait_ready(self) -> Replica:
        assert self.proc is not None
        try:
            until_sync(lambda: port_open(self.port), START_DEADLINE, self.name, process=self.proc)
        except (RuntimeError, TimeoutError) as exc:
            raise RuntimeError(f"{exc}; log:\n{self.log()}") from None
        return self

    def log(self) -> str:
        if self._log is not None:
            self._log.flush()
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        if self._log is not None:
            self._log.close()
            self._log = None


def start_replicas(replicas: Sequence[Replica]) -> None:
    """Launch all, then wait for all: they import FastMCP in parallel."""
    for replica in replicas:
        replica.launch()
    for replica in replicas:
        replica.wait_ready()
