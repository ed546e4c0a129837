"""Our loggers, under FastMCP's logger tree (``fastmcp.progressive...``).

Under ``fastmcp run`` (or any server that calls FastMCP's ``configure_logging``) our warnings
are then formatted by FastMCP's handler, and our INFO lines show when FastMCP's log level
(``FASTMCP_LOG_LEVEL``) says so, instead of printing as bare lines or not at all.

Example:
    ```python
    from fastmcp_progressive.log import get_logger

    logger = get_logger("proxy")  # the logger "fastmcp.progressive.proxy"
    ```
"""

from __future__ import annotations

import logging

from fastmcp.utilities.logging import get_logger as fastmcp_logger

ROOT = "fastmcp.progressive"


def get_logger(name: str = "") -> logging.Logger:
    """The logger ``fastmcp.progressive[.name]``."""
    return fastmcp_logger(f"{ROOT}.{name}" if name else ROOT)
