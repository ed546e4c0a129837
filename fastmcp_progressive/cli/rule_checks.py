"""What ``fastmcp-progressive check`` finds wrong with a file's ``resolution`` rules.

A rule's hints do not depend on the arguments once it matches, so every resolution a file
can produce is "static annotations, then one rule's hints over them": checking each rule
against the bound (``rules.violations``) catches every violating combination before a
client ever asks. Also reported: conditions on arguments the tool does not have (the rule
can never match as meant), values the argument's schema rejects (the condition never
holds), rules after a catch-all (never reached), and read-only rules that inherit
``destructiveHint: true`` (hosts reading that hint alone would still ask for confirmation).
Each problem points at the rule's own line and column (``rule_locations``, found by
``file_places``).

Example:
    ```python
    for index, severity, message in resolution_problems(file, tool):
        ...  # (2, "error", "resolution[2]: the tool is annotated openWorldHint: false, ...")
    ```
"""

from __future__ import annotations

from typing import Any, Literal

from fastmcp.tools.base import Tool

from fastmcp_progressive.files.model import DescriptionFile
from fastmcp_progressive.files.places import element_locations
from fastmcp_progressive.files.rules import ToolHints, violations
from fastmcp_progressive.files.schema_refs import inline_refs

Severity = Literal["error", "warning"]


def resolution_problems(file: DescriptionFile,
                        tool: Tool) -> list[tuple[int, Severity, str]]:
    """(rule index, severity, message) for every problem of ``file``'s rules for ``tool``."""
    if not file.resolution:
        return []
    static = ToolHints.of(tool.annotations)
    properties = (inline_refs(tool.parameters or {}).get("properties") or {})
    found: list[tuple[int, Severity, str]] = []
    catch_all: int | None = None
    for index, rule in enumerate(file.resolution):
        label = f"resolution[{index}]"
        if catch_all is not None:
            found.append((index, "warning", f"{label} is never reached: "
                                            f"resolution[{catch_all}] matches every call"))
        elif not rule.when:
            catch_all = index
        resolved = static.updated(rule.given())
        for broken in violations(static, resolved):
            found.append((index, "error", f"{label}: {broken}"))
        if resolved.read_only and resolved.destructive:
            found.append((index, "warning", f"{label} is read-only but keeps destructiveHint: "
                                            "true from the tool; say destructiveHint: false"))
        for argument, condition in rule.when.items():
            spec = properties.get(argument) if isinstance(properties, dict) else None
            if spec is None:
                found.append((index, "error", f"{label}: when names {argument!r}, which is "
                                              "not a parameter of the tool"))
                continue
            values = ([condition.equals] if "equals" in condition.model_fields_set
                      else condition.in_ or condition.not_in or [])
            for value in values:
                if not _valid(spec, value):
                    found.append((index, "warning", f"{label}: {value!r} is not a valid value "
                                                    f"of {argument!r}, so it never matches"))
    return found


def _valid(schema: Any, value: Any) -> bool:
    if not isinstance(schema, dict):
        return True
    from jsonschema import validators

    cls = validators.validator_for(schema)
    try:
        return bool(cls(schema).is_valid(value))
    except Exception:  # a schema jsonschema cannot use: not this rule's problem
        return True


def rule_locations(text: str, suffix: str) -> list[tuple[int, int]]:
    """(line, column), 1-based, of each element of the top-level ``resolution`` array."""
    return element_locations(text, suffix, "resolution")
