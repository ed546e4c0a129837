"""Tools found by words: ``describe_tools({"query": "create a pull request"})``.

A listing within a budget names few tools, and a model looking for one it cannot see
should not have to page through groups first: it says what it wants to do and gets the
best matching tools the caller may see. Each tool is ranked as one document: its name, the
name split into words (at ``_``, ``-``, ``.`` and camelCase: ``createPullRequest`` reads
``create pull request``), its title, its listing line, its description (the file's,
else the registered one), its argument names and the words its arguments' descriptions
use, so an edit of a description file ranks by its new words on the next query (hot
reload). A word counts once in each part of the definition that says it (``document``),
and once in a query: how many parts say a word (the name, what its listing shows, its
description) tells how central it is to the tool, how often one paragraph repeats it does
not, so a description that says "pull request" four times does not outrank the tool that
also says the query's rarer word.

A query is taken as it comes: a task's whole text longer than ``MAX_QUERY_CHARS`` is cut
there, at a word's end, and ranked (the answer says so: ``query_truncated``), not refused;
a model that sees a task's several steps asks for them in one call (``queries``, at most
``MAX_QUERIES``), each ranked on its own.

The ranking is Okapi BM25 (``index.py``: FastMCP's own scoring, a plural finding its
singular, stop words left out, the best matches' words asked for too).
Which tools are documents is decided by the caller of the query, as a read decides
(``describer.py:Describer.visible_tools``): a hidden tool is never ranked. An index is
built once per catalog (the documents, in order), in a worker thread (a 2,000-tool one
takes about half a second, and every other client is served meanwhile), and kept in a bounded
``cachetools`` cache counted in bytes (``INDEX_BYTES``), so each caller's view (a tenant
sees its own tools) keeps its index and a query does not rebuild; each tool's document is
kept per tool content and description-file signature (``caches.py:ToolCache``). A catalog
whose index is larger than the whole cache is indexed for each query.

Example:
    ```python
    search = ToolSearch(definitions, line_of=lister_line)
    await search.rank(visible_tools, ["create a pull request"], limit=10)
    # [['create_pull_request', 'update_pull_request', ...]]
    ```
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
from cachetools import LRUCache
from fastmcp.tools.base import Tool

from fastmcp_progressive.caches import ToolCache
from fastmcp_progressive.disclosure.index import Index, terms
from fastmcp_progressive.files.store import Definitions, Signature, registered_content

MAX_QUERY_CHARS = 1_000
"""Where a query is cut: a sentence or a task's text is ranked whole, a document by its
start (the work stays bounded; past a task's text more words only blur the ranking)."""
MAX_QUERIES = 5
"""The most queries one call ranks (``queries``: a task's steps); more are left off, said."""
FULL_RESULTS = 5
"""How many of the best matches a query answers with full definitions (and grants), at most:
beyond the best one, only while their definitions fit ``ANSWER_CHARS``."""
ANSWER_CHARS = 4_000
"""The most characters of full definitions a query answers with beyond its best match (about
1,000 o200k tokens): the answer stays in the conversation for every later model request, and
one large definition (github-mcp-server's ``projects_write``: 2,042 tokens) would otherwise
cost more than the listing saves. A match that does not fit is named one line each."""
LINE_RESULTS = 5
"""How many further matches one query names, one line each (besides the ones that did not
fit); each of several queries answers its ``FULL_RESULTS`` best in all."""
INDEX_BYTES = 64 * 1024 * 1024
"""What the kept indexes may hold together (``index.py:Index.size``, one index per distinct
catalog): about 1.6 KB a tool, so some 20 views of a 2,000-tool catalog."""
DOCUMENTS_KEPT = 20_000
"""How many tools' documents are kept (per tool content and file signature)."""
BUILD_THREADS = 2
"""Worker threads index builds may hold at once (a limiter of their own: builds never
starve FastMCP's sync tools of threads)."""

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_SPACE = re.compile(r"\s")


def name_words(name: str) -> str:
    """``name`` as words: split at separators and camelCase, lower case.

    ``createPullRequest`` and ``create-pull-request`` both read ``create pull request``;
    an acronym stays whole (``getHTTPStatus``: ``get http status``).
    """
    return " ".join(word.lower() for word in _WORDS.findall(name))


def distinct_words(text: str) -> str:
    """``text``'s words, each once, as the index's tokenizer reads them (``index.py:terms``:
    NFKC, case folded, runs of two or more letters or digits).

    BM25 counts a word as often as a text says it: a description that says "PR" four
    times would outweigh the tool that merges one.
    """
    return " ".join(dict.fromkeys(terms(text)))


def document(definition: Mapping[str, Any], line: str | None) -> str:
    """The words a tool is ranked by, each once per part of ``definition`` (the full
    definition a read returns) that says it: the name, the name's words, what a listing
    shows (title and ``line``), the description, the argument names, and the words the
    arguments' descriptions use."""
    name = str(definition.get("name", ""))
    shown = [text for text in (definition.get("title"), line) if isinstance(text, str)]
    parts = [name, name_words(name), " ".join(shown), definition.get("description")]
    schema = definition.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(properties, dict):
        parts.append(" ".join(name_words(argument) for argument in properties))
        parts.append(" ".join(str(spec.get("description") or "")
                              for spec in properties.values() if isinstance(spec, dict)))
    return "\n".join(distinct_words(part) for part in parts if isinstance(part, str) and part)


@dataclass(frozen=True)
class Queries:
    """What a call asks to find: each text (cut at ``MAX_QUERY_CHARS``), whether one was
    cut, and how many texts past ``MAX_QUERIES`` were left off."""

    texts: tuple[str, ...]
    cut: bool = False
    left_off: int = 0

    def notes(self) -> dict[str, str]:
        """What the answer says about the queries as sent (nothing when taken whole)."""
        said: dict[str, str] = {}
        if self.cut:
            said["query_truncated"] = f"ranked by its first {MAX_QUERY_CHARS} characters"
        if self.left_off:
            said["queries_left_off"] = (f"{self.left_off} past the first {MAX_QUERIES}: "
                                        "ask for them in another call")
        return said


def cut_query(text: str) -> str:
    """``text``, or its first ``MAX_QUERY_CHARS`` characters ending where a word ends."""
    if len(text) <= MAX_QUERY_CHARS:
        return text
    head = text[:MAX_QUERY_CHARS]
    if not _SPACE.match(text[MAX_QUERY_CHARS]):
        spaces = [m.start() for m in _SPACE.finditer(head)]
        head = head[:spaces[-1]] if spaces else head
    return head


def queries_of(arguments: Mapping[str, Any]) -> Queries | str | None:
    """The queries a ``describe_tools`` call sends (``query``, then ``queries``), None when
    it sends none, or why they cannot be ranked: not strings, or no words at all."""
    query, more = arguments.get("query"), arguments.get("queries")
    if query is None and more is None:
        return None
    if query is not None and not isinstance(query, str):
        return f"'query' is one string of words, not {type(query).__name__}"
    if isinstance(more, str):
        more = [more]
    if more is not None and not (isinstance(more, list)
                                 and all(isinstance(text, str) for text in more)):
        return "'queries' is a list of strings, one per step: [\"geocode an address\", ...]"
    sent = [text for text in ([query] if query is not None else []) + list(more or [])
            if text.strip()]
    if not sent:
        return "'query' is empty: say in a few words what the tool should do"
    texts = list(dict.fromkeys(cut_query(text) for text in sent))
    return Queries(tuple(texts[:MAX_QUERIES]), cut=any(len(t) > MAX_QUERY_CHARS for t in sent),
                   left_off=max(0, len(texts) - MAX_QUERIES))


@dataclass(frozen=True)
class Found:
    """What an answer to queries holds: ``full`` definitions, ``lines`` one line each, and
    per query the names it found among them, best first (``matches``)."""

    full: list[str]
    lines: list[str]
    matches: dict[str, list[str]]


def found(queries: Sequence[str], ranked: Sequence[Sequence[str]], named: Sequence[str],
          room: int, size: Callable[[str], int]) -> Found:
    """The answer's tools: each query's best (one query: ``room`` + ``LINE_RESULTS``; each of
    several: ``FULL_RESULTS``), not ``named``, taken in turns (every query's best first, then
    every second best...); of the first ``room``, the best in full, and each next one while
    the sizes (``size``) of the definitions taken stay within ``ANSWER_CHARS``."""
    depth = room + LINE_RESULTS if len(queries) == 1 else FULL_RESULTS
    best = [[name for name in names if name not in named][:depth] for names in ranked]
    turns = list(dict.fromkeys(names[place] for place in range(depth)
                               for names in best if place < len(names)))
    full: list[str] = []
    used = 0
    for name in turns[:room]:
        used += size(name)
        if full and used > ANSWER_CHARS:
            break
        full.append(name)
    return Found(full, turns[len(full):], dict(zip(queries, best, strict=True)))


@dataclass(frozen=True)
class Document:
    """A tool's document as its file said when it was made (``signature``), and a digest of
    its name and text: a catalog's key is a digest of these, 16 bytes per view in the cache
    rather than the documents, computed without reading the documents again."""

    signature: Signature | None
    name: str
    text: str
    digest: bytes


def catalog_key(documents: Sequence[Document]) -> bytes:
    """The key a catalog's index is kept under: a digest of its documents, in order."""
    return hashlib.blake2b(b"".join(d.digest for d in documents), digest_size=16).digest()


@dataclass(frozen=True)
class Kept:
    """An index kept for a catalog: the index and its documents' names, in order."""

    index: Index
    names: tuple[str, ...]


class ToolSearch:
    """Ranks the tools a caller may see against queries (see the module docstring)."""

    def __init__(self, definitions: Definitions, line_of: Callable[[Tool, Signature | None], str]
                 ) -> None:
        self.definitions = definitions
        self._line_of = line_of
        self._documents: ToolCache[Document] = ToolCache(DOCUMENTS_KEPT, key=registered_content)
        self._indexes: LRUCache[bytes, Kept] = LRUCache(
            INDEX_BYTES, getsizeof=lambda kept: kept.index.size)
        self._lock = threading.Lock()
        self._building: dict[bytes, threading.Lock] = {}
        self._threads = anyio.CapacityLimiter(BUILD_THREADS)

    async def rank(self, tools: Sequence[Tool], queries: Sequence[str], limit: int
                   ) -> list[list[str]]:
        """Per query, the names of at most ``limit`` of ``tools`` matching it, best first
        (none when no word of it is in any document). The index is the one kept for these
        documents, else built in a worker thread while the loop serves other requests."""
        if not tools:
            return [[] for _ in queries]
        kept = self._kept(tools)
        if kept is None:
            kept = await anyio.to_thread.run_sync(self._built, tools, limiter=self._threads)
        return [[kept.names[at] for at in kept.index.rank(query)[:limit]] for query in queries]

    def _document(self, tool: Tool) -> Document:
        """``tool``'s document as its description file says now (kept per signature)."""
        sig = self.definitions.store.signature(tool.name)
        kept = self._documents.get(tool)
        if kept is not None and kept.signature == sig:
            return kept
        text = document(self.definitions.for_tool(tool)[0], self._line_of(tool, sig))
        digest = hashlib.blake2b(f"{tool.name}\0{text}".encode("utf-8", "surrogatepass"),
                                 digest_size=16).digest()
        made = Document(sig, tool.name, text, digest)
        self._documents.put(tool, made)
        return made

    def _kept(self, tools: Sequence[Tool]) -> Kept | None:
        """The index kept for ``tools``' documents when every document is kept too (a
        cheap look-up on the loop), else None."""
        documents: list[Document] = []
        for tool in tools:
            kept = self._documents.get(tool)
            if kept is None or kept.signature != self.definitions.store.signature(tool.name):
                return None
            documents.append(kept)
        with self._lock:
            return self._indexes.get(catalog_key(documents))

    def _built(self, tools: Sequence[Tool]) -> Kept:
        """In a worker thread: ``tools``' documents and their index, kept when it fits. One
        build per catalog at a time: a second query of it waits for the first's index."""
        documents = [self._document(tool) for tool in tools]
        key = catalog_key(documents)
        with self._lock:
            building = self._building.setdefault(key, threading.Lock())
        with building:
            try:
                with self._lock:
                    kept = self._indexes.get(key)
                if kept is None:
                    kept = Kept(Index.build([f"{d.name} {d.text}" for d in documents]),
                                tuple(d.name for d in documents))
                    if kept.index.size <= INDEX_BYTES:
                        with self._lock:
                            self._indexes[key] = kept
            finally:
                with self._lock:
                    self._building.pop(key, None)
        return kept
