"""Checking a call's arguments against the tool's full input schema.

Some callers cannot be followed from one request to the next (2026-07-28 HTTP without
auth, ``stateless_http=True``, hosts that open a new session per tool call), so no grant
can be kept for them. What their call shows is all there is: arguments that satisfy the
tool's full ``inputSchema`` (the one a read of the descriptions serves, ``$ref`` inlined)
prove the model already knows how to call the tool, and the call runs; anything else
gets the teaching refusal, which carries the definition and the first problem found.

Compiled validators are kept per definition digest in a bounded LRU, so a schema is
checked and compiled once per change, not once per call.

Example:
    ```python
    checker = ArgumentChecker()
    checker.problem(definition, {"a": 1})  # "'b' is a required property" (or None when valid)
    ```
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping
from typing import Any

from cachetools import LRUCache
from jsonschema import exceptions as schema_errors
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

logger = logging.getLogger(__name__)

DEFAULT_VALIDATORS = 1024
MAX_PROBLEM_CHARS = 300
MAX_PROBLEMS = 3
MAX_ERRORS_SEEN = 50
"""Errors looked at per call, so a huge wrong argument costs a bounded amount of work."""
_UNUSABLE = object()
"""Cached in place of a validator when a tool's schema cannot be compiled."""


class ArgumentChecker:
    """Validates call arguments against full definitions; compiled validators in an LRU."""

    def __init__(self, max_validators: int = DEFAULT_VALIDATORS) -> None:
        if max_validators < 1:
            raise ValueError("max_validators must be at least 1")
        self._validators: LRUCache[str, Any] = LRUCache(maxsize=max_validators)

    def problem(self, definition: Mapping[str, Any], arguments: Any) -> str | None:
        """Why ``arguments`` do not fit the definition's ``inputSchema`` (up to three
        reasons, most relevant first, at most ``MAX_PROBLEM_CHARS`` characters).

        None when they fit, and also when the schema itself is unusable (logged once per
        definition): a broken schema must not lock every caller out of the tool.
        """
        validator = self._validator(definition)
        if validator is None:
            return None
        arguments = arguments or {}
        if validator.is_valid(arguments):
            return None
        found = list(itertools.islice(validator.iter_errors(arguments), MAX_ERRORS_SEEN))
        best = schema_errors.best_match(found)
        if best is None:
            return None
        errors = [best, *(error for error in found if error is not best)]
        text = "; ".join(_describe(error) for error in errors[:MAX_PROBLEMS])
        if len(text) > MAX_PROBLEM_CHARS:
            text = text[: MAX_PROBLEM_CHARS - 3] + "..."
        return text

    def __len__(self) -> int:
        return len(self._validators)

    def _validator(self, definition: Mapping[str, Any]) -> Validator | None:
        key = str(definition.get("digest") or id(definition))
        found = self._validators.get(key)
        if found is None:
            found = _compile(definition)
            self._validators[key] = found
        return None if found is _UNUSABLE else found


def _compile(definition: Mapping[str, Any]) -> Any:
    schema = definition.get("inputSchema")
    if not isinstance(schema, dict):
        return _UNUSABLE
    try:
        cls = validator_for(schema)
        cls.check_schema(schema)
        return cls(schema)
    except Exception as exc:  # a schema jsonschema cannot use: never a reason to refuse
        logger.warning(
            "the inputSchema of tool %r cannot be used to check arguments (%s); calls "
            "from callers the server cannot follow pass unchecked",
            definition.get("name"),
            type(exc).__name__,
        )
        return _UNUSABLE


def _describe(error: schema_errors.ValidationError) -> str:
    path = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    where = f"arguments{path}" if path else "arguments"
    return f"{where}: {error.message}"
