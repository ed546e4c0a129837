"""The project's single sources: the version, the license, and the demo's token figures.

The version lives in ``fastmcp_progressive.__version__`` only (pyproject reads it); the
README quotes the demo's listing figures, which come from ``tokens.token_report``, the
function the ``tokens`` command prints and the walkthrough shows.
"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import PackageNotFoundError, metadata, version
from pathlib import Path

import pytest

import fastmcp_progressive
from fastmcp_progressive.cli.tokens import Tokens, token_report
from tests.hosts.serve import demo_server

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_is_written_once() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    source = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]
    assert source == {"attr": "fastmcp_progressive.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", fastmcp_progressive.__version__)
    try:
        installed = version("fastmcp-progressive")
    except PackageNotFoundError:  # run from an unpacked sdist without installing it
        pytest.skip("fastmcp-progressive is not installed")
    assert installed == fastmcp_progressive.__version__


def test_the_license_ships_with_the_distribution() -> None:
    assert PYPROJECT["project"]["license"] == "MIT"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    try:
        declared = metadata("fastmcp-progressive").get("License-Expression")
    except PackageNotFoundError:
        pytest.skip("fastmcp-progressive is not installed")
    if declared is not None:  # an install made before the license moved to SPDX has none
        assert declared == "MIT"


async def test_readme_quotes_the_demo_figures_the_cli_prints() -> None:
    pytest.importorskip("bpe_openai")
    server = demo_server()
    try:
        report = await token_report(server, None, None, Tokens())
    finally:
        for middleware in server.middleware:
            getattr(middleware, "close", lambda: None)()
    listing = report["listing"]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert (f"`tokens` reports {listing['without']:,} → {listing['with']:,} listing tokens "
            f"({listing['fields_without']:,} → {listing['fields_with']:,} counted per field"
            in readme), "README's demo figures differ from `fastmcp-progressive tokens`"


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"```bash\n(python3 -m venv \.venv [^\n]*-m pytest[^\n]*)\n```", readme)
    assert len(commands) == 1, commands  # "Run the tests"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[0] in ci
    assert '-m "not slow"' in readme  # the inner loop is documented beside it
    markers = PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]
    assert any(marker.startswith("slow:") for marker in markers)
