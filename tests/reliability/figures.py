"""Figures the reliability tests measure (printed in pytest's terminal summary).

Also the checks every response goes through: no filesystem path, no stack trace.
"""

from __future__ import annotations

import re
from typing import Any

FIGURES: dict[str, Any] = {}
HOW: dict[str, str] = {}
"""How each figure combines ("add", "put" or "peak"): parallel workers' figures are merged
the same way (``merge``)."""


def add(key: str, amount: float = 1) -> None:
    FIGURES[key] = FIGURES.get(key, 0) + amount
    HOW[key] = "add"


def put(key: str, value: Any) -> None:
    FIGURES[key] = value
    HOW[key] = "put"


def peak(key: str, value: float) -> None:
    FIGURES[key] = max(FIGURES.get(key, value), value)
    HOW[key] = "peak"


def merge(figures: dict[str, Any], how: dict[str, str]) -> None:
    """Fold another process's figures into these ones (pytest-xdist workers)."""
    for key, value in figures.items():
        {"add": add, "peak": peak}.get(how.get(key, "put"), put)(key, value)


_TRACE = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+")
_PATHS = re.compile(r"(?<![\w:/])/(?:tmp|etc|root|home|work|proc|usr|var)/")


def assert_clean(text: str, *secrets: str, any_path: bool = True) -> None:
    """``text`` (something a client received) shows no stack trace and none of ``secrets``.

    ``any_path``: no absolute path under a system folder either (off where the client's own
    input, echoed back in "Tool '/etc/passwd' not found", may legitimately contain one).
    """
    assert not _TRACE.search(text), f"stack trace sent to a client: {text[:300]!r}"
    if any_path:
        match = _PATHS.search(text)
        assert match is None, f"filesystem path sent to a client: {text[:300]!r}"
    for secret in secrets:
        assert secret not in text, f"{secret!r} sent to a client: {text[:300]!r}"
