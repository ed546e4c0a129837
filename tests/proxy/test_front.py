"""The middleware on a FastMCP proxy, and ``progressive_proxy`` failures (no node needed).

- The shape "ProgressiveDisclosure on a FastMCP proxy in front of a plain FastMCP server",
  built by hand (``create_proxy`` + ``add_middleware``) and by ``progressive_proxy``, in
  memory and over streamable HTTP, both protocol eras.
- An upstream that cannot serve (command not found, exits at start, says nothing, URL
  unreachable, killed mid-session) is reported by name within a bounded time.

Tests against real third-party (npm) servers are in ``test_proxy_npm.py``.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as mt
import pytest
from fastmcp import Client, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server import create_proxy
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from mcp import MCPError

from fastmcp_progressive import (
    DESCRIPTIONS_URI,
    ClientSettings,
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.cli.commands import main
from fastmcp_progressive.proxy.front import (
    UpstreamError,
    check_upstream,
    parse_listen,
    progressive_proxy,
    upstream_of,
)
from tests.conftest import (
    ERAS,
    TOKENS,
    TRANSPORTS,
    Era,
    Transport,
    connect,
    fetch,
    needs_a_followed_caller,
    serve_http,
)
from tests.servers import ADD_FULL_TEXT, ADD_TYPED, add_basic_tools
from tests.waiting import PATIENCE, free_port, until_sync

BOUND = PATIENCE  # a failure not reported by then is hung (a deadline, never a measurement)


def plain_server() -> FastMCP:
    """A plain FastMCP server (no middleware): the upstream behind the proxy."""
    mcp = FastMCP("plain", instructions="Plain server instructions.")
    add_basic_tools(mcp)

    @mcp.tool
    def refuse(reason: str) -> str:
        """Always fail with the reason given."""
        raise ToolError(f"refused: {reason}")

    @mcp.resource("data://greeting")
    def greeting() -> str:
        return "hello from upstream"

    @mcp.prompt
    def haiku(topic: str) -> str:
        """Write a haiku."""
        return f"Write a haiku about {topic}."

    return mcp


def by_hand(upstream: FastMCP, **kwargs: Any) -> FastMCP:
    proxy = create_proxy(upstream, **kwargs)
    proxy.add_middleware(ProgressiveDisclosure())
    return proxy


def by_function(upstream: FastMCP, **kwargs: Any) -> FastMCP:
    return progressive_proxy(upstream, **kwargs)


BUILDERS: dict[str, Callable[..., FastMCP]] = {"create_proxy": by_hand,
                                               "progressive_proxy": by_function}


@asynccontextmanager
async def front(proxy: FastMCP, transport: Transport, era: Era) -> AsyncIterator[Client[Any]]:
    """A client of ``proxy``; over HTTP it authenticates, so 2026-07-28 calls have a caller."""
    async with AsyncExitStack() as stack:
        target: FastMCP | str = proxy
        if transport == "http":
            target = await stack.enter_async_context(serve_http(proxy))
        token = "alice-token" if transport == "http" else None
        yield await stack.enter_async_context(connect(target, era, token=token))


def refusal_code(result: Any) -> str | None:
    body = result.structured_content or {}
    error = body.get("error") if isinstance(body, dict) else None
    return error.get("code") if isinstance(error, dict) else None


# -- the shape: the middleware on a FastMCP proxy in front of a plain server ---------------------
@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
async def test_middleware_on_a_proxy_gates_the_plain_server_behind_it(
    builder: str, transport: Transport, era: Era
) -> None:
    needs_a_followed_caller(transport, era, "token" if transport == "http" else None)
    auth = StaticTokenVerifier(tokens=TOKENS) if transport == "http" else None
    proxy = BUILDERS[builder](plain_server(), auth=auth)
    async with front(proxy, transport, era) as client:
        listed = {t.name: t for t in await client.list_tools()}
        assert {"add", "echo", "shout", "describe_tools"} <= set(listed)
        assert listed["add"].description == "Add two integers."
        assert listed["add"].inputSchema == ADD_TYPED  # reduced: the arguments, typed

        refused = await client.call_tool("add", {"a": 1, "b": 2}, raise_on_error=False)
        assert refused.is_error and refusal_code(refused) == "TOOL_DESCRIPTION_REQUIRED"

        described = await fetch(client, "add")  # the resource, routed by the proxy itself
        assert described["add"]["inputSchema"]["required"] == ["a", "b"]
        assert (await client.call_tool("add", {"a": 1, "b": 2})).data == 3

        refused = await client.call_tool("echo", {"text": "hi"}, raise_on_error=False)
        assert refusal_code(refused) == "TOOL_DESCRIPTION_REQUIRED"
        await client.call_tool("describe_tools", {"tools": ["echo"]})  # the bridge
        assert (await client.call_tool("echo", {"text": "hi"})).data == "hi"

        # the upstream's own resources, prompts and tool errors pass through untouched
        resources = {str(r.uri) for r in await client.list_resources()}
        assert {"data://greeting", DESCRIPTIONS_URI} <= resources
        text = (await client.read_resource("data://greeting"))[0].text  # type: ignore[union-attr]
        assert text == "hello from upstream"
        prompt = await client.get_prompt("haiku", {"topic": "proxies"})
        assert "proxies" in prompt.messages[0].content.text  # type: ignore[union-attr]
        await client.call_tool("describe_tools", {"tools": ["refuse"]})
        failed = await client.call_tool("refuse", {"reason": "no"}, raise_on_error=False)
        assert failed.is_error and "refused: no" in failed.content[0].text  # type: ignore[union-attr]
        assert "upstream MCP server" not in failed.content[0].text  # type: ignore[union-attr]


async def test_progressive_proxy_keeps_the_upstream_instructions_and_appends_ours() -> None:
    async with Client(progressive_proxy(plain_server()), mode="legacy") as client:
        instructions = client.initialize_result.instructions or ""
    assert instructions.startswith("Plain server instructions.")
    assert "tool_descriptions" in instructions  # the workflow paragraph, appended


async def test_progressive_proxy_serves_description_files_for_upstream_tools(
    tmp_descriptions: Path, write_description: Callable[..., Path]
) -> None:
    write_description("add", {"summary": "Sum two whole numbers (file).",
                              "examples": [{"description": "2+3", "input": {"a": 2, "b": 3}}]})
    proxy = progressive_proxy(plain_server(), descriptions_dir=tmp_descriptions)
    async with Client(proxy) as client:
        listed = {t.name: t for t in await client.list_tools()}
        assert listed["add"].description == "Sum two whole numbers (file)."
        described = await fetch(client, "add")
        assert described["add"]["examples"][0]["input"] == {"a": 2, "b": 3}


def test_parse_listen() -> None:
    assert parse_listen("8000") == ("127.0.0.1", 8000)
    assert parse_listen("0.0.0.0:9000") == ("0.0.0.0", 9000)
    assert parse_listen("[::1]:9000") == ("::1", 9000)
    with pytest.raises(ValueError, match="HOST:"):
        parse_listen("localhost:http")


# -- upstream failures: named, bounded ------------------------------------------------------------
async def expect_named_failure(proxy: FastMCP, *fragments: str) -> str:
    """``check_upstream`` and a client's request both fail, naming the upstream, never
    hanging."""
    with anyio.fail_after(BOUND):
        with pytest.raises(UpstreamError) as checked:
            await check_upstream(proxy)
        async with Client(proxy) as client:
            with pytest.raises(MCPError) as listed:
                await client.list_tools()
    for message in (str(checked.value), str(listed.value)):
        assert "upstream MCP server" in message
        for fragment in fragments:
            assert fragment in message, message
    return str(checked.value)


async def test_command_not_found_is_named() -> None:
    proxy = progressive_proxy(["no-such-mcp-server-xyz", "--flag"])
    await expect_named_failure(proxy, "`no-such-mcp-server-xyz --flag`", "not found")


async def test_command_that_exits_at_start_is_named_with_its_stderr() -> None:
    script = "import sys; print('config file missing', file=sys.stderr); sys.exit(3)"
    proxy = progressive_proxy([sys.executable, "-c", script])
    await expect_named_failure(proxy, "exited", "config file missing")


@pytest.mark.slow  # waits out the 1 s start-up timeout
async def test_command_that_never_answers_times_out() -> None:
    silent = "import sys; sys.stdin.read()"  # reads until we close it, never answers
    proxy = progressive_proxy([sys.executable, "-c", silent], startup_timeout=1.0)
    await expect_named_failure(proxy, "did not answer within 1 s")


async def test_unreachable_url_is_named_without_its_credentials() -> None:
    url = f"http://user:secret@127.0.0.1:{free_port()}/mcp?token=hidden"
    message = await expect_named_failure(progressive_proxy(url), "cannot reach",
                                         "127.0.0.1")
    assert "secret" not in message and "hidden" not in message


UPSTREAM_APP = """
from fastmcp import FastMCP
mcp = FastMCP("py-upstream")

