"""Description files: one per tool, validated, cached, re-read when they change.

A developer writes ``<tool>.json`` (or ``<tool>.md``, prose first) in the descriptions
directory; the server serves what the file says, merged over the tool's registered
definition. Files are read lazily and checked with one ``stat`` per read: a changed
mtime/size/inode means "parse again", so an edit is served by the next read with no
restart and no watcher needed for correctness (``watch.py`` invalidates eagerly, which also
catches the rare edit a stat cannot see, and notifies clients).
Parsed files sit in a bounded LRU; a file that stops parsing keeps its last good version
being served, and its error is logged once per change, never sent to a client.

Markdown files carry their structured fields in a JSON front-matter block (no YAML
dependency)::

    ---
    {"summary": "Create an invoice for a customer.", "examples": [...]}
    ---
    The Markdown body is the full description.

Example:
    ```python
    store = DescriptionStore("tool_descriptions")
    store.lookup("create_invoice")  # DescriptionFile | None
    ```
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachetools import LRUCache
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .rules import Rule
from .settings import CacheSettings

logger = logging.getLogger(__name__)

SUFFIXES = (".json", ".md")
SUMMARY_MAX_CHARS = 200
MAX_FILE_BYTES = 1 << 20
SCAN_TRUST_NS = 2_000_000_000  # a folder stat younger than this may hide a new entry
MAX_GENERATIONS = 100_000  # names with their own invalidation count before one epoch bump

Signature = tuple[int, int, int, str, int]
"""(mtime_ns, size, inode, suffix, generation) of a description file: equal means unchanged.

``generation`` grows with every ``invalidate`` covering the file, so an edit a stat cannot
see (same size and inode, within the mtime granularity) still gives a new signature once
the watcher reports it: to the store and to every memo keyed by signatures (the listing).
"""
_DECODER = json.JSONDecoder()


class Example(BaseModel):
    """One worked call of a tool."""

    model_config = ConfigDict(extra="allow")

    description: str
    input: dict[str, Any] = Field(default_factory=dict)
    explanation: str | None = None


class DescriptionFile(BaseModel):
    """What a description file may say about its tool; unknown keys are kept and served."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: str
    summary: str | None = Field(default=None, max_length=SUMMARY_MAX_CHARS)
    description: str | None = None
    input_schema: dict[str, Any] | None = Field(default=None, alias="inputSchema")
    output_schema: dict[str, Any] | None = Field(default=None, alias="outputSchema")
    examples: list[Example] | None = None
    usage_guidance: Any = None
    error_guidance: Any = None
    always_load: bool | None = None
    """True: list the tool in full and never gate it; False: never, whatever the tool says."""
    resolution: list[Rule] | None = None  # argument-dependent hints for tools/resolve (rules.py)

    @field_validator("summary")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        return " ".join(value.split()) if value is not None else None

    def fields(self) -> dict[str, Any]:
        """The fields to merge over the registered definition, wire-named, unset ones left out."""
        data = self.model_dump(by_alias=True, exclude_none=True, mode="json")
        data.pop("summary", None)
        data.pop("always_load", None)
        data.pop("resolution", None)  # answered by tools/resolve, not part of the definition
        return data


class DescriptionError(ValueError):
    """A description file that cannot be used, with where in the file it went wrong.

    The message starts ``line L, column C: `` whenever a place in the file can be named
    (``location`` splits it off again).
    """


_LOCATED = re.compile(r"^line (\d+)(?:, column (\d+))?: (.*)$", re.DOTALL)


def location(message: str) -> tuple[int | None, int | None, str]:
    """(line, column, rest) of a ``DescriptionError`` message; None where it names none."""
    found = _LOCATED.match(message)
    if found is None:
        return None, None, message
    line, column, rest = found.groups()
    return int(line), int(column) if column else None, rest


