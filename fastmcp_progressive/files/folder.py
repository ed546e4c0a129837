"""The descriptions folder on disk: which files describe which tool, and reading one safely.

One file per tool, named ``<tool>.json`` or ``<tool>.md`` directly in the folder. When
both exist the ``.json`` one is read (``SUFFIXES`` is in that order); hidden files, other
extensions and names that could not name a file safely are not description files. The
store (``store.py``), the watcher and ``check`` all ask this module, so the rules
for what counts, what wins and what may be opened are written once: the checker only adds
why it passes a file over.

A relative folder (``descriptions_dir="tool_descriptions"``) is found beside the file that
builds the middleware (``anchored``), as Flask finds an app's templates beside its module:
``fastmcp list /srv/app/server.py`` run from elsewhere must read ``/srv/app/tool_descriptions``,
not a folder of that name in the working directory. Code with no file on disk (``python
-c``, a REPL, a zipapp) falls back to the working directory, with a WARNING naming the
folder served.

Reading refuses anything that could escape the folder or hang: path tricks in the name,
symlinks pointing out of it, a link swapped in at the last moment, FIFOs and oversized
files.

Example:
    ```python
    scan = read_folder(Path("tool_descriptions"))
    scan.files  # {"add": ".json", "notes": ".md"}
    read_description(Path("tool_descriptions"), "add", ".json")  # DescriptionFile
    ```
"""

from __future__ import annotations

import inspect
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from fastmcp_progressive.files.errors import DescriptionError, position
from fastmcp_progressive.files.model import DescriptionFile
from fastmcp_progressive.files.parsing import parse_text
from fastmcp_progressive.log import get_logger

SUFFIXES = (".json", ".md")
"""Description-file extensions, in precedence order: ``<tool>.json`` wins over ``<tool>.md``."""
MAX_FILE_BYTES = 1 << 20

logger = get_logger("descriptions")


def anchored(folder: str | os.PathLike[str]) -> tuple[Path, Path | None]:
    """``folder`` as an absolute path, and the file a relative one was resolved against.

    That file is the innermost caller outside this package (the user's module that calls
    ``ProgressiveDisclosure(...)`` or ``progressive_proxy(...)``): its code's file, else its
    module's ``__file__`` (a dataclass's ``default_factory=partial(...)`` runs in generated
    code whose file is ``<string>``, in the module's globals). None when ``folder`` is
    absolute or the caller has no file on disk (a REPL, ``python -c``, a zipapp); then the
    working directory anchors it, and a WARNING names the folder served and the fix.
    """
    path = Path(folder).expanduser()
    if path.is_absolute():
        return path, None
    source = _caller_file()
    if source and os.path.isfile(source):
        origin = Path(source).absolute()
        return origin.parent / path, origin
    served = path.absolute()
    logger.warning(
        "descriptions_dir %r is relative and the code building the middleware (%s) is not a "
        "file on disk, so it is resolved in the working directory: serving %s. Pass an "
        "absolute path to serve another folder", os.fspath(folder), source or "unknown", served)
    return served, None


def _caller_file() -> str:
    """The file of the innermost caller outside this package, or its module's ``__file__``
    when its code has none; "" when there is no such caller."""
    package = __name__.split(".", 1)[0]
    frame = inspect.currentframe()
    try:
        while frame is not None:
            module = frame.f_globals.get("__name__", "")
            if module != package and not module.startswith(package + "."):
                break
            frame = frame.f_back
        if frame is None:
            return ""
        source = frame.f_code.co_filename
        if not os.path.isfile(source):
            module_file = frame.f_globals.get("__file__")
            source = module_file if isinstance(module_file, str) and module_file else source
        return source
    finally:
        del frame  # a frame kept alive keeps its caller's locals alive


def safe_file_name(name: str) -> bool:
    """Whether ``name`` can name a file directly inside the directory (no path tricks)."""
    return (0 < len(name) <= 200 and not name.startswith(".")  # "." and ".." too
            and not any(c in name for c in "/\\\x00:") and name.isprintable())


