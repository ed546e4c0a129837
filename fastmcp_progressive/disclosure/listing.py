"""Reducing tools for ``tools/list``: a one-line description and a stripped input schema.

Levels: ``ListingSettings.level`` says what each shows, ``listed_schema.py`` builds them.

A tool pinned "always load" (``files/store.py:is_pinned``) is listed as registered at every level.

Every level drops ``outputSchema`` (a lister made with ``output_schemas=True`` keeps it, for
a host profile that asks: FastMCP's ``Client`` types results by it) and, with ``strip_noise``,
a ``title`` that only re-cases the name and an empty ``_meta.fastmcp.tags``. A reduced tool
is memoized per tool (by object, else by content, so a mounted or proxied server's fresh
objects hit too) and description-file signature, and keeps its wire form once built, so a
repeated listing (including the hidden one FastMCP runs inside every 2026-07-28 HTTP
``tools/call``) only looks results up. Each file's listing line is remembered per
signature, so a listing after the preload (``Lister.preload``) parses nothing.

The preload reads every description file once in the background, off the request
path: parsing and validating a folder of files is the only expensive part of a first
``tools/list``. It is the first job of the watcher thread (``files/watcher.py``), which the
first request starts: the package runs no other thread of its own (#35), and requests never
wait for it. A request that arrives first is served exactly: every line is kept with the
stat signature it was read at, and a request reuses one only when its own stat agrees. The
preload is best effort (it stops at the first unexpected error, logged).
The two share the work rather than race for it: while a listing is in flight
(``Lister.holding_preload``) the thread waits between files, the listing parses what it needs
itself, once, and the thread skips every file whose line is then known (Python runs one
thread at a time, and a thread that has just parsed a file keeps running for up to the
switch interval, so a listing beside it used to take several times as long). A file one of
them is parsing when the other wants it is waited for, not parsed twice
(``Lister.file_facts``).

Example:
    ```python
    lister = Lister(store, ListingSettings(level="skeleton"))
    reduced = lister.reduce(tools)
    lister.preload()  # every file's line read once (on the watcher thread)
    ```
"""

from __future__ import annotations

import operator
import re
import threading
import time
from collections.abc import Collection, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Self

from cachetools import LRUCache
from fastmcp.tools.base import Tool, ToolResult
from pydantic import BaseModel

from fastmcp_progressive.caches import ToolCache
from fastmcp_progressive.disclosure.listed_schema import LEVELS, with_headers
from fastmcp_progressive.fastmcp_internals import default_title
from fastmcp_progressive.files.model import DescriptionFile
from fastmcp_progressive.files.store import DescriptionStore, Signature, pinned
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.settings import CacheSettings, ListingSettings

logger = get_logger("preload")

ONE_FILE_WAIT = 2.0
"""Seconds a listing waits for a file another thread is parsing before it reads it too."""
LONGEST_PAUSE = 0.5
"""Seconds the preload waits for listings in flight before it reads one more file anyway
(a server that lists without pause still gets its files read)."""

ELLIPSIS = "..."
"""Marks a cut summary; ASCII, because "…" costs extra tokens once JSON-escaped as \\u2026."""
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "approx.", "incl.", "no.", "cf.")
_LONGEST_ABBREVIATION = max(len(a) for a in _ABBREVIATIONS)
_WORD = re.compile(r"\S+")


def _head(description: str, chars: int) -> tuple[str, bool]:
    """The first ``chars`` characters of ``description`` with its whitespace collapsed, and
    whether that is all of it; reads no further than those words."""
    words: list[str] = []
    length = -1
    for word in _WORD.finditer(description):
        words.append(word.group())
        length += len(words[-1]) + 1
        if length >= chars:
            return " ".join(words)[:chars], False
    return " ".join(words), True


def summarize(description: str | None, max_chars: int) -> str:
    """The first sentence of ``description``, cut at a word boundary to ``max_chars``.

    Linear and bounded: only the words that can reach the line are looked at (a sentence
    ending past ``max_chars`` is cut there anyway), and each sentence end is checked
    against the abbreviations by its last few characters.
    """
    text, complete = _head(description or "", max_chars + 2)
    if not text:
        return ""
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if end > max_chars and not complete:
            break  # past the line: cut below, as the whole text would be
        if not text[max(0, end - _LONGEST_ABBREVIATION) : end].lower().endswith(_ABBREVIATIONS):
            text = text[:end]
            break
    return cut_line(text, max_chars)


def cut_line(text: str, max_chars: int) -> str:
    """``text`` when it fits in ``max_chars``, else cut at a word boundary with ``...``."""
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - len(ELLIPSIS)]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-") + ELLIPSIS