def where_and_why(path: str | os.PathLike[str], exc: BaseException) -> tuple[str, str]:
    """(``path:line:col`` or ``path``, the message) of a failure to use a file."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    line, column, rest = location(reason)
    if line is None:
        return str(path), rest
    return (f"{path}:{line}:{column}" if column else f"{path}:{line}"), rest


def at_path(path: str | os.PathLike[str], exc: BaseException) -> str:
    """``path:line:col: message`` (or ``path: message``), as compilers and CI print it."""
    return ": ".join(where_and_why(path, exc))


def _position(text: str, index: int) -> str:
    """``line L, column C`` of character ``index`` in ``text`` (both 1-based)."""
    line = text.count("\n", 0, index) + 1
    return f"line {line}, column {index - text.rfind(chr(10), 0, index)}"


@dataclass(frozen=True)
class _Entry:
    signature: Signature
    parsed: DescriptionFile | None
    last_good: DescriptionFile | None


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
            return _position(text, found.start())
    return "line 1, column 1"


def _parse_text(text: str, suffix: str, expected_name: str) -> DescriptionFile:
    if text.startswith("\ufeff"):
        text = text[1:]
    if suffix == ".md":
        data, line_offset = _split_front_matter(text)
    else:
        data, line_offset = _load_json(text, 0), 0
    if not isinstance(data, dict):
        raise DescriptionError(f"line {1 + line_offset}, column 1: expected a JSON object")
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
            f"{at}field name: says {parsed.name!r} but the file is for {expected_name!r}"
        )
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
            f"line {exc.lineno + line_offset}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise DescriptionError(f"line {1 + line_offset}, column 1: nesting too deep") from None


def _split_front_matter(text: str) -> tuple[Any, int]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {"description": text.strip()}, 0
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            head = "".join(lines[1:end])
            data = _load_json(head, 1) if head.strip() else {}
            if isinstance(data, dict):
                body = "".join(lines[end + 1 :]).strip()
                if body:
                    data.setdefault("description", body)
            return data, 1
    raise DescriptionError("line 1, column 1: front matter opened with '---' is never closed")


def key_location(text: str, suffix: str, key: str) -> tuple[int, int] | None:
    """(line, column), 1-based, of top-level ``key`` in a file's JSON (for error messages).

    A validation error names a field, not a position; pointing at the field's key is what
    an editor or a CI annotation needs. Only object keys at depth 1 count, so an ``input``
    inside an example never shadows a top-level one. None when the key is not written
    (a defaulted ``name``) or the JSON does not scan.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    line_offset = 0
    if suffix == ".md":
        lines = text.splitlines(keepends=True)
        if not lines or lines[0].strip() != "---":
            return None
        ends = [i for i in range(1, len(lines)) if lines[i].strip() == "---"]
        if not ends:
            return None
        text, line_offset = "".join(lines[1 : ends[0]]), 1
    depth, i = 0, 0
    try:
        while i < len(text):
            char = text[i]
            if char == '"':
                value, end = _DECODER.raw_decode(text, i)
                if depth == 1 and value == key and text[end:].lstrip().startswith(":"):
                    line = text.count("\n", 0, i) + 1
                    return line + line_offset, i - text.rfind("\n", 0, i)
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


