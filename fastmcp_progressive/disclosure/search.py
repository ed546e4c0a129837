"""Tools found by words: ``describe_tools({"query": "create a pull request"})``.

A listing within a budget names few tools, and a model looking for one it cannot see
should not have to page through groups first: it says what it wants to do and gets the
best matching tools the caller may see. Each tool is ranked as one document: its name, the
name split into words (at ``_``, ``-``, ``.`` and camelCase: ``createPullRequest`` reads
``create pull request``), its title, its listing line, its description (the file's,
else the registered one), its argument names and the words its arguments' descriptions
use, so an edit of a description file ranks by its new words on the next query (hot
reload). A word counts once in each part of the definition that says it (``document``),
and once in a query (``distinct_words``): how many parts say a word (the name, what its
listing shows, its description) tells how central it is to the tool, how often one
paragraph repeats it does not, so a description that says "pull request" four times
does not outrank the tool that also says the query's rarer word. On LiveMCPBench's task
texts that puts a task's tool in the top 5 for 38 of 114 task-tool pairs, against 36
when only the query and argument descriptions counted words once; short queries find
github-mcp-server's tools as before (``BENCHMARKS.md``, selection).

The ranking is FastMCP's own BM25 (``fastmcp.server.transforms.search.BM25SearchTransform``),
reached through its public API only, so the package keeps no ranking code of its own and
ranks as FastMCP's search does: an index server of ours (never the user's) holds one
document tool per tool the caller may see, carries the transform with a serializer that
returns names, and is asked through its public ``call_tool("search_tools", ...)``
(FastMCP opens a ``Context`` of that server, so the transform's catalog is the index's
own documents). Which tools are documents is decided by the caller of the query, as a read
decides (``describer.py:Describer.visible_tools``): a hidden tool is never ranked.

An index is built once per catalog (the documents, in order) and kept in a bounded
``cachetools`` cache counted in documents, so each caller's view (a tenant sees its own
tools) keeps its index and a query does not rebuild; each tool's document is kept per
tool content and description-file signature (``caches.py:ToolCache``). A catalog larger
than the whole cache is indexed for each query.

Example:
    ```python
    search = ToolSearch(definitions, line_of=lister_line)
    await search.rank(visible_tools, "create a pull request", limit=10)
    # ['create_pull_request', 'update_pull_request', ...]
    ```
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cachetools import LRUCache
from fastmcp import FastMCP
from fastmcp.server.transforms.search import BM25SearchTransform
from fastmcp.tools.base import Tool

from fastmcp_progressive.caches import ToolCache
from fastmcp_progressive.files.store import Definitions, Signature, registered_content

MAX_QUERY_CHARS = 1_000
"""The longest query: a sentence or a task's text, not a document."""
FULL_RESULTS = 5
"""How many of the best matches a query answers with full definitions (and grants), at most:
beyond the best one, only while their definitions fit ``ANSWER_CHARS``."""
ANSWER_CHARS = 4_000
"""The most characters of full definitions a query answers with beyond its best match (about
1,000 o200k tokens): the answer stays in the conversation for every later model request, and
one large definition (github-mcp-server's ``projects_write``: 2,042 tokens) would otherwise
cost more than the listing saves. A match that does not fit is named one line each."""
LINE_RESULTS = 5
"""How many further matches it names, one line each (besides the ones that did not fit)."""


def within_answer(ranked: Sequence[str], size: Callable[[str], int]) -> list[str]:
    """The first of ``ranked`` (the best match) and each next one while the sizes of the
    definitions taken stay within ``ANSWER_CHARS``, in rank order."""
    taken: list[str] = []
    used = 0
    for name in ranked:
        cost = size(name)
        if taken and used + cost > ANSWER_CHARS:
            break
        taken.append(name)
        used += cost
    return taken
INDEXED_DOCUMENTS = 20_000
"""How many documents the kept indexes hold together (one index per distinct catalog; about
13 KB each, FastMCP's tool object and the BM25 postings), an index counted as at least
``SMALLEST_INDEX`` documents: at most 40 indexes, about 260 MB at the very most."""
SMALLEST_INDEX = 500
DOCUMENTS_KEPT = 20_000
"""How many tools' documents are kept (per tool content and file signature)."""

