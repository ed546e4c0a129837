"""Resolution rules on their own: the file syntax, matching, and the conservative bound.

The bound is checked exhaustively: every static annotation set (each hint true, false or
unset: 81) against every rule (each hint given true, false or not given: 81). An oracle
written from the draft's four sentences says which of the 6,561 combinations are unsafe;
the run-time check must refuse exactly those (``-32603``), and ``check`` must report exactly
those, each at its file, line and column.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from fastmcp import FastMCP
from fastmcp.tools.base import Tool
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations
from pydantic import ValidationError

from fastmcp_progressive.cli.checks import check, rule_locations
from fastmcp_progressive.files.errors import DescriptionError
from fastmcp_progressive.files.parsing import parse_text
from fastmcp_progressive.files.rules import Rule, json_equal
from fastmcp_progressive.files.store import DescriptionStore
from fastmcp_progressive.resolution.server import ToolResolution
from tests.cli_runner import run_cli

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
CHOICES = (True, False, None)
COMBOS = [dict(zip(HINTS, values, strict=True)) for values in itertools.product(CHOICES, repeat=4)]


def oracle_unsafe(static: dict[str, bool | None], rule: dict[str, bool | None]) -> bool:
    """The draft's bound, sentence by sentence, core defaults applied first."""
    defaults = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                "openWorldHint": True}
    s = {k: defaults[k] if v is None else v for k, v in static.items()}
    r = {k: s[k] if rule[k] is None else rule[k] for k in HINTS}
    if s["readOnlyHint"] and not r["readOnlyHint"]:
        return True  # a read-only tool: every resolution read-only
    if not s["readOnlyHint"] and s["destructiveHint"] is False and r["destructiveHint"]:
        return True  # non-destructive, non-read-only tool: no resolution destructive
    if s["idempotentHint"] and not r["readOnlyHint"] and not r["idempotentHint"]:
        return True  # idempotent tool: every non-read-only resolution idempotent
    return bool(s["openWorldHint"] is False and r["openWorldHint"])  # closed world stays closed


def given(rule: dict[str, bool | None]) -> dict[str, bool]:
    return {k: v for k, v in rule.items() if v is not None}


def tool_with(static: dict[str, bool | None], name: str = "t") -> Tool:
    def fn(k: int) -> int:
        return k

    annotations = ToolAnnotations(**given(static)) if given(static) else None
    return Tool.from_function(fn, name=name, annotations=annotations)


# -- syntax ----------------------------------------------------------------------------------
def test_rules_parse_from_json_and_markdown_front_matter() -> None:
    rules = [{"when": {"action": "read", "n": 2, "flag": True, "gone": None},
              "readOnlyHint": True},
             {"when": {"action": {"in": ["a", "b"]}, "x": {"not_in": [1]},
                       "y": {"present": False}, "z": {"equals": [1, 2]}},
              "destructiveHint": False},
             {"openWorldHint": False}]
    from_json = parse_text(json.dumps({"resolution": rules}), ".json", "t")
    markdown = "---\n" + json.dumps({"resolution": rules}) + "\n---\nProse.\n"
    from_md = parse_text(markdown, ".md", "t")
    assert from_json.resolution == from_md.resolution
    assert from_json.resolution is not None and len(from_json.resolution) == 3
    assert "resolution" not in from_json.fields()


@pytest.mark.parametrize(("rule", "message"), [
    ({"when": {"action": ["a", "b"]}, "readOnlyHint": True}, 'write {"in": [...]}'),
    ({"when": {"action": {"in": ["a"], "equals": "b"}}, "readOnlyHint": True},
     "exactly one of"),
    ({"when": {"action": {}}, "readOnlyHint": True}, "exactly one of"),
    ({"when": {"action": {"like": "a*"}}, "readOnlyHint": True}, "like"),
    ({"when": {"action": "read"}}, "at least one of"),
    ({"when": {"action": "read"}, "readonlyHint": True}, "readonlyHint"),
    ({"when": {"action": "read"}, "readOnlyHint": "yes"}, "readOnlyHint"),
    ({"when": "read", "readOnlyHint": True}, "when"),
])
def test_bad_rules_are_refused_with_their_location(rule: dict[str, Any], message: str) -> None:
    text = '{\n  "summary": "s",\n  "resolution": ' + json.dumps([rule]) + "\n}"
    with pytest.raises(DescriptionError) as caught:
        parse_text(text, ".json", "t")
    assert str(caught.value).startswith("line 3, column 3: field resolution")
    assert message in str(caught.value)


def test_matching_is_first_match_on_arguments_as_sent() -> None:
    rule = Rule.model_validate({"when": {"a": 1, "b": {"in": ["x", "y"]},
                                         "c": {"present": False}, "d": {"not_in": [None]}},
                                "readOnlyHint": True})
    assert rule.matches({"a": 1, "b": "y", "d": 0})
    assert rule.matches({"a": 1.0, "b": "x", "d": "z"})
    assert not rule.matches({"a": True, "b": "x", "d": 0})  # true is not 1 in JSON
    assert not rule.matches({"a": 1, "b": "x", "c": None, "d": 0})  # c sent (even as null)
    assert not rule.matches({"a": 1, "b": "x"})  # not_in needs d sent
    assert not rule.matches({"a": 1, "b": "x", "d": None})
    assert Rule.model_validate({"readOnlyHint": True}).matches({})  # catch-all


def test_json_equality() -> None:
    assert json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not json_equal(True, 1) and not json_equal(0, False) and not json_equal(None, 0)
    assert not json_equal([1], [1, 1]) and not json_equal({"a": 1}, {"b": 1})
    assert json_equal("x", "x") and not json_equal("1", 1)


