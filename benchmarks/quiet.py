"""Keep benchmark output readable: no per-request server logs, no shutdown tracebacks.

In-process HTTP servers are stopped by cancelling their task (``run_server_async``), which
uvicorn logs as an ERROR with a ``CancelledError`` traceback; FastMCP logs each server
start at INFO; ours notes once that anonymous HTTP clients are checked by their
arguments, which the plain-HTTP runs are on purpose. None of that is a benchmark result.
"""

from __future__ import annotations

import asyncio
import logging


class _DropCancelled(logging.Filter):
    """Drops a record about a cancelled task (uvicorn logs the traceback as its message)."""

    def filter(self, record: logging.LogRecord) -> bool:
        info = record.exc_info
        if info and info[0] is not None and issubclass(info[0], asyncio.CancelledError):
            return False
        return "CancelledError" not in record.getMessage()


def quiet_logs() -> None:
    """Silence server chatter (call after importing fastmcp, which sets its own levels)."""
    logging.getLogger("fastmcp").setLevel(logging.WARNING)
    logging.getLogger("fastmcp_progressive").setLevel(logging.ERROR)
    for name in ("uvicorn.error", "uvicorn"):
        logging.getLogger(name).addFilter(_DropCancelled())
