"""The contract with FastMCP: one test per internal ``fastmcp_internals.py`` touches.

Each test is named after the adapter function it covers and fails with a message naming
the FastMCP attribute that moved, so a FastMCP release that breaks one says where to look.
``test_every_touch_has_a_contract_test`` keeps that one-to-one, and
``test_no_private_fastmcp_access_outside_the_adapter`` fails, naming file and line, when
any other module of the package reads a private attribute. CI runs this file on the
default install (the newest FastMCP, 4.2) and on the oldest supported one (4.1.2, see
``.ci/run``).
"""

from __future__ import annotations

import ast
import inspect
import socket
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.context import Context
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.providers.base import Provider
from fastmcp.server.transforms import PromptsAsTools, ResourcesAsTools
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.tools.base import Tool, ToolResult
from fastmcp.tools.function_tool import FunctionTool
from key_value.aio.stores.memory import MemoryStore

import fastmcp_progressive
from fastmcp_progressive import fastmcp_internals as internals
from fastmcp_progressive.access.caller import is_modern
from fastmcp_progressive.access.gate import gateway_tools
from fastmcp_progressive.disclosure.listing import ListedTool
from tests.conftest import Era, connect
from tests.tracked import tracked

PACKAGE = Path(fastmcp_progressive.__file__).parent
ADAPTER = "fastmcp_internals.py"


def moved(what: str, function: str) -> str:
    """The failure message: which FastMCP attribute moved and which adapter function reads it."""
    return (f"FastMCP moved {what}: fastmcp_internals.{function} reads it (verified on "
            f"FastMCP {', '.join(internals.VERIFIED_ON)})")


def noop() -> str:
    return "ok"


class Probe(Middleware):
    """Records ``probe(context)`` for each ``tools/call`` it sees."""

    def __init__(self, probe: Callable[[MiddlewareContext[Any]], Any]) -> None:
        self.probe = probe
        self.seen: list[Any] = []

    async def on_call_tool(self, context: MiddlewareContext[Any],
                           call_next: CallNext[Any, ToolResult]) -> ToolResult:
        self.seen.append(self.probe(context))
        return await call_next(context)


async def during_call(era: Era, probe: Callable[[Context], Any], *, clients: int = 1,
                      calls: int = 1, server: FastMCP | None = None) -> list[Any]:
    """What ``probe(ctx)`` answers inside each ``tools/call`` of ``clients`` in-memory clients."""
    server = server or FastMCP("contract")
    server.tool(noop)
    recorder = Probe(lambda context: probe(context.fastmcp_context))
    server.add_middleware(recorder)
    seen = recorder.seen
    for _ in range(clients):
        async with connect(server, era) as client:
            for _ in range(calls):
                await client.call_tool("noop", {})
    return seen


# -- requests --------------------------------------------------------------------------------
async def test_request_connection() -> None:
    found = await during_call(
        "legacy", lambda ctx: internals.request_connection(ctx.request_context.session)  # type: ignore[union-attr]
    )
    assert found[0] is not None, moved("ServerSession._connection", "request_connection")
    assert hasattr(found[0], "session_id"), moved("Connection.session_id", "request_connection")


async def test_is_nested_tool_call() -> None:
    server = FastMCP("nested")
    seen: dict[str, tuple[bool, bool]] = {}

    @server.tool
    async def outer(ctx: Context) -> str:
        await ctx.fastmcp.call_tool("inner", {})
        return "outer"

    @server.tool
    def inner() -> str:
        return "inner"

    server.add_middleware(Probe(lambda context: seen.update({context.message.name: (
        internals.is_nested_tool_call(), internals.serving_tool_call())})))
    async with Client(server) as client:
        await client.call_tool("outer", {})
    message = moved("fastmcp.server.dependencies._client_tool_call / _is_client_tool_call",
                    "is_nested_tool_call")
    assert seen == {"outer": (False, True), "inner": (True, True)}, message


async def test_serving_tool_call() -> None:
    server = FastMCP("serving")
    server.tool(noop)
    listed: list[bool] = []

    class Probe(Middleware):
        async def on_list_tools(self, context: MiddlewareContext[Any],
                                call_next: CallNext[Any, Any]) -> Any:
            listed.append(internals.serving_tool_call())
            return await call_next(context)

    server.add_middleware(Probe())
    async with Client(server) as client:
        await client.list_tools()
    message = moved("fastmcp.server.dependencies._client_tool_call", "serving_tool_call")
    assert listed == [False], message
    assert (await during_call("modern", lambda _: internals.serving_tool_call())) == [True], message


