"""The description store: one folder's description files, parsed on demand and cached, and
what the package serves from them: each tool's full definition and whether it is pinned.

The middleware, the listing, the definitions and the watcher ask the store, never the
disk. Files are read lazily and checked with one ``stat`` per read: a changed
mtime/size/inode means "parse again", so an edit is served by the next read with no
restart and no watcher needed for correctness (the watcher invalidates eagerly, which
also catches the rare edit a stat cannot see, and notifies clients).
Parsed files sit in a bounded LRU; a file that stops parsing keeps its last good version
being served, and its error is logged once per change, never sent to a client.

What counts as a description file and how one is read safely is ``folder.py``; what a
file means is ``parsing.py``; the model it becomes is ``model.py``.

The stats are cheap (``stats_in``): a listing stats the description file of every tool it
lists on every request, and a ``stat`` relative to the folder's open descriptor skips
building a ``Path`` and the kernel's walk of the whole folder path, about two thirds of the
cost. Opening the descriptor has a cost of its own that grows with the folder on some file
systems (17 ms at 50,000 entries), so for a few files (``few=True``) plain paths are used.

The full definition served for one tool (``Definitions``) is its registered form with its
file merged over it: a tool needs no file (its registered name, description, schemas and
annotations already make a full definition); a file adds examples and guidance, or
overrides any field. Each definition carries a ``digest``: the SHA-256 of its RFC 8785
(JCS) canonical JSON, the form tool-manifest proposals assume, so a client can cache it,
notice when it changes, and recompute it with any JCS implementation. Every schema served
or compared has its ``$ref`` inlined (``inline_refs``): several hosts cannot follow one.

A tool is pinned "always load" (listed in full and never gated) when any of these says so:
its description file's ``"always_load": true`` (``false`` there unpins, whatever the tool
says: the file is the author's last word); the FastMCP tag ``always_load``
(``@mcp.tool(tags={"always_load"})``); ``meta`` ``"io.github.fastmcp-progressive/alwaysLoad":
true``; or ``meta`` ``"anthropic/alwaysLoad": true``, the flag Claude Code reads to load a
tool up front (the author already declared the same intent).

Example:
    ```python
    store = DescriptionStore("tool_descriptions")
    store.lookup("create_invoice")  # DescriptionFile | None
    definition, text = Definitions(store).for_tool(tool)  # built once per file change
    definition["digest"]  # "sha256:..."
    ```
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
import weakref
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachetools import LRUCache
from fastmcp.tools.base import Tool

from fastmcp_progressive.caches import compact
from fastmcp_progressive.files.definitions import full_definition
from fastmcp_progressive.files.errors import DescriptionError, at_path
from fastmcp_progressive.files.folder import (
    MAX_FILE_BYTES,
    SUFFIXES,
    FolderScan,
    read_description,
    read_folder,
    safe_file_name,
)
from fastmcp_progressive.files.model import DescriptionFile
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.settings import CacheSettings

logger = get_logger("descriptions")

SCAN_TRUST_NS = 2_000_000_000  # a folder stat younger than this may hide a new entry
FEW_FILES = 32  # files stat'ed by full path rather than through a directory descriptor
MAX_GENERATIONS = 100_000  # names with their own invalidation count before one epoch bump

StatFile = Callable[[str], os.stat_result]
"""A ``stat`` of a plain file name inside one folder (``stats_in``)."""

Signature = tuple[int, int, int, str, int]
"""(mtime_ns, size, inode, suffix, generation) of a description file: equal means unchanged.

