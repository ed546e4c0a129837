"""Always-load pins: tools listed in full and never gated.

Users ask to keep a few tools always at hand (the one every task starts with, a tool whose
schema the model must see up front). A tool is pinned when any of these says so:

- its description file has ``"always_load": true`` (``false`` there unpins, whatever
  the tool says: the file is the author's last word);
- it carries the FastMCP tag ``always_load`` (``@mcp.tool(tags={"always_load"})``);
- its ``meta`` has ``"io.github.fastmcp-progressive/alwaysLoad": true``;
- its ``meta`` has ``"anthropic/alwaysLoad": true``, the flag Claude Code reads to load a
  tool up front instead of deferring it: the author already declared the same intent.

Example:
    ```python
    @mcp.tool(tags={"always_load"})
    def search(query: str) -> list[str]: ...
    ```
"""

from __future__ import annotations

from collections.abc import Mapping

from fastmcp.tools.base import Tool

from fastmcp_progressive.files.model import DescriptionFile

ALWAYS_LOAD_TAG = "always_load"
ALWAYS_LOAD_META = "io.github.fastmcp-progressive/alwaysLoad"
ANTHROPIC_ALWAYS_LOAD = "anthropic/alwaysLoad"


def is_pinned(tool: Tool, file: DescriptionFile | None) -> bool:
    """Whether ``tool`` is listed in full and never gated (see the module docstring)."""
    return pinned(tool, file.always_load if file is not None else None)


def pinned(tool: Tool, file_says: bool | None) -> bool:
    """``is_pinned`` when the file's ``always_load`` is already known (listings keep it)."""
    if file_says is not None:
        return file_says
    if ALWAYS_LOAD_TAG in (tool.tags or ()):
        return True
    meta = tool.meta
    if not isinstance(meta, Mapping):
        return False
    return meta.get(ALWAYS_LOAD_META) is True or meta.get(ANTHROPIC_ALWAYS_LOAD) is True