async def test_wire_param() -> None:
    child = FastMCP("child")
    child.tool(noop)
    recorder = Probe(lambda context: (context.message.name,
                                      internals.wire_param(context.fastmcp_context, "name")))
    child.add_middleware(recorder)
    parent = FastMCP("parent")
    parent.mount(child, namespace="kid")
    async with Client(parent) as client:
        await client.call_tool("kid_noop", {})
    (local, wire), = recorder.seen
    assert local == "noop"
    assert wire == "kid_noop", moved("FastMCPRequestContext._srctx.params", "wire_param")


def test_is_modern_is_fastmcps_own_check() -> None:
    """The public era check (``caller.is_modern``) answers as FastMCP's private one."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    assert all(is_modern(v) for v in MODERN_PROTOCOL_VERSIONS)
    assert not is_modern("2025-11-25") and not is_modern(None)


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_is_modern_agrees_with_fastmcp(era: Era) -> None:
    """Compared with FastMCP's private check while it exists; we never call that one."""
    answers = await during_call(era, lambda ctx: (
        is_modern(ctx.request_context.protocol_version),  # type: ignore[union-attr]
        getattr(ctx, "_is_modern_protocol", lambda: era == "modern")(),
    ))
    assert answers == [(era == "modern", era == "modern")]


# -- handshake-era connections ---------------------------------------------------------------
async def legacy_connection() -> Any:
    return (await during_call(
        "legacy", lambda ctx: internals.request_connection(ctx.request_context.session)  # type: ignore[union-attr]
    ))[0]


async def test_on_connection_close() -> None:
    connection = await legacy_connection()
    assert callable(getattr(getattr(connection, "exit_stack", None), "callback", None)), moved(
        "Connection.exit_stack.callback", "on_connection_close")
    calls: list[str] = []
    with ExitStack() as stack:
        fake = type("Conn", (), {"exit_stack": stack, "state": {}})()
        assert internals.on_connection_close(fake, lambda: calls.append("x"), marker="m")
    assert calls == ["x"]


async def test_close_with_connection() -> None:
    connection = await legacy_connection()
    push = getattr(getattr(connection, "exit_stack", None), "push_async_callback", None)
    assert callable(push), moved("Connection.exit_stack.push_async_callback",
                                 "close_with_connection")


async def test_connection_state() -> None:
    state = internals.connection_state(await legacy_connection())
    assert isinstance(state, dict), moved("Connection.state", "connection_state")


# -- the server ------------------------------------------------------------------------------
async def test_server_running() -> None:
    server = FastMCP("lifespan")
    assert hasattr(server, "_lifespan_result_set"), moved("FastMCP._lifespan_result_set",
                                                          "server_running")
    assert not internals.server_running(server)
    async with Client(server):
        assert internals.server_running(server), moved("FastMCP._lifespan_result_set",
                                                       "server_running")
    assert not internals.server_running(server)


def test_server_info_stamp() -> None:
    stamp = internals.server_info_stamp(FastMCP("stamped"))
    assert isinstance(stamp, dict) and stamp.get("name") == "stamped", moved(
        "FastMCP._mcp_server.server_info_stamp", "server_info_stamp")


async def test_serve_method() -> None:
    """A method FastMCP does not serve is answered, its capability advertised; one FastMCP
    serves is refused rather than replaced."""
    server = FastMCP("subscribable")
    seen: list[str] = []

    async def subscribe(_ctx: Any, params: mt.SubscribeRequestParams) -> mt.EmptyResult:
        seen.append(str(params.uri))
        return mt.EmptyResult()

    internals.serve_method(server, "resources/subscribe", mt.SubscribeRequestParams, subscribe)
    with pytest.raises(ValueError, match="already served"):
        internals.serve_method(server, "tools/list", mt.PaginatedRequestParams, subscribe)
    async with connect(server, "legacy") as client:
        assert client.initialize_result is not None
        capabilities = client.initialize_result.capabilities
        assert capabilities.resources is not None and capabilities.resources.subscribe, moved(
            "FastMCP._mcp_server.add_request_handler", "serve_method")
        await client.session.subscribe_resource("test://watched")
    assert seen == ["test://watched"]


async def test_state_storage() -> None:
    default = await during_call("legacy", internals.state_storage)
    assert default[0] is not None, moved("FastMCP._state_storage", "state_storage")
    store = MemoryStore()
    given = await during_call("legacy", internals.state_storage,
                              server=FastMCP("state", session_state_store=store))
    assert given[0] is store, moved("FastMCP._state_storage", "state_storage")


