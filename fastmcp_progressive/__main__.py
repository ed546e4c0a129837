"""``python -m fastmcp_progressive``: the same commands as the ``fastmcp-progressive`` script."""

from .launch import main

raise SystemExit(main())
