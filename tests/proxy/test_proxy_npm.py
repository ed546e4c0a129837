"""``fastmcp-progressive proxy`` in front of real third-party servers from the npm registry.

``@modelcontextprotocol/server-everything``, ``server-filesystem`` and ``server-memory``,
pinned in ``tests/npm_servers.py`` and installed into ``.npm-servers/`` when missing. Each
runs as node over stdio behind the real command (``python -m fastmcp_progressive proxy``,
driven by ``fastmcp.Client`` over stdio or streamable HTTP) or behind the Python form (the
client in memory), in both protocol eras:
the listing shrinks (o200k_base tokens printed), a call is refused then works after a
fetch (bridge or resource), the upstream's own resources and prompts work, description
files for the upstream's tools apply with hot reload, and killing the upstream mid-session
answers a clear error.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from fastmcp.server import create_proxy

from fastmcp_progressive import DESCRIPTIONS_URI, ClientSettings
from fastmcp_progressive.cli.tokens import Tokens
from fastmcp_progressive.proxy.front import progressive_proxy
from tests.conftest import ERAS, Era, answer_of, fetch
from tests.npm_servers import NodeMissing, ensure_installed, required
from tests.proxy.test_front import BOUND, refusal_code
from tests.waiting import PATIENCE, free_port, until

DEADLINE = PATIENCE  # a deadline against a hang: node start-up on a loaded machine is slow
pytestmark = [
    pytest.mark.xdist_group("npm-servers"),  # one worker (tests/conftest.py)
    pytest.mark.slow,  # node processes from npm, a proxy process per test
    pytest.mark.skipif(not Path("/proc").is_dir(),
                       reason="finds the upstream's process through /proc (Linux)"),
]


@pytest.fixture(scope="module")
def npm() -> dict[str, list[str]]:
    """node + entry point per pinned server, installing them first when missing."""
    try:
        return ensure_installed()
    except NodeMissing as exc:
        if required():
            pytest.fail(f"{exc} (required here: FASTMCP_PROGRESSIVE_REQUIRE_NODE is set)")
        pytest.skip(str(exc))


MARKER = "FASTMCP_PROGRESSIVE_TEST_UPSTREAM"


def upstream(npm: dict[str, list[str]], name: str, tmp_path: Path) -> tuple[list[str],
                                                                         dict[str, str]]:
    """The command line and extra environment that start ``name`` for one test.

    The environment carries a marker unique to the test, so the test can find the node
    process it started (the proxy passes its environment on to the upstream).
    """
    env = {MARKER: str(tmp_path)}
    if name == "server-filesystem":
        root = tmp_path / "files"
        root.mkdir(exist_ok=True)
        (root / "notes.txt").write_text("proxied file\n", encoding="utf-8")
        return [*npm[name], str(root)], env
    if name == "server-memory":
        env["MEMORY_FILE_PATH"] = str(tmp_path / "memory.jsonl")
    return list(npm[name]), env


def mode(era: Era) -> str:
    return "legacy" if era == "legacy" else "auto"


def one_host(era: Era) -> dict[str, Any]:
    """In memory on 2026-07-28 the caller has no identity: one shared grant set gates it."""
    return {"clients": ClientSettings(anonymous="shared")} if era == "modern" else {}


def proxy_command(*args: str) -> list[str]:
    return ["-m", "fastmcp_progressive", "proxy", *args]


@asynccontextmanager
async def cli_over_stdio(args: list[str], era: Era, env: dict[str, str] | None = None,
                         log_file: Any = None,
                         **client_kwargs: Any) -> AsyncIterator[Client[Any]]:
    """The real command, as a host runs it, with a client on its stdio.

    On 2026-07-28 a caller without auth has no identity to keep grants under; a stdio proxy
    serves one host, so these tests gate it with one shared grant set (``--anonymous shared``).
    """
    if era == "modern" and "--anonymous" not in args:
        args = ["--anonymous", "shared", *args]
    transport = StdioTransport(sys.executable, proxy_command(*args),
                               env={**os.environ, **(env or {})}, keep_alive=False,
                               log_file=log_file)  # the proxy's stderr (None: ours)
    async with Client(transport, mode=mode(era), init_timeout=DEADLINE,
                      **client_kwargs) as client:
        yield client


async def refused_then_served(client: Client[Any], tool: str, arguments: dict[str, Any],
                              fetch_with: str) -> Any:
    """Call ``tool``: refused; fetch it (``bridge`` or ``resource``); call again: served.

    Lists tools first, as a host that keeps its session does (a session whose first request
    is the call is taken for a one-call session, whose calls are checked by arguments).
    """
    await client.list_tools()
    refused = await client.call_tool(tool, arguments, raise_on_error=False)
    assert refused.is_error and refusal_code(refused) == "TOOL_DESCRIPTION_REQUIRED", refused
    if fetch_with == "bridge":
        described = answer_of(await client.call_tool("describe_tools", {"tools": [tool]}))
    else:
        described = await fetch(client, tool)
    assert described is not None and described[tool]["name"] == tool
    assert "inputSchema" in described[tool]
    served = await client.call_tool(tool, arguments, raise_on_error=False)
    assert not served.is_error, served.content
    return served


def text_of(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


# -- the listing shrinks ---------------------------------------------------------------------------
def wire(tools: list[Any]) -> list[dict[str, Any]]:
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]


@pytest.mark.parametrize("name", ["server-everything", "server-filesystem", "server-memory"])
async def test_listing_shrinks_in_front_of_a_real_server(
    npm: dict[str, list[str]], name: str, tmp_path: Path
) -> None:
    command, env = upstream(npm, name, tmp_path)
    plain = create_proxy(_with_env(command, env), mode="auto")
    async with Client(plain, mode="legacy") as client:
        before = wire(await client.list_tools())
    async with Client(progressive_proxy(command, env=env), mode="legacy") as client:
        after = wire(await client.list_tools())
    upstream_tools = {t["name"] for t in before}
    assert upstream_tools <= {t["name"] for t in after}  # every tool still listed
    tokens = Tokens()
    fields = (tokens.listing_fields(before), tokens.listing_fields(after))
    whole = (tokens.listing_json(before), tokens.listing_json(after))
    print(f"\n{name}: {len(before)} tools; o200k_base tokens (name+description+schema) "
          f"{fields[0]} -> {fields[1]}; as one JSON array {whole[0]} -> {whole[1]}")
    assert fields[1] < 0.75 * fields[0]
    assert whole[1] < 0.75 * whole[0]


def _with_env(command: list[str], env: dict[str, str]) -> Any:
    return StdioTransport(command[0], command[1:], env={**os.environ, **env})


# -- a call is refused, then served after a fetch -------------------------------------------------
CALLS: dict[str, list[tuple[str, dict[str, Any], str]]] = {
    "server-filesystem": [("list_allowed_directories", {}, "files"),
                          ("list_directory", {"path": "{root}"}, "notes.txt")],
    "server-memory": [("create_entities", {"entities": [{"name": "proxy", "entityType": "tool",
                                                        "observations": ["progressive"]}]},
                       "proxy"),
                      ("read_graph", {}, "progressive")],
}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("name", list(CALLS))
async def test_refuses_a_call_until_fetched_then_serves_it(
    npm: dict[str, list[str]], name: str, era: Era, tmp_path: Path
) -> None:
    """The Python form, the upstream a real node process over stdio, the front in memory."""
    command, env = upstream(npm, name, tmp_path)
    async with Client(progressive_proxy(command, env=env, **one_host(era)),
                      mode=mode(era)) as client:
        for (tool, arguments, expected), fetch_with in zip(CALLS[name], ("bridge", "resource"),
                                                           strict=True):
            arguments = json.loads(json.dumps(arguments).replace(
                "{root}", str(tmp_path / "files")))
            served = await refused_then_served(client, tool, arguments, fetch_with)
            assert expected in text_of(served) + json.dumps(served.structured_content or {})
    await no_node_left(tmp_path)


# -- the real command over stdio, as a host runs it ------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
async def test_cli_over_stdio_in_front_of_server_everything(
    npm: dict[str, list[str]], era: Era, tmp_path: Path
) -> None:
    """One session: a description file we wrote for a tool we do not own (then edited
    while serving), the gate, the upstream's own resources and prompts, a clean exit."""
    folder = tmp_path / "descriptions"
    folder.mkdir()
    echo = folder / "echo.json"
    echo.write_text(json.dumps({
        "summary": "Say a message back, verbatim (our words).",
        "examples": [{"description": "greet", "input": {"message": "hello"}}],
        "usage_guidance": "Use it to test the connection.",
    }), encoding="utf-8")
    command, env = upstream(npm, "server-everything", tmp_path)
    async with cli_over_stdio(["--descriptions", str(folder), "--", *command], era,
                              env) as client:

        async def summary() -> str | None:
            return next(t.description for t in await client.list_tools() if t.name == "echo")

        # descriptions for a server we do not own: our summary, examples, guidance
        assert await summary() == "Say a message back, verbatim (our words)."
        served = await refused_then_served(client, "echo", {"message": "hi"}, "bridge")
        assert text_of(served) == "Echo: hi"
        body = answer_of(await client.call_tool("describe_tools", {"tools": ["echo"]}))
        assert body["echo"]["examples"][0]["input"] == {"message": "hello"}
        assert body["echo"]["usage_guidance"] == "Use it to test the connection."
        assert body["echo"]["inputSchema"]["required"] == ["message"]  # the upstream's own
        served = await refused_then_served(client, "get-sum", {"a": 2, "b": 3}, "resource")
        assert "5" in text_of(served)

        # hot reload: the file is edited while the proxy serves
        replacement = folder / ".echo.json.tmp"
        replacement.write_text(json.dumps({"summary": "Echo, edited while serving."}),
                               encoding="utf-8")
        replacement.replace(echo)

        async def reloaded() -> bool:
            return await summary() == "Echo, edited while serving."

        await until(reloaded, DEADLINE, "the edited summary", interval=0.05)
        body = answer_of(await client.call_tool("describe_tools", {"tools": ["echo"]}))
        assert "examples" not in body["echo"]

        # the upstream's own resources, templates and prompts
        resources = {str(r.uri) for r in await client.list_resources()}
        assert DESCRIPTIONS_URI in resources
        documents = sorted(u for u in resources if u.startswith("demo://"))
        assert documents, resources
        contents = await client.read_resource(documents[0])
        assert getattr(contents[0], "text", "")
        templates = [t.uriTemplate for t in await client.list_resource_templates()]
        assert any(t.startswith("demo://") for t in templates), templates
        prompts = {p.name for p in await client.list_prompts()}
        assert {"simple-prompt", "args-prompt"} <= prompts
        assert (await client.get_prompt("simple-prompt")).messages
        with_args = await client.get_prompt("args-prompt", {"city": "Lisbon"})
        assert "Lisbon" in json.dumps(with_args.model_dump(mode="json"))
        assert len(node_pids(tmp_path)) == 1
    # The host closed our stdin (then sent SIGTERM, as the SDK does): the upstream, which
    # does not exit on stdin EOF by itself, is stopped rather than orphaned.
    await no_node_left(tmp_path)


