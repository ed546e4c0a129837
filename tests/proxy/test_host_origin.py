"""DNS-rebinding protection on ``fastmcp-progressive proxy --http`` (FastMCP's Host/Origin
guard, ``host_origin_protection="auto"``): a loopback front refuses a foreign ``Host`` or
``Origin`` with 421, as FastMCP itself does with the guard on; ``--no-host-origin-protection``
turns it off. Before, the front answered such a request 200, so a web page the user opened
could reach it (and every upstream behind it) through a rebound DNS name.
"""

from __future__ import annotations

import json
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.proxy.test_front import BOUND, UPSTREAM_APP, proxy_process
from tests.waiting import free_port, port_open, until_sync

pytestmark = pytest.mark.slow  # proxy and upstream processes
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "rebinding-test", "version": "1.0.0"}}}


def initialize_status(port: int, host: str) -> int:
    """The HTTP status of an ``initialize`` sent with ``Host``/``Origin`` ``host``."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp", data=json.dumps(INITIALIZE).encode(), method="POST",
        headers={"Host": host, "Origin": f"http://{host}", "Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=BOUND) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        return refused.code


@pytest.mark.parametrize(("flags", "foreign"), [((), 421),
                                                (("--no-host-origin-protection",), 200)])
def test_a_loopback_front_refuses_a_foreign_host(tmp_path: Path, flags: tuple[str, ...],
                                                 foreign: int) -> None:
    app = tmp_path / "upstream_app.py"
    app.write_text(UPSTREAM_APP, encoding="utf-8")
    port = free_port()
    process = proxy_process("--http", str(port), *flags, "--", sys.executable, str(app),
                            cwd=tmp_path)
    try:
        until_sync(lambda: port_open(port), 60, "the proxy to listen", process=process)
        assert initialize_status(port, "evil.example.com") == foreign
        assert initialize_status(port, f"127.0.0.1:{port}") == 200
        assert initialize_status(port, f"localhost:{port}") == 200
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.communicate(timeout=BOUND)
        except Exception:
            process.kill()
            process.communicate()