``generation`` grows with every ``invalidate`` covering the file, so an edit a stat cannot
see (same size and inode, within the mtime granularity) still gives a new signature once
the watcher reports it: to the store and to every memo keyed by signatures (the listing).
"""


@dataclass
class Served:
    """The full definition served for a tool, as its file of ``signature`` says: found
    again by the very ``tool`` object or, for a mounted or proxied copy (a new object per
    request), by its registered ``content``; ``text``, its JSON, once a read asks."""

    signature: Signature | None
    tool: weakref.ref[Tool]
    content: Hashable
    definition: dict[str, Any]
    text: str | None = None


@dataclass(frozen=True)
class _Entry:
    """What the store keeps per name: the file parsed at ``signature`` (None: no file,
    only a definition served), its last good version, and the definition served."""

    signature: Signature | None
    parsed: DescriptionFile | None
    last_good: DescriptionFile | None
    served: Served | None = None


class DescriptionStore:
    """Description files of one directory, parsed on demand and cached by file signature."""

    def __init__(self, directory: str | os.PathLike[str] | None, *, origin: Path | None = None,
                 cache_size: int = CacheSettings.definitions,
                 max_file_bytes: int = MAX_FILE_BYTES) -> None:
        if cache_size < 1:
            raise ValueError("cache_size must be at least 1")
        self.directory = Path(directory).absolute() if directory is not None else None
        # one string prefix: a ``Path`` built per stat cost as much as the stat itself
        self._prefix = os.path.join(self.directory, "") if self.directory is not None else ""
        self.max_file_bytes = max_file_bytes
        self._cache: LRUCache[str, _Entry] = LRUCache(maxsize=cache_size)
        self._lock = threading.Lock()
        self._logged: set[tuple[str, tuple[int, int, int, str]]] = set()
        self._epoch = 0  # invalidate(): every file
        self._generations: dict[str, int] = {}  # invalidate(name): that file
        self._scan: tuple[tuple[int, int, int, int], FolderScan] | None = None
        if self.directory is not None and not self.directory.is_dir():
            # loud, and with the path it looked at: a wrong folder otherwise only shows as
            # listings that quietly lack every hand-written summary
            logger.warning("descriptions directory %s does not exist%s: every tool is described "
                           "by its registered definition until it appears", self.directory,
                           f" (resolved beside {origin})" if origin is not None else "")

    def signature(self, name: str) -> Signature | None:
        """The stat signature of the file describing ``name``, or None when there is none."""
        if self.directory is None:
            return None
        kept = self._scan  # the folder's last trusted scan: its names are safe file names
        known = kept[1].present.get(name) if kept is not None else None
        if known is not None:  # a warm request: only the suffixes the folder holds (#35)
            found = self._stat_first(name, known)
            if found is not None:
                return found
        return self._stat_first(name, SUFFIXES) if safe_file_name(name) else None

    def _stat_first(self, name: str, suffixes: Sequence[str]) -> Signature | None:
        """The signature of the first of ``name``'s files (in ``suffixes``' order) found."""
        for suffix in suffixes:
            try:
                st = os.stat(f"{self._prefix}{name}{suffix}")
            except (OSError, ValueError):
                continue
            with self._lock:  # epoch and counts read together, never across a roll-over
                generation = self._epoch + self._generations.get(name, 0)
            return (st.st_mtime_ns, st.st_size, st.st_ino, suffix, generation)
        return None

    def signatures(self, names: Iterable[str] | None = None) -> dict[str, Signature]:
        """Signatures of the description files of ``names`` (None: of every file in the
        folder), one ``stat`` per file.

        Which files exist comes from a directory scan kept until the directory changes
        (its own stat, or the watcher's ``invalidate``), so a listing stats only the files
        of the tools it lists: its cost follows the listed tools, never the folder (50,000
        files of tools that do not exist cost a listing nothing), and each listed tool's
        file is stat'ed, so an edit is served by the very next listing.
        """
        found: dict[str, Signature] = {}
        if self.directory is None:
            return found
        present = self._described_files()
        wanted: Collection[tuple[str, tuple[str, ...]]] = (
            present.items() if names is None
            else [(n, present[n]) for n in dict.fromkeys(names) if n in present])
        stats: list[tuple[str, int, int, int, str]] = []
        keep = stats.append
        few = len(wanted) <= FEW_FILES  # a descriptor costs more than it saves on these
        # one tight loop (a listing runs it over every listed tool): the stat fields taken
        # at once, no stat_result kept, no second pass building tuples
        with stats_in(self.directory, few=few) as stat_file:  # a third of full paths' cost
            for stem, suffixes in wanted:
                for suffix in suffixes:  # precedence order: the first that stats is read
                    try:
                        st = stat_file(stem + suffix)
                    except OSError:
                        continue
                    keep((stem, st.st_mtime_ns, st.st_size, st.st_ino, suffix))
                    break
        with self._lock:  # read after the stats, as each file's generation always was
            epoch, generations = self._epoch, dict(self._generations)
        if not generations:
            return {stem: (mtime, size, ino, suffix, epoch)
                    for stem, mtime, size, ino, suffix in stats}
        return {stem: (mtime, size, ino, suffix, epoch + generations.get(stem, 0))
                for stem, mtime, size, ino, suffix in stats}

    def signatures_known(self, names: Sequence[str],
                         known: Mapping[str, Signature] | None) -> Mapping[str, Signature]:
        """``signatures(names)``, taking those in ``known`` (the same listing's stats, made
        a moment ago) as they are and stat'ing only the rest: a listing marked for the
        grouping and resolution extensions stats each file once, not three times."""
        if known is None:
            return self.signatures(names)
        missing = [name for name in names if name not in known]
        extra = self.signatures(missing) if missing else {}
        return {**known, **extra} if extra else known

    def _described_files(self) -> dict[str, tuple[str, ...]]:
        """Every tool with description files in the folder, and their suffixes (precedence order).

        Rescanned only when the folder's own stat changes, or when that stat is too recent
        to trust (an entry added within the file system's mtime granularity of the last
        scan would otherwise go unseen), or after ``invalidate``.
        """
        assert self.directory is not None
        try:
            st = os.stat(self.directory)
        except OSError:
            return {}
        key = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
        with self._lock:
            cached = self._scan
        if cached is not None and cached[0] == key:
            return cached[1].present
        try:
            scan = read_folder(self.directory)
        except OSError:
            return {}
        if time.time_ns() - st.st_mtime_ns > SCAN_TRUST_NS:
            with self._lock:
                self._scan = (key, scan)
        return scan.present

    def lookup(self, name: str) -> DescriptionFile | None:
        """The description file for ``name`` as it is on disk now (or its last good version).

        A cache hit costs one ``stat`` and no read.
        """
        return self.lookup_at(name, self.signature(name))

    def lookup_at(self, name: str, sig: Signature | None) -> DescriptionFile | None:
        """Like ``lookup`` when the caller already stat'ed the file (a listing's scan)."""
        if sig is None:
            with self._lock:
                entry = self._cache.get(name)
                if entry is not None and entry.signature is not None:  # the file went
                    del self._cache[name]
            return None
        with self._lock:
            entry = self._cache.get(name)
        if entry is not None and entry.signature == sig:
            return entry.parsed or entry.last_good
        last_good = (entry.parsed or entry.last_good) if entry is not None else None
        parsed = self._load(name, sig)
        with self._lock:
            self._cache[name] = _Entry(sig, parsed, parsed or last_good,
                                       entry.served if entry is not None else None)
        return parsed or last_good

    def served(self, tool: Tool, sig: Signature | None,
               build: Callable[[], dict[str, Any]]) -> Served:
        """The definition kept for ``tool`` (this very object, else one of equal content)
        and its file of signature ``sig``; when none is, ``build()``'s, kept in place of
        what its name served before."""
        with self._lock:
            entry = self._cache.get(tool.name)
        kept = entry.served if entry is not None else None
        if kept is not None and kept.signature == sig and (
                kept.tool() is tool or kept.content == compact(registered_content(tool))):
            return kept
        served = Served(sig, weakref.ref(tool), compact(registered_content(tool)), build())
        with self._lock:
            entry = self._cache.get(tool.name)
            self._cache[tool.name] = (_Entry(None, None, None, served) if entry is None
                                      else dataclasses.replace(entry, served=served))
        return served

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

    def _load(self, name: str, sig: Signature) -> DescriptionFile | None:
        assert self.directory is not None
        path = self.directory / f"{name}{sig[3]}"
        try:
            return read_description(self.directory, name, sig[3], max_bytes=self.max_file_bytes)
        except DescriptionError as exc:  # every way its text fails (``parse_text``)
            self._log_once(path, sig, exc)
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
        logger.warning("description file not usable: %s; serving its last good version or "
                       "the registered definition", at_path(path, exc))


@contextmanager
def stats_in(directory: Path, *, few: bool = False) -> Iterator[StatFile]:
    """A ``stat`` of a plain file name inside ``directory`` (following symlinks, like
    ``os.stat``); raises ``OSError`` as ``os.stat`` does, the folder missing included.
    ``few``: only a few files will be stat'ed (no directory descriptor is opened)."""
    fd: int | None = None
    if not few and os.stat in os.supports_dir_fd:
        try:
            fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            fd = None
    if fd is None:
        prefix = os.path.join(directory, "")
        yield lambda name: os.stat(prefix + name)
        return
    try:
        yield lambda name: os.stat(name, dir_fd=fd)
    finally:
        os.close(fd)