# -- killing the upstream mid-session --------------------------------------------------------------
def node_pids(tmp_path: Path) -> list[int]:
    """node processes started for the test owning ``tmp_path`` (by the marker in their env)."""
    needle = f"{MARKER}={tmp_path}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0]
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if Path(argv0.decode(errors="replace")).name.startswith("node") and needle in environ:
            found.append(int(entry.name))
    return found


async def no_node_left(tmp_path: Path) -> None:
    async def gone() -> bool:
        return node_pids(tmp_path) == []

    await until(gone, DEADLINE, "the upstream node process to stop", interval=0.05)


FRONTS = [("cli", "legacy"), ("python", "modern")]
"""Each era once; the real command over stdio, or the Python form with the front in memory
(fewer process starts: the suite runs on small machines)."""


@asynccontextmanager
async def front(kind: str, target: list[str] | str, era: Era,
                env: dict[str, str]) -> AsyncIterator[Client[Any]]:
    if kind == "cli":
        args = [target] if isinstance(target, str) else ["--", *target]
        async with cli_over_stdio(args, era, env) as client:
            yield client
    else:
        async with Client(progressive_proxy(target, env=env, **one_host(era)),
                          mode=mode(era)) as client:
            yield client


@pytest.mark.parametrize(("kind", "era"), FRONTS)
async def test_killing_the_upstream_mid_session_gives_a_clear_error(
    npm: dict[str, list[str]], kind: str, era: Era, tmp_path: Path
) -> None:
    command, env = upstream(npm, "server-filesystem", tmp_path)
    async with front(kind, command, era, env) as client:
        await refused_then_served(client, "list_allowed_directories", {}, "bridge")
        (pid,) = node_pids(tmp_path)
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(BOUND):  # named, never hung
            failed = await client.call_tool("list_allowed_directories", {},
                                            raise_on_error=False)
            message = text_of(failed)
            assert failed.is_error
            assert "upstream MCP server" in message and "has exited" in message
            assert "server-filesystem" in message  # names which upstream
            with pytest.raises(Exception, match="has exited"):
                await client.read_resource("file:///nothing")
        assert node_pids(tmp_path) == []