_SEARCH_TOOL = "search_tools"
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_WORD = re.compile(r"[^\W_]+")


def name_words(name: str) -> str:
    """``name`` as words: split at separators and camelCase, lower case.

    ``createPullRequest`` and ``create-pull-request`` both read ``create pull request``;
    an acronym stays whole (``getHTTPStatus``: ``get http status``).
    """
    return " ".join(word.lower() for word in _WORDS.findall(name))


def distinct_words(text: str) -> str:
    """``text``'s words, each once, in lower case, split where FastMCP's BM25 tokenizer
    splits (NFKC, case folded, at anything not a letter or digit, ``_`` included).

    BM25 counts a word as often as a text says it: a task's text that says "paper"
    three times would outweigh the one rarer word that names the tool, and a description
    that says "PR" four times would outweigh the tool that merges one.
    """
    normalized = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(dict.fromkeys(_WORD.findall(normalized)))


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


Catalog = tuple[tuple[str, str], ...]
"""A ranked catalog: (tool name, document) pairs, in listing order."""


def _names(tools: Sequence[Tool]) -> str:
    """The search transform's serializer: the ranked tools' names, as JSON."""
    return json.dumps([tool.name for tool in tools])


def index_server(catalog: Catalog) -> FastMCP[Any]:
    """A FastMCP server of our own whose tools are ``catalog``'s documents, searched by
    FastMCP's BM25 transform (every match returned, best first, as names)."""
    index: FastMCP[Any] = FastMCP("fastmcp-progressive-search")
    for name, text in catalog:
        index.add_tool(Tool(name=name, description=text,
                            parameters={"type": "object", "properties": {}}))
    index.add_transform(BM25SearchTransform(
        max_results=max(len(catalog), 1), search_tool_name=_SEARCH_TOOL,
        search_result_serializer=_names))
    return index


class ToolSearch:
    """Ranks the tools a caller may see against a query (see the module docstring)."""

    def __init__(self, definitions: Definitions, line_of: Callable[[Tool, Signature | None], str]
                 ) -> None:
        self.definitions = definitions
        self._line_of = line_of
        self._documents: ToolCache[tuple[Signature | None, str]] = ToolCache(
            DOCUMENTS_KEPT, key=registered_content)
        self._indexes: LRUCache[Catalog, tuple[FastMCP[Any], int]] = LRUCache(
            INDEXED_DOCUMENTS, getsizeof=lambda kept: max(kept[1], SMALLEST_INDEX))

    async def rank(self, tools: Sequence[Tool], query: str, limit: int) -> list[str]:
        """The names of at most ``limit`` of ``tools`` matching ``query``, best first
        (none when no word of the query is in any document)."""
        catalog = tuple((tool.name, self.document_of(tool)) for tool in tools)
        if not catalog:
            return []
        index = self._index(catalog)
        result = await index.call_tool(_SEARCH_TOOL, {"query": distinct_words(query)})
        block = result.content[0] if result.content else None
        names = json.loads(getattr(block, "text", "[]"))
        return [name for name in names if isinstance(name, str)][:limit]

    def document_of(self, tool: Tool) -> str:
        """``tool``'s document as its description file says now."""
        sig = self.definitions.store.signature(tool.name)
        kept = self._documents.get(tool)
        if kept is not None and kept[0] == sig:
            return kept[1]
        definition, _ = self.definitions.for_tool(tool)
        text = document(definition, self._line_of(tool, sig))
        self._documents.put(tool, (sig, text))
        return text

    def _index(self, catalog: Catalog) -> FastMCP[Any]:
        """The index of ``catalog``: kept, else built (and kept when it fits)."""
        kept = self._indexes.get(catalog)
        if kept is not None:
            return kept[0]
        index = index_server(catalog)
        if len(catalog) <= INDEXED_DOCUMENTS:
            self._indexes[catalog] = (index, len(catalog))
        return index


def query_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable query, or None when it is."""
    if not isinstance(value, str):
        return f"'query' is one string of words, not {type(value).__name__}"
    if not value.strip():
        return "'query' is empty: say in a few words what the tool should do"
    if len(value) > MAX_QUERY_CHARS:
        return (f"'query' is {len(value)} characters; at most {MAX_QUERY_CHARS}: say in a "
                "few words what the tool should do")
    return None
