"""The rules a setting's value must follow, each raising ``ValueError`` naming the setting.

A bad value must fail when its settings object is built, with a message naming the setting
and what it accepts, never later at request time and never by quietly meaning something
else: ``GrantSettings(ttl=float("nan"))`` would make every stored grant fail to write (and,
with the ``"open"`` store policy, every call pass), ``exempt_tools="add"`` would exempt the
tools ``a`` and ``d``, ``GrantSettings(max_sessions=0)`` would keep no session's grants at
all. The settings objects themselves (and their defaults) live in ``settings.py``.

Example:
    ```python
    seconds("grants.ttl", 3600.0, MAX_GRANT_TTL)  # fine
    seconds("grants.ttl", float("inf"), MAX_GRANT_TTL)  # ValueError: grants.ttl must be...
    ```
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Collection
from typing import Any, NoReturn

MAX_GRANT_TTL = 365 * 24 * 3600.0
MIN_GRANT_TTL = 5.0
"""A shorter grant expires before the model's next call: read, think, call takes seconds."""
MAX_STORE_TIMEOUT = 300.0
MIN_STORE_TIMEOUT = 0.01
"""A shorter one no store meets (an event-loop turn and a local round trip take about that
long), so every operation would fail: under ``"open"`` a caller who read nothing runs it."""
MAX_STORE_OPERATIONS = 10_000
MAX_HOOK_TIMEOUT = 60.0
MAX_SESSIONS = 10_000_000
MAX_TOOLS_PER_READ = 1024
MAX_CACHE_SIZE = 1_000_000
SUMMARY_CHARS = (16, 1000)
MAX_TOOL_NAME = 128
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
"""Headers a caller's record never holds (``access/caller.py``), so no setting may read one."""
_HEADER_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 field name


def seconds(name: str, value: Any, maximum: float, *, minimum: float = 0.0) -> None:
    """A finite number of seconds above 0 (at least ``minimum`` when given) and at most
    ``maximum`` (not a bool)."""
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or not 0 < value <= maximum or value < minimum):
        low = f"at least {minimum:g}" if minimum else "above 0"
        fail(name, f"a finite number of seconds {low} and at most {maximum:g}", value)


def count(name: str, value: Any, low: int, high: int) -> None:
    """A whole number from ``low`` to ``high`` (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be a whole number from {low} to {high}, not {value!r}")


def flag(name: str, value: Any) -> None:
    """``True`` or ``False``, nothing merely truthy."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, not {value!r}")


def choice(name: str, value: Any, allowed: Collection[str]) -> None:
    """One of ``allowed`` (pass ``typing.get_args`` of the setting's ``Literal``)."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}, not {value!r}")


def names(name: str, value: Any) -> tuple[str, ...]:
    """A collection of non-empty strings (a bare string is refused), as a tuple."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Collection):
        raise ValueError(
            f"{name} must be a collection of strings such as [{value!r}], not a bare {value!r}")
    for item in value:
        if not isinstance(item, str) or not item:
            raise ValueError(f"{name} must be a collection of non-empty strings, not {item!r}")
    return tuple(value)


class SettingTypeError(TypeError, ValueError):
    """A setting given an object of the wrong kind (a class for an instance, an object
    missing the methods needed): a ``TypeError``, and a ``ValueError`` like every other
    bad setting, so ``except ValueError`` around construction still catches it."""


def instance_with(name: str, value: Any, methods: tuple[str, ...], accepted: str) -> None:
    """An instance (not a class) whose ``methods`` are all coroutine functions."""
    import inspect

    if isinstance(value, type):
        raise SettingTypeError(
            f"{name} must be {accepted}, not the class {value.__name__} itself: pass an "
            f"instance, e.g. {value.__name__}(...)")
    missing = [m for m in methods if not inspect.iscoroutinefunction(getattr(value, m, None))]
    if missing:
        raise SettingTypeError(
            f"{name} must be {accepted}, not {type(value).__name__} (it has no async "
            f"{', '.join(missing)})")


def folder(name: str, value: Any) -> None:
    """A folder path (str or ``os.PathLike``) or None: not empty (``Path("")`` is the working
    directory), no NUL, and not an existing file (a folder may appear later)."""
    if value is None:
        return
    if not isinstance(value, (str, os.PathLike)):
        fail(name, "a folder path or None", value)
    text = os.fspath(value)
    if not isinstance(text, str):
        fail(name, "a folder path as text (str or os.PathLike[str]) or None", value)
    if not text.strip():
        fail(name, "a folder path or None (an empty path would mean the working directory)",
             value)
    if "\0" in text:
        fail(name, "a folder path without NUL characters", value)
    if os.path.exists(text) and not os.path.isdir(text):
        raise ValueError(f"{name} must be a folder of description files, and {text} is a "
                         "file: pass the folder that holds the files")


def header_name(name: str, value: Any) -> None:
    """An HTTP field name (RFC 9110 token: letters, digits, ``!#$%&'*+-.^_`|~``) or None."""
    if value is not None and (not isinstance(value, str) or not _HEADER_TOKEN.fullmatch(value)):
        fail(name, "an HTTP header name (letters, digits and !#$%&'*+-.^_`|~) or None", value)


def tool_name(name: str, value: Any) -> None:
    """A tool name we register (or None): 1 to 128 printable characters, no surrounding
    whitespace (a client would have to send the spaces to reach it)."""
    if value is None:
        return
    if (not isinstance(value, str) or not value or value != value.strip()
            or len(value) > MAX_TOOL_NAME or not value.isprintable()):
        fail(name, f"a tool name (1 to {MAX_TOOL_NAME} printable characters, no surrounding "
                   "spaces) or None", value)


def fail(name: str, accepted: str, value: Any) -> NoReturn:
    """Refuse ``value`` for ``name``, saying what is ``accepted``."""
    raise ValueError(f"{name} must be {accepted}, not {value!r}")
