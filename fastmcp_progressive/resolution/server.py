"""Tool resolution (``tools/resolve``, extension ``io.modelcontextprotocol/tool-resolution``).

A client about to call a multi-action tool asks which behaviour hints apply to the exact
arguments it will send; the answer comes from the ``resolution`` rules of the tool's
description file (``rules.py``) or from a Python hook registered for the tool. This module
serves the method and marks resolvable tools in listings; the handshake advertises the
extension (``disclosure/announce.py``).

Why a middleware answers the method: FastMCP hands ``on_request`` every JSON-RPC method it
has no component handler for, on both protocol eras, before the SDK would answer "method
not found". FastMCP's public alternative, ``add_extension`` with a ``MethodBinding``, needs
the server object at add time (a middleware never gets it) and is not advertised on
handshake-era ``initialize``. A short-circuited answer gets no envelope from the SDK, so
``resultType: "complete"`` is set here on both eras.

The server's rules, in the order they are applied:

1. the extension must be advertised on this request (2026-07-28: in the request's own
   ``_meta`` client capabilities; handshake era: at ``initialize``), with empty settings,
   else ``-32021``;
2. ``name`` must name a tool this caller may see (``catalog.py``) that is resolvable (a
   ``resolution`` rule in its file, or a hook); unknown, hidden and unmarked tools all
   get the same ``-32602``, so an answer never reveals a tool the caller cannot see;
3. ``arguments`` must be accepted by the tool as FastMCP's own validation of a call
   would accept them (``-32602`` with the validation message, ``access/arguments.py``); rules
   and hooks see the arguments as sent, nothing defaulted or normalised;
4. a hook, else the first matching rule, else the static annotations give the hints; a
   result that breaks the bound (``rules.violations``) is refused with ``-32603`` and
   logged, never answered;
5. the result carries all four hints (and on 2026-07-28 the ``serverInfo`` stamp the SDK
   puts on results it serializes). Nothing runs, nothing is granted, nothing recorded.

Example:
    ```python
    ProgressiveDisclosure(descriptions_dir="tool_descriptions",
                          resolvers={"run_sql": lambda args: {"readOnlyHint":
                                     args["query"].lstrip().lower().startswith("select")}})
    ```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as mt
from fastmcp.server.context import Context
from fastmcp.tools.base import Tool
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from pydantic import ValidationError

from fastmcp_progressive.access.arguments import ArgumentChecker
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.catalog import Catalog
from fastmcp_progressive.access.hooks import HookFailed, call_hook, hook_limiter
from fastmcp_progressive.caches import with_meta
from fastmcp_progressive.fastmcp_internals import server_info_stamp
from fastmcp_progressive.files.rules import Hints, Rule, ToolHints, first_match, violations
from fastmcp_progressive.files.store import DescriptionStore, Signature
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.payloads import shortened
from fastmcp_progressive.settings import ResolutionSettings, ResolverHook

logger = get_logger()

RESOLUTION_EXTENSION_ID = "io.modelcontextprotocol/tool-resolution"
"""The experimental extension's identifier, used in capabilities and in ``Tool._meta``."""

RESOLVE_METHOD = "tools/resolve"
RESOLVABLE_META = {"resolvable": True}

_MAX_LOGGED = 10_000


def advertised(caller: Caller) -> bool:
    """Whether the client behind this request advertised tool resolution (empty settings).

    Settings that are not empty mean a revision this server does not know: unsupported.
    """
    settings = caller.extensions.get(RESOLUTION_EXTENSION_ID)
    return isinstance(settings, Mapping) and not settings


