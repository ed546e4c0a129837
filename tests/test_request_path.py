"""One short path per request (#26): a warm request enters at most ten of the package's modules.

A reader following one request through the package should meet few modules, each with one
job. ``sys.setprofile`` records every package frame entered while one warm in-memory
``fastmcp.Client`` request is served (the server runs on this thread): a ``tools/list``, a
granted ``tools/call``, a refused one (the teaching refusal) and a read of the descriptions
resource. A handshake-era client is refused until it reads; a 2026-07-28 client without
auth is judged by its arguments, so its refusal is a call whose arguments do not fit.
Before #26 these entered 20, 15, 23 and 21 modules (handshake era).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from fastmcp import Client

import fastmcp_progressive
from fastmcp_progressive import DESCRIPTIONS_URI
from tests.conftest import ERAS, Era, build_server

PACKAGE = Path(fastmcp_progressive.__file__).parent
MOST_MODULES = 10


async def entered(request: Callable[[], Awaitable[Any]], answers: list[Any] | None = None
                  ) -> list[str]:
    """The package's modules (paths from the package root) with a frame entered while
    ``request`` ran on this thread; its answer appended to ``answers``."""
    files: set[str] = set()
    root = str(PACKAGE)

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(root):
            files.add(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        answer = await request()
    finally:
        sys.setprofile(None)
    if answers is not None:
        answers.append(answer)
    return sorted(Path(f).relative_to(PACKAGE).as_posix() for f in files)


@pytest.mark.parametrize("era", ERAS)
async def test_a_warm_request_enters_at_most_ten_modules(era: Era) -> None:
    refused_arguments = {"text": "x"} if era == "legacy" else {"text": 1}
    async with Client(build_server(), mode="legacy" if era == "legacy" else "auto") as client:
        # warm: each path once; add is granted by the read
        await client.list_tools()
        await client.read_resource(f"{DESCRIPTIONS_URI}?tools=add")
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.call_tool("echo", {"text": 1}, raise_on_error=False)
        refusals: list[Any] = []
        paths = {
            "tools/list": await entered(client.list_tools),
            "tools/call granted": await entered(
                lambda: client.call_tool("add", {"a": 1, "b": 2})),
            "tools/call refused": await entered(
                lambda: client.call_tool("shout", refused_arguments, raise_on_error=False),
                refusals),
            "resources/read": await entered(
                lambda: client.read_resource(f"{DESCRIPTIONS_URI}?tools=echo")),
        }
    refused = refusals[0]
    assert refused.is_error  # the refused path measured is the teaching refusal
    assert (refused.structured_content or {})["error"]["code"] == "TOOL_DESCRIPTION_REQUIRED"
    too_long = {path: modules for path, modules in paths.items() if len(modules) > MOST_MODULES}
    assert not too_long, "\n".join(
        f"{path}: {len(modules)} modules: {' '.join(modules)}"
        for path, modules in too_long.items())