def _candidate(entry: str) -> tuple[str, str] | None:
    """(stem, suffix) of a folder entry named like a description file (hidden ones are not)."""
    stem, dot, ext = entry.rpartition(".")
    if not dot or dot + ext not in SUFFIXES or entry.startswith("."):
        return None
    return stem, dot + ext


def description_name(path: str | os.PathLike[str]) -> str | None:
    """The tool a file in the directory describes, or None for any other file."""
    found = _candidate(os.path.basename(path))
    return found[0] if found is not None and safe_file_name(found[0]) else None


@dataclass(frozen=True)
class FolderScan:
    """What a folder's entries say about description files."""

    present: dict[str, tuple[str, ...]]
    """Tool name -> the suffixes of its files, in precedence order (the first is read)."""
    unusable: tuple[str, ...]
    """Entries named like a description file whose stem cannot name a tool."""

    @property
    def files(self) -> dict[str, str]:
        """Tool name -> the suffix of the file that is read for it."""
        return {name: suffixes[0] for name, suffixes in self.present.items()}


def read_folder(directory: Path) -> FolderScan:
    """Sort the entries of ``directory`` (its top level only) into description files per
    tool, in name order; raises ``OSError``."""
    present: dict[str, list[str]] = {}
    unusable: list[str] = []
    for entry in os.listdir(directory):
        found = _candidate(entry)
        if found is None:
            continue
        stem, suffix = found
        if safe_file_name(stem):
            present.setdefault(stem, []).append(suffix)
        else:
            unusable.append(entry)
    return FolderScan({stem: tuple(sorted(present[stem], key=SUFFIXES.index))
                       for stem in sorted(present)}, tuple(sorted(unusable)))


READ_ATTEMPTS = 3
"""Reads of one file that changed while being read, before giving up until the next lookup."""


class ChangedWhileRead(OSError):
    """The file was rewritten in place while it was being read (an editor or a script not
    writing atomically): what was read may mix two versions, so it is not used."""


def _whole_read(handle: BinaryIO, max_bytes: int) -> bytes:
    """The file's bytes as one version: a read during an in-place rewrite can return the
    start of the old content and the end of the new (valid JSON saying neither), so the
    read is kept only when the file's size and times did not move during it and the bytes
    read are as many as it holds."""
    fd = handle.fileno()
    for _ in range(READ_ATTEMPTS):
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise DescriptionError("not a regular file")
        handle.seek(0)
        raw = handle.read(max_bytes + 1)
        after = os.fstat(fd)
        settled = (before.st_size, before.st_mtime_ns, before.st_ctime_ns) == (
            after.st_size, after.st_mtime_ns, after.st_ctime_ns)
        if settled and (len(raw) == after.st_size or len(raw) > max_bytes):
            return raw
    raise ChangedWhileRead(f"changed while being read, {READ_ATTEMPTS} times in a row")


def read_description(directory: Path, name: str, suffix: str, *,
                     max_bytes: int = MAX_FILE_BYTES) -> DescriptionFile:
    """Read and validate ``<directory>/<name><suffix>``, refusing anything that escapes it.

    Shared by the store (which logs and falls back) and ``check`` (which reports). A name
    with path tricks is refused before any I/O; a file that does not resolve to a file
    directly in ``directory`` (a symlink pointing out, or into a subfolder) is refused
    unread, the final open does not follow a link swapped in after that check, and only
    regular files are read (a FIFO would hang). Raises ``DescriptionError`` or ``OSError``.
    """
    if not safe_file_name(name) or suffix not in SUFFIXES:
        raise DescriptionError(f"{name + suffix!r} cannot name a description file")
    real = Path(os.path.realpath(directory / f"{name}{suffix}"))
    if real.parent != Path(os.path.realpath(directory)):
        raise DescriptionError("the file links outside the descriptions folder (only files "
                               "directly in it are read)")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    with os.fdopen(os.open(real, flags), "rb") as handle:  # O_NONBLOCK: a FIFO never blocks
        raw = _whole_read(handle, max_bytes)
    if len(raw) > max_bytes:
        raise DescriptionError(f"larger than {max_bytes} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = position(raw, exc.start)
        raise DescriptionError(f"line {line}, column {column}: byte {exc.start} is not valid "
                               "UTF-8") from None
    return parse_text(text, suffix, name)
