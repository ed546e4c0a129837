"""Where a top-level key, or each element of its array, is written in a description file.

A validation error names a field, not a position; an editor or a CI annotation needs the
line and column of the field's key, and ``check`` points at each ``resolution`` rule on its
own line. Both scans work on the file's JSON part (``file_format.layout``) and count only
object keys at depth 1, so an ``input`` inside an example never shadows a top-level one.

Example:
    ```python
    key_location('{\\n  "summary": 42\\n}', ".json", "summary")  # (2, 3)
    element_locations('{"resolution": [{}, {}]}', ".json", "resolution")  # [(1, 17), (1, 21)]
    ```
"""

from __future__ import annotations

import json

from fastmcp_progressive.files.errors import DescriptionError, position
from fastmcp_progressive.files.format import layout

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


def key_location(text: str, suffix: str, key: str) -> tuple[int, int] | None:
    """(line, column), 1-based, of top-level ``key`` in a file's JSON.

    None when the key is not written (a defaulted ``name``) or the JSON does not scan.
    """
    found = _key_index(text, suffix, key)
    if found is None:
        return None
    json_text, line_offset, index = found
    line, column = position(json_text, index)
    return line + line_offset, column


def element_locations(text: str, suffix: str, key: str) -> list[tuple[int, int]]:
    """(line, column), 1-based, of each element of the array under top-level ``key``."""
    found = _key_index(text, suffix, key)
    if found is None:
        return []
    json_text, line_offset, at = found
    try:
        _, at = _DECODER.raw_decode(json_text, at)  # the key string
        at = _skip(json_text, at)
        if json_text[at] != ":":
            return []
        at = _skip(json_text, at + 1)
        if json_text[at] != "[":
            return []
        at = _skip(json_text, at + 1)
        located: list[tuple[int, int]] = []
        while at < len(json_text) and json_text[at] != "]":
            line, column = position(json_text, at)
            located.append((line + line_offset, column))
            _, at = _DECODER.raw_decode(json_text, at)
            at = _skip(json_text, at)
            if at < len(json_text) and json_text[at] == ",":
                at = _skip(json_text, at + 1)
        return located
    except (ValueError, IndexError):
        return []


def _key_index(text: str, suffix: str, key: str) -> tuple[str, int, int] | None:
    """(the JSON part, its line offset, the index of ``key``'s opening quote in it)."""
    try:
        parts = layout(text, suffix)
    except DescriptionError:
        return None
    if parts.json is None:
        return None
    json_text = parts.json
    depth, i = 0, 0
    try:
        while i < len(json_text):
            char = json_text[i]
            if char == '"':
                value, end = _DECODER.raw_decode(json_text, i)
                if depth == 1 and value == key and json_text[end:].lstrip().startswith(":"):
                    return json_text, parts.line_offset, i
                i = end
                continue
            if char in "{[":
                depth += 1
            elif char in "}]":
                depth -= 1
            i += 1
    except ValueError:
        return None
    return None


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at
