"""The authoring CLI: files written, problems found, exit codes.

Each command runs through ``fastmcp_progressive.cli.commands.main(argv)`` in this process, in the
temporary directory holding the server file, with its output captured: the same parser,
loader and exit status a shell gets, without paying an interpreter start per command.
One test runs the installed console script and ``python -m fastmcp_progressive`` as real
processes, so the entry points themselves stay covered. The token listing is also
compared with what a real client receives on the wire.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client, FastMCP

from fastmcp_progressive import (
    ProgressiveDisclosure,
)
from fastmcp_progressive.cli import tokens
from fastmcp_progressive.cli.commands import main
from fastmcp_progressive.cli.tokens import wire_results
from fastmcp_progressive.files.folder import read_description
from tests.cli_runner import Ran, run_cli
from tests.conftest import GENERIC_HOST, serve_http
from tests.spies import count_calls
from tests.waiting import PATIENCE

SERVER = '''
from pydantic import BaseModel
from fastmcp import FastMCP

mcp = FastMCP("billing")


class Line(BaseModel):
    sku: str
    qty: int = 1


@mcp.tool
def create_invoice(customer_id: str, lines: list[Line], currency: str = "EUR") -> dict:
    """Create a draft invoice for a customer. Call send_invoice to email it afterwards,
    once the customer confirmed the lines."""
    return {}


@mcp.tool
def send_invoice(invoice_id: str) -> str:
    """Email a draft invoice to its customer."""
    return "sent"


@mcp.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return "sunny"
'''
TOOLS = {"create_invoice", "send_invoice", "get_weather"}


@pytest.fixture
def app(tmp_path: Path) -> Path:
    path = tmp_path / "app.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


def cli(*args: str | Path, cwd: Path) -> Ran:
    return run_cli(*args, cwd=cwd)


def module_process(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m fastmcp_progressive ARGS`` in a fresh interpreter."""
    env = {**os.environ, "FASTMCP_CHECK_FOR_UPDATES": "off", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "fastmcp_progressive", *map(str, args)],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=PATIENCE,
    )


def write(folder: Path, name: str, data: dict[str, Any] | str, suffix: str = ".json") -> Path:
    path = folder / f"{name}{suffix}"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), "utf-8")
    return path


# -- extract -----------------------------------------------------------------------------
def test_extract_writes_one_file_per_tool_and_never_overwrites(app: Path) -> None:
    out = app.parent / "descriptions"
    first = cli("extract", "app.py:mcp", "-o", out, cwd=app.parent)
    assert first.returncode == 0, first.stderr
    assert {p.name for p in out.iterdir()} == {f"{n}.json" for n in TOOLS}
    invoice = read_description(out, "create_invoice", ".json")
    assert invoice.summary == "Create a draft invoice for a customer."
    assert invoice.description is not None and invoice.description.startswith("Create a draft")

    edited = write(out, "send_invoice", {"summary": "Hand-written."})
    again = cli("extract", "app.py", "-o", out, cwd=app.parent)
    assert again.returncode == 0, again.stderr
    assert "0 written, 3 skipped" in again.stdout
    assert json.loads(edited.read_text())["summary"] == "Hand-written."

    forced = cli("extract", "app.py:mcp", "-o", out, "--force", cwd=app.parent)
    assert forced.returncode == 0 and "3 written" in forced.stdout
    assert read_description(out, "send_invoice", ".json").summary == (
        "Email a draft invoice to its customer.")
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp files left


def test_extract_markdown_and_an_md_file_counts_as_existing(app: Path) -> None:
    out = app.parent / "md"
    done = cli("extract", "app.py:mcp", "-o", out, "--format", "md", cwd=app.parent)
    assert done.returncode == 0, done.stderr
    weather = read_description(out, "get_weather", ".md")
    assert weather.summary == "Current weather for a city."
    assert weather.description == "Current weather for a city."

    as_json = cli("extract", "app.py:mcp", "-o", out, cwd=app.parent)
    assert "0 written, 3 skipped" in as_json.stdout
    assert not list(out.glob("*.json"))  # a .json would silently shadow the .md


# -- check -------------------------------------------------------------------------------
def test_check_passes_a_clean_directory_and_strict_fails_on_warnings(app: Path) -> None:
    out = app.parent / "descriptions"
    assert cli("extract", "app.py:mcp", "-o", out, cwd=app.parent).returncode == 0
    (out / "get_weather.json").unlink()

    clean = cli("check", "app.py:mcp", out, cwd=app.parent)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "tool 'get_weather': warning: has no description file" in clean.stdout
    assert "0 error(s), 1 warning(s)" in clean.stdout

    strict = cli("check", "app.py:mcp", out, "--strict", cwd=app.parent)
    assert strict.returncode == 1


