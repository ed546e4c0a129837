"""The servers the benchmarks time, and how a client reaches them.

- ``build_server``: a catalog replayed on FastMCP (``tests/replay.py``, shared with the
  tests, so both count the same listing), served plain, by ours at a listing level, or
  through FastMCP's search transforms; ``ReplayTool`` keeps FastMCP's own (unhashable)
  equality, so the server is the one a user has. Ours lists every tool unless told
  otherwise (``EVERY_TOOL``): a level's row measures that level's whole listing, whatever
  the catalog's size; ``listing=ListingSettings()`` is the one-line default, which lists at
  most a budget of entries above 50 tools.
- description files a developer might write (summary, one example, one line of guidance),
  so reads have a file cache to hit or miss; deterministic, never copied into the report;
- ``connect``: in memory, or streamable HTTP on 127.0.0.1 in this process
  (``run_server_async``), in either protocol era, with or without a bearer token.

Example:
    ```python
    server = build_server(catalog, "typed", descriptions_dir=write_descriptions(catalog, tmp))
    async with connect(server, TRANSPORTS["http+auth"]) as client:
        await client.list_tools()
    ```
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fastmcp import Client, FastMCP
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.resources.types import TextResource
from fastmcp.server.auth import AuthProvider
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.middleware import Middleware
from fastmcp.server.transforms.search import BM25SearchTransform, RegexSearchTransform
from fastmcp.utilities.tests import run_server_async, temporary_settings
from mcp.client.session import DEFAULT_CLIENT_INFO
from pydantic import AnyUrl

from fastmcp_progressive import Level, ListingSettings, ProgressiveDisclosure
from fastmcp_progressive.disclosure.listing import summarize
from tests.parts import parts
from tests.replay import replay_tool

from ..results import DEFAULT
from .catalogs import Catalog

assert ListingSettings.level == DEFAULT, "the benchmarks' default level is the package's"
PROGRESSIVE = ("typed", "minimal", "skeleton")
SEARCH = ("regex", "bm25")
TOKEN = "bench-token"
EVERY_TOOL = ListingSettings(max_tools=None)
"""Ours' listing in every measurement that does not say otherwise: every tool (the budget
off), so a level's figures at 117, 235 or 10,000 tools are that level's whole listing."""


HOST = DEFAULT_CLIENT_INFO
"""How the benchmarks' clients introduce themselves: the MCP SDK's default ``clientInfo``,
which LangChain, LlamaIndex and most agent frameworks send. FastMCP's own name
(``fastmcp``) has a host profile of its own (every tool listed with its output schema), so
a figure measured as FastMCP's ``Client`` would not be what a host is sent."""


def host_client(target: Any, **kwargs: Any) -> Client[Any]:
    """FastMCP's ``Client`` for ``target``, introducing itself as ``HOST`` unless told."""
    kwargs.setdefault("client_info", HOST)
    return Client(target, **kwargs)


@dataclass
class ReplayServer:
    """A server and, for our variants, the middleware inside it."""

    variant: str
    mcp: FastMCP
    middleware: ProgressiveDisclosure | None

    def close(self) -> None:
        """Stop ours' file watcher (``contextlib.closing`` a server built for one measure)."""
        if self.middleware is not None:
            self.middleware.close()

    async def settle(self, timeout: float = 60.0) -> None:
        """Wait (on its event, no sleeping) until ours' file watcher is armed and has read
        the folder: timing before would measure that thread competing for the GIL."""
        ready = (getattr(parts(self.middleware).hot_reload.watcher, "ready", None)
                 if self.middleware is not None else None)
        if isinstance(ready, threading.Event):
            await asyncio.to_thread(ready.wait, timeout)

    async def preloaded(self, timeout: float = 60.0) -> float | None:
        """Wait until ours' preload of description files is done (run now if no request
        started the watcher yet); its seconds."""
        lister = parts(self.middleware).lister if self.middleware is not None else None
        done = getattr(lister, "preloaded", None)
        if not isinstance(done, threading.Event):
            return None
        run = getattr(lister, "preload", None)  # the watcher's first job (#35): before any
        if callable(run) and not done.is_set():  # request has started it, run it here
            await asyncio.to_thread(run)
        await asyncio.to_thread(done.wait, timeout)
        seconds = getattr(lister, "preload_seconds", None)
        return seconds if isinstance(seconds, float) else None


def add_static(server: FastMCP, resources: dict[str, str]) -> None:
    """Serve each JSON text at its URI as a plain resource (the baseline for reads)."""
    for uri, text in resources.items():
        server.add_resource(TextResource(uri=AnyUrl(uri), name=f"static-{len(uri)}", text=text,
                                         mime_type="application/json"))


