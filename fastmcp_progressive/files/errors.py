"""The error a description file can raise, and the ``path:line:col`` form it is printed in.

Every way a file can be unusable (bad UTF-8, bad JSON, a field pydantic rejects, a name
that does not match) becomes one ``DescriptionError`` whose message starts with the place
in the file, when one can be named. The store logs it and the ``check`` command reports
it; both print it the way compilers and CI annotations do, so this module is the single
place that knows that message shape.

Example:
    ```python
    at_path("d/add.json", DescriptionError("line 3, column 5: expected a JSON object"))
    # "d/add.json:3:5: expected a JSON object"
    ```
"""

from __future__ import annotations

import os
import re


class DescriptionError(ValueError):
    """A description file that cannot be used, with where in the file it went wrong.

    The message starts ``line L, column C: `` whenever a place in the file can be named
    (``where_and_why`` splits it off again).
    """


_LOCATED = re.compile(r"^line (\d+)(?:, column (\d+))?: (.*)$", re.DOTALL)


def position(text: str | bytes, index: int) -> tuple[int, int]:
    """(line, column), both 1-based, of character (or byte) ``index`` in ``text``."""
    if isinstance(text, bytes):
        return text.count(b"\n", 0, index) + 1, index - text.rfind(b"\n", 0, index)
    return text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index)


def where_and_why(path: str | os.PathLike[str], exc: BaseException) -> tuple[str, str]:
    """(``path:line:col`` or ``path``, the message) of a failure to use a file: the place a
    ``DescriptionError`` message opens with, split off it."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    found = _LOCATED.match(reason)
    if found is None:
        return str(path), reason
    line, column, rest = found.groups()
    return (f"{path}:{line}:{column}" if column else f"{path}:{line}"), rest


def at_path(path: str | os.PathLike[str], exc: BaseException) -> str:
    """``path:line:col: message`` (or ``path: message``), as compilers and CI print it."""
    return ": ".join(where_and_why(path, exc))