class ToolResolution:
    """Answers ``tools/resolve`` and marks resolvable tools."""

    def __init__(self, store: DescriptionStore, catalog: Catalog,
                 settings: ResolutionSettings | None = None, *,
                 checker: ArgumentChecker | None = None) -> None:
        settings = settings or ResolutionSettings()  # checked when it was built
        self.store, self.catalog = store, catalog
        self.hook_timeout = settings.hook_timeout
        self._hook_threads = hook_limiter()
        self.checker = checker or ArgumentChecker()
        self.hooks: dict[str, ResolverHook] = dict(settings.resolvers or {})
        self._logged: set[tuple[str, str, Any]] = set()

    # -- listings -------------------------------------------------------------------------
    def mark(self, caller: Caller, tools: Sequence[Tool],
             known: Mapping[str, Signature] | None = None) -> Sequence[Tool]:
        """The listing with resolvable tools marked, for a request that advertised us.
        ``known``: the listing's file signatures (only the others are stat'ed)."""
        if not advertised(caller):
            return tools
        signatures = self.store.signatures_known([tool.name for tool in tools], known)
        return [with_meta(tool, RESOLUTION_EXTENSION_ID, dict(RESOLVABLE_META))
                if self._resolvable(tool.name, signatures.get(tool.name)) else tool
                for tool in tools]

    # -- tools/resolve --------------------------------------------------------------------
    async def answer(self, ctx: Context, params: Any, caller: Caller) -> dict[str, Any]:
        """The result of one ``tools/resolve`` request from ``caller`` (identified once for
        the request); raises ``MCPError`` per the draft."""
        if not advertised(caller):
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message=f"{RESOLVE_METHOD} needs the client capability "
                        f"extensions[{RESOLUTION_EXTENSION_ID!r}] = {{}} on this request",
                data={"requiredCapabilities": {"extensions": {RESOLUTION_EXTENSION_ID: {}}}})
        params = params if isinstance(params, Mapping) else {}
        name = params.get("name")
        arguments = params.get("arguments", {})
        if not isinstance(name, str):
            raise MCPError(code=INVALID_PARAMS, message="params.name must be a tool name")
        if not isinstance(arguments, dict):
            raise MCPError(code=INVALID_PARAMS,
                           message="params.arguments must be the complete arguments object")
        tool = await self.catalog.tool(ctx, name)
        file = self.store.lookup(name) if tool is not None else None
        rules = (file.resolution if file is not None else None) or []
        if tool is None or (not rules and name not in self.hooks):
            raise MCPError(code=INVALID_PARAMS, message=(
                f"Tool {shortened(name)!r} cannot be resolved: no such tool, or its hints do not "
                "depend on its arguments (use its static annotations)"))
        # checked as FastMCP's own validation of a call would check them, the check calls
        # of callers without grants get (``access/arguments.py``)
        problem = await self.checker.problem(tool, arguments)
        if problem is not None:
            raise MCPError(code=INVALID_PARAMS, message=(
                f"Invalid arguments for tool {shortened(tool.name)!r}: {problem}"))
        hints = await self._resolve(tool, rules, arguments)
        result: dict[str, Any] = {"resultType": "complete", "name": name,
                                  "annotations": hints.wire()}
        stamp = server_info_stamp(ctx.fastmcp) if caller.era == "modern" else None
        if stamp is not None:  # what the SDK adds to every 2026-07-28 result it serializes
            result["_meta"] = {mt.SERVER_INFO_META_KEY: stamp}
        return result

    async def _resolve(self, tool: Tool, rules: Sequence[Rule],
                       arguments: dict[str, Any]) -> ToolHints:
        static = ToolHints.of(tool.annotations)
        given: dict[str, bool] | None = None
        source = "static annotations"
        hook = self.hooks.get(tool.name)
        if hook is not None:
            given = await self._run_hook(tool.name, hook, arguments)
            source = "resolver hook"
        if given is None:
            found = first_match(rules, arguments)
            if found is not None:
                given, source = found[1].given(), f"resolution[{found[0]}]"
        resolved = static.updated(given or {})
        broken = violations(static, resolved)
        if broken:
            self._log_once(tool.name, source, "breaks the conservative bound: " + "; ".join(broken))
            raise _untrustworthy(tool.name)
        return resolved

    async def _run_hook(self, name: str, hook: ResolverHook,
                        arguments: dict[str, Any]) -> dict[str, bool] | None:
        """The hook's hints, run bounded (``hooks.call_hook``: a synchronous hook in a
        worker thread, ``hook_timeout`` seconds); any failure answers ``-32603``."""
        try:
            out = await call_hook(hook, dict(arguments), timeout=self.hook_timeout,
                                  limiter=self._hook_threads)
            if out is None:
                return None
            return (out if isinstance(out, Hints) else Hints.model_validate(out)).given()
        except ValidationError as exc:
            self._log_once(name, "resolver hook", f"returned something that is not hints: {exc}")
        except HookFailed as failed:
            logger.error("tool resolution of %r refused: its resolver hook %s (answered "
                         "-32603)", name, failed, exc_info=failed.__cause__)
        raise _untrustworthy(name)

    def _resolvable(self, name: str, sig: Signature | None) -> bool:
        if name in self.hooks:
            return True
        file = self.store.lookup_at(name, sig) if sig is not None else None
        return file is not None and bool(file.resolution)

    def _log_once(self, name: str, source: str, what: str) -> None:
        key = (name, f"{source} {what}", self.store.signature(name))
        if key in self._logged:
            return
        if len(self._logged) >= _MAX_LOGGED:
            self._logged.clear()
        self._logged.add(key)
        logger.error("tool resolution of %r refused: %s %s (answered -32603; fix the "
                     "description file or the hook)", name, source, what)


def _untrustworthy(name: str) -> MCPError:
    return MCPError(code=INTERNAL_ERROR,
                    message=f"Could not compute trustworthy hints for tool {shortened(name)!r}; "
                            "use its static annotations")