def test_check_reports_every_kind_of_problem_with_its_location(app: Path) -> None:
    out = app.parent / "descriptions"
    out.mkdir()
    write(out, "send_invoice", '{\n  "summary": "Email it."\n  "description": "x"\n}')
    write(out, "get_weather", {"name": "weather", "summary": "Weather."})
    write(out, "send_invoise", {"summary": "Typo."})
    long_summary = ("Create a draft invoice for a customer, with lines, currency and every "
                    "other detail spelled out at length.")
    invoice = write(out, "create_invoice", {
        "summary": long_summary,
        "inputSchema": {
            "type": "object",
            "properties": {"customer_id": {"type": "integer"}, "lines": {"type": "array"},
                           "due_date": {"type": "string"}},
            "required": ["customer_id"],
        },
        "examples": [{"description": "no lines", "input": {"customer_id": "c1"}},
                     {"description": "fine", "input": {"customer_id": "c1", "lines": []}}],
    })

    result = cli("check", "app.py:mcp", out, cwd=app.parent)
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout + result.stderr

    def reported(prefix: str, *words: str) -> bool:
        return any(line.startswith(prefix) and all(w in line for w in words) for line in lines)

    assert reported(f"{out}/send_invoice.json:3:3: error:", "Expecting ',' delimiter")
    assert reported(f"{out}/get_weather.json:2:3: error:", "says 'weather'")
    assert reported(f"{out}/send_invoise.json: error:", "did you mean 'send_invoice'")
    assert reported(f"{out}/create_invoice.json:2:3: error:",
                    f"summary is {len(long_summary)} characters", "allows 100")
    invoice_schema = f"{out}/create_invoice.json:3:3:"
    assert reported(invoice_schema, "error", "'due_date' is not a parameter")
    assert reported(invoice_schema, "error", "required is ['customer_id']",
                    "['customer_id', 'lines']")
    assert reported(invoice_schema, "error", "'customer_id' is integer", "string for the tool")
    assert reported(invoice_schema, "warning", "'currency' of the tool is missing")
    examples_line = invoice.read_text().splitlines().index('  "examples": [') + 1
    examples = f"{out}/create_invoice.json:{examples_line}:3: error:"
    assert reported(examples, "examples[0].input: 'lines' is a required property",
                    "the tool's schema")
    assert reported(examples, "examples[0].input at customer_id: 'c1' is not of type "
                    "'integer'", "the file's inputSchema")
    assert not any("examples[1]" in line for line in lines if "tool's schema" in line)
    assert "tool 'get_weather'" not in result.stdout  # it has a file, even if broken


def test_check_exit_codes_when_it_cannot_run(app: Path) -> None:
    missing_dir = cli("check", "app.py:mcp", app.parent / "nope", cwd=app.parent)
    assert missing_dir.returncode == 2
    assert "is not a directory" in missing_dir.stderr

    bad_server = cli("check", "app.py:nothing", app.parent, cwd=app.parent)
    assert bad_server.returncode == 2
    assert "could not load a server from 'app.py:nothing'" in bad_server.stderr

    usage = cli("check", cwd=app.parent)
    assert usage.returncode == 2 and "usage:" in usage.stderr


# -- tokens ------------------------------------------------------------------------------
def test_tokens_reports_both_listings_and_each_description(app: Path) -> None:
    out = app.parent / "descriptions"
    out.mkdir()
    write(out, "get_weather",
          {"summary": "Weather.", "examples": [{"description": "Paris", "input": {"city": "P"}}]})

    result = cli("tokens", "app.py:mcp", out, "--json", cwd=app.parent)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["encoding"] == "o200k_base" and report["tools"] == 3
    assert 0 < report["listing"]["with"] < report["listing"]["without"]
    assert set(report["full_descriptions"]) == TOOLS
    sizes = report["full_descriptions"]
    assert all(size["tokens"] > 0 for size in sizes.values())
    assert report["overhead"]["resources_list"] > 0  # the descriptions resource entry
    assert report["listing"]["tools_without"] == 3

    text = cli("tokens", "app.py:mcp", out, cwd=app.parent)
    assert text.returncode == 0
    assert f"without progressive disclosure: {report['listing']['without']:>7,}" in text.stdout
    assert "get_weather" in text.stdout



