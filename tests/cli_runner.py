"""Run ``fastmcp-progressive`` commands in this process, as a shell would run them.

``run_cli(*args, cwd=...)`` calls ``fastmcp_progressive.cli.commands.main(argv)`` from ``cwd`` with
stdout and stderr captured, and answers the exit status and the output: the same parser,
server loader and exit codes, without an interpreter start per command. FastMCP's file
loader adds the server's folder to ``sys.path`` and registers it as ``server_module``:
both are undone afterwards, as a fresh process would leave them.

Example:
    ```python
    ran = run_cli("check", "app.py:mcp", folder, cwd=tmp_path)
    assert ran.returncode == 1 and "error:" in ran.stdout
    ```
"""

from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass
from pathlib import Path

from fastmcp_progressive.cli.commands import main

LOADED_AS = "server_module"  # the module name FastMCP's file loader registers


@dataclass
class Ran:
    """What a command left: its exit status and everything it printed."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str | Path, cwd: Path) -> Ran:
    """Run one command from ``cwd``, as ``fastmcp-progressive ARGS`` would."""
    out, err = io.StringIO(), io.StringIO()
    saved_path = list(sys.path)
    try:
        with contextlib.chdir(cwd), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            try:
                status = main([str(a) for a in args])
            except SystemExit as exit_:  # argparse: usage errors and --help
                status = exit_.code if isinstance(exit_.code, int) else 2
    finally:
        sys.path[:] = saved_path
        sys.modules.pop(LOADED_AS, None)
    return Ran(status, out.getvalue(), err.getvalue())
