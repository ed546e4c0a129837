"""The real ``fastmcp-progressive proxy`` process in front of real upstream processes.

- ``--config``: three upstreams at once (``server-filesystem`` and ``server-memory`` from npm,
  a Python FastMCP server over stdio), driven by ``fastmcp.Client`` over stdio and over
  streamable HTTP, both protocol eras; one upstream killed mid-session is named while the
  others keep serving; options from the environment (``FASTMCP_PROGRESSIVE_*``).
- MCP roots reach the upstream: the host's narrower folder, not the command line's.
- The upstream's own child processes stop with the proxy, even one hung up on or killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport

from fastmcp_progressive.proxy.gateway import STATUS_URI
from tests.conftest import ERAS, Era
from tests.proxy.test_proxy_npm import (
    DEADLINE,
    MARKER,
    cli_over_http,
    cli_over_stdio,
    mode,
    node_pids,
    npm,  # noqa: F401  (fixture)
    refused_then_served,
    text_of,
)
from tests.waiting import free_port, port_open, until

pytestmark = [
    pytest.mark.xdist_group("npm-servers"),
    pytest.mark.slow,  # node and Python upstream processes, a proxy process per test
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds processes through /proc"),
]

PY_UPSTREAM = """
import os
from fastmcp import FastMCP
mcp = FastMCP("calc", instructions="Integer arithmetic.")

@mcp.tool
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

@mcp.tool
def pid() -> int:
    '''This process's id.'''
    return os.getpid()

