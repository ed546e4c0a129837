"""The middleware's inner parts, reached where their owners keep them (``assembly.py``).

The middleware holds a few parts, each owning its own (the gate its grants, modes and
definitions; the listing its lister (which preloads), watcher and net-cost check; the describer our
components and groups). Only tests read the inner ones, so the paths live here, not as
accessors in the package (#35): ``parts(middleware).hot_reload``. A part that moves changes
its one path below.
"""

from __future__ import annotations

from functools import reduce
from typing import Any

from fastmcp_progressive import ProgressiveDisclosure

PATHS = {
    "definitions": "_gate.definitions",
    "store": "_gate.definitions.store",
    "grants": "_gate.grants",
    "modes": "_gate.modes",
    "anonymous": "_gate.anonymous",  # how callers the server cannot follow are handled
    "exempt_tools": "_gate.exempt_tools",  # listed in full and never gated
    "lister": "_tools_list.lister",
    "hot_reload": "_tools_list.hot_reload",
    "net_cost": "_tools_list.net_cost",
    "groups": "describer.groups",
    "components": "describer.components",  # the bridges, resource, template and prompt
    "max_tools_per_read": "describer.max_tools_per_read",
    "instructions": "_tools_list.instructions",
}
"""Each inner part by its old name, and where its owner keeps it."""


class parts:  # read as a function: ``parts(middleware).grants``
    """``middleware``'s inner parts by their old names, each its owner's very object."""

    def __init__(self, middleware: ProgressiveDisclosure) -> None:
        self._middleware = middleware

    def __getattr__(self, name: str) -> Any:
        if name not in PATHS:
            raise AttributeError(f"no inner part {name!r} (tests/parts.py: PATHS)")
        return reduce(getattr, PATHS[name].split("."), self._middleware)


def sessions_held(grants: Any) -> int:
    """How many callers hold grants in a ``GrantStore``'s process memory (its ``_sessions``,
    expired ones dropped first): the bound the identity and reliability tests check."""
    grants._sessions.expire()
    return len(grants._sessions)


def names_cached(store: Any) -> int:
    """How many names a ``DescriptionStore``'s LRU holds (a parsed file, a definition
    served, or both)."""
    return len(store._cache)
