"""Turning one description file's text into a validated ``DescriptionFile``.

The only place that decides what a file means: JSON or front matter plus Markdown
(``format``), ``name`` defaulted from the file name and checked against it, pydantic
validation, and a last check that what a read serves can be serialized. Every failure,
of whatever kind, comes out as a ``DescriptionError`` that names the line and column it
can, so the store can keep a file's last good version on exactly that exception.

Example:
    ```python
    parse_text('{"summary": "Add."}', ".json", "add").summary  # "Add."
    ```
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from pydantic import ValidationError

from fastmcp_progressive.files.errors import DescriptionError, position
from fastmcp_progressive.files.format import layout
from fastmcp_progressive.files.model import DescriptionFile
from fastmcp_progressive.files.places import key_location


def parse_text(text: str, suffix: str, expected_name: str) -> DescriptionFile:
    """Parse and validate one file's text; raise ``DescriptionError`` with line/column.

    Every failure of any kind becomes a ``DescriptionError`` (never another exception), so
    a caller that keeps the last good version on ``DescriptionError`` always keeps it.
    """
    try:
        return _parse_text(text, suffix, expected_name)
    except DescriptionError:
        raise
    except RecursionError:
        raise DescriptionError("line 1, column 1: nesting too deep") from None
    except Exception as exc:
        raise DescriptionError(f"{_failure_position(text, exc)}: {exc}") from None


def _failure_position(text: str, exc: Exception) -> str:
    """Where a failure JSON reports without a position most likely comes from.

    The one known case is an integer longer than Python's conversion limit
    (``sys.get_int_max_str_digits``): point at the first run of digits that long.
    """
    limit = sys.get_int_max_str_digits()
    if limit and "digits" in str(exc):
        found = re.search(r"\d{" + str(limit + 1) + ",}", text)
        if found is not None:
            line, column = position(text, found.start())
            return f"line {line}, column {column}"
    return "line 1, column 1"


def _parse_text(text: str, suffix: str, expected_name: str) -> DescriptionFile:
    parts = layout(text, suffix)
    if parts.json is None:  # Markdown without front matter: all of it is the description
        data: Any = {"description": parts.body.strip()}
    elif suffix != ".md":
        data = _load_json(parts.json, 0)
    else:
        data = _load_json(parts.json, 1) if parts.json.strip() else {}
        body = parts.body.strip()
        if isinstance(data, dict) and body:
            data.setdefault("description", body)
    if not isinstance(data, dict):
        raise DescriptionError(f"line {1 + parts.line_offset}, column 1: expected a JSON object")
    data.setdefault("name", expected_name)
    try:
        parsed = DescriptionFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        top = first["loc"][0] if first["loc"] else None
        found = key_location(text, suffix, top) if isinstance(top, str) else None
        at = f"line {found[0]}, column {found[1]}: " if found else ""
        raise DescriptionError(f"{at}field {where}: {first['msg']}") from None
    if parsed.name != expected_name:
        found = key_location(text, suffix, "name")
        at = f"line {found[0]}, column {found[1]}: " if found else ""
        raise DescriptionError(
            f"{at}field name: says {parsed.name!r} but the file is for {expected_name!r}")
    try:
        parsed.fields()  # what a read serves must serialize; pydantic caps the depth
    except (ValueError, RecursionError) as exc:
        raise DescriptionError(f"line 1, column 1: cannot be served: {exc}") from None
    return parsed


def _load_json(text: str, line_offset: int) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DescriptionError(
            f"line {exc.lineno + line_offset}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise DescriptionError(f"line {1 + line_offset}, column 1: nesting too deep") from None