async def test_whole_catalog() -> None:
    """Tools behind component auth and a server transform's are in; a disabled one is not,
    and no request (its session, its token) narrows it."""
    from fastmcp.server.auth import require_scopes
    from fastmcp.server.transforms import Namespace

    server = FastMCP("catalog")
    server.tool(lambda: "x", name="open")
    server.tool(lambda: "x", name="admin", auth=require_scopes("admin"))
    server.tool(lambda: "x", name="off")
    server.disable(names={"off"})
    server.add_transform(Namespace("ns"))
    names = sorted(t.name for t in await internals.whole_catalog(server))
    assert names == ["ns_admin", "ns_open"], moved("Provider.list_tools", "whole_catalog")


# -- middleware and transforms ---------------------------------------------------------------
async def test_gateway_tool_names_match_what_the_transforms_list() -> None:
    """The names ``gate.gateway_tools`` expects are those FastMCP's gateway transforms
    really generate (public behaviour, checked here beside the private reads)."""
    for transform in (ResourcesAsTools(FastMCP("r")), PromptsAsTools(FastMCP("p")),
                      RegexSearchTransform()):
        server = FastMCP("gateway")
        server.add_transform(transform)
        listed = {tool.name for tool in await transform.list_tools([])}
        assert await gateway_tools(server) == listed, type(transform).__name__


# -- a LocalProvider's components ----------------------------------------------------------
def test_local_component() -> None:
    server = FastMCP("component")
    tool = server.add_tool(noop)
    assert internals.local_component(server.local_provider, tool.key) is tool, moved(
        "LocalProvider._components", "local_component")
    assert internals.local_component(server.local_provider, "tool:absent@") is None


# -- tools -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["create_invoice", "get-weather", "x", "a_b-c"])
def test_default_title(name: str) -> None:
    wire = FunctionTool.from_function(noop, name=name).to_mcp_tool()
    assert wire.title == internals.default_title(name), moved(
        "the title Tool.to_mcp_tool derives from a name (tools.base._default_title)",
        "default_title")


def _with_context(n: int, ctx: Context, flag: bool = False) -> int:
    raise AssertionError("the body must never run")


async def test_argument_validator() -> None:
    """The mirror of ``FunctionTool.run``'s validation refuses what FastMCP refuses, accepts
    what it accepts (context parameters left out), never runs the body, and yields to
    ``strict_input_validation``."""
    from pydantic import ValidationError

    what = ("FunctionTool.run's argument validation (a TypeAdapter of "
            "dependencies.without_injected_parameters(fn), FastMCP.strict_input_validation)")
    tool = FunctionTool.from_function(_with_context)
    validate = internals.argument_validator(tool)
    assert validate is not None, moved(what, "argument_validator")
    validate({"n": "5"})  # lax, as FastMCP outside strict mode
    validate({"n": 5, "flag": True})
    for bad in ({}, {"n": "five"}, {"n": 1, "ctx": 1}):
        with pytest.raises(ValidationError):
            validate(bad)
    with pytest.raises(Exception, match="valid integer"):  # FastMCP's own run refuses too
        await tool.run({"n": "five"})
    server = FastMCP("strict", strict_input_validation=True)
    server.add_tool(tool)
    refused: list[str] = []

    @server.tool
    def probe(ctx: Context) -> str:
        try:
            validate({"n": "5"})
        except ValidationError:
            refused.append("strict")
        return "ok"

    async with Client(server) as client:
        await client.call_tool("probe", {})
    assert refused == ["strict"], moved(what, "argument_validator")
    assert internals.argument_validator(Tool(name="custom", parameters={})) is None


async def test_listing_reuses_a_listed_tools_wire_form() -> None:
    """``ListedTool`` keeps its wire form for what FastMCP's listing passes to
    ``to_mcp_tool`` (4.1: the name; 4.2: the name and output schema); were FastMCP to pass
    anything else, every listing would rebuild it (slow, not wrong)."""
    built: list[dict[str, Any]] = []

    class Spy(ListedTool):
        def _build_wire(self, **given: Any) -> Any:
            built.append(given)
            return super()._build_wire(**given)

    server = FastMCP("wire")
    server.tool(noop)
    listed: list[Tool] = []

    class Swap(Middleware):
        async def on_list_tools(self, context: MiddlewareContext[Any],
                                call_next: CallNext[Any, Any]) -> Any:
            if not listed:
                listed.extend(Spy.of(t, {"output_schema": None}) for t in await call_next(context))
            return listed

    server.add_middleware(Swap())
    async with Client(server) as client:
        await client.list_tools()
        await client.list_tools()
    assert built == [{}], (
        "FastMCP changed what its tools/list handler passes to Tool.to_mcp_tool, so a "
        f"listed tool's kept wire form goes unused (ListedTool._restated): {built}")


