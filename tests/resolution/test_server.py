"""Tool resolution (``tools/resolve``) through real protocol paths.

The draft's server rules one by one, in both protocol eras, in memory and over streamable
HTTP with ``fastmcp.Client``, plus raw HTTP requests carrying the 2026-07-28 headers:
capability on the current request, unknown / hidden / unmarked tools alike, arguments
validated against the real schema, all four hints, ``resultType``, the bound enforced at
run time, hot reload of a rule, listing marks, and that a resolution runs nothing and
grants nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import httpx2 as httpx
import pytest
from fastmcp import Client, FastMCP
from mcp.client.extension import advertise
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations
from pydantic import TypeAdapter

from fastmcp_progressive import EXTENSION_ID, ResolutionSettings
from fastmcp_progressive.resolution.client import (
    ResolveToolParams,
    ResolveToolRequest,
    is_resolvable,
    resolve_tool,
    tool_resolution,
)
from fastmcp_progressive.resolution.server import RESOLUTION_EXTENSION_ID
from tests.conftest import (
    ERAS,
    FOLLOWED_IN_MEMORY,
    TRANSPORT_ERA,
    TRANSPORTS,
    Era,
    Transport,
    build_server,
    connect,
    fetch,
    gated,
    serve_http,
    served,
)
from tests.waiting import PATIENCE

LOGGER = "fastmcp.progressive"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
STATIC = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
          "openWorldHint": False}
RULES = [
    {"when": {"action": "read"},
     "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    {"when": {"action": {"in": ["append", "tag"]}}, "destructiveHint": False},
    {"when": {"action": "delete", "force": {"present": False}}, "idempotentHint": True},
]
FOLLOWED = [(t, e) for t, e in TRANSPORT_ERA if t == "http" or e in FOLLOWED_IN_MEMORY]
RAW = TypeAdapter(dict[str, Any])


def mcp_version() -> str:
    return FastMCP("probe")._mcp_server.version or ""


def test_server_info_stamp_is_where_the_adapter_reads_it() -> None:
    """Fails by name when FastMCP moves the low-level server or its ``serverInfo`` stamp."""
    from fastmcp_progressive.fastmcp_internals import server_info_stamp

    server = FastMCP("stamped")
    assert server_info_stamp(server) == {"name": "stamped", "version": mcp_version()}


def notes_server(folder: Path, *, auth: bool = False, **options: Any) -> tuple[FastMCP, list[str]]:
    """The basic tools plus ``notes`` (resolvable) and ``secret`` (resolvable, disabled)."""
    ran: list[str] = []
    mcp = build_server(auth=auth, descriptions_dir=folder, **options)

    @mcp.tool(annotations=ToolAnnotations(**STATIC))
    def notes(action: Literal["read", "append", "tag", "delete"], note_id: str,
              text: str | None = None, force: bool | None = None) -> str:
        """Read, append to, tag or delete a note."""
        ran.append(action)
        return f"{action} {note_id}"

    @mcp.tool
    def secret(action: str) -> str:
        """A tool nobody may see."""
        ran.append("secret")
        return action

    mcp.disable(names={"secret"})
    (folder / "notes.json").write_text(json.dumps({"resolution": RULES}), encoding="utf-8")
    (folder / "secret.json").write_text(
        json.dumps({"resolution": [{"readOnlyHint": True}]}), encoding="utf-8")
    return mcp, ran




@asynccontextmanager
async def opened(target: FastMCP | str, era: Era, *, extensions: list[Any] | None = None,
                 token: str | None = None) -> AsyncIterator[Client[Any]]:
    """One client, advertising tool resolution unless told otherwise."""
    exts = [tool_resolution()] if extensions is None else extensions
    async with connect(target, era, token=None if isinstance(target, FastMCP) else token,
                       extensions=exts) as client:
        yield client


async def raw_resolve(client: Client[Any], name: str, arguments: Any) -> dict[str, Any]:
    """The ``tools/resolve`` result exactly as the wire carried it (arguments unchecked)."""
    request = ResolveToolRequest(params=ResolveToolParams.model_construct(
        name=name, arguments=arguments))
    return await client.session.send_request(request, RAW)  # type: ignore[no-any-return]


async def resolve_error(client: Client[Any], name: str, arguments: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await raw_resolve(client, name, arguments)
    return caught.value


@pytest.fixture
def folder(tmp_descriptions: Path) -> Path:
    return tmp_descriptions


# -- negotiation ---------------------------------------------------------------------------
@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_server_advertises_the_extension(folder: Path, transport: Transport,
                                               era: Era) -> None:
    server, _ = notes_server(folder)
    async with served(server, transport) as target, opened(target, era) as client:
        caps = client.session.server_capabilities
        assert caps is not None and caps.extensions is not None
        assert caps.extensions[RESOLUTION_EXTENSION_ID] == {}


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_capability_is_required_on_the_request(folder: Path, transport: Transport,
                                                     era: Era) -> None:
    server, ran = notes_server(folder)
    async with served(server, transport) as target:
        for extensions in ([], [advertise(RESOLUTION_EXTENSION_ID, {"revision": 2})]):
            async with opened(target, era, extensions=extensions) as client:
                error = await resolve_error(client, "notes", {"action": "read", "note_id": "n"})
                assert error.error.code == -32021
                assert error.error.data == {
                    "requiredCapabilities": {"extensions": {RESOLUTION_EXTENSION_ID: {}}}}
    assert ran == []


# -- the server's rules ----------------------------------------------------------------------
@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_result_has_all_four_hints_and_nothing_else(folder: Path, transport: Transport,
                                                          era: Era) -> None:
    server, ran = notes_server(folder)
    expected = {
        "read": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                 "openWorldHint": False},
        "append": {**STATIC, "destructiveHint": False},
        "tag": {**STATIC, "destructiveHint": False},
        "delete": {**STATIC, "idempotentHint": True},
    }
    async with served(server, transport) as target, opened(target, era) as client:
        for action, hints in expected.items():
            result = await raw_resolve(client, "notes", {"action": action, "note_id": "n"})
            meta = result.pop("_meta", None)
            assert result == {"resultType": "complete", "name": "notes", "annotations": hints}
            if era == "modern":  # the serverInfo stamp every 2026-07-28 result carries
                assert meta == {SERVER_INFO: {"name": "test", "version": mcp_version()}}
            else:
                assert meta is None
        # no rule matches (the delete rule wants force absent): the static annotations
        forced = await raw_resolve(client, "notes",
                                   {"action": "delete", "note_id": "n", "force": True})
        assert forced["annotations"] == STATIC
        typed = await resolve_tool(client, "notes", {"action": "read", "note_id": "n"})
        assert typed.read_only and not typed.destructive and not typed.open_world
    assert ran == []  # nothing executed


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_unknown_hidden_and_unmarked_tools_answer_alike(folder: Path,
                                                              transport: Transport,
                                                              era: Era) -> None:
    server, ran = notes_server(folder)
    async with served(server, transport) as target, opened(target, era) as client:
        messages = {}
        for name in ("no_such_tool", "secret", "add"):  # unknown, hidden, unmarked
            error = await resolve_error(client, name, {"action": "x"})
            assert error.error.code == -32602
            assert error.error.data is None
            messages[name] = error.error.message.replace(repr(name), "NAME")
        assert len(set(messages.values())) == 1, messages
        huge = await resolve_error(client, "x" * 5_000, {})  # fits an Mcp-Name header
        assert huge.error.code == -32602 and len(huge.error.message) < 400
    assert ran == []


@pytest.mark.parametrize("era", ERAS)
async def test_tools_hidden_by_auth_answer_like_unknown_ones(folder: Path, era: Era) -> None:
    """Component ``auth`` and an ``AuthMiddleware`` listing filter hide tools from alice."""
    from fastmcp.server.auth import require_scopes
    from fastmcp.server.middleware.authorization import AuthMiddleware

    server, ran = notes_server(folder, auth=True)

    @server.tool(auth=require_scopes("admin"))
    def purge(action: str) -> str:
        ran.append("purge")
        return action

    @server.tool(tags={"ops"})
    def restart(action: str) -> str:
        ran.append("restart")
        return action

    def no_ops(ctx: Any) -> bool:
        return "ops" not in getattr(ctx.component, "tags", set())

    server.add_middleware(AuthMiddleware(auth=no_ops))
    for name in ("purge", "restart"):
        (folder / f"{name}.json").write_text(
            json.dumps({"resolution": [{"readOnlyHint": True}]}), encoding="utf-8")
    async with served(server, "http") as target, \
            opened(target, era, token="alice-token") as client:
        listed = {t.name for t in await client.list_tools()}
        assert "notes" in listed and not listed & {"purge", "restart", "secret"}
        unknown = (await resolve_error(client, "no_such_tool", {})).error
        for name in ("purge", "restart"):
            error = (await resolve_error(client, name, {"action": "x"})).error
            assert (error.code, error.message.replace(repr(name), "N"), error.data) == (
                unknown.code, unknown.message.replace("'no_such_tool'", "N"), unknown.data)
        assert (await resolve_tool(client, "notes", {"action": "read", "note_id": "n"})).read_only
    assert ran == []


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # bad arguments on purpose
@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_arguments_are_validated_against_the_real_schema(folder: Path,
                                                               transport: Transport,
                                                               era: Era) -> None:
    server, ran = notes_server(folder)  # the progressive listing shows a stripped schema
    cases: list[tuple[Any, str]] = [
        ({"action": "raed", "note_id": "n"}, "arguments.action: Input should be 'read'"),
        ({"action": "read"}, "'note_id' is a required property"),
        ({"action": "read", "note_id": 5}, "arguments.note_id: Input should be a valid string"),
        ({"action": "read", "note_id": "n", "extra": 1},
         "additional property 'extra' is not allowed"),
        ({}, "is a required property"),  # partial arguments are not supported
        ([1, 2], "arguments"),
        ("read", "arguments"),
    ]
    async with served(server, transport) as target, opened(target, era) as client:
        for arguments, message in cases:
            error = await resolve_error(client, "notes", arguments)
            assert error.error.code == -32602, arguments
            assert message in error.error.message, (arguments, error.error.message)
    assert ran == []


BOUND_BREAKERS = [
    ({"readOnlyHint": True}, {"readOnlyHint": False}),
    ({"readOnlyHint": False, "destructiveHint": False}, {"destructiveHint": True}),
    ({"readOnlyHint": False, "idempotentHint": True}, {"idempotentHint": False}),
    ({"openWorldHint": False}, {"openWorldHint": True}),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("static", "rule"), BOUND_BREAKERS)
async def test_a_rule_breaking_the_bound_answers_32603_and_logs(
    tmp_descriptions: Path, caplog: pytest.LogCaptureFixture, era: Era,
    static: dict[str, bool], rule: dict[str, bool],
) -> None:
    caplog.set_level(logging.ERROR, LOGGER)
    mcp = build_server(descriptions_dir=tmp_descriptions)

    @mcp.tool(annotations=ToolAnnotations(**static))
    def risky(mode: str) -> str:
        return mode

    (tmp_descriptions / "risky.json").write_text(json.dumps({"resolution": [
        {"when": {"mode": "ok"}, "readOnlyHint": static.get("readOnlyHint", False)},
        {"when": {"mode": "bad"}, **rule},
    ]}), encoding="utf-8")
    async with opened(mcp, era) as client:
        fine = await raw_resolve(client, "risky", {"mode": "ok"})
        assert fine["resultType"] == "complete"
        for _ in range(2):
            error = await resolve_error(client, "risky", {"mode": "bad"})
            assert error.error.code == -32603
            assert "static annotations" in error.error.message
    logged = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(logged) == 1 and "resolution[1]" in logged[0] and "bound" in logged[0]


# -- what a resolution does not do ---------------------------------------------------------
@pytest.mark.parametrize(("transport", "era"), FOLLOWED)
async def test_resolve_then_call_same_arguments_and_no_grant(folder: Path,
                                                             transport: Transport,
                                                             era: Era) -> None:
    server, ran = notes_server(folder, auth=True)  # HTTP callers are principals: gated
    args = {"action": "append", "note_id": "n1", "text": "hello"}
    async with served(server, transport) as target, \
            opened(target, era, token="alice-token") as client:
        await client.list_tools()  # a host that keeps its session: the spec's gate applies
        hints = await resolve_tool(client, "notes", args)
        assert not hints.destructive and ran == []
        assert await gated(client, "notes", args), "a resolution must not grant the tool"
        assert ran == []
        result = await client.call_tool("notes", args)  # the refusal taught (and granted) it
        assert result.data == "append n1" and ran == ["append"]
        again = await resolve_tool(client, "notes", args)  # advice again, nothing run
        assert again == hints and ran == ["append"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_resolution_does_not_make_a_one_call_session_look_kept(
    folder: Path, transport: Transport,
) -> None:
    """Hosts that open a session per tool call resolve inside that session, right before the
    call: the resolve must not make the session look like one the spec's gate can follow."""
    server, ran = notes_server(folder)
    args = {"action": "read", "note_id": "n1"}
    async with served(server, transport) as target:
        for _ in range(2):
            async with opened(target, "legacy") as client:
                assert (await resolve_tool(client, "notes", args)).read_only
                assert (await client.call_tool("notes", args)).data == "read n1"
    assert ran == ["read", "read"]


