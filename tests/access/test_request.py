"""The request's record (``access/request.py``): built once, carried to the hooks of the
middleware that built it and to no other."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from fastmcp import FastMCP
from fastmcp.server.context import Context
from fastmcp.server.middleware import Middleware

from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.catalog import Catalog
from fastmcp_progressive.access.request import Requests
from fastmcp_progressive.files.store import DescriptionStore
from fastmcp_progressive.hosts import Level


def _requests(level: Level) -> Requests:
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


def test_only_a_2026_07_28_caller_is_kept_in_its_http_requests_scope(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only that era's calls make a second pass (the SDK's hidden listing on FastMCP < 4.2);
    a handshake-era scope may outlive its session, and a caller kept in it would too."""
    from fastmcp_progressive.access import request as module

    for era, kept in (("legacy", False), ("modern", True)):
        caller = Caller(kind="session" if era == "legacy" else "anonymous", era=era)
        monkeypatch.setattr(module, "identify", lambda ctx, caller=caller: caller)
        scope: dict[str, object] = {}
        ctx = SimpleNamespace(request_context=SimpleNamespace(
            request=SimpleNamespace(scope=scope), request_id=7))
        assert module.identify_once(ctx) is caller  # type: ignore[arg-type]
        assert (module._CALLER_KEY in scope) is kept, era