def read_description(
    directory: Path, name: str, suffix: str, *, max_bytes: int = MAX_FILE_BYTES
) -> DescriptionFile:
    """Read and validate ``<directory>/<name><suffix>``, refusing anything that escapes it.

    Shared by the store (which logs and falls back) and ``check`` (which reports). A name
    with path tricks is refused before any I/O; a file that does not resolve to a file
    directly in ``directory`` (a symlink pointing out, or into a subfolder) is refused
    unread, the final open does not follow a link swapped in after that check, and only
    regular files are read (a FIFO would hang).
    Raises ``DescriptionError`` or ``OSError``.
    """
    if not safe_file_name(name) or suffix not in SUFFIXES:
        raise DescriptionError(f"{name + suffix!r} cannot name a description file")
    path = directory / f"{name}{suffix}"
    real = Path(os.path.realpath(path))
    if real.parent != Path(os.path.realpath(directory)):
        raise DescriptionError(
            "the file links outside the descriptions folder (only files directly in it are read)"
        )
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    with os.fdopen(os.open(real, flags), "rb") as handle:  # O_NONBLOCK: a FIFO never blocks
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise DescriptionError("not a regular file")
        raw = handle.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise DescriptionError(f"larger than {max_bytes} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - raw.rfind(b"\n", 0, exc.start)
        raise DescriptionError(
            f"line {line}, column {column}: byte {exc.start} is not valid UTF-8"
        ) from None
    return parse_text(text, suffix, name)


def safe_file_name(name: str) -> bool:
    """Whether ``name`` can name a file directly inside the directory (no path tricks)."""
    return (
        0 < len(name) <= 200
        and name not in (".", "..")
        and not name.startswith(".")
        and not any(c in name for c in "/\\\x00:")
        and name.isprintable()
    )


def description_name(path: str | os.PathLike[str]) -> str | None:
    """The tool a file in the directory describes, or None for any other file."""
    stem, dot, ext = os.path.basename(path).rpartition(".")
    if not dot or dot + ext not in SUFFIXES or not safe_file_name(stem):
        return None
    return stem


class DescriptionStore:
    """Description files of one directory, parsed on demand and cached by file signature."""

    def __init__(
        self,
        directory: str | os.PathLike[str] | None,
        *,
        cache_size: int = CacheSettings.files,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        if cache_size < 1:
            raise ValueError("cache_size must be at least 1")
        self.directory = Path(directory).absolute() if directory is not None else None
        self.max_file_bytes = max_file_bytes
        self._cache: LRUCache[str, _Entry] = LRUCache(maxsize=cache_size)
        self._lock = threading.Lock()
        self._logged: set[tuple[str, tuple[int, int, int, str]]] = set()
        self._epoch = 0  # invalidate(): every file
        self._generations: dict[str, int] = {}  # invalidate(name): that file
        self._scan: tuple[tuple[int, int, int, int], list[tuple[str, str]]] | None = None
        self.reads = 0  # files loaded from disk (cache misses), for tests and benchmarks
        if self.directory is not None and not self.directory.is_dir():
            logger.warning(
                "descriptions directory %s does not exist (yet): serving registered "
                "definitions until it appears",
                self.directory,
            )

    def signature(self, name: str) -> Signature | None:
        """The stat signature of the file describing ``name``, or None when there is none."""
        if self.directory is None or not safe_file_name(name):
            return None
        for suffix in SUFFIXES:
            try:
                st = os.stat(self.directory / f"{name}{suffix}")
            except (OSError, ValueError):
                continue
            return (st.st_mtime_ns, st.st_size, st.st_ino, suffix, self._generation(name))
        return None

    def signatures(self) -> dict[str, Signature]:
        """Signatures of every description file (for listings): one ``stat`` per file.

        Which files exist comes from a directory scan kept until the directory changes
        (its own stat, or the watcher's ``invalidate``), so a folder full of unrelated
        files costs nothing per listing.
        """
        found: dict[str, Signature] = {}
        if self.directory is None:
            return found
        for stem, suffix in self._described_files():
            if stem in found:
                continue  # .json (listed first) wins over .md
            try:
                st = os.stat(self.directory / f"{stem}{suffix}")
            except OSError:
                continue
            found[stem] = (st.st_mtime_ns, st.st_size, st.st_ino, suffix,
                           self._generation(stem))
        return found

    def _described_files(self) -> list[tuple[str, str]]:
        """(name, suffix) of every description file in the folder, ``.json`` first.

        Rescanned only when the folder's own stat changes, or when that stat is too recent
        to trust (an entry added within the file system's mtime granularity of the last
        scan would otherwise go unseen), or after ``invalidate``.
        """
        assert self.directory is not None
        try:
            st = os.stat(self.directory)
        except OSError:
            return []
        key = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
        with self._lock:
            cached = self._scan
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            with os.scandir(self.directory) as entries:
                names = [entry.name for entry in entries]
        except OSError:
            return []
        files = sorted(
            ((stem, name[len(stem):]) for name in names
             if (stem := description_name(name)) is not None),
            key=lambda item: (item[0], SUFFIXES.index(item[1])),
        )
        if time.time_ns() - st.st_mtime_ns > SCAN_TRUST_NS:
            with self._lock:
                self._scan = (key, files)
        return files

    def lookup(self, name: str) -> DescriptionFile | None:
        """The description file for ``name`` as it is on disk now (or its last good version).

        A cache hit costs one ``stat`` and no read.
        """
        return self.lookup_at(name, self.signature(name))

    def lookup_at(self, name: str, sig: Signature | None) -> DescriptionFile | None:
        """Like ``lookup`` when the caller already stat'ed the file (a listing's scan)."""
        if sig is None:
            with self._lock:
                self._cache.pop(name, None)
            return None
        with self._lock:
            entry = self._cache.get(name)
        if entry is not None and entry.signature == sig:
            return entry.parsed or entry.last_good
        last_good = (entry.parsed or entry.last_good) if entry is not None else None
        parsed = self._load(name, sig)
        with self._lock:
            self._cache[name] = _Entry(sig, parsed, parsed or last_good)
        return parsed or last_good

    def invalidate(self, name: str | None = None) -> None:
        """Make the next lookup of ``name`` (None: of every file) parse it again.

        The watcher calls this on every change it sees. It moves the file's signature on,
        so cached parses and listing memos are redone even when the stat looks the same;
        the last good version is kept for a file that no longer parses.
        """
        with self._lock:
            self._scan = None  # the watcher saw a change: which files exist may have too
            if name is None:
                self._epoch += 1
            elif len(self._generations) >= MAX_GENERATIONS and name not in self._generations:
                self._epoch += max(self._generations.values()) + 1  # stays above all of them
                self._generations = {name: 1}
            else:
                self._generations[name] = self._generations.get(name, 0) + 1

    def _generation(self, name: str) -> int:
        with self._lock:  # epoch and counts read together, never across a roll-over
            return self._epoch + self._generations.get(name, 0)

    def cached(self) -> int:
        """How many parsed files the LRU holds."""
        return len(self._cache)

    def _load(self, name: str, sig: Signature) -> DescriptionFile | None:
        assert self.directory is not None
        path = self.directory / f"{name}{sig[3]}"
        self.reads += 1
        try:
            return read_description(
                self.directory, name, sig[3], max_bytes=self.max_file_bytes
            )
        except DescriptionError as exc:
            self._log_once(path, sig, exc)
            return None
        except RecursionError as exc:
            self._log_once(path, sig, DescriptionError(f"line 1, column 1: {exc}"))
            return None
        except OSError as exc:
            # permission denied, EMFILE, EIO: may clear with no change a stat can see (a
            # chmod moves no mtime), so the failure must not stick to this signature: a new
            # generation makes the next lookup, and every memo keyed by it, try again.
            self._log_once(path, sig, exc)
            self.invalidate(name)
            return None

    def _log_once(self, path: Path, sig: Signature, exc: Exception) -> None:
        key = (path.name, sig[:4])  # once per change on disk, however often invalidated
        if key in self._logged:
            return
        if len(self._logged) > 10_000:
            self._logged.clear()
        self._logged.add(key)
        logger.warning(
            "description file not usable: %s; serving its last good version "
            "or the registered definition",
            at_path(path, exc),
        )