@pytest.mark.parametrize("era", ERAS)
async def test_hot_reload_of_a_rule(folder: Path, era: Era) -> None:
    server, _ = notes_server(folder)
    read = {"action": "read", "note_id": "n"}
    async with opened(server, era) as client:
        assert (await resolve_tool(client, "notes", read)).read_only
        path = folder / "notes.json"
        path.write_text(json.dumps({"resolution": [
            {"when": {"action": "read"}, "readOnlyHint": False, "destructiveHint": False,
             "idempotentHint": True},
        ], "summary": "Notes, with a longer file so the size differs."}), encoding="utf-8")
        changed = await resolve_tool(client, "notes", read)
        assert not changed.read_only and not changed.destructive
        path.unlink()  # no file, no rules: the tool is no longer resolvable
        gone = await resolve_error(client, "notes", read)
        assert gone.error.code == -32602
        assert not any(is_resolvable(t) for t in await client.list_tools())


# -- marking and advertising -----------------------------------------------------------------
@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_listing_marks_resolvable_tools_only_for_advertising_requests(
    folder: Path, transport: Transport, era: Era,
) -> None:
    server, _ = notes_server(folder)
    full = [tool_resolution(), advertise(EXTENSION_ID, {"mode": "full"})]
    async with served(server, transport) as target:
        async with opened(target, era) as client:
            marked = {t.name for t in await client.list_tools() if is_resolvable(t)}
            assert marked == {"notes"}
            tool = next(t for t in await client.list_tools() if t.name == "notes")
            assert tool.meta is not None
            assert tool.meta[RESOLUTION_EXTENSION_ID] == {"resolvable": True}
        async with opened(target, era, extensions=[]) as client:
            listed = await client.list_tools()
            assert not any(RESOLUTION_EXTENSION_ID in (t.meta or {}) for t in listed)
        async with opened(target, era, extensions=full) as client:
            listed = await client.list_tools()
            notes = next(t for t in listed if t.name == "notes")
            assert "Read, append to" in (notes.description or "")  # the full listing
            assert {t.name for t in listed if is_resolvable(t)} == {"notes"}


