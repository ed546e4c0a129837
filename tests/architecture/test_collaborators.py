"""The middleware holds few parts, each owning its own (#35).

Before #35 ``ProgressiveDisclosure.__init__`` wired 21 collaborator objects and the
middleware held 19 of them (store, definitions, lister, preload, grants, modes, gate,
catalog, groups, cap, resolution, describer, components, recall, hot reload, net cost,
listing, announcer, order check). Now ``assembly.py`` builds them once and each part owns
its own (the gate its grants, modes, definitions and recall; the describer our components,
the groups and the cap; the listing the lister, preload, watcher and net-cost check), as
FastMCP's middleware hold a few grouped options. A collaborator here is an attribute of the
middleware whose value is an instance of one of the package's classes; the parts others
own are read by tests where their owners keep them (``tests/parts.py``), never through
accessors in the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fastmcp_progressive import ProgressiveDisclosure, ResolutionSettings
from tests.parts import PATHS, parts

MOST_COLLABORATORS = 8


def _collaborators(middleware: Any) -> dict[str, str]:
    return {name: type(value).__qualname__ for name, value in vars(middleware).items()
            if type(value).__module__.startswith("fastmcp_progressive.")}


@pytest.mark.parametrize("options", ["defaults", "everything on"])
def test_the_middleware_holds_at_most_eight_collaborators(options: str, tmp_path: Path
                                                          ) -> None:
    middleware = (ProgressiveDisclosure() if options == "defaults" else ProgressiveDisclosure(
        tmp_path, resolution=ResolutionSettings(enabled=True), exempt_tools=["ping"]))
    try:
        held = _collaborators(middleware)
        assert len(held) <= MOST_COLLABORATORS, held
        # the parts others own are read where their owners keep them (tests/parts.py): the
        # package carries no accessor only tests read, only the three the CLI's count reads
        carried = {name for name in PATHS if hasattr(ProgressiveDisclosure, name)}
        # each path still reaches its part (a part that moved fails here, naming it)
        assert all(getattr(parts(middleware), name) is not None for name in PATHS)
        assert carried == {"store", "components", "net_cost"}, carried
    finally:
        middleware.close()
