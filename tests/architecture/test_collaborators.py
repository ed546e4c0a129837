"""The middleware holds few parts, each owning its own (#35).

Before #35 ``ProgressiveDisclosure.__init__`` wired 21 collaborator objects and the
middleware held 19 of them (store, definitions, lister, preload, grants, modes, gate,
catalog, groups, cap, resolution, describer, components, recall, hot reload, net cost,
listing, announcer, order check). Now ``assembly.py`` builds them once and each part owns
its own (the gate its grants, modes and definitions; the describer our components,
the groups and the cap; the listing the lister, preload, watcher and net-cost check), as
FastMCP's middleware hold a few grouped options. A collaborator here is an attribute of the
middleware whose value is an instance of one of the package's classes; the parts others
own are read by tests where their owners keep them (``tests/parts.py``), never through
accessors in the package.

``assemble`` itself builds few: each part builds what only it uses (the listing its hot
reload and net-cost check; the lister preloads its own files; the handshake's word on the
listing is the listing's). Counted from its source: every call of a package class.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

from fastmcp_progressive import ProgressiveDisclosure, ResolutionSettings, assembly
from tests.parts import PATHS, parts

MOST_COLLABORATORS = 6
"""Issue #35: at most 8; six since the handshake's word on the listing is the listing's."""
MOST_BUILT = 8
"""What ``assemble`` constructs (16 before #35; issue #35's target is 8): eight, each part
building its own where it is the only or first user: the listing its preload, watcher,
net-cost check and handshake word; the gate its grant store and mode policy from their
settings; the definitions their description store; the describer the groups. Only lowers."""


def _collaborators(middleware: Any) -> dict[str, str]:
    return {name: type(value).__qualname__ for name, value in vars(middleware).items()
            if type(value).__module__.startswith("fastmcp_progressive.")}


@pytest.mark.parametrize("options", ["defaults", "everything on"])
def test_the_middleware_holds_few_collaborators(options: str, tmp_path: Path
                                                          ) -> None:
    middleware = (ProgressiveDisclosure() if options == "defaults" else ProgressiveDisclosure(
        tmp_path, resolution=ResolutionSettings(enabled=True), exempt_tools=["ping"]))
    try:
        held = _collaborators(middleware)
        assert len(held) <= MOST_COLLABORATORS, held
        # the parts others own are read where their owners keep them (tests/parts.py): the
        # package carries no accessor only tests read, only the four the CLI's count reads
        carried = {name for name in PATHS if hasattr(ProgressiveDisclosure, name)}
        # each path still reaches its part (a part that moved fails here, naming it)
        assert all(getattr(parts(middleware), name) is not None for name in PATHS)
        assert carried == {"store", "components", "net_cost", "instructions"}, carried
    finally:
        middleware.close()


def built_by_assemble() -> list[str]:
    """The package classes ``assembly.assemble`` calls, in order (``Parts``, the answer
    holding them, left out)."""
    tree = ast.parse(inspect.getsource(assembly.assemble))
    return [node.func.id for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and isinstance(getattr(assembly, node.func.id, None), type)
            and getattr(assembly, node.func.id).__module__.startswith("fastmcp_progressive.")
            and node.func.id != "Parts"]


def test_assemble_builds_few_collaborators() -> None:
    built = built_by_assemble()
    assert len(built) <= MOST_BUILT, built
    # each part builds its own: the listing its parts, the gate its grants and modes,
    # the definitions their store, the describer the groups
    assert not {"HotReload", "NetCost", "Preload", "Announcer", "GrantStore", "ModePolicy",
                "DescriptionStore", "Groups"} & set(built), built
