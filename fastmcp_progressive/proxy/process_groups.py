"""Stopping an upstream's process group: now (``stop_process_groups``), or once the proxy is
gone however it ended (``GroupReaper``, a tiny process of its own). POSIX only; on Windows
the SDK's job object does this.

Example:
    ```python
    reaper = GroupReaper.start(process.pid)  # the group is stopped even if we are killed
    stop_process_groups([process.pid])       # SIGTERM, then SIGKILL after the grace
    ```
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

from fastmcp_progressive.log import get_logger

logger = get_logger("proxy")

GROUP_STOP_GRACE = 2.0  # seconds an upstream's process group gets between SIGTERM and SIGKILL


_REAPER = """
import os, signal, sys, time
group = int(sys.argv[1])
sys.stdin.buffer.read()  # until the proxy closes its end: at shutdown, or when it dies
def alive(sig):
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
if alive(signal.SIGTERM):
    deadline = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < deadline and alive(0):
        time.sleep(0.02)
    alive(signal.SIGKILL)
"""


class GroupReaper:
    """A tiny process that stops an upstream's process group once the proxy is gone.

    The proxy stops the group itself on shutdown, but a proxy killed outright (SIGKILL, a
    crash, an out-of-memory kill) runs no shutdown: the upstream sees its stdin close and
    may exit, while the processes it started keep running. The reaper holds the read end
    of a pipe only the proxy writes to; when the proxy's end closes, however the proxy
    ended, it stops the group. It runs in its own session, so a host that kills the
    proxy's process group does not kill it first. POSIX only.
    """

    def __init__(self, process: subprocess.Popen[bytes], write_fd: int) -> None:
        self.process = process
        self._write_fd: int | None = write_fd

    @classmethod
    def start(cls, pgid: int) -> GroupReaper | None:
        if sys.platform == "win32":  # the SDK's job object ends with us there
            return None
        read_fd, write_fd = os.pipe()  # not inherited by the upstreams (O_CLOEXEC)
        try:
            process = subprocess.Popen(
                [sys.executable, "-S", "-c", _REAPER, str(pgid), str(GROUP_STOP_GRACE)],
                stdin=read_fd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True,
            )
        except OSError as exc:
            logger.warning("cannot start a reaper for upstream process group %d: %s", pgid,
                           exc)
            os.close(write_fd)
            return None
        finally:
            os.close(read_fd)
        return cls(process, write_fd)

    def release(self) -> None:
        """Our end closes: the reaper stops the group (already stopped) and exits."""
        if self._write_fd is not None:
            os.close(self._write_fd)
            self._write_fd = None
        try:
            self.process.wait(timeout=GROUP_STOP_GRACE + 3)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def stop_process_groups(pgids: Sequence[int], grace: float = GROUP_STOP_GRACE) -> None:
    """SIGTERM each process group still alive, SIGKILL what is left after ``grace`` s.

    The groups are the upstreams' own (the SDK starts each in a new session), so this
    never reaches the proxy or another upstream. Blocking: run it in a thread.
    """
    if sys.platform == "win32" or not pgids:  # Windows: the SDK's job object does this
        return
    alive = [pgid for pgid in pgids if _signal_group(pgid, signal.SIGTERM)]
    deadline = time.monotonic() + grace
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [pgid for pgid in alive if _signal_group(pgid, 0)]
    for pgid in alive:
        _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to group ``pgid``; whether the group still exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