FileFacts = tuple[str | None, bool | None, bool, tuple[str, ...]]
"""What a listing takes from a description file: its listing line, its ``always_load``,
whether ``resolution`` rules mark the tool resolvable, and its ``groups``. Two versions of
a file with equal facts list the same (the watcher sends no ``list_changed``)."""

NO_FILE_FACTS: FileFacts = (None, None, False, ())


def listed_facts(file: DescriptionFile | None, max_chars: int) -> FileFacts:
    """Everything ``file`` changes in ``tools/list`` (``NO_FILE_FACTS`` for no file). Its
    line: its ``summary``, else its description's first sentence; None when it sets
    neither (the tool's own text is used then)."""
    if file is None:
        return NO_FILE_FACTS
    line = file.summary or (summarize(file.description, max_chars) if file.description else None)
    return (line, file.always_load, bool(file.resolution), tuple(file.groups or ()))


def _kept_fields(tool: Tool) -> Hashable:
    """The fields a listed copy keeps that its listing line and schema do not show (so the
    memo never hands one tool's ``timeout`` or ``auth`` to another): as they are when
    hashable (cheaper than ``repr``), else as text."""
    auth = tool.auth
    kept = (tuple(auth) if isinstance(auth, list) else auth, tool.timeout, tool.return_type)
    try:
        hash(kept)
    except TypeError:
        return repr(kept)
    return kept


def _fingerprint(value: Any) -> str:
    """A value's content as text: pydantic models as JSON (their repr is ten times slower)."""
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, list):
        return "[" + ",".join(_fingerprint(item) for item in value) + "]"
    return repr(value)