@mcp.tool
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

@mcp.tool
async def slow() -> str:
    '''Take ten minutes.'''
    import anyio
    await anyio.sleep(600)
    return "late"

mcp.run(show_banner=False)
"""


def pids_with(marker: str) -> list[int]:
    """Processes whose command line contains ``marker`` (never this test process)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.slow  # upstream processes started and killed
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the process through /proc")
@pytest.mark.parametrize("era", ERAS)
async def test_upstream_killed_mid_session_gives_a_clear_error(era: Era, tmp_path: Path) -> None:
    app = tmp_path / "upstream_app.py"
    app.write_text(UPSTREAM_APP, encoding="utf-8")
    proxy = progressive_proxy([sys.executable, str(app)], startup_timeout=30)
    async with connect(proxy, era) as client:
        await client.call_tool("describe_tools", {"tools": ["add"]})
        assert (await client.call_tool("add", {"a": 1, "b": 2})).data == 3
        command = upstream_of(proxy).command
        assert command is not None and not command.ended
        (pid,) = pids_with(str(app))
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(BOUND):  # named, never hung
            failed = await client.call_tool("add", {"a": 1, "b": 2}, raise_on_error=False)
            text = failed.content[0].text  # type: ignore[union-attr]
            assert failed.is_error and "has exited" in text and str(app) in text
            with pytest.raises(MCPError, match="has exited"):
                await client.list_tools()
        assert pids_with(str(app)) == []  # not silently started again
        assert command.ended


