"""Bad input, property-based: the ``tools=`` query, tool names, and description files.

Invariants checked for every input: no unhandled exception (no JSON-RPC internal error,
no exception out of the store), no file opened outside the descriptions directory (an
audit hook records every ``open``), nothing from outside it or from a stack trace in an
answer, and bounded work per request: bytes answered in proportion to the query, files
opened, memory where measured. Work is counted, never timed (issue 34); a request that
does not answer within ``PATIENCE`` fails as hung.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2 as httpx
import pytest
from fastmcp.tools.base import Tool
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fastmcp_progressive import DESCRIPTIONS_URI
from fastmcp_progressive.disclosure.describer import MAX_QUERY_CHARS
from fastmcp_progressive.disclosure.listing import Lister
from fastmcp_progressive.files.definitions import full_definition
from fastmcp_progressive.files.folder import MAX_FILE_BYTES, SUFFIXES
from fastmcp_progressive.files.model import DescriptionFile
from fastmcp_progressive.files.store import DescriptionStore
from tests.conftest import connect, fetch, serve_http
from tests.parts import parts, sessions_held
from tests.reliability import figures
from tests.reliability.app import make_server
from tests.reliability.live import Live, opened_files, outside
from tests.waiting import PATIENCE, finishes

# hundreds of fuzzed examples, over HTTP too
# (the xdist group keeps the file on one worker: tests/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("bad-input")]

ANSWER_BASE = 16 * 1024  # bytes an answer may hold beside its echo of the query:
# 32 entries at most (max_tools_per_read), each a message and up to ten available names
ANSWER_PER_CHAR = 16  # bytes per character of the query: each name echoed in its entry
# and its message, JSON-escaped (a character outside ASCII as \uXXXX, 6 bytes)
OPENS_PER_READ = 4  # paths one lookup may open or list: the folder, the file (3 seen)
REQUEST_BODY_LIMIT = 4 * 1024 * 1024  # the MCP SDK's streamable-HTTP limit (answers 413)
HEADER_LIMIT = 64 * 1024  # h11's default max header size (uvicorn)
OUTSIDE_MARKER = "OUTSIDE-SECRET-7f3a"
VISIBLE = ("add", "echo", "shout", "leak")
ERROR_CODES = {"MISSING_TOOL_SELECTION", "TOO_MANY_TOOLS", "QUERY_TOO_LONG"}
FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def leak() -> str:
    """A tool whose description file is a symlink pointing outside the directory."""
    return "leak"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """descriptions/ (add.json, echo.md, leak.json -> ../outside/leak.json) and outside/."""
    root = tmp_path_factory.mktemp("bad-input")
    folder, out = root / "descriptions", root / "outside"
    folder.mkdir()
    out.mkdir()
    (folder / "add.json").write_text(json.dumps({"summary": "Add two integers."}))
    (folder / "echo.md").write_text("---\n{\"summary\": \"Echo.\"}\n---\nRepeat a text.\n")
    for name in ("leak", "secret", "add", "passwd"):
        (out / f"{name}.json").write_text(json.dumps({"description": OUTSIDE_MARKER}))
    (folder / "leak.json").symlink_to(out / "leak.json")
    return root


@pytest.fixture(scope="module")
def live_http(tree: Path) -> Iterator[Live]:
    server = make_server(descriptions_dir=tree / "descriptions")
    server.tool(leak)
    with Live(server, "http") as live:
        yield live


@pytest.fixture(scope="module")
def live_memory(tree: Path) -> Iterator[Live]:
    server = make_server(descriptions_dir=tree / "descriptions", auth=False)
    server.tool(leak)
    with Live(server, "memory", token=None) as live:
        yield live


# -- strategies -----------------------------------------------------------------------
TRICKS = [
    "add", "echo", "shout", "leak", "..", ".", "/", "\\", "%2F", "%2f", "%5C", "%2e%2e%2f",
    "..%2F", "%252e%252e%252f", "%00", "\x00", "../outside/secret", "..\\outside\\secret",
    "/etc/passwd", "....//....//etc/passwd", "add.json", "add/../add", "./add", "~", "%",
    "%%", "%ZZ", "%C3", "%FF%FE", "%E2%80%AE", ",", "&", "=", "#", "?", "tools=", "&tools=",
    " ", "\t", "\n", "\r\n", "\u202e", "\ufeff", "\u2028", "é", "✓", "𝔘", "$HOME",
    "C:\\Windows\\win.ini", "\\\\?\\C:", "file:///etc/passwd", "*", "?tools=add", "\x1b[2J",
    "add" * 100, "x" * 300,
]
piece = st.one_of(st.sampled_from(TRICKS), st.text(max_size=12))
name = st.lists(piece, min_size=1, max_size=5).map("".join)
names = st.lists(name, max_size=40)
query = st.one_of(
    st.text(max_size=400),  # any unicode (no lone surrogates: JSON transports refuse them)
    names.map(lambda xs: "tools=" + ",".join(xs)),
    names.map(lambda xs: "&".join("tools=" + quote(x, safe="") for x in xs)),
    st.binary(max_size=80).map(lambda b: "tools=" + quote(b, safe="")),
    st.tuples(name, st.integers(0, 40)).map(lambda t: "tools=" + ",".join([t[0]] * t[1])),
)
SERVED: dict[str, set[str]] = {"legacy": set(), "modern": set()}
surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
unicode_any = st.text(alphabet=st.one_of(st.characters(), surrogates), max_size=60)


def bounded_answer(text: str, query: str) -> None:
    """The work an answer shows is in proportion to what was asked: its bytes."""
    assert len(text) <= ANSWER_BASE + ANSWER_PER_CHAR * len(query), (len(text), query[:80])
    figures.peak("bad input: largest answer beyond the query's echo (bytes)",
                 max(0, len(text) - ANSWER_PER_CHAR * len(query)))


def check_read(text: str, tree: Path, query: str) -> set[str]:
    """Validate one answer of the descriptions resource; the names it served."""
    figures.assert_clean(text, OUTSIDE_MARKER, str(tree), any_path=False)
    bounded_answer(text, query)
    body = json.loads(text)
    assert isinstance(body, dict)
    error = body.get("error")
    if isinstance(error, dict) and "code" in error:  # request-level error envelope
        assert error["code"] in ERROR_CODES, body
        return set()
    # (a tool named "error" gives {"error": {<per-tool entry>}}: told apart by "code")
    served = set()
    for key, entry in body.items():
        assert isinstance(entry, dict), body
        if "error" in entry:
            assert entry["error"] == f"Tool '{key}' not found"
            assert set(entry) == {"error", "message", "available_tools"}
            suggested = entry["available_tools"]  # bounded: at most ten visible names
            assert len(suggested) <= 10 and set(suggested) <= set(VISIBLE), suggested
        else:
            assert key in VISIBLE and entry["name"] == key, key
            served.add(key)
    return served


# -- the tools= query ------------------------------------------------------------------
@FUZZ
@given(q=query)
@example(q="tools=../outside/leak,..%2Foutside%2Fleak,leak")
@example(q="tools=" + ",".join(["add"] * 33))
@example(q="tools=" + "x" * (MAX_QUERY_CHARS + 1))
def test_tools_query_fuzz_over_http(live_http: Live, tree: Path, q: str) -> None:
    with opened_files() as paths:
        for era in ("legacy", "modern"):
            uri = f"{DESCRIPTIONS_URI}?{q}"
            text = live_http.read(era, uri)
            if text is None:  # refused by the transport: only a URI too big for a header
                assert era == "modern" and len(uri.encode()) > HEADER_LIMIT // 2, q[:80]
                figures.add("bad input: refused by the HTTP layer (URI over header limit)")
                continue
            served = check_read(text, tree, q)
            SERVED[era] |= served
            if "leak" in served:
                assert OUTSIDE_MARKER not in text  # served from its registration only
            figures.add("bad input: tools= queries tried (HTTP, both eras)")
    assert len(paths) <= 2 * OPENS_PER_READ, paths
    assert not outside(paths, tree / "descriptions", SUFFIXES)
    assert not [p for p in paths if str(tree / "outside") in p]


@FUZZ
@given(q=st.one_of(query, unicode_any.map(lambda s: "tools=" + s)))
def test_tools_query_fuzz_in_memory_with_lone_surrogates(
    live_memory: Live, tree: Path, q: str
) -> None:
    with opened_files() as paths:
        for era in ("legacy", "modern"):
            if era == "modern" and not _utf8_encodable(q):
                # the 2026-07-28 SDK client copies the URI into the Mcp-Name header and
                # cannot encode a lone surrogate there: it fails before sending anything,
                # so only the handshake era can put such a URI in front of the server
                figures.add("bad input: lone-surrogate queries the modern client cannot send")
                continue
            text = live_memory.read(era, f"{DESCRIPTIONS_URI}?{q}")
            assert text is not None
            check_read(text, tree, q)
            figures.add("bad input: tools= queries tried (memory, both eras)")
    assert len(paths) <= 2 * OPENS_PER_READ, paths
    assert not outside(paths, tree / "descriptions", SUFFIXES)


def _utf8_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_fuzzed_reads_granted_exactly_what_they_served(live_http: Live) -> None:
    """After the fuzz above (same server, same clients): a tool is unlocked if and only if
    some fuzzed read served its definition; look-alike names unlock nothing."""
    for era in ("legacy", "modern"):
        live_http.read(era, f"{DESCRIPTIONS_URI}?tools=ADD,add%2Fx,.%2Fadd,add.json,%20")
        for tool, args in (("add", {"a": 1, "b": 2}), ("echo", {"text": "x"}),
                           ("shout", {"text": "x"})):
            assert live_http.gated(era, tool, args) == (tool not in SERVED[era]), (era, tool)
    server_grants = parts(live_http.server.middleware[-1]).grants  # type: ignore[attr-defined]
    assert sessions_held(server_grants) <= 1  # one legacy session, nothing else


@settings(max_examples=60, deadline=None)
@example(tool_name="describe_tools", args={})
@given(tool_name=st.one_of(name, st.text(max_size=300)), args=st.dictionaries(
    st.text(max_size=8), st.one_of(st.none(), st.integers(), st.text(max_size=20)), max_size=3))
def test_tool_names_fuzz_calls_and_bridge(
    live_http: Live, tree: Path, tool_name: str, args: dict[str, Any]
) -> None:
    asked = tool_name + json.dumps(args)
    for era in ("legacy", "modern"):
        text, _is_error, _body = live_http.tool(era, tool_name, args)
        bounded_answer(text, asked)
        figures.assert_clean(text, OUTSIDE_MARKER, str(tree), any_path=False)
        figures.add("bad input: tool names called")
        # the describe_tools bridge (when the middleware offers one) takes names as data
        text, is_error, body = live_http.tool(era, "describe_tools", {"tools": [tool_name]})
        bounded_answer(text, tool_name)
        if is_error and not isinstance(body, dict):
            continue  # no bridge tool on this server: FastMCP's unknown-tool answer
        figures.assert_clean(text, OUTSIDE_MARKER, str(tree), any_path=False)
        if isinstance(body, dict) and tool_name.strip() and not is_error:
            entry = next(iter(body.values()))
            # the bridge is a registered tool too, so it can describe itself
            assert "error" in entry or entry["name"] in (*VISIBLE, "describe_tools")


# -- lengths up to the request limit -----------------------------------------------------
async def _raw_legacy_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "authorization": "Bearer alice-token",
    }
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}
    reply = await http.post(url, json=init, headers=headers)
    assert reply.status_code == 200
    headers["mcp-session-id"] = reply.headers["mcp-session-id"]
    headers["mcp-protocol-version"] = "2025-11-25"
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=done, headers=headers)).status_code == 202
    return headers


def _sse_result(text: str) -> Any:
    data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1]) if data else json.loads(text)


async def test_query_lengths_up_to_the_request_limit() -> None:
    """Raw HTTP: the official client refuses answers over 1 MiB (SSE event limit), and the
    descriptions resource echoes the URI, so the largest queries go in by hand."""
    server = make_server()
    sizes = [MAX_QUERY_CHARS - 64, MAX_QUERY_CHARS + 1, 1 << 20, 2 << 20,
             REQUEST_BODY_LIMIT - 4096, REQUEST_BODY_LIMIT + 1]
    peaks: list[int] = []
    async with serve_http(server) as url, httpx.AsyncClient(timeout=PATIENCE) as http:
        headers = await _raw_legacy_session(http, url)
        tracemalloc.start()
        try:
            for i, size in enumerate(sizes):
                uri = f"{DESCRIPTIONS_URI}?tools=" + ",".join(
                    f"a{n:098d}" for n in range(size // 100))  # distinct: duplicates fold
                uri += "x" * (size - len(uri) + len(DESCRIPTIONS_URI) + 1)
                request = {"jsonrpc": "2.0", "id": i + 1, "method": "resources/read",
                           "params": {"uri": uri}}
                body = json.dumps(request).encode()
                tracemalloc.reset_peak()
                before = tracemalloc.get_traced_memory()[0]
                reply = await http.post(url, content=body, headers=headers)
                peaks.append(tracemalloc.get_traced_memory()[1] - before)
                figures.add("bad input: oversized queries sent")
                # the answer echoes the URI at most once: no work beyond the query's size
                assert len(reply.content) <= ANSWER_BASE + len(body), (size, len(reply.content))
                if len(body) > REQUEST_BODY_LIMIT:
                    assert reply.status_code == 413  # the transport refuses it unparsed
                    continue
                assert reply.status_code == 200
                answer = json.loads(_sse_result(reply.text)["result"]["contents"][0]["text"])
                if size > MAX_QUERY_CHARS:
                    assert answer["error"]["code"] == "QUERY_TOO_LONG"
                else:
                    assert answer["error"]["code"] == "TOO_MANY_TOOLS"
        finally:
            tracemalloc.stop()
        # still serving, normally
        check = {"jsonrpc": "2.0", "id": 99, "method": "resources/read",
                 "params": {"uri": f"{DESCRIPTIONS_URI}?tools=add"}}
        reply = await http.post(url, json=check, headers=headers)
        text = _sse_result(reply.text)["result"]["contents"][0]["text"]
        assert json.loads(text)["add"]["name"] == "add"
    # whole-process peak (client building the body included) per request: a few copies of
    # the body, never unbounded
    biggest = max(peaks)
    assert biggest < 24 * REQUEST_BODY_LIMIT, biggest
    figures.put("bad input: peak memory of a 4 MiB request, client+server (MiB)",
                round(biggest / 2**20, 1))


async def test_lone_surrogates_and_invalid_utf8_on_the_wire_are_refused_cleanly() -> None:
    server = make_server()
    bodies = [
        rb'"resource:///tool_descriptions?tools=\ud800"',
        rb'"resource:///tool_descriptions?tools=\udcff,add"',
        b'"resource:///tool_descriptions?tools=\xff\xfe"',
        b"12",
        b'{"tools": "add"}',
    ]
    async with serve_http(server) as url, httpx.AsyncClient(timeout=PATIENCE) as http:
        headers = await _raw_legacy_session(http, url)
        for i, uri in enumerate(bodies):
            raw = (b'{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":'
                   % (i + 1)) + uri + b"}}"
            reply = await http.post(url, content=raw, headers=headers)
            figures.add("bad input: malformed wire requests")
            assert reply.status_code in (200, 400), reply.text
            answer = _sse_result(reply.text)
            assert "error" in answer and answer["error"]["code"] != -32603, answer
            figures.assert_clean(reply.text)
        ok = {"jsonrpc": "2.0", "id": 50, "method": "tools/call",
              "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
        reply = await http.post(url, json=ok, headers=headers)
        assert "TOOL_DESCRIPTION_REQUIRED" in reply.text  # nothing was granted by the junk


# -- tool names at the store ----------------------------------------------------------
@settings(max_examples=400, deadline=None)
@given(tool_name=st.one_of(name, unicode_any, st.sampled_from(TRICKS)))
def test_store_lookup_never_leaves_the_directory(tree: Path, tool_name: str) -> None:
    store = DescriptionStore(tree / "descriptions")
    with opened_files() as paths:
        found = store.lookup(tool_name)
    figures.add("bad input: tool names looked up")
    assert not outside(paths, tree / "descriptions", SUFFIXES)
    assert not [p for p in paths if str(tree / "outside") in p]
    if tool_name in ("add", "echo"):
        assert found is not None and found.name == tool_name
    else:
        assert found is None, tool_name  # leak.json links outside: refused


# -- description files ----------------------------------------------------------------
def _add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


ADD = Tool.from_function(_add, name="add")
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=25,
)
fields = st.fixed_dictionaries({}, optional={
    "name": st.one_of(st.just("add"), json_values),
    "summary": json_values,
    "description": json_values,
    "inputSchema": json_values,
    "outputSchema": json_values,
    "examples": st.one_of(json_values, st.lists(st.fixed_dictionaries(
        {"description": json_values}, optional={"input": json_values}), max_size=3)),
    "usage_guidance": json_values,
    "error_guidance": json_values,
    "x-extra": json_values,
})


def _nested(depth: int, kind: str) -> bytes:
    opener, closer = ("[", "]") if kind == "list" else ('{"a":', "}")
    return ('{"usage_guidance":' + opener * depth + "1" + closer * depth + "}").encode()


file_bytes = st.one_of(
    st.binary(max_size=3000),
    json_values.map(lambda v: json.dumps(v).encode()),
    fields.map(lambda d: json.dumps(d).encode()),
    fields.map(lambda d: b"\xef\xbb\xbf" + json.dumps(d, ensure_ascii=False).encode()),
    fields.map(lambda d: json.dumps(d).encode("utf-16")),
    st.tuples(fields, st.integers(0, 50), st.binary(min_size=1, max_size=3)).map(
        lambda t: (s := json.dumps(t[0]).encode())[: t[1]] + b"\xff" + t[2] + s[t[1]:]
    ),
    st.tuples(st.integers(1, 3000), st.sampled_from(["list", "dict"])).map(
        lambda t: _nested(*t)
    ),
    st.tuples(fields, st.text(max_size=200)).map(
        lambda t: ("---\n" + json.dumps(t[0]) + "\n---\n" + t[1]).encode()
    ),
    st.text(max_size=500).map(lambda s: ("---\n" + s).encode()),
    # numbers Python's json reads but cannot serve or convert: past the integer digit
    # limit, overflowing floats, NaN and Infinity literals
    st.tuples(fields, st.integers(4290, 6000), st.sampled_from(["9", "-9", "0."])).map(
        lambda t: json.dumps({**t[0], "x-big": 0}).replace(
            '"x-big": 0', '"x-big": ' + t[2] + "9" * t[1]).encode()
    ),
    st.sampled_from(["1e400", "-1e400", "NaN", "Infinity", "-Infinity"]).map(
        lambda n: ('{"usage_guidance": ' + n + ', "examples": [{"description": "d", '
                   '"input": {"x": ' + n + "}}]}").encode()
    ),
    # a description whose first sentence never ends before the cut (the summary rule)
    st.integers(1, 60_000).map(lambda n: json.dumps({"description": "e.g. " * n}).encode()),
)


def _check_file(folder: Path, data: bytes, suffix: str) -> DescriptionFile | None:
    for old in folder.iterdir():
        old.unlink()
    (folder / f"add{suffix}").write_bytes(data)
    store = DescriptionStore(folder)
    with opened_files() as paths:
        found = store.lookup("add")  # must not raise
        definition = full_definition(ADD, found)  # what a read serves: must not raise
        json.dumps(definition, ensure_ascii=False)
        listed = Lister(store).reduce([ADD])
    assert len(paths) <= OPENS_PER_READ, paths  # the file once, the folder: no rescans
    assert not outside(paths, folder, SUFFIXES)
    assert found is None or found.name == "add"
    assert definition["name"] == "add" and definition["digest"].startswith("sha256:")
    assert isinstance(listed[0].description, str)
    figures.add("bad input: description files tried")
    return found


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    folder = tmp_path / "scratch"
    folder.mkdir()
    return folder


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=file_bytes, suffix=st.sampled_from(SUFFIXES))
@example(data=_nested(400, "list"), suffix=".json")
def test_description_file_fuzz(scratch: Path, data: bytes, suffix: str) -> None:
    _check_file(scratch, data, suffix)


@pytest.mark.parametrize("depth", [50, 255, 300, 500, 900, 990, 5000, 100_000])
def test_deeply_nested_description_file_is_refused_not_crashing(
    scratch: Path, depth: int
) -> None:
    """A file nested a few hundred levels deep parses and validates, then fails to
    serialize (pydantic's serializer depth limit): that must count as a broken file."""
    _check_file(scratch, _nested(depth, "list"), ".json")


async def test_deeply_nested_description_file_over_http(scratch: Path) -> None:
    (scratch / "add.json").write_bytes(_nested(400, "list"))
    server = make_server(descriptions_dir=scratch)
    async with serve_http(server) as url, connect(url, "modern", token="alice-token") as c:
        body = await fetch(c, "add", "echo")  # an internal error here: the whole read fails
        assert body["add"]["name"] == "add" and "echo" in body


@pytest.mark.parametrize("kind", ["at-limit", "over-limit", "sparse-1GiB", "bom", "utf16"])
def test_huge_and_odd_files_bounded_memory(scratch: Path, kind: str) -> None:
    path = scratch / "add.json"
    if kind == "at-limit":
        head = b'{"description":"'
        path.write_bytes(head + b"d" * (MAX_FILE_BYTES - len(head) - 2) + b'"}')
    elif kind == "over-limit":
        path.write_bytes(b'{"description":"' + b"d" * MAX_FILE_BYTES + b'"}')
    elif kind == "sparse-1GiB":
        with open(path, "wb") as handle:
            handle.truncate(1 << 30)  # a 1 GiB file of zero bytes, instantly
    elif kind == "bom":
        path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"summary": "BOM ok."}).encode())
    else:
        path.write_bytes(json.dumps({"summary": "UTF-16."}).encode("utf-16"))
    tracemalloc.start()
    try:
        found = _check_file_in_place(scratch)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * MAX_FILE_BYTES, peak  # never the whole 1 GiB
    figures.peak("bad input: peak memory parsing one description file (MiB)",
                 round(peak / 2**20, 1))
    expected = {"at-limit": True, "over-limit": False, "sparse-1GiB": False, "bom": True,
                "utf16": False}[kind]
    assert (found is not None) == expected


def _check_file_in_place(folder: Path) -> DescriptionFile | None:
    """Look ``add`` up in ``folder`` and build what a read serves, on a thread that fails
    the test if it blocks (a FIFO opened for reading would wait for a writer forever)."""
    store = DescriptionStore(folder)

    def look() -> DescriptionFile | None:
        found = store.lookup("add")
        full_definition(ADD, found)
        return found

    return finishes(look, "looking up add.json")


@pytest.mark.parametrize("kind", ["fifo", "directory", "dangling", "to-dev-zero", "outside"])
def test_special_files_are_refused_without_hanging(scratch: Path, tree: Path, kind: str) -> None:
    path = scratch / "add.json"
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading would block without O_NONBLOCK
    elif kind == "directory":
        path.mkdir()
    elif kind == "dangling":
        path.symlink_to(scratch / "nowhere.json")
    elif kind == "to-dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.symlink_to(tree / "outside" / "add.json")
    with opened_files() as paths:
        found = _check_file_in_place(scratch)
    assert found is None
    assert "/dev/zero" not in paths and str(tree / "outside" / "add.json") not in paths
    figures.add("bad input: special files tried")