@pytest.mark.parametrize("era", ERAS)
async def test_switched_off_means_method_not_found(folder: Path, era: Era) -> None:
    server, _ = notes_server(folder, resolution=ResolutionSettings(enabled=False))
    async with opened(server, era) as client:
        caps = client.session.server_capabilities
        assert caps is None or RESOLUTION_EXTENSION_ID not in (caps.extensions or {})
        error = await resolve_error(client, "notes", {"action": "read", "note_id": "n"})
        assert error.error.code == -32601
        assert not any(is_resolvable(t) for t in await client.list_tools())


async def test_rules_are_not_served_in_the_definition(folder: Path) -> None:
    server, _ = notes_server(folder)
    async with opened(server, "modern") as client:
        definition = (await fetch(client, "notes"))["notes"]
        assert "resolution" not in definition and definition["name"] == "notes"


# -- Python hooks ------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
async def test_resolver_hooks(folder: Path, era: Era, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, LOGGER)
    seen: list[dict[str, Any]] = []

    def notes_hook(arguments: dict[str, Any]) -> dict[str, bool] | None:
        seen.append(arguments)
        if arguments["note_id"] == "hook":
            return {"readOnlyHint": True}
        if arguments["note_id"] == "boom":
            raise RuntimeError("database down")
        if arguments["note_id"] == "junk":
            return {"readOnlyHint": "maybe"}  # type: ignore[dict-item]
        if arguments["note_id"] == "open":
            return {"openWorldHint": True}  # breaks the bound
        return None  # defer to the file's rules

    async def echo_hook(arguments: dict[str, Any]) -> dict[str, bool]:
        return {"destructiveHint": arguments["text"] == "rm"}

    hooks: dict[str, Callable[..., Any]] = {"notes": notes_hook, "echo": echo_hook}
    server, ran = notes_server(folder, resolution=ResolutionSettings(resolvers=hooks))
    async with opened(server, era) as client:
        assert {t.name for t in await client.list_tools() if is_resolvable(t)} == {
            "notes", "echo"}
        by_hook = await resolve_tool(client, "notes", {"action": "delete", "note_id": "hook"})
        assert by_hook.read_only and by_hook.destructive  # unset hints: static
        by_rule = await resolve_tool(client, "notes", {"action": "read", "note_id": "n"})
        assert by_rule.read_only and not by_rule.destructive
        assert (await resolve_tool(client, "echo", {"text": "rm"})).destructive
        assert not (await resolve_tool(client, "echo", {"text": "ls"})).destructive
        for bad in ("boom", "junk", "open"):
            error = await resolve_error(client, "notes", {"action": "read", "note_id": bad})
            assert error.error.code == -32603, bad
            assert "database down" not in error.error.message
    assert ran == [] and seen[0] == {"action": "delete", "note_id": "hook"}
    assert len([r for r in caplog.records if r.name == LOGGER]) == 3