LISTED_FIELDS = {
    "name", "version", "title", "description", "icons", "tags", "meta", "task_config",
    "return_type", "parameters", "output_schema", "annotations", "execution", "auth", "timeout",
}
"""The fields of FastMCP's ``Tool`` the listing memo knows (verified on 4.1.2 and 4.2.3)."""


def test_tool_fields_the_listing_copies() -> None:
    """A listed copy keeps every ``Tool`` field (``ListedTool.of``); its memo key must
    cover them. A field FastMCP adds fails here: add it to ``Lister._content`` if a
    listed copy of two tools differing only in it must differ, then here."""
    assert set(Tool.model_fields) == LISTED_FIELDS, (
        f"FastMCP's Tool fields changed: {sorted(set(Tool.model_fields) ^ LISTED_FIELDS)}")


def test_provider_override_points() -> None:
    """``components.py`` serves its components by overriding ``Provider._list_*``, the
    override points FastMCP documents for providers."""
    for hook in ("_list_tools", "_list_resources", "_list_resource_templates", "_list_prompts"):
        assert callable(getattr(Provider, hook, None)), f"FastMCP moved Provider.{hook}"


# -- the client side -------------------------------------------------------------------------
async def test_connect_failure() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = Client(f"http://127.0.0.1:{port}/mcp", mode="legacy")
    with pytest.raises(Exception) as raised:
        async with client:
            pass
    causes = [raised.value, raised.value.__cause__, raised.value.__context__]
    assert any(internals.connect_failure(e) for e in causes if e is not None), moved(
        f"the client's failed-connection message ({internals.CONNECT_FAILED!r})",
        "connect_failure")


# -- the adapter's own rules -----------------------------------------------------------------
def test_mounted_namespaces() -> None:
    parent, child = FastMCP("parent"), FastMCP("kid", instructions="Kid things.")
    parent.mount(child, namespace="kid")
    parent.mount(FastMCP("flat"))  # no namespace: no group
    found = internals.mounted_namespaces(parent)
    assert found == [("kid", child)], (
        "Namespace._prefix, _WrappedProvider._inner or FastMCPProvider.server moved")


async def test_request_servers() -> None:
    """A child's middleware sees the servers its request came through, innermost first."""
    from fastmcp.server.middleware import Middleware

    seen: list[list[str]] = []

    class Spy(Middleware):
        async def on_call_tool(self, context: Any, call_next: Any) -> Any:
            seen.append([s.name for s in internals.request_servers(context.fastmcp_context)])
            return await call_next(context)

    child, middle, top = FastMCP("child"), FastMCP("middle"), FastMCP("top")
    child.tool(lambda: 1, name="one")
    child.add_middleware(Spy())
    middle.mount(child, namespace="kid")
    top.mount(middle)
    async with Client(top) as client:
        await client.call_tool("kid_one", {})
    async with Client(child) as client:
        await client.call_tool("one", {})
    assert seen == [["child", "middle", "top"], ["child"]], (
        "Context._tokens (the token of _current_context.set) moved")
    assert internals.request_servers(None) == []


async def test_delegate_of() -> None:
    parent, child = FastMCP("parent"), FastMCP("kid")
    child.tool(lambda: 1, name="one")
    parent.mount(child, namespace="kid")
    tool = await parent.get_tool("kid_one")
    assert internals.delegate_of(tool) == (child, "one"), (
        "FastMCPProviderTool._server or _original_name moved")
    assert internals.delegate_of(await child.get_tool("one")) is None
    flat = FastMCP("flat")
    parent.mount(flat)
    mounted = internals.mounted_namespaces(parent, with_plain=True)
    assert ("kid", child) in mounted and ("", flat) in mounted  # and the parent's own ("", None)


def test_every_touch_has_a_contract_test() -> None:
    functions = [name for name, value in vars(internals).items()
                 if inspect.isfunction(value) and not name.startswith("_")
                 and value.__module__ == internals.__name__]
    tests = {name for name in globals() if name.startswith("test_")}
    missing = [f for f in functions if f"test_{f}" not in tests]
    assert not missing, f"adapter functions without a contract test: {missing}"
    undocumented = [f for f in functions
                    if "Verified on" not in (getattr(internals, f).__doc__ or "")
                    ]
    assert not undocumented, f"adapter functions not saying where verified: {undocumented}"


