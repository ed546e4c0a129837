"""Where a relative ``descriptions_dir`` points: beside the file that builds the middleware.

The quick start writes ``ProgressiveDisclosure(descriptions_dir="tool_descriptions")`` in
``server.py`` beside a ``tool_descriptions/`` folder. Resolved against the working
directory, ``fastmcp list /srv/app/server.py`` run from anywhere else served every tool's
registered description instead, with one WARNING line (#26). Code with no file of its own
(``python -c``, a REPL) keeps the working directory; a folder that is not there is named
with its absolute path.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from fastmcp import Client

SERVER = '''\
from fastmcp import FastMCP
from fastmcp_progressive import ProgressiveDisclosure

mcp = FastMCP("beside")
mcp.add_middleware(ProgressiveDisclosure(descriptions_dir="tool_descriptions"))


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers and return their sum, as registered."""
    return a + b
'''
SUMMARY = "Adds two numbers (from the file beside server.py)."


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """``tmp_path/app/server.py`` with its ``tool_descriptions/add.json`` beside it."""
    folder = tmp_path / "app"
    (folder / "tool_descriptions").mkdir(parents=True)
    (folder / "tool_descriptions" / "add.json").write_text(json.dumps({"summary": SUMMARY}))
    (folder / "server.py").write_text(SERVER)
    return folder / "server.py"


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"beside_{abs(hash(path))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _summary(module: ModuleType) -> str | None:
    try:
        async with Client(module.mcp) as client:
            return next(t.description for t in await client.list_tools() if t.name == "add")
    finally:
        for middleware in module.mcp.middleware:
            getattr(middleware, "close", lambda: None)()


async def test_a_relative_folder_is_found_beside_the_server_file_from_any_directory(
        app: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with caplog.at_level(logging.WARNING, logger="fastmcp.progressive"):
        assert await _summary(_load(app)) == SUMMARY
    assert "does not exist" not in caplog.text


async def test_code_without_a_file_keeps_the_working_directory(
        app: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(app.parent)
    module = ModuleType("typed_at_a_prompt")
    exec(compile(SERVER, "<stdin>", "exec"), module.__dict__)  # what a REPL runs
    assert await _summary(module) == SUMMARY


async def test_a_missing_folder_is_named_with_its_absolute_path_and_its_anchor(
        app: Path, caplog: pytest.LogCaptureFixture) -> None:
    app.write_text(SERVER.replace('"tool_descriptions"', '"no_such_folder"'))
    with caplog.at_level(logging.WARNING, logger="fastmcp.progressive"):
        module = _load(app)
    for middleware in module.mcp.middleware:
        getattr(middleware, "close", lambda: None)()
    expected = f"{app.parent / 'no_such_folder'} does not exist (resolved beside {app})"
    assert expected in caplog.text


FACTORY = '''\
from dataclasses import dataclass, field
from functools import partial

from fastmcp import FastMCP
from fastmcp_progressive import ProgressiveDisclosure


@dataclass
class Config:
    middleware: ProgressiveDisclosure = field(
        default_factory=partial(ProgressiveDisclosure, "tool_descriptions"))


mcp = FastMCP("factory")
mcp.add_middleware(Config().middleware)


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers and return their sum, as registered."""
    return a + b
'''


async def test_a_default_factory_partial_finds_the_folder_beside_its_module(
        app: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#34: a dataclass's ``default_factory`` runs generated code whose file is
    ``<string>``; the folder was looked for in the working directory."""
    (app.parent / "factory_server.py").write_text(FACTORY)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.syspath_prepend(str(app.parent))
    monkeypatch.delitem(sys.modules, "factory_server", raising=False)
    module = importlib.import_module("factory_server")  # imported: in sys.modules
    monkeypatch.delitem(sys.modules, "factory_server")
    assert await _summary(module) == SUMMARY


async def test_a_zipapp_says_which_folder_it_serves(
        app: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """#34: code in a zipapp has no file on disk; the working directory's folder was served
    without a word. It still is, and a WARNING names it and the fix."""
    archive = tmp_path / "app.pyz"
    with zipfile.ZipFile(archive, "w") as pyz:
        pyz.write(app, "zipped_server.py")
    monkeypatch.chdir(app.parent)
    monkeypatch.syspath_prepend(str(archive))
    monkeypatch.delitem(sys.modules, "zipped_server", raising=False)
    with caplog.at_level(logging.WARNING, logger="fastmcp.progressive"):
        module = importlib.import_module("zipped_server")
    assert await _summary(module) == SUMMARY
    monkeypatch.delitem(sys.modules, "zipped_server")
    assert (f"descriptions_dir 'tool_descriptions' is relative and the code building the "
            f"middleware ({archive / 'zipped_server.py'}) is not a file on disk, so it is "
            f"resolved in the working directory: serving {app.parent / 'tool_descriptions'}. "
            "Pass an absolute path to serve another folder") in caplog.text


def test_an_absolute_folder_and_a_command_line_folder_mean_what_they_say(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastmcp_progressive.files.folder import anchored

    assert anchored(tmp_path) == (tmp_path, None)
    assert anchored("rel") == (Path(__file__).parent / "rel", Path(__file__))
    monkeypatch.chdir(tmp_path)
    from fastmcp_progressive.cli.commands import _from_here
    assert _from_here("rel") == tmp_path / "rel"  # `proxy --descriptions rel`: the shell's


@pytest.mark.slow
def test_fastmcp_list_of_an_absolute_server_path_run_elsewhere_serves_the_files(
        app: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fastmcp = Path(sys.executable).parent / "fastmcp"
    env = {**os.environ, "COLUMNS": "400", "NO_COLOR": "1",  # it spawns `fastmcp run`
           "PATH": f"{fastmcp.parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "FASTMCP_SHOW_SERVER_BANNER": "false"}
    done = subprocess.run([str(fastmcp), "list", str(app)], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert SUMMARY in done.stdout, done.stdout
    assert "does not exist" not in done.stdout + done.stderr
