"""``python -m fastmcp_progressive``: the same commands as the ``fastmcp-progressive`` script."""

from fastmcp_progressive.cli.commands import main

raise SystemExit(main())