# -- the proxy served over streamable HTTP ---------------------------------------------------------
@asynccontextmanager
async def cli_over_http(args: list[str], env: dict[str, str]) -> AsyncIterator[str]:
    """``proxy --http 127.0.0.1:PORT ...`` as a process; yields its URL once it answers."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *proxy_command("--http", f"127.0.0.1:{port}", *args)],
        env={**os.environ, **env}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async def answers() -> bool:
            assert process.poll() is None, f"the proxy exited with {process.returncode}"
            try:
                async with Client(StreamableHttpTransport(url), mode="legacy") as probe:
                    await probe.ping()
            except Exception:
                return False
            return True

        await until(answers, DEADLINE, "the proxy to answer a ping", interval=0.1)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def test_cli_over_streamable_http_serves_both_eras(
    npm: dict[str, list[str]], tmp_path: Path
) -> None:
    command, env = upstream(npm, "server-everything", tmp_path)
    # `shared`: 2026-07-28 HTTP callers carry no identity; one grant set gates them too.
    async with cli_over_http(["--anonymous", "shared", "--", *command], env) as url:
        for era in ERAS:
            async with Client(StreamableHttpTransport(url), mode=mode(era)) as client:
                listed = {t.name: t for t in await client.list_tools()}
                assert listed["echo"].inputSchema["properties"]["message"] == {
                    "type": "string"}  # reduced: the argument, typed, no description
                served = await refused_then_served(client, "echo", {"message": era}, "resource")
                assert text_of(served) == f"Echo: {era}"
                contents = await client.read_resource("demo://resource/static/document/"
                                                      "architecture.md")
                assert getattr(contents[0], "text", "")
        assert len(node_pids(tmp_path)) == 1
    await no_node_left(tmp_path)  # stopped with the proxy (SIGTERM), not orphaned


# -- the URL form, in front of a real server over streamable HTTP ----------------------------------
@asynccontextmanager
async def node_over_http(npm: dict[str, list[str]]) -> AsyncIterator[tuple[str,
                                                                           subprocess.Popen[bytes]]]:
    """server-everything serving streamable HTTP on a free port; yields its URL."""
    port = free_port()
    process = subprocess.Popen(
        [*npm["server-everything"], "streamableHttp"], env={**os.environ, "PORT": str(port)},
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        async def listening() -> bool:
            assert process.poll() is None, f"server-everything exited with {process.returncode}"
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                return False
            await stream.aclose()
            return True

        await until(listening, DEADLINE, "server-everything to listen", interval=0.05)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize(("kind", "era"), FRONTS)
async def test_in_front_of_a_url_then_the_url_goes_away(
    npm: dict[str, list[str]], kind: str, era: Era
) -> None:
    async with node_over_http(npm) as (url, process), front(kind, url, era, {}) as client:
        listed = {t.name: t for t in await client.list_tools()}
        assert listed["echo"].inputSchema["properties"]["message"] == {"type": "string"}
        served = await refused_then_served(client, "echo", {"message": "over http"}, "bridge")
        assert text_of(served) == "Echo: over http"
        prompts = {p.name for p in await client.list_prompts()}
        assert "simple-prompt" in prompts

        process.kill()
        process.wait()
        with anyio.fail_after(BOUND):  # named, never hung
            failed = await client.call_tool("echo", {"message": "again"},
                                            raise_on_error=False)
        assert failed.is_error
        assert f"cannot reach upstream MCP server {url}" in text_of(failed)
