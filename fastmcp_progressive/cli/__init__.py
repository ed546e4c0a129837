"""The ``fastmcp-progressive`` command: ``extract``, ``check``, ``tokens`` and ``proxy``.

The top of the tree: imports any wing, and nothing imports it. ``main`` is light to import.

Modules: ``launch`` (the entry point: starts ``proxy``'s upstreams before FastMCP is
imported), ``commands`` (the parser and the commands), ``checks`` (what ``check`` finds
wrong, ``resolution`` rules included), ``tokens`` (o200k_base token counts, shared with the
benchmarks).

Example:
    ```console
    $ fastmcp-progressive check app.py:mcp tool_descriptions
    ```
"""

from fastmcp_progressive.cli.launch import main

__all__ = ["main"]