def test_tokens_loads_the_tokenizer_once_and_passes_it_on(
        app: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#35: the command builds one counter and hands it to every count (it was a memo, a
    cache of the package's, read through a module function per string)."""
    bpe_openai = pytest.importorskip("bpe_openai")
    loads = count_calls(monkeypatch, bpe_openai, "get_encoding")
    result = cli("tokens", "app.py:mcp", "--json", cwd=app.parent)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["listing"]["without"] > 0
    assert loads.count == 1
    assert not hasattr(tokens, "encoder") and not hasattr(tokens, "count_text")

def _plain_billing() -> FastMCP:
    """The ``SERVER`` app as a server object, to run over HTTP in this process."""
    namespace: dict[str, Any] = {}
    exec(compile(SERVER, "billing_app.py", "exec"), namespace)  # our own text
    server: FastMCP = namespace["mcp"]
    return server


async def test_tokens_counts_a_running_server_and_a_gateway_of_it(tmp_path: Path) -> None:
    """``tokens URL`` counts a running server through ``proxy URL``, and ``tokens mcp.json``
    the gateway ``proxy --config`` serves, each against the same servers' plain listing
    (both exited 2: "File not found .../http:/127.0.0.1", a pydantic dump)."""
    import anyio


    async with serve_http(_plain_billing()) as url:
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"billing": {"url": url}}}), "utf-8")
        direct = await anyio.to_thread.run_sync(
            lambda: cli("tokens", url, "--json", cwd=tmp_path))
        gateway = await anyio.to_thread.run_sync(
            lambda: cli("tokens", "mcp.json", "--json", cwd=tmp_path))
        vscode = tmp_path / "vscode.json"  # VS Code's form (#34)
        vscode.write_text(json.dumps({"servers": {"billing": {"type": "http", "url": url}}}),
                          "utf-8")
        from_vscode = await anyio.to_thread.run_sync(
            lambda: cli("tokens", "vscode.json", "--json", cwd=tmp_path))
    billing = {f"billing_{n}" for n in TOOLS}
    for ran, names in ((direct, TOOLS), (gateway, billing), (from_vscode, billing)):
        assert ran.returncode == 0, ran.stderr
        report = json.loads(ran.stdout)
        assert set(report["full_descriptions"]) == names
        assert report["listing"]["tools_without"] == 3
        assert 0 < report["listing"]["with"] < report["listing"]["without"]


def test_tokens_names_a_gateway_none_of_whose_servers_start(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"gone": {
        "command": "no-such-mcp-server-xyz"}}}), "utf-8")
    ran = cli("tokens", "mcp.json", cwd=tmp_path)
    assert ran.returncode == 2
    assert "no upstream MCP server could start" in ran.stderr and "gone" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_tokens_without_bpe_openai_says_what_to_install(
    app: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # as if it were not installed
    result = cli("tokens", "app.py:mcp", cwd=app.parent)
    assert result.returncode == 2
    assert "pip install bpe-openai" in result.stderr
    assert "Traceback" not in result.stderr


async def test_token_listings_are_what_clients_receive(tmp_descriptions: Path) -> None:
    mcp = FastMCP("wire")

    @mcp.tool
    def find(query: str, limit: int = 10) -> list[str]:
        """Find documents by keyword. A long explanation follows."""
        return []

    plain = (await wire_results(mcp, list(mcp.middleware)))["tools"]
    async with Client(mcp) as client:
        wire = (await client.list_tools_mcp()).model_dump(by_alias=True, exclude_none=True,
                                                          mode="json")
    assert json.loads(plain)["tools"] == wire["tools"]

    middleware = ProgressiveDisclosure(tmp_descriptions)
    mcp.add_middleware(middleware)
    try:
        reduced = (await wire_results(mcp, list(mcp.middleware)))["tools"]
        async with Client(mcp, mode="legacy", client_info=GENERIC_HOST) as client:
            wire = (await client.list_tools_mcp()).model_dump(by_alias=True,
                                                              exclude_none=True, mode="json")
        assert json.loads(reduced)["tools"] == wire["tools"]
        (find_tool,) = [t for t in json.loads(reduced)["tools"] if t["name"] == "find"]
        assert find_tool["description"] == "Find documents by keyword."
    finally:
        middleware.close()


@pytest.mark.slow  # two fresh interpreters: the entry points themselves
def test_console_script_and_module_agree(app: Path) -> None:
    script = Path(sys.executable).with_name("fastmcp-progressive")
    if not script.exists():
        pytest.skip("the console script is not installed in this environment")
    by_script = subprocess.run([script, "--help"], capture_output=True, text=True,
                               timeout=PATIENCE)  # a hang guard
    by_module = module_process("--help", cwd=app.parent)
    assert by_script.returncode == by_module.returncode == 0
    assert "extract" in by_script.stdout and "Exit status" in by_script.stdout


@pytest.mark.parametrize("fmt", ["json", "md"])
def test_check_reports_a_docstring_changed_since_extract(app: Path, fmt: str) -> None:
    """``extract`` records the registered description it copied (``extracted_from``);
    ``check`` warns, at that key, once the docstring changed: the old file would shadow it."""
    out = app.parent / "descriptions"
    assert cli("extract", "app.py:mcp", "-o", out, "--format", fmt, cwd=app.parent).returncode == 0
    file = read_description(out, "send_invoice", f".{fmt}")
    assert file.extracted_from is not None and file.extracted_from.startswith("sha256:")
    assert "extracted_from" not in file.fields()  # authoring metadata, never served
    assert cli("check", "app.py:mcp", out, "--strict", cwd=app.parent).returncode == 0

    app.write_text(SERVER.replace("Email a draft invoice to its customer.",
                                  "Email a draft invoice; needs a confirmed address."))
    changed = cli("check", "app.py:mcp", out, "--strict", cwd=app.parent)
    assert changed.returncode == 1
    lines = [line for line in changed.stdout.splitlines() if "registered description" in line]
    assert len(lines) == 1, changed.stdout
    assert lines[0].startswith(f"{out / f'send_invoice.{fmt}'}:")  # path:line:column
    assert "shadows the new one" in lines[0]
    assert "0 error(s), 1 warning(s)" in changed.stdout

    path = out / f"send_invoice.{fmt}"
    text = path.read_text()
    assert file.extracted_from in text
    path.write_text(text.replace(f',\n  "extracted_from": "{file.extracted_from}"', "")
                    .replace(f'"extracted_from": "{file.extracted_from}",\n  ', ""))
    assert cli("check", "app.py:mcp", out, "--strict", cwd=app.parent).returncode == 0


HUGE_INT = "7" * 4301


def test_check_reports_the_huge_integer_at_its_place_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = tmp_path / "app.py"
    app.write_text(
        "from fastmcp import FastMCP\nmcp = FastMCP('a')\n"
        "@mcp.tool\ndef add(a: int, b: int) -> int:\n    'Add.'\n    return a + b\n"
    )
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "add.json").write_text('{"examples": [' + HUGE_INT + "]}")
    status = main(["check", f"{app}:mcp", str(folder)])
    out = capsys.readouterr()
    assert status == 1
    assert f"{folder / 'add.json'}:1:15: error: Exceeds the limit" in out.out + out.err
    assert "Traceback" not in out.out + out.err


