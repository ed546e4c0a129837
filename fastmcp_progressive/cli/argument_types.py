"""The command line's own value types: each parses one option's text, or refuses it naming
what it accepts (argparse puts the option's name in front), the same for a flag and for its
``FASTMCP_PROGRESSIVE_*`` variable (``commands.apply_environment``).

Example:
    ```python
    parser.add_argument("--startup-timeout", type=seconds_type)
    ```
"""

from __future__ import annotations

import argparse

from fastmcp_progressive.hosts import AUTO, MAX_CAP, MIN_CAP, ToolBudget
from fastmcp_progressive.options import SUMMARY_CHARS, count, seconds
from fastmcp_progressive.proxy.front import parse_listen
from fastmcp_progressive.proxy.upstream import MAX_UPSTREAM_TIMEOUT

__all__ = ["listen", "seconds_type", "server_name", "summary_chars", "tool_cap"]


def seconds_type(text: str) -> float:
    """An argparse type: a finite number of seconds above 0 (argparse names the option)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    try:
        seconds("it", value, MAX_UPSTREAM_TIMEOUT)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("it ")) from None
    return value


def tool_cap(text: str) -> ToolBudget:
    """An argparse type: what ``ListingSettings(max_tools=...)`` accepts (``none``: None)."""
    if text.strip().lower() in (AUTO, "none"):
        return AUTO if text.strip().lower() == AUTO else None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not MIN_CAP <= value <= MAX_CAP:
        raise argparse.ArgumentTypeError(
            f"must be auto, none or a whole number from {MIN_CAP} to {MAX_CAP}, not {text!r}")
    return value


def listen(text: str) -> tuple[str, int]:
    """An argparse type: ``[HOST:]PORT`` (``parse_listen``)."""
    try:
        return parse_listen(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected [HOST:]PORT with a port from 1 to 65535, not {text!r}") from None


def server_name(text: str) -> str:
    """An argparse type: a server name with something in it."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be blank")
    return text


def summary_chars(text: str) -> int:
    """An argparse type: a summary length ``ListingSettings`` accepts."""
    try:
        value = int(text)
        count("it", value, *SUMMARY_CHARS)
    except ValueError:
        low, high = SUMMARY_CHARS
        raise argparse.ArgumentTypeError(
            f"must be a whole number from {low} to {high}, not {text!r}") from None
    return value
