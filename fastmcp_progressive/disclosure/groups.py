"""Groups (the ``io.modelcontextprotocol/grouping`` draft): which tools belong together.

A gateway of 70 servers lists 527 tools; a model (and a host that caps its tools) needs a
coarser map first. Each tool belongs to the groups that:

- its description file names (``"groups": ["billing"]``);
- its FastMCP tags name (``@mcp.tool(tags={"billing"})``; the ``always_load`` pin tag is
  not a group);
- its mount or upstream namespace names: every server mounted with a namespace
  (``mcp.mount(child, namespace="github")``, one ``proxy --config`` upstream) is a group
  of that name.

A group is described, first match wins, by its own file ``<descriptions_dir>/groups/
<name>.json`` (or ``.md``; the same format as a tool's file: ``title``, ``summary``,
``description``, and ``groups`` for the groups it nests in), or by the mounted server's
own instructions.

What clients see, and only clients that advertise the extension (in their capabilities
at ``initialize``, or per request on 2026-07-28): ``_meta["io.modelcontextprotocol/groups"]``
on each listed tool, ``groups/list`` (one page), and
``notifications/groups/list_changed``. A client that does not advertise it gets no
``_meta`` key and no notification; a ``groups/list`` it sends anyway is answered (it is
read-only). A group none of a caller's visible tools belongs to is not listed to that
caller: groups are computed from the tools the caller may see.

Why a middleware answers ``groups/list`` (as ``tools/resolve``): FastMCP's public
``add_extension`` with a ``MethodBinding`` must be registered before the server's lifespan
starts, and a middleware first meets its server on the first request; it is also not
advertised at handshake-era ``initialize``. The capability is advertised where the
package's own extension is (``initialize`` and ``server/discover``).

Example:
    ```python
    middleware = ProgressiveDisclosure("tool_descriptions")
    mcp.mount(github, namespace="github")  # group "github": github_* tools
    ```
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as mt
from fastmcp.tools.base import Tool
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.caches import with_meta
from fastmcp_progressive.disclosure.listing import cut_line, summarize
from fastmcp_progressive.fastmcp_internals import mounted_namespaces, server_info_stamp
from fastmcp_progressive.files.model import DescriptionFile
from fastmcp_progressive.files.store import ALWAYS_LOAD_TAG, DescriptionStore, Signature

GROUPING_EXTENSION_ID = "io.modelcontextprotocol/grouping"
GROUPS_META_KEY = "io.modelcontextprotocol/groups"
GROUPS_LIST_METHOD = "groups/list"
GROUPS_CHANGED_METHOD = "notifications/groups/list_changed"
GROUPS_FOLDER = "groups"
"""Group description files live in this subfolder of the descriptions folder."""
GROUP_LINE_CHARS = 70
"""Longest one-line group summary (the bridge's description and group answers)."""
NOT_GROUPS = frozenset({ALWAYS_LOAD_TAG})
"""FastMCP tags that are flags of this package, not groups."""


def advertised(caller: Caller) -> bool:
    """Whether the client behind this request speaks the grouping extension."""
    return isinstance(caller.extensions.get(GROUPING_EXTENSION_ID), Mapping)


@dataclass(frozen=True)
class Group:
    """One group as ``groups/list`` answers it."""

    name: str
    title: str | None = None
    description: str | None = None
    summary: str | None = None
    parents: tuple[str, ...] = ()

    def wire(self) -> dict[str, Any]:
        """The draft's ``Group`` object."""
        out: dict[str, Any] = {"name": self.name}
        if self.title:
            out["title"] = self.title
        if self.description:
            out["description"] = self.description
        if self.parents:
            out["_meta"] = {GROUPS_META_KEY: list(self.parents)}
        return out

    def line(self) -> str:
        """The group in one line: its file's summary, else the first sentence of its
        description's prose (past Markdown headings and markup: an upstream's instructions
        open with "# Everything Server – Server Instructions") without the words every MCP
        server's description opens with."""
        if self.summary:
            return cut_line(self.summary, GROUP_LINE_CHARS)
        text = first_prose(self.description or "") or self.title or ""
        return summarize(plain_description(text), GROUP_LINE_CHARS)


_PROTOCOL_ASIDE = re.compile(r"\s*\((?:MCP|Model Context Protocol)\)", re.IGNORECASE)
_PROTOCOL_NAME = re.compile(r"\bModel Context Protocol\b", re.IGNORECASE)
_OPENING = re.compile(
    r"^(?:This is |It is )?(?:an? |the )?(?:(?:simple|basic|powerful|unofficial|lightweight|"
    r"[\w.-]+-based)\s+)?MCP (?:server|service)s?(?: implementation)?(?: that| which)?"
    r"(?: provides?| enables?| offers?| allows?| lets? you| for| to)?\s+",
    re.IGNORECASE,
)


def plain_description(text: str) -> str:
    """``text`` without "A Model Context Protocol (MCP) server that provides" and the like:
    a group's line should say what it does (70 servers share those words)."""
    shorter = _PROTOCOL_NAME.sub("MCP", _PROTOCOL_ASIDE.sub("", text.strip()))
    rest = _OPENING.sub("", shorter, count=1)
    return shorter if len(rest) < 10 else rest[:1].upper() + rest[1:]


PROSE_READ_CHARS = 8_000
"""How far into a description ``first_prose`` looks for prose (instructions can be long)."""
_FENCE = re.compile(r"^(?:```|~~~)")
_RULE = re.compile(r"^(?:[-*_=]\s*){3,}$")
_LIST_MARK = re.compile(r"^(?:>\s*)*(?:[-*+]|\d{1,3}[.)])\s+")
_QUOTE_MARK = re.compile(r"^(?:>\s*)+")
_LINK = re.compile(r"!?\[([^\]\n]{0,500})\]\([^)\s]{0,2000}\)")
_EMPHASIS = re.compile(r"\*\*|__|`+|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)


def first_prose(text: str) -> str:
    """The first paragraph of prose in a Markdown ``text``, markup removed: headings,
    rules, code blocks, tables and comments skipped; list, quote, link and emphasis marks
    dropped. A text that is only headings gives its first heading's words. Reads at most
    ``PROSE_READ_CHARS`` characters."""
    head = _COMMENT.sub("", text[:PROSE_READ_CHARS])
    paragraph: list[str] = []
    heading = ""
    fenced = False
    for raw in head.splitlines():
        line = raw.strip()
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith("#"):
            if paragraph:
                break
            heading = heading or line.lstrip("#").strip()
            continue
        if not line or _RULE.match(line) or line.startswith("|") or line.startswith("<"):
            if paragraph:
                break
            continue
        paragraph.append(_QUOTE_MARK.sub("", _LIST_MARK.sub("", line)))
    words = " ".join(paragraph) or heading
    return _EMPHASIS.sub("", _LINK.sub(r"\1", words)).strip()


class Groups:
    """Finds each tool's groups, describes groups, answers ``groups/list``."""

    def __init__(self, store: DescriptionStore, *, tags: bool = True) -> None:
        self.store = store
        self.tags = tags
        self._folder: DescriptionStore | None = None

    def of(self, tool: Tool, signatures: Mapping[str, Signature],
           prefixes: Mapping[str, str]) -> tuple[str, ...]:
        """The groups ``tool`` belongs to, in a stable order, given the listing's file
        ``signatures`` (the store's) and its server's ``prefixes`` (``prefixes(server)``)."""
        sig = signatures.get(tool.name)
        file = self.store.lookup_at(tool.name, sig) if sig is not None else None
        found = list(file.groups or ()) if file is not None else []  # parsed per signature
        if self.tags and tool.tags:
            found.extend(sorted(t for t in tool.tags if t not in NOT_GROUPS))
        if prefixes:
            # One lookup per prefix length, shortest first: bounded by the prefixes, not by
            # the name (a lookup at each "_" of a 100,000-character name was quadratic).
            name = tool.name
            for length in sorted({len(prefix) for prefix in prefixes}):
                if length > len(name):
                    break
                group = prefixes.get(name[:length])
                if group is not None:
                    found.append(group)
        return tuple(dict.fromkeys(found))

    def members(self, tools: Sequence[Tool], server: Any) -> dict[str, list[Tool]]:
        """Group name -> the tools among ``tools`` in it (listing order), groups sorted."""
        signatures = self.store.signatures([tool.name for tool in tools])
        prefixes = self.prefixes(server)
        found: dict[str, list[Tool]] = {}
        for tool in tools:
            for group in self.of(tool, signatures, prefixes):
                found.setdefault(group, []).append(tool)
        return {name: found[name] for name in sorted(found)}

    def listed(self, tools: Sequence[Tool], server: Any) -> list[Group]:
        """The groups a caller who sees ``tools`` is shown: those with a member among them,
        and the groups those nest in (by their files or declarations), by name."""
        names = set(self.members(tools, server))
        pending = list(names)
        while pending:
            for parent in self.describe(pending.pop(), server).parents:
                if parent not in names:
                    names.add(parent)
                    pending.append(parent)
        return [self.describe(name, server) for name in sorted(names)]

    def mark(self, caller: Caller, tools: Sequence[Tool], server: Any,
             known: Mapping[str, Signature] | None = None) -> Sequence[Tool]:
        """The listing with each tool's groups in its ``_meta``, for a client that speaks
        the extension; unchanged for any other. ``known``: the listing's file signatures."""
        if not advertised(caller):
            return tools
        signatures = self.store.signatures_known([tool.name for tool in tools], known)
        prefixes = self.prefixes(server)
        return [with_meta(tool, GROUPS_META_KEY, list(groups))
                if (groups := self.of(tool, signatures, prefixes)) else tool for tool in tools]

    def describe(self, name: str, server: Any) -> Group:
        """Group ``name``: from its file, else its mounted server."""
        file = self._group_file(name)
        mounted = dict(mounted_namespaces(server)).get(name) if server is not None else None
        text = getattr(mounted, "instructions", None)
        instructions = text if isinstance(text, str) and text.strip() else None
        if file is None:
            return Group(name, description=instructions)
        title = getattr(file, "title", None)  # an extra key of the file, kept by pydantic
        return Group(name, title=title if isinstance(title, str) else None,
                     description=file.description or file.summary or instructions,
                     summary=file.summary, parents=tuple(file.groups or ()))

    def page(self, groups: Sequence[Group], params: Any, server: Any, caller: Caller
             ) -> dict[str, Any]:
        """The ``groups/list`` result: every group in one page (a server has a handful;
        FastMCP's ``list_page_size`` is not public). A ``params.cursor``, which this never
        issues, is refused as invalid."""
        if isinstance(params, Mapping) and params.get("cursor") is not None:
            raise MCPError(code=INVALID_PARAMS, message="Invalid cursor for groups/list")
        result: dict[str, Any] = {"resultType": "complete",
                                  "groups": [group.wire() for group in groups]}
        stamp = server_info_stamp(server) if caller.era == "modern" else None
        if stamp is not None:
            result["_meta"] = {mt.SERVER_INFO_META_KEY: stamp}
        return result

    def answer_groups(self, requested: Sequence[str], tools: Sequence[Tool], server: Any,
                      line_of: Callable[[Tool], str]) -> dict[str, Any]:
        """The bridge's answer to ``{"groups": [...]}``: ``groups``, each group's line and
        its visible tools, one line each (a group with none of them: an error entry); and,
        when one is unknown, ``available_groups`` once for the whole answer (not once per
        unknown name: 32 of them repeated 200 names each), bounded (``available_names``)."""
        members = self.members(tools, server)
        answer: dict[str, Any] = {}
        for name in requested:
            if name not in members:
                answer[name] = {"error": f"Group {name[:128]!r} not found; available_groups "
                                         "lists the groups you may ask for"}
                continue
            line = self.describe(name, server).line()
            answer[name] = {**({"description": line} if line else {}),
                            "tools": {tool.name: line_of(tool) for tool in members[name]}}
        if all(name in members for name in requested):
            return {"groups": answer}
        names, left_off = available_names(list(members))
        result: dict[str, Any] = {"groups": answer, "available_groups": names}
        if left_off:
            result["available_groups_left_off"] = left_off
        return result

    def prefixes(self, server: Any) -> dict[str, str]:
        """Tool-name prefix -> group: mount namespaces (a look at the server's providers)."""
        return ({f"{ns}_": ns for ns, _ in mounted_namespaces(server)}
                if server is not None else {})

    def _group_file(self, name: str) -> DescriptionFile | None:
        directory = self.store.directory
        if directory is None:
            return None
        if self._folder is None:
            folder = Path(directory) / GROUPS_FOLDER
            if not folder.is_dir():
                return None
            self._folder = DescriptionStore(folder, cache_size=256)
        return self._folder.lookup(name)


AVAILABLE_GROUPS = 200
"""The most group names one ``describe_tools(groups=...)`` answer lists as available."""
AVAILABLE_GROUPS_CHARS = 8_000
"""The most characters of group names one answer lists (a tag can be any length)."""


def available_names(names: Sequence[str]) -> tuple[list[str], int]:
    """The first of ``names`` within ``AVAILABLE_GROUPS`` names and ``AVAILABLE_GROUPS_CHARS``
    characters, and how many were left off."""
    kept: list[str] = []
    chars = 0
    for name in names:
        if len(kept) == AVAILABLE_GROUPS or chars + len(name) > AVAILABLE_GROUPS_CHARS:
            break
        kept.append(name)
        chars += len(name)
    return kept, len(names) - len(kept)