class ListedTool(Tool):
    """A tool as the progressive listing shows it. Never run: calls resolve the registered tool.

    Its wire form (what FastMCP sends for it) is built once and reused: a listed copy is
    never changed after the ``Lister`` made it, and rebuilding it was a third of a
    repeated listing's server time.
    """

    strip_noise: bool = True
    _wire: Any = None

    def to_mcp_tool(self, **overrides: Any) -> Any:
        if overrides and not self._restated(overrides):
            return self._build_wire(**overrides)
        private = self.__pydantic_private__  # a slot: cheaper than pydantic's __getattr__
        wire = private.get("_wire") if private is not None else None
        if wire is None:
            wire = self._wire = self._build_wire()
        return wire

    def _restated(self, overrides: dict[str, Any]) -> bool:
        """Whether ``overrides`` only restate this copy's own name and output schema: what
        FastMCP's listing passes (4.1: ``name``; 4.2: ``name`` and ``outputSchema``)."""
        return (
            overrides.keys() <= _RESTATED
            and overrides.get("name", self.name) == self.name
            and overrides.get("outputSchema", self.output_schema) is self.output_schema
        )

    def _build_wire(self, **overrides: Any) -> Any:
        wire = super().to_mcp_tool(**overrides)
        if not self.strip_noise:
            return wire
        update: dict[str, Any] = {}
        if wire.title is not None and wire.title == default_title(wire.name):
            update["title"] = None
        meta = wire.meta
        if isinstance(meta, dict) and meta.get("fastmcp") == {"tags": []}:
            rest = {k: v for k, v in meta.items() if k != "fastmcp"}
            update["meta"] = rest or None
        return wire.model_copy(update=update) if update else wire

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy whose wire form is built afresh: the kept one shows the fields before
        ``update`` (e.g. a resolution mark added to ``meta``)."""
        copied = super().model_copy(update=update, deep=deep)
        private = copied.__pydantic_private__  # the copy's own dict
        if private is not None and private.get("_wire") is not None:
            private["_wire"] = None
        return copied

    async def run(self, arguments: dict[str, Any]) -> ToolResult:  # pragma: no cover
        raise RuntimeError("a listed copy of a tool is never run")

    @classmethod
    def of(cls, tool: Tool, update: dict[str, Any]) -> Self:
        """``tool`` as a listed copy: every field FastMCP's ``Tool`` declares (``auth``,
        ``timeout``, ``return_type``, ... and any a later release adds), then ``update``.

        ``tool.model_copy(update=...)`` would keep the source's own class (a
        ``FunctionTool`` with its function), while a listed copy must be one whose wire
        form is kept and whose noise is stripped; so the fields are copied, with
        ``model_copy(update=...)``, onto a blank listed tool. They were validated when
        ``tool`` was made and are not validated again (cheaper than constructing).
        """
        blank = _BLANKS.get(cls)
        if blank is None:
            blank = _BLANKS[cls] = cls.model_construct(name="listed", parameters={})
        values = {name: getattr(tool, name) for name in _TOOL_FIELDS}
        values.update(update)
        return blank.model_copy(update=values)  # type: ignore[return-value]


_BLANKS: dict[type[ListedTool], ListedTool] = {}
_RESTATED = frozenset({"name", "outputSchema"})
_TOOL_FIELDS = tuple(Tool.model_fields)
"""Every field of FastMCP's ``Tool`` (not a subclass's: a listed copy never runs)."""


@dataclass(frozen=True)
class _LastListing:
    """One ``Lister.reduce`` call: what it was given and what it answered."""

    tools: tuple[Tool, ...]
    signatures: dict[str, Signature]
    exempt: frozenset[str]
    reduced: tuple[Tool, ...]


class Lister:
    """Turns the tools a listing would show into their reduced, memoized form."""

    def __init__(self, store: DescriptionStore, settings: ListingSettings | None = None, *,
                 cache_size: int = CacheSettings.listing, output_schemas: bool = False) -> None:
        self.settings = settings or ListingSettings()
        self.output_schemas = output_schemas
        """Whether listed copies keep the tool's ``outputSchema`` (else dropped)."""
        self.store = store
        self.cache_size = cache_size
        self._memo: ToolCache[tuple[Signature | None, Tool | None]] = ToolCache(
            cache_size, key=self._content, slot=operator.itemgetter(0, 1))  # (name, version)
        self._lines: LRUCache[str, tuple[Signature, FileFacts]] = LRUCache(cache_size)
        self._lines_lock = threading.Lock()  # the start-up preload fills it from a thread
        self._parsing: dict[str, threading.Event] = {}  # files being parsed, by name
        self._last: _LastListing | None = None  # one listing: bounded
        self._built: tuple[Tool, dict[str, Any]] | None = None  # the last schema derived
        # the preload (``preload``): done, how long it took (for benchmarks), claimed,
        # stopped (the watcher is closing), and the listings in flight it waits for
        self.preloaded = threading.Event()
        self.preload_seconds: float | None = None
        self._claimed = self._stopped = False
        self._idle = threading.Event()  # set: no listing in flight
        self._idle.set()
        self._listings = 0
        if store.directory is None:
            self.preloaded.set()  # nothing to read

    def reduce(self, tools: Sequence[Tool], exempt: Collection[str] = (), *,
               remember: bool = True) -> list[Tool]:
        """The listing as progressive clients see it, in the same order; ``exempt`` as is.

        The same tool objects with the same files and exemptions as the last call give
        the last answer again without a lookup per tool (a local server's repeated
        listing); anything else goes tool by tool through the memo. ``remember=False``
        leaves the last listing kept as it is (a one-off listing, such as the net-cost
        check's whole catalog, must not make the next client listing start over).
        """
        return list(self.reduced(tools, exempt, remember=remember)[0])

    def reduced(self, tools: Sequence[Tool], exempt: Collection[str] = (), *,
                remember: bool = True) -> tuple[tuple[Tool, ...], Mapping[str, Signature]]:
        """``reduce``'s answer as the tuple this lister keeps (the very same object while
        tools, files and exemptions stay the same, so a caller can memoize what it derives
        from it by identity; never changed once made), and the file signatures it was
        made from (the listing's marks reuse them rather than stat every file again)."""
        signatures = self.store.signatures([tool.name for tool in tools])
        exempt = frozenset(exempt)
        last = self._last
        if (last is not None and last.exempt == exempt and last.signatures == signatures
                and len(last.tools) == len(tools) and all(map(operator.is_, last.tools, tools))):
            return last.reduced, last.signatures
        reduced = tuple([
            tool if tool.name in exempt else self._reduced(tool, signatures.get(tool.name))
            for tool in tools
        ])
        if remember:
            self._last = _LastListing(tuple(tools), signatures, exempt, reduced)
        return reduced, signatures

    def summary(self, tool: Tool, sig: Signature | None) -> str:
        """The one line shown for ``tool``: its file's line, else its own first sentence."""
        line = self.file_facts(tool.name, sig)[0] if sig is not None else None
        return line or summarize(tool.description or tool.title,
                                 self.settings.summary_max_chars)

    def file_facts(self, name: str, sig: Signature) -> FileFacts:
        """What a listing needs from ``name``'s file as of ``sig``, parsing it only when unseen.

        Kept only for the very signature it was read at, so a file edited since (or
        invalidated by the watcher) is parsed again: never a stale line. A file another
        thread is parsing right now (the start-up preload, or a request) is waited for,
        not parsed twice.
        """
        while True:
            with self._lines_lock:
                known = self._lines.get(name)
                if known is not None and known[0] == sig:
                    return known[1]
                parsing = self._parsing.get(name)
                if parsing is None:
                    parsing = self._parsing[name] = threading.Event()
                    break
            if not parsing.wait(ONE_FILE_WAIT):
                break  # the other thread is stuck: read it here rather than hang
        try:
            file = self.store.lookup_at(name, sig)
            facts = listed_facts(file, self.settings.summary_max_chars)
            with self._lines_lock:
                self._lines[name] = (sig, facts)
        finally:
            with self._lines_lock:
                if self._parsing.get(name) is parsing:
                    del self._parsing[name]
            parsing.set()
        return facts

    def served_facts(self) -> dict[str, FileFacts]:
        """The facts last read for each file, by tool name: what listings since showed
        (the watcher compares them with the files once armed, ``hot_reload.py``)."""
        with self._lines_lock:
            return {name: facts for name, (_, facts) in self._lines.items()}

    def share_file_facts(self, other: Lister) -> None:
        """Use ``other``'s per-signature file facts (they do not depend on the level)."""
        if other.settings.summary_max_chars == self.settings.summary_max_chars:
            self._lines, self._lines_lock = other._lines, other._lines_lock
            self._parsing = other._parsing

    # -- the preload: the watcher thread's first job (none of its own, #35) -------------------
    @contextmanager
    def holding_preload(self) -> Iterator[None]:
        """Hold the preload between files while the block (a listing) runs."""
        if self.preloaded.is_set():
            yield
            return
        with self._lines_lock:
            self._listings += 1
            self._idle.clear()
        try:
            yield
        finally:
            with self._lines_lock:
                self._listings -= 1
                if not self._listings:
                    self._idle.set()

    def stop_preload(self) -> None:
        """End a preload in progress at its next file (the watcher it runs on is closing);
        files not read yet are read on demand."""
        self._stopped = True
        self._idle.set()

    def preload(self) -> bool:
        """Read every file once, on the calling thread (the watcher's); False when there is
        nothing to read or it ran already (a watcher started again reads nothing)."""
        with self._lines_lock:
            if self._claimed or self.preloaded.is_set():
                return False
            self._claimed = True
        began = time.perf_counter()
        try:
            for name, sig in self.store.signatures().items():
                self._idle.wait(LONGEST_PAUSE)
                if self._stopped:
                    break
                self.file_facts(name, sig)  # known already: a dictionary probe
        except Exception:
            logger.exception("preloading description files failed; they are read on demand")
        finally:
            self.preload_seconds = time.perf_counter() - began
            self.preloaded.set()
            self._idle.set()
        return True

    def _content(self, tool: Tool) -> Hashable:
        """What a reduced tool is made of: equal for a mounted or proxied copy of a tool.

        The listed schema stands in for the registered one (the reduced tool depends on
        nothing else of it), which keeps the key small and cheap to build.
        """
        return (
            tool.name, tool.version, tool.title, tool.description,
            _fingerprint(tool.annotations), _fingerprint(tool.icons), repr(tool.meta),
            tuple(sorted(tool.tags)), _fingerprint(tool.execution), repr(tool.task_config),
            repr(self._schema(tool)),
            _kept_fields(tool),
            repr(tool.output_schema) if self.output_schemas else None,
        )

    def _schema(self, tool: Tool) -> dict[str, Any]:
        """``tool``'s listed schema, built afresh (no dict or list shared with the registered
        schema or another listed copy, so no deep copy is needed), and kept for the
        ``_reduced`` that follows the content key's computation: derived once per tool."""
        # every level keeps the ``x-mcp-header`` properties: Mcp-Param-* headers need them
        schema = with_headers(LEVELS[self.settings.level](tool.parameters), tool.parameters)
        self._built = (tool, schema)
        return schema

    def _listed_schema(self, tool: Tool) -> dict[str, Any]:
        """The schema ``_content`` just built for this very ``tool``, else a new one."""
        built, self._built = self._built, None
        return built[1] if built is not None and built[0] is tool else self._schema(tool)

    def _reduced(self, tool: Tool, sig: Signature | None) -> Tool:
        memo: tuple[Signature | None, Tool | None] | None = self._memo.get(tool)
        if memo is not None and memo[0] == sig:
            return memo[1] or tool  # None: pinned, listed as registered
        if pinned(tool, self.file_facts(tool.name, sig)[1] if sig is not None else None):
            self._memo.put(tool, (sig, None))
            return tool
        reduced = ListedTool.of(tool, {
            "description": self.summary(tool, sig),
            "parameters": self._listed_schema(tool),
            "output_schema": tool.output_schema if self.output_schemas else None,
            "strip_noise": self.settings.strip_noise,
        })
        self._memo.put(tool, (sig, reduced))
        return reduced