# -- raw 2026-07-28 HTTP ---------------------------------------------------------------------
def _envelope(extensions: dict[str, Any] | None) -> dict[str, Any]:
    capabilities: dict[str, Any] = {} if extensions is None else {"extensions": extensions}
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-host", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


async def _post(http: httpx.AsyncClient, url: str, method: str, params: dict[str, Any],
                *, name: str | None = None) -> tuple[int, dict[str, Any]]:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if name is not None:
        headers["mcp-name"] = name
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    response = await http.post(url, json=body, headers=headers)
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return response.status_code, json.loads(text)


async def test_raw_http_requests_with_the_2026_headers(folder: Path) -> None:
    server, ran = notes_server(folder)
    ext = {RESOLUTION_EXTENSION_ID: {}}
    read = {"action": "read", "note_id": "n"}
    async with serve_http(server) as url, httpx.AsyncClient(timeout=PATIENCE) as http:
        status, reply = await _post(http, url, "tools/resolve", {
            "name": "notes", "arguments": read, "_meta": _envelope(ext)}, name="notes")
        assert status == 200 and reply["id"] == 7
        result = reply["result"]
        assert result["resultType"] == "complete" and result["name"] == "notes"
        assert result["annotations"] == {"readOnlyHint": True, "destructiveHint": False,
                                         "idempotentHint": True, "openWorldHint": False}
        # the next request without the capability is refused: only this request counts
        status, reply = await _post(http, url, "tools/resolve", {
            "name": "notes", "arguments": read, "_meta": _envelope(None)})
        assert reply["error"]["code"] == -32021 and status == 400
        status, reply = await _post(http, url, "tools/resolve", {
            "name": "secret", "arguments": {"action": "x"}, "_meta": _envelope(ext)})
        assert reply["error"]["code"] == -32602 and status == 400
        status, reply = await _post(http, url, "tools/resolve", {
            "name": "notes", "arguments": {"action": "nope"}, "_meta": _envelope(ext)})
        assert reply["error"]["code"] == -32602 and "note_id" in reply["error"]["message"]
        status, reply = await _post(http, url, "tools/resolve", {
            "arguments": read, "_meta": _envelope(ext)})  # no name at all
        assert reply["error"]["code"] == -32602 and status == 400
        # a tools/list carrying the capability marks the tool; one without does not
        _, listed = await _post(http, url, "tools/list", {"_meta": _envelope(ext)})
        marks = {t["name"]: t.get("_meta", {}).get(RESOLUTION_EXTENSION_ID)
                 for t in listed["result"]["tools"]}
        assert marks["notes"] == {"resolvable": True} and marks["add"] is None
        _, listed = await _post(http, url, "tools/list", {"_meta": _envelope(None)})
        assert all(RESOLUTION_EXTENSION_ID not in t.get("_meta", {})
                   for t in listed["result"]["tools"])
    assert ran == []
