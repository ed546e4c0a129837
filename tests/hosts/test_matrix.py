"""The host matrix: real agent frameworks, a scripted model, the demo server.

For each framework x transport the same task runs twice: against the demo server without
our middleware (the baseline) and with it as shipped. The middleware must not cost the
user the task:

- the tool body runs with the model's exact arguments within two calls of the tool;
- the schema the host shows the model (the ``tools`` array it sent) declares every argument
  of the tool, so no model is told "no arguments" and no host drops or rejects one;
- the first successful call comes at most one model step after the baseline's;
- the ``tools`` array the host sends is smaller than the baseline's. The whole session's
  tokens (every model request, summed) are in each run's summary; their targets, on a
  117-tool catalog, live in ``benchmarks/`` (``--section hosts``).

On a large catalog (github-mcp-server, 117 tools, over stdio) the server runs
``ProgressiveDisclosure()`` as a user adds it, and the model needs a tool the listing
leaves out (and, separately, one it shows): the tool body runs with the model's exact
arguments within 3 model requests, the final answer included, and the whole session
(every model request summed) is at least 80% below the same framework against the plain
server (where the plain server loads at all; mcp-use at its default step bound, whose host
profile lists every tool, 40%: ``SESSION_FLOORS``). ``benchmarks/`` (``--section hosts``)
measures both corpus catalogs and both targets.

Where a framework cannot be helped from the server, its driver sets what a user must set
(tests/hosts/README.md says what and why) and ``BASELINE_DEFECTS`` names what fails with
or without us. Where the documentation tells a framework's users a setting that gets them
more than its defaults (``Framework.setting``: mcp-use's ``max_steps=8`` with the listing
budget), the large-catalog checks also run with it, and are held to the same targets.

The cells run once per test run, two at a time (``run_cells``), only those the selected
tests need; the framework virtualenvs are made first if missing (``make_venvs.py``, cached,
one build per virtualenv however many pytest-xdist workers ask). Run alone with
``pytest -m hosts``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.corpus import catalog_path
from tests.hosts.frameworks import BY_NAME, FRAMEWORKS
from tests.hosts.harness import Cell, run_cells
from tests.hosts.make_venvs import ensure
from tests.hosts.model import ScriptedModel
from tests.run_once import kept_result

# agent frameworks in their own processes
# (the xdist group keeps the file on one worker: tests/conftest.py)
pytestmark = [pytest.mark.hosts, pytest.mark.slow, pytest.mark.xdist_group("timed-processes")]

TRANSPORTS = ("http", "stdio")
CASES = [pytest.param((f.name, t), id=f"{f.name}-{t}") for f in FRAMEWORKS for t in TRANSPORTS]

BASELINE_DEFECTS = {
    ("crewai-mcps", "http"): "CrewAI's per-call client raises while closing the HTTP "
                             "transport, after the body ran: the model is shown an error "
                             "for every call, plain servers too",
}
"""Framework paths that fail the same way without our middleware (nothing a server or a
setting fixes): the body must still run with the model's arguments, and the baseline must
still show the defect (so the matrix notices when the framework fixes it)."""

LARGE_CATALOG = "github-mcp-server"
LARGE_TRANSPORT = "stdio"
LARGE_MAX_TOOLS: int | None = None
"""``ListingSettings(max_tools=...)`` of the large-catalog scenario: ``None``, the default."""
EVERY_TOOL_LISTED = {
    "mcp-use": "its host profile lists every tool (its agent's default max_steps=5 allows "
               "one tool round and the answer)",
    "pydantic-ai": "its MCPToolset is FastMCP's own Client (clientInfo fastmcp), whose host "
                   "profile lists every tool with its outputSchema: a tool outside a budget "
                   "would cost it a tools/list on every call (issue 33)",
}
"""Framework paths the default lists every tool to: the unlisted target is listed there."""
LARGE_MISSES: dict[tuple[str, str], str] = {}
"""(framework path, check) pairs where the default misses issue 28's target today, with why
(strict xfail: the matrix notices when it is met); check is ``unlisted``, ``listed`` or
``session``. None today."""
SESSION_FLOORS = {
    "mcp-use": (0.40, "its host profile lists every tool, typed (its agent's default "
                      "max_steps=5 has room for one tool round), so each request carries the "
                      "whole catalog: 47% below plain measured; its documented setting gives "
                      "it the budget and 80% (test_documented_setting_session_is_80_...)"),
    "pydantic-ai": (0.55, "FastMCP's own Client underneath: listed every tool, typed, so its "
                          "results stay typed and no call carries a tools/list; each request "
                          "carries the whole typed catalog: 59% below plain measured"),
}
"""Framework paths whose default session is held to a lower floor than ``LARGE_SESSION_CUT``
(the figure measured, rounded down), with why."""
STEP_BOUND = {"mcp-use": "mcp-use-budget-at-5-steps"}
"""Framework paths whose default step bound has no room for the budget's two tool rounds
and the answer: the setting that gives it the budget at that bound, whose run must still
end without an answer (the matrix notices when the framework's default changes)."""


def _large_cases(check: str) -> list[Any]:
    return [pytest.param(f.name, id=f.name, marks=[pytest.mark.xfail(
                strict=True, reason=LARGE_MISSES[(f.name, check)])]
            if (f.name, check) in LARGE_MISSES else []) for f in FRAMEWORKS]


PLAIN_UNLOADABLE = {
    "autogen-tools": "AutoGen's mcp_server_tools rebuilds a pydantic model per tool and its "
                     "schema converter hashes a property's `type` (autogen_core/utils/"
                     "_json_to_pydantic.py:217, 0.7.5): github-mcp-server's type lists "
                     "fail the whole load, plain servers too",
}
"""Framework paths that cannot load the large catalog's plain listing (so no whole-session
comparison): the baseline must still fail (the matrix notices when the framework fixes it)."""
LARGE_SESSION_CUT = 0.80
Results = dict[Cell, dict[str, Any]]


def _cells(case: tuple[str, str]) -> tuple[Cell, Cell]:
    framework, transport = case
    return Cell(framework, transport, "plain"), Cell(framework, transport, "default")


@pytest.fixture(scope="session")
def matrix(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Results:
    """Every cell the selected matrix tests need, run once (results as JSON gives them)."""
    wanted = {(name, value) for item in request.session.items
              if item.get_closest_marker("hosts") and hasattr(item, "callspec")
              for name, value in item.callspec.params.items() if name in CELLS_OF}
    if not catalog_path(LARGE_CATALOG).exists():  # the large-catalog tests skip, naming it
        wanted = {(name, value) for name, value in wanted if name == "case"}
    cells = [cell for name, value in sorted(wanted) for cell in CELLS_OF[name](value)]
    # Driving every framework takes minutes of both cores: once per test run (run_once.py).
    with kept_result(tmp_path_factory, "host-matrix") as kept:
        done = json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else {}
        missing = [cell for cell in dict.fromkeys(cells) if cell.label not in done]
        if missing:
            # under the run's lock, and each build under its virtualenv's own lock
            ensure(sorted({cell.framework for cell in missing}))
            with ScriptedModel() as model:
                ran = run_cells(model, missing, tmp_path_factory.mktemp("hosts"))
            as_json = {cell.label: json.dumps(result) for cell, result in ran.items()}
            done.update({key: json.loads(text) for key, text in as_json.items()})
            kept.write_text(json.dumps(done), encoding="utf-8")
    return {cell: done[cell.label] for cell in cells}


def _large_cells(framework: str, setting: str = "") -> tuple[Cell, Cell, Cell]:
    """Plain and ours with the unlisted target, ours with the listed one (with ``setting``,
    plain too: its framework half applies there)."""
    def cell(listing: str, target: str) -> Cell:
        return Cell(framework, LARGE_TRANSPORT, listing, LARGE_CATALOG, target,
                    LARGE_MAX_TOOLS if listing != "plain" else None, setting)

    return cell("plain", "unlisted"), cell("default", "unlisted"), cell("default", "listed")


def _documented_cells(framework: str) -> tuple[Cell, Cell, Cell]:
    return _large_cells(framework, BY_NAME[framework].setting)


def _step_bound_cell(framework: str) -> tuple[Cell]:
    return (Cell(framework, LARGE_TRANSPORT, "default", LARGE_CATALOG, "unlisted",
                 LARGE_MAX_TOOLS, STEP_BOUND[framework]),)


CELLS_OF = {"case": _cells, "framework": _large_cells, "documented": _documented_cells,
            "bounded": _step_bound_cell}
"""The cells each parameter of a matrix test needs, by the parameter's name."""
DOCUMENTED = [pytest.param(f.name, id=f"{f.name}+{f.setting}") for f in FRAMEWORKS if f.setting]


def _first_use_step(run: dict[str, Any]) -> int | None:
    """The model step whose call ran the tool body: the step the model saw the success, or,
    for a host that ends the run right after a tool round (AutoGen's
    ``max_tool_iterations``), the step of its last call when the body ran."""
    if run["steps_to_first_success"] is not None:
        return int(run["steps_to_first_success"])
    calls = [move for move in run["model_moves"] if move["kind"] == "call"]
    return int(calls[-1]["step"]) if run["body_ran"] and calls else None


def _large_run(matrix: Results, cell: Cell) -> dict[str, Any]:
    if not catalog_path(LARGE_CATALOG).exists():
        pytest.skip(f"the corpus catalog is not at {catalog_path(LARGE_CATALOG)}")
    return _run(matrix, cell)


def _run(matrix: Results, cell: Cell) -> dict[str, Any]:
    summary = matrix[cell]
    shown = {k: v for k, v in summary.items() if k != "tools_arrays"}
    print(json.dumps(shown, indent=1))  # pytest shows it when the test fails
    return summary


@pytest.mark.parametrize("case", CASES)
def test_baseline_calls_the_tool_first_time(matrix: Results, case: tuple[str, str]) -> None:
    """Without the middleware the harness itself works: one step, arguments intact."""
    run = _run(matrix, _cells(case)[0])
    assert run["body_ran"] and run["arguments_intact"], run.get("error")
    assert run["refusals"] == 0
    if case in BASELINE_DEFECTS:
        assert run["steps_to_first_success"] is None, "fixed upstream? " + BASELINE_DEFECTS[case]
    else:
        assert run["steps_to_first_success"] == 1


@pytest.mark.parametrize("case", CASES)
def test_tool_body_runs_with_exact_arguments_within_two_calls(matrix: Results,
                                                             case: tuple[str, str]) -> None:
    run = _run(matrix, _cells(case)[1])
    assert run["body_ran"], f"the tool body never ran: {run['server_calls']}"
    assert run["arguments_intact"], f"arguments changed on the way: {run['arguments']}"
    assert run["server_calls"][0]["arguments"] == run["arguments"]
    if case not in BASELINE_DEFECTS:
        calls = run["target_calls_to_first_success"]
        assert calls is not None and calls <= 2, run["model_moves"]


@pytest.mark.parametrize("case", CASES)
def test_host_shows_the_model_every_argument(matrix: Results, case: tuple[str, str]) -> None:
    """The schema in the host's ``tools`` array lists every argument the tool takes."""
    run = _run(matrix, _cells(case)[1])
    assert run["arguments_declared"] == "declared"


@pytest.mark.parametrize("case", CASES)
def test_first_success_within_one_step_of_baseline(matrix: Results,
                                                   case: tuple[str, str]) -> None:
    if case in BASELINE_DEFECTS:
        pytest.skip(BASELINE_DEFECTS[case])
    baseline, ours = (_run(matrix, cell) for cell in _cells(case))
    assert baseline["steps_to_first_success"] is not None
    assert ours["steps_to_first_success"] is not None, "no call of the tool ever succeeded"
    assert ours["steps_to_first_success"] <= baseline["steps_to_first_success"] + 1


@pytest.mark.parametrize("case", CASES)
def test_host_shows_the_model_less_than_plain(matrix: Results, case: tuple[str, str]) -> None:
    """The middleware was on: what the host sent the model is smaller than the baseline's
    (o200k tokens of the first request's ``tools`` array)."""
    baseline, ours = (_run(matrix, cell) for cell in _cells(case))
    assert 0 < ours["tools_tokens"] < baseline["tools_tokens"]
    assert ours["session_tokens"] > 0 and baseline["session_tokens"] > 0


# -- the default on a large catalog: any tool within 3 model requests, 80% cheaper ----------
def _reached_within_three_requests(run: dict[str, Any]) -> None:
    assert run["body_ran"] and run["arguments_intact"], (run.get("error"), run["server_calls"])
    assert run["error"] is None
    step = _first_use_step(run)
    # the call that ran it at request 2 at the latest, the answer (if the host asks for
    # one: AutoGen ends at its last tool round) at request 3
    assert step is not None and step <= 2, run["model_moves"]
    assert run["requests"] <= 3, run["model_moves"]


@pytest.mark.parametrize("framework", _large_cases("unlisted"))
def test_default_reaches_an_unlisted_tool_within_three_requests(matrix: Results,
                                                                framework: str) -> None:
    """The target is not in the host's ``tools`` array: the model searches with the tool's
    own words (``describe_tools({"query": ...})``), then calls it by name where the host
    re-listed (AutoGen's McpWorkbench, OpenAI Agents) or through ``run_tool``."""
    run = _large_run(matrix, _large_cells(framework)[1])
    assert run["target_listed"] is (framework in EVERY_TOOL_LISTED), run["model_moves"]
    _reached_within_three_requests(run)


@pytest.mark.parametrize("framework", _large_cases("listed"))
def test_default_reaches_a_listed_tool_within_three_requests(matrix: Results,
                                                             framework: str) -> None:
    run = _large_run(matrix, _large_cells(framework)[2])
    assert run["target_listed"] is True, "the scenario's target was not listed"
    _reached_within_three_requests(run)


def _session_cut(plain: dict[str, Any], ours: dict[str, Any]) -> float:
    assert plain["body_ran"] and plain["session_tokens"] > 0, plain.get("error")
    assert ours["body_ran"] and ours["session_tokens"] > 0, ours["model_moves"]
    return float(1 - ours["session_tokens"] / plain["session_tokens"])


@pytest.mark.parametrize("framework", _large_cases("session"))
def test_default_session_is_80_percent_below_plain(matrix: Results, framework: str) -> None:
    """The whole session of a first use of the unlisted tool (every model request the host
    sent, o200k) against the same task on the plain server (the tool listed there); a lower
    floor where ``SESSION_FLOORS`` says why."""
    plain, ours = (_large_run(matrix, cell) for cell in _large_cells(framework)[:2])
    if framework in PLAIN_UNLOADABLE:
        assert not plain["body_ran"] and plain["requests"] == 0, \
            "fixed upstream? " + PLAIN_UNLOADABLE[framework]
        pytest.skip(PLAIN_UNLOADABLE[framework])
    floor, why = SESSION_FLOORS.get(framework, (LARGE_SESSION_CUT, ""))
    assert _session_cut(plain, ours) >= floor, (ours["session_tokens"], plain["session_tokens"],
                                                why)


# -- with a framework's documented setting: the same targets, 80% included -----------------
@pytest.mark.parametrize("documented", DOCUMENTED)
def test_documented_setting_reaches_an_unlisted_tool_within_three_requests(
        matrix: Results, documented: str) -> None:
    run = _large_run(matrix, _documented_cells(documented)[1])
    assert run["target_listed"] is False, "the setting did not give it the listing budget"
    _reached_within_three_requests(run)


@pytest.mark.parametrize("documented", DOCUMENTED)
def test_documented_setting_reaches_a_listed_tool_within_three_requests(
        matrix: Results, documented: str) -> None:
    run = _large_run(matrix, _documented_cells(documented)[2])
    assert run["target_listed"] is True, "the scenario's target was not listed"
    _reached_within_three_requests(run)


@pytest.mark.parametrize("documented", DOCUMENTED)
def test_documented_setting_session_is_80_percent_below_plain(matrix: Results,
                                                              documented: str) -> None:
    """Against the plain server with the same framework setting."""
    plain, ours = (_large_run(matrix, cell) for cell in _documented_cells(documented)[:2])
    cut = _session_cut(plain, ours)
    assert cut >= LARGE_SESSION_CUT, (ours["session_tokens"], plain["session_tokens"])


@pytest.mark.parametrize("bounded", list(STEP_BOUND))
def test_the_budget_at_the_default_step_bound_ends_without_an_answer(
        matrix: Results, bounded: str) -> None:
    """Why the shipped profile lists every tool: with the budget, an unlisted tool takes two
    tool rounds (search, then the call) and the answer, more than the default step bound
    has room for: the call runs, but the run ends in an error, the user gets no answer."""
    (cell,) = _step_bound_cell(bounded)
    run = _large_run(matrix, cell)
    assert run["target_listed"] is False
    assert run["error"] is not None and run["final_output"] is None, \
        "the default step bound has room now: revisit the shipped host profile"
