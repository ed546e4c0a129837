"""The public surface, pinned: ``__all__`` of the package, ``proxy`` and ``cli`` (#22).

As httpx's ``tests/test_exported_members.py`` does: each ``__all__`` is exactly the names
written here, with no name twice, and every one resolves. The package and ``proxy`` load
their names lazily (a module ``__getattr__``, so ``fastmcp-progressive proxy`` starts its
upstreams before FastMCP is imported), so a name can go missing without an import error
until a user asks for it: this asks for each. A public name added or dropped fails here
first, and the change goes in CHANGELOG. The old flat paths the README documented stay
importable for one release, warning where each moved.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Collection
from types import ModuleType

import pytest

import fastmcp_progressive
import fastmcp_progressive.cli
import fastmcp_progressive.proxy
from fastmcp_progressive._deprecated import MOVED

PACKAGE = {
    # the middleware
    "ProgressiveDisclosure",
    # grouped settings and the types their fields take
    "AnonymousPolicy",
    "CacheSettings",
    "ClientDescription",
    "ClientSettings",
    "GrantSettings",
    "KeyValue",
    "ListingLevel",
    "ListingSettings",
    "ModeResolver",
    "ResolutionSettings",
    "ResolverHook",
    "StoreErrorPolicy",
    "SurfaceSettings",
    # host profiles
    "HOST_PROFILES",
    "HOST_TOOL_CAPS",
    "ClientLevel",
    "HostCap",
    "HostProfile",
    # per-client mode
    "Mode",
    # description files
    "DescriptionFile",
    "Example",
    # groups
    "GROUPING_EXTENSION_ID",
    "GROUPS_META_KEY",
    "Group",
    # the wire: the resource, the extension and the error codes
    "DESCRIPTIONS_URI",
    "EXTENSION_ID",
    "GRANT_STORE_UNAVAILABLE",
    "MISSING_TOOL_SELECTION",
    "QUERY_TOO_LONG",
    "TOOL_DESCRIPTION_REQUIRED",
    "TOO_MANY_TOOLS",
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
        f"{module.__name__}.__all__ lost names: a breaking change (CHANGELOG, migration note)")


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


def test_no_lazy_name_outside_all() -> None:
    """What the package's ``__getattr__`` can load is what ``__all__`` lists: no public
    name reachable but unlisted, and none listed that cannot load."""
    lazy = set(fastmcp_progressive._WHERE)
    assert lazy == set(fastmcp_progressive.__all__)


@pytest.mark.parametrize("module", [fastmcp_progressive, fastmcp_progressive.proxy],
                         ids=["fastmcp_progressive", "fastmcp_progressive.proxy"])
def test_an_unknown_name_is_an_attribute_error(module: ModuleType) -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = module.no_such_name


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


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_reexports_the_new_module(
    old: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    new = importlib.import_module(MOVED[old])
    monkeypatch.delitem(sys.modules, old, raising=False)  # import it afresh, restored after
    with pytest.warns(DeprecationWarning, match=MOVED[old].replace(".", r"\.")):
        stub = importlib.import_module(old)
    public = set(getattr(new, "__all__", [n for n in vars(new) if not n.startswith("_")]))
    missing = sorted(name for name in public if getattr(stub, name, None) is not vars(new)[name])
    assert not missing, f"{old} does not re-export {missing} from {MOVED[old]}"
