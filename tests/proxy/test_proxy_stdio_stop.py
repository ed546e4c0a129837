"""The real ``proxy`` process over stdio stops on SIGTERM, SIGINT and SIGHUP while its
host keeps stdin open, and stops its upstream (and what that started) before it exits.

The MCP SDK reads stdin in a worker thread, which a cancellation waits for: the proxy
used to stop answering on a signal but stay up, its upstreams too, until stdin closed
(#34). Here the host is this test, holding the proxy's stdin open throughout.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.test_front import BOUND, alive, handles, proxy_process
from tests.proxy.test_gateway_processes import SPAWNING_UPSTREAM
from tests.waiting import until_sync

pytestmark = [
    pytest.mark.slow,  # proxy and upstream processes
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds processes through /proc"),
]

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "held-open", "version": "1"}}}


def answer(process: Any, request: dict[str, Any]) -> dict[str, Any]:
    """Send ``request`` on the proxy's stdin and read its answer line (within ``BOUND`` s)."""
    process.stdin.write(json.dumps(request) + "\n")
    process.stdin.flush()
    ready, _, _ = select.select([process.stdout], [], [], BOUND)
    assert ready, f"no answer to {request['method']} within {BOUND} s"
    line: str = process.stdout.readline()
    return dict(json.loads(line))


@pytest.mark.parametrize(("sig", "form"), [
    ("SIGTERM", "command"), ("SIGINT", "command"), ("SIGHUP", "command"), ("SIGTERM", "config")])
def test_a_signal_stops_the_stdio_proxy_and_its_upstream_with_stdin_open(
        sig: str, form: str, tmp_path: Path) -> None:
    app = tmp_path / "spawning_upstream.py"
    app.write_text(SPAWNING_UPSTREAM, encoding="utf-8")
    pids = tmp_path / "pids"
    command = [sys.executable, str(app), str(pids)]
    if form == "config":  # a gateway of one server
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"spawner": {
            "command": command[0], "args": command[1:]}}}), encoding="utf-8")
        process = proxy_process("--config", str(config), cwd=tmp_path)
    else:
        process = proxy_process("--", *command, cwd=tmp_path)
    upstream = child = 0
    try:
        until_sync(lambda: handles(process.pid, signal.SIGTERM), BOUND,
                   "the proxy to listen for signals", process=process)
        assert answer(process, INITIALIZE)["result"]["serverInfo"]  # serving stdio now
        upstream, child = map(int, pids.read_text(encoding="utf-8").split())
        process.send_signal(getattr(signal, sig))  # stdin stays open
        until_sync(lambda: process.poll() is not None, BOUND, "the proxy to exit")
        until_sync(lambda: not alive(upstream) and not alive(child), BOUND,
                   "the upstream and its own child to stop")
    finally:
        if process.poll() is None:
            process.kill()
        process.stdin.close()
        err = process.stderr.read()
        process.wait()
        for pid in (upstream, child):
            if pid and alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert process.returncode == 0, err
    assert "Traceback" not in err, err
