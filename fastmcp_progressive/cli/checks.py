"""What ``fastmcp-progressive check`` finds wrong with a folder of description files.

Kept apart from the command line so the rules read on their own: files that do not parse
or validate (with their line and column), names that match no tool, tools without files,
summaries too long for the listing, a file whose tool's registered description changed
since ``extract`` wrote it (``extracted_from``), an ``inputSchema`` that disagrees with the
function the server registered, examples that fail the schema (validated with ``jsonschema``, which
the MCP SDK already depends on), and ``resolution`` rules (``resolution_problems``).

A rule's hints do not depend on the arguments once it matches, so every resolution a file
can produce is "static annotations, then one rule's hints over them": checking each rule
against the bound (``rules.violations``) catches every violating combination before a
client ever asks. Also reported: conditions on arguments the tool does not have (the rule
can never match as meant), values the argument's schema rejects (the condition never
holds), rules after a catch-all (never reached), and read-only rules that inherit
``destructiveHint: true`` (hosts reading that hint alone would still ask for confirmation).
Each problem points at the rule's own line and column (``rule_locations``).

Example:
    ```python
    for problem in check(tools, Path("tool_descriptions")):
        print(problem)  # tool_descriptions/add.json:3:5: error: ...
    ```
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fastmcp.tools.base import Tool

from fastmcp_progressive.disclosure.listing import ELLIPSIS, summarize
from fastmcp_progressive.files.definitions import inline_refs, registered_definition
from fastmcp_progressive.files.errors import DescriptionError, where_and_why
from fastmcp_progressive.files.folder import read_description, read_folder, safe_file_name
from fastmcp_progressive.files.model import DescriptionFile, registered_description_digest
from fastmcp_progressive.files.places import element_locations, key_location
from fastmcp_progressive.files.rules import ToolHints, violations

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One finding, printed ``where: severity: message`` like a compiler's."""

    severity: Severity
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.severity}: {self.message}"


def check(tools: dict[str, Tool], directory: Path, *,
          summary_max_chars: int = 100) -> list[Problem]:
    """Everything wrong with ``directory`` for these tools, files first, in name order."""
    if not directory.is_dir():
        raise NotADirectoryError(f"{directory} is not a directory")
    problems: list[Problem] = []
    chosen = _description_files(directory, problems)
    for name in sorted(chosen):
        problems += _check_file(directory, name, chosen[name], tools, summary_max_chars)
    for name in sorted(set(tools) - set(chosen)):
        reason = ("has no description file; its registered definition is served"
                  if safe_file_name(name) else "cannot have a description file (its name "
                  "is not usable as a file name)")
        problems.append(Problem("warning", f"tool {name!r}", reason))
    return problems


def _description_files(directory: Path, problems: list[Problem]) -> dict[str, str]:
    """Tool name -> suffix of the file the server reads for it, by the server's own scan.

    The scan (``files/folder.py``) decides which files count and which one wins; this
    adds only why each other file named like a description file is passed over.
    """
    scan = read_folder(directory)
    ignored = [(entry, "ignored: not a usable tool name") for entry in scan.unusable]
    for name, (read, *others) in scan.present.items():
        ignored += [(name + suffix, f"ignored: {name}{read} takes precedence")
                    for suffix in others]
    for entry, reason in sorted(ignored):
        problems.append(Problem("warning", str(directory / entry), reason))
    return scan.files