# -- the full definitions served, kept with each name's file --------------------------------
class Definitions:
    """Full definitions, built once per tool (by object, else by content) and file change.

    Kept in the store's entry for the tool's name, beside its parsed file (one bounded
    map, one entry per name: ``DescriptionStore.served``), so a hit costs the file's
    ``stat`` (an edit is served by the next read) and a dictionary lookup; the merge,
    schema inlining and digest run once per change. The content key lets a mounted or
    proxied server's fresh tool objects hit as well.

    ``folder``: the description files, a ``DescriptionStore`` or the folder one is made of
    (``origin``: where a relative one was resolved, for its warning; at most
    ``cache_size`` names kept), so the store is built once, here.
    """

    def __init__(self, folder: DescriptionStore | str | os.PathLike[str] | None, *,
                 origin: Path | None = None, cache_size: int = CacheSettings.definitions) -> None:
        self.store = (folder if isinstance(folder, DescriptionStore)
                      else DescriptionStore(folder, origin=origin, cache_size=cache_size))

    def for_tool(self, tool: Tool) -> tuple[dict[str, Any], str]:
        """The full definition of ``tool`` as its file says now, and its compact JSON."""
        kept = self._kept(tool, self.store.signature(tool.name))
        if kept.text is None:  # first asked for by a refusal, which needs no text
            kept.text = compact_json(kept.definition)
        return kept.definition, kept.text

    def definition(self, tool: Tool, sig: Signature | None) -> dict[str, Any]:
        """The full definition alone, as the file of signature ``sig`` says (the caller
        stat'ed it): a refusal puts it in its own body, so its JSON is not written here."""
        return self._kept(tool, sig).definition

    def _kept(self, tool: Tool, sig: Signature | None) -> Served:
        """The definition kept for ``tool`` and file signature ``sig``, made and kept if
        none was."""
        return self.store.served(
            tool, sig, lambda: full_definition(tool, self.store.lookup_at(tool.name, sig)))


