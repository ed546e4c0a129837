"""Checking ``ProgressiveDisclosure``'s options when it is built, one rule per option.

A bad value must fail at construction with a message naming the option and what it
accepts, never later at request time and never by quietly meaning something else:
``grant_ttl=float("nan")`` would make every stored grant fail to write (and, with the
``"open"`` store policy, every call pass), ``exempt_tools="add"`` would exempt the tools
``a`` and ``d``, ``max_sessions=0`` would keep no session's grants at all.

Example:
    ```python
    check_options(grant_ttl=3600.0, max_sessions=100_000, exempt_tools=["search"])
    check_options(grant_ttl=float("inf"))  # ValueError: grant_ttl must be a finite number...
    ```
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Collection
from typing import Any

MAX_GRANT_TTL = 365 * 24 * 3600.0
MAX_STORE_TIMEOUT = 300.0
MAX_SESSIONS = 10_000_000
MAX_TOOLS_PER_READ = 1024
MAX_CACHE_SIZE = 1_000_000
SUMMARY_CHARS = (16, 1000)


def _seconds(name: str, value: Any, maximum: float) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 < value <= maximum
    ):
        raise ValueError(
            f"{name} must be a finite number of seconds above 0 and at most {maximum:g}, "
            f"not {value!r}"
        )


def _count(name: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be a whole number from {low} to {high}, not {value!r}")


def _flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, not {value!r}")


def _choice(name: str, value: Any, allowed: Collection[str]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}, not {value!r}")


def _names(name: str, value: Any) -> None:
    if isinstance(value, (str, bytes)) or not isinstance(value, Collection):
        raise ValueError(
            f"{name} must be a collection of strings such as [{value!r}], not a bare {value!r}"
        )
    for item in value:
        if not isinstance(item, str) or not item:
            raise ValueError(f"{name} must be a collection of non-empty strings, not {item!r}")


def _optional_name(name: str, value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{name} must be a non-empty string or None, not {value!r}")


def check_options(**options: Any) -> None:
    """Raise ``ValueError`` naming the first option whose value is not accepted.

    Only the options passed are checked; each has its rule below and its accepted range in
    the README's Options table.
    """
    rules: dict[str, Callable[[str, Any], None]] = {
        "descriptions_dir": lambda n, v: None if v is None or isinstance(v, (str, os.PathLike))
        else _fail(n, "a folder path or None", v),
        "listing": lambda n, v: _choice(n, v, ("minimal", "skeleton")),
        "summary_max_chars": lambda n, v: _count(n, v, *SUMMARY_CHARS),
        "strip_noise": _flag,
        "grant_ttl": lambda n, v: _seconds(n, v, MAX_GRANT_TTL),
        "max_sessions": lambda n, v: _count(n, v, 1, MAX_SESSIONS),
        "grant_store": lambda n, v: None if v is None or (
            callable(getattr(v, "get", None)) and callable(getattr(v, "put_many", None))
        ) else _fail(n, "a py-key-value AsyncKeyValue store or None", v),
        "shared_sessions": _flag,
        "store_timeout": lambda n, v: _seconds(n, v, MAX_STORE_TIMEOUT),
        "on_store_error": lambda n, v: _choice(n, v, ("open", "closed")),
        "max_tools_per_read": lambda n, v: _count(n, v, 1, MAX_TOOLS_PER_READ),
        "cache_size": lambda n, v: _count(n, v, 1, MAX_CACHE_SIZE),
        "listing_cache_size": lambda n, v: _count(n, v, 1, MAX_CACHE_SIZE),
        "definition_cache_size": lambda n, v: _count(n, v, 1, MAX_CACHE_SIZE),
        "preload": _flag,
        "full_clients": _names,
        "mode_header": _optional_name,
        "mode_resolver": lambda n, v: None if v is None or callable(v)
        else _fail(n, "a callable or None", v),
        "exempt_tools": _names,
        "bridge_tool": _optional_name,
        "guidance_prompt": _flag,
        "instructions": _flag,
    }
    for name, value in options.items():
        rules[name](name, value)


def _fail(name: str, accepted: str, value: Any) -> None:
    raise ValueError(f"{name} must be {accepted}, not {value!r}")
