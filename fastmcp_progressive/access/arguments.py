"""Checking a call's arguments the way FastMCP itself will, before the call is let through.

Some callers cannot be followed from one request to the next (2026-07-28 HTTP without
auth, ``stateless_http=True``, hosts that open a new session per tool call), so no grant
can be kept for them. What their call shows is all there is: arguments the tool accepts
prove the model already knows how to call it, and the call runs; anything else gets the
teaching refusal, which carries the definition and the first problems found.

"Accepts" means exactly what FastMCP's own validation of the call accepts, and costs what
it costs. A local function tool is checked with the validator FastMCP builds for it
(``fastmcp_internals.argument_validator``: pydantic-core, linear-time Rust regexes, the
server's ``strict_input_validation``, the lax coercions it allows such as ``"5"`` for an
``int``), so no argument and no schema an author writes can make the check slower than
the call itself; a pure-Python JSON Schema validator on the event loop could (quadratic
``uniqueItems``, backtracking ``pattern``: seconds of a stalled server per request).
A mounted server's tool is checked with the validator of the child's own tool (the child's
``get_tool`` of the name ``fastmcp_internals.delegate_of`` reads). A tool FastMCP does not
validate itself (proxied, transformed, custom) is checked by argument names only: every
``required`` name sent, and no undeclared name where the schema says
``additionalProperties: false``; its server judges the values, as it would for any caller.

Validators are built once per tool function and kept in a bounded LRU.

Example:
    ```python
    checker = ArgumentChecker()
    await checker.problem(tool, {"a": 1})  # "arguments: 'b' is a required property"
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cachetools import LRUCache
from fastmcp.tools.base import Tool
from pydantic import ValidationError

from fastmcp_progressive.fastmcp_internals import argument_validator, delegate_of
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.payloads import shortened

logger = get_logger("validation")

DEFAULT_VALIDATORS = 1024
MAX_PROBLEM_CHARS = 300
MAX_PROBLEMS = 3
_MAX_NAME_CHARS = 64
_MAX_MOUNTS = 16

Validate = Callable[[Any], None]


class ArgumentChecker:
    """Checks call arguments as FastMCP will; validators kept per tool function in an LRU."""

    def __init__(self) -> None:
        self._validators: LRUCache[Any, Validate | None] = LRUCache(maxsize=DEFAULT_VALIDATORS)

    async def problem(self, tool: Tool, arguments: Any) -> str | None:
        """Why ``tool`` would refuse ``arguments`` (up to three reasons, at most
        ``MAX_PROBLEM_CHARS`` characters), or None when they fit.

        A tool whose validator cannot be built or fails on its own (not on the arguments)
        is checked by names only: a broken tool must not lock every caller out.
        """
        arguments = {} if arguments is None else arguments
        validate = self._validator(await _validating(tool))
        if validate is not None:
            try:
                validate(arguments)
                return None
            except ValidationError as exc:
                return _clip("; ".join(_describe(error) for error in
                                       exc.errors(include_url=False, include_input=False,
                                                  include_context=False)[:MAX_PROBLEMS]))
            except Exception as exc:  # a validator that breaks: never a reason to refuse
                logger.warning("the arguments of tool %r could not be checked (%s); checking "
                               "argument names only", tool.name, type(exc).__name__)
        return _names_problem(tool.parameters, arguments)

    def _validator(self, tool: Tool) -> Validate | None:
        fn = getattr(tool, "fn", None)
        if fn is None:
            return None  # not a function tool: FastMCP does not validate it here
        try:
            if fn in self._validators:
                return self._validators[fn]
        except TypeError:  # an unhashable callable: built each time, never kept
            return _build(tool)
        found = self._validators[fn] = _build(tool)
        return found


async def _validating(tool: Tool) -> Tool:
    """The tool whose validator FastMCP runs for a call of ``tool``: through mounts (up to
    ``_MAX_MOUNTS`` deep), the child server's own tool; otherwise ``tool`` itself."""
    for _ in range(_MAX_MOUNTS):
        delegate = delegate_of(tool)
        if delegate is None:
            return tool
        try:
            inner = await delegate[0].get_tool(delegate[1])
        except Exception:  # the child cannot say: check what the parent lists
            return tool
        if inner is None:
            return tool
        tool = inner
    return tool


def _build(tool: Tool) -> Validate | None:
    """FastMCP's own validation of ``tool``; None (kept too: names only) when it validates
    no arguments itself or could not be mirrored."""
    try:
        return argument_validator(tool)
    except Exception as exc:  # FastMCP itself will say what is wrong with the tool
        logger.warning("tool %r: FastMCP's argument validation could not be mirrored (%s); "
                       "checking argument names only", tool.name, type(exc).__name__)
        return None


def _names_problem(schema: Any, arguments: Any) -> str | None:
    """The names-only check: O(number of arguments), whatever the schema."""
    if not isinstance(arguments, Mapping):
        return "arguments: must be an object"
    if not isinstance(schema, Mapping):
        return None
    problems: list[str] = []
    required = schema.get("required")
    if isinstance(required, list):
        problems += [f"arguments: {_name(n)} is a required property"
                     for n in required if isinstance(n, str) and n not in arguments]
    properties = schema.get("properties")
    if schema.get("additionalProperties") is False and isinstance(properties, Mapping):
        problems += [f"arguments: additional property {_name(n)} is not allowed"
                     for n in arguments if n not in properties]
    return _clip("; ".join(problems[:MAX_PROBLEMS])) if problems else None


def _describe(error: Mapping[str, Any]) -> str:
    loc = [part for part in error.get("loc", ()) if part != "__root__"]
    kind = error.get("type")
    if kind in ("missing_argument", "missing") and loc:
        *parents, name = loc
        return f"{_where(parents)}: {_name(name)} is a required property"
    if kind == "unexpected_keyword_argument" and loc:
        *parents, name = loc
        return f"{_where(parents)}: additional property {_name(name)} is not allowed"
    return f"{_where(loc)}: {error.get('msg', 'invalid')}"


def _where(loc: list[Any]) -> str:
    return "arguments" + "".join(
        f"[{part}]" if isinstance(part, int) else f".{shortened(str(part), _MAX_NAME_CHARS)}"
        for part in loc)


def _name(name: Any) -> str:
    return repr(shortened(str(name), _MAX_NAME_CHARS))


def _clip(text: str) -> str:
    return text if len(text) <= MAX_PROBLEM_CHARS else text[: MAX_PROBLEM_CHARS - 3] + "..."
