"""Argument-dependent behaviour hints: the rules a description file declares, and the bound.

A multi-action tool must annotate its worst case statically (``manage_notes`` deletes, so
``destructiveHint: true``), which makes hosts ask for confirmation even for a read. Tool
resolution (``tools/resolve``, see ``resolution/server.py``) lets a client ask which hints apply
to the exact arguments it is about to send. The answer comes from ordered rules in the
tool's description file, key ``resolution``; the first rule whose ``when`` matches decides,
and hints it leaves out fall back to the tool's static annotations::

    {"resolution": [
      {"when": {"action": "read"}, "readOnlyHint": true},
      {"when": {"action": {"in": ["append", "rename"]}}, "destructiveHint": false},
      {"when": {"force": {"present": false}}, "idempotentHint": true}
    ]}

A condition in ``when`` names a top-level argument. A JSON scalar means equality; an object
holds exactly one operator: ``equals`` (any JSON value), ``in`` / ``not_in`` (a list),
``present`` (true or false). Every operator but ``present`` needs the argument to be
sent: rules see the arguments exactly as the client sends them, no defaults filled in.
``when: {}`` (or no ``when``) matches every call, a catch-all for the end of the list.

**The bound.** A resolution may never look safer than the tool's static annotations allow
(core defaults first: readOnly false, destructive true, idempotent false, openWorld true):
a read-only tool stays read-only, a non-destructive one stays non-destructive, an
idempotent one stays idempotent, a closed-world one stays closed-world. ``violations``
says which of those a resolution breaks; the server answers ``-32603`` instead of a wrong
hint, and ``fastmcp-progressive check`` reports the rule.

Example:
    ```python
    rule = Rule.model_validate({"when": {"action": "read"}, "readOnlyHint": True})
    rule.matches({"action": "read", "note_id": "n1"})  # True
    static = ToolHints.of(tool.annotations)
    violations(static, static.updated(rule.given()))  # [] when the rule stays in bounds
    ```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

HINT_NAMES = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
"""The four behaviour hints a resolution always answers, in wire spelling."""

_ABSENT = object()
_HINT_FIELDS = {"read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"}


class Hints(BaseModel):
    """Some of the four behaviour hints (unset ones fall back to the static annotations).

    What a rule gives, and what a Python resolver hook may return instead of a dict.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    read_only_hint: StrictBool | None = Field(default=None, alias="readOnlyHint")
    destructive_hint: StrictBool | None = Field(default=None, alias="destructiveHint")
    idempotent_hint: StrictBool | None = Field(default=None, alias="idempotentHint")
    open_world_hint: StrictBool | None = Field(default=None, alias="openWorldHint")

    def given(self) -> dict[str, bool]:
        """The hints set here, wire-named."""
        return self.model_dump(by_alias=True, exclude_none=True, include=_HINT_FIELDS)


class Condition(BaseModel):
    """One test on one top-level argument: exactly one operator."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    equals: Any = None
    in_: list[Any] | None = Field(default=None, alias="in")
    not_in: list[Any] | None = None
    present: StrictBool | None = None

    @model_validator(mode="after")
    def _one_operator(self) -> Condition:
        used = [name for name, on in (
            ("equals", "equals" in self.model_fields_set), ("in", self.in_ is not None),
            ("not_in", self.not_in is not None), ("present", self.present is not None),
        ) if on]
        if len(used) != 1:
            raise ValueError("a condition object holds exactly one of equals, in, not_in, "
                             f"present (found {', '.join(used) or 'none'})")
        return self

    def test(self, value: Any) -> bool:
        """Whether an argument with ``value`` (``_ABSENT`` when not sent) satisfies this."""
        if self.present is not None:
            return (value is not _ABSENT) is self.present
        if value is _ABSENT:
            return False
        if self.in_ is not None:
            return any(json_equal(value, option) for option in self.in_)
        if self.not_in is not None:
            return not any(json_equal(value, option) for option in self.not_in)
        return json_equal(value, self.equals)


class Rule(Hints):
    """``when`` these arguments match, these hints apply (first matching rule wins)."""

    when: dict[str, Condition] = Field(default_factory=dict)

    @field_validator("when", mode="before")
    @classmethod
    def _scalars_mean_equals(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value  # pydantic reports the wrong type
        conditions: dict[Any, Any] = {}
        for argument, condition in value.items():
            if isinstance(condition, list):
                raise ValueError(f"condition on {argument!r} is a list: write {{\"in\": [...]}} "
                                 "for membership or {\"equals\": [...]} to compare with a list")
            scalar = condition is None or isinstance(condition, (str, int, float, bool))
            conditions[argument] = {"equals": condition} if scalar else condition
        return conditions

    @model_validator(mode="after")
    def _gives_a_hint(self) -> Rule:
        if not self.given():
            raise ValueError(f"a rule must give at least one of {', '.join(HINT_NAMES)}")
        return self

    def matches(self, arguments: Mapping[str, Any]) -> bool:
        """Whether every condition holds for ``arguments`` (as sent, top level)."""
        return all(cond.test(arguments.get(name, _ABSENT)) for name, cond in self.when.items())


def first_match(rules: Sequence[Rule], arguments: Mapping[str, Any]) -> tuple[int, Rule] | None:
    """(index, rule) of the first rule matching ``arguments``, or None."""
    for index, rule in enumerate(rules):
        if rule.matches(arguments):
            return index, rule
    return None


def json_equal(a: Any, b: Any) -> bool:
    """Equality of two JSON values as JSON sees them: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


# -- the bound ---------------------------------------------------------------------------
_FIELDS = ("read_only", "destructive", "idempotent", "open_world")
"""``ToolHints``' fields, in ``HINT_NAMES``' order (``read_only``: ``readOnlyHint``)."""


@dataclass(frozen=True)
class ToolHints:
    """All four hints, core defaults filled in (what a resolution answers)."""

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True

    @classmethod
    def of(cls, annotations: Any) -> ToolHints:
        """The static hints of a tool's ``annotations`` (``ToolAnnotations`` or None)."""
        given = {field: getattr(annotations, f"{field}_hint", None) for field in _FIELDS}
        return cls(**{field: value for field, value in given.items() if isinstance(value, bool)})

    def updated(self, given: Mapping[str, bool]) -> ToolHints:
        """These hints with the wire-named ``given`` ones replacing them."""
        return ToolHints(*(given.get(wire, getattr(self, field))
                           for field, wire in zip(_FIELDS, HINT_NAMES, strict=True)))

    def wire(self) -> dict[str, bool]:
        """The four hints, wire-named, as a ``tools/resolve`` result carries them."""
        return {wire: getattr(self, field) for field, wire in zip(_FIELDS, HINT_NAMES, strict=True)}


def violations(static: ToolHints, resolved: ToolHints) -> list[str]:
    """How ``resolved`` claims less risk than ``static`` allows (empty: within the bound)."""
    broken = (
        (static.read_only and not resolved.read_only,
         "readOnlyHint: true, so every resolution must be read-only"),
        (not static.read_only and not static.destructive and resolved.destructive,
         "destructiveHint: false, so no resolution may be destructive"),
        (static.idempotent and not resolved.read_only and not resolved.idempotent,
         "idempotentHint: true, so every resolution that is not read-only must be idempotent"),
        (not static.open_world and resolved.open_world,
         "openWorldHint: false, so no resolution may be open-world"))
    return [f"the tool is annotated {why}" for broke, why in broken if broke]