def test_validation_error_names_a_bad_rule() -> None:
    with pytest.raises(ValidationError):
        Rule.model_validate({"when": {"a": {"in": "abc"}}, "readOnlyHint": True})


# -- the bound, exhaustively ---------------------------------------------------------------
async def test_run_time_check_refuses_exactly_the_unsafe_combinations(tmp_path: Path) -> None:
    resolution = ToolResolution(DescriptionStore(None), catalog=None)  # type: ignore[arg-type]
    refused = answered = 0
    for static in COMBOS:
        tool = tool_with(static)
        for rule in COMBOS:
            if not given(rule):
                continue  # a rule must give a hint
            rules = [Rule.model_validate({"when": {"k": 1}, **given(rule)})]
            unsafe = oracle_unsafe(static, rule)
            try:
                hints = await resolution._resolve(tool, rules, {"k": 1})
            except MCPError as exc:
                assert exc.error.code == -32603
                assert unsafe, (static, rule)
                refused += 1
                continue
            assert not unsafe, (static, rule)
            answered += 1
            expected = {k: (rule[k] if rule[k] is not None else hints.wire()[k]) for k in HINTS}
            assert hints.wire() == expected
    assert refused > 1000 and answered > 1000  # both sides really exercised


def test_check_reports_every_unsafe_rule_at_its_line(tmp_path: Path) -> None:
    tools: dict[str, Tool] = {}
    expected: set[tuple[str, int]] = set()
    lines: dict[str, list[int]] = {}
    for index, static in enumerate(COMBOS):
        name = f"tool_{index}"
        tools[name] = tool_with(static, name)
        rules = [{"when": {"k": i}, **given(rule)} for i, rule in enumerate(COMBOS)
                 if given(rule)]
        for i, rule in enumerate(c for c in COMBOS if given(c)):
            if oracle_unsafe(static, rule):
                expected.add((name, i))
        body = ",\n".join("    " + json.dumps(r) for r in rules)
        text = '{\n  "resolution": [\n' + body + "\n  ]\n}\n"
        (tmp_path / f"{name}.json").write_text(text, encoding="utf-8")
        lines[name] = [3 + i for i in range(len(rules))]
    problems = [p for p in check(tools, tmp_path) if p.severity == "error"]
    found: set[tuple[str, int]] = set()
    for problem in problems:
        path, line, column = problem.where.rsplit(":", 2)
        name = Path(path).stem
        index = int(problem.message.split("]")[0].split("[")[1])
        assert lines[name][index] == int(line) and column == "5", problem
        found.add((name, index))
    assert found == expected
    assert len(expected) > 1000


def test_rule_locations_in_json_and_markdown() -> None:
    text = '{"resolution": [{"readOnlyHint": true},\n  {"when": {"a": [1]}, "x": 1} , 3]}'
    assert rule_locations(text, ".json") == [(1, 17), (2, 3), (2, 34)]
    md = '---\n{\n "resolution": [\n   {"readOnlyHint": true}\n ]\n}\n---\nBody'
    assert rule_locations(md, ".md") == [(4, 4)]
    assert rule_locations('{"summary": "x"}', ".json") == []
    assert rule_locations('{"resolution": 3}', ".json") == []


def test_check_reports_conditions_that_can_never_hold(tmp_path: Path) -> None:
    mcp = FastMCP("x")

    @mcp.tool(annotations=ToolAnnotations(openWorldHint=False))
    def notes(action: str, count: int = 1) -> str:
        return action

    tool = Tool.from_function(notes, annotations=ToolAnnotations(openWorldHint=False))
    (tmp_path / "notes.json").write_text(json.dumps({"resolution": [
        {"when": {"acton": "read"}, "readOnlyHint": True},
        {"when": {"count": {"in": ["two", 2]}}, "idempotentHint": True},
        {"destructiveHint": False},
        {"when": {"action": "x"}, "readOnlyHint": True},
    ]}), encoding="utf-8")
    found = [(p.severity, p.message) for p in check({"notes": tool}, tmp_path)]
    assert ("error", "resolution[0]: when names 'acton', which is not a parameter of the "
                     "tool") in found
    assert ("warning", "resolution[1]: 'two' is not a valid value of 'count', so it never "
                       "matches") in found
    assert ("warning", "resolution[3] is never reached: resolution[2] matches every call") \
        in found
    assert ("warning", "resolution[0] is read-only but keeps destructiveHint: true from the "
                       "tool; say destructiveHint: false") in found
    assert len(found) == 5  # and resolution[3] is read-only too


CLI_SERVER = '''
from fastmcp import FastMCP
from mcp_types import ToolAnnotations

mcp = FastMCP("files")


@mcp.tool(annotations=ToolAnnotations(destructiveHint=False, openWorldHint=False))
def manage_files(action: str, path: str) -> str:
    """Read or append to a file."""
    return action
'''


def test_check_command_fails_on_a_rule_breaking_the_bound(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(CLI_SERVER, encoding="utf-8")
    folder = tmp_path / "descriptions"
    folder.mkdir()
    (folder / "manage_files.md").write_text(
        '---\n{"resolution": [\n  {"when": {"action": "read"}, "readOnlyHint": true},\n'
        '  {"when": {"action": "append"}, "destructiveHint": true}\n]}\n---\nProse.\n',
        encoding="utf-8")
    done = run_cli("check", "app.py:mcp", folder, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (f"{folder}/manage_files.md:4:3: error: resolution[1]: the tool is annotated "
            "destructiveHint: false, so no resolution may be destructive") in done.stdout
    assert "resolution[0]" not in done.stdout
