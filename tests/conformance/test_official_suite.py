"""The official MCP conformance suite (``tests/conformance/suite.py``) against our fixture
server (``tests/conformance/fixture_server.py``), as the MCP SDKs run it against theirs.

The fixture runs plain, with the middleware (default, and with the suite's client opted out
through ``full_clients``) and behind ``fastmcp-progressive proxy --http`` (the fixture its
stdio upstream), each in a process of its own on 127.0.0.1. The plain run must pass every
scenario; every other run is compared with it check by check, and each difference must be
one listed here as designed (``DESIGNED``), or the test fails naming it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.conformance import suite
from tests.npm_servers import ROOT, NodeMissing, required
from tests.waiting import PATIENCE, free_port, port_open, until_sync

pytestmark = [
    pytest.mark.xdist_group("conformance"),  # one worker: one install, runs one at a time
    pytest.mark.slow,  # node 22 from npm, a server process per run
]
START = PATIENCE
"""Seconds a server process may take to listen (imports on 2 busy cores)."""

DESIGNED = {
    # The progressive listing is the reduced schema (``listed_schema.py``): no ``$schema``,
    # no ``$defs`` (inlined), no ``additionalProperties``; the full definition, and what
    # a client served in full lists, keep them.
    "default": {("json-schema-2020-12", "json-schema-2020-12-$schema"): "FAILURE",
                ("json-schema-2020-12", "json-schema-2020-12-$defs"): "FAILURE",
                ("json-schema-2020-12", "json-schema-2020-12-additionalProperties"): "FAILURE"},
    "full": {},
}
"""What a run may differ from the plain one in: (scenario, check) -> its status there."""
SCENARIOS = 32
CHECKS = 44


@pytest.fixture(scope="module")
def conformance() -> list[str]:
    """The command that runs the suite, installing node 22 and the suite when missing."""
    try:
        return suite.ensure_installed()
    except NodeMissing as exc:
        if required():
            pytest.fail(f"{exc} (required here: FASTMCP_PROGRESSIVE_REQUIRE_NODE is set)")
        pytest.skip(str(exc))


@contextmanager
def listening(*args: str) -> Iterator[str]:
    """``python ARGS --http PORT``-style server process; yields its MCP URL."""
    port = free_port()
    env = {**os.environ, "FASTMCP_CHECK_FOR_UPDATES": "off", "NO_COLOR": "1"}
    command = [sys.executable, *(a.replace("{port}", str(port)) for a in args)]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        until_sync(lambda: port_open(port), START, " ".join(args[:3]), process=process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            _, err = process.communicate(timeout=START)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
    assert "Traceback" not in err, err[-3000:]


FIXTURE = ("-m", "tests.conformance.fixture_server")


def fixture_run(conformance: list[str], middleware: str) -> suite.Results:
    with listening(*FIXTURE, "--http", "{port}", "--middleware", middleware) as url:
        return suite.run(conformance, url)


def proxy_run(conformance: list[str], *options: str) -> suite.Results:
    with listening("-m", "fastmcp_progressive", "proxy", "--http", "{port}", *options,
                   "--", sys.executable, *FIXTURE) as url:
        return suite.run(conformance, url)


@pytest.fixture(scope="module")
def plain(conformance: list[str]) -> suite.Results:
    return fixture_run(conformance, "none")


def differences(plain: suite.Results, other: suite.Results) -> dict[tuple[str, str], str]:
    """(scenario, check) -> status in ``other``, wherever it is not the plain run's."""
    keys = {(s, c) for s, checks in plain.items() for c in checks} | {
        (s, c) for s, checks in other.items() for c in checks}
    return {key: other.get(key[0], {}).get(key[1], "MISSING") for key in sorted(keys)
            if other.get(key[0], {}).get(key[1]) != plain.get(key[0], {}).get(key[1])}


def test_the_plain_fixture_passes_every_scenario(plain: suite.Results) -> None:
    """The fixture implements every scenario: none fails, 44 checks succeed (the two
    ``server-sse-polling`` warnings are FastMCP's: no priming event, no retry field)."""
    failed = {(s, c) for s, checks in plain.items() for c, v in checks.items()
              if v == "FAILURE"}
    assert not failed, failed
    assert len(plain) == SCENARIOS, sorted(plain)
    assert sum(v == "SUCCESS" for checks in plain.values() for v in checks.values()) == CHECKS


@pytest.mark.parametrize("middleware", ["default", "full"])
def test_the_middleware_differs_from_the_plain_server_only_as_designed(
        conformance: list[str], plain: suite.Results, middleware: str) -> None:
    """Opted out (``full_clients``), the suite sees exactly the plain server; by default,
    only the reduced listing of ``json-schema-2020-12``'s tool differs."""
    assert differences(plain, fixture_run(conformance, middleware)) == DESIGNED[middleware]


@pytest.mark.parametrize("opted", ["default", "full"])
def test_the_proxy_differs_from_the_plain_server_only_as_the_middleware_does(
        conformance: list[str], plain: suite.Results, opted: str) -> None:
    """Behind ``proxy --http`` (the fixture its stdio upstream), with the suite's client
    opted out by ``--full-client`` or not: completions, subscriptions, Host/Origin checks
    and the upstream's schemas all reach the suite as the plain server gives them."""
    options = ("--full-client", "conformance-*") if opted == "full" else ()
    assert differences(plain, proxy_run(conformance, *options)) == DESIGNED[opted]


def test_results_are_read_per_scenario() -> None:
    """The results folder names ``suite.run`` reads (``server-<scenario>-<timestamp>``)."""
    named = suite._RESULT_DIR.match("server-json-schema-2020-12-2026-12-07T05-12-10-264Z")
    assert named is not None and named["scenario"] == "json-schema-2020-12"
