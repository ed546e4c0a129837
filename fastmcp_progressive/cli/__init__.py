"""The ``fastmcp-progressive`` command: ``extract``, ``check``, ``tokens`` and ``proxy``.

The top of the tree: imports any wing, and nothing imports it.

Modules: ``commands`` (the parser and the commands, ``main``), ``servers`` (the server a
command works on: imported, or proxied for ``tokens``), ``argument_types`` (option values
parsed or refused), ``checks`` (what ``check``
finds wrong, ``resolution`` rules included), ``tokens`` (o200k_base token counts, shared
with the benchmarks).

Example:
    ```console
    $ fastmcp-progressive check app.py:mcp tool_descriptions
    ```
"""

from fastmcp_progressive.cli.commands import main

__all__ = ["main"]