mcp.run(show_banner=False)
"""


def py_upstream(tmp_path: Path) -> Path:
    app = tmp_path / "calc_upstream.py"
    app.write_text(PY_UPSTREAM, encoding="utf-8")
    return app


def three_servers(servers: dict[str, list[str]], tmp_path: Path) -> Path:
    """An mcpServers file: server-filesystem, server-memory (npm) and a Python server."""
    files = tmp_path / "files"
    files.mkdir(exist_ok=True)
    (files / "notes.txt").write_text("proxied file\n", encoding="utf-8")
    config = {"mcpServers": {
        "fs": {"command": servers["server-filesystem"][0],
               "args": [*servers["server-filesystem"][1:], str(files)],
               "exclude_tools": ["write_*", "edit_*", "move_*", "create_*"]},
        "memory": {"command": servers["server-memory"][0],
                   "args": servers["server-memory"][1:],
                   "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}},
        "calc": {"command": sys.executable, "args": [str(py_upstream(tmp_path))]},
    }}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


async def use_all_three(client: Client[Any], tmp_path: Path, era: str) -> None:
    names = {t.name for t in await client.list_tools()}
    assert {"fs_read_text_file", "fs_list_directory", "memory_create_entities",
            "memory_read_graph", "calc_add", "describe_tools"} <= names
    assert not any(n.startswith("fs_write") or n.startswith("fs_edit") for n in names)
    listed = await refused_then_served(client, "fs_list_directory",
                                       {"path": str(tmp_path / "files")}, "bridge")
    assert "notes.txt" in text_of(listed)
    entity = [{"name": f"gateway-{era}", "entityType": "test", "observations": ["x"]}]
    await refused_then_served(client, "memory_create_entities", {"entities": entity},
                              "resource")
    summed = await refused_then_served(client, "calc_add", {"a": 2, "b": 3}, "bridge")
    assert "5" in text_of(summed)


@pytest.mark.parametrize("era", ERAS)
async def test_config_three_upstreams_over_stdio(
    npm: dict[str, list[str]], era: Era, tmp_path: Path  # noqa: F811
) -> None:
    config = three_servers(npm, tmp_path)
    env = {MARKER: str(tmp_path)}
    async with cli_over_stdio(["--config", str(config)], era, env) as client:
        await use_all_three(client, tmp_path, era)
        status = json.loads((await client.read_resource(STATUS_URI))[0].text)  # type: ignore[union-attr]
        assert [u["state"] for u in status["upstreams"]] == ["serving"] * 3
        assert len(node_pids(tmp_path)) == 2
    await until(lambda: node_pids(tmp_path) == [], DEADLINE, "the node upstreams to stop",
                interval=0.05)


async def test_config_three_upstreams_over_http_from_the_environment(
    npm: dict[str, list[str]], tmp_path: Path  # noqa: F811
) -> None:
    """Options from FASTMCP_PROGRESSIVE_* (config, anonymous policy); both eras."""
    env = {MARKER: str(tmp_path), "FASTMCP_PROGRESSIVE_CONFIG": str(three_servers(npm, tmp_path)),
           "FASTMCP_PROGRESSIVE_ANONYMOUS": "shared"}
    async with cli_over_http([], env) as url:
        for era in ERAS:
            async with Client(StreamableHttpTransport(url), mode=mode(era)) as client:
                await use_all_three(client, tmp_path, era)
    await until(lambda: node_pids(tmp_path) == [], DEADLINE, "the node upstreams to stop",
                interval=0.05)


async def test_an_upstream_dying_is_named_and_the_others_keep_serving(
    npm: dict[str, list[str]], tmp_path: Path  # noqa: F811
) -> None:
    config = three_servers(npm, tmp_path)
    async with cli_over_stdio(["--config", str(config), "--exempt", "calc_pid",
                               "--exempt", "memory_read_graph"], "legacy",
                              {MARKER: str(tmp_path)}) as client:
        pid = (await client.call_tool("calc_pid", {})).data
        await client.call_tool("describe_tools", {"tools": ["calc_add"]})
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(DEADLINE):  # named, never hung
            failed = await client.call_tool("calc_add", {"a": 1, "b": 1},
                                            raise_on_error=False)
        assert failed.is_error and "`calc` has exited" in text_of(failed)
        graph = await client.call_tool("memory_read_graph", {}, raise_on_error=False)
        assert not graph.is_error  # another upstream, still serving
        status = json.loads((await client.read_resource(STATUS_URI))[0].text)  # type: ignore[union-attr]
        states = {u["name"]: u["state"] for u in status["upstreams"]}
        assert states == {"fs": "serving", "memory": "serving", "calc": "exited"}
        names = {t.name for t in await client.list_tools()}
        assert "fs_list_directory" in names and "calc_add" not in names


# -- roots -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["command", "config"])
async def test_the_hosts_roots_reach_server_filesystem(
    npm: dict[str, list[str]], form: str, tmp_path: Path  # noqa: F811
) -> None:
    """The host gives a narrower root than the command line: the upstream gets the host's.

    The tool is called as the session's first request (it is exempt): before roots were
    forwarded, the upstream answered with the command line's wider folder.
    """
    wide = tmp_path / "wide"
    narrow = wide / "narrow"
    narrow.mkdir(parents=True)
    command = [*npm["server-filesystem"], str(wide)]
    if form == "command":
        args, tool = ["--exempt", "list_allowed_directories", "--", *command], \
            "list_allowed_directories"
    else:
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"fs": {
            "command": command[0], "args": command[1:]}}}), encoding="utf-8")
        args, tool = ["--config", str(config), "--exempt", "fs_list_allowed_directories"], \
            "fs_list_allowed_directories"
    async with cli_over_stdio(args, "legacy", {MARKER: str(tmp_path)},
                              roots=[narrow.as_uri()]) as client:
        allowed = text_of(await client.call_tool(tool, {}))
    assert str(narrow) in allowed, allowed
    assert f"{wide}\n" not in allowed + "\n"


# -- process groups --------------------------------------------------------------------------------
SPAWNING_UPSTREAM = """
import json, subprocess, sys
# A minimal MCP server (handshake era) that starts a child of its own, as servers running
# their work in a subprocess do (npx running node), and whose tool "crash" makes it exit
# at once, leaving that child behind.
import os
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
open(sys.argv[1], "w").write(f"{os.getpid()} {child.pid}")
TOOLS = [{"name": name, "description": name, "inputSchema": {"type": "object"}}
         for name in ("ping", "crash")]
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, result = message["method"], {}
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "spawner", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and message["params"]["name"] == "crash":
        os._exit(3)
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "pong"}]}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def _proxy_over_a_spawning_upstream(tmp_path: Path) -> tuple[subprocess.Popen[bytes], int, Path]:
    """``proxy --http`` over ``SPAWNING_UPSTREAM``: the proxy, its port, and the file where
    the upstream writes its own pid and its child's."""
    app = tmp_path / "spawning_upstream.py"
    app.write_text(SPAWNING_UPSTREAM, encoding="utf-8")
    pid_file = tmp_path / "pids"
    port = free_port()
    proxy = subprocess.Popen(
        [sys.executable, "-m", "fastmcp_progressive", "proxy", "--http", f"127.0.0.1:{port}",
         "--exempt", "ping", "--", sys.executable, str(app), str(pid_file)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proxy, port, pid_file


@pytest.mark.parametrize("sig", ["SIGHUP", "SIGKILL"])
async def test_the_upstreams_own_children_stop_when_the_proxy_is_killed(
    sig: str, tmp_path: Path
) -> None:
    """A host or terminal that hangs up (SIGHUP), or a proxy killed outright (SIGKILL):
    the upstream's own child process does not outlive the proxy. Before, both left it
    running (SIGHUP killed the proxy without its shutdown; nothing outlived a SIGKILL)."""
    proxy, port, pid_file = _proxy_over_a_spawning_upstream(tmp_path)
    grandchild = 0
    try:
        await until(lambda: port_open(port), DEADLINE, "the proxy to listen", interval=0.05)
        async with Client(StreamableHttpTransport(f"http://127.0.0.1:{port}/mcp"),
                          mode="legacy") as client:
            assert text_of(await client.call_tool("ping", {})) == "pong"
        _, grandchild = map(int, pid_file.read_text(encoding="utf-8").split())
        assert _alive(grandchild)
        proxy.send_signal(getattr(signal, sig))
        proxy.wait(timeout=DEADLINE)
        await until(lambda: not _alive(grandchild), DEADLINE,
                    "the upstream's own child process to stop", interval=0.05)
    finally:
        if proxy.poll() is None:
            proxy.kill()
            proxy.wait()
        if grandchild and _alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie is dead, waiting for its parent to read its status


async def test_a_killed_upstream_is_reaped_and_its_children_stopped(tmp_path: Path) -> None:
    """An upstream killed from outside (as a user kills the ``npm exec`` of ``npx``): the
    proxy reaps it (no zombie parent left) and stops the processes it started, at once,
    while it keeps running and names the upstream as exited. Before, the killed process
    stayed a zombie and its child ran on until the proxy stopped (#27)."""
    proxy, port, pid_file = _proxy_over_a_spawning_upstream(tmp_path)
    upstream = grandchild = 0
    try:
        await until(lambda: port_open(port), DEADLINE, "the proxy to listen", interval=0.05)
        async with Client(StreamableHttpTransport(f"http://127.0.0.1:{port}/mcp"),
                          mode="legacy") as client:
            assert text_of(await client.call_tool("ping", {})) == "pong"
            upstream, grandchild = map(int, pid_file.read_text(encoding="utf-8").split())
            os.kill(upstream, signal.SIGKILL)
            await until(lambda: not Path(f"/proc/{upstream}").exists(), DEADLINE,
                        "the killed upstream to be reaped (not left a zombie)", interval=0.05)
            await until(lambda: not _alive(grandchild), DEADLINE,
                        "the killed upstream's own child process to stop", interval=0.05)
            failed = await client.call_tool("ping", {}, raise_on_error=False)
            assert failed.is_error and "has exited" in text_of(failed)
        assert proxy.poll() is None  # the proxy itself keeps running
    finally:
        proxy.kill()
        proxy.wait()
        for pid in (upstream, grandchild):
            if pid and _alive(pid):
                os.kill(pid, signal.SIGKILL)


# -- one process per upstream ----------------------------------------------------------------------
COUNTING_UPSTREAM = """
import json, os, sys
with open(sys.argv[1], "a") as log:  # one line per process started
    log.write(f"{os.getpid()}\\n")
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    result = {}
    if message["method"] == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "n", "version": "1"}}
    elif message["method"] == "tools/list":
        result = {"tools": [{"name": "ping", "description": "d",
                             "inputSchema": {"type": "object"}}]}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


@pytest.mark.parametrize("form", ["command", "config"])
async def test_each_upstream_is_started_once(form: str, tmp_path: Path) -> None:
    """The process the proxy checks at start-up is the one that serves: one process per
    upstream, never two."""
    app = tmp_path / "counting_upstream.py"
    app.write_text(COUNTING_UPSTREAM, encoding="utf-8")
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    if form == "command":
        args, logs = ["--", sys.executable, str(app), str(logs[0])], logs[:1]
    else:
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {
            name: {"command": sys.executable, "args": [str(app), str(log)]}
            for name, log in zip("ab", logs, strict=True)}}), encoding="utf-8")
        args = ["--config", str(config)]
    async with cli_over_stdio(args, "legacy") as client:
        names = {t.name for t in await client.list_tools()}
        assert names >= ({"ping"} if form == "command" else {"a_ping", "b_ping"})
        for log in logs:
            assert len(log.read_text(encoding="utf-8").split()) == 1, log


# -- one command, two entries ----------------------------------------------------------------------
WHO_UPSTREAM = """
import os, sys
from fastmcp import FastMCP
print(f"I am {os.environ['WHO']}", file=sys.stderr, flush=True)
mcp = FastMCP("who")

@mcp.tool
def who() -> str:
    '''The WHO this process was started with.'''
    return os.environ["WHO"]

mcp.run(show_banner=False)
"""


async def test_two_entries_of_one_command_each_keep_their_own_process_and_stderr(
    tmp_path: Path,
) -> None:
    """Same command, different ``env``: each entry runs its own process with its own
    environment, and its stderr is passed through under its own name (#27: keyed by the
    command, they shared one stderr tail and could adopt each other's early-started process)."""
    app = tmp_path / "who.py"
    app.write_text(WHO_UPSTREAM, encoding="utf-8")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        name: {"command": sys.executable, "args": [str(app)], "env": {"WHO": name}}
        for name in ("a", "b")}}), encoding="utf-8")
    stderr = tmp_path / "proxy-stderr.txt"
    with stderr.open("w", encoding="utf-8") as log:
        async with cli_over_stdio(["--config", str(config), "--exempt", "a_who", "--exempt",
                                   "b_who"], "legacy", {MARKER: str(tmp_path)},
                                  log_file=log) as client:
            for name in ("a", "b"):
                assert text_of(await client.call_tool(f"{name}_who", {})) == name
    lines = stderr.read_text(encoding="utf-8")
    assert "[a] I am a" in lines and "[b] I am b" in lines, lines
    assert "[a] I am b" not in lines and "[b] I am a" not in lines, lines