@pytest.mark.slow  # upstream processes
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the process through /proc")
async def test_the_process_check_upstream_starts_is_the_one_that_serves(tmp_path: Path) -> None:
    app = tmp_path / "upstream_app.py"
    app.write_text(UPSTREAM_APP, encoding="utf-8")
    proxy = progressive_proxy([sys.executable, str(app)], startup_timeout=30)
    assert await check_upstream(proxy) == 2
    started = pids_with(str(app))
    async with Client(proxy) as client:
        await client.list_tools()
        await client.call_tool("describe_tools", {"tools": ["add"]})
        assert (await client.call_tool("add", {"a": 1, "b": 1})).data == 2
        assert pids_with(str(app)) == started  # not stopped and started again


@pytest.mark.slow  # waits out a request timeout
async def test_upstream_request_timeout_is_named(tmp_path: Path) -> None:
    app = tmp_path / "upstream_app.py"
    app.write_text(UPSTREAM_APP, encoding="utf-8")
    # 5 s: longer than a loaded machine makes ``add`` wait, far shorter than ``slow``
    proxy = progressive_proxy([sys.executable, str(app)], startup_timeout=30,
                              request_timeout=5.0, exempt_tools=["slow"])
    async with Client(proxy) as client:
        with anyio.fail_after(BOUND):  # the timeout answered, not the ten-minute tool
            failed = await client.call_tool("slow", {}, raise_on_error=False)
        text = failed.content[0].text  # type: ignore[union-attr]
        assert failed.is_error and "did not answer within 5 s" in text and str(app) in text
        await client.call_tool("describe_tools", {"tools": ["add"]})
        assert (await client.call_tool("add", {"a": 2, "b": 2})).data == 4  # still serving


def test_cli_proxy_exits_2_naming_a_missing_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["proxy", "--startup-timeout", "5", "--", "no-such-mcp-server-xyz"]) == 2
    err = capsys.readouterr().err
    assert "fastmcp-progressive: cannot start upstream MCP server `no-such-mcp-server-xyz`" in err
    assert "not found" in err