@pytest.mark.slow  # the server runs as a process of its own, over stdio
def test_tokens_counts_a_command_given_after_a_double_dash(app: Path) -> None:
    """``tokens [DIR] -- COMMAND`` counts what ``proxy -- COMMAND`` serves, against the
    command's plain listing (it was refused: SERVER took the command's first word, DIR its
    second, "unrecognized arguments" the rest, #34)."""
    stdio_app = app.parent / "stdio_app.py"
    stdio_app.write_text(SERVER + "\nmcp.run(show_banner=False)\n", encoding="utf-8")
    out = app.parent / "descriptions"
    out.mkdir()
    (out / "get_weather.json").write_text(json.dumps({"summary": "Weather now."}), "utf-8")
    command = ["--", sys.executable, "stdio_app.py"]
    plain = cli("tokens", "--json", *command, cwd=app.parent)
    described = cli("tokens", out, "--json", *command, cwd=app.parent)
    for ran in (plain, described):
        assert ran.returncode == 0, ran.stderr
        report = json.loads(ran.stdout)
        assert set(report["full_descriptions"]) == TOOLS
        assert 0 < report["listing"]["with"] < report["listing"]["without"]
    assert (json.loads(described.stdout)["listing"]["with"]
            != json.loads(plain.stdout)["listing"]["with"])  # the file's summary counted


@pytest.mark.parametrize(("args", "fix"), [
    (["proxy", "npx", "-y", "@modelcontextprotocol/server-memory"],
     "fastmcp-progressive: -y is not an option of proxy; if it is one of the upstream "
     "command's, put -- before the command: fastmcp-progressive proxy -- npx -y "
     "@modelcontextprotocol/server-memory"),
    (["proxy", "--listing", "minimal", "--name=mem", "--no-host-profiles", "node", "s.js",
      "--port", "3"],
     "put -- before the command: fastmcp-progressive proxy --listing minimal --name=mem "
     "--no-host-profiles -- node s.js --port 3"),
    (["tokens", "npx", "-y", "pkg"],
     "unrecognized arguments: -y pkg (to count a command, put -- before it: "
     "fastmcp-progressive tokens [DIRECTORY] -- COMMAND [ARG ...])"),
    (["tokens"], "tokens needs a SERVER"),
    (["tokens", "d1", "d2", "--", "npx"], "give DIRECTORY alone before --"),
])
def test_a_command_without_its_double_dash_is_refused_naming_the_fix(
        tmp_path: Path, args: list[str], fix: str) -> None:
    """What a newcomer types first (#34): "unrecognized arguments: -y" said nothing of
    ``--``. Nothing starts: the line is refused as it is parsed."""
    ran = cli(*args, cwd=tmp_path)
    assert ran.returncode == 2
    assert fix in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr
