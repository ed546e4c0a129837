"""The ``fastmcp-progressive`` command's entry point: start ``proxy``'s upstreams first.

Importing FastMCP takes most of the proxy's own start-up time. For ``proxy``, the upstream
commands are started before that import (``prespawn.py``), so they boot while we import;
then the command runs as usual (``commands.py``). This module and the package's ``__init__``
import nothing heavy.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command (see ``commands.main``); its exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    ours = args[: args.index("--")] if "--" in args else args
    if ours[:1] == ["proxy"] and not {"-h", "--help"} & set(ours):
        from fastmcp_progressive.proxy import prespawn

        prespawn.start(args[1:])
    from fastmcp_progressive.cli.commands import main as run

    return run(argv)