def _check_file(directory: Path, name: str, suffix: str, tools: dict[str, Tool],
                summary_max_chars: int) -> list[Problem]:
    path = directory / f"{name}{suffix}"
    try:
        file = read_description(directory, name, suffix)
    except (DescriptionError, OSError) as exc:
        return [Problem("error", *where_and_why(path, exc))]
    text = path.read_text(encoding="utf-8")

    def at(key: str) -> str:
        found = key_location(text, suffix, key)
        return f"{path}:{found[0]}:{found[1]}" if found else str(path)

    tool = tools.get(name)
    if tool is None:
        close = difflib.get_close_matches(name, list(tools), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return [Problem("error", str(path), f"the server has no tool named {name!r}{hint}")]
    problems: list[Problem] = []
    if file.summary and len(file.summary) > summary_max_chars:
        problems.append(Problem("error", at("summary"),
                                f"summary is {len(file.summary)} characters; the listing "
                                f"allows {summary_max_chars}"))
    elif not file.summary:
        shown = summarize(file.description or tool.description or tool.title,
                          summary_max_chars)
        if shown.endswith(ELLIPSIS):
            problems.append(Problem("warning", str(path),
                                    f"no summary; the listing shows the cut sentence {shown!r}"))
    now = registered_description_digest(tool.description)
    if file.extracted_from and file.extracted_from != now:
        problems.append(Problem(
            "warning", at("extracted_from"),
            f"{name!r}'s registered description changed since `extract` wrote this file"
            + ("; its description here shadows the new one" if file.description else "")
            + f": update the file and set extracted_from to {now!r} (or extract again "
            "with --force, or remove extracted_from)"))
    registered = registered_definition(tool)
    problems += [Problem(sev, at("inputSchema"), msg)
                 for sev, msg in schema_problems(file, registered)]
    problems += [Problem("error", at("examples"), msg)
                 for msg in example_problems(file, registered)]
    rules_at = rule_locations(text, suffix)
    for index, severity, message in resolution_problems(file, tool):
        where = (f"{path}:{rules_at[index][0]}:{rules_at[index][1]}" if index < len(rules_at)
                 else at("resolution"))
        problems.append(Problem(severity, where, message))
    return problems


def schema_problems(file: DescriptionFile,
                    registered: dict[str, Any]) -> list[tuple[Severity, str]]:
    """Where the file's inputSchema disagrees with the function the server validates against."""
    if file.input_schema is None:
        return []
    mine = inline_refs(file.input_schema)
    theirs = registered.get("inputSchema") or {}
    mine_props = _properties(mine)
    their_props = _properties(theirs)
    found: list[tuple[Severity, str]] = []
    for prop in sorted(set(mine_props) - set(their_props)):
        found.append(("error", f"inputSchema property {prop!r} is not a parameter of the tool"))
    for prop in sorted(set(their_props) - set(mine_props)):
        found.append(("warning", f"parameter {prop!r} of the tool is missing from inputSchema"))
    mine_req, their_req = set(mine.get("required") or []), set(theirs.get("required") or [])
    if mine_req != their_req:
        found.append(("error", f"required is {sorted(mine_req)} in the file but "
                               f"{sorted(their_req)} for the tool"))
    for prop in sorted(set(mine_props) & set(their_props)):
        a, b = _plain_type(mine_props[prop]), _plain_type(their_props[prop])
        if a is not None and b is not None and a != b:
            found.append(("error", f"inputSchema property {prop!r} is {'/'.join(sorted(a))} "
                                   f"in the file but {'/'.join(sorted(b))} for the tool"))
    return found


def example_problems(file: DescriptionFile, registered: dict[str, Any]) -> list[str]:
    """Examples whose input the server (registered schema) or the file's schema rejects."""
    if not file.examples:
        return []
    from jsonschema import validators  # a dependency of the mcp SDK that FastMCP requires

    schemas: list[tuple[str, dict[str, Any]]] = [("the tool's schema",
                                                  registered.get("inputSchema") or {})]
    if file.input_schema is not None:
        schemas.append(("the file's inputSchema", inline_refs(file.input_schema)))
    found: list[str] = []
    for label, schema in schemas:
        validator_class = validators.validator_for(schema)
        try:
            validator_class.check_schema(schema)
        except Exception as exc:
            found.append(f"{label} is not a valid JSON Schema: {getattr(exc, 'message', exc)}")
            continue
        validator = validator_class(schema)
        for i, example in enumerate(file.examples):
            for err in sorted(validator.iter_errors(example.input), key=lambda e: e.json_path):
                where = "" if err.json_path == "$" else f" at {err.json_path[2:]}"
                found.append(f"examples[{i}].input{where}: {err.message} (per {label})")
    return list(dict.fromkeys(found))


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _plain_type(spec: Any) -> frozenset[str] | None:
    kind = spec.get("type") if isinstance(spec, dict) else None
    if isinstance(kind, str):
        return frozenset([kind])
    if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        return frozenset(kind)
    return None


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
