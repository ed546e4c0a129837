"""Run one agent framework against one server through the scripted model, and summarise.

A *cell* of the matrix is a framework, a transport (``http`` or ``stdio``), a listing
(``plain`` = our middleware off, the baseline; ``default``, ``ProgressiveDisclosure()``
as a user adds it; ``minimal``; ``skeleton``), a server (the demo server, or a replayed
corpus catalog), a target (a tool the listing shows, or on a large catalog one it
leaves out) and optionally a setting the documentation tells that framework's users to
make (its server half in ``serve.SETTINGS``, its framework half in the driver, both by
the setting's name). ``run_cell`` starts the server
from this interpreter (over HTTP on a free 127.0.0.1 port, or hands the framework the
command to start it over stdio), runs the framework's driver in its own virtualenv, and
returns the JSON summary the driver printed (see ``drivers/_common.py``). ``run_cells``
runs several cells side by side.

Example:
    ```python
    with ScriptedModel() as model:
        summary = run_cell(model, Cell("langchain", "http", "default"), Path("/tmp/x"))
        summary["steps_to_first_success"]
    ```
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastmcp_progressive.cli.tokens import Tokens
from tests.corpus import corpus_dir
from tests.hosts.frameworks import BY_NAME, HERE
from tests.hosts.model import Script, ScriptedModel, search_words
from tests.hosts.serve import REPLY
from tests.waiting import free_port, port_open, until_sync

SERVE = HERE / "serve.py"
DRIVER_TIMEOUT = 180.0
SERVER_START_TIMEOUT = 60.0

SCENARIOS: dict[tuple[str, str], tuple[str, Script]] = {
    # The answer's price depends on both weight and speed: 1500 (express) + 1200 // 100.
    ("demo", "listed"): (
        "Quote express shipping for a 1200 g parcel to ZIP 94110.",
        Script("get_shipping_quote",
               {"destination_zip": "94110", "weight_grams": 1200, "speed": "express"},
               success="1512")),
    # On a large catalog a target early in the server's order (a budgeted listing on a
    # fresh server starts from it) and one far from it; each script's query is the tool's
    # own words (name and summary), what the model searches with when it is not listed.
    # Every argument of each target is required, and the model sends them all: smolagents
    # (mcpadapt) passes no `required` and refuses a call that leaves a listed input out,
    # plain servers too.
    ("github-mcp-server", "listed"): (
        "React with a thumbs-up to issue 42 of octo-org/hello-world.",
        Script("add_issue_reaction", {"owner": "octo-org", "repo": "hello-world",
                                      "issue_number": 42, "content": "+1"},
               success=REPLY, query=search_words(
                   "add_issue_reaction", "Add a reaction to an issue or pull request."))),
    ("github-mcp-server", "unlisted"): (
        "Rename issue 42 of octo-org/hello-world to 'Crash on start'.",
        Script("update_issue_title", {"owner": "octo-org", "repo": "hello-world",
                                      "issue_number": 42, "title": "Crash on start"},
               success=REPLY, query=search_words(
                   "update_issue_title", "Update the title of an existing issue."))),
    ("livemcptool", "listed"): (
        "What is Apple's (AAPL) stock price right now?",
        Script("yahoo-finance_get_current_stock_price", {"symbol": "AAPL"}, success=REPLY,
               query=search_words("yahoo-finance_get_current_stock_price",
                                  "Get the current stock price based on stock symbol."))),
    ("livemcptool", "unlisted"): (
        "Who registered example.com? Look the domain up with whois.",
        Script("whois_whois_domain", {"domain": "example.com"}, success=REPLY,
               query=search_words("whois_whois_domain",
                                  "Looksup whois information about the domain"))),
}
"""The task and the model's script per (server, target): ``listed``, a tool the server's
default listing shows; ``unlisted``, one it leaves out on a large catalog."""
CATALOGS = ("github-mcp-server", "livemcptool")
"""The large corpus catalogs the matrix and the benchmark replay (117 and 527 tools)."""


@dataclass(frozen=True)
class Cell:
    """One framework x transport x listing x server x target combination."""

    framework: str
    transport: str
    listing: str
    server: str = "demo"
    target: str = "listed"
    max_tools: int | None = None
    """``ListingSettings(max_tools=...)`` on the server (``None``: the listing's own)."""
    setting: str = ""
    """A documented setting's name (``serve.SETTINGS``; "": the framework's defaults)."""

    @property
    def label(self) -> str:
        listing = (self.listing + (f"-max{self.max_tools}" if self.max_tools else "")
                   + (f"+{self.setting}" if self.setting else ""))
        return f"{self.framework}/{self.transport}/{listing}/{self.server}/{self.target}"


def _server_command(cell: Cell, log: Path) -> list[str]:
    command = [sys.executable, str(SERVE), "--log", str(log), "--listing", cell.listing]
    if cell.max_tools is not None and cell.listing != "plain":
        command += ["--max-tools", str(cell.max_tools)]
    if cell.setting:
        command += ["--setting", cell.setting]
    if cell.server == "demo":
        return command
    return [*command, "--catalog", cell.server, "--corpus", str(corpus_dir())]


def _driver_env(base_url: str) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE",
            "FASTMCP_PROGRESSIVE_CORPUS")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    return env | {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "scripted-model-no-key",
                  "OPENAI_AGENTS_DISABLE_TRACING": "1", "PYTHONUNBUFFERED": "1",
                  "FASTMCP_CHECK_FOR_UPDATES": "off", "PYTHONDONTWRITEBYTECODE": "1"}


