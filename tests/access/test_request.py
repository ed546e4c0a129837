"""The request's record (``access/request.py``): built once, carried to the hooks of the
middleware that built it and to no other."""

from __future__ import annotations

from fastmcp import FastMCP
from fastmcp.server.context import Context
from fastmcp.server.middleware import Middleware

from fastmcp_progressive.access.catalog import Catalog
from fastmcp_progressive.access.request import Requests
from fastmcp_progressive.files.store import DescriptionStore
from fastmcp_progressive.hosts import ClientLevel


def _requests(level: ClientLevel) -> Requests:
    return Requests(Catalog(owner=Middleware()), DescriptionStore(None),
                    levels=lambda caller: level)


def test_a_record_is_carried_to_its_own_middlewares_hooks_only() -> None:
    ctx = Context(FastMCP("s"))
    parent, child = _requests("typed"), _requests("full")
    opened = parent.open(ctx)
    with parent.carrying(opened):
        assert parent.open(ctx) is opened  # the typed hook takes the record on
        own = child.open(ctx)  # e.g. a mounted child's middleware under the same context
        assert own is not opened and own.level == "full"
    assert parent.open(ctx) is not opened  # the next request builds its own


def test_without_a_context_nothing_is_carried_and_nothing_gated() -> None:
    requests = _requests("typed")
    opened = requests.open(None)
    assert opened.caller.kind == "internal" and opened.site is None
    with requests.carrying(opened):
        assert requests.open(None) is not opened