def test_cli_proxy_exits_2_on_an_unreachable_url(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    assert main(["proxy", url]) == 2
    assert f"cannot reach upstream MCP server {url}" in capsys.readouterr().err


def test_cli_proxy_rejects_a_bad_listen_address(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["proxy", "--http", "localhost:web", "--", "x"])
    assert exited.value.code == 2
    assert "argument --http: expected [HOST:]PORT" in capsys.readouterr().err


def test_cli_proxy_rejects_a_bad_tool_cap(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["proxy", "--max-tools", "2", "--", "x"])
    assert exited.value.code == 2
    assert ("argument --max-tools: must be auto, none or a whole number from 3"
            in capsys.readouterr().err)


def test_cli_proxy_help_names_both_forms(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["proxy", "--help"])
    out = capsys.readouterr().out
    assert "-- COMMAND" in out and "URL" in out and "--descriptions" in out


def test_cli_proxy_passes_its_options_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Any, dict[str, Any]]] = []

    async def fake_serve(target: Any, **settings: Any) -> None:
        seen.append((target, settings))

    monkeypatch.setattr("fastmcp_progressive.cli.commands.serve", fake_serve)
    assert main(["proxy", "--http", "0.0.0.0:9000", "--descriptions", "docs", "--listing",
                 "skeleton", "--anonymous", "shared", "--exempt", "a", "--exempt", "b",
                 "--name", "front", "--startup-timeout", "5", "--request-timeout", "7",
                 "--no-host-profiles", "--max-tools", "40", "--full-client", "ide/1.*",
                 "--full-client", "old-host", "--dereference-schemas",
                 "--no-host-origin-protection", "--", "npx", "-y", "pkg", "--flag"]) == 0
    assert main(["proxy", "https://mcp.example.com/mcp"]) == 0
    (command, settings), (url, defaults) = seen
    assert command == ["npx", "-y", "pkg", "--flag"]
    assert settings == {"http": ("0.0.0.0", 9000), "config": None,
                        "descriptions_dir": Path("docs").absolute(), "name": "front",
                        "listing": ListingSettings(level="skeleton", max_tools=40),
                        "clients": ClientSettings(anonymous="shared", host_profiles=(),
                                                  full_clients=("ide/1.*", "old-host")),
                        "exempt_tools": ["a", "b"], "startup_timeout": 5.0,
                        "request_timeout": 7.0, "host_origin_protection": False,
                        "dereference_schemas": True}
    assert url == "https://mcp.example.com/mcp"
    assert defaults["http"] is None and defaults["listing"] == ListingSettings(level="typed")
    assert defaults["clients"] == ClientSettings()  # the middleware's anonymous, host profiles
    assert defaults["host_origin_protection"] == "auto"  # FastMCP's guard for a loopback bind
    assert defaults["dereference_schemas"] is False  # the upstream's schemas as they are


