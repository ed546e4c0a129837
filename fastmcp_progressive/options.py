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
from collections.abc import Collection
from typing import Any, NoReturn

MAX_GRANT_TTL = 365 * 24 * 3600.0
MAX_STORE_TIMEOUT = 300.0
MAX_HOOK_TIMEOUT = 60.0
MAX_SESSIONS = 10_000_000
MAX_TOOLS_PER_READ = 1024
MAX_CACHE_SIZE = 1_000_000
SUMMARY_CHARS = (16, 1000)


def seconds(name: str, value: Any, maximum: float) -> None:
    """A finite number of seconds above 0 and at most ``maximum`` (not a bool)."""
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
            f"{name} must be a collection of strings such as [{value!r}], not a bare {value!r}"
        )
    for item in value:
        if not isinstance(item, str) or not item:
            raise ValueError(f"{name} must be a collection of non-empty strings, not {item!r}")
    return tuple(value)


def optional_name(name: str, value: Any) -> None:
    """A non-empty string, or ``None``."""
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{name} must be a non-empty string or None, not {value!r}")


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


def fail(name: str, accepted: str, value: Any) -> NoReturn:
    """Refuse ``value`` for ``name``, saying what is ``accepted``."""
    raise ValueError(f"{name} must be {accepted}, not {value!r}")