def run_cell(model: ScriptedModel, cell: Cell, workdir: Path) -> dict[str, Any]:
    """Run ``cell`` once; the driver's summary plus ``cell`` and, on failure, ``stderr``."""
    framework = BY_NAME[cell.framework]
    task, script = SCENARIOS[(cell.server, cell.target)]
    run_id = f"{cell.label.replace('/', '-')}-{uuid.uuid4().hex[:8]}"
    base_url = model.open_run(run_id, script)
    log = workdir / f"{run_id}.jsonl"
    serve = _server_command(cell, log)
    driver = [str(framework.python), str(framework.script), "--model-url", base_url,
              "--framework", cell.framework, "--transport", cell.transport, "--log", str(log),
              "--task", task, "--setting", cell.setting]
    server: subprocess.Popen[bytes] | None = None
    try:
        if cell.transport == "http":
            port = free_port()
            with log.with_suffix(".server.txt").open("wb") as output:
                server = subprocess.Popen([*serve, "--port", str(port)],
                                          stdout=output, stderr=subprocess.STDOUT)
            until_sync(lambda: port_open(port), SERVER_START_TIMEOUT, "the MCP server",
                       interval=0.05, process=server)
            driver += ["--mcp-url", f"http://127.0.0.1:{port}/mcp"]
        else:
            driver += ["--command", json.dumps(serve)]
        began = time.monotonic()
        try:
            done = subprocess.run(driver, capture_output=True, text=True,
                                  env=_driver_env(base_url), timeout=DRIVER_TIMEOUT, cwd=workdir)
        except subprocess.TimeoutExpired as hung:  # one hung framework fails its cell only
            done = subprocess.CompletedProcess(driver, -9, "", _text(hung.stderr))
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
    lines = done.stdout.strip().splitlines()
    try:
        summary: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, ValueError):
        summary = {"error": f"driver printed no summary (exit {done.returncode})"}
    summary["cell"] = cell.label
    summary |= session_cost(model.bodies(run_id))
    summary["seconds"] = round(time.monotonic() - began, 1)
    if summary.get("error") or done.returncode:
        summary["stderr"] = done.stderr[-4000:]
    return summary


def _text(output: bytes | str | None) -> str:
    return output.decode("utf-8", "replace") if isinstance(output, bytes) else output or ""


def session_cost(bodies: list[Any]) -> dict[str, Any]:
    """What the run cost in model input: o200k tokens (compact JSON, as ``tokens.py``
    counts) of the first request's ``tools`` array and of every request body, summed."""
    tools = (bodies[0].get("tools") or []) if bodies else []
    count = Tokens().json
    return {"tools_tokens": count(tools) if bodies else -1,
            "session_tokens": sum(count(body) for body in bodies), "requests": len(bodies)}


def run_cells(model: ScriptedModel, cells: Iterable[Cell], workdir: Path,
              parallel: int = 2) -> dict[Cell, dict[str, Any]]:
    """Run every cell, ``parallel`` at a time; results keyed by cell."""
    chosen = list(dict.fromkeys(cells))
    workdir.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        results = list(pool.map(lambda cell: run_cell(model, cell, workdir), chosen))
    return dict(zip(chosen, results, strict=True))