OWN_PRIVATE = {
    ("listing.py", "other._lines"),
    ("listing.py", "other._lines_lock"),
    ("listing.py", "other._parsing"),
    ("listing.py", "copied._wire"),
}
"""Private attributes of the package's own classes read outside ``self``: not FastMCP's."""

_FASTMCP_PACKAGES = ("fastmcp", "mcp", "mcp_types")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_touches(path: Path) -> list[str]:
    """``file:line: expression`` for each private access in one module of the package."""
    found: list[str] = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if (isinstance(base, ast.Call) and isinstance(base.func, ast.Name)
                    and base.func.id == "super"):
                continue
            if (path.name, ast.unparse(node)) not in OWN_PRIVATE:
                found.append(f"{where}: {ast.unparse(node)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
              and len(node.args) >= 2):
            name = node.args[1]
            text = name.value if isinstance(name, ast.Constant) else (
                ast.unparse(name).lstrip("f").strip("'\"") if isinstance(name, ast.JoinedStr)
                else "")
            if isinstance(text, str) and _private(text):
                found.append(f"{where}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] in _FASTMCP_PACKAGES and (
                any(_private(p) for p in parts) or any(_private(a.name) for a in node.names)
            ):
                found.append(f"{where}: from {node.module} import "
                             + ", ".join(a.name for a in node.names))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in _FASTMCP_PACKAGES and any(_private(p) for p in parts):
                    found.append(f"{where}: import {alias.name}")
    return found


def test_no_private_fastmcp_access_outside_the_adapter() -> None:
    touches = [touch for path in tracked(PACKAGE, "*.py") if path.name != ADAPTER
               for touch in private_touches(path)]
    assert not touches, (
        "private attributes read outside fastmcp_internals.py (move each behind a function "
        "there, with a contract test here): " + "; ".join(touches))


def test_the_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from fastmcp.server.dependencies import _client_tool_call\n"
        "import fastmcp.server._private\n"
        "x = ctx.fastmcp._state_store\n"
        "y = getattr(session, '_connection', None)\n"
        "z = getattr(m, f'_{name}_settings', None)\n"
        "self._fine = super()._also_fine\n"
    )
    assert sorted(t.split(": ", 1)[0] for t in private_touches(sample)) == [
        "sample.py:1", "sample.py:2", "sample.py:3", "sample.py:4", "sample.py:5"]


READ_PRIVATE_NAMES = frozenset({
    "_connection", "_client_tool_call", "_is_client_tool_call", "_srctx",
    "_lifespan_result_set", "_mcp_server", "_state_storage",
    "_components", "_server",
    "_original_name", "_prefix", "_inner", "_tokens",
})
"""Every private FastMCP/SDK name ``fastmcp_internals.py`` reads (``_<method>_settings``
stands for ``ResponseCachingMiddleware``'s three); issue #26 bounds it at 12, issue #33
adds ``Context._tokens`` (the servers a request came through: nothing public says)."""


def private_names(path: Path) -> set[str]:
    """The private names a module reads: attributes off anything but ``self``/``cls``,
    ``getattr``/``setattr`` names (an f-string's holes shown as ``<name>``), and names
    imported from FastMCP or the SDK."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and _private(node.attr) and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            names.add(node.attr)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) >= 2):
            arg = node.args[1]
            text = arg.value if isinstance(arg, ast.Constant) else "".join(
                part.value if isinstance(part, ast.Constant) else f"<{ast.unparse(part.value)}>"
                for part in arg.values) if isinstance(arg, ast.JoinedStr) else ""
            if isinstance(text, str) and _private(text):
                names.add(text.replace("<m>", "<method>"))
        elif (isinstance(node, ast.ImportFrom) and node.module and node.level == 0
              and node.module.split(".")[0] in _FASTMCP_PACKAGES):
            names.update(a.name for a in node.names if _private(a.name))
    return names


def test_the_private_names_read_are_the_listed_ones() -> None:
    """Repeatable count of issue #26's bound: the adapter reads exactly these private names
    (``test_no_private_fastmcp_access_outside_the_adapter``: and no other module any)."""
    read = private_names(Path(internals.__file__))
    assert read == READ_PRIVATE_NAMES, (
        f"read but not listed: {sorted(read - READ_PRIVATE_NAMES)}; "
        f"listed but not read: {sorted(READ_PRIVATE_NAMES - read)}")
    count = len(READ_PRIVATE_NAMES) + (2 if "_<method>_settings" in READ_PRIVATE_NAMES else 0)
    assert count <= 13, f"{count} private names read"