def test_the_proxy_page_gives_the_defaults_the_command_has(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """#34: docs/proxy.md said ``--max-tools`` defaults to none (host caps only), where the
    command passes ``"auto"`` (the listing budget) as docs/listing.md says."""
    seen: list[dict[str, Any]] = []

    async def fake_serve(target: Any, **settings: Any) -> None:
        seen.append(settings)

    monkeypatch.setattr("fastmcp_progressive.cli.commands.serve", fake_serve)
    assert main(["proxy", "https://mcp.example.com/mcp"]) == 0
    page = (Path(__file__).resolve().parents[2] / "docs" / "proxy.md").read_text("utf-8")
    rows = {cells[0].removeprefix("| "): cells[1] for cells in
            (line.split(" | ") for line in page.splitlines() if line.startswith("| `--"))}
    assert rows["`--max-tools N`"].startswith(f"`{seen[0]['listing'].max_tools}`")
    assert rows["`--listing`"] == f"`{seen[0]['listing'].level}`"


@pytest.mark.parametrize(
    ("options", "reduced"), [({}, False), ({"clients": ClientSettings(host_profiles=())}, True)]
)
async def test_claude_desktop_gets_progressive_listings_only_without_host_profiles(
    options: dict[str, Any], reduced: bool
) -> None:
    """What ``--no-host-profiles`` is for: Claude Desktop (``claude-ai``) is served in full
    by the host table, since it defers tools itself."""
    proxy = progressive_proxy(plain_server(), **options)
    desktop = mt.Implementation(name="claude-ai", version="0.1.0")
    async with Client(proxy, mode="legacy", client_info=desktop) as client:
        add = next(t for t in await client.list_tools() if t.name == "add")
    assert (add.description != ADD_FULL_TEXT) is reduced


# -- issue 21: a tool the upstream adds mid-session is gated like any other ----------------------
def growing_server() -> FastMCP:
    """An upstream whose ``grow`` tool adds the tool ``late`` while a client is connected."""
    mcp = FastMCP("growing")

    @mcp.tool
    def grow() -> str:
        """Add the tool late."""

        def late(x: int) -> int:
            """A tool added mid-session."""
            return x * 2

        mcp.add_tool(late)
        return "grown"

    return mcp


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_added_mid_session_is_gated_on_its_first_call(
    transport: Transport, era: Era
) -> None:
    """Before: our lookup said "unknown" (and refreshed the proxy's cache), FastMCP then
    found the tool and ran it unread."""
    auth = StaticTokenVerifier(tokens=TOKENS) if transport == "http" else None
    shared = {"clients": ClientSettings(anonymous="shared")} if era == "modern" else {}
    proxy = progressive_proxy(growing_server(), exempt_tools=["grow"], auth=auth, **shared)
    async with front(proxy, transport, era) as client:
        await client.list_tools()
        assert (await client.call_tool("grow", {})).data == "grown"
        first = await client.call_tool("late", {"x": 2}, raise_on_error=False)
        assert first.is_error  # never run unread
        if refusal_code(first) is None:  # FastMCP 4.1 does not see the new tool yet at all
            assert "Unknown tool" in first.content[0].text  # type: ignore[union-attr]
            return
        assert refusal_code(first) == "TOOL_DESCRIPTION_REQUIRED"
        assert (await client.call_tool("late", {"x": 2})).data == 4  # the refusal taught it
        unknown = await client.call_tool("never_added", {}, raise_on_error=False)
        assert unknown.is_error and refusal_code(unknown) is None  # FastMCP's own answer


# -- issue 21: the upstream's stderr is kept within a bound -------------------------------------
def test_stderr_tail_keeps_a_bounded_number_of_bytes(capfd: pytest.CaptureFixture[str]) -> None:
    """Before: the last 20 lines at any length (a 10 MB line without a newline, held
    whole). Now each kept line is cut at ``STDERR_LINE_BYTES`` and the rest passed on.
    Lines of 256 KiB (several pipe chunks each) show it without 250 MB through a pipe."""
    from fastmcp_progressive.proxy.stderr_tail import (
        STDERR_LINE_BYTES,
        STDERR_LINES_KEPT,
        StderrTail,
    )

    tail = StderrTail()
    huge = "x" * 262_144  # four pipe chunks per line, 128 times what a kept line may hold
    for _ in range(STDERR_LINES_KEPT + 5):
        tail.writer.write(huge + "\n")
    tail.writer.write("the last line\n")
    tail.writer.flush()
    tail.close()

    def drained() -> bool:
        return tail.last(1, settle=0) == ["the last line"]

    until_sync(drained, BOUND, "the pipe to be read to its end")
    assert tail.kept_bytes <= STDERR_LINES_KEPT * STDERR_LINE_BYTES
    assert all(len(line) <= STDERR_LINE_BYTES for line in tail.last(STDERR_LINES_KEPT))
    passed = len(huge) * (STDERR_LINES_KEPT + 5)
    assert len(capfd.readouterr().err) > passed  # passed through, not kept


# -- the command line: --version, the environment, our loggers ----------------------------------
def test_cli_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("fastmcp-progressive ") and "FastMCP " in out


def test_cli_proxy_options_from_the_environment(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[tuple[Any, dict[str, Any]]] = []

    async def fake_serve(target: Any, **settings: Any) -> None:
        seen.append((target, settings))

    monkeypatch.setattr("fastmcp_progressive.cli.commands.serve", fake_serve)
    for option, value in {"CONFIG": "mcp.json", "HTTP": "9001", "DESCRIPTIONS": "docs",
                          "LISTING": "skeleton", "ANONYMOUS": "shared",
                          "NO_HOST_PROFILES": "true", "EXEMPT": "a, b", "NAME": "gw",
                          "STARTUP_TIMEOUT": "5", "REQUEST_TIMEOUT": "7",
                          "FULL_CLIENT": "ide/1.*, old-host", "DEREFERENCE_SCHEMAS": "1",
                          "NO_HOST_ORIGIN_PROTECTION": "true"}.items():
        monkeypatch.setenv(f"FASTMCP_PROGRESSIVE_{option}", value)
    assert main(["proxy"]) == 0
    # a flag wins over its variable; the upstream's own flags after -- are not ours
    monkeypatch.delenv("FASTMCP_PROGRESSIVE_CONFIG")
    assert main(["proxy", "--name", "flag", "--listing", "minimal", "--", "srv",
                 "--startup-timeout", "1"]) == 0
    (none, settings), (command, flagged) = seen
    assert none is None and settings["config"] == Path("mcp.json")
    assert settings["http"] == ("127.0.0.1", 9001)
    assert settings["descriptions_dir"] == Path("docs").absolute() and settings["name"] == "gw"
    assert settings["listing"] == ListingSettings(level="skeleton")
    assert settings["clients"] == ClientSettings(anonymous="shared", host_profiles=(),
                                                 full_clients=("ide/1.*", "old-host"))
    assert settings["exempt_tools"] == ["a", "b"]
    assert settings["dereference_schemas"] is True
    assert settings["host_origin_protection"] is False
    assert (settings["startup_timeout"], settings["request_timeout"]) == (5.0, 7.0)
    assert command == ["srv", "--startup-timeout", "1"]
    assert flagged["name"] == "flag" and flagged["listing"] == ListingSettings(level="minimal")
    assert flagged["startup_timeout"] == 5.0  # from the environment: not given as our flag

    monkeypatch.setenv("FASTMCP_PROGRESSIVE_STARTUP_TIMEOUT", "soon")
    assert main(["proxy", "--", "srv"]) == 2
    assert "FASTMCP_PROGRESSIVE_STARTUP_TIMEOUT='soon'" in capsys.readouterr().err


@pytest.mark.parametrize(("variable", "value", "says"), [
    ("MAX_TOOLS", "\u2460", "or a whole number from 3 to 100000"),  # "1" in a circle
    ("MAX_TOOLS", "2", "must be auto, none or a whole number from 3 to 100000"),
    ("HTTP", "localhost:web", "expected [HOST:]PORT"),
    ("REQUEST_TIMEOUT", "soon", "not a number of seconds"),
    ("STARTUP_TIMEOUT", "0", "seconds"),
    ("LISTING", "everything", "expected one of"),
    ("NO_HOST_PROFILES", "maybe", "expected 1/true or 0/false"),
])
def test_cli_proxy_environment_values_read_as_their_flags(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        variable: str, value: str, says: str) -> None:
    """Each value goes through its flag's own parser; the error names the variable."""
    async def fake_serve(target: Any, **settings: Any) -> None:
        raise AssertionError("a bad value must stop the command before it serves")

    monkeypatch.setattr("fastmcp_progressive.cli.commands.serve", fake_serve)
    monkeypatch.setenv(f"FASTMCP_PROGRESSIVE_{variable}", value)
    assert main(["proxy", "--", "srv"]) == 2
    err = capsys.readouterr().err
    assert f"FASTMCP_PROGRESSIVE_{variable}={value!r}: " in err and says in err, err
    assert "Traceback" not in err and "listing." not in err and "--" not in err, err


def test_cli_proxy_flags_are_never_abbreviations(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``--max-t 5`` is refused (it passed for --max-tools, and lost to the environment)."""
    seen: list[dict[str, Any]] = []

    async def fake_serve(target: Any, **settings: Any) -> None:
        seen.append(settings)

    monkeypatch.setattr("fastmcp_progressive.cli.commands.serve", fake_serve)
    monkeypatch.setenv("FASTMCP_PROGRESSIVE_MAX_TOOLS", "50")
    with pytest.raises(SystemExit) as exited:
        main(["proxy", "--max-t", "5", "--", "srv"])
    assert exited.value.code == 2 and "--max-t" in capsys.readouterr().err
    assert main(["proxy", "--max-tools", "5", "--", "srv"]) == 0
    assert main(["proxy", "--", "srv"]) == 0
    assert [s["listing"].max_tools for s in seen] == [5, 50]


def test_cli_proxy_refuses_config_and_target_together(
    capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["proxy", "--config", "mcp.json", "--", "srv"]) == 2
    assert "either --config FILE or an upstream" in capsys.readouterr().err
    assert main(["proxy"]) == 2
    assert "proxy needs an upstream" in capsys.readouterr().err


def test_our_loggers_are_under_fastmcps_tree() -> None:
    import logging

    from fastmcp_progressive.access import gate
    from fastmcp_progressive.disclosure import describer
    from fastmcp_progressive.proxy import gateway, upstream

    for module in (gate, gateway, describer, upstream):
        assert module.logger.name.startswith("fastmcp.progressive"), module.__name__
    assert logging.getLogger("fastmcp") in _ancestors(gateway.logger)


def _ancestors(logger: Any) -> list[Any]:
    found = []
    while logger is not None:
        found.append(logger)
        logger = logger.parent
    return found


# -- FastMCP's forwarding through the shared upstream session ----------------------------------
FORWARDING_UPSTREAM = """
from fastmcp import Context, FastMCP
mcp = FastMCP("asks")

@mcp.tool
async def greet(ctx: Context) -> str:
    '''Ask the user's name, then greet them.'''
    await ctx.info("asking for a name")
    await ctx.report_progress(1, 2, "asking")
    answer = await ctx.elicit("Your name?", str)
    await ctx.report_progress(2, 2, "done")
    return f"hello {answer.data}" if answer.action == "accept" else "no name"

mcp.run(show_banner=False)
"""


@pytest.mark.slow  # an upstream process
async def test_elicitation_logs_and_progress_reach_the_client_being_served(
    tmp_path: Path
) -> None:
    """Before, the upstream's session kept the forwarding handlers of the client that had
    opened it (the start-up check): an elicitation found no request to relay to."""
    app = tmp_path / "asks.py"
    app.write_text(FORWARDING_UPSTREAM, encoding="utf-8")
    proxy = progressive_proxy([sys.executable, str(app)], startup_timeout=30,
                              exempt_tools=["greet"])
    assert await check_upstream(proxy) == 1  # the session opens before any client
    asked: list[str] = []
    logged: list[str] = []
    progress: list[tuple[float, float | None]] = []

    async def elicit(message: str, response_type: Any, params: Any, context: Any) -> Any:
        asked.append(message)
        return response_type(value="Ada") if response_type is not None else {"value": "Ada"}

    async def log(message: Any) -> None:
        logged.append(str(message.data))

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async with Client(proxy, mode="legacy", elicitation_handler=elicit, log_handler=log,
                      progress_handler=on_progress) as client:
        result = await client.call_tool("greet", {})
    assert result.data == "hello Ada"
    assert asked == ["Your name?"]
    assert any("asking for a name" in line for line in logged)
    assert progress[-1] == (2, 2)


# -- stopping the command: a signal during start-up, and over HTTP (#27) -----------------------
SILENT_UPSTREAM = """
import os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(600)  # started, never answers initialize
"""


def proxy_process(*args: str, cwd: Path) -> Any:
    """``python -m fastmcp_progressive proxy ARGS`` as a real process (its own group)."""
    import subprocess

    env = {**os.environ, "FASTMCP_CHECK_FOR_UPDATES": "off", "NO_COLOR": "1"}
    return subprocess.Popen([sys.executable, "-m", "fastmcp_progressive", "proxy", *args],
                            cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def handles(pid: int, sig: signal.Signals) -> bool:
    """Whether process ``pid`` has a handler for ``sig`` (its ``SigCgt`` mask): the proxy
    past its imports (a signal before that meets Python's default handling)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    return False


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").is_dir() and "Z" not in Path(
        f"/proc/{pid}/stat").read_text().split(")")[-1][:3]


@pytest.mark.slow  # proxy and upstream processes
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds processes through /proc")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_during_start_up_stops_at_once_and_stops_the_upstream(
        sig: str, tmp_path: Path) -> None:
    """The upstream never answers ``initialize``; a signal stops the proxy within seconds,
    not after the start-up timeout (120 s here), and the upstream with it."""
    app = tmp_path / "silent.py"
    app.write_text(SILENT_UPSTREAM, encoding="utf-8")
    marker = tmp_path / "pid"
    process = proxy_process("--startup-timeout", "120", "--", sys.executable, str(app),
                            str(marker), cwd=tmp_path)
    try:
        until_sync(lambda: marker.exists() and marker.read_text().isdigit(), BOUND,
                   "the upstream to start", process=process)
        until_sync(lambda: handles(process.pid, signal.SIGTERM), PATIENCE,
                   "the proxy to listen for signals", process=process)
        upstream = int(marker.read_text())
        process.send_signal(getattr(signal, sig))
        process.wait(timeout=BOUND)  # BOUND < 120 s: stopped by the signal, not the timeout
        until_sync(lambda: not alive(upstream), BOUND, "the upstream to stop")
    finally:
        if process.poll() is None:
            process.kill()
        _, err = process.communicate(timeout=BOUND)
    assert process.returncode == 0, err
    assert "Traceback" not in err, err


@pytest.mark.slow  # proxy and upstream processes
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_proxy_over_http_stops_cleanly_on_a_signal(sig: str, tmp_path: Path) -> None:
    """As ``fastmcp run --transport http`` does: no ``CancelledError`` traceback, status 0."""
    app = tmp_path / "upstream_app.py"
    app.write_text(UPSTREAM_APP, encoding="utf-8")
    port = free_port()
    process = proxy_process("--http", str(port), "--", sys.executable, str(app),
                            cwd=tmp_path)
    try:
        from tests.waiting import port_open

        until_sync(lambda: port_open(port), PATIENCE, "the proxy to listen",
                   process=process)
        process.send_signal(getattr(signal, sig))
        process.wait(timeout=BOUND)
    finally:
        if process.poll() is None:
            process.kill()
        _, err = process.communicate(timeout=BOUND)
    assert process.returncode == 0, err
    assert "Traceback" not in err and "CancelledError" not in err, err


# -- roots at start-up (#27) -----------------------------------------------------------------------
ROOTS_ASKING_UPSTREAM = """
import json, sys
# A handshake-era MCP server that asks its client for roots as soon as its session starts
# (as server-filesystem and server-everything do) and writes down the answer it got.
answer = open(sys.argv[1], "w")
def send(message):
    print(json.dumps({"jsonrpc": "2.0", **message}), flush=True)
for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        send({"id": message["id"], "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "asker", "version": "1"}}})
    elif method == "notifications/initialized":
        send({"id": "roots-1", "method": "roots/list"})
    elif method is None and message.get("id") == "roots-1":
        answer.write(json.dumps(message))
        answer.close()
    elif method == "tools/list":
        send({"id": message["id"], "result": {"tools": []}})
    elif "id" in message and method is not None:
        send({"id": message["id"], "result": {}})
"""


@pytest.mark.slow  # an upstream process
async def test_roots_asked_before_any_client_are_none_not_a_failure(tmp_path: Path) -> None:
    """An upstream asking for roots at start-up, before any front client: answered with an
    empty list (it logged "Failed to request initial roots ... -32603" on every start)."""
    from fastmcp_progressive.proxy.upstream import Upstream
    from tests.waiting import until

    app = tmp_path / "asker.py"
    app.write_text(ROOTS_ASKING_UPSTREAM, encoding="utf-8")
    answer = tmp_path / "answer.json"
    upstream = Upstream([sys.executable, "-S", str(app), str(answer)], startup_timeout=30)
    try:
        assert await upstream.check() == 0
        await until(lambda: answer.exists() and answer.read_text(), BOUND,
                    "the upstream's roots answer")
    finally:
        await upstream.close()
    import json

    got = json.loads(answer.read_text())
    assert got.get("result") == {"roots": []}, got
    assert upstream.roots_asked  # so a client with roots arriving later is resynced