def build_server(catalog: Catalog, variant: str, *, descriptions_dir: Path | None = None,
                 outer: Sequence[Middleware] = (), auth: AuthProvider | None = None,
                 static_resources: dict[str, str] | None = None,
                 listing: ListingSettings = EVERY_TOOL,
                 options: dict[str, Any] | None = None,
                 list_page_size: int | None = None) -> ReplayServer:
    """``catalog`` served as ``variant``: ``plain``, a level of ours, ``regex`` or ``bm25``.

    ``outer`` middleware goes before ours (a timer there sees our work plus FastMCP's);
    ``listing`` is ours' (its level replaced by the variant's): every tool unless a caller
    passes another, e.g. ``ListingSettings()`` for the shipped budget; ``options`` are more
    ``ProgressiveDisclosure`` settings; ``list_page_size`` is FastMCP's.
    """
    mcp = FastMCP(f"replay-{catalog.name}", auth=auth, list_page_size=list_page_size)
    for spec in catalog.tools:
        mcp.add_tool(replay_tool(spec))
    add_static(mcp, static_resources or {})
    for middleware in outer:
        mcp.add_middleware(middleware)
    ours: ProgressiveDisclosure | None = None
    if variant in PROGRESSIVE:
        level: Level = variant  # type: ignore[assignment]  # one of PROGRESSIVE
        ours = ProgressiveDisclosure(descriptions_dir, listing=replace(listing, level=level),
                                     **(options or {}))
        mcp.add_middleware(ours)
    elif variant in SEARCH:
        mcp.add_transform(RegexSearchTransform() if variant == "regex" else BM25SearchTransform())
    return ReplayServer(variant, mcp, ours)


def wire(model: Any) -> Any:
    """A protocol object as the JSON the client received."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def text_of(contents: Sequence[Any]) -> str:
    """The text of a read's contents or a call's content blocks, joined."""
    return "".join(getattr(c, "text", "") or "" for c in contents)


# -- description files ----------------------------------------------------------------------
MARKER_KEY = "usage_guidance"


def _sample(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return "value"
    if spec.get("enum"):
        return spec["enum"][0]
    kind = spec.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}.get(
        str(kind), "value")


def sample_arguments(tool: dict[str, Any], *, required_only: bool = False) -> dict[str, Any]:
    """Plausible values for the required arguments, else (a call with arguments) for the
    first property."""
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") or {}
    names = schema.get("required") or ([] if required_only else list(properties)[:1])
    return {name: _sample(properties.get(name, {})) for name in names}


def write_descriptions(catalog: Catalog, directory: Path, marker: str = "v1") -> Path:
    """``<tool>.json`` for every tool: summary, one worked example, a guidance line."""
    directory.mkdir(parents=True, exist_ok=True)
    for tool in catalog.tools:
        body = {"summary": summarize(tool.get("description") or tool["name"], 120),
                "examples": [{"description": f"Call {tool['name']} with its required arguments.",
                              "input": sample_arguments(tool, required_only=True)}],
                MARKER_KEY: f"[{marker}] Check the result before calling another tool."}
        (directory / f"{tool['name']}.json").write_text(json.dumps(body), encoding="utf-8")
    return directory


def rewrite_marker(path: Path, marker: str, *, atomic: bool) -> None:
    """Change one file's guidance marker, in place (same inode; for equal-length markers
    the same size too) or by ``os.replace``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data[MARKER_KEY] = f"[{marker}] Check the result before calling another tool."
    target = path.with_name(f".{path.name}.tmp") if atomic else path
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data))
    if atomic:
        os.replace(target, path)


def unread_calls(catalog: Catalog, read: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """A call with arguments for every tool not in ``read``: each refused only once."""
    return [(n, sample_arguments(catalog.tool(n))) for n in catalog.names if n not in read]


# -- transports -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Transport:
    """How the client reaches the servers, and whether ours gates there."""

    name: str
    http: bool = False
    legacy: bool = False
    auth: bool = False

    @property
    def gated(self) -> bool:
        """Whether ours refuses an undescribed tool here: for a handshake-era session or a
        principal; a 2026-07-28 caller without auth (in memory too, since #21) is anonymous,
        its calls checked by their arguments instead."""
        return self.legacy or self.auth

    def verifier(self) -> AuthProvider | None:
        if not self.auth:
            return None
        return StaticTokenVerifier(tokens={TOKEN: {"client_id": "bench", "sub": "bench-user"}})


TRANSPORTS: dict[str, Transport] = {t.name: t for t in (
    Transport("memory"), Transport("http", http=True),
    Transport("http legacy", http=True, legacy=True), Transport("http+auth", http=True, auth=True),
)}


@asynccontextmanager
async def connect(server: ReplayServer, transport: Transport) -> AsyncIterator[Client[Any]]:
    """A connected client for ``server`` over ``transport``."""
    mode = "legacy" if transport.legacy else "auto"
    if not transport.http:
        async with host_client(server.mcp, mode=mode) as client:
            yield client
        return
    with temporary_settings(log_level="WARNING"):
        async with run_server_async(server.mcp) as url:
            http = StreamableHttpTransport(url, auth=TOKEN if transport.auth else None)
            async with host_client(http, mode=mode) as client:
                yield client


class _DropCancelled(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        info = record.exc_info
        if info and info[0] is not None and issubclass(info[0], asyncio.CancelledError):
            return False
        return "CancelledError" not in record.getMessage()


def quiet_logs() -> None:
    """No per-request server chatter, no tracebacks of HTTP servers stopped by cancelling
    their task (uvicorn logs those as errors), no note on anonymous HTTP callers."""
    logging.getLogger("fastmcp").setLevel(logging.WARNING)
    logging.getLogger("fastmcp_progressive").setLevel(logging.ERROR)
    for name in ("uvicorn.error", "uvicorn"):
        logging.getLogger(name).addFilter(_DropCancelled())
