"""The public surface, pinned: ``__all__`` of the package, ``proxy`` and ``cli`` (#22).

As httpx's ``tests/test_exported_members.py`` does: each ``__all__`` is exactly the names
written here, with no name twice, and every one resolves. ``proxy`` loads its names lazily
(a module ``__getattr__``), so a name can go missing without an import error until a user
asks for it: this asks for each. A public name added or dropped fails here first, and the
change goes in CHANGELOG. The package's own surface stays small (at most 15 names).
"""

from __future__ import annotations

from collections.abc import Collection
from types import ModuleType

import pytest

import fastmcp_progressive
import fastmcp_progressive.cli
import fastmcp_progressive.proxy

PACKAGE = {
    # the middleware and its settings groups
    "ProgressiveDisclosure",
    "AddedComponents",
    "CacheSettings",
    "ClientSettings",
    "GrantSettings",
    "ListingSettings",
    "ResolutionSettings",
    # what a settings field takes that a user writes or implements
    "ClientInfo",
    "GrantStoreProtocol",
    "HOST_PROFILES",
    "HostProfile",
    "Level",
    # the wire: the resource, the extension and the refusal's code
    "DESCRIPTIONS_URI",
    "EXTENSION_ID",
    "TOOL_DESCRIPTION_REQUIRED",
}

PROXY = {
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_STARTUP_TIMEOUT",
    "Target",
    "UpstreamError",
    "check_upstream",
    "is_url",
    "parse_listen",
    "progressive_proxy",
    "serve",
    "upstream_of",
}

CLI = {"main"}

SURFACES = [
    (fastmcp_progressive, PACKAGE),
    (fastmcp_progressive.proxy, PROXY),
    (fastmcp_progressive.cli, CLI),
]
IDS = [module.__name__ for module, _ in SURFACES]


@pytest.mark.parametrize(("module", "expected"), SURFACES, ids=IDS)
def test_all_is_exactly_the_public_names(module: ModuleType, expected: Collection[str]) -> None:
    exported = list(module.__all__)
    twice = sorted({name for name in exported if exported.count(name) > 1})
    assert not twice, f"{module.__name__}.__all__ lists {twice} more than once"
    assert set(exported) - set(expected) == set(), (
        f"{module.__name__}.__all__ gained names: pin them here (and in CHANGELOG)")
    assert set(expected) - set(exported) == set(), (
        f"{module.__name__}.__all__ lost names: a change for users (CHANGELOG)")


@pytest.mark.parametrize(("module", "expected"), SURFACES, ids=IDS)
def test_every_exported_name_resolves(module: ModuleType, expected: Collection[str]) -> None:
    for name in sorted(expected):
        value = getattr(module, name)  # a lazy name whose module moved raises here
        assert value is not None, f"{module.__name__}.{name} is None"
        assert name in dir(module), f"{module.__name__}.{name} is missing from dir()"


@pytest.mark.parametrize(("module", "expected"), SURFACES, ids=IDS)
def test_star_import_gives_exactly_all(module: ModuleType, expected: Collection[str]) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {module.__name__} import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(expected)


def test_the_package_surface_is_small() -> None:
    assert len(fastmcp_progressive.__all__) <= 15


def test_an_unknown_proxy_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = fastmcp_progressive.proxy.no_such_name


def test_the_package_exports_the_stable_names() -> None:
    """The names the brief keeps stable come from the modules that define them."""
    from fastmcp_progressive.middleware import ProgressiveDisclosure
    from fastmcp_progressive.payloads import (
        DESCRIPTIONS_URI,
        EXTENSION_ID,
        TOOL_DESCRIPTION_REQUIRED,
    )

    assert fastmcp_progressive.ProgressiveDisclosure is ProgressiveDisclosure
    assert fastmcp_progressive.DESCRIPTIONS_URI == DESCRIPTIONS_URI
    assert fastmcp_progressive.EXTENSION_ID == EXTENSION_ID
    assert fastmcp_progressive.TOOL_DESCRIPTION_REQUIRED == TOOL_DESCRIPTION_REQUIRED