def registered_content(tool: Tool) -> Hashable:
    """The fields ``registered_definition`` reads: equal for a mounted or proxied copy."""
    return (tool.name, tool.title, tool.description, repr(tool.parameters),
            repr(tool.output_schema), repr(tool.annotations), repr(tool.execution),
            repr(tool.task_config))


def compact_json(value: Any) -> str:
    """JSON as served: compact separators, non-ASCII kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- always-load pins ----------------------------------------------------------------------------
ALWAYS_LOAD_TAG = "always_load"
ALWAYS_LOAD_META = "io.github.fastmcp-progressive/alwaysLoad"
ANTHROPIC_ALWAYS_LOAD = "anthropic/alwaysLoad"


def is_pinned(tool: Tool, file: DescriptionFile | None) -> bool:
    """Whether ``tool`` is listed in full and never gated (see the module docstring)."""
    return pinned(tool, file.always_load if file is not None else None)


def pinned(tool: Tool, file_says: bool | None) -> bool:
    """``is_pinned`` when the file's ``always_load`` is already known (listings keep it)."""
    if file_says is not None:
        return file_says
    meta = tool.meta if isinstance(tool.meta, Mapping) else {}
    return (ALWAYS_LOAD_TAG in (tool.tags or ()) or meta.get(ALWAYS_LOAD_META) is True
            or meta.get(ANTHROPIC_ALWAYS_LOAD) is True)
